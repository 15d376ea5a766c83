/* ds-ops-dynamic.h: ops whose output shape depends on input values: ids and parsed attributes.
 *
 * MXNet runs these with FComputeDynamic: boolean_mask, nonzero and unique size their outputs
 * from the data, and the shape-tensor ops (_zeros_shape, _contrib_dynamic_reshape...) read a
 * shape from an input tensor's values. Their shape rules give the data-dependent dims as
 * unbacked dims (ds_shape_ctx_unbacked_dim: `u0` in [0, upper] symbolically, unknown in
 * concrete inference); their kernels size and allocate their outputs once they have read the
 * inputs (ds_kernel_alloc_output, kernels/common/ds-kernel.h).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ds-dtype.h"
#include "ds-tensor.h"

#define DS_OPS_DYNAMIC(X)                                                                          \
  X(BOOLEAN_MASK, "_contrib_boolean_mask")                                                         \
  X(NONZERO, "_npx_nonzero")                                                                       \
  X(ZEROS_SHAPE, "_zeros_shape")                                                                   \
  X(ONES_SHAPE, "_ones_shape")                                                                     \
  X(FULL_SHAPE, "_full_shape")                                                                     \
  X(DYNAMIC_RESHAPE, "_contrib_dynamic_reshape")                                                   \
  X(DYNAMIC_ARANGE, "_contrib_dynamic_arange")                                                     \
  X(UNIQUE, "_npi_unique")

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
 * from the remaining size, at most once) are taken; other negative values are invalid. The
 * output's rank is the length of `shape`. */

/* _contrib_dynamic_arange(start, stop, step): _arange with tensor bounds. Each bound is a
 * scalar tensor (shape () or (1,)) of any numeric dtype; the output holds
 * max(0, ceil((stop - start) / step)) values start + i * step, computed in double and then
 * converted to `dtype`. A zero step is an invalid argument. */
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
} DsUniqueParam;

/* The number of outputs of _npi_unique: the unique values plus one per requested extra. */
static inline int ds_unique_num_outputs(const DsUniqueParam *p)
{
  return 1 + (p->return_index ? 1 : 0) + (p->return_inverse ? 1 : 0) + (p->return_counts ? 1 : 0);
}
