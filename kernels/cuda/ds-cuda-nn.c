/* ds-cuda-nn.c: CUDA kernels of the neural-network family: FullyConnected, dot, batch_dot,
 * _npi_matmul and Convolution through cuBLAS, Pooling, and Embedding.
 *
 * Each kernel checks shapes and attributes as its CPU twin (kernels/cpu/ds-cpu-nn.c,
 * ds-cpu-conv.c) does, so both backends accept and refuse the same nodes. The products keep
 * cuBLAS's default math mode (full FP32, no TF32) so results agree with the CPU to rounding.
 *
 * cuBLAS is column-major and our tensors row-major. A row-major matrix read column-major is
 * its transpose, so row-major C = op(A) op(B) is computed as column-major
 * C^T = op(B)^T op(A)^T by passing B first: no data is ever transposed (see gemm()).
 *
 * Convolution unrolls a batch of images into the workspace (im2col) and multiplies each group
 * with one strided-batched GEMM; a 1x1 convolution with stride 1 and no padding multiplies
 * the input in place. Bias, where there is one, is added by a small kernel after the product.
 */
#include <string.h>

#include "ds-cuda-nn-launch.h"
#include "ds-cuda.h"

static bool all_f32(const DsTensor *t, int n)
{
  for (int i = 0; i < n; i++)
    if (t[i].dtype != DS_DTYPE_FLOAT32)
      return false;
  return true;
}

/* ---- GEMM ---------------------------------------------------------------------------------- */

/* Zeroes the m x n products of a k = 0 GEMM (the sum over nothing). */
static DsStatus gemm_zero(size_t es, int64_t m, int64_t n, void *c, int64_t stride_c,
                          int64_t count)
{
  cudaStream_t s = ds_cuda_stream();
  if (count == 1 || stride_c == m * n)
    return ds_cuda_status(cudaMemsetAsync(c, 0, (size_t)(count * m * n) * es, s));
  for (int64_t i = 0; i < count; i++) {
    cudaError_t err = cudaMemsetAsync((char *)c + (size_t)(i * stride_c) * es, 0,
                                      (size_t)(m * n) * es, s);
    if (err != cudaSuccess)
      return ds_cuda_status(err);
  }
  return DS_STATUS_OK;
}

/* Row-major C_i = op(A_i) * op(B_i) for i < count, C_i being m x n with rows n apart and the
 * i-th operands `stride_*` elements after the first (0: one shared matrix). lda and ldb are
 * the row-major leading dims (row lengths) of A and B as stored. float32 or float64. */
static DsStatus gemm(DsDType t, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *a,
                     int64_t lda, int64_t stride_a, const void *b, int64_t ldb, int64_t stride_b,
                     void *c, int64_t stride_c, int64_t count)
{
  if (m == 0 || n == 0 || count == 0)
    return DS_STATUS_OK;
  if (k == 0)
    return gemm_zero(ds_dtype_size(t), m, n, c, stride_c, count);
  cublasHandle_t h = ds_cuda_cublas();
  if (h == NULL)
    return DS_STATUS_DEVICE_ERROR;
  /* Column-major C^T (n x m) = op(B)^T (n x k) * op(A)^T (k x m). */
  cublasOperation_t op_b = tb ? CUBLAS_OP_T : CUBLAS_OP_N, op_a = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasStatus_t st;
  if (t == DS_DTYPE_FLOAT64) {
    const double one = 1.0, zero = 0.0;
    st = count == 1 ? cublasDgemm_64(h, op_b, op_a, n, m, k, &one, b, ldb, a, lda, &zero, c, n)
                    : cublasDgemmStridedBatched_64(h, op_b, op_a, n, m, k, &one, b, ldb, stride_b,
                                                   a, lda, stride_a, &zero, c, n, stride_c,
                                                   count);
  } else {
    const float one = 1.0f, zero = 0.0f;
    st = count == 1 ? cublasSgemm_64(h, op_b, op_a, n, m, k, &one, b, ldb, a, lda, &zero, c, n)
                    : cublasSgemmStridedBatched_64(h, op_b, op_a, n, m, k, &one, b, ldb, stride_b,
                                                   a, lda, stride_a, &zero, c, n, stride_c,
                                                   count);
  }
  return ds_cuda_cublas_status(st);
}

