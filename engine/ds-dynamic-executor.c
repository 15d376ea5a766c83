/* ds-dynamic-executor.c: regions on cached plans, everything else imperatively. */
#include "ds-dynamic-executor.h"

#include <string.h>

#include "ds-control-flow.h"
#include "ds-error.h"
#include "ds-ndarray.h"
#include "ds-op.h"
#include "ds-thread-pool.h"

typedef struct {
  char *name;
  guint *nodes; /* node ids, topological order */
  guint n_nodes;
  gboolean *mask;   /* per graph node */
  GArray *inputs;   /* entry ids it reads and does not produce */
  DsExecutor *exec; /* made on the first run, when sizes are known */
  DsShape *key;     /* input shapes the current plan was made for */
  gboolean planned;
  const DsBackend *backend; /* where it runs: the executor's own, or a device */
} Region;

typedef struct {
  gboolean is_region;
  guint index; /* a region, or a node run imperatively */
} Unit;

typedef struct {
  const DsKernel *kernel;
  DsControlFlow *control; /* loops and branches run their subgraphs here instead */
  gboolean dynamic;       /* sizes its outputs as it runs */
  const DsBackend *backend;
} NodeKernel;

/* A tensor's copy on the other side of the host/device line. */
typedef struct {
  void *data; /* a buffer from the pool of `memory`, or NULL */
  DsMemory memory;
  const void *source; /* the bytes it copies */
  gboolean valid;     /* holds `source`'s bytes in this run */
  gboolean constant;  /* of a weight: valid for the executor's life */
} Mirror;

struct _DsDynamicExecutor {
  DsGraph *graph;
  const DsBackend *backend;
  int n_threads;
  DsThreadPool *threads;
  gboolean owns_threads;
  DsBufferPool *pool;
  const DsBackend *device;   /* the device regions are placed on, or NULL */
  DsBufferPool *device_pool; /* its buffers */
  Mirror *mirrors;           /* per entry, where placement needs one */
  DsTensor *host_heads;      /* per head: the host copy of a device output, or data NULL */
  guint64 n_copies, copy_to_device_bytes, copy_to_host_bytes;
  DsExprCtx *exprs; /* borrowed */
  DsGraphShapes *symbolic;
  DsGraphShapes *current; /* concrete shapes of this run, where known */
  GPtrArray *guards;      /* borrowed DsShapeGuard*, or NULL */
  gboolean *guard_done;

  Region *regions;
  guint n_regions;
  Unit *units; /* in run order */
  guint n_units;
  NodeKernel *kernels; /* per node; only for nodes run imperatively */
  guint n_dynamic, n_imperative;

  DsTensor *entries;       /* per entry: the tensor of this run */
  gboolean *bound;         /* per entry: variables only */
  void **owned;            /* per entry: a pool buffer to give back, or NULL */
  DsMemory *owned_memory;  /* per entry: which pool it came from */
  guint *refs_init, *refs; /* per entry: readers left (heads count as one forever) */

  guint n_symbols;
  int64_t *init_values, *values;
  gboolean *init_bound, *sym_bound;

  DsTensor *ins, *outs; /* scratch for imperative kernels */
  guint width;
  const DsNode *current_node; /* for the output allocator */
  GError *alloc_error;

  DsExecutorHooks hooks;
  gpointer hooks_data;
  gboolean region_frames; /* the partition came from the caller: its regions are frames */
  gint64 deadline_us;
  guint64 n_replans;
};

/* ---- symbols ---- */

static gboolean check_guards(DsDynamicExecutor *dx, GError **error)
{
  for (guint i = 0; dx->guards != NULL && i < dx->guards->len; i++) {
    const DsShapeGuard *g = dx->guards->pdata[i];
    int64_t v;
    if (dx->guard_done[i] || !ds_expr_eval(dx->exprs, g->expr, dx->values, dx->sym_bound, &v))
      continue;
    if (v < g->min) {
      g_autofree char *text = ds_expr_to_string(g->expr);
      g_set_error(error, DS_ERROR, DS_ERROR_SHAPE,
                  "%s (%s = %" G_GINT64_FORMAT " < %" G_GINT64_FORMAT " in this run)", g->message,
                  text, v, g->min);
      return FALSE;
    }
    dx->guard_done[i] = TRUE;
  }
  return TRUE;
}

/* Names output `k` of `node` in an error (formatted only then: this runs per node per run). */
static char *describe_output(const DsNode *node, guint k)
{
  return ds_node_is_variable(node)
             ? g_strdup_printf("input '%s'", node->name)
             : g_strdup_printf("node '%s' (%s): output %u", node->name, node->op_name, k);
}

/* Binds the symbols of `sym` from the sizes of `t`, produced by `node` (output `k`), and
 * checks the dims the bindings already decide. */
static gboolean learn_symbols(DsDynamicExecutor *dx, const DsNode *node, guint k,
                              const DsShape *sym, const DsTensor *t, GError **error)
{
  if (sym->ndim >= 0 && sym->ndim != t->ndim) {
    g_autofree char *where = describe_output(node, k);
    g_autofree char *want = ds_shape_to_string(sym);
    g_set_error(error, DS_ERROR, DS_ERROR_SHAPE, "%s has rank %d, but its inferred shape %s has %d",
                where, t->ndim, want, sym->ndim);
    return FALSE;
  }
  gboolean learned = FALSE;
  for (int i = 0; i < sym->ndim; i++) {
    DsDim d = sym->dims[i];
    int64_t actual = t->shape[i], want = d.value;
    if (d.expr != NULL) {
      const DsExpr *e = ds_expr_resolve(dx->exprs, d.expr);
      int id = ds_expr_get_symbol_id(e);
      if (id >= 0 && (guint)id < dx->n_symbols && !dx->sym_bound[id]) {
        int64_t lo, hi;
        ds_expr_ctx_get_range(dx->exprs, e, &lo, &hi);
        if (actual < lo || actual > hi) {
          g_autofree char *where = describe_output(node, k);
          g_set_error(error, DS_ERROR, DS_ERROR_SHAPE,
                      "%s: dim %d is %" G_GINT64_FORMAT ", outside the range of %s", where, i,
                      actual, ds_expr_get_symbol_name(e));
          return FALSE;
        }
        dx->values[id] = actual;
        dx->sym_bound[id] = TRUE;
        learned = TRUE;
        continue;
      }
      if (!ds_expr_eval(dx->exprs, e, dx->values, dx->sym_bound, &want))
        continue; /* not decidable yet: later outputs will tell */
    }
    if (want >= 0 && want != actual) {
      g_autofree char *text = ds_dim_to_string(d);
      g_autofree char *where = describe_output(node, k);
      g_set_error(error, DS_ERROR, DS_ERROR_SHAPE,
                  "%s: dim %d is %" G_GINT64_FORMAT
                  ", but shape inference says %s = %" G_GINT64_FORMAT,
                  where, i, actual, text, want);
      return FALSE;
    }
  }
  return !learned || check_guards(dx, error);
}

