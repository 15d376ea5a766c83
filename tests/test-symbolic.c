/* test-symbolic.c: the symbolic shape engine end to end, through the session API.
 *
 *  - Property: for every model this build can infer, shapes inferred once as expressions and
 *    then evaluated for random sizes must equal, dim for dim, a fresh concrete inference of the
 *    same model at those sizes.
 *  - The --shapes results people rely on: resnet18's first conv and output, bert's learned
 *    `s1 == 384`, squeezenet's Concat sums, and no entry left unknown that MXNet can infer.
 *  - Facts on small hand-written graphs: merges, broadcast deduction with and without `> 1`
 *    facts, contradictions, Reshape's -1.
 *
 * Expressions on their own (canonical forms, ranges, unbacked symbols) are in test-expr.c. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "ds-config.h"
#include "ds-error.h"
#include "ds-expr.h"
#include "ds-session.h"

#define N_TRIALS 8
#define MAX_REPORTED 20

static char *model_path(const char *file)
{
  const char *shared = g_getenv("DS_SHARED_DIR");
  return g_build_filename(shared != NULL ? shared : DS_SHARED_DIR, "models", "mxnet", file, NULL);
}

static DsSession *open_file(const char *path)
{
  GError *error = NULL;
  DsSession *session = ds_session_new(path, &error);
  if (error != NULL)
    g_test_message("%s: %s", path, error->message);
  g_assert_no_error(error);
  g_assert_nonnull(session);
  return session;
}

static DsSession *open_model(const char *file)
{
  g_autofree char *path = model_path(file);
  return open_file(path);
}

static DsShape parse_shape(DsSession *session, const char *text)
{
  GError *error = NULL;
  DsShape shape;
  gboolean ok = ds_session_parse_shape(session, text, &shape, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
  return shape;
}

static void declare(DsSession *session, const char *name, const char *text)
{
  GError *error = NULL;
  DsShape shape = parse_shape(session, text);
  gboolean ok = ds_session_declare_shape(session, name, &shape, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
}

static void assume(DsSession *session, const char *text)
{
  GError *error = NULL;
  gboolean ok = ds_session_assume(session, text, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
}

static const DsGraphShapes *infer_symbolic(DsSession *session)
{
  GError *error = NULL;
  const DsGraphShapes *shapes = ds_session_infer_symbolic(session, &error);
  if (error != NULL)
    g_test_message("%s: %s", ds_session_get_model_path(session), error->message);
  g_assert_no_error(error);
  g_assert_nonnull(shapes);
  return shapes;
}

/* Output `k` of node `name`. */
static const DsShape *entry_shape(DsSession *session, const DsGraphShapes *shapes,
                                  const char *name, guint k)
{
  DsGraph *graph = ds_session_get_graph(session);
  DsNode *node = ds_graph_find_node(graph, name);
  g_assert_nonnull(node);
  g_assert_cmpuint(k, <, node->n_outputs);
  return &shapes->shapes[graph->node_row_ptr[node->id] + k];
}

static void assert_entry(DsSession *session, const DsGraphShapes *shapes, const char *name,
                         const char *expected)
{
  g_autofree char *text = ds_shape_to_string(entry_shape(session, shapes, name, 0));
  g_assert_cmpstr(text, ==, expected);
}

/* The facts as "text [reason]" lines, for messages. */
static char *facts_text(DsSession *session)
{
  g_autoptr(GPtrArray) facts = ds_expr_ctx_list_facts(ds_session_get_exprs(session));
  GString *out = g_string_new(NULL);
  for (guint i = 0; i < facts->len; i++) {
    const DsExprFact *f = facts->pdata[i];
    g_string_append_printf(out, "%s%s%s%s%s", i ? "; " : "", f->text, f->reason ? " [" : "",
                           f->reason ? f->reason : "", f->reason ? "]" : "");
  }
  return g_string_free(out, FALSE);
}

/* TRUE if a fact reads exactly `text` and its reason contains `reason` (NULL: no reason). */
static gboolean has_fact(DsSession *session, const char *text, const char *reason)
{
  g_autoptr(GPtrArray) facts = ds_expr_ctx_list_facts(ds_session_get_exprs(session));
  for (guint i = 0; i < facts->len; i++) {
    const DsExprFact *f = facts->pdata[i];
    if (strcmp(f->text, text) != 0)
      continue;
    if (reason == NULL ? f->reason == NULL : f->reason != NULL && strstr(f->reason, reason))
      return TRUE;
  }
  return FALSE;
}

static guint n_equality_facts(DsSession *session)
{
  g_autoptr(GPtrArray) facts = ds_expr_ctx_list_facts(ds_session_get_exprs(session));
  guint n = 0;
  for (guint i = 0; i < facts->len; i++)
    n += strstr(((const DsExprFact *)facts->pdata[i])->text, " == ") != NULL;
  return n;
}

/* ------------------------------------------------------------------------------------------ */
/* Property: symbolic shapes evaluated at random sizes equal concrete inference at those sizes */

typedef struct {
  const char *name;
  const char *shape;
} InputDecl;

/* Sizes worth trying for a symbol: what a user would feed, inside what the model accepts. */
typedef struct {
  const char *symbol;
  int lo, hi;
} SymbolRange;

typedef struct {
  const char *label;
  const char *file;
  InputDecl inputs[4];
  SymbolRange ranges[4];
  /* The model still has ops this build does not infer: compare only the dims both sides
   * know, instead of requiring the same known/unknown pattern. */
  gboolean partial;
} PropertyModel;

