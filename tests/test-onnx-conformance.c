/* test-onnx-conformance.c: ONNX's own backend node tests through the ONNX importer.
 *
 * The cases are not in the tree: tools/onnx-node-tests.py has the installed `onnx` package
 * write them (one model.onnx per case with its test_data_set_N/input_K.pb and output_K.pb,
 * and a manifest naming each case's op) into $DS_ONNX_NODE_TESTS, once per build tree. Each
 * case is loaded with ds_session_new(), fed, prepared, run and compared with the expected
 * outputs as ONNX's backend runner compares them: same dtype and shape, values within
 * rtol 1e-3 and atol 1e-7 (NaN matches NaN, infinities exactly, integers and bools exactly).
 *
 * A case passes, fails (with a one-line reason) or is unsupported: DS_ERROR_UNSUPPORTED while
 * loading or preparing, a sequence, map or optional value, or a test-data dtype the engine
 * lacks. There is one subtest per op; it fails when a case of that op fails, unless
 * tests/onnx-conformance-known.txt lists the case, and also when a listed case passes, so the
 * list stays honest. Unsupported cases never fail a subtest. At the end a per-op table goes to
 * stdout as TAP comments and to $DS_ONNX_CONFORMANCE_SUMMARY, when set.
 *
 * For developers: `--case SUBSTRING` (or $DS_ONNX_CASE) runs only the cases whose names
 * contain it; `-v` prints every case's result.
 */
#include <cjson/cJSON.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ds-backend.h"
#include "ds-config.h"
#include "ds-error.h"
#include "ds-onnx-model.h"
#include "ds-onnx-values.h"
#include "ds-session.h"

/* ONNX's backend-test defaults (onnx/backend/test/case/node/__init__.py). */
#define RTOL 1e-3
#define ATOL 1e-7
/* Node-test models are tiny: a case still running after this is a runaway loop. */
#define CASE_SECONDS 5
/* The generator's exit status when `onnx` cannot be imported. */
#define EXIT_SKIP 77

typedef enum {
  CASE_NOT_RUN,
  CASE_PASS,
  CASE_FAIL,
  CASE_UNSUPPORTED,
} CaseStatus;

typedef struct {
  char *name;
  char *op;
  gboolean expanded; /* the op's function body inlined (a `*_expanded` case) */
  CaseStatus status;
  char *reason; /* FAIL and UNSUPPORTED: one line */
} Case;

static struct {
  char *dir;          /* the generated cases */
  char *onnx_version; /* from the manifest */
  GPtrArray *cases;   /* Case*, by name; only those the filter selects */
  GPtrArray *ops;     /* char*, sorted, each op with a selected case */
  GHashTable *known;  /* case name -> reason, from the known-failures file */
  char *known_path;
  char *skip;         /* why there are no cases, when there are none */
  const char *filter; /* --case */
  gboolean verbose;   /* -v */
  const DsBackend *backend;
} suite;

static void case_free(gpointer data)
{
  Case *c = data;
  g_free(c->name);
  g_free(c->op);
  g_free(c->reason);
  g_free(c);
}

/* ---- Paths and setup -------------------------------------------------------------------- */

static const char *source_dir(void)
{
  const char *dir = g_getenv("DS_SOURCE_DIR");
  return dir != NULL ? dir : DS_SOURCE_DIR;
}

static char *cases_dir(void)
{
  const char *dir = g_getenv("DS_ONNX_NODE_TESTS");
  return dir != NULL ? g_strdup(dir)
                     : g_build_filename(DS_BUILD_ROOT, "tests", "onnx-node-tests", NULL);
}

/* Runs the generator unless a manifest is already there. Returns FALSE with `skip` set when
 * there is no python or no `onnx` to generate with, FALSE with `error` set when it fails. */
