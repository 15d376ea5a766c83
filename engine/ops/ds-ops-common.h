/* ds-ops-common.h: shape and dtype rules shared by the op families.
 *
 * Everything here works on DsDim through the ds_dim_* arithmetic and the DsShapeCtx
 * unification, so the same rules serve concrete and symbolic inference. Errors are
 * DS_ERROR_SHAPE and name the node, its op, the arguments and the values involved.
 */
#pragma once

#include <glib.h>

#include "ds-op.h"
#include "ds-shape.h"

/* Name of input `i` of `node` for messages ("lhs", "weight", "arg2"). Borrowed or `buf`. */
const char *ds_ops_input_name(const DsNode *node, int i, char buf[16]);

/* NumPy broadcasting of two shapes (right-aligned; a constant 1 stretches). Both ranks must be
 * known; an unknown dim facing a dim other than 1 takes that dim, since the only other legal
 * value (1) would give the same result. Incompatible dims are an error naming the node, both
 * arguments and both shapes. */
gboolean ds_ops_broadcast_shapes(DsShapeCtx *ctx, const DsShape *a, const char *a_name,
                                 const DsShape *b, const char *b_name, DsShape *out,
                                 GError **error);

/* MXNet's ElemwiseShape: the `n_in` inputs and `n_out` outputs all share one shape; whatever
 * any of them knows fills the others, dim by dim. */
gboolean ds_ops_unify_shapes(DsShapeCtx *ctx, const DsNode *node, DsShape *in, int n_in,
                             DsShape *out, int n_out, GError **error);

/* DsInferShapeFn for ops whose inputs and outputs all share one shape (unary math, elemwise_*,
 * add_n, Cast...). Uses node->n_inputs and the op's output count. */
gboolean ds_ops_infer_shape_same(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                 DsShape *in, DsShape *out, GError **error);

/* DsInferShapeFn for NumPy-broadcasting binary ops (broadcast_add...): out is the broadcast of
 * in[0] and in[1]. Runs forward only, as MXNet's BinaryBroadcastShape does. */
gboolean ds_ops_infer_shape_broadcast(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                      DsShape *in, DsShape *out, GError **error);

/* Unifies one dtype slot with `want` (DS_DTYPE_UNKNOWN leaves it). A mismatch is a
 * DS_ERROR_SHAPE error naming the node, `what` and both dtypes. */
gboolean ds_ops_assign_dtype(const DsNode *node, DsDType *slot, DsDType want, const char *what,
                             GError **error);

/* All inputs and outputs share one dtype (what a NULL DsOpDef.infer_type means), for rules
 * that apply it to a subset of the slots. */
gboolean ds_ops_unify_dtypes(const DsNode *node, DsDType *in, int n_in, DsDType *out, int n_out,
                             GError **error);

/* Reads an attribute holding a tuple of axes ("(0, 2)", "1", "()"): *n_out is -1 when the key
 * is missing or "None". More than DS_MAX_NDIM values is a DS_ERROR_PARSE error. */
gboolean ds_ops_attr_axes(const DsNode *node, const char *key, int64_t *axes, int *n_out,
                          GError **error);

/* Checks a required attribute is present (its value may be "None", as slice_axis's end): a
 * missing key is a DS_ERROR_INVALID error naming the node, op and key. */
gboolean ds_ops_attr_require(const DsNode *node, const char *key, GError **error);

/* A DS_ERROR_INVALID error for an attribute whose value parses but is not allowed ("step=0"),
 * naming the node, op, key, value and `reason`. Always returns FALSE. */
gboolean ds_ops_attr_invalid(const DsNode *node, const char *key, const char *reason,
                             GError **error);

/* A DS_ERROR error with `code`, prefixed "node '<name>' (<op>): ". Always returns FALSE. */
gboolean ds_ops_node_error(const DsNode *node, GError **error, int code, const char *format, ...)
    G_GNUC_PRINTF(4, 5);

/* An integer attribute that must lie in [min, max] (DS_ERROR_INVALID otherwise). */
gboolean ds_ops_attr_int_range(const DsNode *node, const char *key, int64_t def, int64_t min,
                               int64_t max, int64_t *out, GError **error);
/* A float attribute stored as float (MXNet's fields are float and its kernels compare float
 * data against them). */
gboolean ds_ops_attr_float32(const DsNode *node, const char *key, double def, float *out,
                             GError **error);
/* A bool attribute where "None" means the default (MXNet's optional<bool>). */
gboolean ds_ops_attr_opt_bool(const DsNode *node, const char *key, gboolean def, bool *out,
                              GError **error);
/* A spatial tuple (stride, pad, dilate...) of `n` values, each at least `min`; missing or "()"
 * gives `def` for each. */
gboolean ds_ops_attr_spatial(const DsNode *node, const char *key, int n, int64_t def, int64_t min,
                             int64_t *out, GError **error);

/* Unifies `*slot` with `want`; on a mismatch the error names `what` and both shapes
 * ("weight has shape (64, 100), but (64, 128) is expected"). */
gboolean ds_ops_assign_shape(DsShapeCtx *ctx, DsShape *slot, const DsShape *want, const char *what,
                             GError **error);
/* A known rank must be `ndim`; the error names `what` and the expected `layout`. */
gboolean ds_ops_check_rank(DsShapeCtx *ctx, const DsShape *s, int ndim, const char *what,
                           const char *layout, GError **error);