/* The concrete form of a symbolic shape under the current bindings. */
static gboolean evaluate_shape(DsDynamicExecutor *dx, const DsShape *sym, DsShape *out)
{
  if (sym->ndim < 0)
    return FALSE;
  out->ndim = sym->ndim;
  for (int i = 0; i < sym->ndim; i++) {
    int64_t v = sym->dims[i].value;
    if (sym->dims[i].expr != NULL &&
        !ds_expr_eval(dx->exprs, sym->dims[i].expr, dx->values, dx->sym_bound, &v))
      return FALSE;
    if (v < 0)
      return FALSE;
    out->dims[i] = ds_dim(v);
  }
  return TRUE;
}

/* Output shapes of a node that is about to run: from the symbols, or from the op's shape
 * function on its inputs' current shapes when the symbols cannot decide (seed 000's
 * "infer right before executing"). */
static gboolean resolve_output_shapes(DsDynamicExecutor *dx, const DsNode *node, GError **error)
{
  DsGraph *graph = dx->graph;
  guint base = graph->node_row_ptr[node->id], n_out = ds_node_n_op_outputs(node);
  gboolean all = TRUE;
  for (guint k = 0; k < n_out; k++)
    all &= evaluate_shape(dx, &dx->symbolic->shapes[base + k], &dx->current->shapes[base + k]);
  if (all)
    return TRUE;
  g_autofree DsShape *in = g_new(DsShape, node->n_inputs + 1);
  g_autofree DsShape *out = g_new(DsShape, n_out + 1);
  for (guint k = 0; k < node->n_inputs; k++)
    in[k] = dx->current->shapes[ds_graph_entry_id(graph, node->inputs[k])];
  for (guint k = 0; k < n_out; k++)
    out[k] = DS_SHAPE_UNKNOWN;
  DsShapeCtx *ctx = ds_shape_ctx_new();
  ds_shape_ctx_set_node(ctx, node);
  gboolean ok = node->op->infer_shape(ctx, node, node->param, in, out, error);
  ds_shape_ctx_free(ctx);
  if (!ok)
    return FALSE;
  for (guint k = 0; k < n_out; k++) {
    if (!ds_shape_get_concrete(&out[k], (int64_t[DS_MAX_NDIM]){0})) {
      g_set_error(error, DS_ERROR, DS_ERROR_SHAPE,
                  "node '%s' (%s): the shape of output %u is not known in this run", node->name,
                  node->op_name, k);
      return FALSE;
    }
    dx->current->shapes[base + k] = out[k];
  }
  return TRUE;
}

/* ---- binding ---- */

/* The pool of buffers in `memory`. */
static DsBufferPool *pool_of(DsDynamicExecutor *dx, DsMemory memory)
{
  return memory == DS_MEMORY_HOST || dx->device_pool == NULL ? dx->pool : dx->device_pool;
}

static void region_free(Region *r)
{
  g_free(r->name);
  g_free(r->nodes);
  g_free(r->mask);
  if (r->inputs != NULL)
    g_array_unref(r->inputs);
  ds_executor_free(r->exec);
  g_free(r->key);
}

void ds_dynamic_executor_free(DsDynamicExecutor *dx)
{
  if (dx == NULL)
    return;
  for (guint i = 0; i < dx->n_regions; i++)
    region_free(&dx->regions[i]);
  g_free(dx->regions);
  if (dx->pool != NULL) {
    for (guint e = 0; dx->owned != NULL && e < dx->symbolic->n_entries; e++)
      ds_buffer_pool_release(pool_of(dx, dx->owned_memory[e]), dx->owned[e]);
    for (guint e = 0; dx->mirrors != NULL && e < dx->symbolic->n_entries; e++)
      ds_buffer_pool_release(pool_of(dx, dx->mirrors[e].memory), dx->mirrors[e].data);
    ds_buffer_pool_free(dx->pool);
    ds_buffer_pool_free(dx->device_pool);
  }
  for (guint i = 0; dx->kernels != NULL && i < dx->graph->n_nodes; i++)
    ds_control_flow_free(dx->kernels[i].control);
  if (dx->owns_threads)
    ds_thread_pool_free(dx->threads);
  g_free(dx->units);
  g_free(dx->kernels);
  g_free(dx->entries);
  g_free(dx->bound);
  g_free(dx->owned);
  g_free(dx->owned_memory);
  g_free(dx->mirrors);
  g_free(dx->host_heads);
  g_free(dx->refs_init);
  g_free(dx->refs);
  g_free(dx->init_values);
  g_free(dx->values);
  g_free(dx->init_bound);
  g_free(dx->sym_bound);
  g_free(dx->guard_done);
  g_free(dx->ins);
  g_free(dx->outs);
  g_clear_error(&dx->alloc_error);
  ds_graph_shapes_free(dx->symbolic);
  ds_graph_shapes_free(dx->current);
  if (dx->graph != NULL)
    ds_graph_unref(dx->graph);
  g_free(dx);
}

