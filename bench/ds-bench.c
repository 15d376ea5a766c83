/* ds-bench.c: `make bench`. Every target is a ratio measured side by side in one run, so the
 * noise of a shared machine cancels out: ours against a raw BLAS call of the same size, one
 * thread against two, the planner against its lower bound, compiling once against binding
 * afresh for every size, the symbolic path against a static executor at the same size.
 */
#include <cblas.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ds-backend.h"
#include "ds-cursor.h"
#include "ds-profiler.h"
#include "ds-report.h"
#include "ds-viz-layout.h"
#include "ds-dynamic-executor.h"
#include "ds-partition.h"
#include "ds-config.h"
#ifdef DS_HAVE_GTK
#include "ds-canvas-painter.h"
#endif
#include "ds-error.h"
#include "ds-mxnet-json.h"
#include "ds-session.h"

#define WARMUP 3

static double now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int compare_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof(double), compare_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static G_NORETURN void die(GError *error)
{
  fprintf(stderr, "ds-bench: %s\n", error->message);
  exit(1);
}

static char *shared_model(const char *file)
{
  const char *dir = g_getenv("DS_SHARED_DIR");
  return g_build_filename(dir != NULL ? dir : DS_SHARED_DIR, "models", "mxnet", file, NULL);
}

static DsSession *open_model_with(const char *path, const char *const *shapes, int threads,
                                  DsExecutorChoice choice)
{
  GError *error = NULL;
  DsSession *session = ds_session_new(path, &error);
  if (session == NULL)
    die(error);
  ds_session_set_executor_choice(session, choice);
  for (int i = 0; shapes != NULL && shapes[i] != NULL; i += 2) {
    int64_t dims[DS_MAX_NDIM];
    g_auto(GStrv) parts = g_strsplit(shapes[i + 1], ",", -1);
    int n = 0;
    for (; parts[n] != NULL && n < DS_MAX_NDIM; n++)
      dims[n] = g_ascii_strtoll(parts[n], NULL, 10);
    DsShape shape = ds_shape_from_concrete(dims, n);
    if (!ds_session_declare_shape(session, shapes[i], &shape, &error))
      die(error);
  }
  if (!ds_session_prepare(session, TRUE, 1, ds_backend_find("cpu"), threads, &error))
    die(error);
  return session;
}

static DsSession *open_model(const char *path, const char *const *shapes, int threads)
{
  return open_model_with(path, shapes, threads, DS_EXECUTOR_AUTO);
}

/* Median wall time of one executor run, in ms. */
static double time_runs(DsExecutor *exec, int reps)
{
  GError *error = NULL;
  double times[reps];
  for (int i = 0; i < WARMUP + reps; i++) {
    double t0 = now_ms();
    if (!ds_executor_run(exec, &error))
      die(error);
    if (i >= WARMUP)
      times[i - WARMUP] = now_ms() - t0;
  }
  return median(times, reps);
}

static void bench_latency(const char *label, const char *file, const char *const *shapes, int reps)
{
  g_autofree char *path = shared_model(file);
  double ms[2];
  for (int t = 1; t <= 2; t++) {
    g_autoptr(DsSession) session = open_model(path, shapes, t);
    ms[t - 1] = time_runs(ds_session_get_executor(session), reps);
  }
  printf("  %-28s %10.2f ms %10.2f ms %8.2fx\n", label, ms[0], ms[1], ms[0] / ms[1]);
}

static void bench_planner(const char *label, const char *file, const char *const *shapes)
{
  g_autofree char *path = shared_model(file);
  g_autoptr(DsSession) session = open_model(path, shapes, 1);
  const DsPlan *plan = ds_executor_get_plan(ds_session_get_executor(session));
  double ratio = (double)plan->arena_bytes / (double)plan->max_live_bytes;
  printf("  %-12s peak %8.2f MiB  bound %8.2f MiB  no-reuse %8.2f MiB  ratio %.3f  %s\n", label,
         plan->arena_bytes / 1048576.0, plan->max_live_bytes / 1048576.0,
         plan->total_bytes / 1048576.0, ratio, ratio <= 1.1 ? "ok (<= 1.1)" : "OVER 1.1");
}

/* One op as a graph: data, weight[, bias] -> op. */
static DsSession *single_op(const char *op, const char *attrs, int n_args, const char *data_shape,
                            int threads)
{
  GError *error = NULL;
  g_autoptr(GString) json = g_string_new("{\"nodes\": [");
  static const char *const names[] = {"data", "weight", "bias"};
  for (int i = 0; i < n_args; i++)
    g_string_append_printf(json, "{\"op\": \"null\", \"name\": \"%s\", \"inputs\": []}, ",
                           names[i]);
  g_string_append_printf(json, "{\"op\": \"%s\", \"name\": \"op0\", \"attrs\": {%s}, \"inputs\": [",
                         op, attrs);
  for (int i = 0; i < n_args; i++)
    g_string_append_printf(json, "%s[%d, 0, 0]", i ? ", " : "", i);
  g_string_append(json, "]}], \"arg_nodes\": [");
  for (int i = 0; i < n_args; i++)
    g_string_append_printf(json, "%s%d", i ? ", " : "", i);
  g_string_append(json, "], \"heads\": [[");
  g_string_append_printf(json, "%d, 0, 0]], \"attrs\": {\"mxnet_version\": [\"int\", 10500]}}",
                         n_args);
  g_autofree char *dir = g_dir_make_tmp("ds-bench-XXXXXX", &error);
  if (dir == NULL)
    die(error);
  g_autofree char *path = g_build_filename(dir, "op.json", NULL);
  if (!g_file_set_contents(path, json->str, -1, &error))
    die(error);
  const char *shapes[] = {"data", data_shape, NULL};
  DsSession *session = open_model(path, shapes, threads);
  g_unlink(path);
  g_rmdir(dir);
  return session;
}

/* Median ms of a raw sgemm C(MxN) = A(MxK) B(KxN). */
static double time_sgemm(int m, int n, int k, int reps)
{
  float *a = g_new0(float, (gsize)m *k), *b = g_new0(float, (gsize)k *n),
        *c = g_new0(float, (gsize)m *n);
  for (gsize i = 0; i < (gsize)m * k; i++)
    a[i] = (float)(i % 7) * 0.1f;
  for (gsize i = 0; i < (gsize)k * n; i++)
    b[i] = (float)(i % 5) * 0.1f;
  double times[reps];
  for (int i = 0; i < WARMUP + reps; i++) {
    double t0 = now_ms();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
    if (i >= WARMUP)
      times[i - WARMUP] = now_ms() - t0;
  }
  g_free(a);
  g_free(b);
  g_free(c);
  return median(times, reps);
}

static void bench_gemm_op(const char *label, const char *op, const char *attrs, int n_args,
                          const char *data_shape, int m, int n, int k, int threads)
{
  g_autoptr(DsSession) session = single_op(op, attrs, n_args, data_shape, threads);
  DsExecutor *exec = ds_session_get_executor(session);
  int reps = 15;
  /* Interleave ours and the raw call so both see the same machine state. */
  double ours[5], raw[5];
  for (int r = 0; r < 5; r++) {
    ours[r] = time_runs(exec, reps);
    raw[r] = time_sgemm(m, n, k, reps);
  }
  double t_ours = median(ours, 5), t_raw = median(raw, 5);
  double gflop = 2.0 * m * n * k / 1e9;
  double ratio = t_raw / t_ours;
  printf("  %-34s %7.1f GFLOP/s  sgemm %7.1f GFLOP/s  ratio %.3f%s\n", label, gflop / t_ours * 1e3,
         gflop / t_raw * 1e3, ratio, ratio >= 0.9 ? "" : "  (below 0.9)");
}

