/* ds-mxnet-json.h: MXNet symbol JSON, read and written losslessly.
 *
 * Saving a graph that was loaded from a file MXNet wrote gives the same bytes: the writer
 * reproduces dmlc::JSONWriter's layout, and nodes keep their attributes in file order.
 * The legacy 0.8 layout ("param"/"attr" keys, two-element inputs, no node_row_ptr) is upgraded
 * on load, as MXNet's legacy_json_util does, and saved in the current layout.
 */
#pragma once

#include <glib.h>

#include "ds-graph.h"

/* Loads, resolves ops, parses attributes and validates. A node whose op this build does not
 * know keeps op == NULL (so the graph still prints and saves); running it is an error. */
DsGraph *ds_mxnet_json_load(const char *path, GError **error);
/* Same from memory; `name` is used in messages. */
DsGraph *ds_mxnet_json_load_data(const char *data, gsize len, const char *name, GError **error);

/* The graph as JSON text in MXNet's layout. Caller frees. */
char *ds_mxnet_json_save_to_data(const DsGraph *graph, gsize *len_out);
/* Writes atomically (temporary file in the same folder, then rename). */
gboolean ds_mxnet_json_save(const DsGraph *graph, const char *path, GError **error);
