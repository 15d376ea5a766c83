/* ds-ops-dynamic.h: ops whose output shape depends on input values: ids and parsed attributes.
 *
 * MXNet runs these with FComputeDynamic: boolean_mask, nonzero and unique size their outputs
 * from the data, and the shape-tensor ops (_zeros_shape, _contrib_dynamic_reshape...) read a
 * shape from an input tensor's values. Their shape rules give the data-dependent dims as
 * unbacked dims (ds_shape_ctx_unbacked_dim: `u0` in [0, upper] symbolically, unknown in
 * concrete inference); their kernels size and allocate their outputs once they have read the
 * inputs (ds_kernel_alloc_output, core/ds-kernel.h).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ds-dtype.h"
#include "ds-ops-tensor.h" /* DsPadMode */
#include "ds-tensor.h"

#define DS_OPS_DYNAMIC(X)                                                                          \
  X(BOOLEAN_MASK, "_contrib_boolean_mask")                                                         \
  X(NONZERO, "_npx_nonzero")                                                                       \
  X(ZEROS_SHAPE, "_zeros_shape")                                                                   \
  X(ONES_SHAPE, "_ones_shape")                                                                     \
  X(FULL_SHAPE, "_full_shape")                                                                     \
  X(DYNAMIC_RESHAPE, "_contrib_dynamic_reshape")                                                   \
  X(DYNAMIC_ARANGE, "_contrib_dynamic_arange")                                                     \
  X(UNIQUE, "_npi_unique")                                                                         \
  X(DYNAMIC_SLICE, "_contrib_dynamic_slice")                                                       \
  X(DYNAMIC_EXPAND, "_contrib_dynamic_expand")                                                     \
  X(DYNAMIC_TILE, "_contrib_dynamic_tile")                                                         \
  X(DYNAMIC_PAD, "_contrib_dynamic_pad")                                                           \
  X(DYNAMIC_SQUEEZE, "_contrib_dynamic_squeeze")                                                   \
  X(DYNAMIC_EXPAND_DIMS, "_contrib_dynamic_expand_dims")                                           \
  X(DYNAMIC_TOPK, "_contrib_dynamic_topk")                                                         \
  X(DYNAMIC_ONE_HOT, "_contrib_dynamic_one_hot")                                                   \
  X(COMPRESS, "_contrib_compress")

/* Parsed attribute structs for these ops follow. _npx_nonzero and _contrib_dynamic_reshape take
 * no attributes. */

/* _contrib_boolean_mask(data, index): the slices of `data` along `axis` (negative counts from
 * the end) whose entry in the 1-D `index` is nonzero, in order. MXNet's kernel only takes axis
 * 0; every axis works here. */
typedef struct {
  int axis;
} DsBooleanMaskParam;

/* _zeros_shape, _ones_shape, _full_shape(shape): a tensor filled with `value` (0, 1, or _full's
 * required `value`) whose shape is the values of the 1-D `shape` tensor. The length of `shape`
 * is the rank and must be known at inference; its values must be non-negative integers (a
 * float tensor holding whole numbers is accepted). */
typedef struct {
  DsDType dtype;
  double value;
} DsShapeInitParam;

/* _contrib_dynamic_reshape(data, shape): Reshape whose target is the values of the 1-D `shape`
 * tensor. Of Reshape's codes only 0 (copy the data's dim at that position) and -1 (inferred
 * from the remaining size, at most once) are taken; other negative values are invalid. With
 * `allowzero` (ONNX's Reshape attribute) a 0 is a literal 0 dim instead. The output's rank is
 * the length of `shape`. */
typedef struct {
  bool allowzero;
} DsDynamicReshapeParam;

/* _contrib_dynamic_arange(start, stop, step): _arange with tensor bounds. Each bound is a
 * scalar tensor (shape () or (1,)) of any numeric dtype; the output holds
 * max(0, ceil((stop - start) / step)) values start + i * step, computed in double and then
 * converted to `dtype` (DS_DTYPE_UNKNOWN, from dtype="None": start's dtype). A zero step is an
 * invalid argument. */
