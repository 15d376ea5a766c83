/* ds-control-flow.c: loops and branches on nested executors, made through the runner table
 * the calling executor gives (ds-control-flow.h). */
#include "ds-control-flow.h"

#include <string.h>

#include "ds-buffer-pool.h"
#include "ds-error.h"
#include "ds-expr.h"
#include "ds-infer.h"
#include "ds-op.h"

/* One subgraph and the executor bound for its current input sizes. */
typedef struct {
  DsGraph *graph;      /* borrowed from the node */
  char role[32];       /* "body", "cond", "then", "else": for messages and frames */
  guint n_inputs;
  const DsNode **vars; /* its variables in node order: the subgraph's inputs */
  DsExprCtx *exprs;
  gpointer exec;       /* made by the runner table */
  DsTensor *key;       /* the input shapes and dtypes it was bound for */
  guint32 *varying;    /* per input: bit d set once dim d has changed between binds */
  guint64 n_rebinds;
} Sub;

struct _DsControlFlow {
  const DsNode *node;
  const DsSubgraphRunner *runner;
  DsOpId op;
  const DsBackend *backend;
  DsThreadPool *threads;
  Sub subs[3];
  guint n_subs;
  DsBufferPool *scratch;   /* loop-carried states and growing stacks */
  DsTensor *sub_inputs;    /* scratch: one subgraph's inputs for a run */
  guint64 last_count;
  DsExecutorHooks hooks;   /* for the nested executors, and the frames around them */
  gpointer hooks_data;
};

/* ---- nested subgraphs ---- */

static void sub_clear(const DsControlFlow *cf, Sub *s)
{
  if (s->exec != NULL)
    cf->runner->free(s->exec);
  s->exec = NULL;
  if (s->exprs != NULL)
    ds_expr_ctx_free(s->exprs);
  s->exprs = NULL;
}

static gboolean same_key(const DsTensor *a, const DsTensor *b)
{
  return a->dtype == b->dtype && a->ndim == b->ndim &&
         memcmp(a->shape, b->shape, sizeof(int64_t) * (gsize)MAX(a->ndim, 0)) == 0;
}

static void prefix_error(const DsControlFlow *cf, const Sub *s, GError **error)
{
  g_prefix_error(error, "node '%s' (%s), %s: ", cf->node->name, cf->node->op_name, s->role);
}

/* Whether input `t` fits the key it was bound for: the same dtype and rank, and the same dims
 * except those marked varying. */
static gboolean fits_key(const DsTensor *key, guint32 varying, const DsTensor *t)
{
  if (key->dtype != t->dtype || key->ndim != t->ndim)
    return FALSE;
  for (int d = 0; d < t->ndim; d++)
    if (key->shape[d] != t->shape[d] && !(varying & (1u << d)))
      return FALSE;
  return TRUE;
}

/* Infers the subgraph for inputs shaped as `inputs`, with a data-dependent symbol for each
 * varying dim (none when `with_varying` is FALSE), and makes its executor. */
static gboolean sub_make(DsControlFlow *cf, Sub *s, const DsTensor *inputs, gboolean with_varying,
                         GError **error)
{
  sub_clear(cf, s);
  s->exprs = ds_expr_ctx_new();
  g_autoptr(DsGraphShapes) shapes = ds_graph_shapes_new(s->graph, error);
  if (shapes == NULL)
    return FALSE;
  for (guint k = 0; k < s->n_inputs; k++) {
    guint e = s->graph->node_row_ptr[s->vars[k]->id];
    DsShape shape = ds_shape_from_concrete(inputs[k].shape, inputs[k].ndim);
    for (int d = 0; with_varying && d < shape.ndim; d++)
      if (s->varying[k] & (1u << d))
        shape.dims[d] = ds_dim_from_expr(ds_expr_unbacked(s->exprs, NULL));
    shapes->shapes[e] = shape;
    shapes->dtypes[e] = inputs[k].dtype;
  }
  DsShapeCtx *ctx = ds_shape_ctx_new_symbolic(s->exprs);
  gboolean ok = ds_infer_graph(s->graph, shapes, ctx, FALSE, error);
  ds_shape_ctx_free(ctx);
  if (!ok)
    return FALSE;
  ds_graph_shapes_resolve(shapes, s->exprs);
  s->exec = cf->runner->create(s->graph, shapes, s->exprs, cf->backend, error);
  return s->exec != NULL;
}

