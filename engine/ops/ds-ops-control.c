/* ds-ops-control.c: MXNet's control-flow ops `_foreach`, `_while_loop` and `_cond`: attributes,
 * and shape and dtype rules that infer the subgraphs they own.
 *
 * Names, attributes and rules follow MXNet 1.x (src/operator/control_flow.cc; the attributes
 * are the ones python/mxnet/symbol/contrib.py writes). As for `_CachedOp` (ds-ops-subgraph.c),
 * a subgraph's shapes come from a nested ds_infer_subgraph_shapes() in the caller's context, so a
 * symbolic inference stays symbolic inside it, and its dtypes from the subgraph's own rules,
 * without the graph driver's float32 default. Each rule maps the node's shapes onto a
 * subgraph's inputs and heads through the locs (ds-ops-control.h), infers the subgraph, checks
 * what the op requires (a loop keeps its states' shapes, a cond's branches agree) and maps the
 * results back onto the node's inputs and outputs.
 */
#include <string.h>

#include "ds-attr.h"
#include "ds-error.h"
#include "ds-expr.h"
#include "ds-grads.h"
#include "ds-infer.h"
#include "ds-ops-common.h"

/* num_args and num_outputs beyond this cannot match any subgraph a loc list can feed; the bound
 * only keeps the arithmetic on them far from overflow. */
#define MAX_COUNT (1 << 20)

/* ------------------------------------------------------------------------------------------ */
/* Subgraphs and attributes */

static int count_variables(const DsGraph *g)
{
  int n = 0;
  for (guint i = 0; i < g->n_nodes; i++)
    n += ds_node_is_variable(g->nodes[i]);
  return n;
}

/* Input `k` of a subgraph (its k-th variable node): its name, for messages. */
static const char *variable_name(const DsGraph *g, int k)
{
  for (guint i = 0; i < g->n_nodes; i++)
    if (ds_node_is_variable(g->nodes[i]) && k-- == 0)
      return g->nodes[i]->name;
  return "?";
}

static gboolean require_subgraphs(const DsNode *node, guint n, const char *which, GError **error)
{
  if (node->n_subgraphs != n)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                             "has %u subgraphs in its \"subgraphs\", but needs %u (%s)",
                             node->n_subgraphs, n, which);
  for (guint i = 0; i < n; i++)
    if (node->subgraphs[i] == NULL)
      return ds_ops_node_error(node, error, DS_ERROR_INVALID, "subgraph %u is missing", i);
  return TRUE;
}

/* A required count attribute, at least `min`. */
static gboolean attr_count(const DsNode *node, const char *key, int min, int *out, GError **error)
{
  int64_t v;
  if (!ds_ops_attr_require(node, key, error) ||
      !ds_ops_attr_int_range(node, key, 0, min, MAX_COUNT, &v, error))
    return FALSE;
  *out = (int)v;
  return TRUE;
}

/* A required tuple of positions, each in [0, limit), of any length: `*locs` gets a new array
 * (the param owns it, free_param frees it) and `*n` its length. `among` says what the positions
 * index ("the node's 3 inputs"). */
static gboolean attr_locs(const DsNode *node, const char *key, int limit, const char *among,
                          int **locs, int *n, GError **error)
{
  if (!ds_ops_attr_require(node, key, error))
    return FALSE;
  /* Each value takes a digit and a separator, so this many can hold the whole tuple. */
  int most = (int)MIN(strlen(ds_node_get_attr(node, key)) / 2 + 1, (gsize)MAX_COUNT);
  g_autofree int64_t *v = g_new(int64_t, most);
  if (!ds_node_attr_tuple(node, key, v, most, n, error))
    return FALSE;
  if (*n < 0)
    return ds_ops_attr_invalid(node, key, "must be a tuple of positions", error);
  *locs = g_new(int, MAX(*n, 1));
  for (int i = 0; i < *n; i++) {
    if (v[i] < 0 || v[i] >= limit)
      return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                               "attribute %s=%s: entry %d is %" G_GINT64_FORMAT
                               ", not a position among %s",
                               key, ds_node_get_attr(node, key), i, v[i], among);
    (*locs)[i] = (int)v[i];
  }
  return TRUE;
}

/* A loc list must feed each of its subgraph's inputs: one entry per variable. */
static gboolean check_feeds(const DsNode *node, const char *key, int n, const DsGraph *sub,
                            const char *sub_name, GError **error)
{
  int n_vars = count_variables(sub);
  if (n == n_vars)
    return TRUE;
  return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                           "attribute %s lists %d inputs, but %s has %d (its variables)", key, n,
                           sub_name, n_vars);
}

static gboolean check_heads(const DsNode *node, const DsGraph *sub, const char *sub_name, int want,
                            GError **error)
{
  if ((int)sub->n_heads == want)
    return TRUE;
  return ds_ops_node_error(node, error, DS_ERROR_INVALID, "%s has %u outputs, but %d are expected",
                           sub_name, sub->n_heads, want);
}

/* ------------------------------------------------------------------------------------------ */
/* Nested inference */

/* Nested shape inference of `sub`, the node's subgraph called `what` ("body", "cond"...). `in`
 * holds its inputs' shapes (its variables in node order) and `out` its heads'; known heads are
 * given to the subgraph too, for the rules that run backwards. Both come back refined. As for
 * _CachedOp, `__shape__` hints on the subgraph's variables are left aside: MXNet's nested
 * inference does not read them either, and the node's inputs are what the subgraph gets. */
