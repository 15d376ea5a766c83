/* ds-cuda-nn.c: CUDA kernels of the neural-network family: FullyConnected, dot, batch_dot,
 * _npi_matmul and Convolution through cuBLAS, Pooling, and Embedding.
 *
 * Shapes and attributes are checked by the geometry both backends share
 * (core/ds-geometry-nn.h), so the CPU and CUDA kernels accept and refuse the same
 * nodes. The products keep cuBLAS's default math mode (full FP32, no TF32) so results agree
 * with the CPU to rounding.
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
#include "ds-geometry-nn.h"

_Static_assert(DS_GEOM_SPATIAL == 3, "DsCudaIm2col and DsCudaPool hold three spatial dims");

static bool all_f32(const DsTensor *t, int n)
{
  for (int i = 0; i < n; i++)
    if (t[i].dtype != DS_DTYPE_FLOAT32)
      return false;
  return true;
}

/* The float32 kernels' first check: their first n_in inputs and first output are float32. */
static DsStatus check_f32(const DsKernelCtx *ctx, int n_in)
{
  if (!all_f32(ctx->inputs, n_in) || !all_f32(ctx->outputs, 1))
    return DS_STATUS_UNSUPPORTED;
  return DS_STATUS_OK;
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
  const DsCudaBlas *blas = ds_cuda_blas();
  cublasStatus_t st;
  if (t == DS_DTYPE_FLOAT64) {
    const double one = 1.0, zero = 0.0;
    st = count == 1 ? blas->dgemm(h, op_b, op_a, n, m, k, &one, b, ldb, a, lda, &zero, c, n)
                    : blas->dgemm_strided_batched(h, op_b, op_a, n, m, k, &one, b, ldb, stride_b,
                                                  a, lda, stride_a, &zero, c, n, stride_c, count);
  } else {
    const float one = 1.0f, zero = 0.0f;
    st = count == 1 ? blas->sgemm(h, op_b, op_a, n, m, k, &one, b, ldb, a, lda, &zero, c, n)
                    : blas->sgemm_strided_batched(h, op_b, op_a, n, m, k, &one, b, ldb, stride_b,
                                                  a, lda, stride_a, &zero, c, n, stride_c, count);
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

/* Y (rows x hidden) = X (rows x in) * W^T (W is hidden x in), plus the bias per column. */
static DsStatus fully_connected_run(const DsKernelCtx *ctx)
{
  const DsFullyConnectedParam *p = ctx->param;
  DsStatus st = check_f32(ctx, p->no_bias ? 2 : 3);
  if (st != DS_STATUS_OK)
    return st;
  const DsTensor *x = &ctx->inputs[0], *w = &ctx->inputs[1];
  const DsTensor *bias = p->no_bias ? NULL : &ctx->inputs[2];
  DsTensor *y = &ctx->outputs[0];
  DsGeomGemm g;
  if (!ds_geom_fully_connected(x, w, bias, y, p->num_hidden, p->flatten, &g))
    return DS_STATUS_INVALID_ARGUMENT;
  st = gemm(DS_DTYPE_FLOAT32, false, true, g.m, g.n, g.k, x->data, g.lda, 0, w->data, g.ldb, 0,
            y->data, 0, 1);
  if (st != DS_STATUS_OK || bias == NULL)
    return st;
  return add_bias(y->data, bias->data, g.m * g.n, g.n, 1);
}

/* Both operands and the output are float32, or all float64. */
static bool gemm_dtypes(const DsTensor *a, const DsTensor *b, const DsTensor *y)
{
  return (a->dtype == DS_DTYPE_FLOAT32 || a->dtype == DS_DTYPE_FLOAT64) && b->dtype == a->dtype &&
         y->dtype == a->dtype;
}

/* MXNet's dot (ds_geom_dot): one product of the flattened operands. */
static DsStatus dot_run(const DsKernelCtx *ctx)
{
  const DsDotParam *p = ctx->param;
  const DsTensor *a = &ctx->inputs[0], *b = &ctx->inputs[1];
  if (!gemm_dtypes(a, b, &ctx->outputs[0]))
    return DS_STATUS_UNSUPPORTED;
  DsGeomGemm g;
  if (!ds_geom_dot(a, b, &ctx->outputs[0], p->transpose_a, p->transpose_b, &g))
    return DS_STATUS_INVALID_ARGUMENT;
  return gemm(a->dtype, p->transpose_a, p->transpose_b, g.m, g.n, g.k, a->data, g.lda, 0, b->data,
              g.ldb, 0, ctx->outputs[0].data, 0, 1);
}

/* One strided-batched GEMM over the leading dims. */
static DsStatus batch_dot_run(const DsKernelCtx *ctx)
{
  const DsDotParam *p = ctx->param;
  const DsTensor *a = &ctx->inputs[0], *b = &ctx->inputs[1];
  DsTensor *y = &ctx->outputs[0];
  if (!gemm_dtypes(a, b, y))
    return DS_STATUS_UNSUPPORTED;
  DsGeomGemm g;
  if (!ds_geom_batch_dot(a, b, y, p->transpose_a, p->transpose_b, &g))
    return DS_STATUS_INVALID_ARGUMENT;
  return gemm(a->dtype, p->transpose_a, p->transpose_b, g.m, g.n, g.k, a->data, g.lda, g.a_stride,
              b->data, g.ldb, g.b_stride, y->data, g.m * g.n, g.count);
}

/* ---- _npi_matmul ------------------------------------------------------------------------- */

/* Whether batch dims [from, nb) index an operand linearly, matrix `unit` * i for the i-th
 * product among them (unit 1, or 0 where they all broadcast); size-1 dims never matter. */
static bool matmul_linear(const DsGeomMatmul *g, const int64_t *steps, int from, int64_t *unit)
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

/* The innermost batch dims over which both operands advance linearly run as one strided
 * batched GEMM; the outer ones (where broadcasting breaks the pattern) loop. */
static DsStatus matmul_run(const DsKernelCtx *ctx)
{
  const DsTensor *a = &ctx->inputs[0], *b = &ctx->inputs[1];
  DsTensor *y = &ctx->outputs[0];
  if (!gemm_dtypes(a, b, y))
    return DS_STATUS_UNSUPPORTED;
  DsGeomMatmul g;
  if (!ds_geom_matmul(a, b, y, &g))
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
    ds_geom_matmul_offsets(&g, o * inner, &am, &bm);
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

/* The geometry both backends check (ds_geom_conv), the padding resolved from the attributes
 * for this input. */
static bool conv_geom(const DsConvolutionParam *p, const DsTensor *data, const DsTensor *out,
                      DsGeomWindow *g)
{
  DsGeomWindowAttrs attrs = {
      .n_spatial = p->n_spatial, .kernel = p->kernel, .stride = p->stride, .dilate = p->dilate};
  for (int s = 0; s < MIN(p->n_spatial, data->ndim - 2); s++)
    ds_conv_axis_pads(p, s, data->shape[2 + s], &attrs.pad[s], &attrs.pad_end[s]);
  return ds_geom_conv(data, out, &attrs, p->num_filter, p->num_group, g);
}

/* Floats of one image's column matrix: every channel's taps by every output position. */
static int64_t conv_col_floats(const DsGeomWindow *g)
{
  return g->channels * g->kvol * g->out_plane;
}

/* Images unrolled per im2col launch. */
static int64_t conv_chunk(const DsGeomWindow *g)
{
  int64_t per_image = conv_col_floats(g) * (int64_t)sizeof(float);
  int64_t imgs = per_image > 0 ? CONV_COL_BYTES / per_image : g->batch;
  return MAX(1, MIN(imgs, g->batch));
}

static size_t conv_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                             const DsTensor *outputs, int n_outputs)
{
  DsGeomWindow g;
  if (!conv_geom(param, &inputs[0], &outputs[0], &g) || g.batch == 0 || g.direct)
    return 0;
  return (size_t)(conv_chunk(&g) * conv_col_floats(&g)) * sizeof(float);
}

/* The products of `images` unrolled images (col, one column matrix per image) into their
 * outputs y: per group, W_g (fg x k) times the group's k rows of each column matrix. The
 * batch runs over images, or over groups when there are more groups than images
 * (depthwise layers). */
static DsStatus conv_gemms(const DsGeomWindow *g, const float *w, const float *col, float *y,
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
  DsStatus st = check_f32(ctx, p->no_bias ? 2 : 3);
  if (st != DS_STATUS_OK)
    return st;
  const DsTensor *data = &ctx->inputs[0], *weight = &ctx->inputs[1];
  const DsTensor *bias = p->no_bias ? NULL : &ctx->inputs[2];
  DsTensor *out = &ctx->outputs[0];
  DsGeomWindow g;
  if (!conv_geom(p, data, out, &g) || !ds_geom_conv_weights(&g, weight, bias))
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
      st = ds_cuda_status(
          ds_cuda_launch_im2col(src, ctx->workspace, images, &geom, ds_cuda_stream()));
      if (st != DS_STATUS_OK)
        return st;
      col = ctx->workspace;
    }
    st = conv_gemms(&g, w, col, y + img0 * g.filters * g.out_plane, images);
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

/* The geometry both backends check (ds_geom_pool), handed to the device as a DsCudaPool. */
static DsStatus pooling_run(const DsKernelCtx *ctx)
{
  const DsPoolingParam *p = ctx->param;
  DsStatus st = check_f32(ctx, 1);
  if (st != DS_STATUS_OK)
    return st;
  if (!pool_type_supported(p->pool_type) || p->indices != DS_POOL_INDICES_NONE)
    return DS_STATUS_UNSUPPORTED;
  const DsTensor *x = &ctx->inputs[0];
  DsTensor *y = &ctx->outputs[0];
  DsGeomWindowAttrs attrs = {
      .n_spatial = p->n_spatial, .kernel = p->kernel, .stride = p->stride, .dilate = p->dilate};
  for (int s = 0; s < MIN(p->n_spatial, x->ndim - 2); s++)
    ds_pool_axis_pads(p, s, x->shape[2 + s], &attrs.pad[s], &attrs.pad_end[s]);
  DsGeomWindow w;
  if (!ds_geom_pool(x, y, &attrs, p->global_pool, &w))
    return DS_STATUS_INVALID_ARGUMENT;
  DsCudaPool g = {.type = pool_type(p->pool_type), .count_include_pad = p->count_include_pad};
  memcpy(g.in, w.in, sizeof g.in);
  memcpy(g.out, w.out, sizeof g.out);
  memcpy(g.kernel, w.kernel, sizeof g.kernel);
  memcpy(g.stride, w.stride, sizeof g.stride);
  memcpy(g.pad, w.pad, sizeof g.pad);
  memcpy(g.pad_end, w.pad_end, sizeof g.pad_end);
  memcpy(g.dilate, w.dilate, sizeof g.dilate);
  const int64_t planes = w.batch * w.channels;
  cudaError_t err = p->global_pool
                        ? ds_cuda_launch_global_pool(x->data, y->data, planes, w.in_plane, g.type,
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
  /* Max pooling's indices stay on the host. */
  return p != NULL && pool_type_supported(p->pool_type) && p->indices == DS_POOL_INDICES_NONE &&
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