/* Binds the subgraph for these inputs: symbolic inference from their concrete shapes (only
 * data-dependent dims inside stay symbols) and a dynamic executor, redone only when the sizes
 * change. Inside a loop they usually do not; where they do (ONNX's Loop lets a carried value
 * grow), the dims that changed become symbols, so one executor serves every later size. Should
 * the subgraph not be inferable with them, it is bound for these sizes alone. */
static gboolean sub_bind(DsControlFlow *cf, Sub *s, const DsTensor *inputs, GError **error)
{
  gboolean fits = s->exec != NULL;
  for (guint k = 0; fits && k < s->n_inputs; k++)
    fits = fits_key(&s->key[k], s->varying[k], &inputs[k]);
  if (!fits) {
    gboolean widened = FALSE;
    for (guint k = 0; s->exec != NULL && k < s->n_inputs; k++) {
      if (s->key[k].dtype != inputs[k].dtype || s->key[k].ndim != inputs[k].ndim)
        continue;
      for (int d = 0; d < MIN(inputs[k].ndim, 32); d++) {
        if (s->key[k].shape[d] != inputs[k].shape[d] && !(s->varying[k] & (1u << d))) {
          s->varying[k] |= 1u << d;
          widened = TRUE;
        }
      }
    }
    for (guint k = 0; k < s->n_inputs; k++)
      s->key[k] = inputs[k];
    GError *local = NULL;
    gboolean ok = widened && sub_make(cf, s, inputs, TRUE, &local);
    g_clear_error(&local);
    if (!ok) {
      memset(s->varying, 0, sizeof(guint32) * s->n_inputs);
      if (!sub_make(cf, s, inputs, FALSE, error)) {
        prefix_error(cf, s, error);
        return FALSE;
      }
    }
    cf->runner->set_thread_pool(s->exec, cf->threads);
    cf->runner->set_hooks(s->exec, &cf->hooks, cf->hooks_data);
    s->n_rebinds++;
  }
  for (guint k = 0; k < s->n_inputs; k++)
    if (!cf->runner->bind(s->exec, s->vars[k], &inputs[k], error)) {
      prefix_error(cf, s, error);
      return FALSE;
    }
  return TRUE;
}

/* Runs the subgraph once: iteration `iteration` of a loop (-1 for a branch). With hooks, the
 * run is a frame of its own. */
static gboolean sub_run(DsControlFlow *cf, Sub *s, const DsTensor *inputs, gint64 iteration,
                        GError **error)
{
  if (!sub_bind(cf, s, inputs, error))
    return FALSE;
  DsFrame frame = {
      .kind = DS_FRAME_SUBGRAPH,
      .graph = s->graph,
      .owner = cf->node,
      .name = s->role,
      .iteration = iteration,
      .inputs = inputs,
      .n_inputs = s->n_inputs,
  };
  if (cf->hooks.frame_enter != NULL)
    cf->hooks.frame_enter(cf->hooks_data, &frame);
  gboolean ok = cf->runner->run(s->exec, error);
  if (cf->hooks.frame_exit != NULL)
    cf->hooks.frame_exit(cf->hooks_data, &frame);
  /* A cancelled run says so in the caller's words, not wrapped in where it stopped. */
  if (!ok && !g_error_matches(*error, DS_ERROR, DS_ERROR_CANCELLED))
    prefix_error(cf, s, error);
  return ok;
}

static const DsTensor *sub_output(const DsControlFlow *cf, const Sub *s, guint i)
{
  return cf->runner->get_output(s->exec, i);
}

/* What subgraph `index` of `node` is, in the words of the messages: "body", "cond", "func",
 * "then", "else" for the control-flow ops, "subgraph N" for any other owner (a region). */
