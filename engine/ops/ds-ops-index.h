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
  X(SIZE_ARRAY, "size_array")                                                                     \
  X(TAKE_ALONG_AXIS, "take_along_axis")                                                            \
  X(PUT_ALONG_AXIS, "put_along_axis")                                                              \
  X(BATCH_GATHER_ND, "batch_gather_nd")                                                            \
  X(SCATTER_ND_UPDATE, "scatter_nd_update")                                                        \
  X(TOPK, "topk")                                                                                  \
  X(ONE_HOT, "one_hot")                                                                            \
  X(PICK, "pick")

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

/* take_along_axis(data, indices) (numpy.take_along_axis; ONNX's GatherElements): indices has
 * the data's rank and is the output's shape; output[i] = data[i with its `axis` coordinate
 * replaced by indices[i]]. Negative indices count from the end of the axis; the other axes of
 * indices may be shorter than the data's. */
typedef struct {
  int axis;
} DsTakeAlongAxisParam;

typedef enum {
  DS_SCATTER_NONE, /* the update replaces the element; of duplicates the last one wins */
  DS_SCATTER_ADD,
  DS_SCATTER_MUL,
  DS_SCATTER_MAX,
  DS_SCATTER_MIN,
} DsScatterReduction;

/* put_along_axis(data, indices, updates) (numpy.put_along_axis; ONNX's ScatterElements): a
 * copy of the data where each element take_along_axis would read at indices[i] is combined
 * with updates[i] (indices' shape) as `reduction` says, in the indices' row-major order. */
typedef struct {
  int axis;
  DsScatterReduction reduction;
} DsPutAlongAxisParam;

/* batch_gather_nd(data, indices): ONNX's GatherND. The last axis of indices (k entries) holds
 * coordinates into data's axes [batch_dims, batch_dims + k); the first batch_dims axes of data
 * and indices are shared. The output is indices.shape[:-1] + data.shape[batch_dims + k:].
 * Negative coordinates count from the end. (MXNet's gather_nd puts the coordinates on the
 * first axis instead and has no batch axes.) */
typedef struct {
  int batch_dims;
} DsBatchGatherNdParam;

/* scatter_nd_update(data, indices, updates): ONNX's ScatterND. A copy of the data where each
 * slice batch_gather_nd (batch_dims 0) would read for an index tuple of indices (the last axis
 * holds the tuples) is combined with the matching slice of updates
 * (indices.shape[:-1] + data.shape[k:]) as `reduction` says, in row-major order. */
typedef struct {
  DsScatterReduction reduction;
} DsScatterNdParam;

typedef enum {
  DS_TOPK_VALUE,
  DS_TOPK_INDICES,
  DS_TOPK_MASK,
  DS_TOPK_BOTH,
} DsTopkReturn;

/* topk: the k largest (is_ascend: smallest) elements along `axis` (has_axis false: of the
 * flattened data), in order; k < 1 takes them all. Equal values keep their order (the lower
 * index first) and NaNs come last either way. ret_typ chooses the outputs: the values, their
 * indices (in `dtype`, float32 by default as in MXNet), a 0/1 mask of the data's shape, or
 * both values and indices. */
typedef struct {
  bool has_axis;
  int axis;
  int64_t k;
  DsTopkReturn ret_typ;
  bool is_ascend;
  DsDType dtype;
} DsTopkParam;

static inline int ds_topk_num_outputs(const DsTopkParam *p)
{
  return p->ret_typ == DS_TOPK_BOTH ? 2 : 1;
}


/* one_hot(indices): (indices..., depth) filled with off_value, with on_value at each index
 * that lies in [0, depth) (an index is truncated to an integer; others give a row of
 * off_value), in `dtype` (float32 by default). */
typedef struct {
  int64_t depth;
  double on_value;
  double off_value;
  DsDType dtype;
} DsOneHotParam;

typedef enum {
  DS_PICK_WRAP,
  DS_PICK_CLIP,
} DsPickMode;

/* pick(data, index): data's elements at `index` along `axis` (MXNet's PickParam: axis must be
 * an int, -1 by default); the index has the data's shape without the axis (or with it as 1,
 * keepdims-style). Out-of-range indices clip (default) or wrap. */
typedef struct {
  int axis;
  bool keepdims;
  DsPickMode mode;
} DsPickParam;
