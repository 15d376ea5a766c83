/* ds-geometry-nn.h: the shape geometry of the neural-network ops, shared by every backend:
 * the matrix products (FullyConnected, dot, batch_dot, _npi_matmul) and the sliding windows
 * (Convolution, Pooling).
 *
 * Shapes and parameters are resolved once here so every backend computes the same thing: each
 * function checks a kernel's tensors against its op's attributes and says which products or
 * windows to compute, and the CPU and CUDA kernels only run them (BLAS or cuBLAS, their own
 * loops). So both accept and refuse exactly the same nodes. core knows no op
 * parameter structs (they are the engine's), so the attributes come as plain values.
 *
 * A function returns false when the tensors do not fit the op: the kernel's
 * DS_STATUS_INVALID_ARGUMENT. Dtypes are the caller's.
 */
#pragma once

#include "ds-tensor.h"

/* ---- matrix products ---- */

/* Row-major C (m x n) = op(A) (m x k) * op(B) (k x n), `count` times: the i-th product reads A
 * and B a_stride * i and b_stride * i elements in and writes C m * n * i elements in. lda and
 * ldb are the row lengths of A and B as stored (before op). */
typedef struct {
  int64_t m, n, k;
  int64_t lda, ldb;
  int64_t count;
  int64_t a_stride, b_stride;
} DsGeomGemm;

/* FullyConnected: Y (rows x num_hidden) = X (rows x in_features) * W^T, W being num_hidden x
 * in_features. With `flatten` X is (shape[0], the rest), else (every dim but the last, the
 * last). y and bias, when not NULL, must have rows * num_hidden and num_hidden elements (the
 * workspace planner passes NULL: it sizes the product from the inputs alone). */
bool ds_geom_fully_connected(const DsTensor *x, const DsTensor *w, const DsTensor *bias,
                             const DsTensor *y, int64_t num_hidden, bool flatten, DsGeomGemm *g);

/* dot (MXNet's): lhs flattens to (prod(shape[:-1]), shape[-1]) or, transposed (ta), contracts
 * its first dim; rhs contracts its first dim or, transposed (tb), its last. */
bool ds_geom_dot(const DsTensor *a, const DsTensor *b, const DsTensor *y, bool ta, bool tb,
                 DsGeomGemm *g);

/* batch_dot: one product per index of the leading dims, which a, b and y share; the last two
 * dims of each are the matrices. */
bool ds_geom_batch_dot(const DsTensor *a, const DsTensor *b, const DsTensor *y, bool ta, bool tb,
                       DsGeomGemm *g);

/* _npi_matmul (NumPy's): `count` products (m x k) * (k x n), one per index of the output's
 * `nb` batch dims `batch`, which broadcast the operands' (a 1-D operand is a row or a column
 * with no batch). a_step/b_step: each operand's stride in matrices per output batch dim, 0
 * where it has size 1 there or lacks the dim. */
typedef struct {
  int64_t m, n, k;
  int nb;
  int64_t batch[DS_MAX_NDIM];
  int64_t a_step[DS_MAX_NDIM], b_step[DS_MAX_NDIM];
  int64_t count;
  bool one_gemm; /* b has one matrix and a one per output: a single (count*m x k) product */
} DsGeomMatmul;

bool ds_geom_matmul(const DsTensor *a, const DsTensor *b, const DsTensor *y, DsGeomMatmul *g);

/* Matrix offsets of product i's operands (in matrices, from each operand's start). Inline: the
 * CPU's integer products call it once per output row. */
static inline void ds_geom_matmul_offsets(const DsGeomMatmul *g, int64_t i, int64_t *a_mat,
                                          int64_t *b_mat)
{
  *a_mat = *b_mat = 0;
  for (int d = g->nb - 1; d >= 0; d--) {
    int64_t idx = i % g->batch[d];
    i /= g->batch[d];
    *a_mat += idx * g->a_step[d];
    *b_mat += idx * g->b_step[d];
  }
}

/* ---- sliding windows ---- */

/* Spatial dims a window has: 1-D (NCW), 2-D (NCHW) and 3-D (NCDHW) layers are all normalised to
 * three (depth, height, width) by prepending size-1 dims, so one code path serves every rank. */
#define DS_GEOM_SPATIAL 3

/* A window op's attributes: n_spatial entries in each tuple, pad and pad_end already resolved
 * for the input (ONNX's auto_pad computes them from its size: the engine's ds_*_axis_pads). */
typedef struct {
  int n_spatial;
  const int64_t *kernel, *stride, *dilate;
  int64_t pad[DS_GEOM_SPATIAL], pad_end[DS_GEOM_SPATIAL];
} DsGeomWindowAttrs;

/* A convolution's or pooling's geometry on (batch, channels, spatial...) data, spatial dims
 * normalised to three. A window of kernel[] taps dilate[] apart starts every stride[] from
 * -pad (pad_end: the padding after each axis, which may differ with ONNX's pads or auto_pad).
 * `filters` and `groups` are a convolution's (pooling: channels and 1). */
typedef struct {
  int64_t batch, channels, filters, groups;
  int64_t in[DS_GEOM_SPATIAL], out[DS_GEOM_SPATIAL], kernel[DS_GEOM_SPATIAL];
  int64_t stride[DS_GEOM_SPATIAL], dilate[DS_GEOM_SPATIAL];
  int64_t pad[DS_GEOM_SPATIAL], pad_end[DS_GEOM_SPATIAL];
  int64_t in_plane, out_plane, kvol; /* elements of an input and an output plane, taps */
  bool direct; /* 1x1, stride 1, no padding: the input is the GEMM operand as it is */
} DsGeomWindow;

/* Convolution of `data` into `out`: out's channels are the filters (num_filter, or with
 * num_filter 0 any count), both channel counts whole multiples of num_group, and every output
 * size the padded input's (x + pads - dilate * (kernel - 1) - 1) / stride + 1. */
bool ds_geom_conv(const DsTensor *data, const DsTensor *out, const DsGeomWindowAttrs *a,
                  int64_t num_filter, int64_t num_group, DsGeomWindow *g);

/* Whether a convolution's weight is (filters, channels / groups, kernel...) and its bias (may
 * be NULL) has one value per filter. */
bool ds_geom_conv_weights(const DsGeomWindow *g, const DsTensor *weight, const DsTensor *bias);

/* Pooling of x into y, each (image, channel) plane on its own: 1-D to 3-D, n_spatial matching
 * unless `global`, which pools each whole plane (stride 1, no padding) into one output. The
 * output sizes follow the op's rounding convention, which only the shape inference knows. */
bool ds_geom_pool(const DsTensor *x, const DsTensor *y, const DsGeomWindowAttrs *a, bool global,
                  DsGeomWindow *g);
