/* ds-session.c */
#include "ds-session.h"

#include <stdio.h>
#include <string.h>

#include "ds-backward.h"
#include "ds-constant.h"
#include "ds-error.h"
#include "ds-expr.h"
#include "ds-partition.h"
#include "ds-mxnet-json.h"
#include "ds-npy.h"
#include "ds-onnx-import.h"
#include "ds-params.h"
#include "ds-runner.h"

static gboolean shape_is_symbolic(const DsShape *shape);
static void grow_bindings(DsSession *session);
static gboolean bind_from_inputs(DsSession *session, GError **error);
static void invalidate(DsSession *session);

static void guard_copy_free(gpointer data)
{
  DsShapeGuard *guard = data;
  g_free(guard->message);
  g_free(guard);
}

struct _DsSession {
  char *model_path;
  DsGraph *graph;
  GHashTable *fed;      /* variable name -> DsNDArray* (owned) */
  GHashTable *declared; /* variable name -> DsShape* (owned) */
  DsGraphShapes *shapes;
  DsRunner *runner;            /* the bound executor, or NULL */
  DsExecutorChoice choice;
  DsPartition *file_partition; /* the regions a partitioned file was saved with, or NULL */
  const DsBackend *device;     /* the device regions are placed on, or NULL */
  DsPartition *placement;      /* the regions of the last binding on `device` */
  DsExprCtx *exprs;            /* created on first use */
  GArray *values;              /* int64 per symbol id */
  GArray *bound;               /* gboolean per symbol id */
  GPtrArray *bound_by;         /* what set each binding, for messages */
  GPtrArray *notes;            /* from the last symbolic inference */
  GPtrArray *guards;           /* DsShapeGuard* copies from the last symbolic inference */
  GHashTable *random;          /* names of variables filled at random by ds_session_resize */
  guint64 resize_ns;           /* shape evaluation + re-planning in the last ds_session_resize */
  DsGraphShapes *symbolic;     /* from the last symbolic inference */
  const DsBackend *backend;
  int n_threads;
  GHashTable *file_weights; /* names of variables the model file itself feeds (ONNX
                             * initializers and constants) */
  char *unsupported;        /* the nodes a run would refuse, listed in one line, or NULL */
  char *format;             /* the file format, in words */
  const char *format_id;    /* "mxnet-json" or "onnx" */
  guint n_model_outputs;    /* the graph's heads before the gradients */
  guint n_forward_nodes;    /* the graph's nodes before the gradient nodes */
  DsLoopPolicy policy;      /* what the backward pass was built with */
  GPtrArray *gradients;     /* after ds_session_add_backward: the variable of each gradient */
};

static DsSession *session_alloc(const char *model_path, DsGraph *graph)
{
  DsSession *session = g_new0(DsSession, 1);
  session->model_path = g_strdup(model_path);
  session->graph = graph;
  session->fed =
      g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)ds_ndarray_free);
  session->declared = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  session->values = g_array_new(FALSE, TRUE, sizeof(gint64));
  session->bound = g_array_new(FALSE, TRUE, sizeof(gboolean));
  session->bound_by = g_ptr_array_new_with_free_func(g_free);
  session->notes = g_ptr_array_new_with_free_func(g_free);
  session->guards = g_ptr_array_new_with_free_func(guard_copy_free);
  session->random = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  session->file_weights = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  return session;
}

static DsSession *session_new_mxnet(const char *model_path, GError **error)
{
  g_autoptr(DsGraph) file_graph = ds_mxnet_json_load(model_path, error);
  if (file_graph == NULL)
    return NULL;
  /* A partitioned file runs as one flat graph with the regions it was saved with. */
  DsPartition *partition = NULL;
  DsGraph *graph = ds_partition_flatten(file_graph, &partition, error);
  if (graph == NULL) {
    g_prefix_error(error, "%s: ", model_path);
    return NULL;
  }
  DsSession *session = session_alloc(model_path, graph);
  session->format_id = "mxnet-json";
  session->format = g_strdup_printf("MXNet %d.%d.%d JSON", graph->mxnet_version / 10000,
                                    graph->mxnet_version / 100 % 100, graph->mxnet_version % 100);
  if (partition != NULL && partition->n_regions > 0)
    session->file_partition = partition;
  else
    ds_partition_free(partition);
  return session;
}

/* An ONNX model: its initializers feed their weights, and its inputs' named dims are declared
 * as symbols. */
static DsSession *session_new_onnx(const char *model_path, GError **error)
{
  g_autoptr(DsOnnxModel) model = ds_onnx_model_load(model_path, error);
  if (model == NULL)
    return NULL;
  g_autofree char *dir = g_path_get_dirname(model_path);
  g_autoptr(DsOnnxImport) import = ds_onnx_import(model, dir, error);
  if (import == NULL)
    return NULL;
  g_autoptr(DsSession) session = session_alloc(model_path, ds_graph_ref(import->graph));
  session->unsupported = g_steal_pointer(&import->unsupported);
  session->format = g_steal_pointer(&import->format);
  session->format_id = "onnx";
  for (guint i = 0; i < import->weights->len; i++) {
    const char *name = import->weight_names->pdata[i];
    g_hash_table_add(session->file_weights, g_strdup(name));
    ds_ndarray_make_constant(import->weights->pdata[i]);
    g_hash_table_replace(session->fed, g_strdup(name), import->weights->pdata[i]);
    import->weights->pdata[i] = NULL;
  }
  for (guint i = 0; i < import->input_shapes->len; i++) {
    const DsOnnxInputShape *in = &g_array_index(import->input_shapes, DsOnnxInputShape, i);
    DsShape shape;
    if (!ds_session_parse_shape(session, in->shape, &shape, error) ||
        !ds_session_declare_shape(session, in->name, &shape, error)) {
      g_prefix_error(error, "%s: input '%s': ", model_path, in->name);
      return NULL;
    }
  }
  return g_steal_pointer(&session);
}

/* Whether the file starts like an ONNX ModelProto (the format is chosen by content). */
static gboolean looks_like_onnx(const char *path)
{
  guint8 head[16];
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return FALSE;
  gsize n = fread(head, 1, sizeof head, f);
  fclose(f);
  return ds_onnx_is_model_file(head, n);
}

gboolean ds_session_file_is_onnx(const char *model_path)
{
  return looks_like_onnx(model_path);
}

DsSession *ds_session_new(const char *model_path, GError **error)
{
  if (looks_like_onnx(model_path))
    return session_new_onnx(model_path, error);
  return session_new_mxnet(model_path, error);
}