static DsStatus add_bias(float *y, const float *bias, int64_t total, int64_t channels,
                         int64_t inner)
{
  return ds_cuda_status(
      ds_cuda_launch_add_bias(y, bias, total, channels, inner, ds_cuda_stream()));
}

/* ---- FullyConnected, dot, batch_dot ----------------------------------------------------- */

/* FullyConnected's rows and input features for these shapes; false if they do not agree. */
static bool fully_connected_dims(const DsFullyConnectedParam *p, const DsTensor *x,
                                 const DsTensor *w, int64_t *rows, int64_t *in_features)
{
  if (p->num_hidden <= 0)
    return false;
  *rows = p->flatten ? (x->ndim > 0 ? x->shape[0] : 1)
                     : ds_shape_span(x->shape, 0, x->ndim > 0 ? x->ndim - 1 : 0);
  *in_features = ds_tensor_numel(w) / p->num_hidden;
  return ds_tensor_numel(w) == p->num_hidden * *in_features &&
         ds_tensor_numel(x) == *rows * *in_features;
}

/* Y (rows x hidden) = X (rows x in) * W^T (W is hidden x in), plus the bias per column. */
static DsStatus fully_connected_run(const DsKernelCtx *ctx)
{
  const DsFullyConnectedParam *p = ctx->param;
  int n_in = p->no_bias ? 2 : 3;
  if (ctx->n_inputs < n_in || ctx->n_outputs < 1)
    return DS_STATUS_INVALID_ARGUMENT;
  if (!all_f32(ctx->inputs, n_in) || !all_f32(ctx->outputs, 1))
    return DS_STATUS_UNSUPPORTED;
  const DsTensor *x = &ctx->inputs[0], *w = &ctx->inputs[1];
  DsTensor *y = &ctx->outputs[0];
  int64_t hidden = p->num_hidden, rows, in_features;
  if (!fully_connected_dims(p, x, w, &rows, &in_features) ||
      ds_tensor_numel(y) != rows * hidden ||
      (!p->no_bias && ds_tensor_numel(&ctx->inputs[2]) != hidden))
    return DS_STATUS_INVALID_ARGUMENT;
  DsStatus st = gemm(DS_DTYPE_FLOAT32, false, true, rows, hidden, in_features, x->data,
                     in_features, 0, w->data, in_features, 0, y->data, 0, 1);
  if (st != DS_STATUS_OK || p->no_bias)
    return st;
  return add_bias(y->data, ctx->inputs[2].data, rows * hidden, hidden, 1);
}

/* Both operands and the output are float32, or all float64. */
static bool gemm_dtypes(const DsTensor *a, const DsTensor *b, const DsTensor *y)
{
  return (a->dtype == DS_DTYPE_FLOAT32 || a->dtype == DS_DTYPE_FLOAT64) && b->dtype == a->dtype &&
         y->dtype == a->dtype;
}

/* MXNet's dot flattens: lhs to (prod(shape[:-1]), shape[-1]) or, transposed, contracts its
 * first dim; rhs contracts its first dim or, transposed, its last. */
static DsStatus dot_run(const DsKernelCtx *ctx)
{
  const DsDotParam *p = ctx->param;
  if (ctx->n_inputs < 2 || ctx->n_outputs < 1)
    return DS_STATUS_INVALID_ARGUMENT;
  const DsTensor *a = &ctx->inputs[0], *b = &ctx->inputs[1];
  if (!gemm_dtypes(a, b, &ctx->outputs[0]))
    return DS_STATUS_UNSUPPORTED;
  if (a->ndim < 1 || b->ndim < 1)
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t na = ds_tensor_numel(a), nb = ds_tensor_numel(b);
  int64_t k = p->transpose_a ? a->shape[0] : a->shape[a->ndim - 1];
  int64_t k2 = p->transpose_b ? b->shape[b->ndim - 1] : b->shape[0];
  if (k != k2)
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t m = k > 0 ? na / k : 0, n = k2 > 0 ? nb / k2 : 0;
  if (k == 0) {
    m = p->transpose_a ? ds_shape_span(a->shape, 1, a->ndim)
                       : ds_shape_span(a->shape, 0, a->ndim - 1);
    n = p->transpose_b ? ds_shape_span(b->shape, 0, b->ndim - 1)
                       : ds_shape_span(b->shape, 1, b->ndim);
  }
  if (ds_tensor_numel(&ctx->outputs[0]) != m * n)
    return DS_STATUS_INVALID_ARGUMENT;
  return gemm(a->dtype, p->transpose_a, p->transpose_b, m, n, k, a->data, p->transpose_a ? m : k,
              0, b->data, p->transpose_b ? k : n, 0, ctx->outputs[0].data, 0, 1);
}

