/* ds-cuda-reduce.cu: device code of the reductions and the row-wise normalisations.
 *
 * Two shapes of work. A row (the reduced positions of one output, softmax's axis, a LayerNorm
 * row, an InstanceNorm plane) whose elements are contiguous or nearly so is taken by one block:
 * its threads stride over the row and combine through warp shuffles and a few shared words.
 * Rows whose elements lie far apart while neighbouring rows are neighbours in memory (a
 * reduction keeping the innermost axis, softmax over a middle axis) are taken one per thread,
 * so that a warp reads 32 neighbours at a time.
 *
 * Every combination happens in a fixed order, so results do not change from run to run.
 * Accuracy: the build uses --use_fast_math; exp and log here run in double precision and round
 * once, and float division and square root use the correctly rounded intrinsics, so results
 * stay within an ulp or two of the CPU kernels' (see ds-cuda-elemwise.cu).
 */
#include "ds-cuda-reduce-launch.h"

#include <cuda_runtime.h>
#include <stdint.h>

namespace
{

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535 * 8;

unsigned grid_for(int64_t units)
{
  return (unsigned)(units < 1 ? 1 : units > kMaxBlocks ? kMaxBlocks : units);
}

unsigned blocks_for(int64_t n)
{
  return grid_for((n + kThreads - 1) / kThreads);
}

/* Threads for a block that strides over rows of `len` elements: a power of two from 32 (a
 * warp, which block_reduce needs as its unit) to kThreads. */
unsigned row_threads(int64_t len)
{
  unsigned t = 32;
  while (t < (unsigned)kThreads && (int64_t)t < len)
    t *= 2;
  return t;
}

__device__ __forceinline__ float f_exp(float x)
{
  return (float)exp((double)x);
}

__device__ __forceinline__ float neg_inf_f()
{
  return __int_as_float((int)0xff800000u);
}
__device__ __forceinline__ double neg_inf_d()
{
  return __longlong_as_double((long long)0xfff0000000000000ull);
}
__device__ __forceinline__ double pos_inf_d()
{
  return __longlong_as_double(0x7ff0000000000000ll);
}

struct SumOp {
  template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};

/* softmax's row maximum: NaN never wins (as the CPU's max_f32), so a NaN element makes its
 * row NaN through exp, not through the maximum. */
struct MaxOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return b > a ? b : a; }
};

/* v combined over the block, every thread getting the result. blockDim.x is a multiple of 32
 * (at most 1024) and blockDim.y is 1. The first barrier keeps the previous call's readers of
 * `scratch` (32 values) ahead of this call's writers. */
template <typename T, typename F> __device__ __forceinline__ T block_reduce(T v, F f, T *scratch)
{
#pragma unroll
  for (int off = 16; off > 0; off >>= 1)
    v = f(v, __shfl_xor_sync(0xffffffffu, v, off));
  __syncthreads();
  if ((threadIdx.x & 31) == 0)
    scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  T r = scratch[0];
  for (unsigned w = 1; w < (blockDim.x >> 5); w++)
    r = f(r, scratch[w]);
  return r;
}

/* ---- axis reductions -------------------------------------------------------------------- */

/* core/ds-math-reduce.h's primitives: every reduction here accumulates in double. */
#define DS_M_ADD(x, y) ((x) + (y))
#define DS_M_MUL(x, y) ((x) * (y))
#define DS_M_DIV(x, y) ((x) / (y))
#define DS_M_ABS       fabs
#define DS_M_LOWEST    neg_inf_d()
#define DS_M_HIGHEST   pos_inf_d()
#define DS_M_SQRT      sqrt
#define DS_M_LOG       log
#define DS_M_EXP       exp
#define DS_M_ISFINITE  isfinite

/* The table's IDENTITY, FOLD, MERGE and FINISH of reduction OP. No kernel here takes
 * log_sum_exp's two passes, so its shift `s` is never given (0). */
#define RED_CASE(ID, INTS, IDENTITY, FOLD, MERGE, FINISH, PART)                                    \
  if constexpr (OP == DS_MATH_RED_##ID) {                                                          \
    return (PART);                                                                                 \
  } else
#define RED_IDENTITY(ID, INTS, IDENTITY, FOLD, MERGE, FINISH)                                      \
  RED_CASE(ID, INTS, IDENTITY, FOLD, MERGE, FINISH, IDENTITY)