static gboolean infer_sub_shapes(DsShapeCtx *ctx, const DsNode *node, const DsGraph *sub,
                                 const char *what, DsShape *in, DsShape *out, GError **error)
{
  g_autoptr(DsGraphShapes) shapes = ds_graph_shapes_new(sub, error);
  if (shapes == NULL) {
    g_prefix_error(error, "node '%s' (%s): in its %s: ", node->name, node->op_name, what);
    return FALSE;
  }
  for (guint i = 0, k = 0; i < sub->n_nodes; i++) {
    if (!ds_node_is_variable(sub->nodes[i]))
      continue;
    shapes->shapes[sub->node_row_ptr[i]] = in[k++];
    /* Dtypes are the dtype rule's business; a hint here could only clash with it. */
    shapes->dtypes[sub->node_row_ptr[i]] = DS_DTYPE_UNKNOWN;
  }
  char slot[64];
  for (guint h = 0; h < sub->n_heads; h++) {
    g_snprintf(slot, sizeof slot, "%s output %u", what, h);
    if (!ds_shape_ctx_assign(ctx, &shapes->shapes[ds_graph_entry_id(sub, sub->heads[h])], &out[h],
                             slot, error))
      return FALSE;
  }

  /* The nested driver points the context at its own nodes, then at none: point it back. */
  const DsNode *outer = ds_shape_ctx_get_node(ctx);
  gboolean ok = ds_infer_subgraph_shapes(sub, shapes, ctx, error);
  ds_shape_ctx_set_node(ctx, outer);
  if (!ok) {
    g_prefix_error(error, "node '%s' (%s): in its %s: ", node->name, node->op_name, what);
    return FALSE;
  }
  /* The nested run started from these slots and only refined them: take its results. */
  for (guint h = 0; h < sub->n_heads; h++)
    out[h] = *ds_graph_shapes_get(shapes, sub, sub->heads[h]);
  for (guint i = 0, k = 0; i < sub->n_nodes; i++)
    if (ds_node_is_variable(sub->nodes[i]))
      in[k++] = shapes->shapes[sub->node_row_ptr[i]];
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* Shape and dtype helpers */

static DsShape *new_unknown_shapes(int n)
{
  DsShape *s = g_new(DsShape, MAX(n, 1));
  for (int i = 0; i < n; i++)
    s[i] = DS_SHAPE_UNKNOWN;
  return s;
}

static DsDType *new_unknown_dtypes(int n)
{
  DsDType *t = g_new(DsDType, MAX(n, 1));
  for (int i = 0; i < n; i++)
    t[i] = DS_DTYPE_UNKNOWN;
  return t;
}

/* Two dims the facts show equal: the same constant or the same (hash-consed) expression. */
static gboolean same_dim(DsDim a, DsDim b)
{
  return a.expr == b.expr && a.value == b.value && ds_dim_is_known(a);
}

/* Whether two known shapes differ in rank or in a dim both know. */
static gboolean shapes_differ(const DsShape *t, const DsShape *e)
{
  if (t->ndim != e->ndim)
    return TRUE;
  for (int d = 0; d < t->ndim; d++)
    if (ds_dim_is_known(t->dims[d]) && ds_dim_is_known(e->dims[d]) &&
        !same_dim(t->dims[d], e->dims[d]))
      return TRUE;
  return FALSE;
}

/* A shape without its axis 0 (unknown when the rank is, or there is no axis 0). */
static DsShape drop_lead(const DsShape *s)
{
  if (s->ndim < 1)
    return DS_SHAPE_UNKNOWN;
  DsShape r = {.ndim = s->ndim - 1};
  memcpy(r.dims, s->dims + 1, sizeof(DsDim) * (gsize)r.ndim);
  return r;
}

/* `lead` in front of `row`: a stacked output's shape. */
static gboolean stack_shape(DsShapeCtx *ctx, DsDim lead, const DsShape *row, const char *what,
                            DsShape *out, GError **error)
{
  if (row->ndim + 1 > DS_MAX_NDIM) {
    g_autofree char *s = ds_shape_to_string(row);
    ds_shape_ctx_set_error(ctx, error, "%s would stack rows of shape %s into more than %d dims",
                           what, s, DS_MAX_NDIM);
    return FALSE;
  }
  out->ndim = row->ndim + 1;
  out->dims[0] = lead;
  memcpy(out->dims + 1, row->dims, sizeof(DsDim) * (gsize)row->ndim);
  return TRUE;
}

/* Unifies a loop-carried value's shape: its initial shape `initial` (updated), what the
 * subgraph's input for it became, and `next`, the shape `who` gives its next value ("the
 * body's new value"). Another shape is the error, naming the value (`what`: "state 0 ('h')")
 * and both shapes. */
static gboolean unify_carried_shape(DsShapeCtx *ctx, DsShape *initial, const DsShape *as_input,
                                    const DsShape *next, const char *what, const char *who,
                                    GError **error)
{
  DsShape merged = *initial;
  GError *local = NULL;
  if (ds_shape_ctx_assign(ctx, &merged, as_input, what, &local) &&
      ds_shape_ctx_assign(ctx, &merged, next, what, &local)) {
    *initial = merged;
    return TRUE;
  }
  g_clear_error(&local);
  g_autofree char *sn = ds_shape_to_string(next);
  g_autofree char *si = ds_shape_to_string(initial);
  ds_shape_ctx_set_error(ctx, error,
                         "%s: %s has shape %s, but the initial value has %s (a loop-carried "
                         "value must keep its shape)",
                         what, who, sn, si);
  return FALSE;
}

/* The same for dtypes. */
static gboolean unify_carried_dtype(const DsNode *node, DsDType *initial, DsDType as_input,
                                    DsDType next, const char *what, const char *who, GError **error)
{
  /* The subgraph's input started from the initial dtype, so the two never disagree. */
  DsDType merged = *initial != DS_DTYPE_UNKNOWN ? *initial : as_input;
  if (next != DS_DTYPE_UNKNOWN && merged != DS_DTYPE_UNKNOWN && next != merged)
    return ds_ops_node_error(node, error, DS_ERROR_SHAPE,
                             "%s: %s has dtype %s, but the initial value has %s (a "
                             "loop-carried value must keep its dtype)",
                             what, who, ds_dtype_name(next), ds_dtype_name(merged));
  *initial = merged != DS_DTYPE_UNKNOWN ? merged : next;
  return TRUE;
}

/* Writes a subgraph's inferred input shapes back to the node inputs they came from. */
static gboolean shapes_back(DsShapeCtx *ctx, const DsGraph *sub, const char *sub_name,
                            const int *locs, int n, const DsShape *sub_in, DsShape *in,
                            GError **error)
{
  char what[160];
  for (int i = 0; i < n; i++) {
    g_snprintf(what, sizeof what, "input %d (%s input '%s')", locs[i], sub_name,
               variable_name(sub, i));
    if (!ds_ops_assign_shape(ctx, &in[locs[i]], &sub_in[i], what, error))
      return FALSE;
  }
  return TRUE;
}

static gboolean dtypes_back(const DsNode *node, const DsGraph *sub, const char *sub_name,
                            const int *locs, int n, const DsDType *sub_in, DsDType *in,
                            GError **error)
{
  char what[160];
  for (int i = 0; i < n; i++) {
    g_snprintf(what, sizeof what, "input %d (%s input '%s')", locs[i], sub_name,
               variable_name(sub, i));
    if (!ds_ops_assign_dtype(node, &in[locs[i]], sub_in[i], what, error))
      return FALSE;
  }
  return TRUE;
}

/* The condition subgraph (of _while_loop and _cond): inputs gathered through `locs`, inferred,
 * written back; its output must hold one value. Its dtype may be any: nonzero is true. */
static gboolean infer_cond_shapes(DsShapeCtx *ctx, const DsNode *node, const int *locs, int n,
                                  DsShape *in, gboolean *explained, GError **error)
{
  const DsGraph *cond = node->subgraphs[0];
  g_autofree DsShape *sub_in = new_unknown_shapes(n);
  for (int i = 0; i < n; i++)
    sub_in[i] = in[locs[i]];
  DsShape result = DS_SHAPE_UNKNOWN;
  *explained = FALSE;
  if (!infer_sub_shapes(ctx, node, cond, "cond", sub_in, &result, error))
    return FALSE;
  *explained = TRUE;
  for (int d = 0; d < result.ndim; d++) {
    if (ds_dim_is_const(result.dims[d]) && result.dims[d].value != 1) {
      g_autofree char *s = ds_shape_to_string(&result);
      ds_shape_ctx_set_error(ctx, error,
                             "cond's output has shape %s, but must hold one value (shape (1,) or "
                             "())",
                             s);
      return FALSE;
    }
  }
  return shapes_back(ctx, cond, "cond", locs, n, sub_in, in, error);
}

static gboolean infer_cond_dtypes(const DsNode *node, const int *locs, int n, DsDType *in,
                                  gboolean *explained, GError **error)
{
  const DsGraph *cond = node->subgraphs[0];
  g_autofree DsDType *sub_in = new_unknown_dtypes(n);
  for (int i = 0; i < n; i++)
    sub_in[i] = in[locs[i]];
  DsDType result = DS_DTYPE_UNKNOWN;
  *explained = FALSE;
  if (!ds_ops_infer_subgraph_dtypes(node, cond, "cond", sub_in, &result, error))
    return FALSE;
  *explained = TRUE;
  return dtypes_back(node, cond, "cond", locs, n, sub_in, in, error);
}

/* One attempt at a node's rule. With `seed`, the subgraphs' heads start from what the node's
 * outputs already know; *explained is set when a failure comes from the op's own checks,
 * whose messages name the state or branch at fault. */
typedef gboolean (*ShapeAttempt)(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                 DsShape *in, DsShape *out, gboolean seed, gboolean *explained,
                                 GError **error);
typedef gboolean (*DTypeAttempt)(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                                 gboolean seed, gboolean *explained, GError **error);

/* Runs `attempt` seeded. A seeded head that the subgraph contradicts fails inside the
 * subgraph, at whichever op notices first; when that happens, an unseeded attempt on copies
 * usually reaches the op's own checks instead, and its message replaces the first one. Only the
 * message: the first failure stands either way. The driver's `out` may also be shorter than
 * the subgraphs' heads (a file's node_row_ptr), so the attempts see a full-length copy. */
static gboolean run_shape_attempts(ShapeAttempt attempt, DsShapeCtx *ctx, const DsNode *node,
                                   const void *param, DsShape *in, DsShape *out, GError **error)
{
  DsShapeCtx *owned = NULL;
  if (ctx == NULL) {
    /* Op rules may be called without a context; the nested driver needs one. */
    owned = ctx = ds_shape_ctx_new();
    ds_shape_ctx_set_node(ctx, node);
  }
  int n_in = (int)node->n_inputs, n_all = node->op->num_outputs(param);
  int n_out = MIN((int)ds_node_n_op_outputs(node), n_all);
  g_autofree DsShape *all = new_unknown_shapes(n_all);
  memcpy(all, out, sizeof(DsShape) * (gsize)MAX(n_out, 0));
  g_autofree DsShape *in0 = new_unknown_shapes(n_in), *all0 = new_unknown_shapes(n_all);
  memcpy(in0, in, sizeof(DsShape) * (gsize)MAX(n_in, 0));
  memcpy(all0, all, sizeof(DsShape) * (gsize)MAX(n_all, 0));

  gboolean explained = FALSE;
  gboolean ok = attempt(ctx, node, param, in, all, TRUE, &explained, error);
  if (ok) {
    memcpy(out, all, sizeof(DsShape) * (gsize)MAX(n_out, 0));
  } else if (!explained) {
    GError *local = NULL;
    if (!attempt(ctx, node, param, in0, all0, FALSE, &explained, &local) && explained) {
      g_clear_error(error);
      g_propagate_error(error, local);
    } else {
      g_clear_error(&local);
    }
  }
  ds_shape_ctx_free(owned);
  return ok;
}

static gboolean run_dtype_attempts(DTypeAttempt attempt, const DsNode *node, const void *param,
                                   DsDType *in, DsDType *out, GError **error)
{
  int n_in = (int)node->n_inputs, n_all = node->op->num_outputs(param);
  int n_out = MIN((int)ds_node_n_op_outputs(node), n_all);
  g_autofree DsDType *all = new_unknown_dtypes(n_all);
  memcpy(all, out, sizeof(DsDType) * (gsize)MAX(n_out, 0));
  g_autofree DsDType *in0 = new_unknown_dtypes(n_in), *all0 = new_unknown_dtypes(n_all);
  memcpy(in0, in, sizeof(DsDType) * (gsize)MAX(n_in, 0));
  memcpy(all0, all, sizeof(DsDType) * (gsize)MAX(n_all, 0));

  gboolean explained = FALSE;
  gboolean ok = attempt(node, param, in, all, TRUE, &explained, error);
  if (ok) {
    memcpy(out, all, sizeof(DsDType) * (gsize)MAX(n_out, 0));
  } else if (!explained) {
    GError *local = NULL;
    if (!attempt(node, param, in0, all0, FALSE, &explained, &local) && explained) {
      g_clear_error(error);
      g_propagate_error(error, local);
    } else {
      g_clear_error(&local);
    }
  }
  return ok;
}

/* ------------------------------------------------------------------------------------------ */
/* _foreach */

static gboolean parse_foreach(const DsNode *node, void *param, GError **error)
{
  DsForeachParam *p = param;
  if (!require_subgraphs(node, 1, "the body", error))
    return FALSE;
  const DsGraph *body = node->subgraphs[0];
  int n_body = count_variables(body);
  g_autofree char *among = g_strdup_printf("the body's %d inputs", n_body);
  /* remain_locs is required too: the files of MXNet 1.3, which lacked it, fed the body in
   * another order. */
  if (!attr_count(node, "num_args", 1, &p->num_args, error) ||
      !attr_count(node, "num_outputs", 1, &p->num_outputs, error) ||
      !attr_count(node, "num_out_data", 0, &p->num_out_data, error) ||
      !attr_locs(node, "in_data_locs", n_body, among, &p->data_locs, &p->n_data, error) ||
      !attr_locs(node, "in_state_locs", n_body, among, &p->state_locs, &p->n_states, error) ||
      !attr_locs(node, "remain_locs", n_body, among, &p->remain_locs, &p->n_remain, error))
    return FALSE;
  gboolean reverse = FALSE;
  int64_t keep_every = 1, keep_from = p->num_out_data;
  if (!ds_node_attr_bool(node, "reverse", FALSE, &reverse, error) ||
      !ds_ops_attr_int_range(node, "keep_every", 1, 1, G_MAXINT32, &keep_every, error) ||
      !ds_ops_attr_int_range(node, "keep_from", p->num_out_data, 0, p->num_out_data, &keep_from,
                             error))
    return FALSE;
  p->reverse = reverse;
  p->keep_every = (int)keep_every;
  p->keep_from = (int)keep_from;
  if (reverse && keep_every > 1)
    return ds_ops_attr_invalid(node, "keep_every", "a reversed loop keeps every row", error);
  if (p->n_data == 0)
    return ds_ops_attr_invalid(node, "in_data_locs",
                               "foreach needs at least one data array to iterate over", error);
  int n_in = p->n_data + p->n_states + p->n_remain;
  if (p->num_args != n_in + 1)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                             "attribute num_args=%d, but in_data_locs, in_state_locs and "
                             "remain_locs list %d inputs (num_args counts the body as well)",
                             p->num_args, n_in);
  if (n_in != n_body)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                             "in_data_locs, in_state_locs and remain_locs list %d inputs, but the "
                             "body has %d (its variables)",
                             n_in, n_body);
  /* Together the lists are a permutation of the body's inputs: each is fed exactly once. */
  g_autofree gboolean *fed = g_new0(gboolean, MAX(n_body, 1));
  const int *lists[] = {p->data_locs, p->state_locs, p->remain_locs};
  const int counts[] = {p->n_data, p->n_states, p->n_remain};
  for (int l = 0; l < 3; l++) {
    for (int i = 0; i < counts[l]; i++) {
      int loc = lists[l][i];
      if (fed[loc])
        return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                                 "body input %d ('%s') is listed twice in in_data_locs, "
                                 "in_state_locs and remain_locs",
                                 loc, variable_name(body, loc));
      fed[loc] = TRUE;
    }
  }
  if (!check_heads(node, body, "the body", p->num_outputs, error))
    return FALSE;
  if (p->num_out_data > p->num_outputs)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                             "attribute num_out_data=%d exceeds num_outputs=%d", p->num_out_data,
                             p->num_outputs);
  if (p->num_outputs - p->num_out_data != p->n_states)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                             "the body gives %d new states (num_outputs - num_out_data), but "
                             "in_state_locs lists %d states",
                             p->num_outputs - p->num_out_data, p->n_states);
  return TRUE;
}

