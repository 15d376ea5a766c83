/* ds-cuda-elemwise.c: CUDA kernels of the elementwise family, host side.
 *
 * Covers the unary math, the scalar ops, the binary and broadcast ops, where, _npi_where,
 * add_n, the copies and fills, NumPy's float predicates, and the elementwise layers of the nn
 * family (Activation, LeakyReLU, Dropout at inference). Each kernel checks its tensors, plans
 * any broadcast (DsCudaBcast, from the collapsed plan both backends make: ds_geom_broadcast in
 * core/ds-geometry-tensor.h) and calls a launcher of ds-cuda-elemwise.cu on
 * ds_cuda_stream(). The semantics are the CPU kernels'
 * (ds-cpu-elemwise.c, ds-cpu-nn.c); the dtypes are fewer: float32 throughout, float64 where the
 * same templates give it for free, integers and bool for the comparisons, logical ops and data
 * movement. Each op's supports() says exactly which, so placement keeps the rest on the CPU.
 */
#include <math.h>
#include <string.h>

#include "ds-cuda-elemwise-launch.h"
#include "ds-cuda.h"
#include "ds-geometry-tensor.h"

_Static_assert(DS_CUDA_MAX_DIMS == DS_MAX_NDIM, "broadcast plans must hold any tensor's dims");
_Static_assert(sizeof(((DsCudaBcast *)0)->stride) == sizeof(((DsGeomBcast *)0)->stride),
               "a DsCudaBcast holds a DsGeomBcast's strides");

/* ------------------------------------------------------------------------------------------ */
/* Shared checks */

static bool is_float_dtype(DsDType t)
{
  return t == DS_DTYPE_FLOAT32 || t == DS_DTYPE_FLOAT64;
}

/* Any dtype the CPU computes in (float16 and the other storage types are not). */
static bool computable(DsDType t)
{
  return ds_dtype_is_valid(t) && !ds_dtype_is_storage_only(t);
}

/* Queues a device-to-device copy (nothing when the planner aliased the buffers). */
static DsStatus copy_device(void *dst, const void *src, size_t bytes)
{
  if (dst == src || bytes == 0)
    return DS_STATUS_OK;
  return ds_cuda_status(
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, ds_cuda_stream()));
}

/* Fills n elements of dtype t with `value` converted to t (t's bytes, little-endian). */
static DsStatus fill_value(void *out, DsDType t, int64_t n, double value)
{
  if (n == 0)
    return DS_STATUS_OK;
  size_t es = ds_dtype_size(t);
  if (value == 0.0)
    return ds_cuda_status(cudaMemsetAsync(out, 0, (size_t)n * es, ds_cuda_stream()));
  uint64_t cell = 0;
  ds_tensor_store_f64(t, &cell, value);
  return ds_cuda_status(ds_cuda_launch_fill(out, es, cell, n, ds_cuda_stream()));
}

/* ------------------------------------------------------------------------------------------ */
/* Broadcast plans */

/* The plan for `out` from `k` (2 or 3) operands broadcasting to it, as the device reads it;
 * false if they do not broadcast. */
static bool plan_build(const DsTensor *const *ops, int k, const DsTensor *out, DsCudaBcast *p)
{
  DsGeomBcast g;
  if (!ds_geom_broadcast(ops, k, out, &g))
    return false;
  memset(p, 0, sizeof *p);
  p->ndim = g.ndim;
  memcpy(p->shape, g.shape, sizeof p->shape);
  memcpy(p->stride, g.stride, sizeof p->stride);
  return true;
}

/* A one-dim plan over n elements where every operand walks with stride 1. */
static void plan_flat(int64_t n, DsCudaBcast *p)
{
  memset(p, 0, sizeof *p);
  p->ndim = 1;
  p->shape[0] = n;
  for (int j = 0; j < 3; j++)
    p->stride[j][0] = 1;
}

/* ------------------------------------------------------------------------------------------ */
/* Unary float32 ops: core/ds-math-unary.h's functions */

