/* ds-runner.h: one interface over the two executors, which the session drives.
 *
 * Seed 000's choice is made once, at bind time: the static executor (infer once, plan once)
 * or the dynamic one (regions on cached plans, dynamic-shape ops imperatively). After that the
 * session, and everything above it, talks to a DsRunner: bind inputs, resize, run, read
 * outputs and entries, hooks for the profiler and the debug cursor, and one statistics struct
 * for memory and placement. Only ds-runner.c names the executors.
 *
 * Memory policy: a runner owns its executor; the executor borrows what DsBindSpec says.
 */
#pragma once

#include "ds-buffer-pool.h"
#include "ds-executor.h"

typedef struct _DsRunner DsRunner;
typedef struct _DsDynamicExecutor DsDynamicExecutor;

typedef enum {
  DS_RUNNER_STATIC,  /* one plan for the whole graph */
  DS_RUNNER_DYNAMIC, /* regions on cached plans, dynamic-shape ops imperatively */
} DsRunnerKind;

/* What a runner holds and did, the same struct for either executor. */
typedef struct {
  const char *kind;          /* "static" or "dynamic" */
  const DsPlan *plan;        /* the one plan of the whole graph, or NULL when regions plan
                              * separately; borrowed until the next resize */
  gsize workspace_bytes;     /* with `plan`: the kernels' shared workspace */
  guint n_regions;           /* static regions with a plan of their own (1 with `plan`) */
  guint n_dynamic_nodes;     /* dynamic-shape ops run imperatively */
  guint n_imperative_nodes;  /* other ops run imperatively */
  guint64 n_replans;         /* plans redone because input sizes changed */
  guint64 n_allocations;     /* buffers allocated so far */
  gsize memory_bytes;        /* held now (with `plan`: the planned arena) */
  DsBufferPoolStats pool;    /* the buffer pool of ops run imperatively */
  guint n_device_regions;    /* units placed on a device backend */
  guint64 n_copies;          /* tensors copied across the host/device line, all runs */
  guint64 copy_to_device_bytes, copy_to_host_bytes;
} DsRunnerStats;

/* Binds `spec` on the executor `kind` names. */
DsRunner *ds_runner_new(DsRunnerKind kind, const DsBindSpec *spec, GError **error);
void ds_runner_free(DsRunner *runner);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsRunner, ds_runner_free)

/* Whether the runner learns data-dependent sizes as it runs: the shapes it is resized to may
 * keep unbacked symbols, and inputs of any size that fits the symbolic shapes bind to it. */
gboolean ds_runner_learns_sizes(const DsRunner *runner);
/* Points variable `variable` at `value` (borrowed until the next bind). */
gboolean ds_runner_bind(DsRunner *runner, const DsNode *variable, const DsTensor *value,
                        GError **error);
/* New sizes: `shapes` (copied) as evaluated for the next inputs. */
gboolean ds_runner_resize(DsRunner *runner, const DsGraphShapes *shapes, GError **error);
gboolean ds_runner_run(DsRunner *runner, GError **error);
void ds_runner_set_hooks(DsRunner *runner, const DsExecutorHooks *hooks, gpointer data);
void ds_runner_set_deadline(DsRunner *runner, gint64 deadline_us);

/* After a run, borrowed until the next one: head `i`, an entry's tensor, every entry's
 * concrete shape. */
const DsTensor *ds_runner_get_output(const DsRunner *runner, guint i);
const DsTensor *ds_runner_get_entry(const DsRunner *runner, guint entry);
const DsGraphShapes *ds_runner_get_shapes(const DsRunner *runner);
/* Symbol `id`'s value as the last run bound it; FALSE when the runner binds no symbols. */
gboolean ds_runner_get_symbol(const DsRunner *runner, guint id, int64_t *value);
void ds_runner_get_stats(const DsRunner *runner, DsRunnerStats *stats);

/* The executor inside, for tests and benchmarks that measure one executor itself; NULL when
 * the runner is of the other kind. */
DsExecutor *ds_runner_get_static(DsRunner *runner);
DsDynamicExecutor *ds_runner_get_dynamic(DsRunner *runner);
