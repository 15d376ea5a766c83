/* test-cuda-nn.c: the CUDA kernels of the nn family (ds-cuda-nn.c: the GEMM ops, Convolution,
 * Pooling, Embedding) and of data movement (ds-cuda-tensor.c: views, transposes, joins,
 * slices, broadcasts, take, boolean_mask, nonzero) against the CPU kernels on random inputs.
 *
 * The comparing cases need a device and skip without one (CI's situation). Sums (GEMM,
 * convolution, average pooling) compare within 1e-4; data movement and max pooling exactly.
 * Two cases need no device: coverage (every op the two register functions give a kernel must
 * have a case in `cases`, so a new kernel cannot land untested) and placement (the backend's
 * supports() refuses what the kernels do not handle). */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "ds-backend.h"
#include "ds-cuda.h"
#include "ds-test-cuda.h"

#define SUM_TOL 1e-4 /* GEMMs, convolutions, averages: float32 sums in another order */

/* ---- helpers ------------------------------------------------------------------------------ */

/* A float32 tensor of uniform values in [-1, 1). */
static DsTensor rt(const char *shape)
{
  return rtensor(shape, -1.0, 1.0);
}

/* A tensor of dtype t with whole numbers drawn from [lo, hi]. */
static DsTensor int_tensor(DsDType t, const char *shape, int lo, int hi)
{
  DsTensor x = tensor_new(t, shape);
  for (int64_t i = 0; i < ds_tensor_numel(&x); i++)
    set(&x, i, g_rand_int_range(rng, lo, hi + 1));
  return x;
}

/* A tensor of dtype t with the given values. */
static DsTensor values_tensor(DsDType t, const char *shape, const double *v)
{
  DsTensor x = tensor_new(t, shape);
  for (int64_t i = 0; i < ds_tensor_numel(&x); i++)
    set(&x, i, v[i]);
  return x;
}

/* "op (2, 3) (3, 4)": names a comparison in failure messages. */
static char *describe(const char *op, const DsTensor *in, int n_in)
{
  GString *s = g_string_new(op);
  for (int i = 0; i < n_in; i++) {
    g_string_append(s, " (");
    for (int d = 0; d < in[i].ndim; d++)
      g_string_append_printf(s, "%s%" G_GINT64_FORMAT, d > 0 ? ", " : "", in[i].shape[d]);
    g_string_append(s, in[i].ndim == 1 ? ",)" : ")");
  }
  return g_string_free(s, FALSE);
}

/* Builds node `op` with the attributes in `args`, infers its outputs' dtypes and shapes from
 * the inputs (an output whose size depends on the data gets ndim -1) and checks that the CUDA
 * backend takes the node. Returns the node, owned by `g`. */
static DsNode *prepare(DsGraph *g, const char *op, const DsTensor *in, int n_in, va_list args,
                       DsTensor *out_like, int *n_out)
{
  GError *error = NULL;
  DsNode *n = node_v(g, op, &error, args);
  g_assert_no_error(error);
  g_assert_cmpint(n->n_inputs, ==, n_in);
  g_assert_cmpint(n->n_outputs, <=, 8);
  DsShape in_shape[16], out_shape[8];
  DsDType in_type[16], out_type[8];
  for (int i = 0; i < n_in; i++) {
    in_shape[i] = (DsShape){.ndim = in[i].ndim};
    for (int d = 0; d < in[i].ndim; d++)
      in_shape[i].dims[d] = ds_dim(in[i].shape[d]);
    in_type[i] = in[i].dtype;
  }
  *n_out = (int)n->n_outputs;
  for (int o = 0; o < *n_out; o++) {
    out_shape[o] = DS_SHAPE_UNKNOWN;
    out_type[o] = DS_DTYPE_UNKNOWN;
  }
  g_assert_true(infer_err(n, in_shape, out_shape, &error));
  g_assert_no_error(error);
  /* Ops without a dtype rule give every output their data's dtype (as the engine does). */
  if (n->op->infer_type != NULL)
    g_assert_true(n->op->infer_type(n, n->param, in_type, out_type, &error));
  else
    for (int o = 0; o < *n_out; o++)
      out_type[o] = in_type[0];
  g_assert_no_error(error);
  for (int o = 0; o < *n_out; o++) {
    gboolean concrete = out_shape[o].ndim >= 0;
    for (int d = 0; d < out_shape[o].ndim; d++)
      concrete = concrete && ds_dim_is_const(out_shape[o].dims[d]);
    out_like[o] = (DsTensor){.dtype = out_type[o], .ndim = concrete ? out_shape[o].ndim : -1};
    for (int d = 0; concrete && d < out_shape[o].ndim; d++)
      out_like[o].shape[d] = out_shape[o].dims[d].value;
  }
  const DsBackend *cuda = ds_backend_find("cuda");
  g_assert_true(cuda->supports(n->op->id, n->param, in_type, n_in, out_type, *n_out));
  return n;
}

/* Host buffers for the CPU kernel's dynamic outputs (freed by the caller). */
static DsStatus host_alloc_output(void *alloc_data, int index, DsTensor *output)
{
  (void)alloc_data, (void)index;
  output->data = g_malloc0(MAX(ds_tensor_nbytes(output), 1));
  output->memory = DS_MEMORY_HOST;
  return DS_STATUS_OK;
}

