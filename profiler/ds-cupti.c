/* ds-cupti.c: the GPU's kernels and copies from CUPTI's Activity API, tied to graph nodes.
 *
 * CUPTI hands out records in buffers we lend it (buffer_requested) and gives them back when
 * full or flushed (buffer_completed, on CUPTI's thread or in the flushing one). A kernel's or
 * copy's record carries the correlation id of the CUDA call that launched it; the external
 * correlation records, emitted for every CUDA call made while an id was pushed, map those
 * calls to our ids. The two kinds of record may arrive in any order, so records wait in
 * `pending` until a flush has delivered everything and their ids can be looked up.
 */
#include "ds-cupti.h"

#include "ds-node-timer.h"

const char *ds_cupti_copy_name(DsCuptiCopy copy)
{
  static const char *const names[] = {"", "HtoD", "DtoH", "DtoD", "other"};
  return copy <= DS_CUPTI_COPY_OTHER ? names[copy] : "";
}

#ifdef DS_HAVE_CUPTI

#include <cuda_runtime_api.h>
#include <cupti.h>

/* Large enough that a run of a big model fills few buffers; CUPTI wants 8-byte alignment. */
#define BUFFER_BYTES     ((size_t)8 << 20)
#define BUFFER_ALIGN     8
#define CORRELATION_KIND CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0

/* A record as delivered: the correlation ids of its launching call (driver, runtime; 0 where
 * the record has none), resolved to an external id when flushed. */
typedef struct {
  DsCuptiRecord record;
  guint32 correlation, runtime_correlation;
} Pending;

struct _DsCupti {
  gint refs;            /* under active_lock */
  GMutex lock;          /* the fields below: buffer_completed may run on CUPTI's thread */
  GArray *pending;      /* Pending */
  GHashTable *external; /* API call correlation id -> external id */
  GArray *records;      /* DsCuptiRecord, resolved */
  GStringChunk *names;  /* kernel names, each once */
  gint64 offset_ns;     /* the profiler's clock minus CUPTI's */
  guint64 dropped;
};

/* The activity kinds recorded. The runtime and driver API kinds give no records we keep, but
 * CUPTI emits external correlation records only for API records it creates. */
static const CUpti_ActivityKind kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,
};

static GMutex active_lock;
static DsCupti *active; /* the process's collector, or NULL */

static const char *result_text(CUptiResult r)
{
  const char *text = NULL;
  if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || text == NULL)
    return "unknown CUPTI error";
  return text;
}

/* ---- buffers ---- */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
  *buffer = g_aligned_alloc(1, BUFFER_BYTES, BUFFER_ALIGN);
  *size = BUFFER_BYTES;
  *max_records = 0; /* as many as fit */
}

static guint64 to_profiler_clock(const DsCupti *c, guint64 ts)
{
  if (ts == 0) /* CUPTI could not time it */
    return 0;
  gint64 t = (gint64)ts + c->offset_ns;
  return t > 0 ? (guint64)t : 0;
}

static void add_pending(DsCupti *c, DsCuptiKind kind, guint64 start, guint64 end, guint64 bytes,
                        DsCuptiCopy copy, const char *name, guint32 correlation,
                        guint32 runtime_correlation)
{
  Pending p = {
      .record =
          {
              .kind = kind,
              .name = name != NULL ? g_string_chunk_insert_const(c->names, name) : NULL,
              .start_ns = to_profiler_clock(c, start),
              .end_ns = to_profiler_clock(c, end),
              .bytes = bytes,
              .copy = copy,
          },
      .correlation = correlation,
      .runtime_correlation = runtime_correlation,
  };
  g_array_append_val(c->pending, p);
}

static DsCuptiCopy copy_direction(uint8_t kind)
{
  switch (kind) {
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    return DS_CUPTI_COPY_HTOD;
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    return DS_CUPTI_COPY_DTOH;
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    return DS_CUPTI_COPY_DTOD;
  default:
    return DS_CUPTI_COPY_OTHER;
  }
}