/* ---- compile once, run many sizes ---- */

#define SWEEP_ROUNDS   5
#define COMPARE_ROUNDS 7

static char *transformer_model(void)
{
  return g_build_filename(DS_SOURCE_DIR, "data", "transformer", "transformer-symbol.json", NULL);
}

/* Declares each name, shape-text pair ("data0", "(1, s1)") on a session. */
static void declare_shapes(DsSession *session, const char *const *shapes)
{
  GError *error = NULL;
  for (int i = 0; shapes != NULL && shapes[i] != NULL; i += 2) {
    DsShape shape;
    if (!ds_session_parse_shape(session, shapes[i + 1], &shape, &error) ||
        !ds_session_declare_shape(session, shapes[i], &shape, &error))
      die(error);
  }
}

static void bind_symbol(DsSession *session, const char *name, int64_t value)
{
  GError *error = NULL;
  ds_session_unbind_symbol(session, name);
  if (!ds_session_bind_symbol(session, name, value, &error))
    die(error);
}

/* One sweep of the symbolic path: compile once, then per length bind s1 and resize. Returns the
 * shape work in ms: the compile, plus per length the binding and what ds_session_resize()
 * spends evaluating shapes and re-planning (its random input filling is left out). */
static double sweep_symbolic(const char *path, const int64_t *lengths, int n, double *compile_ms)
{
  GError *error = NULL;
  static const char *const shapes[] = {"data0", "(1, s1)", "data1", "(1, s1)",
                                       "data2", "(1,)",    NULL};
  g_autoptr(DsSession) session = ds_session_new(path, &error);
  if (session == NULL)
    die(error);
  declare_shapes(session, shapes);
  double t0 = now_ms();
  if (!ds_session_compile(session, ds_backend_find("cpu"), 1, &error))
    die(error);
  *compile_ms = now_ms() - t0;
  double total = *compile_ms;
  for (int i = 0; i < n; i++) {
    t0 = now_ms();
    bind_symbol(session, "s1", lengths[i]);
    total += now_ms() - t0;
    if (!ds_session_resize(session, TRUE, 1, &error))
      die(error);
    total += (double)ds_session_get_resize_ns(session) / 1e6;
  }
  return total;
}

/* One sweep binding afresh per length, as a static engine must: concrete inference from the
 * input shapes, a plan and a new executor. The graph is loaded once (file parsing is not shape
 * work); returns the ms of inference + plan + bind over all lengths. `plan_ms` gets the ms of
 * one more ds_plan_new() per length on the same shapes, timed apart: both paths plan each
 * length in full, so this part is common to them. */
static double sweep_fresh(DsGraph *graph, const int64_t *lengths, int n, double *plan_ms)
{
  GError *error = NULL;
  const char *const names[] = {"data0", "data1", "data2"};
  const DsNode *vars[3];
  for (int k = 0; k < 3; k++)
    vars[k] = ds_graph_find_node(graph, names[k]);
  double total = 0.0;
  for (int i = 0; i < n; i++) {
    int64_t dims[2] = {1, lengths[i]};
    DsShape seq = ds_shape_from_concrete(dims, 2), batch = ds_shape_from_concrete(dims, 1);
    double t0 = now_ms();
    g_autoptr(DsGraphShapes) shapes = ds_graph_shapes_new(graph, &error);
    if (shapes == NULL)
      die(error);
    for (int k = 0; k < 3; k++)
      if (!ds_graph_shapes_set_variable(shapes, graph, vars[k], k < 2 ? &seq : &batch,
                                        DS_DTYPE_UNKNOWN, &error))
        die(error);
    DsShapeCtx *ctx = ds_shape_ctx_new();
    gboolean ok = ds_infer_graph(graph, shapes, ctx, TRUE, &error);
    ds_shape_ctx_free(ctx);
    if (!ok)
      die(error);
    g_autoptr(DsExecutor) exec = ds_executor_new(graph, shapes, ds_backend_find("cpu"), 1, &error);
    if (exec == NULL)
      die(error);
    total += now_ms() - t0;
    t0 = now_ms();
    g_autoptr(DsPlan) plan = ds_plan_new(graph, shapes, &error);
    if (plan == NULL)
      die(error);
    *plan_ms += now_ms() - t0;
  }
  return total;
}

static void bench_many_sizes(void)
{
  GError *error = NULL;
  g_autofree char *path = transformer_model();
  int64_t lengths[50];
  int n = G_N_ELEMENTS(lengths);
  for (int i = 0; i < n; i++)
    lengths[i] = 16 * (i + 1);
  g_autoptr(DsSession) loaded = ds_session_new(path, &error);
  if (loaded == NULL)
    die(error);
  DsGraph *graph = ds_session_get_graph(loaded);

  /* Rounds interleave the two paths; a first untimed round of each warms caches and
   * allocators. Medians of the round totals. */
  double sym[SWEEP_ROUNDS], fresh[SWEEP_ROUNDS], compile[SWEEP_ROUNDS], plan[SWEEP_ROUNDS];
  double unused = 0.0;
  sweep_symbolic(path, lengths, n, &unused);
  sweep_fresh(graph, lengths, n, &unused);
  for (int r = 0; r < SWEEP_ROUNDS; r++) {
    plan[r] = 0.0;
    sym[r] = sweep_symbolic(path, lengths, n, &compile[r]);
    fresh[r] = sweep_fresh(graph, lengths, n, &plan[r]);
  }
  double t_sym = median(sym, SWEEP_ROUNDS), t_fresh = median(fresh, SWEEP_ROUNDS);
  double t_compile = median(compile, SWEEP_ROUNDS), t_plan = median(plan, SWEEP_ROUNDS);
  double ratio = t_fresh / t_sym;
  double us = 1e3 / n; /* ms over the sweep -> µs per length */
  printf("  %-28s %8.0f µs total %7.1f µs/length  "
         "(compile once %.0f µs, then %.1f µs/length)\n",
         "symbolic: bind + resize", t_sym * 1e3, t_sym * us, t_compile * 1e3,
         (t_sym - t_compile) * us);
  printf("  %-28s %8.0f µs total %7.1f µs/length\n", "afresh: infer + plan + bind", t_fresh * 1e3,
         t_fresh * us);
  printf("  %-28s %8.2fx%s\n", "speedup", ratio, ratio >= 5.0 ? "  ok (>= 5x)" : "  BELOW 5x");
  /* Binding afresh analyses lifetimes and conflicts again for every length; the compiled
   * path keeps that analysis (DsPlanner) and only places buffers for the new sizes. */
  double rest_sym = t_sym - t_compile;
  printf("  %-28s %8.1f µs/length in the afresh path (whole liveness analysis each time); the "
         "compiled path re-plans within its %.1f µs/length\n",
         "of which planning", t_plan * us, rest_sym * us);
}