/* compare_backends for ops whose outputs the kernels size themselves: run_kernel gives the
 * CPU kernel no output allocator, so the CPU side runs here. Element bytes must match. */
static void compare_dynamic(const char *what, const DsNode *n, DsTensor *in, int n_in,
                            const DsTensor *out_like, int n_out)
{
  DsTensor cpu_out[8], gpu_out[8];
  for (int o = 0; o < n_out; o++)
    cpu_out[o] = gpu_out[o] = (DsTensor){.dtype = out_like[o].dtype, .ndim = -1};
  const DsKernel *k = ds_cpu_backend_get()->get_kernel(n->op->id);
  size_t ws = k->workspace_bytes != NULL
                  ? k->workspace_bytes(n->param, in, n_in, cpu_out, n_out)
                  : 0;
  void *workspace = ws > 0 ? g_malloc(ws) : NULL;
  DsKernelCtx ctx = {n->param, in, n_in, cpu_out, n_out, workspace, pool, host_alloc_output,
                     NULL};
  g_assert_cmpint(k->run(&ctx), ==, DS_STATUS_OK);
  g_free(workspace);
  g_assert_cmpint(run_cuda_kernel(n->op->id, n->param, in, n_in, gpu_out, n_out), ==,
                  DS_STATUS_OK);
  for (int o = 0; o < n_out; o++) {
    g_test_message("%s: output %d", what, o);
    g_assert_cmpint(gpu_out[o].ndim, ==, cpu_out[o].ndim);
    for (int d = 0; d < cpu_out[o].ndim; d++)
      g_assert_cmpint(gpu_out[o].shape[d], ==, cpu_out[o].shape[d]);
    g_assert_cmpint(gpu_out[o].dtype, ==, cpu_out[o].dtype);
    for (int64_t i = 0; i < ds_tensor_numel(&cpu_out[o]); i++)
      g_assert_cmpuint(bits(&gpu_out[o], i), ==, bits(&cpu_out[o], i));
  }
  tensors_free(cpu_out, n_out);
  tensors_free(gpu_out, n_out);
}

/* Compares the CUDA kernel of `op` (attributes: key, value pairs ending in NULL) with the CPU
 * kernel on inputs `in`, which it frees, within atol = rtol = tol. */
static void compare_op(const char *op, DsTensor *in, int n_in, double tol, ...)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsTensor out_like[8];
  int n_out;
  va_list args;
  va_start(args, tol);
  DsNode *n = prepare(g, op, in, n_in, args, out_like, &n_out);
  va_end(args);
  g_autofree char *what = describe(op, in, n_in);
  gboolean dynamic = FALSE;
  for (int o = 0; o < n_out; o++)
    dynamic = dynamic || out_like[o].ndim < 0;
  if (dynamic)
    compare_dynamic(what, n, in, n_in, out_like, n_out);
  else
    compare_backends(what, n->op->id, n->param, in, n_in, out_like, n_out, tol, tol);
  tensors_free(in, n_in);
}

/* Both kernels of `op` must refuse inputs `in` (freed) with `want`. */
static void expect_status(DsStatus want, const char *op, DsTensor *in, int n_in, ...)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsTensor out_like[8], cpu_out[8], gpu_out[8];
  int n_out;
  va_list args;
  va_start(args, n_in);
  DsNode *n = prepare(g, op, in, n_in, args, out_like, &n_out);
  va_end(args);
  for (int o = 0; o < n_out; o++) {
    g_assert_cmpint(out_like[o].ndim, >=, 0);
    cpu_out[o] = tensor_dims(out_like[o].dtype, out_like[o].ndim, out_like[o].shape);
    gpu_out[o] = tensor_dims(out_like[o].dtype, out_like[o].ndim, out_like[o].shape);
  }
  g_assert_cmpint(run_kernel(n->op->id, n->param, in, n_in, cpu_out, n_out), ==, want);
  g_assert_cmpint(run_cuda_kernel(n->op->id, n->param, in, n_in, gpu_out, n_out), ==, want);
  tensors_free(cpu_out, n_out);
  tensors_free(gpu_out, n_out);
  tensors_free(in, n_in);
}

/* An inline array of input tensors and its length, for compare_op's (in, n_in). */
#define IN(...)                                                                                    \
  ((DsTensor[]){__VA_ARGS__}), (int)(sizeof((DsTensor[]){__VA_ARGS__}) / sizeof(DsTensor))

/* ---- GEMM ops ------------------------------------------------------------------------------ */

static void test_fully_connected(void)
{
  if (!cuda_ready())
    return;
  compare_op("FullyConnected", IN(rt("(4, 3, 5, 2)"), rt("(10, 30)"), rt("(10,)")), SUM_TOL,
             "num_hidden", "10", NULL);
  compare_op("FullyConnected", IN(rt("(1, 64)"), rt("(33, 64)")), SUM_TOL, "num_hidden", "33",
             "no_bias", "True", NULL);
  compare_op("FullyConnected", IN(rt("(2, 5, 16)"), rt("(7, 16)"), rt("(7,)")), SUM_TOL,
             "num_hidden", "7", "flatten", "False", NULL);
  compare_op("FullyConnected", IN(rt("(3, 1, 16)"), rt("(7, 16)")), SUM_TOL, "num_hidden", "7",
             "flatten", "False", "no_bias", "True", NULL);
  compare_op("FullyConnected", IN(rt("(300, 40)"), rt("(200, 40)"), rt("(200,)")), SUM_TOL,
             "num_hidden", "200", NULL);
}