/* Run order: a topological sort of the units (static regions, and single nodes otherwise),
 * taking the ready unit that holds the earliest node first so the order stays close to the
 * file's. */
static void order_units(DsDynamicExecutor *dx, const int *unit_of_node, guint n_units,
                        Unit *units_by_id, const guint *first_node)
{
  DsGraph *graph = dx->graph;
  g_autofree guint *indegree = g_new0(guint, n_units + 1);
  g_autoptr(GArray) edges = g_array_new(FALSE, FALSE, sizeof(guint) * 2);
  for (guint i = 0; i < graph->n_nodes; i++) {
    if (unit_of_node[i] < 0)
      continue;
    for (guint k = 0; k < graph->nodes[i]->n_inputs; k++) {
      int from = unit_of_node[graph->nodes[i]->inputs[k].node_id];
      if (from >= 0 && from != unit_of_node[i]) {
        guint edge[2] = {(guint)from, (guint)unit_of_node[i]};
        g_array_append_vals(edges, edge, 1);
        indegree[unit_of_node[i]]++;
      }
    }
  }
  g_autofree gboolean *done = g_new0(gboolean, n_units + 1);
  dx->units = g_new(Unit, n_units + 1);
  for (guint n = 0; n < n_units; n++) {
    guint best = G_MAXUINT;
    for (guint u = 0; u < n_units; u++)
      if (!done[u] && indegree[u] == 0 && (best == G_MAXUINT || first_node[u] < first_node[best]))
        best = u;
    g_assert(best != G_MAXUINT); /* regions are convex, so the unit graph has no cycle */
    done[best] = TRUE;
    dx->units[dx->n_units++] = units_by_id[best];
    for (guint e = 0; e < edges->len; e++) {
      const guint *edge = &g_array_index(edges, guint, e * 2);
      if (edge[0] == best)
        indegree[edge[1]]--;
    }
  }
}

/* Every output needs its dtype before the run; a rank may be unknown (an If whose branches
 * give different ranks), since the node that makes it sizes it, and the shape functions of
 * the nodes after it decide theirs right before they run. */
static gboolean check_symbolic(DsGraph *graph, const DsGraphShapes *symbolic, GError **error)
{
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    if (ds_node_is_variable(node))
      continue;
    /* Inference passes over an op it does not know, so that is what an unknown dtype means
     * there: say so, not the symptom. */
    if (node->op == NULL) {
      g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED, "node '%s': op '%s' is not supported",
                  node->name, node->op_name);
      return FALSE;
    }
    for (guint k = 0; k < ds_node_n_op_outputs(node); k++) {
      guint e = graph->node_row_ptr[i] + k;
      if (symbolic->dtypes[e] == DS_DTYPE_UNKNOWN) {
        g_set_error(error, DS_ERROR, DS_ERROR_SHAPE,
                    "node '%s' (%s): the dtype of output %u is not known, so it cannot run",
                    node->name, node->op_name, k);
        return FALSE;
      }
    }
  }
  return TRUE;
}

/* ---- control flow's subgraphs run on executors like this one ---- */

static gpointer runner_create(DsGraph *graph, const DsGraphShapes *shapes, DsExprCtx *exprs,
                              const DsBackend *backend, GError **error)
{
  DsBindSpec spec = {
      .graph = graph, .shapes = shapes, .exprs = exprs, .backend = backend, .n_threads = 1};
  return ds_dynamic_executor_new(&spec, error);
}

static void runner_free(gpointer exec) { ds_dynamic_executor_free(exec); }

static void runner_set_thread_pool(gpointer exec, DsThreadPool *threads)
{
  ds_dynamic_executor_set_thread_pool(exec, threads);
}

static void runner_set_hooks(gpointer exec, const DsExecutorHooks *hooks, gpointer data)
{
  ds_dynamic_executor_set_hooks(exec, hooks, data);
}

static gboolean runner_bind(gpointer exec, const DsNode *var, const DsTensor *value,
                            GError **error)
{
  return ds_dynamic_executor_bind(exec, var, value, error);
}

static gboolean runner_run(gpointer exec, GError **error)
{
  return ds_dynamic_executor_run(exec, error);
}

static const DsTensor *runner_get_output(gpointer exec, guint i)
{
  return ds_dynamic_executor_get_output(exec, i);
}

static const DsGraphShapes *runner_get_shapes(gpointer exec)
{
  return ds_dynamic_executor_get_shapes(exec);
}

static void runner_get_memory(gpointer exec, guint64 *n_allocations, gsize *bytes_held)
{
  DsDynamicExecutorStats stats;
  ds_dynamic_executor_get_stats(exec, &stats);
  *n_allocations = stats.n_allocations;
  *bytes_held = stats.memory_bytes;
}

static const DsSubgraphRunner subgraph_runner = {
    .create = runner_create,
    .free = runner_free,
    .set_thread_pool = runner_set_thread_pool,
    .set_hooks = runner_set_hooks,
    .bind = runner_bind,
    .run = runner_run,
    .get_output = runner_get_output,
    .get_shapes = runner_get_shapes,
    .get_memory = runner_get_memory,
};