/* ---- the symbolic path against a static executor at one size ---- */

/* Feeds `to` a copy of every variable `from`'s executor has bound, except the declared
 * inputs, so two sessions run the same weights. */
static void copy_weights(DsSession *from, DsSession *to, const char *const *declared)
{
  GError *error = NULL;
  DsExecutor *exec = ds_session_get_executor(from);
  DsGraph *graph = ds_session_get_graph(from);
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    gboolean is_input = FALSE;
    for (int k = 0; declared[k] != NULL; k += 2)
      is_input = is_input || strcmp(declared[k], node->name) == 0;
    if (!ds_node_is_variable(node) || is_input)
      continue;
    const DsTensor *t = ds_executor_get_entry(exec, graph->node_row_ptr[i]);
    DsNDArray *copy = ds_ndarray_new(t->dtype, t->ndim, t->shape, node->name, &error);
    if (copy == NULL)
      die(error);
    memcpy(copy->view.data, t->data, copy->nbytes);
    if (!ds_session_feed(to, node->name, copy, &error))
      die(error);
  }
}

/* A session compiled with symbolic `shapes` and resized to `other` first, then to `value`
 * (each the value of symbol `sym`): what a server that ran another size before does. It runs
 * `weights_from`'s weights; its inputs are random. */
static DsSession *open_resized(const char *path, const char *const *shapes, const char *sym,
                               int64_t other, int64_t value, DsSession *weights_from)
{
  GError *error = NULL;
  DsSession *session = ds_session_new(path, &error);
  if (session == NULL)
    die(error);
  declare_shapes(session, shapes);
  copy_weights(weights_from, session, shapes);
  if (!ds_session_compile(session, ds_backend_find("cpu"), 1, &error))
    die(error);
  bind_symbol(session, sym, other);
  if (!ds_session_resize(session, TRUE, 1, &error))
    die(error);
  bind_symbol(session, sym, value);
  if (!ds_session_resize(session, TRUE, 1, &error))
    die(error);
  return session;
}

static void bench_symbolic_vs_static(const char *label, const char *path,
                                     const char *const *sym_shapes, const char *sym, int64_t other,
                                     int64_t value, const char *const *static_shapes, int reps)
{
  g_autoptr(DsSession) fixed = open_model(path, static_shapes, 1);
  g_autoptr(DsSession) symbolic = open_resized(path, sym_shapes, sym, other, value, fixed);
  DsExecutor *e_sym = ds_session_get_executor(symbolic), *e_fix = ds_session_get_executor(fixed);
  /* Interleaved, so both see the same machine state. Same weights; the inputs are random in
   * both, from the same distribution. */
  double t_sym[COMPARE_ROUNDS], t_fix[COMPARE_ROUNDS];
  for (int r = 0; r < COMPARE_ROUNDS; r++) {
    t_sym[r] = time_runs(e_sym, reps);
    t_fix[r] = time_runs(e_fix, reps);
  }
  double ms_sym = median(t_sym, COMPARE_ROUNDS), ms_fix = median(t_fix, COMPARE_ROUNDS);
  /* The planned peak is what this size needs; the arena itself only grows, so after the larger
   * size it holds more than that (its capacity is shown, not compared). */
  gsize peak_sym = ds_executor_get_plan(e_sym)->arena_bytes;
  gsize peak_fix = ds_executor_get_plan(e_fix)->arena_bytes;
  double speed = ms_fix / ms_sym, mem = (double)peak_sym / (double)peak_fix;
  printf("  %-26s %8.2f ms %8.2f ms  speed %.3f%s  peak %7.2f / %7.2f MiB  memory %.3f%s"
         "  (arena %.2f MiB after %s=%" G_GINT64_FORMAT ")\n",
         label, ms_sym, ms_fix, speed, speed >= 0.95 ? "" : " (below 0.95)", peak_sym / 1048576.0,
         peak_fix / 1048576.0, mem, mem <= 1.05 ? "" : " (over 1.05)",
         ds_executor_get_arena_capacity(e_sym) / 1048576.0, sym, other);
}

/* Median ms of runs of two sessions, alternated run by run so that machine noise hits both. */
static void time_side_by_side(DsSession *a, DsSession *b, int reps, double *ms_a, double *ms_b)
{
  GError *error = NULL;
  double ta[reps], tb[reps];
  for (int i = 0; i < WARMUP + reps; i++) {
    double t0 = now_ms();
    if (!ds_session_run(a, &error))
      die(error);
    double t1 = now_ms();
    if (!ds_session_run(b, &error))
      die(error);
    double t2 = now_ms();
    if (i >= WARMUP) {
      ta[i - WARMUP] = t1 - t0;
      tb[i - WARMUP] = t2 - t1;
    }
  }
  *ms_a = median(ta, reps);
  *ms_b = median(tb, reps);
}

static void bench_dynamic_vs_static(const char *label, const char *path, const char *const *shapes,
                                    int reps)
{
  g_autoptr(DsSession) dyn = open_model_with(path, shapes, 1, DS_EXECUTOR_DYNAMIC);
  g_autoptr(DsSession) fix = open_model_with(path, shapes, 1, DS_EXECUTOR_STATIC);
  double ms_dyn, ms_fix;
  time_side_by_side(dyn, fix, reps, &ms_dyn, &ms_fix);
  DsDynamicExecutorStats st;
  ds_dynamic_executor_get_stats(ds_session_get_dynamic_executor(dyn), &st);
  gsize mem_fix = ds_executor_get_reserved_bytes(ds_session_get_executor(fix));
  double speed = ms_fix / ms_dyn, mem = (double)st.memory_bytes / (double)mem_fix;
  printf("  %-24s %9.2f ms %9.2f ms  speed %.3f%s  memory %7.2f / %7.2f MiB = %.3f%s\n", label,
         ms_dyn, ms_fix, speed, speed >= 0.95 ? "" : " (below 0.95)", st.memory_bytes / 1048576.0,
         mem_fix / 1048576.0, mem, mem <= 1.1 ? "" : " (over 1.1)");
}

/* A chain of `n` tiny _plus_scalar ops on a (16,) tensor, as a model file in `dir`. */
static char *chain_model(const char *dir, int n)
{
  g_autoptr(GString) json = g_string_new("{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", "
                                         "\"attrs\": {\"__shape__\": \"(16,)\"}, \"inputs\": []}");
  for (int i = 1; i <= n; i++)
    g_string_append_printf(json,
                           ", {\"op\": \"_plus_scalar\", \"name\": \"add%d\", \"attrs\": "
                           "{\"scalar\": \"1\"}, \"inputs\": [[%d, 0, 0]]}",
                           i, i - 1);
  g_string_append_printf(json, "], \"arg_nodes\": [0], \"heads\": [[%d, 0, 0]]}", n);
  char *path = g_build_filename(dir, "chain-symbol.json", NULL);
  GError *error = NULL;
  if (!g_file_set_contents(path, json->str, -1, &error))
    die(error);
  return path;
}

/* What running an op on the dynamic path costs beyond its kernel: shapes from the symbols,
 * buffers from the pool, hooks. A chain of tiny ops run all-imperatively (no region) against
 * the same chain on the static executor; the difference per op. */
