/* ds-cuda-elemwise.cu: device code of the elementwise, broadcast and scalar kernels.
 *
 * Every kernel is a grid-stride loop over output elements. Broadcast operands are addressed
 * through a DsCudaBcast plan (an odometer over at most DS_CUDA_MAX_DIMS output dims); outputs
 * under 2^31 elements index in 32 bits, where the divisions of that odometer are several times
 * cheaper than 64-bit ones.
 *
 * Accuracy: the build uses --use_fast_math, which replaces expf, logf, sinf, powf... with
 * hardware approximations (errors of several ulp, growing with the argument) and float
 * division and sqrt with approximate ones. The CPU kernels these are compared against are
 * within an ulp or two of the correctly rounded result, so here the transcendental functions
 * run in double precision (which fast math leaves alone) and round once to float, and float
 * division and square root use the correctly rounded intrinsics. The kernels are memory-bound:
 * the double arithmetic costs no visible time on the GPUs we build for (sm_80, sm_90).
 */
#include "ds-cuda-elemwise-launch.h"

#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

namespace
{

constexpr int kThreads = 256;

/* Blocks of kThreads for n elements, capped (the grid-stride loops cover the rest). The cap
 * also keeps i + stride below 2^32 for the 32-bit loops, whose n is below 2^31. */
unsigned blocks_for(int64_t n)
{
  int64_t b = (n + kThreads - 1) / kThreads;
  return (unsigned)(b < 1 ? 1 : b > 65535 * 8 ? 65535 * 8 : b);
}

/* ---- float math (see the header comment) ----------------------------------------------- */

__device__ __forceinline__ float fdiv(float x, float y)
{
  return __fdiv_rn(x, y);
}
__device__ __forceinline__ double fdiv(double x, double y)
{
  return x / y;
}

/* core/ds-math-unary.h's primitives for float32: the transcendental functions in double,
 * rounded once; division and square root correctly rounded. */
__device__ __forceinline__ float d_exp(float x)
{
  return (float)exp((double)x);
}

/* MXNet's softrelu: x itself above 20, log(1 + e^x) below. */
__device__ __forceinline__ float d_softrelu(float x)
{
  return x > 20.0f ? x : (float)log1p(exp((double)x));
}

#define DS_M_DIV(p, q)  fdiv(p, q)
#define DS_M_EXP(v)     d_exp(v)
#define DS_M_EXPM1(v)   ((float)expm1((double)(v)))
#define DS_M_LOG(v)     ((float)log((double)(v)))
#define DS_M_LOG1P(v)   ((float)log1p((double)(v)))
#define DS_M_LOG2(v)    ((float)log2((double)(v)))
#define DS_M_LOG10(v)   ((float)log10((double)(v)))
#define DS_M_CBRT(v)    ((float)cbrt((double)(v)))
#define DS_M_TRUNC(v)   truncf(v)
#define DS_M_ROUND(v)   roundf(v)
#define DS_M_SQRT(v)    __fsqrt_rn(v)
#define DS_M_TANH(v)    ((float)tanh((double)(v)))
#define DS_M_ERF(v)     ((float)erf((double)(v)))
#define DS_M_FABS(v)    fabsf(v)
#define DS_M_FLOOR(v)   floorf(v)
#define DS_M_CEIL(v)    ceilf(v)
#define DS_M_RINT(v)    rintf(v)
#define DS_M_SIN(v)     ((float)sin((double)(v)))
#define DS_M_COS(v)     ((float)cos((double)(v)))
#define DS_M_TAN(v)     ((float)tan((double)(v)))
#define DS_M_ASIN(v)    ((float)asin((double)(v)))
#define DS_M_ACOS(v)    ((float)acos((double)(v)))
#define DS_M_ATAN(v)    ((float)atan((double)(v)))
#define DS_M_SINH(v)    ((float)sinh((double)(v)))
#define DS_M_COSH(v)    ((float)cosh((double)(v)))
#define DS_M_ASINH(v)   ((float)asinh((double)(v)))
#define DS_M_ACOSH(v)   ((float)acosh((double)(v)))
#define DS_M_ATANH(v)   ((float)atanh((double)(v)))
#define DS_M_SIGMOID(v) ((float)(1.0 / (1.0 + exp(-(double)(v)))))
#define DS_M_SOFTRELU(v) d_softrelu(v)

/* Each function of the table as a device function unary_apply<FN>. */
template <int FN> __device__ __forceinline__ float unary_apply(float x, float a, float b);

#define UNARY_APPLY(ID, COST, COEF, EXPR)                                                          \
  template <>                                                                                      \
  __device__ __forceinline__ float unary_apply<DS_MATH_UN_##ID>(float x, float a, float b)         \
  {                                                                                                \
    using T = float;                                                                               \
    (void)a;                                                                                       \
    (void)b;                                                                                       \
    return (EXPR);                                                                                 \
  }
DS_MATH_UNARY(UNARY_APPLY)
DS_MATH_ACTIVATION(UNARY_APPLY)
#undef UNARY_APPLY

template <int OP>
__global__ void unary_kernel(const float *__restrict__ x, float *__restrict__ y, int64_t n, float a,
                             float b)
{
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    y[i] = unary_apply<OP>(x[i], a, b);
}

template <typename I>
__global__ void prelu_kernel(const float *__restrict__ x, const float *__restrict__ gamma,
                             float *__restrict__ y, I n, I channels, I inner)
{
  for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x) {
    float v = x[i];
    y[i] = v > 0.0f ? v : v * gamma[(i / inner) % channels];
  }
}

