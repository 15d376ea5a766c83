/* ds-grads-nn.c: gradients of the nn family, as engine ops (products, activations,
 * normalisations). g is the gradient flowing into output 0. */
#include <math.h>

#include "ds-grad.h"
#include "ds-grads.h"
#include "ds-dtype.h"

#define MUL(a, b) ds_grad_op2(ctx, "elemwise_mul", (a), (b), NULL)
#define ADD(a, b) ds_grad_op2(ctx, "elemwise_add", (a), (b), NULL)
#define BMUL(a, b) ds_grad_op2(ctx, "broadcast_mul", (a), (b), NULL)
#define BSUB(a, b) ds_grad_op2(ctx, "broadcast_sub", (a), (b), NULL)
#define BDIV(a, b) ds_grad_op2(ctx, "broadcast_div", (a), (b), NULL)
#define UN(op, a) ds_grad_op1(ctx, (op), (a), NULL)
#define SC(op, a, s) ds_grad_scalar(ctx, (op), (a), (s))

/* dot(a, b) with MXNet's transpose flags. */
static DsEntry dot(DsGradCtx *ctx, const char *op, DsEntry a, DsEntry b, gboolean ta,
                   gboolean tb)
{
  return ds_grad_op2(ctx, op, a, b, "transpose_a", ta ? "True" : "False", "transpose_b",
                     tb ? "True" : "False", NULL);
}

/* `x` as a matrix of rows of `cols` values: Reshape(shape=(-1, cols)). */
static DsEntry as_rows(DsGradCtx *ctx, DsEntry x, int64_t cols)
{
  g_autofree char *shape = g_strdup_printf("(-1, %" G_GINT64_FORMAT ")", cols);
  return ds_grad_op1(ctx, "Reshape", x, "shape", shape, NULL);
}

/* The sum of `x` over every axis but the last (a bias's gradient), for an `ndim`-D x. */
static DsEntry sum_leading(DsGradCtx *ctx, DsEntry x, int ndim)
{
  int64_t axes[DS_MAX_NDIM];
  for (int i = 0; i < ndim - 1; i++)
    axes[i] = i;
  g_autofree char *axis = ds_grad_tuple(axes, ndim - 1);
  return ds_grad_op1(ctx, "sum", x, "axis", axis, NULL);
}

/* y = x W^T + b, with x flattened to (N, K) unless flatten=False, where it is (..., K). */
DS_GRAD_FN(ds_grad_fully_connected)
{
  const DsFullyConnectedParam *p = ctx->node->param;
  const DsShape *xs = &ctx->in_shapes[0], *ws = &ctx->in_shapes[1];
  if (xs->ndim < 1 || ws->ndim != 2 || !ds_dim_is_const(ws->dims[1]))
    return ds_grad_fail(ctx, error, "its data and weight shapes are not known");
  int64_t k = ws->dims[1].value;
  DsEntry g = out_grads[0], x = ds_grad_input(ctx, 0), w = ds_grad_input(ctx, 1);
  /* x's rows and g's rows, lined up */
  DsEntry x2 = xs->ndim != 2 ? as_rows(ctx, x, k) : x;
  DsEntry g2 = (!p->flatten && xs->ndim != 2) ? as_rows(ctx, g, p->num_hidden) : g;
  DsEntry dx = dot(ctx, "dot", g, w, FALSE, FALSE);
  in_grads[0] = (p->flatten && xs->ndim != 2) ? ds_grad_op2(ctx, "reshape_like", dx, x, NULL) : dx;
  in_grads[1] = dot(ctx, "dot", g2, x2, TRUE, FALSE);
  if (!p->no_bias)
    in_grads[2] = p->flatten ? ds_grad_op1(ctx, "sum", g, "axis", "0", NULL)
                             : sum_leading(ctx, g, xs->ndim);
  return TRUE;
}

/* The gradients of y = op(a) op(b) for 2-D operands or batches of them (batch_dot). */
static void product_grads(DsGradCtx *ctx, const char *op, gboolean ta, gboolean tb, DsEntry g,
                          DsEntry a, DsEntry b, DsEntry *da, DsEntry *db)
{
  if (!ta && !tb) {
    *da = dot(ctx, op, g, b, FALSE, TRUE);
    *db = dot(ctx, op, a, g, TRUE, FALSE);
  } else if (!ta && tb) {
    *da = dot(ctx, op, g, b, FALSE, FALSE);
    *db = dot(ctx, op, g, a, TRUE, FALSE);
  } else if (ta && !tb) {
    *da = dot(ctx, op, b, g, FALSE, TRUE);
    *db = dot(ctx, op, a, g, FALSE, FALSE);
  } else {
    *da = dot(ctx, op, b, g, TRUE, TRUE);
    *db = dot(ctx, op, g, a, TRUE, TRUE);
  }
}

DS_GRAD_FN(ds_grad_dot)
{
  const DsDotParam *p = ctx->node->param;
  const DsShape *as = &ctx->in_shapes[0], *bs = &ctx->in_shapes[1];
  DsEntry g = out_grads[0], a = ds_grad_input(ctx, 0), b = ds_grad_input(ctx, 1);
  if (as->ndim == 2 && bs->ndim == 2) {
    product_grads(ctx, "dot", p->transpose_a, p->transpose_b, g, a, b, &in_grads[0],
                  &in_grads[1]);
    return TRUE;
  }
  /* (..., K) . (K, N): a's leading axes are rows */
  if (as->ndim > 2 && bs->ndim == 2 && !p->transpose_a && !p->transpose_b &&
      ds_dim_is_const(bs->dims[0]) && ds_dim_is_const(bs->dims[1])) {
    in_grads[0] = dot(ctx, "dot", g, b, FALSE, TRUE);
    in_grads[1] = dot(ctx, "dot", as_rows(ctx, a, bs->dims[0].value),
                      as_rows(ctx, g, bs->dims[1].value), TRUE, FALSE);
    return TRUE;
  }
  return ds_grad_fail(ctx, error, "only 2-D operands, or (..., K) . (K, N), are done");
}

DS_GRAD_FN(ds_grad_batch_dot)
{
  (void)error;
  const DsDotParam *p = ctx->node->param;
  product_grads(ctx, "batch_dot", p->transpose_a, p->transpose_b, out_grads[0],
                ds_grad_input(ctx, 0), ds_grad_input(ctx, 1), &in_grads[0], &in_grads[1]);
  return TRUE;
}