#define RED_FOLD(ID, INTS, IDENTITY, FOLD, MERGE, FINISH)                                          \
  RED_CASE(ID, INTS, IDENTITY, FOLD, MERGE, FINISH, FOLD)
#define RED_MERGE(ID, INTS, IDENTITY, FOLD, MERGE, FINISH)                                         \
  RED_CASE(ID, INTS, IDENTITY, FOLD, MERGE, FINISH, MERGE)
#define RED_FINISH(ID, INTS, IDENTITY, FOLD, MERGE, FINISH)                                        \
  RED_CASE(ID, INTS, IDENTITY, FOLD, MERGE, FINISH, FINISH)

template <int OP> __device__ __forceinline__ double red_identity()
{
  using T = double;
  DS_MATH_REDUCE(RED_IDENTITY)
  {
    static_assert(OP < 0, "a reduction without an identity");
  }
}

template <int OP> __device__ __forceinline__ double red_fold(double a, double v)
{
  using T = double;
  constexpr double s = 0.0;
  (void)s;
  DS_MATH_REDUCE(RED_FOLD)
  {
    static_assert(OP < 0, "a reduction without a fold");
  }
}

template <int OP> struct FoldOp {
  __device__ __forceinline__ double operator()(double a, double b) const
  {
    using T = double;
    DS_MATH_REDUCE(RED_MERGE)
    {
      static_assert(OP < 0, "a reduction without a merge");
    }
  }
};

/* The mean of no elements is NaN (0 / 0), as on the CPU. */
template <int OP, typename O> __device__ __forceinline__ O red_finish(double a, int64_t n)
{
  using T = double;
  constexpr double s = 0.0;
  (void)s;
  DS_MATH_REDUCE(RED_FINISH)
  {
    static_assert(OP < 0, "a reduction without a finish");
  }
}
#undef RED_CASE
#undef RED_IDENTITY
#undef RED_FOLD
#undef RED_MERGE
#undef RED_FINISH

/* Input offset of output o (over the kept dims) and of reduced position r. The loops unroll
 * so the plan is read from fixed parameter slots. */
__device__ __forceinline__ int64_t kept_offset(const DsCudaReducePlan &p, int64_t o)
{
  int64_t off = 0;
#pragma unroll
  for (int d = DS_CUDA_RED_MAX_DIMS - 1; d >= 0; d--) {
    if (d < p.nk) {
      off += (o % p.kshape[d]) * p.kstride[d];
      o /= p.kshape[d];
    }
  }
  return off;
}

__device__ __forceinline__ int64_t reduced_offset(const DsCudaReducePlan &p, int64_t r)
{
  if (p.nr <= 1) /* the common case: one reduced run */
    return p.nr == 1 ? r * p.rstride[0] : 0;
  int64_t off = 0;
#pragma unroll
  for (int d = DS_CUDA_RED_MAX_DIMS - 1; d >= 0; d--) {
    if (d < p.nr) {
      off += (r % p.rshape[d]) * p.rstride[d];
      r /= p.rshape[d];
    }
  }
  return off;
}

/* Part blockIdx.y of the reduced range [0, count). */
__device__ __forceinline__ void split_range(const DsCudaReducePlan &p, int64_t *r0, int64_t *r1)
{
  int64_t seg = (p.count + p.splits - 1) / p.splits;
  *r0 = (int64_t)blockIdx.y * seg;
  *r1 = *r0 + seg < p.count ? *r0 + seg : p.count;
}

template <int OP, typename T>
__device__ __forceinline__ void red_store(const DsCudaReducePlan &p, int64_t o, double acc, T *out,
                                          double *partials)
{
  if (p.splits == 1)
    out[o] = red_finish<OP, T>(acc, p.count);
  else
    partials[(int64_t)blockIdx.y * p.n_out + o] = acc;
}

/* A block per output (grid.x) and part of its range (grid.y). */
template <int OP, typename T>
__global__ void reduce_rows_kernel(const T *__restrict__ in, T *__restrict__ out,
                                   double *__restrict__ partials, DsCudaReducePlan p)
{
  __shared__ double scratch[32];
  int64_t r0, r1;
  split_range(p, &r0, &r1);
  for (int64_t o = blockIdx.x; o < p.n_out; o += gridDim.x) {
    const int64_t base = kept_offset(p, o);
    double acc = red_identity<OP>();
    for (int64_t r = r0 + threadIdx.x; r < r1; r += blockDim.x)
      acc = red_fold<OP>(acc, (double)in[base + reduced_offset(p, r)]);
    acc = block_reduce(acc, FoldOp<OP>(), scratch);
    if (threadIdx.x == 0)
      red_store<OP, T>(p, o, acc, out, partials);
  }
}

