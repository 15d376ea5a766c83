/* ds-cuda-tensor.cu: device code of the data-movement kernels: strided copies (transpose,
 * slice, concat, broadcast, tile...), take, and the compaction behind boolean_mask and nonzero.
 *
 * Elements move as unsigned words of their size, never as floats, so every dtype (float16 and
 * NaN payloads included) arrives bit for bit. Index arithmetic runs in 32 bits when the
 * element count allows (64-bit division costs several times more) and in 64 bits otherwise;
 * every kernel is a grid-stride loop, so any size runs with a bounded grid.
 */
#include "ds-cuda-tensor-launch.h"

#include <cuda_runtime.h>
#include <stdint.h>

namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535LL * 8;

unsigned blocks_for(int64_t n, int64_t per_block = kThreads)
{
  int64_t b = (n + per_block - 1) / per_block;
  return (unsigned)(b < 1 ? 1 : b > kMaxBlocks ? kMaxBlocks : b);
}

/* Whether 32-bit indices cover `n` elements with room for the grid-stride step. */
bool fits_32(int64_t n)
{
  return n < ((int64_t)1 << 31);
}

/* ---- strided copy ---------------------------------------------------------------------- */

/* The plan as the kernel walks it: innermost dim first, so the loop can stop at ndim. */
struct DevPlan {
  int ndim;
  int64_t shape[DS_CUDA_COPY_MAX_DIMS];
  int64_t in_stride[DS_CUDA_COPY_MAX_DIMS];
  int64_t out_stride[DS_CUDA_COPY_MAX_DIMS];
  int64_t in_base, out_base;
};

/* The loop over dims is unrolled so that every access to the plan is a constant offset into
 * the kernel's parameters (an indexed access would copy the plan to local memory). */
template <typename T, typename I>
__global__ void strided_copy(const T *__restrict__ in, T *__restrict__ out, DevPlan p, I total)
{
  const I step = (I)gridDim.x * blockDim.x;
  for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
    I rem = i;
    int64_t src = p.in_base, dst = p.out_base;
#pragma unroll
    for (int d = 0; d < DS_CUDA_COPY_MAX_DIMS; d++) {
      if (d >= p.ndim)
        break;
      I dim = (I)p.shape[d];
      I idx = rem % dim;
      rem /= dim;
      src += (int64_t)idx * p.in_stride[d];
      dst += (int64_t)idx * p.out_stride[d];
    }
    out[dst] = in[src];
  }
}

/* A batch of 2-D transposes: out[b, p, q] = in[base(b) + p + q * s], the output contiguous
 * from out_base. Each block moves 32 x 32 tiles through shared memory so that both the reads
 * (along p) and the writes (along q) are coalesced. */
constexpr int kTile = 32;
constexpr int kTileRows = 8;

struct TransposeDims {
  int64_t p, q, s;
  int nb; /* batch dims, outermost first */
  int64_t bshape[DS_CUDA_COPY_MAX_DIMS];
  int64_t bstride[DS_CUDA_COPY_MAX_DIMS];
  int64_t batches, in_base, out_base;
};

template <typename T>
__global__ void transpose_tiles(const T *__restrict__ in, T *__restrict__ out, TransposeDims t)
{
  __shared__ T tile[kTile][kTile + 1]; /* +1: the column reads hit distinct banks */
  const int64_t p_tiles = (t.p + kTile - 1) / kTile, q_tiles = (t.q + kTile - 1) / kTile;
  const int64_t tiles = t.batches * p_tiles * q_tiles;
  for (int64_t u = blockIdx.x; u < tiles; u += gridDim.x) {
    const int64_t qt = u % q_tiles, rest = u / q_tiles;
    const int64_t pt = rest % p_tiles, b = rest / p_tiles;
    int64_t off = t.in_base, r = b;
    for (int d = t.nb - 1; d >= 0; d--) {
      off += (r % t.bshape[d]) * t.bstride[d];
      r /= t.bshape[d];
    }
    const int64_t p0 = pt * kTile, q0 = qt * kTile;
    for (int j = threadIdx.y; j < kTile; j += kTileRows) {
      int64_t p = p0 + threadIdx.x, q = q0 + j;
      if (p < t.p && q < t.q)
        tile[j][threadIdx.x] = in[off + p + q * t.s];
    }
    __syncthreads();
    for (int j = threadIdx.y; j < kTile; j += kTileRows) {
      int64_t p = p0 + j, q = q0 + threadIdx.x;
      if (p < t.p && q < t.q)
        out[t.out_base + (b * t.p + p) * t.q + q] = tile[threadIdx.x][j];
    }
    __syncthreads(); /* the tile is refilled by the next iteration */
  }
}

