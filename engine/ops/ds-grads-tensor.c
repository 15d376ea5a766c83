/* ds-grads-tensor.c: gradients of data movement and reductions, as engine ops. Moving data
 * back is the same movement reversed: a reshape's gradient is reshaped back, a transpose's is
 * transposed by the inverse permutation, a concatenation's is sliced apart. */
#include "ds-grad.h"
#include "ds-grads.h"
#include "ds-dtype.h"

/* Reshape, Flatten, expand_dims, squeeze and reshape_like: g in x's shape. */
DS_GRAD_FN(ds_grad_reshape)
{
  (void)error;
  in_grads[0] = ds_grad_op2(ctx, "reshape_like", out_grads[0], ds_grad_input(ctx, 0), NULL);
  return TRUE;
}

DS_GRAD_FN(ds_grad_transpose)
{
  const DsTransposeParam *p = ctx->node->param;
  if (p->n_axes == 0) { /* reversed axes: their own inverse */
    in_grads[0] = ds_grad_op1(ctx, "transpose", out_grads[0], NULL);
    return TRUE;
  }
  int ndim = p->n_axes;
  int64_t inverse[DS_MAX_NDIM];
  for (int i = 0; i < ndim; i++) {
    int64_t a = p->axes[i] < 0 ? p->axes[i] + ndim : p->axes[i];
    if (a < 0 || a >= ndim)
      return ds_grad_fail(ctx, error, "axes out of range");
    inverse[a] = i;
  }
  g_autofree char *axes = ds_grad_tuple(inverse, ndim);
  in_grads[0] = ds_grad_op1(ctx, "transpose", out_grads[0], "axes", axes, NULL);
  return TRUE;
}

DS_GRAD_FN(ds_grad_swap_axis)
{
  (void)error;
  const DsSwapAxisParam *p = ctx->node->param;
  char d1[16], d2[16];
  g_snprintf(d1, sizeof d1, "%d", p->dim1);
  g_snprintf(d2, sizeof d2, "%d", p->dim2);
  in_grads[0] = ds_grad_op1(ctx, "SwapAxis", out_grads[0], "dim1", d1, "dim2", d2, NULL);
  return TRUE;
}

/* Pieces of g along `axis` from `begin` to `end` (an attribute string, "None" for the end). */
static DsEntry slice(DsGradCtx *ctx, DsEntry x, int axis, int64_t begin, const char *end)
{
  char a[16], b[32];
  g_snprintf(a, sizeof a, "%d", axis);
  g_snprintf(b, sizeof b, "%" G_GINT64_FORMAT, begin);
  return ds_grad_op1(ctx, "slice_axis", x, "axis", a, "begin", b, "end", end, NULL);
}

/* Input i's part of g: the slice at its offset along the axis, so the inputs' sizes there
 * must be known numbers. */
DS_GRAD_FN(ds_grad_concat)
{
  const DsConcatParam *p = ctx->node->param;
  const DsShape *os = &ctx->out_shapes[0];
  if (os->ndim < 1)
    return ds_grad_fail(ctx, error, "its output shape is not known");
  int axis = p->dim < 0 ? p->dim + os->ndim : p->dim;
  int64_t offset = 0;
  for (guint i = 0; i < ctx->node->n_inputs; i++) {
    DsDim d = ctx->in_shapes[i].ndim == os->ndim ? ctx->in_shapes[i].dims[axis] : DS_DIM_UNKNOWN;
    if (!ds_dim_is_const(d))
      return ds_grad_fail(ctx, error, "the size of input %u along axis %d is not a known number", i,
                          axis);
    char end[32];
    g_snprintf(end, sizeof end, "%" G_GINT64_FORMAT, offset + d.value);
    in_grads[i] = slice(ctx, out_grads[0], axis, offset, end);
    offset += d.value;
  }
  return TRUE;
}

/* The outputs' gradients concatenated back (zeros for an output nothing read), each given its
 * axis back first when the split squeezed it. */