static gboolean ensure_cases(const char *dir, char **skip, GError **error)
{
  g_autofree char *manifest = g_build_filename(dir, "manifest.json", NULL);
  if (g_file_test(manifest, G_FILE_TEST_IS_REGULAR))
    return TRUE;
  const char *python = g_getenv("DS_PYTHON") != NULL ? g_getenv("DS_PYTHON") : "/usr/bin/python3";
  if (!g_file_test(python, G_FILE_TEST_IS_EXECUTABLE)) {
    *skip = g_strdup_printf("no python at %s to generate the ONNX node tests", python);
    return FALSE;
  }
  g_autofree char *script = g_build_filename(source_dir(), "tools", "onnx-node-tests.py", NULL);
  const char *argv[] = {python, script, dir, NULL};
  g_autofree char *out = NULL, *err = NULL;
  int status = -1;
  if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status,
                    error))
    return FALSE;
  g_autoptr(GError) exit_error = NULL;
  if (g_spawn_check_wait_status(status, &exit_error)) {
    printf("# %s", out); /* how many cases, how long it took */
    return TRUE;
  }
  if (g_error_matches(exit_error, G_SPAWN_EXIT_ERROR, EXIT_SKIP))
    *skip = g_strdup_printf("%s (python: %s)", g_strstrip(err), python);
  else
    g_set_error(error, DS_ERROR, DS_ERROR_RUNTIME, "%s failed (%s): %s %s", script,
                exit_error->message, g_strstrip(out), g_strstrip(err));
  return FALSE;
}

/* For g_ptr_array_sort(), which passes pointers to the elements. */
static int compare_names(gconstpointer a, gconstpointer b)
{
  return g_ascii_strcasecmp(*(char *const *)a, *(char *const *)b);
}

/* Reads the manifest: every case the filter selects, and their ops. */
static gboolean load_manifest(GError **error)
{
  g_autofree char *path = g_build_filename(suite.dir, "manifest.json", NULL);
  g_autofree char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, error))
    return FALSE;
  cJSON *manifest = cJSON_Parse(text);
  const cJSON *cases = cJSON_GetObjectItemCaseSensitive(manifest, "cases");
  const cJSON *version = cJSON_GetObjectItemCaseSensitive(manifest, "onnx_version");
  if (!cJSON_IsObject(cases) || !cJSON_IsString(version)) {
    cJSON_Delete(manifest);
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: not a node-test manifest", path);
    return FALSE;
  }
  suite.onnx_version = g_strdup(version->valuestring);
  g_autoptr(GHashTable) ops = g_hash_table_new(g_str_hash, g_str_equal);
  const cJSON *entry;
  cJSON_ArrayForEach(entry, cases)
  {
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(entry, "op");
    if (!cJSON_IsString(op) ||
        (suite.filter != NULL && strstr(entry->string, suite.filter) == NULL))
      continue;
    Case *c = g_new0(Case, 1);
    c->name = g_strdup(entry->string);
    c->op = g_strdup(op->valuestring);
    c->expanded = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(entry, "expanded"));
    g_ptr_array_add(suite.cases, c);
    if (g_hash_table_add(ops, c->op))
      g_ptr_array_add(suite.ops, g_strdup(c->op));
  }
  cJSON_Delete(manifest);
  g_ptr_array_sort(suite.ops, compare_names);
  return TRUE;
}

/* The known-failures file: "case_name  reason" a line, '#' comments. */
static void load_known_failures(void)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents(suite.known_path, &text, NULL, NULL))
    return; /* no file: nothing is expected to fail */
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (char **line = lines; *line != NULL; line++) {
    char *s = g_strstrip(*line);
    if (*s == '\0' || *s == '#')
      continue;
    gsize n = strcspn(s, " \t");
    char *name = g_strndup(s, n);
    g_hash_table_replace(suite.known, name, g_strdup(g_strchug(s + n)));
  }
}

/* ---- Running one case ------------------------------------------------------------------- */

