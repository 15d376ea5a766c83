/* ds-onnx-ops-control.c: Loop, If and Scan onto `_while_loop`, `_cond` and `_foreach`.
 *
 * ONNX bodies read outer values by name; engine bodies have explicit inputs. Each body is
 * translated by a child builder, which turns every outer value it reads into a variable of
 * its own (a capture); the control-flow node then feeds those captures after the inputs the
 * op itself defines, and the *_locs attributes say which node input feeds which body input.
 *
 * Loop (M, cond, v...) becomes a `_while_loop` whose loop variables are (iteration, condition,
 * v...): the condition subgraph computes `cond && iteration < M` from what is given, the
 * function subgraph is the ONNX body plus `iteration + 1`, and its scan outputs are the loop's
 * stacked outputs (exactly the iterations run). If becomes `_cond` with a condition subgraph
 * that passes the condition through. Scan (opset 9 on) becomes `_foreach` over axis 0, with
 * transposes and reversals around it for other axes and directions.
 */
#include "ds-onnx-translate.h"

#include <string.h>

#include "ds-ops-control.h"

#define MAX_ATTRS 8

typedef struct {
  const char *keys[MAX_ATTRS];
  const char *values[MAX_ATTRS];
  guint n;
} Attrs;

static void attrs_add(Attrs *a, const char *key, const char *value)
{
  g_assert(a->n < MAX_ATTRS);
  a->keys[a->n] = key;
  a->values[a->n++] = value;
}

static const DsOnnxGraph *graph_attr(const DsOnnxNode *node, const char *name, GError **error)
{
  const DsOnnxAttribute *a = ds_onnx_node_find_attribute(node, name);
  if (a == NULL || a->type != DS_ONNX_ATTR_GRAPH || a->g == NULL) {
    ds_onnx_invalid(error, "the graph attribute '%s' is missing", name);
    return NULL;
  }
  return a->g;
}

/* A "(0, 1, 2)" list of int positions. */
static const char *fmt_locs(DsOnnxBuilder *b, const GArray *locs)
{
  g_autofree gint64 *v = g_new(gint64, MAX(locs->len, 1));
  for (guint i = 0; i < locs->len; i++)
    v[i] = g_array_index(locs, int, i);
  return ds_onnx_fmt_ints(b, v, (int)locs->len);
}

static void push_loc(GArray *locs, int v)
{
  g_array_append_val(locs, v);
}

/* The body's input with the ONNX type its graph declares. */
static DsEntry add_body_input(DsOnnxBuilder *child, const DsOnnxValueInfo *v, DsDType fallback,
                              int rank_delta)
{
  DsDType dtype = ds_onnx_compute_dtype(ds_onnx_dtype(v->elem_type));
  int rank = v->has_shape ? (int)v->n_dims + rank_delta : -1;
  return ds_onnx_builder_add_input(child, v->name, dtype != DS_DTYPE_UNKNOWN ? dtype : fallback,
                                   rank);
}

/* Node inputs for a body's captures, appended to `inputs`; `locs` gets their positions. */
static void feed_captures(DsOnnxBuilder *child, GArray *inputs, GArray *locs)
{
  const GArray *captures = ds_onnx_builder_get_captures(child);
  for (guint c = 0; c < captures->len; c++) {
    const DsOnnxCapture *cap = &g_array_index(captures, DsOnnxCapture, c);
    int pos = -1;
    for (guint i = 0; i < inputs->len && pos < 0; i++) {
      const DsEntry *e = &g_array_index(inputs, DsEntry, i);
      if (e->node_id == cap->outer.node_id && e->index == cap->outer.index)
        pos = (int)i;
    }
    if (pos < 0) {
      pos = (int)inputs->len;
      g_array_append_val(inputs, cap->outer);
    }
    push_loc(locs, pos);
  }
}

/* The nodes a translator adds inside a body of its own making (the loop condition, the
 * iteration count) are named for what they do, since the body's path names the loop. */
static DsNode *emit_glue(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op,
                         const char *name, const DsEntry *inputs, guint n_inputs, GError **error,
                         const char *key, const char *value, const char *key2, const char *value2)
{
  DsOnnxNode glue = *node;
  glue.name = name;
  const char *keys[2] = {key, key2}, *values[2] = {value, value2};
  guint n_attrs = key == NULL ? 0 : key2 == NULL ? 1 : 2;
  return ds_onnx_emitv(b, &glue, op, NULL, inputs, n_inputs, keys, values, n_attrs, error);
}