static DsStatus run_unary(const DsKernelCtx *ctx, DsMathUnaryFn fn, float a, float b)
{
  const DsTensor *x = &ctx->inputs[0];
  DsTensor *y = &ctx->outputs[0];
  if (x->dtype != DS_DTYPE_FLOAT32 || y->dtype != DS_DTYPE_FLOAT32)
    return DS_STATUS_UNSUPPORTED;
  int64_t n = ds_tensor_numel(x);
  if (ds_tensor_numel(y) != n)
    return DS_STATUS_INVALID_ARGUMENT;
  if (n == 0)
    return DS_STATUS_OK;
  return ds_cuda_status(ds_cuda_launch_unary_f32(fn, x->data, y->data, n, a, b, ds_cuda_stream()));
}

/* The three ways a unary op takes its coefficients (the table's COEF column). */
static DsStatus run_unary_NONE(const DsKernelCtx *ctx, DsMathUnaryFn fn)
{
  return run_unary(ctx, fn, 0.0f, 0.0f);
}

/* clip: the bounds take the data's dtype first, as MXNet compares against DType(a_min). */
static DsStatus run_unary_CLIP(const DsKernelCtx *ctx, DsMathUnaryFn fn)
{
  const DsClipParam *p = ctx->param;
  return run_unary(ctx, fn, (float)p->a_min, (float)p->a_max);
}

/* The activations with two coefficients (DsActParam: alpha, beta). */
static DsStatus run_unary_ACT(const DsKernelCtx *ctx, DsMathUnaryFn fn)
{
  const DsActParam *p = ctx->param;
  return run_unary(ctx, fn, (float)p->alpha, (float)p->beta);
}

/* One kernel per op of the table, registered under the op of the same id. */
#define UNARY_KERNEL(ID, COST, COEF, EXPR)                                                         \
  static DsStatus k_unary_##ID(const DsKernelCtx *ctx)                                             \
  {                                                                                                \
    return run_unary_##COEF(ctx, DS_MATH_UN_##ID);                                                 \
  }
DS_MATH_UNARY(UNARY_KERNEL)
#undef UNARY_KERNEL

/* Activation: each act_type's formula is ds-cpu-nn.c's. */
static DsStatus k_activation(const DsKernelCtx *ctx)
{
  const DsActivationParam *p = ctx->param;
  switch (p->act_type) {
  case DS_ACT_RELU:
    return run_unary(ctx, DS_MATH_UN_ACT_RELU, 0.0f, 0.0f);
  case DS_ACT_SIGMOID:
    return run_unary(ctx, DS_MATH_UN_ACT_SIGMOID, 0.0f, 0.0f);
  case DS_ACT_TANH:
    return run_unary(ctx, DS_MATH_UN_TANH, 0.0f, 0.0f);
  case DS_ACT_SOFTRELU:
    return run_unary(ctx, DS_MATH_UN_ACT_SOFTRELU, 0.0f, 0.0f);
  case DS_ACT_SOFTSIGN:
    return run_unary(ctx, DS_MATH_UN_SOFTSIGN, 0.0f, 0.0f);
  case DS_ACT_LOG_SIGMOID:
    return run_unary(ctx, DS_MATH_UN_ACT_LOG_SIGMOID, 0.0f, 0.0f);
  case DS_ACT_MISH:
    return run_unary(ctx, DS_MATH_UN_ACT_MISH, 0.0f, 0.0f);
  }
  return DS_STATUS_UNSUPPORTED;
}

static bool all_f32(const DsTensor *t, int n)
{
  for (int i = 0; i < n; i++)
    if (t[i].dtype != DS_DTYPE_FLOAT32)
      return false;
  return true;
}

/* prelu's gamma lined up with the data as MXNet does: one slope for everything, or a 1-D
 * gamma along axis 1 (axis 0 when axis 1 does not match). */