/* ---- binary operations ------------------------------------------------------------------ */

template <typename T> constexpr bool is_int_v = std::is_integral<T>::value;

/* Integer adds, subtracts and multiplies wrap (through unsigned arithmetic, which C++ defines),
 * as the CPU kernels do. */
template <typename T> __device__ __forceinline__ T wrap_add(T x, T y)
{
  if constexpr (is_int_v<T>) {
    using U = typename std::make_unsigned<T>::type;
    return (T)((U)x + (U)y);
  } else {
    return x + y;
  }
}

template <typename T> __device__ __forceinline__ T wrap_sub(T x, T y)
{
  if constexpr (is_int_v<T>) {
    using U = typename std::make_unsigned<T>::type;
    return (T)((U)x - (U)y);
  } else {
    return x - y;
  }
}

template <typename T> __device__ __forceinline__ T wrap_mul(T x, T y)
{
  if constexpr (is_int_v<T>) {
    using U = typename std::make_unsigned<T>::type;
    return (T)((U)x * (U)y);
  } else {
    return x * y;
  }
}

/* The square that normalisation layers ask for is one multiply, as on the CPU (and exact);
 * other powers go through double. */
__device__ __forceinline__ float pow_t(float x, float y)
{
  return y == 2.0f ? x * x : (float)pow((double)x, (double)y);
}
__device__ __forceinline__ double pow_t(double x, double y)
{
  return y == 2.0 ? x * x : pow(x, y);
}

__device__ __forceinline__ float fmod_t(float x, float y)
{
  return fmodf(x, y);
}
__device__ __forceinline__ double fmod_t(double x, double y)
{
  return fmod(x, y);
}

__device__ __forceinline__ float hypot_t(float x, float y)
{
  return hypotf(x, y);
}
__device__ __forceinline__ double hypot_t(double x, double y)
{
  return hypot(x, y);
}

/* Python's modulo: the result takes the divisor's sign. */
template <typename T> __device__ __forceinline__ T mod_t(T x, T y)
{
  T r = fmod_t(x, y);
  return (r != (T)0 && ((r < (T)0) != (y < (T)0))) ? r + y : r;
}

/* Integer shifts (NumPy's rule: a count outside the width gives 0, or -1 for a negative number
 * shifted right), as the CPU's. No launcher asks for them yet. */
template <typename T> __device__ __forceinline__ T shl_t(T x, T y)
{
  static_assert(is_int_v<T>, "shifts are for integers");
  using U = typename std::make_unsigned<T>::type;
  return (y < 0 || y >= (T)(8 * sizeof(T))) ? (T)0 : (T)((U)x << y);
}

template <typename T> __device__ __forceinline__ T shr_t(T x, T y)
{
  static_assert(is_int_v<T>, "shifts are for integers");
  return (y < 0 || y >= (T)(8 * sizeof(T))) ? (x < 0 ? (T)-1 : (T)0) : (T)(x >> y);
}

