/* ds-grads-control.c: the gradients of the ops that run subgraphs: the loops, `_foreach` and
 * `_while_loop` (loops run backwards), `_cond` and `_CachedOp`.
 *
 * The backward pass of `_foreach` is another `_foreach` over the same rows, last to first
 * (MXNet's foreach backward; reverse=True, so no row is copied to reverse it): its body is
 * built from the forward body's backward graph, which takes an iteration's inputs and the gradients flowing into its outputs and new states, and
 * gives the gradients of its data rows (stacked), of its states (carried back to the iteration
 * before) and of the free variables (summed over the iterations in carried accumulators).
 *
 * What the forward loop keeps for it is the policy (seed 002's trade): with `recompute` it
 * keeps the state each iteration starts from (extra step outputs, ds_grad_foreach_prepare), and
 * the backward body computes the iteration's forward values again from them before
 * differentiating; with `save` it also keeps, as step outputs, every forward value the body's
 * backward graph reads, and the backward body reads them instead of recomputing. */
#include "ds-backward.h"
#include "ds-error.h"
#include "ds-grad.h"
#include "ds-grads.h"

/* The attribute that marks a loop rewritten for its backward pass, and how many step
 * outputs it had before. */
#define SAVED_STATES_ATTR "__backward_saved_states__"
/* ... and how many forward values it keeps after the states (save policy; 0 to recompute) */
#define SAVED_VALUES_ATTR "__backward_saved_values__"

static void set_attr(DsNode *node, const char *key, const char *value)
{
  for (guint i = 0; i < node->n_attrs; i++) {
    if (g_str_equal(node->attrs[i].key, key)) {
      g_free(node->attrs[i].value);
      node->attrs[i].value = g_strdup(value);
      return;
    }
  }
  ds_node_add_attr(node, key, value);
}

static void set_int_attr(DsNode *node, const char *key, int value)
{
  char text[16];
  g_snprintf(text, sizeof text, "%d", value);
  set_attr(node, key, text);
}

/* "[1, 4, 5]" */
static char *locs_text(const int *locs, int n)
{
  GString *s = g_string_new("[");
  for (int i = 0; i < n; i++)
    g_string_append_printf(s, "%s%d", i ? ", " : "", locs[i]);
  g_string_append_c(s, ']');
  return g_string_free(s, FALSE);
}

/* `body` given `n` more heads at position `at`. */
static void insert_heads(DsGraph *body, guint at, const DsEntry *entries, guint n)
{
  DsEntry *heads = g_new(DsEntry, body->n_heads + n);
  memcpy(heads, body->heads, at * sizeof(DsEntry));
  if (n > 0) /* an empty GArray's data may be NULL */
    memcpy(heads + at, entries, n * sizeof(DsEntry));
  memcpy(heads + at + n, body->heads + at, (body->n_heads - at) * sizeof(DsEntry));
  g_free(body->heads);
  body->heads = heads;
  body->n_heads += n;
  g_clear_pointer(&body->head_names, g_strfreev);
}

static GArray *read_forward_values(const DsGraph *backward, guint n_forward_nodes);

/* The backward graph of loop body `body` for one iteration, its inputs shaped and typed
 * `shapes` and `dtypes` (arg_nodes order): its heads are `n_out` step outputs with gradients,
 * then `n_kept` values kept for the backward pass only (no gradient), then the new states
 * (with gradients). */
static DsBackward *body_backward(DsGradCtx *ctx, const DsNode *node, const DsGraph *body,
                                 const DsShape *shapes, const DsDType *dtypes, int n_out,
                                 int n_kept, GError **error)
{
  g_autofree DsHeadGrad *seeds = g_new(DsHeadGrad, body->n_heads);
  for (guint h = 0; h < body->n_heads; h++)
    seeds[h] = (int)h >= n_out && (int)h < n_out + n_kept ? DS_HEAD_GRAD_NONE : DS_HEAD_GRAD_GIVEN;
  DsBackward *backward = ctx->backward_subgraph(ctx, body, shapes, dtypes, seeds, error);
  if (backward == NULL)
    g_prefix_error(error, "the body of node '%s' (%s): ", node->name, node->op_name);
  return backward;
}

/* Makes loop `node` keep what the backward loop reads, as step outputs inserted after its own
 * `n_out` into its body, subgraph `body_index`: the state each iteration starts from (body
 * inputs `state_args`), then, with the save policy, every forward value the body's backward
 * graph reads. The body's inputs are shaped `shapes`. Attributes say how many of each were
 * inserted; the caller updates the output counts. Returns how many, -1 with `error` set. */
static int keep_for_backward(DsGradCtx *ctx, DsNode *node, guint body_index, int n_out,
                             const int *state_args, int n_states, const DsShape *shapes,
                             const DsDType *dtypes, GError **error)
{
  g_autoptr(DsGraph) body = ds_graph_copy(node->subgraphs[body_index], error);
  if (body == NULL)
    return -1;
  /* body heads: step outputs, the state each iteration starts from, [the forward values its
   * backward graph reads], new states */
  g_autofree DsEntry *starts = g_new(DsEntry, MAX(n_states, 1));
  for (int k = 0; k < n_states; k++)
    starts[k] = (DsEntry){body->arg_nodes[state_args[k]], 0, 0};
  insert_heads(body, (guint)n_out, starts, (guint)n_states);
  guint n_values = 0;
  if (ctx->loop_policy.keep == DS_LOOP_SAVE) {
    ctx->node = node;
    DsBackward *backward = body_backward(ctx, node, body, shapes, dtypes, n_out, n_states, error);
    if (backward == NULL)
      return -1;
    g_autoptr(GArray) values = read_forward_values(backward->graph, body->n_nodes);
    ctx->backward_free(backward);
    n_values = values->len;
    insert_heads(body, (guint)(n_out + n_states), (const DsEntry *)values->data, n_values);
  }
  ds_graph_unref(node->subgraphs[body_index]);
  node->subgraphs[body_index] = g_steal_pointer(&body);
  set_int_attr(node, SAVED_STATES_ATTR, n_out);
  set_int_attr(node, SAVED_VALUES_ATTR, (int)n_values);
  return n_states + (int)n_values;
}