DS_GRAD_FN(ds_grad_activation)
{
  const DsActivationParam *p = ctx->node->param;
  DsEntry g = out_grads[0], x = ds_grad_input(ctx, 0), y = ds_grad_output(ctx, 0);
  switch (p->act_type) {
  case DS_ACT_RELU:
    return ds_grad_unary_formula(ctx, DS_OP_RELU, g, x, y, &in_grads[0]);
  case DS_ACT_SIGMOID:
    return ds_grad_unary_formula(ctx, DS_OP_SIGMOID, g, x, y, &in_grads[0]);
  case DS_ACT_TANH:
    return ds_grad_unary_formula(ctx, DS_OP_TANH, g, x, y, &in_grads[0]);
  case DS_ACT_SOFTSIGN:
    return ds_grad_unary_formula(ctx, DS_OP_SOFTSIGN, g, x, y, &in_grads[0]);
  case DS_ACT_SOFTRELU: /* log(1 + e^x): sigmoid(x) */
    in_grads[0] = MUL(g, UN("sigmoid", x));
    return TRUE;
  case DS_ACT_LOG_SIGMOID: /* log sigmoid(x): sigmoid(-x) */
    in_grads[0] = MUL(g, UN("sigmoid", UN("negative", x)));
    return TRUE;
  case DS_ACT_MISH: { /* x tanh(softplus(x)): t + x sigmoid(x) (1 - t^2) */
    DsEntry t = UN("tanh", ds_grad_op1(ctx, "Activation", x, "act_type", "softrelu", NULL));
    DsEntry rest = MUL(MUL(x, UN("sigmoid", x)), SC("_rminus_scalar", UN("square", t), 1));
    in_grads[0] = MUL(g, ADD(t, rest));
    return TRUE;
  }
  }
  return ds_grad_fail(ctx, error, "unknown act_type");
}

DS_GRAD_FN(ds_grad_leaky_relu)
{
  const DsLeakyReLUParam *p = ctx->node->param;
  DsEntry g = out_grads[0], x = ds_grad_input(ctx, 0), y = ds_grad_output(ctx, 0);
  DsEntry positive = SC("_greater_scalar", x, 0);
  DsEntry slope;
  switch (p->act_type) {
  case DS_LEAKY_LEAKY:
  case DS_LEAKY_RRELU: { /* 1 above 0, the slope below (rrelu's mean slope at inference) */
    double a = p->act_type == DS_LEAKY_LEAKY ? p->slope : (p->lower_bound + p->upper_bound) / 2;
    slope = SC("_plus_scalar", SC("_mul_scalar", positive, 1 - a), a);
    break;
  }
  case DS_LEAKY_ELU: /* below 0: y + a */
    slope = ADD(positive, MUL(SC("_rminus_scalar", positive, 1), SC("_plus_scalar", y, p->slope)));
    break;
  case DS_LEAKY_SELU: { /* lambda above 0, y + lambda alpha below */
    const double lambda = 1.0507009873554804934193349852946, alpha = 1.6732632423543772848170429916717;
    slope = ADD(SC("_mul_scalar", positive, lambda),
                MUL(SC("_rminus_scalar", positive, 1), SC("_plus_scalar", y, lambda * alpha)));
    break;
  }
  case DS_LEAKY_GELU: { /* Phi(x) + x phi(x) */
    DsEntry cdf = SC("_mul_scalar", SC("_plus_scalar", UN("erf", SC("_mul_scalar", x, M_SQRT1_2)), 1), 0.5);
    DsEntry pdf = SC("_mul_scalar", UN("exp", SC("_mul_scalar", UN("square", x), -0.5)),
                     M_2_SQRTPI * M_SQRT1_2 * 0.5);
    slope = ADD(cdf, MUL(x, pdf));
    break;
  }
  default:
    return ds_grad_fail(ctx, error, "act_type prelu is not done yet");
  }
  in_grads[0] = MUL(g, slope);
  return TRUE;
}

/* softmax and log_softmax's axis, checked against what their gradients handle. */
static gboolean softmax_axis(DsGradCtx *ctx, char buf[16], GError **error)
{
  const DsSoftmaxParam *p = ctx->node->param;
  if (p->use_length || p->trailing_axes)
    return ds_grad_fail(ctx, error, "use_length and trailing axes are not done yet");
  g_snprintf(buf, 16, "%d", p->axis);
  return TRUE;
}

/* y (g - sum(g y)) / T; softmin, softmax of -x, negates it; SoftmaxActivation is softmax
 * over the axis its mode gives. */
DS_GRAD_FN(ds_grad_softmax)
{
  const DsSoftmaxParam *p = ctx->node->param;
  char axis[16];
  if (!softmax_axis(ctx, axis, error))
    return FALSE;
  DsEntry g = out_grads[0], y = ds_grad_output(ctx, 0);
  DsEntry dot = ds_grad_op1(ctx, "sum", MUL(g, y), "axis", axis, "keepdims", "True", NULL);
  DsEntry dx = MUL(y, BSUB(g, dot));
  double scale = (ctx->node->op->id == DS_OP_SOFTMIN ? -1.0 : 1.0) / p->temperature;
  in_grads[0] = scale != 1.0 ? SC("_mul_scalar", dx, scale) : dx;
  return TRUE;
}

/* (g - exp(y) sum(g)) / T */
DS_GRAD_FN(ds_grad_log_softmax)
{
  const DsSoftmaxParam *p = ctx->node->param;
  char axis[16];
  if (!softmax_axis(ctx, axis, error))
    return FALSE;
  DsEntry g = out_grads[0], y = ds_grad_output(ctx, 0);
  DsEntry total = ds_grad_op1(ctx, "sum", g, "axis", axis, "keepdims", "True", NULL);
  DsEntry dx = BSUB(g, BMUL(UN("exp", y), total));
  in_grads[0] = p->temperature != 1.0 ? SC("_div_scalar", dx, p->temperature) : dx;
  return TRUE;
}

/* y = x̂ γ + β with x̂ = (x - mean) / std over the last axis, from the op's own mean and std
 * outputs: dx = (dx̂ - mean(dx̂) - x̂ mean(dx̂ x̂)) / std with dx̂ = g γ. */
DS_GRAD_FN(ds_grad_layer_norm)
{
  const DsLayerNormParam *p = ctx->node->param;
  const DsShape *xs = &ctx->in_shapes[0];
  if (xs->ndim < 1 || (p->axis != -1 && p->axis != xs->ndim - 1) || p->trailing_axes)
    return ds_grad_fail(ctx, error, "only a normalisation over the last axis is done");
  if (!ds_grad_is_none(out_grads[1]) || !ds_grad_is_none(out_grads[2]))
    return ds_grad_fail(ctx, error, "gradients into its mean and std outputs are not done");
  DsEntry g = out_grads[0], x = ds_grad_input(ctx, 0), gamma = ds_grad_input(ctx, 1);
  DsEntry mean = ds_grad_output(ctx, 1), std = ds_grad_output(ctx, 2);
  DsEntry xhat = BDIV(BSUB(x, mean), std);
  DsEntry dxhat = BMUL(g, gamma);
  DsEntry m1 = ds_grad_op1(ctx, "mean", dxhat, "axis", "-1", "keepdims", "True", NULL);
  DsEntry m2 = ds_grad_op1(ctx, "mean", MUL(dxhat, xhat), "axis", "-1", "keepdims", "True", NULL);
  in_grads[0] = BDIV(BSUB(BSUB(dxhat, m1), BMUL(xhat, m2)), std);
  in_grads[1] = sum_leading(ctx, MUL(g, xhat), xs->ndim);
  in_grads[2] = sum_leading(ctx, g, xs->ndim);
  return TRUE;
}

