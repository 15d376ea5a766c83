/* ds-buffer-pool.c: slot affinity first, then best fit, then a new buffer. */
#include "ds-buffer-pool.h"

#include "ds-error.h"
#include "ds-ndarray.h"

/* Requests are rounded up so that small size changes reuse buffers. */
#define POOL_ALIGN 256

typedef struct {
  void *data;
  gsize capacity;
  guint slot; /* the slot that last used it */
  gboolean in_use;
} Buffer;

struct _DsBufferPool {
  const DsBackend *backend;
  GArray *buffers;     /* Buffer; a pool holds tens of buffers, so linear scans are cheapest */
  GHashTable *by_slot; /* slot -> index + 1 of the buffer it last used */
  DsBufferPoolStats stats;
};

DsBufferPool *ds_buffer_pool_new(const DsBackend *backend)
{
  DsBufferPool *pool = g_new0(DsBufferPool, 1);
  pool->backend = backend;
  pool->buffers = g_array_new(FALSE, FALSE, sizeof(Buffer));
  pool->by_slot = g_hash_table_new(g_direct_hash, g_direct_equal);
  return pool;
}

void ds_buffer_pool_free(DsBufferPool *pool)
{
  if (pool == NULL)
    return;
  for (guint i = 0; i < pool->buffers->len; i++)
    pool->backend->free_buffer(g_array_index(pool->buffers, Buffer, i).data);
  ds_memory_release(pool->stats.bytes_held);
  g_array_unref(pool->buffers);
  g_hash_table_unref(pool->by_slot);
  g_free(pool);
}

static void *take(DsBufferPool *pool, guint index, guint slot)
{
  Buffer *b = &g_array_index(pool->buffers, Buffer, index);
  b->in_use = TRUE;
  if (b->slot != slot) {
    b->slot = slot;
    if (slot != G_MAXUINT)
      g_hash_table_insert(pool->by_slot, GUINT_TO_POINTER(slot), GUINT_TO_POINTER(index + 1));
  }
  pool->stats.n_in_use++;
  pool->stats.bytes_in_use += b->capacity;
  pool->stats.peak_bytes_in_use = MAX(pool->stats.peak_bytes_in_use, pool->stats.bytes_in_use);
  return b->data;
}

void *ds_buffer_pool_acquire(DsBufferPool *pool, guint slot, gsize bytes, const char *what,
                             GError **error)
{
  if (what == NULL)
    what = "a buffer";
  if (bytes > G_MAXSIZE - POOL_ALIGN) {
    g_set_error(error, DS_ERROR, DS_ERROR_LIMIT, "%s: %zu bytes is too large", what, bytes);
    return NULL;
  }
  gsize want = MAX((bytes + POOL_ALIGN - 1) / POOL_ALIGN * POOL_ALIGN, POOL_ALIGN);

  /* 1. The slot's own buffer from last time. */
  if (slot != G_MAXUINT) {
    guint index = GPOINTER_TO_UINT(g_hash_table_lookup(pool->by_slot, GUINT_TO_POINTER(slot)));
    if (index > 0) {
      Buffer *b = &g_array_index(pool->buffers, Buffer, index - 1);
      if (!b->in_use && b->slot == slot && b->capacity >= want) {
        pool->stats.n_reuses++;
        return take(pool, index - 1, slot);
      }
    }
  }
  /* 2. Best fit among the free buffers. */
  guint best = G_MAXUINT;
  for (guint i = 0; i < pool->buffers->len; i++) {
    const Buffer *b = &g_array_index(pool->buffers, Buffer, i);
    if (!b->in_use && b->capacity >= want &&
        (best == G_MAXUINT || b->capacity < g_array_index(pool->buffers, Buffer, best).capacity))
      best = i;
  }
  if (best != G_MAXUINT) {
    pool->stats.n_reuses++;
    return take(pool, best, slot);
  }
  /* 3. A new buffer. */
  if (!ds_memory_reserve(want, what, error))
    return NULL;
  void *data = pool->backend->alloc_buffer(want);
  if (data == NULL) {
    ds_memory_release(want);
    g_set_error(error, DS_ERROR, DS_ERROR_LIMIT, "%s: cannot allocate %zu bytes", what, want);
    return NULL;
  }
  Buffer b = {data, want, G_MAXUINT, FALSE};
  g_array_append_val(pool->buffers, b);
  pool->stats.n_allocations++;
  pool->stats.n_buffers++;
  pool->stats.bytes_held += want;
  return take(pool, pool->buffers->len - 1, slot);
}

void ds_buffer_pool_release(DsBufferPool *pool, void *buffer)
{
  if (buffer == NULL)
    return;
  for (guint i = 0; i < pool->buffers->len; i++) {
    Buffer *b = &g_array_index(pool->buffers, Buffer, i);
    if (b->data == buffer && b->in_use) {
      b->in_use = FALSE;
      pool->stats.n_in_use--;
      pool->stats.bytes_in_use -= b->capacity;
      return;
    }
  }
  g_return_if_reached();
}

void ds_buffer_pool_get_stats(const DsBufferPool *pool, DsBufferPoolStats *stats)
{
  *stats = pool->stats;
}