static void test_dot(void)
{
  if (!cuda_ready())
    return;
  compare_op("dot", IN(rt("(5, 7)"), rt("(7, 3)")), SUM_TOL, NULL);
  compare_op("dot", IN(rt("(7, 5)"), rt("(7, 3)")), SUM_TOL, "transpose_a", "True", NULL);
  compare_op("dot", IN(rt("(5, 7)"), rt("(3, 7)")), SUM_TOL, "transpose_b", "True", NULL);
  compare_op("dot", IN(rt("(7, 5)"), rt("(3, 7)")), SUM_TOL, "transpose_a", "True",
             "transpose_b", "True", NULL);
  compare_op("dot", IN(rt("(2, 3, 4)"), rt("(4, 5, 6)")), SUM_TOL, NULL);
  compare_op("dot", IN(rt("(4, 2, 3)"), rt("(5, 6, 4)")), SUM_TOL, "transpose_a", "True",
             "transpose_b", "True", NULL);
  compare_op("dot", IN(rt("(9,)"), rt("(9,)")), SUM_TOL, NULL);
  DsTensor a = tensor_new(DS_DTYPE_FLOAT64, "(6, 9)"), b = tensor_new(DS_DTYPE_FLOAT64, "(9, 4)");
  fill_random(&a, -1, 1);
  fill_random(&b, -1, 1);
  compare_op("dot", IN(a, b), 1e-12, NULL);
}

static void test_batch_dot(void)
{
  if (!cuda_ready())
    return;
  compare_op("batch_dot", IN(rt("(3, 5, 8)"), rt("(3, 8, 4)")), SUM_TOL, NULL);
  compare_op("batch_dot", IN(rt("(3, 8, 5)"), rt("(3, 8, 4)")), SUM_TOL, "transpose_a", "True",
             NULL);
  compare_op("batch_dot", IN(rt("(3, 5, 8)"), rt("(3, 4, 8)")), SUM_TOL, "transpose_b", "True",
             NULL);
  compare_op("batch_dot", IN(rt("(3, 8, 5)"), rt("(3, 4, 8)")), SUM_TOL, "transpose_a", "True",
             "transpose_b", "True", NULL);
  compare_op("batch_dot", IN(rt("(2, 3, 5, 8)"), rt("(2, 3, 4, 8)")), SUM_TOL, "transpose_b",
             "True", NULL);
}

static void test_matmul(void)
{
  if (!cuda_ready())
    return;
  compare_op("_npi_matmul", IN(rt("(2, 3, 4, 5)"), rt("(5, 6)")), SUM_TOL, NULL); /* one GEMM */
  compare_op("_npi_matmul", IN(rt("(2, 3, 4, 5)"), rt("(2, 3, 5, 6)")), SUM_TOL, NULL);
  compare_op("_npi_matmul", IN(rt("(4, 5)"), rt("(2, 3, 5, 6)")), SUM_TOL, NULL);
  compare_op("_npi_matmul", IN(rt("(2, 1, 4, 5)"), rt("(3, 5, 6)")), SUM_TOL, NULL);
  compare_op("_npi_matmul", IN(rt("(3, 1, 4, 5)"), rt("(1, 2, 5, 6)")), SUM_TOL, NULL);
  compare_op("_npi_matmul", IN(rt("(2, 3, 2, 4, 5)"), rt("(3, 1, 5, 6)")), SUM_TOL, NULL);
  compare_op("_npi_matmul", IN(rt("(5,)"), rt("(2, 5, 6)")), SUM_TOL, NULL);
  compare_op("_npi_matmul", IN(rt("(2, 3, 4, 5)"), rt("(5,)")), SUM_TOL, NULL);
  compare_op("_npi_matmul", IN(rt("(7,)"), rt("(7,)")), SUM_TOL, NULL);
}

/* ---- Convolution, Pooling ------------------------------------------------------------------ */

