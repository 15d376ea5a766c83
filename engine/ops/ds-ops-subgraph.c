/* ds-ops-subgraph.c: `_CachedOp`, MXNet's default subgraph op: counts, and shape and dtype
 * rules that infer the subgraph it owns.
 *
 * MXNet's default subgraph op (src/operator/subgraph/default_subgraph_property.cc builds it
 * around each region) infers its outputs by running inference on its subgraph with the
 * node's input shapes, and so does this one. Shapes go through the caller's context, so a
 * symbolic inference stays symbolic inside the subgraph: its symbols, facts and guards are
 * the outer graph's.
 */
#include "ds-error.h"
#include "ds-grads.h"
#include "ds-infer.h"
#include "ds-ops-common.h"

/* Inference of the outer graph runs up to 16 passes; so does the nested one per call. */
#define MAX_DTYPE_PASSES 16

static gboolean parse_cached_op(const DsNode *node, void *param, GError **error)
{
  DsCachedOpParam *p = param;
  if (node->n_subgraphs == 0 || node->subgraphs[0] == NULL)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                             "has no subgraph: a subgraph op runs the graph given in its "
                             "\"subgraphs\"");
  const DsGraph *sub = node->subgraphs[0];
  p->n_inputs = 0;
  for (guint i = 0; i < sub->n_nodes; i++)
    p->n_inputs += ds_node_is_variable(sub->nodes[i]);
  p->n_outputs = (int)sub->n_heads;
  if (p->n_outputs == 0)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID, "its subgraph has no outputs");
  return TRUE;
}

static int cached_op_num_inputs(const void *param)
{
  return ((const DsCachedOpParam *)param)->n_inputs;
}

static int cached_op_num_outputs(const void *param)
{
  return ((const DsCachedOpParam *)param)->n_outputs;
}

/* Copies a nested error under the outer node's name, so that the message says where the
 * subgraph sits as well as which of its nodes failed. */
static void prefix_subgraph_error(const DsNode *node, GError **error)
{
  g_prefix_error(error, "node '%s' (%s): in its subgraph: ", node->name, node->op_name);
}

/* Nested inference: the subgraph's variables take the node's input shapes as they are, known
 * or not. The `__shape__` hints a partition wrote on them are left aside: they describe the
 * sizes at partition time, and a later inference with other sizes must not be contradicted by
 * them. Known output shapes are seeded as well:
 * the fixpoint calls this again, and a data-dependent dim made on an earlier call must be
 * found there rather than made afresh. */
static gboolean infer_shape_nested(DsShapeCtx *use, const DsNode *node, DsShape *in, DsShape *out,
                                   GError **error)
{
  const DsGraph *sub = node->subgraphs[0];
  g_autoptr(DsGraphShapes) shapes = ds_graph_shapes_new(sub, error);
  if (shapes == NULL) {
    prefix_subgraph_error(node, error);
    return FALSE;
  }
  char buf[16], what[48];
  int k = 0;
  for (guint i = 0; i < sub->n_nodes; i++) {
    if (!ds_node_is_variable(sub->nodes[i]))
      continue;
    guint e = sub->node_row_ptr[i];
    shapes->shapes[e] = in[k++];
    /* Dtypes are the dtype rule's business; a hint here could only clash with it. */
    shapes->dtypes[e] = DS_DTYPE_UNKNOWN;
  }
  /* A file's node_row_ptr may give the node fewer outputs than the subgraph has heads. */
  guint n_out = MIN(ds_node_n_op_outputs(node), sub->n_heads);
  for (guint h = 0; h < n_out; h++) {
    if (out[h].ndim < 0)
      continue;
    g_snprintf(what, sizeof what, "output %u", h);
    if (!ds_shape_ctx_assign(use, &shapes->shapes[ds_graph_entry_id(sub, sub->heads[h])], &out[h],
                             what, error))
      return FALSE;
  }

  /* The nested driver points the context at its own nodes, then at none: point it back. */
  const DsNode *outer = ds_shape_ctx_get_node(use);
  gboolean ok = ds_infer_subgraph_shapes(sub, shapes, use, error);
  ds_shape_ctx_set_node(use, outer);
  if (!ok) {
    prefix_subgraph_error(node, error);
    return FALSE;
  }

  for (guint h = 0; h < n_out; h++) {
    g_snprintf(what, sizeof what, "output %u", h);
    if (!ds_shape_ctx_assign(use, &out[h], ds_graph_shapes_get(shapes, sub, sub->heads[h]), what,
                             error))
      return FALSE;
  }
  k = 0;
  for (guint i = 0; i < sub->n_nodes; i++) {
    if (!ds_node_is_variable(sub->nodes[i]))
      continue;
    g_snprintf(what, sizeof what, "input '%s'", ds_ops_input_name(node, k, buf));
    if (!ds_shape_ctx_assign(use, &in[k], &shapes->shapes[sub->node_row_ptr[i]], what, error))
      return FALSE;
    k++;
  }
  return TRUE;
}

static gboolean infer_shape_cached_op(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                      DsShape *in, DsShape *out, GError **error)
{
  (void)param;
  if (ctx != NULL)
    return infer_shape_nested(ctx, node, in, out, error);
  /* Op rules may be called without a context; the nested driver needs one. */
  DsShapeCtx *owned = ds_shape_ctx_new();
  ds_shape_ctx_set_node(owned, node);
  gboolean ok = infer_shape_nested(owned, node, in, out, error);
  ds_shape_ctx_free(owned);
  return ok;
}

