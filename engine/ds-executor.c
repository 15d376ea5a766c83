/* ds-executor.c: binding and the run loop. */
#include "ds-executor.h"

#include <string.h>

#include "ds-error.h"
#include "ds-ndarray.h"
#include "ds-thread-pool.h"

typedef struct {
  const DsNode *node;
  const DsKernel *kernel;
  DsKernelCtx ctx;   /* views rebuilt by each reshape */
  guint *in_entries; /* entry id per input */
  guint out_entry;   /* entry id of output 0; outputs are consecutive */
} Step;

struct _DsExecutor {
  DsGraph *graph;
  DsGraphShapes *shapes;
  DsPlan *plan;
  DsPlanner *planner; /* the size-independent half, reused by every reshape */
  const DsBackend *backend;
  gboolean *in_region; /* the nodes this executor runs; NULL for all */
  DsThreadPool *pool;
  gboolean owns_pool;
  void *arena;
  gsize arena_capacity; /* bytes allocated; grows, never shrinks */
  void *workspace;
  gsize workspace_bytes; /* what the current shapes need */
  gsize workspace_capacity;
  DsTensor *entries; /* one view per entry */
  gboolean *bound;   /* per entry: variables only */
  Step *steps;       /* op nodes in order */
  guint n_steps;
  gboolean views_stale; /* a bind or reshape changed buffers since the last run */
  DsExecutorHooks hooks;
  gpointer hooks_data;
  gint64 deadline_us;    /* 0: none */
  gsize reserved_bytes;  /* arena and workspace, accounted against the memory limit */
  guint64 n_allocations; /* buffer (re)allocations so far */
};

static void make_view(DsTensor *view, const DsShape *shape, DsDType dtype, void *data,
                      DsMemory memory)
{
  view->dtype = dtype;
  view->ndim = shape->ndim;
  for (int i = 0; i < shape->ndim; i++)
    view->shape[i] = shape->dims[i].value;
  view->data = data;
  view->constant = NULL;
  view->memory = memory;
}

/* Grows a buffer to `bytes` (its contents are not kept), accounting the growth. */
static gboolean grow_buffer(DsExecutor *exec, void **buffer, gsize *capacity, gsize bytes,
                            const char *what, GError **error)
{
  if (bytes <= *capacity && *buffer != NULL)
    return TRUE;
  if (!ds_memory_reserve(bytes - *capacity, what, error))
    return FALSE;
  exec->backend->free_buffer(*buffer);
  *buffer = exec->backend->alloc_buffer(bytes);
  if (*buffer == NULL) {
    ds_memory_release(bytes - *capacity);
    g_set_error(error, DS_ERROR, DS_ERROR_LIMIT, "%s: cannot allocate %zu bytes", what, bytes);
    return FALSE;
  }
  exec->reserved_bytes += bytes - *capacity;
  exec->n_allocations++;
  *capacity = bytes;
  return TRUE;
}

/* Compiles the per-node part that does not depend on shapes: kernels and entry ids. */
static gboolean compile_steps(DsExecutor *exec, GError **error)
{
  DsGraph *graph = exec->graph;
  exec->steps = g_new0(Step, graph->n_nodes);
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    if (ds_node_is_variable(node) || (exec->in_region != NULL && !exec->in_region[i]))
      continue;
    if (node->op != NULL && (node->op->traits & DS_OP_TRAIT_DYNAMIC_SHAPE)) {
      g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
                  "node '%s' (%s) decides its output shape from data: the static executor "
                  "cannot plan it (use --executor dynamic or auto)",
                  node->name, node->op_name);
      return FALSE;
    }
    const DsKernel *kernel = node->op != NULL ? exec->backend->get_kernel(node->op->id) : NULL;
    if (kernel == NULL) {
      g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
                  "node '%s': op '%s' has no kernel on the %s backend", node->name, node->op_name,
                  exec->backend->name);
      return FALSE;
    }
    if (!ds_op_check_node_args(node, error))
      return FALSE;
    Step *step = &exec->steps[exec->n_steps++];
    step->node = node;
    step->kernel = kernel;
    step->in_entries = g_new(guint, node->n_inputs + 1);
    for (guint k = 0; k < node->n_inputs; k++)
      step->in_entries[k] = ds_graph_entry_id(graph, node->inputs[k]);
    step->out_entry = graph->node_row_ptr[i];
    step->ctx = (DsKernelCtx){
        .param = node->param,
        .inputs = g_new0(DsTensor, node->n_inputs + 1),
        .n_inputs = (int)node->n_inputs,
        .outputs = g_new0(DsTensor, ds_node_n_op_outputs(node) + 1),
        .n_outputs = (int)ds_node_n_op_outputs(node),
    };
  }
  return TRUE;
}

