/* ds-cuda-nn.cu: device code of the neural-network kernels: bias, im2col, pooling and
 * Embedding's row gather (the GEMMs are cuBLAS's).
 *
 * Every kernel is a grid-stride loop with 32-bit index arithmetic when the element count
 * allows it (64-bit division costs several times more) and 64-bit otherwise. The file is
 * built with --use_fast_math, so the divisions that must round as the CPU's do (the averages)
 * use __fdiv_rn, and rows are copied as integer words, never as floats.
 */
#include "ds-cuda-nn-launch.h"

#include <cuda_runtime.h>
#include <stdint.h>

namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535LL * 8;
constexpr float kLowest = -3.402823466e+38f; /* -FLT_MAX: MXNet's max-pool start */

unsigned blocks_for(int64_t n)
{
  int64_t b = (n + kThreads - 1) / kThreads;
  return (unsigned)(b < 1 ? 1 : b > kMaxBlocks ? kMaxBlocks : b);
}

bool fits_32(int64_t n)
{
  return n < ((int64_t)1 << 31);
}

/* ---- bias ---------------------------------------------------------------------------------- */

template <typename I>
__global__ void add_bias(float *__restrict__ y, const float *__restrict__ bias, I total,
                         I channels, I inner)
{
  const I step = (I)gridDim.x * blockDim.x;
  for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step)
    y[i] += bias[i / inner % channels];
}

/* ---- im2col -------------------------------------------------------------------------------- */

/* The geometry with the derived sizes the kernel needs. */
struct Im2col {
  int64_t channels, in[3], out[3], kernel[3], stride[3], dilate[3], pad[3];
  int64_t kvol, npos;
};

template <typename I>
__global__ void im2col(const float *__restrict__ x, float *__restrict__ col, Im2col g, I total)
{
  const I step = (I)gridDim.x * blockDim.x;
  for (I e = (I)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += step) {
    const I pos = e % (I)g.npos, r = e / (I)g.npos;
    const I tap = r % (I)g.kvol, img_c = r / (I)g.kvol; /* img * channels + c */
    const I ow = pos % (I)g.out[2], q = pos / (I)g.out[2];
    const I oh = q % (I)g.out[1], od = q / (I)g.out[1];
    const I kw = tap % (I)g.kernel[2], u = tap / (I)g.kernel[2];
    const I kh = u % (I)g.kernel[1], kd = u / (I)g.kernel[1];
    const int64_t id = (int64_t)od * g.stride[0] - g.pad[0] + (int64_t)kd * g.dilate[0];
    const int64_t ih = (int64_t)oh * g.stride[1] - g.pad[1] + (int64_t)kh * g.dilate[1];
    const int64_t iw = (int64_t)ow * g.stride[2] - g.pad[2] + (int64_t)kw * g.dilate[2];
    float v = 0.0f;
    if (id >= 0 && id < g.in[0] && ih >= 0 && ih < g.in[1] && iw >= 0 && iw < g.in[2])
      v = x[(((int64_t)img_c * g.in[0] + id) * g.in[1] + ih) * g.in[2] + iw];
    col[e] = v;
  }
}

/* ---- pooling ------------------------------------------------------------------------------- */

struct Pool {
  int64_t in[3], out[3], kernel[3], stride[3], pad[3], pad_end[3], dilate[3];
  int64_t in_plane;
  DsCudaPoolType type;
  int count_include_pad;
};

/* MXNet's divisor along one dim for an avg window starting at `start` (the CPU's
 * pool_extent): may be <= 0 for a window past the end, as in MXNet. */
__device__ __forceinline__ int64_t pool_extent(int64_t start, int64_t k, int64_t size,
                                               int64_t pad_end, bool with_pad)
{
  int64_t end = min(start + k, size + pad_end);
  if (with_pad)
    return end - start;
  return min(end, size) - max(start, (int64_t)0);
}