static void bench_dynamic_overhead(void)
{
  const int n_ops = 400, reps = 200;
  GError *error = NULL;
  g_autofree char *dir = g_dir_make_tmp("ds-bench-XXXXXX", &error);
  if (dir == NULL)
    die(error);
  g_autofree char *path = chain_model(dir, n_ops);
  g_autoptr(DsSession) fix = open_model_with(path, NULL, 1, DS_EXECUTOR_STATIC);
  g_autoptr(DsSession) region = open_model_with(path, NULL, 1, DS_EXECUTOR_DYNAMIC);
  DsGraph *graph = ds_session_get_graph(fix);
  /* No region at all: every op imperative. */
  g_autofree int *none = g_new(int, graph->n_nodes);
  for (guint i = 0; i < graph->n_nodes; i++)
    none[i] = -1;
  DsPartition empty = {.graph = graph, .n_regions = 0, .regions = NULL, .region_of_node = none};
  const DsGraphShapes *symbolic = ds_session_infer_symbolic(fix, &error);
  if (symbolic == NULL)
    die(error);
  DsBindSpec spec = {.graph = graph,
                     .shapes = symbolic,
                     .exprs = ds_session_get_exprs(fix),
                     .partition = &empty,
                     .backend = ds_backend_find("cpu"),
                     .n_threads = 1};
  g_autoptr(DsDynamicExecutor) imperative = ds_dynamic_executor_new(&spec, &error);
  if (imperative == NULL ||
      !ds_dynamic_executor_bind(imperative, graph->nodes[0],
                                ds_executor_get_entry(ds_session_get_executor(fix), 0), &error))
    die(error);
  double t_fix[reps], t_imp[reps], t_region[reps];
  for (int i = 0; i < WARMUP + reps; i++) {
    double t0 = now_ms();
    if (!ds_session_run(fix, &error))
      die(error);
    double t1 = now_ms();
    if (!ds_dynamic_executor_run(imperative, &error))
      die(error);
    double t2 = now_ms();
    if (!ds_session_run(region, &error))
      die(error);
    double t3 = now_ms();
    if (i >= WARMUP) {
      t_fix[i - WARMUP] = t1 - t0;
      t_imp[i - WARMUP] = t2 - t1;
      t_region[i - WARMUP] = t3 - t2;
    }
  }
  double fix_ms = median(t_fix, reps), imp_ms = median(t_imp, reps);
  double region_ms = median(t_region, reps);
  printf("  %d-op chain of _plus_scalar on (16,): static %.1f µs, one region %.1f µs, all "
         "imperative %.1f µs\n",
         n_ops, fix_ms * 1e3, region_ms * 1e3, imp_ms * 1e3);
  printf("  per-op overhead of the dynamic path: %.3f µs per imperative op; %.1f µs per run "
         "for a region\n",
         (imp_ms - fix_ms) * 1e3 / n_ops, (region_ms - fix_ms) * 1e3);
  g_unlink(path);
  g_rmdir(dir);
}

/* An LSTM (batch 16, input 128, hidden 256) through _foreach against the same LSTM unrolled
 * into a static graph, at several lengths; the models come from tools/make_bench_models.py. */
static void bench_foreach_lstm(void)
{
  const char *dir = g_getenv("DS_BENCH_MODELS");
  if (dir == NULL) {
    printf("  (skipped: `make bench` writes these models first)\n");
    return;
  }
  static const int lengths[] = {16, 64, 256, 512};
  g_autofree char *loop = g_build_filename(dir, "lstm-foreach-symbol.json", NULL);
  for (guint i = 0; i < G_N_ELEMENTS(lengths); i++) {
    int n = lengths[i];
    g_autofree char *name = g_strdup_printf("lstm-unrolled-%d-symbol.json", n);
    g_autofree char *unrolled = g_build_filename(dir, name, NULL);
    g_autofree char *dims = g_strdup_printf("%d,16,128", n);
    const char *const shapes[] = {"data", dims, NULL};
    g_autoptr(DsSession) looped = open_model_with(loop, shapes, 1, DS_EXECUTOR_AUTO);
    g_autoptr(DsSession) flat = open_model_with(unrolled, NULL, 1, DS_EXECUTOR_AUTO);
    double ms_loop, ms_flat;
    time_side_by_side(looped, flat, n >= 256 ? 5 : 20, &ms_loop, &ms_flat);
    double ratio = ms_flat / ms_loop;
    printf("  length %4d  foreach %8.2f ms  unrolled %8.2f ms  throughput %.3f%s  overhead "
           "%6.2f µs/iteration\n",
           n, ms_loop, ms_flat, ratio, ratio >= 0.9 ? "" : " (below 0.9)",
           (ms_loop - ms_flat) * 1e3 / n);
  }
}

/* A _foreach over data (N, 16) carrying s (16,): s' = s + x, output s'. */
static const char tiny_loop_json[] =
    "{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", \"attrs\": {\"__shape__\": \"(0, 16)\"}, "
    "\"inputs\": []}, {\"op\": \"null\", \"name\": \"s0\", \"attrs\": {\"__shape__\": \"(16,)\"}, "
    "\"inputs\": []}, {\"op\": \"_foreach\", \"name\": \"loop0\", \"attrs\": {\"in_data_locs\": "
    "\"[0]\", \"in_state_locs\": \"[1]\", \"num_args\": \"3\", \"num_out_data\": \"1\", "
    "\"num_outputs\": \"2\", \"remain_locs\": \"[]\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]], "
    "\"subgraphs\": [{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, {\"op\": "
    "\"null\", \"name\": \"s\", \"inputs\": []}, {\"op\": \"elemwise_add\", \"name\": \"add0\", "
    "\"inputs\": [[0, 0, 0], [1, 0, 0]]}, {\"op\": \"_copy\", \"name\": \"copy0\", \"inputs\": "
    "[[2, 0, 0]]}], \"arg_nodes\": [0, 1], \"heads\": [[2, 0, 0], [3, 0, 0]]}]}], "
    "\"arg_nodes\": [0, 1], \"heads\": [[2, 0, 0], [2, 1, 0]]}";

static double minimum(const double *v, int n)
{
  double m = v[0];
  for (int i = 1; i < n; i++)
    m = MIN(m, v[i]);
  return m;
}

/* A full run through the debug cursor (continue, no breakpoint: every node and frame goes
 * through its hooks, in its worker thread) against a plain run of the same session,
 * alternated. The fastest of each: on a shared machine the minimum of a deterministic run
 * is what noise least disturbs. */
static guint64 time_cursor(DsSession *session, int reps, double *plain_ms, double *cursor_ms)
{
  GError *error = NULL;
  g_autoptr(DsCursor) cursor = ds_cursor_new(session);
  double tp[reps], tc[reps];
  guint64 n_steps = 0;
  for (int i = 0; i < WARMUP + reps; i++) {
    double t0 = now_ms();
    if (!ds_session_run(session, &error))
      die(error);
    double t1 = now_ms();
    if (ds_cursor_continue(cursor, &error) != DS_CURSOR_FINISHED)
      die(error);
    double t2 = now_ms();
    n_steps = ds_cursor_get_n_steps(cursor);
    if (i >= WARMUP) {
      tp[i - WARMUP] = t1 - t0;
      tc[i - WARMUP] = t2 - t1;
    }
  }
  *plain_ms = minimum(tp, reps);
  *cursor_ms = minimum(tc, reps);
  return n_steps;
}