static DsStatus run_prelu(const DsKernelCtx *ctx)
{
  const DsTensor *x = &ctx->inputs[0], *gamma = &ctx->inputs[1];
  int64_t n = ds_tensor_numel(x), ng = ds_tensor_numel(gamma);
  int64_t channels = 1, inner = n > 0 ? n : 1;
  if (ng != 1) {
    int axis = x->ndim >= 2 && x->shape[1] == ng ? 1 : (x->ndim >= 1 && x->shape[0] == ng ? 0 : -1);
    if (axis < 0)
      return DS_STATUS_INVALID_ARGUMENT;
    channels = ng;
    inner = ds_shape_span(x->shape, axis + 1, x->ndim);
  }
  if (n == 0)
    return DS_STATUS_OK;
  return ds_cuda_status(ds_cuda_launch_prelu_f32(x->data, gamma->data, ctx->outputs[0].data, n,
                                                 channels, inner, ds_cuda_stream()));
}

/* LeakyReLU: leaky, rrelu (the mean slope at inference, also written to its second output),
 * prelu, elu, selu, gelu. */
static DsStatus k_leaky_relu(const DsKernelCtx *ctx)
{
  const DsLeakyReLUParam *p = ctx->param;
  int n_in = p->act_type == DS_LEAKY_PRELU ? 2 : 1;
  int n_out = p->act_type == DS_LEAKY_RRELU ? 2 : 1;
  if (!all_f32(ctx->inputs, n_in) || !all_f32(ctx->outputs, n_out))
    return DS_STATUS_UNSUPPORTED;
  if (ds_tensor_numel(&ctx->outputs[0]) != ds_tensor_numel(&ctx->inputs[0]))
    return DS_STATUS_INVALID_ARGUMENT;
  float slope = (float)p->slope;
  switch (p->act_type) {
  case DS_LEAKY_LEAKY:
    return run_unary(ctx, DS_MATH_UN_LEAKY, slope, 0.0f);
  case DS_LEAKY_RRELU: {
    slope = (float)((p->lower_bound + p->upper_bound) / 2.0);
    DsStatus st = run_unary(ctx, DS_MATH_UN_LEAKY, slope, 0.0f);
    if (st != DS_STATUS_OK)
      return st;
    DsTensor *mask = &ctx->outputs[1];
    return fill_value(mask->data, mask->dtype, ds_tensor_numel(mask), slope);
  }
  case DS_LEAKY_PRELU:
    return run_prelu(ctx);
  case DS_LEAKY_ELU:
    return run_unary(ctx, DS_MATH_UN_LEAKY_ELU, slope, 0.0f);
  case DS_LEAKY_SELU:
    return run_unary(ctx, DS_MATH_UN_LEAKY_SELU, 0.0f, 0.0f);
  case DS_LEAKY_GELU:
    return run_unary(ctx, DS_MATH_UN_LEAKY_GELU, 0.0f, 0.0f);
  }
  return DS_STATUS_UNSUPPORTED;
}

/* ------------------------------------------------------------------------------------------ */
/* Copies, fills, predicates, Dropout */

/* _copy, BlockGrad: the bytes pass through. */
static DsStatus k_copy(const DsKernelCtx *ctx)
{
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (!ds_dtype_is_valid(in->dtype))
    return DS_STATUS_UNSUPPORTED;
  if (in->dtype != out->dtype || ds_tensor_numel(in) != ds_tensor_numel(out))
    return DS_STATUS_INVALID_ARGUMENT;
  return copy_device(out->data, in->data, ds_tensor_nbytes(out));
}

static DsStatus run_fill_like(const DsKernelCtx *ctx, double value)
{
  DsTensor *out = &ctx->outputs[0];
  if (!computable(out->dtype))
    return DS_STATUS_UNSUPPORTED;
  return fill_value(out->data, out->dtype, ds_tensor_numel(out), value);
}

#define FILL_LIKE_KERNEL(NAME, VALUE)                                                              \
  static DsStatus NAME(const DsKernelCtx *ctx)                                                     \
  {                                                                                                \
    return run_fill_like(ctx, VALUE);                                                              \
  }
FILL_LIKE_KERNEL(k_zeros_like, 0.0)
FILL_LIKE_KERNEL(k_ones_like, 1.0)
#undef FILL_LIKE_KERNEL

