/* test-gradients.c: every op's gradient against central finite differences, in float64.
 *
 * Each case is a graph of one op over variables x0, x1...; its heads are the op's visible
 * outputs. The backward graph (ds-backward.h) is fed random head gradients w and gives the
 * gradient of L = sum(w * y) with respect to every input; the check evaluates L at x ± h for
 * every element of every input the case checks (indices and masks are fed, not checked) and
 * compares (L(x + h) - L(x - h)) / 2h with it. The last case checks that every op with a
 * gradient has a case here. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ds-backend.h"
#include "ds-backward.h"
#include "ds-op.h"
#include "ds-session.h"
#include "ds-test-tmpdir.h"
#include "ops/ds-grad.h"

typedef struct {
  const char *op;        /* the op, or a model's label */
  const char *model;     /* a model file under the source tree instead of one op, or NULL */
  const char *json;      /* or the model's MXNet JSON itself */
  const char *attrs;     /* JSON members ("\"num_hidden\": \"4\""), or NULL */
  const char *shapes[8]; /* per input (the graph's variables in order), "(2, 3)" */
  double lo, hi;         /* inputs drawn uniformly from [lo, hi) */
  guint index_inputs;    /* bit i: input i holds integers in [index_lo, index_hi), fed, not
                          * checked */
  int index_lo, index_hi;
  int n_heads;           /* visible outputs; 0 means 1 */
  gboolean stops;        /* the gradient is zero by definition (BlockGrad), not the slope */
  DsLoopPolicy policy;   /* what loops keep for their backward pass */
  gboolean f32;          /* float32 (ops without float64 kernels): a wider step and tolerance */
  guint positive_inputs; /* bit i: input i is drawn from [0.5, 1.5) (a variance) */
  gboolean check_rows;   /* a loop whose count depends on data: output 0 has `rows` rows */
  int rows;
  /* SoftmaxOutput, a loss layer: its gradient is the cross-entropy's, -sum t log y over
   * (N, K) rows, t the label's one-hot row smoothed by `smooth`; rows labelled `ignore`
   * (when >= 0) count for nothing; divided by the rows (norm 1) or the rows not ignored
   * (norm 2), times `scale` */
  gboolean cross_entropy;
  double smooth, scale;
  int ignore, norm;
  int recomputed; /* with policy.recompute_cheap: how many values the backward pass makes
                   * again (nodes named *_recompute) */
} GradCase;

static char *tmpdir;
static GHashTable *covered; /* op names with a case */

/* The one-op graph as MXNet JSON. */
static char *case_json(const GradCase *c, int n_inputs)
{
  GString *s = g_string_new("{\"nodes\": [");
  for (int i = 0; i < n_inputs; i++)
    g_string_append_printf(s, "{\"op\": \"null\", \"name\": \"x%d\", \"inputs\": []}, ", i);
  g_string_append_printf(s, "{\"op\": \"%s\", \"name\": \"y\", \"attrs\": {%s}, \"inputs\": [",
                         c->op, c->attrs != NULL ? c->attrs : "");
  for (int i = 0; i < n_inputs; i++)
    g_string_append_printf(s, "%s[%d, 0, 0]", i ? ", " : "", i);
  g_string_append(s, "]}], \"arg_nodes\": [");
  for (int i = 0; i < n_inputs; i++)
    g_string_append_printf(s, "%s%d", i ? ", " : "", i);
  g_string_append(s, "], \"heads\": [");
  int n_heads = MAX(c->n_heads, 1);
  for (int h = 0; h < n_heads; h++)
    g_string_append_printf(s, "%s[%d, %d, 0]", h ? ", " : "", n_inputs, h);
  g_string_append(s, "], \"attrs\": {\"mxnet_version\": [\"int\", 10900]}}");
  return g_string_free(s, FALSE);
}

static DsNDArray *array_from(const char *shape_text, GRand *rand, double lo, double hi,
                             gboolean integers, DsDType dtype)
{
  int64_t dims[DS_MAX_NDIM];
  int ndim = 0;
  g_auto(GStrv) parts = g_strsplit_set(shape_text, "(), ", -1);
  for (char **p = parts; *p != NULL; p++)
    if (**p != '\0')
      dims[ndim++] = g_ascii_strtoll(*p, NULL, 10);
  DsNDArray *a = ds_ndarray_new(dtype, ndim, dims, "x", NULL);
  for (int64_t i = 0; i < ds_tensor_numel(&a->view); i++) {
    double v = integers ? floor(g_rand_double_range(rand, lo, hi)) : g_rand_double_range(rand, lo, hi);
    if (dtype == DS_DTYPE_FLOAT64)
      ((double *)a->view.data)[i] = v;
    else
      ((float *)a->view.data)[i] = (float)v;
  }
  return a;
}

static DsNDArray *array_copy(const DsTensor *t)
{
  DsNDArray *a = ds_ndarray_new(t->dtype, t->ndim, t->shape, "copy", NULL);
  memcpy(a->view.data, t->data, a->nbytes);
  return a;
}

/* The case's graph with its variables fed, in the order the graph lists them. */
static DsSession *open_case(const char *path, int n_inputs, DsNDArray **inputs)
{
  g_autoptr(GError) error = NULL;
  DsSession *session = ds_session_new(path, &error);
  g_assert_no_error(error);
  const DsGraph *graph = ds_session_get_graph(session);
  g_assert_cmpuint(graph->n_arg_nodes, ==, (guint)n_inputs);
  for (int i = 0; i < n_inputs; i++) {
    const char *name = graph->nodes[graph->arg_nodes[i]]->name;
    if (!ds_session_feed(session, name, array_copy(&inputs[i]->view), &error))
      g_error("%s: %s", path, error->message);
  }
  return session;
}

static void set_element(const DsTensor *t, int64_t i, double v)
{
  if (t->dtype == DS_DTYPE_FLOAT64)
    ((double *)t->data)[i] = v;
  else
    ((float *)t->data)[i] = (float)v;
}

static double cross_entropy(const GradCase *c, const DsTensor *y, const DsTensor *label)
{
  int64_t n = y->shape[0], k = y->shape[1], counted = 0;
  double l = 0.0;
  for (int64_t i = 0; i < n; i++) {
    int64_t want = (int64_t)ds_tensor_load_f64(label->dtype, label->data, i);
    if (c->ignore >= 0 && want == c->ignore)
      continue;
    counted++;
    for (int64_t j = 0; j < k; j++) {
      double t = j == want ? 1.0 - c->smooth : c->smooth / (double)(k - 1);
      l -= t * log(ds_tensor_load_f64(y->dtype, y->data, i * k + j));
    }
  }
  double divisor = c->norm == 1 ? (double)n : c->norm == 2 ? (double)MAX(counted, 1) : 1.0;
  return l * c->scale / divisor;
}