static const PropertyModel property_models[] = {
  {"mlp", "djl_mlp-symbol.json", {{"data", "(s0, 784)"}}, {{"s0", 1, 8}}, FALSE},
  {"resnet18", "gluoncv_resnet18_v1-symbol.json", {{"data", "(s0, 3, s1, s2)"}},
   {{"s0", 1, 8}, {"s1", 32, 300}, {"s2", 32, 300}}, FALSE},
  /* squeezenet ends in a 13x13 average pool (not a global one): below 213 pixels its input is
   * smaller than the kernel, which concrete inference rejects. */
  {"squeezenet", "gluoncv_squeezenet1.0-symbol.json", {{"data", "(s0, 3, s1, s2)"}},
   {{"s0", 1, 8}, {"s1", 224, 320}, {"s2", 224, 320}}, FALSE},
  {"dnnl-model1", "mxnet_test_dnnl_model1.json", {{"data", "(s0, 3, s1, s2)"}},
   {{"s0", 1, 8}, {"s1", 32, 300}, {"s2", 32, 300}}, FALSE},
  {"legacy-000800", "mxnet_legacy_save_000800.json", {{"data", "(s0, s1)"}},
   {{"s0", 1, 8}, {"s1", 1, 64}}, FALSE},
  {"bert", "gluonnlp_static_bert_qa-symbol.json",
   {{"data0", "(s0, s1)"}, {"data1", "(s0, s1)"}, {"data2", "(s0,)"}},
   {{"s0", 1, 8}, {"s1", 1, 64}}, FALSE},
  /* RNN's layout is TNC: s0 is the sequence length, s1 the batch. */
  {"lstm-ptb", "mms_lstm_ptb-symbol.json", {{"data", "(s0, s1)"}},
   {{"s0", 1, 64}, {"s1", 1, 8}}, FALSE},
  /* Mask R-CNN keeps the first 1000 of 15*ceil(h/16)*ceil(w/16) RPN boxes (slice_axis): below
   * about 129 px a side that slice does not fit, and MXNet refuses the size too. */
  {"mask-rcnn", "gluoncv_mask_rcnn_resnet18_v1b_coco-symbol.json", {{"data", "(s0, 3, s1, s2)"}},
   {{"s0", 1, 2}, {"s1", 129, 300}, {"s2", 129, 300}}, TRUE},
  {"ssd", "gluoncv_ssd_512_resnet50_v1-symbol.json", {{"data", "(s0, 3, s1, s2)"}},
   {{"s0", 1, 4}, {"s1", 64, 300}, {"s2", 64, 300}}, TRUE},
};

static void sensible_range(const PropertyModel *m, const char *symbol, int64_t *lo, int64_t *hi)
{
  /* Symbols the engine made itself (MXNet's unknown `__shape__` dims) are batch-like. */
  *lo = 1;
  *hi = 8;
  for (guint i = 0; i < G_N_ELEMENTS(m->ranges) && m->ranges[i].symbol != NULL; i++)
    if (strcmp(m->ranges[i].symbol, symbol) == 0) {
      *lo = m->ranges[i].lo;
      *hi = m->ranges[i].hi;
    }
}

static gboolean dim_is_unknown(DsDim d) { return d.expr == NULL && d.value < 0; }

/* Compares one entry; returns FALSE on a mismatch. `*both_known` tells whether both shapes
 * were complete (so the entry counts as compared). */
static gboolean entries_agree(const DsShape *sym, const DsShape *con, gboolean partial,
                              gboolean *both_known)
{
  *both_known = ds_shape_is_known(con) && ds_shape_is_known(sym);
  if (partial) {
    if (sym->ndim < 0 || con->ndim < 0)
      return TRUE;
    if (sym->ndim != con->ndim)
      return FALSE;
    for (int i = 0; i < sym->ndim; i++)
      if (ds_dim_is_const(sym->dims[i]) && ds_dim_is_const(con->dims[i]) &&
          sym->dims[i].value != con->dims[i].value)
        return FALSE;
    return TRUE;
  }
  if (sym->ndim != con->ndim)
    return FALSE;
  for (int i = 0; i < sym->ndim; i++) {
    DsDim a = sym->dims[i], b = con->dims[i];
    /* A dim still symbolic after binding every free symbol did not evaluate. */
    if (a.expr != NULL)
      return FALSE;
    if (dim_is_unknown(a) != dim_is_unknown(b))
      return FALSE;
    if (!dim_is_unknown(a) && a.value != b.value)
      return FALSE;
  }
  return TRUE;
}

typedef struct {
  guint entries;    /* entries compared, both sides complete */
  guint dims;       /* dims compared */
  guint mismatches;
} PropertyStats;