/* One strided-batched GEMM over the leading dims. */
static DsStatus batch_dot_run(const DsKernelCtx *ctx)
{
  const DsDotParam *p = ctx->param;
  if (ctx->n_inputs < 2 || ctx->n_outputs < 1)
    return DS_STATUS_INVALID_ARGUMENT;
  const DsTensor *a = &ctx->inputs[0], *b = &ctx->inputs[1];
  DsTensor *y = &ctx->outputs[0];
  if (!gemm_dtypes(a, b, y))
    return DS_STATUS_UNSUPPORTED;
  int nd = a->ndim;
  if (nd < 3 || b->ndim != nd || y->ndim != nd)
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t batch = ds_shape_span(a->shape, 0, nd - 2);
  if (ds_shape_span(b->shape, 0, nd - 2) != batch)
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t ar = a->shape[nd - 2], ac = a->shape[nd - 1];
  int64_t br = b->shape[nd - 2], bc = b->shape[nd - 1];
  int64_t m = p->transpose_a ? ac : ar, k = p->transpose_a ? ar : ac;
  int64_t n = p->transpose_b ? br : bc, k2 = p->transpose_b ? bc : br;
  if (k != k2 || y->shape[nd - 2] != m || y->shape[nd - 1] != n)
    return DS_STATUS_INVALID_ARGUMENT;
  return gemm(a->dtype, p->transpose_a, p->transpose_b, m, n, k, a->data, ac, ar * ac, b->data, bc,
              br * bc, y->data, m * n, batch);
}

/* ---- _npi_matmul ------------------------------------------------------------------------- */

/* The products of a matmul (as the CPU's MatmulGeom): `count` of (m x k) * (k x n), the
 * output's batch dims broadcasting the operands' (a_step/b_step: each operand's matrix stride
 * per output batch dim, 0 where it has size 1 there or lacks the dim). */
typedef struct {
  int64_t m, n, k;
  int nb;
  int64_t batch[DS_MAX_NDIM];
  int64_t a_step[DS_MAX_NDIM], b_step[DS_MAX_NDIM];
  int64_t count;
  bool one_gemm; /* b has one matrix and a one per output: a single (count*m x k) product */
} MatmulGeom;

/* Matrix strides of an operand's batch dims, right-aligned to the output's `nb` batch dims;
 * false if a dim neither matches nor broadcasts. */
static bool matmul_steps(const DsTensor *t, int mat_dims, int nb, const int64_t *batch,
                         int64_t *steps)
{
  int tb = t->ndim - mat_dims;
  int64_t stride = 1;
  for (int i = nb - 1; i >= 0; i--) {
    int j = i - (nb - tb);
    int64_t d = j >= 0 ? t->shape[j] : 1;
    if (d != batch[i] && d != 1)
      return false;
    steps[i] = d == 1 ? 0 : stride;
    stride *= d;
  }
  return true;
}