/* What the hooks cost, measured where nodes cost almost nothing themselves. */
typedef struct {
  double per_node_us, per_frame_us, per_run_us;
} HookCost;

/* A realistic model: the overhead measured, and the share the hooks' own cost predicts for
 * its nodes and loop iterations (what noise cannot hide). */
static void print_cursor_row(const char *label, double plain, double cursor, guint64 n_steps,
                             int n_frames, const HookCost *cost)
{
  double overhead = cursor / plain - 1.0;
  double predicted =
      (cost->per_node_us * (double)n_steps + cost->per_frame_us * n_frames + cost->per_run_us) *
      1e-3 / plain;
  printf("  %-30s plain %8.3f ms  cursor %8.3f ms  measured %+6.2f%%  hooks %6.3f%%%s\n", label,
         plain, cursor, overhead * 100.0, predicted * 100.0, predicted <= 0.02 ? "" : " (over 2%)");
}

static void bench_cursor(const char *resnet, const char *const *resnet_shapes)
{
  double plain, cursor;
  HookCost cost;
  GError *error = NULL;
  g_autofree char *tmp = g_dir_make_tmp("ds-bench-XXXXXX", &error);
  if (tmp == NULL)
    die(error);
  /* One node's hooks: a chain of 400 tiny ops, and of 1 for the cost of a run's hand-over to
   * the worker thread and back. */
  g_autofree char *one = chain_model(tmp, 1);
  g_autoptr(DsSession) single = open_model_with(one, NULL, 1, DS_EXECUTOR_AUTO);
  time_cursor(single, 200, &plain, &cursor);
  cost.per_run_us = (cursor - plain) * 1e3;
  g_unlink(one);
  g_autofree char *chain = chain_model(tmp, 400);
  g_autoptr(DsSession) tiny = open_model_with(chain, NULL, 1, DS_EXECUTOR_AUTO);
  time_cursor(tiny, 200, &plain, &cursor);
  cost.per_node_us = MAX(0.0, ((cursor - plain) * 1e3 - cost.per_run_us) / 400);
  printf("  %-30s plain %8.3f ms  cursor %8.3f ms  %+.3f µs/node, %.1f µs/run\n",
         "400 _plus_scalar on (16,)", plain, cursor, cost.per_node_us, cost.per_run_us);
  /* One loop iteration: a frame entered and left around a body of two tiny nodes. */
  g_autofree char *loop_path = g_build_filename(tmp, "tiny-loop-symbol.json", NULL);
  if (!g_file_set_contents(loop_path, tiny_loop_json, -1, &error))
    die(error);
  static const char *const loop_shapes[] = {"data", "4000,16", NULL};
  g_autoptr(DsSession) tiny_loop = open_model_with(loop_path, loop_shapes, 1, DS_EXECUTOR_AUTO);
  time_cursor(tiny_loop, 40, &plain, &cursor);
  double per_iteration = ((cursor - plain) * 1e3 - cost.per_run_us) / 4000;
  cost.per_frame_us = MAX(0.0, per_iteration - 2 * cost.per_node_us);
  printf("  %-30s plain %8.3f ms  cursor %8.3f ms  %+.3f µs/iteration (%.3f for its frame)\n",
         "foreach of 4000 tiny bodies", plain, cursor, per_iteration, cost.per_frame_us);
  g_unlink(chain);
  g_unlink(loop_path);
  g_rmdir(tmp);

  g_autoptr(DsSession) net = open_model_with(resnet, resnet_shapes, 1, DS_EXECUTOR_AUTO);
  guint64 steps = time_cursor(net, 20, &plain, &cursor);
  print_cursor_row("resnet18 1x3x224x224 (static)", plain, cursor, steps, 0, &cost);
  const char *dir = g_getenv("DS_BENCH_MODELS");
  if (dir == NULL) {
    printf("  (LSTM skipped: `make bench` writes its model first)\n");
    return;
  }
  g_autofree char *loop = g_build_filename(dir, "lstm-foreach-symbol.json", NULL);
  static const int lengths[] = {16, 256};
  for (guint i = 0; i < G_N_ELEMENTS(lengths); i++) {
    g_autofree char *dims = g_strdup_printf("%d,16,128", lengths[i]);
    const char *const shapes[] = {"data", dims, NULL};
    g_autoptr(DsSession) lstm = open_model_with(loop, shapes, 1, DS_EXECUTOR_AUTO);
    steps = time_cursor(lstm, lengths[i] >= 256 ? 15 : 60, &plain, &cursor);
    g_autofree char *label = g_strdup_printf("LSTM foreach, length %d", lengths[i]);
    print_cursor_row(label, plain, cursor, steps, lengths[i], &cost);
  }
}

/* A run recorded by the profiler (every node's times, shapes and memory) against a plain run
 * of the same session, alternated; the fastest of each, and the profiler's own hook time. */
static void bench_profiler_on(const char *label, DsSession *session, int reps)
{
  GError *error = NULL;
  double tp[reps], tr[reps];
  g_autoptr(DsProfiler) profiler = ds_profiler_new(session);
  for (int i = 0; i < WARMUP + reps; i++) {
    double t0 = now_ms();
    if (!ds_session_run(session, &error))
      die(error);
    double t1 = now_ms();
    ds_session_set_hooks(session, ds_profiler_get_hooks(), profiler);
    ds_profiler_begin_run(profiler);
    if (!ds_session_run(session, &error))
      die(error);
    ds_profiler_end_run(profiler);
    ds_session_set_hooks(session, NULL, NULL);
    double t2 = now_ms();
    if (i >= WARMUP) {
      tp[i - WARMUP] = t1 - t0;
      tr[i - WARMUP] = t2 - t1;
    }
  }
  double plain = minimum(tp, reps), profiled = minimum(tr, reps);
  double overhead = profiled / plain - 1.0;
  cJSON *json = ds_profiler_build_report(profiler, 1);
  DsReport *report = ds_report_from_json(json, "report", &error);
  if (report == NULL)
    die(error);
  double hooks_ns = (double)report->run.profiler_overhead_ns;
  guint runs = ds_profiler_get_n_runs(profiler);
  double share = hooks_ns / runs / 1e6 / plain;
  ds_report_free(report);
  cJSON_Delete(json);
  printf("  %-30s plain %8.3f ms  profiled %8.3f ms  measured %+6.2f%%  in hooks %5.2f%%%s  "
         "%u events/run\n",
         label, plain, profiled, overhead * 100.0, share * 100.0, share <= 0.03 ? "" : " (over 3%)",
         ds_profiler_get_n_events(profiler) / runs);
}