static void run_trial(const PropertyModel *m, DsSession *sym, const DsGraphShapes *symbolic,
                      const DsShape *declared, guint n_inputs, const GArray *free_ids,
                      const GArray *lows, const GArray *highs, PropertyStats *stats)
{
  GError *error = NULL;
  DsExprCtx *exprs = ds_session_get_exprs(sym);
  guint n_symbols = ds_expr_ctx_get_n_symbols(exprs);
  g_autofree int64_t *values = g_new0(int64_t, n_symbols);
  g_autofree gboolean *bound = g_new0(gboolean, n_symbols);
  g_autoptr(GString) binding = g_string_new(NULL);

  for (guint i = 0; i < free_ids->len; i++) {
    guint id = g_array_index(free_ids, guint, i);
    int64_t lo = g_array_index(lows, int64_t, i), hi = g_array_index(highs, int64_t, i);
    int64_t v = g_test_rand_int_range((gint32)lo, (gint32)hi + 1);
    const char *name = ds_expr_get_symbol_name(ds_expr_ctx_get_symbol(exprs, id));
    values[id] = v;
    bound[id] = TRUE;
    g_assert_true(ds_session_bind_symbol(sym, name, v, &error));
    g_assert_no_error(error);
    g_string_append_printf(binding, "%s%s=%" G_GINT64_FORMAT, i ? " " : "", name, v);
  }

  /* The concrete session gets the declared shapes evaluated independently of the symbolic
   * session's inference, as a user would type them. */
  g_autoptr(DsSession) con = open_model(m->file);
  for (guint i = 0; i < n_inputs; i++) {
    int64_t dims[DS_MAX_NDIM];
    for (int d = 0; d < declared[i].ndim; d++) {
      DsDim dim = declared[i].dims[d];
      dims[d] = dim.value;
      if (dim.expr != NULL)
        g_assert_true(ds_expr_eval(exprs, dim.expr, values, bound, &dims[d]));
    }
    DsShape shape = ds_shape_from_concrete(dims, declared[i].ndim);
    g_assert_true(ds_session_declare_shape(con, m->inputs[i].name, &shape, &error));
    g_assert_no_error(error);
  }
  const DsGraphShapes *concrete = ds_session_infer_partial(con, &error);
  if (error != NULL)
    g_test_message("%s (%s): concrete inference: %s", m->label, binding->str, error->message);
  g_assert_no_error(error);
  g_autoptr(DsGraphShapes) evaluated = ds_session_evaluate(sym, symbolic, TRUE, &error);
  g_assert_no_error(error);

  DsGraph *graph = ds_session_get_graph(sym);
  DsGraph *cgraph = ds_session_get_graph(con);
  g_assert_cmpuint(ds_graph_n_entries(graph), ==, ds_graph_n_entries(cgraph));
  for (guint n = 0; n < graph->n_nodes; n++) {
    const DsNode *node = graph->nodes[n];
    for (guint k = 0; k < node->n_outputs; k++) {
      guint e = graph->node_row_ptr[n] + k;
      const DsShape *a = &evaluated->shapes[e], *b = &concrete->shapes[e];
      gboolean both_known;
      if (entries_agree(a, b, m->partial, &both_known)) {
        if (both_known) {
          stats->entries++;
          stats->dims += (guint)a->ndim;
        }
        continue;
      }
      if (++stats->mismatches <= MAX_REPORTED) {
        g_autofree char *s = ds_shape_to_string(&symbolic->shapes[e]);
        g_autofree char *sa = ds_shape_to_string(a);
        g_autofree char *sb = ds_shape_to_string(b);
        g_test_message("%s: node '%s' (%s) output %u with %s: symbolic %s evaluates to %s, "
                       "concrete inference gives %s",
                       m->label, node->name, node->op_name, k, binding->str, s, sa, sb);
      }
    }
  }

  for (guint i = 0; i < free_ids->len; i++) {
    const DsExpr *s = ds_expr_ctx_get_symbol(exprs, g_array_index(free_ids, guint, i));
    ds_session_unbind_symbol(sym, ds_expr_get_symbol_name(s));
  }
}

static void test_property(gconstpointer data)
{
  const PropertyModel *m = data;
  g_autoptr(DsSession) sym = open_model(m->file);
  DsShape declared[G_N_ELEMENTS(m->inputs)];
  guint n_inputs = 0;
  for (; n_inputs < G_N_ELEMENTS(m->inputs) && m->inputs[n_inputs].name != NULL; n_inputs++) {
    declared[n_inputs] = parse_shape(sym, m->inputs[n_inputs].shape);
    declare(sym, m->inputs[n_inputs].name, m->inputs[n_inputs].shape);
  }
  const DsGraphShapes *symbolic = infer_symbolic(sym);
  g_autofree char *facts = facts_text(sym);
  g_test_message("%s: facts: %s", m->label, *facts ? facts : "(none)");

  /* Free symbols: neither merged into another expression or constant (bert's s1 == 384) nor
   * data-dependent; each gets a sensible size inside the range the facts allow. */
  DsExprCtx *exprs = ds_session_get_exprs(sym);
  g_autoptr(GArray) free_ids = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) lows = g_array_new(FALSE, FALSE, sizeof(int64_t));
  g_autoptr(GArray) highs = g_array_new(FALSE, FALSE, sizeof(int64_t));
  g_autoptr(GString) free_text = g_string_new(NULL);
  for (guint id = 0; id < ds_expr_ctx_get_n_symbols(exprs); id++) {
    const DsExpr *s = ds_expr_ctx_get_symbol(exprs, id);
    if (ds_expr_is_unbacked(s) || ds_expr_resolve(exprs, s) != s)
      continue;
    int64_t lo, hi, want_lo, want_hi;
    ds_expr_ctx_get_range(exprs, s, &lo, &hi);
    sensible_range(m, ds_expr_get_symbol_name(s), &want_lo, &want_hi);
    lo = MAX(lo, want_lo);
    hi = MIN(hi, want_hi);
    g_assert_cmpint(lo, <=, hi);
    g_array_append_val(free_ids, id);
    g_array_append_val(lows, lo);
    g_array_append_val(highs, hi);
    g_string_append_printf(free_text, " %s in [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]",
                           ds_expr_get_symbol_name(s), lo, hi);
  }
  g_test_message("%s: free symbols:%s", m->label, free_text->str);
  g_assert_cmpuint(free_ids->len, >, 0);

  PropertyStats stats = {0};
  for (int t = 0; t < N_TRIALS; t++)
    run_trial(m, sym, symbolic, declared, n_inputs, free_ids, lows, highs, &stats);
  DsGraph *graph = ds_session_get_graph(sym);
  g_test_message("%s: %u trials; %u nodes, %u entries each; compared %u complete entries "
                 "(%u dims) in all; %u mismatches",
                 m->label, N_TRIALS, graph->n_nodes, ds_graph_n_entries(graph), stats.entries,
                 stats.dims, stats.mismatches);
  if (stats.mismatches > 0)
    g_test_fail_printf("%s: %u entries differ from concrete inference (see messages)", m->label,
                       stats.mismatches);
  g_assert_cmpuint(stats.entries, >, 0);
}

/* ------------------------------------------------------------------------------------------ */
/* Expected --shapes results on the real models                                              */

static void assert_infer_fails(DsSession *s, const char *const *needles);

static void test_resnet18_expressions(void)
{
  g_autoptr(DsSession) s = open_model("gluoncv_resnet18_v1-symbol.json");
  declare(s, "data", "(s0,3,s1,s2)");
  const DsGraphShapes *shapes = infer_symbolic(s);
  assert_entry(s, shapes, "data", "(s0, 3, s1, s2)");
  assert_entry(s, shapes, "resnetv10_conv0_fwd", "(s0, 64, (s1 - 1)//2 + 1, (s2 - 1)//2 + 1)");
  assert_entry(s, shapes, "resnetv10_dense0_fwd", "(s0, 1000)");
  /* Nothing about a CNN forces a relation between the sizes. */
  g_autofree char *facts = facts_text(s);
  g_assert_cmpstr(facts, ==, "");
  g_assert_cmpuint(ds_session_get_notes(s)->len, ==, 0);
}

