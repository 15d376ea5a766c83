/* ds-executor.h: the static executor. Infer once, plan once, run many times.
 *
 * Binding resolves every node's kernel, allocates one arena for all intermediates (as the plan
 * lays them out) and one workspace shared by all kernels, and prebuilds each node's tensor
 * views, so a run is a loop of kernel calls with nothing to look up or allocate. Reshaping
 * keeps the kernels and re-plans for new sizes, growing the buffers only when needed.
 *
 * Memory policy: the executor keeps a reference on the graph and owns its plan, arena and
 * workspace. Bound variables (inputs, weights) are borrowed: their buffers must outlive every
 * run.
 */
#pragma once

#include "ds-backend.h"
#include "ds-graph.h"
#include "ds-infer.h"
#include "ds-plan.h"
#include "ds-thread-pool.h"

typedef struct _DsExecutor DsExecutor;
typedef struct _DsExprCtx DsExprCtx;
typedef struct _DsPartition DsPartition;

/* What an executor is bound for: ds_runner_new() (either executor) and
 * ds_dynamic_executor_new() take one. Unset members are NULL or 0. */
typedef struct {
  DsGraph *graph;                /* flat: no subgraph nodes (a reference is taken) */
  const DsGraphShapes *shapes;   /* copied: concrete for the static executor, symbolic from
                                  * symbolic inference in `exprs` for the dynamic one */
  DsExprCtx *exprs;              /* dynamic: the shapes' expressions; outlives the executor */
  const DsPartition *partition;  /* dynamic: the regions (NULL: labelled static-dynamic) */
  GPtrArray *guards;             /* dynamic: DsShapeGuard*, checked as bindings decide them */
  const int64_t *values;         /* dynamic: symbol values known before any run, indexed by */
  const gboolean *bound;         /* symbol id (`n_symbols` of them); may be NULL */
  guint n_symbols;
  const DsBackend *backend;
  int n_threads;                 /* for kernels and BLAS */
} DsBindSpec;

/* Where nodes run, below the graph a run was started on: a partition region of it, or one
 * run of a control-flow node's subgraph (a loop iteration, a condition, a branch). */
typedef enum {
  DS_FRAME_GRAPH,    /* the graph itself (a debugger's outermost frame; never entered) */
  DS_FRAME_REGION,   /* a region of an explicit partition: same graph, its nodes only */
  DS_FRAME_SUBGRAPH, /* a subgraph of a `_foreach`, `_while_loop` or `_cond` node */
} DsFrameKind;

typedef struct {
  DsFrameKind kind;
  DsGraph *graph;         /* whose nodes run in the frame */
  const DsNode *owner;    /* the control-flow node (subgraph frames), else NULL */
  const char *name;       /* the region's name, or the subgraph's role: "body" (_foreach),
                           * "cond"/"func" (_while_loop), "cond"/"then"/"else" (_cond) */
  gint64 iteration;       /* the loop iteration, from 0; -1 outside loops */
  const gboolean *in_region; /* region frames: per graph node; else NULL */
  const DsTensor *inputs; /* subgraph frames: its variables' values, in node order */
  guint n_inputs;
  const char *backend;    /* region frames placed on a device: its backend ("cuda"); else NULL */
} DsFrame;

/* Hooks around each node and frame (the profiler and the debug cursor plug in here). NULL
 * members are skipped, and with no hooks a run does nothing extra. Nested executors (regions,
 * loop bodies) call the same hooks, between their frame's enter and exit.
 *   node_begin: before the kernel; returning FALSE cancels the run (DS_ERROR_CANCELLED).
 *   node_end:   after the node succeeded, with its inputs and outputs (node->n_inputs and
 *               ds_node_n_op_outputs(node) of them), valid until the hook returns.
 *   frame_enter/frame_exit: always paired, also when the frame fails. */
typedef struct {
  gboolean (*node_begin)(gpointer data, const DsNode *node);
  void (*node_end)(gpointer data, const DsNode *node, const DsTensor *inputs,
                   const DsTensor *outputs);
  void (*frame_enter)(gpointer data, const DsFrame *frame);
  void (*frame_exit)(gpointer data, const DsFrame *frame);
} DsExecutorHooks;