DsDynamicExecutor *ds_dynamic_executor_new(const DsBindSpec *spec, GError **error)
{
  DsGraph *graph = spec->graph;
  const DsPartition *partition = spec->partition;
  const DsGraphShapes *symbolic = spec->shapes;
  DsExprCtx *exprs = spec->exprs;
  const int64_t *values = spec->values;
  const gboolean *bound = spec->bound;
  guint n_symbols = spec->n_symbols;
  GPtrArray *guards = spec->guards;
  const DsBackend *backend = spec->backend;
  int n_threads = spec->n_threads;
  g_return_val_if_fail(symbolic->n_entries == ds_graph_n_entries(graph), NULL);
  if (!check_symbolic(graph, symbolic, error))
    return NULL;
  g_autoptr(DsPartition) own_partition = NULL;
  gboolean region_frames = partition != NULL;
  if (partition == NULL) {
    own_partition = ds_partition_label(graph, ds_subgraph_property_find("static-dynamic"), error);
    if (own_partition == NULL)
      return NULL;
    partition = own_partition;
  }

  g_autoptr(DsDynamicExecutor) dx = g_new0(DsDynamicExecutor, 1);
  dx->graph = ds_graph_ref(graph);
  dx->backend = backend;
  dx->n_threads = n_threads;
  dx->region_frames = region_frames;
  dx->exprs = exprs;
  dx->symbolic = ds_graph_shapes_copy(symbolic);
  /* Outputs a file lists beyond the op's own (MKL-DNN workspaces) are empty, as the static
   * executor has them. */
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    guint base = graph->node_row_ptr[i];
    for (guint k = ds_node_is_variable(node) ? 1 : ds_node_n_op_outputs(node); k < node->n_outputs;
         k++) {
      dx->symbolic->shapes[base + k] = (DsShape){.ndim = 1, .dims = {ds_dim(0)}};
      dx->symbolic->dtypes[base + k] = dx->symbolic->dtypes[base];
    }
  }
  dx->current = ds_graph_shapes_copy(dx->symbolic);
  dx->guards = guards;
  dx->guard_done = g_new0(gboolean, guards != NULL ? guards->len + 1 : 1);
  guint n_entries = symbolic->n_entries;
  dx->entries = g_new0(DsTensor, n_entries);
  dx->bound = g_new0(gboolean, n_entries);
  dx->owned = g_new0(void *, n_entries);
  dx->owned_memory = g_new0(DsMemory, n_entries);
  dx->mirrors = g_new0(Mirror, n_entries);
  dx->host_heads = g_new0(DsTensor, graph->n_heads + 1);
  dx->refs_init = g_new0(guint, n_entries);
  dx->refs = g_new0(guint, n_entries);
  dx->kernels = g_new0(NodeKernel, graph->n_nodes);
  dx->threads = ds_thread_pool_new(n_threads);
  dx->owns_threads = TRUE;
  dx->n_symbols = ds_expr_ctx_get_n_symbols(exprs);
  dx->init_values = g_new0(int64_t, dx->n_symbols + 1);
  dx->values = g_new0(int64_t, dx->n_symbols + 1);
  dx->init_bound = g_new0(gboolean, dx->n_symbols + 1);
  dx->sym_bound = g_new0(gboolean, dx->n_symbols + 1);
  for (guint i = 0; i < MIN(n_symbols, dx->n_symbols); i++) {
    dx->init_values[i] = values != NULL ? values[i] : 0;
    dx->init_bound[i] = bound != NULL && bound[i];
  }

  /* Units: static regions run on their own executor; dynamic regions and unselected nodes
   * run node by node. */
  g_autofree int *unit_of_node = g_new(int, graph->n_nodes);
  g_autofree Unit *units_by_id = g_new(Unit, graph->n_nodes + 1);
  g_autofree guint *first_node = g_new(guint, graph->n_nodes + 1);
  guint n_units = 0;
  dx->regions = g_new0(Region, partition->n_regions + 1);
  g_autofree int *unit_of_region = g_new(int, partition->n_regions + 1);
  for (guint r = 0; r < partition->n_regions; r++)
    unit_of_region[r] = -1;
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    unit_of_node[i] = -1;
    if (ds_node_is_variable(node))
      continue;
    if (node->op == NULL) {
      g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED, "node '%s': op '%s' is not supported",
                  node->name, node->op_name);
      return NULL;
    }
    gboolean control = (node->op->traits & DS_OP_TRAIT_CONTROL_FLOW) != 0;
    gboolean dynamic = control || (node->op->traits & DS_OP_TRAIT_DYNAMIC_SHAPE) != 0;
    int r = partition->region_of_node[i];
    const DsBackend *placed = r >= 0 ? partition->regions[r].backend : NULL;
    const DsBackend *node_backend = placed != NULL && !control ? placed : backend;
    if (node_backend != backend)
      dx->device = node_backend;
    const DsKernel *kernel = control ? NULL : node_backend->get_kernel(node->op->id);
    if (control) {
      dx->kernels[i].control =
          ds_control_flow_new(node, &subgraph_runner, backend, dx->threads, error);
      if (dx->kernels[i].control == NULL)
        return NULL;
    } else if (kernel == NULL) {
      g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
                  "node '%s': op '%s' has no kernel on the %s backend", node->name, node->op_name,
                  node_backend->name);
      return NULL;
    } else if (!ds_op_check_node_args(node, error)) {
      return NULL;
    }
    if (r >= 0 && partition->regions[r].kind == DS_REGION_STATIC && !dynamic) {
      if (unit_of_region[r] < 0) {
        const DsRegion *src = &partition->regions[r];
        Region *region = &dx->regions[dx->n_regions];
        region->name = g_strdup(src->name);
        region->nodes = g_memdup2(src->nodes, sizeof(guint) * src->n_nodes);
        region->n_nodes = src->n_nodes;
        region->mask = g_new0(gboolean, graph->n_nodes);
        for (guint j = 0; j < src->n_nodes; j++)
          region->mask[src->nodes[j]] = TRUE;
        region->inputs = ds_region_inputs(partition, (guint)r);
        region->key = g_new0(DsShape, region->inputs->len + 1);
        region->backend = node_backend;
        units_by_id[n_units] = (Unit){TRUE, dx->n_regions++};
        first_node[n_units] = i;
        unit_of_region[r] = (int)n_units++;
      }
      unit_of_node[i] = unit_of_region[r];
      continue;
    }
    dx->kernels[i].kernel = kernel;
    dx->kernels[i].dynamic = dynamic;
    dx->kernels[i].backend = node_backend;
    if (dynamic)
      dx->n_dynamic++;
    else
      dx->n_imperative++;
    units_by_id[n_units] = (Unit){FALSE, i};
    first_node[n_units] = i;
    unit_of_node[i] = (int)n_units++;
    dx->width = MAX(dx->width, MAX(node->n_inputs, node->n_outputs));
  }
  order_units(dx, unit_of_node, n_units, units_by_id, first_node);

  for (guint i = 0; i < graph->n_nodes; i++)
    for (guint k = 0; k < graph->nodes[i]->n_inputs; k++)
      dx->refs_init[ds_graph_entry_id(graph, graph->nodes[i]->inputs[k])]++;
  for (guint h = 0; h < graph->n_heads; h++)
    dx->refs_init[ds_graph_entry_id(graph, graph->heads[h])] += G_MAXUINT / 2;
  dx->ins = g_new0(DsTensor, dx->width + 1);
  dx->outs = g_new0(DsTensor, dx->width + 1);
  dx->pool = ds_buffer_pool_new(backend);
  if (dx->device != NULL)
    dx->device_pool = ds_buffer_pool_new(dx->device);
  if (backend->set_n_threads != NULL)
    backend->set_n_threads(n_threads);
  return g_steal_pointer(&dx);
}