static void test_bert_learns_sequence_length(void)
{
  g_autoptr(DsSession) s = open_model("gluonnlp_static_bert_qa-symbol.json");
  declare(s, "data0", "(s0, s1)");
  declare(s, "data1", "(s0, s1)");
  declare(s, "data2", "(s0,)");
  const DsGraphShapes *shapes = infer_symbolic(s);
  g_autofree char *facts = facts_text(s);
  g_test_message("bert facts: %s", facts);
  g_assert_true(has_fact(s, "s1 == 384", "node 'staticbertencoder0_broadcast_add0'"));
  g_assert_true(has_fact(s, "s1 == 384", "broadcast_add"));
  g_assert_cmpuint(ds_session_get_notes(s)->len, ==, 0);
  assert_entry(s, shapes, "data0", "(s0, 384)");
  assert_entry(s, shapes, "staticbertforqa0_dense0_fwd", "(s0, 384, 2)");

  /* Every expression must evaluate with s0 alone bound: it uses no other symbol. */
  DsExprCtx *exprs = ds_session_get_exprs(s);
  const DsExpr *s0 = ds_expr_symbol(exprs, "s0");
  guint n_symbols = ds_expr_ctx_get_n_symbols(exprs);
  g_autofree int64_t *values = g_new0(int64_t, n_symbols);
  g_autofree gboolean *bound = g_new0(gboolean, n_symbols);
  values[ds_expr_get_symbol_id(s0)] = 5;
  bound[ds_expr_get_symbol_id(s0)] = TRUE;
  DsGraph *graph = ds_session_get_graph(s);
  guint n_symbolic = 0, n_checked = 0;
  for (guint n = 0; n < graph->n_nodes; n++) {
    const DsNode *node = graph->nodes[n];
    for (guint k = 0; k < ds_node_n_op_outputs(node); k++) {
      const DsShape *shape = &shapes->shapes[graph->node_row_ptr[n] + k];
      g_assert_true(ds_shape_is_known(shape));
      n_checked++;
      for (int i = 0; i < shape->ndim; i++) {
        int64_t v;
        if (shape->dims[i].expr == NULL)
          continue;
        n_symbolic++;
        if (!ds_expr_eval(exprs, shape->dims[i].expr, values, bound, &v)) {
          g_autofree char *text = ds_shape_to_string(shape);
          g_test_fail_printf("node '%s' output %u has %s, which uses a symbol other than s0",
                             node->name, k, text);
        }
      }
    }
  }
  g_test_message("bert: %u entries, %u symbolic dims, all in s0", n_checked, n_symbolic);
  g_assert_cmpuint(n_symbolic, >, 0);
}

static void test_squeezenet_concat(void)
{
  g_autoptr(DsSession) s = open_model("gluoncv_squeezenet1.0-symbol.json");
  declare(s, "data", "(s0,3,s1,s2)");
  const DsGraphShapes *shapes = infer_symbolic(s);
  DsGraph *graph = ds_session_get_graph(s);
  guint n_concat = 0;
  for (guint n = 0; n < graph->n_nodes; n++) {
    const DsNode *node = graph->nodes[n];
    if (strcmp(node->op_name, "Concat") != 0)
      continue;
    n_concat++;
    const char *dim_attr = ds_node_get_attr(node, "dim");
    int axis = dim_attr != NULL ? (int)g_ascii_strtoll(dim_attr, NULL, 10) : 1;
    g_assert_cmpint(axis, ==, 1);
    const DsShape *out = &shapes->shapes[graph->node_row_ptr[n]];
    g_assert_cmpint(out->ndim, ==, 4);
    g_assert_true(ds_dim_is_const(out->dims[1]));
    int64_t sum = 0;
    for (guint i = 0; i < node->n_inputs; i++) {
      const DsShape *in = &shapes->shapes[ds_graph_entry_id(graph, node->inputs[i])];
      g_assert_cmpint(in->ndim, ==, 4);
      g_assert_true(ds_dim_is_const(in->dims[1]));
      sum += in->dims[1].value;
      for (int d = 0; d < 4; d++) {
        if (d == 1)
          continue;
        /* Hash-consed: the same expression is the same object. */
        g_assert_true(in->dims[d].expr == out->dims[d].expr);
        g_assert_cmpint(in->dims[d].value, ==, out->dims[d].value);
      }
    }
    g_assert_cmpint(out->dims[1].value, ==, sum);
    g_assert_nonnull(out->dims[2].expr);
    g_assert_nonnull(out->dims[3].expr);
    g_autofree char *text = ds_shape_to_string(out);
    g_test_message("%s: %u inputs -> %s", node->name, node->n_inputs, text);
  }
  g_assert_cmpuint(n_concat, ==, 8);
}

/* A size the facts keep below a kernel is refused, as concrete inference refuses it; a size
 * they leave open is accepted (squeezenet's 13x13 pool needs s1 >= 213). */
static void test_kernel_exceeds_input(void)
{
  static const char *const file = "gluoncv_squeezenet1.0-symbol.json";
  g_autoptr(DsSession) s = open_model(file);
  declare(s, "data", "(s0, 3, s1, s2)");
  assume(s, "s1<=100");
  assert_infer_fails(s, (const char *[]){"'squeezenet0_pool3_fwd'", "Pooling", "kernel size 13",
                                         "at most 5", "axis 0", NULL});

  /* Undecided: s1 = 213 fits exactly, so the shape stays an expression. */
  g_autoptr(DsSession) t = open_model(file);
  declare(t, "data", "(s0, 3, s1, s2)");
  assume(t, "s1<=213");
  const DsShape *pool = entry_shape(t, infer_symbolic(t), "squeezenet0_pool3_fwd", 0);
  g_assert_true(ds_shape_is_known(pool));
  g_assert_nonnull(pool->dims[2].expr);

  /* Sizes whose last feature map is 13 or 14 pixels pool to exactly 1x1. */
  g_autoptr(DsSession) u = open_model(file);
  declare(u, "data", "(s0, 3, s1, s2)");
  assume(u, "s1 in [213, 240]");
  assume(u, "s2 in [213, 240]");
  const DsGraphShapes *shapes = infer_symbolic(u);
  assert_entry(u, shapes, "squeezenet0_pool3_fwd", "(s0, 1000, 1, 1)");
  assert_entry(u, shapes, "squeezenet0_flatten0_flatten0", "(s0, 1000)");
}

