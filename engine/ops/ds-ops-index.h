/* ds-ops-index.h: repetition, reordering, splitting, sorting and gathering: ids and parsed
 * attributes. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ds-dtype.h"
#include "ds-tensor.h"

#define DS_OPS_INDEX(X)                                                                            \
  X(REPEAT, "repeat")                                                                              \
  X(TILE, "tile")                                                                                  \
  X(REVERSE, "reverse")                                                                            \
  X(STACK, "stack")                                                                                \
  X(SLICE_CHANNEL, "SliceChannel")                                                                 \
  X(SLICE_LIKE, "slice_like")                                                                      \
  X(ARGSORT, "argsort")                                                                            \
  X(GATHER_ND, "gather_nd")                                                                        \
  X(SHAPE_ARRAY, "shape_array")                                                                    \
  X(SIZE_ARRAY, "size_array")

/* Parsed attribute structs for these ops follow. gather_nd, shape_array and size_array take
 * no attributes. */

/* repeat: every element `repeats` times in a row along `axis`; without an axis (None) the
 * input is flattened first. repeats == 0 gives a (0,) output whatever the axis. */
typedef struct {
  int repeats;
  bool has_axis;
  int axis;
} DsRepeatParam;

/* tile: the result has rank max(ndim, n_reps); the shorter of the input shape and `reps` is
 * padded with leading 1s. An empty `reps` leaves the input as it is. */
typedef struct {
  int n_reps;
  int64_t reps[DS_MAX_NDIM];
} DsTileParam;

/* reverse (flip): every listed axis is reversed once, so an axis listed twice is restored, as
 * MXNet's kernel applies one reversal per entry. Negative axes count from the end. */
typedef struct {
  int n_axes;
  int64_t axes[DS_MAX_NDIM];
} DsReverseParam;

/* stack: num_args inputs of one shape joined along a new axis, in [-ndim-1, ndim]. */
typedef struct {
  int axis;
  int num_args;
} DsStackParam;

/* SliceChannel (split): `num_outputs` equal parts along `axis`; squeeze_axis drops the axis
 * from the outputs, which needs its size to be num_outputs. */
typedef struct {
  int num_outputs;
  int axis;
  bool squeeze_axis;
} DsSliceChannelParam;

/* slice_like: n_axes is 0 for `axes=()`: every axis, with ranks equal. Each listed axis of the
 * data is cut to shape_like's size on it, starting at 0. */
typedef struct {
  int n_axes;
  int64_t axes[DS_MAX_NDIM];
} DsSliceLikeParam;

/* argsort: has_axis is false for axis=None (sort the flattened input). The indices are written
 * in `dtype` (float32 by default, as MXNet does); equal keys keep their order, and NaN keys
 * come last in either direction. */
typedef struct {
  bool has_axis;
  int axis;
  bool is_ascend;
  DsDType dtype;
} DsArgsortParam;

/* The largest count of positions whose indices 0 .. n-1 `dtype` holds exactly (argsort's
 * output): 2^24 + 1 for float32, 256 for uint8; 0 for a dtype argsort cannot write. */
static inline int64_t ds_index_dtype_capacity(DsDType dtype)
{
  switch (dtype) {
  case DS_DTYPE_UINT8:
    return 256;
  case DS_DTYPE_INT32:
    return (int64_t)INT32_MAX + 1;
  case DS_DTYPE_FLOAT32:
    return ((int64_t)1 << 24) + 1;
  case DS_DTYPE_FLOAT64:
    return ((int64_t)1 << 53) + 1;
  case DS_DTYPE_INT64:
    return INT64_MAX;
  default:
    return 0;
  }
}
