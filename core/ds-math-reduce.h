/* ds-math-reduce.h: what every reduction computes, written once for every backend.
 *
 * Each entry is X(ID, INTS, IDENTITY, FOLD, MERGE, FINISH), expressions in the accumulator `a`
 * (of the accumulating type `T` the instantiating code gives), an element `v`, a second
 * accumulator `b`, the element count `n` and log_sum_exp's shift `s` (the maximum, so that no
 * term overflows), over the DS_M_* primitives:
 *   IDENTITY  what the accumulator starts from (and what a reduction of nothing finishes)
 *   FOLD      the accumulator with element v joined
 *   MERGE     two partial accumulators joined (lanes, threads, blocks: a fixed order)
 *   FINISH    the result from the accumulator over n elements
 * INTS is EXACT where integer data accumulates in integers (wrapping as the hardware does),
 * NONE where it accumulates in floating point whatever the data (the norms and logarithms).
 *
 * Primitives: DS_M_ADD, DS_M_MUL (integers wrap), DS_M_DIV (an integer division by 0 gives 0),
 * DS_M_ABS, DS_M_LOWEST, DS_M_HIGHEST (-inf and +inf, or the integer type's extremes), DS_M_SQRT,
 * DS_M_LOG, DS_M_EXP, DS_M_ISFINITE.
 *
 * Header only, valid C and C++. The extremes propagate NaN, as NumPy's do.
 */
#pragma once

#define DS_MATH_REDUCE(X)                                                                          \
  X(SUM, EXACT, (T)0, DS_M_ADD(a, v), DS_M_ADD(a, b), a)                                           \
  X(MEAN, EXACT, (T)0, DS_M_ADD(a, v), DS_M_ADD(a, b), DS_M_DIV(a, (T)n))                          \
  X(MAX, EXACT, DS_M_LOWEST, (v > a || v != v) ? v : a, (b > a || b != b) ? b : a, a)              \
  X(MIN, EXACT, DS_M_HIGHEST, (v < a || v != v) ? v : a, (b < a || b != b) ? b : a, a)             \
  X(PROD, EXACT, (T)1, DS_M_MUL(a, v), DS_M_MUL(a, b), a)                                          \
  /* MXNet's nansum and nanprod: a NaN element counts as the identity (never in integers) */       \
  X(NANSUM, EXACT, (T)0, v != v ? a : DS_M_ADD(a, v), DS_M_ADD(a, b), a)                           \
  X(NANPROD, EXACT, (T)1, v != v ? a : DS_M_MUL(a, v), DS_M_MUL(a, b), a)                          \
  X(SUMSQ, EXACT, (T)0, DS_M_ADD(a, DS_M_MUL(v, v)), DS_M_ADD(a, b), a)                            \
  X(L1, EXACT, (T)0, DS_M_ADD(a, DS_M_ABS(v)), DS_M_ADD(a, b), a)                                  \
  X(L2, NONE, (T)0, a + v * v, a + b, DS_M_SQRT(a))                                                \
  X(LOGSUM, NONE, (T)0, a + v, a + b, DS_M_LOG(a))                                                 \
  /* an infinite or NaN maximum is the result (and would make every term NaN) */                   \
  X(LOGSUMEXP, NONE, (T)0, a + DS_M_EXP(v - s), a + b, DS_M_ISFINITE(s) ? s + DS_M_LOG(a) : s)

#define DS_MATH_REDUCE_ENUM(ID, INTS, IDENTITY, FOLD, MERGE, FINISH) DS_MATH_RED_##ID,
typedef enum { DS_MATH_REDUCE(DS_MATH_REDUCE_ENUM) DS_MATH_RED_COUNT } DsMathReduceFn;
#undef DS_MATH_REDUCE_ENUM
