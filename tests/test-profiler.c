/* test-profiler.c: the per-node timer on a real run of the bundled sample. */
#include <glib.h>

#include "ds-backend.h"
#include "ds-node-timer.h"
#include "ds-session.h"

static void test_node_timer_counts_every_op_node(void)
{
  const char *src = g_getenv("DS_SOURCE_DIR");
  g_autofree char *model = g_build_filename(src, "data", "sample", "sample-symbol.json", NULL);
  g_autofree char *params = g_build_filename(src, "data", "sample", "sample.params", NULL);
  g_autofree char *input = g_build_filename(src, "data", "sample", "sample-input.npy", NULL);
  GError *error = NULL;
  g_autoptr(DsSession) session = ds_session_new(model, &error);
  g_assert_no_error(error);
  g_assert_true(ds_session_feed_params(session, params, &error));
  g_assert_true(ds_session_feed_npy(session, "data", input, &error));
  g_assert_true(ds_session_prepare(session, FALSE, 0, ds_backend_find("cpu"), 1, &error));
  DsExecutor *exec = ds_session_get_executor(session);
  DsGraph *graph = ds_session_get_graph(session);

  g_autoptr(DsNodeTimer) timer = ds_node_timer_new(graph->n_nodes);
  ds_node_timer_attach(timer, exec);
  guint64 t0 = ds_monotonic_ns();
  for (int i = 0; i < 3; i++)
    g_assert_true(ds_executor_run(exec, &error));
  guint64 wall = ds_monotonic_ns() - t0;

  guint64 sum = 0;
  for (guint i = 0; i < graph->n_nodes; i++) {
    guint64 expected = ds_node_is_variable(graph->nodes[i]) ? 0 : 3;
    g_assert_cmpuint(ds_node_timer_get_count(timer, i), ==, expected);
    sum += ds_node_timer_get_total_ns(timer, i);
  }
  g_assert_cmpuint(sum, >, 0);
  g_assert_cmpuint(sum, <=, wall); /* node times are disjoint parts of the runs */
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/profiler/node-timer/counts-every-op-node", test_node_timer_counts_every_op_node);
  return g_test_run();
}