/* A model runs for inference, where Dropout passes its input through; with mode=always it
 * drops at random, and the mask it drew is not kept. */
DS_GRAD_FN(ds_grad_dropout)
{
  const DsDropoutParam *p = ctx->node->param;
  if (p->mode == DS_DROPOUT_ALWAYS && p->p > 0.0)
    return ds_grad_fail(ctx, error, "mode=always drops at random; its mask is not kept");
  in_grads[0] = out_grads[0];
  return TRUE;
}

/* The weight's gradient adds each row of g into the row its index picked:
 * one_hot(indices)^T . g, over all indices as rows. */
DS_GRAD_FN(ds_grad_embedding)
{
  const DsEmbeddingParam *p = ctx->node->param;
  g_autofree char *depth = g_strdup_printf("%" G_GINT64_FORMAT, p->input_dim);
  DsEntry hot = ds_grad_op1(ctx, "one_hot", ds_grad_input(ctx, 0), "depth", depth, "dtype",
                            ds_dtype_name(ctx->in_dtypes[1]), NULL);
  in_grads[1] = dot(ctx, "dot", as_rows(ctx, hot, p->input_dim),
                    as_rows(ctx, out_grads[0], p->output_dim), TRUE, FALSE);
  (void)error;
  return TRUE;
}

/* _backward_Pooling under the forward attributes; lp pooling and an argmax output have none. */
DS_GRAD_FN(ds_grad_pooling)
{
  const DsPoolingParam *p = ctx->node->param;
  if (p->pool_type == DS_POOL_LP || p->indices != DS_POOL_INDICES_NONE)
    return ds_grad_fail(ctx, error, "lp pooling and pooling with indices have no gradient yet");
  DsEntry in[3] = {out_grads[0], ds_grad_input(ctx, 0), ds_grad_output(ctx, 0)};
  DsEntry dx = ds_grad_op(ctx, "_backward_Pooling", 3, in, NULL);
  ds_grad_copy_attrs(ctx, dx, NULL);
  in_grads[0] = dx;
  return TRUE;
}

/* `v`, one value per channel, shaped to broadcast along axis `axis` of a rank-`ndim` tensor. */
static DsEntry per_channel(DsGradCtx *ctx, DsEntry v, int axis, int ndim)
{
  int64_t dims[DS_MAX_NDIM];
  for (int d = 0; d < ndim; d++)
    dims[d] = d == axis ? -1 : 1;
  g_autofree char *shape = ds_grad_tuple(dims, ndim);
  return ds_grad_op1(ctx, "Reshape", v, "shape", shape, NULL);
}

/* The sum of `x` over every axis but `axis` (a per-channel parameter's gradient). */
static DsEntry sum_but(DsGradCtx *ctx, DsEntry x, int axis)
{
  g_autofree char *a = g_strdup_printf("%d", axis);
  return ds_grad_op1(ctx, "sum", x, "axis", a, "exclude", "True", NULL);
}

/* At inference BatchNorm is per-channel affine: y = (x - mean) / sqrt(var + eps) * gamma +
 * beta with the moving statistics, so dx = g gamma / sqrt(var + eps); gamma's gradient is the
 * sum of g times the normalised x (none with fix_gamma, where gamma is 1), beta's the sum of g.
 * The moving statistics are auxiliary states: no gradient. */
DS_GRAD_FN(ds_grad_batch_norm)
{
  const DsBatchNormParam *p = ctx->node->param;
  int ndim = ctx->in_shapes[0].ndim;
  if (ndim < 1)
    return ds_grad_fail(ctx, error, "its input shape is not known");
  if (!ds_grad_is_none(out_grads[1]) || !ds_grad_is_none(out_grads[2]))
    return ds_grad_fail(ctx, error, "gradients into its mean and var outputs are not done");
  int axis = p->axis < 0 ? p->axis + ndim : p->axis;
  DsEntry g = out_grads[0], x = ds_grad_input(ctx, 0), gamma = ds_grad_input(ctx, 1);
  DsEntry mean = ds_grad_input(ctx, 3), var = ds_grad_input(ctx, 4);
  DsEntry rstd = UN("rsqrt", SC("_plus_scalar", var, p->eps));
  DsEntry scale = p->fix_gamma ? rstd : MUL(gamma, rstd);
  in_grads[0] = BMUL(g, per_channel(ctx, scale, axis, ndim));
  if (!p->fix_gamma) {
    DsEntry xhat = BMUL(BSUB(x, per_channel(ctx, mean, axis, ndim)), per_channel(ctx, rstd, axis, ndim));
    in_grads[1] = sum_but(ctx, MUL(g, xhat), axis);
  }
  in_grads[2] = sum_but(ctx, g, axis);
  return TRUE;
}

/* SoftmaxOutput is a loss layer: MXNet's backward ignores the gradient flowing in (unless
 * out_grad) and gives (softmax - target) * grad_scale / normalizer, the gradient of the
 * cross-entropy. The target is the label when it has the data's shape (probabilities), else
 * its one-hot rows over the class axis, smoothed by smooth_alpha (1 - alpha on the label,
 * alpha / (K - 1) elsewhere). With use_ignore, positions labelled ignore_label get none;
 * normalization "batch" divides by the batch, "valid" by the positions not ignored. The class
 * axis is 1 with multi_output, the last with preserve_shape, else the data's rows flattened. */
