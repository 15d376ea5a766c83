/* ds-test-unary.h: one test case per unary math op (core/ds-math-unary.h's DS_MATH_UNARY),
 * shared by the shape and CPU tests (test-ops-elemwise.c) and the cross-backend test
 * (test-cuda-elemwise.c), so a new unary op is covered everywhere by one line here.
 *
 * X(NAME, LO, HI, GPU, INTS, ATTRS, REF):
 *   NAME    the op's name, as an identifier
 *   LO, HI  the float inputs' range: where the op is defined and its float32 result is
 *           well-conditioned
 *   GPU     EXACT where the CUDA kernel must give the CPU's bits, CLOSE where both are a few
 *           ulp from the true value (the transcendental functions)
 *   INTS    EXACT where integer inputs (computed through float64) give the exact reference,
 *           NONE where the op is float only or its integer result is not tested
 *   ATTRS   the attributes, ("key", "value", ..., NULL)
 *   REF     the true result in double precision, an expression in x and in a and b, the
 *           coefficients as the kernel reads them (clip's a_min and a_max, alpha and beta)
 */
#pragma once

#include <math.h>

#define DS_TEST_UNARY_CASES(X)                                                                     \
  X(relu, -3, 3, EXACT, EXACT, (NULL), x > 0 ? x : 0)                                              \
  X(sigmoid, -12, 12, CLOSE, NONE, (NULL), 1 / (1 + exp(-x)))                                      \
  X(tanh, -5, 5, CLOSE, NONE, (NULL), tanh(x))                                                     \
  X(exp, -10, 10, CLOSE, NONE, (NULL), exp(x))                                                     \
  X(expm1, -5, 5, CLOSE, NONE, (NULL), expm1(x))                                                   \
  X(log, 0.01, 100, CLOSE, NONE, (NULL), log(x))                                                   \
  X(sqrt, 0, 100, EXACT, NONE, (NULL), sqrt(x))                                                    \
  X(rsqrt, 0.01, 100, EXACT, NONE, (NULL), 1 / sqrt(x))                                            \
  X(square, -10, 10, EXACT, EXACT, (NULL), x * x)                                                  \
  X(abs, -3, 3, EXACT, EXACT, (NULL), fabs(x))                                                     \
  X(negative, -3, 3, EXACT, EXACT, (NULL), -x)                                                     \
  X(reciprocal, 0.1, 10, EXACT, NONE, (NULL), 1 / x)                                               \
  X(erf, -4, 4, CLOSE, NONE, (NULL), erf(x))                                                       \
  X(clip, -3, 3, EXACT, EXACT, ("a_min", "-1", "a_max", "0.3", NULL), fmax(a, fmin(b, x)))         \
  X(floor, -5, 5, EXACT, EXACT, (NULL), floor(x))                                                  \
  X(ceil, -5, 5, EXACT, EXACT, (NULL), ceil(x))                                                    \
  X(rint, -5, 5, EXACT, EXACT, (NULL), nearbyint(x))                                               \
  X(sign, -3, 3, EXACT, EXACT, (NULL), x > 0 ? 1 : x < 0 ? -1 : x)                                 \
  X(sin, -10, 10, CLOSE, NONE, (NULL), sin(x))                                                     \
  X(cos, -10, 10, CLOSE, NONE, (NULL), cos(x))                                                     \
  X(tan, -1.2, 1.2, CLOSE, NONE, (NULL), tan(x))                                                   \
  X(arcsin, -0.99, 0.99, CLOSE, NONE, (NULL), asin(x))                                             \
  X(arccos, -0.99, 0.99, CLOSE, NONE, (NULL), acos(x))                                             \
  X(arctan, -10, 10, CLOSE, NONE, (NULL), atan(x))                                                 \
  X(sinh, -5, 5, CLOSE, NONE, (NULL), sinh(x))                                                     \
  X(cosh, -5, 5, CLOSE, NONE, (NULL), cosh(x))                                                     \
  X(arcsinh, -10, 10, CLOSE, NONE, (NULL), asinh(x))                                               \
  X(arccosh, 1.01, 10, CLOSE, NONE, (NULL), acosh(x))                                              \
  X(arctanh, -0.99, 0.99, CLOSE, NONE, (NULL), atanh(x))                                           \
  X(softsign, -5, 5, EXACT, NONE, (NULL), x / (1 + fabs(x)))                                       \
  X(logical_not, -1, 1, EXACT, EXACT, (NULL), x == 0)                                              \
  X(hard_swish, -5, 5, EXACT, NONE, (NULL), x * fmax(0, fmin(1, x / 6 + 0.5)))                     \
  X(hard_sigmoid, -5, 5, EXACT, NONE, ("alpha", "0.25", "beta", "0.4", NULL),                      \
    fmax(0, fmin(1, a * x + b)))                                                                   \
  X(selu, -3, 3, CLOSE, NONE, ("alpha", "2", "gamma", "3", NULL),                                  \
    x > 0 ? b * x : b * a * expm1(x))                                                              \
  X(celu, -3, 3, CLOSE, NONE, ("alpha", "0.7", NULL), fmax(0, x) + fmin(0, a * expm1(x / a)))      \
  X(thresholded_relu, -3, 3, EXACT, NONE, ("alpha", "0.5", NULL), x > a ? x : 0)                   \
  X(shrink, -3, 3, EXACT, NONE, ("lambd", "0.6", "bias", "0.2", NULL),                             \
    x < -a ? x + b : x > a ? x - b : 0)                                                              \
  X(log1p, -0.9, 10, CLOSE, NONE, (NULL), log1p(x))                                                \
  X(log2, 0.01, 100, CLOSE, NONE, (NULL), log2(x))                                                 \
  X(log10, 0.01, 100, CLOSE, NONE, (NULL), log10(x))                                               \
  X(cbrt, -10, 10, CLOSE, NONE, (NULL), cbrt(x))                                                   \
  X(rcbrt, 0.1, 10, CLOSE, NONE, (NULL), 1 / cbrt(x))                                              \
  X(trunc, -5, 5, EXACT, EXACT, (NULL), trunc(x))                                                  \
  X(fix, -5, 5, EXACT, EXACT, (NULL), trunc(x))                                                    \
  X(round, -5, 5, EXACT, EXACT, (NULL), round(x))                                                  \
  X(degrees, -7, 7, EXACT, NONE, (NULL), x * (180 / M_PI))                                         \
  X(radians, -400, 400, EXACT, NONE, (NULL), x * (M_PI / 180))

/* ATTRS without its parentheses, as an initializer's contents. */
#define DS_TEST_UNPAREN(...) __VA_ARGS__
