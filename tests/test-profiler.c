/* test-profiler.c: the per-node timer on a real run of the bundled sample; the profiler's
 * events, memory and report on the static executor (live bytes against the plan's own
 * max-live bound) and through a loop (nested events inside the loop's, iterations reusing
 * each other's memory, the timer not confused by nesting). */
#include <glib.h>
#include <string.h>

#include "ds-backend.h"
#include "ds-node-timer.h"
#include "ds-profiler-private.h"
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

static DsSession *open_sample(void)
{
  const char *src = g_getenv("DS_SOURCE_DIR");
  g_autofree char *model = g_build_filename(src, "data", "sample", "sample-symbol.json", NULL);
  g_autofree char *params = g_build_filename(src, "data", "sample", "sample.params", NULL);
  g_autofree char *input = g_build_filename(src, "data", "sample", "sample-input.npy", NULL);
  GError *error = NULL;
  DsSession *session = ds_session_new(model, &error);
  g_assert_no_error(error);
  g_assert_true(ds_session_feed_params(session, params, &error));
  g_assert_true(ds_session_feed_npy(session, "data", input, &error));
  g_assert_true(ds_session_prepare(session, FALSE, 0, ds_backend_find("cpu"), 1, &error));
  return session;
}

static void profile_runs(DsSession *session, DsProfiler *profiler, int n)
{
  GError *error = NULL;
  ds_session_set_hooks(session, ds_profiler_get_hooks(), profiler);
  for (int i = 0; i < n; i++) {
    ds_profiler_begin_run(profiler);
    g_assert_true(ds_session_run(session, &error));
    ds_profiler_end_run(profiler);
  }
  ds_session_set_hooks(session, NULL, NULL);
}

/* Live bytes follow the plan: the peak is its max-live bound, which counts each buffer
 * rounded up to DS_PLAN_ALIGN bytes where the profiler counts exact bytes. */
static void test_profiler_static_memory(void)
{
  g_autoptr(DsSession) session = open_sample();
  g_autoptr(DsProfiler) profiler = ds_profiler_new(session);
  profile_runs(session, profiler, 2);
  DsGraph *graph = ds_session_get_graph(session);
  g_assert_cmpuint(ds_profiler_get_n_events(profiler), ==, 2 * ds_graph_count_ops(graph));
  const DsPlan *plan = ds_executor_get_plan(ds_session_get_executor(session));
  g_autofree char *where = NULL;
  gsize peak = ds_profiler_get_peak_live_bytes(profiler, &where);
  g_test_message("peak %zu at %s; plan max-live %zu in %u buffers, arena %zu", peak, where,
                 plan->max_live_bytes, plan->n_buffers, plan->arena_bytes);
  g_assert_cmpuint(peak, <=, plan->max_live_bytes);
  g_assert_cmpuint(peak + (gsize)DS_PLAN_ALIGN * plan->n_buffers, >=, plan->max_live_bytes);
  /* Both runs alike: the same fresh and reused bytes, node by node. */
  guint n = ds_profiler_get_n_events(profiler) / 2;
  gsize reused = 0;
  for (guint i = 0; i < n; i++) {
    const Event *a = &g_array_index(profiler->events, Event, i);
    const Event *b = &g_array_index(profiler->events, Event, i + n);
    g_assert_true(a->node == b->node);
    g_assert_cmpuint(a->fresh_bytes, ==, b->fresh_bytes);
    g_assert_cmpuint(a->reused_bytes, ==, b->reused_bytes);
    g_assert_cmpuint(a->live_bytes, ==, b->live_bytes);
    reused += a->reused_bytes;
  }
  g_assert_cmpuint(reused, >, 0); /* the plan reuses memory on this model */

  cJSON *report = ds_profiler_build_report(profiler, 1);
  g_assert_cmpstr(cJSON_GetObjectItem(report, "schema")->valuestring, ==, "dynscope-profile");
  g_assert_cmpint(cJSON_GetArraySize(cJSON_GetObjectItem(report, "events")), ==, 2 * n);
  cJSON_Delete(report);
}

/* Through a loop: its nodes nest inside the loop's event, per iteration, and each iteration
 * takes over the buffers of the one before. The plain timer counts the loop once per run. */
static void test_profiler_loop(void)
{
  const char *src = g_getenv("DS_SOURCE_DIR");
  g_autofree char *model =
      g_build_filename(src, "data", "control", "lstm-foreach-symbol.json", NULL);
  GError *error = NULL;
  g_autoptr(DsSession) session = ds_session_new(model, &error);
  DsShape shape;
  g_assert_true(ds_session_parse_shape(session, "(6, 4, 16)", &shape, &error));
  g_assert_true(ds_session_declare_shape(session, "data", &shape, &error));
  g_assert_true(ds_session_prepare(session, TRUE, 0, ds_backend_find("cpu"), 1, &error));
  g_autoptr(DsProfiler) profiler = ds_profiler_new(session);
  profile_runs(session, profiler, 1);

  guint n = ds_profiler_get_n_events(profiler);
  const Event *loop = &g_array_index(profiler->events, Event, n - 1);
  g_assert_cmpstr(loop->node->op_name, ==, "_foreach");
  guint per_iteration = 0, nested = 0;
  gsize reused_later = 0;
  for (guint i = 0; i + 1 < n; i++) {
    const Event *e = &g_array_index(profiler->events, Event, i);
    if (e->depth == 0)
      continue;
    g_assert_cmpuint(e->start_ns, >=, loop->start_ns);
    g_assert_cmpuint(e->end_ns, <=, loop->end_ns);
    nested++;
    per_iteration += e->iteration == 0;
    if (e->iteration > 0) {
      reused_later += e->reused_bytes;
      g_assert_cmpuint(e->fresh_bytes, ==, 0); /* memory does not grow with the iterations */
    }
  }
  g_assert_cmpuint(per_iteration, >, 0);
  g_assert_cmpuint(nested, ==, 6 * per_iteration);
  g_assert_cmpuint(reused_later, >, 0);

  g_autoptr(DsNodeTimer) timer = ds_node_timer_new(ds_session_get_graph(session)->n_nodes);
  ds_session_set_hooks(session, ds_node_timer_get_hooks(), timer);
  g_assert_true(ds_session_run(session, &error));
  g_assert_cmpuint(ds_node_timer_get_count(timer, loop->node->id), ==, 1);
  ds_session_set_hooks(session, NULL, NULL);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/profiler/static-memory", test_profiler_static_memory);
  g_test_add_func("/profiler/loop", test_profiler_loop);
  g_test_add_func("/profiler/node-timer/counts-every-op-node",
                  test_node_timer_counts_every_op_node);
  return g_test_run();
}