/* Parses `node`'s attributes again, after keep_for_backward changed them. */
static gboolean reparse(DsNode *node, GError **error)
{
  if (node->op->free_param != NULL)
    node->op->free_param(node->param);
  memset(node->param, 0, node->op->param_size);
  return node->op->parse(node, node->param, error);
}

/* The shapes and dtypes of one iteration's body inputs. */
static void foreach_body_inputs(const DsGradCtx *ctx, const DsForeachParam *p, DsShape *shapes,
                                DsDType *dtypes)
{
  const int n_data = p->n_data, n_states = p->n_states;
  for (int j = 0; j < n_data; j++) {
    shapes[p->data_locs[j]] = ds_ops_foreach_row_shape(&ctx->in_shapes[j]);
    dtypes[p->data_locs[j]] = ctx->in_dtypes[j];
  }
  for (int k = 0; k < n_states; k++) {
    shapes[p->state_locs[k]] = ctx->in_shapes[n_data + k];
    dtypes[p->state_locs[k]] = ctx->in_dtypes[n_data + k];
  }
  for (int r = 0; r < p->n_remain; r++) {
    shapes[p->remain_locs[r]] = ctx->in_shapes[n_data + n_states + r];
    dtypes[p->remain_locs[r]] = ctx->in_dtypes[n_data + n_states + r];
  }
}

int ds_grad_foreach_prepare(DsGradCtx *ctx, DsNode *node, guint *moved_from, GError **error)
{
  const DsForeachParam *p = node->param;
  if (ds_node_get_attr(node, SAVED_STATES_ATTR) != NULL)
    return 0;
  const int n_out = p->num_out_data, n_states = p->n_states;
  *moved_from = (guint)n_out;
  guint n_args = node->subgraphs[0]->n_arg_nodes;
  g_autofree DsShape *shapes = g_new(DsShape, MAX(n_args, 1u));
  g_autofree DsDType *dtypes = g_new(DsDType, MAX(n_args, 1u));
  foreach_body_inputs(ctx, p, shapes, dtypes);
  int n = keep_for_backward(ctx, node, 0, n_out, p->state_locs, n_states, shapes, dtypes, error);
  if (n < 0)
    return -1;
  if (ctx->loop_policy.keep == DS_LOOP_CHECKPOINT) { /* only every K-th start is kept */
    set_int_attr(node, "keep_every", ctx->loop_policy.every);
    set_int_attr(node, "keep_from", n_out);
  }
  set_int_attr(node, "num_out_data", p->num_out_data + n);
  set_int_attr(node, "num_outputs", p->num_outputs + n);
  node->n_outputs += (guint)n;
  return reparse(node, error) ? n : -1;
}

/* Position in `graph`'s variables of the variable called `name`, or -1. */
static int arg_position(const DsGraph *graph, const char *name)
{
  for (guint a = 0; a < graph->n_arg_nodes; a++)
    if (g_str_equal(graph->nodes[graph->arg_nodes[a]]->name, name))
      return (int)a;
  return -1;
}

/* A node appended to `graph` (a body under construction) with op name and inputs; the
 * backward pass resolves its op and params with the nodes it added. */
static DsEntry body_node(DsGraph *graph, const char *name, const char *op_name, guint n_inputs,
                         const DsEntry *inputs)
{
  DsNode *node = ds_graph_add_node(graph, name, op_name);
  node->inputs = g_new(DsEntry, MAX(n_inputs, 1u));
  memcpy(node->inputs, inputs, n_inputs * sizeof(DsEntry));
  node->n_inputs = n_inputs;
  return (DsEntry){node->id, 0, 0};
}

static guint add_body_variable(DsGraph *graph, const char *name)
{
  DsNode *node = ds_graph_add_node(graph, name, "null");
  graph->arg_nodes = g_renew(guint, graph->arg_nodes, graph->n_arg_nodes + 1);
  graph->arg_nodes[graph->n_arg_nodes] = node->id;
  return graph->n_arg_nodes++;
}

/* The forward values (outputs of the first `n_forward_nodes` nodes, not variables) that the
 * gradient nodes after them read, each once, in the order first read. */
static GArray *read_forward_values(const DsGraph *backward, guint n_forward_nodes)
{
  GArray *values = g_array_new(FALSE, FALSE, sizeof(DsEntry));
  g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (guint i = n_forward_nodes; i < backward->n_nodes; i++) {
    const DsNode *node = backward->nodes[i];
    for (guint k = 0; k < node->n_inputs; k++) {
      DsEntry e = node->inputs[k];
      if (e.node_id >= n_forward_nodes || ds_node_is_variable(backward->nodes[e.node_id]))
        continue;
      gpointer key = GUINT_TO_POINTER(ds_graph_entry_id(backward, e) + 1);
      if (g_hash_table_add(seen, key))
        g_array_append_val(values, e);
    }
  }
  return values;
}

/* The backward graph `g` without its forward op nodes (of the first `n_forward_nodes`): what
 * its gradient nodes read of them, `values`, comes in through new variables instead, listed
 * after the others (the first of them at position `*first_value`). Variables keep their
 * positions. Nodes keep their ops; params are parsed again by the backward pass. */