/* Drops size-1 dims and merges each dim into its outer neighbour when both sides walk them
 * as one. Returns the element count. */
int64_t collapse(DsCudaCopyPlan *p)
{
  int64_t total = 1;
  for (int d = 0; d < p->ndim; d++)
    total *= p->shape[d];
  if (total == 0)
    return 0;
  int m = 0;
  for (int d = 0; d < p->ndim; d++) {
    if (p->shape[d] == 1)
      continue;
    if (m > 0 && p->in_stride[m - 1] == p->in_stride[d] * p->shape[d] &&
        p->out_stride[m - 1] == p->out_stride[d] * p->shape[d]) {
      p->shape[m - 1] *= p->shape[d];
      p->in_stride[m - 1] = p->in_stride[d];
      p->out_stride[m - 1] = p->out_stride[d];
      continue;
    }
    p->shape[m] = p->shape[d];
    p->in_stride[m] = p->in_stride[d];
    p->out_stride[m] = p->out_stride[d];
    m++;
  }
  p->ndim = m;
  return total;
}

/* When the innermost dim is contiguous on both sides, copies `w`-byte words instead of
 * elements where the run length, every stride, both bases and both pointers allow it. */
size_t widen(DsCudaCopyPlan *p, size_t es, const void *in, void *out)
{
  const int last = p->ndim - 1;
  if (last < 0 || p->in_stride[last] != 1 || p->out_stride[last] != 1)
    return es;
  for (size_t w = 16; w > es; w /= 2) {
    const int64_t r = (int64_t)(w / es);
    bool ok = p->shape[last] % r == 0 && p->in_base % r == 0 && p->out_base % r == 0 &&
              (uintptr_t)in % w == 0 && (uintptr_t)out % w == 0;
    for (int d = 0; d < last && ok; d++)
      ok = p->in_stride[d] % r == 0 && p->out_stride[d] % r == 0;
    if (!ok)
      continue;
    p->shape[last] /= r;
    for (int d = 0; d < last; d++) {
      p->in_stride[d] /= r;
      p->out_stride[d] /= r;
    }
    p->in_base /= r;
    p->out_base /= r;
    return w;
  }
  return es;
}

template <typename T>
cudaError_t run_strided(const DsCudaCopyPlan *p, int64_t total, const void *in, void *out,
                        cudaStream_t stream)
{
  DevPlan d;
  d.ndim = p->ndim;
  for (int i = 0; i < p->ndim; i++) { /* innermost first */
    d.shape[i] = p->shape[p->ndim - 1 - i];
    d.in_stride[i] = p->in_stride[p->ndim - 1 - i];
    d.out_stride[i] = p->out_stride[p->ndim - 1 - i];
  }
  for (int i = p->ndim; i < DS_CUDA_COPY_MAX_DIMS; i++) {
    d.shape[i] = 1;
    d.in_stride[i] = d.out_stride[i] = 0;
  }
  d.in_base = p->in_base;
  d.out_base = p->out_base;
  const T *src = static_cast<const T *>(in);
  T *dst = static_cast<T *>(out);
  if (fits_32(total))
    strided_copy<T, uint32_t><<<blocks_for(total), kThreads, 0, stream>>>(src, dst, d,
                                                                         (uint32_t)total);
  else
    strided_copy<T, uint64_t><<<blocks_for(total), kThreads, 0, stream>>>(src, dst, d,
                                                                         (uint64_t)total);
  return cudaGetLastError();
}