gboolean ds_dynamic_executor_bind(DsDynamicExecutor *dx, const DsNode *variable,
                                  const DsTensor *value, GError **error)
{
  g_return_val_if_fail(ds_node_is_variable(variable), FALSE);
  guint e = dx->graph->node_row_ptr[variable->id];
  if (value->dtype != dx->symbolic->dtypes[e]) {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "input '%s': got %s, the graph expects %s",
                variable->name, ds_dtype_name(value->dtype),
                ds_dtype_name(dx->symbolic->dtypes[e]));
    return FALSE;
  }
  dx->entries[e] = *value;
  dx->bound[e] = TRUE;
  return TRUE;
}

void ds_dynamic_executor_set_hooks(DsDynamicExecutor *dx, const DsExecutorHooks *hooks,
                                   gpointer data)
{
  dx->hooks = hooks != NULL ? *hooks : (DsExecutorHooks){0};
  dx->hooks_data = data;
  for (guint r = 0; r < dx->n_regions; r++)
    if (dx->regions[r].exec != NULL)
      ds_executor_set_hooks(dx->regions[r].exec, hooks, data);
  for (guint i = 0; i < dx->graph->n_nodes; i++)
    if (dx->kernels[i].control != NULL)
      ds_control_flow_set_hooks(dx->kernels[i].control, hooks, data);
}

void ds_dynamic_executor_set_thread_pool(DsDynamicExecutor *dx, DsThreadPool *threads)
{
  for (guint r = 0; r < dx->n_regions; r++)
    g_return_if_fail(dx->regions[r].exec == NULL); /* only before the first run */
  if (dx->owns_threads)
    ds_thread_pool_free(dx->threads);
  dx->threads = threads;
  dx->owns_threads = FALSE;
  for (guint i = 0; i < dx->graph->n_nodes; i++)
    if (dx->kernels[i].control != NULL)
      ds_control_flow_set_thread_pool(dx->kernels[i].control, threads);
}

void ds_dynamic_executor_set_deadline(DsDynamicExecutor *dx, gint64 deadline_us)
{
  dx->deadline_us = deadline_us;
  for (guint r = 0; r < dx->n_regions; r++)
    if (dx->regions[r].exec != NULL)
      ds_executor_set_deadline(dx->regions[r].exec, deadline_us);
}

/* ---- running ---- */

static DsStatus alloc_output(void *data, int index, DsTensor *output)
{
  DsDynamicExecutor *dx = data;
  const DsNode *node = dx->current_node;
  guint e = dx->graph->node_row_ptr[node->id] + (guint)index;
  gsize nbytes;
  if (output->ndim < 0 || output->ndim > DS_MAX_NDIM ||
      !ds_shape_checked_nbytes(output->shape, output->ndim, ds_dtype_size(output->dtype),
                               G_MAXSIZE / 2, &nbytes)) {
    g_clear_error(&dx->alloc_error);
    g_set_error(&dx->alloc_error, DS_ERROR, DS_ERROR_LIMIT,
                "node '%s' (%s): output %d has an invalid or overflowing size", node->name,
                node->op_name, index);
    return DS_STATUS_NO_MEMORY;
  }
  if (dx->owned[e] != NULL) { /* asked twice: give the first buffer back */
    ds_buffer_pool_release(pool_of(dx, dx->owned_memory[e]), dx->owned[e]);
    dx->owned[e] = NULL;
  }
  g_clear_error(&dx->alloc_error);
  DsMemory memory = dx->kernels[node->id].backend->memory;
  output->memory = memory;
  output->data = ds_buffer_pool_acquire(pool_of(dx, memory), e, nbytes, NULL, &dx->alloc_error);
  if (output->data == NULL) {
    g_prefix_error(&dx->alloc_error, "node '%s' (%s) output %d: ", node->name, node->op_name,
                   index);
    return DS_STATUS_NO_MEMORY;
  }
  dx->owned[e] = output->data;
  dx->owned_memory[e] = memory;
  return DS_STATUS_OK;
}

static void make_view(DsTensor *t, const DsShape *shape, DsDType dtype, void *data, DsMemory memory)
{
  t->dtype = dtype;
  t->ndim = shape->ndim;
  for (int i = 0; i < shape->ndim; i++)
    t->shape[i] = shape->dims[i].value;
  t->data = data;
  t->constant = NULL;
  t->memory = memory;
}

/* ---- the host/device line ---- */

static void mirror_drop(DsDynamicExecutor *dx, Mirror *m)
{
  ds_buffer_pool_release(pool_of(dx, m->memory), m->data);
  *m = (Mirror){0};
}

/* Entry `e` as `target` reads it: itself when it lies in target's memory, else its mirror
 * there, copied now unless this run (or, for a weight, any run) already did. */