/* Integer bitwise and, or and xor. No launcher asks for them yet. */
template <typename T> __device__ __forceinline__ T bitand_t(T x, T y)
{
  static_assert(is_int_v<T>, "bitwise ops are for integers");
  return (T)(x & y);
}

template <typename T> __device__ __forceinline__ T bitor_t(T x, T y)
{
  static_assert(is_int_v<T>, "bitwise ops are for integers");
  return (T)(x | y);
}

template <typename T> __device__ __forceinline__ T bitxor_t(T x, T y)
{
  static_assert(is_int_v<T>, "bitwise ops are for integers");
  return (T)(x ^ y);
}

/* core/ds-math-binary.h's primitives (DS_M_DIV is the unary table's fdiv). */
#define DS_M_ADD  wrap_add
#define DS_M_SUB  wrap_sub
#define DS_M_MUL  wrap_mul
#define DS_M_POW  pow_t
#define DS_M_MOD  mod_t
#define DS_M_FMOD fmod_t
#define DS_M_SHL  shl_t
#define DS_M_SHR  shr_t
#define DS_M_BITAND bitand_t
#define DS_M_BITOR  bitor_t
#define DS_M_BITXOR bitxor_t
#define DS_M_HYPOT  hypot_t

/* Whether `op` gives a truth value (the table's TRUTH kind). */
#define TRUTH_CASE(ID, KIND, EXPR) (DS_MATH_KIND_##KIND && op == DS_MATH_BIN_##ID) ||
__host__ __device__ constexpr bool is_truth_op(int op)
{
  return DS_MATH_BINARY(TRUTH_CASE) false;
}
#undef TRUTH_CASE

/* Each function of the table: a value of T, or a truth value. */
template <int OP, typename T> __device__ __forceinline__ auto bin_apply(T x, T y)
{
#define BIN_CASE(ID, KIND, EXPR)                                                                   \
  if constexpr (OP == DS_MATH_BIN_##ID) {                                                          \
    return (EXPR);                                                                                 \
  } else
  DS_MATH_BINARY(BIN_CASE)
  {
    static_assert(OP < 0, "a binary op without a formula");
  }
#undef BIN_CASE
}

template <int OP, typename T, typename O> __device__ __forceinline__ O bin_eval(T x, T y)
{
  if constexpr (is_truth_op(OP))
    return bin_apply<OP, T>(x, y) ? (O)1 : (O)0;
  else
    return (O)bin_apply<OP, T>(x, y);
}

/* Offsets of output element i in the first K operands of the plan. The outermost dim needs no
 * division; the loop is unrolled so the plan is read from fixed parameter slots. */
template <int K, typename I>
__device__ __forceinline__ void plan_offsets(const DsCudaBcast &p, I i, I (&off)[K])
{
#pragma unroll
  for (int k = 0; k < K; k++)
    off[k] = 0;
  I rest = i;
#pragma unroll
  for (int d = DS_CUDA_MAX_DIMS - 1; d >= 1; d--) {
    if (d < p.ndim) {
      I len = (I)p.shape[d];
      I c = rest % len;
      rest /= len;
#pragma unroll
      for (int k = 0; k < K; k++)
        off[k] += c * (I)p.stride[k][d];
    }
  }
#pragma unroll
  for (int k = 0; k < K; k++)
    off[k] += rest * (I)p.stride[k][0];
}

template <int OP, typename T, typename O>
__global__ void binary_kernel(const T *__restrict__ a, const T *__restrict__ b, O *__restrict__ out,
                              uint32_t n, DsCudaBcast plan)
{
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    uint32_t off[2];
    plan_offsets<2, uint32_t>(plan, i, off);
    out[i] = bin_eval<OP, T, O>(a[off[0]], b[off[1]]);
  }
}

/* The op chosen at run time, for the 64-bit kernel below. Every case compiles for every type
 * pair; the launchers only ask for the pairs each op supports. */
