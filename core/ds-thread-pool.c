/* ds-thread-pool.c: fork-join with a short spin before sleeping; see the header for the why.
 *
 * Posting a job: the caller writes the job, then publishes a new `job_word` (a counter and the
 * number of chunks in one atomic word, so a worker knows from the word alone whether the job
 * is its own) under the lock, and wakes the workers only if some sleep. Finishing: each worker
 * counts `pending` down; the last one wakes the caller only if it sleeps. Neither side touches
 * the lock on the fast path beyond the post itself. */
#include "ds-thread-pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield")
#else
#define cpu_relax() ((void)0)
#endif

/* How long a worker waits for the next job, and the caller for its workers, before sleeping.
 * Long enough to bridge the serial work between two parallel kernels of a model (the
 * elementwise steps of an LSTM cell between its products take 10 to 30 µs), short enough that
 * an idle pool stops using the cores almost at once. */
#define SPIN_NS 50000

/* job_word: the job's counter above CHUNK_BITS, its chunk count below. */
#define CHUNK_BITS 16
#define CHUNK_MASK ((UINT64_C(1) << CHUNK_BITS) - 1)

struct DsThreadPool {
  int n_threads;
  pthread_t *workers;
  pthread_mutex_t lock;
  pthread_cond_t work_ready;
  pthread_cond_t work_done;
  /* The current job, written by the caller before it publishes job_word. A worker whose index
   * is below the word's chunk count reads them; the next job cannot be posted before it has
   * finished, so they stay put while it does. */
  DsParallelFn fn;
  void *ctx;
  int64_t n;
  atomic_uint_fast64_t job_word;
  atomic_int pending; /* chunks not finished yet */
  atomic_bool quit;
  int sleepers;         /* workers waiting on work_ready (under lock) */
  bool caller_sleeping; /* the caller waits on work_done (under lock) */
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

static int64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spins until `done(pool)` holds or SPIN_NS have passed; true if it holds. The clock is read
 * once every 64 pauses (a pause is tens of cycles). */
static bool spin_until(DsThreadPool *pool, bool (*done)(DsThreadPool *, uint64_t), uint64_t arg)
{
  int64_t deadline = 0;
  for (int i = 0;; i++) {
    if (done(pool, arg))
      return true;
    if ((i & 63) == 63) {
      int64_t t = now_ns();
      if (deadline == 0)
        deadline = t + SPIN_NS;
      else if (t >= deadline)
        return false;
    }
    cpu_relax();
  }
}

static bool job_posted(DsThreadPool *pool, uint64_t seen)
{
  return atomic_load_explicit(&pool->job_word, memory_order_acquire) != seen ||
         atomic_load_explicit(&pool->quit, memory_order_relaxed);
}

static bool all_done(DsThreadPool *pool, uint64_t unused)
{
  (void)unused;
  return atomic_load_explicit(&pool->pending, memory_order_acquire) == 0;
}

/* The next job word after `seen`, or `seen` itself when the pool is quitting. */
static uint64_t wait_for_job(DsThreadPool *pool, uint64_t seen)
{
  if (!spin_until(pool, job_posted, seen)) {
    pthread_mutex_lock(&pool->lock);
    pool->sleepers++;
    while (atomic_load_explicit(&pool->job_word, memory_order_acquire) == seen &&
           !atomic_load_explicit(&pool->quit, memory_order_relaxed))
      pthread_cond_wait(&pool->work_ready, &pool->lock);
    pool->sleepers--;
    pthread_mutex_unlock(&pool->lock);
  }
  if (atomic_load_explicit(&pool->quit, memory_order_relaxed))
    return seen;
  return atomic_load_explicit(&pool->job_word, memory_order_acquire);
}

static void *worker_main(void *data)
{
  WorkerArgs *args = data;
  DsThreadPool *pool = args->pool;
  uint64_t seen = 0;
  for (;;) {
    uint64_t word = wait_for_job(pool, seen);
    if (word == seen)
      break; /* quitting */
    seen = word;
    const int n_chunks = (int)(word & CHUNK_MASK);
    if (args->index >= n_chunks)
      continue;
    int64_t begin, end;
    chunk_range(pool->n, n_chunks, args->index, &begin, &end);
    pool->fn(pool->ctx, begin, end);
    if (atomic_fetch_sub_explicit(&pool->pending, 1, memory_order_acq_rel) == 1) {
      pthread_mutex_lock(&pool->lock);
      if (pool->caller_sleeping)
        pthread_cond_signal(&pool->work_done);
      pthread_mutex_unlock(&pool->lock);
    }
  }
  free(args);
  return NULL;
}

DsThreadPool *ds_thread_pool_new(int n_threads)
{
  DsThreadPool *pool = calloc(1, sizeof *pool);
  if (pool == NULL)
    return NULL;
  pool->n_threads = n_threads < 1 ? 1 : n_threads > (int)CHUNK_MASK ? (int)CHUNK_MASK : n_threads;
  pthread_mutex_init(&pool->lock, NULL);
  pthread_cond_init(&pool->work_ready, NULL);
  pthread_cond_init(&pool->work_done, NULL);
  atomic_init(&pool->job_word, 0);
  atomic_init(&pool->pending, 0);
  atomic_init(&pool->quit, false);
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
  atomic_store(&pool->quit, true);
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

  pool->fn = fn;
  pool->ctx = ctx;
  pool->n = n;
  atomic_store_explicit(&pool->pending, n_chunks - 1, memory_order_relaxed);
  uint64_t word = atomic_load_explicit(&pool->job_word, memory_order_relaxed);
  word = ((word >> CHUNK_BITS) + 1) << CHUNK_BITS | (uint64_t)n_chunks;
  /* Published under the lock, so a worker that found no job under it is asleep before the
   * test of `sleepers` below, and is woken. */
  pthread_mutex_lock(&pool->lock);
  atomic_store_explicit(&pool->job_word, word, memory_order_release);
  if (pool->sleepers > 0)
    pthread_cond_broadcast(&pool->work_ready);
  pthread_mutex_unlock(&pool->lock);

  int64_t begin, end;
  chunk_range(n, n_chunks, 0, &begin, &end);
  fn(ctx, begin, end);

  if (!spin_until(pool, all_done, 0)) {
    pthread_mutex_lock(&pool->lock);
    pool->caller_sleeping = true;
    while (atomic_load_explicit(&pool->pending, memory_order_acquire) > 0)
      pthread_cond_wait(&pool->work_done, &pool->lock);
    pool->caller_sleeping = false;
    pthread_mutex_unlock(&pool->lock);
  }
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
