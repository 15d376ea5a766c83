/* ds-grads-control.c: the gradient of `_foreach`, a loop run backwards.
 *
 * The backward pass of `_foreach` is another `_foreach` over the same rows in reverse order
 * (MXNet's foreach backward): its body is the forward body's backward graph, which takes an
 * iteration's inputs and the gradients flowing into its outputs and new states, and gives the
 * gradients of its data rows (stacked), of its states (carried back to the iteration before)
 * and of the free variables (summed over the iterations in carried accumulators).
 *
 * The body's backward graph starts with the forward body itself, so each iteration's forward
 * values are computed again from its inputs: the forward loop keeps only the state each
 * iteration started from, stacked as extra step outputs (ds_grad_foreach_prepare), so the
 * memory kept for the backward pass grows with the states, not with every intermediate of
 * every iteration. */
#include "ds-backward.h"
#include "ds-error.h"
#include "ds-grad.h"
#include "ds-grads.h"

/* The attribute that marks a _foreach rewritten for its backward pass, and how many step
 * outputs it had before. */
#define SAVED_STATES_ATTR "__backward_saved_states__"

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

int ds_grad_foreach_prepare(DsNode *node, GError **error)
{
  DsForeachParam *p = node->param;
  if (ds_node_get_attr(node, SAVED_STATES_ATTR) != NULL)
    return 0;
  g_autoptr(DsGraph) body = ds_graph_copy(node->subgraphs[0], error);
  if (body == NULL)
    return -1;
  /* body heads: step outputs, then the state each iteration starts from, then new states */
  guint n_out = (guint)p->num_out_data, n_states = (guint)p->n_states;
  DsEntry *heads = g_new(DsEntry, body->n_heads + n_states);
  memcpy(heads, body->heads, n_out * sizeof(DsEntry));
  for (guint k = 0; k < n_states; k++)
    heads[n_out + k] = (DsEntry){body->arg_nodes[p->state_locs[k]], 0, 0};
  memcpy(heads + n_out + n_states, body->heads + n_out, n_states * sizeof(DsEntry));
  g_free(body->heads);
  body->heads = heads;
  body->n_heads += n_states;
  g_clear_pointer(&body->head_names, g_strfreev);
  ds_graph_unref(node->subgraphs[0]);
  node->subgraphs[0] = g_steal_pointer(&body);

  set_int_attr(node, SAVED_STATES_ATTR, p->num_out_data);
  set_int_attr(node, "num_out_data", p->num_out_data + p->n_states);
  set_int_attr(node, "num_outputs", p->num_outputs + p->n_states);
  node->n_outputs += n_states;
  if (node->op->free_param != NULL)
    node->op->free_param(node->param);
  memset(node->param, 0, node->op->param_size);
  if (!node->op->parse(node, node->param, error))
    return -1;
  return (int)n_states;
}