DsExecutor *ds_executor_new(DsGraph *graph, const DsGraphShapes *shapes, const DsBackend *backend,
                            int n_threads, GError **error)
{
  return ds_executor_new_region(graph, shapes, NULL, backend, NULL, n_threads, error);
}

DsExecutor *ds_executor_new_region(DsGraph *graph, const DsGraphShapes *shapes,
                                   const gboolean *in_region, const DsBackend *backend,
                                   DsThreadPool *pool, int n_threads, GError **error)
{
  g_autoptr(DsExecutor) exec = g_new0(DsExecutor, 1);
  exec->graph = ds_graph_ref(graph);
  exec->backend = backend;
  if (in_region != NULL)
    exec->in_region = g_memdup2(in_region, sizeof(gboolean) * graph->n_nodes);
  guint n_entries = ds_graph_n_entries(graph);
  exec->entries = g_new0(DsTensor, n_entries);
  exec->bound = g_new0(gboolean, n_entries);
  if (!compile_steps(exec, error) || !ds_executor_reshape(exec, shapes, error))
    return NULL;
  exec->owns_pool = pool == NULL;
  exec->pool = pool != NULL ? pool : ds_thread_pool_new(n_threads);
  for (guint s = 0; s < exec->n_steps; s++)
    exec->steps[s].ctx.pool = exec->pool;
  if (backend->set_n_threads != NULL)
    backend->set_n_threads(n_threads);
  return g_steal_pointer(&exec);
}

gboolean ds_executor_reshape(DsExecutor *exec, const DsGraphShapes *shapes, GError **error)
{
  DsGraph *graph = exec->graph;
  guint n_entries = ds_graph_n_entries(graph);
  g_return_val_if_fail(shapes->n_entries == n_entries, FALSE);

  /* 1. The plan for these shapes, and an arena big enough for it. */
  if (exec->planner == NULL)
    exec->planner = ds_planner_new_region(graph, exec->in_region);
  g_autoptr(DsPlan) plan = ds_planner_plan(exec->planner, shapes, error);
  if (plan == NULL)
    return FALSE;
  const DsNode *peak = graph->nodes[plan->peak_node];
  g_autofree char *what =
      g_strdup_printf("node '%s' (%s), where the memory plan peaks", peak->name, peak->op_name);
  if (!grow_buffer(exec, &exec->arena, &exec->arena_capacity, plan->arena_bytes, what, error))
    return FALSE;

  /* 2. Entry views. A variable keeps its binding only if its shape and dtype did not change. */
  for (guint e = 0; e < n_entries; e++) {
    DsTensor old = exec->entries[e];
    gboolean pinned = plan->offsets[e] == DS_PLAN_PINNED;
    void *data = pinned ? NULL : (char *)exec->arena + plan->offsets[e];
    make_view(&exec->entries[e], &shapes->shapes[e], shapes->dtypes[e], data,
              exec->backend->memory);
    if (pinned && exec->bound[e]) {
      gboolean same = old.ndim == exec->entries[e].ndim && old.dtype == exec->entries[e].dtype &&
                      memcmp(old.shape, exec->entries[e].shape, sizeof(int64_t) * old.ndim) == 0;
      if (same) {
        exec->entries[e].data = old.data;
        exec->entries[e].constant = old.constant;
      } else {
        exec->bound[e] = FALSE;
      }
    }
  }

  /* 3. Step views and the shared workspace (kernels run one at a time). */
  gsize workspace = 0;
  for (guint s = 0; s < exec->n_steps; s++) {
    Step *step = &exec->steps[s];
    DsTensor *ins = (DsTensor *)step->ctx.inputs;
    for (int k = 0; k < step->ctx.n_inputs; k++)
      ins[k] = exec->entries[step->in_entries[k]];
    for (int k = 0; k < step->ctx.n_outputs; k++)
      step->ctx.outputs[k] = exec->entries[step->out_entry + (guint)k];
    if (step->kernel->workspace_bytes != NULL)
      workspace =
          MAX(workspace, step->kernel->workspace_bytes(step->node->param, ins, step->ctx.n_inputs,
                                                       step->ctx.outputs, step->ctx.n_outputs));
  }
  if (workspace > 0 && !grow_buffer(exec, &exec->workspace, &exec->workspace_capacity, workspace,
                                    "the kernels' shared workspace", error))
    return FALSE;
  exec->workspace_bytes = workspace;
  for (guint s = 0; s < exec->n_steps; s++)
    exec->steps[s].ctx.workspace = exec->workspace;

  ds_plan_free(exec->plan);
  exec->plan = g_steal_pointer(&plan);
  ds_graph_shapes_free(exec->shapes);
  exec->shapes = ds_graph_shapes_copy(shapes);
  exec->views_stale = TRUE;
  return TRUE;
}

