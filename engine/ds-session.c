/* ds-session.c */
#include "ds-session.h"

#include <string.h>

#include "ds-error.h"
#include "ds-mxnet-json.h"
#include "ds-npy.h"
#include "ds-params.h"

struct _DsSession {
  char *model_path;
  DsGraph *graph;
  GHashTable *fed;      /* variable name -> DsNDArray* (owned) */
  GHashTable *declared; /* variable name -> DsShape* (owned) */
  DsGraphShapes *shapes;
  DsExecutor *exec;
};

DsSession *ds_session_new(const char *model_path, GError **error)
{
  DsGraph *graph = ds_mxnet_json_load(model_path, error);
  if (graph == NULL)
    return NULL;
  DsSession *session = g_new0(DsSession, 1);
  session->model_path = g_strdup(model_path);
  session->graph = graph;
  session->fed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                       (GDestroyNotify)ds_ndarray_free);
  session->declared = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  return session;
}

void ds_session_free(DsSession *session)
{
  if (session == NULL)
    return;
  ds_executor_free(session->exec);
  ds_graph_shapes_free(session->shapes);
  g_hash_table_unref(session->fed);
  g_hash_table_unref(session->declared);
  ds_graph_unref(session->graph);
  g_free(session->model_path);
  g_free(session);
}

DsGraph *ds_session_get_graph(DsSession *session) { return session->graph; }
const char *ds_session_get_model_path(DsSession *session) { return session->model_path; }
DsExecutor *ds_session_get_executor(DsSession *session) { return session->exec; }

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

static void invalidate(DsSession *session)
{
  g_clear_pointer(&session->exec, ds_executor_free);
  g_clear_pointer(&session->shapes, ds_graph_shapes_free);
}

gboolean ds_session_feed(DsSession *session, const char *name, DsNDArray *array,
                         GError **error)
{
  if (find_variable(session, name, error) == NULL) {
    ds_ndarray_free(array);
    return FALSE;
  }
  g_hash_table_replace(session->fed, g_strdup(name), array);
  invalidate(session);
  return TRUE;
}

gboolean ds_session_feed_npy(DsSession *session, const char *name, const char *path,
                             GError **error)
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
      g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                  "%s: parameter '%s' matches no variable of %s", path, p->name,
                  session->model_path);
      return FALSE;
    }
  }
  for (guint i = 0; i < params->n_items; i++) {
    DsParam *p = &params->items[i];
    g_hash_table_replace(session->fed, g_strdup(p->name), g_steal_pointer(&p->array));
  }
  invalidate(session);
  return TRUE;
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

/* Seeds shapes from declarations and fed arrays. */
static DsGraphShapes *seed_shapes(DsSession *session, GError **error)
{
  g_autoptr(DsGraphShapes) shapes = ds_graph_shapes_new(session->graph, error);
  if (shapes == NULL)
    return NULL;
  GHashTableIter iter;
  gpointer key, value;
  g_hash_table_iter_init(&iter, session->declared);
  while (g_hash_table_iter_next(&iter, &key, &value)) {
    /* A declaration replaces the file's `__shape__` hint: it is how a user runs another
     * batch size or sequence length. */
    const DsNode *node = ds_graph_find_node(session->graph, key);
    shapes->shapes[session->graph->node_row_ptr[node->id]] = DS_SHAPE_UNKNOWN;
    if (!ds_graph_shapes_set_variable(shapes, session->graph, node, value, DS_DTYPE_UNKNOWN,
                                      error))
      return NULL;
  }
  g_hash_table_iter_init(&iter, session->fed);
  while (g_hash_table_iter_next(&iter, &key, &value)) {
    const DsNode *node = ds_graph_find_node(session->graph, key);
    const DsNDArray *array = value;
    DsShape shape = ds_shape_from_concrete(array->view.shape, array->view.ndim);
    if (!ds_graph_shapes_set_variable(shapes, session->graph, node, &shape, array->view.dtype,
                                      error))
      return NULL;
  }
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
    case DS_DTYPE_FLOAT32: ((float *)t->data)[i] = (float)u; break;
    case DS_DTYPE_FLOAT64: ((double *)t->data)[i] = u; break;
    case DS_DTYPE_INT32: ((gint32 *)t->data)[i] = (gint32)(u * 10); break;
    case DS_DTYPE_INT64: ((gint64 *)t->data)[i] = (gint64)(u * 10); break;
    case DS_DTYPE_UINT8: ((guint8 *)t->data)[i] = (guint8)(u * 10); break;
    case DS_DTYPE_INT8: ((gint8 *)t->data)[i] = (gint8)(u * 10); break;
    case DS_DTYPE_BOOL: ((guint8 *)t->data)[i] = u < 0.5; break;
    default: break; /* float16: left zero */
    }
  }
}

static gboolean fill_unfed(DsSession *session, DsGraphShapes *shapes, guint64 seed,
                           GError **error)
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
    g_hash_table_replace(session->fed, g_strdup(node->name), array);
  }
  return TRUE;
}

gboolean ds_session_prepare(DsSession *session, gboolean random_inputs, guint64 seed,
                            const DsBackend *backend, int n_threads, GError **error)
{
  invalidate(session);
  if (!random_inputs && !check_all_fed(session, error))
    return FALSE;
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

  g_autoptr(DsExecutor) exec =
    ds_executor_new(session->graph, shapes, backend, n_threads, error);
  if (exec == NULL)
    return FALSE;
  GHashTableIter iter;
  gpointer key, value;
  g_hash_table_iter_init(&iter, session->fed);
  while (g_hash_table_iter_next(&iter, &key, &value)) {
    const DsNode *node = ds_graph_find_node(session->graph, key);
    if (!ds_executor_bind(exec, node, &((DsNDArray *)value)->view, error))
      return FALSE;
  }
  session->shapes = g_steal_pointer(&shapes);
  session->exec = g_steal_pointer(&exec);
  return TRUE;
}

DsVariableKind ds_session_classify_variable(DsSession *session, const DsNode *variable)
{
  static const char *const weight_names[] = {"weight", "bias", "gamma", "beta", "parameters",
                                             "moving_mean", "moving_var", NULL};
  DsGraph *graph = session->graph;
  for (guint i = variable->id + 1; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    for (guint k = 0; k < node->n_inputs; k++) {
      if (node->inputs[k].node_id != variable->id || node->op == NULL)
        continue;
      if (node->op->aux_input_mask & (1u << k))
        return DS_VARIABLE_AUX;
      char buf[16];
      const char *arg = ds_op_input_name(node->op, node->n_inputs, k, buf);
      if (g_strv_contains(weight_names, arg))
        return DS_VARIABLE_WEIGHT;
    }
  }
  return DS_VARIABLE_DATA;
}

const char *ds_variable_kind_name(DsVariableKind kind)
{
  switch (kind) {
  case DS_VARIABLE_DATA: return "data";
  case DS_VARIABLE_WEIGHT: return "weight";
  case DS_VARIABLE_AUX: return "aux";
  }
  return "data";
}