static void bench_profiler(const char *resnet, const char *const *resnet_shapes, const char *bert,
                           const char *const *bert_shapes)
{
  g_autoptr(DsSession) net = open_model_with(resnet, resnet_shapes, 1, DS_EXECUTOR_AUTO);
  bench_profiler_on("resnet18 1x3x224x224", net, 20);
  g_autoptr(DsSession) nlp = open_model_with(bert, bert_shapes, 1, DS_EXECUTOR_AUTO);
  bench_profiler_on("bert 1x384", nlp, 5);
  const char *dir = g_getenv("DS_BENCH_MODELS");
  if (dir == NULL) {
    printf("  (LSTM skipped: `make bench` writes its model first)\n");
    return;
  }
  g_autofree char *loop = g_build_filename(dir, "lstm-foreach-symbol.json", NULL);
  static const char *const shapes[] = {"data", "64,16,128", NULL};
  g_autoptr(DsSession) lstm = open_model_with(loop, shapes, 1, DS_EXECUTOR_AUTO);
  bench_profiler_on("LSTM foreach, length 64", lstm, 20);
}

/* A model of `n_blocks` blocks, each a FullyConnected followed by nine elementwise ops (so
 * the elementwise property makes one region per block), with a skip connection every block:
 * 10 nodes a block. */
static char *blocks_model(const char *dir, int n_blocks)
{
  static const char *const ops[] = {"relu",        "_plus_scalar", "_mul_scalar",
                                    "sigmoid",     "_plus_scalar", "tanh",
                                    "_mul_scalar", "relu",         "_plus_scalar"};
  g_autoptr(GString) json = g_string_new("{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", "
                                         "\"attrs\": {\"__shape__\": \"(4, 16)\"}, "
                                         "\"inputs\": []}");
  int prev = 0, id = 1;
  for (int b = 0; b < n_blocks; b++) {
    g_string_append_printf(json,
                           ", {\"op\": \"null\", \"name\": \"fc%d_weight\", \"inputs\": []}, "
                           "{\"op\": \"FullyConnected\", \"name\": \"fc%d\", \"attrs\": "
                           "{\"num_hidden\": \"16\", \"no_bias\": \"True\"}, \"inputs\": "
                           "[[%d, 0, 0], [%d, 0, 0]]}",
                           b, b, prev, id);
    int fc = id + 1;
    id += 2;
    int last = fc;
    for (int k = 0; k < 9; k++) {
      const char *attrs = strcmp(ops[k], "relu") == 0 || strcmp(ops[k], "sigmoid") == 0 ||
                                  strcmp(ops[k], "tanh") == 0
                              ? "{}"
                              : "{\"scalar\": \"0.5\"}";
      if (k == 8) /* the skip connection closes the block */
        g_string_append_printf(json,
                               ", {\"op\": \"elemwise_add\", \"name\": \"add%d\", \"attrs\": {}, "
                               "\"inputs\": [[%d, 0, 0], [%d, 0, 0]]}",
                               b, last, prev);
      else
        g_string_append_printf(json,
                               ", {\"op\": \"%s\", \"name\": \"b%d_%d\", \"attrs\": %s, "
                               "\"inputs\": [[%d, 0, 0]]}",
                               ops[k], b, k, attrs, last);
      last = id++;
    }
    prev = last;
  }
  g_string_append_printf(json, "], \"arg_nodes\": [0], \"heads\": [[%d, 0, 0]]}", prev);
  char *path = g_build_filename(dir, "blocks-symbol.json", NULL);
  GError *error = NULL;
  if (!g_file_set_contents(path, json->str, -1, &error))
    die(error);
  return path;
}

/* A model's picture as `--render` and the window build it: its session (which the scene
 * refers to), scene and layout, and the ms building and laying out took. */
typedef struct {
  DsSession *session;
  DsVizScene *scene;
  DsVizLayout *layout;
  double ms;
} Picture;

static void picture_clear(Picture *p)
{
  g_clear_pointer(&p->layout, ds_viz_layout_free);
  g_clear_pointer(&p->scene, ds_viz_scene_free);
  g_clear_pointer(&p->session, ds_session_free);
}

static Picture lay_out(const char *path, const char *const *shapes, const char *property,
                       gboolean collapse_none)
{
  GError *error = NULL;
  Picture p = {.session = ds_session_new(path, &error)};
  if (p.session == NULL)
    die(error);
  declare_shapes(p.session, shapes);
  const DsGraphShapes *symbolic = ds_session_infer_symbolic(p.session, &error);
  if (symbolic == NULL)
    die(error);
  DsGraph *graph = ds_session_get_graph(p.session);
  g_autoptr(DsPartition) partition = NULL;
  if (property != NULL &&
      (partition = ds_partition_label(graph, ds_subgraph_property_find(property), &error)) == NULL)
    die(error);
  g_autofree gboolean *is_weight = g_new0(gboolean, graph->n_nodes + 1);
  for (guint i = 0; i < graph->n_nodes; i++)
    is_weight[i] = ds_node_is_variable(graph->nodes[i]) &&
                   ds_session_classify_variable(p.session, graph->nodes[i]) != DS_VARIABLE_DATA;
  DsVizOptions options = {.partition = partition,
                          .symbolic = symbolic,
                          .is_weight = is_weight,
                          .show_weights = -1,
                          .collapse_none = collapse_none};
  double t0 = now_ms();
  p.scene = ds_viz_scene_build(graph, &options, &error);
  p.layout = p.scene != NULL ? ds_viz_layout(p.scene, &error) : NULL;
  if (p.layout == NULL)
    die(error);
  p.ms = now_ms() - t0;
  return p;
}

/* Scene building and dot layout of one model, as `--render` does it; ms and what was drawn. */
static void bench_layout_one(const char *label, const char *path, const char *const *shapes,
                             const char *property, gboolean collapse_none)
{
  Picture p = lay_out(path, shapes, property, collapse_none);
  printf("  %-34s %5u graph nodes  %5u drawn  %3u clusters (%u collapsed)  %8.0f ms%s\n", label,
         ds_session_get_graph(p.session)->n_nodes, p.scene->nodes->len, p.scene->clusters->len,
         p.scene->collapsed->len, p.ms, p.ms <= 2000 ? "" : " (over 2 s)");
  picture_clear(&p);
}

/* ---- the desktop canvas: what one frame costs (a build with the desktop app) ---- */

#ifdef DS_HAVE_GTK

#define CANVAS_W 900
#define CANVAS_H 760
#define FRAME_BUDGET_MS (1000.0 / 60)

/* Median ms of painting `frames` frames, the view moved by `pan` pixels between frames (a
 * drag) and the hovered node changing, as the window's canvas paints them. */