static const char *subgraph_role(const DsNode *node, guint index, char buf[32])
{
  static const char *const while_roles[] = {"cond", "func"};
  static const char *const cond_roles[] = {"cond", "then", "else"};
  DsOpId op = node->op != NULL ? node->op->id : DS_OP_COUNT;
  if (op == DS_OP_FOREACH && index == 0)
    return "body";
  if (op == DS_OP_WHILE_LOOP && index < G_N_ELEMENTS(while_roles))
    return while_roles[index];
  if (op == DS_OP_COND && index < G_N_ELEMENTS(cond_roles))
    return cond_roles[index];
  g_snprintf(buf, 32, "subgraph %u", index);
  return buf;
}

/* Every op of `graph`, and of the subgraphs its nodes own at any depth, must be one this build
 * knows. Inference passes over an unknown op (so that --info and --shapes still describe the
 * file), which inside a subgraph would only surface when an iteration or a branch reaches it,
 * as an output whose dtype is unknown. Checked once, when the loop or branch is bound, the run
 * fails up front and names the op and the path to it. */
static gboolean check_ops_known(const DsGraph *graph, GError **error)
{
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    if (ds_node_is_variable(node))
      continue;
    if (node->op == NULL) {
      g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED, "node '%s': op '%s' is not supported",
                  node->name, node->op_name);
      return FALSE;
    }
    for (guint k = 0; k < node->n_subgraphs; k++) {
      if (node->subgraphs[k] != NULL && !check_ops_known(node->subgraphs[k], error)) {
        char buf[32];
        g_prefix_error(error, "node '%s' (%s), %s: ", node->name, node->op_name,
                       subgraph_role(node, k, buf));
        return FALSE;
      }
    }
  }
  return TRUE;
}

static gboolean sub_init(DsControlFlow *cf, guint index, GError **error)
{
  const DsNode *node = cf->node;
  char buf[32];
  const char *role = subgraph_role(node, index, buf);
  if (index >= node->n_subgraphs) {
    g_set_error(error, DS_ERROR, DS_ERROR_INVALID, "node '%s' (%s): has no %s subgraph",
                node->name, node->op_name, role);
    return FALSE;
  }
  if (node->subgraphs[index] != NULL && !check_ops_known(node->subgraphs[index], error)) {
    g_prefix_error(error, "node '%s' (%s), %s: ", node->name, node->op_name, role);
    return FALSE;
  }
  Sub *s = &cf->subs[cf->n_subs++];
  s->graph = node->subgraphs[index];
  g_strlcpy(s->role, role, sizeof s->role);
  s->vars = g_new0(const DsNode *, s->graph->n_nodes + 1);
  for (guint i = 0; i < s->graph->n_nodes; i++)
    if (ds_node_is_variable(s->graph->nodes[i]))
      s->vars[s->n_inputs++] = s->graph->nodes[i];
  s->key = g_new0(DsTensor, s->n_inputs + 1);
  s->varying = g_new0(guint32, s->n_inputs + 1);
  return TRUE;
}

/* ---- tensors ---- */

/* Row `i` of a tensor, in place. A 1-D tensor's rows are (1,), as MXNet has them (it has no
 * 0-dim arrays, and exported bodies are shaped for that). */
static DsTensor slice_view(const DsTensor *t, int64_t i)
{
  DsTensor v = *t;
  v.ndim = MAX(t->ndim - 1, 1);
  if (t->ndim == 1)
    v.shape[0] = 1;
  else
    memmove(v.shape, t->shape + 1, sizeof(int64_t) * (gsize)v.ndim);
  v.data = (char *)t->data + (gsize)i * ds_tensor_nbytes(&v);
  return v;
}

/* Output `k` of the node: `like`'s dtype and shape, with `lead` rows in front when lead >= 0. */
static gboolean alloc_like(const DsControlFlow *cf, DsTensor *out, int k, const DsTensor *like,
                           int64_t lead, DsOutputAllocFn alloc, void *alloc_data, GError **error)
{
  out->dtype = like->dtype;
  out->ndim = like->ndim + (lead >= 0);
  if (out->ndim > DS_MAX_NDIM) {
    g_set_error(error, DS_ERROR, DS_ERROR_SHAPE, "node '%s' (%s): output %d would have %d dims",
                cf->node->name, cf->node->op_name, k, out->ndim);
    return FALSE;
  }
  if (lead >= 0)
    out->shape[0] = lead;
  memcpy(out->shape + (lead >= 0), like->shape, sizeof(int64_t) * (gsize)like->ndim);
  DsStatus status = alloc(alloc_data, k, out);
  if (status != DS_STATUS_OK) {
    g_set_error(error, DS_ERROR, DS_ERROR_LIMIT, "node '%s' (%s): output %d: %s", cf->node->name,
                cf->node->op_name, k, ds_status_message(status));
    return FALSE;
  }
  return TRUE;
}

