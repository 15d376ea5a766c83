/* test-engine-core.c: the thread pool, attribute parsing, dim arithmetic and the planner. */
#include <glib.h>
#include <string.h>

#include "ds-attr.h"
#include "ds-error.h"
#include "ds-infer.h"
#include "ds-op.h"
#include "ds-plan.h"
#include "ds-thread-pool.h"

/* ---- thread pool ---- */

typedef struct {
  gint64 *counts;
} CountArgs;

static void count_range(void *ctx, int64_t begin, int64_t end)
{
  CountArgs *args = ctx;
  for (int64_t i = begin; i < end; i++)
    args->counts[i]++;
}

static void test_pool_covers_range_once(void)
{
  for (int threads = 1; threads <= 4; threads++) {
    DsThreadPool *pool = ds_thread_pool_new(threads);
    g_assert_nonnull(pool);
    g_assert_cmpint(ds_thread_pool_get_n_threads(pool), ==, threads);
    for (int64_t n = 0; n < 200; n += 13) {
      CountArgs args = {g_new0(gint64, n + 1)};
      for (int rep = 0; rep < 50; rep++)
        ds_parallel_for(pool, n, 1, count_range, &args);
      for (int64_t i = 0; i < n; i++)
        g_assert_cmpint(args.counts[i], ==, 50);
      g_free(args.counts);
    }
    ds_thread_pool_free(pool);
  }
}

/* Jobs back to back (workers still spinning), after a pause longer than the spin (workers
 * asleep, to be woken), and with fewer chunks than threads (some workers sit a job out), in
 * turn: each index is still run exactly once per job. */
static void test_pool_wakes_and_skips(void)
{
  DsThreadPool *pool = ds_thread_pool_new(4);
  g_assert_nonnull(pool);
  const int64_t n = 101;
  CountArgs args = {g_new0(gint64, n)};
  int jobs = 0;
  for (int rep = 0; rep < 60; rep++) {
    if (rep % 3 == 2)
      g_usleep(300); /* past the workers' 50 µs spin */
    const int64_t grain = rep % 4 == 0 ? 1 : rep % 4 == 1 ? 40 : rep % 4 == 2 ? 60 : 200;
    if (rep % 2 == 0)
      ds_parallel_for(pool, n, grain, count_range, &args);
    else
      ds_parallel_for_dynamic(pool, n, grain, count_range, &args);
    jobs++;
  }
  for (int64_t i = 0; i < n; i++)
    g_assert_cmpint(args.counts[i], ==, jobs);
  g_free(args.counts);
  ds_thread_pool_free(pool);
}

static void test_pool_null_runs_inline(void)
{
  CountArgs args = {g_new0(gint64, 10)};
  ds_parallel_for(NULL, 10, 1, count_range, &args);
  for (int i = 0; i < 10; i++)
    g_assert_cmpint(args.counts[i], ==, 1);
  g_free(args.counts);
}

/* ---- attributes ---- */

static void test_attr_tuples(void)
{
  int64_t v[8];
  int n;
  g_assert_true(ds_attr_parse_tuple("(3, 3)", v, 8, -1, &n));
  g_assert_cmpint(n, ==, 2);
  g_assert_cmpint(v[0], ==, 3);
  g_assert_true(ds_attr_parse_tuple("(2,)", v, 8, -1, &n));
  g_assert_cmpint(n, ==, 1);
  g_assert_true(ds_attr_parse_tuple("()", v, 8, -1, &n));
  g_assert_cmpint(n, ==, 0);
  g_assert_true(ds_attr_parse_tuple("[1,-2, None]", v, 8, 99, &n));
  g_assert_cmpint(n, ==, 3);
  g_assert_cmpint(v[1], ==, -2);
  g_assert_cmpint(v[2], ==, 99);
  g_assert_true(ds_attr_parse_tuple("5", v, 8, -1, &n));
  g_assert_cmpint(n, ==, 1);
  g_assert_true(ds_attr_parse_tuple("(1L, 2L)", v, 8, -1, &n));
  g_assert_cmpint(v[1], ==, 2);
  g_assert_false(ds_attr_parse_tuple("(1, x)", v, 8, -1, &n));
  g_assert_false(ds_attr_parse_tuple("(1, 2", v, 8, -1, &n));
  g_assert_false(ds_attr_parse_tuple("(1,2,3)", v, 2, -1, &n));
  g_assert_false(ds_attr_parse_tuple("(1) junk", v, 8, -1, &n));
}

static void test_attr_scalars(void)
{
  gboolean b;
  double d;
  int64_t i;
  g_assert_true(ds_attr_parse_bool("True", &b) && b);
  g_assert_true(ds_attr_parse_bool("0", &b) && !b);
  g_assert_false(ds_attr_parse_bool("yes", &b));
  g_assert_true(ds_attr_parse_float("1e-05", &d));
  g_assert_cmpfloat(d, ==, 1e-05);
  g_assert_false(ds_attr_parse_float("1.0x", &d));
  g_assert_true(ds_attr_parse_int(" 42 ", &i) && i == 42);
  g_assert_false(ds_attr_parse_int("4.5", &i));
}