DS_GRAD_FN(ds_grad_softmax_output)
{
  const DsSoftmaxOutputParam *p = ctx->node->param;
  const DsShape *xs = &ctx->in_shapes[0], *ls = &ctx->in_shapes[1];
  if (xs->ndim < 1 || ls->ndim < 0)
    return ds_grad_fail(ctx, error, "its input shapes are not known");
  DsEntry y = ds_grad_output(ctx, 0), label = ds_grad_input(ctx, 1);
  gboolean same_shape = ls->ndim == xs->ndim;
  for (int d = 0; same_shape && d < xs->ndim; d++)
    same_shape = ds_grad_dims_equal(xs->dims[d], ls->dims[d]);
  DsEntry target;
  int class_axis = p->multi_output ? 1 : xs->ndim - 1;
  if (same_shape) {
    target = label;
  } else {
    /* the class count: the flattened rows' length unless an axis holds the classes */
    int64_t k = 1;
    for (int d = p->multi_output || p->preserve_shape ? class_axis : 1;
         d < (p->multi_output || p->preserve_shape ? class_axis + 1 : xs->ndim); d++)
      k = ds_dim_is_const(xs->dims[d]) && k > 0 ? k * xs->dims[d].value : -1;
    if (k < 1)
      return ds_grad_fail(ctx, error, "the number of classes is not a known number");
    char depth[32], on[G_ASCII_DTOSTR_BUF_SIZE], off[G_ASCII_DTOSTR_BUF_SIZE];
    g_snprintf(depth, sizeof depth, "%" G_GINT64_FORMAT, k);
    ds_grad_number_text(1.0 - p->smooth_alpha, on);
    ds_grad_number_text(k > 1 ? p->smooth_alpha / (double)(k - 1) : 0.0, off);
    target = ds_grad_op1(ctx, "one_hot", label, "depth", depth, "on_value", on, "off_value", off,
                         "dtype", ds_dtype_name(ctx->out_dtypes[0]), NULL);
    if (p->multi_output && xs->ndim > 2) { /* (N, d..., K) -> (N, K, d...) */
      int64_t perm[DS_MAX_NDIM];
      perm[0] = 0, perm[1] = xs->ndim - 1;
      for (int d = 2; d < xs->ndim; d++)
        perm[d] = d - 1;
      g_autofree char *axes = ds_grad_tuple(perm, xs->ndim);
      target = ds_grad_op1(ctx, "transpose", target, "axes", axes, NULL);
    } else if (!p->multi_output && !p->preserve_shape) {
      target = ds_grad_op2(ctx, "reshape_like", target, y, NULL);
    }
  }
  DsEntry dx = ds_grad_op2(ctx, "elemwise_sub", y, target, NULL);
  DsEntry kept = DS_GRAD_NONE; /* 1 where the label counts, in the label's shape */
  if (p->use_ignore && !same_shape) {
    kept = SC("_not_equal_scalar", label, p->ignore_label);
    DsEntry mask = ds_grad_op1(ctx, "expand_dims", kept, "axis",
                               p->multi_output ? "1" : "-1", NULL);
    if (ctx->in_dtypes[1] != ctx->out_dtypes[0])
      mask = ds_grad_op1(ctx, "Cast", mask, "dtype", ds_dtype_name(ctx->out_dtypes[0]), NULL);
    if (!p->multi_output && !p->preserve_shape && ls->ndim + 1 != xs->ndim)
      return ds_grad_fail(ctx, error, "use_ignore with flattened rows is not done yet");
    dx = BMUL(dx, mask);
  }
  if (p->out_grad)
    dx = MUL(dx, out_grads[0]);
  if (p->normalization != 0) {
    /* batch: the rows; valid: the labelled positions not ignored (at least 1) */
    DsEntry count = DS_GRAD_NONE;
    if (p->normalization == 2 && !ds_grad_is_none(kept))
      count = ds_grad_op1(ctx, "sum", kept, NULL);
    else if (p->normalization == 2 && !same_shape)
      count = ds_grad_op1(ctx, "sum", UN("ones_like", label), NULL);
    if (ds_grad_is_none(count) && ds_dim_is_const(xs->dims[0])) {
      dx = SC("_div_scalar", dx, (double)MAX(xs->dims[0].value, 1));
    } else {
      if (ds_grad_is_none(count)) { /* the rows, counted: ones in one column of y */
        DsEntry rows = ds_grad_op1(ctx, "Reshape", y, "shape", "(0, -1)", NULL);
        DsEntry column = ds_grad_op1(ctx, "slice_axis", rows, "axis", "1", "begin", "0", "end", "1",
                                     NULL);
        count = ds_grad_op1(ctx, "sum", UN("ones_like", column), NULL);
      }
      count = SC("_maximum_scalar", count, 1.0);
      if (ctx->in_dtypes[1] != ctx->out_dtypes[0])
        count = ds_grad_op1(ctx, "Cast", count, "dtype", ds_dtype_name(ctx->out_dtypes[0]), NULL);
      dx = BDIV(dx, count);
    }
  }
  in_grads[0] = p->grad_scale != 1.0 ? SC("_mul_scalar", dx, p->grad_scale) : dx;
  return TRUE;
}

/* _npi_matmul of matrices (batched, broadcasting): da = g b^T and db = a^T g, each summed
 * over the batch dims it was broadcast along. */
DS_GRAD_FN(ds_grad_matmul)
{
  const DsShape *as = &ctx->in_shapes[0], *bs = &ctx->in_shapes[1], *os = &ctx->out_shapes[0];
  if (as->ndim < 2 || bs->ndim < 2 || os->ndim < 2)
    return ds_grad_fail(ctx, error, "a product with vectors (1-D operands) is not done yet");
  DsEntry a = ds_grad_input(ctx, 0), b = ds_grad_input(ctx, 1), g = out_grads[0];
  DsEntry bt = ds_grad_op1(ctx, "SwapAxis", b, "dim1", "-1", "dim2", "-2", NULL);
  DsEntry at = ds_grad_op1(ctx, "SwapAxis", a, "dim1", "-1", "dim2", "-2", NULL);
  DsEntry da = ds_grad_op2(ctx, "_npi_matmul", g, bt, NULL);
  DsEntry db = ds_grad_op2(ctx, "_npi_matmul", at, g, NULL);
  DsShape da_shape = *os, db_shape = *os; /* the batch dims of the output */
  da_shape.dims[os->ndim - 2] = as->dims[as->ndim - 2];
  da_shape.dims[os->ndim - 1] = as->dims[as->ndim - 1];
  db_shape.dims[os->ndim - 2] = bs->dims[bs->ndim - 2];
  db_shape.dims[os->ndim - 1] = bs->dims[bs->ndim - 1];
  return ds_grad_sum_to(ctx, da, &da_shape, 0, &in_grads[0], error) &&
         ds_grad_sum_to(ctx, db, &db_shape, 1, &in_grads[1], error);
}

/* `axes` (ascending, of a rank-`ndim` tensor) as a tuple attribute. */
static char *axes_from(int first, int last)
{
  int64_t axes[DS_MAX_NDIM];
  int n = 0;
  for (int d = first; d <= last; d++)
    axes[n++] = d;
  return ds_grad_tuple(axes, n);
}

/* InstanceNorm: LayerNorm's gradient over each (image, channel) plane, x̂ and std computed
 * again: dx = (dx̂ - mean(dx̂) - x̂ mean(dx̂ x̂)) / std with dx̂ = g γ; dγ and dβ sum g x̂ and g
 * over the images and the planes. */