static gboolean check_like(const DsControlFlow *cf, const DsTensor *got, const DsTensor *want,
                           const char *what, guint index, GError **error)
{
  if (same_key(got, want))
    return TRUE;
  DsShape a = ds_shape_from_concrete(got->shape, got->ndim);
  DsShape b = ds_shape_from_concrete(want->shape, want->ndim);
  g_autofree char *sa = ds_shape_to_string(&a), *sb = ds_shape_to_string(&b);
  g_set_error(error, DS_ERROR, DS_ERROR_SHAPE,
              "node '%s' (%s): %s %u changed from %s %s to %s %s between iterations",
              cf->node->name, cf->node->op_name, what, index, ds_dtype_name(want->dtype), sb,
              ds_dtype_name(got->dtype), sa);
  return FALSE;
}

/* A loop-carried value: two buffers used in turn, so the next iteration reads one while the
 * subgraph's output (which its next run overwrites) is copied into the other. */
typedef struct {
  void *buf[2];
  gsize bytes;
  DsTensor value; /* the current value: a node input at first, then one of the buffers */
} Carried;

static gboolean carried_store(DsControlFlow *cf, Carried *c, guint slot, const DsTensor *src,
                              guint64 iteration, GError **error)
{
  gsize bytes = ds_tensor_nbytes(src);
  guint which = (guint)(iteration & 1);
  if (c->buf[which] == NULL || bytes > c->bytes) {
    for (int b = 0; b < 2; b++) {
      ds_buffer_pool_release(cf->scratch, c->buf[b]);
      c->buf[b] = ds_buffer_pool_acquire(cf->scratch, slot * 2 + (guint)b, bytes,
                                         "a loop-carried state", error);
      if (c->buf[b] == NULL)
        return FALSE;
    }
    c->bytes = bytes;
  }
  memcpy(c->buf[which], src->data, bytes);
  c->value = *src;
  c->value.data = c->buf[which];
  return TRUE;
}

static void carried_release(DsControlFlow *cf, Carried *c)
{
  for (int b = 0; b < 2; b++)
    ds_buffer_pool_release(cf->scratch, c->buf[b]);
}

/* ---- _foreach ---- */