static gboolean stage(DsDynamicExecutor *dx, guint e, const DsBackend *target, DsTensor *out,
                      GError **error)
{
  const DsTensor *t = &dx->entries[e];
  *out = *t;
  if (t->memory == target->memory || t->data == NULL)
    return TRUE;
  Mirror *m = &dx->mirrors[e];
  gsize nbytes = ds_tensor_nbytes(t);
  if (!(m->valid && m->source == t->data && m->memory == target->memory)) {
    mirror_drop(dx, m);
    guint slot = ds_graph_n_entries(dx->graph) + dx->graph->n_nodes + e;
    m->data = ds_buffer_pool_acquire(pool_of(dx, target->memory), slot, nbytes, NULL, error);
    if (m->data == NULL) {
      g_prefix_error(error, "copying '%s' to the %s backend: ",
                     dx->graph->nodes[ds_graph_entry_node(dx->graph, e)]->name, target->name);
      return FALSE;
    }
    m->memory = target->memory;
    gboolean to_device = target->memory != DS_MEMORY_HOST;
    gboolean ok = to_device ? dx->device->copy_to_device(m->data, t->data, nbytes)
                            : dx->device->copy_to_host(m->data, t->data, nbytes);
    if (!ok) {
      g_set_error(error, DS_ERROR, DS_ERROR_RUNTIME, "copying '%s' %s the %s device failed",
                  dx->graph->nodes[ds_graph_entry_node(dx->graph, e)]->name,
                  to_device ? "to" : "from", dx->device->name);
      mirror_drop(dx, m);
      return FALSE;
    }
    m->source = t->data;
    m->valid = TRUE;
    m->constant = t->constant != NULL;
    dx->n_copies++;
    if (to_device)
      dx->copy_to_device_bytes += nbytes;
    else
      dx->copy_to_host_bytes += nbytes;
  }
  out->data = m->data;
  out->memory = target->memory;
  out->constant = NULL; /* derived forms of weights are host-side */
  return TRUE;
}

static void record_shape(DsDynamicExecutor *dx, guint e, const DsTensor *t)
{
  dx->current->shapes[e] = ds_shape_from_concrete(t->shape, t->ndim);
}

static gboolean finish_outputs(DsDynamicExecutor *dx, const DsNode *node, GError **error);

static gboolean run_node(DsDynamicExecutor *dx, const DsNode *node, GError **error)
{
  DsGraph *graph = dx->graph;
  const NodeKernel *nk = &dx->kernels[node->id];
  guint base = graph->node_row_ptr[node->id], n_out = ds_node_n_op_outputs(node);
  DsBufferPool *pool = pool_of(dx, nk->backend->memory);
  for (guint k = 0; k < node->n_inputs; k++)
    if (!stage(dx, ds_graph_entry_id(graph, node->inputs[k]), nk->backend, &dx->ins[k], error))
      return FALSE;

  if (nk->dynamic) {
    for (guint k = 0; k < n_out; k++)
      dx->outs[k] = (DsTensor){
          .dtype = dx->symbolic->dtypes[base + k], .ndim = -1, .memory = nk->backend->memory};
  } else {
    if (!resolve_output_shapes(dx, node, error))
      return FALSE;
    for (guint k = 0; k < n_out; k++) {
      gsize nbytes;
      if (!ds_entry_nbytes(&dx->current->shapes[base + k], dx->symbolic->dtypes[base + k],
                           &nbytes)) {
        g_set_error(error, DS_ERROR, DS_ERROR_LIMIT, "node '%s' (%s): output %u is too large",
                    node->name, node->op_name, k);
        return FALSE;
      }
      if (dx->owned[base + k] != NULL)
        ds_buffer_pool_release(pool_of(dx, dx->owned_memory[base + k]), dx->owned[base + k]);
      dx->owned[base + k] = NULL;
      void *data = ds_buffer_pool_acquire(pool, base + k, nbytes, NULL, error);
      if (data == NULL) {
        g_prefix_error(error, "node '%s' (%s): ", node->name, node->op_name);
        return FALSE;
      }
      dx->owned[base + k] = data;
      dx->owned_memory[base + k] = nk->backend->memory;
      make_view(&dx->outs[k], &dx->current->shapes[base + k], dx->symbolic->dtypes[base + k], data,
                nk->backend->memory);
    }
  }

  if (dx->hooks.node_begin != NULL && !dx->hooks.node_begin(dx->hooks_data, node)) {
    ds_set_cancelled_error(error, node);
    return FALSE;
  }
  if (nk->control != NULL) {
    dx->current_node = node;
    gboolean ok = ds_control_flow_run(nk->control, dx->ins, dx->outs, alloc_output, dx, error);
    if (!ok) {
      if (dx->alloc_error != NULL) {
        g_clear_error(error);
        g_propagate_error(error, g_steal_pointer(&dx->alloc_error));
      }
      return FALSE;
    }
    return finish_outputs(dx, node, error);
  }

  DsKernelCtx ctx = {
      .param = node->param,
      .inputs = dx->ins,
      .n_inputs = (int)node->n_inputs,
      .outputs = dx->outs,
      .n_outputs = (int)n_out,
      .pool = dx->threads,
      .alloc_output = nk->dynamic ? alloc_output : NULL,
      .alloc_data = dx,
  };
  void *workspace = NULL;
  if (nk->kernel->workspace_bytes != NULL) {
    gsize bytes = nk->kernel->workspace_bytes(node->param, dx->ins, (int)node->n_inputs, dx->outs,
                                              (int)n_out);
    if (bytes > 0) {
      /* A slot of its own per node, so warm runs find the same buffer again. */
      workspace = ds_buffer_pool_acquire(pool, ds_graph_n_entries(graph) + node->id, bytes,
                                         "a kernel workspace", error);
      if (workspace == NULL)
        return FALSE;
    }
  }
  ctx.workspace = workspace;
  dx->current_node = node;
  DsStatus status = nk->kernel->run(&ctx);
  ds_buffer_pool_release(pool, workspace);
  if (status != DS_STATUS_OK) {
    if (dx->alloc_error != NULL) {
      g_propagate_error(error, g_steal_pointer(&dx->alloc_error));
      return FALSE;
    }
    g_set_error(error, DS_ERROR, DS_ERROR_RUNTIME, "node '%s' (%s): %s", node->name, node->op_name,
                ds_status_message(status));
    return FALSE;
  }
  return finish_outputs(dx, node, error);
}

