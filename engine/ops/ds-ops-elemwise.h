/* ds-ops-elemwise.h: elementwise, broadcast and scalar ops: ids and parsed attributes. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ds-dtype.h"

#define DS_OPS_ELEMWISE(X)                                                                    \
  X(ELEMWISE_ADD, "elemwise_add")                                                             \
  X(ELEMWISE_SUB, "elemwise_sub")                                                             \
  X(ELEMWISE_MUL, "elemwise_mul")                                                             \
  X(ELEMWISE_DIV, "elemwise_div")                                                             \
  X(BROADCAST_ADD, "broadcast_add")                                                           \
  X(BROADCAST_SUB, "broadcast_sub")                                                           \
  X(BROADCAST_MUL, "broadcast_mul")                                                           \
  X(BROADCAST_DIV, "broadcast_div")                                                           \
  X(BROADCAST_MAXIMUM, "broadcast_maximum")                                                   \
  X(BROADCAST_MINIMUM, "broadcast_minimum")                                                   \
  X(BROADCAST_POWER, "broadcast_power")                                                       \
  X(BROADCAST_EQUAL, "broadcast_equal")                                                       \
  X(BROADCAST_NOT_EQUAL, "broadcast_not_equal")                                               \
  X(BROADCAST_GREATER, "broadcast_greater")                                                   \
  X(BROADCAST_GREATER_EQUAL, "broadcast_greater_equal")                                       \
  X(BROADCAST_LESSER, "broadcast_lesser")                                                     \
  X(BROADCAST_LESSER_EQUAL, "broadcast_lesser_equal")                                         \
  X(PLUS_SCALAR, "_plus_scalar")                                                              \
  X(MINUS_SCALAR, "_minus_scalar")                                                            \
  X(RMINUS_SCALAR, "_rminus_scalar")                                                          \
  X(MUL_SCALAR, "_mul_scalar")                                                                \
  X(DIV_SCALAR, "_div_scalar")                                                                \
  X(RDIV_SCALAR, "_rdiv_scalar")                                                              \
  X(POWER_SCALAR, "_power_scalar")                                                            \
  X(MAXIMUM_SCALAR, "_maximum_scalar")                                                        \
  X(MINIMUM_SCALAR, "_minimum_scalar")                                                        \
  X(EQUAL_SCALAR, "_equal_scalar")                                                            \
  X(GREATER_SCALAR, "_greater_scalar")                                                        \
  X(LESSER_SCALAR, "_lesser_scalar")                                                          \
  X(RELU, "relu")                                                                             \
  X(SIGMOID, "sigmoid")                                                                       \
  X(TANH, "tanh")                                                                             \
  X(EXP, "exp")                                                                               \
  X(LOG, "log")                                                                               \
  X(SQRT, "sqrt")                                                                             \
  X(RSQRT, "rsqrt")                                                                           \
  X(SQUARE, "square")                                                                         \
  X(ABS, "abs")                                                                               \
  X(NEGATIVE, "negative")                                                                     \
  X(RECIPROCAL, "reciprocal")                                                                 \
  X(ERF, "erf")                                                                               \
  X(CLIP, "clip")                                                                             \
  X(IDENTITY, "_copy")                                                                        \
  X(BLOCK_GRAD, "BlockGrad")                                                                  \
  X(ZEROS_LIKE, "zeros_like")                                                                 \
  X(ONES_LIKE, "ones_like")                                                                   \
  X(WHERE, "where")                                                                           \
  X(ADD_N, "add_n")                                                                           \
  X(DIV_SQRT_DIM, "_contrib_div_sqrt_dim")

/* Parsed attribute structs for these ops follow. */

/* The scalar ops (_plus_scalar, _rdiv_scalar, _greater_scalar...). `is_int` (MXNet 1.8+,
 * default true) says whether the scalar is an integer: an integer input with a non-integer
 * scalar gives a float64 result, as in NumPy. */
typedef struct {
  double scalar;
  bool is_int;
} DsScalarParam;

/* clip: both bounds are required. */
typedef struct {
  double a_min;
  double a_max;
} DsClipParam;

/* add_n (ElementWiseSum): the number of summed inputs. */
typedef struct {
  int num_args;
} DsAddNParam;