static bool matmul_geom(const DsTensor *a, const DsTensor *b, const DsTensor *y, MatmulGeom *g)
{
  if (a->ndim < 1 || b->ndim < 1)
    return false;
  const int am = a->ndim > 1 ? 2 : 1, bm = b->ndim > 1 ? 2 : 1;
  g->m = a->ndim > 1 ? a->shape[a->ndim - 2] : 1;
  g->k = a->shape[a->ndim - 1];
  g->n = b->ndim > 1 ? b->shape[b->ndim - 1] : 1;
  if ((b->ndim > 1 ? b->shape[b->ndim - 2] : b->shape[0]) != g->k)
    return false;
  g->nb = MAX(a->ndim - am, b->ndim - bm);
  int want = g->nb + (a->ndim > 1) + (b->ndim > 1);
  if (y->ndim != want)
    return false;
  g->count = 1;
  for (int i = 0; i < g->nb; i++) {
    g->batch[i] = y->shape[i];
    g->count *= g->batch[i];
  }
  if ((a->ndim > 1 && y->shape[g->nb] != g->m) || (b->ndim > 1 && y->shape[want - 1] != g->n))
    return false;
  if (!matmul_steps(a, am, g->nb, g->batch, g->a_step) ||
      !matmul_steps(b, bm, g->nb, g->batch, g->b_step))
    return false;
  int64_t a_mats = ds_shape_span(a->shape, 0, a->ndim - am);
  int64_t b_mats = ds_shape_span(b->shape, 0, b->ndim - bm);
  g->one_gemm = b_mats == 1 && a_mats == g->count;
  return true;
}

/* Whether batch dims [from, nb) index an operand linearly, matrix `unit` * i for the i-th
 * product among them (unit 1, or 0 where they all broadcast); size-1 dims never matter. */
static bool matmul_linear(const MatmulGeom *g, const int64_t *steps, int from, int64_t *unit)
{
  *unit = -1;
  int64_t span = 1;
  for (int d = g->nb - 1; d >= from; d--) {
    if (g->batch[d] == 1)
      continue;
    if (*unit < 0)
      *unit = steps[d] != 0 ? 1 : 0;
    if (steps[d] != *unit * span)
      return false;
    span *= g->batch[d];
  }
  if (*unit < 0)
    *unit = 0;
  return true;
}

/* Matrix offsets of product i's operands. */
static void matmul_offsets(const MatmulGeom *g, int64_t i, int64_t *a_mat, int64_t *b_mat)
{
  *a_mat = *b_mat = 0;
  for (int d = g->nb - 1; d >= 0; d--) {
    int64_t idx = i % g->batch[d];
    i /= g->batch[d];
    *a_mat += idx * g->a_step[d];
    *b_mat += idx * g->b_step[d];
  }
}

/* The innermost batch dims over which both operands advance linearly run as one strided
 * batched GEMM; the outer ones (where broadcasting breaks the pattern) loop. */
static DsStatus matmul_run(const DsKernelCtx *ctx)
{
  if (ctx->n_inputs < 2 || ctx->n_outputs < 1)
    return DS_STATUS_INVALID_ARGUMENT;
  const DsTensor *a = &ctx->inputs[0], *b = &ctx->inputs[1];
  DsTensor *y = &ctx->outputs[0];
  if (!gemm_dtypes(a, b, y))
    return DS_STATUS_UNSUPPORTED;
  MatmulGeom g;
  if (!matmul_geom(a, b, y, &g))
    return DS_STATUS_INVALID_ARGUMENT;
  const DsDType t = a->dtype;
  /* A batch against one matrix (the dense layers of a transformer) is one GEMM over every
   * row: the operand and the output are contiguous in that order already. */
  if (g.one_gemm)
    return gemm(t, false, false, g.count * g.m, g.n, g.k, a->data, g.k, 0, b->data, g.n, 0,
                y->data, 0, 1);
  int split = g.nb;
  int64_t ua = 0, ub = 0;
  while (split > 0) {
    int64_t ta, tb;
    if (!matmul_linear(&g, g.a_step, split - 1, &ta) ||
        !matmul_linear(&g, g.b_step, split - 1, &tb))
      break;
    split--;
    ua = ta;
    ub = tb;
  }
  const int64_t inner = ds_shape_span(g.batch, split, g.nb), outer = g.count / MAX(inner, 1);
  const int64_t a_mat = g.m * g.k, b_mat = g.k * g.n, y_mat = g.m * g.n;
  const size_t es = ds_dtype_size(t);
  for (int64_t o = 0; o < outer; o++) {
    int64_t am, bm;
    matmul_offsets(&g, o * inner, &am, &bm);
    const char *pa = (const char *)a->data + (size_t)(am * a_mat) * es;
    const char *pb = (const char *)b->data + (size_t)(bm * b_mat) * es;
    char *py = (char *)y->data + (size_t)(o * inner * y_mat) * es;
    DsStatus st = gemm(t, false, false, g.m, g.n, g.k, pa, g.k, ua * a_mat, pb, g.n, ub * b_mat,
                       py, y_mat, inner);
    if (st != DS_STATUS_OK)
      return st;
  }
  return DS_STATUS_OK;
}

