/* ds-ops-kernel-args.c: see ds-ops-kernel-args.h. */
#include "ds-ops-kernel-args.h"

/* The output has the input's rank and dtype. */
static bool one_to_one(const DsKernelCtx *ctx)
{
  return ctx->outputs[0].ndim == ctx->inputs[0].ndim &&
         ctx->outputs[0].dtype == ctx->inputs[0].dtype;
}

DsStatus ds_kernel_args_transpose(const DsKernelCtx *ctx, int perm[DS_MAX_NDIM])
{
  if (!one_to_one(ctx))
    return DS_STATUS_INVALID_ARGUMENT;
  const DsTransposeParam *p = ctx->param;
  return ds_geom_transpose_perm(p->axes, p->n_axes, ctx->inputs[0].ndim, perm)
             ? DS_STATUS_OK
             : DS_STATUS_INVALID_ARGUMENT;
}

DsStatus ds_kernel_args_swap_axis(const DsKernelCtx *ctx, int perm[DS_MAX_NDIM])
{
  if (!one_to_one(ctx))
    return DS_STATUS_INVALID_ARGUMENT;
  const DsSwapAxisParam *p = ctx->param;
  return ds_geom_swap_perm(p->dim1, p->dim2, ctx->inputs[0].ndim, perm)
             ? DS_STATUS_OK
             : DS_STATUS_INVALID_ARGUMENT;
}

DsStatus ds_kernel_args_slice_channel(const DsKernelCtx *ctx, int *n_parts, int64_t *outer,
                                      int64_t *inner)
{
  const DsSliceChannelParam *p = ctx->param;
  *n_parts = p->num_outputs;
  return ds_geom_split(&ctx->inputs[0], ctx->outputs, p->num_outputs, p->axis, p->squeeze_axis,
                       outer, inner)
             ? DS_STATUS_OK
             : DS_STATUS_INVALID_ARGUMENT;
}

DsStatus ds_kernel_args_stack(const DsKernelCtx *ctx, int64_t *outer, int64_t *inner)
{
  const DsStackParam *p = ctx->param;
  return ds_geom_stack(ctx->inputs, ctx->n_inputs, &ctx->outputs[0], p->axis, outer, inner)
             ? DS_STATUS_OK
             : DS_STATUS_INVALID_ARGUMENT;
}

DsStatus ds_kernel_args_slice_axis(const DsKernelCtx *ctx, int *axis, int64_t *first)
{
  const DsSliceAxisParam *p = ctx->param;
  if (ctx->outputs[0].dtype != ctx->inputs[0].dtype)
    return DS_STATUS_INVALID_ARGUMENT;
  return ds_geom_slice_axis(&ctx->inputs[0], &ctx->outputs[0], p->axis, p->begin, p->end,
                            p->has_end, axis, first)
             ? DS_STATUS_OK
             : DS_STATUS_INVALID_ARGUMENT;
}