/* ---- Loop -------------------------------------------------------------------------------- */

/* The condition subgraph: go on while `cond` (when given) and `iteration < M` (when given). */
static DsGraph *loop_condition(DsOnnxBuilder *b, const DsOnnxNode *node, gboolean has_m,
                               gboolean has_cond, GError **error)
{
  DsOnnxBuilder *c = ds_onnx_builder_new_child(b, "cond");
  DsEntry iter = ds_onnx_builder_add_input(c, "iteration", DS_DTYPE_INT64, 0);
  DsEntry cond = ds_onnx_builder_add_input(c, "condition", DS_DTYPE_BOOL, 0);
  DsEntry max_trips = {0, 0, 0};
  if (has_m)
    max_trips = ds_onnx_builder_add_input(c, "max_trip_count", DS_DTYPE_INT64, -1);
  DsNode *out = NULL;
  if (has_m) {
    DsEntry lt_in[2] = {iter, max_trips};
    DsNode *lt = emit_glue(c, node, "broadcast_lesser", "below_max", lt_in, 2, error, NULL, NULL,
                           NULL, NULL);
    out = lt;
    if (lt != NULL && has_cond) {
      DsNode *as_int = emit_glue(c, node, "Cast", "condition_int", &cond, 1, error, "dtype",
                                 "int64", NULL, NULL);
      DsEntry both[2] = {ds_onnx_entry(lt, 0), as_int != NULL ? ds_onnx_entry(as_int, 0) : iter};
      out = as_int == NULL ? NULL
                           : emit_glue(c, node, "broadcast_mul", "go", both, 2, error, NULL, NULL,
                                       NULL, NULL);
    }
  } else {
    out = emit_glue(c, node, "_copy", "go", &cond, 1, error, NULL, NULL, NULL, NULL);
  }
  DsGraph *g = NULL;
  if (out != NULL) {
    DsEntry head = ds_onnx_entry(out, 0);
    g = ds_onnx_builder_finish(c, &head, 1, error);
  }
  ds_onnx_builder_free(c);
  return g;
}

/* The function subgraph: the ONNX body, heads reordered to (scan outputs, iteration + 1,
 * condition, states). */
static DsGraph *loop_function(DsOnnxBuilder *b, const DsOnnxNode *node, const DsOnnxGraph *body,
                              guint n_states, guint n_scans, gboolean has_cond, GArray *inputs,
                              GArray *func_locs, GError **error)
{
  DsOnnxBuilder *f = ds_onnx_builder_new_child(b, "body");
  DsEntry iter = add_body_input(f, &body->inputs[0], DS_DTYPE_INT64, 0);
  DsEntry cond = add_body_input(f, &body->inputs[1], DS_DTYPE_BOOL, 0);
  for (guint i = 0; i < n_states; i++)
    add_body_input(f, &body->inputs[2 + i], DS_DTYPE_UNKNOWN, 0);
  DsGraph *g = NULL;
  g_autofree DsEntry *heads = g_new(DsEntry, n_scans + 2 + n_states);
  gboolean ok = ds_onnx_builder_translate(f, body, error);
  for (guint k = 0; ok && k < n_scans; k++)
    ok = ds_onnx_lookup(f, body->outputs[1 + n_states + k].name, &heads[k], error);
  DsNode *next = !ok ? NULL
                     : emit_glue(f, node, "_plus_scalar", "next_iteration", &iter, 1, error,
                                 "scalar", "1", "is_int", "True");
  ok = next != NULL;
  if (ok) {
    heads[n_scans] = ds_onnx_entry(next, 0);
    /* Without a condition input, ONNX ignores the body's condition output. */
    heads[n_scans + 1] = cond;
    if (has_cond)
      ok = ds_onnx_lookup(f, body->outputs[0].name, &heads[n_scans + 1], error);
  }
  for (guint i = 0; ok && i < n_states; i++)
    ok = ds_onnx_lookup(f, body->outputs[1 + i].name, &heads[n_scans + 2 + i], error);
  if (ok) {
    for (guint i = 0; i < 2 + n_states; i++)
      push_loc(func_locs, (int)i);
    feed_captures(f, inputs, func_locs);
    g = ds_onnx_builder_finish(f, heads, n_scans + 2 + n_states, error);
  }
  ds_onnx_builder_free(f);
  return g;
}

