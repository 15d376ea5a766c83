/* ds-attr.h: parsing MXNet's attribute strings ("(3, 3)", "True", "1e-05", "None").
 *
 * The ds_node_attr_* helpers read one attribute of a node: a missing key gives the default,
 * a malformed value gives a DS_ERROR_PARSE error naming the node, op, key and value.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "ds-dtype.h"
#include "ds-graph.h"

/* Plain parsers: TRUE on success. Whitespace around values is allowed. */
gboolean ds_attr_parse_int(const char *text, int64_t *out);
gboolean ds_attr_parse_float(const char *text, double *out);
/* "True"/"False"/"true"/"false"/"1"/"0". */
gboolean ds_attr_parse_bool(const char *text, gboolean *out);
/* "(3, 3)", "[1,2]", "(2,)", "()", or a bare "5" (one element). At most `max` values.
 * "None" inside a tuple is stored as `none_value`. */
gboolean ds_attr_parse_tuple(const char *text, int64_t *values, int max, int64_t none_value,
                             int *n_out);

gboolean ds_node_attr_int(const DsNode *node, const char *key, int64_t def, int64_t *out,
                          GError **error);
gboolean ds_node_attr_float(const DsNode *node, const char *key, double def, double *out,
                            GError **error);
gboolean ds_node_attr_bool(const DsNode *node, const char *key, gboolean def, gboolean *out,
                           GError **error);
/* *n_out is -1 when the key is missing (so callers can tell "()" from absent). */
gboolean ds_node_attr_tuple(const DsNode *node, const char *key, int64_t *values, int max,
                            int *n_out, GError **error);
/* One of `choices` (NULL-terminated); *out is its index, or `def` when missing. */
gboolean ds_node_attr_enum(const DsNode *node, const char *key, const char *const *choices,
                           int def, int *out, GError **error);
/* An MXNet dtype name; `def` when missing or "None". */
gboolean ds_node_attr_dtype(const DsNode *node, const char *key, DsDType def, DsDType *out,
                            GError **error);
/* TRUE if the attribute is missing or its value is "None". */
gboolean ds_node_attr_is_none(const DsNode *node, const char *key);