static DsGraph *strip_forward(const DsGraph *g, guint n_forward_nodes, const GArray *values,
                              guint *first_value)
{
  DsGraph *h = ds_graph_new();
  guint n_entries = ds_graph_n_entries(g);
  g_autofree DsEntry *mapped = g_new(DsEntry, n_entries);
  for (guint e = 0; e < n_entries; e++)
    mapped[e] = DS_GRAD_NONE;
  /* The new variables go after the others in node order too: a body's inputs are its
   * variables in the order they appear. */
  g_autofree guint *value_ids = g_new(guint, MAX(values->len, 1u));
  g_autofree guint *new_id = g_new(guint, g->n_nodes);
  gboolean values_added = FALSE;
  for (guint i = 0; i <= g->n_nodes; i++) {
    const DsNode *node = i < g->n_nodes ? g->nodes[i] : NULL;
    if (!values_added && (node == NULL || (i >= n_forward_nodes && !ds_node_is_variable(node)))) {
      for (guint v = 0; v < values->len; v++) {
        DsEntry e = g_array_index(values, DsEntry, v);
        const DsNode *from = g->nodes[e.node_id];
        g_autofree char *name = e.index == 0 ? g_strdup_printf("%s_saved", from->name)
                                             : g_strdup_printf("%s_saved%u", from->name, e.index);
        DsNode *var = ds_graph_add_node(h, name, "null");
        value_ids[v] = var->id;
        mapped[ds_graph_entry_id(g, e)] = (DsEntry){var->id, 0, 0};
      }
      values_added = TRUE;
    }
    if (node == NULL || (i < n_forward_nodes && !ds_node_is_variable(node)))
      continue;
    DsNode *copy = ds_node_copy(node);
    for (guint k = 0; k < copy->n_inputs; k++) {
      copy->inputs[k] = mapped[ds_graph_entry_id(g, node->inputs[k])];
      g_assert(!ds_grad_is_none(copy->inputs[k]));
    }
    ds_graph_append_node(h, copy);
    new_id[i] = copy->id;
    for (guint o = 0; o < node->n_outputs; o++)
      mapped[g->node_row_ptr[i] + o] = (DsEntry){copy->id, o, 0};
  }
  h->n_arg_nodes = g->n_arg_nodes + values->len;
  h->arg_nodes = g_new(guint, h->n_arg_nodes);
  for (guint a = 0; a < g->n_arg_nodes; a++)
    h->arg_nodes[a] = new_id[g->arg_nodes[a]];
  for (guint v = 0; v < values->len; v++)
    h->arg_nodes[g->n_arg_nodes + v] = value_ids[v];
  *first_value = g->n_arg_nodes;
  h->n_heads = g->n_heads;
  h->heads = g_new(DsEntry, MAX(g->n_heads, 1u));
  for (guint k = 0; k < g->n_heads; k++)
    h->heads[k] = mapped[ds_graph_entry_id(g, g->heads[k])];
  ds_graph_update_row_ptr(h);
  return h;
}

/* The forward loop over one segment of `every` rows, as a graph of its own: variables for the
 * segment of each data array, the states it starts from and the free variables (in that
 * order), one _foreach over them running the model's body (without the kept-state outputs),
 * and its outputs as heads. Its backward graph is a checkpointing loop's backward body. Ops
 * are left for the backward pass to resolve. */
static DsGraph *segment_graph(const DsNode *node, int n_out)
{
  const DsForeachParam *p = node->param;
  const DsGraph *body = node->subgraphs[0];
  const int n_states = p->n_states;
  g_autoptr(GError) ignored = NULL;
  DsGraph *model_body = ds_graph_copy(body, &ignored);
  g_assert(model_body != NULL); /* its params parsed once already */
  /* drop the kept-state heads [n_out, n_out + n_states) */
  memmove(model_body->heads + n_out, model_body->heads + n_out + n_states,
          (model_body->n_heads - (guint)(n_out + n_states)) * sizeof(DsEntry));
  model_body->n_heads -= (guint)n_states;
  g_clear_pointer(&model_body->head_names, g_strfreev);

  DsGraph *g = ds_graph_new();
  int n_in = p->n_data + p->n_states + p->n_remain;
  g_autofree DsEntry *in = g_new(DsEntry, n_in);
  for (int i = 0; i < n_in; i++) {
    int loc = i < p->n_data ? p->data_locs[i]
              : i < p->n_data + n_states ? p->state_locs[i - p->n_data]
                                         : p->remain_locs[i - p->n_data - n_states];
    const char *name = body->nodes[body->arg_nodes[loc]]->name;
    g_autofree char *var = i < p->n_data    ? g_strdup_printf("%s_segment", name)
                           : i < p->n_data + n_states ? g_strdup_printf("%s_start", name)
                                                      : g_strdup(name);
    DsNode *v = ds_graph_add_node(g, var, "null");
    in[i] = (DsEntry){v->id, 0, 0};
  }
  /* then one more variable per free variable, the segment loop does not read: the outer
   * loop's accumulator of its gradient, which the backward graph's own accumulator starts
   * from (chain_segment_accumulator) */
  g->n_arg_nodes = (guint)(n_in + p->n_remain);
  g->arg_nodes = g_new(guint, MAX(g->n_arg_nodes, 1u));
  for (int i = 0; i < n_in; i++)
    g->arg_nodes[i] = in[i].node_id;
  for (int r = 0; r < p->n_remain; r++) {
    const char *name = body->nodes[body->arg_nodes[p->remain_locs[r]]]->name;
    g_autofree char *var = g_strdup_printf("%s_grad_acc", name);
    g->arg_nodes[n_in + r] = ds_graph_add_node(g, var, "null")->id;
  }
  g_autofree char *name = g_strdup_printf("%s_segment", node->name);
  DsNode *loop = ds_graph_add_node(g, name, "_foreach");
  loop->inputs = g_steal_pointer(&in);
  loop->n_inputs = (guint)n_in;
  static const char *const copied[] = {"num_args", "in_data_locs", "in_state_locs",
                                       "remain_locs", NULL};
  for (const char *const *key = copied; *key != NULL; key++)
    ds_node_add_attr(loop, *key, ds_node_get_attr(node, *key));
  set_int_attr(loop, "num_outputs", n_out + n_states);
  set_int_attr(loop, "num_out_data", n_out);
  loop->subgraphs = g_new(DsGraph *, 1);
  loop->subgraphs[0] = model_body;
  loop->n_subgraphs = 1;
  loop->n_outputs = (guint)(n_out + n_states);
  g->n_heads = loop->n_outputs;
  g->heads = g_new(DsEntry, g->n_heads);
  for (guint h = 0; h < g->n_heads; h++)
    g->heads[h] = (DsEntry){loop->id, h, 0};
  ds_graph_update_row_ptr(g);
  return g;
}

