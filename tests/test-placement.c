/* test-placement.c: backend placement (seed 004) without a GPU, on the "testdev" backend
 * (ds-test-device.h): which regions go to the device, the same bytes as a host-only run,
 * copies only where host and device meet (weights once), device tensors never reaching host
 * code, region frames named after the backend, and a clear error when the device cannot run. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "ds-backend.h"
#include "ds-dynamic-executor.h"
#include "ds-error.h"
#include "ds-partition.h"
#include "ds-session.h"
#include "ds-test-model.h"
#include "ds-tensor-stats.h"
#include "ds-test-device.h"

/* data (n, 4) -> scale (device) -> tanh (host: testdev has no kernel) -> boolean_mask (device,
 * sizes its output) -> fc (device) -> relu (device); heads: relu and the masked rows. */
static const char *mixed_json =
    "{\"nodes\": ["
    "{\"op\": \"null\", \"name\": \"data\", \"inputs\": []},"
    "{\"op\": \"_mul_scalar\", \"name\": \"scale\", \"attrs\": {\"scalar\": \"2\"}, \"inputs\": "
    "[[0, 0, 0]]},"
    "{\"op\": \"tanh\", \"name\": \"squash\", \"inputs\": [[1, 0, 0]]},"
    "{\"op\": \"null\", \"name\": \"mask\", \"inputs\": []},"
    "{\"op\": \"_contrib_boolean_mask\", \"name\": \"keep\", \"inputs\": [[2, 0, 0], [3, 0, 0]]},"
    "{\"op\": \"null\", \"name\": \"fc_weight\", \"inputs\": []},"
    "{\"op\": \"null\", \"name\": \"fc_bias\", \"inputs\": []},"
    "{\"op\": \"FullyConnected\", \"name\": \"fc\", \"attrs\": {\"num_hidden\": \"3\"},"
    " \"inputs\": [[4, 0, 0], [5, 0, 0], [6, 0, 0]]},"
    "{\"op\": \"Activation\", \"name\": \"relu\", \"attrs\": {\"act_type\": \"relu\"}, \"inputs\": "
    "[[7, 0, 0]]}"
    "], \"arg_nodes\": [0, 3, 5, 6], \"heads\": [[8, 0, 0], [4, 0, 0]],"
    " \"attrs\": {\"mxnet_version\": [\"int\", 10600]}}";

/* An int32 sum (testdev computes float32 only) next to a float32 one. */
static const char *dtype_json =
    "{\"nodes\": ["
    "{\"op\": \"null\", \"name\": \"a\", \"attrs\": {\"__shape__\": \"(4,)\", \"__dtype__\": "
    "\"4\"},"
    " \"inputs\": []},"
    "{\"op\": \"null\", \"name\": \"b\", \"attrs\": {\"__shape__\": \"(4,)\", \"__dtype__\": "
    "\"4\"},"
    " \"inputs\": []},"
    "{\"op\": \"elemwise_add\", \"name\": \"int_sum\", \"inputs\": [[0, 0, 0], [1, 0, 0]]},"
    "{\"op\": \"null\", \"name\": \"x\", \"attrs\": {\"__shape__\": \"(4,)\"}, \"inputs\": []},"
    "{\"op\": \"elemwise_add\", \"name\": \"float_sum\", \"inputs\": [[3, 0, 0], [3, 0, 0]]}"
    "], \"arg_nodes\": [0, 1, 3], \"heads\": [[2, 0, 0], [4, 0, 0]],"
    " \"attrs\": {\"mxnet_version\": [\"int\", 10600]}}";

