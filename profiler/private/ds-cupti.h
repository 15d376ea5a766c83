/* ds-cupti.h: what the GPU did, from NVIDIA's CUPTI Activity API.
 *
 * A collector records the GPU's kernels, memory copies and memsets with their device start and
 * end times, and ties each to the graph node (or region) that launched it: the caller pushes
 * an external correlation id around a node's launches (ds_cupti_push/pop, as PyTorch's Kineto
 * does), CUPTI emits a record mapping each CUDA call made meanwhile to that id, and flushing
 * resolves every kernel's and copy's call to the id that was pushed.
 *
 * CUPTI is touched only after the CUDA runtime reported a device: without one, or in a build
 * without CUDA, ds_cupti_start() gives NULL and says why. CUPTI's activity callbacks are
 * process-wide, so there is one collector per process: starting again while one runs returns
 * the same collector with one more reference (runs that use it must not overlap in time).
 *
 * Memory policy: records are owned by the collector, valid until ds_cupti_clear() or the last
 * ds_cupti_free(); kernel names stay valid until that ds_cupti_free().
 */
#pragma once

#include <glib.h>

typedef enum {
  DS_CUPTI_KERNEL,
  DS_CUPTI_MEMCPY,
  DS_CUPTI_MEMSET,
} DsCuptiKind;

/* Which way a memcpy went (memsets and kernels have DS_CUPTI_COPY_NONE). */
typedef enum {
  DS_CUPTI_COPY_NONE,
  DS_CUPTI_COPY_HTOD,
  DS_CUPTI_COPY_DTOH,
  DS_CUPTI_COPY_DTOD,
  DS_CUPTI_COPY_OTHER, /* host to host, peer to peer, arrays */
} DsCuptiCopy;

typedef struct {
  DsCuptiKind kind;
  guint64 external_id;      /* the id pushed when it was launched; 0 for none */
  const char *name;         /* kernels: the (mangled) kernel name; NULL otherwise */
  guint64 start_ns, end_ns; /* on the profiler's clock (ds_monotonic_ns) */
  guint64 bytes;            /* memcpy and memset: bytes written; 0 for kernels */
  DsCuptiCopy copy;
} DsCuptiRecord;

typedef struct _DsCupti DsCupti;

/* Starts recording kernels, memcpys and memsets, or returns NULL with *reason (caller frees;
 * `reason` may be NULL) saying why not: no CUDA in this build, no device, CUPTI refused. */
DsCupti *ds_cupti_start(char **reason);
/* Drops a reference; the last one stops recording (what was not flushed is lost). */
void ds_cupti_free(DsCupti *cupti);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsCupti, ds_cupti_free)

/* Around a node's launches, on the launching thread: GPU work launched meanwhile gets `id`
 * (innermost push wins). */
void ds_cupti_push(DsCupti *cupti, guint64 id);
void ds_cupti_pop(DsCupti *cupti);

/* Delivers the records of all completed GPU work (synchronise the device first to get all of
 * a run) and resolves their external ids. */
void ds_cupti_flush(DsCupti *cupti);
/* The records flushed since the last clear, in the order CUPTI delivered them. */
const DsCuptiRecord *ds_cupti_records(DsCupti *cupti, guint *n);
/* Forgets the records (and the correlations) flushed so far. */
void ds_cupti_clear(DsCupti *cupti);
/* Records CUPTI reported it dropped (buffers full) since start. */
guint64 ds_cupti_get_dropped(DsCupti *cupti);

/* "HtoD", "DtoH", "DtoD", "other" or "" for DS_CUPTI_COPY_NONE. */
const char *ds_cupti_copy_name(DsCuptiCopy copy);
