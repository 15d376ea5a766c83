/* ds-onnx-builder.h: the builder and the import-wide context, as the importer's walk
 * (ds-onnx-import.c) and the translator API (ds-onnx-translate.c) share them. Translators and
 * the folder see the builder only through ds-onnx-translate.h; nothing but these two files
 * includes this one.
 *
 * Calls go one way: the walk calls the translators, the folder and the API; the API calls
 * nothing above it. Where the API must translate nodes again (a Loop, If or Scan body), it runs
 * the walk the import installed in the context (`run`) instead of calling it by name.
 */
#pragma once

#include "ds-onnx-translate.h"

/* What ONNX's type information says of a value. */
typedef struct {
  DsDType dtype;
  int rank;
  gint64 dims[DS_MAX_NDIM]; /* -1 where the file gives no value */
} DsOnnxValueHint;

/* Translates a graph's nodes into `b`: the import's walk, for bodies. */
typedef gboolean (*DsOnnxRunFn)(DsOnnxBuilder *b, const DsOnnxGraph *graph, GError **error);

/* What the whole import shares, whichever body is being built: what the API reads and fills. */
typedef struct {
  const DsOnnxModel *model;
  const char *base_dir;
  gint64 opset;            /* the standard operator set's version; 0 when not imported */
  GStringChunk *strings;   /* attribute values handed to translators */
  GHashTable *consts;      /* value name -> const DsNDArray* (borrowed from weights) */
  GHashTable *hints;       /* value name -> DsOnnxValueHint* */
  GHashTable *storage;     /* value name -> the storage dtype ONNX keeps it in (+1, as a pointer) */
  GPtrArray *weights;      /* DsNDArray* */
  GPtrArray *weight_names; /* char* */
  DsOnnxRunFn run;         /* the runner: ds_onnx_builder_translate() calls it */
  gpointer run_data;       /* the walk's own state, for the walk (the API never reads it) */
} DsOnnxContext;

struct _DsOnnxBuilder {
  DsOnnxContext *ctx;
  DsOnnxBuilder *parent;
  DsGraph *graph;
  char *prefix;         /* names of generated nodes start with it ("" at the top) */
  GHashTable *values;   /* ONNX value name -> DsEntry* */
  GHashTable *names;    /* node names used in this graph */
  GArray *captures;     /* DsOnnxCapture */
  GArray *capture_vars; /* guint: the capture variable's node id, parallel to captures */
};

/* A builder for the top graph (`parent` NULL) or a body, its nodes named "<prefix>/...". */
DsOnnxBuilder *ds_onnx_builder_new(DsOnnxContext *ctx, DsOnnxBuilder *parent, const char *prefix);
/* The builder of the top graph, where weights live. */
DsOnnxBuilder *ds_onnx_builder_top(DsOnnxBuilder *b);
/* A node named `base`, or `base_1`, `base_2`...: the first name no node of `b`'s graph has. */
DsNode *ds_onnx_builder_append_node(DsOnnxBuilder *b, const char *base, const char *op_name);
/* arg_nodes, row pointers and heads: what every finished graph has; then validates it. */
gboolean ds_onnx_builder_finish_graph(DsOnnxBuilder *b, const DsEntry *heads, guint n_heads,
                                      GError **error);

/* The name an ONNX node gives its engine nodes: its own, or "<op_type>_<output>". */
const char *ds_onnx_node_base_name(DsOnnxBuilder *b, const DsOnnxNode *node);
/* Binds ONNX value `name` in `b`'s graph to `entry` (replacing any binding). */
void ds_onnx_bind_value(DsOnnxBuilder *b, const char *name, DsEntry entry);
/* Records ONNX's type information for value `name` (ignored when empty): the hint, its dims
 * unknown (-1) for the caller to fill, or NULL. */
DsOnnxValueHint *ds_onnx_add_hint(DsOnnxContext *ctx, const char *name, DsDType dtype, int rank);
/* Records that ONNX stores value `name` as `dtype`, a storage type the engine computes in
 * ds_onnx_compute_dtype(dtype); other dtypes are not recorded. */
void ds_onnx_mark_storage(DsOnnxContext *ctx, const char *name, DsDType dtype);
/* A variable of the top graph `top` holding `array` (taken), named after `hint`. */
DsEntry ds_onnx_add_weight(DsOnnxBuilder *top, const char *hint, DsNDArray *array);
/* `in` cast to `dtype` by a node named "<base>/<suffix>": how storage-type values enter and
 * leave. */
gboolean ds_onnx_emit_cast(DsOnnxBuilder *b, const char *base, const char *suffix, DsEntry in,
                           DsDType dtype, DsEntry *out, GError **error);