/* Checkpointing, the free variables' gradients are summed by the segment's backward loop from
 * zeros, then added to the outer accumulator: a different order of additions than one loop
 * makes. To give the same sums, bit for bit, the segment's loop starts from the outer
 * accumulator instead (its zeros node becomes a copy of it), and the outer accumulator takes
 * what the segment's loop returns, `grad` (that loop's output for free variable r). FALSE
 * when the segment's backward graph is not that shape (then the sums are added). */
static gboolean chain_segment_accumulator(DsGraph *bb, const DsNode *node, int n_out, int r,
                                          DsEntry acc, DsEntry grad)
{
  const DsForeachParam *p = node->param;
  DsNode *inner = bb->nodes[grad.node_id];
  int n_inner_data = p->n_data + p->n_states + n_out;
  guint slot = (guint)(n_inner_data + p->n_states + r);
  if (!g_str_equal(inner->op_name, "_foreach") || grad.index != (guint)(p->n_data + p->n_states + r) ||
      slot >= inner->n_inputs)
    return FALSE;
  DsNode *zeros = bb->nodes[inner->inputs[slot].node_id];
  if (!g_str_equal(zeros->op_name, "zeros_like") || zeros->id <= acc.node_id)
    return FALSE;
  g_free(zeros->op_name);
  zeros->op_name = g_strdup("_copy");
  zeros->op = NULL;
  g_clear_pointer(&zeros->param, g_free);
  zeros->inputs[0] = acc;
  return TRUE;
}

