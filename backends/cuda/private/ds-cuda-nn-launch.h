/* ds-cuda-nn-launch.h: C launchers of the neural-network device code (ds-cuda-nn.cu): bias,
 * im2col, pooling and Embedding's gather. The matrix products themselves are cuBLAS calls in
 * ds-cuda-nn.c.
 *
 * Spatial geometry comes normalised to three dims (depth, height, width; a 1-D or 2-D op has
 * size-1 leading dims), as the CPU kernels normalise it. Every launcher queues its work on
 * `stream` and returns the launch's error without waiting.
 */
#pragma once

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* y[i] += bias[(i / inner) % channels] for i < total: a per-channel bias on (N, C, inner)
 * data, or a per-column one with inner 1. */
cudaError_t ds_cuda_launch_add_bias(float *y, const float *bias, int64_t total,
                                    int64_t channels, int64_t inner, cudaStream_t stream);

/* A convolution's unrolling: `channels` input channels of in[0] x in[1] x in[2], a window of
 * kernel[] taps `dilate` apart, placed every `stride` from -pad (the padding before each
 * axis), for out[] positions. */
typedef struct {
  int64_t channels;
  int64_t in[3], out[3], kernel[3], stride[3], dilate[3], pad[3];
} DsCudaIm2col;

/* col[img][c * kvol + tap][pos] = the input element tap `tap` of channel c reads at output
 * position `pos` of image img (0 in the padding), for `images` consecutive images of x. */
cudaError_t ds_cuda_launch_im2col(const float *x, float *col, int64_t images,
                                  const DsCudaIm2col *g, cudaStream_t stream);

typedef enum { DS_CUDA_POOL_MAX, DS_CUDA_POOL_AVG, DS_CUDA_POOL_SUM } DsCudaPoolType;

/* A pooling window per output position: kernel[] elements `dilate` apart from
 * o * stride - pad, clipped to the input. avg divides by MXNet's window size: the window
 * clipped to the padded input (pad_end after it) with count_include_pad, to the input
 * otherwise. */
typedef struct {
  int64_t in[3], out[3], kernel[3], stride[3], pad[3], pad_end[3], dilate[3];
  DsCudaPoolType type;
  int count_include_pad;
} DsCudaPool;

/* y (planes, out...) from x (planes, in...). */
cudaError_t ds_cuda_launch_pool(const float *x, float *y, int64_t planes, const DsCudaPool *g,
                                cudaStream_t stream);
/* Global pooling: y[p] = the max, mean or sum of the `plane` elements of plane p. */
cudaError_t ds_cuda_launch_global_pool(const float *x, float *y, int64_t planes, int64_t plane,
                                       DsCudaPoolType type, cudaStream_t stream);

/* Embedding's index dtypes. */
typedef enum {
  DS_CUDA_NN_INDEX_F32,
  DS_CUDA_NN_INDEX_F64,
  DS_CUDA_NN_INDEX_I32,
  DS_CUDA_NN_INDEX_I64,
  DS_CUDA_NN_INDEX_I8,
  DS_CUDA_NN_INDEX_U8,
} DsCudaNnIndexKind;

/* y[i, :] = weight[row(idx[i]), :] for i < n, rows of output_dim floats; the index is
 * truncated toward zero and clipped to [0, input_dim), NaN reading as 0 (MXNet's
 * Embedding). input_dim > 0. */
cudaError_t ds_cuda_launch_embedding(const void *idx, DsCudaNnIndexKind kind, int64_t n,
                                     const float *weight, int64_t input_dim, int64_t output_dim,
                                     float *y, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