static int foreach_num_inputs(const void *param)
{
  return ((const DsForeachParam *)param)->num_args - 1;
}

static int foreach_num_outputs(const void *param)
{
  return ((const DsForeachParam *)param)->num_outputs;
}

/* The trip count T: axis 0 of every data array and of every stacked output. */
static gboolean foreach_trip_count(DsShapeCtx *ctx, const DsForeachParam *p, const DsShape *in,
                                   const DsShape *out, DsDim *len, GError **error)
{
  *len = DS_DIM_UNKNOWN;
  char what[64];
  for (int j = 0; j < p->num_out_data + p->n_data; j++) {
    if (j >= p->n_data && j - p->n_data >= p->keep_from && p->keep_every > 1)
      continue; /* kept every keep_every-th row: its length is not the trip count */
    const DsShape *s = j < p->n_data ? &in[j] : &out[j - p->n_data];
    if (j < p->n_data)
      g_snprintf(what, sizeof what, "data array %d", j);
    else
      g_snprintf(what, sizeof what, "stacked output %d", j - p->n_data);
    if (s->ndim == 0 && j < p->n_data) {
      ds_shape_ctx_set_error(ctx, error, "%s has shape (): foreach iterates over axis 0", what);
      return FALSE;
    }
    if (s->ndim < 1)
      continue;
    DsDim before = *len;
    GError *local = NULL;
    if (!ds_shape_ctx_unify_dim(ctx, len, s->dims[0], what, &local)) {
      g_clear_error(&local);
      g_autofree char *a = ds_dim_to_string(s->dims[0]), *b = ds_dim_to_string(before);
      ds_shape_ctx_set_error(ctx, error,
                             "the data arrays and stacked outputs must share axis 0 (the trip "
                             "count), but %s has %s where the others give %s",
                             what, a, b);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean foreach_shape_attempt(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                      DsShape *in, DsShape *out, gboolean seed, gboolean *explained,
                                      GError **error)
{
  const DsForeachParam *p = param;
  const DsGraph *body = node->subgraphs[0];
  int n_body = p->n_data + p->n_states + p->n_remain, nod = p->num_out_data;
  int first_state = p->n_data, first_remain = p->n_data + p->n_states;
  char what[160];
  *explained = TRUE;

  DsDim len;
  if (!foreach_trip_count(ctx, p, in, out, &len, error))
    return FALSE;
  /* A final state has its initial state's shape: what the outputs know goes to the inputs. */
  for (int k = 0; k < p->n_states; k++) {
    g_snprintf(what, sizeof what, "state %d ('%s')", k, variable_name(body, p->state_locs[k]));
    DsShape initial = in[first_state + k];
    if (!unify_carried_shape(ctx, &in[first_state + k], &initial, &out[nod + k], what,
                             "the final value (a node output)", error))
      return FALSE;
  }
  g_autofree DsShape *b_in = new_unknown_shapes(n_body);
  g_autofree DsShape *b_out = new_unknown_shapes(p->num_outputs);
  for (int j = 0; j < p->n_data; j++)
    b_in[p->data_locs[j]] = ds_ops_foreach_row_shape(&in[j]);
  for (int k = 0; k < p->n_states; k++)
    b_in[p->state_locs[k]] = in[first_state + k];
  for (int r = 0; r < p->n_remain; r++)
    b_in[p->remain_locs[r]] = in[first_remain + r];
  if (seed) {
    for (int o = 0; o < nod; o++)
      b_out[o] = drop_lead(&out[o]);
    for (int k = 0; k < p->n_states; k++)
      b_out[nod + k] = in[first_state + k];
  }

  *explained = FALSE;
  if (!infer_sub_shapes(ctx, node, body, "body", b_in, b_out, error))
    return FALSE;
  *explained = TRUE;

  for (int k = 0; k < p->n_states; k++) {
    g_snprintf(what, sizeof what, "state %d ('%s')", k, variable_name(body, p->state_locs[k]));
    if (!unify_carried_shape(ctx, &in[first_state + k], &b_in[p->state_locs[k]], &b_out[nod + k],
                             what, "the body's new value", error))
      return FALSE;
    g_snprintf(what, sizeof what, "final state %d", k);
    if (!ds_ops_assign_shape(ctx, &out[nod + k], &in[first_state + k], what, error))
      return FALSE;
  }
  for (int o = 0; o < nod; o++) {
    if (b_out[o].ndim < 0)
      continue;
    DsShape want;
    g_snprintf(what, sizeof what, "stacked output %d", o);
    DsDim rows = o >= p->keep_from && p->keep_every > 1
                     ? ds_dim_ceildiv(ctx, len, ds_dim(p->keep_every))
                     : len;
    if (!stack_shape(ctx, rows, &b_out[o], what, &want, error) ||
        !ds_ops_assign_shape(ctx, &out[o], &want, what, error))
      return FALSE;
  }
  for (int j = 0; j < p->n_data; j++) {
    const DsShape *row = &b_in[p->data_locs[j]];
    g_snprintf(what, sizeof what, "data array %d", j);
    if (in[j].ndim == 1 || row->ndim < 0) {
      /* Only the length comes back: a 1-D array's rows are (1,) whatever its length. */
      if (in[j].ndim >= 1 && !ds_shape_ctx_unify_dim(ctx, &in[j].dims[0], len, what, error))
        return FALSE;
      continue;
    }
    DsShape want;
    if (!stack_shape(ctx, len, row, what, &want, error) ||
        !ds_ops_assign_shape(ctx, &in[j], &want, what, error))
      return FALSE;
  }
  for (int r = 0; r < p->n_remain; r++) {
    g_snprintf(what, sizeof what, "free variable %d ('%s')", r,
               variable_name(body, p->remain_locs[r]));
    if (!ds_ops_assign_shape(ctx, &in[first_remain + r], &b_in[p->remain_locs[r]], what, error))
      return FALSE;
  }
  return TRUE;
}

static gboolean infer_shape_foreach(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                    DsShape *in, DsShape *out, GError **error)
{
  return run_shape_attempts(foreach_shape_attempt, ctx, node, param, in, out, error);
}

/* MXNet's ForeachType: the body's dtypes; a row has its array's dtype, a stacked output its
 * body output's. */
static gboolean foreach_dtype_attempt(const DsNode *node, const void *param, DsDType *in,
                                      DsDType *out, gboolean seed, gboolean *explained,
                                      GError **error)
{
  const DsForeachParam *p = param;
  const DsGraph *body = node->subgraphs[0];
  int n_body = p->n_data + p->n_states + p->n_remain, nod = p->num_out_data;
  int first_state = p->n_data, first_remain = p->n_data + p->n_states;
  char what[160];
  *explained = TRUE;

  for (int k = 0; k < p->n_states; k++) {
    g_snprintf(what, sizeof what, "state %d ('%s')", k, variable_name(body, p->state_locs[k]));
    if (!unify_carried_dtype(node, &in[first_state + k], in[first_state + k], out[nod + k], what,
                             "the final value (a node output)", error))
      return FALSE;
  }
  g_autofree DsDType *b_in = new_unknown_dtypes(n_body);
  g_autofree DsDType *b_out = new_unknown_dtypes(p->num_outputs);
  for (int j = 0; j < p->n_data; j++)
    b_in[p->data_locs[j]] = in[j];
  for (int k = 0; k < p->n_states; k++)
    b_in[p->state_locs[k]] = in[first_state + k];
  for (int r = 0; r < p->n_remain; r++)
    b_in[p->remain_locs[r]] = in[first_remain + r];
  if (seed) {
    for (int o = 0; o < nod; o++)
      b_out[o] = out[o];
    for (int k = 0; k < p->n_states; k++)
      b_out[nod + k] = in[first_state + k];
  }

  *explained = FALSE;
  if (!ds_ops_infer_subgraph_dtypes(node, body, "body", b_in, b_out, error))
    return FALSE;
  *explained = TRUE;

  for (int k = 0; k < p->n_states; k++) {
    g_snprintf(what, sizeof what, "state %d ('%s')", k, variable_name(body, p->state_locs[k]));
    if (!unify_carried_dtype(node, &in[first_state + k], b_in[p->state_locs[k]], b_out[nod + k],
                             what, "the body's new value", error))
      return FALSE;
    b_out[nod + k] = in[first_state + k];
  }
  for (int o = 0; o < p->num_outputs; o++) {
    g_snprintf(what, sizeof what, "output %d", o);
    if (!ds_ops_assign_dtype(node, &out[o], b_out[o], what, error))
      return FALSE;
  }
  for (int j = 0; j < p->n_data; j++) {
    g_snprintf(what, sizeof what, "data array %d", j);
    if (!ds_ops_assign_dtype(node, &in[j], b_in[p->data_locs[j]], what, error))
      return FALSE;
  }
  for (int r = 0; r < p->n_remain; r++) {
    g_snprintf(what, sizeof what, "free variable %d", r);
    if (!ds_ops_assign_dtype(node, &in[first_remain + r], b_in[p->remain_locs[r]], what, error))
      return FALSE;
  }
  return TRUE;
}

static gboolean infer_type_foreach(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                                   GError **error)
{
  return run_dtype_attempts(foreach_dtype_attempt, node, param, in, out, error);
}

/* ------------------------------------------------------------------------------------------ */
/* _while_loop */

static gboolean parse_while_loop(const DsNode *node, void *param, GError **error)
{
  DsWhileLoopParam *p = param;
  if (!require_subgraphs(node, 2, "cond and func", error))
    return FALSE;
  const DsGraph *cond = node->subgraphs[0], *func = node->subgraphs[1];
  /* MXNet requires max_iterations: it sizes the outputs there. Here it bounds the loop, so a
   * file must not make it absurd either; a file without one (hand-written, or from another
   * exporter) gets DS_CONTROL_DEFAULT_MAX_ITERATIONS rather than a loop that may never end. */
  if (!attr_count(node, "num_args", 2, &p->num_args, error) ||
      !attr_count(node, "num_outputs", 1, &p->num_outputs, error) ||
      !attr_count(node, "num_out_data", 0, &p->num_out_data, error) ||
      !ds_ops_attr_int_range(node, "max_iterations", DS_CONTROL_DEFAULT_MAX_ITERATIONS, 1,
                             DS_CONTROL_MAX_ITERATIONS, &p->max_iterations, error))
    return FALSE;
  p->n_inputs = p->num_args - 2;
  static const char *const carried_shapes[] = {"same", "any", NULL};
  int rule;
  if (!ds_node_attr_enum(node, "__carried_shapes__", carried_shapes, 0, &rule, error))
    return FALSE;
  p->any_carried_shapes = rule == 1;
  g_autofree char *node_inputs = g_strdup_printf("the node's %d inputs", p->n_inputs);
  int n_func = count_variables(func);
  g_autofree char *func_inputs = g_strdup_printf("func's %d inputs", n_func);
  if (!attr_locs(node, "cond_input_locs", p->n_inputs, node_inputs, &p->cond_input_locs,
                 &p->n_cond_inputs, error) ||
      !attr_locs(node, "func_input_locs", p->n_inputs, node_inputs, &p->func_input_locs,
                 &p->n_func_inputs, error) ||
      !attr_locs(node, "func_var_locs", n_func, func_inputs, &p->func_var_locs, &p->n_func_vars,
                 error) ||
      !check_feeds(node, "cond_input_locs", p->n_cond_inputs, cond, "cond", error) ||
      !check_feeds(node, "func_input_locs", p->n_func_inputs, func, "func", error) ||
      !check_heads(node, cond, "cond", 1, error) ||
      !check_heads(node, func, "func", p->num_outputs, error))
    return FALSE;
  if (p->num_out_data > p->num_outputs)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                             "attribute num_out_data=%d exceeds num_outputs=%d", p->num_out_data,
                             p->num_outputs);
  if (p->num_outputs - p->num_out_data != p->n_func_vars)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                             "func gives %d new loop variables (num_outputs - num_out_data), but "
                             "func_var_locs lists %d",
                             p->num_outputs - p->num_out_data, p->n_func_vars);
  /* Each loop variable is one node input: two updating the same one would be ambiguous. */
  for (int k = 0; k < p->n_func_vars; k++) {
    for (int m = 0; m < k; m++) {
      int a = p->func_input_locs[p->func_var_locs[m]], b = p->func_input_locs[p->func_var_locs[k]];
      if (a == b)
        return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                                 "loop variables %d and %d are both node input %d "
                                 "(func_var_locs=%s, func_input_locs=%s)",
                                 m, k, a, ds_node_get_attr(node, "func_var_locs"),
                                 ds_node_get_attr(node, "func_input_locs"));
    }
  }
  return TRUE;
}

