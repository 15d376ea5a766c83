/* ds-bench-gpu.c: `ds-bench gpu`: the CUDA backend against the CPU and against raw CUDA.
 *
 * Like every section, each target is a ratio measured side by side in one run: a model placed
 * on the device against the same model on the CPU; our FullyConnected kernel against a raw
 * cublasSgemm of the same size; elementwise add against a device-to-device cudaMemcpy; a run
 * profiled with CUPTI against a plain run. Kernels are timed with CUDA events on the backend's
 * stream, whole runs with the host clock after the device is idle. A build without CUDA, or a
 * machine without a device, prints one line saying the section was skipped and why.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ds-backend.h"
#include "ds-error.h"
#include "ds-profiler.h"
#include "ds-report.h"
#include "ds-session.h"

void ds_bench_gpu(const char *resnet, const char *const *resnet_shapes, const char *bert,
                  const char *const *bert_shapes);

#ifndef DS_HAVE_CUDA

void ds_bench_gpu(const char *resnet, const char *const *resnet_shapes, const char *bert,
                  const char *const *bert_shapes)
{
  (void)resnet, (void)resnet_shapes, (void)bert, (void)bert_shapes;
  printf("  skipped: this build has no CUDA backend (nvcc was not found, or -Dcuda=disabled)\n");
}

#else

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "ds-cuda.h"
#include "ds-op.h"
#include "ds-ops-nn.h"

#define GPU_WARMUP 3
#define GPU_ROUNDS 5 /* ours and the reference alternate this many times */

static G_NORETURN void gpu_die(const char *what, const char *message)
{
  fprintf(stderr, "ds-bench gpu: %s: %s\n", what, message);
  exit(1);
}

static void check_cuda(cudaError_t err, const char *what)
{
  if (err != cudaSuccess)
    gpu_die(what, cudaGetErrorString(err));
}