/* ---- Convolution --------------------------------------------------------------------------- */

/* Workspace cap for the unrolled images: more images per im2col means fewer, larger GEMMs. */
#define CONV_COL_BYTES ((int64_t)64 << 20)

typedef struct {
  int64_t batch, channels, filters, groups;
  int64_t in[3], out[3], kernel[3], stride[3], dilate[3], pad[3], pad_end[3];
  int64_t in_plane, out_plane, kvol;
  bool direct; /* 1x1, stride 1, no padding: the input is the GEMM operand */
} ConvGeom;

/* The CPU's conv_geom: spatial dims normalised to three, output sizes checked. */
static bool conv_geom(const DsConvolutionParam *p, const DsTensor *data, const DsTensor *out,
                      ConvGeom *g)
{
  int ns = p->n_spatial;
  if (ns < 1 || ns > 3 || data->ndim != ns + 2 || out->ndim != ns + 2)
    return false;
  g->batch = data->shape[0];
  g->channels = data->shape[1];
  g->filters = out->shape[1];
  g->groups = p->num_group;
  if (p->num_filter != 0 && g->filters != p->num_filter)
    return false;
  if (g->groups < 1 || g->channels % g->groups != 0 || g->filters % g->groups != 0 ||
      out->shape[0] != g->batch)
    return false;
  g->in_plane = g->out_plane = g->kvol = 1;
  g->direct = true;
  for (int i = 0; i < 3; i++) {
    int s = i - (3 - ns); /* index into the attribute tuples, < 0 for a prepended dim */
    g->in[i] = s >= 0 ? data->shape[2 + s] : 1;
    g->out[i] = s >= 0 ? out->shape[2 + s] : 1;
    g->kernel[i] = s >= 0 ? p->kernel[s] : 1;
    g->stride[i] = s >= 0 ? p->stride[s] : 1;
    g->dilate[i] = s >= 0 ? p->dilate[s] : 1;
    g->pad[i] = g->pad_end[i] = 0;
    if (s >= 0)
      ds_conv_axis_pads(p, s, g->in[i], &g->pad[i], &g->pad_end[i]);
    int64_t dk = g->dilate[i] * (g->kernel[i] - 1) + 1;
    int64_t padded = g->in[i] + g->pad[i] + g->pad_end[i];
    if (g->stride[i] < 1 || padded < dk || g->out[i] != (padded - dk) / g->stride[i] + 1)
      return false;
    g->in_plane *= g->in[i];
    g->out_plane *= g->out[i];
    g->kvol *= g->kernel[i];
    if (g->kernel[i] != 1 || g->stride[i] != 1 || g->pad[i] != 0 || g->pad_end[i] != 0)
      g->direct = false;
  }
  return true;
}

/* Floats of one image's column matrix: every channel's taps by every output position. */
static int64_t conv_col_floats(const ConvGeom *g)
{
  return g->channels * g->kvol * g->out_plane;
}

/* Images unrolled per im2col launch. */
static int64_t conv_chunk(const ConvGeom *g)
{
  int64_t per_image = conv_col_floats(g) * (int64_t)sizeof(float);
  int64_t imgs = per_image > 0 ? CONV_COL_BYTES / per_image : g->batch;
  return MAX(1, MIN(imgs, g->batch));
}

static size_t conv_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                             const DsTensor *outputs, int n_outputs)
{
  ConvGeom g;
  if (n_inputs < 2 || n_outputs < 1 || !conv_geom(param, &inputs[0], &outputs[0], &g) ||
      g.batch == 0 || g.direct)
    return 0;
  return (size_t)(conv_chunk(&g) * conv_col_floats(&g)) * sizeof(float);
}

/* The products of `images` unrolled images (col, one column matrix per image) into their
 * outputs y: per group, W_g (fg x k) times the group's k rows of each column matrix. The
 * batch runs over images, or over groups when there are more groups than images
 * (depthwise layers). */
