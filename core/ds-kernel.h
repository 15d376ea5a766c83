/* ds-kernel.h: the calling convention every backend kernel follows.
 *
 * A kernel reads its inputs, writes its preallocated outputs and returns a status. It never
 * allocates tensors, prints or aborts. Scratch memory it needs is asked for up front through
 * the kernel's `workspace_bytes` function, so the executor can plan it and execution never
 * allocates.
 *
 * A kernel is called with its op's parsed attributes (`param`, when the op has any) and the
 * input count they call for: the engine checks both once, when it binds the node
 * (ds_op_check_node_args), and the kernel need not check them again.
 *
 * Dynamic-shape kernels (ops with DS_OP_TRAIT_DYNAMIC_SHAPE: boolean_mask, nonzero, unique...;
 * MXNet's FComputeDynamic) cannot have their outputs sized in advance. They are called with
 * outputs of unknown shape (ndim -1, data NULL); once a kernel knows an output's size it sets
 * that output's dtype, ndim and shape and calls ds_kernel_alloc_output(), which points `data`
 * at a buffer from the executor's pool. Their `workspace_bytes` sees only the inputs.
 */
#pragma once

#include "ds-status.h"
#include "ds-tensor.h"
#include "ds-thread-pool.h"

/* Gives `output` (dtype, ndim and shape set by the kernel) a buffer; sets output->data. */
typedef DsStatus (*DsOutputAllocFn)(void *alloc_data, int index, DsTensor *output);

typedef struct {
  const void *param;        /* the op's parsed attribute struct (engine/ops/ds-ops-*.h) */
  const DsTensor *inputs;   /* n_inputs views, in the op's argument order */
  int n_inputs;
  DsTensor *outputs;        /* n_outputs views with shapes and buffers already set */
  int n_outputs;
  void *workspace;          /* workspace_bytes() bytes, 64-byte aligned; NULL if 0 */
  DsThreadPool *pool;       /* for ds_parallel_for; may be NULL */
  DsOutputAllocFn alloc_output; /* dynamic-shape kernels only; NULL otherwise */
  void *alloc_data;
} DsKernelCtx;

/* For dynamic-shape kernels: allocates output `index` once its dtype, ndim and shape are set.
 * DS_STATUS_NO_MEMORY when the pool cannot give the bytes (or the memory limit forbids it). */
static inline DsStatus ds_kernel_alloc_output(const DsKernelCtx *ctx, int index)
{
  if (ctx->alloc_output == NULL)
    return DS_STATUS_UNSUPPORTED;
  return ctx->alloc_output(ctx->alloc_data, index, &ctx->outputs[index]);
}

/* For dynamic-shape kernels of every backend: gives output `index` its dtype and shape and a
 * buffer (ds_kernel_alloc_output). One the executor already shaped and allocated must have
 * exactly that dtype and shape (DS_STATUS_INVALID_ARGUMENT otherwise); a shape whose bytes
 * would pass INT64_MAX is DS_STATUS_NO_MEMORY. */
DsStatus ds_kernel_prepare_output(const DsKernelCtx *ctx, int index, DsDType dtype, int ndim,
                                  const int64_t *shape);

typedef DsStatus (*DsKernelFn)(const DsKernelCtx *ctx);

/* Scratch bytes a kernel needs for these shapes; NULL in DsKernel means none. */
typedef size_t (*DsWorkspaceFn)(const void *param, const DsTensor *inputs, int n_inputs,
                                const DsTensor *outputs, int n_outputs);

typedef struct {
  DsKernelFn run;
  DsWorkspaceFn workspace_bytes;
} DsKernel;