/* `message` on one line, the cases folder left out of paths ("test_add/model.onnx: ..."). */
static char *one_line(const char *prefix, const char *message)
{
  g_autofree char *dir = g_strconcat(suite.dir, G_DIR_SEPARATOR_S, NULL);
  g_autoptr(GString) s = g_string_new(prefix);
  g_string_append(s, message);
  g_string_replace(s, dir, "", 0);
  g_string_replace(s, "\n", " ", 0);
  return g_string_free(g_steal_pointer(&s), FALSE);
}

/* An error's verdict: unsupported for DS_ERROR_UNSUPPORTED, otherwise a failure. */
static CaseStatus error_status(const GError *error, const char *step, char **reason)
{
  g_autofree char *prefix = g_strdup_printf("%s: ", step);
  *reason = one_line(prefix, error->message);
  return g_error_matches(error, DS_ERROR, DS_ERROR_UNSUPPORTED) ? CASE_UNSUPPORTED : CASE_FAIL;
}

/* Sequence, map and optional values have test data that is not a TensorProto: whatever the
 * session made of the model, such a value cannot be fed or checked here. */
static gboolean values_are_tensors(const DsOnnxValueInfo *values, gsize n, const char *role,
                                   char **reason)
{
  for (gsize i = 0; i < n; i++)
    if (values[i].kind != DS_ONNX_TYPE_TENSOR) {
      *reason = g_strdup_printf("%s '%s' is a %s, not a tensor", role, values[i].name,
                                ds_onnx_type_kind_name(values[i].kind));
      return FALSE;
    }
  return TRUE;
}

/* The graph inputs that are not initializers, in order: input_K.pb feeds the K-th. */
static GPtrArray *data_input_names(const DsOnnxModel *model)
{
  const DsOnnxGraph *g = model->graph;
  g_autoptr(GHashTable) initializers = g_hash_table_new(g_str_hash, g_str_equal);
  for (gsize i = 0; i < g->n_initializers; i++)
    g_hash_table_add(initializers, (gpointer)g->initializers[i].name);
  GPtrArray *names = g_ptr_array_new();
  for (gsize i = 0; i < g->n_inputs; i++)
    if (!g_hash_table_contains(initializers, g->inputs[i].name))
      g_ptr_array_add(names, (gpointer)g->inputs[i].name);
  return names;
}

static char *data_file(const char *set_dir, const char *kind, guint k)
{
  g_autofree char *base = g_strdup_printf("%s_%u.pb", kind, k);
  return g_build_filename(set_dir, base, NULL);
}

/* The element type the graph declares for value `name` among `values`, or 0. */
static int declared_elem_type(const DsOnnxValueInfo *values, gsize n, const char *name)
{
  for (gsize i = 0; i < n; i++)
    if (strcmp(values[i].name, name) == 0)
      return values[i].elem_type;
  return DS_ONNX_UNDEFINED;
}

/* NumPy has no bfloat16, so onnx 1.12 writes a bfloat16 tensor's test data as the uint16 array
 * of its bits (data_type UINT16), which its runner then hands over and compares as such: read
 * such data as the bfloat16 values it holds where the graph declares bfloat16. */
static void data_as_declared(DsNDArray *array, int declared)
{
  if (array != NULL && declared == DS_ONNX_BFLOAT16 && array->view.dtype == DS_DTYPE_UINT16)
    array->view.dtype = DS_DTYPE_BFLOAT16;
}

/* Feeds input_K.pb to the K-th data input; the name inside the file may be empty, so the
 * graph's order decides. */
static CaseStatus feed_inputs(DsSession *session, const DsOnnxGraph *g, GPtrArray *inputs,
                              const char *set_dir, char **reason)
{
  for (guint k = 0; k < inputs->len; k++) {
    g_autofree char *path = data_file(set_dir, "input", k);
    g_autofree char *file = g_path_get_basename(path);
    GError *error = NULL;
    DsNDArray *array = ds_onnx_tensor_file_load(path, NULL, &error);
    data_as_declared(array, declared_elem_type(g->inputs, g->n_inputs,
                                               g_ptr_array_index(inputs, k)));
    if (array == NULL || !ds_session_feed(session, g_ptr_array_index(inputs, k), array, &error)) {
      CaseStatus status = error_status(error, file, reason);
      g_error_free(error);
      return status;
    }
  }
  g_autofree char *extra = data_file(set_dir, "input", inputs->len);
  if (g_file_test(extra, G_FILE_TEST_EXISTS)) {
    *reason = g_strdup_printf("more input files than the %u graph inputs", inputs->len);
    return CASE_FAIL;
  }
  return CASE_PASS;
}

