/* ds-thread-pool.c: fork-join over a condition variable; see the header for the why. */
#include "ds-thread-pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

struct DsThreadPool {
  int n_threads;
  pthread_t *workers;
  pthread_mutex_t lock;
  pthread_cond_t work_ready;
  pthread_cond_t work_done;
  /* The current job; `generation` changes each time a new one is posted. */
  uint64_t generation;
  DsParallelFn fn;
  void *ctx;
  int64_t n;
  int n_chunks;
  int pending; /* chunks not finished yet */
  bool quit;
};

typedef struct {
  DsThreadPool *pool;
  int index; /* the chunk this worker takes: 1..n_threads-1 (0 is the caller's) */
} WorkerArgs;

static void chunk_range(int64_t n, int n_chunks, int chunk, int64_t *begin, int64_t *end)
{
  int64_t base = n / n_chunks, extra = n % n_chunks;
  *begin = chunk * base + (chunk < extra ? chunk : extra);
  *end = *begin + base + (chunk < extra ? 1 : 0);
}

static void *worker_main(void *data)
{
  WorkerArgs *args = data;
  DsThreadPool *pool = args->pool;
  uint64_t seen = 0;

  pthread_mutex_lock(&pool->lock);
  for (;;) {
    while (!pool->quit && pool->generation == seen)
      pthread_cond_wait(&pool->work_ready, &pool->lock);
    if (pool->quit)
      break;
    seen = pool->generation;
    if (args->index >= pool->n_chunks)
      continue;
    DsParallelFn fn = pool->fn;
    void *ctx = pool->ctx;
    int64_t begin, end;
    chunk_range(pool->n, pool->n_chunks, args->index, &begin, &end);
    pthread_mutex_unlock(&pool->lock);

    fn(ctx, begin, end);

    pthread_mutex_lock(&pool->lock);
    if (--pool->pending == 0)
      pthread_cond_signal(&pool->work_done);
  }
  pthread_mutex_unlock(&pool->lock);
  free(args);
  return NULL;
}

DsThreadPool *ds_thread_pool_new(int n_threads)
{
  DsThreadPool *pool = calloc(1, sizeof *pool);
  if (pool == NULL)
    return NULL;
  pool->n_threads = n_threads < 1 ? 1 : n_threads;
  pthread_mutex_init(&pool->lock, NULL);
  pthread_cond_init(&pool->work_ready, NULL);
  pthread_cond_init(&pool->work_done, NULL);
  if (pool->n_threads > 1) {
    pool->workers = calloc((size_t)pool->n_threads - 1, sizeof *pool->workers);
    for (int i = 1; pool->workers != NULL && i < pool->n_threads; i++) {
      WorkerArgs *args = malloc(sizeof *args);
      if (args == NULL)
        goto fail_at;
      args->pool = pool;
      args->index = i;
      if (pthread_create(&pool->workers[i - 1], NULL, worker_main, args) != 0) {
        free(args);
      fail_at:
        pool->n_threads = i; /* keep the threads that did start; free() joins them */
        ds_thread_pool_free(pool);
        return NULL;
      }
    }
    if (pool->workers == NULL) {
      free(pool);
      return NULL;
    }
  }
  return pool;
}

void ds_thread_pool_free(DsThreadPool *pool)
{
  if (pool == NULL)
    return;
  pthread_mutex_lock(&pool->lock);
  pool->quit = true;
  pthread_cond_broadcast(&pool->work_ready);
  pthread_mutex_unlock(&pool->lock);
  for (int i = 1; i < pool->n_threads; i++)
    pthread_join(pool->workers[i - 1], NULL);
  free(pool->workers);
  pthread_mutex_destroy(&pool->lock);
  pthread_cond_destroy(&pool->work_ready);
  pthread_cond_destroy(&pool->work_done);
  free(pool);
}

int ds_thread_pool_get_n_threads(const DsThreadPool *pool)
{
  return pool == NULL ? 1 : pool->n_threads;
}

void ds_parallel_for(DsThreadPool *pool, int64_t n, int64_t grain, DsParallelFn fn, void *ctx)
{
  if (n <= 0)
    return;
  int n_chunks = pool == NULL ? 1 : pool->n_threads;
  if (grain < 1)
    grain = 1;
  if (n / grain < n_chunks)
    n_chunks = (int)(n / grain);
  if (n_chunks <= 1) {
    fn(ctx, 0, n);
    return;
  }

  pthread_mutex_lock(&pool->lock);
  pool->fn = fn;
  pool->ctx = ctx;
  pool->n = n;
  pool->n_chunks = n_chunks;
  pool->pending = n_chunks - 1;
  pool->generation++;
  pthread_cond_broadcast(&pool->work_ready);
  pthread_mutex_unlock(&pool->lock);

  int64_t begin, end;
  chunk_range(n, n_chunks, 0, &begin, &end);
  fn(ctx, begin, end);

  pthread_mutex_lock(&pool->lock);
  while (pool->pending > 0)
    pthread_cond_wait(&pool->work_done, &pool->lock);
  pthread_mutex_unlock(&pool->lock);
}

typedef struct {
  DsParallelFn fn;
  void *ctx;
  int64_t n, grain;
  atomic_int_fast64_t next; /* the first index no thread has taken yet */
} Pieces;

static void take_pieces(void *data, int64_t begin, int64_t end)
{
  Pieces *pieces = data;
  (void)begin, (void)end;
  for (;;) {
    int64_t first = atomic_fetch_add(&pieces->next, pieces->grain);
    if (first >= pieces->n)
      return;
    int64_t last = pieces->n - first < pieces->grain ? pieces->n : first + pieces->grain;
    pieces->fn(pieces->ctx, first, last);
  }
}

void ds_parallel_for_dynamic(DsThreadPool *pool, int64_t n, int64_t grain, DsParallelFn fn,
                             void *ctx)
{
  if (n <= 0)
    return;
  if (grain < 1)
    grain = 1;
  int n_threads = ds_thread_pool_get_n_threads(pool);
  if (n_threads <= 1 || n <= grain) {
    fn(ctx, 0, n);
    return;
  }
  Pieces pieces = {.fn = fn, .ctx = ctx, .n = n, .grain = grain};
  atomic_init(&pieces.next, 0);
  int64_t n_pieces = (n + grain - 1) / grain;
  ds_parallel_for(pool, n_pieces < n_threads ? n_pieces : n_threads, 1, take_pieces, &pieces);
}