static void test_convolution(void)
{
  if (!cuda_ready())
    return;
  /* 1-D with stride and padding. */
  compare_op("Convolution", IN(rt("(2, 4, 20)"), rt("(6, 4, 3)"), rt("(6,)")), SUM_TOL, "kernel",
             "(3,)", "stride", "(2,)", "pad", "(1,)", "num_filter", "6", NULL);
  /* 2-D with stride, padding, dilation and two groups (batched over the images). */
  compare_op("Convolution", IN(rt("(3, 4, 9, 11)"), rt("(6, 2, 3, 3)"), rt("(6,)")), SUM_TOL,
             "kernel", "(3, 3)", "stride", "(2, 1)", "pad", "(1, 1)", "dilate", "(2, 1)",
             "num_group", "2", "num_filter", "6", NULL);
  /* 1x1, stride 1, no padding: the input is the GEMM operand. */
  compare_op("Convolution", IN(rt("(2, 8, 5, 5)"), rt("(4, 8, 1, 1)")), SUM_TOL, "kernel",
             "(1, 1)", "num_filter", "4", "no_bias", "True", NULL);
  /* Depthwise: more groups than images, batched over the groups. */
  compare_op("Convolution", IN(rt("(1, 4, 8, 8)"), rt("(8, 1, 3, 3)"), rt("(8,)")), SUM_TOL,
             "kernel", "(3, 3)", "pad", "(1, 1)", "num_group", "4", "num_filter", "8", NULL);
  /* 3-D. */
  compare_op("Convolution", IN(rt("(2, 2, 4, 5, 6)"), rt("(3, 2, 2, 3, 3)"), rt("(3,)")),
             SUM_TOL, "kernel", "(2, 3, 3)", "pad", "(1, 1, 1)", "stride", "(1, 2, 1)",
             "num_filter", "3", NULL);
  /* A wider layer, so the GEMMs are not trivially small. */
  compare_op("Convolution", IN(rt("(2, 16, 14, 14)"), rt("(32, 16, 3, 3)"), rt("(32,)")),
             SUM_TOL, "kernel", "(3, 3)", "pad", "(1, 1)", "num_filter", "32", NULL);
}

static void test_pooling(void)
{
  if (!cuda_ready())
    return;
  compare_op("Pooling", IN(rt("(2, 3, 9, 9)")), 0.0, "kernel", "(3, 3)", "stride", "(2, 2)",
             "pad", "(1, 1)", "pool_type", "max", NULL);
  compare_op("Pooling", IN(rt("(2, 3, 9, 9)")), SUM_TOL, "kernel", "(3, 3)", "stride", "(2, 2)",
             "pad", "(1, 1)", "pool_type", "avg", NULL);
  compare_op("Pooling", IN(rt("(2, 3, 9, 9)")), SUM_TOL, "kernel", "(3, 3)", "stride", "(2, 2)",
             "pad", "(1, 1)", "pool_type", "avg", "count_include_pad", "False", NULL);
  compare_op("Pooling", IN(rt("(1, 2, 8, 8)")), SUM_TOL, "kernel", "(3, 3)", "stride", "(2, 2)",
             "pool_type", "avg", "pooling_convention", "full", NULL);
  compare_op("Pooling", IN(rt("(1, 2, 8, 8)")), 0.0, "kernel", "(3, 3)", "stride", "(2, 2)",
             "pool_type", "max", "pooling_convention", "full", NULL);
  compare_op("Pooling", IN(rt("(2, 3, 12)")), 0.0, "kernel", "(3,)", "stride", "(2,)",
             "pool_type", "max", NULL);
  compare_op("Pooling", IN(rt("(2, 3, 5, 6)")), SUM_TOL, "kernel", "(2, 2)", "pool_type", "sum",
             NULL);
  compare_op("Pooling", IN(rt("(1, 2, 4, 6, 6)")), SUM_TOL, "kernel", "(2, 3, 3)", "stride",
             "(2, 2, 2)", "pool_type", "avg", NULL);
  compare_op("Pooling", IN(rt("(4, 8, 7, 7)")), 0.0, "global_pool", "True", "pool_type", "max",
             NULL);
  compare_op("Pooling", IN(rt("(4, 8, 7, 7)")), SUM_TOL, "global_pool", "True", "pool_type",
             "avg", NULL);
  compare_op("Pooling", IN(rt("(2, 3, 50)")), SUM_TOL, "global_pool", "True", "pool_type", "sum",
             NULL);
}

/* ---- Embedding, take ------------------------------------------------------------------------ */

static void test_embedding(void)
{
  if (!cuda_ready())
    return;
  /* Indices truncate and clip into [0, input_dim); NaN reads row 0. */
  const double idx[] = {0, 3, 9, 9.7, 10, 25, -1, -0.5, 2.9, NAN, 5, 1};
  compare_op("Embedding", IN(values_tensor(DS_DTYPE_FLOAT32, "(3, 4)", idx), rt("(10, 6)")), 0.0,
             "input_dim", "10", "output_dim", "6", NULL);
  compare_op("Embedding", IN(int_tensor(DS_DTYPE_INT64, "(3, 4)", -2, 12), rt("(10, 5)")), 0.0,
             "input_dim", "10", "output_dim", "5", NULL);
  compare_op("Embedding", IN(int_tensor(DS_DTYPE_INT32, "(7,)", 0, 9), rt("(10, 8)")), 0.0,
             "input_dim", "10", "output_dim", "8", NULL);
}

static void test_take(void)
{
  if (!cuda_ready())
    return;
  compare_op("take", IN(rt("(5, 4, 3)"), int_tensor(DS_DTYPE_INT64, "(2, 3)", 0, 4)), 0.0, NULL);
  compare_op("take", IN(rt("(5, 4, 3)"), int_tensor(DS_DTYPE_INT64, "(2, 3)", -9, 9)), 0.0,
             "axis", "1", "mode", "wrap", NULL);
  const double fidx[] = {-2.5, 0.7, 2.2, 7};
  compare_op("take", IN(rt("(5, 4, 3)"), values_tensor(DS_DTYPE_FLOAT32, "(4,)", fidx)), 0.0,
             "axis", "-1", "mode", "clip", NULL);
  compare_op("take", IN(int_tensor(DS_DTYPE_INT8, "(6, 5)", -100, 100),
                        int_tensor(DS_DTYPE_INT32, "(3,)", 0, 5)),
             0.0, "mode", "raise", NULL);
  /* An index past the axis in raise mode fails on both backends. */
  const double bad[] = {1, 5, 0};
  expect_status(DS_STATUS_OUT_OF_RANGE, "take",
                IN(rt("(5, 3)"), values_tensor(DS_DTYPE_INT64, "(3,)", bad)), "mode", "raise",
                NULL);
}