DS_GRAD_FN(ds_grad_foreach)
{
  const DsNode *node = ctx->node;
  const DsForeachParam *p = node->param;
  const char *saved = ds_node_get_attr(node, SAVED_STATES_ATTR);
  const char *kept_values = ds_node_get_attr(node, SAVED_VALUES_ATTR);
  if (saved == NULL || kept_values == NULL || ctx->backward_subgraph == NULL)
    return ds_grad_fail(ctx, error, "the loop was not prepared for its backward pass");
  const int n_data = p->n_data, n_states = p->n_states, n_remain = p->n_remain;
  const int n_out = (int)g_ascii_strtoll(saved, NULL, 10); /* the model's own step outputs */
  const int n_values = (int)g_ascii_strtoll(kept_values, NULL, 10);
  const int every = p->keep_every;
  const gboolean checkpoint = every > 1;

  /* What the backward loop's body differentiates: the body (one iteration) or, checkpointing,
   * the forward loop over one segment (which recomputes the segment's states from the kept
   * one); and where its data, state and free-variable inputs are. */
  g_autoptr(DsGraph) segment = NULL;
  const DsGraph *body = node->subgraphs[0];
  g_autofree int *data_pos = g_new(int, MAX(n_data, 1));
  g_autofree int *state_pos = g_new(int, MAX(n_states, 1));
  g_autofree int *remain_pos = g_new(int, MAX(n_remain, 1));
  for (int j = 0; j < n_data; j++)
    data_pos[j] = checkpoint ? j : p->data_locs[j];
  for (int k = 0; k < n_states; k++)
    state_pos[k] = checkpoint ? n_data + k : p->state_locs[k];
  for (int r = 0; r < n_remain; r++)
    remain_pos[r] = checkpoint ? n_data + n_states + r : p->remain_locs[r];
  DsBackward *backward;
  if (checkpoint) {
    const DsDim t = ctx->in_shapes[0].ndim > 0 ? ctx->in_shapes[0].dims[0] : DS_DIM_UNKNOWN;
    if (!ds_dim_is_const(t) || t.value % every != 0)
      return ds_grad_fail(ctx, error, "checkpointing every %d rows needs a row count that is a "
                                      "known multiple of %d", every, every);
    segment = segment_graph(node, n_out);
    body = segment;
    guint n_seg = segment->n_arg_nodes;
    g_autofree DsShape *shapes = g_new(DsShape, n_seg);
    g_autofree DsDType *dtypes = g_new(DsDType, n_seg);
    for (guint a = 0; a < n_seg; a++) {
      /* the accumulators after the node's inputs: shaped like their free variables */
      guint from = a < node->n_inputs ? a : a - (guint)n_remain;
      shapes[a] = ctx->in_shapes[from];
      dtypes[a] = ctx->in_dtypes[from];
      if ((int)a < n_data)
        shapes[a].dims[0] = ds_dim(every);
    }
    g_autofree DsHeadGrad *seeds = g_new(DsHeadGrad, segment->n_heads);
    for (guint h = 0; h < segment->n_heads; h++)
      seeds[h] = DS_HEAD_GRAD_GIVEN;
    /* within a segment the states are recomputed from the kept one */
    DsGradCtx inner = *ctx;
    inner.loop_policy = (DsLoopPolicy){DS_LOOP_RECOMPUTE, 0, ctx->loop_policy.recompute_cheap};
    backward = ctx->backward_subgraph(&inner, segment, shapes, dtypes, seeds, error);
    if (backward == NULL)
      g_prefix_error(error, "a segment of node '%s' (_foreach): ", node->name);
  } else {
    g_autofree DsShape *shapes = g_new(DsShape, MAX(body->n_arg_nodes, 1u));
    g_autofree DsDType *dtypes = g_new(DsDType, MAX(body->n_arg_nodes, 1u));
    foreach_body_inputs(ctx, p, shapes, dtypes);
    backward = body_backward(ctx, node, body, shapes, dtypes, n_out, n_states + n_values, error);
  }
  if (backward == NULL)
    return FALSE;
  guint n_args = body->n_arg_nodes;
  /* With saved values the backward body reads them in place of its forward nodes. */
  guint first_value = 0;
  if (n_values > 0) {
    g_autoptr(GArray) values = read_forward_values(backward->graph, body->n_nodes);
    if ((int)values->len != n_values) {
      ctx->backward_free(backward);
      return ds_grad_fail(ctx, error, "the body's backward graph reads %u forward values, %d "
                                      "were kept", values->len, n_values);
    }
    DsGraph *stripped = strip_forward(backward->graph, body->n_nodes, values, &first_value);
    ds_graph_unref(backward->graph);
    backward->graph = stripped;
  }

  /* The backward body: the body's backward graph, with the free variables' gradients added
   * to accumulators carried from one iteration to the next. */
  DsGraph *bb = g_steal_pointer(&backward->graph);
  g_clear_pointer(&bb->head_names, g_strfreev);
  g_autofree DsEntry *grad_of = g_new(DsEntry, n_args); /* per body input: its gradient */
  for (guint a = 0; a < n_args; a++)
    grad_of[a] = DS_GRAD_NONE;
  for (guint i = 0; i < backward->variables->len; i++) {
    int a = arg_position(body, g_ptr_array_index(backward->variables, i));
    if (a >= 0)
      grad_of[a] = bb->heads[backward->n_forward_heads + i];
  }
  /* the variables feeding each given head's gradient (-1 where none flows) */
  g_autofree int *seed_pos = g_memdup2(backward->head_grad_args, body->n_heads * sizeof(int));
  ctx->backward_free(backward);
  GArray *heads = g_array_new(FALSE, FALSE, sizeof(DsEntry));
  for (int j = 0; j < n_data + n_states; j++) {
    int a = j < n_data ? data_pos[j] : state_pos[j - n_data];
    DsEntry g = grad_of[a];
    if (ds_grad_is_none(g)) {
      g_autofree char *name = g_strdup_printf("%s_grad_zeros", bb->nodes[bb->arg_nodes[a]]->name);
      g = body_node(bb, name, "zeros_like", 1, &(DsEntry){bb->arg_nodes[a], 0, 0});
    }
    g_array_append_val(heads, g);
  }
  g_autofree int *acc_pos = g_new(int, MAX(n_remain, 1));
  for (int r = 0; r < n_remain; r++) {
    int a = remain_pos[r];
    const char *var = bb->nodes[bb->arg_nodes[a]]->name;
    g_autofree char *acc_name = g_strdup_printf("%s_grad_acc", var);
    acc_pos[r] = checkpoint ? (int)node->n_inputs + r : (int)add_body_variable(bb, acc_name);
    DsEntry acc = {bb->arg_nodes[acc_pos[r]], 0, 0};
    if (checkpoint && !ds_grad_is_none(grad_of[a]) &&
        chain_segment_accumulator(bb, node, n_out, r, acc, grad_of[a])) {
      acc = grad_of[a];
    } else if (!ds_grad_is_none(grad_of[a])) {
      g_autofree char *sum_name = g_strdup_printf("%s_grad_acc_next", var);
      acc = body_node(bb, sum_name, "elemwise_add", 2, (DsEntry[]){acc, grad_of[a]});
    }
    g_array_append_val(heads, acc);
  }
  g_free(bb->heads);
  bb->n_heads = heads->len;
  bb->heads = (DsEntry *)g_array_free(heads, FALSE);

  /* The backward loop runs its rows last to first (reverse=True): its inputs are the rows (the
   * data, the states each iteration started from, the step outputs' gradients, the saved
   * values), the carried gradients, the free variables. */
  int n_bdata = n_data + n_states + n_out + n_values, n_bstates = n_states + n_remain;
  int n_inputs = n_bdata + n_bstates + n_remain;
  g_autofree DsEntry *inputs = g_new(DsEntry, n_inputs);
  g_autofree int *data_locs = g_new(int, n_bdata);
  g_autofree int *state_locs = g_new(int, n_bstates);
  int i = 0;
  /* checkpointing, a row of the backward loop is a segment: rows grouped by `every` */
  g_autofree char *segments = g_strdup_printf("(-4, -1, %d, -2)", every);
  for (int j = 0; j < n_data; j++, i++) {
    inputs[i] = ds_grad_input(ctx, (guint)j);
    if (checkpoint)
      inputs[i] = ds_grad_op1(ctx, "Reshape", inputs[i], "shape", segments, NULL);
    data_locs[i] = data_pos[j];
  }
  for (int k = 0; k < n_states; k++, i++) {
    inputs[i] = ds_grad_output(ctx, (guint)(n_out + k));
    data_locs[i] = state_pos[k];
  }
  for (int o = 0; o < n_out; o++, i++) {
    DsEntry g = ds_grad_is_none(out_grads[o])
                    ? ds_grad_op1(ctx, "zeros_like", ds_grad_output(ctx, (guint)o), NULL)
                    : out_grads[o];
    inputs[i] = checkpoint ? ds_grad_op1(ctx, "Reshape", g, "shape", segments, NULL) : g;
    data_locs[i] = seed_pos[o];
  }
  for (int v = 0; v < n_values; v++, i++) {
    inputs[i] = ds_grad_output(ctx, (guint)(n_out + n_states + v));
    data_locs[i] = (int)first_value + v;
  }
  for (int k = 0; k < n_states; k++, i++) {
    guint out = (guint)(p->num_out_data + k);
    inputs[i] = ds_grad_is_none(out_grads[out])
                    ? ds_grad_op1(ctx, "zeros_like", ds_grad_output(ctx, out), NULL)
                    : out_grads[out];
    state_locs[k] = seed_pos[checkpoint ? n_out + k : n_out + n_states + n_values + k];
  }
  for (int r = 0; r < n_remain; r++, i++) {
    inputs[i] = ds_grad_op1(ctx, "zeros_like", ds_grad_input(ctx, (guint)(n_data + n_states + r)),
                            NULL);
    state_locs[n_states + r] = acc_pos[r];
  }
  for (int r = 0; r < n_remain; r++, i++)
    inputs[i] = ds_grad_input(ctx, (guint)(n_data + n_states + r));
  for (int j = 0; j < n_bdata + n_bstates; j++) {
    if ((j < n_bdata ? data_locs[j] : state_locs[j - n_bdata]) < 0) {
      ds_graph_unref(bb);
      return ds_grad_fail(ctx, error, "an output of the body has no gradient input");
    }
  }
  g_autofree char *num_args = g_strdup_printf("%d", n_inputs + 1);
  g_autofree char *num_outputs = g_strdup_printf("%d", n_data + n_states + n_remain);
  g_autofree char *num_out_data = g_strdup_printf("%d", n_data);
  g_autofree char *in_data_locs = locs_text(data_locs, n_bdata);
  g_autofree char *in_state_locs = locs_text(state_locs, n_bstates);
  g_autofree char *remain_locs = locs_text(remain_pos, n_remain);
  DsEntry loop = ds_grad_op(ctx, "_foreach", (guint)n_inputs, inputs, "num_args", num_args,
                            "num_outputs", num_outputs, "num_out_data", num_out_data,
                            "in_data_locs", in_data_locs, "in_state_locs", in_state_locs,
                            "remain_locs", remain_locs, "reverse", "True", NULL);
  DsNode *loop_node = ctx->graph->nodes[loop.node_id];
  loop_node->subgraphs = g_new(DsGraph *, 1);
  loop_node->subgraphs[0] = bb;
  loop_node->n_subgraphs = 1;

  for (int j = 0; j < n_data; j++) {
    in_grads[j] = (DsEntry){loop.node_id, (guint)j, 0};
    if (checkpoint) /* segments back to rows */
      in_grads[j] = ds_grad_op1(ctx, "Reshape", in_grads[j], "shape", "(-3, -2)", NULL);
  }
  for (int k = 0; k < n_states; k++)
    in_grads[n_data + k] = (DsEntry){loop.node_id, (guint)(n_data + k), 0};
  for (int r = 0; r < n_remain; r++)
    in_grads[n_data + n_states + r] = (DsEntry){loop.node_id, (guint)(n_data + n_states + r), 0};
  return TRUE;
}