void ds_executor_free(DsExecutor *exec)
{
  if (exec == NULL)
    return;
  for (guint s = 0; s < exec->n_steps; s++) {
    g_free((void *)exec->steps[s].ctx.inputs);
    g_free(exec->steps[s].ctx.outputs);
    g_free(exec->steps[s].in_entries);
  }
  g_free(exec->steps);
  if (exec->backend != NULL) {
    exec->backend->free_buffer(exec->arena);
    exec->backend->free_buffer(exec->workspace);
  }
  if (exec->owns_pool)
    ds_thread_pool_free(exec->pool);
  g_free(exec->in_region);
  ds_memory_release(exec->reserved_bytes);
  g_free(exec->entries);
  g_free(exec->bound);
  ds_plan_free(exec->plan);
  ds_planner_free(exec->planner);
  ds_graph_shapes_free(exec->shapes);
  if (exec->graph != NULL)
    ds_graph_unref(exec->graph);
  g_free(exec);
}

static char *tensor_shape_string(const DsTensor *t)
{
  DsShape s = ds_shape_from_concrete(t->shape, t->ndim);
  return ds_shape_to_string(&s);
}

gboolean ds_executor_bind(DsExecutor *exec, const DsNode *variable, const DsTensor *value,
                          GError **error)
{
  g_return_val_if_fail(ds_node_is_variable(variable), FALSE);
  return ds_executor_bind_entry(exec, exec->graph->node_row_ptr[variable->id], value, error);
}

gboolean ds_executor_bind_entry(DsExecutor *exec, guint e, const DsTensor *value, GError **error)
{
  g_return_val_if_fail(e < exec->plan->n_entries && exec->plan->offsets[e] == DS_PLAN_PINNED,
                       FALSE);
  DsTensor *view = &exec->entries[e];
  if (view->data == value->data && view->constant == value->constant && exec->bound[e])
    return TRUE; /* the same buffer again: nothing to refresh */
  if (value->memory != exec->backend->memory) {
    const DsNode *producer = exec->graph->nodes[ds_graph_entry_node(exec->graph, e)];
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                "input '%s': its tensor is in %s memory, the %s backend needs it in its own",
                producer->name, value->memory == DS_MEMORY_HOST ? "host" : "device",
                exec->backend->name);
    return FALSE;
  }
  gboolean same = view->ndim == value->ndim && view->dtype == value->dtype;
  for (int i = 0; same && i < view->ndim; i++)
    same = view->shape[i] == value->shape[i];
  if (!same) {
    g_autofree char *want = tensor_shape_string(view);
    g_autofree char *got = tensor_shape_string(value);
    const DsNode *producer = exec->graph->nodes[ds_graph_entry_node(exec->graph, e)];
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                "input '%s': got %s %s, the bound graph expects %s %s", producer->name,
                ds_dtype_name(value->dtype), got, ds_dtype_name(view->dtype), want);
    return FALSE;
  }
  view->data = value->data;
  view->constant = value->constant;
  view->memory = value->memory;
  exec->bound[e] = TRUE;
  exec->views_stale = TRUE;
  return TRUE;
}

void ds_set_cancelled_error(GError **error, const DsNode *node)
{
  g_set_error(error, DS_ERROR, DS_ERROR_CANCELLED, "cancelled before node '%s' (%s)", node->name,
              node->op_name);
}