template <typename I>
__global__ void pool_window(const float *__restrict__ x, float *__restrict__ y, Pool g, I total)
{
  const I step = (I)gridDim.x * blockDim.x;
  const bool is_max = g.type == DS_CUDA_POOL_MAX;
  for (I e = (I)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += step) {
    const I ow = e % (I)g.out[2], r = e / (I)g.out[2];
    const I oh = r % (I)g.out[1], r2 = r / (I)g.out[1];
    const I od = r2 % (I)g.out[0], plane = r2 / (I)g.out[0];
    const float *px = x + (int64_t)plane * g.in_plane;
    const int64_t s0 = (int64_t)od * g.stride[0] - g.pad[0];
    const int64_t s1 = (int64_t)oh * g.stride[1] - g.pad[1];
    const int64_t s2 = (int64_t)ow * g.stride[2] - g.pad[2];
    float acc = is_max ? kLowest : 0.0f;
    for (int64_t kd = 0; kd < g.kernel[0]; kd++) {
      const int64_t id = s0 + kd * g.dilate[0];
      if (id < 0 || id >= g.in[0])
        continue;
      for (int64_t kh = 0; kh < g.kernel[1]; kh++) {
        const int64_t ih = s1 + kh * g.dilate[1];
        if (ih < 0 || ih >= g.in[1])
          continue;
        const float *row = px + (id * g.in[1] + ih) * g.in[2];
        for (int64_t kw = 0; kw < g.kernel[2]; kw++) {
          const int64_t iw = s2 + kw * g.dilate[2];
          if (iw < 0 || iw >= g.in[2])
            continue;
          const float v = row[iw];
          acc = is_max ? (v > acc ? v : acc) : acc + v; /* max skips NaN, as the CPU's */
        }
      }
    }
    if (g.type == DS_CUDA_POOL_AVG) {
      const bool cip = g.count_include_pad != 0;
      const int64_t div = pool_extent(s0, g.kernel[0], g.in[0], g.pad_end[0], cip) *
                          pool_extent(s1, g.kernel[1], g.in[1], g.pad_end[1], cip) *
                          pool_extent(s2, g.kernel[2], g.in[2], g.pad_end[2], cip);
      acc = __fdiv_rn(acc, (float)div);
    }
    y[e] = acc;
  }
}

/* One warp per plane: strided partial results, then a butterfly across the lanes. */
__global__ void pool_global(const float *__restrict__ x, float *__restrict__ y, int64_t planes,
                            int64_t plane, DsCudaPoolType type)
{
  const int lane = threadIdx.x & 31;
  const int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
  const bool is_max = type == DS_CUDA_POOL_MAX;
  for (int64_t p = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; p < planes;
       p += warps) {
    const float *px = x + p * plane;
    float acc = is_max ? kLowest : 0.0f;
    for (int64_t i = lane; i < plane; i += 32) {
      const float v = px[i];
      acc = is_max ? (v > acc ? v : acc) : acc + v;
    }
    for (int o = 16; o > 0; o >>= 1) {
      const float other = __shfl_xor_sync(0xffffffffu, acc, o);
      acc = is_max ? (other > acc ? other : acc) : acc + other;
    }
    if (lane == 0)
      y[p] = type == DS_CUDA_POOL_AVG ? __fdiv_rn(acc, (float)plane) : acc;
  }
}

/* ---- Embedding ----------------------------------------------------------------------------- */

__device__ __forceinline__ double load_index(const void *idx, DsCudaNnIndexKind kind, int64_t i)
{
  switch (kind) {
  case DS_CUDA_NN_INDEX_F64:
    return static_cast<const double *>(idx)[i];
  case DS_CUDA_NN_INDEX_I32:
    return static_cast<const int32_t *>(idx)[i];
  case DS_CUDA_NN_INDEX_I64:
    return (double)static_cast<const int64_t *>(idx)[i];
  case DS_CUDA_NN_INDEX_I8:
    return static_cast<const int8_t *>(idx)[i];
  case DS_CUDA_NN_INDEX_U8:
    return static_cast<const uint8_t *>(idx)[i];
  default:
    return static_cast<const float *>(idx)[i];
  }
}

/* Rows move as `W` words (row_words per row). */
template <typename W, typename I>
__global__ void embedding_rows(const void *__restrict__ idx, DsCudaNnIndexKind kind,
                               const W *__restrict__ weight, int64_t input_dim, I row_words,
                               W *__restrict__ y, I total)
{
  const I step = (I)gridDim.x * blockDim.x;
  for (I e = (I)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += step) {
    const I c = e % row_words, i = e / row_words;
    const double v = load_index(idx, kind, (int64_t)i);
    /* Truncated and clipped to [0, input_dim); NaN fails v > 0 and reads row 0. */
    const int64_t row = !(v > 0.0) ? 0 : v >= (double)input_dim ? input_dim - 1 : (int64_t)v;
    y[e] = weight[row * (int64_t)row_words + (int64_t)c];
  }
}