/* ---- data movement ------------------------------------------------------------------------- */

static void test_views(void)
{
  if (!cuda_ready())
    return;
  compare_op("Reshape", IN(rt("(2, 3, 4)")), 0.0, "shape", "(-1, 4)", NULL);
  compare_op("Flatten", IN(rt("(2, 3, 4)")), 0.0, NULL);
  compare_op("expand_dims", IN(int_tensor(DS_DTYPE_INT64, "(2, 3)", -50, 50)), 0.0, "axis", "1",
             NULL);
  compare_op("squeeze", IN(rt("(1, 3, 1, 4)")), 0.0, NULL);
  compare_op("reshape_like", IN(rt("(2, 6)"), rt("(3, 4)")), 0.0, NULL);
  compare_op("_np_reshape", IN(rt("(2, 3, 4)")), 0.0, "newshape", "(4, -1)", NULL);
  compare_op("_np_squeeze", IN(int_tensor(DS_DTYPE_UINT8, "(1, 5, 1)", 0, 255)), 0.0, NULL);
}

static void test_transpose(void)
{
  if (!cuda_ready())
    return;
  compare_op("transpose", IN(rt("(2, 3, 4)")), 0.0, NULL);
  compare_op("transpose", IN(rt("(5, 7)")), 0.0, "axes", "(1, 0)", NULL);
  compare_op("transpose", IN(rt("(2, 3, 4, 5)")), 0.0, "axes", "(0, 2, 1, 3)", NULL);
  compare_op("transpose", IN(rt("(2, 3, 4)")), 0.0, "axes", "(2, 0, 1)", NULL);
  /* Tiled: both sides of the 2-D transposes span several tiles. */
  compare_op("transpose", IN(rt("(64, 48)")), 0.0, "axes", "(1, 0)", NULL);
  compare_op("transpose", IN(rt("(3, 40, 50)")), 0.0, "axes", "(0, 2, 1)", NULL);
  compare_op("transpose", IN(int_tensor(DS_DTYPE_INT8, "(17, 33)", -100, 100)), 0.0, NULL);
  DsTensor d = tensor_new(DS_DTYPE_FLOAT64, "(20, 3, 36)");
  fill_random(&d, -1, 1);
  compare_op("transpose", IN(d), 0.0, "axes", "(2, 1, 0)", NULL);
  compare_op("SwapAxis", IN(rt("(2, 3, 4)")), 0.0, "dim1", "0", "dim2", "2", NULL);
}

static void test_concat(void)
{
  if (!cuda_ready())
    return;
  compare_op("Concat", IN(rt("(2, 3, 4)"), rt("(1, 3, 4)")), 0.0, "dim", "0", "num_args", "2",
             NULL);
  compare_op("Concat", IN(rt("(2, 3, 4)"), rt("(2, 5, 4)")), 0.0, "dim", "1", "num_args", "2",
             NULL);
  compare_op("Concat", IN(rt("(2, 3, 4)"), rt("(2, 3, 1)"), rt("(2, 3, 2)")), 0.0, "dim", "2",
             "num_args", "3", NULL);
  compare_op("Concat",
             IN(int_tensor(DS_DTYPE_INT32, "(3, 2)", -9, 9),
                int_tensor(DS_DTYPE_INT32, "(3, 3)", -9, 9)),
             0.0, "dim", "-1", "num_args", "2", NULL);
}

static void test_stack(void)
{
  if (!cuda_ready())
    return;
  compare_op("stack", IN(rt("(2, 3)"), rt("(2, 3)")), 0.0, "axis", "0", "num_args", "2", NULL);
  compare_op("stack", IN(rt("(2, 3)"), rt("(2, 3)"), rt("(2, 3)")), 0.0, "axis", "2", "num_args",
             "3", NULL);
}

static void test_slice_channel(void)
{
  if (!cuda_ready())
    return;
  compare_op("SliceChannel", IN(rt("(2, 6, 4)")), 0.0, "num_outputs", "3", "axis", "1", NULL);
  compare_op("SliceChannel", IN(rt("(5, 4)")), 0.0, "num_outputs", "4", "axis", "-1",
             "squeeze_axis", "True", NULL);
}

