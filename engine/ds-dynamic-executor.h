/* ds-dynamic-executor.h: the dynamic-shape executor (MXNet's DynamicShapeGraphExecutor).
 *
 * Some ops decide their output shapes from data (boolean_mask, nonzero, unique...), so a
 * graph holding one cannot be planned ahead as a whole. This executor runs a partitioned
 * graph unit by unit:
 *   - a static region runs on a static executor of its own (ds_executor_new_region), whose
 *     plan is cached and redone only when the region's input sizes change;
 *   - a dynamic-shape op runs imperatively: its kernel sizes its outputs through the
 *     executor's buffer pool, and the unbacked symbols of its symbolic output shape (`u0`)
 *     are then bound to the sizes it produced, which resolves every shape downstream;
 *   - any other op outside a region also runs imperatively, with outputs sized from its
 *     symbolic shape under the current bindings (or its shape function when the symbols
 *     cannot say).
 * Region outputs are read in place from the region's arena; imperative outputs live in the
 * pool until their last reader has run, so after a warm-up run at the largest sizes, runs at
 * smaller sizes allocate nothing.
 *
 * Placement: a region the partition gives a `backend` (ds_partition_label_placement) runs on
 * that device backend, its static part on a cached plan in device memory and its dynamic-shape
 * ops imperatively on the device, with buffers from a device pool. Where host and device units
 * meet, the executor copies the tensor across, once per run (a weight once for the executor's
 * life: weights do not change), and device outputs of the graph are copied back to the host
 * after each run, so ds_dynamic_executor_get_output() is always host memory. Placed regions
 * are frames for the hooks, with DsFrame.backend set.
 *
 * Memory policy: the executor refs the graph, copies the partition's regions and the symbolic
 * shapes, and borrows `exprs` (which must outlive it). Bound inputs are borrowed.
 */
#pragma once

#include "ds-buffer-pool.h"
#include "ds-executor.h"
#include "ds-expr.h"
#include "ds-partition.h"

typedef struct _DsDynamicExecutor DsDynamicExecutor;

/* Binds spec->graph split by spec->partition (NULL: labelled with the static-dynamic property
 * here). spec->shapes are its shapes from symbolic inference in spec->exprs (every op output
 * known, dynamic ones as unbacked symbols); spec->values/bound are symbol values known before
 * any run; spec->guards are checked as soon as the bindings decide them (DsBindSpec). */
DsDynamicExecutor *ds_dynamic_executor_new(const DsBindSpec *spec, GError **error);
void ds_dynamic_executor_free(DsDynamicExecutor *dx);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsDynamicExecutor, ds_dynamic_executor_free)

/* Points a variable at `value` (borrowed). Its shape need only fit the symbolic shape: the
 * run binds the input symbols from it. */
gboolean ds_dynamic_executor_bind(DsDynamicExecutor *dx, const DsNode *variable,
                                  const DsTensor *value, GError **error);
void ds_dynamic_executor_set_hooks(DsDynamicExecutor *dx, const DsExecutorHooks *hooks,
                                   gpointer data);
/* Shares `threads` (borrowed) instead of a pool of its own; before the first run. Nested
 * executors (loop bodies) share their parent's. */
void ds_dynamic_executor_set_thread_pool(DsDynamicExecutor *dx, DsThreadPool *threads);
void ds_dynamic_executor_set_deadline(DsDynamicExecutor *dx, gint64 deadline_us);

gboolean ds_dynamic_executor_run(DsDynamicExecutor *dx, GError **error);

/* After a run: an entry's tensor (valid until the next run; an intermediate may have been
 * reused), a head's tensor, and every entry's concrete shape in this run. Borrowed. */
const DsTensor *ds_dynamic_executor_get_entry(const DsDynamicExecutor *dx, guint entry);
const DsTensor *ds_dynamic_executor_get_output(const DsDynamicExecutor *dx, guint i);
const DsGraphShapes *ds_dynamic_executor_get_shapes(const DsDynamicExecutor *dx);
DsGraph *ds_dynamic_executor_get_graph(const DsDynamicExecutor *dx);

/* The value the last run bound to symbol `id` (an unbacked `u0` or an input symbol). */
gboolean ds_dynamic_executor_get_symbol(const DsDynamicExecutor *dx, guint id, int64_t *value);

typedef struct {
  guint n_regions;          /* static regions with a cached plan */
  guint n_dynamic_nodes;    /* dynamic-shape ops run imperatively */
  guint n_imperative_nodes; /* other ops run imperatively */
  guint64 n_replans;        /* region plans redone because their input sizes changed */
  guint64 n_allocations;    /* buffers allocated: pool buffers plus region arena growths */
  gsize memory_bytes;       /* held now: region arenas and workspaces, pool buffers */
  DsBufferPoolStats pool;
  guint n_device_regions;   /* units placed on the device backend */
  guint64 n_copies;         /* tensors copied across the host/device line, all runs */
  guint64 copy_to_device_bytes, copy_to_host_bytes; /* their bytes, all runs */
} DsDynamicExecutorStats;

void ds_dynamic_executor_get_stats(const DsDynamicExecutor *dx, DsDynamicExecutorStats *stats);