static int64_t load_i64(DsDType dtype, const void *base, int64_t i)
{
  switch (dtype) {
  case DS_DTYPE_INT64:
    return ((const int64_t *)base)[i];
  case DS_DTYPE_UINT64: /* compared by its bits: a double would round values above 2^53 */
    return (int64_t)((const uint64_t *)base)[i];
  case DS_DTYPE_BOOL:
    return ((const uint8_t *)base)[i] != 0;
  default:
    return (int64_t)ds_tensor_load_f64(dtype, base, i); /* exact for the narrower types */
  }
}

/* assert_allclose's rule, with NaN matching NaN and infinities only themselves. */
static gboolean close_enough(double got, double want)
{
  if (isnan(want) || isnan(got))
    return isnan(want) && isnan(got);
  if (isinf(want) || isinf(got))
    return got == want;
  return fabs(got - want) <= ATOL + RTOL * fabs(want);
}

static char *shape_text(const DsTensor *t)
{
  GString *s = g_string_new("(");
  for (int d = 0; d < t->ndim; d++)
    g_string_append_printf(s, "%s%" G_GINT64_FORMAT, d > 0 ? ", " : "", t->shape[d]);
  g_string_append(s, t->ndim == 1 ? ",)" : ")");
  return g_string_free(s, FALSE);
}

/* Flat index `i` as "[1, 2]". */
static char *index_text(const DsTensor *t, int64_t i)
{
  int64_t index[DS_MAX_NDIM];
  for (int d = t->ndim - 1; d >= 0; d--) {
    index[d] = t->shape[d] > 0 ? i % t->shape[d] : 0;
    i = t->shape[d] > 0 ? i / t->shape[d] : 0;
  }
  GString *s = g_string_new("[");
  for (int d = 0; d < t->ndim; d++)
    g_string_append_printf(s, "%s%" G_GINT64_FORMAT, d > 0 ? ", " : "", index[d]);
  g_string_append_c(s, ']');
  return g_string_free(s, FALSE);
}

/* NULL if `got` matches `want`, else why not. */
static char *compare_tensor(const DsTensor *got, const DsTensor *want)
{
  if (got->dtype != want->dtype)
    return g_strdup_printf("dtype %s, expected %s", ds_dtype_name(got->dtype),
                           ds_dtype_name(want->dtype));
  gboolean same_shape = got->ndim == want->ndim;
  for (int d = 0; same_shape && d < got->ndim; d++)
    same_shape = got->shape[d] == want->shape[d];
  if (!same_shape) {
    g_autofree char *g = shape_text(got), *w = shape_text(want);
    return g_strdup_printf("shape %s, expected %s", g, w);
  }
  int64_t n = ds_tensor_numel(want), n_bad = 0, first = -1;
  gboolean is_float = ds_dtype_is_float(want->dtype);
  for (int64_t i = 0; i < n; i++) {
    gboolean ok = is_float
                      ? close_enough(ds_tensor_load_f64(got->dtype, got->data, i),
                                     ds_tensor_load_f64(want->dtype, want->data, i))
                      : load_i64(got->dtype, got->data, i) == load_i64(want->dtype, want->data, i);
    if (!ok && n_bad++ == 0)
      first = i;
  }
  if (n_bad == 0)
    return NULL;
  g_autofree char *where = index_text(want, first);
  if (is_float)
    return g_strdup_printf("%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
                           " values differ; first at %s: %.9g, expected %.9g",
                           n_bad, n, where, ds_tensor_load_f64(got->dtype, got->data, first),
                           ds_tensor_load_f64(want->dtype, want->data, first));
  return g_strdup_printf("%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
                         " values differ; first at %s: %" G_GINT64_FORMAT
                         ", expected %" G_GINT64_FORMAT,
                         n_bad, n, where, load_i64(got->dtype, got->data, first),
                         load_i64(want->dtype, want->data, first));
}

