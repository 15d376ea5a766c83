/* ds-profiler-private.h: the profiler's recording, shared by the report writers. */
#pragma once

#include "ds-cupti.h"
#include "ds-profiler.h"

/* Strings are interned once (frame paths repeat every iteration); index 0 is "". */
typedef struct {
  GPtrArray *strings;
  GHashTable *index; /* string -> index + 1 */
} Strings;

/* A frame entered while running, recorded as it came (names are made when a report is
 * written, not at every iteration). Record 0 is the model's graph. */
typedef struct {
  gint parent;
  DsFrameKind kind;
  const DsNode *owner;
  const char *name; /* region name or subgraph role; owned by the executor or static */
  gint64 iteration;
  gboolean resolved;
  guint prefix, key_prefix, region, body; /* interned once resolved */
  /* A region placed on a device: the external id of the GPU work launched in it outside its
   * nodes (the executor's copies on the region's edges), and that work; else all 0. */
  guint64 gpu_id;
  guint gpu_kernels;
  guint64 gpu_ns, gpu_copy_bytes;
} FrameRecord;

typedef struct {
  const DsNode *node;
  DsGraph *graph;
  guint run;
  guint record; /* the frame it ran in (FrameRecord) */
  /* From the record, filled by ds_profiler_resolve(): */
  guint prefix;     /* frame path: "while0/iter3" ("" in the model graph) */
  guint key_prefix; /* the same without iterations: "while0" */
  guint region;     /* the region the node ran in directly, or 0 */
  guint body;       /* the control-flow body it ran in directly ("while0/func"), or 0 */
  gint64 iteration; /* the innermost loop iteration, or -1 */
  guint depth;
  guint64 start_ns, end_ns; /* from the profiler's origin */
  guint shapes;             /* offset in `shape_pool`: n_in, n_out, then ndim and dims each */
  gsize fresh_bytes, reused_bytes, live_bytes;
  gboolean on_device; /* its outputs are in device memory: "backend": "cuda" */
  guint64 gpu_id;     /* the external id its GPU work was tagged with */
  /* From ds_profiler_add_gpu_records(): its kernels, their time, and the bytes its memcpys
   * and memsets wrote. */
  guint gpu_kernels;
  guint64 gpu_ns, gpu_copy_bytes;
} Event;

/* One GPU record of a run, as the trace draws it. */
typedef struct {
  DsCuptiKind kind;
  DsCuptiCopy copy;
  guint name;               /* interned kernel name; 0 for copies */
  gint event;               /* the event it belongs to, or -1 */
  gint record;              /* else the placed region's frame record, or -1 */
  guint64 start_ns, end_ns; /* from the profiler's origin */
  guint64 bytes;
} GpuRecord;

typedef struct {
  DsGraph *graph;
  guint entry;
  guint record; /* the frame that wrote it */
  gsize bytes;
  guint first_event, last_event;
  gint reused_from; /* buffer index, or -1 */
  guint readers_left;
  gboolean live;
} Buffer;

struct _DsProfiler {
  DsSession *session;
  Strings strings;
  GArray *events;     /* Event */
  GArray *records;    /* FrameRecord */
  guint n_resolved;   /* events whose names are filled in */
  GArray *buffers;    /* Buffer */
  GArray *shape_pool; /* gint64 */
  GArray *run_ns;     /* guint64 wall time per run */
  guint64 origin_ns;  /* the first run's start */
  guint64 run_start_ns;
  guint64 overhead_ns; /* spent in the hooks */
  guint n_runs;

  /* GPU work: traced with CUPTI when the session runs on a device. */
  DsCupti *cupti;           /* while tracing, else NULL */
  gboolean gpu_tried;       /* whether the first run looked for a device to trace */
  char *gpu_unavailable;    /* why a session with a device is not traced, or NULL */
  gboolean has_gpu;         /* GPU records exist for the runs: reports give numbers, not null */
  GArray *gpu_targets;      /* gint64 per external id - 1: the event, -(frame record + 1), or
                             * GPU_TARGET_NONE while its node runs */
  GArray *gpu_records;      /* GpuRecord */
  guint64 gpu_unattributed; /* records with no node or region */
  guint64 gpu_dropped;      /* records CUPTI dropped */
  guint n_gpu_pushed;       /* ids pushed to CUPTI and not popped yet */

  /* While running. */
  GArray *starts;    /* Open: the nodes running (a loop holds its body's) */
  GPtrArray *frames; /* PFrame*, reused */
  guint depth;
  GHashTable *infos; /* DsGraph* -> readers per entry */
  GArray *segments;  /* Segment: who last held each address range in this run */
  gsize live_bytes;
  gsize peak_live_bytes;
  guint peak_event;
};

#define GPU_TARGET_NONE G_MININT64

const char *ds_profiler_string(const DsProfiler *p, guint index);
/* Attributes GPU records to the events and placed regions whose external ids they carry
 * (Event.gpu_id, FrameRecord.gpu_id; others count as unattributed), and keeps them for the
 * trace. Times are on the profiler's clock (ds_monotonic_ns). After each traced run, and in
 * tests, which feed records of their own. */
void ds_profiler_add_gpu_records(DsProfiler *p, const DsCuptiRecord *records, guint n);
/* Names the frames and events recorded so far (paths, keys, regions, bodies). Every report
 * writer calls it first. */
void ds_profiler_resolve(DsProfiler *p);
/* The interned frame path of a record ("while0/iter3"), after ds_profiler_resolve(). */
guint ds_profiler_record_prefix(const DsProfiler *p, guint record);
/* "while0/iter3/fc1" and "while0/fc1" for an event. Caller frees. */
char *ds_profiler_event_path(const DsProfiler *p, const Event *e);
char *ds_profiler_event_key(const DsProfiler *p, const Event *e);
/* An event's input (`outputs` FALSE) or output shapes: count, and the i-th as ndim + dims. */
guint ds_profiler_event_n_shapes(const DsProfiler *p, const Event *e, gboolean outputs);
const gint64 *ds_profiler_event_shape(const DsProfiler *p, const Event *e, gboolean outputs,
                                      guint i, int *ndim);
/* "(4, 64), (4,)" for an event's output shapes. Caller frees. */
char *ds_profiler_event_shapes_text(const DsProfiler *p, const Event *e, gboolean outputs);
/* The symbolic output shapes of a model-graph node ("(s0, 64)"), or NULL. Caller frees the
 * array. */
GPtrArray *ds_profiler_event_symbolic(const DsProfiler *p, const Event *e);
/* "s0 = 8, u0 = 32": the symbols the session has values for, as JSON object members. */
void ds_profiler_add_bindings(const DsProfiler *p, cJSON *object);