template <typename T>
cudaError_t run_transpose(const DsCudaCopyPlan *p, const void *in, void *out,
                          cudaStream_t stream)
{
  const int m = p->ndim;
  TransposeDims t;
  t.p = p->shape[m - 2];
  t.q = p->shape[m - 1];
  t.s = p->in_stride[m - 1];
  t.nb = m - 2;
  t.batches = 1;
  for (int d = 0; d < DS_CUDA_COPY_MAX_DIMS; d++) {
    t.bshape[d] = d < t.nb ? p->shape[d] : 1;
    t.bstride[d] = d < t.nb ? p->in_stride[d] : 0;
    if (d < t.nb)
      t.batches *= p->shape[d];
  }
  t.in_base = p->in_base;
  t.out_base = p->out_base;
  int64_t tiles = t.batches * ((t.p + kTile - 1) / kTile) * ((t.q + kTile - 1) / kTile);
  transpose_tiles<T><<<blocks_for(tiles, 1), dim3(kTile, kTileRows), 0, stream>>>(
      static_cast<const T *>(in), static_cast<T *>(out), t);
  return cudaGetLastError();
}

/* The output contiguous, the input's innermost dim now the second-to-last: a batch of 2-D
 * transposes, worth tiling once both sides span a few tiles' widths. */
bool is_transpose(const DsCudaCopyPlan *p)
{
  const int m = p->ndim;
  if (m < 2 || p->in_stride[m - 2] != 1 || p->in_stride[m - 1] == 1 || p->shape[m - 2] < 16 ||
      p->shape[m - 1] < 16)
    return false;
  int64_t s = 1;
  for (int d = m - 1; d >= 0; d--) {
    if (p->out_stride[d] != s)
      return false;
    s *= p->shape[d];
  }
  return true;
}

template <typename T>
cudaError_t dispatch_copy(const DsCudaCopyPlan *p, int64_t total, const void *in, void *out,
                          cudaStream_t stream)
{
  if (is_transpose(p))
    return run_transpose<T>(p, in, out, stream);
  return run_strided<T>(p, total, in, out, stream);
}

/* ---- take ------------------------------------------------------------------------------ */

/* Element i of an index tensor as int64: int64 exactly, the rest through a double truncated
 * toward zero with NaN as 0 and saturation at int64's ends (the CPU's load_index). */
__device__ __forceinline__ int64_t load_index(const void *base, DsCudaElemKind kind, int64_t i)
{
  double v;
  switch (kind) {
  case DS_CUDA_ELEM_I64:
    return static_cast<const int64_t *>(base)[i];
  case DS_CUDA_ELEM_I32:
    return static_cast<const int32_t *>(base)[i];
  case DS_CUDA_ELEM_I8:
    return static_cast<const int8_t *>(base)[i];
  case DS_CUDA_ELEM_U8:
    return static_cast<const uint8_t *>(base)[i];
  case DS_CUDA_ELEM_BOOL:
    return static_cast<const uint8_t *>(base)[i] != 0;
  case DS_CUDA_ELEM_F64:
    v = static_cast<const double *>(base)[i];
    break;
  default:
    v = static_cast<const float *>(base)[i];
    break;
  }
  if (v != v)
    return 0;
  if (v >= 9223372036854775807.0)
    return INT64_MAX;
  if (v <= -9223372036854775808.0)
    return INT64_MIN;
  return (int64_t)v;
}

template <typename T, typename I>
__global__ void take_rows(const T *__restrict__ data, const void *__restrict__ idx,
                          DsCudaElemKind kind, T *__restrict__ out, I k_count, int64_t m, I trail,
                          I total, int mode, int *flag)
{
  const I step = (I)gridDim.x * blockDim.x;
  for (I e = (I)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += step) {
    const I t = e % trail, u = e / trail, j = u % k_count, o = u / k_count;
    int64_t k = load_index(idx, kind, (int64_t)j);
    if (k < 0 || k >= m) {
      if (mode == DS_CUDA_TAKE_RAISE) {
        *flag = 1;
        continue;
      }
      k = mode == DS_CUDA_TAKE_CLIP ? (k < 0 ? 0 : m - 1) : ((k % m) + m) % m;
    }
    out[e] = data[((int64_t)o * m + k) * (int64_t)trail + (int64_t)t];
  }
}

