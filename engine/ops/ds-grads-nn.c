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

/* y (g - sum(g y)) / T */
DS_GRAD_FN(ds_grad_softmax)
{
  const DsSoftmaxParam *p = ctx->node->param;
  char axis[16];
  if (!softmax_axis(ctx, axis, error))
    return FALSE;
  DsEntry g = out_grads[0], y = ds_grad_output(ctx, 0);
  DsEntry dot = ds_grad_op1(ctx, "sum", MUL(g, y), "axis", axis, "keepdims", "True", NULL);
  DsEntry dx = MUL(y, BSUB(g, dot));
  in_grads[0] = p->temperature != 1.0 ? SC("_div_scalar", dx, p->temperature) : dx;
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

/* The forward node's attributes copied onto gradient node `e` (the window ops' gradients run
 * under the same kernel, stride and padding). */
static void copy_attrs(DsGradCtx *ctx, DsEntry e)
{
  DsNode *to = ctx->graph->nodes[e.node_id];
  for (guint i = 0; i < ctx->node->n_attrs; i++)
    if (!g_str_has_prefix(ctx->node->attrs[i].key, "__"))
      ds_node_add_attr(to, ctx->node->attrs[i].key, ctx->node->attrs[i].value);
}

/* _backward_Pooling under the forward attributes; lp pooling and an argmax output have none. */
DS_GRAD_FN(ds_grad_pooling)
{
  const DsPoolingParam *p = ctx->node->param;
  if (p->pool_type == DS_POOL_LP || p->indices != DS_POOL_INDICES_NONE)
    return ds_grad_fail(ctx, error, "lp pooling and pooling with indices have no gradient yet");
  DsEntry in[3] = {out_grads[0], ds_grad_input(ctx, 0), ds_grad_output(ctx, 0)};
  DsEntry dx = ds_grad_op(ctx, "_backward_Pooling", 3, in, NULL);
  copy_attrs(ctx, dx);
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

/* A tuple attribute of `n` values. */
static char *tuple_of(const int64_t *v, int n)
{
  return ds_grad_tuple(v, n);
}

/* Convolution (one group): the data's gradient is the transposed convolution of g with the
 * same weights (Deconvolution, with adj giving back the data's size); the weight's is a
 * convolution of the data with g, batch and channels swapped, where the forward stride
 * becomes the dilation and the dilation the stride, cut to the kernel's size; the bias's the
 * sum of g over all but the channels. */
DS_GRAD_FN(ds_grad_convolution)
{
  const DsConvolutionParam *p = ctx->node->param;
  const DsShape *xs = &ctx->in_shapes[0], *gs = &ctx->out_shapes[0];
  int n = p->n_spatial;
  if (p->num_group != 1 || p->auto_pad != DS_AUTO_PAD_NONE)
    return ds_grad_fail(ctx, error, "only one group and explicit padding are done");
  if (xs->ndim != n + 2 || gs->ndim != n + 2)
    return ds_grad_fail(ctx, error, "its data and output shapes are not known");
  for (int d = 2; d < n + 2; d++)
    if (!ds_dim_is_const(xs->dims[d]) || !ds_dim_is_const(gs->dims[d]))
      return ds_grad_fail(ctx, error, "its spatial sizes are not known numbers");
  for (int i = 0; i < n; i++)
    if (p->pad_end[i] != p->pad[i])
      return ds_grad_fail(ctx, error, "different padding at the ends of an axis is not done");
  DsEntry g = out_grads[0], x = ds_grad_input(ctx, 0), w = ds_grad_input(ctx, 1);
  int64_t adj[DS_NN_MAX_SPATIAL], kernel_g[DS_NN_MAX_SPATIAL], perm[DS_MAX_NDIM];
  for (int i = 0; i < n; i++) {
    int64_t in = xs->dims[2 + i].value, out = gs->dims[2 + i].value;
    int64_t base = (out - 1) * p->stride[i] - 2 * p->pad[i] + p->dilate[i] * (p->kernel[i] - 1) + 1;
    adj[i] = in - base;
    kernel_g[i] = out;
    if (adj[i] < 0 || adj[i] >= p->stride[i])
      return ds_grad_fail(ctx, error, "its output does not cover its input along axis %d", i + 2);
  }
  const DsShape *ws = &ctx->in_shapes[1];
  if (ws->ndim != n + 2 || !ds_dim_is_const(ws->dims[1]) || !ds_dim_is_const(ws->dims[0]))
    return ds_grad_fail(ctx, error, "its weight shape is not known");
  g_autofree char *kernel = tuple_of(p->kernel, n), *stride = tuple_of(p->stride, n);
  g_autofree char *dilate = tuple_of(p->dilate, n), *pad = tuple_of(p->pad, n);
  g_autofree char *adj_text = tuple_of(adj, n);
  g_autofree char *channels = g_strdup_printf("%" G_GINT64_FORMAT, ws->dims[1].value);
  g_autofree char *filters = g_strdup_printf("%" G_GINT64_FORMAT, ws->dims[0].value);
  in_grads[0] = ds_grad_op2(ctx, "Deconvolution", g, w, "kernel", kernel, "stride", stride,
                            "dilate", dilate, "pad", pad, "adj", adj_text, "num_filter", channels,
                            "no_bias", "True", NULL);

  for (int d = 0; d < n + 2; d++)
    perm[d] = d < 2 ? 1 - d : d;
  g_autofree char *axes = tuple_of(perm, n + 2);
  g_autofree char *kg = tuple_of(kernel_g, n);
  DsEntry xt = ds_grad_op1(ctx, "transpose", x, "axes", axes, NULL);
  DsEntry gt = ds_grad_op1(ctx, "transpose", g, "axes", axes, NULL);
  DsEntry dw = ds_grad_op2(ctx, "Convolution", xt, gt, "kernel", kg, "stride", dilate, "dilate",
                           stride, "pad", pad, "num_filter", filters, "no_bias", "True", NULL);
  dw = ds_grad_op1(ctx, "transpose", dw, "axes", axes, NULL);
  /* the swapped convolution may reach past the kernel where the strides do not divide */
  for (int i = 0; i < n; i++) {
    int64_t in = xs->dims[2 + i].value;
    int64_t reach = (in + 2 * p->pad[i] - ((kernel_g[i] - 1) * p->stride[i] + 1)) / p->dilate[i] + 1;
    if (reach > p->kernel[i]) {
      char axis[16], end[32];
      g_snprintf(axis, sizeof axis, "%d", i + 2);
      g_snprintf(end, sizeof end, "%" G_GINT64_FORMAT, p->kernel[i]);
      dw = ds_grad_op1(ctx, "slice_axis", dw, "axis", axis, "begin", "0", "end", end, NULL);
    }
  }
  in_grads[1] = dw;
  if (!p->no_bias)
    in_grads[2] = sum_but(ctx, g, 1);
  return TRUE;
}
