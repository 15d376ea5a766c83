/* ds-control-flow.h: running `_foreach`, `_while_loop` and `_cond` (seed 002).
 *
 * A control-flow node owns subgraphs (a loop body, a condition, two branches) and runs them
 * through the same executor, nested: each subgraph gets a dynamic executor of its own, bound
 * once for its input sizes and reused by every iteration, so a loop's memory does not grow
 * with its trip count except for the outputs it stacks. Loop-carried states live in two
 * buffers used in turn (the body reads one while writing its next state elsewhere), data
 * slices are views into the node's inputs, and captured outer variables are bound once.
 *
 * The dynamic executor calls this for control-flow nodes, like a dynamic-shape kernel: the
 * node's outputs are sized when they are known and allocated through the executor's
 * allocator. `_while_loop`'s stacked outputs hold exactly the iterations run (MXNet pads them
 * to max_iterations), and no loop runs more than its max_iterations.
 *
 * The executor that runs a control-flow node gives it a DsSubgraphRunner: the functions that
 * make, bind and run an executor for one subgraph. So this file names no executor, and the
 * nesting (the dynamic executor runs control flow, which runs dynamic executors) is one call
 * downward and one call back through the table.
 *
 * Memory policy: a DsControlFlow borrows its node (and so the graph that owns it) and its
 * runner table, and owns its nested executors and scratch buffers.
 */
#pragma once

#include "ds-backend.h"
#include "ds-executor.h"
#include "ds-expr.h"
#include "ds-graph.h"
#include "ds-thread-pool.h"

typedef struct _DsControlFlow DsControlFlow;

/* An executor for one subgraph, as control flow uses it; `exec` is what `create` made. */
typedef struct {
  /* An executor for `graph` with inferred symbolic `shapes` (copied) over `exprs` (borrowed:
   * it outlives the executor), its kernels on `backend`, one thread until set_thread_pool. */
  gpointer (*create)(DsGraph *graph, const DsGraphShapes *shapes, DsExprCtx *exprs,
                     const DsBackend *backend, GError **error);
  void (*free)(gpointer exec);
  void (*set_thread_pool)(gpointer exec, DsThreadPool *threads);
  void (*set_hooks)(gpointer exec, const DsExecutorHooks *hooks, gpointer data);
  /* Points variable `var` at `value` (borrowed until the next bind or run). */
  gboolean (*bind)(gpointer exec, const DsNode *var, const DsTensor *value, GError **error);
  gboolean (*run)(gpointer exec, GError **error);
  /* Head `i` of the last run, owned by the executor until its next run. */
  const DsTensor *(*get_output)(gpointer exec, guint i);
  /* The shapes the executor has now: its symbolic shapes with the last run's values bound. */
  const DsGraphShapes *(*get_shapes)(gpointer exec);
  /* Buffers allocated so far and the bytes they hold. */
  void (*get_memory)(gpointer exec, guint64 *n_allocations, gsize *bytes_held);
} DsSubgraphRunner;

/* A runner for `node` (an op with DS_OP_TRAIT_CONTROL_FLOW other than `_CachedOp`) whose
 * subgraphs run on executors made by `runner` (borrowed). Nested kernels share `threads`
 * (borrowed). */
DsControlFlow *ds_control_flow_new(const DsNode *node, const DsSubgraphRunner *runner,
                                   const DsBackend *backend, DsThreadPool *threads,
                                   GError **error);
void ds_control_flow_free(DsControlFlow *cf);
/* Hooks for every node the subgraphs run, and a frame (DS_FRAME_SUBGRAPH) around each run of
 * a subgraph: one per loop iteration (the condition and the body separately), one per
 * branch. NULL clears them. */
void ds_control_flow_set_hooks(DsControlFlow *cf, const DsExecutorHooks *hooks, gpointer data);
/* Nested kernels share `threads` (borrowed) from now on. */
void ds_control_flow_set_thread_pool(DsControlFlow *cf, DsThreadPool *threads);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsControlFlow, ds_control_flow_free)

/* Runs the node once on `inputs` (node->n_inputs of them). Each output's dtype, ndim and shape
 * are set in `outputs` and it is given a buffer by `alloc`, as for a dynamic-shape kernel.
 * Errors name the node, and the iteration for loops. */
gboolean ds_control_flow_run(DsControlFlow *cf, const DsTensor *inputs, DsTensor *outputs,
                             DsOutputAllocFn alloc, void *alloc_data, GError **error);

/* Iterations the last run made (loops), or the branch it took for `_cond` (1 then, 0 else). */
guint64 ds_control_flow_get_last_count(const DsControlFlow *cf);

/* Buffers the nested executors and scratch allocated so far, and the bytes they hold. */
void ds_control_flow_get_memory(const DsControlFlow *cf, guint64 *n_allocations,
                                gsize *bytes_held);