static gboolean translate_loop(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  const DsOnnxGraph *body = graph_attr(node, "body", error);
  if (body == NULL)
    return FALSE;
  if (node->n_inputs < 2)
    return ds_onnx_invalid(error, "Loop needs the M and cond inputs (either may be empty)");
  guint n_states = (guint)node->n_inputs - 2;
  if (body->n_inputs != 2 + n_states || body->n_outputs < 1 + n_states)
    return ds_onnx_invalid(error,
                           "the body has %" G_GSIZE_FORMAT " inputs and %" G_GSIZE_FORMAT
                           " outputs for %u loop-carried values",
                           body->n_inputs, body->n_outputs, n_states);
  guint n_scans = (guint)body->n_outputs - 1 - n_states;
  gboolean has_m = ds_onnx_has_input(node, 0), has_cond = ds_onnx_has_input(node, 1);

  /* Node inputs: the loop variables (iteration, condition, states), M, then captures. */
  g_autoptr(GArray) inputs = g_array_new(FALSE, FALSE, sizeof(DsEntry));
  DsEntry e = ds_onnx_add_scalar(b, ds_onnx_printf(b, "%s_iteration0", node->op_type),
                                 DS_DTYPE_INT64, 0, FALSE);
  g_array_append_val(inputs, e);
  if (has_cond) {
    if (!ds_onnx_input(b, node, 1, &e, error))
      return FALSE;
  } else {
    e = ds_onnx_add_scalar(b, "true", DS_DTYPE_BOOL, 1, FALSE);
  }
  g_array_append_val(inputs, e);
  for (guint i = 0; i < n_states; i++) {
    if (!ds_onnx_input(b, node, 2 + i, &e, error))
      return FALSE;
    g_array_append_val(inputs, e);
  }
  gint64 max_iterations = DS_CONTROL_MAX_ITERATIONS;
  if (has_m) {
    if (!ds_onnx_input(b, node, 0, &e, error))
      return FALSE;
    g_array_append_val(inputs, e);
    const DsNDArray *m = ds_onnx_input_const(b, node, 0);
    gint64 trips;
    if (m != NULL && ds_onnx_const_ints(m, &trips, 1) == 1)
      max_iterations = CLAMP(trips, 1, DS_CONTROL_MAX_ITERATIONS);
  }
  g_autoptr(GArray) cond_locs = g_array_new(FALSE, FALSE, sizeof(int));
  push_loc(cond_locs, 0);
  push_loc(cond_locs, 1);
  if (has_m)
    push_loc(cond_locs, (int)(2 + n_states));

  g_autoptr(GArray) func_locs = g_array_new(FALSE, FALSE, sizeof(int));
  DsGraph *subgraphs[2] = {loop_condition(b, node, has_m, has_cond, error), NULL};
  if (subgraphs[0] == NULL)
    return FALSE;
  subgraphs[1] = loop_function(b, node, body, n_states, n_scans, has_cond, inputs, func_locs, error);
  if (subgraphs[1] == NULL) {
    ds_graph_unref(subgraphs[0]);
    return FALSE;
  }
  g_autoptr(GArray) var_locs = g_array_new(FALSE, FALSE, sizeof(int));
  for (guint i = 0; i < 2 + n_states; i++)
    push_loc(var_locs, (int)i);
  Attrs a = {0};
  attrs_add(&a, "num_args", ds_onnx_printf(b, "%u", inputs->len + 2));
  attrs_add(&a, "num_outputs", ds_onnx_printf(b, "%u", n_scans + 2 + n_states));
  attrs_add(&a, "num_out_data", ds_onnx_printf(b, "%u", n_scans));
  attrs_add(&a, "max_iterations", ds_onnx_printf(b, "%" G_GINT64_FORMAT, max_iterations));
  attrs_add(&a, "cond_input_locs", fmt_locs(b, cond_locs));
  attrs_add(&a, "func_input_locs", fmt_locs(b, func_locs));
  attrs_add(&a, "func_var_locs", fmt_locs(b, var_locs));
  attrs_add(&a, "__carried_shapes__", "any"); /* ONNX's rule (see DsWhileLoopParam) */
  DsNode *loop = ds_onnx_emit_control(b, node, "_while_loop", NULL, (DsEntry *)inputs->data,
                                      inputs->len, subgraphs, 2, a.keys, a.values, a.n, error);
  if (loop == NULL)
    return FALSE;
  for (guint i = 0; i < n_states; i++)
    ds_onnx_set_output(b, node, i, ds_onnx_entry(loop, n_scans + 2 + i), error);
  for (guint k = 0; k < n_scans; k++)
    ds_onnx_set_output(b, node, n_states + k, ds_onnx_entry(loop, k), error);
  return TRUE;
}