/* _while_loop */

/* A loop variable of an ONNX-style loop may change shape between iterations; the backward
 * loop would need the shape it held at each one. */
static gboolean check_fixed_carried_shapes(const DsGradCtx *ctx, const DsNode *node,
                                           const DsWhileLoopParam *p, GError **error)
{
  for (int k = 0; k < p->n_func_vars; k++) {
    const DsShape *initial = &ctx->in_shapes[p->func_input_locs[p->func_var_locs[k]]];
    const DsShape *final = &ctx->out_shapes[p->num_out_data + k];
    gboolean same = initial->ndim >= 0 && initial->ndim == final->ndim;
    for (int d = 0; same && d < initial->ndim; d++)
      same = ds_grad_dims_equal(initial->dims[d], final->dims[d]);
    if (!same) {
      const DsGraph *func = node->subgraphs[1];
      return ds_grad_fail(ctx, error,
                          "loop variable %d ('%s') may change shape between iterations; "
                          "differentiating it needs one shape for all of them",
                          k, func->nodes[func->arg_nodes[p->func_var_locs[k]]]->name);
    }
  }
  return TRUE;
}

/* A _while_loop is differentiated as the _foreach it ran: its backward loop goes over the
 * iterations it recorded (the kept rows, one per iteration, tell how many), last to first.
 * So the forward loop keeps what a _foreach keeps, in func: each iteration's loop variables
 * and, saving, the values func's backward graph reads. A loop's iteration count is known only
 * once it has run, so checkpoint:K cannot cut it into segments beforehand; it keeps each
 * iteration's variables, as recompute does. */
int ds_grad_while_loop_prepare(DsGradCtx *ctx, DsNode *node, guint *moved_from, GError **error)
{
  const DsWhileLoopParam *p = node->param;
  if (ds_node_get_attr(node, SAVED_STATES_ATTR) != NULL)
    return 0;
  ctx->node = node;
  if (p->any_carried_shapes && !check_fixed_carried_shapes(ctx, node, p, error))
    return -1;
  *moved_from = (guint)p->num_out_data;
  int n_args = p->n_func_inputs;
  g_autofree DsShape *shapes = g_new(DsShape, MAX(n_args, 1));
  g_autofree DsDType *dtypes = g_new(DsDType, MAX(n_args, 1));
  for (int a = 0; a < n_args; a++) {
    shapes[a] = ctx->in_shapes[p->func_input_locs[a]];
    dtypes[a] = ctx->in_dtypes[p->func_input_locs[a]];
  }
  int n = keep_for_backward(ctx, node, 1, p->num_out_data, p->func_var_locs, p->n_func_vars,
                            shapes, dtypes, error);
  if (n < 0)
    return -1;
  set_int_attr(node, "num_out_data", p->num_out_data + n);
  set_int_attr(node, "num_outputs", p->num_outputs + n);
  node->n_outputs += (guint)n;
  return reparse(node, error) ? n : -1;
}