static gboolean run_foreach(DsControlFlow *cf, const DsTensor *inputs, DsTensor *outputs,
                            DsOutputAllocFn alloc, void *alloc_data, GError **error)
{
  const DsForeachParam *p = cf->node->param;
  Sub *body = &cf->subs[0];
  DsTensor *in = cf->sub_inputs;
  int64_t trips = p->n_data > 0 ? inputs[0].shape[0] : 0;
  for (int j = 0; j < p->n_data; j++) {
    if (inputs[j].ndim < 1 || inputs[j].shape[0] != trips) {
      g_set_error(error, DS_ERROR, DS_ERROR_SHAPE,
                  "node '%s' (_foreach): data input %d has %" G_GINT64_FORMAT
                  " rows, data input 0 has %" G_GINT64_FORMAT,
                  cf->node->name, j, inputs[j].ndim < 1 ? 0 : inputs[j].shape[0], trips);
      return FALSE;
    }
  }
  g_autofree Carried *states = g_new0(Carried, (gsize)p->n_states + 1);
  for (int k = 0; k < p->n_states; k++)
    states[k].value = inputs[p->n_data + k];
  for (int r = 0; r < p->n_remain; r++)
    in[p->remain_locs[r]] = inputs[p->n_data + p->n_states + r];

  gboolean ok = TRUE;
  for (int64_t i = 0; ok && i < trips; i++) {
    int64_t row = p->reverse ? trips - 1 - i : i;
    for (int j = 0; j < p->n_data; j++)
      in[p->data_locs[j]] = slice_view(&inputs[j], row);
    for (int k = 0; k < p->n_states; k++)
      in[p->state_locs[k]] = states[k].value;
    ok = sub_run(cf, body, in, i, error);
    if (!ok && !g_error_matches(*error, DS_ERROR, DS_ERROR_CANCELLED))
      g_prefix_error(error, "iteration %" G_GINT64_FORMAT ": ", i);
    /* Per-iteration outputs go into their row of the stacked outputs. */
    for (int o = 0; ok && o < p->num_out_data; o++) {
      const DsTensor *step = sub_output(cf, body, (guint)o);
      /* a kept-every-K output has ceil(T / K) rows and takes iterations 0, K, 2K... */
      gboolean thinned = o >= p->keep_from && p->keep_every > 1;
      if (i == 0)
        ok = alloc_like(cf, &outputs[o], o, step,
                        thinned ? (trips + p->keep_every - 1) / p->keep_every : trips, alloc,
                        alloc_data, error);
      if (thinned && i % p->keep_every != 0)
        continue;
      DsTensor out_row = outputs[o];
      if (ok) {
        out_row = slice_view(&outputs[o], thinned ? i / p->keep_every : row);
        ok = check_like(cf, step, &out_row, "step output", (guint)o, error);
      }
      if (ok)
        memcpy(out_row.data, step->data, ds_tensor_nbytes(step));
    }
    for (int k = 0; ok && k < p->n_states; k++) {
      const DsTensor *next = sub_output(cf, body, (guint)(p->num_out_data + k));
      ok = check_like(cf, next, &states[k].value, "state", (guint)k, error) &&
           carried_store(cf, &states[k], (guint)k, next, (guint64)i, error);
    }
  }
  /* No iteration: the stacked outputs are empty, shaped by the body's inferred outputs. */
  for (int o = 0; ok && trips == 0 && o < p->num_out_data; o++) {
    for (int j = 0; j < p->n_data; j++)
      in[p->data_locs[j]] = slice_view(&inputs[j], 0);
    for (int k = 0; k < p->n_states; k++)
      in[p->state_locs[k]] = states[k].value;
    ok = sub_bind(cf, body, in, error);
    const DsGraphShapes *shapes = ok ? cf->runner->get_shapes(body->exec) : NULL;
    DsEntry head = body->graph->heads[o];
    const DsShape *s = ok ? ds_graph_shapes_get(shapes, body->graph, head) : NULL;
    int64_t dims[DS_MAX_NDIM];
    if (ok && !ds_shape_get_concrete(s, dims)) {
      g_set_error(error, DS_ERROR, DS_ERROR_SHAPE,
                  "node '%s' (_foreach): no iteration ran, and the shape of step output %d "
                  "depends on data",
                  cf->node->name, o);
      ok = FALSE;
    }
    if (ok) {
      DsTensor like = {.dtype = shapes->dtypes[ds_graph_entry_id(body->graph, head)],
                       .ndim = s->ndim};
      memcpy(like.shape, dims, sizeof(int64_t) * (gsize)s->ndim);
      ok = alloc_like(cf, &outputs[o], o, &like, 0, alloc, alloc_data, error);
    }
  }
  for (int k = 0; ok && k < p->n_states; k++) {
    int o = p->num_out_data + k;
    ok = alloc_like(cf, &outputs[o], o, &states[k].value, -1, alloc, alloc_data, error);
    if (ok)
      memcpy(outputs[o].data, states[k].value.data, ds_tensor_nbytes(&states[k].value));
  }
  for (int k = 0; k < p->n_states; k++)
    carried_release(cf, &states[k]);
  cf->last_count = (guint64)trips;
  return ok;
}

/* ---- _while_loop ---- */

