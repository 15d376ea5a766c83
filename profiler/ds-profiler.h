/* ds-profiler.h: what every executed node cost, in time and memory.
 *
 * The profiler is a set of executor hooks and nothing else. Per executed node (per loop
 * iteration and branch too) it records its start and end on the monotonic clock, its frame
 * (partition region, control-flow body, iteration), its input and output shapes, and what its
 * outputs did to memory. Memory is read from the outputs themselves, so it means the same on
 * every executor: an output whose bytes no earlier tensor of the run had held is fresh; one
 * placed where a tensor that is no longer read used to be reuses that tensor's buffer (the
 * plan's arena and the pool both do this); an output inside a live tensor is a view of it. A
 * tensor is live from the node that writes it to the last node that reads it, so the live
 * bytes at a node are what the memory plan calls live there.
 *
 * Reports (docs/profile-report.md) are built from the recording: JSON, Chrome trace, CSV.
 * When the session runs on a device (ds_session_set_device) and the device is there, the runs
 * are also traced with CUPTI (ds-cupti.h): each node's and placed region's kernels and copies
 * are tied to its event (gpu_ns, gpu_kernels, gpu_copy_bytes) and drawn on the trace's GPU
 * track. Without a device, or in a build without CUDA, those fields are null.
 *
 * Memory policy: the profiler borrows its session (which must outlive it) and owns its
 * recording; everything it returns is owned by the caller.
 */
#pragma once

#include <cjson/cJSON.h>

#include "ds-session.h"

typedef struct _DsProfiler DsProfiler;

DsProfiler *ds_profiler_new(DsSession *session);
void ds_profiler_free(DsProfiler *profiler);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsProfiler, ds_profiler_free)

/* The hooks to install on the session; their data is the profiler. */
const DsExecutorHooks *ds_profiler_get_hooks(void);

/* Around each profiled run: ds_session_run() between them. */
void ds_profiler_begin_run(DsProfiler *profiler);
void ds_profiler_end_run(DsProfiler *profiler);

guint ds_profiler_get_n_runs(const DsProfiler *profiler);
guint ds_profiler_get_n_events(const DsProfiler *profiler);
/* Time in the model graph's node `id` over all runs (nested nodes count in their loop's). */
guint64 ds_profiler_get_node_total_ns(const DsProfiler *profiler, guint id);
/* Whether the runs were traced on the GPU; then the GPU kernel time of node `id` (nested
 * nodes count in their own events only, not their loop's), over all runs. */
gboolean ds_profiler_has_gpu(const DsProfiler *profiler);
guint64 ds_profiler_get_node_gpu_ns(const DsProfiler *profiler, guint id);
/* The most bytes live at once, and the event where that happened (its node path; caller
 * frees). */
gsize ds_profiler_get_peak_live_bytes(DsProfiler *profiler, char **where);
/* Per-run mean ns of every event whose key (path without iterations) or node name is
 * `name`; FALSE if no event has it. */
gboolean ds_profiler_get_mean_ns(DsProfiler *profiler, const char *name, guint64 *ns);
/* Median wall time of the runs. */
guint64 ds_profiler_get_median_run_ns(const DsProfiler *profiler);

/* The report (docs/profile-report.md, version 1). `threads` is what the runs used. */
cJSON *ds_profiler_build_report(DsProfiler *profiler, int threads);

/* Chrome trace event format (opens in Perfetto and chrome://tracing). Caller frees. */
char *ds_profiler_build_trace(DsProfiler *profiler);
/* One row per executed node, RFC 4180. Caller frees. */
char *ds_profiler_build_csv(DsProfiler *profiler);
