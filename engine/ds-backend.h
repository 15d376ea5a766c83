/* ds-backend.h: what the engine needs from a backend.
 *
 * The engine never names a backend: the executor asks a DsBackend for each node's kernel once,
 * at bind time, and for memory. Backends live in backends/<name>/ and the list of compiled-in
 * backends in backends/ds-backends.c.
 *
 * A device backend (memory DS_MEMORY_DEVICE) keeps its buffers where host code cannot read
 * them: its kernels take and give device tensors, and the dynamic executor copies tensors
 * across with copy_to_device/copy_to_host where a region placed on it meets host code.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "ds-kernel.h"
#include "ds-op.h"

typedef struct {
  const char *name; /* "cpu", "cuda" */
  DsMemory memory;  /* where alloc_buffer's buffers live */
  /* The kernel for `op`, or NULL if this backend does not implement it. */
  const DsKernel *(*get_kernel)(DsOpId op);
  /* Buffers for tensors: 64-byte aligned (256 on a device); free_buffer(NULL) is a no-op. */
  void *(*alloc_buffer)(size_t bytes);
  void (*free_buffer)(void *ptr);
  /* Threads its kernels (and its BLAS) may use. */
  void (*set_n_threads)(int n_threads);
  /* One line for --version: the backend and what it finds on this machine, for example
   * "cpu: avx2+fma kernels, 8 threads" or "cuda 13.0: no usable device (reason)". */
  void (*describe)(char *line, size_t size);
  /* Frees what the backend keeps for the life of the process (library handles, streams), so
   * that a leak check at exit finds nothing; called once, at exit, after every session is
   * freed. NULL when it keeps nothing. */
  void (*release)(void);

  /* ---- device backends only (NULL on host backends) ---- */

  /* Why it cannot run in this process ("no CUDA device", the driver's message), or NULL when
   * it can. Nothing else is called on a backend that gives a reason. */
  const char *(*unavailable)(void);
  /* Blocking copies between host memory and this backend's buffers; false on a device error. */
  bool (*copy_to_device)(void *dst, const void *src, size_t bytes);
  bool (*copy_to_host)(void *dst, const void *src, size_t bytes);
  /* Waits until every kernel launched so far has finished; false on a device error. */
  bool (*synchronize)(void);
  /* Whether its kernel for `op` handles these input and output dtypes (NULL: every dtype the
   * op allows). Placement keeps a node on the host when this says no. */
  bool (*supports)(DsOpId op, const void *param, const DsDType *in, int n_in, const DsDType *out,
                   int n_out);
} DsBackend;

/* The compiled-in backend called `name`, or NULL. */
const DsBackend *ds_backend_find(const char *name);
/* The names of the compiled-in backends, "cpu" first, NULL-terminated. */
const char *const *ds_backend_names(void);
/* Calls every compiled-in backend's release(); at exit only. */
void ds_backends_release(void);