/* Compares head K with output_K.pb, for every output file there is. */
static CaseStatus compare_outputs(DsSession *session, const DsOnnxGraph *g, const char *set_dir,
                                  char **reason)
{
  const DsGraph *graph = ds_session_get_graph(session);
  for (guint k = 0;; k++) {
    g_autofree char *path = data_file(set_dir, "output", k);
    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
      if (k == graph->n_heads)
        return CASE_PASS;
      *reason = g_strdup_printf("%u outputs, expected %u", graph->n_heads, k);
      return CASE_FAIL;
    }
    if (k >= graph->n_heads) {
      *reason = g_strdup_printf("%u outputs, expected more", graph->n_heads);
      return CASE_FAIL;
    }
    g_autofree char *file = g_path_get_basename(path);
    GError *error = NULL;
    g_autoptr(DsNDArray) want = ds_onnx_tensor_file_load(path, NULL, &error);
    if (k < g->n_outputs)
      data_as_declared(want, g->outputs[k].elem_type);
    if (want == NULL) {
      CaseStatus status = error_status(error, file, reason);
      g_error_free(error);
      return status;
    }
    g_autofree char *name = ds_graph_dup_output_name(graph, k);
    const DsTensor *got = ds_session_get_output(session, k);
    g_autofree char *why =
        got != NULL ? compare_tensor(got, &want->view) : g_strdup("no value after the run");
    if (why != NULL) {
      *reason = g_strdup_printf("output '%s': %s", name, why);
      return CASE_FAIL;
    }
  }
}

/* One data set, in a fresh session. */
static CaseStatus run_data_set(const char *model_path, const DsOnnxModel *model, GPtrArray *inputs,
                               const char *set_dir, char **reason)
{
  GError *error = NULL;
  CaseStatus status;
  g_autoptr(DsSession) session = ds_session_new(model_path, &error);
  if (session == NULL) {
    status = error_status(error, "load", reason);
    g_error_free(error);
    return status;
  }
  /* Each after the step where the importer should have refused such a value already, so that
   * its own message is the reason when it does. */
  const DsOnnxGraph *g = model->graph;
  if (!values_are_tensors(g->inputs, g->n_inputs, "input", reason))
    return CASE_UNSUPPORTED;
  if ((status = feed_inputs(session, g, inputs, set_dir, reason)) != CASE_PASS)
    return status;
  if (!ds_session_prepare(session, FALSE, 0, suite.backend, 1, &error)) {
    status = error_status(error, "prepare", reason);
    g_error_free(error);
    return status;
  }
  if (!values_are_tensors(g->outputs, g->n_outputs, "output", reason))
    return CASE_UNSUPPORTED;
  ds_session_set_deadline(session, g_get_monotonic_time() + CASE_SECONDS * G_USEC_PER_SEC);
  if (!ds_session_run(session, &error)) {
    *reason = one_line("run: ", error->message); /* a run's errors are failures, whatever code */
    g_error_free(error);
    return CASE_FAIL;
  }
  return compare_outputs(session, g, set_dir, reason);
}

