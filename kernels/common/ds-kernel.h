/* ds-kernel.h: the calling convention every backend kernel follows.
 *
 * A kernel reads its inputs, writes its preallocated outputs and returns a status. It never
 * allocates tensors, prints or aborts. Scratch memory it needs is asked for up front through
 * the kernel's `workspace_bytes` function, so the executor can plan it and execution never
 * allocates.
 */
#pragma once

#include "ds-status.h"
#include "ds-tensor.h"
#include "ds-thread-pool.h"

typedef struct {
  const void *param;        /* the op's parsed attribute struct (engine/ds-op-params.h) */
  const DsTensor *inputs;   /* n_inputs views, in the op's argument order */
  int n_inputs;
  DsTensor *outputs;        /* n_outputs views with shapes and buffers already set */
  int n_outputs;
  void *workspace;          /* workspace_bytes() bytes, 64-byte aligned; NULL if 0 */
  DsThreadPool *pool;       /* for ds_parallel_for; may be NULL */
} DsKernelCtx;

typedef DsStatus (*DsKernelFn)(const DsKernelCtx *ctx);

/* Scratch bytes a kernel needs for these shapes; NULL in DsKernel means none. */
typedef size_t (*DsWorkspaceFn)(const void *param, const DsTensor *inputs, int n_inputs,
                                const DsTensor *outputs, int n_outputs);

typedef struct {
  DsKernelFn run;
  DsWorkspaceFn workspace_bytes;
} DsKernel;