static double paint_frames(DsCanvasPainter *painter, const Picture *p, double zoom,
                           double pan, int frames)
{
  cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, CANVAS_W, CANVAS_H);
  double *ms = g_new(double, frames);
  DsCanvasView view = {.scene = p->scene,
                       .layout = p->layout,
                       .width = CANVAS_W,
                       .height = CANVAS_H,
                       .zoom = zoom,
                       .selected = -1,
                       .current = 0,
                       .fg = {0.2, 0.2, 0.2},
                       .minimap = p->scene->nodes->len > 150};
  /* Start on the middle node of the graph, where it is dense, and drag down from there. */
  const DsVizBox *middle = &p->layout->nodes[p->layout->n_nodes / 2].box;
  double x0 = CANVAS_W / 2.0 - middle->x * zoom, y0 = CANVAS_H / 2.0 - middle->y * zoom;
  if (zoom * p->layout->width <= CANVAS_W)
    x0 = (CANVAS_W - p->layout->width * zoom) / 2;
  for (int f = 0; f < frames; f++) {
    view.offset_x = x0;
    view.offset_y = y0 - f * pan;
    view.hover = (gint)(f % p->layout->n_nodes);
    cairo_t *cr = cairo_create(surface);
    double t0 = now_ms();
    cairo_set_source_rgb(cr, 0.98, 0.98, 0.98);
    cairo_paint(cr);
    ds_canvas_painter_paint(painter, cr, &view);
    cairo_surface_flush(surface);
    ms[f] = now_ms() - t0;
    cairo_destroy(cr);
  }
  double m = median(ms, frames);
  g_free(ms);
  cairo_surface_destroy(surface);
  return m;
}

static void bench_canvas_one(const char *label, const char *path, const char *const *shapes)
{
  Picture p = lay_out(path, shapes, NULL, FALSE);
  g_autoptr(DsCanvasPainter) painter = ds_canvas_painter_new();
  /* The window's fit for a tall graph: its width fills the canvas. */
  double fit = MIN((CANVAS_W - 48) / MAX(p.layout->width, 1.0), 1.5);
  static const struct {
    const char *name;
    double zoom; /* 0: fitted */
  } views[] = {{"fitted", 0}, {"100%", 1.0}, {"200%", 2.0}};
  for (guint v = 0; v < G_N_ELEMENTS(views); v++) {
    double zoom = views[v].zoom > 0 ? views[v].zoom : fit;
    double ms = paint_frames(painter, &p, zoom, 12, 60);
    printf("  %-10s %-7s zoom %4.2f  %7.2f ms a frame  %6.1f frames/s  %5.1fx the 60 Hz budget\n",
           label, views[v].name, zoom, ms, 1000 / ms, FRAME_BUDGET_MS / ms);
  }
  picture_clear(&p);
}

static void bench_canvas(const char *bert, const char *const *bert_shapes)
{
  g_autofree char *ssd = shared_model("gluoncv_ssd_512_resnet50_v1-symbol.json");
  static const char *const ssd_shapes[] = {"data", "1,3,512,512", NULL};
  printf("desktop canvas: %dx%d, a drag of 60 frames with the hover moving (target: 60 Hz)\n",
         CANVAS_W, CANVAS_H);
  bench_canvas_one("bert", bert, bert_shapes);
  bench_canvas_one("ssd", ssd, ssd_shapes);
}
#else
static void bench_canvas(const char *bert, const char *const *bert_shapes)
{
  (void)bert;
  (void)bert_shapes;
  printf("desktop canvas: not in this build (configured with -Dgtk=disabled)\n");
}
#endif

static void bench_layout(const char *resnet, const char *const *resnet_shapes, const char *bert,
                         const char *const *bert_shapes)
{
  g_autofree char *mlp = shared_model("djl_mlp-symbol.json");
  g_autofree char *ssd = shared_model("gluoncv_ssd_512_resnet50_v1-symbol.json");
  static const char *const mlp_shapes[] = {"data", "1,784", NULL};
  static const char *const ssd_shapes[] = {"data", "1,3,512,512", NULL};
  bench_layout_one("mlp", mlp, mlp_shapes, NULL, FALSE);
  bench_layout_one("resnet18", resnet, resnet_shapes, NULL, FALSE);
  bench_layout_one("bert", bert, bert_shapes, NULL, FALSE);
  bench_layout_one("ssd", ssd, ssd_shapes, NULL, FALSE);
  GError *error = NULL;
  g_autofree char *dir = g_dir_make_tmp("ds-bench-XXXXXX", &error);
  if (dir == NULL)
    die(error);
  g_autofree char *blocks = blocks_model(dir, 455); /* 5,006 nodes */
  bench_layout_one("generated, elementwise regions", blocks, NULL, "elementwise", FALSE);
  g_unlink(blocks);
  g_rmdir(dir);
}

/* `ds-bench onnx-run MODEL THREADS RUNS [NAME=FILE.npy ...]`, for bench/onnx_peer.py: loads a
 * model (ONNX or MXNet JSON, by content), feeds the files, and prints one line
 * `onnx-run median_ms=M min_ms=M runs=N threads=T executor=E`: the median and fastest of RUNS
 * plain runs (no hooks) after WARMUP warm-up runs. Errors print `ds-bench: MESSAGE`, exit 1. */
static int bench_onnx_run(int argc, char **argv)
{
  if (argc < 3) {
    fprintf(stderr, "usage: ds-bench onnx-run MODEL THREADS RUNS [NAME=FILE.npy ...]\n");
    return 2;
  }
  int threads = (int)g_ascii_strtoll(argv[1], NULL, 10);
  int runs = (int)g_ascii_strtoll(argv[2], NULL, 10);
  if (threads < 1 || runs < 1) {
    fprintf(stderr, "ds-bench: onnx-run: THREADS and RUNS must be >= 1\n");
    return 2;
  }
  GError *error = NULL;
  g_autoptr(DsSession) session = ds_session_new(argv[0], &error);
  if (session == NULL)
    die(error);
  for (int i = 3; i < argc; i++) {
    g_auto(GStrv) kv = g_strsplit(argv[i], "=", 2);
    if (kv[0] == NULL || kv[1] == NULL) {
      fprintf(stderr, "ds-bench: onnx-run: expected NAME=FILE.npy, got '%s'\n", argv[i]);
      return 2;
    }
    if (!ds_session_feed_npy(session, kv[0], kv[1], &error))
      die(error);
  }
  if (!ds_session_prepare(session, FALSE, 0, ds_backend_find("cpu"), threads, &error))
    die(error);
  double *times = g_new(double, runs);
  for (int i = 0; i < WARMUP + runs; i++) {
    double t0 = now_ms();
    if (!ds_session_run(session, &error))
      die(error);
    if (i >= WARMUP)
      times[i - WARMUP] = now_ms() - t0;
  }
  double best = times[0];
  for (int i = 1; i < runs; i++)
    best = MIN(best, times[i]);
  printf("onnx-run median_ms=%.6f min_ms=%.6f runs=%d threads=%d executor=%s\n",
         median(times, runs), best, runs, threads, ds_session_get_executor_name(session));
  g_free(times);
  return 0;
}

/* The CUDA backend's section (ds-bench-gpu.c). */
void ds_bench_gpu(const char *resnet, const char *const *resnet_shapes, const char *bert,
                  const char *const *bert_shapes);

/* `ds-bench [SECTION]` runs one section only: latency, gemm, planner, sizes, symbolic,
 * dynamic, control, profiler, layout, canvas, cursor or gpu. `ds-bench onnx-run ...` times one
 * model for bench/onnx_peer.py (see bench_onnx_run). */