DS_GRAD_FN(ds_grad_slice_channel)
{
  (void)error;
  const DsSliceChannelParam *p = ctx->node->param;
  guint n = ctx->node->n_outputs;
  g_autofree DsEntry *parts = g_new(DsEntry, n);
  char axis[16], count[16];
  g_snprintf(axis, sizeof axis, "%d", p->axis);
  g_snprintf(count, sizeof count, "%u", n);
  for (guint j = 0; j < n; j++) {
    DsEntry g = ds_grad_is_none(out_grads[j])
                    ? ds_grad_op1(ctx, "zeros_like", ds_grad_output(ctx, j), NULL)
                    : out_grads[j];
    parts[j] = p->squeeze_axis ? ds_grad_op1(ctx, "expand_dims", g, "axis", axis, NULL) : g;
  }
  in_grads[0] = ds_grad_op(ctx, "Concat", n, parts, "dim", axis, "num_args", count, NULL);
  return TRUE;
}

/* g split along the new axis, which goes again. */
DS_GRAD_FN(ds_grad_stack)
{
  (void)error;
  const DsStackParam *p = ctx->node->param;
  char axis[16], count[16];
  g_snprintf(axis, sizeof axis, "%d", p->axis);
  g_snprintf(count, sizeof count, "%u", ctx->node->n_inputs);
  DsEntry split = ds_grad_op1(ctx, "SliceChannel", out_grads[0], "axis", axis, "num_outputs",
                              count, "squeeze_axis", "True", NULL);
  for (guint i = 0; i < ctx->node->n_inputs; i++)
    in_grads[i] = (DsEntry){split.node_id, i, 0};
  return TRUE;
}

/* g put back between zeros: the parts of a zero x before and after the slice, around g. */
DS_GRAD_FN(ds_grad_slice_axis)
{
  (void)error;
  const DsSliceAxisParam *p = ctx->node->param;
  DsEntry zeros = ds_grad_op1(ctx, "zeros_like", ds_grad_input(ctx, 0), NULL);
  DsEntry parts[3];
  guint n = 0;
  char axis[16], begin[32], end[32];
  g_snprintf(axis, sizeof axis, "%d", p->axis);
  g_snprintf(begin, sizeof begin, "%" G_GINT64_FORMAT, p->begin);
  if (p->begin != 0)
    parts[n++] = slice(ctx, zeros, p->axis, 0, begin);
  parts[n++] = out_grads[0];
  if (p->has_end) {
    g_snprintf(end, sizeof end, "%" G_GINT64_FORMAT, p->end);
    parts[n++] = ds_grad_op1(ctx, "slice_axis", zeros, "axis", axis, "begin", end, "end", "None",
                             NULL);
  }
  char count[16];
  g_snprintf(count, sizeof count, "%u", n);
  in_grads[0] = n == 1 ? parts[0]
                       : ds_grad_op(ctx, "Concat", n, parts, "dim", axis, "num_args", count, NULL);
  return TRUE;
}

/* broadcast_to, broadcast_axis, broadcast_like: g summed over the broadcast axes. */
DS_GRAD_FN(ds_grad_broadcast)
{
  return ds_grad_sum_to(ctx, out_grads[0], &ctx->out_shapes[0], 0, &in_grads[0], error);
}

/* The axes a reduction reduced, for its rank-`ndim` input. */
static gboolean reduced_axes(DsGradCtx *ctx, bool *reduced, bool *keepdims, GError **error)
{
  int ndim = ctx->in_shapes[0].ndim;
  if (ndim < 0)
    return ds_grad_fail(ctx, error, "its input shape is not known");
  gboolean ok;
  DsOpId id = ctx->node->op->id;
  if (id == DS_OP_SUM || id == DS_OP_MEAN || id == DS_OP_MAX || id == DS_OP_MIN ||
      id == DS_OP_PROD || id == DS_OP_NANSUM || id == DS_OP_NANPROD || id == DS_OP_NORM) {
    /* norm's DsNormParam starts with its DsReduceParam */
    const DsReduceParam *p = ctx->node->param;
    ok = ds_reduce_axes_mask(p, ndim, reduced);
    *keepdims = p->keepdims;
  } else {
    const DsNpReduceParam *p = ctx->node->param;
    ok = ds_np_reduce_axes_mask(p, ndim, reduced);
    *keepdims = p->keepdims;
  }
  return ok ? TRUE : ds_grad_fail(ctx, error, "axes out of range");
}