static void test_slice(void)
{
  if (!cuda_ready())
    return;
  compare_op("slice", IN(rt("(10, 4)")), 0.0, "begin", "(1, 0)", "end", "(9, 3)", NULL);
  compare_op("slice", IN(rt("(10, 6, 5)")), 0.0, "begin", "(1, None, 4)", "end", "(9, None, 0)",
             "step", "(3, 2, -1)", NULL);
  compare_op("slice", IN(rt("(10, 6)")), 0.0, "begin", "(None, -1)", "end", "(None, None)",
             "step", "(-2, -3)", NULL);
  compare_op("slice", IN(int_tensor(DS_DTYPE_INT8, "(7, 9)", -9, 9)), 0.0, "begin",
             "(2,)", "end", "(6,)", NULL);
  compare_op("slice_axis", IN(rt("(4, 5, 3)")), 0.0, "axis", "1", "begin", "1", "end", "None",
             NULL);
  compare_op("slice_axis", IN(rt("(4, 5, 3)")), 0.0, "axis", "-1", "begin", "-2", "end", "3",
             NULL);
}

static void test_broadcast(void)
{
  if (!cuda_ready())
    return;
  compare_op("broadcast_to", IN(rt("(1, 3)")), 0.0, "shape", "(4, 0)", NULL);
  compare_op("broadcast_to", IN(rt("(2, 1, 4)")), 0.0, "shape", "(2, 5, 4)", NULL);
  compare_op("broadcast_axis", IN(rt("(2, 1, 3)")), 0.0, "axis", "1", "size", "4", NULL);
  compare_op("broadcast_like", IN(rt("(1, 3)"), rt("(5, 3)")), 0.0, NULL);
  compare_op("_contrib_expand", IN(rt("(3, 1)")), 0.0, "shape", "(2, 1, 4)", NULL);
}

static void test_tile_repeat_reverse(void)
{
  if (!cuda_ready())
    return;
  compare_op("tile", IN(rt("(2, 3)")), 0.0, "reps", "(2, 3)", NULL);
  compare_op("tile", IN(rt("(2, 3)")), 0.0, "reps", "(2, 1, 2)", NULL);
  compare_op("repeat", IN(rt("(2, 3)")), 0.0, "repeats", "2", NULL);
  compare_op("repeat", IN(rt("(2, 3, 2)")), 0.0, "repeats", "3", "axis", "1", NULL);
  compare_op("reverse", IN(rt("(4, 3, 5)")), 0.0, "axis", "(0, 2)", NULL);
  compare_op("reverse", IN(rt("(4, 3)")), 0.0, "axis", "1", NULL);
}

/* ---- dynamic shapes ----------------------------------------------------------------------- */

/* A 1-D mask of n entries: all false, all true, or random. */
static DsTensor mask_tensor(DsDType t, int64_t n, int mode)
{
  int64_t dims[1] = {n};
  DsTensor m = tensor_dims(t, 1, dims);
  for (int64_t i = 0; i < n; i++)
    set(&m, i, mode == 0 ? 0 : mode == 1 ? 1 : g_rand_int_range(rng, 0, 2));
  return m;
}

static void test_boolean_mask(void)
{
  if (!cuda_ready())
    return;
  for (int mode = 0; mode < 3; mode++)
    compare_op("_contrib_boolean_mask", IN(rt("(6, 3)"), mask_tensor(DS_DTYPE_BOOL, 6, mode)),
               0.0, NULL);
  /* Float masks by their value: -0 is false, NaN true. */
  const double m[] = {0, 1, -0.0, NAN, 2.5};
  compare_op("_contrib_boolean_mask",
             IN(rt("(2, 5, 3)"), values_tensor(DS_DTYPE_FLOAT32, "(5,)", m)), 0.0, "axis", "1",
             NULL);
  /* Several tiles of the device's scan. */
  compare_op("_contrib_boolean_mask",
             IN(int_tensor(DS_DTYPE_INT64, "(3000, 2)", -99, 99),
                mask_tensor(DS_DTYPE_UINT8, 3000, 2)),
             0.0, NULL);
  compare_op("_contrib_boolean_mask", IN(rt("(4, 2500)"), mask_tensor(DS_DTYPE_INT32, 2500, 2)),
             0.0, "axis", "-1", NULL);
}

static void test_nonzero(void)
{
  if (!cuda_ready())
    return;
  compare_op("_npx_nonzero", IN(int_tensor(DS_DTYPE_FLOAT32, "(3, 4, 5)", -1, 1)), 0.0, NULL);
  compare_op("_npx_nonzero", IN(tensor_new(DS_DTYPE_FLOAT32, "(3, 4)")), 0.0, NULL);
  compare_op("_npx_nonzero", IN(int_tensor(DS_DTYPE_INT32, "(50, 60)", 0, 2)), 0.0, NULL);
}

/* Empty tensors run without launching anything and agree with the CPU. */
static void test_empty(void)
{
  if (!cuda_ready())
    return;
  compare_op("FullyConnected", IN(rt("(0, 4)"), rt("(3, 4)"), rt("(3,)")), 0.0, "num_hidden",
             "3", NULL);
  compare_op("dot", IN(rt("(2, 0)"), rt("(0, 3)")), 0.0, NULL); /* zeros: a sum over nothing */
  compare_op("Convolution", IN(rt("(0, 2, 5, 5)"), rt("(3, 2, 3, 3)"), rt("(3,)")), 0.0,
             "kernel", "(3, 3)", "num_filter", "3", NULL);
  compare_op("transpose", IN(rt("(0, 3)")), 0.0, NULL);
  compare_op("slice", IN(rt("(5, 4)")), 0.0, "begin", "(3,)", "end", "(3,)", NULL);
  compare_op("Concat", IN(rt("(2, 0)"), rt("(2, 3)")), 0.0, "dim", "1", "num_args", "2", NULL);
  compare_op("take", IN(rt("(5, 3)"), tensor_new(DS_DTYPE_INT64, "(0,)")), 0.0, NULL);
  compare_op("_contrib_boolean_mask", IN(rt("(0, 3)"), tensor_new(DS_DTYPE_BOOL, "(0,)")), 0.0,
             NULL);
  compare_op("_npx_nonzero", IN(rt("(0, 4)")), 0.0, NULL);
}