DS_GRAD_FN(ds_grad_instance_norm)
{
  const DsInstanceNormParam *p = ctx->node->param;
  int ndim = ctx->in_shapes[0].ndim;
  if (ndim < 3)
    return ds_grad_fail(ctx, error, "its input shape is not known");
  g_autofree char *plane = axes_from(2, ndim - 1);
  int64_t per_channel[DS_MAX_NDIM] = {1, -1};
  for (int d = 2; d < ndim; d++)
    per_channel[d] = 1;
  g_autofree char *channel_shape = ds_grad_tuple(per_channel, ndim);
  DsEntry x = ds_grad_input(ctx, 0), g = out_grads[0];
  DsEntry gamma = ds_grad_op1(ctx, "Reshape", ds_grad_input(ctx, 1), "shape", channel_shape, NULL);
#define PLANE_MEAN(v) ds_grad_op1(ctx, "mean", (v), "axis", plane, "keepdims", "True", NULL)
  DsEntry centred = BSUB(x, PLANE_MEAN(x));
  DsEntry std = SC("_power_scalar", SC("_plus_scalar", PLANE_MEAN(UN("square", centred)), p->eps), 0.5);
  DsEntry xhat = BDIV(centred, std);
  DsEntry dxhat = BMUL(g, gamma);
  DsEntry inner = BSUB(BSUB(dxhat, PLANE_MEAN(dxhat)), BMUL(xhat, PLANE_MEAN(MUL(dxhat, xhat))));
#undef PLANE_MEAN
  in_grads[0] = BDIV(inner, std);
  g_autofree char *all_but_channel = ds_grad_tuple((const int64_t[]){1}, 1);
  in_grads[1] = ds_grad_op1(ctx, "sum", MUL(g, xhat), "axis", all_but_channel, "exclude", "True",
                            NULL);
  in_grads[2] = ds_grad_op1(ctx, "sum", g, "axis", all_but_channel, "exclude", "True", NULL);
  return TRUE;
}

/* L2Normalization: y = x / n with n = sqrt(sum x^2 + eps) over the mode's axes, so
 * dx = (g - y sum(g y)) / n, n computed again. */
DS_GRAD_FN(ds_grad_l2_normalization)
{
  const DsL2NormalizationParam *p = ctx->node->param;
  int ndim = ctx->in_shapes[0].ndim;
  if (ndim < 1)
    return ds_grad_fail(ctx, error, "its input shape is not known");
  if (!ds_grad_is_none(out_grads[1]))
    return ds_grad_fail(ctx, error, "a gradient into its norm output is not done yet");
  g_autofree char *axes = p->mode == DS_L2NORM_INSTANCE  ? axes_from(1, ndim - 1)
                          : p->mode == DS_L2NORM_CHANNEL ? axes_from(1, 1)
                                                         : axes_from(2, ndim - 1);
  DsEntry x = ds_grad_input(ctx, 0), y = ds_grad_output(ctx, 0), g = out_grads[0];
  DsEntry sq = ds_grad_op1(ctx, "sum", UN("square", x), "axis", axes, "keepdims", "True", NULL);
  DsEntry norm = SC("_power_scalar", SC("_plus_scalar", sq, p->eps), 0.5);
  DsEntry gy = ds_grad_op1(ctx, "sum", MUL(g, y), "axis", axes, "keepdims", "True", NULL);
  in_grads[0] = BDIV(BSUB(g, BMUL(y, gy)), norm);
  return TRUE;
}

/* Each channel's sum over the LRN window around it (odd sizes: the window is symmetric), as a
 * sum pooling over the channels of `v` seen as (N, 1, C, rest). */
static DsEntry channel_window_sum(DsGradCtx *ctx, DsEntry v, int64_t size)
{
  char kernel[48], pad[48];
  g_snprintf(kernel, sizeof kernel, "(%" G_GINT64_FORMAT ", 1)", size);
  g_snprintf(pad, sizeof pad, "(%" G_GINT64_FORMAT ", 0)", (size - 1) / 2);
  DsEntry planes = ds_grad_op1(ctx, "expand_dims", v, "axis", "1", NULL);
  planes = ds_grad_op1(ctx, "Reshape", planes, "shape", "(0, 0, 0, -1)", NULL);
  DsEntry sum = ds_grad_op1(ctx, "Pooling", planes, "kernel", kernel, "pad", pad, "stride",
                            "(1, 1)", "pool_type", "sum", NULL);
  return ds_grad_op2(ctx, "reshape_like", sum, v, NULL);
}

/* LRN: y_c = x_c s_c^-b with s_c = k + a/n sum over c's window of x^2, so
 * dx_j = g_j s_j^-b - (2ab/n) x_j sum over the windows holding j of g_c x_c s_c^(-b-1);
 * an odd window is symmetric, so both sums run over j's own window. */
DS_GRAD_FN(ds_grad_lrn)
{
  const DsLRNParam *p = ctx->node->param;
  if (p->nsize % 2 == 0)
    return ds_grad_fail(ctx, error, "an even nsize (an asymmetric window) is not done yet");
  DsEntry x = ds_grad_input(ctx, 0), g = out_grads[0];
  DsEntry s = channel_window_sum(ctx, UN("square", x), p->nsize);
  s = SC("_plus_scalar", SC("_mul_scalar", s, p->alpha / (double)p->nsize), p->knorm);
  DsEntry direct = MUL(g, SC("_power_scalar", s, -p->beta));
  DsEntry spread = MUL(MUL(g, x), SC("_power_scalar", s, -p->beta - 1.0));
  DsEntry cross = MUL(x, channel_window_sum(ctx, spread, p->nsize));
  double scale = 2.0 * p->alpha * p->beta / (double)p->nsize;
  in_grads[0] = ds_grad_op2(ctx, "elemwise_sub", direct, SC("_mul_scalar", cross, scale), NULL);
  return TRUE;
}

/* An in x in identity as one (1, 1, in, in) plane: the separable linear ops below make their
 * matrices by running themselves on it. */
static DsEntry identity_plane(DsGradCtx *ctx, int64_t in, const char *dtype)
{
  char square[48], plane[48];
  g_snprintf(square, sizeof square, "(%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")", in, in);
  g_snprintf(plane, sizeof plane, "(1, 1, %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")", in, in);
  DsEntry eye = UN("eye_like", ds_grad_op(ctx, "_zeros", 0, NULL, "shape", square, "dtype", dtype,
                                          NULL));
  return ds_grad_op1(ctx, "Reshape", eye, "shape", plane, NULL);
}

/* A plane (1, 1, out, in) as the (out, in) matrix it holds. */
static DsEntry plane_matrix(DsGradCtx *ctx, DsEntry plane, int64_t out, int64_t in)
{
  char shape[48];
  g_snprintf(shape, sizeof shape, "(%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")", out, in);
  return ds_grad_op1(ctx, "Reshape", plane, "shape", shape, NULL);
}