const char *ds_session_get_unsupported(DsSession *session)
{
  return session->unsupported;
}

const DsShape *ds_session_get_declared_shape(DsSession *session, const char *name)
{
  return g_hash_table_lookup(session->declared, name);
}

const char *ds_session_get_format(DsSession *session)
{
  return session->format;
}

const char *ds_session_get_format_id(DsSession *session)
{
  return session->format_id;
}

void ds_session_free(DsSession *session)
{
  if (session == NULL)
    return;
  ds_runner_free(session->runner);
  ds_partition_free(session->file_partition);
  ds_partition_free(session->placement);
  ds_graph_shapes_free(session->shapes);
  ds_graph_shapes_free(session->symbolic);
  g_array_unref(session->values);
  g_array_unref(session->bound);
  g_ptr_array_unref(session->bound_by);
  g_ptr_array_unref(session->notes);
  g_ptr_array_unref(session->guards);
  g_hash_table_unref(session->random);
  if (session->exprs != NULL)
    ds_expr_ctx_free(session->exprs);
  g_hash_table_unref(session->fed);
  g_hash_table_unref(session->declared);
  ds_graph_unref(session->graph);
  g_hash_table_unref(session->file_weights);
  g_free(session->unsupported);
  g_free(session->format);
  g_free(session->model_path);
  if (session->gradients != NULL)
    g_ptr_array_unref(session->gradients);
  g_free(session);
}

DsGraph *ds_session_get_graph(DsSession *session)
{
  return session->graph;
}
gboolean ds_session_add_backward(DsSession *session, const gboolean *head_grad_given,
                                 DsLoopPolicy loop_policy, GError **error)
{
  g_return_val_if_fail(session->gradients == NULL, FALSE);
  const DsGraphShapes *shapes = ds_session_infer_partial(session, error);
  if (shapes == NULL)
    return FALSE;
  /* Where what is fed leaves dims unknown, the declared symbols may tell more (a gradient
   * needs to know which axes a broadcast stretched): the symbolic shapes, if they infer. */
  gboolean complete = TRUE;
  for (guint e = 0; complete && e < shapes->n_entries; e++)
    for (int d = 0; complete && d < shapes->shapes[e].ndim; d++)
      complete = ds_dim_is_known(shapes->shapes[e].dims[d]);
  if (!complete) {
    shapes = ds_session_infer_symbolic(session, NULL);
    if (shapes == NULL && (shapes = ds_session_infer_partial(session, error)) == NULL)
      return FALSE;
  }
  g_autofree DsHeadGrad *seeds = g_new(DsHeadGrad, MAX(session->graph->n_heads, 1u));
  for (guint h = 0; h < session->graph->n_heads; h++)
    seeds[h] = head_grad_given != NULL && head_grad_given[h] ? DS_HEAD_GRAD_GIVEN : DS_HEAD_GRAD_ONES;
  g_autoptr(DsBackward) backward =
      ds_backward_build(session->graph, shapes, seeds, loop_policy, error);
  if (backward == NULL)
    return FALSE;
  invalidate(session);
  /* The file's regions cover the forward nodes only; the executor partitions the whole. */
  g_clear_pointer(&session->file_partition, ds_partition_free);
  g_clear_pointer(&session->symbolic, ds_graph_shapes_free);
  ds_graph_unref(session->graph);
  session->graph = g_steal_pointer(&backward->graph);
  session->n_model_outputs = backward->n_forward_heads;
  session->n_forward_nodes = backward->n_forward_nodes;
  session->policy = loop_policy;
  session->gradients = g_steal_pointer(&backward->variables);
  return TRUE;
}

gboolean ds_session_get_backward(DsSession *session, guint *n_forward_nodes,
                                 DsLoopPolicy *policy)
{
  if (session->gradients == NULL)
    return FALSE;
  *n_forward_nodes = session->n_forward_nodes;
  *policy = session->policy;
  return TRUE;
}

guint ds_session_get_n_model_outputs(DsSession *session)
{
  return session->gradients != NULL ? session->n_model_outputs : session->graph->n_heads;
}

guint ds_session_get_n_gradients(DsSession *session)
{
  return session->gradients != NULL ? session->gradients->len : 0;
}

const char *ds_session_get_gradient_variable(DsSession *session, guint i)
{
  g_return_val_if_fail(i < ds_session_get_n_gradients(session), NULL);
  return g_ptr_array_index(session->gradients, i);
}

const char *ds_session_get_model_path(DsSession *session)
{
  return session->model_path;
}
DsExecutor *ds_session_get_executor(DsSession *session)
{
  return session->runner != NULL ? ds_runner_get_static(session->runner) : NULL;
}

gboolean ds_session_is_bound(DsSession *session)
{
  return session->runner != NULL;
}

static const DsNode *find_variable(DsSession *session, const char *name, GError **error)
{
  const DsNode *node = ds_graph_find_node(session->graph, name);
  if (node == NULL || !ds_node_is_variable(node)) {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "%s: the model has no input called '%s'",
                session->model_path, name);
    return NULL;
  }
  return node;
}

/* Takes `array` as the value of `node`. Weights become constants, so kernels may keep packed
 * forms of them across runs; the session never writes a fed array. */
static void store_fed(DsSession *session, const DsNode *node, DsNDArray *array)
{
  if (ds_session_classify_variable(session, node) == DS_VARIABLE_WEIGHT)
    ds_ndarray_make_constant(array);
  g_hash_table_replace(session->fed, g_strdup(node->name), array);
}

static void invalidate(DsSession *session)
{
  g_clear_pointer(&session->runner, ds_runner_free);
  g_clear_pointer(&session->shapes, ds_graph_shapes_free);
  g_clear_pointer(&session->placement, ds_partition_free);
}

void ds_session_set_device(DsSession *session, const DsBackend *device)
{
  invalidate(session);
  session->device = device;
}

const DsBackend *ds_session_get_device(DsSession *session)
{
  return session->device;
}

const DsPartition *ds_session_get_placement(DsSession *session)
{
  return session->placement;
}

/* The regions the dynamic executor runs: the placement on the device when there is one
 * (made from the symbolic shapes' dtypes), else the file's own regions, else none (the
 * executor then splits around dynamic ops itself). */