/* ---- coverage ------------------------------------------------------------------------------ */

typedef struct {
  const char *path;
  GTestFunc func;
  DsOpId ops[8];
  int n_ops;
} Case;

static const Case cases[] = {
    {"/cuda/nn/fully-connected", test_fully_connected, {DS_OP_FULLY_CONNECTED}, 1},
    {"/cuda/nn/dot", test_dot, {DS_OP_DOT}, 1},
    {"/cuda/nn/batch-dot", test_batch_dot, {DS_OP_BATCH_DOT}, 1},
    {"/cuda/nn/matmul", test_matmul, {DS_OP_MATMUL}, 1},
    {"/cuda/nn/convolution", test_convolution, {DS_OP_CONVOLUTION}, 1},
    {"/cuda/nn/pooling", test_pooling, {DS_OP_POOLING}, 1},
    {"/cuda/nn/embedding", test_embedding, {DS_OP_EMBEDDING}, 1},
    {"/cuda/tensor/take", test_take, {DS_OP_TAKE}, 1},
    {"/cuda/tensor/views",
     test_views,
     {DS_OP_RESHAPE, DS_OP_FLATTEN, DS_OP_EXPAND_DIMS, DS_OP_SQUEEZE, DS_OP_RESHAPE_LIKE,
      DS_OP_NP_RESHAPE, DS_OP_NP_SQUEEZE},
     7},
    {"/cuda/tensor/transpose", test_transpose, {DS_OP_TRANSPOSE, DS_OP_SWAP_AXIS}, 2},
    {"/cuda/tensor/concat", test_concat, {DS_OP_CONCAT}, 1},
    {"/cuda/tensor/stack", test_stack, {DS_OP_STACK}, 1},
    {"/cuda/tensor/slice-channel", test_slice_channel, {DS_OP_SLICE_CHANNEL}, 1},
    {"/cuda/tensor/slice", test_slice, {DS_OP_SLICE, DS_OP_SLICE_AXIS}, 2},
    {"/cuda/tensor/broadcast",
     test_broadcast,
     {DS_OP_BROADCAST_TO, DS_OP_BROADCAST_AXIS, DS_OP_BROADCAST_LIKE, DS_OP_EXPAND},
     4},
    {"/cuda/tensor/tile-repeat-reverse",
     test_tile_repeat_reverse,
     {DS_OP_TILE, DS_OP_REPEAT, DS_OP_REVERSE},
     3},
    {"/cuda/dynamic/boolean-mask", test_boolean_mask, {DS_OP_BOOLEAN_MASK}, 1},
    {"/cuda/dynamic/nonzero", test_nonzero, {DS_OP_NONZERO}, 1},
    {"/cuda/empty", test_empty, {0}, 0}, /* empty tensors across the families */
};

/* Every op ds_cuda_nn_register and ds_cuda_tensor_register give a kernel has a case above
 * (and a placement check); needs no device. */
static void test_coverage(void)
{
  DsKernel *table = g_new0(DsKernel, DS_OP_COUNT);
  DsCudaSupportsFn *supports = g_new0(DsCudaSupportsFn, DS_OP_COUNT);
  ds_cuda_nn_register(table, supports);
  ds_cuda_tensor_register(table, supports);
  for (int op = 0; op < DS_OP_COUNT; op++) {
    if (table[op].run == NULL)
      continue;
    gboolean covered = FALSE;
    for (size_t c = 0; c < G_N_ELEMENTS(cases) && !covered; c++)
      for (int i = 0; i < cases[c].n_ops; i++)
        covered = covered || cases[c].ops[i] == (DsOpId)op;
    if (!covered || supports[op] == NULL) {
      g_test_message("op %s has a CUDA kernel but %s", ds_op_get((DsOpId)op)->name,
                     covered ? "no placement check" : "no test case");
      g_test_fail();
    }
    if (covered)
      ds_test_cover("cuda", (DsOpId)op);
  }
  g_free(table);
  g_free(supports);
}

/* Whether the CUDA backend takes node `op` (attributes ending in NULL) with these dtypes. */
static gboolean takes(const char *op, const DsDType *in, int n_in, DsDType out, ...)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  va_list args;
  va_start(args, out);
  GError *error = NULL;
  DsNode *n = node_v(g, op, &error, args);
  va_end(args);
  g_assert_no_error(error);
  return ds_backend_find("cuda")->supports(n->op->id, n->param, in, n_in, &out, 1);
}

