/* test-dynamic-executor.c: the buffer pool, and the dynamic-shape executor against the static
 * one and against reference loops: a boolean-mask graph whose output size follows the data
 * (all-false, all-true and mixed masks), the same bytes as the static executor on graphs
 * without dynamic ops (whole-graph, elementwise-partitioned and saved-partitioned), no pool
 * allocations after a warm-up at the largest size, and the static executor's refusal. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "ds-backend.h"
#include "ds-buffer-pool.h"
#include "ds-dynamic-executor.h"
#include "ds-error.h"
#include "ds-mxnet-json.h"
#include "ds-partition.h"
#include "ds-session.h"
#include "ds-test-cover.h"
#include "ds-test-model.h"

/* ---- the pool ---- */

static void test_pool_reuse(void)
{
  g_autoptr(DsBufferPool) pool = ds_buffer_pool_new(ds_backend_find("cpu"));
  GError *error = NULL;
  void *a = ds_buffer_pool_acquire(pool, 0, 1000, "a", &error);
  void *b = ds_buffer_pool_acquire(pool, 1, 5000, "b", &error);
  g_assert_no_error(error);
  g_assert_true(a != b);
  ds_buffer_pool_release(pool, a);
  ds_buffer_pool_release(pool, b);
  /* Best fit: a small request from a new slot takes the small buffer. */
  void *c = ds_buffer_pool_acquire(pool, 7, 900, "c", &error);
  g_assert_true(c == a);
  /* Slot affinity: slot 1 gets its own buffer back although the other fits too. */
  ds_buffer_pool_release(pool, c);
  void *d = ds_buffer_pool_acquire(pool, 1, 500, "d", &error);
  g_assert_true(d == b);
  /* Nothing free fits: a new buffer. */
  void *e = ds_buffer_pool_acquire(pool, 2, 10000, "e", &error);
  g_assert_no_error(error);
  DsBufferPoolStats st;
  ds_buffer_pool_get_stats(pool, &st);
  g_assert_cmpuint(st.n_allocations, ==, 3);
  g_assert_cmpuint(st.n_reuses, ==, 2);
  g_assert_cmpuint(st.n_in_use, ==, 2);
  g_assert_cmpuint(st.bytes_held, >=, 16000);
  ds_buffer_pool_release(pool, d);
  ds_buffer_pool_release(pool, e);
  ds_buffer_pool_get_stats(pool, &st);
  g_assert_cmpuint(st.n_in_use, ==, 0);
  g_assert_cmpuint(st.bytes_in_use, ==, 0);
}

/* The same sequence of requests at smaller sizes after a warm-up allocates nothing, whatever
 * the sizes (the affinity argument in ds-buffer-pool.h). */
static void test_pool_warm_up(void)
{
  g_autoptr(DsBufferPool) pool = ds_buffer_pool_new(ds_backend_find("cpu"));
  g_autoptr(GRand) rand = g_rand_new_with_seed(3);
  const guint n = 12;
  gsize max_size[12];
  for (guint i = 0; i < n; i++)
    max_size[i] = (gsize)g_rand_int_range(rand, 1, 100000);
  guint64 after_warm_up = 0;
  for (int run = 0; run < 50; run++) {
    void *held[12] = {0};
    for (guint i = 0; i < n; i++) {
      gsize size =
          run == 0 ? max_size[i] : (gsize)g_rand_int_range(rand, 0, (gint32)max_size[i] + 1);
      GError *error = NULL;
      held[i] = ds_buffer_pool_acquire(pool, i, size, "x", &error);
      g_assert_no_error(error);
      /* Lifetimes overlap in a fixed pattern: each buffer lives for three requests. */
      if (i >= 3) {
        ds_buffer_pool_release(pool, held[i - 3]);
        held[i - 3] = NULL;
      }
    }
    for (guint i = 0; i < n; i++)
      ds_buffer_pool_release(pool, held[i]);
    DsBufferPoolStats st;
    ds_buffer_pool_get_stats(pool, &st);
    if (run == 0)
      after_warm_up = st.n_allocations;
    g_assert_cmpuint(st.n_allocations, ==, after_warm_up);
  }
}