/* L = sum over heads of sum(w * y). */
static double loss(DsSession *session, int n_heads, DsNDArray **w)
{
  double l = 0.0;
  for (int h = 0; h < n_heads; h++) {
    const DsTensor *y = ds_session_get_output(session, (guint)h);
    if (!ds_dtype_is_float(y->dtype)) /* an index or a shape: no gradient flows from it */
      continue;
    for (int64_t i = 0; i < ds_tensor_numel(y); i++)
      l += ds_tensor_load_f64(y->dtype, y->data, i) *
           ds_tensor_load_f64(w[h]->view.dtype, w[h]->view.data, i);
  }
  return l;
}

static void run_case(gconstpointer data)
{
  const GradCase *c = data;
  int n_inputs = 0;
  while (n_inputs < 8 && c->shapes[n_inputs] != NULL)
    n_inputs++;
  int n_heads = MAX(c->n_heads, 1);
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  if (c->model != NULL) {
    /* the model's float32 variables declared float64 (MXNet's dtype 1), and so the values
     * its ops make (a loop counter) */
    const char *src = g_getenv("DS_SOURCE_DIR");
    g_autofree char *model = g_build_filename(src != NULL ? src : ".", c->model, NULL);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(model, &text, NULL, NULL));
    g_autoptr(GRegex) dtype = g_regex_new("\"__dtype__\": *\"0\"", 0, 0, NULL);
    g_autofree char *f64_vars =
        g_regex_replace_literal(dtype, text, -1, 0, "\"__dtype__\": \"1\"", 0, NULL);
    g_autoptr(GRegex) made = g_regex_new("\"dtype\": *\"float32\"", 0, 0, NULL);
    g_autofree char *f64 =
        g_regex_replace_literal(made, f64_vars, -1, 0, "\"dtype\": \"float64\"", 0, NULL);
    path = g_build_filename(tmpdir, "case-symbol.json", NULL);
    g_assert_true(g_file_set_contents(path, f64, -1, NULL));
  } else {
    g_autofree char *json = c->json != NULL ? g_strdup(c->json) : case_json(c, n_inputs);
    path = g_build_filename(tmpdir, "case-symbol.json", NULL);
    g_assert_true(g_file_set_contents(path, json, -1, NULL));
  }
  g_autoptr(GRand) rand = g_rand_new_with_seed(g_str_hash(c->op) ^ g_str_hash(c->attrs ? c->attrs : ""));
  DsNDArray *inputs[8];
  for (int i = 0; i < n_inputs; i++) {
    gboolean index = (c->index_inputs >> i) & 1;
    if ((c->positive_inputs >> i) & 1) {
      inputs[i] = array_from(c->shapes[i], rand, 0.5, 1.5, FALSE,
                             c->f32 ? DS_DTYPE_FLOAT32 : DS_DTYPE_FLOAT64);
      continue;
    }
    inputs[i] = array_from(c->shapes[i], rand, index ? c->index_lo : c->lo,
                           index ? c->index_hi : c->hi, index,
                           c->f32 ? DS_DTYPE_FLOAT32 : DS_DTYPE_FLOAT64);
  }

  /* forward alone: the outputs' shapes, for the head gradients, and the session perturbed */
  g_autoptr(DsSession) forward = open_case(path, n_inputs, inputs);
  if (!ds_session_prepare(forward, FALSE, 0, ds_backend_find("cpu"), 1, &error))
    g_error("%s: %s", c->op, error->message);
  if (!ds_session_run(forward, &error))
    g_error("%s: %s", c->op, error->message);
  if (c->check_rows)
    g_assert_cmpint(ds_session_get_output(forward, 0)->shape[0], ==, c->rows);
  DsNDArray *w[8];
  g_autofree char **head_names = g_new0(char *, n_heads + 1);
  for (int h = 0; h < n_heads; h++) {
    const DsTensor *y = ds_session_get_output(forward, (guint)h);
    w[h] = ds_ndarray_new(y->dtype == DS_DTYPE_FLOAT32 ? y->dtype : DS_DTYPE_FLOAT64, y->ndim,
                          y->shape, "w", NULL);
    for (int64_t i = 0; i < ds_tensor_numel(y); i++) {
      double v = g_rand_double_range(rand, -1, 1);
      if (w[h]->view.dtype == DS_DTYPE_FLOAT64)
        ((double *)w[h]->view.data)[i] = v;
      else
        ((float *)w[h]->view.data)[i] = (float)v;
    }
    head_names[h] = ds_graph_dup_output_name(ds_session_get_graph(forward), (guint)h);
  }

  /* forward and backward */
  g_autoptr(DsSession) both = open_case(path, n_inputs, inputs);
  /* head gradients for the float outputs; an index or a shape passes none */
  gboolean given[8] = {FALSE};
  for (int h = 0; h < n_heads; h++)
    given[h] = ds_dtype_is_float(ds_session_get_output(forward, (guint)h)->dtype);
  if (!ds_session_add_backward(both, given, c->policy, &error))
    g_error("%s: %s", c->op, error->message);
  for (int h = 0; h < n_heads; h++) {
    if (!given[h])
      continue;
    g_autofree char *name = ds_backward_head_grad_name(head_names[h]);
    g_assert_true(ds_session_feed(both, name, array_copy(&w[h]->view), &error));
  }
  if (c->policy.recompute_cheap) {
    const DsGraph *g = ds_session_get_graph(both);
    int copies = 0;
    for (guint i = 0; i < g->n_nodes; i++)
      copies += g_str_has_suffix(g->nodes[i]->name, "_recompute");
    g_assert_cmpint(copies, ==, c->recomputed);
  }
  if (!ds_session_prepare(both, FALSE, 0, ds_backend_find("cpu"), 1, &error) ||
      !ds_session_run(both, &error))
    g_error("%s: %s", c->op, error->message);
  guint n_model = ds_session_get_n_model_outputs(both);
  /* each variable's gradient head, by name (auxiliary states have none) */
  int grad_head[8];
  const DsGraph *fg = ds_session_get_graph(forward);
  for (int i = 0; i < n_inputs; i++) {
    grad_head[i] = -1;
    for (guint j = 0; j < ds_session_get_n_gradients(both); j++)
      if (g_str_equal(ds_session_get_gradient_variable(both, j), fg->nodes[fg->arg_nodes[i]]->name))
        grad_head[i] = (int)j;
  }

  /* float32 rounds at 1e-7: a step of 1e-2 keeps the difference's rounding near 1e-5 */
  const double h = c->f32 ? 1e-2 : 1e-6, tolerance = c->f32 ? 2e-3 : 1e-6;
  for (int i = 0; i < n_inputs; i++) {
    if ((c->index_inputs >> i) & 1)
      continue;
    if (grad_head[i] < 0) {
      g_assert_true(g_str_equal(c->op, "BatchNorm") && i >= 3); /* the moving statistics */
      continue;
    }
    const DsTensor *grad = ds_session_get_output(both, n_model + (guint)grad_head[i]);
    const DsTensor *x =
        ds_session_get_entry(forward, ds_graph_entry_id(fg, (DsEntry){fg->arg_nodes[i], 0, 0}));
    g_assert_cmpint(grad->dtype, ==, c->f32 ? DS_DTYPE_FLOAT32 : DS_DTYPE_FLOAT64);
    g_assert_cmpint(ds_tensor_numel(grad), ==, ds_tensor_numel(x));
    for (int64_t k = 0; k < ds_tensor_numel(x); k++) {
      double saved = ds_tensor_load_f64(x->dtype, x->data, k);
      set_element(x, k, saved + h);
      g_assert_true(ds_session_run(forward, NULL));
      double up = c->cross_entropy
                      ? cross_entropy(c, ds_session_get_output(forward, 0), &inputs[1]->view)
                      : loss(forward, n_heads, w);
      set_element(x, k, saved - h);
      g_assert_true(ds_session_run(forward, NULL));
      double down = c->cross_entropy
                        ? cross_entropy(c, ds_session_get_output(forward, 0), &inputs[1]->view)
                        : loss(forward, n_heads, w);
      set_element(x, k, saved);
      double fd = c->stops ? 0.0 : (up - down) / (2 * h);
      double got = ds_tensor_load_f64(grad->dtype, grad->data, k);
      if (!(fabs(got - fd) <= tolerance * MAX(1.0, fabs(fd))))
        g_error("%s %s: d/dx%d[%" G_GINT64_FORMAT "] is %.9g, finite differences give %.9g",
                c->op, c->attrs ? c->attrs : "", i, k, got, fd);
    }
  }
  for (int i = 0; i < n_inputs; i++)
    ds_ndarray_free(inputs[i]);
  for (int k = 0; k < n_heads; k++) {
    ds_ndarray_free(w[k]);
    g_free(head_names[k]);
  }
}