/* For y = M_H x M_W^T per plane: dx = M_H^T g M_W. */
static DsEntry separable_adjoint(DsGradCtx *ctx, DsEntry mh, DsEntry mw, DsEntry g)
{
  DsEntry rows = ds_grad_op2(ctx, "_npi_matmul", UN("transpose", mh), g, NULL);
  return ds_grad_op2(ctx, "_npi_matmul", rows, mw, NULL);
}

/* The (out, in) matrix of adaptive average pooling along one axis of `in` elements: row i
 * averages input window i. Made at run time by pooling the rows of an in x in identity. */
static DsEntry adaptive_pool_matrix(DsGradCtx *ctx, int64_t in, int64_t out, const char *dtype)
{
  char size[48];
  g_snprintf(size, sizeof size, "(%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")", out, in);
  DsEntry pooled = ds_grad_op1(ctx, "_contrib_AdaptiveAvgPooling2D", identity_plane(ctx, in, dtype),
                               "output_size", size, NULL);
  return plane_matrix(ctx, pooled, out, in);
}

/* _contrib_AdaptiveAvgPooling2D is separable and linear: y = P_H x P_W^T per plane, P the
 * pooling matrices of the two axes, so dx = P_H^T g P_W. */
DS_GRAD_FN(ds_grad_adaptive_avg_pool)
{
  const DsShape *xs = &ctx->in_shapes[0], *ys = &ctx->out_shapes[0];
  if (xs->ndim != 4 || ys->ndim != 4)
    return ds_grad_fail(ctx, error, "its data and output shapes are not known");
  for (int d = 2; d < 4; d++)
    if (!ds_dim_is_const(xs->dims[d]) || !ds_dim_is_const(ys->dims[d]))
      return ds_grad_fail(ctx, error, "its spatial sizes are not known numbers");
  const char *dtype = ds_dtype_name(ctx->in_dtypes[0]);
  DsEntry ph = adaptive_pool_matrix(ctx, xs->dims[2].value, ys->dims[2].value, dtype);
  DsEntry pw = adaptive_pool_matrix(ctx, xs->dims[3].value, ys->dims[3].value, dtype);
  in_grads[0] = separable_adjoint(ctx, ph, pw, out_grads[0]);
  return TRUE;
}

/* The (out, in) matrix of `resize`'s map along spatial axis `axis` of its 4-D input (`in`
 * elements to `out`): the same op, under the same attributes, resampling the rows of an
 * in x in identity along that axis alone. */
static DsEntry resize_matrix(DsGradCtx *ctx, const DsResizeParam *p, int axis, int64_t in,
                             int64_t out, const char *dtype)
{
  char target[128];
  const char *key;
  if (p->n_scales > 0) { /* the axis's own factor, so that positions map exactly as before */
    char factor[G_ASCII_DTOSTR_BUF_SIZE];
    ds_grad_number_text(p->scales[axis], factor);
    g_snprintf(target, sizeof target, "(1, 1, %s, 1)", factor);
    key = "scales";
  } else {
    g_snprintf(target, sizeof target, "(1, 1, %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")", out,
               in);
    key = "sizes";
  }
  DsEntry map =
      ds_grad_op1(ctx, "_contrib_resize", identity_plane(ctx, in, dtype), key, target, NULL);
  static const char *const kept[] = {"mode", "coordinate_transformation_mode", "nearest_mode",
                                     "cubic_coeff_a", "exclude_outside", NULL};
  DsNode *node = ctx->graph->nodes[map.node_id];
  for (const char *const *k = kept; *k != NULL; k++) {
    const char *value = ds_node_get_attr(ctx->node, *k);
    if (value != NULL)
      ds_node_add_attr(node, *k, value);
  }
  return plane_matrix(ctx, map, out, in);
}

/* _contrib_resize is linear and separable: on 4-D data resampling the two spatial axes,
 * y = R_H x R_W^T per plane, so dx = R_H^T g R_W, the matrices made by the op itself. */
DS_GRAD_FN(ds_grad_resize)
{
  const DsResizeParam *p = ctx->node->param;
  const DsShape *xs = &ctx->in_shapes[0], *ys = &ctx->out_shapes[0];
  if (xs->ndim != 4 || ys->ndim != 4)
    return ds_grad_fail(ctx, error, "only 4-D data (two spatial axes) is done");
  for (int d = 0; d < 4; d++)
    if (!ds_dim_is_const(xs->dims[d]) || !ds_dim_is_const(ys->dims[d]))
      return ds_grad_fail(ctx, error, "its sizes are not known numbers");
  if (xs->dims[0].value != ys->dims[0].value || xs->dims[1].value != ys->dims[1].value)
    return ds_grad_fail(ctx, error, "resizing the batch or channel axis is not done");
  if (p->coord == DS_RESIZE_TF_CROP_AND_RESIZE)
    return ds_grad_fail(ctx, error, "tf_crop_and_resize is not done yet");
  const char *dtype = ds_dtype_name(ctx->in_dtypes[0]);
  DsEntry rh = resize_matrix(ctx, p, 2, xs->dims[2].value, ys->dims[2].value, dtype);
  DsEntry rw = resize_matrix(ctx, p, 3, xs->dims[3].value, ys->dims[3].value, dtype);
  in_grads[0] = separable_adjoint(ctx, rh, rw, out_grads[0]);
  return TRUE;
}

/* UpSampling, nearest: each output pixel copies one input pixel, so an input's gradient is g
 * summed over the f x f block each of its pixels became (sum pooling, f its factor), taken
 * from its own channels of g when the inputs were concatenated. */
DS_GRAD_FN(ds_grad_upsampling)
{
  const DsUpSamplingParam *p = ctx->node->param;
  if (p->sample_type != DS_UPSAMPLE_NEAREST)
    return ds_grad_fail(ctx, error, "sample_type=bilinear is not done yet");
  const DsShape *out = &ctx->out_shapes[0];
  int64_t channel = 0;
  for (guint i = 0; i < ctx->node->n_inputs; i++) {
    const DsShape *in = &ctx->in_shapes[i];
    int64_t factor = p->scale;
    if (i > 0) {
      if (!ds_dim_is_const(in->dims[2]) || !ds_dim_is_const(out->dims[2]))
        return ds_grad_fail(ctx, error, "input %u's scale is not known", i);
      factor = out->dims[2].value / in->dims[2].value;
    }
    DsEntry g = out_grads[0];
    if (!p->sum && ctx->node->n_inputs > 1) {
      if (!ds_dim_is_const(in->dims[1]))
        return ds_grad_fail(ctx, error, "input %u's channels are not known", i);
      char begin[24], end[24];
      g_snprintf(begin, sizeof begin, "%" G_GINT64_FORMAT, channel);
      channel += in->dims[1].value;
      g_snprintf(end, sizeof end, "%" G_GINT64_FORMAT, channel);
      g = ds_grad_op1(ctx, "slice_axis", g, "axis", "1", "begin", begin, "end", end, NULL);
    }
    if (factor == 1) {
      in_grads[i] = g;
      continue;
    }
    g_autofree char *block = ds_grad_tuple((const int64_t[]){factor, factor}, 2);
    in_grads[i] = ds_grad_op1(ctx, "Pooling", g, "kernel", block, "stride", block, "pool_type",
                              "sum", NULL);
  }
  return TRUE;
}