/* Raise mode with empty rows still checks every index, as the CPU's kernel does. */
__global__ void check_indices(const void *__restrict__ idx, DsCudaElemKind kind, int64_t k_count,
                              int64_t m, int *flag)
{
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < k_count; j += step) {
    const int64_t k = load_index(idx, kind, j);
    if (k < 0 || k >= m)
      *flag = 1;
  }
}

template <typename T>
cudaError_t run_take(const void *data, const void *idx, DsCudaElemKind kind, void *out,
                     int64_t outer, int64_t k, int64_t m, int64_t trail, int mode, int *flag,
                     cudaStream_t stream)
{
  const int64_t total = outer * k * trail;
  const T *src = static_cast<const T *>(data);
  T *dst = static_cast<T *>(out);
  if (fits_32(total))
    take_rows<T, uint32_t><<<blocks_for(total), kThreads, 0, stream>>>(
        src, idx, kind, dst, (uint32_t)k, m, (uint32_t)trail, (uint32_t)total, mode, flag);
  else
    take_rows<T, uint64_t><<<blocks_for(total), kThreads, 0, stream>>>(
        src, idx, kind, dst, (uint64_t)k, m, (uint64_t)trail, (uint64_t)total, mode, flag);
  return cudaGetLastError();
}

/* The widest word (up to 16 bytes) that divides a row of `row_bytes` and both pointers'
 * alignment: rows then move in fewer, wider loads. */
size_t row_word(int64_t row_bytes, const void *a, const void *b)
{
  size_t w = 16;
  while (w > 1 && (row_bytes % (int64_t)w != 0 || (uintptr_t)a % w != 0 || (uintptr_t)b % w != 0))
    w /= 2;
  return w;
}

/* ---- compaction -------------------------------------------------------------------------- */

constexpr int kScanThreads = 256;
constexpr int kScanSegments = DS_CUDA_COMPACT_TILE / kScanThreads;

/* Whether element i is nonzero, by its bits for the floats: under --use_fast_math a float
 * compare would flush subnormals to zero, and bits also make NaN true and -0 false. */
__device__ __forceinline__ bool truthy(const void *m, DsCudaElemKind kind, int64_t i)
{
  switch (kind) {
  case DS_CUDA_ELEM_F32:
    return (static_cast<const uint32_t *>(m)[i] & 0x7fffffffu) != 0;
  case DS_CUDA_ELEM_F64:
    return (static_cast<const uint64_t *>(m)[i] & 0x7fffffffffffffffull) != 0;
  case DS_CUDA_ELEM_F16:
    return (static_cast<const uint16_t *>(m)[i] & 0x7fffu) != 0;
  case DS_CUDA_ELEM_I32:
    return static_cast<const uint32_t *>(m)[i] != 0;
  case DS_CUDA_ELEM_I64:
    return static_cast<const uint64_t *>(m)[i] != 0;
  default: /* int8, uint8, bool */
    return static_cast<const uint8_t *>(m)[i] != 0;
  }
}

/* Exclusive prefix sum of one value per thread across the block (blockDim.x a multiple of 32,
 * at most 1024); *total gets the block's sum. Every thread of the block must call it. */
