/* ds-kernel.c: the parts of the kernel calling convention that are not inline. */
#include "ds-kernel.h"

#include <string.h>

DsStatus ds_kernel_prepare_output(const DsKernelCtx *ctx, int index, DsDType dtype, int ndim,
                                  const int64_t *shape)
{
  DsTensor *out = &ctx->outputs[index];
  if (out->ndim >= 0 && out->data != NULL) {
    if (out->dtype != dtype || out->ndim != ndim)
      return DS_STATUS_INVALID_ARGUMENT;
    for (int d = 0; d < ndim; d++)
      if (out->shape[d] != shape[d])
        return DS_STATUS_INVALID_ARGUMENT;
    return DS_STATUS_OK;
  }
  size_t nbytes;
  /* A size past int64 (a shape tensor of huge values) could never be allocated; saying so here
   * also keeps ds_tensor_numel() from overflowing later. */
  if (!ds_shape_checked_nbytes(shape, ndim, ds_dtype_size(dtype), (size_t)INT64_MAX, &nbytes))
    return DS_STATUS_NO_MEMORY;
  out->dtype = dtype;
  out->ndim = ndim;
  memcpy(out->shape, shape, sizeof(int64_t) * (size_t)ndim);
  out->data = NULL;
  return ds_kernel_alloc_output(ctx, index);
}