static const DsPartition *executor_partition(DsSession *session, GError **error)
{
  if (session->device == NULL)
    return session->file_partition;
  const char *why = session->device->unavailable != NULL ? session->device->unavailable() : NULL;
  if (why != NULL) {
    g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED, "the %s backend cannot run here: %s",
                session->device->name, why);
    return NULL;
  }
  g_clear_pointer(&session->placement, ds_partition_free);
  session->placement =
      ds_partition_label_placement(session->graph, session->symbolic, session->device, error);
  return session->placement;
}

gboolean ds_session_feed(DsSession *session, const char *name, DsNDArray *array, GError **error)
{
  const DsNode *node = find_variable(session, name, error);
  if (node == NULL) {
    ds_ndarray_free(array);
    return FALSE;
  }
  store_fed(session, node, array);
  invalidate(session);
  return TRUE;
}

gboolean ds_session_feed_npy(DsSession *session, const char *name, const char *path, GError **error)
{
  if (find_variable(session, name, error) == NULL)
    return FALSE;
  DsNDArray *array = ds_npy_load(path, error);
  return array != NULL && ds_session_feed(session, name, array, error);
}

gboolean ds_session_feed_params(DsSession *session, const char *path, GError **error)
{
  g_autoptr(DsParams) params = ds_params_load(path, error);
  if (params == NULL)
    return FALSE;
  for (guint i = 0; i < params->n_items; i++) {
    DsParam *p = &params->items[i];
    const DsNode *node = ds_graph_find_node(session->graph, p->name);
    if (node == NULL || !ds_node_is_variable(node)) {
      g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "%s: parameter '%s' matches no variable of %s",
                  path, p->name, session->model_path);
      return FALSE;
    }
  }
  /* What a .params file holds is parameters, whatever the reading ops call their inputs
   * (a converted ONNX MatMul's weight is _npi_matmul's second operand): constants all. */
  for (guint i = 0; i < params->n_items; i++) {
    DsParam *p = &params->items[i];
    ds_ndarray_make_constant(p->array);
    store_fed(session, ds_graph_find_node(session->graph, p->name), g_steal_pointer(&p->array));
  }
  invalidate(session);
  return TRUE;
}

void ds_session_unfeed(DsSession *session, const char *name)
{
  if (g_hash_table_remove(session->fed, name))
    invalidate(session);
  g_hash_table_remove(session->declared, name);
  g_hash_table_remove(session->random, name);
}

gboolean ds_session_declare_shape(DsSession *session, const char *name, const DsShape *shape,
                                  GError **error)
{
  if (find_variable(session, name, error) == NULL)
    return FALSE;
  g_hash_table_replace(session->declared, g_strdup(name), g_memdup2(shape, sizeof *shape));
  invalidate(session);
  return TRUE;
}

/* A declared shape for seeding: as declared for symbolic inference; evaluated with the
 * current bindings for concrete inference, unbound dims left unknown. */
static DsShape declared_shape(DsSession *session, const DsShape *declared, gboolean symbolic)
{
  DsShape out = *declared;
  if (symbolic || session->exprs == NULL)
    return out;
  grow_bindings(session);
  for (int i = 0; i < out.ndim; i++) {
    int64_t v;
    if (out.dims[i].expr == NULL)
      continue;
    out.dims[i] =
        ds_expr_eval(session->exprs, out.dims[i].expr, (const int64_t *)session->values->data,
                     (const gboolean *)session->bound->data, &v) &&
                v >= 0
            ? ds_dim(v)
            : DS_DIM_UNKNOWN;
  }
  return out;
}

/* Seeds `shapes` from declarations and fed arrays. */
/* A small integer weight of the file (a Reshape target, a Gather index, a Concat's constant
 * part) gives inference its values, so shapes computed from them stay expressions. Inputs fed
 * by the user do not: a run with other data may hold other values. */
static void seed_value(DsSession *session, DsGraphShapes *shapes, const DsNode *node,
                       const DsNDArray *array)
{
  const DsTensor *t = &array->view;
  if (!g_hash_table_contains(session->file_weights, node->name) || t->ndim > 1 ||
      (t->dtype != DS_DTYPE_INT64 && t->dtype != DS_DTYPE_INT32))
    return;
  gsize n = ds_tensor_numel(t);
  if (n > DS_SHAPE_VALUE_MAX)
    return;
  int64_t v[DS_SHAPE_VALUE_MAX];
  for (gsize i = 0; i < n; i++)
    v[i] = t->dtype == DS_DTYPE_INT64 ? ((const int64_t *)t->data)[i]
                                      : ((const int32_t *)t->data)[i];
  ds_graph_shapes_set_value(shapes, session->graph, node, v, n);
}

static gboolean seed_into(DsSession *session, DsGraphShapes *shapes, gboolean symbolic,
                          GError **error)
{
  GHashTableIter iter;
  gpointer key, value;
  g_hash_table_iter_init(&iter, session->declared);
  while (g_hash_table_iter_next(&iter, &key, &value)) {
    /* A declaration replaces the file's `__shape__` hint: it is how a user runs another
     * batch size or sequence length. */
    const DsNode *node = ds_graph_find_node(session->graph, key);
    DsShape shape = declared_shape(session, value, symbolic);
    shapes->shapes[session->graph->node_row_ptr[node->id]] = DS_SHAPE_UNKNOWN;
    if (!ds_graph_shapes_set_variable(shapes, session->graph, node, &shape, DS_DTYPE_UNKNOWN,
                                      error))
      return FALSE;
  }
  g_hash_table_iter_init(&iter, session->fed);
  while (g_hash_table_iter_next(&iter, &key, &value)) {
    const DsNode *node = ds_graph_find_node(session->graph, key);
    const DsNDArray *array = value;
    DsShape shape = ds_shape_from_concrete(array->view.shape, array->view.ndim);
    /* Symbolic inference keeps a declared symbolic shape (the file only binds its symbols);
     * otherwise the file's shape must match what is declared. */
    const DsShape *declared = g_hash_table_lookup(session->declared, key);
    if (symbolic && declared != NULL && shape_is_symbolic(declared)) {
      shapes->dtypes[session->graph->node_row_ptr[node->id]] = array->view.dtype;
      continue;
    }
    if (!ds_graph_shapes_set_variable(shapes, session->graph, node, &shape, array->view.dtype,
                                      error))
      return FALSE;
    seed_value(session, shapes, node, array);
  }
  return TRUE;
}

static DsGraphShapes *seed_shapes(DsSession *session, GError **error)
{
  g_autoptr(DsGraphShapes) shapes = ds_graph_shapes_new(session->graph, error);
  if (shapes == NULL || !seed_into(session, shapes, FALSE, error))
    return NULL;
  return g_steal_pointer(&shapes);
}

