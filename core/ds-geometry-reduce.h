/* ds-geometry-reduce.h: the shape geometry of the reductions and the row-wise normalisations
 * (softmax, LayerNorm, BatchNorm), shared by every backend.
 *
 * Shapes and parameters are resolved once here so every backend computes the same thing: the
 * CPU and CUDA kernels view their input through the same (outer, len, inner) split or the
 * same kept and reduced dims, and so accept and refuse exactly the same nodes. core
 * knows no op parameter structs (they are the engine's), so the axes come as plain values:
 * an axis attribute, or the mask the engine's ds_reduce_axes_mask() makes of a reduction's.
 */
#pragma once

#include "ds-tensor.h"

/* A tensor seen as (outer, len, inner) around one axis: row (o, i) is the `len` elements
 * o * len * inner + j * inner + i. */
typedef struct {
  int axis;
  int64_t outer, len, inner;
} DsGeomAxis;

/* Splits t around `axis` (negative counts from the end); with `trailing` a row is `axis` and
 * every axis after it, flattened (inner 1). false for an axis out of range. */
bool ds_geom_axis_split(const DsTensor *t, int64_t axis, bool trailing, DsGeomAxis *g);

/* An axis reduction's index space: the input's dims, size-1 ones dropped and neighbours of the
 * same role merged, in kept dims (whose flat index is the output element) and reduced dims
 * (whose flat index runs over the `count` positions folded into each output), both lists
 * outermost first with the input's element strides. */
typedef struct {
  int nk, nr;
  int64_t kshape[DS_MAX_NDIM], kstride[DS_MAX_NDIM];
  int64_t rshape[DS_MAX_NDIM], rstride[DS_MAX_NDIM];
  int64_t n_out, count;
  bool inner_kept; /* the innermost dim is kept (or there is none): outputs are contiguous */
} DsGeomReduce;

/* The reduction of `in` over the dims `reduced` marks (one flag per dim). */
void ds_geom_reduce(const DsTensor *in, const bool *reduced, DsGeomReduce *g);
