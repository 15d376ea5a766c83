/* ds-thread-pool.h: a small fork-join pool for the CPU kernels' loops.
 *
 * After a job, workers spin for the next one for 50 µs, then sleep on a condition variable;
 * the caller spins as long for them to finish. Waking a sleeping thread costs tens of µs on a
 * virtual machine, which would cost more than splitting saves for the products of a loop body
 * that come every few tens of µs. The spin is short and bounded so that an idle pool does not
 * fight OpenBLAS's own threads while a large GEMM runs (the lesson PyTorch's unbounded OpenMP
 * spinning teaches). The calling thread always takes part, so a pool of N threads starts N-1
 * workers.
 *
 * Memory policy: the pool owns its threads; ds_thread_pool_free() joins them.
 */
#pragma once

#include <stdint.h>

typedef struct DsThreadPool DsThreadPool;

/* Processes the half-open index range [begin, end). */
typedef void (*DsParallelFn)(void *ctx, int64_t begin, int64_t end);

/* Creates a pool that runs loops on `n_threads` threads, the caller included. n_threads <= 1
 * gives a pool that runs everything inline. Returns NULL only if a thread cannot start. */
DsThreadPool *ds_thread_pool_new(int n_threads);
void ds_thread_pool_free(DsThreadPool *pool);
int ds_thread_pool_get_n_threads(const DsThreadPool *pool);

/* Runs fn over [0, n) split into at most one contiguous chunk per thread, and returns when all
 * chunks are done. Ranges shorter than `grain` per thread run inline on the caller: splitting
 * costs a hand-over (about a µs with spinning workers, tens with sleeping ones), which tiny
 * loops cannot repay. `pool` may be NULL.
 * Not reentrant: a parallel body must not call ds_parallel_for on the same pool. */
void ds_parallel_for(DsThreadPool *pool, int64_t n, int64_t grain, DsParallelFn fn, void *ctx);

/* Runs fn over [0, n) in pieces of `grain` that the threads take in turn until none are left,
 * so a thread that is slowed down (a busy core on a shared machine) does less of the work
 * instead of holding everyone up. For loops of even, substantial pieces (GEMM panels). Runs
 * inline when there is only one piece or one thread. Not reentrant, as ds_parallel_for. */
void ds_parallel_for_dynamic(DsThreadPool *pool, int64_t n, int64_t grain, DsParallelFn fn,
                             void *ctx);
