/* ds-ops-tensor.h: shape manipulation, creation, indexing and reductions: ids and attributes. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ds-dtype.h"
#include "ds-tensor.h"

#define DS_OPS_TENSOR(X)                                                                      \
  X(RESHAPE, "Reshape")                                                                       \
  X(FLATTEN, "Flatten")                                                                       \
  X(EXPAND_DIMS, "expand_dims")                                                               \
  X(SQUEEZE, "squeeze")                                                                       \
  X(RESHAPE_LIKE, "reshape_like")                                                             \
  X(TRANSPOSE, "transpose")                                                                   \
  X(SWAP_AXIS, "SwapAxis")                                                                    \
  X(CONCAT, "Concat")                                                                         \
  X(BROADCAST_AXIS, "broadcast_axis")                                                         \
  X(BROADCAST_TO, "broadcast_to")                                                             \
  X(BROADCAST_LIKE, "broadcast_like")                                                         \
  X(ARANGE, "_arange")                                                                        \
  X(ARANGE_LIKE, "_contrib_arange_like")                                                      \
  X(ZEROS, "_zeros")                                                                          \
  X(ONES, "_ones")                                                                            \
  X(FULL, "_full")                                                                            \
  X(SEQUENCE_MASK, "SequenceMask")                                                            \
  X(SLICE_AXIS, "slice_axis")                                                                 \
  X(SLICE, "slice")                                                                           \
  X(TAKE, "take")                                                                             \
  X(CAST, "Cast")                                                                             \
  X(SUM, "sum")                                                                               \
  X(MEAN, "mean")                                                                             \
  X(MAX, "max")                                                                               \
  X(MIN, "min")                                                                               \
  X(NP_RESHAPE, "_np_reshape")                                                                \
  X(NP_SQUEEZE, "_np_squeeze")                                                                \
  X(EXPAND, "_contrib_expand")                                                                \
  X(PAD, "_npi_pad")                                                                          \
  X(CUMSUM, "cumsum")                                                                         \
  X(TRILU, "trilu")                                                                           \
  X(EYE_LIKE, "eye_like")                                                                     \
  X(DEPTH_TO_SPACE, "depth_to_space")                                                         \
  X(SPACE_TO_DEPTH, "space_to_depth")                                                         \
  X(SEQUENCE_REVERSE, "SequenceReverse")                                                      \
  X(FULL_LIKE, "_npi_full_like")                                                              \
  X(PROD, "prod")                                                                             \
  X(NANSUM, "nansum")                                                                         \
  X(NANPROD, "nanprod")                                                                       \
  X(NORM, "norm")                                                                             \
  X(MX_PAD, "Pad")                                                                            \
  X(SEQUENCE_LAST, "SequenceLast")

/* Parsed attribute structs for these ops follow. */

/* Reshape's `shape` may hold more codes than dims: -4 takes three entries for two dims. */
#define DS_RESHAPE_MAX_CODES (3 * DS_MAX_NDIM)

/* Marks a missing ("None") element of slice's begin/end/step tuples. */
#define DS_SLICE_NONE INT64_MIN

/* Reshape. `shape` holds MXNet's codes (0 copy, -1 infer, -2 copy the rest, -3 merge two,
 * -4 split one); the deprecated `target_shape` (0 = infer) is used when `shape` is empty. */
typedef struct {
  int n_shape;
  int64_t shape[DS_RESHAPE_MAX_CODES];
  bool reverse;
  int n_target_shape; /* -1 when absent */
  int64_t target_shape[DS_MAX_NDIM];
  bool keep_highest;
} DsReshapeParam;

/* reshape_like: lhs with its dims [lhs_begin, lhs_end) replaced by rhs's dims
 * [rhs_begin, rhs_end); the element counts must match. A missing begin (None) is 0 and a
 * missing end is the rank; negative values count from the end, and each range must be
 * non-empty once normalised (MXNet's ReshapeLikeRangeCanonicalize). */
typedef struct {
  bool has_lhs_begin, has_lhs_end, has_rhs_begin, has_rhs_end;
  int lhs_begin, lhs_end, rhs_begin, rhs_end;
} DsReshapeLikeParam;

