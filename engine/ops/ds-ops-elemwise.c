/* ds-ops-elemwise.c: elementwise, broadcast and scalar ops: attributes, shape and dtype rules.
 *
 * Names, aliases and defaults follow MXNet 1.x (src/operator/tensor/elemwise_*.cc,
 * control_flow_op.cc, matrix_op.cc, contrib/transformer.cc).
 */
#include "ds-ops-common.h"

#include "ds-attr.h"
#include "ds-error.h"

static const char *const binary_inputs[] = {"lhs", "rhs", NULL};
static const char *const where_inputs[] = {"condition", "x", "y", NULL};
static const char *const add_n_inputs[] = {"args", NULL};

/* --- scalar ops --- */

static gboolean parse_scalar(const DsNode *node, void *param, GError **error)
{
  DsScalarParam *p = param;
  gboolean is_int;
  if (!ds_node_attr_float(node, "scalar", 1.0, &p->scalar, error) ||
      !ds_node_attr_bool(node, "is_int", TRUE, &is_int, error))
    return FALSE;
  p->is_int = is_int;
  return TRUE;
}

static gboolean is_integer_dtype(DsDType d)
{
  return d == DS_DTYPE_UINT8 || d == DS_DTYPE_INT8 || d == DS_DTYPE_INT32 || d == DS_DTYPE_INT64;
}

/* MXNet's NumpyBinaryScalarType: an integer input with a non-integer scalar computes in
 * float64; a bool input gives int64 (or float64); otherwise the dtype passes through. */
static gboolean infer_type_scalar(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                                  GError **error)
{
  const DsScalarParam *p = param;
  if (is_integer_dtype(in[0]) && !p->is_int)
    return ds_ops_assign_dtype(node, &out[0], DS_DTYPE_FLOAT64, "output", error);
  if (in[0] == DS_DTYPE_BOOL)
    return ds_ops_assign_dtype(node, &out[0], p->is_int ? DS_DTYPE_INT64 : DS_DTYPE_FLOAT64,
                               "output", error);
  if (!ds_ops_assign_dtype(node, &out[0], in[0], "output", error))
    return FALSE;
  /* Backwards only where the forward rule is the identity. */
  if (in[0] == DS_DTYPE_UNKNOWN && out[0] != DS_DTYPE_UNKNOWN && out[0] != DS_DTYPE_FLOAT64 &&
      out[0] != DS_DTYPE_INT64)
    in[0] = out[0];
  return TRUE;
}

/* --- clip --- */

static gboolean parse_clip(const DsNode *node, void *param, GError **error)
{
  DsClipParam *p = param;
  return ds_ops_attr_require(node, "a_min", error) && ds_ops_attr_require(node, "a_max", error) &&
         ds_node_attr_float(node, "a_min", 0.0, &p->a_min, error) &&
         ds_node_attr_float(node, "a_max", 0.0, &p->a_max, error);
}

/* --- add_n --- */

static gboolean parse_add_n(const DsNode *node, void *param, GError **error)
{
  DsAddNParam *p = param;
  int64_t n;
  if (!ds_ops_attr_require(node, "num_args", error) ||
      !ds_node_attr_int(node, "num_args", 0, &n, error))
    return FALSE;
  if (n < 1 || n > 4096)
    return ds_ops_attr_invalid(node, "num_args", "must be between 1 and 4096", error);
  p->num_args = (int)n;
  return TRUE;
}

static int add_n_num_inputs(const void *param)
{
  return ((const DsAddNParam *)param)->num_args;
}

/* --- where --- */

/* MXNet's WhereOpShape: x, y and the output share one shape; the condition has that shape
 * too, or is 1-D with one flag per row of x. */
static gboolean infer_shape_where(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                  DsShape *in, DsShape *out, GError **error)
{
  (void)param;
  if (!ds_ops_unify_shapes(ctx, node, &in[1], 2, out, 1, error))
    return FALSE;
  const DsShape *x = &in[1];
  DsShape *cond = &in[0];
  if (x->ndim < 0 || cond->ndim < 0)
    return TRUE;
  if (cond->ndim == x->ndim)
    return ds_ops_unify_shapes(ctx, node, in, 3, out, 1, error);
  if (cond->ndim == 1 && x->ndim >= 1) {
    GError *local = NULL;
    if (!ds_shape_ctx_unify_dim(ctx, &cond->dims[0], x->dims[0], "condition", &local)) {
      g_clear_error(&local);
      g_autofree char *sc = ds_shape_to_string(cond);
      g_autofree char *sx = ds_shape_to_string(x);
      ds_shape_ctx_set_error(ctx, error, "a 1-D condition %s must have one element per row of x %s",
                             sc, sx);
      return FALSE;
    }
    return TRUE;
  }
  g_autofree char *sc = ds_shape_to_string(cond);
  g_autofree char *sx = ds_shape_to_string(x);
  ds_shape_ctx_set_error(
      ctx, error, "condition %s must have the shape of x %s, or be 1-D with its first dim", sc, sx);
  return FALSE;
}