const DsGraphShapes *ds_session_infer_partial(DsSession *session, GError **error)
{
  g_autoptr(DsGraphShapes) shapes = seed_shapes(session, error);
  if (shapes == NULL)
    return NULL;
  DsShapeCtx *ctx = ds_shape_ctx_new();
  gboolean ok = ds_infer_graph(session->graph, shapes, ctx, FALSE, error);
  ds_shape_ctx_free(ctx);
  if (!ok)
    return NULL;
  invalidate(session);
  session->shapes = g_steal_pointer(&shapes);
  return session->shapes;
}

static gboolean check_all_fed(DsSession *session, GError **error)
{
  g_autoptr(GString) missing = g_string_new(NULL);
  guint n_missing = 0;
  for (guint i = 0; i < session->graph->n_nodes; i++) {
    const DsNode *node = session->graph->nodes[i];
    if (ds_node_is_variable(node) && !g_hash_table_contains(session->fed, node->name)) {
      if (n_missing < 8)
        g_string_append_printf(missing, "%s'%s'", n_missing ? ", " : "", node->name);
      n_missing++;
    }
  }
  if (n_missing == 0)
    return TRUE;
  if (n_missing > 8)
    g_string_append_printf(missing, " and %u more", n_missing - 8);
  g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
              "%s: no value for %u input%s: %s (feed them with --input NAME=FILE.npy or "
              "--params FILE, or use --random-inputs)",
              session->model_path, n_missing, n_missing == 1 ? "" : "s", missing->str);
  return FALSE;
}

static void fill_random(DsNDArray *array, GRand *rand)
{
  DsTensor *t = &array->view;
  int64_t n = ds_tensor_numel(t);
  for (int64_t i = 0; i < n; i++) {
    double u = g_rand_double(rand);
    switch (t->dtype) {
    case DS_DTYPE_FLOAT32:
      ((float *)t->data)[i] = (float)u;
      break;
    case DS_DTYPE_FLOAT64:
      ((double *)t->data)[i] = u;
      break;
    case DS_DTYPE_INT32:
      ((gint32 *)t->data)[i] = (gint32)(u * 10);
      break;
    case DS_DTYPE_INT64:
      ((gint64 *)t->data)[i] = (gint64)(u * 10);
      break;
    case DS_DTYPE_UINT8:
      ((guint8 *)t->data)[i] = (guint8)(u * 10);
      break;
    case DS_DTYPE_INT8:
      ((gint8 *)t->data)[i] = (gint8)(u * 10);
      break;
    case DS_DTYPE_BOOL:
      ((guint8 *)t->data)[i] = u < 0.5;
      break;
    case DS_DTYPE_INT16:
    case DS_DTYPE_UINT16:
    case DS_DTYPE_UINT32:
    case DS_DTYPE_UINT64: /* small integers, as for the other integer types */
      ds_tensor_store_f64(t->dtype, (char *)t->data + (gsize)i * ds_dtype_size(t->dtype),
                          (double)(gint64)(u * 10));
      break;
    case DS_DTYPE_BFLOAT16:
      ds_tensor_store_f64(t->dtype, (char *)t->data + (gsize)i * 2, u);
      break;
    case DS_DTYPE_FLOAT16: /* left zero */
    case DS_DTYPE_COUNT:
      break;
    }
  }
}

static gboolean fill_unfed(DsSession *session, DsGraphShapes *shapes, guint64 seed, GError **error)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed((guint32)(seed ^ (seed >> 32)));
  for (guint i = 0; i < session->graph->n_nodes; i++) {
    const DsNode *node = session->graph->nodes[i];
    if (!ds_node_is_variable(node) || g_hash_table_contains(session->fed, node->name))
      continue;
    guint e = session->graph->node_row_ptr[i];
    int64_t dims[DS_MAX_NDIM];
    if (!ds_shape_get_concrete(&shapes->shapes[e], dims)) {
      g_autofree char *s = ds_shape_to_string(&shapes->shapes[e]);
      g_set_error(error, DS_ERROR, DS_ERROR_SHAPE,
                  "input '%s': shape %s is not fully known, so it cannot be filled at random; "
                  "give it with --input-shape %s=(...)",
                  node->name, s, node->name);
      return FALSE;
    }
    DsNDArray *array =
        ds_ndarray_new(shapes->dtypes[e], shapes->shapes[e].ndim, dims, node->name, error);
    if (array == NULL)
      return FALSE;
    fill_random(array, rand);
    store_fed(session, node, array);
  }
  return TRUE;
}

/* The first node no static plan can hold (it decides its output shape from data, or it is a
 * loop or branch running its own subgraphs), or NULL. */
static const DsNode *first_dynamic_node(const DsGraph *graph)
{
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    if (node->op != NULL &&
        (node->op->traits & (DS_OP_TRAIT_DYNAMIC_SHAPE | DS_OP_TRAIT_CONTROL_FLOW)))
      return node;
  }
  return NULL;
}

gboolean ds_session_uses_dynamic_executor(DsSession *session)
{
  switch (session->choice) {
  case DS_EXECUTOR_STATIC:
    return FALSE;
  case DS_EXECUTOR_DYNAMIC:
    return TRUE;
  default:
    return first_dynamic_node(session->graph) != NULL || session->file_partition != NULL ||
           session->device != NULL;
  }
}

void ds_session_set_executor_choice(DsSession *session, DsExecutorChoice choice)
{
  invalidate(session);
  session->choice = choice;
}

const DsPartition *ds_session_get_file_partition(DsSession *session)
{
  return session->file_partition;
}

/* Points the runner at every fed array. */
static gboolean bind_fed(DsSession *session, DsRunner *runner, GError **error)
{
  GHashTableIter iter;
  gpointer key, value;
  g_hash_table_iter_init(&iter, session->fed);
  while (g_hash_table_iter_next(&iter, &key, &value)) {
    const DsNode *node = ds_graph_find_node(session->graph, key);
    if (!ds_runner_bind(runner, node, &((DsNDArray *)value)->view, error))
      return FALSE;
  }
  return TRUE;
}

/* The dynamic path: shapes symbolically, with unbacked symbols where data decides; the
 * executor binds them as it runs. */