/* A session on the mixed graph with `n` rows, row i kept when keep[i]. */
static DsSession *open_mixed(const char *path, int64_t n, const gboolean *keep)
{
  GError *error = NULL;
  DsSession *session = ds_session_new(path, &error);
  g_assert_no_error(error);
  DsShape dshape, mshape;
  g_assert_true(ds_session_parse_shape(session, "(n, 4)", &dshape, &error));
  g_assert_true(ds_session_parse_shape(session, "(n)", &mshape, &error));
  g_assert_true(ds_session_declare_shape(session, "data", &dshape, &error));
  g_assert_true(ds_session_declare_shape(session, "mask", &mshape, &error));
  g_autofree float *data = g_new(float, n * 4 + 1);
  g_autofree float *mask = g_new(float, n + 1);
  for (int64_t i = 0; i < n * 4; i++)
    data[i] = (float)i * 0.05f - 0.7f;
  for (int64_t i = 0; i < n; i++)
    mask[i] = keep[i] ? 1.0f : 0.0f;
  float w[12], b[3];
  for (int k = 0; k < 12; k++)
    w[k] = (float)(k % 5) * 0.25f - 0.5f;
  for (int k = 0; k < 3; k++)
    b[k] = 0.1f * (float)k;
  int64_t ds[2] = {n, 4}, ms[1] = {n}, ws[2] = {3, 4}, bs[1] = {3};
  g_assert_true(ds_session_feed(session, "data", ds_test_array_f32(2, ds, data), &error));
  g_assert_true(ds_session_feed(session, "mask", ds_test_array_f32(1, ms, mask), &error));
  g_assert_true(ds_session_feed(session, "fc_weight", ds_test_array_f32(2, ws, w), &error));
  g_assert_true(ds_session_feed(session, "fc_bias", ds_test_array_f32(1, bs, b), &error));
  g_assert_no_error(error);
  return session;
}

static const DsRegion *region_of(const DsPartition *p, const DsGraph *g, const char *node)
{
  const DsNode *n = ds_graph_find_node((DsGraph *)g, node);
  g_assert_nonnull(n);
  int r = p->region_of_node[n->id];
  g_assert_cmpint(r, >=, 0);
  return &p->regions[r];
}

