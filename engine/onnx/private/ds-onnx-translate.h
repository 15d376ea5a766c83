/* ds-onnx-translate.h: what the op translators (ds-onnx-ops-*.c) see of the importer.
 *
 * A translator maps one ONNX node onto engine nodes in the graph being built (the top graph or
 * a loop or branch body): it reads the node's attributes and inputs, emits engine nodes with
 * MXNet-style attribute strings, and binds the node's ONNX outputs to engine entries. Inputs
 * resolve through the enclosing bodies: an outer value a body reads becomes a variable of the
 * body (a capture) that the control-flow node feeds. Constant inputs (initializers, Constant
 * nodes) are known while translating, so a shape, an axis list or a padding given as a tensor
 * becomes an attribute; the same input computed at run time maps onto a dynamic-shape op.
 *
 * A translator that meets a form it does not implement (an attribute value, a non-constant
 * input where it needs a constant) returns FALSE with ds_onnx_unsupported(): the importer
 * removes what it emitted and keeps the node opaque, listed with that reason. Any other error
 * stops the import.
 */
#pragma once

#include "ds-error.h"
#include "ds-onnx-import.h"
#include "ds-onnx-values.h"

typedef struct _DsOnnxBuilder DsOnnxBuilder;

typedef gboolean (*DsOnnxTranslateFn)(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error);

typedef struct {
  const char *op_type;
  int min_opset; /* the oldest opset whose form of the op the translator handles */
  DsOnnxTranslateFn translate;
  /* The newest version of the op whose form it handles, for ops that changed after opset 17
   * (ds-onnx-versions.c); 0 for the forms through opset 17. */
  int max_version;
} DsOnnxOpTranslator;

/* The version of `op_type` that `opset` imports when it is a version after 17 (ReduceMax at
 * opset 19: 18), else 0: the op's form is one of opset 17's or older. */
int ds_onnx_op_version_after_17(const char *op_type, gint64 opset);

/* The families, each a table ended by an entry with op_type NULL. */
extern const DsOnnxOpTranslator ds_onnx_math_ops[];
extern const DsOnnxOpTranslator ds_onnx_nn_ops[];
extern const DsOnnxOpTranslator ds_onnx_tensor_ops[];
extern const DsOnnxOpTranslator ds_onnx_control_ops[];
extern const DsOnnxOpTranslator ds_onnx_quant_ops[];
extern const DsOnnxOpTranslator ds_onnx_signal_ops[];
extern const DsOnnxOpTranslator ds_onnx_training_ops[]; /* ai.onnx.preview.training */

/* The default domain's opset the model imports. */
gint64 ds_onnx_opset(const DsOnnxBuilder *b);