/* The error of a run that a node_begin hook cancelled before `node`. */
void ds_set_cancelled_error(GError **error, const DsNode *node);

/* Binds `graph` with fully inferred `shapes` (copied) on `backend`, with `n_threads` threads
 * for kernels and BLAS. Fails if an op has no kernel on the backend or the plan is over the
 * memory limit. */
DsExecutor *ds_executor_new(DsGraph *graph, const DsGraphShapes *shapes,
                            const DsBackend *backend, int n_threads, GError **error);
void ds_executor_free(DsExecutor *exec);

/* Binds only the nodes with in_region[id] set (copied): a static region of a partitioned
 * graph, which the dynamic executor runs with its own cached plan. Entries the region reads
 * but does not produce are bound like variables (ds_executor_bind_entry); entries it produces
 * for later nodes live to the end of its run. `shapes` need only be concrete for the region's
 * own entries. With `pool` (borrowed), kernels share it instead of a pool of n_threads. */
DsExecutor *ds_executor_new_region(DsGraph *graph, const DsGraphShapes *shapes,
                                   const gboolean *in_region, const DsBackend *backend,
                                   DsThreadPool *pool, int n_threads, GError **error);

/* Re-plans the same graph for new concrete shapes ("compile once, run many sizes"): kernels
 * stay resolved, the arena and workspace grow only when the new plan needs more, views are
 * rebuilt. Variables whose shape changed must be bound again before the next run. */
gboolean ds_executor_reshape(DsExecutor *exec, const DsGraphShapes *shapes, GError **error);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsExecutor, ds_executor_free)

/* Points a variable at `value`'s buffer (borrowed), which must have the planned shape and
 * dtype; the error names the variable and both shapes. */
gboolean ds_executor_bind(DsExecutor *exec, const DsNode *variable, const DsTensor *value,
                          GError **error);

/* The same for any entry the executor reads but does not produce (a region's inputs).
 * Binding the buffer already bound is free. */
gboolean ds_executor_bind_entry(DsExecutor *exec, guint entry, const DsTensor *value,
                                GError **error);

void ds_executor_set_hooks(DsExecutor *exec, const DsExecutorHooks *hooks, gpointer data);

/* Stops later runs with a DS_ERROR_RUNTIME error naming the node once the monotonic clock
 * (g_get_monotonic_time, µs) passes `deadline_us`; 0 clears it. Checked between nodes. */
void ds_executor_set_deadline(DsExecutor *exec, gint64 deadline_us);

/* Runs every node once. All variables must be bound. */
gboolean ds_executor_run(DsExecutor *exec, GError **error);

/* The tensor of entry `entry` after a run (views into the arena or bound buffers). Borrowed;
 * valid until the next run. Entries the plan reused may hold later data: read graph outputs,
 * or read an entry from a hook while its node is current. */
const DsTensor *ds_executor_get_entry(const DsExecutor *exec, guint entry);
/* Head `i`'s tensor after a run. Borrowed. */
const DsTensor *ds_executor_get_output(const DsExecutor *exec, guint i);

const DsPlan *ds_executor_get_plan(const DsExecutor *exec);
const DsGraphShapes *ds_executor_get_shapes(const DsExecutor *exec);
DsGraph *ds_executor_get_graph(const DsExecutor *exec);
/* Bytes of the shared kernel workspace. */
gsize ds_executor_get_workspace_bytes(const DsExecutor *exec);
/* Bytes the arena holds. It grows, never shrinks, so after a reshape to a smaller size it is
 * more than the current plan's peak (ds_executor_get_plan()->arena_bytes), which is what this
 * size needs. */
gsize ds_executor_get_arena_capacity(const DsExecutor *exec);
/* Bytes held in the arena and the workspace together. */
gsize ds_executor_get_reserved_bytes(const DsExecutor *exec);
/* How many times the arena or workspace was (re)allocated: a reshape to sizes that fit what
 * is held allocates nothing. */
guint64 ds_executor_get_n_allocations(const DsExecutor *exec);