static void test_label(void)
{
  DsTestModel model = ds_test_model_new(mixed_json);
  gboolean keep[6] = {1, 0, 1, 1, 0, 1};
  g_autoptr(DsSession) session = open_mixed(model.path, 6, keep);
  GError *error = NULL;
  const DsGraphShapes *shapes = ds_session_infer_symbolic(session, &error);
  g_assert_no_error(error);
  DsGraph *graph = ds_session_get_graph(session);
  const DsBackend *dev = ds_test_device_get();
  g_autoptr(DsPartition) p = ds_partition_label_placement(graph, shapes, dev, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(p->n_regions, ==, 4);
  const DsRegion *scale = region_of(p, graph, "scale"), *squash = region_of(p, graph, "squash");
  const DsRegion *mask = region_of(p, graph, "keep"), *fc = region_of(p, graph, "fc");
  g_assert_true(scale->backend == dev);
  g_assert_null(squash->backend);
  g_assert_true(mask->backend == dev);
  g_assert_cmpint(mask->kind, ==, DS_REGION_DYNAMIC);
  g_assert_true(fc == region_of(p, graph, "relu"));
  g_assert_true(fc->backend == dev);
  g_assert_cmpint(fc->kind, ==, DS_REGION_STATIC);
  g_assert_true(g_str_has_prefix(fc->name, "testdev"));
  g_assert_true(g_str_has_prefix(squash->name, "static"));
  ds_test_model_clear(&model);
}

/* Output `i` of a host-only and of a placed run: the same shape, in host memory, and the same
 * values to rounding (on the host, FullyConnected packs its weight, which the device's copy
 * is not: another summation order). */
static void assert_same_output(DsSession *host, DsSession *placed, guint i)
{
  const DsTensor *want = ds_session_get_output(host, i), *got = ds_session_get_output(placed, i);
  g_assert_cmpint(got->memory, ==, DS_MEMORY_HOST);
  g_assert_false(ds_test_device_owns(got->data));
  g_assert_cmpint(want->ndim, ==, got->ndim);
  for (int d = 0; d < want->ndim; d++)
    g_assert_cmpint(want->shape[d], ==, got->shape[d]);
  for (int64_t k = 0; k < ds_tensor_numel(want); k++) {
    float a = ((const float *)want->data)[k], b = ((const float *)got->data)[k];
    g_assert_cmpfloat_with_epsilon(a, b, 1e-6 * (1.0 + fabsf(a)));
  }
}

static void test_same_bytes_and_copies(void)
{
  DsTestModel model = ds_test_model_new(mixed_json);
  const int64_t n = 9;
  gboolean keep[9] = {1, 0, 1, 1, 0, 1, 1, 1, 0};
  GError *error = NULL;
  g_autoptr(DsSession) host = open_mixed(model.path, n, keep);
  g_assert_true(ds_session_prepare(host, FALSE, 0, ds_backend_find("cpu"), 1, &error));
  g_assert_true(ds_session_run(host, &error));
  g_assert_no_error(error);

  DsTestDeviceStats before, after;
  ds_test_device_get_stats(&before);
  {
    g_autoptr(DsSession) placed = open_mixed(model.path, n, keep);
    ds_session_set_device(placed, ds_test_device_get());
    g_assert_true(ds_session_get_device(placed) == ds_test_device_get());
    g_assert_true(ds_session_prepare(placed, FALSE, 0, ds_backend_find("cpu"), 1, &error));
    g_assert_no_error(error);
    g_assert_nonnull(ds_session_get_placement(placed));
    for (int run = 0; run < 3; run++) {
      g_assert_true(ds_session_run(placed, &error));
      g_assert_no_error(error);
      for (guint h = 0; h < 2; h++) {
        assert_same_output(host, placed, h);
      }
    }
    DsDynamicExecutorStats st;
    ds_dynamic_executor_get_stats(ds_session_get_dynamic_executor(placed), &st);
    g_assert_cmpuint(st.n_device_regions, ==, 3);
    /* Per run: data, mask and squash's output go to the device, scale's output comes back,
     * and both heads come back; the weight and bias go once. */
    gsize rows = 6 * 4 * sizeof(float), weights = (12 + 3) * sizeof(float);
    gsize to_device = 3 * (n * 4 * sizeof(float) + n * sizeof(float) + n * 4 * sizeof(float));
    g_assert_cmpuint(st.copy_to_device_bytes, ==, to_device + weights);
    g_assert_cmpuint(st.copy_to_host_bytes, ==,
                     3 * (n * 4 * sizeof(float) + 6 * 3 * sizeof(float) + rows));
    g_assert_cmpuint(st.n_copies, ==, 3 * 6 + 2);
    ds_test_device_get_stats(&after);
    g_assert_cmpuint(after.bytes_to_device - before.bytes_to_device, ==, st.copy_to_device_bytes);
    g_assert_cmpuint(after.n_kernels - before.n_kernels, ==, 3 * 4);
  }
  /* Every device buffer went back with the session. */
  ds_test_device_get_stats(&after);
  g_assert_cmpuint(after.n_live_buffers, ==, before.n_live_buffers);
  ds_test_model_clear(&model);
}

/* Masks of different sizes through the same executor: the device sizes its output each run. */
static void test_dynamic_on_device(void)
{
  DsTestModel model = ds_test_model_new(mixed_json);
  const int64_t n = 8;
  gboolean patterns[3][8] = {
      {0, 0, 0, 0, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 1, 1, 1}, {0, 1, 0, 0, 0, 0, 1, 0}};
  for (int p = 0; p < 3; p++) {
    GError *error = NULL;
    g_autoptr(DsSession) host = open_mixed(model.path, n, patterns[p]);
    g_autoptr(DsSession) placed = open_mixed(model.path, n, patterns[p]);
    ds_session_set_device(placed, ds_test_device_get());
    g_assert_true(ds_session_prepare(host, FALSE, 0, ds_backend_find("cpu"), 1, &error));
    g_assert_true(ds_session_prepare(placed, FALSE, 0, ds_backend_find("cpu"), 1, &error));
    g_assert_true(ds_session_run(host, &error));
    g_assert_true(ds_session_run(placed, &error));
    g_assert_no_error(error);
    int64_t kept = 0;
    for (int i = 0; i < n; i++)
      kept += patterns[p][i];
    g_assert_cmpint(ds_session_get_output(placed, 1)->shape[0], ==, kept);
    for (guint h = 0; h < 2; h++) {
      assert_same_output(host, placed, h);
    }
  }
  ds_test_model_clear(&model);
}

typedef struct {
  guint device_frames, host_frames, device_nodes, host_nodes;
} FrameCount;

static void count_frame(gpointer data, const DsFrame *frame)
{
  FrameCount *c = data;
  if (frame->kind != DS_FRAME_REGION)
    return;
  if (frame->backend != NULL) {
    g_assert_cmpstr(frame->backend, ==, "testdev");
    g_assert_true(g_str_has_prefix(frame->name, "testdev"));
    c->device_frames++;
  } else {
    c->host_frames++;
  }
}

static void count_node(gpointer data, const DsNode *node, const DsTensor *inputs,
                       const DsTensor *outputs)
{
  FrameCount *c = data;
  (void)inputs;
  gboolean device = outputs[0].memory == DS_MEMORY_DEVICE;
  g_assert_true(device == ds_test_device_owns(outputs[0].data) || outputs[0].data == NULL);
  g_assert_true(device == (strcmp(node->name, "squash") != 0));
  /* A debugger reads device tensors through the registered reader (testdev's buffers are
   * host memory under the tag, so the value can be checked here directly). */
  DsTensorStats stats;
  ds_tensor_get_stats(&outputs[0], &stats);
  g_assert_cmpint(stats.numel, ==, ds_tensor_numel(&outputs[0]));
  g_assert_cmpint(stats.n_preview, ==, MIN(stats.numel, DS_TENSOR_PREVIEW));
  if (stats.numel > 0)
    g_assert_cmpfloat(stats.preview[0], ==,
                      ds_tensor_load_f64(outputs[0].dtype, outputs[0].data, 0));
  if (device)
    c->device_nodes++;
  else
    c->host_nodes++;
}

static void test_frames(void)
{
  DsTestModel model = ds_test_model_new(mixed_json);
  gboolean keep[4] = {1, 0, 1, 1};
  g_autoptr(DsSession) s = open_mixed(model.path, 4, keep);
  ds_session_set_device(s, ds_test_device_get());
  GError *error = NULL;
  g_assert_true(ds_session_prepare(s, FALSE, 0, ds_backend_find("cpu"), 1, &error));
  FrameCount c = {0};
  DsExecutorHooks hooks = {.node_end = count_node, .frame_enter = count_frame};
  ds_session_set_hooks(s, &hooks, &c);
  g_assert_true(ds_session_run(s, &error));
  g_assert_no_error(error);
  /* The placement's static regions are frames, two on the device and the host's one; the
   * device's boolean_mask runs on its own. */
  g_assert_cmpuint(c.device_frames, ==, 2);
  g_assert_cmpuint(c.host_frames, ==, 1);
  g_assert_cmpuint(c.device_nodes, ==, 4);
  g_assert_cmpuint(c.host_nodes, ==, 1);
  ds_test_model_clear(&model);
}

static void test_dtypes_decide(void)
{
  DsTestModel model = ds_test_model_new(dtype_json);
  GError *error = NULL;
  g_autoptr(DsSession) s = ds_session_new(model.path, &error);
  g_assert_no_error(error);
  const DsGraphShapes *shapes = ds_session_infer_partial(s, &error);
  g_assert_no_error(error);
  DsGraph *graph = ds_session_get_graph(s);
  const DsBackend *dev = ds_test_device_get();
  g_assert_false(
      ds_partition_device_runs(dev, graph, ds_graph_find_node(graph, "int_sum"), shapes));
  g_assert_true(
      ds_partition_device_runs(dev, graph, ds_graph_find_node(graph, "float_sum"), shapes));
  /* Variables never run anywhere; without dtypes nothing is placed. */
  g_assert_false(ds_partition_device_runs(dev, graph, ds_graph_find_node(graph, "x"), shapes));
  g_assert_false(
      ds_partition_device_runs(dev, graph, ds_graph_find_node(graph, "float_sum"), NULL));
  ds_test_model_clear(&model);
}

static const char *no_device(void)
{
  return "no device in this test";
}

static void test_unavailable_device(void)
{
  DsBackend absent = *ds_test_device_get();
  absent.name = "absent";
  absent.unavailable = no_device;
  DsTestModel model = ds_test_model_new(mixed_json);
  gboolean keep[2] = {1, 1};
  g_autoptr(DsSession) s = open_mixed(model.path, 2, keep);
  ds_session_set_device(s, &absent);
  GError *error = NULL;
  g_assert_false(ds_session_prepare(s, FALSE, 0, ds_backend_find("cpu"), 1, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED);
  g_assert_cmpstr(error->message, ==, "the absent backend cannot run here: no device in this test");
  g_clear_error(&error);
  /* Back on the host, the same session runs. */
  ds_session_set_device(s, NULL);
  g_assert_true(ds_session_prepare(s, FALSE, 0, ds_backend_find("cpu"), 1, &error));
  g_assert_true(ds_session_run(s, &error));
  g_assert_no_error(error);
  ds_test_model_clear(&model);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/placement/label", test_label);
  g_test_add_func("/placement/same-bytes-and-copies", test_same_bytes_and_copies);
  g_test_add_func("/placement/dynamic-on-device", test_dynamic_on_device);
  g_test_add_func("/placement/frames", test_frames);
  g_test_add_func("/placement/dtypes-decide", test_dtypes_decide);
  g_test_add_func("/placement/unavailable-device", test_unavailable_device);
  return g_test_run();
}