static int while_loop_num_inputs(const void *param)
{
  return ((const DsWhileLoopParam *)param)->n_inputs;
}

static int while_loop_num_outputs(const void *param)
{
  return ((const DsWhileLoopParam *)param)->num_outputs;
}

/* The node input holding loop variable k. */
static int loop_var_input(const DsWhileLoopParam *p, int k)
{
  return p->func_input_locs[p->func_var_locs[k]];
}

/* The stacked outputs from func's step outputs `f_out`. Their length is how many times func
 * ran: one data-dependent dim shared by them all, made once (a later call finds it in the
 * outputs) and only once some step output's shape is known, so that no call makes a symbol
 * nothing keeps. */
static gboolean stack_step_outputs(DsShapeCtx *ctx, const DsWhileLoopParam *p,
                                   const DsShape *f_out, DsShape *out, GError **error)
{
  int nod = p->num_out_data;
  char what[48];
  DsDim current = DS_DIM_UNKNOWN;
  gboolean any = FALSE;
  for (int o = 0; o < nod; o++) {
    if (out[o].ndim >= 1 && !ds_dim_is_known(current))
      current = out[o].dims[0];
    any |= f_out[o].ndim >= 0;
  }
  if (!any)
    return TRUE;
  DsDim n = ds_shape_ctx_unbacked_dim(ctx, current, ds_dim(p->max_iterations));
  for (int o = 0; o < nod; o++) {
    if (f_out[o].ndim < 0)
      continue;
    DsShape want;
    g_snprintf(what, sizeof what, "stacked output %d", o);
    if (!stack_shape(ctx, n, &f_out[o], what, &want, error) ||
        !ds_ops_assign_shape(ctx, &out[o], &want, what, error))
      return FALSE;
  }
  return TRUE;
}