/* The weight gradient of a convolution of `groups` groups (group_in input and group_out output
 * channels each), from the data and g with batch and channels swapped (xt (C_in, N, ...), gt
 * (C_out, N, ...)): w[o, i] sums, over the batch, data channel i of o's group correlated with
 * g's channel o. One convolution gives every (i, o) pair of a group: the data as a single image
 * of C_in x N channels, one group per data channel, and as that group's filters the group_out
 * planes of g (N channels each) of the channel's group. Its (1, C_in x group_out, k...) result,
 * regrouped, is (C_out, group_in, k...) with batch and channels swapped back, the layout the
 * caller transposes like the one-group result. */
static DsEntry grouped_weight_grad(DsGradCtx *ctx, DsEntry xt, DsEntry gt, int64_t groups,
                                  int64_t group_in, int64_t group_out, const char *kernel,
                                  const char *stride, const char *dilate, const char *pad)
{
  char text[64];
  DsEntry data = ds_grad_op1(ctx, "expand_dims", xt, "axis", "0", NULL);
  data = ds_grad_op1(ctx, "Reshape", data, "shape", "(0, -3, -2)", NULL);
  /* gt (C_out, N, ...) -> (groups, group_in, group_out, N, ...) -> (C_in x group_out, N, ...) */
  g_snprintf(text, sizeof text, "(-4, %" G_GINT64_FORMAT ", -1, -2)", groups);
  DsEntry filters = ds_grad_op1(ctx, "Reshape", gt, "shape", text, NULL);
  filters = ds_grad_op1(ctx, "expand_dims", filters, "axis", "1", NULL);
  g_snprintf(text, sizeof text, "%" G_GINT64_FORMAT, group_in);
  filters = ds_grad_op1(ctx, "broadcast_axis", filters, "axis", "1", "size", text, NULL);
  filters = ds_grad_op1(ctx, "Reshape", filters, "shape", "(-3, -2)", NULL);
  filters = ds_grad_op1(ctx, "Reshape", filters, "shape", "(-3, -2)", NULL);
  char num_group[32], num_filter[32];
  g_snprintf(num_group, sizeof num_group, "%" G_GINT64_FORMAT, groups * group_in);
  g_snprintf(num_filter, sizeof num_filter, "%" G_GINT64_FORMAT, groups * group_in * group_out);
  DsEntry dw = ds_grad_op2(ctx, "Convolution", data, filters, "kernel", kernel, "stride", stride,
                           "dilate", dilate, "pad", pad, "num_filter", num_filter, "num_group",
                           num_group, "no_bias", "True", NULL);
  /* (1, groups x group_in x group_out, k...) -> (group_in, groups x group_out, k...): pairs
   * (i, o) regrouped, channels first as the one-group result has them */
  g_snprintf(text, sizeof text, "(-4, %" G_GINT64_FORMAT ", -1, -2)", groups * group_in);
  dw = ds_grad_op1(ctx, "Reshape", ds_grad_op1(ctx, "squeeze", dw, "axis", "0", NULL), "shape",
                   text, NULL); /* (groups x group_in, group_out, k...) */
  g_snprintf(text, sizeof text, "(-4, %" G_GINT64_FORMAT ", -1, -2)", groups);
  dw = ds_grad_op1(ctx, "Reshape", dw, "shape", text, NULL); /* (G, group_in, group_out, k...) */
  int ndim = 3 + ctx->in_shapes[0].ndim - 2;
  int64_t perm[DS_MAX_NDIM] = {1, 0, 2};
  for (int d = 3; d < ndim; d++)
    perm[d] = d;
  g_autofree char *axes = ds_grad_tuple(perm, ndim);
  dw = ds_grad_op1(ctx, "transpose", dw, "axes", axes, NULL); /* (group_in, G, group_out, k...) */
  return ds_grad_op1(ctx, "Reshape", dw, "shape", "(0, -3, -2)", NULL);
}

/* The weight gradient of a convolution of `data` (shape ds, (N, C_in, spatial...)) that gave
 * output gradient `g` (shape gs, (N, C_out, ...)) with kernels (C_out, group_in, kernel...) in
 * `groups` groups: the data convolved with g, batch and channels swapped, where the forward
 * stride becomes the dilation and the dilation the stride, cut to the kernel's size. Spatial
 * sizes are known numbers. */
static DsEntry weight_grad(DsGradCtx *ctx, DsEntry data, const DsShape *ds, DsEntry g,
                           const DsShape *gs, int n, const int64_t *kernel, const int64_t *stride,
                           const int64_t *dilate, const int64_t *pad, int64_t groups,
                           int64_t group_in, int64_t group_out)
{
  int64_t kernel_g[DS_NN_MAX_SPATIAL], perm[DS_MAX_NDIM];
  for (int i = 0; i < n; i++)
    kernel_g[i] = gs->dims[2 + i].value;
  for (int d = 0; d < n + 2; d++)
    perm[d] = d < 2 ? 1 - d : d;
  g_autofree char *axes = ds_grad_tuple(perm, n + 2);
  g_autofree char *kg = ds_grad_tuple(kernel_g, n);
  g_autofree char *as_stride = ds_grad_tuple(dilate, n), *as_dilate = ds_grad_tuple(stride, n);
  g_autofree char *pad_text = ds_grad_tuple(pad, n);
  DsEntry dt = ds_grad_op1(ctx, "transpose", data, "axes", axes, NULL);
  DsEntry gt = ds_grad_op1(ctx, "transpose", g, "axes", axes, NULL);
  DsEntry dw;
  if (groups == 1) {
    g_autofree char *filters = g_strdup_printf("%" G_GINT64_FORMAT, group_out);
    dw = ds_grad_op2(ctx, "Convolution", dt, gt, "kernel", kg, "stride", as_stride, "dilate",
                     as_dilate, "pad", pad_text, "num_filter", filters, "no_bias", "True", NULL);
  } else {
    dw = grouped_weight_grad(ctx, dt, gt, groups, group_in, group_out, kg, as_stride, as_dilate,
                             pad_text);
  }
  dw = ds_grad_op1(ctx, "transpose", dw, "axes", axes, NULL);
  /* the swapped convolution may reach past the kernel where the strides do not divide */
  for (int i = 0; i < n; i++) {
    int64_t in = ds->dims[2 + i].value;
    int64_t reach = (in + 2 * pad[i] - ((kernel_g[i] - 1) * stride[i] + 1)) / dilate[i] + 1;
    if (reach > kernel[i]) {
      char axis[16], end[32];
      g_snprintf(axis, sizeof axis, "%d", i + 2);
      g_snprintf(end, sizeof end, "%" G_GINT64_FORMAT, kernel[i]);
      dw = ds_grad_op1(ctx, "slice_axis", dw, "axis", axis, "begin", "0", "end", end, NULL);
    }
  }
  return dw;
}