template <typename T, typename O> __device__ __forceinline__ O bin_eval_any(int op, T x, T y)
{
#define ANY_CASE(OP)                                                                               \
  case OP:                                                                                         \
    return bin_eval<OP, T, O>(x, y);
  switch (op) {
    ANY_CASE(DS_MATH_BIN_ADD)
    ANY_CASE(DS_MATH_BIN_SUB)
    ANY_CASE(DS_MATH_BIN_MUL)
    ANY_CASE(DS_MATH_BIN_MAX)
    ANY_CASE(DS_MATH_BIN_MIN)
    ANY_CASE(DS_MATH_BIN_EQ)
    ANY_CASE(DS_MATH_BIN_NE)
    ANY_CASE(DS_MATH_BIN_GT)
    ANY_CASE(DS_MATH_BIN_GE)
    ANY_CASE(DS_MATH_BIN_LT)
    ANY_CASE(DS_MATH_BIN_LE)
    ANY_CASE(DS_MATH_BIN_AND)
    ANY_CASE(DS_MATH_BIN_OR)
    ANY_CASE(DS_MATH_BIN_XOR)
  default:
    break;
  }
  if constexpr (!is_int_v<T>) {
    switch (op) {
      ANY_CASE(DS_MATH_BIN_DIV)
      ANY_CASE(DS_MATH_BIN_POW)
      ANY_CASE(DS_MATH_BIN_MOD)
      ANY_CASE(DS_MATH_BIN_FMOD)
      ANY_CASE(DS_MATH_BIN_PRELU)
      ANY_CASE(DS_MATH_BIN_HYPOT)
    default:
      break;
    }
  }
#undef ANY_CASE
  return (O)0;
}

/* Outputs of 2^31 elements or more: 64-bit indices, and one kernel per type pair (the op a
 * parameter) rather than one per op, since such tensors are rare and the per-op kernels
 * already make this file slow to compile. */
template <typename T, typename O>
__global__ void binary_kernel_wide(int op, const T *__restrict__ a, const T *__restrict__ b,
                                   O *__restrict__ out, int64_t n, DsCudaBcast plan)
{
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t off[2];
    plan_offsets<2, int64_t>(plan, i, off);
    out[i] = bin_eval_any<T, O>(op, a[off[0]], b[off[1]]);
  }
}

template <int OP, typename T, typename O>
cudaError_t launch_binary_typed(const void *a, const void *b, void *out, int64_t n,
                                const DsCudaBcast *plan, cudaStream_t stream)
{
  const T *pa = static_cast<const T *>(a);
  const T *pb = static_cast<const T *>(b);
  O *po = static_cast<O *>(out);
  if (n < ((int64_t)1 << 31))
    binary_kernel<OP, T, O><<<blocks_for(n), kThreads, 0, stream>>>(pa, pb, po, (uint32_t)n, *plan);
  else
    binary_kernel_wide<T, O><<<blocks_for(n), kThreads, 0, stream>>>(OP, pa, pb, po, n, *plan);
  return cudaGetLastError();
}

/* Same-dtype ops in `T` (the output too). */
template <typename T>
cudaError_t launch_binary_same(int op, const void *a, const void *b, void *out, int64_t n,
                               const DsCudaBcast *plan, cudaStream_t stream)
{
#define SAME_CASE(OP)                                                                              \
  case OP:                                                                                         \
    return launch_binary_typed<OP, T, T>(a, b, out, n, plan, stream);
  /* Every type has the exact ops; floats also the rest. */
  switch (op) {
    SAME_CASE(DS_MATH_BIN_ADD)
    SAME_CASE(DS_MATH_BIN_SUB)
    SAME_CASE(DS_MATH_BIN_MUL)
    SAME_CASE(DS_MATH_BIN_MAX)
    SAME_CASE(DS_MATH_BIN_MIN)
    SAME_CASE(DS_MATH_BIN_EQ)
    SAME_CASE(DS_MATH_BIN_NE)
    SAME_CASE(DS_MATH_BIN_GT)
    SAME_CASE(DS_MATH_BIN_GE)
    SAME_CASE(DS_MATH_BIN_LT)
    SAME_CASE(DS_MATH_BIN_LE)
    SAME_CASE(DS_MATH_BIN_AND)
    SAME_CASE(DS_MATH_BIN_OR)
    SAME_CASE(DS_MATH_BIN_XOR)
  default:
    break;
  }
  if constexpr (!is_int_v<T>) {
    switch (op) {
      SAME_CASE(DS_MATH_BIN_DIV)
      SAME_CASE(DS_MATH_BIN_POW)
      SAME_CASE(DS_MATH_BIN_MOD)
      SAME_CASE(DS_MATH_BIN_FMOD)
      SAME_CASE(DS_MATH_BIN_PRELU)
      SAME_CASE(DS_MATH_BIN_HYPOT)
    default:
      break;
    }
  }
#undef SAME_CASE
  return cudaErrorInvalidValue;
}