static void test_pool_limit(void)
{
  g_autoptr(DsBufferPool) pool = ds_buffer_pool_new(ds_backend_find("cpu"));
  GError *error = NULL;
  g_assert_null(ds_buffer_pool_acquire(pool, 0, G_MAXSIZE - 16, "node 'big'", &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_LIMIT);
  g_assert_true(g_str_has_prefix(error->message, "node 'big'"));
  g_error_free(error);
}

/* ---- a boolean-mask graph ---- */

/* data (n, 4) -> x2 -> boolean_mask(., mask) -> FullyConnected(3) -> relu; heads: the relu
 * and the masked rows. Three regions: static, dynamic, static. */
static const char *mask_json =
    "{\"nodes\": ["
    "{\"op\": \"null\", \"name\": \"data\", \"inputs\": []},"
    "{\"op\": \"_mul_scalar\", \"name\": \"scale\", \"attrs\": {\"scalar\": \"2\"}, \"inputs\": "
    "[[0, 0, 0]]},"
    "{\"op\": \"null\", \"name\": \"mask\", \"inputs\": []},"
    "{\"op\": \"_contrib_boolean_mask\", \"name\": \"keep\", \"inputs\": [[1, 0, 0], [2, 0, 0]]},"
    "{\"op\": \"null\", \"name\": \"fc_weight\", \"inputs\": []},"
    "{\"op\": \"null\", \"name\": \"fc_bias\", \"inputs\": []},"
    "{\"op\": \"FullyConnected\", \"name\": \"fc\", \"attrs\": {\"num_hidden\": \"3\"},"
    " \"inputs\": [[3, 0, 0], [4, 0, 0], [5, 0, 0]]},"
    "{\"op\": \"Activation\", \"name\": \"relu\", \"attrs\": {\"act_type\": \"relu\"}, \"inputs\": "
    "[[6, 0, 0]]}"
    "], \"arg_nodes\": [0, 2, 4, 5], \"heads\": [[7, 0, 0], [3, 0, 0]],"
    " \"attrs\": {\"mxnet_version\": [\"int\", 10600]}}";

/* Feeds the mask graph: data rows i have values i*4+j, the mask keeps rows where keep[i],
 * fixed weights. */
static void feed_mask_graph(DsSession *session, int64_t n, const gboolean *keep, float *w, float *b)
{
  g_autofree float *data = g_new(float, n * 4 + 1);
  g_autofree float *mask = g_new(float, n + 1);
  for (int64_t i = 0; i < n; i++) {
    for (int j = 0; j < 4; j++)
      data[i * 4 + j] = (float)(i * 4 + j) * 0.01f - 0.3f;
    mask[i] = keep[i] ? 1.0f : 0.0f;
  }
  for (int k = 0; k < 12; k++)
    w[k] = (float)(k % 5) * 0.25f - 0.5f;
  for (int k = 0; k < 3; k++)
    b[k] = 0.1f * (float)k;
  GError *error = NULL;
  int64_t dshape[2] = {n, 4}, mshape[1] = {n}, wshape[2] = {3, 4}, bshape[1] = {3};
  g_assert_true(ds_session_feed(session, "data", ds_test_array_f32(2, dshape, data), &error));
  g_assert_true(ds_session_feed(session, "mask", ds_test_array_f32(1, mshape, mask), &error));
  g_assert_true(ds_session_feed(session, "fc_weight", ds_test_array_f32(2, wshape, w), &error));
  g_assert_true(ds_session_feed(session, "fc_bias", ds_test_array_f32(1, bshape, b), &error));
  g_assert_no_error(error);
}

/* Checks both heads against loops over the kept rows. */
static void check_mask_outputs(DsSession *session, int64_t n, const gboolean *keep, const float *w,
                               const float *b)
{
  const DsTensor *out = ds_session_get_output(session, 0);
  const DsTensor *rows = ds_session_get_output(session, 1);
  int64_t count = 0;
  for (int64_t i = 0; i < n; i++)
    count += keep[i] != 0;
  g_assert_cmpint(rows->ndim, ==, 2);
  g_assert_cmpint(rows->shape[0], ==, count);
  g_assert_cmpint(rows->shape[1], ==, 4);
  g_assert_cmpint(out->ndim, ==, 2);
  g_assert_cmpint(out->shape[0], ==, count);
  g_assert_cmpint(out->shape[1], ==, 3);
  int64_t r = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!keep[i])
      continue;
    for (int j = 0; j < 4; j++) {
      float x = 2.0f * ((float)(i * 4 + j) * 0.01f - 0.3f);
      g_assert_cmpfloat_with_epsilon(((float *)rows->data)[r * 4 + j], x, 1e-6);
    }
    for (int k = 0; k < 3; k++) {
      double acc = b[k];
      for (int j = 0; j < 4; j++)
        acc += (double)w[k * 4 + j] * 2.0 * ((double)(i * 4 + j) * 0.01 - 0.3);
      g_assert_cmpfloat_with_epsilon(((float *)out->data)[r * 3 + k], MAX(acc, 0.0), 1e-5);
    }
    r++;
  }
}