/* Sets a DS_ERROR_UNSUPPORTED error with the reason (no node name: the importer adds it). */
gboolean ds_onnx_unsupported(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* Sets a DS_ERROR_INVALID error for a malformed node (the importer adds the node). */
gboolean ds_onnx_invalid(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* ---- Attributes ---------------------------------------------------------------------------- */

gboolean ds_onnx_has_attr(const DsOnnxNode *node, const char *name);
gint64 ds_onnx_attr_int(const DsOnnxNode *node, const char *name, gint64 fallback);
float ds_onnx_attr_float(const DsOnnxNode *node, const char *name, float fallback);
/* The string value (NUL-terminated), or `fallback`. */
const char *ds_onnx_attr_string(const DsOnnxNode *node, const char *name, const char *fallback);
/* The ints of an INTS attribute: their count (at most `max` are copied), or -1 if absent. */
int ds_onnx_attr_ints(const DsOnnxNode *node, const char *name, gint64 *out, int max);
int ds_onnx_attr_floats(const DsOnnxNode *node, const char *name, float *out, int max);

/* ---- Inputs -------------------------------------------------------------------------------- */

/* Input `i` is given (present and not the empty name of an omitted optional input). */
gboolean ds_onnx_has_input(const DsOnnxNode *node, guint i);
/* The entry input `i` is bound to, captured from outer graphs when needed. An error names the
 * value if nothing defines it. */
gboolean ds_onnx_input(DsOnnxBuilder *b, const DsOnnxNode *node, guint i, DsEntry *out,
                       GError **error);
/* The same by value name. */
gboolean ds_onnx_lookup(DsOnnxBuilder *b, const char *name, DsEntry *out, GError **error);
/* Input `i`'s value when it is a constant (an initializer, a Constant node's output, or a
 * constant a translator made), else NULL. Borrowed. */
const DsNDArray *ds_onnx_input_const(DsOnnxBuilder *b, const DsOnnxNode *node, guint i);
/* What ONNX's own type information (graph inputs, outputs, value_info, initializers, constants)
 * says of value `name`: dtype (DS_DTYPE_UNKNOWN if unsaid) and rank (-1 if unsaid). */
DsDType ds_onnx_value_dtype(DsOnnxBuilder *b, const char *name);
/* The storage type ONNX keeps value `name` in (float16, bfloat16, int16, uint16, uint32,
 * uint64: the engine computes it in ds_onnx_compute_dtype() of it, and the dtype above says
 * so), as a graph input or output, value_info, initializer or constant declared so, or a
 * Cast's result; DS_DTYPE_UNKNOWN for values ONNX keeps in a dtype the engine computes in. */
DsDType ds_onnx_value_storage(DsOnnxBuilder *b, const char *name);
int ds_onnx_value_rank(DsOnnxBuilder *b, const char *name);
/* A value's shape when every dim is known now (a constant, or ONNX type information with
 * dim values only): TRUE with `dims` (DS_MAX_NDIM room) and `rank` filled. */
gboolean ds_onnx_value_static_shape(DsOnnxBuilder *b, const char *name, gint64 *dims, int *rank);
/* Folds `node` when it is integer shape arithmetic whose inputs are known (ds-onnx-fold.c):
 * TRUE with its single output's value in `out` (the caller takes it). */
gboolean ds_onnx_fold(DsOnnxBuilder *b, const DsOnnxNode *node, DsNDArray **out);
/* For input `i`. */
DsDType ds_onnx_input_dtype(DsOnnxBuilder *b, const DsOnnxNode *node, guint i);
int ds_onnx_input_rank(DsOnnxBuilder *b, const DsOnnxNode *node, guint i);

/* A constant's elements as int64 (any integer or bool dtype): their count (at most `max`
 * copied), or -1 if it is not an integer tensor or holds more than `max`. */
int ds_onnx_const_ints(const DsNDArray *array, gint64 *out, int max);
/* A constant's first element as a double (any dtype), FALSE if it is empty. */
gboolean ds_onnx_const_scalar(const DsNDArray *array, double *out);

/* ---- Emitting ------------------------------------------------------------------------------ */

/* Appends an engine node running `op` (its registered name) on `inputs`, named after the ONNX
 * node (`suffix` NULL) or "<node>/<suffix>" for helper nodes. The variadic arguments are
 * attribute key and value strings, ended by NULL. The op's attribute parser runs here, so an
 * error names the node. */
DsNode *ds_onnx_emit(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op, const char *suffix,
                     const DsEntry *inputs, guint n_inputs, GError **error,
                     ...) G_GNUC_NULL_TERMINATED;
/* The same for a helper step: `out` gets the new node's first output. */
gboolean ds_onnx_emit1(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op, const char *suffix,
                       const DsEntry *inputs, guint n_inputs, DsEntry *out, GError **error,
                       ...) G_GNUC_NULL_TERMINATED;
/* The same with attributes in arrays (`n_attrs` keys and values). */
DsNode *ds_onnx_emitv(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op, const char *suffix,
                      const DsEntry *inputs, guint n_inputs, const char *const *keys,
                      const char *const *values, guint n_attrs, GError **error);
/* The same for a control-flow op, taking the references to its `subgraphs`. */
DsNode *ds_onnx_emit_control(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op,
                             const char *suffix, const DsEntry *inputs, guint n_inputs,
                             DsGraph **subgraphs, guint n_subgraphs, const char *const *keys,
                             const char *const *values, guint n_attrs, GError **error);
/* ONNX Conv's attributes (pads, strides, dilations, group, auto_pad) on data and weight
 * `in[0]`, `in[1]` and a bias `in[2]` when `has_bias`: a Convolution node named after `node`,
 * whose kernel size comes from the static shape of its input `weight_input`. */
DsNode *ds_onnx_emit_conv(DsOnnxBuilder *b, const DsOnnxNode *node, guint weight_input,
                          const DsEntry *in, gboolean has_bias, GError **error);
static inline DsEntry ds_onnx_entry(const DsNode *node, guint index)
{
  return (DsEntry){node->id, index, 0};
}
/* Strings that live until the import ends, for attribute values. */
const char *ds_onnx_printf(DsOnnxBuilder *b, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* "(1, 2, 3)"; "(2,)" for one value, as MXNet writes tuples. */
const char *ds_onnx_fmt_ints(DsOnnxBuilder *b, const gint64 *values, int n);
/* A float that reads back exactly ("%.9g"). */
const char *ds_onnx_fmt_float(DsOnnxBuilder *b, double value);

/* A weight holding `array` (taken), added to the top graph (a body captures it), named after
 * `hint`; returns its entry in `b`'s graph. Its value is known to ds_onnx_input_const(). */
DsEntry ds_onnx_add_constant(DsOnnxBuilder *b, const char *hint, DsNDArray *array);
/* A scalar (shape ()) or 1-element constant of `dtype`. */
DsEntry ds_onnx_add_scalar(DsOnnxBuilder *b, const char *hint, DsDType dtype, double value,
                           gboolean one_dim);
/* The tensor whose shape entry `e` is, when a shape_array node (ONNX's Shape) made it: then
 * the shape's length is that tensor's rank and its values that tensor's symbolic dims, which
 * inference knows even where the values wait for run time. */
gboolean ds_onnx_shape_source(DsOnnxBuilder *b, DsEntry e, DsEntry *source);
/* Input `i` when the node gives it, else a scalar constant of `dtype` holding `value` (named
 * after `hint`): ONNX's optional inputs with a default. */
gboolean ds_onnx_input_or_scalar(DsOnnxBuilder *b, const DsOnnxNode *node, guint i,
                                 const char *hint, DsDType dtype, double value, DsEntry *out,
                                 GError **error);
/* An int64 constant of shape (n,) (or () when `scalar`). */
DsEntry ds_onnx_add_ints(DsOnnxBuilder *b, const char *hint, const gint64 *values, int n,
                         gboolean scalar);

/* Binds the node's output `i` (when present) to `entry`, recording `array` as its constant
 * value when not NULL (taken). */
gboolean ds_onnx_set_output(DsOnnxBuilder *b, const DsOnnxNode *node, guint i, DsEntry entry,
                            GError **error);
/* Binds ONNX output i to (engine_node, i) for every present output. */
gboolean ds_onnx_bind_outputs(DsOnnxBuilder *b, const DsOnnxNode *node, const DsNode *engine_node,
                              GError **error);
/* Binds output `i` to `entry` converted to storage type `storage` and widened back to its
 * compute dtype: the value ONNX would store (a Cast to float16 rounds to half precision, one
 * to int16 wraps), computed in the engine's dtype. */
gboolean ds_onnx_set_output_storage(DsOnnxBuilder *b, const DsOnnxNode *node, guint i,
                                    DsEntry entry, DsDType storage, GError **error);
/* Binds output `i` to a new constant (taken): for values folded while importing. A constant of
 * a storage type is widened to its compute dtype (ds_onnx_widen_storage). */
gboolean ds_onnx_set_output_const(DsOnnxBuilder *b, const DsOnnxNode *node, guint i,
                                  DsNDArray *array, GError **error);

/* ---- Bodies (for Loop, If and Scan) -------------------------------------------------------- */

typedef struct {
  char *name;    /* the outer value's name */
  DsEntry outer; /* its entry in the parent graph */
} DsOnnxCapture;

/* A builder for a body inside `parent`, its nodes named "<prefix>/...". */
DsOnnxBuilder *ds_onnx_builder_new_child(DsOnnxBuilder *parent, const char *prefix);
void ds_onnx_builder_free(DsOnnxBuilder *b);
/* A variable (a body input) bound to ONNX value `name`, with a dtype and shape hint. */
DsEntry ds_onnx_builder_add_input(DsOnnxBuilder *b, const char *name, DsDType dtype, int rank);
/* Translates the body's nodes (its own inputs already added): the importer's walk, which the
 * import installs as the context's runner, so nested control flow recurses through it. */
gboolean ds_onnx_builder_translate(DsOnnxBuilder *b, const DsOnnxGraph *graph, GError **error);
/* The outer values the body read, in the order of its capture variables (which follow the
 * inputs added before). Borrowed. */
const GArray *ds_onnx_builder_get_captures(DsOnnxBuilder *b);
/* The finished body with these heads; the builder keeps nothing. */
DsGraph *ds_onnx_builder_finish(DsOnnxBuilder *b, const DsEntry *heads, guint n_heads,
                                GError **error);
/* The builder's graph while it is being built. Borrowed. */
DsGraph *ds_onnx_builder_graph(DsOnnxBuilder *b);
/* Position of variable node `entry` among the graph's variables (its input index). */
int ds_onnx_builder_input_index(DsOnnxBuilder *b, DsEntry entry);