/* How many times the any rule (below) may widen the carried shapes: each pass either frees a
 * dim for good or gives up the rank, so a few suffice. */
#define MAX_WIDENINGS 4

/* Whether a dim is a symbol this rule made for a carried value: a data-dependent one that the
 * initial value does not have there. */
static gboolean made_for_carry(DsDim d, const DsShape *initial, int axis)
{
  return d.expr != NULL && ds_expr_is_unbacked(d.expr) &&
         (initial->ndim <= axis || !same_dim(d, initial->dims[axis]));
}

/* Widens `carried` (the shape a loop variable holds at any iteration) until `next`, func's new
 * value for it, fits: a dim they give differently becomes data-dependent, a different rank
 * becomes unknown. TRUE if it widened. */
static gboolean widen_carried(DsShapeCtx *ctx, DsShape *carried, const DsShape *initial,
                             const DsShape *next)
{
  if (carried->ndim < 0 || next->ndim < 0)
    return FALSE;
  if (carried->ndim != next->ndim) {
    *carried = DS_SHAPE_UNKNOWN;
    return TRUE;
  }
  gboolean widened = FALSE;
  for (int d = 0; d < carried->ndim; d++) {
    DsDim c = carried->dims[d], n = next->dims[d];
    if (!ds_dim_is_known(c) || !ds_dim_is_known(n) || same_dim(c, n) ||
        made_for_carry(c, initial, d))
      continue;
    carried->dims[d] = ds_shape_ctx_unbacked_dim(ctx, DS_DIM_UNKNOWN, DS_DIM_UNKNOWN);
    widened = TRUE;
  }
  return widened;
}

/* ONNX's Loop (__carried_shapes__="any"): a loop variable may change shape between iterations
 * (a greedy decoder appends a token each step). Each one gets the shape it holds at any
 * iteration: its initial shape, widened until func's new value fits (see widen_carried), and
 * that is the final value's shape too. cond and func are inferred on the widened shapes, and
 * what they learn goes back to the node's inputs only where a value's shape never changes. */
