/* ds-cpu-unary.h: core/ds-math-unary.h's unary functions as CPU loops. */
#pragma once

#include <stdint.h>

#include "ds-math-unary.h"

/* y[i] = f(x[i]) for i < n, with the coefficients `a` and `b` where `fn` takes them. Every
 * function of the table has a float32 loop; those of DS_MATH_UNARY also a float64 one. */
void ds_cpu_unary_f32(DsMathUnaryFn fn, int64_t n, const float *x, float *y, float a, float b);
void ds_cpu_unary_f64(DsMathUnaryFn fn, int64_t n, const double *x, double *y, double a, double b);