/* One record of a completed buffer; kinds we do not keep are skipped. */
static void parse_record(DsCupti *c, const CUpti_Activity *rec)
{
  switch (rec->kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
    const CUpti_ActivityKernel10 *k = (const void *)rec;
    add_pending(c, DS_CUPTI_KERNEL, k->start, k->end, 0, DS_CUPTI_COPY_NONE,
                k->name != NULL ? k->name : "?", k->correlationId, 0);
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMCPY: {
    const CUpti_ActivityMemcpy6 *m = (const void *)rec;
    add_pending(c, DS_CUPTI_MEMCPY, m->start, m->end, m->bytes, copy_direction(m->copyKind), NULL,
                m->correlationId, m->runtimeCorrelationId);
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMSET: {
    const CUpti_ActivityMemset4 *m = (const void *)rec;
    add_pending(c, DS_CUPTI_MEMSET, m->start, m->end, m->bytes, DS_CUPTI_COPY_NONE, NULL,
                m->correlationId, 0);
    break;
  }
  case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
    const CUpti_ActivityExternalCorrelation *x = (const void *)rec;
    if (x->externalKind == CORRELATION_KIND)
      g_hash_table_insert(c->external, GUINT_TO_POINTER(x->correlationId),
                          g_memdup2(&x->externalId, sizeof x->externalId));
    break;
  }
  default:
    break;
  }
}

static void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t *buffer,
                                      size_t size, size_t valid)
{
  (void)size;
  g_mutex_lock(&active_lock);
  DsCupti *c = active;
  if (c != NULL) {
    g_mutex_lock(&c->lock);
    CUpti_Activity *rec = NULL;
    while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
      parse_record(c, rec);
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS)
      c->dropped += dropped;
    g_mutex_unlock(&c->lock);
  }
  g_mutex_unlock(&active_lock);
  g_aligned_free(buffer);
}

/* ---- starting and stopping ---- */

/* The callbacks stay registered for the process: they look for the collector themselves. */
static gboolean register_callbacks(char **reason)
{
  static CUptiResult registered = CUPTI_ERROR_NOT_INITIALIZED;
  static gboolean tried;
  if (!tried) {
    registered = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    tried = TRUE;
  }
  if (registered != CUPTI_SUCCESS && reason != NULL)
    *reason = g_strdup_printf("CUPTI refused its buffers (%s)", result_text(registered));
  return registered == CUPTI_SUCCESS;
}

static void disable_kinds(guint n)
{
  for (guint i = 0; i < n; i++)
    cuptiActivityDisable(kinds[i]);
}

static gboolean enable_kinds(char **reason)
{
  for (guint i = 0; i < G_N_ELEMENTS(kinds); i++) {
    CUptiResult r = cuptiActivityEnable(kinds[i]);
    if (r != CUPTI_SUCCESS) {
      disable_kinds(i);
      if (reason != NULL)
        *reason = g_strdup_printf("CUPTI cannot record activity kind %d (%s)", (int)kinds[i],
                                  result_text(r));
      return FALSE;
    }
  }
  return TRUE;
}

/* Where CUPTI's clock is against ours: the midpoint of two reads of ours around one of its. */
static gint64 clock_offset(void)
{
  uint64_t theirs = 0;
  guint64 before = ds_monotonic_ns();
  if (cuptiGetTimestamp(&theirs) != CUPTI_SUCCESS)
    return 0;
  guint64 after = ds_monotonic_ns();
  return (gint64)(before + (after - before) / 2) - (gint64)theirs;
}

/* Only after the runtime found a device: CUPTI on a machine without one may fail in ways its
 * callers cannot recover from. */
static gboolean have_device(char **reason)
{
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    if (reason != NULL)
      *reason = g_strdup_printf("no usable CUDA device (%s)", cudaGetErrorString(err));
    return FALSE;
  }
  if (n <= 0 && reason != NULL)
    *reason = g_strdup("no CUDA device");
  return n > 0;
}

static DsCupti *collector_new(void)
{
  DsCupti *c = g_new0(DsCupti, 1);
  c->refs = 1;
  g_mutex_init(&c->lock);
  c->pending = g_array_new(FALSE, FALSE, sizeof(Pending));
  c->external = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  c->records = g_array_new(FALSE, FALSE, sizeof(DsCuptiRecord));
  c->names = g_string_chunk_new(4096);
  c->offset_ns = clock_offset();
  return c;
}