template <typename W>
cudaError_t run_embedding(const void *idx, DsCudaNnIndexKind kind, int64_t n, const void *weight,
                          int64_t input_dim, int64_t row_words, void *y, cudaStream_t stream)
{
  const int64_t total = n * row_words;
  const W *w = static_cast<const W *>(weight);
  W *out = static_cast<W *>(y);
  if (fits_32(total))
    embedding_rows<W, uint32_t><<<blocks_for(total), kThreads, 0, stream>>>(
        idx, kind, w, input_dim, (uint32_t)row_words, out, (uint32_t)total);
  else
    embedding_rows<W, uint64_t><<<blocks_for(total), kThreads, 0, stream>>>(
        idx, kind, w, input_dim, (uint64_t)row_words, out, (uint64_t)total);
  return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t ds_cuda_launch_add_bias(float *y, const float *bias, int64_t total,
                                               int64_t channels, int64_t inner,
                                               cudaStream_t stream)
{
  if (total == 0)
    return cudaSuccess;
  if (fits_32(total))
    add_bias<uint32_t><<<blocks_for(total), kThreads, 0, stream>>>(
        y, bias, (uint32_t)total, (uint32_t)channels, (uint32_t)inner);
  else
    add_bias<uint64_t><<<blocks_for(total), kThreads, 0, stream>>>(
        y, bias, (uint64_t)total, (uint64_t)channels, (uint64_t)inner);
  return cudaGetLastError();
}

extern "C" cudaError_t ds_cuda_launch_im2col(const float *x, float *col, int64_t images,
                                             const DsCudaIm2col *geom, cudaStream_t stream)
{
  Im2col g;
  g.channels = geom->channels;
  g.kvol = g.npos = 1;
  for (int i = 0; i < 3; i++) {
    g.in[i] = geom->in[i];
    g.out[i] = geom->out[i];
    g.kernel[i] = geom->kernel[i];
    g.stride[i] = geom->stride[i];
    g.dilate[i] = geom->dilate[i];
    g.pad[i] = geom->pad[i];
    g.kvol *= g.kernel[i];
    g.npos *= g.out[i];
  }
  const int64_t total = images * g.channels * g.kvol * g.npos;
  if (total == 0)
    return cudaSuccess;
  if (fits_32(total))
    im2col<uint32_t><<<blocks_for(total), kThreads, 0, stream>>>(x, col, g, (uint32_t)total);
  else
    im2col<uint64_t><<<blocks_for(total), kThreads, 0, stream>>>(x, col, g, (uint64_t)total);
  return cudaGetLastError();
}

extern "C" cudaError_t ds_cuda_launch_pool(const float *x, float *y, int64_t planes,
                                           const DsCudaPool *geom, cudaStream_t stream)
{
  Pool g;
  g.in_plane = 1;
  int64_t out_plane = 1;
  for (int i = 0; i < 3; i++) {
    g.in[i] = geom->in[i];
    g.out[i] = geom->out[i];
    g.kernel[i] = geom->kernel[i];
    g.stride[i] = geom->stride[i];
    g.pad[i] = geom->pad[i];
    g.pad_end[i] = geom->pad_end[i];
    g.dilate[i] = geom->dilate[i];
    g.in_plane *= g.in[i];
    out_plane *= g.out[i];
  }
  g.type = geom->type;
  g.count_include_pad = geom->count_include_pad;
  const int64_t total = planes * out_plane;
  if (total == 0)
    return cudaSuccess;
  if (fits_32(total))
    pool_window<uint32_t><<<blocks_for(total), kThreads, 0, stream>>>(x, y, g, (uint32_t)total);
  else
    pool_window<uint64_t><<<blocks_for(total), kThreads, 0, stream>>>(x, y, g, (uint64_t)total);
  return cudaGetLastError();
}

extern "C" cudaError_t ds_cuda_launch_global_pool(const float *x, float *y, int64_t planes,
                                                  int64_t plane, DsCudaPoolType type,
                                                  cudaStream_t stream)
{
  if (planes == 0)
    return cudaSuccess;
  pool_global<<<blocks_for(planes * 32), kThreads, 0, stream>>>(x, y, planes, plane, type);
  return cudaGetLastError();
}

extern "C" cudaError_t ds_cuda_launch_embedding(const void *idx, DsCudaNnIndexKind kind,
                                                int64_t n, const float *weight,
                                                int64_t input_dim, int64_t output_dim, float *y,
                                                cudaStream_t stream)
{
  if (n * output_dim == 0)
    return cudaSuccess;
  /* The widest word that divides a row and both buffers' alignment. */
  const int64_t row_bytes = output_dim * (int64_t)sizeof(float);
  int64_t w = 16;
  while (w > 4 && (row_bytes % w != 0 || (uintptr_t)weight % w != 0 || (uintptr_t)y % w != 0))
    w /= 2;
  const int64_t words = row_bytes / w;
  if (w == 16)
    return run_embedding<uint4>(idx, kind, n, weight, input_dim, words, y, stream);
  if (w == 8)
    return run_embedding<uint2>(idx, kind, n, weight, input_dim, words, y, stream);
  return run_embedding<uint32_t>(idx, kind, n, weight, input_dim, words, y, stream);
}