/* Every test_data_set_N of the case; the first that does not pass decides. */
static CaseStatus run_case(const Case *c, char **reason)
{
  g_autofree char *case_dir = g_build_filename(suite.dir, c->name, NULL);
  g_autofree char *model_path = g_build_filename(case_dir, "model.onnx", NULL);
  GError *error = NULL;
  g_autoptr(DsOnnxModel) model = ds_onnx_model_load(model_path, &error);
  if (model == NULL) {
    CaseStatus status = error_status(error, "decode", reason);
    g_error_free(error);
    return status;
  }
  g_autoptr(GPtrArray) inputs = data_input_names(model);
  guint n = 0;
  for (;; n++) {
    g_autofree char *set_name = g_strdup_printf("test_data_set_%u", n);
    g_autofree char *set_dir = g_build_filename(case_dir, set_name, NULL);
    if (!g_file_test(set_dir, G_FILE_TEST_IS_DIR))
      break;
    g_autofree char *why = NULL;
    CaseStatus status = run_data_set(model_path, model, inputs, set_dir, &why);
    if (status != CASE_PASS) {
      *reason = n == 0 ? g_steal_pointer(&why) : g_strdup_printf("%s: %s", set_name, why);
      return status;
    }
  }
  if (n == 0) {
    *reason = g_strdup("no test_data_set_0");
    return CASE_FAIL;
  }
  return CASE_PASS;
}

static const char *status_name(CaseStatus status)
{
  static const char *names[] = {"not run", "pass", "FAIL", "unsupported"};
  return names[status];
}

/* ---- Subtests: one per op --------------------------------------------------------------- */

static void test_op(gconstpointer data)
{
  const char *op = data;
  g_autoptr(GString) problems = g_string_new(NULL);
  guint n_problems = 0, n_cases = 0;
  for (guint i = 0; i < suite.cases->len; i++) {
    Case *c = g_ptr_array_index(suite.cases, i);
    if (strcmp(c->op, op) != 0)
      continue;
    n_cases++;
    g_clear_pointer(&c->reason, g_free); /* a second run of the same subtest */
    c->status = run_case(c, &c->reason);
    gboolean known = g_hash_table_contains(suite.known, c->name);
    if (suite.verbose)
      printf("# %s: %s%s%s%s%s\n", c->name, status_name(c->status), c->reason ? " (" : "",
             c->reason ? c->reason : "", c->reason ? ")" : "", known ? " [known failure]" : "");
    const char *problem = NULL;
    if (c->status == CASE_FAIL && !known)
      problem = c->reason;
    else if (c->status == CASE_PASS && known)
      problem = "passes, but the known-failures list has it: remove it there";
    if (problem != NULL) {
      if (!suite.verbose) /* which already said it */
        g_test_message("%s: %s", c->name, problem);
      g_string_append_printf(problems, "%s%s", n_problems++ > 0 ? ", " : "", c->name);
    }
  }
  if (n_problems > 0)
    g_test_fail_printf("%u of %u cases: %s", n_problems, n_cases, problems->str);
}

/* Registered instead of the op subtests when the cases cannot be had. */
static void test_skipped(gconstpointer data)
{
  g_test_skip(data);
}

static void test_generation_failed(gconstpointer data)
{
  g_test_fail_printf("%s", (const char *)data);
}

/* ---- The summary ------------------------------------------------------------------------ */

typedef struct {
  guint run, pass, fail, known, unsupported;
  const Case *first_unsupported;
} Counts;

static void count(Counts *n, const Case *c)
{
  n->run++;
  if (c->status == CASE_PASS)
    n->pass++;
  else if (c->status == CASE_FAIL) {
    n->fail++;
    n->known += g_hash_table_contains(suite.known, c->name);
  } else {
    n->unsupported++;
    if (n->first_unsupported == NULL)
      n->first_unsupported = c;
  }
}

static Counts op_counts(const char *op)
{
  Counts n = {0};
  for (guint i = 0; i < suite.cases->len; i++) {
    const Case *c = g_ptr_array_index(suite.cases, i);
    if (c->status != CASE_NOT_RUN && strcmp(c->op, op) == 0)
      count(&n, c);
  }
  return n;
}

/* `reason` for the op table: the step and the message without the case's path ("prepare: 1
 * node cannot run: ..."), cut to the table's width. */