static gboolean while_loop_any_shapes(DsShapeCtx *ctx, const DsNode *node,
                                      const DsWhileLoopParam *p, DsShape *in, DsShape *out,
                                      gboolean *explained, GError **error)
{
  const DsGraph *func = node->subgraphs[1];
  int nod = p->num_out_data, n_in = (int)node->n_inputs;
  g_autofree DsShape *carried = new_unknown_shapes(p->n_func_vars);
  for (int k = 0; k < p->n_func_vars; k++) {
    /* A symbol an earlier call made is found again in the final value. */
    const DsShape *initial = &in[loop_var_input(p, k)], *final = &out[nod + k];
    carried[k] = *initial;
    for (int d = 0; d < initial->ndim && final->ndim == initial->ndim; d++)
      if (made_for_carry(final->dims[d], initial, d))
        carried[k].dims[d] = final->dims[d];
  }
  g_autofree DsShape *view = new_unknown_shapes(n_in);
  g_autofree DsShape *f_in = new_unknown_shapes(p->n_func_inputs);
  g_autofree DsShape *f_out = new_unknown_shapes(p->num_outputs);
  for (int pass = 0;; pass++) {
    memcpy(view, in, sizeof(DsShape) * (gsize)n_in);
    for (int k = 0; k < p->n_func_vars; k++)
      view[loop_var_input(p, k)] = carried[k];
    if (!infer_cond_shapes(ctx, node, p->cond_input_locs, p->n_cond_inputs, view, explained,
                           error))
      return FALSE;
    for (int i = 0; i < p->n_func_inputs; i++)
      f_in[i] = view[p->func_input_locs[i]];
    for (int o = 0; o < p->num_outputs; o++)
      f_out[o] = DS_SHAPE_UNKNOWN;
    *explained = FALSE;
    if (!infer_sub_shapes(ctx, node, func, "func", f_in, f_out, error))
      return FALSE;
    *explained = TRUE;
    gboolean widened = FALSE;
    for (int k = 0; k < p->n_func_vars; k++)
      widened |= widen_carried(ctx, &carried[k], &in[loop_var_input(p, k)], &f_out[nod + k]);
    if (!widened)
      break;
    if (pass + 1 == MAX_WIDENINGS) {
      ds_shape_ctx_set_error(ctx, error, "the loop variables' shapes do not settle");
      return FALSE;
    }
  }

  /* What the subgraphs learned about the node's inputs, except where a loop variable's shape
   * was widened: there the initial value only holds the first iteration's shape. */
  g_autofree gboolean *widened_input = g_new0(gboolean, MAX(n_in, 1));
  for (int k = 0; k < p->n_func_vars; k++) {
    int at = loop_var_input(p, k);
    widened_input[at] = carried[k].ndim != in[at].ndim || shapes_differ(&carried[k], &in[at]);
  }
  if (!shapes_back(ctx, func, "func", p->func_input_locs, p->n_func_inputs, f_in, view, error))
    return FALSE;
  char what[48];
  for (int i = 0; i < n_in; i++) {
    g_snprintf(what, sizeof what, "input %d", i);
    if (!widened_input[i] && !ds_ops_assign_shape(ctx, &in[i], &view[i], what, error))
      return FALSE;
  }
  for (int k = 0; k < p->n_func_vars; k++) {
    g_snprintf(what, sizeof what, "final loop variable %d", k);
    if (carried[k].ndim >= 0 && !ds_ops_assign_shape(ctx, &out[nod + k], &carried[k], what, error))
      return FALSE;
  }
  return stack_step_outputs(ctx, p, f_out, out, error);
}

/* MXNet's WhileLoopShape, except for the stacked outputs' length: the iterations run, one
 * unbacked symbol for all of them, rather than max_iterations. With __carried_shapes__="any",
 * ONNX's rule instead (while_loop_any_shapes). */
static gboolean while_loop_shape_attempt(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                         DsShape *in, DsShape *out, gboolean seed,
                                         gboolean *explained, GError **error)
{
  const DsWhileLoopParam *p = param;
  if (p->any_carried_shapes)
    return while_loop_any_shapes(ctx, node, p, in, out, explained, error);
  const DsGraph *func = node->subgraphs[1];
  int nod = p->num_out_data;
  char what[160];
  *explained = TRUE;

  /* A final value has its initial value's shape: what the outputs know goes to the inputs. */
  for (int k = 0; k < p->n_func_vars; k++) {
    g_snprintf(what, sizeof what, "loop variable %d ('%s')", k,
               variable_name(func, p->func_var_locs[k]));
    DsShape initial = in[loop_var_input(p, k)];
    if (!unify_carried_shape(ctx, &in[loop_var_input(p, k)], &initial, &out[nod + k], what,
                             "the final value (a node output)", error))
      return FALSE;
  }
  if (!infer_cond_shapes(ctx, node, p->cond_input_locs, p->n_cond_inputs, in, explained, error))
    return FALSE;

  g_autofree DsShape *f_in = new_unknown_shapes(p->n_func_inputs);
  g_autofree DsShape *f_out = new_unknown_shapes(p->num_outputs);
  for (int i = 0; i < p->n_func_inputs; i++)
    f_in[i] = in[p->func_input_locs[i]];
  if (seed) {
    for (int o = 0; o < nod; o++)
      f_out[o] = drop_lead(&out[o]);
    for (int k = 0; k < p->n_func_vars; k++)
      f_out[nod + k] = in[loop_var_input(p, k)];
  }
  *explained = FALSE;
  if (!infer_sub_shapes(ctx, node, func, "func", f_in, f_out, error))
    return FALSE;
  *explained = TRUE;

  for (int k = 0; k < p->n_func_vars; k++) {
    int at = loop_var_input(p, k);
    g_snprintf(what, sizeof what, "loop variable %d ('%s')", k,
               variable_name(func, p->func_var_locs[k]));
    if (!unify_carried_shape(ctx, &in[at], &f_in[p->func_var_locs[k]], &f_out[nod + k], what,
                             "func's new value", error))
      return FALSE;
    g_snprintf(what, sizeof what, "final loop variable %d", k);
    if (!ds_ops_assign_shape(ctx, &out[nod + k], &in[at], what, error))
      return FALSE;
  }
  if (!shapes_back(ctx, func, "func", p->func_input_locs, p->n_func_inputs, f_in, in, error))
    return FALSE;

  return stack_step_outputs(ctx, p, f_out, out, error);
}

static gboolean infer_shape_while_loop(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                       DsShape *in, DsShape *out, GError **error)
{
  return run_shape_attempts(while_loop_shape_attempt, ctx, node, param, in, out, error);
}

static gboolean while_loop_dtype_attempt(const DsNode *node, const void *param, DsDType *in,
                                         DsDType *out, gboolean seed, gboolean *explained,
                                         GError **error)
{
  const DsWhileLoopParam *p = param;
  const DsGraph *func = node->subgraphs[1];
  int nod = p->num_out_data;
  char what[160];
  *explained = TRUE;

  for (int k = 0; k < p->n_func_vars; k++) {
    g_snprintf(what, sizeof what, "loop variable %d ('%s')", k,
               variable_name(func, p->func_var_locs[k]));
    int at = loop_var_input(p, k);
    if (!unify_carried_dtype(node, &in[at], in[at], out[nod + k], what,
                             "the final value (a node output)", error))
      return FALSE;
  }
  if (!infer_cond_dtypes(node, p->cond_input_locs, p->n_cond_inputs, in, explained, error))
    return FALSE;

  g_autofree DsDType *f_in = new_unknown_dtypes(p->n_func_inputs);
  g_autofree DsDType *f_out = new_unknown_dtypes(p->num_outputs);
  for (int i = 0; i < p->n_func_inputs; i++)
    f_in[i] = in[p->func_input_locs[i]];
  if (seed) {
    for (int o = 0; o < nod; o++)
      f_out[o] = out[o];
    for (int k = 0; k < p->n_func_vars; k++)
      f_out[nod + k] = in[loop_var_input(p, k)];
  }
  *explained = FALSE;
  if (!ds_ops_infer_subgraph_dtypes(node, func, "func", f_in, f_out, error))
    return FALSE;
  *explained = TRUE;

  for (int k = 0; k < p->n_func_vars; k++) {
    int at = loop_var_input(p, k);
    g_snprintf(what, sizeof what, "loop variable %d ('%s')", k,
               variable_name(func, p->func_var_locs[k]));
    if (!unify_carried_dtype(node, &in[at], f_in[p->func_var_locs[k]], f_out[nod + k], what,
                             "func's new value", error))
      return FALSE;
    f_out[nod + k] = in[at];
  }
  for (int o = 0; o < p->num_outputs; o++) {
    g_snprintf(what, sizeof what, "output %d", o);
    if (!ds_ops_assign_dtype(node, &out[o], f_out[o], what, error))
      return FALSE;
  }
  return dtypes_back(node, func, "func", p->func_input_locs, p->n_func_inputs, f_in, in, error);
}

static gboolean infer_type_while_loop(const DsNode *node, const void *param, DsDType *in,
                                      DsDType *out, GError **error)
{
  return run_dtype_attempts(while_loop_dtype_attempt, node, param, in, out, error);
}

/* ------------------------------------------------------------------------------------------ */
/* _cond */