void ds_executor_set_hooks(DsExecutor *exec, const DsExecutorHooks *hooks, gpointer data)
{
  exec->hooks = hooks != NULL ? *hooks : (DsExecutorHooks){0};
  exec->hooks_data = data;
}

static gboolean refresh_views(DsExecutor *exec, GError **error)
{
  DsGraph *graph = exec->graph;
  for (guint i = 0; exec->in_region == NULL && i < graph->n_nodes; i++) {
    guint e = graph->node_row_ptr[i];
    if (ds_node_is_variable(graph->nodes[i]) && !exec->bound[e]) {
      g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "input '%s' has no value",
                  graph->nodes[i]->name);
      return FALSE;
    }
  }
  for (guint s = 0; s < exec->n_steps; s++) {
    Step *step = &exec->steps[s];
    DsTensor *ins = (DsTensor *)step->ctx.inputs;
    for (int k = 0; k < step->ctx.n_inputs; k++) {
      guint e = step->in_entries[k];
      if (exec->plan->offsets[e] == DS_PLAN_PINNED && !exec->bound[e]) {
        g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "node '%s' (%s): input %d ('%s') has no value",
                    step->node->name, step->node->op_name, k,
                    graph->nodes[ds_graph_entry_node(graph, e)]->name);
        return FALSE;
      }
      ins[k].data = exec->entries[e].data;
      ins[k].constant = exec->entries[e].constant;
      ins[k].memory = exec->entries[e].memory;
    }
  }
  exec->views_stale = FALSE;
  return TRUE;
}

void ds_executor_set_deadline(DsExecutor *exec, gint64 deadline_us)
{
  exec->deadline_us = deadline_us;
}

gboolean ds_executor_run(DsExecutor *exec, GError **error)
{
  if (exec->views_stale && !refresh_views(exec, error))
    return FALSE;
  const DsExecutorHooks *hooks = &exec->hooks;
  for (guint s = 0; s < exec->n_steps; s++) {
    Step *step = &exec->steps[s];
    if (exec->deadline_us != 0 && g_get_monotonic_time() > exec->deadline_us) {
      g_set_error(error, DS_ERROR, DS_ERROR_RUNTIME, "timed out before node '%s' (%s)",
                  step->node->name, step->node->op_name);
      return FALSE;
    }
    if (hooks->node_begin != NULL && !hooks->node_begin(exec->hooks_data, step->node)) {
      ds_set_cancelled_error(error, step->node);
      return FALSE;
    }
    DsStatus status = step->kernel->run(&step->ctx);
    if (G_UNLIKELY(status != DS_STATUS_OK)) {
      g_set_error(error, DS_ERROR, DS_ERROR_RUNTIME, "node '%s' (%s): %s", step->node->name,
                  step->node->op_name, ds_status_message(status));
      return FALSE;
    }
    if (hooks->node_end != NULL)
      hooks->node_end(exec->hooks_data, step->node, step->ctx.inputs, step->ctx.outputs);
  }
  return TRUE;
}

const DsTensor *ds_executor_get_entry(const DsExecutor *exec, guint entry)
{
  g_return_val_if_fail(entry < exec->plan->n_entries, NULL);
  return &exec->entries[entry];
}

const DsTensor *ds_executor_get_output(const DsExecutor *exec, guint i)
{
  g_return_val_if_fail(i < exec->graph->n_heads, NULL);
  return &exec->entries[ds_graph_entry_id(exec->graph, exec->graph->heads[i])];
}

const DsPlan *ds_executor_get_plan(const DsExecutor *exec)
{
  return exec->plan;
}
const DsGraphShapes *ds_executor_get_shapes(const DsExecutor *exec)
{
  return exec->shapes;
}
DsGraph *ds_executor_get_graph(const DsExecutor *exec)
{
  return exec->graph;
}
gsize ds_executor_get_workspace_bytes(const DsExecutor *exec)
{
  return exec->workspace_bytes;
}
gsize ds_executor_get_arena_capacity(const DsExecutor *exec)
{
  return exec->arena_capacity;
}
gsize ds_executor_get_reserved_bytes(const DsExecutor *exec)
{
  return exec->reserved_bytes;
}
guint64 ds_executor_get_n_allocations(const DsExecutor *exec)
{
  return exec->n_allocations;
}