static DsStatus conv_gemms(const ConvGeom *g, const float *w, const float *col, float *y,
                           int64_t images)
{
  const int64_t cg = g->channels / g->groups, fg = g->filters / g->groups;
  const int64_t k = cg * g->kvol, n = g->out_plane, col_image = conv_col_floats(g);
  if (g->groups <= images) {
    for (int64_t grp = 0; grp < g->groups; grp++) {
      DsStatus st = gemm(DS_DTYPE_FLOAT32, false, false, fg, n, k, w + grp * fg * k, k, 0,
                         col + grp * k * n, n, col_image, y + grp * fg * n, g->filters * n,
                         images);
      if (st != DS_STATUS_OK)
        return st;
    }
    return DS_STATUS_OK;
  }
  for (int64_t img = 0; img < images; img++) {
    DsStatus st = gemm(DS_DTYPE_FLOAT32, false, false, fg, n, k, w, k, fg * k,
                       col + img * col_image, n, k * n, y + img * g->filters * n, fg * n,
                       g->groups);
    if (st != DS_STATUS_OK)
      return st;
  }
  return DS_STATUS_OK;
}

static DsStatus conv_run(const DsKernelCtx *ctx)
{
  const DsConvolutionParam *p = ctx->param;
  int n_in = p->no_bias ? 2 : 3;
  if (ctx->n_inputs < n_in || ctx->n_outputs < 1)
    return DS_STATUS_INVALID_ARGUMENT;
  if (!all_f32(ctx->inputs, n_in) || !all_f32(ctx->outputs, 1))
    return DS_STATUS_UNSUPPORTED;
  const DsTensor *data = &ctx->inputs[0], *weight = &ctx->inputs[1];
  const DsTensor *bias = p->no_bias ? NULL : &ctx->inputs[2];
  DsTensor *out = &ctx->outputs[0];
  ConvGeom g;
  if (!conv_geom(p, data, out, &g))
    return DS_STATUS_INVALID_ARGUMENT;
  if (ds_tensor_numel(weight) != g.filters * (g.channels / g.groups) * g.kvol ||
      (bias != NULL && ds_tensor_numel(bias) != g.filters))
    return DS_STATUS_INVALID_ARGUMENT;
  size_t ws = conv_workspace(p, ctx->inputs, ctx->n_inputs, ctx->outputs, ctx->n_outputs);
  if (ws > 0 && ctx->workspace == NULL)
    return DS_STATUS_INVALID_ARGUMENT;
  if (ds_tensor_numel(out) == 0)
    return DS_STATUS_OK;
  const float *x = data->data, *w = weight->data;
  float *y = out->data;
  const int64_t chunk = g.direct ? g.batch : conv_chunk(&g);
  const DsCudaIm2col geom = {
      .channels = g.channels,
      .in = {g.in[0], g.in[1], g.in[2]},
      .out = {g.out[0], g.out[1], g.out[2]},
      .kernel = {g.kernel[0], g.kernel[1], g.kernel[2]},
      .stride = {g.stride[0], g.stride[1], g.stride[2]},
      .dilate = {g.dilate[0], g.dilate[1], g.dilate[2]},
      .pad = {g.pad[0], g.pad[1], g.pad[2]},
  };
  for (int64_t img0 = 0; img0 < g.batch; img0 += chunk) {
    const int64_t images = MIN(chunk, g.batch - img0);
    const float *src = x + img0 * g.channels * g.in_plane;
    const float *col = src; /* direct: each image's channels are its column matrix */
    if (!g.direct) {
      DsStatus st = ds_cuda_status(
          ds_cuda_launch_im2col(src, ctx->workspace, images, &geom, ds_cuda_stream()));
      if (st != DS_STATUS_OK)
        return st;
      col = ctx->workspace;
    }
    DsStatus st = conv_gemms(&g, w, col, y + img0 * g.filters * g.out_plane, images);
    if (st != DS_STATUS_OK)
      return st;
  }
  if (bias == NULL)
    return DS_STATUS_OK;
  return add_bias(y, bias->data, ds_tensor_numel(out), g.filters, g.out_plane);
}

/* ---- Pooling ------------------------------------------------------------------------------- */