/* Blocks of 32 x 8 threads: x takes 32 neighbouring outputs, y eight interleaved slices of
 * their range, folded in y order through shared memory. */
constexpr int kColLanes = 8;

template <int OP, typename T>
__global__ void reduce_cols_kernel(const T *__restrict__ in, T *__restrict__ out,
                                   double *__restrict__ partials, DsCudaReducePlan p)
{
  __shared__ double tile[kColLanes][33];
  int64_t r0, r1;
  split_range(p, &r0, &r1);
  for (int64_t o0 = (int64_t)blockIdx.x * 32; o0 < p.n_out; o0 += (int64_t)gridDim.x * 32) {
    const int64_t o = o0 + threadIdx.x;
    double acc = red_identity<OP>();
    if (o < p.n_out) {
      const int64_t base = kept_offset(p, o);
      for (int64_t r = r0 + threadIdx.y; r < r1; r += kColLanes)
        acc = red_fold<OP>(acc, (double)in[base + reduced_offset(p, r)]);
    }
    tile[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && o < p.n_out) {
      for (int k = 1; k < kColLanes; k++) /* partial accumulators join by MERGE, not FOLD */
        acc = FoldOp<OP>()(acc, tile[k][threadIdx.x]);
      red_store<OP, T>(p, o, acc, out, partials);
    }
    __syncthreads();
  }
}

/* Folds each output's partial results, part by part. */
template <int OP, typename T>
__global__ void reduce_finish_kernel(const double *__restrict__ partials, T *__restrict__ out,
                                     int64_t n_out, int splits, int64_t count)
{
  for (int64_t o = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; o < n_out;
       o += (int64_t)gridDim.x * blockDim.x) {
    double acc = red_identity<OP>();
    for (int s = 0; s < splits; s++)
      acc = FoldOp<OP>()(acc, partials[(int64_t)s * n_out + o]);
    out[o] = red_finish<OP, T>(acc, count);
  }
}

template <int OP, typename T>
cudaError_t launch_reduce_typed(const void *in, void *out, const DsCudaReducePlan *plan,
                                double *partials, cudaStream_t stream)
{
  const T *pin = static_cast<const T *>(in);
  T *pout = static_cast<T *>(out);
  const DsCudaReducePlan &p = *plan;
  if (p.splits < 1 || p.splits > 65535 || (p.splits > 1 && partials == NULL))
    return cudaErrorInvalidValue;
  if (p.columns) {
    dim3 grid(grid_for((p.n_out + 31) / 32), (unsigned)p.splits);
    reduce_cols_kernel<OP, T><<<grid, dim3(32, kColLanes), 0, stream>>>(pin, pout, partials, p);
  } else {
    dim3 grid(grid_for(p.n_out), (unsigned)p.splits);
    unsigned threads = row_threads((p.count + p.splits - 1) / p.splits);
    reduce_rows_kernel<OP, T><<<grid, threads, 0, stream>>>(pin, pout, partials, p);
  }
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess || p.splits == 1)
    return err;
  reduce_finish_kernel<OP, T>
      <<<blocks_for(p.n_out), kThreads, 0, stream>>>(partials, pout, p.n_out, p.splits, p.count);
  return cudaGetLastError();
}