static gboolean prepare_dynamic(DsSession *session, gboolean random_inputs, guint64 seed,
                                const DsBackend *backend, int n_threads, GError **error)
{
  /* Unfed variables are filled from what concrete inference learns of their shapes. */
  g_autoptr(DsGraphShapes) shapes = seed_shapes(session, error);
  if (shapes == NULL)
    return FALSE;
  DsShapeCtx *ctx = ds_shape_ctx_new();
  gboolean ok = ds_infer_graph(session->graph, shapes, ctx, FALSE, error) &&
                (!random_inputs || fill_unfed(session, shapes, seed, error));
  ds_shape_ctx_free(ctx);
  if (!ok || ds_session_infer_symbolic(session, error) == NULL)
    return FALSE;
  /* No bindings carried over: every run learns its symbols from the arrays it is given, so
   * inputs of another size can be bound to the same executor. */
  const DsPartition *partition = executor_partition(session, error);
  if (partition == NULL && session->device != NULL)
    return FALSE;
  DsBindSpec spec = {.graph = session->graph,
                     .shapes = session->symbolic,
                     .exprs = session->exprs,
                     .partition = partition,
                     .guards = session->guards,
                     .backend = backend,
                     .n_threads = n_threads};
  g_autoptr(DsRunner) runner = ds_runner_new(DS_RUNNER_DYNAMIC, &spec, error);
  if (runner == NULL || !bind_fed(session, runner, error))
    return FALSE;
  session->shapes = g_steal_pointer(&shapes);
  session->runner = g_steal_pointer(&runner);
  return TRUE;
}

/* A model with nodes the engine cannot run is refused before anything runs, naming them all. */
static gboolean check_runnable(DsSession *session, GError **error)
{
  if (session->unsupported == NULL)
    return TRUE;
  g_set_error_literal(error, DS_ERROR, DS_ERROR_UNSUPPORTED, session->unsupported);
  return FALSE;
}

gboolean ds_session_prepare(DsSession *session, gboolean random_inputs, guint64 seed,
                            const DsBackend *backend, int n_threads, GError **error)
{
  invalidate(session);
  if (!check_runnable(session, error))
    return FALSE;
  if (!random_inputs && !check_all_fed(session, error))
    return FALSE;
  if (session->exprs != NULL && !bind_from_inputs(session, error))
    return FALSE;
  if (ds_session_uses_dynamic_executor(session))
    return prepare_dynamic(session, random_inputs, seed, backend, n_threads, error);
  const DsNode *dynamic = first_dynamic_node(session->graph);
  if (dynamic != NULL) {
    g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
                "node '%s' (%s) %s: the static executor cannot plan it (use --executor dynamic "
                "or auto)",
                dynamic->name, dynamic->op_name,
                (dynamic->op->traits & DS_OP_TRAIT_CONTROL_FLOW) ? "runs its own subgraphs"
                                                                 : "decides its output shape "
                                                                   "from data");
    return FALSE;
  }
  g_autoptr(DsGraphShapes) shapes = seed_shapes(session, error);
  if (shapes == NULL)
    return FALSE;
  DsShapeCtx *ctx = ds_shape_ctx_new();
  gboolean ok = ds_infer_graph(session->graph, shapes, ctx, !random_inputs, error);
  if (ok && random_inputs) {
    ok = fill_unfed(session, shapes, seed, error) &&
         ds_infer_graph(session->graph, shapes, ctx, TRUE, error);
  }
  ds_shape_ctx_free(ctx);
  if (!ok)
    return FALSE;

  DsBindSpec spec = {
      .graph = session->graph, .shapes = shapes, .backend = backend, .n_threads = n_threads};
  g_autoptr(DsRunner) runner = ds_runner_new(DS_RUNNER_STATIC, &spec, error);
  if (runner == NULL || !bind_fed(session, runner, error))
    return FALSE;
  session->shapes = g_steal_pointer(&shapes);
  session->runner = g_steal_pointer(&runner);
  return TRUE;
}

/* ---- symbolic shapes ---- */

DsExprCtx *ds_session_get_exprs(DsSession *session)
{
  if (session->exprs == NULL)
    session->exprs = ds_expr_ctx_new();
  return session->exprs;
}

static gboolean shape_is_symbolic(const DsShape *shape)
{
  for (int i = 0; i < shape->ndim; i++)
    if (shape->dims[i].expr != NULL)
      return TRUE;
  return FALSE;
}

gboolean ds_session_parse_shape(DsSession *session, const char *text, DsShape *shape,
                                GError **error)
{
  /* Split at top-level commas: "(s0, max(s1, 2), 3)" has three dims. */
  const char *s = text;
  while (g_ascii_isspace(*s))
    s++;
  gboolean paren = *s == '(' || *s == '[';
  g_autofree char *body = g_strdup(paren ? s + 1 : s);
  g_strchomp(body);
  gsize len = strlen(body);
  if (paren) {
    if (len == 0 || (body[len - 1] != ')' && body[len - 1] != ']')) {
      g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "shape '%s': missing closing parenthesis", text);
      return FALSE;
    }
    body[--len] = '\0';
  }
  DsShape out = {.ndim = 0};
  int depth = 0;
  char *start = body;
  for (char *p = body;; p++) {
    if (*p == '(')
      depth++;
    else if (*p == ')')
      depth--;
    if ((*p == ',' && depth == 0) || *p == '\0') {
      char saved = *p;
      *p = '\0';
      g_strstrip(start);
      if (*start != '\0') {
        if (out.ndim == DS_MAX_NDIM) {
          g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "shape '%s': more than %d dims", text,
                      DS_MAX_NDIM);
          return FALSE;
        }
        GError *local = NULL;
        const DsExpr *e = ds_expr_parse(ds_session_get_exprs(session), start, &local);
        int64_t v = 0;
        if (e == NULL || (ds_expr_get_const(e, &v) && v < 0)) {
          g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "shape '%s': dim '%s' %s", text, start,
                      local != NULL ? local->message : "is negative");
          g_clear_error(&local);
          return FALSE;
        }
        out.dims[out.ndim++] = ds_dim_from_expr(e);
      } else if (saved == ',') {
        g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "shape '%s': empty dim", text);
        return FALSE;
      }
      if (saved == '\0')
        break;
      start = p + 1;
    }
  }
  *shape = out;
  return TRUE;
}

gboolean ds_session_assume(DsSession *session, const char *text, GError **error)
{
  invalidate(session);
  return ds_expr_ctx_assume(ds_session_get_exprs(session), text, error);
}