static bool pool_type_supported(DsPoolType t)
{
  return t == DS_POOL_MAX || t == DS_POOL_AVG || t == DS_POOL_SUM;
}

static DsCudaPoolType pool_type(DsPoolType t)
{
  return t == DS_POOL_MAX ? DS_CUDA_POOL_MAX : t == DS_POOL_AVG ? DS_CUDA_POOL_AVG
                                                                : DS_CUDA_POOL_SUM;
}

/* The CPU's pooling geometry: spatial dims normalised to three; global pooling takes each
 * whole plane with stride 1 and no padding. */
static DsStatus pooling_run(const DsKernelCtx *ctx)
{
  const DsPoolingParam *p = ctx->param;
  if (ctx->n_inputs < 1 || ctx->n_outputs < 1)
    return DS_STATUS_INVALID_ARGUMENT;
  const DsTensor *x = &ctx->inputs[0];
  DsTensor *y = &ctx->outputs[0];
  if (!all_f32(ctx->inputs, 1) || !all_f32(ctx->outputs, 1) || !pool_type_supported(p->pool_type))
    return DS_STATUS_UNSUPPORTED;
  int nd = x->ndim, ns = nd - 2;
  if (nd < 3 || nd > 5 || y->ndim != nd || (!p->global_pool && p->n_spatial != ns) ||
      y->shape[0] != x->shape[0] || y->shape[1] != x->shape[1])
    return DS_STATUS_INVALID_ARGUMENT;
  DsCudaPool g = {.type = pool_type(p->pool_type), .count_include_pad = p->count_include_pad};
  int64_t in_plane = 1;
  for (int i = 0; i < 3; i++) {
    int s = i - (3 - ns);
    g.in[i] = s >= 0 ? x->shape[2 + s] : 1;
    g.out[i] = s >= 0 ? y->shape[2 + s] : 1;
    g.pad[i] = g.pad_end[i] = 0;
    g.dilate[i] = 1;
    if (p->global_pool) {
      g.kernel[i] = g.in[i];
      g.stride[i] = 1;
      if (g.out[i] != 1)
        return DS_STATUS_INVALID_ARGUMENT;
    } else {
      g.kernel[i] = s >= 0 ? p->kernel[s] : 1;
      g.stride[i] = s >= 0 ? p->stride[s] : 1;
      if (s >= 0) {
        g.dilate[i] = p->dilate[s];
        ds_pool_axis_pads(p, s, g.in[i], &g.pad[i], &g.pad_end[i]);
      }
    }
    in_plane *= g.in[i];
  }
  const int64_t planes = x->shape[0] * x->shape[1];
  cudaError_t err = p->global_pool
                        ? ds_cuda_launch_global_pool(x->data, y->data, planes, in_plane, g.type,
                                                     ds_cuda_stream())
                        : ds_cuda_launch_pool(x->data, y->data, planes, &g, ds_cuda_stream());
  return ds_cuda_status(err);
}

/* ---- Embedding ----------------------------------------------------------------------------- */

/* The index dtypes the CPU's Embedding reads (every numeric one but float16 and bool). */
static bool embedding_index_kind(DsDType t, DsCudaNnIndexKind *kind)
{
  switch (t) {
  case DS_DTYPE_FLOAT32:
    *kind = DS_CUDA_NN_INDEX_F32;
    return true;
  case DS_DTYPE_FLOAT64:
    *kind = DS_CUDA_NN_INDEX_F64;
    return true;
  case DS_DTYPE_INT32:
    *kind = DS_CUDA_NN_INDEX_I32;
    return true;
  case DS_DTYPE_INT64:
    *kind = DS_CUDA_NN_INDEX_I64;
    return true;
  case DS_DTYPE_INT8:
    *kind = DS_CUDA_NN_INDEX_I8;
    return true;
  case DS_DTYPE_UINT8:
    *kind = DS_CUDA_NN_INDEX_U8;
    return true;
  default:
    return false;
  }
}