/* Records a node's outputs, and for one that sized them itself, binds its unbacked symbols. */
static gboolean finish_outputs(DsDynamicExecutor *dx, const DsNode *node, GError **error)
{
  const NodeKernel *nk = &dx->kernels[node->id];
  guint base = dx->graph->node_row_ptr[node->id], n_out = ds_node_n_op_outputs(node);
  for (guint k = 0; k < n_out; k++) {
    if (nk->dynamic && dx->outs[k].data == NULL) {
      g_set_error(error, DS_ERROR, DS_ERROR_RUNTIME, "node '%s' (%s): output %u was not produced",
                  node->name, node->op_name, k);
      return FALSE;
    }
    dx->entries[base + k] = dx->outs[k];
    record_shape(dx, base + k, &dx->outs[k]);
    if (nk->dynamic &&
        !learn_symbols(dx, node, k, &dx->symbolic->shapes[base + k], &dx->outs[k], error))
      return FALSE;
  }
  if (dx->hooks.node_end != NULL)
    dx->hooks.node_end(dx->hooks_data, node, dx->ins, dx->outs);
  return TRUE;
}

static gboolean region_inputs_changed(DsDynamicExecutor *dx, Region *region)
{
  gboolean changed = !region->planned;
  for (guint j = 0; j < region->inputs->len; j++) {
    const DsTensor *t = &dx->entries[g_array_index(region->inputs, guint, j)];
    DsShape s = ds_shape_from_concrete(t->shape, t->ndim);
    if (s.ndim != region->key[j].ndim ||
        memcmp(s.dims, region->key[j].dims, sizeof(DsDim) * (gsize)s.ndim) != 0) {
      region->key[j] = s;
      changed = TRUE;
    }
  }
  return changed;
}

static gboolean run_region_plan(DsDynamicExecutor *dx, Region *region, GError **error)
{
  DsGraph *graph = dx->graph;
  if (region_inputs_changed(dx, region)) {
    for (guint j = 0; j < region->inputs->len; j++) {
      guint e = g_array_index(region->inputs, guint, j);
      record_shape(dx, e, &dx->entries[e]);
    }
    for (guint j = 0; j < region->n_nodes; j++)
      if (!resolve_output_shapes(dx, graph->nodes[region->nodes[j]], error))
        return FALSE;
    if (region->exec == NULL) {
      region->exec = ds_executor_new_region(graph, dx->current, region->mask, region->backend,
                                            dx->threads, dx->n_threads, error);
      if (region->exec == NULL)
        return FALSE;
      ds_executor_set_hooks(region->exec, &dx->hooks, dx->hooks_data);
      ds_executor_set_deadline(region->exec, dx->deadline_us);
    } else if (!ds_executor_reshape(region->exec, dx->current, error)) {
      return FALSE;
    }
    region->planned = TRUE;
    dx->n_replans++;
    /* The region's tensors move only when it is re-planned. */
    for (guint j = 0; j < region->n_nodes; j++) {
      const DsNode *node = graph->nodes[region->nodes[j]];
      for (guint k = 0; k < ds_node_n_op_outputs(node); k++) {
        guint e = graph->node_row_ptr[node->id] + k;
        dx->entries[e] = *ds_executor_get_entry(region->exec, e);
      }
    }
  }
  for (guint j = 0; j < region->inputs->len; j++) {
    guint e = g_array_index(region->inputs, guint, j);
    DsTensor input;
    if (!stage(dx, e, region->backend, &input, error) ||
        !ds_executor_bind_entry(region->exec, e, &input, error))
      return FALSE;
  }
  return ds_executor_run(region->exec, error);
}

/* A region of the caller's partition is a frame for the hooks (the regions made here to
 * split a graph around its dynamic ops are not: they are how this executor works). */
static gboolean run_region(DsDynamicExecutor *dx, Region *region, GError **error)
{
  gboolean placed = region->backend != dx->backend;
  if (!(dx->region_frames || placed) || dx->hooks.frame_enter == NULL)
    return run_region_plan(dx, region, error);
  DsFrame frame = {
      .kind = DS_FRAME_REGION,
      .graph = dx->graph,
      .name = region->name,
      .iteration = -1,
      .in_region = region->mask,
      .backend = placed ? region->backend->name : NULL,
  };
  dx->hooks.frame_enter(dx->hooks_data, &frame);
  gboolean ok = run_region_plan(dx, region, error);
  if (dx->hooks.frame_exit != NULL)
    dx->hooks.frame_exit(dx->hooks_data, &frame);
  return ok;
}

static void release_inputs(DsDynamicExecutor *dx, const DsNode *node)
{
  for (guint k = 0; k < node->n_inputs; k++) {
    guint e = ds_graph_entry_id(dx->graph, node->inputs[k]);
    if (--dx->refs[e] != 0)
      continue;
    if (dx->owned[e] != NULL) {
      ds_buffer_pool_release(pool_of(dx, dx->owned_memory[e]), dx->owned[e]);
      dx->owned[e] = NULL;
    }
    if (dx->mirrors[e].data != NULL && !dx->mirrors[e].constant)
      mirror_drop(dx, &dx->mirrors[e]);
  }
}

/* The graph's outputs that a device produced, copied to the host (each a head's view of the
 * entry's mirror, so a head listed twice is copied once). */
static gboolean fetch_heads(DsDynamicExecutor *dx, GError **error)
{
  if (dx->device == NULL)
    return TRUE;
  const DsBackend *host = dx->backend;
  for (guint h = 0; h < dx->graph->n_heads; h++) {
    guint e = ds_graph_entry_id(dx->graph, dx->graph->heads[h]);
    dx->host_heads[h] = (DsTensor){0};
    if (dx->entries[e].memory != DS_MEMORY_HOST && !stage(dx, e, host, &dx->host_heads[h], error))
      return FALSE;
  }
  return TRUE;
}