__device__ int64_t block_exclusive_scan(int64_t v, int64_t *total)
{
  __shared__ int64_t warp_sums[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, n_warps = blockDim.x >> 5;
  int64_t x = v;
  for (int o = 1; o < 32; o <<= 1) {
    int64_t y = __shfl_up_sync(0xffffffffu, x, o);
    if (lane >= o)
      x += y;
  }
  if (lane == 31)
    warp_sums[warp] = x;
  __syncthreads();
  if (warp == 0) {
    int64_t s = lane < n_warps ? warp_sums[lane] : 0;
    for (int o = 1; o < 32; o <<= 1) {
      int64_t y = __shfl_up_sync(0xffffffffu, s, o);
      if (lane >= o)
        s += y;
    }
    warp_sums[lane] = s; /* inclusive sums of the warps' totals */
  }
  __syncthreads();
  *total = warp_sums[n_warps - 1];
  int64_t r = (warp > 0 ? warp_sums[warp - 1] : 0) + x - v;
  __syncthreads(); /* warp_sums is reused by the next call */
  return r;
}

/* Pass 1: each tile's count of nonzero elements. */
__global__ void count_tiles(const void *__restrict__ mask, DsCudaElemKind kind, int64_t n,
                            int64_t n_tiles, int64_t *__restrict__ counts)
{
  for (int64_t t = blockIdx.x; t < n_tiles; t += gridDim.x) {
    int64_t sum = 0;
    for (int s = 0; s < kScanSegments; s++) {
      int64_t i = t * DS_CUDA_COMPACT_TILE + s * kScanThreads + threadIdx.x;
      int64_t seg;
      block_exclusive_scan(i < n && truthy(mask, kind, i) ? 1 : 0, &seg);
      sum += seg;
    }
    if (threadIdx.x == 0)
      counts[t] = sum;
  }
}

/* Pass 2 (one block): the tile counts become exclusive offsets, and counts[n_tiles] the
 * total. */
__global__ void scan_counts(int64_t *counts, int64_t n_tiles)
{
  int64_t carry = 0;
  for (int64_t base = 0; base < n_tiles; base += blockDim.x) {
    int64_t i = base + threadIdx.x;
    int64_t v = i < n_tiles ? counts[i] : 0, total;
    int64_t ex = block_exclusive_scan(v, &total);
    if (i < n_tiles)
      counts[i] = carry + ex;
    carry += total;
  }
  if (threadIdx.x == 0)
    counts[n_tiles] = carry;
}

/* Pass 3: each nonzero element's position lands at its rank, tiles in order and each tile's
 * segments in order. */
__global__ void write_positions(const void *__restrict__ mask, DsCudaElemKind kind, int64_t n,
                                int64_t n_tiles, const int64_t *__restrict__ offsets,
                                int64_t *__restrict__ pos)
{
  for (int64_t t = blockIdx.x; t < n_tiles; t += gridDim.x) {
    int64_t carry = offsets[t];
    for (int s = 0; s < kScanSegments; s++) {
      int64_t i = t * DS_CUDA_COMPACT_TILE + s * kScanThreads + threadIdx.x;
      bool keep = i < n && truthy(mask, kind, i);
      int64_t seg;
      int64_t rank = block_exclusive_scan(keep ? 1 : 0, &seg);
      if (keep)
        pos[carry + rank] = i;
      carry += seg;
    }
  }
}

template <typename T, typename I>
__global__ void gather_kept(const T *__restrict__ in, T *__restrict__ out,
                            const int64_t *__restrict__ pos, I n_kept, int64_t len, I row,
                            I total)
{
  const I step = (I)gridDim.x * blockDim.x;
  for (I e = (I)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += step) {
    const I r = e % row, u = e / row, j = u % n_kept, o = u / n_kept;
    out[e] = in[((int64_t)o * len + pos[j]) * (int64_t)row + (int64_t)r];
  }
}

template <typename T>
cudaError_t run_gather_kept(const void *in, void *out, const int64_t *pos, int64_t outer,
                            int64_t n_kept, int64_t len, int64_t row, cudaStream_t stream)
{
  const int64_t total = outer * n_kept * row;
  const T *src = static_cast<const T *>(in);
  T *dst = static_cast<T *>(out);
  if (fits_32(total))
    gather_kept<T, uint32_t><<<blocks_for(total), kThreads, 0, stream>>>(
        src, dst, pos, (uint32_t)n_kept, len, (uint32_t)row, (uint32_t)total);
  else
    gather_kept<T, uint64_t><<<blocks_for(total), kThreads, 0, stream>>>(
        src, dst, pos, (uint64_t)n_kept, len, (uint64_t)row, (uint64_t)total);
  return cudaGetLastError();
}

struct UnravelDims {
  int ndim;
  int64_t span[DS_CUDA_COPY_MAX_DIMS]; /* elements per step of each dim */
  int64_t shape[DS_CUDA_COPY_MAX_DIMS];
};

__global__ void unravel(const int64_t *__restrict__ pos, int64_t total, UnravelDims u,
                        int64_t *__restrict__ out)
{
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += step) {
    const int64_t j = e / u.ndim;
    const int d = (int)(e % u.ndim);
    int64_t span = 1, dim = 1;
#pragma unroll
    for (int k = 0; k < DS_CUDA_COPY_MAX_DIMS; k++)
      if (k == d)
        span = u.span[k], dim = u.shape[k];
    out[e] = pos[j] / span % dim;
  }
}