template <typename T>
cudaError_t launch_reduce_op(int op, const void *in, void *out, const DsCudaReducePlan *plan,
                             double *partials, cudaStream_t stream)
{
  switch (op) {
  case DS_MATH_RED_SUM:
    return launch_reduce_typed<DS_MATH_RED_SUM, T>(in, out, plan, partials, stream);
  case DS_MATH_RED_MEAN:
    return launch_reduce_typed<DS_MATH_RED_MEAN, T>(in, out, plan, partials, stream);
  case DS_MATH_RED_MAX:
    return launch_reduce_typed<DS_MATH_RED_MAX, T>(in, out, plan, partials, stream);
  case DS_MATH_RED_MIN:
    return launch_reduce_typed<DS_MATH_RED_MIN, T>(in, out, plan, partials, stream);
  case DS_MATH_RED_PROD:
    return launch_reduce_typed<DS_MATH_RED_PROD, T>(in, out, plan, partials, stream);
  case DS_MATH_RED_NANSUM:
    return launch_reduce_typed<DS_MATH_RED_NANSUM, T>(in, out, plan, partials, stream);
  case DS_MATH_RED_NANPROD:
    return launch_reduce_typed<DS_MATH_RED_NANPROD, T>(in, out, plan, partials, stream);
  case DS_MATH_RED_L1:
    return launch_reduce_typed<DS_MATH_RED_L1, T>(in, out, plan, partials, stream);
  case DS_MATH_RED_L2:
    return launch_reduce_typed<DS_MATH_RED_L2, T>(in, out, plan, partials, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

/* ---- softmax, log_softmax --------------------------------------------------------------- */

/* Rows of `len` elements, `inner` apart: row (o, i) starts at o * len * inner + i. */
__device__ __forceinline__ int64_t row_start(int64_t row, int64_t len, int64_t inner)
{
  int64_t o = row / inner;
  return o * len * inner + (row - o * inner);
}

/* A block per row. The steps are the CPU's: the maximum, exp((x - max) / t) and its sum, then
 * the scaling (or, for log_softmax, (x - max) / t - log(sum)). `sign` -1 takes softmin, the
 * softmax of -x: (-x - max(-x)) / t is the CPU's (x - min) / -t exactly (negation is exact). */
__global__ void softmax_rows_kernel(const float *__restrict__ x, float *__restrict__ y,
                                    int64_t rows, int64_t len, int64_t inner, float t, bool log,
                                    float sign)
{
  __shared__ float scratch[32];
  __shared__ double dscratch[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t start = row_start(row, len, inner);
    const float *xr = x + start;
    float *yr = y + start;
    float m = neg_inf_f();
    for (int64_t k = threadIdx.x; k < len; k += blockDim.x) {
      float v = sign * xr[k * inner];
      m = v > m ? v : m;
    }
    m = block_reduce(m, MaxOp(), scratch);
    double s = 0.0;
    for (int64_t k = threadIdx.x; k < len; k += blockDim.x) {
      float e = f_exp(__fdiv_rn(sign * xr[k * inner] - m, t));
      if (!log)
        yr[k * inner] = e;
      s += e;
    }
    s = block_reduce(s, SumOp(), dscratch);
    if (log) {
      float ls = (float)::log(s);
      for (int64_t k = threadIdx.x; k < len; k += blockDim.x)
        yr[k * inner] = __fdiv_rn(sign * xr[k * inner] - m, t) - ls;
    } else {
      float inv = __fdiv_rn(1.0f, (float)s);
      for (int64_t k = threadIdx.x; k < len; k += blockDim.x) /* the thread's own writes */
        yr[k * inner] *= inv;
    }
  }
}

/* A thread per row, for rows whose neighbours are neighbours in memory (inner >= 32). */
__global__ void softmax_cols_kernel(const float *__restrict__ x, float *__restrict__ y,
                                    int64_t rows, int64_t len, int64_t inner, float t, bool log,
                                    float sign)
{
  for (int64_t row = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; row < rows;
       row += (int64_t)gridDim.x * blockDim.x) {
    const int64_t start = row_start(row, len, inner);
    const float *xr = x + start;
    float *yr = y + start;
    float m = neg_inf_f();
    for (int64_t k = 0; k < len; k++) {
      float v = sign * xr[k * inner];
      m = v > m ? v : m;
    }
    double s = 0.0;
    for (int64_t k = 0; k < len; k++) {
      float e = f_exp(__fdiv_rn(sign * xr[k * inner] - m, t));
      if (!log)
        yr[k * inner] = e;
      s += e;
    }
    if (log) {
      float ls = (float)::log(s);
      for (int64_t k = 0; k < len; k++)
        yr[k * inner] = __fdiv_rn(sign * xr[k * inner] - m, t) - ls;
    } else {
      float inv = __fdiv_rn(1.0f, (float)s);
      for (int64_t k = 0; k < len; k++)
        yr[k * inner] *= inv;
    }
  }
}

/* ---- LayerNorm, InstanceNorm, BatchNorm ------------------------------------------------- */

/* LayerNorm's statistics are two-pass, as on the CPU: mean = sum / len,
 * var = sum((x - mean)^2) / len, std = sqrt(var + eps). The sums run in double (as do
 * softmax's), so a long row, summed by one thread in the column kernels, loses nothing. */
__global__ void layer_norm_rows_kernel(const float *__restrict__ x, const float *__restrict__ gamma,
                                       const float *__restrict__ beta, float *__restrict__ y,
                                       float *__restrict__ mean_out, float *__restrict__ std_out,
                                       int64_t rows, int64_t len, int64_t inner, float eps)
{
  __shared__ double scratch[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t start = row_start(row, len, inner);
    const float *xr = x + start;
    float *yr = y + start;
    double s = 0.0;
    for (int64_t k = threadIdx.x; k < len; k += blockDim.x)
      s += xr[k * inner];
    const float mean = (float)(block_reduce(s, SumOp(), scratch) / (double)len);
    double q = 0.0;
    for (int64_t k = threadIdx.x; k < len; k += blockDim.x) {
      float d = xr[k * inner] - mean;
      q += d * d;
    }
    const float var = (float)(block_reduce(q, SumOp(), scratch) / (double)len);
    const float std = __fsqrt_rn(var + eps);
    const float rstd = __fdiv_rn(1.0f, std);
    for (int64_t k = threadIdx.x; k < len; k += blockDim.x)
      yr[k * inner] = (xr[k * inner] - mean) * rstd * gamma[k] + beta[k];
    if (threadIdx.x == 0) {
      if (mean_out != NULL)
        mean_out[row] = mean;
      if (std_out != NULL)
        std_out[row] = std;
    }
  }
}

__global__ void layer_norm_cols_kernel(const float *__restrict__ x, const float *__restrict__ gamma,
                                       const float *__restrict__ beta, float *__restrict__ y,
                                       float *__restrict__ mean_out, float *__restrict__ std_out,
                                       int64_t rows, int64_t len, int64_t inner, float eps)
{
  for (int64_t row = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; row < rows;
       row += (int64_t)gridDim.x * blockDim.x) {
    const int64_t start = row_start(row, len, inner);
    const float *xr = x + start;
    float *yr = y + start;
    double s = 0.0;
    for (int64_t k = 0; k < len; k++)
      s += xr[k * inner];
    const float mean = (float)(s / (double)len);
    double q = 0.0;
    for (int64_t k = 0; k < len; k++) {
      float d = xr[k * inner] - mean;
      q += d * d;
    }
    const float std = __fsqrt_rn((float)(q / (double)len) + eps);
    const float rstd = __fdiv_rn(1.0f, std);
    for (int64_t k = 0; k < len; k++)
      yr[k * inner] = (xr[k * inner] - mean) * rstd * gamma[k] + beta[k];
    if (mean_out != NULL)
      mean_out[row] = mean;
    if (std_out != NULL)
      std_out[row] = std;
  }
}

/* A block per plane: y = x * scale + shift with scale = gamma / sqrt(var + eps) and
 * shift = beta - mean * scale, as the CPU computes them. */
__global__ void instance_norm_kernel(const float *__restrict__ x, const float *__restrict__ gamma,
                                     const float *__restrict__ beta, float *__restrict__ y,
                                     int64_t planes, int64_t plane, int64_t channels, float eps)
{
  __shared__ double scratch[32];
  for (int64_t pl = blockIdx.x; pl < planes; pl += gridDim.x) {
    const float *xp = x + pl * plane;
    float *yp = y + pl * plane;
    const int64_t c = pl % channels;
    double s = 0.0;
    for (int64_t k = threadIdx.x; k < plane; k += blockDim.x)
      s += xp[k];
    const float mean = (float)(block_reduce(s, SumOp(), scratch) / (double)plane);
    double q = 0.0;
    for (int64_t k = threadIdx.x; k < plane; k += blockDim.x) {
      float d = xp[k] - mean;
      q += d * d;
    }
    const float var = (float)(block_reduce(q, SumOp(), scratch) / (double)plane);
    const float scale = __fdiv_rn(gamma[c], __fsqrt_rn(var + eps));
    const float shift = beta[c] - mean * scale;
    for (int64_t k = threadIdx.x; k < plane; k += blockDim.x)
      yp[k] = xp[k] * scale + shift;
  }
}

/* Each element computes its channel's scale: two correctly rounded operations that cost less
 * than a second launch would, and need no workspace. */
template <typename I>
__global__ void batch_norm_kernel(const float *__restrict__ x, const float *__restrict__ gamma,
                                  const float *__restrict__ beta, const float *__restrict__ mean,
                                  const float *__restrict__ var, float *__restrict__ y, I n,
                                  I channels, I inner, float eps, bool fix_gamma)
{
  for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x) {
    I c = (i / inner) % channels;
    float g = fix_gamma ? 1.0f : gamma[c];
    float scale = __fdiv_rn(g, __fsqrt_rn(var[c] + eps));
    y[i] = (x[i] - mean[c]) * scale + beta[c];
  }
}

} // namespace

/* ---- the C launchers ---------------------------------------------------------------------- */

extern "C" cudaError_t ds_cuda_launch_reduce(int op, DsDType t, const void *in, void *out,
                                             const DsCudaReducePlan *plan, double *partials,
                                             cudaStream_t stream)
{
  if (plan->n_out < 1)
    return cudaSuccess;
  switch (t) {
  case DS_DTYPE_FLOAT32:
    return launch_reduce_op<float>(op, in, out, plan, partials, stream);
  case DS_DTYPE_FLOAT64:
    return launch_reduce_op<double>(op, in, out, plan, partials, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t ds_cuda_launch_softmax_f32(const float *x, float *y, int64_t outer,
                                                  int64_t len, int64_t inner, float temperature,
                                                  bool log, bool negate, cudaStream_t stream)
{
  const float sign = negate ? -1.0f : 1.0f;
  int64_t rows = outer * inner;
  if (rows == 0 || len == 0)
    return cudaSuccess;
  if (inner >= 32)
    softmax_cols_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(x, y, rows, len, inner,
                                                                   temperature, log, sign);
  else
    softmax_rows_kernel<<<grid_for(rows), row_threads(len), 0, stream>>>(x, y, rows, len, inner,
                                                                         temperature, log, sign);
  return cudaGetLastError();
}

extern "C" cudaError_t ds_cuda_launch_layer_norm_f32(const float *x, const float *gamma,
                                                     const float *beta, float *y, float *mean,
                                                     float *std, int64_t outer, int64_t len,
                                                     int64_t inner, float eps, cudaStream_t stream)
{
  int64_t rows = outer * inner;
  if (rows == 0 || len == 0)
    return cudaSuccess;
  if (inner >= 32)
    layer_norm_cols_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(x, gamma, beta, y, mean, std,
                                                                      rows, len, inner, eps);
  else
    layer_norm_rows_kernel<<<grid_for(rows), row_threads(len), 0, stream>>>(
        x, gamma, beta, y, mean, std, rows, len, inner, eps);
  return cudaGetLastError();
}

extern "C" cudaError_t ds_cuda_launch_batch_norm_f32(const float *x, const float *gamma,
                                                     const float *beta, const float *mean,
                                                     const float *var, float *y, int64_t n,
                                                     int64_t channels, int64_t inner, float eps,
                                                     bool fix_gamma, cudaStream_t stream)
{
  if (n == 0)
    return cudaSuccess;
  if (channels < 1 || inner < 1)
    return cudaErrorInvalidValue;
  if (n < ((int64_t)1 << 31))
    batch_norm_kernel<uint32_t><<<blocks_for(n), kThreads, 0, stream>>>(
        x, gamma, beta, mean, var, y, (uint32_t)n, (uint32_t)channels, (uint32_t)inner, eps,
        fix_gamma);
  else
    batch_norm_kernel<int64_t><<<blocks_for(n), kThreads, 0, stream>>>(
        x, gamma, beta, mean, var, y, n, channels, inner, eps, fix_gamma);
  return cudaGetLastError();
}

extern "C" cudaError_t ds_cuda_launch_instance_norm_f32(const float *x, const float *gamma,
                                                        const float *beta, float *y, int64_t planes,
                                                        int64_t plane, int64_t channels, float eps,
                                                        cudaStream_t stream)
{
  if (planes == 0 || plane == 0)
    return cudaSuccess;
  if (channels < 1)
    return cudaErrorInvalidValue;
  instance_norm_kernel<<<grid_for(planes), row_threads(plane), 0, stream>>>(
      x, gamma, beta, y, planes, plane, channels, eps);
  return cudaGetLastError();
}