/* _npi_isnan and friends: bool results, false for every integer. */
static DsStatus run_predicate(const DsKernelCtx *ctx, int pred)
{
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (!computable(in->dtype))
    return DS_STATUS_UNSUPPORTED;
  int64_t n = ds_tensor_numel(in);
  if (out->dtype != DS_DTYPE_BOOL || ds_tensor_numel(out) != n)
    return DS_STATUS_INVALID_ARGUMENT;
  if (n == 0)
    return DS_STATUS_OK;
  if (!is_float_dtype(in->dtype))
    return fill_value(out->data, DS_DTYPE_BOOL, n, 0.0);
  return ds_cuda_status(
      ds_cuda_launch_predicate(pred, in->dtype, in->data, out->data, n, ds_cuda_stream()));
}

#define PREDICATE_KERNEL(NAME, PRED)                                                               \
  static DsStatus NAME(const DsKernelCtx *ctx)                                                     \
  {                                                                                                \
    return run_predicate(ctx, PRED);                                                               \
  }
PREDICATE_KERNEL(k_isnan, DS_CUDA_PRED_NAN)
PREDICATE_KERNEL(k_isinf, DS_CUDA_PRED_INF)
PREDICATE_KERNEL(k_isposinf, DS_CUDA_PRED_POSINF)
PREDICATE_KERNEL(k_isneginf, DS_CUDA_PRED_NEGINF)
#undef PREDICATE_KERNEL

static bool dropout_mask_dtype_ok(DsDType t)
{
  return t == DS_DTYPE_FLOAT32 || t == DS_DTYPE_FLOAT64 || t == DS_DTYPE_FLOAT16;
}

/* Dropout at inference: the data passes through, and the mask is 1, the scale that makes
 * output = data * mask hold. mode='always' would drop at random: refused. */
static DsStatus k_dropout(const DsKernelCtx *ctx)
{
  const DsDropoutParam *p = ctx->param;
  if (p->mode == DS_DROPOUT_ALWAYS && p->p > 0.0)
    return DS_STATUS_UNSUPPORTED;
  const DsTensor *x = &ctx->inputs[0];
  DsTensor *y = &ctx->outputs[0];
  if (!ds_geom_same_shape(x, y) || x->dtype != y->dtype)
    return DS_STATUS_INVALID_ARGUMENT;
  if (!dropout_mask_dtype_ok(ctx->outputs[1].dtype))
    return DS_STATUS_UNSUPPORTED;
  DsStatus st = copy_device(y->data, x->data, ds_tensor_nbytes(x));
  if (st != DS_STATUS_OK)
    return st;
  DsTensor *mask = &ctx->outputs[1];
  int64_t n = ds_tensor_numel(mask);
  if (mask->dtype == DS_DTYPE_FLOAT16) /* 1.0 in IEEE half precision */
    return n == 0 ? DS_STATUS_OK
                  : ds_cuda_status(ds_cuda_launch_fill(mask->data, 2, 0x3c00, n, ds_cuda_stream()));
  return fill_value(mask->data, mask->dtype, n, 1.0);
}

/* ------------------------------------------------------------------------------------------ */
/* Binary and broadcast ops */

/* What an op allows of its dtypes. */
typedef enum {
  RULE_SAME,     /* operands and result share one dtype */
  RULE_LHS,      /* broadcast_power: the result has lhs's dtype (here: rhs's too) */
  RULE_BOOL,     /* the operands share a dtype, the result is bool (_npi_equal...) */
} BinRule;

static bool is_logical(int op)
{
  return op >= DS_MATH_BIN_AND && op <= DS_MATH_BIN_XOR;
}

/* The (op, dtypes) pairs ds_cuda_launch_binary has kernels for. */
static bool binary_dtypes_ok(int op, BinRule rule, DsDType ta, DsDType tb, DsDType to)
{
  if (ta != tb)
    return false;
  if (rule == RULE_BOOL)
    return to == DS_DTYPE_BOOL && ds_math_binary_is_compare(op) && computable(ta);
  if (to != ta)
    return false;
  switch (ta) {
  case DS_DTYPE_FLOAT32:
  case DS_DTYPE_FLOAT64:
    return true;
  case DS_DTYPE_INT32:
  case DS_DTYPE_INT64:
    return op == DS_MATH_BIN_ADD || op == DS_MATH_BIN_SUB || op == DS_MATH_BIN_MUL ||
           op == DS_MATH_BIN_MAX || op == DS_MATH_BIN_MIN || ds_math_binary_is_compare(op) ||
           is_logical(op);
  case DS_DTYPE_BOOL:
    return ds_math_binary_is_compare(op) || is_logical(op);
  default:
    return false;
  }
}