/* bool operands: the logical ops only (other ops would see bytes, not truth values). */
cudaError_t launch_binary_bool(int op, const void *a, const void *b, void *out, int64_t n,
                               const DsCudaBcast *plan, cudaStream_t stream)
{
  switch (op) {
  case DS_MATH_BIN_AND:
    return launch_binary_typed<DS_MATH_BIN_AND, uint8_t, uint8_t>(a, b, out, n, plan, stream);
  case DS_MATH_BIN_OR:
    return launch_binary_typed<DS_MATH_BIN_OR, uint8_t, uint8_t>(a, b, out, n, plan, stream);
  case DS_MATH_BIN_XOR:
    return launch_binary_typed<DS_MATH_BIN_XOR, uint8_t, uint8_t>(a, b, out, n, plan, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

/* NumPy's comparisons: operands of type T, a bool result. */
template <typename T>
cudaError_t launch_compare_bool(int op, const void *a, const void *b, void *out, int64_t n,
                                const DsCudaBcast *plan, cudaStream_t stream)
{
#define CMP_CASE(OP)                                                                               \
  case OP:                                                                                         \
    return launch_binary_typed<OP, T, uint8_t>(a, b, out, n, plan, stream);
  switch (op) {
    CMP_CASE(DS_MATH_BIN_EQ)
    CMP_CASE(DS_MATH_BIN_NE)
    CMP_CASE(DS_MATH_BIN_GT)
    CMP_CASE(DS_MATH_BIN_GE)
    CMP_CASE(DS_MATH_BIN_LT)
    CMP_CASE(DS_MATH_BIN_LE)
  default:
    return cudaErrorInvalidValue;
  }
#undef CMP_CASE
}

/* ---- scalar operations ------------------------------------------------------------------ */

template <int OP, typename T>
__global__ void scalar_kernel(const T *__restrict__ x, T s, bool reverse, T *__restrict__ out,
                              int64_t n)
{
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    T v = x[i];
    out[i] = reverse ? bin_eval<OP, T, T>(s, v) : bin_eval<OP, T, T>(v, s);
  }
}

/* x (op) s for one function of the table; the shifts and bitwise ops are for integers, which
 * no scalar op here takes. */
template <int OP, typename T>
cudaError_t launch_scalar_op(const T *px, T sv, bool reverse, T *po, int64_t n,
                             cudaStream_t stream)
{
  if constexpr (OP == DS_MATH_BIN_SHL || OP == DS_MATH_BIN_SHR || OP == DS_MATH_BIN_BITAND ||
                OP == DS_MATH_BIN_BITOR || OP == DS_MATH_BIN_BITXOR) {
    return cudaErrorInvalidValue;
  } else {
    scalar_kernel<OP, T><<<blocks_for(n), kThreads, 0, stream>>>(px, sv, reverse, po, n);
    return cudaGetLastError();
  }
}

template <typename T>
cudaError_t launch_scalar_typed(int op, const void *x, double s, bool reverse, void *out, int64_t n,
                                cudaStream_t stream)
{
  const T *px = static_cast<const T *>(x);
  T *po = static_cast<T *>(out);
  T sv = (T)s;
#define SCALAR_CASE(ID, KIND, EXPR)                                                                \
  case DS_MATH_BIN_##ID:                                                                           \
    return launch_scalar_op<DS_MATH_BIN_##ID, T>(px, sv, reverse, po, n, stream);
  switch (op) {
    DS_MATH_BINARY(SCALAR_CASE)
  default:
    return cudaErrorInvalidValue;
  }
#undef SCALAR_CASE
}

/* ---- where ------------------------------------------------------------------------------ */

/* Whether element i of a condition of dtype `t` is nonzero (NaN counts as true). The switch is
 * the same for every thread, so it costs a few instructions, not divergence. */
__device__ __forceinline__ bool cond_at(const void *c, int t, int64_t i)
{
  switch (t) {
  case DS_DTYPE_FLOAT32:
    return static_cast<const float *>(c)[i] != 0.0f;
  case DS_DTYPE_FLOAT64:
    return static_cast<const double *>(c)[i] != 0.0;
  case DS_DTYPE_INT32:
    return static_cast<const int32_t *>(c)[i] != 0;
  case DS_DTYPE_INT64:
    return static_cast<const int64_t *>(c)[i] != 0;
  default: /* uint8, int8, bool: a byte */
    return static_cast<const uint8_t *>(c)[i] != 0;
  }
}

template <typename E, typename I>
__global__ void select_kernel(const void *__restrict__ cond, int t_cond, const E *__restrict__ x,
                              const E *__restrict__ y, E *__restrict__ out, I n, DsCudaBcast plan)
{
  for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x) {
    I off[3];
    plan_offsets<3, I>(plan, i, off);
    out[i] = cond_at(cond, t_cond, (int64_t)off[0]) ? x[off[1]] : y[off[2]];
  }
}

template <typename E>
cudaError_t launch_select_typed(DsDType t_cond, const void *cond, const void *x, const void *y,
                                void *out, int64_t n, const DsCudaBcast *plan, cudaStream_t stream)
{
  const E *px = static_cast<const E *>(x);
  const E *py = static_cast<const E *>(y);
  E *po = static_cast<E *>(out);
  if (n < ((int64_t)1 << 31))
    select_kernel<E, uint32_t>
        <<<blocks_for(n), kThreads, 0, stream>>>(cond, (int)t_cond, px, py, po, (uint32_t)n, *plan);
  else
    select_kernel<E, int64_t>
        <<<blocks_for(n), kThreads, 0, stream>>>(cond, (int)t_cond, px, py, po, n, *plan);
  return cudaGetLastError();
}

/* ---- add_n ------------------------------------------------------------------------------ */

/* Inputs summed by one launch; more take further launches that add onto the output. */
constexpr int kAddNBatch = 16;

template <typename T> struct AddNBatch {
  const T *in[kAddNBatch];
};

/* out = in[0] + in[1] + ..., or out + in[0] + ... when `accumulate`, left to right. */
template <typename T>
__global__ void add_n_kernel(AddNBatch<T> batch, int count, bool accumulate, T *out, int64_t n)
{
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    T acc = accumulate ? out[i] : batch.in[0][i];
    const int first = accumulate ? 0 : 1;
    /* Unrolled with fixed indices, so the pointers stay in parameter space rather than being
     * copied to local memory for a computed index. */
#pragma unroll
    for (int k = 0; k < kAddNBatch; k++)
      if (k >= first && k < count)
        acc += batch.in[k][i];
    out[i] = acc;
  }
}