typedef struct {
  const char *file;
  InputDecl inputs[4];
} KnownModel;

/* Op outputs (and variables) left unknown by symbolic inference, as "node:k" names. */
static char *unknown_entries(DsSession *s, const DsGraphShapes *shapes, guint *n_entries)
{
  DsGraph *graph = ds_session_get_graph(s);
  GString *out = g_string_new(NULL);
  *n_entries = 0;
  for (guint n = 0; n < graph->n_nodes; n++) {
    const DsNode *node = graph->nodes[n];
    for (guint k = 0; k < ds_node_n_op_outputs(node); k++) {
      (*n_entries)++;
      if (!ds_shape_is_known(&shapes->shapes[graph->node_row_ptr[n] + k]))
        g_string_append_printf(out, "%s%s:%u", out->len ? " " : "", node->name, k);
    }
  }
  return g_string_free(out, FALSE);
}

static void test_nothing_left_unknown(void)
{
  static const KnownModel models[] = {
    {"djl_mlp-symbol.json", {{"data", "(s0, 784)"}}},
    {"gluoncv_resnet18_v1-symbol.json", {{"data", "(s0, 3, s1, s2)"}}},
    {"gluoncv_squeezenet1.0-symbol.json", {{"data", "(s0, 3, s1, s2)"}}},
    {"mxnet_test_dnnl_model1.json", {{"data", "(s0, 3, s1, s2)"}}},
    {"gluonnlp_static_bert_qa-symbol.json",
     {{"data0", "(s0, s1)"}, {"data1", "(s0, s1)"}, {"data2", "(s0,)"}}},
    {"mxnet_legacy_save_000800.json", {{"data", "(s0, s1)"}}},
  };
  for (guint i = 0; i < G_N_ELEMENTS(models); i++) {
    g_autoptr(DsSession) s = open_model(models[i].file);
    for (guint j = 0; j < G_N_ELEMENTS(models[i].inputs) && models[i].inputs[j].name; j++)
      declare(s, models[i].inputs[j].name, models[i].inputs[j].shape);
    guint n_entries;
    g_autofree char *unknown = unknown_entries(s, infer_symbolic(s), &n_entries);
    g_test_message("%s: %u entries, unknown: %s", models[i].file, n_entries,
                   *unknown ? unknown : "(none)");
    g_assert_cmpstr(unknown, ==, "");
  }

  /* lstm_ptb: the label goes through Reshape (-1,) into SoftmaxOutput, which gives the
   * Reshape's output but cannot give back its input's shape; MXNet leaves it unknown too. */
  g_autoptr(DsSession) s = open_model("mms_lstm_ptb-symbol.json");
  declare(s, "data", "(s0, s1)");
  const DsGraphShapes *shapes = infer_symbolic(s);
  guint n_entries;
  g_autofree char *unknown = unknown_entries(s, shapes, &n_entries);
  g_test_message("mms_lstm_ptb: %u entries, unknown: %s", n_entries, unknown);
  g_assert_cmpstr(unknown, ==, "softmax_label:0");
  assert_entry(s, shapes, "reshape9", "(s0*s1,)");
  assert_entry(s, shapes, "softmax", "(s0*s1, 10000)");

  GError *error = NULL;
  g_autoptr(DsSession) c = open_model("mms_lstm_ptb-symbol.json");
  DsShape concrete = ds_shape_from_concrete((int64_t[]){5, 2}, 2);
  g_assert_true(ds_session_declare_shape(c, "data", &concrete, &error));
  const DsGraphShapes *cshapes = ds_session_infer_partial(c, &error);
  g_assert_no_error(error);
  g_autofree char *cunknown = unknown_entries(c, cshapes, &n_entries);
  g_assert_cmpstr(cunknown, ==, "softmax_label:0");
}

/* ------------------------------------------------------------------------------------------ */
/* Facts on small hand-written graphs                                                        */

typedef struct {
  char *dir;
  guint n;
} TmpGraphs;

/* A graph of variables `inputs` (in order) feeding one op node `name`, whose outputs are the
 * heads. `attrs` is a JSON object's body ("\"shape\": \"(-1, 3)\"") or NULL. */
static DsSession *one_op_session(TmpGraphs *tmp, const char *op, const char *name,
                                 const char *attrs, const char *const *inputs, guint n_inputs)
{
  g_autoptr(GString) json = g_string_new("{\"nodes\": [");
  for (guint i = 0; i < n_inputs; i++)
    g_string_append_printf(json, "{\"op\": \"null\", \"name\": \"%s\", \"inputs\": []}, ",
                           inputs[i]);
  g_string_append_printf(json, "{\"op\": \"%s\", \"name\": \"%s\", \"attrs\": {%s}, \"inputs\": [",
                         op, name, attrs != NULL ? attrs : "");
  for (guint i = 0; i < n_inputs; i++)
    g_string_append_printf(json, "%s[%u, 0, 0]", i ? ", " : "", i);
  g_string_append(json, "]}], \"arg_nodes\": [");
  for (guint i = 0; i < n_inputs; i++)
    g_string_append_printf(json, "%s%u", i ? ", " : "", i);
  g_string_append(json, "], \"node_row_ptr\": [");
  for (guint i = 0; i <= n_inputs + 1; i++)
    g_string_append_printf(json, "%s%u", i ? ", " : "", i);
  g_string_append_printf(json, "], \"heads\": [[%u, 0, 0]], "
                               "\"attrs\": {\"mxnet_version\": [\"int\", 10500]}}\n",
                         n_inputs);
  if (tmp->dir == NULL) {
    GError *error = NULL;
    tmp->dir = g_dir_make_tmp("ds-test-symbolic-XXXXXX", &error);
    g_assert_no_error(error);
  }
  g_autofree char *file = g_strdup_printf("graph%u.json", tmp->n++);
  g_autofree char *path = g_build_filename(tmp->dir, file, NULL);
  g_assert_true(g_file_set_contents(path, json->str, (gssize)json->len, NULL));
  DsSession *session = open_file(path);
  g_unlink(path);
  return session;
}