/* Convolution: the data's gradient is the transposed convolution of g with the same weights
 * and groups (Deconvolution, with adj giving back the data's size); the weight's is
 * weight_grad's; the bias's the sum of g over all but the channels. */
DS_GRAD_FN(ds_grad_convolution)
{
  const DsConvolutionParam *p = ctx->node->param;
  const DsShape *xs = &ctx->in_shapes[0], *gs = &ctx->out_shapes[0];
  int n = p->n_spatial;
  if (p->auto_pad != DS_AUTO_PAD_NONE)
    return ds_grad_fail(ctx, error, "only explicit padding is done");
  if (xs->ndim != n + 2 || gs->ndim != n + 2)
    return ds_grad_fail(ctx, error, "its data and output shapes are not known");
  for (int d = 2; d < n + 2; d++)
    if (!ds_dim_is_const(xs->dims[d]) || !ds_dim_is_const(gs->dims[d]))
      return ds_grad_fail(ctx, error, "its spatial sizes are not known numbers");
  for (int i = 0; i < n; i++)
    if (p->pad_end[i] != p->pad[i])
      return ds_grad_fail(ctx, error, "different padding at the ends of an axis is not done");
  DsEntry g = out_grads[0], x = ds_grad_input(ctx, 0), w = ds_grad_input(ctx, 1);
  int64_t adj[DS_NN_MAX_SPATIAL];
  for (int i = 0; i < n; i++) {
    int64_t in = xs->dims[2 + i].value, out = gs->dims[2 + i].value;
    int64_t base = (out - 1) * p->stride[i] - 2 * p->pad[i] + p->dilate[i] * (p->kernel[i] - 1) + 1;
    adj[i] = in - base;
    if (adj[i] < 0 || adj[i] >= p->stride[i])
      return ds_grad_fail(ctx, error, "its output does not cover its input along axis %d", i + 2);
  }
  const DsShape *ws = &ctx->in_shapes[1];
  if (ws->ndim != n + 2 || !ds_dim_is_const(ws->dims[1]) || !ds_dim_is_const(ws->dims[0]))
    return ds_grad_fail(ctx, error, "its weight shape is not known");
  g_autofree char *kernel = ds_grad_tuple(p->kernel, n), *stride = ds_grad_tuple(p->stride, n);
  g_autofree char *dilate = ds_grad_tuple(p->dilate, n), *pad = ds_grad_tuple(p->pad, n);
  g_autofree char *adj_text = ds_grad_tuple(adj, n);
  const int64_t groups = p->num_group, filters = ws->dims[0].value;
  const int64_t group_in = ws->dims[1].value, group_out = filters / groups;
  g_autofree char *channels = g_strdup_printf("%" G_GINT64_FORMAT, group_in * groups);
  g_autofree char *group_text = g_strdup_printf("%" G_GINT64_FORMAT, groups);
  in_grads[0] = ds_grad_op2(ctx, "Deconvolution", g, w, "kernel", kernel, "stride", stride,
                            "dilate", dilate, "pad", pad, "adj", adj_text, "num_filter", channels,
                            "num_group", group_text, "no_bias", "True", NULL);

  in_grads[1] = weight_grad(ctx, x, xs, g, gs, n, p->kernel, p->stride, p->dilate, p->pad,
                            groups, group_in, group_out);
  if (!p->no_bias)
    in_grads[2] = sum_but(ctx, g, 1);
  return TRUE;
}

/* Deconvolution is the adjoint of the convolution with the same weights (of g's shape into
 * x's): its data's gradient is that convolution of g; its weight's is that convolution's
 * weight gradient with the roles swapped, g as the data and x as the output's gradient; the
 * bias's the sum of g over all but the channels. */
DS_GRAD_FN(ds_grad_deconvolution)
{
  const DsDeconvolutionParam *p = ctx->node->param;
  const DsShape *xs = &ctx->in_shapes[0], *gs = &ctx->out_shapes[0], *ws = &ctx->in_shapes[1];
  int n = p->n_spatial;
  if (xs->ndim != n + 2 || gs->ndim != n + 2)
    return ds_grad_fail(ctx, error, "its data and output shapes are not known");
  for (int d = 2; d < n + 2; d++)
    if (!ds_dim_is_const(xs->dims[d]) || !ds_dim_is_const(gs->dims[d]))
      return ds_grad_fail(ctx, error, "its spatial sizes are not known numbers");
  if (ws->ndim != n + 2 || !ds_dim_is_const(ws->dims[0]) || !ds_dim_is_const(ws->dims[1]))
    return ds_grad_fail(ctx, error, "its weight shape is not known");
  int64_t pad[DS_DECONV_MAX_SPATIAL], adj;
  for (int i = 0; i < n; i++)
    if (!ds_deconv_pad_adj(p, i, xs->dims[2 + i].value, &pad[i], &adj))
      return ds_grad_fail(ctx, error, "its target shape is larger than its full output");
  const int64_t groups = p->num_group, channels = ws->dims[0].value;
  const int64_t group_out = ws->dims[1].value; /* the deconvolution's outputs per group */
  g_autofree char *kernel = ds_grad_tuple(p->kernel, n), *stride = ds_grad_tuple(p->stride, n);
  g_autofree char *dilate = ds_grad_tuple(p->dilate, n), *pad_text = ds_grad_tuple(pad, n);
  g_autofree char *channel_text = g_strdup_printf("%" G_GINT64_FORMAT, channels);
  g_autofree char *group_text = g_strdup_printf("%" G_GINT64_FORMAT, groups);
  DsEntry g = out_grads[0], x = ds_grad_input(ctx, 0);
  in_grads[0] = ds_grad_op2(ctx, "Convolution", g, ds_grad_input(ctx, 1), "kernel", kernel,
                            "stride", stride, "dilate", dilate, "pad", pad_text, "num_filter",
                            channel_text, "num_group", group_text, "no_bias", "True", NULL);
  /* the convolution's weights are (C_in of x, g's channels per group, kernel...) */
  in_grads[1] = weight_grad(ctx, g, gs, x, xs, n, p->kernel, p->stride, p->dilate, pad, groups,
                            group_out, channels / groups);
  if (!p->no_bias)
    in_grads[2] = sum_but(ctx, g, 1);
  return TRUE;
}