DS_GRAD_FN(ds_grad_while_loop)
{
  const DsNode *node = ctx->node;
  const DsWhileLoopParam *p = node->param;
  if (p->any_carried_shapes && !check_fixed_carried_shapes(ctx, node, p, error))
    return FALSE;
  /* The _foreach it is seen as: no data rows, func's loop variables as its states, func's
   * other inputs as its free variables; its inputs are the node inputs feeding them. */
  const int n_args = p->n_func_inputs, n_vars = p->n_func_vars, n_free = n_args - n_vars;
  g_autofree gboolean *is_var = g_new0(gboolean, MAX(n_args, 1));
  for (int k = 0; k < n_vars; k++)
    is_var[p->func_var_locs[k]] = TRUE;
  g_autofree int *free_args = g_new(int, MAX(n_free, 1));
  g_autofree int *view_args = g_new(int, MAX(n_args, 1)); /* func input of view input i */
  for (int a = 0, r = 0; a < n_args; a++)
    if (!is_var[a])
      free_args[r++] = a;
  memcpy(view_args, p->func_var_locs, sizeof(int) * (gsize)n_vars);
  memcpy(view_args + n_vars, free_args, sizeof(int) * (gsize)n_free);
  DsForeachParam as_foreach = {.num_args = n_args + 1,
                               .num_outputs = p->num_outputs,
                               .num_out_data = p->num_out_data,
                               .n_states = n_vars,
                               .n_remain = n_free,
                               .state_locs = p->func_var_locs,
                               .remain_locs = free_args};
  g_autofree DsEntry *view_inputs = g_new(DsEntry, MAX(n_args, 1));
  g_autofree DsShape *view_shapes = g_new(DsShape, MAX(n_args, 1));
  g_autofree DsDType *view_dtypes = g_new(DsDType, MAX(n_args, 1));
  g_autofree DsEntry *view_grads = g_new(DsEntry, MAX(n_args, 1));
  for (int i = 0; i < n_args; i++) {
    int loc = p->func_input_locs[view_args[i]];
    view_inputs[i] = node->inputs[loc];
    view_shapes[i] = ctx->in_shapes[loc];
    view_dtypes[i] = ctx->in_dtypes[loc];
    view_grads[i] = DS_GRAD_NONE;
  }
  DsGraph *func = node->subgraphs[1];
  DsNode view = *node;
  view.param = &as_foreach;
  view.inputs = view_inputs;
  view.n_inputs = (guint)n_args;
  view.subgraphs = &func;
  view.n_subgraphs = 1;
  DsGradCtx view_ctx = *ctx;
  view_ctx.node = &view;
  view_ctx.in_shapes = view_shapes;
  view_ctx.in_dtypes = view_dtypes;
  if (!ds_grad_foreach(&view_ctx, out_grads, view_grads, error))
    return FALSE;
  /* back to the node's inputs, summed where one feeds several func inputs; an input only cond
   * reads gets none */
  for (int i = 0; i < n_args; i++) {
    int loc = p->func_input_locs[view_args[i]];
    if (ds_grad_is_none(view_grads[i]))
      continue;
    in_grads[loc] = ds_grad_is_none(in_grads[loc])
                        ? view_grads[i]
                        : ds_grad_op2(ctx, "elemwise_add", in_grads[loc], view_grads[i], NULL);
  }
  return TRUE;
}

/* One branch of a _cond differentiated: a graph whose inputs are the branch's own, then its
 * heads' gradients, then any node input the branch does not read (fed for its zeros), and
 * whose outputs are the gradients of every node input, zeros where the branch gives none.
 * `locs` maps branch input a to node input locs[a]; `back_locs` receives the node input
 * feeding each input of the returned graph. NULL with `error` set on failure. */
static DsGraph *branch_backward(DsGradCtx *ctx, const DsGraph *branch, const int *locs,
                                guint n_inputs, guint n_heads, GArray *back_locs, GError **error)
{
  g_autofree DsShape *shapes = g_new(DsShape, MAX(branch->n_arg_nodes, 1u));
  g_autofree DsDType *dtypes = g_new(DsDType, MAX(branch->n_arg_nodes, 1u));
  for (guint a = 0; a < branch->n_arg_nodes; a++) {
    shapes[a] = ctx->in_shapes[locs[a]];
    dtypes[a] = ctx->in_dtypes[locs[a]];
  }
  g_autofree DsHeadGrad *seeds = g_new(DsHeadGrad, MAX(n_heads, 1u));
  for (guint h = 0; h < n_heads; h++)
    seeds[h] = DS_HEAD_GRAD_GIVEN;
  DsBackward *backward = ctx->backward_subgraph(ctx, branch, shapes, dtypes, seeds, error);
  if (backward == NULL)
    return NULL;
  DsGraph *bb = g_steal_pointer(&backward->graph);
  g_clear_pointer(&bb->head_names, g_strfreev);
  /* each node input's gradient: summed where it feeds several branch inputs */
  g_autofree DsEntry *grad = g_new(DsEntry, MAX(n_inputs, 1u));
  g_autofree int *var_of = g_new(int, MAX(n_inputs, 1u)); /* a graph input holding it */
  for (guint k = 0; k < n_inputs; k++) {
    grad[k] = DS_GRAD_NONE;
    var_of[k] = -1;
  }
  for (guint a = 0; a < branch->n_arg_nodes; a++)
    var_of[locs[a]] = (int)a;
  for (guint i = 0; i < backward->variables->len; i++) {
    int a = arg_position(branch, g_ptr_array_index(backward->variables, i));
    if (a < 0)
      continue;
    DsEntry g = bb->heads[backward->n_forward_heads + i];
    guint k = (guint)locs[a];
    if (ds_grad_is_none(grad[k])) {
      grad[k] = g;
    } else {
      g_autofree char *name = g_strdup_printf("%s_grad_sum", bb->nodes[bb->arg_nodes[a]]->name);
      grad[k] = body_node(bb, name, "elemwise_add", 2, (DsEntry[]){grad[k], g});
    }
  }
  for (guint a = 0; a < branch->n_arg_nodes; a++)
    g_array_append_val(back_locs, locs[a]);
  for (guint h = 0; h < n_heads; h++) {
    if (backward->head_grad_args[h] < 0)
      continue;
    g_assert((guint)backward->head_grad_args[h] == back_locs->len);
    int loc = (int)(n_inputs + h);
    g_array_append_val(back_locs, loc);
  }
  ctx->backward_free(backward);
  GArray *heads = g_array_new(FALSE, FALSE, sizeof(DsEntry));
  for (guint k = 0; k < n_inputs; k++) {
    DsEntry g = grad[k];
    if (ds_grad_is_none(g)) {
      if (var_of[k] < 0) {
        g_autofree char *name = g_strdup_printf("input%u", k);
        var_of[k] = (int)add_body_variable(bb, name);
        int loc = (int)k;
        g_array_append_val(back_locs, loc);
      }
      g_autofree char *name = g_strdup_printf("input%u_grad_zeros", k);
      g = body_node(bb, name, "zeros_like", 1, &(DsEntry){bb->arg_nodes[var_of[k]], 0, 0});
    }
    g_array_append_val(heads, g);
  }
  g_free(bb->heads);
  bb->n_heads = heads->len;
  bb->heads = (DsEntry *)g_array_free(heads, FALSE);
  return bb;
}