/* g given the reduced axes back (size 1), then broadcast like x. A reduction over every axis
 * gave one value ((1,) from MXNet's sum, () from NumPy's), reshaped to ones. */
static DsEntry spread(DsGradCtx *ctx, DsEntry g, const bool *reduced, bool keepdims)
{
  int ndim = ctx->in_shapes[0].ndim;
  gboolean all = TRUE;
  for (int d = 0; d < ndim; d++)
    all = all && reduced[d];
  if (all && !keepdims && ndim > 0) {
    int64_t ones[DS_MAX_NDIM];
    for (int d = 0; d < ndim; d++)
      ones[d] = 1;
    g_autofree char *shape = ds_grad_tuple(ones, ndim);
    g = ds_grad_op1(ctx, "Reshape", g, "shape", shape, NULL);
    keepdims = TRUE;
  }
  for (int d = 0; d < ndim && !keepdims; d++) {
    if (reduced[d]) {
      char axis[16];
      g_snprintf(axis, sizeof axis, "%d", d);
      g = ds_grad_op1(ctx, "expand_dims", g, "axis", axis, NULL);
    }
  }
  return ds_grad_op2(ctx, "broadcast_like", g, ds_grad_input(ctx, 0), NULL);
}

DS_GRAD_FN(ds_grad_sum)
{
  bool reduced[DS_MAX_NDIM], keepdims;
  if (!reduced_axes(ctx, reduced, &keepdims, error))
    return FALSE;
  in_grads[0] = spread(ctx, out_grads[0], reduced, keepdims);
  return TRUE;
}

/* The sum's gradient over the count of values each mean took: a number when the reduced
 * dims are, else counted at run time as a sum of ones. */
DS_GRAD_FN(ds_grad_mean)
{
  bool reduced[DS_MAX_NDIM], keepdims;
  if (!reduced_axes(ctx, reduced, &keepdims, error))
    return FALSE;
  const DsShape *xs = &ctx->in_shapes[0];
  int64_t count = 1;
  for (int d = 0; d < xs->ndim; d++)
    if (reduced[d])
      count = ds_dim_is_const(xs->dims[d]) && count >= 0 ? count * xs->dims[d].value : -1;
  DsEntry g = spread(ctx, out_grads[0], reduced, keepdims);
  if (count >= 0) {
    in_grads[0] = ds_grad_scalar(ctx, "_div_scalar", g, (double)count);
    return TRUE;
  }
  int64_t axes[DS_MAX_NDIM];
  int n_axes = 0;
  for (int d = 0; d < xs->ndim; d++)
    if (reduced[d])
      axes[n_axes++] = d;
  g_autofree char *axis = ds_grad_tuple(axes, n_axes);
  DsEntry ones = ds_grad_op1(ctx, "ones_like", ds_grad_input(ctx, 0), NULL);
  DsEntry n = ds_grad_op1(ctx, "sum", ones, "axis", axis, "keepdims", "True", NULL);
  in_grads[0] = ds_grad_op2(ctx, "broadcast_div", g, n, NULL);
  return TRUE;
}

/* The reductions whose gradient reads their input x and output y: g spread back over the
 * reduced axes (gs), times dy/dx, MXNet's ReduceAxesBackwardUseInOut formulas:
 *   max, min   gs * (x == y)   (every tied element gets the whole gradient, as in MXNet)
 *   prod       gs * y / x
 *   nansum     gs where x is not NaN, else 0; nanprod likewise with y / x
 *   sum_square 2 x gs;   l1_norm, norm ord 1: gs * sign(x);   l2_norm, norm ord 2: gs * x / y
 *   log_sum    gs / exp(y);   log_sum_exp: gs * exp(x - y) */