/* Launches the element-size instance of a templated runner: 1, 2, 4, 8 or 16 bytes. */
#define DS_DISPATCH_SIZE(es, CALL)                                                                 \
  switch (es) {                                                                                    \
  case 1: {                                                                                        \
    using W = uint8_t;                                                                             \
    return CALL;                                                                                   \
  }                                                                                                \
  case 2: {                                                                                        \
    using W = uint16_t;                                                                            \
    return CALL;                                                                                   \
  }                                                                                                \
  case 4: {                                                                                        \
    using W = uint32_t;                                                                            \
    return CALL;                                                                                   \
  }                                                                                                \
  case 8: {                                                                                        \
    using W = uint64_t;                                                                            \
    return CALL;                                                                                   \
  }                                                                                                \
  case 16: {                                                                                       \
    using W = uint4;                                                                               \
    return CALL;                                                                                   \
  }                                                                                                \
  default:                                                                                         \
    return cudaErrorInvalidValue;                                                                  \
  }

} // namespace

extern "C" cudaError_t ds_cuda_launch_copy(const DsCudaCopyPlan *plan, size_t elem_size,
                                           const void *in, void *out, cudaStream_t stream)
{
  if (plan->ndim < 0 || plan->ndim > DS_CUDA_COPY_MAX_DIMS)
    return cudaErrorInvalidValue;
  DsCudaCopyPlan p = *plan;
  const int64_t total = collapse(&p);
  if (total == 0)
    return cudaSuccess;
  size_t es = widen(&p, elem_size, in, out);
  const char *src = static_cast<const char *>(in);
  char *dst = static_cast<char *>(out);
  /* Contiguous on both sides: one memcpy. */
  if (p.ndim == 0 || (p.ndim == 1 && p.in_stride[0] == 1 && p.out_stride[0] == 1))
    return cudaMemcpyAsync(dst + p.out_base * (int64_t)es, src + p.in_base * (int64_t)es,
                           (size_t)total * elem_size, cudaMemcpyDeviceToDevice, stream);
  /* Rows contiguous on both sides (concat, slices of rows): the copy engine's 2-D memcpy,
   * whose pitches must be non-negative, at least the row and below 2^31 bytes. */
  if (p.ndim == 2 && p.in_stride[1] == 1 && p.out_stride[1] == 1) {
    const int64_t width = p.shape[1] * (int64_t)es;
    const int64_t spitch = p.in_stride[0] * (int64_t)es, dpitch = p.out_stride[0] * (int64_t)es;
    const int64_t limit = (int64_t)1 << 31;
    if (spitch >= width && dpitch >= width && spitch < limit && dpitch < limit)
      return cudaMemcpy2DAsync(dst + p.out_base * (int64_t)es, (size_t)dpitch,
                               src + p.in_base * (int64_t)es, (size_t)spitch, (size_t)width,
                               (size_t)p.shape[0], cudaMemcpyDeviceToDevice, stream);
  }
  /* Words of the widened size: `total` counted elements, the plan now counts words. */
  const int64_t words = total / (int64_t)(es / elem_size);
  DS_DISPATCH_SIZE(es, dispatch_copy<W>(&p, words, in, out, stream))
}