/* Where each unary math op is smooth and defined. */
static void unary_domain(const char *name, double *lo, double *hi)
{
  static const char *const positive[] = {"log", "log2", "log10", "sqrt", "rsqrt", "cbrt", "rcbrt",
                                         "reciprocal", NULL};
  *lo = -2, *hi = 2;
  if (g_strv_contains(positive, name))
    *lo = 0.5;
  else if (!strcmp(name, "arcsin") || !strcmp(name, "arccos") || !strcmp(name, "arctanh"))
    *lo = -0.8, *hi = 0.8;
  else if (!strcmp(name, "arccosh"))
    *lo = 1.2, *hi = 3;
  else if (!strcmp(name, "log1p"))
    *lo = -0.5;
  else if (!strcmp(name, "tan"))
    *lo = -1.2, *hi = 1.2;
}

static GPtrArray *cases_list; /* GradCase*, owned */

static GradCase *add(const char *op, const char *attrs, const char *s0, const char *s1,
                     const char *s2, double lo, double hi)
{
  GradCase *c = g_new0(GradCase, 1);
  c->op = op, c->attrs = attrs, c->lo = lo, c->hi = hi;
  c->shapes[0] = s0, c->shapes[1] = s1, c->shapes[2] = s2;
  g_ptr_array_add(cases_list, c);
  g_hash_table_add(covered, (gpointer)ds_op_lookup(op)->name);
  return c;
}

/* A case whose second input holds indices, integers in [0, hi): fed, not checked. */
static void add_indexed(const char *op, const char *attrs, const char *data, const char *index,
                        int hi)
{
  GradCase *c = add(op, attrs, data, index, NULL, -1, 1);
  c->index_inputs = 2, c->index_hi = hi;
}

