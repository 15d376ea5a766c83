/* ds-ops-kernel-args.h: an op's run-time arguments, read and checked once for every backend.
 *
 * A kernel gets its op's parsed attributes and its tensors (DsKernelCtx). What it does with
 * the geometry differs per backend (a CPU loop, a CUDA launch), but reading the attributes
 * and resolving the geometry does not: those steps live here, next to the attribute structs,
 * and return DS_STATUS_INVALID_ARGUMENT for tensors the op's shape rules would not have given.
 * The counts of inputs and outputs are the engine's to check (ds_op_check_node_args()). */
#pragma once

#include "ds-geometry-tensor.h"
#include "ds-kernel.h"
#include "ds-ops-index.h"
#include "ds-ops-tensor.h"

/* transpose and SwapAxis: one input, one output of its rank and dtype; `perm` gets the input
 * axis each output axis reads. */
DsStatus ds_kernel_args_transpose(const DsKernelCtx *ctx, int perm[DS_MAX_NDIM]);
DsStatus ds_kernel_args_swap_axis(const DsKernelCtx *ctx, int perm[DS_MAX_NDIM]);

/* SliceChannel: one input split into num_outputs equal parts along its axis, seen as
 * (outer, parts, inner) with `inner` elements per part per outer index. */
DsStatus ds_kernel_args_slice_channel(const DsKernelCtx *ctx, int *n_parts, int64_t *outer,
                                      int64_t *inner);

/* stack: num_args inputs into a new axis, the output seen as (outer, num_args, inner). */
DsStatus ds_kernel_args_stack(const DsKernelCtx *ctx, int64_t *outer, int64_t *inner);

/* slice_axis: one output of the input's dtype, a run along `*axis` from index `*first`. */
DsStatus ds_kernel_args_slice_axis(const DsKernelCtx *ctx, int *axis, int64_t *first);