template <typename T>
cudaError_t launch_add_n_typed(const void *const *inputs, int n_inputs, bool accumulate, void *out,
                               int64_t n, cudaStream_t stream)
{
  for (int first = 0; first < n_inputs; first += kAddNBatch) {
    AddNBatch<T> batch = {};
    int count = n_inputs - first < kAddNBatch ? n_inputs - first : kAddNBatch;
    for (int k = 0; k < count; k++)
      batch.in[k] = static_cast<const T *>(inputs[first + k]);
    add_n_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(batch, count, accumulate || first > 0,
                                                            static_cast<T *>(out), n);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess)
      return err;
  }
  return cudaSuccess;
}

/* ---- predicates, fills ------------------------------------------------------------------ */

/* +infinity from its bits: INFINITY's spelling differs between host compilers. */
__device__ __forceinline__ void set_inf(float &v)
{
  v = __int_as_float(0x7f800000);
}
__device__ __forceinline__ void set_inf(double &v)
{
  v = __longlong_as_double(0x7ff0000000000000LL);
}

template <int PRED, typename T>
__global__ void predicate_kernel(const T *__restrict__ x, uint8_t *__restrict__ out, int64_t n)
{
  T inf;
  set_inf(inf);
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    T v = x[i];
    bool r;
    if constexpr (PRED == DS_CUDA_PRED_NAN)
      r = v != v;
    else if constexpr (PRED == DS_CUDA_PRED_INF)
      r = v == inf || v == -inf;
    else if constexpr (PRED == DS_CUDA_PRED_POSINF)
      r = v == inf;
    else
      r = v == -inf;
    out[i] = r ? 1 : 0;
  }
}

