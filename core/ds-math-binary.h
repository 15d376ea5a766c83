/* ds-math-binary.h: the formula of every binary elementwise function, written once for every
 * backend (the elementwise, broadcast and scalar ops all evaluate one of these).
 *
 * Each entry is X(ID, KIND, EXPR). EXPR is an expression in `x` and `y` (the operands, of the
 * element type `T` the instantiating code gives) calling only the DS_M_* primitives below,
 * which each backend defines for each type it computes in (see ds-math-unary.h). KIND is ARITH
 * (a value of T) or TRUTH (a truth value, stored as 0 or 1 in the output's dtype: T for MXNet's
 * broadcast_equal, bool for NumPy's equal).
 *
 * Primitives: DS_M_ADD, DS_M_SUB, DS_M_MUL (integers wrap, as the hardware does), DS_M_DIV
 * (an integer division by 0 gives 0 and MIN / -1 wraps, rather than trapping), DS_M_POW,
 * DS_M_MOD (Python's modulo: the result takes the divisor's sign), DS_M_FMOD (C's remainder),
 * DS_M_SHL, DS_M_SHR (integers: a count outside the width gives 0, or -1 for a negative
 * number shifted right, NumPy's rule), DS_M_BITAND, DS_M_BITOR, DS_M_BITXOR (integers),
 * DS_M_HYPOT (integers through double, truncated: MXNet's hypot casts its float result back).
 *
 * The six comparisons stay together, EQ first and LE last, and so do AND, OR and XOR: the
 * backends index their bool-result loops by that order.
 */
#pragma once

#define DS_MATH_BINARY(X)                                                                          \
  X(ADD, ARITH, DS_M_ADD(x, y))                                                                    \
  X(SUB, ARITH, DS_M_SUB(x, y))                                                                    \
  X(MUL, ARITH, DS_M_MUL(x, y))                                                                    \
  X(DIV, ARITH, DS_M_DIV(x, y))                                                                    \
  /* NumPy's maximum and minimum: NaN wins (branch-free, so loops vectorise) */                    \
  X(MAX, ARITH, (x > y || x != x) ? x : y)                                                         \
  X(MIN, ARITH, (x < y || x != x) ? x : y)                                                         \
  X(POW, ARITH, DS_M_POW(x, y))                                                                    \
  X(EQ, TRUTH, x == y)                                                                             \
  X(NE, TRUTH, x != y)                                                                             \
  X(GT, TRUTH, x > y)                                                                              \
  X(GE, TRUTH, x >= y)                                                                             \
  X(LT, TRUTH, x < y)                                                                              \
  X(LE, TRUTH, x <= y)                                                                             \
  X(MOD, ARITH, DS_M_MOD(x, y))                                                                    \
  X(FMOD, ARITH, DS_M_FMOD(x, y))                                                                  \
  X(AND, TRUTH, x != 0 && y != 0)                                                                  \
  X(OR, TRUTH, x != 0 || y != 0)                                                                   \
  X(XOR, TRUTH, (x != 0) != (y != 0))                                                              \
  /* ONNX's PRelu with the slope as the second operand */                                          \
  X(PRELU, ARITH, x < 0 ? DS_M_MUL(x, y) : x)                                                      \
  X(SHL, ARITH, DS_M_SHL(x, y))                                                                    \
  X(SHR, ARITH, DS_M_SHR(x, y))                                                                    \
  X(BITAND, ARITH, DS_M_BITAND(x, y))                                                              \
  X(BITOR, ARITH, DS_M_BITOR(x, y))                                                                \
  X(BITXOR, ARITH, DS_M_BITXOR(x, y))                                                              \
  /* sqrt(x*x + y*y) without the squares' overflow (libm's hypot) */                               \
  X(HYPOT, ARITH, DS_M_HYPOT(x, y))

#define DS_MATH_BINARY_ENUM(ID, KIND, EXPR) DS_MATH_BIN_##ID,
typedef enum { DS_MATH_BINARY(DS_MATH_BINARY_ENUM) DS_MATH_BIN_COUNT } DsMathBinaryFn;
#undef DS_MATH_BINARY_ENUM

/* Whether `fn` gives a truth value (KIND TRUTH). */
#define DS_MATH_KIND_ARITH                      0
#define DS_MATH_KIND_TRUTH                      1
#define DS_MATH_BINARY_IS_TRUTH(ID, KIND, EXPR) (DS_MATH_KIND_##KIND && fn == DS_MATH_BIN_##ID) ||
static inline int ds_math_binary_is_truth(int fn)
{
  return DS_MATH_BINARY(DS_MATH_BINARY_IS_TRUTH) 0;
}
#undef DS_MATH_BINARY_IS_TRUTH

/* The six comparisons (EQ..LE). */
static inline int ds_math_binary_is_compare(int fn)
{
  return fn >= DS_MATH_BIN_EQ && fn <= DS_MATH_BIN_LE;
}