/* x, y and the output share a dtype; the condition may have any. */
static gboolean infer_type_where(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                                 GError **error)
{
  (void)param;
  return ds_ops_unify_dtypes(node, &in[1], 2, out, 1, error);
}

/* --- definitions --- */

#define DS_BINARY_SAME_OP(ID, NAME, ...)                                                           \
  static const char *const ID##_aliases[] = {__VA_ARGS__, NULL};                                   \
  static const DsOpDef ID##_def = {                                                                \
      .id = DS_OP_##ID,                                                                            \
      .name = NAME,                                                                                \
      .aliases = ID##_aliases,                                                                     \
      .traits = DS_OP_TRAIT_ELEMWISE,                                                              \
      .num_inputs = ds_op_count_2,                                                                 \
      .num_outputs = ds_op_count_1,                                                                \
      .num_visible_outputs = ds_op_count_1,                                                        \
      .input_names = binary_inputs,                                                                \
      .infer_shape = ds_ops_infer_shape_same,                                                      \
  };

DS_BINARY_SAME_OP(ELEMWISE_ADD, "elemwise_add", "_add", "_plus", "_Plus")
DS_BINARY_SAME_OP(ELEMWISE_SUB, "elemwise_sub", "_sub", "_minus", "_Minus")
DS_BINARY_SAME_OP(ELEMWISE_MUL, "elemwise_mul", "_mul", "_Mul")
DS_BINARY_SAME_OP(ELEMWISE_DIV, "elemwise_div", "_div", "_Div")

#define DS_BROADCAST_OP(ID, NAME, ALIASES)                                                         \
  static const DsOpDef ID##_def = {                                                                \
      .id = DS_OP_##ID,                                                                            \
      .name = NAME,                                                                                \
      .aliases = ALIASES,                                                                          \
      .traits = DS_OP_TRAIT_BROADCAST,                                                             \
      .num_inputs = ds_op_count_2,                                                                 \
      .num_outputs = ds_op_count_1,                                                                \
      .num_visible_outputs = ds_op_count_1,                                                        \
      .input_names = binary_inputs,                                                                \
      .infer_shape = ds_ops_infer_shape_broadcast,                                                 \
  };

static const char *const broadcast_add_aliases[] = {"broadcast_plus", NULL};
static const char *const broadcast_sub_aliases[] = {"broadcast_minus", NULL};

DS_BROADCAST_OP(BROADCAST_ADD, "broadcast_add", broadcast_add_aliases)
DS_BROADCAST_OP(BROADCAST_SUB, "broadcast_sub", broadcast_sub_aliases)
DS_BROADCAST_OP(BROADCAST_MUL, "broadcast_mul", NULL)
DS_BROADCAST_OP(BROADCAST_DIV, "broadcast_div", NULL)
DS_BROADCAST_OP(BROADCAST_MAXIMUM, "broadcast_maximum", NULL)
DS_BROADCAST_OP(BROADCAST_MINIMUM, "broadcast_minimum", NULL)
DS_BROADCAST_OP(BROADCAST_POWER, "broadcast_power", NULL)
DS_BROADCAST_OP(BROADCAST_EQUAL, "broadcast_equal", NULL)
DS_BROADCAST_OP(BROADCAST_NOT_EQUAL, "broadcast_not_equal", NULL)
DS_BROADCAST_OP(BROADCAST_GREATER, "broadcast_greater", NULL)
DS_BROADCAST_OP(BROADCAST_GREATER_EQUAL, "broadcast_greater_equal", NULL)
DS_BROADCAST_OP(BROADCAST_LESSER, "broadcast_lesser", NULL)
DS_BROADCAST_OP(BROADCAST_LESSER_EQUAL, "broadcast_lesser_equal", NULL)

#define DS_SCALAR_OP(ID, NAME, ALIAS)                                                              \
  static const char *const ID##_aliases[] = {ALIAS, NULL};                                         \
  static const DsOpDef ID##_def = {                                                                \
      .id = DS_OP_##ID,                                                                            \
      .name = NAME,                                                                                \
      .aliases = ID##_aliases,                                                                     \
      .traits = DS_OP_TRAIT_ELEMWISE,                                                              \
      .param_size = sizeof(DsScalarParam),                                                         \
      .parse = parse_scalar,                                                                       \
      .num_inputs = ds_op_count_1,                                                                 \
      .num_outputs = ds_op_count_1,                                                                \
      .num_visible_outputs = ds_op_count_1,                                                        \
      .infer_shape = ds_ops_infer_shape_same,                                                      \
      .infer_type = infer_type_scalar,                                                             \
  };