template <typename T>
cudaError_t launch_predicate_typed(int pred, const void *x, uint8_t *out, int64_t n,
                                   cudaStream_t stream)
{
  const T *px = static_cast<const T *>(x);
  unsigned blocks = blocks_for(n);
  switch (pred) {
  case DS_CUDA_PRED_NAN:
    predicate_kernel<DS_CUDA_PRED_NAN, T><<<blocks, kThreads, 0, stream>>>(px, out, n);
    break;
  case DS_CUDA_PRED_INF:
    predicate_kernel<DS_CUDA_PRED_INF, T><<<blocks, kThreads, 0, stream>>>(px, out, n);
    break;
  case DS_CUDA_PRED_POSINF:
    predicate_kernel<DS_CUDA_PRED_POSINF, T><<<blocks, kThreads, 0, stream>>>(px, out, n);
    break;
  case DS_CUDA_PRED_NEGINF:
    predicate_kernel<DS_CUDA_PRED_NEGINF, T><<<blocks, kThreads, 0, stream>>>(px, out, n);
    break;
  default:
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

template <typename E> __global__ void fill_kernel(E *__restrict__ out, E value, int64_t n)
{
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    out[i] = value;
}

template <typename E>
cudaError_t launch_fill_typed(void *out, uint64_t cell, int64_t n, cudaStream_t stream)
{
  fill_kernel<E><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<E *>(out), (E)cell, n);
  return cudaGetLastError();
}

} // namespace

/* ---- the C launchers ---------------------------------------------------------------------- */

extern "C" cudaError_t ds_cuda_launch_unary_f32(DsMathUnaryFn fn, const float *x, float *y,
                                                int64_t n, float a, float b, cudaStream_t stream)
{
  unsigned blocks = blocks_for(n);
#define UNARY_CASE(ID, COST, COEF, EXPR)                                                           \
  case DS_MATH_UN_##ID:                                                                            \
    unary_kernel<DS_MATH_UN_##ID><<<blocks, kThreads, 0, stream>>>(x, y, n, a, b);                 \
    break;
  switch (fn) {
    DS_MATH_UNARY(UNARY_CASE)
    DS_MATH_ACTIVATION(UNARY_CASE)
  default:
    return cudaErrorInvalidValue;
  }
#undef UNARY_CASE
  return cudaGetLastError();
}

extern "C" cudaError_t ds_cuda_launch_prelu_f32(const float *x, const float *gamma, float *y,
                                                int64_t n, int64_t channels, int64_t inner,
                                                cudaStream_t stream)
{
  if (channels < 1 || inner < 1)
    return cudaErrorInvalidValue;
  if (n < ((int64_t)1 << 31))
    prelu_kernel<uint32_t><<<blocks_for(n), kThreads, 0, stream>>>(
        x, gamma, y, (uint32_t)n, (uint32_t)channels, (uint32_t)inner);
  else
    prelu_kernel<int64_t><<<blocks_for(n), kThreads, 0, stream>>>(x, gamma, y, n, channels, inner);
  return cudaGetLastError();
}

