/* ds-mxnet-json.h: MXNet symbol JSON, read and written losslessly.
 *
 * Saving a graph that was loaded from a file MXNet wrote gives the same bytes: the writer
 * reproduces dmlc::JSONWriter's layout, and nodes keep their attributes in file order.
 * Files older than MXNet 1.4 (mxnet_version < 10400, or none: 0.8) are upgraded on load as
 * MXNet's legacy_json_util does ("param"/"attr" merge into attrs, hidden keys such as
 * "ctx_group" become "__ctx_group__", 0.8-era aux states become variables, attributes sorted),
 * stamped mxnet_version 10500, and saved in the current layout. node_row_ptr, when a file has
 * it, gives each node's output count; otherwise the op's attributes do (1 for unknown ops).
 * Keys nnvm ignores or that inference does not need ("control_deps", "backward_source_id",
 * unknown ones) are not kept.
 *
 * Errors: DS_ERROR_IO (cannot read or write), DS_ERROR_PARSE (malformed JSON, wrong types) and
 * DS_ERROR_INVALID (dangling or forward inputs, cycles, bad node_row_ptr, heads or arg_nodes),
 * with a message naming the file and the node by index and name.
 */
#pragma once

#include <glib.h>

#include "ds-graph.h"

/* Loads, resolves ops, parses attributes and validates. A node whose op this build does not
 * know keeps op == NULL (so the graph still prints and saves); running it is an error. */
DsGraph *ds_mxnet_json_load(const char *path, GError **error);
/* Same from memory; `name` is used in messages. */
DsGraph *ds_mxnet_json_load_data(const char *data, gsize len, const char *name, GError **error);

/* The graph as JSON text in MXNet's layout, without a trailing newline. The document always
 * gets "attrs": the graph's own, or for a graph without them (built in memory) one holding
 * graph->mxnet_version (10500 when unset or older than 10400), so that it never reads back as
 * a 0.8 file. Caller frees with g_free(); `len_out` may be NULL. */
char *ds_mxnet_json_save_to_data(const DsGraph *graph, gsize *len_out);
/* Writes atomically (temporary file in the same folder, then rename). */
gboolean ds_mxnet_json_save(const DsGraph *graph, const char *path, GError **error);