/* One node's dtype rule on the subgraph's slots; sets *changed. */
static gboolean infer_node_dtype(const DsGraph *sub, const DsNode *n, DsDType *dtypes,
                                 DsDType *in_t, DsDType *out_t, gboolean *changed, GError **error)
{
  guint n_out = ds_node_n_op_outputs(n), base = sub->node_row_ptr[n->id];
  for (guint i = 0; i < n->n_inputs; i++)
    in_t[i] = dtypes[ds_graph_entry_id(sub, n->inputs[i])];
  for (guint i = 0; i < n_out; i++)
    out_t[i] = dtypes[base + i];
  gboolean ok = n->op->infer_type != NULL
                    ? n->op->infer_type(n, n->param, in_t, out_t, error)
                    : ds_ops_unify_dtypes(n, in_t, (int)n->n_inputs, out_t, (int)n_out, error);
  if (!ok)
    return FALSE;
  for (guint i = 0; i < n->n_inputs; i++) {
    guint e = ds_graph_entry_id(sub, n->inputs[i]);
    *changed |= dtypes[e] != in_t[i];
    dtypes[e] = in_t[i];
  }
  for (guint i = 0; i < n_out; i++) {
    *changed |= dtypes[base + i] != out_t[i];
    dtypes[base + i] = out_t[i];
  }
  return TRUE;
}

/* Nested dtype inference of `sub`. It runs
 * the subgraph's dtype rules itself rather than through ds_infer_graph(), which ends by making
 * every variable still unknown float32: inside a subgraph that default would be pushed back
 * onto the node's inputs before the outer graph had a chance to pin them (MXNet applies it
 * once, to the whole graph). Dtype rules do not read shapes, so no shapes are needed. */
gboolean ds_ops_infer_subgraph_dtypes(const DsNode *node, const DsGraph *sub, const char *what,
                                      DsDType *in, DsDType *out, GError **error)
{
  guint n_entries = ds_graph_n_entries(sub), width = 1;
  g_autofree DsDType *dtypes = g_new(DsDType, MAX(n_entries, 1));
  for (guint e = 0; e < n_entries; e++)
    dtypes[e] = DS_DTYPE_UNKNOWN;
  for (guint i = 0, k = 0; i < sub->n_nodes; i++) {
    width = MAX(width, MAX(sub->nodes[i]->n_inputs, sub->nodes[i]->n_outputs));
    if (ds_node_is_variable(sub->nodes[i]))
      dtypes[sub->node_row_ptr[i]] = in[k++];
  }
  char slot[64];
  for (guint h = 0; h < sub->n_heads; h++) {
    g_snprintf(slot, sizeof slot, "%s output %u", what, h);
    if (!ds_ops_assign_dtype(node, &dtypes[ds_graph_entry_id(sub, sub->heads[h])], out[h], slot,
                             error))
      return FALSE;
  }

  g_autofree DsDType *in_t = g_new(DsDType, width), *out_t = g_new(DsDType, width);
  gboolean changed = TRUE;
  for (int pass = 0; changed && pass < MAX_DTYPE_PASSES; pass++) {
    changed = FALSE;
    /* Alternate directions, as the graph driver does: some rules pin inputs from outputs. */
    for (guint k = 0; k < sub->n_nodes; k++) {
      const DsNode *n = sub->nodes[pass % 2 == 0 ? k : sub->n_nodes - 1 - k];
      if (ds_node_is_variable(n) || n->op == NULL)
        continue;
      if (!infer_node_dtype(sub, n, dtypes, in_t, out_t, &changed, error)) {
        g_prefix_error(error, "node '%s' (%s): in its %s: ", node->name, node->op_name, what);
        return FALSE;
      }
    }
  }
  for (guint h = 0; h < sub->n_heads; h++)
    out[h] = dtypes[ds_graph_entry_id(sub, sub->heads[h])];
  for (guint i = 0, k = 0; i < sub->n_nodes; i++)
    if (ds_node_is_variable(sub->nodes[i]))
      in[k++] = dtypes[sub->node_row_ptr[i]];
  return TRUE;
}

static gboolean infer_type_cached_op(const DsNode *node, const void *param, DsDType *in,
                                     DsDType *out, GError **error)
{
  (void)param;
  return ds_ops_infer_subgraph_dtypes(node, node->subgraphs[0], "subgraph", in, out, error);
}

/* ------------------------------------------------------------------------------------------ */
/* Definitions */

static const char *const cached_op_aliases[] = {"_subgraph_op", NULL};

/* Owning the subgraph it runs is what DS_OP_TRAIT_CONTROL_FLOW says; the count of inputs and
 * outputs varies with the subgraph, and the inputs are named arg0, arg1... (the subgraph's
 * variable names would be better, but the names here are one static list per op). */
static const DsOpDef CACHED_OP_def = {
    .id = DS_OP_CACHED_OP,
    .name = "_CachedOp",
    .aliases = cached_op_aliases,
    .traits = DS_OP_TRAIT_CONTROL_FLOW,
    .param_size = sizeof(DsCachedOpParam),
    .parse = parse_cached_op,
    .num_inputs = cached_op_num_inputs,
    .num_outputs = cached_op_num_outputs,
    .num_visible_outputs = cached_op_num_outputs,
    .input_names = NULL,
    .infer_shape = infer_shape_cached_op,
    .infer_type = infer_type_cached_op,
    .grad = ds_grad_cached_op,
};

void ds_ops_subgraph_register(const DsOpDef **table)
{
  DS_OPS_SUBGRAPH(DS_OP_TABLE_ENTRY)
}