static void grow_bindings(DsSession *session)
{
  guint n = ds_expr_ctx_get_n_symbols(ds_session_get_exprs(session));
  if (session->values->len < n) {
    g_array_set_size(session->values, n);
    g_array_set_size(session->bound, n);
    while (session->bound_by->len < n)
      g_ptr_array_add(session->bound_by, NULL);
  }
}

static gboolean bind_id(DsSession *session, const DsExpr *symbol, int64_t value, const char *source,
                        GError **error)
{
  int id = ds_expr_get_symbol_id(symbol);
  grow_bindings(session);
  const char *name = ds_expr_get_symbol_name(symbol);
  int64_t lo, hi;
  /* An empty dim (a KV cache's prefill) is allowed where no fact rules it out. */
  if (value == 0)
    ds_expr_ctx_allow_empty(session->exprs, symbol);
  ds_expr_ctx_get_range(session->exprs, symbol, &lo, &hi);
  if (value < lo || value > hi) {
    g_autofree char *upper =
        hi == DS_EXPR_INF ? g_strdup("inf)") : g_strdup_printf("%" G_GINT64_FORMAT "]", hi);
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                "%s: %s = %" G_GINT64_FORMAT " is outside its range [%" G_GINT64_FORMAT ", %s",
                source, name, value, lo, upper);
    return FALSE;
  }
  if (g_array_index(session->bound, gboolean, id) &&
      g_array_index(session->values, gint64, id) != value) {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                "%s: %s = %" G_GINT64_FORMAT ", but %s already gave %s = %" G_GINT64_FORMAT, source,
                name, value, (char *)g_ptr_array_index(session->bound_by, id), name,
                g_array_index(session->values, gint64, id));
    return FALSE;
  }
  g_array_index(session->values, gint64, id) = value;
  g_array_index(session->bound, gboolean, id) = TRUE;
  g_free(session->bound_by->pdata[id]);
  session->bound_by->pdata[id] = g_strdup(source);
  return TRUE;
}

gboolean ds_session_bind_symbol(DsSession *session, const char *name, int64_t value, GError **error)
{
  g_autofree char *source = g_strdup_printf("--bind %s=%" G_GINT64_FORMAT, name, value);
  const DsExpr *symbol = ds_expr_symbol(ds_session_get_exprs(session), name);
  /* A compiled session keeps its executor: ds_session_resize() re-plans it for the new
   * bindings. Dropping it here would bind a new executor for every size. */
  if (session->backend == NULL)
    invalidate(session);
  return bind_id(session, symbol, value, source, error);
}

/* Learns symbol values from fed arrays whose declared shapes are symbolic, then checks the
 * dims that are expressions of them. */
static gboolean bind_from_inputs(DsSession *session, GError **error)
{
  for (int pass = 0; pass < 2; pass++) {
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init(&iter, session->declared);
    while (g_hash_table_iter_next(&iter, &key, &value)) {
      const DsShape *declared = value;
      const DsNDArray *array = g_hash_table_lookup(session->fed, key);
      /* Arrays this session filled at random follow the bindings, never set them. */
      if (array == NULL || !shape_is_symbolic(declared) ||
          g_hash_table_contains(session->random, key))
        continue;
      if (array->view.ndim != declared->ndim) {
        g_autofree char *d = ds_shape_to_string(declared);
        g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                    "input '%s': the file has %d dims, the declared shape %s has %d", (char *)key,
                    array->view.ndim, d, declared->ndim);
        return FALSE;
      }
      for (int i = 0; i < declared->ndim; i++) {
        DsDim d = declared->dims[i];
        int64_t actual = array->view.shape[i];
        g_autofree char *source = g_strdup_printf("input '%s' dim %d", (char *)key, i);
        const DsExpr *e = d.expr != NULL ? ds_expr_resolve(session->exprs, d.expr) : NULL;
        if (e == NULL || ds_expr_get_kind(e) != DS_EXPR_SYMBOL) {
          /* A constant or a compound expression: check it once its symbols are known. */
          if (pass == 0)
            continue;
          int64_t want = d.value;
          grow_bindings(session);
          if (e != NULL && !ds_expr_eval(session->exprs, e, (const int64_t *)session->values->data,
                                         (const gboolean *)session->bound->data, &want))
            continue; /* still unbound: inference will report it */
          if (want != actual) {
            g_autofree char *text = ds_dim_to_string(d);
            g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                        "input '%s': dim %d is %" G_GINT64_FORMAT ", but the declared %s = "
                        "%" G_GINT64_FORMAT,
                        (char *)key, i, actual, text, want);
            return FALSE;
          }
        } else if (pass == 0 && !bind_id(session, e, actual, source, error)) {
          return FALSE;
        }
      }
    }
  }
  return TRUE;
}

DsGraphShapes *ds_session_evaluate(DsSession *session, const DsGraphShapes *symbolic,
                                   gboolean partial, GError **error)
{
  grow_bindings(session);
  for (guint i = 0; i < session->guards->len; i++) {
    const DsShapeGuard *g = session->guards->pdata[i];
    int64_t v;
    if (ds_expr_eval(session->exprs, g->expr, (const int64_t *)session->values->data,
                     (const gboolean *)session->bound->data, &v) &&
        v < g->min) {
      g_autofree char *text = ds_expr_to_string(g->expr);
      g_set_error(error, DS_ERROR, DS_ERROR_SHAPE,
                  "%s (%s = %" G_GINT64_FORMAT " < %" G_GINT64_FORMAT " for these bindings)",
                  g->message, text, v, g->min);
      return NULL;
    }
  }
  return ds_graph_shapes_evaluate(symbolic, session->graph, ds_session_get_exprs(session),
                                  (const int64_t *)session->values->data,
                                  (const gboolean *)session->bound->data, partial, error);
}

void ds_session_unbind_symbol(DsSession *session, const char *name)
{
  const DsExpr *symbol = ds_expr_symbol(ds_session_get_exprs(session), name);
  grow_bindings(session);
  g_array_index(session->bound, gboolean, ds_expr_get_symbol_id(symbol)) = FALSE;
}