/* Flatten: dims [0, axis) and [axis, ndim) each collapse into one, so the result is 2-D.
 * MXNet's Flatten has no axis and behaves as axis 1; an `axis` attribute (in [-ndim, ndim],
 * ONNX's Flatten) is accepted as an extension. */
typedef struct {
  bool has_axis;
  int axis;
} DsFlattenParam;

/* expand_dims: positions of the new axes in the result, each in [-ndim-n, ndim+n-1] for n
 * axes (negative ones count from the result's end). MXNet takes one axis; a tuple (ONNX's
 * Unsqueeze) is accepted as an extension and inserts all of them at once. */
typedef struct {
  int n_axes;
  int64_t axes[DS_MAX_NDIM];
} DsExpandDimsParam;

/* squeeze, _np_squeeze: n_axes is -1 when `axis` is None (squeeze every size-1 dim). MXNet
 * 1.x's squeeze keeps one dim when every dim goes; NumPy's (`numpy`) gives a 0-dim tensor. */
typedef struct {
  int n_axes;
  int64_t axes[DS_MAX_NDIM];
  bool numpy;
} DsSqueezeParam;

/* _np_reshape (numpy.reshape): `newshape` holds the dims, one of which may be -1 (inferred);
 * 0 is a literal 0, and () gives a 0-dim tensor. Only order 'C' exists. */
typedef struct {
  int ndim;
  int64_t newshape[DS_MAX_NDIM];
} DsNpReshapeParam;

/* transpose: n_axes is 0 when `axes` is empty (reverse the axes). */
typedef struct {
  int n_axes;
  int64_t axes[DS_MAX_NDIM];
} DsTransposeParam;

/* SwapAxis (swapaxes). */
typedef struct {
  int dim1;
  int dim2;
} DsSwapAxisParam;

/* Concat (concat): `dim` may be negative. */
typedef struct {
  int num_args;
  int dim;
} DsConcatParam;

/* broadcast_axis (broadcast_axes): axis[i] of size 1 becomes size[i]. */
typedef struct {
  int n_axes;
  int64_t axis[DS_MAX_NDIM];
  int64_t size[DS_MAX_NDIM];
} DsBroadcastAxisParam;

/* broadcast_to: target shape; a 0 keeps the input's dim. */
typedef struct {
  int ndim;
  int64_t shape[DS_MAX_NDIM];
} DsBroadcastToParam;

/* broadcast_like: n_lhs_axes/n_rhs_axes are -1 when None (broadcast to rhs's whole shape). */
typedef struct {
  int n_lhs_axes;
  int64_t lhs_axes[DS_MAX_NDIM];
  int n_rhs_axes;
  int64_t rhs_axes[DS_MAX_NDIM];
} DsBroadcastLikeParam;

/* _arange, after MXNet's parser: a missing `stop` (without infer_range) means range(0, start),
 * so `start` and `stop` are already swapped here. has_stop is false only with infer_range. */
typedef struct {
  double start;
  double stop;
  bool has_stop;
  double step;
  int repeat;
  bool infer_range;
  DsDType dtype;
} DsArangeParam;

/* _contrib_arange_like: start + (i / repeat) * step over the output's elements, as _arange
 * computes them. The output has the data's shape, or (data.shape[axis],) when `axis` is given
 * (has_axis); `repeat` changes the values only, never the length. The data's values are never
 * read, only its shape. */
typedef struct {
  double start;
  double step;
  int repeat;
  bool has_axis;
  int axis;
  DsDType dtype;
} DsArangeLikeParam;

/* _zeros, _ones, _full. ndim is -1 when `shape` is missing or empty (unknown); a 0 dim is
 * unknown too (MXNet's legacy convention), filled by inference from the consumers. */
typedef struct {
  int ndim;
  int64_t shape[DS_MAX_NDIM];
  DsDType dtype;
  double value; /* 0 for _zeros, 1 for _ones, `value` for _full */
} DsInitParam;

/* SequenceMask: axis 0 is (time, batch, ...) and axis 1 is (batch, time, ...). */
typedef struct {
  bool use_sequence_length;
  double value;
  int axis;
} DsSequenceMaskParam;