/* Indices are clipped into the table (MXNet's Embedding), so no index is ever out of range. */
static DsStatus embedding_run(const DsKernelCtx *ctx)
{
  const DsEmbeddingParam *p = ctx->param;
  if (ctx->n_inputs < 2 || ctx->n_outputs < 1)
    return DS_STATUS_INVALID_ARGUMENT;
  const DsTensor *idx = &ctx->inputs[0], *w = &ctx->inputs[1];
  DsTensor *y = &ctx->outputs[0];
  DsCudaNnIndexKind kind;
  if (w->dtype != DS_DTYPE_FLOAT32 || y->dtype != DS_DTYPE_FLOAT32 ||
      !embedding_index_kind(idx->dtype, &kind))
    return DS_STATUS_UNSUPPORTED;
  int64_t n = ds_tensor_numel(idx);
  if (ds_tensor_numel(w) != p->input_dim * p->output_dim ||
      ds_tensor_numel(y) != n * p->output_dim || (p->input_dim == 0 && n > 0))
    return DS_STATUS_INVALID_ARGUMENT;
  return ds_cuda_status(ds_cuda_launch_embedding(idx->data, kind, n, w->data, p->input_dim,
                                                 p->output_dim, y->data, ds_cuda_stream()));
}

/* ---- placement: which nodes these kernels take ------------------------------------------- */

static bool dtypes_all(const DsDType *t, int n, DsDType want)
{
  for (int i = 0; i < n; i++)
    if (t[i] != want)
      return false;
  return true;
}

/* FullyConnected, Convolution: float32 throughout. */
static bool supports_f32(DsOpId op, const void *param, const DsDType *in, int n_in,
                         const DsDType *out, int n_out)
{
  (void)op, (void)param;
  return dtypes_all(in, n_in, DS_DTYPE_FLOAT32) && dtypes_all(out, n_out, DS_DTYPE_FLOAT32);
}

/* dot, batch_dot, _npi_matmul: float32 or float64, one dtype throughout (the CPU's matmul
 * also multiplies integers; those stay on the CPU). */
static bool supports_gemm(DsOpId op, const void *param, const DsDType *in, int n_in,
                          const DsDType *out, int n_out)
{
  (void)op, (void)param;
  if (n_in < 2 || n_out < 1 || (in[0] != DS_DTYPE_FLOAT32 && in[0] != DS_DTYPE_FLOAT64))
    return false;
  return dtypes_all(in, n_in, in[0]) && dtypes_all(out, n_out, in[0]);
}

/* Pooling: float32 max, avg and sum (lp pooling and the other dtypes stay on the CPU). */
static bool supports_pooling(DsOpId op, const void *param, const DsDType *in, int n_in,
                             const DsDType *out, int n_out)
{
  const DsPoolingParam *p = param;
  return p != NULL && pool_type_supported(p->pool_type) &&
         supports_f32(op, param, in, n_in, out, n_out);
}

static bool supports_embedding(DsOpId op, const void *param, const DsDType *in, int n_in,
                               const DsDType *out, int n_out)
{
  (void)op, (void)param;
  DsCudaNnIndexKind kind;
  return n_in == 2 && embedding_index_kind(in[0], &kind) && in[1] == DS_DTYPE_FLOAT32 &&
         dtypes_all(out, n_out, DS_DTYPE_FLOAT32);
}

/* The kernels of this file, each with its placement check. */
static const struct {
  DsOpId op;
  DsKernel kernel;
  DsCudaSupportsFn supports;
} nn_kernels[] = {
    {DS_OP_FULLY_CONNECTED, {fully_connected_run, NULL}, supports_f32},
    {DS_OP_DOT, {dot_run, NULL}, supports_gemm},
    {DS_OP_BATCH_DOT, {batch_dot_run, NULL}, supports_gemm},
    {DS_OP_MATMUL, {matmul_run, NULL}, supports_gemm},
    {DS_OP_CONVOLUTION, {conv_run, conv_workspace}, supports_f32},
    {DS_OP_POOLING, {pooling_run, NULL}, supports_pooling},
    {DS_OP_EMBEDDING, {embedding_run, NULL}, supports_embedding},
};

void ds_cuda_nn_register(DsKernel *table, DsCudaSupportsFn *supports)
{
  for (size_t i = 0; i < G_N_ELEMENTS(nn_kernels); i++) {
    table[nn_kernels[i].op] = nn_kernels[i].kernel;
    supports[nn_kernels[i].op] = nn_kernels[i].supports;
  }
}