/* _cond: a _cond on the same condition whose branches are the forward branches' backward
 * graphs, each giving the gradient of every node input; so only the branch that ran is
 * differentiated, as MXNet's cond records the branch taken. */
DS_GRAD_FN(ds_grad_cond)
{
  const DsNode *node = ctx->node;
  const DsCondParam *p = node->param;
  guint n_inputs = node->n_inputs, n_heads = (guint)p->num_outputs;
  g_autoptr(GArray) then_locs = g_array_new(FALSE, FALSE, sizeof(int));
  g_autoptr(GArray) else_locs = g_array_new(FALSE, FALSE, sizeof(int));
  DsGraph *then_back = branch_backward(ctx, node->subgraphs[1], p->then_input_locs, n_inputs,
                                       n_heads, then_locs, error);
  if (then_back == NULL) {
    g_prefix_error(error, "the then branch of node '%s' (_cond): ", node->name);
    return FALSE;
  }
  DsGraph *else_back = branch_backward(ctx, node->subgraphs[2], p->else_input_locs, n_inputs,
                                       n_heads, else_locs, error);
  if (else_back == NULL) {
    ds_graph_unref(then_back);
    g_prefix_error(error, "the else branch of node '%s' (_cond): ", node->name);
    return FALSE;
  }
  guint n_back = n_inputs + n_heads;
  g_autofree DsEntry *inputs = g_new(DsEntry, n_back);
  for (guint k = 0; k < n_inputs; k++)
    inputs[k] = ds_grad_input(ctx, k);
  for (guint h = 0; h < n_heads; h++)
    inputs[n_inputs + h] = ds_grad_is_none(out_grads[h])
                               ? ds_grad_op1(ctx, "zeros_like", ds_grad_output(ctx, h), NULL)
                               : out_grads[h];
  g_autofree char *num_args = g_strdup_printf("%u", n_back + 3);
  g_autofree char *num_outputs = g_strdup_printf("%u", n_inputs);
  g_autofree char *cond_locs = locs_text(p->cond_input_locs, p->n_cond_inputs);
  g_autofree char *then_text = locs_text((const int *)then_locs->data, (int)then_locs->len);
  g_autofree char *else_text = locs_text((const int *)else_locs->data, (int)else_locs->len);
  DsEntry back = ds_grad_op(ctx, "_cond", n_back, inputs, "num_args", num_args, "num_outputs",
                            num_outputs, "cond_input_locs", cond_locs, "then_input_locs",
                            then_text, "else_input_locs", else_text, NULL);
  DsNode *back_node = ctx->graph->nodes[back.node_id];
  back_node->subgraphs = g_new(DsGraph *, 3);
  back_node->subgraphs[0] = ds_graph_ref(node->subgraphs[0]);
  back_node->subgraphs[1] = then_back;
  back_node->subgraphs[2] = else_back;
  back_node->n_subgraphs = 3;
  for (guint k = 0; k < n_inputs; k++)
    in_grads[k] = (DsEntry){back.node_id, k, 0};
  return TRUE;
}

/* _CachedOp (a subgraph run as one op, as Gluon's hybridized blocks export it): another
 * _CachedOp running the subgraph's backward graph, fed the node's inputs and the gradients
 * of its outputs, giving the gradient of every input. */
DS_GRAD_FN(ds_grad_cached_op)
{
  const DsNode *node = ctx->node;
  guint n_inputs = node->n_inputs, n_heads = node->subgraphs[0]->n_heads;
  g_autofree int *locs = g_new(int, MAX(n_inputs, 1u));
  for (guint k = 0; k < n_inputs; k++)
    locs[k] = (int)k;
  g_autoptr(GArray) back_locs = g_array_new(FALSE, FALSE, sizeof(int));
  DsGraph *back = branch_backward(ctx, node->subgraphs[0], locs, n_inputs, n_heads, back_locs,
                                  error);
  if (back == NULL) {
    g_prefix_error(error, "the subgraph of node '%s' (_CachedOp): ", node->name);
    return FALSE;
  }
  /* its inputs in the order of its variables: a node input, or an output's gradient */
  g_autofree DsEntry *inputs = g_new(DsEntry, MAX(back_locs->len, 1u));
  for (guint i = 0; i < back_locs->len; i++) {
    guint at = (guint)g_array_index(back_locs, int, i);
    if (at < n_inputs)
      inputs[i] = ds_grad_input(ctx, at);
    else if (!ds_grad_is_none(out_grads[at - n_inputs]))
      inputs[i] = out_grads[at - n_inputs];
    else
      inputs[i] = ds_grad_op1(ctx, "zeros_like", ds_grad_output(ctx, at - n_inputs), NULL);
  }
  DsEntry e = ds_grad_op(ctx, "_CachedOp", back_locs->len, inputs, NULL);
  DsNode *back_node = ctx->graph->nodes[e.node_id];
  back_node->subgraphs = g_new(DsGraph *, 1);
  back_node->subgraphs[0] = back;
  back_node->n_subgraphs = 1;
  for (guint k = 0; k < n_inputs; k++)
    in_grads[k] = (DsEntry){e.node_id, k, 0};
  return TRUE;
}