static void add_generated(void)
{
#define UNARY_CASE(ID, NAME)                                                                   \
  {                                                                                            \
    double lo, hi;                                                                             \
    unary_domain(NAME, &lo, &hi);                                                              \
    add(NAME, NULL, "(2, 3)", NULL, NULL, lo, hi);                                             \
  }
  DS_OPS_UNARY_MATH(UNARY_CASE)
#undef UNARY_CASE
  /* the broadcasting forms broadcast; integer-only ops and bool results carry no gradient
   * (the backward pass passes none through a value that is not a float) */
#define BINARY_CASE(ID, NAME, FN, TYPE)                                                        \
  if (strcmp(#TYPE, "INTEGER") != 0 && strcmp(#TYPE, "BOOL") != 0)                             \
    add(NAME, NULL, "(2, 3)", g_str_has_prefix(NAME, "broadcast") ? "(1, 3)" : "(2, 3)", NULL, \
        0.5, 2);                                                                               \
  else                                                                                         \
    g_hash_table_add(covered, (gpointer)NAME);
  DS_OPS_BINARY(BINARY_CASE)
#undef BINARY_CASE
#define SCALAR_CASE(ID, NAME, ...) add(NAME, "\"scalar\": \"1.5\"", "(2, 3)", NULL, NULL, 0.5, 2);
  DS_OPS_SCALAR(SCALAR_CASE)
#undef SCALAR_CASE
}

static void add_cases(void)
{
  add_generated();
  add("broadcast_mul", NULL, "(3,)", "(2, 1, 3)", NULL, -1, 1);
  add("_copy", NULL, "(2, 3)", NULL, NULL, -1, 1);
  add("BlockGrad", NULL, "(2, 3)", NULL, NULL, -1, 1)->stops = TRUE;
  add("zeros_like", NULL, "(2, 3)", NULL, NULL, -1, 1);
  add("ones_like", NULL, "(2, 3)", NULL, NULL, -1, 1);
  add("clip", "\"a_min\": \"-0.5\", \"a_max\": \"0.5\"", "(2, 3)", NULL, NULL, -1, 1);
  GradCase *c = add("where", NULL, "(2, 3)", "(2, 3)", "(2, 3)", -1, 1);
  c->index_inputs = 1, c->index_hi = 2;
  add("add_n", "\"num_args\": \"3\"", "(2, 3)", "(2, 3)", "(2, 3)", -1, 1);
  add("_contrib_div_sqrt_dim", NULL, "(2, 4)", NULL, NULL, -1, 1);
  add("FullyConnected", "\"num_hidden\": \"4\"", "(2, 3)", "(4, 3)", "(4,)", -1, 1);
  add("FullyConnected", "\"num_hidden\": \"4\", \"no_bias\": \"True\"", "(2, 3, 2)", "(4, 6)",
      NULL, -1, 1);
  add("FullyConnected", "\"num_hidden\": \"4\", \"flatten\": \"False\"", "(2, 2, 3)", "(4, 3)",
      "(4,)", -1, 1);
  add("dot", NULL, "(2, 3)", "(3, 4)", NULL, -1, 1);
  add("dot", "\"transpose_a\": \"True\"", "(3, 2)", "(3, 4)", NULL, -1, 1);
  add("dot", "\"transpose_b\": \"True\"", "(2, 3)", "(4, 3)", NULL, -1, 1);
  add("dot", "\"transpose_a\": \"True\", \"transpose_b\": \"True\"", "(3, 2)", "(4, 3)", NULL, -1, 1);
  add("dot", NULL, "(2, 2, 3)", "(3, 4)", NULL, -1, 1);
  add("batch_dot", NULL, "(2, 2, 3)", "(2, 3, 4)", NULL, -1, 1);
  add("batch_dot", "\"transpose_b\": \"True\"", "(2, 2, 3)", "(2, 4, 3)", NULL, -1, 1);
  add("batch_dot", "\"transpose_a\": \"True\"", "(2, 3, 2)", "(2, 3, 4)", NULL, -1, 1);
  static const char *const acts[] = {
      "\"act_type\": \"relu\"",     "\"act_type\": \"sigmoid\"",     "\"act_type\": \"tanh\"",
      "\"act_type\": \"softrelu\"", "\"act_type\": \"softsign\"",
      "\"act_type\": \"log_sigmoid\"", "\"act_type\": \"mish\""};
  for (guint i = 0; i < G_N_ELEMENTS(acts); i++)
    add("Activation", acts[i], "(2, 3)", NULL, NULL, -2, 2);
  static const char *const leaky[] = {"\"act_type\": \"leaky\", \"slope\": \"0.1\"",
                                      "\"act_type\": \"elu\", \"slope\": \"0.7\"",
                                      "\"act_type\": \"selu\"", "\"act_type\": \"gelu\""};
  for (guint i = 0; i < G_N_ELEMENTS(leaky); i++)
    add("LeakyReLU", leaky[i], "(2, 3)", NULL, NULL, -2, 2);
  add("softmax", NULL, "(2, 4)", NULL, NULL, -2, 2);
  add("softmax", "\"axis\": \"0\", \"temperature\": \"2\"", "(3, 2)", NULL, NULL, -2, 2);
  add("log_softmax", NULL, "(2, 4)", NULL, NULL, -2, 2);
  add("LayerNorm", NULL, "(2, 3, 4)", "(4,)", "(4,)", -2, 2);
  add("Dropout", "\"p\": \"0.5\"", "(2, 3)", NULL, NULL, -1, 1);
  c = add("Embedding", "\"input_dim\": \"5\", \"output_dim\": \"3\", \"dtype\": \"float64\"", "(2, 3)", "(5, 3)", NULL,
          -1, 1);
  c->index_inputs = 1, c->index_hi = 5;
  add("Reshape", "\"shape\": \"(3, 2)\"", "(2, 3)", NULL, NULL, -1, 1);
  add("Flatten", NULL, "(2, 3, 2)", NULL, NULL, -1, 1);
  add("expand_dims", "\"axis\": \"1\"", "(2, 3)", NULL, NULL, -1, 1);
  add("squeeze", NULL, "(2, 1, 3)", NULL, NULL, -1, 1);
  add("_np_reshape", "\"newshape\": \"(3, 2)\"", "(2, 3)", NULL, NULL, -1, 1);
  add("_np_squeeze", NULL, "(2, 1, 3)", NULL, NULL, -1, 1);
  add("reshape_like", NULL, "(2, 3)", "(3, 2)", NULL, -1, 1);
  add("transpose", "\"axes\": \"(1, 2, 0)\"", "(2, 3, 4)", NULL, NULL, -1, 1);
  add("transpose", NULL, "(2, 3)", NULL, NULL, -1, 1);
  add("SwapAxis", "\"dim1\": \"0\", \"dim2\": \"2\"", "(2, 3, 4)", NULL, NULL, -1, 1);
  add("Concat", "\"dim\": \"1\", \"num_args\": \"2\"", "(2, 3)", "(2, 2)", NULL, -1, 1);
  add("SliceChannel", "\"num_outputs\": \"2\", \"axis\": \"1\"", "(2, 4)", NULL, NULL, -1, 1)
      ->n_heads = 2;
  add("SliceChannel", "\"num_outputs\": \"3\", \"axis\": \"0\", \"squeeze_axis\": \"True\"",
      "(3, 2)", NULL, NULL, -1, 1)
      ->n_heads = 3;
  add("stack", "\"axis\": \"1\", \"num_args\": \"2\"", "(2, 3)", "(2, 3)", NULL, -1, 1);
  add("slice_axis", "\"axis\": \"1\", \"begin\": \"1\", \"end\": \"3\"", "(2, 4)", NULL, NULL, -1, 1);
  add("slice_axis", "\"axis\": \"0\", \"begin\": \"1\", \"end\": \"None\"", "(3, 2)", NULL, NULL, -1,
      1);
  add("broadcast_to", "\"shape\": \"(2, 3)\"", "(1, 3)", NULL, NULL, -1, 1);
  add("broadcast_axis", "\"axis\": \"1\", \"size\": \"3\"", "(2, 1)", NULL, NULL, -1, 1);
  add("broadcast_like", NULL, "(1, 3)", "(2, 3)", NULL, -1, 1);
  add("sum", "\"axis\": \"1\"", "(2, 3, 2)", NULL, NULL, -1, 1);
  add("sum", NULL, "(2, 3)", NULL, NULL, -1, 1);
  add("sum", "\"axis\": \"(0, 2)\", \"keepdims\": \"True\"", "(2, 3, 2)", NULL, NULL, -1, 1);
  add("sum", "\"axis\": \"1\", \"exclude\": \"True\"", "(2, 3, 2)", NULL, NULL, -1, 1);
  add("mean", "\"axis\": \"0\"", "(2, 3)", NULL, NULL, -1, 1);
  /* the reductions whose gradient reads input and output */
  add("max", "\"axis\": \"1\"", "(2, 3, 2)", NULL, NULL, -1, 1);
  add("min", NULL, "(2, 3)", NULL, NULL, -1, 1);
  add("prod", "\"axis\": \"(0, 2)\", \"keepdims\": \"True\"", "(2, 3, 2)", NULL, NULL, 0.5, 2);
  add("nansum", "\"axis\": \"0\"", "(2, 3)", NULL, NULL, -1, 1);
  add("nanprod", "\"axis\": \"1\"", "(2, 3)", NULL, NULL, 0.5, 2);
  add("norm", "\"axis\": \"1\"", "(2, 3)", NULL, NULL, -1, 1);
  add("norm", "\"ord\": \"1\", \"axis\": \"0\", \"keepdims\": \"True\"", "(2, 3)", NULL, NULL, 0.2,
      1);
  add("_npi_sum", "\"axis\": \"(0, 1)\"", "(2, 3, 2)", NULL, NULL, -1, 1);
  add("_npi_sum", NULL, "(2, 3)", NULL, NULL, -1, 1);
  add("_npi_mean", "\"axis\": \"1\", \"keepdims\": \"True\"", "(2, 3)", NULL, NULL, -1, 1);
  add("_npi_max", "\"axis\": \"0\"", "(2, 3)", NULL, NULL, -1, 1);
  add("_npi_min", NULL, "(2, 3)", NULL, NULL, -1, 1);
  add("_npi_prod", "\"axis\": \"1\"", "(2, 3)", NULL, NULL, 0.5, 2);
  add("sum_square", "\"axis\": \"1\"", "(2, 3)", NULL, NULL, -1, 1);
  add("l1_norm", NULL, "(2, 3)", NULL, NULL, 0.2, 1);
  add("l2_norm", "\"axis\": \"0\"", "(2, 3)", NULL, NULL, -1, 1);
  add("log_sum", "\"axis\": \"1\"", "(2, 3)", NULL, NULL, 0.5, 2);
  add("log_sum_exp", "\"axis\": \"(0, 1)\", \"keepdims\": \"True\"", "(2, 3)", NULL, NULL, -2, 2);
  add("Cast", "\"dtype\": \"float64\"", "(2, 3)", NULL, NULL, -1, 1);
  c = add("SequenceMask", "\"use_sequence_length\": \"True\", \"value\": \"-1\"", "(3, 2, 2)",
          "(2,)", NULL, -1, 1);
  c->index_inputs = 2, c->index_hi = 4;
  add("_contrib_arange_like", NULL, "(2, 3)", NULL, NULL, -1, 1);
  /* max windows overlap and one pad; average and sum; global average; in float64 */
  add("Pooling", "\"kernel\": \"(3, 3)\", \"stride\": \"(2, 2)\", \"pad\": \"(1, 1)\", "
      "\"pool_type\": \"max\"", "(1, 2, 5, 5)", NULL, NULL, -1, 1);
  add("Pooling", "\"kernel\": \"(2, 3)\", \"stride\": \"(1, 2)\", \"pad\": \"(1, 1)\", "
      "\"pool_type\": \"avg\", \"count_include_pad\": \"False\"", "(2, 1, 4, 5)", NULL, NULL, -1, 1);
  add("Pooling", "\"kernel\": \"(2,)\", \"stride\": \"(2,)\", \"pool_type\": \"sum\"", "(1, 2, 6)",
      NULL, NULL, -1, 1);
  add("Pooling", "\"kernel\": \"(1, 1)\", \"global_pool\": \"True\", \"pool_type\": \"avg\"",
      "(1, 3, 3, 4)", NULL, NULL, -1, 1);
  /* float32 only so far: convolution (strided, padded, dilated, 1-D) and BatchNorm */
  c = add("Convolution", "\"kernel\": \"(3, 3)\", \"stride\": \"(2, 2)\", \"pad\": \"(1, 1)\", "
          "\"num_filter\": \"3\"", "(1, 2, 6, 5)", "(3, 2, 3, 3)", "(3,)", -1, 1);
  c->f32 = TRUE;
  c = add("Convolution", "\"kernel\": \"(2, 2)\", \"dilate\": \"(2, 2)\", \"num_filter\": \"2\", "
          "\"no_bias\": \"True\"", "(2, 2, 5, 5)", "(2, 2, 2, 2)", NULL, -1, 1);
  c->f32 = TRUE;
  c = add("Convolution", "\"kernel\": \"(3,)\", \"stride\": \"(2,)\", \"num_filter\": \"2\"",
          "(1, 2, 8)", "(2, 2, 3)", "(2,)", -1, 1);
  c->f32 = TRUE;
  /* grouped: two groups of 2 -> 3 channels, and depthwise (MobileNet's) with a stride */
  c = add("Convolution", "\"kernel\": \"(3, 3)\", \"pad\": \"(1, 1)\", \"num_filter\": \"6\", "
          "\"num_group\": \"2\"", "(2, 4, 5, 4)", "(6, 2, 3, 3)", "(6,)", -1, 1);
  c->f32 = TRUE;
  c = add("Convolution", "\"kernel\": \"(3, 3)\", \"stride\": \"(2, 2)\", \"pad\": \"(1, 1)\", "
          "\"num_filter\": \"3\", \"num_group\": \"3\", \"no_bias\": \"True\"", "(2, 3, 6, 5)",
          "(3, 1, 3, 3)", NULL, -1, 1);
  c->f32 = TRUE;
  c = add("LRN", "\"nsize\": \"3\", \"alpha\": \"0.5\", \"beta\": \"0.75\", \"knorm\": \"1\"",
          "(2, 5, 2, 3)", NULL, NULL, -1, 1);
  c->f32 = TRUE;
  /* adaptive pooling over windows that overlap (5 -> 3) and that do not (4 -> 2) */
  c = add("_contrib_AdaptiveAvgPooling2D", "\"output_size\": \"(3, 2)\"", "(2, 2, 5, 4)", NULL, NULL,
          -1, 1);
  c->f32 = TRUE;
  /* resizing: nearest by a factor, linear (half-pixel) to sizes, cubic (asymmetric) */
  c = add("_contrib_resize", "\"mode\": \"nearest\", \"scales\": \"(1, 1, 2, 3)\"", "(1, 2, 3, 2)",
          NULL, NULL, -1, 1);
  c->f32 = TRUE;
  c = add("_contrib_resize", "\"mode\": \"linear\", \"sizes\": \"(2, 1, 5, 3)\"", "(2, 1, 3, 4)", NULL,
          NULL, -1, 1);
  c->f32 = TRUE;
  c = add("_contrib_resize",
          "\"mode\": \"cubic\", \"coordinate_transformation_mode\": \"asymmetric\", "
          "\"scales\": \"(1, 1, 1.5, 2)\"",
          "(1, 1, 4, 3)", NULL, NULL, -1, 1);
  c->f32 = TRUE;
  /* the transposed convolution: strided, with adj; grouped with a bias; a 1-D one with a
   * target shape */
  c = add("Deconvolution", "\"kernel\": \"(3, 3)\", \"stride\": \"(2, 2)\", \"pad\": \"(1, 1)\", "
          "\"adj\": \"(1, 0)\", \"num_filter\": \"3\"", "(2, 2, 3, 4)", "(2, 3, 3, 3)", NULL, -1, 1);
  c->f32 = TRUE;
  c = add("Deconvolution", "\"kernel\": \"(2, 2)\", \"num_filter\": \"4\", \"num_group\": \"2\", "
          "\"no_bias\": \"False\"", "(1, 4, 3, 3)", "(4, 2, 2, 2)", "(4,)", -1, 1);
  c->f32 = TRUE;
  c = add("Deconvolution", "\"kernel\": \"(3,)\", \"stride\": \"(2,)\", \"target_shape\": \"(8,)\", "
          "\"num_filter\": \"2\"", "(1, 3, 4)", "(3, 2, 3)", NULL, -1, 1);
  c->f32 = TRUE;
  c = add("BatchNorm", "\"fix_gamma\": \"False\", \"eps\": \"0.001\"", "(2, 3, 2, 2)", "(3,)", "(3,)",
          -1, 1);
  c->shapes[3] = "(3,)", c->shapes[4] = "(3,)";
  c->f32 = TRUE;
  c->positive_inputs = 1u << 4;
  c = add("BatchNorm", NULL, "(2, 3)", "(3,)", "(3,)", -1, 1);
  c->shapes[3] = "(3,)", c->shapes[4] = "(3,)";
  c->f32 = TRUE;
  c->positive_inputs = 1u << 4;
  /* the loss layer, with its label (class indices) */
  static const struct {
    const char *attrs;
    double smooth, scale;
    int ignore, norm;
  } losses[] = {
      {NULL, 0, 1, -1, 0},
      {"\"normalization\": \"batch\", \"grad_scale\": \"2\"", 0, 2, -1, 1},
      {"\"use_ignore\": \"True\", \"ignore_label\": \"0\", \"normalization\": \"valid\"", 0, 1,
       0, 2},
      {"\"smooth_alpha\": \"0.1\"", 0.1, 1, -1, 0},
  };
  for (guint i = 0; i < G_N_ELEMENTS(losses); i++) {
    c = add("SoftmaxOutput", losses[i].attrs, "(5, 4)", "(5,)", NULL, -1, 1);
    c->index_inputs = 2, c->index_hi = 4;
    c->cross_entropy = TRUE;
    c->smooth = losses[i].smooth, c->scale = losses[i].scale;
    c->ignore = losses[i].ignore, c->norm = losses[i].norm;
  }
  /* recomputing cheap values (--recompute auto): z = a tanh(a) keeps a for its gradient, so
   * tanh(a) is made again from it rather than kept; the gradients stay exact */
  static const char recompute_json[] =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
      " {\"op\": \"null\", \"name\": \"w\", \"inputs\": []},"
      " {\"op\": \"FullyConnected\", \"name\": \"fc\", \"inputs\": [[0, 0, 0], [1, 0, 0]],"
      "  \"attrs\": {\"num_hidden\": \"3\", \"no_bias\": \"True\"}},"
      " {\"op\": \"tanh\", \"name\": \"t\", \"inputs\": [[2, 0, 0]]},"
      " {\"op\": \"elemwise_mul\", \"name\": \"z\", \"inputs\": [[2, 0, 0], [3, 0, 0]]},"
      " {\"op\": \"_mul_scalar\", \"name\": \"s\", \"inputs\": [[4, 0, 0]],"
      "  \"attrs\": {\"scalar\": \"2\"}}],"
      " \"arg_nodes\": [0, 1], \"heads\": [[5, 0, 0]],"
      " \"attrs\": {\"mxnet_version\": [\"int\", 10900]}}";
  c = add("elemwise_mul", NULL, "(2, 4)", "(3, 4)", NULL, -1, 1);
  c->json = recompute_json;
  c->policy = (DsLoopPolicy){DS_LOOP_SAVE, 0, TRUE};
  c->recomputed = 1;
  /* and inside a loop body: the LSTM cell saving its values, and recomputing */
  c = add("_foreach", NULL, "(6, 4, 16)", "(4, 32)", "(4, 32)", -1, 1);
  c->model = "data/control/lstm-foreach-symbol.json";
  c->shapes[3] = "(128, 16)", c->shapes[4] = "(128,)", c->shapes[5] = "(128, 32)";
  c->shapes[6] = "(128,)";
  c->n_heads = 3;
  c->policy = (DsLoopPolicy){DS_LOOP_RECOMPUTE, 0, TRUE};
  /* a subgraph run as one op (a hybridized Gluon block), with two outputs */
  c = add("_CachedOp", NULL, "(2, 4)", "(3, 4)", NULL, -1, 1);
  c->n_heads = 2;
  c->json =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
      " {\"op\": \"null\", \"name\": \"w\", \"inputs\": []},"
      " {\"op\": \"_CachedOp\", \"name\": \"block\", \"inputs\": [[0, 0, 0], [1, 0, 0]],"
      "  \"subgraphs\": [{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", \"inputs\": []},"
      "   {\"op\": \"null\", \"name\": \"weight\", \"inputs\": []},"
      "   {\"op\": \"FullyConnected\", \"name\": \"fc\", \"inputs\": [[0, 0, 0], [1, 0, 0]],"
      "    \"attrs\": {\"num_hidden\": \"3\", \"no_bias\": \"True\"}},"
      "   {\"op\": \"tanh\", \"name\": \"act\", \"inputs\": [[2, 0, 0]]}],"
      "   \"arg_nodes\": [0, 1], \"heads\": [[3, 0, 0], [2, 0, 0]]}]}],"
      " \"arg_nodes\": [0, 1], \"heads\": [[2, 0, 0], [2, 1, 0]],"
      " \"attrs\": {\"mxnet_version\": [\"int\", 10900]}}";
  /* normalisations computed again in the gradient (float32 kernels only) */
  c = add("InstanceNorm", "\"eps\": \"0.001\"", "(2, 3, 2, 2)", "(3,)", "(3,)", -1, 1);
  c->f32 = TRUE;
  c = add("L2Normalization", NULL, "(2, 3, 2)", NULL, NULL, -1, 1);
  c->n_heads = 1, c->f32 = TRUE;
  c = add("L2Normalization", "\"mode\": \"channel\"", "(2, 3, 2)", NULL, NULL, -1, 1);
  c->f32 = TRUE;
  c = add("L2Normalization", "\"mode\": \"spatial\"", "(2, 2, 3)", NULL, NULL, -1, 1);
  c->f32 = TRUE;
  add("SequenceLast", NULL, "(3, 2, 2)", NULL, NULL, -1, 1);
  c = add("SequenceLast", "\"use_sequence_length\": \"True\", \"axis\": \"1\"", "(2, 4, 3)",
          "(2,)", NULL, -1, 1);
  c->index_inputs = 2, c->index_lo = 1, c->index_hi = 5; /* lengths in [1, 4] */
  /* ops whose output shape depends on data: the kept slices get g back */
  add_indexed("_contrib_boolean_mask", NULL, "(4, 3)", "(4,)", 2);
  add_indexed("_contrib_boolean_mask", "\"axis\": \"1\"", "(2, 5)", "(5,)", 2);
  add_indexed("_contrib_compress", "\"axis\": \"0\"", "(4, 2)", "(3,)", 2);
  add_indexed("_contrib_compress", NULL, "(2, 3)", "(4,)", 2);
  /* gathers and scatters: g goes back where the values came from */
  add("topk", "\"k\": \"2\", \"axis\": \"1\"", "(2, 4)", NULL, NULL, -1, 1);
  c = add("topk", "\"k\": \"3\", \"ret_typ\": \"both\", \"axis\": \"0\", \"is_ascend\": \"True\"",
          "(4, 2)", NULL, NULL, -1, 1);
  c->n_heads = 2;
  add("topk", "\"k\": \"2\", \"axis\": \"None\"", "(2, 3)", NULL, NULL, -1, 1);
  add_indexed("gather_nd", NULL, "(3, 4)", "(2, 5)", 3);
  add_indexed("batch_gather_nd", NULL, "(3, 4)", "(5, 1)", 3);
  c = add("scatter_nd_update", NULL, "(4, 2)", "(1, 1)", "(1, 2)", -1, 1);
  c->index_inputs = 2, c->index_hi = 4; /* one row, updated once: no duplicates */
  c = add("scatter_nd_update", "\"reduction\": \"add\"", "(4, 2)", "(3, 1)", "(3, 2)", -1, 1);
  c->index_inputs = 2, c->index_hi = 4;
  c = add("put_along_axis", "\"axis\": \"1\", \"reduction\": \"add\"", "(2, 4)", "(2, 3)",
          "(2, 3)", -1, 1);
  c->index_inputs = 2, c->index_hi = 4;
  c = add("put_along_axis", "\"axis\": \"0\"", "(3, 2)", "(1, 2)", "(1, 2)", -1, 1);
  c->index_inputs = 2, c->index_hi = 3;
  add("_npi_matmul", NULL, "(2, 3)", "(3, 4)", NULL, -1, 1);
  add("_npi_matmul", NULL, "(2, 1, 2, 3)", "(3, 3, 2)", NULL, -1, 1);
  add("_contrib_expand", "\"shape\": \"(2, 1, 3)\"", "(4, 1)", NULL, NULL, -1, 1);
  /* the dynamic reshapes, their shape inputs all zeros (keep each dim) or 0 (axis 0) */
  add_indexed("_contrib_dynamic_reshape", NULL, "(2, 3)", "(2,)", 1);
  add_indexed("_contrib_dynamic_expand_dims", NULL, "(2, 3)", "(1,)", 1);
  add_indexed("_contrib_dynamic_squeeze", NULL, "(1, 3)", "(1,)", 1);
  add_indexed("_contrib_dynamic_expand", NULL, "(3, 1)", "(1,)", 1);
  /* the activations with parameters, away from their kinks */
  add("hard_sigmoid", NULL, "(2, 3)", NULL, NULL, -4, 4);
  add("selu", NULL, "(2, 3)", NULL, NULL, -2, 2);
  add("celu", "\"alpha\": \"0.7\"", "(2, 3)", NULL, NULL, -2, 2);
  add("thresholded_relu", "\"alpha\": \"0.5\"", "(2, 3)", NULL, NULL, -2, 2);
  add("shrink", "\"lambd\": \"0.5\", \"bias\": \"0.2\"", "(2, 3)", NULL, NULL, -2, 2);
  c = add("_npi_where", NULL, "(2, 3)", "(2, 3)", "(1, 3)", -1, 1);
  c->index_inputs = 1, c->index_hi = 2;
  add("softmin", "\"axis\": \"1\", \"temperature\": \"2\"", "(2, 3)", NULL, NULL, -1, 1);
  add("SoftmaxActivation", NULL, "(2, 3)", NULL, NULL, -1, 1);
  add("SoftmaxActivation", "\"mode\": \"channel\"", "(2, 3, 2)", NULL, NULL, -1, 1);
  /* UpSampling has no float64 kernel */
  c = add("UpSampling", "\"scale\": \"2\", \"sample_type\": \"nearest\", \"num_args\": \"1\"",
          "(1, 2, 2, 3)", NULL, NULL, -1, 1);
  c->f32 = TRUE;
  c = add("UpSampling", "\"scale\": \"2\", \"sample_type\": \"nearest\", \"num_args\": \"2\"",
          "(1, 2, 2, 2)", "(1, 1, 4, 4)", NULL, -1, 1);
  c->f32 = TRUE;
  c = add("UpSampling",
          "\"scale\": \"2\", \"sample_type\": \"nearest\", \"num_args\": \"2\", "
          "\"multi_input_mode\": \"sum\"",
          "(1, 2, 2, 2)", "(1, 2, 1, 1)", NULL, -1, 1);
  c->f32 = TRUE;
  /* data movement */
  add("slice", "\"begin\": \"(0, 1)\", \"end\": \"(None, 3)\"", "(2, 4)", NULL, NULL, -1, 1);
  add("slice", "\"begin\": \"(1, -2, 1)\", \"end\": \"(2, None, 3)\"", "(3, 4, 4)", NULL, NULL, -1,
      1);
  add("slice", "\"begin\": \"(1,)\", \"end\": \"(3,)\", \"axes\": \"(-1,)\"", "(2, 4)", NULL, NULL,
      -1, 1);
  add("Pad", "\"mode\": \"constant\", \"pad_width\": \"(0, 0, 0, 0, 1, 2, 2, 1)\"", "(1, 1, 2, 3)",
      NULL, NULL, -1, 1);
  add("_npi_pad", "\"pad_width\": \"((1, 0), (0, 2))\"", "(2, 3)", NULL, NULL, -1, 1);
  add("slice_like", NULL, "(3, 4)", "(2, 2)", NULL, -1, 1);
  add("slice_like", "\"axes\": \"(1,)\"", "(2, 4, 3)", "(1, 2, 5)", NULL, -1, 1);
  add_indexed("take", NULL, "(4, 3)", "(5,)", 4);
  add_indexed("take", "\"axis\": \"1\", \"mode\": \"wrap\"", "(2, 4, 2)", "(2, 3)", 4);
  add_indexed("take_along_axis", "\"axis\": \"1\"", "(3, 4)", "(3, 5)", 4);
  add_indexed("pick", "\"axis\": \"1\"", "(3, 4)", "(3,)", 4);
  add_indexed("pick", "\"axis\": \"0\", \"keepdims\": \"True\"", "(3, 4)", "(1, 4)", 3);
  add("reverse", "\"axis\": \"(0, 2)\"", "(2, 3, 2)", NULL, NULL, -1, 1);
  add("SequenceReverse", NULL, "(3, 2, 2)", NULL, NULL, -1, 1);
  add_indexed("SequenceReverse", "\"use_sequence_length\": \"True\"", "(3, 2)", "(2,)", 4);
  add_indexed("trilu", NULL, "(3, 4)", "()", 2);
  add_indexed("trilu", "\"upper\": \"True\"", "(2, 3, 3)", "()", 1);
  add_indexed("cumsum", NULL, "(2, 3)", "()", 2);
  add_indexed("cumsum", "\"exclusive\": \"True\", \"reverse\": \"True\"", "(2, 3)", "()", 2);
  add("depth_to_space", "\"block_size\": \"2\"", "(1, 4, 2, 3)", NULL, NULL, -1, 1);
  add("depth_to_space", "\"block_size\": \"2\", \"mode\": \"CRD\"", "(1, 4, 2, 3)", NULL, NULL, -1,
      1);
  add("space_to_depth", "\"block_size\": \"2\"", "(1, 1, 4, 2)", NULL, NULL, -1, 1);
  add("tile", "\"reps\": \"(2, 1, 2)\"", "(2, 3)", NULL, NULL, -1, 1);
  add("repeat", "\"repeats\": \"2\", \"axis\": \"1\"", "(2, 3)", NULL, NULL, -1, 1);
  add("repeat", "\"repeats\": \"3\"", "(2, 2)", NULL, NULL, -1, 1);
  /* a loop: the LSTM cell run by _foreach, backwards through 3 steps (data, the weights and
   * biases, the initial h and c) */
  /* a branch inside a loop: _cond's backward is a _cond on the same condition */
  static const DsLoopPolicy policies[] = {
      {DS_LOOP_RECOMPUTE, 0}, {DS_LOOP_SAVE, 0}, {DS_LOOP_CHECKPOINT, 2}, {DS_LOOP_CHECKPOINT, 3}};
  for (guint policy = 0; policy < G_N_ELEMENTS(policies); policy++) {
    c = add("_cond", NULL, "(6, 3)", "(3,)", NULL, -1, 1);
    c->model = "data/control/cond-in-loop-symbol.json";
    c->n_heads = 2;
    c->policy = policies[policy];
  }
  for (guint policy = 0; policy < G_N_ELEMENTS(policies); policy++) {
    c = add("_foreach", NULL, "(6, 4, 16)", "(4, 32)", "(4, 32)", -1, 1);
    c->model = "data/control/lstm-foreach-symbol.json";
    c->shapes[3] = "(128, 16)", c->shapes[4] = "(128,)", c->shapes[5] = "(128, 32)";
    c->shapes[6] = "(128,)";
    c->n_heads = 3;
    c->policy = policies[policy];
  }
  /* a while loop with a data-dependent stop: its backward loop runs over the iterations the
   * forward one recorded (a greedy decoder: h0, the output layer, the embedding, the two
   * recurrent weights) */
  for (guint policy = 0; policy < 4; policy++) {
    /* drawn from (-1, 1) it stops before the first iteration: the gradients pass through */
    double range = policy < 3 ? 1.5 : 1.0;
    c = add("_while_loop", NULL, "(1, 8)", "(12, 8)", "(12,)", -range, range);
    c->model = "data/control/greedy-decoder-symbol.json";
    c->shapes[3] = "(12, 8)", c->shapes[4] = "(8, 8)", c->shapes[5] = "(8, 8)";
    c->n_heads = 4;
    c->policy = policies[policy % 3];
    c->check_rows = TRUE;
    c->rows = policy < 3 ? 10 : 0;
  }
  add("shape_array", NULL, "(2, 3)", NULL, NULL, -1, 1);
  c = add("one_hot", "\"depth\": \"4\", \"dtype\": \"float64\"", "(2, 3)", NULL, NULL, 0, 1);
  c->index_inputs = 1, c->index_hi = 4;
}

/* Every op with a gradient has a case above (the ones declared not differentiable have
 * nothing to compare). */
static void test_every_gradient_checked(void)
{
  g_autoptr(GString) missing = g_string_new(NULL);
  for (int id = 0; id < DS_OP_COUNT; id++) {
    const DsOpDef *op = ds_op_get((DsOpId)id);
    if (op->grad != NULL && op->grad != ds_grad_zero && !g_hash_table_contains(covered, op->name))
      g_string_append_printf(missing, " %s", op->name);
  }
  if (missing->len > 0)
    g_error("ops with a gradient but no finite-difference case:%s", missing->str);
}

/* The ops without a gradient yet are exactly those tests/gradients-pending.txt lists: a new
 * op comes with its gradient (or ds_grad_zero), or is listed; an op that gains one leaves the
 * list. */
static void test_pending_list(void)
{
  const char *src = g_getenv("DS_SOURCE_DIR");
  g_autofree char *path = g_build_filename(src != NULL ? src : ".", "tests", "gradients-pending.txt", NULL);
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  g_autoptr(GHashTable) listed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l != NULL; l++) {
    g_strstrip(*l);
    if (**l != '\0' && **l != '#')
      g_hash_table_add(listed, g_strdup(*l));
  }
  g_autoptr(GString) unlisted = g_string_new(NULL), has_one = g_string_new(NULL);
  for (int id = 0; id < DS_OP_COUNT; id++) {
    const DsOpDef *op = ds_op_get((DsOpId)id);
    gboolean in_list = g_hash_table_contains(listed, op->name);
    if (op->grad == NULL && !in_list)
      g_string_append_printf(unlisted, "\n%s", op->name);
    if (op->grad != NULL && in_list)
      g_string_append_printf(has_one, " %s", op->name);
  }
  if (unlisted->len > 0)
    g_error("ops without a gradient, not in %s:%s", path, unlisted->str);
  if (has_one->len > 0)
    g_error("ops with a gradient still in %s:%s", path, has_one->str);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  tmpdir = ds_test_tmpdir_new("dynscope-grad");
  covered = g_hash_table_new(g_str_hash, g_str_equal);
  cases_list = g_ptr_array_new_with_free_func(g_free);
  add_cases();
  GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < cases_list->len; i++) {
    const GradCase *c = g_ptr_array_index(cases_list, i);
    g_autofree char *base = g_strdup_printf("/gradients/%s", c->op);
    char *name = g_strdup(base);
    for (guint k = 2; g_hash_table_contains(seen, name); k++) {
      g_free(name);
      name = g_strdup_printf("%s-%u", base, k);
    }
    g_hash_table_add(seen, name);
    g_test_add_data_func(name, c, run_case);
  }
  g_test_add_func("/gradients/every-gradient-checked", test_every_gradient_checked);
  g_test_add_func("/gradients/pending-list", test_pending_list);
  int status = g_test_run();
  g_hash_table_unref(seen);
  g_ptr_array_unref(cases_list);
  g_hash_table_unref(covered);
  ds_test_tmpdir_free(tmpdir);
  return status;
}