/* Whether a condition output says go on: its single element is nonzero. */
static gboolean read_condition(const DsControlFlow *cf, const DsTensor *t, gboolean *go,
                               GError **error)
{
  if (ds_tensor_numel(t) != 1) {
    g_set_error(error, DS_ERROR, DS_ERROR_SHAPE,
                "node '%s' (%s): the condition has %" G_GINT64_FORMAT " elements, not one",
                cf->node->name, cf->node->op_name, ds_tensor_numel(t));
    return FALSE;
  }
  switch (t->dtype) {
  case DS_DTYPE_FLOAT32: *go = *(const float *)t->data != 0.0f; break;
  case DS_DTYPE_FLOAT64: *go = *(const double *)t->data != 0.0; break;
  case DS_DTYPE_INT32: *go = *(const gint32 *)t->data != 0; break;
  case DS_DTYPE_INT64: *go = *(const gint64 *)t->data != 0; break;
  case DS_DTYPE_INT8: *go = *(const gint8 *)t->data != 0; break;
  case DS_DTYPE_UINT8:
  case DS_DTYPE_BOOL: *go = *(const guint8 *)t->data != 0; break;
  default:
    g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED, "node '%s' (%s): a %s condition",
                cf->node->name, cf->node->op_name, ds_dtype_name(t->dtype));
    return FALSE;
  }
  return TRUE;
}

/* A stacked output growing by one row per iteration, in a scratch buffer that doubles. */
typedef struct {
  void *data;
  gsize capacity, row_bytes;
  DsTensor row; /* shape of one row */
} Stack;

static gboolean stack_push(DsControlFlow *cf, Stack *s, guint slot, const DsTensor *row,
                           guint64 n, GError **error)
{
  if (n == 0) {
    s->row = *row;
    s->row_bytes = ds_tensor_nbytes(row);
  }
  gsize need = s->row_bytes * (gsize)(n + 1);
  if (need > s->capacity || s->data == NULL) {
    gsize capacity = MAX(need, s->capacity * 2);
    void *bigger = ds_buffer_pool_acquire(cf->scratch, slot, capacity, "a loop's stacked output",
                                          error);
    if (bigger == NULL)
      return FALSE;
    if (s->data != NULL)
      memcpy(bigger, s->data, s->row_bytes * (gsize)n);
    ds_buffer_pool_release(cf->scratch, s->data);
    s->data = bigger;
    s->capacity = capacity;
  }
  memcpy((char *)s->data + s->row_bytes * (gsize)n, row->data, s->row_bytes);
  return TRUE;
}

/* The loop's inputs for a subgraph: node inputs through `locs`, loop variables replaced by
 * their current values. */
static void gather_inputs(DsTensor *in, const int *locs, int n, const DsTensor *inputs,
                          const int *var_of_input, const Carried *vars)
{
  for (int i = 0; i < n; i++) {
    int v = var_of_input[locs[i]];
    in[i] = v >= 0 ? vars[v].value : inputs[locs[i]];
  }
}