static DsSession *open_mask_session(const char *path, int64_t n, const gboolean *keep, float *w,
                                    float *b)
{
  GError *error = NULL;
  DsSession *session = ds_session_new(path, &error);
  g_assert_no_error(error);
  /* Sizes are symbols, so arrays of any row count can be bound to the same executor. */
  DsShape dshape, mshape;
  g_assert_true(ds_session_parse_shape(session, "(n, 4)", &dshape, &error));
  g_assert_true(ds_session_parse_shape(session, "(n)", &mshape, &error));
  g_assert_true(ds_session_declare_shape(session, "data", &dshape, &error));
  g_assert_true(ds_session_declare_shape(session, "mask", &mshape, &error));
  g_assert_no_error(error);
  feed_mask_graph(session, n, keep, w, b);
  return session;
}

static void test_boolean_mask_graph(void)
{
  DsTestModel model = ds_test_model_new(mask_json);
  const int64_t n = 10;
  gboolean patterns[3][10] = {
      {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, /* all false: zero rows */
      {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* all true */
      {1, 0, 0, 1, 1, 0, 1, 0, 0, 1},
  };
  for (int p = 0; p < 3; p++) {
    float w[12], b[3];
    g_autoptr(DsSession) session = open_mask_session(model.path, n, patterns[p], w, b);
    GError *error = NULL;
    g_assert_true(ds_session_uses_dynamic_executor(session));
    g_assert_true(ds_session_prepare(session, FALSE, 0, ds_backend_find("cpu"), 1, &error));
    g_assert_no_error(error);
    g_assert_cmpstr(ds_session_get_executor_name(session), ==, "dynamic");
    g_assert_true(ds_session_run(session, &error));
    g_assert_no_error(error);
    check_mask_outputs(session, n, patterns[p], w, b);
    DsDynamicExecutorStats st;
    ds_dynamic_executor_get_stats(ds_session_get_dynamic_executor(session), &st);
    g_assert_cmpuint(st.n_regions, ==, 2);
    g_assert_cmpuint(st.n_dynamic_nodes, ==, 1);
    g_assert_cmpuint(st.n_imperative_nodes, ==, 0);
  }
  ds_test_model_clear(&model);
}

/* Warm up at the largest size with every row kept, then smaller sizes and sparser masks:
 * no allocation anywhere (pool or region arenas), though the regions are re-planned. */
static void test_no_allocations_after_warm_up(void)
{
  DsTestModel model = ds_test_model_new(mask_json);
  const int64_t max_n = 64;
  gboolean keep[64];
  for (int i = 0; i < max_n; i++)
    keep[i] = TRUE;
  float w[12], b[3];
  g_autoptr(DsSession) session = open_mask_session(model.path, max_n, keep, w, b);
  GError *error = NULL;
  g_assert_true(ds_session_prepare(session, FALSE, 0, ds_backend_find("cpu"), 2, &error));
  g_assert_no_error(error);
  DsDynamicExecutor *dx = ds_session_get_dynamic_executor(session);
  g_assert_true(ds_dynamic_executor_run(dx, &error));
  DsDynamicExecutorStats warm;
  ds_dynamic_executor_get_stats(dx, &warm);
  g_assert_cmpuint(warm.n_allocations, >, 0);

  g_autoptr(GRand) rand = g_rand_new_with_seed(11);
  DsGraph *graph = ds_session_get_graph(session);
  for (int run = 0; run < 20; run++) {
    int64_t n = g_rand_int_range(rand, 1, (gint32)max_n + 1);
    for (int64_t i = 0; i < n; i++)
      keep[i] = g_rand_boolean(rand);
    /* Fresh arrays of n rows, bound straight to the executor. */
    const char *names[] = {"data", "mask"};
    g_autoptr(DsNDArray) data = NULL, mask = NULL;
    int64_t dshape[2] = {n, 4}, mshape[1] = {n};
    data = ds_ndarray_new(DS_DTYPE_FLOAT32, 2, dshape, "data", &error);
    mask = ds_ndarray_new(DS_DTYPE_FLOAT32, 1, mshape, "mask", &error);
    for (int64_t i = 0; i < n; i++) {
      for (int j = 0; j < 4; j++)
        ((float *)data->view.data)[i * 4 + j] = (float)(i * 4 + j) * 0.01f - 0.3f;
      ((float *)mask->view.data)[i] = keep[i] ? 1.0f : 0.0f;
    }
    DsNDArray *arrays[] = {data, mask};
    for (int k = 0; k < 2; k++)
      g_assert_true(ds_dynamic_executor_bind(dx, ds_graph_find_node(graph, names[k]),
                                             &arrays[k]->view, &error));
    g_assert_true(ds_dynamic_executor_run(dx, &error));
    g_assert_no_error(error);
    check_mask_outputs(session, n, keep, w, b);
    DsDynamicExecutorStats st;
    ds_dynamic_executor_get_stats(dx, &st);
    g_assert_cmpuint(st.n_allocations, ==, warm.n_allocations);
    g_assert_cmpuint(st.pool.n_allocations, ==, warm.pool.n_allocations);
  }
  DsDynamicExecutorStats end;
  ds_dynamic_executor_get_stats(dx, &end);
  g_assert_cmpuint(end.n_replans, >, warm.n_replans);
  ds_test_model_clear(&model);
}

static void test_static_executor_refuses(void)
{
  DsTestModel model = ds_test_model_new(mask_json);
  gboolean keep[4] = {1, 0, 1, 1};
  float w[12], b[3];
  g_autoptr(DsSession) session = open_mask_session(model.path, 4, keep, w, b);
  ds_session_set_executor_choice(session, DS_EXECUTOR_STATIC);
  GError *error = NULL;
  g_assert_false(ds_session_prepare(session, FALSE, 0, ds_backend_find("cpu"), 1, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED);
  g_assert_nonnull(strstr(error->message, "node 'keep' (_contrib_boolean_mask)"));
  g_error_free(error);
  ds_test_model_clear(&model);
}

/* ---- same bytes as the static executor ---- */

static char *model_path(const char *env, const char *fallback, const char *rel)
{
  const char *root = g_getenv(env);
  return g_build_filename(root != NULL ? root : fallback, rel, NULL);
}

/* The transformer keeps its sizes open: give them (batch 2, length 24). */
static void declare_inputs(DsSession *session)
{
  DsGraph *graph = ds_session_get_graph(session);
  static const char *const declared[][2] = {
      {"data0", "(2, 24)"}, {"data1", "(2, 24)"}, {"data2", "(2)"}};
  for (guint i = 0; i < G_N_ELEMENTS(declared); i++) {
    DsNode *node = ds_graph_find_node(graph, declared[i][0]);
    if (node == NULL || ds_node_get_attr(node, "__shape__") != NULL)
      continue;
    DsShape shape;
    GError *error = NULL;
    g_assert_true(ds_session_parse_shape(session, declared[i][1], &shape, &error));
    g_assert_true(ds_session_declare_shape(session, declared[i][0], &shape, &error));
    g_assert_no_error(error);
  }
}

/* Runs `path` with random inputs under `choice`; returns the heads' bytes concatenated. */
static GBytes *run_model(const char *path, DsExecutorChoice choice, const DsPartition *partition,
                         guint *n_regions)
{
  GError *error = NULL;
  g_autoptr(DsSession) session = ds_session_new(path, &error);
  g_assert_no_error(error);
  declare_inputs(session);
  ds_session_set_executor_choice(session, choice);
  g_assert_true(ds_session_prepare(session, TRUE, 5, ds_backend_find("cpu"), 2, &error));
  g_assert_no_error(error);
  g_autoptr(DsDynamicExecutor) own = NULL;
  DsGraph *graph = ds_session_get_graph(session);
  if (partition != NULL) {
    /* The same graph, bound with a given partition (the session's shapes and inputs). */
    const DsGraphShapes *symbolic = ds_session_infer_symbolic(session, &error);
    g_assert_no_error(error);
    DsBindSpec spec = {.graph = graph,
                       .shapes = symbolic,
                       .exprs = ds_session_get_exprs(session),
                       .partition = partition,
                       .guards = ds_session_get_guards(session),
                       .backend = ds_backend_find("cpu"),
                       .n_threads = 2};
    own = ds_dynamic_executor_new(&spec, &error);
    g_assert_no_error(error);
    DsExecutor *exec = ds_session_get_executor(session);
    for (guint i = 0; i < graph->n_nodes; i++)
      if (ds_node_is_variable(graph->nodes[i]))
        g_assert_true(ds_dynamic_executor_bind(
            own, graph->nodes[i], ds_executor_get_entry(exec, graph->node_row_ptr[i]), &error));
    g_assert_true(ds_dynamic_executor_run(own, &error));
    g_assert_no_error(error);
  } else {
    g_assert_true(ds_session_run(session, &error));
    g_assert_no_error(error);
  }
  if (n_regions != NULL && (own != NULL || ds_session_get_dynamic_executor(session) != NULL)) {
    DsDynamicExecutorStats st;
    ds_dynamic_executor_get_stats(own != NULL ? own : ds_session_get_dynamic_executor(session),
                                  &st);
    *n_regions = st.n_regions + st.n_dynamic_nodes + st.n_imperative_nodes;
  }
  g_autoptr(GByteArray) bytes = g_byte_array_new();
  for (guint h = 0; h < graph->n_heads; h++) {
    const DsTensor *t =
        own != NULL ? ds_dynamic_executor_get_output(own, h) : ds_session_get_output(session, h);
    g_byte_array_append(bytes, t->data, (guint)ds_tensor_nbytes(t));
  }
  return g_byte_array_free_to_bytes(g_steal_pointer(&bytes));
}

static void check_same_bytes(const char *path)
{
  guint n_regions = 0;
  g_autoptr(GBytes) fixed = run_model(path, DS_EXECUTOR_STATIC, NULL, NULL);
  g_autoptr(GBytes) dynamic = run_model(path, DS_EXECUTOR_DYNAMIC, NULL, &n_regions);
  g_assert_cmpuint(n_regions, ==, 1); /* no dynamic op: one static region */
  g_assert_true(g_bytes_equal(fixed, dynamic));

  /* Elementwise regions with everything else imperative: still the same bytes. */
  GError *error = NULL;
  g_autoptr(DsSession) session = ds_session_new(path, &error);
  g_assert_no_error(error);
  declare_inputs(session);
  g_autoptr(DsPartition) partition = ds_partition_label(
      ds_session_get_graph(session), ds_subgraph_property_find("elementwise"), &error);
  g_assert_no_error(error);
  g_autoptr(GBytes) mixed = run_model(path, DS_EXECUTOR_STATIC, partition, &n_regions);
  g_assert_cmpuint(n_regions, >, 1);
  g_assert_true(g_bytes_equal(fixed, mixed));
}

static void test_same_bytes_sample(void)
{
  g_autofree char *path = model_path("DS_SOURCE_DIR", ".", "data/sample/sample-symbol.json");
  check_same_bytes(path);
}

static void test_same_bytes_transformer(void)
{
  g_autofree char *path =
      model_path("DS_SOURCE_DIR", ".", "data/transformer/transformer-symbol.json");
  check_same_bytes(path);
}

/* A partitioned file saved by --partition --save runs with its saved regions. */
static void test_saved_partition_runs(void)
{
  g_autofree char *path =
      model_path("DS_SOURCE_DIR", ".", "data/transformer/transformer-symbol.json");
  GError *error = NULL;
  g_autoptr(DsGraph) graph = ds_mxnet_json_load(path, &error);
  g_assert_no_error(error);
  const DsSubgraphProperty *prop = ds_subgraph_property_find("elementwise");
  g_autoptr(DsPartition) partition = ds_partition_label(graph, prop, &error);
  g_assert_no_error(error);
  g_autoptr(DsGraph) built = ds_partition_build(partition, prop, NULL, &error);
  g_assert_no_error(error);
  g_autofree char *dir = g_dir_make_tmp("ds-partitioned-XXXXXX", &error);
  g_autofree char *saved = g_build_filename(dir, "partitioned-symbol.json", NULL);
  g_assert_true(ds_mxnet_json_save(built, saved, &error));
  g_assert_no_error(error);

  guint n_regions = 0;
  g_autoptr(GBytes) fixed = run_model(path, DS_EXECUTOR_STATIC, NULL, NULL);
  g_autoptr(GBytes) from_file = run_model(saved, DS_EXECUTOR_AUTO, NULL, &n_regions);
  g_assert_cmpuint(n_regions, >, 1);
  g_assert_true(g_bytes_equal(fixed, from_file));
  /* The saved file's _CachedOp regions ran, and gave the flat graph's bytes. */
  ds_test_cover("cpu", DS_OP_CACHED_OP);
  g_unlink(saved);
  g_rmdir(dir);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/pool/reuse", test_pool_reuse);
  g_test_add_func("/pool/warm-up", test_pool_warm_up);
  g_test_add_func("/pool/limit", test_pool_limit);
  g_test_add_func("/dynamic/boolean-mask", test_boolean_mask_graph);
  g_test_add_func("/dynamic/no-allocations-after-warm-up", test_no_allocations_after_warm_up);
  g_test_add_func("/dynamic/static-refuses", test_static_executor_refuses);
  g_test_add_func("/dynamic/same-bytes/sample", test_same_bytes_sample);
  g_test_add_func("/dynamic/same-bytes/transformer", test_same_bytes_transformer);
  g_test_add_func("/dynamic/saved-partition", test_saved_partition_runs);
  return g_test_run();
}