static DsStatus run_binary(const DsKernelCtx *ctx, int op, BinRule rule)
{
  const DsTensor *a = &ctx->inputs[0], *b = &ctx->inputs[1];
  DsTensor *out = &ctx->outputs[0];
  if (!binary_dtypes_ok(op, rule, a->dtype, b->dtype, out->dtype))
    return DS_STATUS_UNSUPPORTED;
  const DsTensor *ops[2] = {a, b};
  DsCudaBcast plan;
  if (!plan_build(ops, 2, out, &plan))
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t n = ds_tensor_numel(out);
  if (n == 0)
    return DS_STATUS_OK;
  return ds_cuda_status(ds_cuda_launch_binary(op, a->dtype, out->dtype, a->data, b->data, out->data,
                                              n, &plan, ds_cuda_stream()));
}

/* The shifts and bitwise ops (DS_OPS_BINARY's INTEGER rule) have no kernel here; every other
 * rule has. */
#define BINARY_SUPPORTS_LHS       BINARY_SUPPORTS_SAME
#define BINARY_SUPPORTS_BOOL      BINARY_SUPPORTS_SAME
#define BINARY_SUPPORTS_INTEGER(ID, FN, RULE)
#define BINARY_REGISTER_LHS       BINARY_REGISTER_SAME
#define BINARY_REGISTER_BOOL      BINARY_REGISTER_SAME
#define BINARY_REGISTER_INTEGER(ID)