static gboolean run_while_loop(DsControlFlow *cf, const DsTensor *inputs, DsTensor *outputs,
                               DsOutputAllocFn alloc, void *alloc_data, GError **error)
{
  const DsWhileLoopParam *p = cf->node->param;
  Sub *cond = &cf->subs[0], *func = &cf->subs[1];
  int n_vars = p->n_func_vars, n_in = (int)cf->node->n_inputs;
  /* Which loop variable each node input is (-1: a free variable). */
  g_autofree int *var_of_input = g_new(int, (gsize)n_in + 1);
  for (int i = 0; i < n_in; i++)
    var_of_input[i] = -1;
  g_autofree Carried *vars = g_new0(Carried, (gsize)n_vars + 1);
  for (int k = 0; k < n_vars; k++) {
    int input = p->func_input_locs[p->func_var_locs[k]];
    var_of_input[input] = k;
    vars[k].value = inputs[input];
  }
  g_autofree Stack *stacks = g_new0(Stack, (gsize)p->num_out_data + 1);
  DsTensor *in = cf->sub_inputs;
  gboolean ok = TRUE, go = TRUE;
  guint64 n = 0;
  while (ok) {
    gather_inputs(in, p->cond_input_locs, p->n_cond_inputs, inputs, var_of_input, vars);
    ok = sub_run(cf, cond, in, (gint64)n, error) && read_condition(cf, sub_output(cf, cond, 0), &go, error);
    if (!ok || !go || n >= (guint64)p->max_iterations)
      break;
    gather_inputs(in, p->func_input_locs, p->n_func_inputs, inputs, var_of_input, vars);
    ok = sub_run(cf, func, in, (gint64)n, error);
    for (int o = 0; ok && o < p->num_out_data; o++) {
      const DsTensor *step = sub_output(cf, func, (guint)o);
      ok = (n == 0 || check_like(cf, step, &stacks[o].row, "step output", (guint)o, error)) &&
           stack_push(cf, &stacks[o], (guint)(2 * n_vars + o), step, n, error);
    }
    for (int k = 0; ok && k < n_vars; k++) {
      const DsTensor *next = sub_output(cf, func, (guint)(p->num_out_data + k));
      ok = (p->any_carried_shapes ||
            check_like(cf, next, &vars[k].value, "loop variable", (guint)k, error)) &&
           carried_store(cf, &vars[k], (guint)k, next, n, error);
    }
    if (!ok && !g_error_matches(*error, DS_ERROR, DS_ERROR_CANCELLED))
      g_prefix_error(error, "iteration %" G_GUINT64_FORMAT ": ", n);
    n++;
  }
  /* Stacked outputs: exactly the rows run. Without any, their row shape comes from the
   * function's inference on the loop's first inputs. */
  for (int o = 0; ok && o < p->num_out_data; o++) {
    if (n == 0) {
      gather_inputs(in, p->func_input_locs, p->n_func_inputs, inputs, var_of_input, vars);
      ok = sub_bind(cf, func, in, error);
      const DsGraphShapes *shapes = ok ? cf->runner->get_shapes(func->exec) : NULL;
      DsEntry head = func->graph->heads[o];
      int64_t dims[DS_MAX_NDIM];
      const DsShape *s = ok ? ds_graph_shapes_get(shapes, func->graph, head) : NULL;
      if (ok && !ds_shape_get_concrete(s, dims)) {
        g_set_error(error, DS_ERROR, DS_ERROR_SHAPE,
                    "node '%s' (_while_loop): no iteration ran, and the shape of step output "
                    "%d depends on data",
                    cf->node->name, o);
        ok = FALSE;
      }
      if (ok) {
        stacks[o].row = (DsTensor){
          .dtype = shapes->dtypes[ds_graph_entry_id(func->graph, head)], .ndim = s->ndim};
        memcpy(stacks[o].row.shape, dims, sizeof(int64_t) * (gsize)s->ndim);
      }
    }
    ok = ok && alloc_like(cf, &outputs[o], o, &stacks[o].row, (int64_t)n, alloc, alloc_data,
                          error);
    if (ok && n > 0)
      memcpy(outputs[o].data, stacks[o].data, stacks[o].row_bytes * (gsize)n);
  }
  for (int k = 0; ok && k < n_vars; k++) {
    int o = p->num_out_data + k;
    ok = alloc_like(cf, &outputs[o], o, &vars[k].value, -1, alloc, alloc_data, error);
    if (ok)
      memcpy(outputs[o].data, vars[k].value.data, ds_tensor_nbytes(&vars[k].value));
  }
  for (int k = 0; k < n_vars; k++)
    carried_release(cf, &vars[k]);
  for (int o = 0; o < p->num_out_data; o++)
    ds_buffer_pool_release(cf->scratch, stacks[o].data);
  cf->last_count = n;
  return ok;
}

/* ---- _cond ---- */

static gboolean run_cond(DsControlFlow *cf, const DsTensor *inputs, DsTensor *outputs,
                         DsOutputAllocFn alloc, void *alloc_data, GError **error)
{
  const DsCondParam *p = cf->node->param;
  DsTensor *in = cf->sub_inputs;
  for (int i = 0; i < p->n_cond_inputs; i++)
    in[i] = inputs[p->cond_input_locs[i]];
  gboolean go;
  if (!sub_run(cf, &cf->subs[0], in, -1, error) ||
      !read_condition(cf, sub_output(cf, &cf->subs[0], 0), &go, error))
    return FALSE;
  Sub *branch = &cf->subs[go ? 1 : 2];
  const int *locs = go ? p->then_input_locs : p->else_input_locs;
  int n = go ? p->n_then_inputs : p->n_else_inputs;
  for (int i = 0; i < n; i++)
    in[i] = inputs[locs[i]];
  if (!sub_run(cf, branch, in, -1, error))
    return FALSE;
  for (int o = 0; o < p->num_outputs; o++) {
    const DsTensor *t = sub_output(cf, branch, (guint)o);
    if (!alloc_like(cf, &outputs[o], o, t, -1, alloc, alloc_data, error))
      return FALSE;
    memcpy(outputs[o].data, t->data, ds_tensor_nbytes(t));
  }
  cf->last_count = go ? 1 : 0;
  return TRUE;
}

