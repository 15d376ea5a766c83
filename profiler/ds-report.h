/* ds-report.h: a profile report (docs/profile-report.md, version 1) read back into typed
 * structs.
 *
 * Every reader of a report (the HTML page, --summary, --compare, the viz overlays, the
 * desktop app) takes a DsReport, so a report is parsed and checked in one place, with one set
 * of rules and one style of error, and the readers never meet a field of the wrong type.
 *
 * Memory policy: a DsReport owns every string and array it points to; they live until
 * ds_report_free(). The structs are plain so that a test can build a DsReport by hand (only
 * what a reader uses); such a one is not passed to ds_report_free().
 */
#pragma once

#include <cjson/cJSON.h>
#include <glib.h>

/* A count or an id the report holds as null ("not traced", "no plan", "fresh"). */
#define DS_REPORT_NONE ((gint64)-1)

typedef struct {
  guint n_dims;
  const gint64 *dims;
} DsReportShape;

/* A list of shapes: an event's inputs or outputs. */
typedef struct {
  guint n_shapes;
  const DsReportShape *shapes;
} DsReportShapes;

/* EVENT: one executed node. Strings the schema allows to be null are NULL then. */
typedef struct {
  guint run;        /* 0 .. repeat-1 */
  const char *path; /* "while0/iter3/fc1", or NULL when absent */
  const char *key;  /* "while0/fc1": the node in every iteration and run */
  const char *node; /* or NULL when absent */
  const char *op;
  const char *region, *body; /* NULL outside a region or body */
  gint64 iteration;          /* -1 outside loops */
  guint depth;               /* 0: the model's graph */
  const char *backend;       /* "cpu", "cuda", or NULL when absent */
  gint64 start_ns, end_ns, dur_ns;
  gint64 gpu_ns, gpu_kernels, gpu_copy_bytes; /* DS_REPORT_NONE when not traced */
  const DsReportShapes *input_shapes;         /* NULL when absent or null */
  const DsReportShapes *output_shapes;        /* NULL when absent or null */
  gint64 fresh_bytes, reused_bytes;           /* 0 when absent */
  gint64 live_bytes;
} DsReportEvent;

/* BUFFER: one intermediate output. */
typedef struct {
  const char *tensor;
  gint64 bytes;
  gint64 first_event, last_event;
  gint64 reused_from; /* a buffer id, or DS_REPORT_NONE for fresh memory */
} DsReportBuffer;

/* AGG: an aggregate over the events of one op, node key, region or body. */
typedef struct {
  const char *name;
  gint64 count, total_ns, mean_ns, p50_ns, p95_ns, max_ns;
  gint64 max_event;                                            /* DS_REPORT_NONE when absent */
  const DsReportShapes *max_input_shapes;                      /* NULL when absent or null */
  gint64 gpu_ns, gpu_kernels, gpu_copy_bytes, edge_copy_bytes; /* DS_REPORT_NONE: null */
} DsReportAgg;

typedef struct {
  guint n_rows;
  const DsReportAgg *rows; /* in the report's order (it sorts them; readers need not trust it) */
} DsReportTable;

/* ITER: one loop iteration. */
typedef struct {
  const char *body;
  gint64 iteration;
  gint64 count, total_ns;
} DsReportIteration;

typedef struct {
  const char *name;
  gint64 value;
} DsReportBinding;

typedef struct {
  const char *name;
  const char *dtype;          /* NULL when absent or null */
  const DsReportShape *shape; /* NULL when absent or null */
} DsReportInput;

/* GPU: the GPU trace's totals. */
typedef struct {
  gint64 kernels, kernel_ns, copies, copy_bytes, unattributed, dropped;
} DsReportGpuTrace;

typedef struct {
  struct {
    const char *path, *name, *executor;
    const char *format;     /* NULL when absent */
    gint64 nodes, op_nodes; /* DS_REPORT_NONE when absent */
    guint n_partition;
    const char *const *partition; /* region names of a saved partition */
  } model;

  gboolean has_machine; /* FALSE when absent or null; the fields are NULL or -1 when absent */
  struct {
    const char *host, *os, *cpu;
    gint64 cpus, memory_bytes;
  } machine;

  gboolean has_build; /* as has_machine */
  struct {
    const char *version, *compiler, *blas;
    gint cuda; /* 1, 0, or -1 when absent */
  } build;

  struct {
    const char *started;
    gint64 repeat; /* >= 1 */
    gint64 threads;
    guint n_wall;
    const gint64 *wall_ns; /* one per run */
    gint64 profiler_overhead_ns;
    gboolean has_gpu_trace;
    DsReportGpuTrace gpu_trace;
    const char *gpu_unavailable; /* NULL when absent or null */
  } run;

  guint n_bindings;
  const DsReportBinding *bindings; /* in the report's order */
  guint n_inputs;
  const DsReportInput *inputs;
  guint n_events;
  const DsReportEvent *events; /* in execution order */
  guint n_buffers;
  const DsReportBuffer *buffers;

  gboolean has_memory; /* FALSE: the report has no "memory" (the fields below are 0) */
  struct {
    gint64 peak_live_bytes;
    gint64 planned_peak_bytes; /* DS_REPORT_NONE: no plan */
    gint64 fresh_bytes, reused_bytes;
  } memory;

  gboolean has_backward; /* FALSE: a forward pass alone ("backward" absent or null) */
  struct {
    const char *policy; /* as --recompute spells it */
    gint64 gradients, forward_nodes;
    gint64 forward_ns, backward_ns; /* per run */
    gint64 forward_peak_live_bytes, backward_peak_live_bytes;
  } backward;

  DsReportTable by_op, by_node, by_region, by_body; /* by_region and by_body may be empty */
  guint n_iterations;
  const DsReportIteration *by_iteration;

  /*< private >*/
  GStringChunk *strings;
  GPtrArray *blocks; /* the arrays above, g_free'd */
} DsReport;

/* Reads and checks the report in the file at `path`. Errors are one line starting with `path`
 * and naming the field ("r.json: events[3].dur_ns is not a non-negative integer"):
 * DS_ERROR_IO when the file cannot be read, DS_ERROR_LIMIT over 1 GiB, DS_ERROR_PARSE when it
 * is not JSON, not a dynscope profile, a version this build does not read, or a field the
 * readers use is missing or of the wrong type. */
DsReport *ds_report_read_file(const char *path, GError **error);

/* The same checks on a parsed document (a report the profiler just built); errors start with
 * `name`. */
DsReport *ds_report_from_json(const cJSON *root, const char *name, GError **error);

void ds_report_free(DsReport *report);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsReport, ds_report_free)

/* Median of `run.wall_ns` (the upper one for an even count, as --run prints it); 0 if
 * empty. */
gint64 ds_report_median_wall_ns(const DsReport *report);

/* The binding of `symbol`, if the report has one. */
gboolean ds_report_lookup_binding(const DsReport *report, const char *symbol, gint64 *value);