static char *short_text(const Case *c)
{
  const glong width = 110;
  g_autofree char *path = g_strdup_printf("%s/model.onnx: ", c->name);
  g_autoptr(GString) s = g_string_new(c->reason);
  g_string_replace(s, path, "", 1);
  if (g_utf8_strlen(s->str, -1) <= width)
    return g_string_free(g_steal_pointer(&s), FALSE);
  g_autofree char *cut = g_utf8_substring(s->str, 0, width - 3);
  return g_strconcat(cut, "...", NULL);
}

static void summary_ops(GString *out, Counts *total)
{
  for (guint i = 0; i < suite.ops->len; i++) {
    const char *op = g_ptr_array_index(suite.ops, i);
    Counts n = op_counts(op);
    if (n.run == 0)
      continue;
    total->run += n.run, total->pass += n.pass, total->fail += n.fail;
    total->known += n.known, total->unsupported += n.unsupported;
    g_string_append_printf(out, "%-34s %3u/%-3u passed", op, n.pass, n.run);
    if (n.fail > 0)
      g_string_append_printf(out, ", %u failed (%u known)", n.fail, n.known);
    if (n.unsupported > 0)
      g_string_append_printf(out, ", %u unsupported", n.unsupported);
    g_string_append_c(out, '\n');
  }
}

static void summary_unsupported(GString *out)
{
  g_string_append(out, "unsupported (op: cases, first reason):\n");
  for (guint i = 0; i < suite.ops->len; i++) {
    Counts n = op_counts(g_ptr_array_index(suite.ops, i));
    if (n.unsupported == 0)
      continue;
    g_autofree char *reason = short_text(n.first_unsupported);
    g_string_append_printf(out, "  %s: %u/%u, %s\n", (const char *)g_ptr_array_index(suite.ops, i),
                           n.unsupported, n.run, reason);
  }
}

/* Cases that fail the run: unexpected failures, and listed cases that pass. */
static void summary_problems(GString *out)
{
  gboolean header = FALSE;
  for (guint i = 0; i < suite.cases->len; i++) {
    const Case *c = g_ptr_array_index(suite.cases, i);
    gboolean known = g_hash_table_contains(suite.known, c->name);
    const char *problem = c->status == CASE_FAIL && !known ? c->reason
                          : c->status == CASE_PASS && known
                              ? "passes: remove it from the known-failures list"
                              : NULL;
    if (problem == NULL)
      continue;
    if (!header)
      g_string_append(out, "failing the run (failures not in the known-failures list, listed "
                           "cases that pass):\n");
    header = TRUE;
    g_string_append_printf(out, "  %s: %s\n", c->name, problem);
  }
}

/* Entries of the known-failures list that name no generated case (a typo, or a case another
 * onnx version does not have). Only meaningful when every case was selected. */
static void summary_stale_known(GString *out)
{
  g_autoptr(GHashTable) names = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < suite.cases->len; i++)
    g_hash_table_add(names, ((Case *)g_ptr_array_index(suite.cases, i))->name);
  GHashTableIter iter;
  gpointer name;
  g_hash_table_iter_init(&iter, suite.known);
  while (g_hash_table_iter_next(&iter, &name, NULL))
    if (!g_hash_table_contains(names, name))
      g_string_append_printf(out, "note: %s lists '%s', which is not a generated case\n",
                             suite.known_path, (const char *)name);
}

static char *summary_text(void)
{
  GString *out = g_string_new(NULL);
  g_string_append_printf(out, "ONNX node tests (onnx %s): passed/run per op\n", suite.onnx_version);
  Counts total = {0};
  summary_ops(out, &total);
  g_string_append_printf(out,
                         "onnx node tests: %u passed, %u failed (%u known), %u unsupported of %u "
                         "cases\n",
                         total.pass, total.fail, total.known, total.unsupported, total.run);
  if (total.unsupported > 0)
    summary_unsupported(out);
  summary_problems(out);
  if (suite.filter == NULL)
    summary_stale_known(out);
  return g_string_free(out, FALSE);
}

