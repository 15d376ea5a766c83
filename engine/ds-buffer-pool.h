/* ds-buffer-pool.h: reusable device buffers for the dynamic executor.
 *
 * Dynamic-shape ops learn their output sizes only when they run, so their buffers cannot be
 * planned ahead. The pool hands out buffers and takes them back when the last reader is done.
 * A request first tries the buffer the same slot (an entry of the graph) had last time, then
 * the smallest free buffer big enough (best fit); only when none fits does it allocate.
 *
 * The slot affinity is what makes warm-up work: once a run at the largest sizes has taken its
 * buffers, a later run at smaller or equal sizes takes and returns buffers in the same order,
 * finds every slot's previous buffer free and big enough, and allocates nothing.
 *
 * Memory policy: the pool owns its buffers (from the backend's allocator, accounted against the
 * process memory limit) until ds_buffer_pool_free(); a buffer handed out stays valid until it
 * is released and the pool is freed.
 */
#pragma once

#include "ds-backend.h"

typedef struct _DsBufferPool DsBufferPool;

DsBufferPool *ds_buffer_pool_new(const DsBackend *backend);
void ds_buffer_pool_free(DsBufferPool *pool);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsBufferPool, ds_buffer_pool_free)

/* A buffer of at least `bytes` (64-byte aligned; a valid pointer even for 0 bytes) for `slot`
 * (any stable id; G_MAXUINT for none). NULL with a DS_ERROR_LIMIT error starting with `what`
 * (NULL: "a buffer", for callers that prefix the error themselves rather than format a name
 * on every call) when the memory limit or the allocator refuses. */
void *ds_buffer_pool_acquire(DsBufferPool *pool, guint slot, gsize bytes, const char *what,
                             GError **error);
/* Gives a buffer back for reuse. */
void ds_buffer_pool_release(DsBufferPool *pool, void *buffer);

typedef struct {
  guint64 n_allocations; /* buffers allocated since the pool was made */
  guint64 n_reuses;      /* requests served by a free buffer */
  guint n_buffers;       /* buffers held, free or in use */
  guint n_in_use;
  gsize bytes_held;   /* capacity of all buffers held */
  gsize bytes_in_use; /* capacity of the buffers in use */
  gsize peak_bytes_in_use;
} DsBufferPoolStats;

void ds_buffer_pool_get_stats(const DsBufferPool *pool, DsBufferPoolStats *stats);