static gboolean parse_cond(const DsNode *node, void *param, GError **error)
{
  DsCondParam *p = param;
  if (!require_subgraphs(node, 3, "cond, then and else", error))
    return FALSE;
  const DsGraph *cond = node->subgraphs[0], *then_g = node->subgraphs[1],
                *else_g = node->subgraphs[2];
  if (!attr_count(node, "num_args", 3, &p->num_args, error) ||
      !attr_count(node, "num_outputs", 1, &p->num_outputs, error))
    return FALSE;
  p->n_inputs = p->num_args - 3;
  static const char *const branch_shapes[] = {"same", "any", NULL};
  int rule;
  if (!ds_node_attr_enum(node, "__branch_shapes__", branch_shapes, 0, &rule, error))
    return FALSE;
  p->any_branch_shapes = rule == 1;
  g_autofree char *among = g_strdup_printf("the node's %d inputs", p->n_inputs);
  return attr_locs(node, "cond_input_locs", p->n_inputs, among, &p->cond_input_locs,
                   &p->n_cond_inputs, error) &&
         attr_locs(node, "then_input_locs", p->n_inputs, among, &p->then_input_locs,
                   &p->n_then_inputs, error) &&
         attr_locs(node, "else_input_locs", p->n_inputs, among, &p->else_input_locs,
                   &p->n_else_inputs, error) &&
         check_feeds(node, "cond_input_locs", p->n_cond_inputs, cond, "cond", error) &&
         check_feeds(node, "then_input_locs", p->n_then_inputs, then_g, "the then branch", error) &&
         check_feeds(node, "else_input_locs", p->n_else_inputs, else_g, "the else branch", error) &&
         check_heads(node, cond, "cond", 1, error) &&
         check_heads(node, then_g, "the then branch", p->num_outputs, error) &&
         check_heads(node, else_g, "the else branch", p->num_outputs, error);
}

static int cond_num_inputs(const void *param)
{
  return ((const DsCondParam *)param)->n_inputs;
}

static int cond_num_outputs(const void *param)
{
  return ((const DsCondParam *)param)->num_outputs;
}

/* One branch, its heads seeded (or not) from the node's outputs as they were on entry. */
static gboolean cond_branch_shapes(DsShapeCtx *ctx, const DsNode *node, int which, const int *locs,
                                   int n, DsShape *in, const DsShape *out, int n_out, gboolean seed,
                                   DsShape *b_out, gboolean *explained, GError **error)
{
  const DsGraph *sub = node->subgraphs[which];
  const char *name = which == 1 ? "then branch" : "else branch";
  g_autofree DsShape *b_in = new_unknown_shapes(n);
  for (int i = 0; i < n; i++)
    b_in[i] = in[locs[i]];
  for (int h = 0; h < n_out; h++)
    b_out[h] = seed ? out[h] : DS_SHAPE_UNKNOWN;
  *explained = FALSE;
  if (!infer_sub_shapes(ctx, node, sub, name, b_in, b_out, error))
    return FALSE;
  *explained = TRUE;
  return shapes_back(ctx, sub, name, locs, n, b_in, in, error);
}

/* Node output `h` from its branches' shapes `t` and `e`, either unknown where that branch could
 * not be inferred (`t_failed`, `e_failed`). ONNX lets the branches differ (an exported squeeze
 * of a dynamic dim gives (1, 128) or (1, 128, 1)), so what they do not share is decided by the
 * branch that runs: a dim they give differently becomes data-dependent, bounded by the larger
 * (made once: `current` holds what an earlier call made), and different ranks, or a branch that
 * cannot be inferred, leave the rank to the run. A branch merely not inferred yet (its inputs
 * still unknown) takes the other's shape, as MXNet's CondShape does. */
static DsShape merge_branch_shapes(DsShapeCtx *ctx, const DsShape *t, gboolean t_failed,
                                   const DsShape *e, gboolean e_failed, const DsShape *current)
{
  if (t_failed || e_failed)
    return DS_SHAPE_UNKNOWN;
  if (t->ndim < 0)
    return *e;
  if (e->ndim < 0)
    return *t;
  if (t->ndim != e->ndim)
    return DS_SHAPE_UNKNOWN;
  DsShape merged = {.ndim = t->ndim};
  for (int d = 0; d < t->ndim; d++) {
    DsDim a = t->dims[d], b = e->dims[d];
    if (!ds_dim_is_known(a) || !ds_dim_is_known(b) || same_dim(a, b)) {
      merged.dims[d] = ds_dim_is_known(a) ? a : b;
      continue;
    }
    DsDim made = current->ndim == t->ndim && current->dims[d].expr != NULL &&
                         ds_expr_is_unbacked(current->dims[d].expr)
                     ? current->dims[d]
                     : DS_DIM_UNKNOWN;
    merged.dims[d] = ds_shape_ctx_unbacked_dim(ctx, made, ds_dim_max(ctx, a, b));
  }
  return merged;
}

/* One branch's shapes under ONNX's rule: from the node's inputs alone, and nothing goes back.
 * What the node's consumers expect of its outputs, or what a branch asks of the inputs, holds
 * only if that branch runs, so neither may constrain the other branch or the outer graph. A
 * branch that cannot be inferred (a squeeze of a dim only the other branch's condition rules
 * out) is no error while the other branch can be: only running it would fail, with this same
 * message. `*failed` says so; `first` keeps the message. */
static void try_branch_shapes(DsShapeCtx *ctx, const DsNode *node, int which, const int *locs,
                              int n, const DsShape *in, int n_out, DsShape *b_out,
                              gboolean *failed, GError **first)
{
  const DsGraph *sub = node->subgraphs[which];
  g_autofree DsShape *b_in = new_unknown_shapes(n);
  for (int i = 0; i < n; i++)
    b_in[i] = in[locs[i]];
  for (int h = 0; h < n_out; h++)
    b_out[h] = DS_SHAPE_UNKNOWN;
  GError *local = NULL;
  *failed = !infer_sub_shapes(ctx, node, sub, which == 1 ? "then branch" : "else branch", b_in,
                              b_out, &local);
  if (!*failed)
    return;
  for (int h = 0; h < n_out; h++)
    b_out[h] = DS_SHAPE_UNKNOWN;
  if (*first == NULL)
    g_propagate_error(first, local);
  else
    g_clear_error(&local);
}

/* MXNet's CondShape: both branches give the node's outputs, so their shapes must agree. */
static gboolean merge_same_shapes(DsShapeCtx *ctx, const DsShape *t_out, const DsShape *e_out,
                                  DsShape *out, int n_out, GError **error)
{
  char what[48];
  for (int h = 0; h < n_out; h++) {
    g_snprintf(what, sizeof what, "output %d", h);
    DsShape merged = t_out[h];
    GError *local = NULL;
    if (!ds_shape_ctx_assign(ctx, &merged, &e_out[h], what, &local)) {
      g_clear_error(&local);
      g_autofree char *st = ds_shape_to_string(&t_out[h]), *se = ds_shape_to_string(&e_out[h]);
      ds_shape_ctx_set_error(ctx, error,
                             "output %d: the then branch gives shape %s, but the else branch "
                             "gives %s (both branches must give the same shapes)",
                             h, st, se);
      return FALSE;
    }
    if (!ds_ops_assign_shape(ctx, &out[h], &merged, what, error))
      return FALSE;
  }
  return TRUE;
}

/* ONNX's If: what the branches do not share is decided by the one that runs. */
static gboolean merge_any_shapes(DsShapeCtx *ctx, const DsNode *node, const DsShape *t_out,
                                 gboolean t_failed, const DsShape *e_out, gboolean e_failed,
                                 DsShape *out, int n_out, GError **error)
{
  char what[48];
  for (int h = 0; h < n_out; h++) {
    g_snprintf(what, sizeof what, "output %d", h);
    DsShape merged = merge_branch_shapes(ctx, &t_out[h], t_failed, &e_out[h], e_failed, &out[h]);
    if (!t_failed && !e_failed && t_out[h].ndim >= 0 && e_out[h].ndim >= 0 &&
        shapes_differ(&t_out[h], &e_out[h])) {
      g_autofree char *st = ds_shape_to_string(&t_out[h]), *se = ds_shape_to_string(&e_out[h]);
      ds_shape_ctx_add_note(ctx, "node '%s' (_cond): output %d is %s from the then branch and %s "
                            "from the else branch: the branch that runs decides",
                            node->name, h, st, se);
    }
    if (merged.ndim >= 0 && !ds_ops_assign_shape(ctx, &out[h], &merged, what, error))
      return FALSE;
  }
  return TRUE;
}