/* Prints `text` as TAP comments, and writes it to `path` unless NULL. */
static void publish_summary(const char *text, const char *path)
{
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (char **line = lines; *line != NULL; line++)
    if (**line != '\0')
      printf("# %s\n", *line);
  fflush(stdout);
  GError *error = NULL;
  if (path != NULL && !g_file_set_contents(path, text, -1, &error)) {
    printf("# cannot write the summary: %s\n", error->message);
    g_error_free(error);
  }
}

static gboolean any_case_ran(void)
{
  for (guint i = 0; i < suite.cases->len; i++)
    if (((const Case *)g_ptr_array_index(suite.cases, i))->status != CASE_NOT_RUN)
      return TRUE;
  return FALSE;
}

/* ---- main ------------------------------------------------------------------------------- */

/* Takes this program's own options out of argv before GLib's test framework sees it. */
static void parse_own_args(int *argc, char **argv)
{
  int kept = 1;
  suite.filter = g_getenv("DS_ONNX_CASE");
  for (int i = 1; i < *argc; i++) {
    if (strcmp(argv[i], "-v") == 0)
      suite.verbose = TRUE;
    else if (strcmp(argv[i], "--case") == 0 && i + 1 < *argc)
      suite.filter = argv[++i];
    else if (g_str_has_prefix(argv[i], "--case="))
      suite.filter = argv[i] + strlen("--case=");
    else
      argv[kept++] = argv[i];
  }
  argv[kept] = NULL;
  *argc = kept;
}

/* The op subtests, or a single one saying why there are none. */
static void add_tests(void)
{
  g_autofree char *skip = NULL;
  GError *error = NULL;
  if (!ensure_cases(suite.dir, &skip, &error) || !load_manifest(&error)) {
    if (skip != NULL) {
      suite.skip = g_strdup(skip);
      g_test_add_data_func_full("/onnx-conformance/cases", g_steal_pointer(&skip), test_skipped,
                                g_free);
    } else {
      g_test_add_data_func_full("/onnx-conformance/cases", g_strdup(error->message),
                                test_generation_failed, g_free);
      g_error_free(error);
    }
    return;
  }
  for (guint i = 0; i < suite.ops->len; i++) {
    const char *op = g_ptr_array_index(suite.ops, i);
    g_autofree char *path = g_strdup_printf("/onnx-conformance/%s", op);
    g_test_add_data_func(path, op, test_op);
  }
}

int main(int argc, char **argv)
{
  parse_own_args(&argc, argv);
  g_test_init(&argc, &argv, NULL);
  /* A failing op must not stop the others (GLib aborts after the first failed test unless
   * told to keep going): the table at the end covers every op. */
  g_test_set_nonfatal_assertions();
  suite.dir = cases_dir();
  suite.cases = g_ptr_array_new_with_free_func(case_free);
  suite.ops = g_ptr_array_new_with_free_func(g_free);
  suite.known = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  suite.known_path = g_build_filename(source_dir(), "tests", "onnx-conformance-known.txt", NULL);
  suite.backend = ds_backend_find("cpu");
  /* tools/run-tests.sh prints this file: never leave an earlier run's table behind. */
  const char *summary_path = g_getenv("DS_ONNX_CONFORMANCE_SUMMARY");
  if (summary_path != NULL)
    g_unlink(summary_path);
  load_known_failures();
  add_tests();

  int status = g_test_run();
  g_autofree char *text = NULL;
  if (any_case_ran())
    text = summary_text();
  else if (suite.skip != NULL)
    text = g_strdup_printf("onnx node tests skipped: %s\n", suite.skip);
  if (text != NULL)
    publish_summary(text, summary_path);

  g_ptr_array_unref(suite.cases);
  g_ptr_array_unref(suite.ops);
  g_hash_table_unref(suite.known);
  g_free(suite.known_path);
  g_free(suite.onnx_version);
  g_free(suite.skip);
  g_free(suite.dir);
  return status;
}