/* ---- If ---------------------------------------------------------------------------------- */

/* A branch: no inputs of its own, only the outer values it reads. */
static DsGraph *if_branch(DsOnnxBuilder *b, const DsOnnxGraph *branch, const char *which,
                          GArray *inputs, GArray *locs, GError **error)
{
  DsOnnxBuilder *c = ds_onnx_builder_new_child(b, which);
  g_autofree DsEntry *heads = g_new(DsEntry, MAX(branch->n_outputs, 1));
  gboolean ok = ds_onnx_builder_translate(c, branch, error);
  for (gsize i = 0; ok && i < branch->n_outputs; i++)
    ok = ds_onnx_lookup(c, branch->outputs[i].name, &heads[i], error);
  DsGraph *g = NULL;
  if (ok) {
    feed_captures(c, inputs, locs);
    g = ds_onnx_builder_finish(c, heads, (guint)branch->n_outputs, error);
  }
  ds_onnx_builder_free(c);
  return g;
}

static gboolean translate_if(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  const DsOnnxGraph *then_g = graph_attr(node, "then_branch", error);
  const DsOnnxGraph *else_g = then_g != NULL ? graph_attr(node, "else_branch", error) : NULL;
  if (else_g == NULL)
    return FALSE;
  if (then_g->n_outputs != else_g->n_outputs || then_g->n_outputs != node->n_outputs)
    return ds_onnx_invalid(error,
                           "the branches give %" G_GSIZE_FORMAT " and %" G_GSIZE_FORMAT
                           " outputs for the node's %" G_GSIZE_FORMAT,
                           then_g->n_outputs, else_g->n_outputs, node->n_outputs);
  g_autoptr(GArray) inputs = g_array_new(FALSE, FALSE, sizeof(DsEntry));
  DsEntry cond;
  if (!ds_onnx_input(b, node, 0, &cond, error))
    return FALSE;
  g_array_append_val(inputs, cond);

  DsOnnxBuilder *c = ds_onnx_builder_new_child(b, "cond");
  DsEntry in = ds_onnx_builder_add_input(c, "condition", DS_DTYPE_BOOL, -1);
  DsNode *pass = emit_glue(c, node, "_copy", "go", &in, 1, error, NULL, NULL, NULL, NULL);
  DsEntry head = pass != NULL ? ds_onnx_entry(pass, 0) : in;
  DsGraph *subgraphs[3] = {pass != NULL ? ds_onnx_builder_finish(c, &head, 1, error) : NULL};
  ds_onnx_builder_free(c);
  g_autoptr(GArray) then_locs = g_array_new(FALSE, FALSE, sizeof(int));
  g_autoptr(GArray) else_locs = g_array_new(FALSE, FALSE, sizeof(int));
  if (subgraphs[0] != NULL)
    subgraphs[1] = if_branch(b, then_g, "then", inputs, then_locs, error);
  if (subgraphs[1] != NULL)
    subgraphs[2] = if_branch(b, else_g, "else", inputs, else_locs, error);
  if (subgraphs[2] == NULL) {
    ds_graph_unref(subgraphs[0]);
    ds_graph_unref(subgraphs[1]);
    return FALSE;
  }
  g_autoptr(GArray) cond_locs = g_array_new(FALSE, FALSE, sizeof(int));
  push_loc(cond_locs, 0);
  Attrs a = {0};
  attrs_add(&a, "num_args", ds_onnx_printf(b, "%u", inputs->len + 3));
  attrs_add(&a, "num_outputs", ds_onnx_printf(b, "%" G_GSIZE_FORMAT, node->n_outputs));
  attrs_add(&a, "cond_input_locs", fmt_locs(b, cond_locs));
  attrs_add(&a, "then_input_locs", fmt_locs(b, then_locs));
  attrs_add(&a, "else_input_locs", fmt_locs(b, else_locs));
  attrs_add(&a, "__branch_shapes__", "any"); /* ONNX's rule (see DsCondParam) */
  DsNode *n = ds_onnx_emit_control(b, node, "_cond", NULL, (DsEntry *)inputs->data, inputs->len,
                                   subgraphs, 3, a.keys, a.values, a.n, error);
  return n != NULL && ds_onnx_bind_outputs(b, node, n, error);
}

/* ---- Scan -------------------------------------------------------------------------------- */