static double wall_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int compare_ms(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median_ms(double *v, int n)
{
  qsort(v, (size_t)n, sizeof(double), compare_ms);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ---- whole models ---- */

/* A model with random inputs and weights (seed 1, the same on both sides), on `device` (NULL:
 * the CPU); what the device does not support runs on the CPU backend. */
static DsSession *open_on(const char *path, const char *const *shapes, const DsBackend *device,
                          int threads)
{
  GError *error = NULL;
  DsSession *session = ds_session_new(path, &error);
  if (session == NULL)
    gpu_die(path, error->message);
  for (int i = 0; shapes[i] != NULL; i += 2) {
    int64_t dims[DS_MAX_NDIM];
    g_auto(GStrv) parts = g_strsplit(shapes[i + 1], ",", -1);
    int n = 0;
    for (; parts[n] != NULL && n < DS_MAX_NDIM; n++)
      dims[n] = g_ascii_strtoll(parts[n], NULL, 10);
    DsShape shape = ds_shape_from_concrete(dims, n);
    if (!ds_session_declare_shape(session, shapes[i], &shape, &error))
      gpu_die(shapes[i], error->message);
  }
  ds_session_set_device(session, device);
  if (!ds_session_prepare(session, TRUE, 1, ds_backend_find("cpu"), threads, &error))
    gpu_die(path, error->message);
  return session;
}

/* One run, until the device is idle too (ms). */
static double timed_run(DsSession *session, const DsBackend *device)
{
  GError *error = NULL;
  double t0 = wall_ms();
  if (!ds_session_run(session, &error))
    gpu_die("run", error->message);
  if (device != NULL && !device->synchronize())
    gpu_die("run", "the device failed");
  return wall_ms() - t0;
}

static void bench_model(const char *label, const char *path, const char *const *shapes,
                        const DsBackend *device, int reps)
{
  int threads = (int)g_get_num_processors();
  g_autoptr(DsSession) gpu = open_on(path, shapes, device, threads);
  g_autoptr(DsSession) cpu = open_on(path, shapes, NULL, threads);
  double tg[reps], tc[reps];
  for (int i = 0; i < GPU_WARMUP + reps; i++) {
    double g = timed_run(gpu, device), c = timed_run(cpu, NULL);
    if (i >= GPU_WARMUP) {
      tg[i - GPU_WARMUP] = g;
      tc[i - GPU_WARMUP] = c;
    }
  }
  double ms_gpu = median_ms(tg, reps), ms_cpu = median_ms(tc, reps);
  printf("  %-24s cuda %9.3f ms  cpu (%d threads) %9.3f ms  speedup %7.2fx  (%s executor)\n", label,
         ms_gpu, threads, ms_cpu, ms_cpu / ms_gpu, ds_session_get_executor_name(gpu));
}

/* ---- kernels against raw CUDA ---- */

typedef struct {
  cudaEvent_t start, stop;
  cudaStream_t stream;
} Timer;

static Timer timer_new(void)
{
  Timer t = {.stream = ds_cuda_stream()};
  check_cuda(cudaEventCreate(&t.start), "cudaEventCreate");
  check_cuda(cudaEventCreate(&t.stop), "cudaEventCreate");
  return t;
}

static void timer_free(Timer *t)
{
  cudaEventDestroy(t->start);
  cudaEventDestroy(t->stop);
}

/* What is timed: one launch of something on the backend's stream. */
typedef gboolean (*LaunchFn)(gpointer data);

/* Median ms of `reps` launches after a warm-up, each between two events on the stream. */
static double time_launches(Timer *t, LaunchFn launch, gpointer data, int reps)
{
  double ms[reps];
  for (int i = 0; i < GPU_WARMUP + reps; i++) {
    check_cuda(cudaEventRecord(t->start, t->stream), "cudaEventRecord");
    if (!launch(data))
      gpu_die("launch", "failed");
    check_cuda(cudaEventRecord(t->stop, t->stream), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(t->stop), "cudaEventSynchronize");
    float elapsed = 0;
    check_cuda(cudaEventElapsedTime(&elapsed, t->start, t->stop), "cudaEventElapsedTime");
    if (i >= GPU_WARMUP)
      ms[i - GPU_WARMUP] = elapsed;
  }
  return median_ms(ms, reps);
}

static float *device_floats(size_t n)
{
  void *p = NULL;
  check_cuda(cudaMalloc(&p, n * sizeof(float)), "cudaMalloc");
  /* Small, finite values (0x3c3c3c3c is about 0.0115): the speed of sgemm and add does not
   * depend on them, but NaNs or denormals might. */
  check_cuda(cudaMemset(p, 0x3c, n * sizeof(float)), "cudaMemset");
  return p;
}

static DsTensor device_tensor(float *data, int ndim, const int64_t *shape)
{
  DsTensor t = {.dtype = DS_DTYPE_FLOAT32, .ndim = ndim, .data = data, .memory = DS_MEMORY_DEVICE};
  memcpy(t.shape, shape, sizeof(int64_t) * (size_t)ndim);
  return t;
}

/* One kernel call on device tensors, with the workspace it asks for. */
typedef struct {
  const DsKernel *kernel;
  DsKernelCtx ctx;
  DsTensor inputs[2], output;
} KernelCall;

static void kernel_call_init(KernelCall *call, const DsKernel *kernel, const void *param)
{
  call->kernel = kernel;
  call->ctx = (DsKernelCtx){.param = param,
                            .inputs = call->inputs,
                            .n_inputs = 2,
                            .outputs = &call->output,
                            .n_outputs = 1};
  size_t bytes = kernel->workspace_bytes != NULL
                     ? kernel->workspace_bytes(param, call->inputs, 2, &call->output, 1)
                     : 0;
  if (bytes > 0)
    check_cuda(cudaMalloc(&call->ctx.workspace, bytes), "cudaMalloc (workspace)");
}

static gboolean kernel_call_launch(gpointer data)
{
  KernelCall *call = data;
  return call->kernel->run(&call->ctx) == DS_STATUS_OK;
}

/* Ours and the reference alternated GPU_ROUNDS times; the medians of their medians. */
static void time_pair(Timer *t, KernelCall *ours, LaunchFn reference, gpointer data, int reps,
                      double *ms_ours, double *ms_reference)
{
  double a[GPU_ROUNDS], b[GPU_ROUNDS];
  for (int r = 0; r < GPU_ROUNDS; r++) {
    a[r] = time_launches(t, kernel_call_launch, ours, reps);
    b[r] = time_launches(t, reference, data, reps);
  }
  *ms_ours = median_ms(a, GPU_ROUNDS);
  *ms_reference = median_ms(b, GPU_ROUNDS);
}

/* ---- FullyConnected against cublasSgemm ---- */

typedef struct {
  KernelCall call;
  cublasHandle_t blas;
  int m, n, k;
  float *x, *w, *y;
} Gemm;

/* The same product as FullyConnected: y (m x n) = x (m x k) . w (n x k)^T, row-major, which is
 * y^T = w . x^T to column-major cuBLAS. */
static gboolean raw_sgemm(gpointer data)
{
  Gemm *g = data;
  const float one = 1.0f, zero = 0.0f;
  return ds_cuda_blas()->sgemm(g->blas, CUBLAS_OP_T, CUBLAS_OP_N, g->n, g->m, g->k, &one, g->w,
                               g->k, g->x, g->k, &zero, g->y, g->n) == CUBLAS_STATUS_SUCCESS;
}

static void bench_fc(const DsBackend *device, Timer *t, cublasHandle_t blas, int m, int k, int n,
                     int reps)
{
  const DsKernel *kernel = device->get_kernel(DS_OP_FULLY_CONNECTED);
  if (kernel == NULL) {
    printf("  FullyConnected: the cuda backend has no kernel\n");
    return;
  }
  DsFullyConnectedParam param = {.num_hidden = n, .no_bias = true, .flatten = true};
  Gemm g = {.blas = blas, .m = m, .n = n, .k = k};
  g.x = device_floats((size_t)m * k);
  g.w = device_floats((size_t)n * k);
  g.y = device_floats((size_t)m * n);
  g.call.inputs[0] = device_tensor(g.x, 2, (int64_t[]){m, k});
  g.call.inputs[1] = device_tensor(g.w, 2, (int64_t[]){n, k});
  g.call.output = device_tensor(g.y, 2, (int64_t[]){m, n});
  kernel_call_init(&g.call, kernel, &param);
  double ours, raw;
  time_pair(t, &g.call, raw_sgemm, &g, reps, &ours, &raw);
  double gflop = 2.0 * m * n * k / 1e9, ratio = raw / ours;
  g_autofree char *label = g_strdup_printf("FullyConnected %dx%d -> %d", m, k, n);
  printf("  %-34s %8.1f GFLOP/s  cublasSgemm %8.1f GFLOP/s  ratio %.3f%s\n", label,
         gflop / ours * 1e3, gflop / raw * 1e3, ratio, ratio >= 0.9 ? "" : "  (below 0.9)");
  cudaFree(g.call.ctx.workspace);
  cudaFree(g.x);
  cudaFree(g.w);
  cudaFree(g.y);
}

/* ---- elementwise add against cudaMemcpy ---- */

typedef struct {
  KernelCall call;
  float *a, *b, *c;
  size_t bytes;
  cudaStream_t stream;
} Add;

static gboolean raw_copy(gpointer data)
{
  Add *add = data;
  return cudaMemcpyAsync(add->c, add->a, add->bytes, cudaMemcpyDeviceToDevice, add->stream) ==
         cudaSuccess;
}

/* Bandwidth counts what each moves through memory: the add reads two arrays and writes one
 * (3 x bytes), the copy reads one and writes one (2 x bytes). */
static void bench_add(const DsBackend *device, Timer *t, size_t n, int reps)
{
  DsOpId op = DS_OP_ELEMWISE_ADD;
  const DsKernel *kernel = device->get_kernel(op);
  if (kernel == NULL)
    kernel = device->get_kernel(op = DS_OP_BROADCAST_ADD);
  if (kernel == NULL) {
    printf("  elementwise add: the cuda backend has no kernel\n");
    return;
  }
  g_autofree void *param = g_malloc0(MAX(ds_op_get(op)->param_size, 1));
  Add add = {.bytes = n * sizeof(float), .stream = t->stream};
  add.a = device_floats(n);
  add.b = device_floats(n);
  add.c = device_floats(n);
  int64_t shape[1] = {(int64_t)n};
  add.call.inputs[0] = device_tensor(add.a, 1, shape);
  add.call.inputs[1] = device_tensor(add.b, 1, shape);
  add.call.output = device_tensor(add.c, 1, shape);
  kernel_call_init(&add.call, kernel, param);
  double ours, copy;
  time_pair(t, &add.call, raw_copy, &add, reps, &ours, &copy);
  double bw_ours = 3.0 * (double)add.bytes / (ours / 1e3) / 1e9;
  double bw_copy = 2.0 * (double)add.bytes / (copy / 1e3) / 1e9;
  double ratio = bw_ours / bw_copy;
  g_autofree char *label = g_strdup_printf("%s %zuM floats", ds_op_id_name(op), n >> 20);
  printf("  %-34s %8.1f GB/s  cudaMemcpy DtoD %8.1f GB/s  ratio %.3f%s\n", label, bw_ours, bw_copy,
         ratio, ratio >= 0.8 ? "" : "  (below 0.8)");
  cudaFree(add.call.ctx.workspace);
  cudaFree(add.a);
  cudaFree(add.b);
  cudaFree(add.c);
}

/* ---- CUPTI's cost ---- */

/* A run profiled (hooks and CUPTI, the trace collected at its end) against a plain run of the
 * same session, alternated; medians. */
static void bench_cupti(const char *label, const char *path, const char *const *shapes,
                        const DsBackend *device, int reps)
{
  GError *error = NULL;
  g_autoptr(DsSession) session = open_on(path, shapes, device, (int)g_get_num_processors());
  g_autoptr(DsProfiler) profiler = ds_profiler_new(session);
  double plain[reps], profiled[reps];
  for (int i = 0; i < GPU_WARMUP + reps; i++) {
    double p = timed_run(session, device);
    double t0 = wall_ms();
    ds_session_set_hooks(session, ds_profiler_get_hooks(), profiler);
    ds_profiler_begin_run(profiler);
    if (!ds_session_run(session, &error))
      gpu_die("profiled run", error->message);
    ds_profiler_end_run(profiler); /* waits for the device, flushes CUPTI */
    ds_session_set_hooks(session, NULL, NULL);
    double r = wall_ms() - t0;
    if (i >= GPU_WARMUP) {
      plain[i - GPU_WARMUP] = p;
      profiled[i - GPU_WARMUP] = r;
    }
  }
  double ms_plain = median_ms(plain, reps), ms_profiled = median_ms(profiled, reps);
  double overhead = ms_profiled / ms_plain - 1.0;
  cJSON *json = ds_profiler_build_report(profiler, 1);
  DsReport *report = ds_report_from_json(json, "report", &error);
  if (report == NULL)
    gpu_die("report", error->message);
  if (report->run.has_gpu_trace) {
    double kernels = (double)report->run.gpu_trace.kernels;
    double unattributed = (double)report->run.gpu_trace.unattributed;
    printf("  %-24s plain %8.3f ms  profiled %8.3f ms  overhead %+6.2f%%%s  "
           "%.0f kernels/run, %.0f unattributed\n",
           label, ms_plain, ms_profiled, overhead * 100.0, overhead <= 0.05 ? "" : " (over 5%)",
           kernels / ds_profiler_get_n_runs(profiler), unattributed);
  } else {
    const char *why = report->run.gpu_unavailable;
    printf("  %-24s CUPTI did not start: %s\n", label, why != NULL ? why : "unknown");
  }
  ds_report_free(report);
  cJSON_Delete(json);
}

/* ---- the section ---- */

static const DsBackend *usable_device(void)
{
  const DsBackend *device = ds_backend_find("cuda");
  if (device == NULL) {
    printf("  skipped: this build has no cuda backend\n");
    return NULL;
  }
  const char *reason = device->unavailable();
  if (reason != NULL) {
    printf("  skipped: %s\n", reason);
    return NULL;
  }
  return device;
}

void ds_bench_gpu(const char *resnet, const char *const *resnet_shapes, const char *bert,
                  const char *const *bert_shapes)
{
  const DsBackend *device = usable_device();
  if (device == NULL)
    return;
  struct cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
    printf("  device 0: %s\n", prop.name);

  printf(" latency on the device against the CPU, runs alternated, until the device is idle\n");
  bench_model("resnet18 1x3x224x224", resnet, resnet_shapes, device, 20);
  bench_model("bert 1x384", bert, bert_shapes, device, 10);

  Timer t = timer_new();
  /* The backend loaded cuBLAS when it found the device; the reference calls the same library. */
  cublasHandle_t blas = NULL;
  if (ds_cuda_blas()->create(&blas) != CUBLAS_STATUS_SUCCESS)
    gpu_die("cublasCreate", "failed");
  ds_cuda_blas()->set_stream(blas, t.stream);
  printf(" FullyConnected against a raw cublasSgemm of the same M, N, K, CUDA events "
         "(target >= 0.9)\n");
  bench_fc(device, &t, blas, 4096, 4096, 4096, 10);
  bench_fc(device, &t, blas, 512, 1024, 1024, 50);
  bench_fc(device, &t, blas, 64, 768, 3072, 50);
  printf(" elementwise bandwidth against a device-to-device cudaMemcpy, bytes read + written, "
         "CUDA events (target >= 0.8)\n");
  bench_add(device, &t, (size_t)64 << 20, 20);
  ds_cuda_blas()->destroy(blas);
  timer_free(&t);

  printf(" CUPTI: a run profiled (hooks, kernels, copies) against a plain run, alternated "
         "(target <= 5%%)\n");
  bench_cupti("resnet18 1x3x224x224", resnet, resnet_shapes, device, 20);
}

#endif