/* slice_axis: end is absent when has_end is false (None: the axis' end). */
typedef struct {
  int axis;
  int64_t begin;
  int64_t end;
  bool has_end;
} DsSliceAxisParam;

/* slice (crop): per-axis begin/end/step, DS_SLICE_NONE where None; n_step is 0 when `step`
 * is missing (all 1). Entry i applies to axis i, and axes past n_axes are kept whole. With
 * `axes` (an extension for ONNX's Slice: has_axes) entry i applies to axis axes[i] instead,
 * negative axes counting from the end, and every other axis is kept whole. */
typedef struct {
  int n_axes;
  int64_t begin[DS_MAX_NDIM];
  int64_t end[DS_MAX_NDIM];
  int n_step;
  int64_t step[DS_MAX_NDIM];
  bool has_axes;
  int64_t axes[DS_MAX_NDIM];
} DsSliceParam;

typedef enum {
  DS_TAKE_CLIP,
  DS_TAKE_WRAP,
  DS_TAKE_RAISE,
} DsTakeMode;

/* take: indices pick along `axis` of the data. */
typedef struct {
  int axis;
  DsTakeMode mode;
} DsTakeParam;

/* Cast (cast). */
typedef struct {
  DsDType dtype;
} DsCastParam;

/* sum (sum_axis), mean, max (max_axis), min (min_axis). n_axes is -1 when `axis` is None;
 * None and () both reduce over every axis. */
typedef struct {
  int n_axes;
  int64_t axes[DS_MAX_NDIM];
  bool keepdims;
  bool exclude;
} DsReduceParam;

/* norm (MXNet's legacy LpNorm): sqrt(sum(x^2)) (ord 2) or sum(|x|) (ord 1) over `axes`, with
 * sum's axis rules but no exclude; the result in out_dtype (the data's when unknown). */
typedef struct {
  DsReduceParam axes;
  int ord;
  DsDType out_dtype;
} DsNormParam;

/* _contrib_expand: ONNX's Expand. The data and `shape` broadcast against each other as NumPy
 * does (right-aligned; a 1 on either side stretches), so a 1 in `shape` keeps the data's dim
 * and the result's rank is the larger of the two. */
typedef struct {
  int ndim;
  int64_t shape[DS_MAX_NDIM];
} DsExpandParam;

typedef enum {
  DS_PAD_CONSTANT,
  DS_PAD_EDGE,
  DS_PAD_REFLECT,
} DsPadMode;

/* _npi_pad (numpy.pad): pad_width ((before, after), ...) per axis, one pair per dim of the
 * data. Negative widths (ONNX's Pad) crop instead, as an extension. reflect mirrors without
 * repeating the edge (numpy's 'reflect'); edge repeats it. */
typedef struct {
  int ndim;
  int64_t before[DS_MAX_NDIM];
  int64_t after[DS_MAX_NDIM];
  DsPadMode mode;
  double value; /* constant_values */
} DsPadParam;

/* Pad (MXNet's legacy pad) parses into DsPadParam: pad_width is the flat tuple
 * (before_1, after_1, ..., before_N, after_N) for 4-D or 5-D data whose first two axes are not
 * padded; reflect needs every width below its axis' length. The kernel is _npi_pad's. */

/* SequenceLast(data, sequence_length): the last valid step of each sequence, data being
 * (time, batch, ...) (axis 0) or (batch, time, ...) (axis 1); the result is (batch, ...).
 * Without use_sequence_length every sequence is the whole time axis. */
typedef struct {
  bool use_sequence_length;
  int axis;
} DsSequenceLastParam;

/* cumsum(data, axis): running sums along the axis given by the scalar `axis` tensor (negative
 * counts from the end). `exclusive` leaves the element itself out (the first sum is 0);
 * `reverse` sums from the end. */
typedef struct {
  bool exclusive;
  bool reverse;
} DsCumsumParam;

/* trilu(data, k): the lower (upper: upper) triangle of the last two dims, from the diagonal k
 * (the scalar `k` tensor: positive above the main one) down (or up); the rest is zeroed. */
typedef struct {
  bool upper;
} DsTriluParam;