/* An axis list attribute of `n` entries, 0 where the attribute is absent. */
static gboolean scan_axes(const DsOnnxNode *node, const char *name, gint64 *out, guint n,
                          GError **error)
{
  for (guint i = 0; i < n; i++)
    out[i] = 0;
  int got = ds_onnx_attr_ints(node, name, out, (int)n);
  if (got >= 0 && (guint)got != n)
    return ds_onnx_invalid(error, "attribute %s has %d entries for %u values", name, got, n);
  return TRUE;
}

/* `x` with axis `axis` moved to the front (or back from it), for a tensor of rank `rank`. */
static gboolean move_axis(DsOnnxBuilder *b, const DsOnnxNode *node, DsEntry *x, gint64 axis,
                          int rank, gboolean to_front, const char *suffix, GError **error)
{
  if (axis == 0)
    return TRUE;
  if (rank < 0)
    return ds_onnx_unsupported(error, "a scan axis other than 0 on a value of unknown rank");
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return ds_onnx_invalid(error, "scan axis %" G_GINT64_FORMAT " is out of range for rank %d",
                           axis, rank);
  gint64 perm[DS_MAX_NDIM];
  for (int p = 0; p < rank; p++) {
    if (to_front) /* (axis, the others in order) */
      perm[p] = p == 0 ? axis : p <= axis ? p - 1 : p;
    else /* the inverse: axis 0 goes to position `axis` */
      perm[p] = p < axis ? p + 1 : p == axis ? 0 : p;
  }
  DsNode *t = ds_onnx_emit(b, node, "transpose", suffix, x, 1, error, "axes",
                           ds_onnx_fmt_ints(b, perm, rank), NULL);
  if (t == NULL)
    return FALSE;
  *x = ds_onnx_entry(t, 0);
  return TRUE;
}

static gboolean reverse_front(DsOnnxBuilder *b, const DsOnnxNode *node, DsEntry *x,
                              const char *suffix, GError **error)
{
  DsNode *r = ds_onnx_emit(b, node, "reverse", suffix, x, 1, error, "axis", "(0,)", NULL);
  if (r == NULL)
    return FALSE;
  *x = ds_onnx_entry(r, 0);
  return TRUE;
}

