/* ds-backend.h: what the engine needs from a backend.
 *
 * The engine never names a backend: the executor asks a DsBackend for each node's kernel once,
 * at bind time, and for memory. Backends live in kernels/<name>/ and the list of compiled-in
 * backends in kernels/ds-backends.c.
 */
#pragma once

#include <stddef.h>

#include "ds-kernel.h"
#include "ds-op.h"

typedef struct {
  const char *name; /* "cpu", "cuda" */
  /* The kernel for `op`, or NULL if this backend does not implement it. */
  const DsKernel *(*get_kernel)(DsOpId op);
  /* Buffers for tensors: 64-byte aligned; free_buffer(NULL) is a no-op. */
  void *(*alloc_buffer)(size_t bytes);
  void (*free_buffer)(void *ptr);
  /* Threads its kernels (and its BLAS) may use. */
  void (*set_n_threads)(int n_threads);
} DsBackend;

/* The compiled-in backend called `name`, or NULL. */
const DsBackend *ds_backend_find(const char *name);
