/* ds-bench.c: `make bench`. Every target is a ratio measured side by side in one run, so the
 * noise of a shared machine cancels out: ours against a raw BLAS call of the same size, one
 * thread against two, the planner against its lower bound.
 */
#include <cblas.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ds-backend.h"
#include "ds-config.h"
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

static DsSession *open_model(const char *path, const char *const *shapes, int threads)
{
  GError *error = NULL;
  DsSession *session = ds_session_new(path, &error);
  if (session == NULL)
    die(error);
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

static void bench_latency(const char *label, const char *file, const char *const *shapes,
                          int reps)
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
  printf("  %-12s peak %8.2f MiB  bound %8.2f MiB  no-reuse %8.2f MiB  ratio %.3f  %s\n",
         label, plan->arena_bytes / 1048576.0, plan->max_live_bytes / 1048576.0,
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
  float *a = g_new0(float, (gsize)m * k), *b = g_new0(float, (gsize)k * n),
        *c = g_new0(float, (gsize)m * n);
  for (gsize i = 0; i < (gsize)m * k; i++)
    a[i] = (float)(i % 7) * 0.1f;
  for (gsize i = 0; i < (gsize)k * n; i++)
    b[i] = (float)(i % 5) * 0.1f;
  double times[reps];
  for (int i = 0; i < WARMUP + reps; i++) {
    double t0 = now_ms();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c,
                n);
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

int main(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  const char *const resnet_shapes[] = {"data", "1,3,224,224", NULL};
  const char *const bert_shapes[] = {"data0", "1,384", "data1", "1,384", "data2", "1", NULL};

  printf("dynscope bench: medians after %d warm-up runs; ratios are measured side by side\n\n",
         WARMUP);
  printf("latency (random weights)          1 thread     2 threads  speedup\n");
  bench_latency("resnet18 1x3x224x224", "gluoncv_resnet18_v1-symbol.json", resnet_shapes, 20);
  bench_latency("bert 1x384", "gluonnlp_static_bert_qa-symbol.json", bert_shapes, 5);

  printf("\nthroughput against a raw cblas_sgemm of the same M, N, K (target >= 0.9)\n");
  for (int t = 1; t <= 2; t++) {
    openblas_set_num_threads(t);
    printf(" %d thread%s:\n", t, t == 1 ? "" : "s");
    bench_gemm_op("FullyConnected 512x1024 -> 1024", "FullyConnected",
                  "\"num_hidden\": \"1024\", \"no_bias\": \"True\"", 2, "512,1024", 512, 1024,
                  1024, t);
    bench_gemm_op("FullyConnected 64x768 -> 3072", "FullyConnected",
                  "\"num_hidden\": \"3072\", \"no_bias\": \"True\"", 2, "64,768", 64, 3072, 768, t);
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

  printf("\nmemory planner: planned peak / max-live lower bound (target <= 1.1)\n");
  bench_planner("resnet18", "gluoncv_resnet18_v1-symbol.json", resnet_shapes);
  bench_planner("bert", "gluonnlp_static_bert_qa-symbol.json", bert_shapes);
  return 0;
}