/* eye_like: a 2-D tensor of the data's shape with ones on diagonal k (positive above the main
 * one), in `dtype` (the data's when has_dtype is false). */
typedef struct {
  int64_t k;
  bool has_dtype;
  DsDType dtype;
} DsEyeLikeParam;

/* depth_to_space, space_to_depth on NCHW data with blocks of block_size x block_size. The
 * channel order of a block is MXNet's (depth, column, row: "DCR"); `mode` "CRD" (ONNX's other
 * DepthToSpace order, an extension) takes the channel as the outer index instead. */
typedef struct {
  int64_t block_size;
  bool crd;
} DsDepthSpaceParam;

/* SequenceReverse(data, sequence_length): data is (time, batch, ...) (axis 0, the only axis
 * MXNet has); each batch entry's first sequence_length[b] steps are reversed and the rest kept
 * in place. Without use_sequence_length every sequence is reversed whole. */
typedef struct {
  bool use_sequence_length;
  int axis;
} DsSequenceReverseParam;

/* _npi_full_like (numpy.full_like): the data's shape filled with fill_value, in `dtype` (the
 * data's when has_dtype is false). The data's values are never read. */
typedef struct {
  double fill_value;
  bool has_dtype;
  DsDType dtype;
} DsFullLikeParam;

/* Python slice semantics for one axis of length `len` (MXNet's GetIndexRange):
 * `begin`/`end` may be DS_SLICE_NONE, `step` must not be 0. Gives the first index and the
 * number of elements taken. Shared by slice's shape rule and its kernels. */
static inline void ds_slice_axis_range(int64_t len, int64_t begin, int64_t end, int64_t step,
                                       int64_t *first, int64_t *count)
{
  int64_t b, e;
  if (step > 0) {
    b = begin == DS_SLICE_NONE ? 0 : (begin < 0 ? begin + len : begin);
    e = end == DS_SLICE_NONE ? len : (end < 0 ? end + len : end);
    b = b < 0 ? 0 : (b > len ? len : b);
    e = e < 0 ? 0 : (e > len ? len : e);
    *first = b;
    *count = e > b ? (e - b + step - 1) / step : 0;
  } else {
    /* Going backwards the valid positions are [-1, len-1], -1 meaning "before the start". */
    b = begin == DS_SLICE_NONE ? len - 1 : (begin < 0 ? begin + len : begin);
    e = end == DS_SLICE_NONE ? -1 : (end < 0 ? end + len : end);
    b = b < -1 ? -1 : (b > len - 1 ? len - 1 : b);
    e = e < -1 ? -1 : (e > len - 1 ? len - 1 : e);
    *first = b;
    *count = b > e ? (b - e - step - 1) / (-step) : 0;
  }
}

/* Which entry of a slice's begin/end/step tuples applies to axis `d` of a rank-`ndim` input:
 * its index, or -1 when the axis is kept whole. Assumes the axes were validated. */
static inline int ds_slice_entry_for_axis(const DsSliceParam *p, int ndim, int d)
{
  if (!p->has_axes)
    return d < p->n_axes ? d : -1;
  for (int i = 0; i < p->n_axes; i++)
    if ((p->axes[i] < 0 ? p->axes[i] + ndim : p->axes[i]) == d)
      return i;
  return -1;
}

/* Which axes of a rank-`ndim` input a reduction covers (MXNet's ReduceAxesShapeImpl):
 * fills reduced[0..ndim-1]. Returns false for an axis out of range or repeated. */
static inline bool ds_reduce_axes_mask(const DsReduceParam *param, int ndim, bool *reduced)
{
  if (param->n_axes <= 0) {
    for (int i = 0; i < ndim; i++)
      reduced[i] = true;
    return true;
  }
  bool listed[DS_MAX_NDIM] = {false};
  for (int i = 0; i < param->n_axes; i++) {
    int64_t a = param->axes[i] < 0 ? param->axes[i] + ndim : param->axes[i];
    if (a < 0 || a >= ndim || listed[a])
      return false;
    listed[a] = true;
  }
  for (int i = 0; i < ndim; i++)
    reduced[i] = param->exclude ? !listed[i] : listed[i];
  return true;
}