gboolean ds_dynamic_executor_run(DsDynamicExecutor *dx, GError **error)
{
  DsGraph *graph = dx->graph;
  guint n_entries = dx->symbolic->n_entries;
  /* The last run's outputs and copies go back to the pool now (weights' copies stay). */
  for (guint e = 0; e < n_entries; e++) {
    if (dx->owned[e] != NULL) {
      ds_buffer_pool_release(pool_of(dx, dx->owned_memory[e]), dx->owned[e]);
      dx->owned[e] = NULL;
    }
    if (dx->mirrors[e].data != NULL && !dx->mirrors[e].constant)
      mirror_drop(dx, &dx->mirrors[e]);
  }
  memcpy(dx->refs, dx->refs_init, sizeof(guint) * n_entries);
  memcpy(dx->values, dx->init_values, sizeof(int64_t) * dx->n_symbols);
  memcpy(dx->sym_bound, dx->init_bound, sizeof(gboolean) * dx->n_symbols);
  if (dx->guards != NULL)
    memset(dx->guard_done, 0, sizeof(gboolean) * dx->guards->len);

  /* 1. Inputs bind their symbols (s0 = 8...). */
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    if (!ds_node_is_variable(node))
      continue;
    guint e = graph->node_row_ptr[i];
    if (!dx->bound[e]) {
      g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "input '%s' has no value", node->name);
      return FALSE;
    }
    if (!learn_symbols(dx, node, 0, &dx->symbolic->shapes[e], &dx->entries[e], error))
      return FALSE;
    record_shape(dx, e, &dx->entries[e]);
  }
  if (!check_guards(dx, error))
    return FALSE;

  /* 2. Units in order. */
  for (guint u = 0; u < dx->n_units; u++) {
    const Unit *unit = &dx->units[u];
    if (unit->is_region) {
      Region *region = &dx->regions[unit->index];
      if (!run_region(dx, region, error))
        return FALSE;
      for (guint j = 0; j < region->n_nodes; j++)
        release_inputs(dx, graph->nodes[region->nodes[j]]);
    } else {
      const DsNode *node = graph->nodes[unit->index];
      if (dx->deadline_us != 0 && g_get_monotonic_time() > dx->deadline_us) {
        g_set_error(error, DS_ERROR, DS_ERROR_RUNTIME, "timed out before node '%s' (%s)",
                    node->name, node->op_name);
        return FALSE;
      }
      if (!run_node(dx, node, error))
        return FALSE;
      release_inputs(dx, node);
    }
  }
  return fetch_heads(dx, error);
}

/* ---- results ---- */

const DsTensor *ds_dynamic_executor_get_entry(const DsDynamicExecutor *dx, guint entry)
{
  g_return_val_if_fail(entry < dx->symbolic->n_entries, NULL);
  return &dx->entries[entry];
}

const DsTensor *ds_dynamic_executor_get_output(const DsDynamicExecutor *dx, guint i)
{
  g_return_val_if_fail(i < dx->graph->n_heads, NULL);
  const DsTensor *t = &dx->entries[ds_graph_entry_id(dx->graph, dx->graph->heads[i])];
  return t->memory == DS_MEMORY_HOST || dx->host_heads[i].data == NULL ? t : &dx->host_heads[i];
}

const DsGraphShapes *ds_dynamic_executor_get_shapes(const DsDynamicExecutor *dx)
{
  return dx->current;
}

DsGraph *ds_dynamic_executor_get_graph(const DsDynamicExecutor *dx)
{
  return dx->graph;
}

gboolean ds_dynamic_executor_get_symbol(const DsDynamicExecutor *dx, guint id, int64_t *value)
{
  if (id >= dx->n_symbols || !dx->sym_bound[id])
    return FALSE;
  *value = dx->values[id];
  return TRUE;
}

void ds_dynamic_executor_get_stats(const DsDynamicExecutor *dx, DsDynamicExecutorStats *stats)
{
  *stats = (DsDynamicExecutorStats){
      .n_regions = dx->n_regions,
      .n_dynamic_nodes = dx->n_dynamic,
      .n_imperative_nodes = dx->n_imperative,
      .n_replans = dx->n_replans,
  };
  ds_buffer_pool_get_stats(dx->pool, &stats->pool);
  stats->n_allocations = stats->pool.n_allocations;
  stats->memory_bytes = stats->pool.bytes_held;
  if (dx->device_pool != NULL) {
    DsBufferPoolStats device;
    ds_buffer_pool_get_stats(dx->device_pool, &device);
    stats->n_allocations += device.n_allocations;
    stats->memory_bytes += device.bytes_held;
  }
  for (guint r = 0; r < dx->n_regions; r++)
    stats->n_device_regions += dx->regions[r].backend != dx->backend;
  for (guint i = 0; i < dx->graph->n_nodes; i++)
    stats->n_device_regions +=
        dx->kernels[i].kernel != NULL && dx->kernels[i].backend != dx->backend;
  stats->n_copies = dx->n_copies;
  stats->copy_to_device_bytes = dx->copy_to_device_bytes;
  stats->copy_to_host_bytes = dx->copy_to_host_bytes;
  for (guint r = 0; r < dx->n_regions; r++) {
    if (dx->regions[r].exec == NULL)
      continue;
    stats->n_allocations += ds_executor_get_n_allocations(dx->regions[r].exec);
    stats->memory_bytes += ds_executor_get_reserved_bytes(dx->regions[r].exec);
  }
  /* Loops and branches: their nested executors and loop-carried buffers. */
  for (guint i = 0; i < dx->graph->n_nodes; i++) {
    if (dx->kernels[i].control == NULL)
      continue;
    guint64 n;
    gsize bytes;
    ds_control_flow_get_memory(dx->kernels[i].control, &n, &bytes);
    stats->n_allocations += n;
    stats->memory_bytes += bytes;
  }
}