static void tmp_graphs_clear(TmpGraphs *tmp)
{
  if (tmp->dir != NULL)
    g_rmdir(tmp->dir);
  g_clear_pointer(&tmp->dir, g_free);
}

static const char *const AB[] = {"a", "b"};

static void test_merge_batch_dot(void)
{
  TmpGraphs tmp = {0};
  g_autoptr(DsSession) s = one_op_session(&tmp, "batch_dot", "dot0", NULL, AB, 2);
  declare(s, "a", "(s0, s1, s2)");
  declare(s, "b", "(s5, s3, s4)");
  const DsGraphShapes *shapes = infer_symbolic(s);
  g_autofree char *facts = facts_text(s);
  g_test_message("batch_dot facts: %s", facts);
  /* The batch dims and the contraction dims are the same size. */
  g_assert_true(has_fact(s, "s5 == s0", "node 'dot0' (batch_dot)"));
  g_assert_true(has_fact(s, "s3 == s2", "node 'dot0' (batch_dot)"));
  g_assert_cmpuint(n_equality_facts(s), ==, 2);
  assert_entry(s, shapes, "dot0", "(s0, s1, s4)");
  assert_entry(s, shapes, "b", "(s0, s2, s4)");

  /* transpose_b contracts against b's last dim. */
  g_autoptr(DsSession) t =
    one_op_session(&tmp, "batch_dot", "dot1", "\"transpose_b\": \"True\"", AB, 2);
  declare(t, "a", "(s0, s1, s2)");
  declare(t, "b", "(s0, s3, s4)");
  shapes = infer_symbolic(t);
  g_assert_true(has_fact(t, "s4 == s2", "node 'dot1' (batch_dot)"));
  g_assert_cmpuint(n_equality_facts(t), ==, 1);
  assert_entry(t, shapes, "dot1", "(s0, s1, s3)");
  tmp_graphs_clear(&tmp);
}

static void test_merge_fully_connected(void)
{
  static const char *const inputs[] = {"x", "w", "bias"};
  TmpGraphs tmp = {0};
  g_autoptr(DsSession) s =
    one_op_session(&tmp, "FullyConnected", "fc0", "\"num_hidden\": \"8\"", inputs, 3);
  declare(s, "x", "(s0, s1, s2)");
  declare(s, "w", "(8, s3)");
  const DsGraphShapes *shapes = infer_symbolic(s);
  /* flatten=True: the weight's input features are the product of x's trailing dims. */
  g_assert_true(has_fact(s, "s3 == s1*s2", "node 'fc0' (FullyConnected)"));
  g_assert_cmpuint(n_equality_facts(s), ==, 1);
  assert_entry(s, shapes, "fc0", "(s0, 8)");
  assert_entry(s, shapes, "w", "(8, s1*s2)");
  assert_entry(s, shapes, "bias", "(8,)");

  /* An undeclared weight takes its shape from the input: no fact needed. */
  g_autoptr(DsSession) u =
    one_op_session(&tmp, "FullyConnected", "fc1", "\"num_hidden\": \"8\"", inputs, 3);
  declare(u, "x", "(s0, s1)");
  shapes = infer_symbolic(u);
  g_assert_cmpuint(n_equality_facts(u), ==, 0);
  assert_entry(u, shapes, "w", "(8, s1)");
  assert_entry(u, shapes, "fc1", "(s0, 8)");

  /* flatten=False keeps the leading dims and contracts the last one. */
  g_autoptr(DsSession) v = one_op_session(
    &tmp, "FullyConnected", "fc2", "\"num_hidden\": \"8\", \"flatten\": \"False\"", inputs, 3);
  declare(v, "x", "(s0, s1, s2)");
  declare(v, "w", "(8, s3)");
  shapes = infer_symbolic(v);
  g_assert_true(has_fact(v, "s3 == s2", "node 'fc2' (FullyConnected)"));
  assert_entry(v, shapes, "fc2", "(s0, s1, 8)");
  tmp_graphs_clear(&tmp);
}

static void test_merge_elemwise(void)
{
  TmpGraphs tmp = {0};
  g_autoptr(DsSession) s = one_op_session(&tmp, "elemwise_add", "add0", NULL, AB, 2);
  declare(s, "a", "(s0, s1)");
  declare(s, "b", "(s2, s3)");
  const DsGraphShapes *shapes = infer_symbolic(s);
  g_assert_true(has_fact(s, "s2 == s0", "node 'add0' (elemwise_add)"));
  g_assert_true(has_fact(s, "s3 == s1", "node 'add0' (elemwise_add)"));
  g_assert_cmpuint(n_equality_facts(s), ==, 2);
  assert_entry(s, shapes, "b", "(s0, s1)");
  assert_entry(s, shapes, "add0", "(s0, s1)");

  /* A symbol against a constant is bound to it. */
  g_autoptr(DsSession) t = one_op_session(&tmp, "elemwise_mul", "mul0", NULL, AB, 2);
  declare(t, "a", "(s1, 4)");
  declare(t, "b", "(3, s2)");
  shapes = infer_symbolic(t);
  g_assert_true(has_fact(t, "s1 == 3", "node 'mul0' (elemwise_mul)"));
  g_assert_true(has_fact(t, "s2 == 4", "node 'mul0' (elemwise_mul)"));
  assert_entry(t, shapes, "mul0", "(3, 4)");
  tmp_graphs_clear(&tmp);
}