/* The shape of one row of `data` (a 1-D array's rows are (1,), as MXNet has it). */
static DsShape row_shape(const DsShape *data)
{
  DsShape row = {.ndim = data->ndim < 0 ? -1 : MAX(data->ndim - 1, 1)};
  if (data->ndim == 1)
    row.dims[0] = ds_dim(1);
  for (int d = 1; d < data->ndim; d++)
    row.dims[d - 1] = data->dims[d];
  return row;
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

DS_GRAD_FN(ds_grad_foreach)
{
  const DsNode *node = ctx->node;
  const DsForeachParam *p = node->param;
  const char *saved = ds_node_get_attr(node, SAVED_STATES_ATTR);
  if (saved == NULL || ctx->backward_subgraph == NULL)
    return ds_grad_fail(ctx, error, "the loop was not prepared for its backward pass");
  const int n_data = p->n_data, n_states = p->n_states, n_remain = p->n_remain;
  const int n_out = (int)g_ascii_strtoll(saved, NULL, 10); /* the model's own step outputs */
  const DsGraph *body = node->subgraphs[0];

  /* the body's inputs as one iteration sees them, and what seeds each of its heads */
  guint n_args = body->n_arg_nodes;
  g_autofree DsShape *shapes = g_new(DsShape, n_args);
  g_autofree DsDType *dtypes = g_new(DsDType, n_args);
  for (int j = 0; j < n_data; j++) {
    shapes[p->data_locs[j]] = row_shape(&ctx->in_shapes[j]);
    dtypes[p->data_locs[j]] = ctx->in_dtypes[j];
  }
  for (int k = 0; k < n_states; k++) {
    shapes[p->state_locs[k]] = ctx->in_shapes[n_data + k];
    dtypes[p->state_locs[k]] = ctx->in_dtypes[n_data + k];
  }
  for (int r = 0; r < n_remain; r++) {
    shapes[p->remain_locs[r]] = ctx->in_shapes[n_data + n_states + r];
    dtypes[p->remain_locs[r]] = ctx->in_dtypes[n_data + n_states + r];
  }
  g_autofree DsHeadGrad *seeds = g_new(DsHeadGrad, body->n_heads);
  for (guint h = 0; h < body->n_heads; h++)
    seeds[h] = (int)h >= n_out && (int)h < n_out + n_states ? DS_HEAD_GRAD_NONE : DS_HEAD_GRAD_GIVEN;
  DsBackward *backward = ctx->backward_subgraph(ctx, body, shapes, dtypes, seeds, error);
  if (backward == NULL) {
    g_prefix_error(error, "the body of node '%s' (_foreach): ", node->name);
    return FALSE;
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
    int a = j < n_data ? p->data_locs[j] : p->state_locs[j - n_data];
    DsEntry g = grad_of[a];
    if (ds_grad_is_none(g)) {
      g_autofree char *name = g_strdup_printf("%s_grad_zeros", bb->nodes[bb->arg_nodes[a]]->name);
      g = body_node(bb, name, "zeros_like", 1, &(DsEntry){bb->arg_nodes[a], 0, 0});
    }
    g_array_append_val(heads, g);
  }
  g_autofree int *acc_pos = g_new(int, MAX(n_remain, 1));
  for (int r = 0; r < n_remain; r++) {
    int a = p->remain_locs[r];
    const char *var = bb->nodes[bb->arg_nodes[a]]->name;
    g_autofree char *acc_name = g_strdup_printf("%s_grad_acc", var);
    acc_pos[r] = (int)add_body_variable(bb, acc_name);
    DsEntry acc = {bb->arg_nodes[acc_pos[r]], 0, 0};
    if (!ds_grad_is_none(grad_of[a])) {
      g_autofree char *sum_name = g_strdup_printf("%s_grad_acc_next", var);
      acc = body_node(bb, sum_name, "elemwise_add", 2, (DsEntry[]){acc, grad_of[a]});
    }
    g_array_append_val(heads, acc);
  }
  g_free(bb->heads);
  bb->n_heads = heads->len;
  bb->heads = (DsEntry *)g_array_free(heads, FALSE);

  /* The backward loop's inputs: rows in reverse (the data, the states each iteration started
   * from, the step outputs' gradients), the carried gradients, the free variables. */
  int n_bdata = n_data + n_states + n_out, n_bstates = n_states + n_remain;
  int n_inputs = n_bdata + n_bstates + n_remain;
  g_autofree DsEntry *inputs = g_new(DsEntry, n_inputs);
  g_autofree int *data_locs = g_new(int, n_bdata);
  g_autofree int *state_locs = g_new(int, n_bstates);
  int i = 0;
  for (int j = 0; j < n_data; j++, i++) {
    inputs[i] = ds_grad_op1(ctx, "reverse", ds_grad_input(ctx, (guint)j), "axis", "0", NULL);
    data_locs[i] = p->data_locs[j];
  }
  for (int k = 0; k < n_states; k++, i++) {
    inputs[i] = ds_grad_op1(ctx, "reverse", ds_grad_output(ctx, (guint)(n_out + k)), "axis", "0",
                            NULL);
    data_locs[i] = p->state_locs[k];
  }
  for (int o = 0; o < n_out; o++, i++) {
    DsEntry g = ds_grad_is_none(out_grads[o])
                    ? ds_grad_op1(ctx, "zeros_like", ds_grad_output(ctx, (guint)o), NULL)
                    : out_grads[o];
    inputs[i] = ds_grad_op1(ctx, "reverse", g, "axis", "0", NULL);
    data_locs[i] = seed_pos[o];
  }
  for (int k = 0; k < n_states; k++, i++) {
    guint out = (guint)(p->num_out_data + k);
    inputs[i] = ds_grad_is_none(out_grads[out])
                    ? ds_grad_op1(ctx, "zeros_like", ds_grad_output(ctx, out), NULL)
                    : out_grads[out];
    state_locs[k] = seed_pos[n_out + n_states + k];
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
  g_autofree char *remain_locs = locs_text(p->remain_locs, n_remain);
  DsEntry loop = ds_grad_op(ctx, "_foreach", (guint)n_inputs, inputs, "num_args", num_args,
                            "num_outputs", num_outputs, "num_out_data", num_out_data,
                            "in_data_locs", in_data_locs, "in_state_locs", in_state_locs,
                            "remain_locs", remain_locs, NULL);
  DsNode *loop_node = ctx->graph->nodes[loop.node_id];
  loop_node->subgraphs = g_new(DsGraph *, 1);
  loop_node->subgraphs[0] = bb;
  loop_node->n_subgraphs = 1;

  for (int j = 0; j < n_data; j++)
    in_grads[j] = ds_grad_op1(ctx, "reverse", (DsEntry){loop.node_id, (guint)j, 0}, "axis", "0",
                              NULL);
  for (int k = 0; k < n_states; k++)
    in_grads[n_data + k] = (DsEntry){loop.node_id, (guint)(n_data + k), 0};
  for (int r = 0; r < n_remain; r++)
    in_grads[n_data + n_states + r] = (DsEntry){loop.node_id, (guint)(n_data + n_states + r), 0};
  return TRUE;
}