typedef struct {
  DsDType dtype;
} DsDynamicArangeParam;

/* _npi_unique(data): numpy.unique. Without an axis (has_axis false, MXNet's axis=None) the
 * sorted distinct values of the flattened data; with one, the distinct slices along it in
 * lexicographic order. Outputs, in order: the unique values (data's dtype), then as requested
 * the index of each one's first occurrence, the inverse (for every element, or every slice,
 * the position of its unique value), and the counts, all int64. NaNs compare equal to each
 * other and greater than every number (numpy >= 1.21: all NaNs make one unique value, last). */
typedef struct {
  bool return_index;
  bool return_inverse;
  bool return_counts;
  bool has_axis;
  int axis;
  bool sorted; /* false (an extension, ONNX's sorted=0): in order of first occurrence */
} DsUniqueParam;

/* The number of outputs of _npi_unique: the unique values plus one per requested extra. */
static inline int ds_unique_num_outputs(const DsUniqueParam *p)
{
  return 1 + (p->return_index ? 1 : 0) + (p->return_inverse ? 1 : 0) + (p->return_counts ? 1 : 0);
}

/* _contrib_dynamic_slice(data, starts, ends[, axes][, steps]): ONNX's Slice with every bound a
 * 1-D integer tensor read at run time. Entry i slices axis axes[i] (negative counts from the
 * end) from starts[i] to ends[i] by steps[i] (nonzero), clamped as ONNX says (Python's rules,
 * INT64_MIN and INT64_MAX included); other axes are kept whole. The axes are the `axes`
 * attribute when given (then the dims of the other axes pass through inference), else the
 * `axes` input when use_axes, else 0, 1, ...; steps are all 1 without use_steps. */
typedef struct {
  int n_axes; /* -1: no `axes` attribute */
  int64_t axes[DS_MAX_NDIM];
  bool use_axes;
  bool use_steps;
} DsDynamicSliceParam;

/* _contrib_dynamic_pad(data, pads, value): ONNX's Pad with the widths and the constant read at
 * run time: `pads` holds every axis' before width, then every axis' after width (negative
 * crops); `value` is a scalar of any numeric dtype, used in mode constant. */
typedef struct {
  DsPadMode mode;
} DsDynamicPadParam;

/* _contrib_dynamic_topk(data, k): topk with ret_typ both and k (a scalar tensor, at most the
 * axis' length) read at run time: the k largest (is_ascend: smallest) values along `axis` and
 * their indices in `dtype` (int64 by default). */
typedef struct {
  int axis;
  bool is_ascend;
  DsDType dtype;
} DsDynamicTopkParam;

/* _contrib_dynamic_one_hot(indices, depth, values): ONNX's OneHot. The output has the
 * indices' shape with a new axis of `depth` (a scalar read at run time) inserted at `axis`
 * (negative counts from the end of the output); the entry an index names is values[1], the
 * rest values[0], in values' dtype. Indices in [-depth, -1] count from the end; others out of
 * range give a row of values[0]. */
typedef struct {
  int axis;
} DsDynamicOneHotParam;

/* _contrib_compress(data, condition): numpy.compress. The slices along `axis` (negative counts
 * from the end; has_axis false: the elements of the flattened data) whose entry in the 1-D
 * `condition` is nonzero; condition may be shorter than the axis (the rest is dropped). */
typedef struct {
  bool has_axis;
  int axis;
} DsCompressParam;

/* _contrib_dynamic_squeeze(data, axes), _contrib_dynamic_expand_dims(data, axes): squeeze (the
 * numpy form: every dim may go) and expand_dims with the axes a 1-D integer tensor read at run
 * time; its length must be known to inference, as it sets the rank. No attributes. */