/* One kernel per op of DS_OPS_BINARY but the integer-only ones. */
#define BINARY_KERNEL_SAME(ID, FN, RULE)                                                           \
  static DsStatus k_binary_##ID(const DsKernelCtx *ctx)                                            \
  {                                                                                                \
    return run_binary(ctx, DS_MATH_BIN_##FN, RULE_##RULE);                                         \
  }
#define BINARY_KERNEL_LHS     BINARY_KERNEL_SAME
#define BINARY_KERNEL_BOOL    BINARY_KERNEL_SAME
#define BINARY_KERNEL_INTEGER(ID, FN, RULE)
#define BINARY_KERNEL(ID, NAME, FN, RULE) BINARY_KERNEL_##RULE(ID, FN, RULE)
DS_OPS_BINARY(BINARY_KERNEL)
#undef BINARY_KERNEL

/* ------------------------------------------------------------------------------------------ */
/* Scalar ops */

/* out = x (op) scalar, or scalar (op) x when `reverse`, float32 or float64 in and out (the
 * scalar takes the data's dtype, MXNet's DType(alpha)). Integer data keeps to the CPU, whose
 * scalar ops have NumPy's mixed-type rules. */
static DsStatus run_scalar_value(const DsKernelCtx *ctx, int op, double scalar, bool reverse)
{
  const DsTensor *x = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (!is_float_dtype(x->dtype) || out->dtype != x->dtype)
    return DS_STATUS_UNSUPPORTED;
  int64_t n = ds_tensor_numel(out);
  if (ds_tensor_numel(x) != n)
    return DS_STATUS_INVALID_ARGUMENT;
  if (n == 0)
    return DS_STATUS_OK;
  return ds_cuda_status(ds_cuda_launch_scalar(op, x->dtype, x->data, scalar, reverse, out->data, n,
                                              ds_cuda_stream()));
}

/* Every scalar op: its function and side come parsed with the scalar (DS_OPS_SCALAR). */
static DsStatus k_scalar(const DsKernelCtx *ctx)
{
  const DsScalarParam *p = ctx->param;
  return run_scalar_value(ctx, p->fn, p->scalar, p->reverse);
}

/* _contrib_div_sqrt_dim: x / sqrt(last dim), the root taken in double as MXNet does. */
static DsStatus k_div_sqrt_dim(const DsKernelCtx *ctx)
{
  if (ctx->inputs[0].ndim < 1)
    return DS_STATUS_INVALID_ARGUMENT;
  const DsTensor *x = &ctx->inputs[0];
  return run_scalar_value(ctx, DS_MATH_BIN_DIV, sqrt((double)x->shape[x->ndim - 1]), false);
}

/* ------------------------------------------------------------------------------------------ */
/* where, _npi_where, add_n */

/* Whether `where`-style selection can move elements of dtype t (any fixed size). */
static bool select_dtype_ok(DsDType t)
{
  size_t es = ds_dtype_size(t);
  return es == 1 || es == 2 || es == 4 || es == 8;
}

static DsStatus launch_select(const DsTensor *c, const DsTensor *x, const DsTensor *y,
                              DsTensor *out, const DsCudaBcast *plan)
{
  int64_t n = ds_tensor_numel(out);
  if (n == 0)
    return DS_STATUS_OK;
  return ds_cuda_status(ds_cuda_launch_select(c->dtype, c->data, x->data, y->data, out->data,
                                              ds_dtype_size(out->dtype), n, plan,
                                              ds_cuda_stream()));
}

/* where (MXNet's): the condition has x's shape, or is 1-D with one flag per row of x. */
static DsStatus k_where(const DsKernelCtx *ctx)
{
  const DsTensor *c = &ctx->inputs[0], *x = &ctx->inputs[1], *y = &ctx->inputs[2];
  DsTensor *out = &ctx->outputs[0];
  if (!computable(c->dtype) || !computable(out->dtype))
    return DS_STATUS_UNSUPPORTED;
  if (x->dtype != out->dtype || y->dtype != out->dtype)
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t n = ds_tensor_numel(out), nc = ds_tensor_numel(c);
  if (ds_tensor_numel(x) != n || ds_tensor_numel(y) != n)
    return DS_STATUS_INVALID_ARGUMENT;
  DsCudaBcast plan;
  if (nc == n && (c->ndim == out->ndim || n == 0)) {
    plan_flat(n, &plan);
    return launch_select(c, x, y, out, &plan);
  }
  if (c->ndim != 1 || out->ndim < 1 || c->shape[0] != out->shape[0])
    return DS_STATUS_INVALID_ARGUMENT;
  if (n == 0)
    return DS_STATUS_OK;
  /* (rows, row length): the condition steps once per row, x and y once per element. */
  plan_flat(n, &plan);
  plan.ndim = 2;
  plan.shape[0] = nc;
  plan.shape[1] = n / nc;
  for (int j = 0; j < 3; j++) {
    plan.stride[j][0] = j == 0 ? 1 : n / nc;
    plan.stride[j][1] = j == 0 ? 0 : 1;
  }
  return launch_select(c, x, y, out, &plan);
}

/* _npi_where: condition, x and y broadcast together. */
static DsStatus k_np_where(const DsKernelCtx *ctx)
{
  const DsTensor *c = &ctx->inputs[0], *x = &ctx->inputs[1], *y = &ctx->inputs[2];
  DsTensor *out = &ctx->outputs[0];
  if (!computable(c->dtype) || !select_dtype_ok(out->dtype))
    return DS_STATUS_UNSUPPORTED;
  if (x->dtype != out->dtype || y->dtype != out->dtype)
    return DS_STATUS_INVALID_ARGUMENT;
  const DsTensor *ops[3] = {c, x, y};
  DsCudaBcast plan;
  if (!plan_build(ops, 3, out, &plan))
    return DS_STATUS_INVALID_ARGUMENT;
  return launch_select(c, x, y, out, &plan);
}

/* Device pointers handed to one launcher call: a bounded stack array however many inputs. */
#define ADD_N_CHUNK 64

/* add_n: the inputs added left to right, as the CPU's float32 loop does (so bit for bit). */
static DsStatus k_add_n(const DsKernelCtx *ctx)
{
  DsTensor *out = &ctx->outputs[0];
  if (!is_float_dtype(out->dtype))
    return DS_STATUS_UNSUPPORTED;
  int64_t n = ds_tensor_numel(out);
  for (int k = 0; k < ctx->n_inputs; k++) {
    if (ctx->inputs[k].dtype != out->dtype)
      return DS_STATUS_UNSUPPORTED;
    if (ds_tensor_numel(&ctx->inputs[k]) != n)
      return DS_STATUS_INVALID_ARGUMENT;
  }
  if (n == 0)
    return DS_STATUS_OK;
  const void *ptrs[ADD_N_CHUNK];
  for (int first = 0; first < ctx->n_inputs; first += ADD_N_CHUNK) {
    int count = MIN(ADD_N_CHUNK, ctx->n_inputs - first);
    for (int k = 0; k < count; k++)
      ptrs[k] = ctx->inputs[first + k].data;
    DsStatus st = ds_cuda_status(
        ds_cuda_launch_add_n(out->dtype, ptrs, count, first > 0, out->data, n, ds_cuda_stream()));
    if (st != DS_STATUS_OK)
      return st;
  }
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* supports(): the dtypes each kernel handles */

static bool supports_unary_f32(DsOpId op, const void *param, const DsDType *in, int n_in,
                               const DsDType *out, int n_out)
{
  (void)op;
  (void)param;
  return n_in >= 1 && n_out >= 1 && in[0] == DS_DTYPE_FLOAT32 && out[0] == DS_DTYPE_FLOAT32;
}

static bool supports_copy(DsOpId op, const void *param, const DsDType *in, int n_in,
                          const DsDType *out, int n_out)
{
  (void)op;
  (void)param;
  return n_in >= 1 && n_out >= 1 && ds_dtype_is_valid(in[0]) && in[0] == out[0];
}

static bool supports_fill(DsOpId op, const void *param, const DsDType *in, int n_in,
                          const DsDType *out, int n_out)
{
  (void)op;
  (void)param;
  (void)in;
  (void)n_in;
  return n_out >= 1 && computable(out[0]);
}

static bool supports_predicate(DsOpId op, const void *param, const DsDType *in, int n_in,
                               const DsDType *out, int n_out)
{
  (void)op;
  (void)param;
  return n_in >= 1 && n_out >= 1 && computable(in[0]) && out[0] == DS_DTYPE_BOOL;
}

static bool supports_binary(DsOpId op, const void *param, const DsDType *in, int n_in,
                            const DsDType *out, int n_out)
{
  (void)param;
  if (n_in < 2 || n_out < 1)
    return false;
  switch (op) {
#define BINARY_SUPPORTS_SAME(ID, FN, RULE)                                                         \
  case DS_OP_##ID:                                                                                 \
    return binary_dtypes_ok(DS_MATH_BIN_##FN, RULE_##RULE, in[0], in[1], out[0]);
#define BINARY_SUPPORTS(ID, NAME, FN, RULE) BINARY_SUPPORTS_##RULE(ID, FN, RULE)
    DS_OPS_BINARY(BINARY_SUPPORTS)
#undef BINARY_SUPPORTS
  default:
    return false;
  }
}

static bool supports_scalar(DsOpId op, const void *param, const DsDType *in, int n_in,
                            const DsDType *out, int n_out)
{
  (void)op;
  (void)param;
  return n_in >= 1 && n_out >= 1 && is_float_dtype(in[0]) && out[0] == in[0];
}

static bool supports_where(DsOpId op, const void *param, const DsDType *in, int n_in,
                           const DsDType *out, int n_out)
{
  (void)param;
  if (n_in < 3 || n_out < 1 || !computable(in[0]) || in[1] != out[0] || in[2] != out[0])
    return false;
  /* MXNet's where refuses float16 data on the CPU; _npi_where moves its bytes. */
  return op == DS_OP_NP_WHERE ? select_dtype_ok(out[0]) : computable(out[0]);
}

static bool supports_add_n(DsOpId op, const void *param, const DsDType *in, int n_in,
                           const DsDType *out, int n_out)
{
  (void)op;
  (void)param;
  if (n_in < 1 || n_out < 1 || !is_float_dtype(out[0]))
    return false;
  for (int i = 0; i < n_in; i++)
    if (in[i] != out[0])
      return false;
  return true;
}

static bool supports_leaky_relu(DsOpId op, const void *param, const DsDType *in, int n_in,
                                const DsDType *out, int n_out)
{
  (void)op;
  const DsLeakyReLUParam *p = param;
  if (p == NULL)
    return false;
  int want_in = p->act_type == DS_LEAKY_PRELU ? 2 : 1;
  int want_out = p->act_type == DS_LEAKY_RRELU ? 2 : 1;
  if (n_in < want_in || n_out < want_out)
    return false;
  for (int i = 0; i < want_in; i++)
    if (in[i] != DS_DTYPE_FLOAT32)
      return false;
  for (int i = 0; i < want_out; i++)
    if (out[i] != DS_DTYPE_FLOAT32)
      return false;
  return true;
}

static bool supports_dropout(DsOpId op, const void *param, const DsDType *in, int n_in,
                             const DsDType *out, int n_out)
{
  (void)op;
  const DsDropoutParam *p = param;
  if (p == NULL || (p->mode == DS_DROPOUT_ALWAYS && p->p > 0.0))
    return false;
  if (n_in < 1 || n_out < 1 || !ds_dtype_is_valid(in[0]) || in[0] != out[0])
    return false;
  return n_out < 2 || dropout_mask_dtype_ok(out[1]);
}

/* ------------------------------------------------------------------------------------------ */

typedef struct {
  DsOpId id;
  DsKernelFn run;
  DsCudaSupportsFn supports;
} OpEntry;

static const OpEntry other_ops[] = {
    {DS_OP_ACTIVATION, k_activation, supports_unary_f32},
    {DS_OP_LEAKY_RELU, k_leaky_relu, supports_leaky_relu},
    {DS_OP_DROPOUT, k_dropout, supports_dropout},
    {DS_OP_IDENTITY, k_copy, supports_copy},
    {DS_OP_BLOCK_GRAD, k_copy, supports_copy},
    {DS_OP_ZEROS_LIKE, k_zeros_like, supports_fill},
    {DS_OP_ONES_LIKE, k_ones_like, supports_fill},
    {DS_OP_ISNAN, k_isnan, supports_predicate},
    {DS_OP_ISINF, k_isinf, supports_predicate},
    {DS_OP_ISPOSINF, k_isposinf, supports_predicate},
    {DS_OP_ISNEGINF, k_isneginf, supports_predicate},
    {DS_OP_DIV_SQRT_DIM, k_div_sqrt_dim, supports_scalar},
    {DS_OP_WHERE, k_where, supports_where},
    {DS_OP_NP_WHERE, k_np_where, supports_where},
    {DS_OP_ADD_N, k_add_n, supports_add_n},
};

void ds_cuda_elemwise_register(DsKernel *table, DsCudaSupportsFn *supports)
{
#define BINARY_REGISTER_SAME(ID)                                                                   \
  table[DS_OP_##ID] = (DsKernel){k_binary_##ID, NULL};                                             \
  supports[DS_OP_##ID] = supports_binary;
#define BINARY_REGISTER(ID, NAME, FN, RULE) BINARY_REGISTER_##RULE(ID)
  DS_OPS_BINARY(BINARY_REGISTER)
#undef BINARY_REGISTER
#define SCALAR_REGISTER(ID, NAME, ALIAS, FN, REVERSE)                                              \
  table[DS_OP_##ID] = (DsKernel){k_scalar, NULL};                                                  \
  supports[DS_OP_##ID] = supports_scalar;
  DS_OPS_SCALAR(SCALAR_REGISTER)
#undef SCALAR_REGISTER
#define UNARY_REGISTER(ID, COST, COEF, EXPR)                                                       \
  table[DS_OP_##ID] = (DsKernel){k_unary_##ID, NULL};                                              \
  supports[DS_OP_##ID] = supports_unary_f32;
  DS_MATH_UNARY(UNARY_REGISTER)
#undef UNARY_REGISTER
  for (size_t i = 0; i < G_N_ELEMENTS(other_ops); i++) {
    table[other_ops[i].id] = (DsKernel){other_ops[i].run, NULL};
    supports[other_ops[i].id] = other_ops[i].supports;
  }
}