DS_SCALAR_OP(PLUS_SCALAR, "_plus_scalar", "_PlusScalar")
DS_SCALAR_OP(MINUS_SCALAR, "_minus_scalar", "_MinusScalar")
DS_SCALAR_OP(RMINUS_SCALAR, "_rminus_scalar", "_RMinusScalar")
DS_SCALAR_OP(MUL_SCALAR, "_mul_scalar", "_MulScalar")
DS_SCALAR_OP(DIV_SCALAR, "_div_scalar", "_DivScalar")
DS_SCALAR_OP(RDIV_SCALAR, "_rdiv_scalar", "_RDivScalar")
DS_SCALAR_OP(POWER_SCALAR, "_power_scalar", "_PowerScalar")
DS_SCALAR_OP(MAXIMUM_SCALAR, "_maximum_scalar", "_MaximumScalar")
DS_SCALAR_OP(MINIMUM_SCALAR, "_minimum_scalar", "_MinimumScalar")
DS_SCALAR_OP(EQUAL_SCALAR, "_equal_scalar", "_EqualScalar")
DS_SCALAR_OP(GREATER_SCALAR, "_greater_scalar", "_GreaterScalar")
DS_SCALAR_OP(LESSER_SCALAR, "_lesser_scalar", "_LesserScalar")

#define DS_UNARY_OP(ID, NAME, ALIASES, TRAITS)                                                     \
  static const DsOpDef ID##_def = {                                                                \
      .id = DS_OP_##ID,                                                                            \
      .name = NAME,                                                                                \
      .aliases = ALIASES,                                                                          \
      .traits = TRAITS,                                                                            \
      .num_inputs = ds_op_count_1,                                                                 \
      .num_outputs = ds_op_count_1,                                                                \
      .num_visible_outputs = ds_op_count_1,                                                        \
      .infer_shape = ds_ops_infer_shape_same,                                                      \
  };

static const char *const copy_aliases[] = {"identity", NULL};
static const char *const block_grad_aliases[] = {"stop_gradient", NULL};

DS_UNARY_OP(RELU, "relu", NULL, DS_OP_TRAIT_ELEMWISE)
DS_UNARY_OP(SIGMOID, "sigmoid", NULL, DS_OP_TRAIT_ELEMWISE)
DS_UNARY_OP(TANH, "tanh", NULL, DS_OP_TRAIT_ELEMWISE)
DS_UNARY_OP(EXP, "exp", NULL, DS_OP_TRAIT_ELEMWISE)
DS_UNARY_OP(LOG, "log", NULL, DS_OP_TRAIT_ELEMWISE)
DS_UNARY_OP(SQRT, "sqrt", NULL, DS_OP_TRAIT_ELEMWISE)
DS_UNARY_OP(RSQRT, "rsqrt", NULL, DS_OP_TRAIT_ELEMWISE)
DS_UNARY_OP(SQUARE, "square", NULL, DS_OP_TRAIT_ELEMWISE)
DS_UNARY_OP(ABS, "abs", NULL, DS_OP_TRAIT_ELEMWISE)
DS_UNARY_OP(NEGATIVE, "negative", NULL, DS_OP_TRAIT_ELEMWISE)
DS_UNARY_OP(RECIPROCAL, "reciprocal", NULL, DS_OP_TRAIT_ELEMWISE)
DS_UNARY_OP(ERF, "erf", NULL, DS_OP_TRAIT_ELEMWISE)
DS_UNARY_OP(IDENTITY, "_copy", copy_aliases, DS_OP_TRAIT_ELEMWISE | DS_OP_TRAIT_VIEW)
DS_UNARY_OP(BLOCK_GRAD, "BlockGrad", block_grad_aliases, DS_OP_TRAIT_ELEMWISE | DS_OP_TRAIT_VIEW)
DS_UNARY_OP(ZEROS_LIKE, "zeros_like", NULL, DS_OP_TRAIT_ELEMWISE)
DS_UNARY_OP(ONES_LIKE, "ones_like", NULL, DS_OP_TRAIT_ELEMWISE)
DS_UNARY_OP(DIV_SQRT_DIM, "_contrib_div_sqrt_dim", NULL, DS_OP_TRAIT_ELEMWISE)

static const DsOpDef CLIP_def = {
    .id = DS_OP_CLIP,
    .name = "clip",
    .traits = DS_OP_TRAIT_ELEMWISE,
    .param_size = sizeof(DsClipParam),
    .parse = parse_clip,
    .num_inputs = ds_op_count_1,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .infer_shape = ds_ops_infer_shape_same,
};

static const DsOpDef WHERE_def = {
    .id = DS_OP_WHERE,
    .name = "where",
    .num_inputs = ds_op_count_3,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = where_inputs,
    .infer_shape = infer_shape_where,
    .infer_type = infer_type_where,
};

static const char *const add_n_aliases[] = {"ElementWiseSum", NULL};
static const DsOpDef ADD_N_def = {
    .id = DS_OP_ADD_N,
    .name = "add_n",
    .aliases = add_n_aliases,
    .traits = DS_OP_TRAIT_ELEMWISE,
    .param_size = sizeof(DsAddNParam),
    .parse = parse_add_n,
    .num_inputs = add_n_num_inputs,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = add_n_inputs,
    .infer_shape = ds_ops_infer_shape_same,
};

void ds_ops_elemwise_register(const DsOpDef **table)
{
#define DS_REGISTER_ENTRY(id, name) table[DS_OP_##id] = &id##_def;
  DS_OPS_ELEMWISE(DS_REGISTER_ENTRY)
#undef DS_REGISTER_ENTRY
}