DS_GRAD_FN(ds_grad_reduce)
{
  bool reduced[DS_MAX_NDIM], keepdims;
  if (!reduced_axes(ctx, reduced, &keepdims, error))
    return FALSE;
  DsEntry x = ds_grad_input(ctx, 0), g = out_grads[0];
  if (ctx->out_dtypes[0] != ctx->in_dtypes[0]) /* norm's out_dtype */
    g = ds_grad_op1(ctx, "Cast", g, "dtype", ds_dtype_name(ctx->in_dtypes[0]), NULL);
  DsEntry gs = spread(ctx, g, reduced, keepdims);
  DsEntry ys = DS_GRAD_NONE;
  DsOpId id = ctx->node->op->id;
  gboolean reads_y = id != DS_OP_NANSUM && id != DS_OP_SUM_SQUARE && id != DS_OP_L1_NORM;
  if (id == DS_OP_NORM)
    reads_y = ((const DsNormParam *)ctx->node->param)->ord == 2;
  if (reads_y) {
    DsEntry y = ds_grad_output(ctx, 0);
    if (ctx->out_dtypes[0] != ctx->in_dtypes[0])
      y = ds_grad_op1(ctx, "Cast", y, "dtype", ds_dtype_name(ctx->in_dtypes[0]), NULL);
    ys = spread(ctx, y, reduced, keepdims);
  }
  DsEntry d; /* dy/dx, or the gradient itself where noted */
  switch (id) {
  case DS_OP_MAX:
  case DS_OP_MIN:
  case DS_OP_NP_MAX:
  case DS_OP_NP_MIN: d = ds_grad_op2(ctx, "broadcast_equal", x, ys, NULL); break;
  case DS_OP_PROD:
  case DS_OP_NP_PROD: d = ds_grad_op2(ctx, "elemwise_div", ys, x, NULL); break;
  case DS_OP_NANSUM: d = ds_grad_op2(ctx, "broadcast_equal", x, x, NULL); break;
  case DS_OP_NANPROD: {
    DsEntry kept = ds_grad_op2(ctx, "broadcast_equal", x, x, NULL);
    DsEntry ratio = ds_grad_op2(ctx, "elemwise_div", ys, x, NULL);
    DsEntry zeros = ds_grad_op1(ctx, "zeros_like", x, NULL);
    d = ds_grad_op(ctx, "where", 3, (DsEntry[]){kept, ratio, zeros}, NULL);
    break;
  }
  case DS_OP_SUM_SQUARE: d = ds_grad_scalar(ctx, "_mul_scalar", x, 2.0); break;
  case DS_OP_L1_NORM: d = ds_grad_op1(ctx, "sign", x, NULL); break;
  case DS_OP_NORM:
    d = reads_y ? ds_grad_op2(ctx, "elemwise_div", x, ys, NULL) : ds_grad_op1(ctx, "sign", x, NULL);
    break;
  case DS_OP_L2_NORM: d = ds_grad_op2(ctx, "elemwise_div", x, ys, NULL); break;
  case DS_OP_LOG_SUM: {
    in_grads[0] = ds_grad_op2(ctx, "elemwise_div", gs, ds_grad_op1(ctx, "exp", ys, NULL), NULL);
    return TRUE;
  }
  case DS_OP_LOG_SUM_EXP:
    d = ds_grad_op1(ctx, "exp", ds_grad_op2(ctx, "elemwise_sub", x, ys, NULL), NULL);
    break;
  default: return ds_grad_fail(ctx, error, "not a reduction with an input-output gradient");
  }
  in_grads[0] = ds_grad_op2(ctx, "elemwise_mul", gs, d, NULL);
  return TRUE;
}

/* Back to the input's dtype; an integer input gets none. */
DS_GRAD_FN(ds_grad_cast)
{
  (void)error;
  DsDType from = ctx->in_dtypes[0];
  if (ds_dtype_is_float(from))
    in_grads[0] = ds_grad_op1(ctx, "Cast", out_grads[0], "dtype", ds_dtype_name(from), NULL);
  return TRUE;
}

/* The masked positions got a constant: their gradient is 0. */
DS_GRAD_FN(ds_grad_sequence_mask)
{
  (void)error;
  const DsSequenceMaskParam *p = ctx->node->param;
  if (!p->use_sequence_length) {
    in_grads[0] = out_grads[0];
    return TRUE;
  }
  char axis[16];
  g_snprintf(axis, sizeof axis, "%d", p->axis);
  in_grads[0] = ds_grad_op2(ctx, "SequenceMask", out_grads[0], ds_grad_input(ctx, 1),
                            "use_sequence_length", "True", "value", "0", "axis", axis, NULL);
  return TRUE;
}