/* The node's output shapes from its branches' (see DsCondParam for the two rules). */
static gboolean cond_shape_attempt(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                   DsShape *in, DsShape *out, gboolean seed, gboolean *explained,
                                   GError **error)
{
  const DsCondParam *p = param;
  int n_out = p->num_outputs;
  if (!infer_cond_shapes(ctx, node, p->cond_input_locs, p->n_cond_inputs, in, explained, error))
    return FALSE;
  g_autofree DsShape *t_out = new_unknown_shapes(n_out), *e_out = new_unknown_shapes(n_out);
  if (!p->any_branch_shapes)
    return cond_branch_shapes(ctx, node, 1, p->then_input_locs, p->n_then_inputs, in, out, n_out,
                              seed, t_out, explained, error) &&
           cond_branch_shapes(ctx, node, 2, p->else_input_locs, p->n_else_inputs, in, out, n_out,
                              seed, e_out, explained, error) &&
           merge_same_shapes(ctx, t_out, e_out, out, n_out, error);

  GError *first = NULL;
  gboolean t_failed, e_failed;
  try_branch_shapes(ctx, node, 1, p->then_input_locs, p->n_then_inputs, in, n_out, t_out,
                    &t_failed, &first);
  try_branch_shapes(ctx, node, 2, p->else_input_locs, p->n_else_inputs, in, n_out, e_out,
                    &e_failed, &first);
  if (t_failed && e_failed) {
    *explained = FALSE;
    g_propagate_error(error, first);
    return FALSE;
  }
  if (first != NULL) {
    const char *which = t_failed ? "then" : "else";
    /* The message names this node already: keep what comes after. */
    g_autofree char *prefix =
        g_strdup_printf("node '%s' (%s): in its %s branch: ", node->name, node->op_name, which);
    const char *why = first->message;
    if (g_str_has_prefix(why, prefix))
      why += strlen(prefix);
    ds_shape_ctx_add_note(ctx, "node '%s' (_cond): the %s branch cannot be inferred, so it fails "
                          "if it runs: %s",
                          node->name, which, why);
    g_clear_error(&first);
  }
  *explained = TRUE;
  return merge_any_shapes(ctx, node, t_out, t_failed, e_out, e_failed, out, n_out, error);
}

static gboolean infer_shape_cond(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                 DsShape *in, DsShape *out, GError **error)
{
  return run_shape_attempts(cond_shape_attempt, ctx, node, param, in, out, error);
}

static gboolean cond_branch_dtypes(const DsNode *node, int which, const int *locs, int n,
                                   DsDType *in, const DsDType *out, int n_out, gboolean seed,
                                   DsDType *b_out, gboolean *explained, GError **error)
{
  const DsGraph *sub = node->subgraphs[which];
  const char *name = which == 1 ? "then branch" : "else branch";
  g_autofree DsDType *b_in = new_unknown_dtypes(n);
  for (int i = 0; i < n; i++)
    b_in[i] = in[locs[i]];
  for (int h = 0; h < n_out; h++)
    b_out[h] = seed ? out[h] : DS_DTYPE_UNKNOWN;
  *explained = FALSE;
  if (!ds_ops_infer_subgraph_dtypes(node, sub, name, b_in, b_out, error))
    return FALSE;
  *explained = TRUE;
  return dtypes_back(node, sub, name, locs, n, b_in, in, error);
}

static gboolean cond_dtype_attempt(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                                   gboolean seed, gboolean *explained, GError **error)
{
  const DsCondParam *p = param;
  int n_out = p->num_outputs;
  if (!infer_cond_dtypes(node, p->cond_input_locs, p->n_cond_inputs, in, explained, error))
    return FALSE;
  g_autofree DsDType *t_out = new_unknown_dtypes(n_out), *e_out = new_unknown_dtypes(n_out);
  if (!cond_branch_dtypes(node, 1, p->then_input_locs, p->n_then_inputs, in, out, n_out, seed,
                          t_out, explained, error) ||
      !cond_branch_dtypes(node, 2, p->else_input_locs, p->n_else_inputs, in, out, n_out, seed,
                          e_out, explained, error))
    return FALSE;
  char what[48];
  for (int h = 0; h < n_out; h++) {
    if (t_out[h] != DS_DTYPE_UNKNOWN && e_out[h] != DS_DTYPE_UNKNOWN && t_out[h] != e_out[h])
      return ds_ops_node_error(node, error, DS_ERROR_SHAPE,
                               "output %d: the then branch gives dtype %s, but the else branch "
                               "gives %s (both branches must give the same dtypes)",
                               h, ds_dtype_name(t_out[h]), ds_dtype_name(e_out[h]));
    g_snprintf(what, sizeof what, "output %d", h);
    if (!ds_ops_assign_dtype(node, &out[h], t_out[h] != DS_DTYPE_UNKNOWN ? t_out[h] : e_out[h],
                             what, error))
      return FALSE;
  }
  return TRUE;
}

static gboolean infer_type_cond(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                                GError **error)
{
  return run_dtype_attempts(cond_dtype_attempt, node, param, in, out, error);
}

/* ------------------------------------------------------------------------------------------ */
/* Freeing the loc lists */

static void free_foreach_param(void *param)
{
  DsForeachParam *p = param;
  g_free(p->data_locs);
  g_free(p->state_locs);
  g_free(p->remain_locs);
}

static void free_while_loop_param(void *param)
{
  DsWhileLoopParam *p = param;
  g_free(p->cond_input_locs);
  g_free(p->func_input_locs);
  g_free(p->func_var_locs);
}

static void free_cond_param(void *param)
{
  DsCondParam *p = param;
  g_free(p->cond_input_locs);
  g_free(p->then_input_locs);
  g_free(p->else_input_locs);
}

/* ------------------------------------------------------------------------------------------ */
/* Definitions */

/* Owning the subgraphs they run is what DS_OP_TRAIT_CONTROL_FLOW says; a while loop's stacked
 * outputs also have a length only running it tells. The inputs are named arg0, arg1... (MXNet
 * calls them data0, data1...; the names here are one static list per op). */
#define DS_CONTROL_OP(ID, NAME, TRAITS, PARAM, PARSE, FREE, NUM_IN, NUM_OUT, SHAPE, TYPE, ...)     \
  static const DsOpDef ID##_def = {                                                                \
      .id = DS_OP_##ID,                                                                            \
      .name = NAME,                                                                                \
      .aliases = NULL,                                                                             \
      .traits = TRAITS,                                                                            \
      .param_size = sizeof(PARAM),                                                                 \
      .parse = PARSE,                                                                              \
      .free_param = FREE,                                                                          \
      .num_inputs = NUM_IN,                                                                        \
      .num_outputs = NUM_OUT,                                                                      \
      .num_visible_outputs = NUM_OUT,                                                              \
      .input_names = NULL,                                                                         \
      .infer_shape = SHAPE,                                                                        \
      .infer_type = TYPE,                                                                          \
      __VA_ARGS__                                                                                  \
  };

DS_CONTROL_OP(FOREACH, "_foreach", DS_OP_TRAIT_CONTROL_FLOW, DsForeachParam, parse_foreach,
              free_foreach_param, foreach_num_inputs, foreach_num_outputs, infer_shape_foreach,
              infer_type_foreach, .grad = ds_grad_foreach,
              .grad_prepare = ds_grad_foreach_prepare)
DS_CONTROL_OP(WHILE_LOOP, "_while_loop", DS_OP_TRAIT_CONTROL_FLOW | DS_OP_TRAIT_DYNAMIC_SHAPE,
              DsWhileLoopParam, parse_while_loop, free_while_loop_param, while_loop_num_inputs,
              while_loop_num_outputs, infer_shape_while_loop, infer_type_while_loop,
              .grad = ds_grad_while_loop, .grad_prepare = ds_grad_while_loop_prepare)
DS_CONTROL_OP(COND, "_cond", DS_OP_TRAIT_CONTROL_FLOW, DsCondParam, parse_cond, free_cond_param,
              cond_num_inputs, cond_num_outputs, infer_shape_cond, infer_type_cond,
              .grad = ds_grad_cond)

void ds_ops_control_register(const DsOpDef **table)
{
  DS_OPS_CONTROL(DS_OP_TABLE_ENTRY)
}