static gboolean translate_scan(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  const DsOnnxGraph *body = graph_attr(node, "body", error);
  if (body == NULL)
    return FALSE;
  gint64 m = ds_onnx_attr_int(node, "num_scan_inputs", -1);
  if (m < 1 || (gsize)m > node->n_inputs)
    return ds_onnx_invalid(error, "num_scan_inputs must be between 1 and the input count");
  guint n_scan_in = (guint)m, n_states = (guint)node->n_inputs - n_scan_in;
  if (body->n_inputs != n_states + n_scan_in || body->n_outputs < n_states)
    return ds_onnx_invalid(error, "the body's inputs and outputs do not match the node's");
  guint n_scan_out = (guint)body->n_outputs - n_states;
  g_autofree gint64 *in_axes = g_new(gint64, n_scan_in), *in_dirs = g_new(gint64, n_scan_in);
  g_autofree gint64 *out_axes = g_new(gint64, MAX(n_scan_out, 1));
  g_autofree gint64 *out_dirs = g_new(gint64, MAX(n_scan_out, 1));
  if (!scan_axes(node, "scan_input_axes", in_axes, n_scan_in, error) ||
      !scan_axes(node, "scan_input_directions", in_dirs, n_scan_in, error) ||
      !scan_axes(node, "scan_output_axes", out_axes, n_scan_out, error) ||
      !scan_axes(node, "scan_output_directions", out_dirs, n_scan_out, error))
    return FALSE;

  /* Node inputs: the scanned arrays (axis moved to the front, reversed if asked), then the
   * initial states, then captures. */
  g_autoptr(GArray) inputs = g_array_new(FALSE, FALSE, sizeof(DsEntry));
  for (guint j = 0; j < n_scan_in; j++) {
    DsEntry x;
    if (!ds_onnx_input(b, node, n_states + j, &x, error) ||
        !move_axis(b, node, &x, in_axes[j], ds_onnx_input_rank(b, node, n_states + j), TRUE,
                   ds_onnx_printf(b, "scan_input%u", j), error) ||
        (in_dirs[j] == 1 && !reverse_front(b, node, &x, ds_onnx_printf(b, "reverse_input%u", j),
                                           error)))
      return FALSE;
    g_array_append_val(inputs, x);
  }
  for (guint i = 0; i < n_states; i++) {
    DsEntry s;
    if (!ds_onnx_input(b, node, i, &s, error))
      return FALSE;
    g_array_append_val(inputs, s);
  }

  DsOnnxBuilder *f = ds_onnx_builder_new_child(b, "body");
  for (guint i = 0; i < n_states + n_scan_in; i++)
    add_body_input(f, &body->inputs[i], DS_DTYPE_UNKNOWN, 0);
  g_autofree DsEntry *heads = g_new(DsEntry, n_scan_out + n_states);
  gboolean ok = ds_onnx_builder_translate(f, body, error);
  for (guint k = 0; ok && k < n_scan_out; k++)
    ok = ds_onnx_lookup(f, body->outputs[n_states + k].name, &heads[k], error);
  for (guint i = 0; ok && i < n_states; i++)
    ok = ds_onnx_lookup(f, body->outputs[i].name, &heads[n_scan_out + i], error);
  g_autoptr(GArray) data_locs = g_array_new(FALSE, FALSE, sizeof(int));
  g_autoptr(GArray) state_locs = g_array_new(FALSE, FALSE, sizeof(int));
  g_autoptr(GArray) remain_locs = g_array_new(FALSE, FALSE, sizeof(int));
  g_autoptr(GArray) capture_inputs = g_array_new(FALSE, FALSE, sizeof(DsEntry));
  DsGraph *sub = NULL;
  if (ok) {
    for (guint j = 0; j < n_scan_in; j++)
      push_loc(data_locs, (int)(n_states + j));
    for (guint i = 0; i < n_states; i++)
      push_loc(state_locs, (int)i);
    /* Captures are body inputs after the declared ones, fed after the states. */
    g_autoptr(GArray) positions = g_array_new(FALSE, FALSE, sizeof(int));
    feed_captures(f, capture_inputs, positions);
    for (guint c = 0; c < positions->len; c++)
      push_loc(remain_locs, (int)(n_states + n_scan_in + c));
    sub = ds_onnx_builder_finish(f, heads, n_scan_out + n_states, error);
  }
  g_autofree int *out_ranks = g_new(int, MAX(n_scan_out, 1));
  for (guint k = 0; k < n_scan_out; k++) {
    int r = ds_onnx_value_rank(f, body->outputs[n_states + k].name);
    out_ranks[k] = r < 0 ? -1 : r + 1;
  }
  ds_onnx_builder_free(f);
  if (sub == NULL)
    return FALSE;
  /* The body's capture variables follow its declared inputs one to one. */
  g_array_append_vals(inputs, capture_inputs->data, capture_inputs->len);

  Attrs a = {0};
  attrs_add(&a, "num_args", ds_onnx_printf(b, "%u", inputs->len + 1));
  attrs_add(&a, "num_outputs", ds_onnx_printf(b, "%u", n_scan_out + n_states));
  attrs_add(&a, "num_out_data", ds_onnx_printf(b, "%u", n_scan_out));
  attrs_add(&a, "in_data_locs", fmt_locs(b, data_locs));
  attrs_add(&a, "in_state_locs", fmt_locs(b, state_locs));
  attrs_add(&a, "remain_locs", fmt_locs(b, remain_locs));
  DsNode *loop = ds_onnx_emit_control(b, node, "_foreach", NULL, (DsEntry *)inputs->data,
                                      inputs->len, &sub, 1, a.keys, a.values, a.n, error);
  if (loop == NULL)
    return FALSE;
  for (guint i = 0; i < n_states; i++)
    ds_onnx_set_output(b, node, i, ds_onnx_entry(loop, n_scan_out + i), error);
  for (guint k = 0; k < n_scan_out; k++) {
    DsEntry y = ds_onnx_entry(loop, k);
    if ((out_dirs[k] == 1 &&
         !reverse_front(b, node, &y, ds_onnx_printf(b, "reverse_output%u", k), error)) ||
        !move_axis(b, node, &y, out_axes[k], out_ranks[k], FALSE,
                   ds_onnx_printf(b, "scan_output%u", k), error))
      return FALSE;
    ds_onnx_set_output(b, node, n_states + k, y, error);
  }
  return TRUE;
}

const DsOnnxOpTranslator ds_onnx_control_ops[] = {
    {"Loop", 1, translate_loop, 21},
    {"If", 1, translate_if, 21},
    {"Scan", 9, translate_scan, 21},
    {NULL, 0, NULL},
};