static void test_broadcast_assumed_above_one(void)
{
  TmpGraphs tmp = {0};
  g_autoptr(DsSession) s = one_op_session(&tmp, "broadcast_add", "badd0", NULL, AB, 2);
  declare(s, "a", "(s1,)");
  declare(s, "b", "(s2,)");
  assume(s, "s1>1");
  assume(s, "s2>1");
  const DsGraphShapes *shapes = infer_symbolic(s);
  /* Neither can be the broadcasting 1: they are equal. */
  g_assert_true(has_fact(s, "s2 == s1", "node 'badd0' (broadcast_add)"));
  g_assert_true(has_fact(s, "s1 in [2, inf)", "s1>1"));
  assert_entry(s, shapes, "badd0", "(s1,)");
  assert_entry(s, shapes, "b", "(s1,)");
  g_assert_cmpuint(ds_session_get_notes(s)->len, ==, 0);

  /* One side known > 1: the undecided one is taken to equal it, not to be a 1. */
  g_autoptr(DsSession) t = one_op_session(&tmp, "broadcast_mul", "bmul0", NULL, AB, 2);
  declare(t, "a", "(s1, s3)");
  declare(t, "b", "(s2, 5)");
  assume(t, "s1>=2");
  shapes = infer_symbolic(t);
  g_assert_true(has_fact(t, "s2 == s1", "node 'bmul0' (broadcast_mul)"));
  g_assert_true(has_fact(t, "s3 == 5", "node 'bmul0' (broadcast_mul)"));
  assert_entry(t, shapes, "bmul0", "(s1, 5)");
  g_assert_cmpuint(ds_session_get_notes(t)->len, ==, 0);
  tmp_graphs_clear(&tmp);
}

static void test_broadcast_undecided(void)
{
  TmpGraphs tmp = {0};
  g_autoptr(DsSession) s = one_op_session(&tmp, "broadcast_add", "badd0", NULL, AB, 2);
  declare(s, "a", "(s1,)");
  declare(s, "b", "(s2,)");
  const DsGraphShapes *shapes = infer_symbolic(s);
  assert_entry(s, shapes, "badd0", "(max(s1, s2),)");
  assert_entry(s, shapes, "a", "(s1,)");
  assert_entry(s, shapes, "b", "(s2,)");
  g_assert_cmpuint(n_equality_facts(s), ==, 0);
  /* One undecided broadcast, one note, however many passes inference takes. */
  GPtrArray *notes = ds_session_get_notes(s);
  for (guint i = 0; i < notes->len; i++)
    g_test_message("note: %s", (const char *)notes->pdata[i]);
  g_assert_cmpuint(notes->len, ==, 1);
  const char *note = notes->pdata[0];
  g_assert_nonnull(strstr(note, "badd0"));
  g_assert_nonnull(strstr(note, "max(s1, s2)"));

  /* Evaluated, max gives the broadcast result when either is 1. */
  GError *error = NULL;
  g_assert_true(ds_session_bind_symbol(s, "s1", 1, &error));
  g_assert_true(ds_session_bind_symbol(s, "s2", 6, &error));
  g_assert_no_error(error);
  g_autoptr(DsGraphShapes) v = ds_session_evaluate(s, shapes, FALSE, &error);
  g_assert_no_error(error);
  assert_entry(s, v, "badd0", "(6,)");
  tmp_graphs_clear(&tmp);
}

static void test_broadcast_declared_one(void)
{
  TmpGraphs tmp = {0};
  g_autoptr(DsSession) s = one_op_session(&tmp, "broadcast_add", "badd0", NULL, AB, 2);
  declare(s, "a", "(s1, 1, s3)");
  declare(s, "b", "(1, s2, 1)");
  const DsGraphShapes *shapes = infer_symbolic(s);
  assert_entry(s, shapes, "badd0", "(s1, s2, s3)");
  g_autofree char *facts = facts_text(s);
  g_assert_cmpstr(facts, ==, "");
  g_assert_cmpuint(ds_session_get_notes(s)->len, ==, 0);

  /* A symbol against a constant > 1 becomes that constant. */
  g_autoptr(DsSession) t = one_op_session(&tmp, "broadcast_add", "badd1", NULL, AB, 2);
  declare(t, "a", "(s1, 5)");
  declare(t, "b", "(7, s2)");
  shapes = infer_symbolic(t);
  g_assert_true(has_fact(t, "s1 == 7", "node 'badd1' (broadcast_add)"));
  g_assert_true(has_fact(t, "s2 == 5", "node 'badd1' (broadcast_add)"));
  assert_entry(t, shapes, "badd1", "(7, 5)");
  tmp_graphs_clear(&tmp);
}