extern "C" cudaError_t ds_cuda_launch_binary(int op, DsDType t, DsDType t_out, const void *a,
                                             const void *b, void *out, int64_t n,
                                             const DsCudaBcast *plan, cudaStream_t stream)
{
  /* A comparison with a bool result compares the operands in their own type (bool as its
   * bytes, as the CPU does). */
  if (t_out == DS_DTYPE_BOOL && ds_math_binary_is_compare(op)) {
    switch (t) {
    case DS_DTYPE_FLOAT32:
      return launch_compare_bool<float>(op, a, b, out, n, plan, stream);
    case DS_DTYPE_FLOAT64:
      return launch_compare_bool<double>(op, a, b, out, n, plan, stream);
    case DS_DTYPE_INT32:
      return launch_compare_bool<int32_t>(op, a, b, out, n, plan, stream);
    case DS_DTYPE_INT64:
      return launch_compare_bool<int64_t>(op, a, b, out, n, plan, stream);
    case DS_DTYPE_INT8:
      return launch_compare_bool<int8_t>(op, a, b, out, n, plan, stream);
    case DS_DTYPE_UINT8:
    case DS_DTYPE_BOOL:
      return launch_compare_bool<uint8_t>(op, a, b, out, n, plan, stream);
    default:
      return cudaErrorInvalidValue;
    }
  }
  if (t != t_out)
    return cudaErrorInvalidValue;
  switch (t) {
  case DS_DTYPE_FLOAT32:
    return launch_binary_same<float>(op, a, b, out, n, plan, stream);
  case DS_DTYPE_FLOAT64:
    return launch_binary_same<double>(op, a, b, out, n, plan, stream);
  case DS_DTYPE_INT32:
    return launch_binary_same<int32_t>(op, a, b, out, n, plan, stream);
  case DS_DTYPE_INT64:
    return launch_binary_same<int64_t>(op, a, b, out, n, plan, stream);
  case DS_DTYPE_BOOL:
    return launch_binary_bool(op, a, b, out, n, plan, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t ds_cuda_launch_scalar(int op, DsDType t, const void *x, double s,
                                             bool reverse, void *out, int64_t n,
                                             cudaStream_t stream)
{
  switch (t) {
  case DS_DTYPE_FLOAT32:
    return launch_scalar_typed<float>(op, x, s, reverse, out, n, stream);
  case DS_DTYPE_FLOAT64:
    return launch_scalar_typed<double>(op, x, s, reverse, out, n, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t ds_cuda_launch_select(DsDType t_cond, const void *cond, const void *x,
                                             const void *y, void *out, size_t elem_size, int64_t n,
                                             const DsCudaBcast *plan, cudaStream_t stream)
{
  switch (elem_size) {
  case 1:
    return launch_select_typed<uint8_t>(t_cond, cond, x, y, out, n, plan, stream);
  case 2:
    return launch_select_typed<uint16_t>(t_cond, cond, x, y, out, n, plan, stream);
  case 4:
    return launch_select_typed<uint32_t>(t_cond, cond, x, y, out, n, plan, stream);
  case 8:
    return launch_select_typed<uint64_t>(t_cond, cond, x, y, out, n, plan, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t ds_cuda_launch_add_n(DsDType t, const void *const *inputs, int n_inputs,
                                            bool accumulate, void *out, int64_t n,
                                            cudaStream_t stream)
{
  if (n_inputs < 1)
    return cudaErrorInvalidValue;
  switch (t) {
  case DS_DTYPE_FLOAT32:
    return launch_add_n_typed<float>(inputs, n_inputs, accumulate, out, n, stream);
  case DS_DTYPE_FLOAT64:
    return launch_add_n_typed<double>(inputs, n_inputs, accumulate, out, n, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t ds_cuda_launch_predicate(int pred, DsDType t, const void *x, uint8_t *out,
                                                int64_t n, cudaStream_t stream)
{
  switch (t) {
  case DS_DTYPE_FLOAT32:
    return launch_predicate_typed<float>(pred, x, out, n, stream);
  case DS_DTYPE_FLOAT64:
    return launch_predicate_typed<double>(pred, x, out, n, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t ds_cuda_launch_fill(void *out, size_t elem_size, uint64_t cell, int64_t n,
                                           cudaStream_t stream)
{
  switch (elem_size) {
  case 1:
    return launch_fill_typed<uint8_t>(out, cell, n, stream);
  case 2:
    return launch_fill_typed<uint16_t>(out, cell, n, stream);
  case 4:
    return launch_fill_typed<uint32_t>(out, cell, n, stream);
  case 8:
    return launch_fill_typed<uint64_t>(out, cell, n, stream);
  default:
    return cudaErrorInvalidValue;
  }
}