static void test_attr_node_errors(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = ds_graph_add_node(g, "conv0", "Convolution");
  ds_node_add_attr(n, "kernel", "(3, x)");
  ds_node_add_attr(n, "num_filter", "384.0");
  int64_t v[4];
  int count;
  GError *error = NULL;
  g_assert_false(ds_node_attr_tuple(n, "kernel", v, 4, &count, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_PARSE);
  g_assert_nonnull(strstr(error->message, "conv0"));
  g_assert_nonnull(strstr(error->message, "kernel"));
  g_clear_error(&error);
  int64_t f;
  g_assert_true(ds_node_attr_int(n, "num_filter", 0, &f, &error));
  g_assert_cmpint(f, ==, 384);
  g_assert_true(ds_node_attr_tuple(n, "stride", v, 4, &count, &error));
  g_assert_cmpint(count, ==, -1);
}

/* ---- dims ---- */

static void test_dim_arithmetic(void)
{
  DsShapeCtx *ctx = ds_shape_ctx_new();
  g_assert_cmpint(ds_dim_add(ctx, ds_dim(2), ds_dim(3)).value, ==, 5);
  g_assert_cmpint(ds_dim_floordiv(ctx, ds_dim(7), ds_dim(2)).value, ==, 3);
  g_assert_cmpint(ds_dim_ceildiv(ctx, ds_dim(7), ds_dim(2)).value, ==, 4);
  g_assert_cmpint(ds_dim_mod(ctx, ds_dim(7), ds_dim(3)).value, ==, 1);
  g_assert_false(ds_dim_is_known(ds_dim_floordiv(ctx, ds_dim(7), ds_dim(0))));
  g_assert_false(ds_dim_is_known(ds_dim_add(ctx, DS_DIM_UNKNOWN, ds_dim(1))));
  g_assert_cmpint(ds_dim_mul(ctx, DS_DIM_UNKNOWN, ds_dim(0)).value, ==, 0);
  /* Overflow gives unknown, never a wrapped size. */
  g_assert_false(ds_dim_is_known(ds_dim_mul(ctx, ds_dim(G_MAXINT64 / 2), ds_dim(3))));
  ds_shape_ctx_free(ctx);
}

static void test_shape_assign(void)
{
  DsShapeCtx *ctx = ds_shape_ctx_new();
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = ds_graph_add_node(g, "fc1", "FullyConnected");
  ds_shape_ctx_set_node(ctx, n);
  DsShape slot = {.ndim = 2, .dims = {ds_dim(128), DS_DIM_UNKNOWN}};
  DsShape want = {.ndim = 2, .dims = {ds_dim(128), ds_dim(784)}};
  GError *error = NULL;
  g_assert_true(ds_shape_ctx_assign(ctx, &slot, &want, "weight", &error));
  g_assert_cmpint(slot.dims[1].value, ==, 784);
  DsShape bad = {.ndim = 2, .dims = {ds_dim(64), ds_dim(784)}};
  g_assert_false(ds_shape_ctx_assign(ctx, &slot, &bad, "weight", &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_SHAPE);
  g_assert_nonnull(strstr(error->message, "fc1"));
  g_assert_nonnull(strstr(error->message, "(128, 784)"));
  g_assert_nonnull(strstr(error->message, "(64, 784)"));
  g_clear_error(&error);
  ds_shape_ctx_free(ctx);
}

/* ---- planner ---- */

/* A random DAG of placeholder nodes (the planner reads only structure and shapes). */
static DsGraph *random_dag(GRand *rand, guint n_nodes, DsGraphShapes **shapes_out)
{
  DsGraph *g = ds_graph_new();
  ds_graph_add_node(g, "x", "null");
  for (guint i = 1; i < n_nodes; i++) {
    g_autofree char *name = g_strdup_printf("n%u", i);
    DsNode *node = ds_graph_add_node(g, name, "Opaque");
    node->n_inputs = 1 + (guint)g_rand_int_range(rand, 0, MIN(3, (gint)i));
    node->inputs = g_new0(DsEntry, node->n_inputs);
    for (guint k = 0; k < node->n_inputs; k++) {
      /* Mostly recent producers, sometimes far back: long-lived skip connections. */
      guint near = (guint)g_rand_int_range(rand, 1, 3); /* MIN evaluates twice: draw first */
      guint back = g_rand_int_range(rand, 0, 4) == 0 ? (guint)g_rand_int_range(rand, 1, (gint)i + 1)
                                                     : MIN(i, near);
      node->inputs[k] = (DsEntry){i - back, 0, 0};
    }
  }
  ds_graph_update_row_ptr(g);
  g->heads = g_new0(DsEntry, 1);
  g->heads[0] = (DsEntry){n_nodes - 1, 0, 0};
  g->n_heads = 1;
  DsGraphShapes *shapes = g_new0(DsGraphShapes, 1);
  shapes->n_entries = ds_graph_n_entries(g);
  shapes->shapes = g_new0(DsShape, shapes->n_entries);
  shapes->dtypes = g_new0(DsDType, shapes->n_entries);
  for (guint e = 0; e < shapes->n_entries; e++) {
    int64_t dims[2] = {g_rand_int_range(rand, 1, 64), g_rand_int_range(rand, 1, 1024)};
    shapes->shapes[e] = ds_shape_from_concrete(dims, 2);
    shapes->dtypes[e] = DS_DTYPE_FLOAT32;
  }
  *shapes_out = shapes;
  return g;
}

static void test_plan_no_overlap(void)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed(7);
  for (int trial = 0; trial < 40; trial++) {
    DsGraphShapes *shapes;
    g_autoptr(DsGraph) g = random_dag(rand, 10 + trial * 5, &shapes);
    GError *error = NULL;
    g_autoptr(DsPlan) plan = ds_plan_new(g, shapes, &error);
    g_assert_no_error(error);
    for (guint a = 0; a < plan->n_entries; a++) {
      if (plan->offsets[a] == DS_PLAN_PINNED)
        continue;
      g_assert_cmpuint(plan->offsets[a] % DS_PLAN_ALIGN, ==, 0);
      g_assert_cmpuint(plan->offsets[a] + plan->sizes[a], <=, plan->arena_bytes);
      for (guint b = a + 1; b < plan->n_entries; b++) {
        if (plan->offsets[b] == DS_PLAN_PINNED)
          continue;
        if (plan->storage[a] == plan->storage[b])
          continue; /* a view and its source share bytes by design */
        gboolean live_together =
          plan->first_use[a] <= plan->last_use[b] && plan->first_use[b] <= plan->last_use[a];
        gboolean share_bytes = plan->offsets[a] < plan->offsets[b] + plan->sizes[b] &&
                               plan->offsets[b] < plan->offsets[a] + plan->sizes[a];
        g_assert_false(live_together && share_bytes);
      }
    }
    g_assert_cmpuint(plan->arena_bytes, >=, plan->max_live_bytes);
    g_assert_cmpuint(plan->arena_bytes, <=, plan->total_bytes);
    ds_graph_shapes_free(shapes);
  }
}

static void test_plan_chain_reuses(void)
{
  /* x -> n1 -> n2 -> ... : only two buffers are ever live, so the arena holds two. */
  g_autoptr(DsGraph) g = ds_graph_new();
  ds_graph_add_node(g, "x", "null");
  for (guint i = 1; i < 20; i++) {
    g_autofree char *name = g_strdup_printf("n%u", i);
    DsNode *node = ds_graph_add_node(g, name, "Opaque");
    node->n_inputs = 1;
    node->inputs = g_new0(DsEntry, 1);
    node->inputs[0] = (DsEntry){i - 1, 0, 0};
  }
  ds_graph_update_row_ptr(g);
  g->heads = g_new0(DsEntry, 1);
  g->heads[0] = (DsEntry){19, 0, 0};
  g->n_heads = 1;
  DsGraphShapes *shapes = g_new0(DsGraphShapes, 1);
  shapes->n_entries = 20;
  shapes->shapes = g_new0(DsShape, 20);
  shapes->dtypes = g_new0(DsDType, 20);
  int64_t dims[1] = {256}; /* 1 KiB each */
  for (guint e = 0; e < 20; e++)
    shapes->shapes[e] = ds_shape_from_concrete(dims, 1);
  GError *error = NULL;
  g_autoptr(DsPlan) plan = ds_plan_new(g, shapes, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(plan->arena_bytes, ==, 2048);
  g_assert_cmpuint(plan->max_live_bytes, ==, 2048);
  g_assert_cmpuint(plan->total_bytes, ==, 19 * 1024);
  g_assert_cmpuint(plan->offsets[0], ==, DS_PLAN_PINNED);
  ds_graph_shapes_free(shapes);
}

static void test_plan_views_alias(void)
{
  /* x -> relu -> Reshape -> relu -> Flatten (head): the views take no bytes of their own. */
  static const char *const ops[] = {"null", "relu", "Reshape", "relu", "Flatten"};
  g_autoptr(DsGraph) g = ds_graph_new();
  for (guint i = 0; i < G_N_ELEMENTS(ops); i++) {
    g_autofree char *name = g_strdup_printf("n%u", i);
    DsNode *node = ds_graph_add_node(g, name, ops[i]);
    node->op = ds_op_lookup(ops[i]);
    if (i > 0) {
      node->n_inputs = 1;
      node->inputs = g_new0(DsEntry, 1);
      node->inputs[0] = (DsEntry){i - 1, 0, 0};
    }
  }
  ds_graph_update_row_ptr(g);
  g->heads = g_new0(DsEntry, 1);
  g->heads[0] = (DsEntry){4, 0, 0};
  g->n_heads = 1;
  DsGraphShapes *shapes = g_new0(DsGraphShapes, 1);
  shapes->n_entries = 5;
  shapes->shapes = g_new0(DsShape, 5);
  shapes->dtypes = g_new0(DsDType, 5);
  int64_t dims[2] = {16, 16}; /* 1 KiB each */
  for (guint e = 0; e < 5; e++)
    shapes->shapes[e] = ds_shape_from_concrete(dims, 2);
  GError *error = NULL;
  g_autoptr(DsPlan) plan = ds_plan_new(g, shapes, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(plan->n_aliases, ==, 2);
  g_assert_cmpuint(plan->storage[2], ==, 1);
  g_assert_cmpuint(plan->storage[4], ==, 3);
  g_assert_cmpuint(plan->offsets[2], ==, plan->offsets[1]);
  /* relu0's bytes live until the Reshape's reader (n3) has run: two buffers at once. */
  g_assert_cmpuint(plan->arena_bytes, ==, 2048);
  g_assert_cmpuint(plan->n_buffers, ==, 2);
  ds_graph_shapes_free(shapes);
}

/* What every kernel may rely on is checked once at bind: the op's attributes read, the input
 * count they call for, and at least the outputs they write. */
static void test_node_args_checked(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = ds_graph_add_node(g, "add0", "elemwise_add");
  n->op = ds_op_lookup("elemwise_add");
  n->n_inputs = 1;
  n->inputs = g_new0(DsEntry, 1);
  g_autoptr(GError) error = NULL;
  g_assert_false(ds_op_check_node_args(n, &error));
  g_assert_nonnull(strstr(error->message, "'add0'"));
  g_assert_nonnull(strstr(error->message, "has 1 inputs, but its attributes call for 2"));
  g_clear_error(&error);

  DsNode *c = ds_graph_add_node(g, "clip0", "clip");
  c->op = ds_op_lookup("clip");
  c->n_inputs = 1;
  c->inputs = g_new0(DsEntry, 1);
  g_assert_false(ds_op_check_node_args(c, &error));
  g_assert_nonnull(strstr(error->message, "'clip0' (clip): its attributes were not read"));
  g_clear_error(&error);
  ds_node_add_attr(c, "a_min", "0");
  ds_node_add_attr(c, "a_max", "1");
  c->param = g_malloc0(c->op->param_size);
  g_assert_true(c->op->parse(c, c->param, &error));
  g_assert_true(ds_op_check_node_args(c, &error));
  g_assert_no_error(error);

  /* Fewer outputs than the op writes; more are allowed (a hidden MKL-DNN workspace). */
  DsNode *s = ds_graph_add_node(g, "split0", "SliceChannel");
  s->op = ds_op_lookup("SliceChannel");
  s->n_inputs = 1;
  s->inputs = g_new0(DsEntry, 1);
  ds_node_add_attr(s, "num_outputs", "3");
  s->param = g_malloc0(s->op->param_size);
  g_assert_true(s->op->parse(s, s->param, &error));
  s->n_outputs = 2;
  g_assert_false(ds_op_check_node_args(s, &error));
  g_assert_nonnull(strstr(error->message, "'split0' (SliceChannel): has 2 outputs, but its attributes call for 3"));
  g_clear_error(&error);
  s->n_outputs = 4;
  g_assert_true(ds_op_check_node_args(s, &error));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/core/thread-pool/covers-range-once", test_pool_covers_range_once);
  g_test_add_func("/core/thread-pool/wakes-and-skips", test_pool_wakes_and_skips);
  g_test_add_func("/core/thread-pool/null-runs-inline", test_pool_null_runs_inline);
  g_test_add_func("/engine/attr/tuples", test_attr_tuples);
  g_test_add_func("/engine/op/node-args-checked", test_node_args_checked);
  g_test_add_func("/engine/attr/scalars", test_attr_scalars);
  g_test_add_func("/engine/attr/node-errors", test_attr_node_errors);
  g_test_add_func("/engine/shape/dim-arithmetic", test_dim_arithmetic);
  g_test_add_func("/engine/shape/assign", test_shape_assign);
  g_test_add_func("/engine/plan/no-overlap", test_plan_no_overlap);
  g_test_add_func("/engine/plan/chain-reuses", test_plan_chain_reuses);
  g_test_add_func("/engine/plan/views-alias", test_plan_views_alias);
  return g_test_run();
}