extern "C" cudaError_t ds_cuda_launch_take(const void *data, const void *idx,
                                           DsCudaElemKind idx_kind, void *out, int64_t outer,
                                           int64_t k, int64_t m, int64_t trail,
                                           size_t elem_size, int mode, int *flag,
                                           cudaStream_t stream)
{
  if (outer * k == 0)
    return cudaSuccess;
  if (trail == 0) {
    if (mode != DS_CUDA_TAKE_RAISE)
      return cudaSuccess;
    check_indices<<<blocks_for(k), kThreads, 0, stream>>>(idx, idx_kind, k, m, flag);
    return cudaGetLastError();
  }
  const int64_t row_bytes = trail * (int64_t)elem_size;
  const size_t w = row_word(row_bytes, data, out);
  const int64_t words = row_bytes / (int64_t)w;
  DS_DISPATCH_SIZE(w, run_take<W>(data, idx, idx_kind, out, outer, k, m, words, mode, flag,
                                  stream))
}

extern "C" cudaError_t ds_cuda_launch_count_true(const void *mask, DsCudaElemKind kind,
                                                 int64_t n, int64_t *scratch,
                                                 cudaStream_t stream)
{
  const int64_t n_tiles = ds_cuda_compact_scratch(n) - 1;
  if (n_tiles > 0)
    count_tiles<<<blocks_for(n_tiles, 1), kScanThreads, 0, stream>>>(mask, kind, n, n_tiles,
                                                                      scratch);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    return err;
  scan_counts<<<1, 1024, 0, stream>>>(scratch, n_tiles);
  return cudaGetLastError();
}

extern "C" cudaError_t ds_cuda_launch_true_positions(const void *mask, DsCudaElemKind kind,
                                                     int64_t n, const int64_t *scratch,
                                                     int64_t *pos, cudaStream_t stream)
{
  const int64_t n_tiles = ds_cuda_compact_scratch(n) - 1;
  if (n_tiles == 0)
    return cudaSuccess;
  write_positions<<<blocks_for(n_tiles, 1), kScanThreads, 0, stream>>>(mask, kind, n, n_tiles,
                                                                        scratch, pos);
  return cudaGetLastError();
}

extern "C" cudaError_t ds_cuda_launch_gather_kept(const void *in, void *out, const int64_t *pos,
                                                  int64_t outer, int64_t n_kept, int64_t len,
                                                  int64_t row, size_t elem_size,
                                                  cudaStream_t stream)
{
  if (outer * n_kept * row == 0)
    return cudaSuccess;
  const int64_t row_bytes = row * (int64_t)elem_size;
  const size_t w = row_word(row_bytes, in, out);
  DS_DISPATCH_SIZE(w, run_gather_kept<W>(in, out, pos, outer, n_kept, len,
                                         row_bytes / (int64_t)w, stream))
}

extern "C" cudaError_t ds_cuda_launch_unravel(const int64_t *pos, int64_t count,
                                              const int64_t *shape, int ndim, int64_t *out,
                                              cudaStream_t stream)
{
  if (ndim < 0 || ndim > DS_CUDA_COPY_MAX_DIMS)
    return cudaErrorInvalidValue;
  if (count == 0 || ndim == 0)
    return cudaSuccess;
  UnravelDims u;
  u.ndim = ndim;
  int64_t span = 1;
  for (int d = DS_CUDA_COPY_MAX_DIMS - 1; d >= 0; d--) {
    u.shape[d] = d < ndim ? shape[d] : 1;
    u.span[d] = d < ndim ? span : 1;
    if (d < ndim)
      span *= shape[d];
  }
  const int64_t total = count * ndim;
  unravel<<<blocks_for(total), kThreads, 0, stream>>>(pos, total, u, out);
  return cudaGetLastError();
}