const DsGraphShapes *ds_session_infer_symbolic(DsSession *session, GError **error)
{
  DsExprCtx *exprs = ds_session_get_exprs(session);
  g_autoptr(DsGraphShapes) shapes = ds_graph_shapes_new(session->graph, error);
  if (shapes == NULL || !bind_from_inputs(session, error) ||
      !seed_into(session, shapes, TRUE, error))
    return NULL;
  DsShapeCtx *ctx = ds_shape_ctx_new_symbolic(exprs);
  /* Dims nothing determined (MXNet's legacy 0s, e.g. an RNN's batch) become symbols after a
   * first pass; data-dependent sizes wait for them, so that `u0 in [0, s0]` can name them. */
  ds_shape_ctx_defer_unbacked(ctx, TRUE);
  gboolean ok = ds_infer_graph(session->graph, shapes, ctx, FALSE, error);
  if (ok)
    ds_graph_shapes_symbolize_unknown(shapes, session->graph, exprs);
  ds_shape_ctx_defer_unbacked(ctx, FALSE);
  ok = ok && ds_infer_graph(session->graph, shapes, ctx, FALSE, error);
  g_ptr_array_set_size(session->notes, 0);
  GPtrArray *notes = ds_shape_ctx_get_notes(ctx);
  for (guint i = 0; i < notes->len; i++)
    g_ptr_array_add(session->notes, g_strdup(notes->pdata[i]));
  g_ptr_array_set_size(session->guards, 0);
  GPtrArray *guards = ds_shape_ctx_get_guards(ctx);
  for (guint i = 0; i < guards->len; i++) {
    const DsShapeGuard *g = guards->pdata[i];
    DsShapeGuard *copy = g_new0(DsShapeGuard, 1);
    copy->expr = ds_expr_resolve(exprs, g->expr);
    copy->min = g->min;
    copy->message = g_strdup(g->message);
    g_ptr_array_add(session->guards, copy);
  }
  ds_shape_ctx_free(ctx);
  if (!ok)
    return NULL;
  ds_graph_shapes_resolve(shapes, exprs);
  ds_graph_shapes_free(session->symbolic);
  session->symbolic = g_steal_pointer(&shapes);
  return session->symbolic;
}

GPtrArray *ds_session_get_notes(DsSession *session)
{
  return session->notes;
}
GPtrArray *ds_session_get_guards(DsSession *session)
{
  return session->guards;
}
guint64 ds_session_get_resize_ns(DsSession *session)
{
  return session->resize_ns;
}

gboolean ds_session_compile(DsSession *session, const DsBackend *backend, int n_threads,
                            GError **error)
{
  invalidate(session);
  if (!check_runnable(session, error) || ds_session_infer_symbolic(session, error) == NULL)
    return FALSE;
  /* Every dim must be an expression the bindings can evaluate: unknown dims cannot be. */
  DsGraph *graph = session->graph;
  for (guint n = 0; n < graph->n_nodes; n++) {
    const DsNode *node = graph->nodes[n];
    if (!ds_node_is_variable(node) && node->op == NULL) {
      g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED, "node '%s': op '%s' is not supported",
                  node->name, node->op_name);
      return FALSE;
    }
    for (guint k = 0; k < ds_node_n_op_outputs(node); k++) {
      const DsShape *s = &session->symbolic->shapes[graph->node_row_ptr[n] + k];
      if (!ds_shape_is_known(s)) {
        g_autofree char *text = ds_shape_to_string(s);
        g_set_error(error, DS_ERROR, DS_ERROR_SHAPE,
                    "node '%s' (%s): output %u has shape %s, which the declared symbols do not "
                    "determine (declare the inputs with --input-shape)",
                    node->name, node->op_name, k, text);
        return FALSE;
      }
    }
  }
  session->backend = backend;
  session->n_threads = n_threads;
  if (ds_session_uses_dynamic_executor(session)) {
    /* The dynamic executor is bound once; each size only binds new inputs. */
    const DsPartition *partition = executor_partition(session, error);
    if (partition == NULL && session->device != NULL)
      return FALSE;
    DsBindSpec spec = {.graph = graph,
                       .shapes = session->symbolic,
                       .exprs = session->exprs,
                       .partition = partition,
                       .guards = session->guards,
                       .backend = backend,
                       .n_threads = n_threads};
    session->runner = ds_runner_new(DS_RUNNER_DYNAMIC, &spec, error);
    if (session->runner == NULL)
      return FALSE;
  }
  return TRUE;
}

gboolean ds_session_resize(DsSession *session, gboolean random_inputs, guint64 seed, GError **error)
{
  g_return_val_if_fail(session->symbolic != NULL, FALSE);
  if (!bind_from_inputs(session, error))
    return FALSE;
  gint64 start_us = g_get_monotonic_time();
  /* A runner that learns data-dependent sizes as it runs gets those left symbolic. */
  gboolean learns = session->runner != NULL && ds_runner_learns_sizes(session->runner);
  g_autoptr(DsGraphShapes) shapes = ds_session_evaluate(session, session->symbolic, learns, error);
  if (shapes == NULL)
    return FALSE;
  gint64 evaluated_us = g_get_monotonic_time();
  /* Refill random variables whose shape changed; fed ones must match. */
  DsGraph *graph = session->graph;
  for (guint n = 0; n < graph->n_nodes; n++) {
    const DsNode *node = graph->nodes[n];
    if (!ds_node_is_variable(node))
      continue;
    const DsShape *want = &shapes->shapes[graph->node_row_ptr[n]];
    DsNDArray *array = g_hash_table_lookup(session->fed, node->name);
    int64_t dims[DS_MAX_NDIM];
    gboolean concrete = ds_shape_get_concrete(want, dims);
    gboolean same = array != NULL && concrete && array->view.ndim == want->ndim &&
                    memcmp(array->view.shape, dims, sizeof(int64_t) * want->ndim) == 0;
    if (same)
      continue;
    if (array != NULL && !g_hash_table_contains(session->random, node->name)) {
      g_autofree char *a = ds_shape_to_string(want);
      g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                  "input '%s': the fed array does not have the shape %s these bindings give",
                  node->name, a);
      return FALSE;
    }
    if (!random_inputs) {
      g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "input '%s' has no value", node->name);
      return FALSE;
    }
    if (!concrete) {
      g_set_error(error, DS_ERROR, DS_ERROR_SHAPE, "input '%s': shape is not known", node->name);
      return FALSE;
    }
    DsNDArray *fresh =
        ds_ndarray_new(shapes->dtypes[graph->node_row_ptr[n]], want->ndim, dims, node->name, error);
    if (fresh == NULL)
      return FALSE;
    g_autoptr(GRand) rand = g_rand_new_with_seed((guint32)(seed + n));
    fill_random(fresh, rand);
    store_fed(session, node, fresh);
    g_hash_table_add(session->random, g_strdup(node->name));
  }

  /* Only shape work counts in the figure: evaluation and re-planning, not input filling. */
  gint64 plan_start_us = g_get_monotonic_time();
  if (session->runner == NULL) {
    /* Compiled for the static executor: it is bound at the first sizes. */
    DsBindSpec spec = {.graph = graph,
                       .shapes = shapes,
                       .backend = session->backend,
                       .n_threads = session->n_threads};
    session->runner = ds_runner_new(DS_RUNNER_STATIC, &spec, error);
    if (session->runner == NULL)
      return FALSE;
  } else if (!ds_runner_resize(session->runner, shapes, error)) {
    return FALSE;
  }
  session->resize_ns =
      (guint64)((evaluated_us - start_us) + (g_get_monotonic_time() - plan_start_us)) * 1000u;
  if (!bind_fed(session, session->runner, error))
    return FALSE;
  ds_graph_shapes_free(session->shapes);
  session->shapes = g_steal_pointer(&shapes);
  return TRUE;
}