/* Placement keeps what these kernels do not handle on the CPU; needs no device. */
static void test_placement(void)
{
  const DsDType f32[3] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT32};
  const DsDType f64[2] = {DS_DTYPE_FLOAT64, DS_DTYPE_FLOAT64};
  const DsDType i32[2] = {DS_DTYPE_INT32, DS_DTYPE_INT32};
  const DsDType f16[2] = {DS_DTYPE_FLOAT16, DS_DTYPE_FLOAT16};
  const DsDType half_idx[2] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT16};
  const DsDType embed_idx[2] = {DS_DTYPE_INT64, DS_DTYPE_FLOAT32};
  g_assert_true(takes("Pooling", f32, 1, DS_DTYPE_FLOAT32, "kernel", "(2, 2)", NULL));
  g_assert_false(takes("Pooling", f32, 1, DS_DTYPE_FLOAT32, "kernel", "(2, 2)", "pool_type", "lp",
                       "p_value", "2", NULL));
  g_assert_false(takes("Pooling", f64, 1, DS_DTYPE_FLOAT64, "kernel", "(2, 2)", NULL));
  /* Max pooling's indices (ONNX MaxPool's second output) stay on the host. */
  g_assert_false(takes("Pooling", f32, 1, DS_DTYPE_FLOAT32, "kernel", "(2, 2)", "indices",
                       "row_major", NULL));
  g_assert_true(takes("_npi_matmul", f64, 2, DS_DTYPE_FLOAT64, NULL));
  g_assert_false(takes("_npi_matmul", i32, 2, DS_DTYPE_INT32, NULL));
  g_assert_false(takes("FullyConnected", f64, 2, DS_DTYPE_FLOAT64, "num_hidden", "4", "no_bias",
                       "True", NULL));
  g_assert_true(takes("Convolution", f32, 3, DS_DTYPE_FLOAT32, "kernel", "(3, 3)", "num_filter",
                      "4", NULL));
  g_assert_true(takes("Embedding", embed_idx, 2, DS_DTYPE_FLOAT32, "input_dim", "4", "output_dim",
                      "2", NULL));
  g_assert_false(takes("Embedding", f16, 2, DS_DTYPE_FLOAT32, "input_dim", "4", "output_dim", "2",
                       NULL));
  g_assert_true(takes("transpose", f16, 1, DS_DTYPE_FLOAT16, NULL));
  g_assert_false(takes("take", half_idx, 2, DS_DTYPE_FLOAT32, NULL));
}

/* Whether libcublas is mapped into this process now. */
static gboolean cublas_mapped(void)
{
  g_autofree char *maps = NULL;
  g_assert_true(g_file_get_contents("/proc/self/maps", &maps, NULL, NULL));
  return strstr(maps, "libcublas.so") != NULL;
}

/* cuBLAS is loaded by the device check when it finds a device, and not before or otherwise:
 * linked, it would cost every start of the program (ds-cuda-blas.h). Checked in a fresh
 * process, since other cases of this program load it; needs no device. */
static void cublas_loaded_on_demand_child(void)
{
  if (cublas_mapped()) {
    g_autofree char *maps = NULL;
    g_file_get_contents("/proc/self/maps", &maps, NULL, NULL);
    g_printerr("cuBLAS is mapped before anything asked for it:\n%s", maps);
  }
  g_assert_false(cublas_mapped());
  /* Asking which ops the backend takes (placement) builds its kernel table, not cuBLAS. */
  const DsDType f32[2] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT32};
  g_assert_true(takes("_npi_matmul", f32, 2, DS_DTYPE_FLOAT32, NULL));
  g_assert_false(cublas_mapped());
  const DsBackend *cuda = ds_cuda_backend_get();
  const char *reason = cuda->unavailable();
  if (reason != NULL) {
    g_test_message("no device (%s): cuBLAS must stay unloaded", reason);
    g_assert_false(cublas_mapped());
  } else {
    g_assert_true(cublas_mapped());
  }
}

static void test_cublas_loaded_on_demand(void)
{
  if (g_test_subprocess()) {
    cublas_loaded_on_demand_child();
    return;
  }
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed();
}

/* The loader finds every function the backend calls, in the library the build found. */
static void test_cublas_loads(void)
{
  const char *reason = NULL;
  const DsCudaBlas *blas = ds_cuda_blas_load(&reason);
  g_assert_null(reason);
  g_assert_nonnull(blas);
  g_assert_true(cublas_mapped());
  g_assert_nonnull(blas->create);
  g_assert_nonnull(blas->destroy);
  g_assert_nonnull(blas->set_stream);
  g_assert_nonnull(blas->sgemm);
  g_assert_nonnull(blas->dgemm);
  g_assert_nonnull(blas->sgemm_strided_batched);
  g_assert_nonnull(blas->dgemm_strided_batched);
  g_assert_true(ds_cuda_blas_load(NULL) == blas);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  ds_test_ops_init(20240611);
  g_test_add_func("/cuda/nn/cublas-loaded-on-demand", test_cublas_loaded_on_demand);
  g_test_add_func("/cuda/nn/cublas-loads", test_cublas_loads);
  g_test_add_func("/cuda/nn/coverage", test_coverage);
  g_test_add_func("/cuda/nn/placement", test_placement);
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++)
    g_test_add_func(cases[c].path, cases[c].func);
  int rc = g_test_run();
  ds_thread_pool_free(pool);
  g_rand_free(rng);
  return rc;
}