/* Symbolic inference fails with a DS_ERROR_SHAPE error containing every needle. */
static void assert_infer_fails(DsSession *s, const char *const *needles)
{
  GError *error = NULL;
  g_assert_null(ds_session_infer_symbolic(s, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_SHAPE);
  g_test_message("expected error: %s", error->message);
  for (guint i = 0; needles[i] != NULL; i++)
    if (strstr(error->message, needles[i]) == NULL)
      g_test_fail_printf("error does not mention '%s': %s", needles[i], error->message);
  g_error_free(error);
}

static void test_contradictions(void)
{
  TmpGraphs tmp = {0};
  {
    g_autoptr(DsSession) s = one_op_session(&tmp, "elemwise_add", "add0", NULL, AB, 2);
    declare(s, "a", "(s1,)");
    declare(s, "b", "(3,)");
    assume(s, "s1>=4");
    assert_infer_fails(s, (const char *[]){"'add0'", "elemwise_add", "s1", "(3,)", NULL});
  }
  {
    /* Without the assumption the same graph binds s1. */
    g_autoptr(DsSession) s = one_op_session(&tmp, "elemwise_add", "add1", NULL, AB, 2);
    declare(s, "a", "(s1,)");
    declare(s, "b", "(3,)");
    assert_entry(s, infer_symbolic(s), "add1", "(3,)");
    g_assert_true(has_fact(s, "s1 == 3", "node 'add1' (elemwise_add)"));
  }
  {
    /* Both > 1 but their ranges do not meet: they cannot broadcast. */
    g_autoptr(DsSession) s = one_op_session(&tmp, "broadcast_add", "badd0", NULL, AB, 2);
    declare(s, "a", "(s1,)");
    declare(s, "b", "(s2,)");
    assume(s, "s1 in [2, 3]");
    assume(s, "s2>=5");
    assert_infer_fails(s, (const char *[]){"'badd0'", "broadcast_add", "s1", "s2", NULL});
  }
  {
    g_autoptr(DsSession) s = one_op_session(&tmp, "batch_dot", "dot0", NULL, AB, 2);
    declare(s, "a", "(s0, s1, 4)");
    declare(s, "b", "(s0, 5, s2)");
    assert_infer_fails(s, (const char *[]){"'dot0'", "batch_dot", "4", "5", NULL});
  }
  {
    static const char *const inputs[] = {"x", "w", "bias"};
    g_autoptr(DsSession) s =
      one_op_session(&tmp, "FullyConnected", "fc0", "\"num_hidden\": \"8\"", inputs, 3);
    declare(s, "x", "(s0, s1)");
    declare(s, "w", "(8, 4)");
    assume(s, "s1>=10");
    assert_infer_fails(s, (const char *[]){"'fc0'", "FullyConnected", "s1", "4", NULL});
  }
  tmp_graphs_clear(&tmp);
}

static void test_reshape_infer_dim(void)
{
  static const char *const X[] = {"x"};
  static const char *const attrs = "\"shape\": \"(-1, 3)\"";
  TmpGraphs tmp = {0};
  {
    /* s0 need not be a multiple of 3: refusing beats a size that is wrong for most s0. */
    g_autoptr(DsSession) s = one_op_session(&tmp, "Reshape", "reshape0", attrs, X, 1);
    declare(s, "x", "(s0,)");
    assert_infer_fails(s, (const char *[]){"'reshape0'", "Reshape", "-1", "s0", "3", NULL});
  }
  static const struct {
    const char *input;
    const char *assumption;
    const char *expected;
  } exact[] = {
    {"(3*s0,)", NULL, "(s0, 3)"},
    {"(s0, 6)", NULL, "(2*s0, 3)"},
    {"(s0, 3*s1)", NULL, "(s0*s1, 3)"},
    {"(s0,)", "s0 == 3*s1", "(s1, 3)"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(exact); i++) {
    g_autoptr(DsSession) s = one_op_session(&tmp, "Reshape", "reshape1", attrs, X, 1);
    declare(s, "x", exact[i].input);
    if (exact[i].assumption != NULL)
      assume(s, exact[i].assumption);
    const DsGraphShapes *shapes = infer_symbolic(s);
    g_test_message("Reshape (-1, 3) of %s: %s", exact[i].input, exact[i].expected);
    assert_entry(s, shapes, "reshape1", exact[i].expected);
  }
  tmp_graphs_clear(&tmp);
}

/* A binding that breaks a condition an op needs (a kernel larger than its input) is refused
 * when shapes are evaluated, as concrete inference refuses that size. */
static void test_guards_refuse_bad_bindings(void)
{
  g_autoptr(DsSession) session = open_model("gluoncv_squeezenet1.0-symbol.json");
  GError *error = NULL;
  DsShape shape;
  g_assert_true(ds_session_parse_shape(session, "(1, 3, s1, s1)", &shape, &error));
  g_assert_true(ds_session_declare_shape(session, "data", &shape, &error));
  const DsGraphShapes *symbolic = ds_session_infer_symbolic(session, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(ds_session_get_guards(session)->len, >, 0);

  g_assert_true(ds_session_bind_symbol(session, "s1", 100, &error));
  g_autoptr(DsGraphShapes) bad = ds_session_evaluate(session, symbolic, FALSE, &error);
  g_assert_null(bad);
  g_assert_error(error, DS_ERROR, DS_ERROR_SHAPE);
  g_assert_nonnull(strstr(error->message, "squeezenet0_pool3_fwd"));
  g_assert_nonnull(strstr(error->message, "kernel size 13"));
  g_clear_error(&error);

  ds_session_unbind_symbol(session, "s1");
  g_assert_true(ds_session_bind_symbol(session, "s1", 224, &error));
  g_autoptr(DsGraphShapes) good = ds_session_evaluate(session, symbolic, FALSE, &error);
  g_assert_no_error(error);
  g_assert_nonnull(good);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS(property_models); i++) {
    g_autofree char *path =
      g_strdup_printf("/engine/symbolic/property/%s", property_models[i].label);
    g_test_add_data_func(path, &property_models[i], test_property);
  }
  g_test_add_func("/engine/symbolic/shapes/resnet18", test_resnet18_expressions);
  g_test_add_func("/engine/symbolic/shapes/bert-sequence-length", test_bert_learns_sequence_length);
  g_test_add_func("/engine/symbolic/shapes/squeezenet-concat", test_squeezenet_concat);
  g_test_add_func("/engine/symbolic/shapes/nothing-left-unknown", test_nothing_left_unknown);
  g_test_add_func("/engine/symbolic/shapes/kernel-exceeds-input", test_kernel_exceeds_input);
  g_test_add_func("/engine/symbolic/guards/refuse-bad-bindings", test_guards_refuse_bad_bindings);
  g_test_add_func("/engine/symbolic/facts/batch-dot", test_merge_batch_dot);
  g_test_add_func("/engine/symbolic/facts/fully-connected", test_merge_fully_connected);
  g_test_add_func("/engine/symbolic/facts/elemwise", test_merge_elemwise);
  g_test_add_func("/engine/symbolic/facts/contradictions", test_contradictions);
  g_test_add_func("/engine/symbolic/broadcast/assumed-above-one", test_broadcast_assumed_above_one);
  g_test_add_func("/engine/symbolic/broadcast/undecided", test_broadcast_undecided);
  g_test_add_func("/engine/symbolic/broadcast/declared-one", test_broadcast_declared_one);
  g_test_add_func("/engine/symbolic/reshape/infer-dim", test_reshape_infer_dim);
  return g_test_run();
}