DsVariableKind ds_session_classify_variable(DsSession *session, const DsNode *variable)
{
  static const char *const weight_names[] = {"weight",     "bias",        "gamma",      "beta",
                                             "parameters", "moving_mean", "moving_var", NULL};
  DsGraph *graph = session->graph;
  if (g_hash_table_contains(session->file_weights, variable->name))
    return DS_VARIABLE_WEIGHT;
  for (guint i = variable->id + 1; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    for (guint k = 0; k < node->n_inputs; k++) {
      if (node->inputs[k].node_id != variable->id || node->op == NULL)
        continue;
      if (ds_op_input_is_aux(node->op, k))
        return DS_VARIABLE_AUX;
      char buf[16];
      const char *arg = ds_op_input_name(node->op, node->n_inputs, k, buf);
      if (g_strv_contains(weight_names, arg))
        return DS_VARIABLE_WEIGHT;
    }
  }
  return DS_VARIABLE_DATA;
}

/* Whether an op reads `variable` as an auxiliary state (BatchNorm's moving statistics). */
static gboolean feeds_aux_input(const DsGraph *graph, const DsNode *variable)
{
  for (guint i = variable->id + 1; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    for (guint k = 0; k < node->n_inputs && node->op != NULL; k++)
      if (node->inputs[k].node_id == variable->id && ds_op_input_is_aux(node->op, k))
        return TRUE;
  }
  return FALSE;
}

gboolean ds_session_save_file_weights(DsSession *session, const char *path, guint *n_saved,
                                      GError **error)
{
  const DsGraph *graph = session->graph;
  g_autoptr(GArray) items = g_array_new(FALSE, FALSE, sizeof(DsParam));
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    if (!ds_node_is_variable(node) || !g_hash_table_contains(session->file_weights, node->name))
      continue;
    DsParam item = {.name = node->name,
                    .is_aux = feeds_aux_input(graph, node),
                    .array = g_hash_table_lookup(session->fed, node->name)};
    g_array_append_val(items, item);
  }
  *n_saved = items->len;
  return ds_params_save(path, (const DsParam *)items->data, items->len, error);
}

const char *ds_variable_kind_name(DsVariableKind kind)
{
  switch (kind) {
  case DS_VARIABLE_DATA:
    return "data";
  case DS_VARIABLE_WEIGHT:
    return "weight";
  case DS_VARIABLE_AUX:
    return "aux";
  }
  return "data";
}

/* ---- running, whichever executor was chosen ---- */

DsDynamicExecutor *ds_session_get_dynamic_executor(DsSession *session)
{
  return session->runner != NULL ? ds_runner_get_dynamic(session->runner) : NULL;
}

gsize ds_session_get_packed_weight_bytes(DsSession *session, guint *n_weights)
{
  gsize bytes = 0;
  guint n = 0;
  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init(&iter, session->fed);
  while (g_hash_table_iter_next(&iter, NULL, &value)) {
    DsConstant *constant = ((DsNDArray *)value)->view.constant;
    gsize held = constant != NULL ? ds_constant_get_derived_bytes(constant) : 0;
    bytes += held;
    n += held > 0;
  }
  if (n_weights != NULL)
    *n_weights = n;
  return bytes;
}

const char *ds_session_get_executor_name(DsSession *session)
{
  DsRunnerStats stats;
  if (session->runner == NULL)
    return "static";
  ds_runner_get_stats(session->runner, &stats);
  return stats.kind;
}

gboolean ds_session_run(DsSession *session, GError **error)
{
  g_return_val_if_fail(session->runner != NULL, FALSE);
  return ds_runner_run(session->runner, error);
}

const DsTensor *ds_session_get_output(DsSession *session, guint i)
{
  g_return_val_if_fail(session->runner != NULL, NULL);
  return ds_runner_get_output(session->runner, i);
}

const DsGraphShapes *ds_session_get_symbolic_shapes(DsSession *session)
{
  return session->symbolic;
}

const DsTensor *ds_session_get_entry(DsSession *session, guint entry)
{
  g_return_val_if_fail(session->runner != NULL, NULL);
  return ds_runner_get_entry(session->runner, entry);
}

gboolean ds_session_lookup_symbol(DsSession *session, const char *name, int64_t *value)
{
  if (session->exprs == NULL)
    return FALSE;
  for (guint id = 0; id < ds_expr_ctx_get_n_symbols(session->exprs); id++) {
    if (strcmp(ds_expr_get_symbol_name(ds_expr_ctx_get_symbol(session->exprs, id)), name) != 0)
      continue;
    if (session->runner != NULL && ds_runner_get_symbol(session->runner, id, value))
      return TRUE;
    grow_bindings(session);
    if (!g_array_index(session->bound, gboolean, id))
      return FALSE;
    *value = g_array_index(session->values, gint64, id);
    return TRUE;
  }
  return FALSE;
}

const DsGraphShapes *ds_session_get_run_shapes(DsSession *session)
{
  return session->runner != NULL ? ds_runner_get_shapes(session->runner) : NULL;
}

void ds_session_set_hooks(DsSession *session, const DsExecutorHooks *hooks, gpointer data)
{
  if (session->runner != NULL)
    ds_runner_set_hooks(session->runner, hooks, data);
}

void ds_session_set_deadline(DsSession *session, gint64 deadline_us)
{
  if (session->runner != NULL)
    ds_runner_set_deadline(session->runner, deadline_us);
}

gboolean ds_session_get_stats(DsSession *session, DsRunnerStats *stats)
{
  if (session->runner == NULL)
    return FALSE;
  ds_runner_get_stats(session->runner, stats);
  return TRUE;
}