int main(int argc, char **argv)
{
  const char *only = argc > 1 ? argv[1] : NULL;
  if (only != NULL && strcmp(only, "onnx-run") == 0)
    return bench_onnx_run(argc - 2, argv + 2);
#define SECTION(name) (only == NULL || strcmp(only, name) == 0)
  const char *const resnet_shapes[] = {"data", "1,3,224,224", NULL};
  const char *const bert_shapes[] = {"data0", "1,384", "data1", "1,384", "data2", "1", NULL};

  printf("dynscope bench: medians after %d warm-up runs; ratios are measured side by side\n\n",
         WARMUP);
  g_autofree char *resnet = shared_model("gluoncv_resnet18_v1-symbol.json");
  if (SECTION("latency")) {
    printf("latency (random weights)          1 thread     2 threads  speedup\n");
    bench_latency("resnet18 1x3x224x224", "gluoncv_resnet18_v1-symbol.json", resnet_shapes, 20);
    bench_latency("bert 1x384", "gluonnlp_static_bert_qa-symbol.json", bert_shapes, 5);
  }

  if (SECTION("gemm")) {
    printf("\nthroughput against a raw cblas_sgemm of the same M, N, K (target >= 0.9)\n");
    for (int t = 1; t <= 2; t++) {
      openblas_set_num_threads(t);
      printf(" %d thread%s:\n", t, t == 1 ? "" : "s");
      bench_gemm_op("FullyConnected 512x1024 -> 1024", "FullyConnected",
                    "\"num_hidden\": \"1024\", \"no_bias\": \"True\"", 2, "512,1024", 512, 1024,
                    1024, t);
      bench_gemm_op("FullyConnected 64x768 -> 3072", "FullyConnected",
                    "\"num_hidden\": \"3072\", \"no_bias\": \"True\"", 2, "64,768", 64, 3072, 768,
                    t);
      bench_gemm_op("Convolution 3x3 64->64 @56x56", "Convolution",
                    "\"kernel\": \"(3, 3)\", \"pad\": \"(1, 1)\", \"num_filter\": \"64\", "
                    "\"no_bias\": \"True\"",
                    2, "1,64,56,56", 64, 56 * 56, 64 * 9, t);
      bench_gemm_op("Convolution 3x3 256->256 @14x14", "Convolution",
                    "\"kernel\": \"(3, 3)\", \"pad\": \"(1, 1)\", \"num_filter\": \"256\", "
                    "\"no_bias\": \"True\"",
                    2, "1,256,14,14", 256, 14 * 14, 256 * 9, t);
      bench_gemm_op("Convolution 1x1 512->2048 @7x7", "Convolution",
                    "\"kernel\": \"(1, 1)\", \"num_filter\": \"2048\", \"no_bias\": \"True\"", 2,
                    "1,512,7,7", 2048, 49, 512, t);
    }
  }

  if (SECTION("planner")) {
    printf("\nmemory planner: planned peak / max-live lower bound (target <= 1.1)\n");
    bench_planner("resnet18", "gluoncv_resnet18_v1-symbol.json", resnet_shapes);
    bench_planner("bert", "gluonnlp_static_bert_qa-symbol.json", bert_shapes);
  }

  if (SECTION("sizes")) {
    printf("\ncompile once, run many sizes: transformer 1xL, L = 16..800 step 16 (50 lengths),\n"
           "shape evaluation + planning only, medians of %d sweeps (target >= 5x)\n",
           SWEEP_ROUNDS);
    bench_many_sizes();
  }

  if (SECTION("symbolic")) {
    printf("\nsymbolic path (compiled once, run at another size, resized) against a static\n"
           "executor bound at this size, 1 thread (targets: speed >= 0.95, memory <= 1.05)\n");
    printf("  %-26s %11s %11s\n", "", "symbolic", "static");
    g_autofree char *transformer = transformer_model();
    static const char *const sym_seq[] = {"data0", "(1, s1)", "data1", "(1, s1)",
                                          "data2", "(1,)",    NULL};
    static const char *const seq128[] = {"data0", "1,128", "data1", "1,128", "data2", "1", NULL};
    static const char *const seq384[] = {"data0", "1,384", "data1", "1,384", "data2", "1", NULL};
    static const char *const sym_image[] = {"data", "(1, 3, s1, s1)", NULL};
    bench_symbolic_vs_static("transformer 1x128", transformer, sym_seq, "s1", 512, 128, seq128, 10);
    bench_symbolic_vs_static("transformer 1x384", transformer, sym_seq, "s1", 512, 384, seq384, 5);
    bench_symbolic_vs_static("resnet18 1x3x224x224", resnet, sym_image, "s1", 320, 224,
                             resnet_shapes, 10);
  }

  if (SECTION("dynamic")) {
    printf("\ndynamic executor (static-dynamic regions, pooled buffers) against the static\n"
           "executor, runs alternated, 1 thread (targets: speed >= 0.95, memory <= 1.1)\n");
    printf("  %-24s %12s %12s\n", "", "dynamic", "static");
    g_autofree char *bert = shared_model("gluonnlp_static_bert_qa-symbol.json");
    bench_dynamic_vs_static("resnet18 1x3x224x224", resnet, resnet_shapes, 20);
    bench_dynamic_vs_static("bert 1x384", bert, bert_shapes, 5);

    printf("\ncost of the dynamic path\n");
    bench_dynamic_overhead();
  }

  if (SECTION("control")) {
    printf(
        "\ncontrol flow: an LSTM (batch 16, input 128, hidden 256) through _foreach against the\n"
        "same LSTM unrolled into a static graph, runs alternated, 1 thread (target >= 0.9)\n");
    bench_foreach_lstm();
  }

  if (SECTION("profiler")) {
    printf("\nprofiler: a run recorded by the profiler (times, shapes, memory of every node)\n"
           "against a plain run of the same session, alternated, fastest of each, 1 thread;\n"
           "'in hooks' is the time the profiler measured inside its own hooks (target <= 3%%)\n");
    g_autofree char *bert_model = shared_model("gluonnlp_static_bert_qa-symbol.json");
    bench_profiler(resnet, resnet_shapes, bert_model, bert_shapes);
  }
  if (SECTION("canvas")) {
    g_autofree char *bert = shared_model("gluonnlp_static_bert_qa-symbol.json");
    bench_canvas(bert, bert_shapes);
    printf("\n");
  }
  if (SECTION("layout")) {
    printf("\nlayout: building the picture and laying it out with dot, as --render does\n"
           "(weights hidden over 200 op nodes; regions collapsed over %d drawn nodes; target:\n"
           "the 5,000-node graph under 2 s)\n",
           DS_VIZ_AUTO_COLLAPSE_NODES);
    g_autofree char *bert_model = shared_model("gluonnlp_static_bert_qa-symbol.json");
    bench_layout(resnet, resnet_shapes, bert_model, bert_shapes);
  }
  if (SECTION("cursor")) {
    printf("\ndebug cursor: a whole run through its hooks and worker thread (continue, no\n"
           "breakpoint) against a plain run of the same session, alternated, 1 thread\n"
           "(target: overhead <= 2%%)\n");
    bench_cursor(resnet, resnet_shapes);
  }
  if (SECTION("gpu")) {
    printf("\ngpu: the cuda backend against the CPU, cuBLAS and cudaMemcpy, and CUPTI's cost\n");
    g_autofree char *bert_model = shared_model("gluonnlp_static_bert_qa-symbol.json");
    ds_bench_gpu(resnet, resnet_shapes, bert_model, bert_shapes);
  }
  return 0;
}