DsCupti *ds_cupti_start(char **reason)
{
  if (reason != NULL)
    *reason = NULL;
  g_mutex_lock(&active_lock);
  DsCupti *c = active;
  if (c != NULL)
    c->refs++;
  else if (have_device(reason) && register_callbacks(reason) && enable_kinds(reason))
    c = active = collector_new();
  g_mutex_unlock(&active_lock);
  return c;
}

void ds_cupti_free(DsCupti *c)
{
  if (c == NULL)
    return;
  g_mutex_lock(&active_lock);
  gboolean last = --c->refs == 0;
  if (last)
    active = NULL;
  g_mutex_unlock(&active_lock);
  if (!last)
    return;
  /* With no collector active, the forced flush only hands back (and frees) CUPTI's buffers. */
  disable_kinds(G_N_ELEMENTS(kinds));
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  g_array_unref(c->pending);
  g_hash_table_unref(c->external);
  g_array_unref(c->records);
  g_string_chunk_free(c->names);
  g_mutex_clear(&c->lock);
  g_free(c);
}

/* ---- while running ---- */

void ds_cupti_push(DsCupti *c, guint64 id)
{
  if (c != NULL)
    cuptiActivityPushExternalCorrelationId(CORRELATION_KIND, id);
}

void ds_cupti_pop(DsCupti *c)
{
  uint64_t last = 0;
  if (c != NULL)
    cuptiActivityPopExternalCorrelationId(CORRELATION_KIND, &last);
}

static guint64 external_of(DsCupti *c, guint32 correlation)
{
  const guint64 *id =
      correlation != 0 ? g_hash_table_lookup(c->external, GUINT_TO_POINTER(correlation)) : NULL;
  return id != NULL ? *id : 0;
}

void ds_cupti_flush(DsCupti *c)
{
  if (c == NULL)
    return;
  /* Forced: a default flush keeps back any buffer that holds one incomplete record (another
   * thread's call in flight), and this run's records would come after their correlations
   * were cleared. After a device synchronise this run's own records are all complete. */
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  g_mutex_lock(&c->lock);
  for (guint i = 0; i < c->pending->len; i++) {
    Pending *p = &g_array_index(c->pending, Pending, i);
    p->record.external_id = external_of(c, p->correlation);
    if (p->record.external_id == 0)
      p->record.external_id = external_of(c, p->runtime_correlation);
    g_array_append_val(c->records, p->record);
  }
  g_array_set_size(c->pending, 0);
  g_mutex_unlock(&c->lock);
}

const DsCuptiRecord *ds_cupti_records(DsCupti *c, guint *n)
{
  *n = c != NULL ? c->records->len : 0;
  return c != NULL ? (const DsCuptiRecord *)c->records->data : NULL;
}

void ds_cupti_clear(DsCupti *c)
{
  if (c == NULL)
    return;
  g_mutex_lock(&c->lock);
  g_array_set_size(c->records, 0);
  g_hash_table_remove_all(c->external);
  g_mutex_unlock(&c->lock);
}

guint64 ds_cupti_get_dropped(DsCupti *c)
{
  if (c == NULL)
    return 0;
  g_mutex_lock(&c->lock);
  guint64 dropped = c->dropped;
  g_mutex_unlock(&c->lock);
  return dropped;
}

#else /* !DS_HAVE_CUPTI */

/* A build without CUDA: nothing to record, and the caller is told so. */
struct _DsCupti {
  int unused;
};

DsCupti *ds_cupti_start(char **reason)
{
  if (reason != NULL)
    *reason = g_strdup("this build has no CUDA (CUPTI)");
  return NULL;
}

void ds_cupti_free(DsCupti *c)
{
  (void)c;
}
void ds_cupti_push(DsCupti *c, guint64 id)
{
  (void)c, (void)id;
}
void ds_cupti_pop(DsCupti *c)
{
  (void)c;
}
void ds_cupti_flush(DsCupti *c)
{
  (void)c;
}
void ds_cupti_clear(DsCupti *c)
{
  (void)c;
}
guint64 ds_cupti_get_dropped(DsCupti *c)
{
  (void)c;
  return 0;
}

const DsCuptiRecord *ds_cupti_records(DsCupti *c, guint *n)
{
  (void)c;
  *n = 0;
  return NULL;
}

#endif