/* ---- the runner ---- */

DsControlFlow *ds_control_flow_new(const DsNode *node, const DsSubgraphRunner *runner,
                                   const DsBackend *backend, DsThreadPool *threads,
                                   GError **error)
{
  g_autoptr(DsControlFlow) cf = g_new0(DsControlFlow, 1);
  cf->node = node;
  cf->runner = runner;
  cf->op = node->op->id;
  cf->backend = backend;
  cf->threads = threads;
  cf->scratch = ds_buffer_pool_new(backend);
  gboolean ok;
  switch (cf->op) {
  case DS_OP_FOREACH: ok = sub_init(cf, 0, error); break;
  case DS_OP_WHILE_LOOP: ok = sub_init(cf, 0, error) && sub_init(cf, 1, error); break;
  case DS_OP_COND:
    ok = sub_init(cf, 0, error) && sub_init(cf, 1, error) && sub_init(cf, 2, error);
    break;
  default:
    g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED, "node '%s': op '%s' is not a loop or branch",
                node->name, node->op_name);
    ok = FALSE;
  }
  if (!ok)
    return NULL;
  guint width = 1;
  for (guint s = 0; s < cf->n_subs; s++)
    width = MAX(width, cf->subs[s].n_inputs);
  cf->sub_inputs = g_new0(DsTensor, width + 1);
  return g_steal_pointer(&cf);
}

void ds_control_flow_free(DsControlFlow *cf)
{
  if (cf == NULL)
    return;
  for (guint s = 0; s < cf->n_subs; s++) {
    sub_clear(cf, &cf->subs[s]);
    g_free(cf->subs[s].vars);
    g_free(cf->subs[s].key);
    g_free(cf->subs[s].varying);
  }
  ds_buffer_pool_free(cf->scratch);
  g_free(cf->sub_inputs);
  g_free(cf);
}

gboolean ds_control_flow_run(DsControlFlow *cf, const DsTensor *inputs, DsTensor *outputs,
                             DsOutputAllocFn alloc, void *alloc_data, GError **error)
{
  switch (cf->op) {
  case DS_OP_FOREACH: return run_foreach(cf, inputs, outputs, alloc, alloc_data, error);
  case DS_OP_WHILE_LOOP: return run_while_loop(cf, inputs, outputs, alloc, alloc_data, error);
  default: return run_cond(cf, inputs, outputs, alloc, alloc_data, error);
  }
}

void ds_control_flow_set_hooks(DsControlFlow *cf, const DsExecutorHooks *hooks, gpointer data)
{
  cf->hooks = hooks != NULL ? *hooks : (DsExecutorHooks){0};
  cf->hooks_data = data;
  for (guint s = 0; s < cf->n_subs; s++)
    if (cf->subs[s].exec != NULL)
      cf->runner->set_hooks(cf->subs[s].exec, hooks, data);
}

void ds_control_flow_set_thread_pool(DsControlFlow *cf, DsThreadPool *threads)
{
  cf->threads = threads;
  for (guint s = 0; s < cf->n_subs; s++)
    if (cf->subs[s].exec != NULL)
      cf->runner->set_thread_pool(cf->subs[s].exec, threads);
}

guint64 ds_control_flow_get_last_count(const DsControlFlow *cf) { return cf->last_count; }

void ds_control_flow_get_memory(const DsControlFlow *cf, guint64 *n_allocations,
                                gsize *bytes_held)
{
  DsBufferPoolStats st;
  ds_buffer_pool_get_stats(cf->scratch, &st);
  *n_allocations = st.n_allocations;
  *bytes_held = st.bytes_held;
  for (guint s = 0; s < cf->n_subs; s++) {
    if (cf->subs[s].exec == NULL)
      continue;
    guint64 n = 0;
    gsize bytes = 0;
    cf->runner->get_memory(cf->subs[s].exec, &n, &bytes);
    *n_allocations += n;
    *bytes_held += bytes;
  }
}
