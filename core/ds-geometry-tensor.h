/* ds-geometry-tensor.h: the shape geometry of the data-movement ops, shared by every backend.
 *
 * Shapes and parameters are resolved once here so every backend computes the same thing: each
 * function checks a kernel's tensors against its op's attributes and describes the work as
 * sizes and element strides, and the CPU and CUDA kernels only move the bytes. So both accept
 * and refuse exactly the same nodes. core knows no op parameter structs (they are
 * the engine's), so the attributes come as plain values.
 *
 * Unless it says otherwise, a function returns false when the tensors do not fit the op: the
 * kernel's DS_STATUS_INVALID_ARGUMENT. Dtypes are the caller's, except where noted.
 */
#pragma once

#include "ds-status.h"
#include "ds-tensor.h"

/* Whether a and b have the same rank and dims. */
bool ds_geom_same_shape(const DsTensor *a, const DsTensor *b);

/* `axis` (negative counts from the end) as an index into `ndim` dims; -1 when out of range. */
int ds_geom_axis(int64_t axis, int ndim);

/* Row-major element strides of `shape`. */
void ds_geom_strides(const int64_t *shape, int ndim, int64_t *strides);

/* ---- broadcasts ---- */

/* in's element stride along each dim of out when in is stretched to out's shape (NumPy's rule:
 * right-aligned, each dim of in equal to out's or 1; a stretched dim reads stride 0). */
bool ds_geom_broadcast_strides(const DsTensor *in, const DsTensor *out, int64_t *in_stride);

/* The most operands of one broadcast plan (where's condition, x and y). */
#define DS_GEOM_BCAST_MAX_OPS 3

/* Up to three operands broadcast to an output: output element (i0, i1, ...) reads operand k
 * at sum(i_d * stride[k][d]), a stride being 0 where operand k is stretched. Size-1 dims are
 * dropped and neighbours every operand walks alike merged, so same-shape operands become one
 * dim of stride 1 and a scalar one of stride 0: kernels then do no division per element. The
 * strides of operands past the plan's count are 0. */
typedef struct {
  int ndim; /* >= 1 */
  int64_t shape[DS_MAX_NDIM];
  int64_t stride[DS_GEOM_BCAST_MAX_OPS][DS_MAX_NDIM];
} DsGeomBcast;

/* The plan for `out` from n_ops (at most DS_GEOM_BCAST_MAX_OPS) operands broadcasting to it. */
bool ds_geom_broadcast(const DsTensor *const *ops, int n_ops, const DsTensor *out,
                       DsGeomBcast *plan);

/* ---- transpose, SwapAxis ---- */

/* transpose's order: perm[i] is the input axis output axis i reads. `axes` lists every one of
 * the `ndim` axes once (negative counting from the end); n_axes 0 reverses them. */
bool ds_geom_transpose_perm(const int64_t *axes, int n_axes, int ndim, int *perm);

/* SwapAxis's order: the identity with dim1 and dim2 exchanged. */
bool ds_geom_swap_perm(int64_t dim1, int64_t dim2, int ndim, int *perm);

/* A permuted copy: out's dims must be in's in the order `perm` gives; in_stride[i] is in's
 * element stride along output dim i. */
bool ds_geom_permute(const DsTensor *in, const DsTensor *out, const int *perm, int64_t *in_stride);

/* ---- Concat, stack, SliceChannel ---- */

/* Concat along `dim`: every input of out's rank and dtype, its other dims out's, the lengths
 * along the axis summing to out's. *axis: the axis. */
bool ds_geom_concat(const DsTensor *inputs, int n_inputs, const DsTensor *out, int64_t dim,
                    int *axis);

/* stack: n_inputs tensors of one shape and out's dtype as slots of out's new axis `axis`
 * (negative counts from the end of out's dims). Input k then moves as (outer, inner) blocks
 * into slot k of out's (outer, n_inputs, inner). */
bool ds_geom_stack(const DsTensor *inputs, int n_inputs, const DsTensor *out, int64_t axis,
                   int64_t *outer, int64_t *inner);

/* SliceChannel: `in` cut along `axis` into n equal parts, outs[k] (of in's dtype) being part k,
 * without the axis when `squeeze` (which wants parts of length 1). in is then (outer, n, inner)
 * blocks and outs[k] its (outer, inner) blocks of slot k. */
bool ds_geom_split(const DsTensor *in, const DsTensor *outs, int n, int64_t axis, bool squeeze,
                   int64_t *outer, int64_t *inner);

/* ---- slice_axis, tile, repeat, reverse ---- */

/* slice_axis: out is in's positions [begin, end) along `axis` (negative bounds count from the
 * end; without `has_end`, to the end), every other dim whole. *axis_out and *first place it. */
bool ds_geom_slice_axis(const DsTensor *in, const DsTensor *out, int64_t axis, int64_t begin,
                        int64_t end, bool has_end, int *axis_out, int64_t *first);

/* tile: out's dims are in's times reps, both right-aligned (missing leading dims count 1); out
 * has max(in's rank, n_reps) dims, or in's with no reps. in_shape (may be NULL) gets in's dims
 * extended to out's rank. */
bool ds_geom_tile(const DsTensor *in, const DsTensor *out, const int64_t *reps, int n_reps,
                  int64_t *in_shape);

/* repeat with repeats > 0: each element `repeats` times in a row along `axis` (has_axis) or in
 * the flattened input (out 1-D). *axis_out: the axis, -1 for the flattened form. */
bool ds_geom_repeat(const DsTensor *in, const DsTensor *out, int64_t repeats, bool has_axis,
                    int64_t axis, int *axis_out);

/* reverse: the element strides and start offset that read a row-major tensor of `ndim` dims
 * `shape` with the listed axes reversed. Each listing flips its axis, so listing one twice
 * restores it (MXNet's kernel). */
bool ds_geom_reverse(const int64_t *shape, int ndim, const int64_t *axes, int n_axes,
                     int64_t *stride, int64_t *base);

/* ---- take, boolean_mask ---- */

/* take: out's (outer, k, trail) blocks gather data's (outer, m, trail) ones along `axis` by the
 * k indices of idx. */
typedef struct {
  int axis;
  int64_t outer, k, m, trail;
} DsGeomTake;

/* take's checks in its order, as a kernel status: INVALID_ARGUMENT for an axis out of range or
 * out not of data's dtype, UNSUPPORTED for indices of no numeric dtype (float16 is storage
 * only), INVALID_ARGUMENT when out's shape is not data's with the axis replaced by idx's dims,
 * and OUT_OF_RANGE when indices must read an empty axis (whatever the mode). */
DsStatus ds_geom_take(const DsTensor *data, const DsTensor *idx, const DsTensor *out, int64_t axis,
                      DsGeomTake *g);

/* boolean_mask's checks in its order, as a kernel status: INVALID_ARGUMENT unless `axis` is
 * one of data's and `mask` is 1-D with a flag per slice along it, UNSUPPORTED for an invalid
 * dtype. *axis_out: the axis. */
DsStatus ds_geom_boolean_mask(const DsTensor *data, const DsTensor *mask, int64_t axis,
                              int *axis_out);
