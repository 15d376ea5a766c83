/* test-cursor.c: the debug cursor. The exact stop sequence of step, step into and step out
 * through a nested loop; breakpoints by node, op, iteration, symbol and tensor statistic, and
 * their errors; tensors read at every stop equal to what the same run produces unpaused, and
 * live tensors still holding what their nodes wrote; frames for loops, branches and saved
 * partition regions; reset, cancel and freeing a paused cursor. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "ds-backend.h"
#include "ds-cursor.h"
#include "ds-error.h"
#include "ds-mxnet-json.h"
#include "ds-ndarray.h"
#include "ds-partition.h"
#include "ds-session.h"

/* An outer _foreach over data (2, 3, 2) whose body runs an inner _foreach over its row, both
 * carrying s (2,): inner_add0 = x + s, the running sum over every row of every row. */
static const char nested_json[] =
    "{\"nodes\": ["
    " {\"op\": \"null\", \"name\": \"data\", \"attrs\": {\"__shape__\": \"(2, 3, 2)\"}, "
    "\"inputs\": []},"
    " {\"op\": \"null\", \"name\": \"s0\", \"attrs\": {\"__shape__\": \"(2,)\"}, \"inputs\": []},"
    " {\"op\": \"_foreach\", \"name\": \"outer_foreach0\", \"attrs\": {\"in_data_locs\": \"[0]\", "
    "\"in_state_locs\": \"[1]\", \"num_args\": \"3\", \"num_out_data\": \"1\", "
    "\"num_outputs\": \"2\", \"remain_locs\": \"[]\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]],"
    "  \"subgraphs\": [{\"nodes\": ["
    "   {\"op\": \"null\", \"name\": \"row\", \"inputs\": []},"
    "   {\"op\": \"null\", \"name\": \"s\", \"inputs\": []},"
    "   {\"op\": \"_foreach\", \"name\": \"inner_foreach0\", \"attrs\": {\"in_data_locs\": "
    "\"[0]\", "
    "\"in_state_locs\": \"[1]\", \"num_args\": \"3\", \"num_out_data\": \"1\", "
    "\"num_outputs\": \"2\", \"remain_locs\": \"[]\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]],"
    "    \"subgraphs\": [{\"nodes\": ["
    "     {\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
    "     {\"op\": \"null\", \"name\": \"s\", \"inputs\": []},"
    "     {\"op\": \"elemwise_add\", \"name\": \"inner_add0\", \"inputs\": [[0, 0, 0], [1, 0, 0]]},"
    "     {\"op\": \"_copy\", \"name\": \"inner_copy0\", \"inputs\": [[2, 0, 0]]}],"
    "     \"arg_nodes\": [0, 1], \"node_row_ptr\": [0, 1, 2, 3, 4], "
    "\"heads\": [[2, 0, 0], [3, 0, 0]]}]}],"
    "   \"arg_nodes\": [0, 1], \"node_row_ptr\": [0, 1, 2, 4], \"heads\": [[2, 0, 0], [2, 1, "
    "0]]}]}],"
    " \"arg_nodes\": [0, 1], \"node_row_ptr\": [0, 1, 2, 4], \"heads\": [[2, 0, 0], [2, 1, 0]],"
    " \"attrs\": {\"mxnet_version\": [\"int\", 10600]}}";

static char *tmp_dir;

static char *source_path(const char *dir, const char *name)
{
  const char *src = g_getenv("DS_SOURCE_DIR");
  return g_build_filename(src != NULL ? src : "..", "data", dir, name, NULL);
}

/* A prepared session (random inputs, seed 1) for `path`, with "NAME=SHAPE" declarations. */
static DsSession *open_session(const char *path, const char *const *shapes)
{
  GError *error = NULL;
  DsSession *session = ds_session_new(path, &error);
  g_assert_no_error(error);
  for (const char *const *s = shapes; s != NULL && *s != NULL; s++) {
    g_auto(GStrv) kv = g_strsplit(*s, "=", 2);
    DsShape shape;
    g_assert_true(ds_session_parse_shape(session, kv[1], &shape, &error));
    g_assert_true(ds_session_declare_shape(session, kv[0], &shape, &error));
  }
  g_assert_true(ds_session_prepare(session, TRUE, 1, ds_backend_find("cpu"), 1, &error));
  g_assert_no_error(error);
  return session;
}

static DsSession *open_nested(void)
{
  g_autofree char *path = g_build_filename(tmp_dir, "nested-symbol.json", NULL);
  g_assert_true(g_file_set_contents(path, nested_json, -1, NULL));
  return open_session(path, NULL);
}

static void assert_stop(DsCursor *cursor, DsCursorStop got, DsCursorStop want, const char *path)
{
  g_assert_cmpint(got, ==, want);
  g_autofree char *where = ds_cursor_dup_path(cursor);
  g_assert_cmpstr(where, ==, path);
}

/* ---- stepping ---- */

static void test_step_into_sequence(void)
{
  g_autoptr(DsSession) session = open_nested();
  g_autoptr(DsCursor) cursor = ds_cursor_new(session);
  g_autoptr(GPtrArray) want = g_ptr_array_new_with_free_func(g_free);
  for (int t = 0; t < 2; t++) {
    for (int u = 0; u < 3; u++)
      for (int k = 0; k < 2; k++)
        g_ptr_array_add(want, g_strdup_printf("outer_foreach0/iter%d/inner_foreach0/iter%d/%s", t,
                                              u, k == 0 ? "inner_add0" : "inner_copy0"));
    g_ptr_array_add(want, g_strdup_printf("outer_foreach0/iter%d/inner_foreach0", t));
  }
  g_ptr_array_add(want, g_strdup("outer_foreach0"));
  GError *error = NULL;
  for (guint i = 0; i < want->len; i++) {
    assert_stop(cursor, ds_cursor_step_into(cursor, &error), DS_CURSOR_STEPPED, want->pdata[i]);
    g_assert_cmpuint(ds_cursor_get_n_steps(cursor), ==, i + 1);
  }
  g_assert_cmpint(ds_cursor_step_into(cursor, &error), ==, DS_CURSOR_FINISHED);
  g_assert_no_error(error);
  g_assert_false(ds_cursor_is_paused(cursor));
}

static void test_step_over_and_out(void)
{
  g_autoptr(DsSession) session = open_nested();
  g_autoptr(DsCursor) cursor = ds_cursor_new(session);
  GError *error = NULL;
  /* From the start, step runs the whole top-level loop. */
  assert_stop(cursor, ds_cursor_step(cursor, &error), DS_CURSOR_STEPPED, "outer_foreach0");
  g_assert_cmpuint(ds_cursor_get_n_steps(cursor), ==, 15);
  g_assert_cmpint(ds_cursor_step(cursor, &error), ==, DS_CURSOR_FINISHED);

  /* A new run: into the innermost body, then over, out, over a whole inner loop, out. */
  const char *inner = "outer_foreach0/iter0/inner_foreach0/iter0";
  g_autofree char *add0 = g_strdup_printf("%s/inner_add0", inner);
  assert_stop(cursor, ds_cursor_step_into(cursor, &error), DS_CURSOR_STEPPED, add0);
  g_assert_cmpuint(ds_cursor_get_n_frames(cursor), ==, 3);
  const DsCursorFrame *frame = ds_cursor_get_frame(cursor, 2);
  g_assert_cmpint(frame->kind, ==, DS_FRAME_SUBGRAPH);
  g_assert_cmpstr(frame->owner->name, ==, "inner_foreach0");
  g_assert_cmpstr(frame->name, ==, "body");
  g_assert_cmpint(frame->iteration, ==, 0);
  g_assert_cmpint(ds_cursor_get_frame(cursor, 0)->kind, ==, DS_FRAME_GRAPH);
  g_autofree char *copy0 = g_strdup_printf("%s/inner_copy0", inner);
  assert_stop(cursor, ds_cursor_step(cursor, &error), DS_CURSOR_STEPPED, copy0);
  assert_stop(cursor, ds_cursor_step(cursor, &error), DS_CURSOR_STEPPED,
              "outer_foreach0/iter0/inner_foreach0/iter1/inner_add0");
  g_assert_cmpint(ds_cursor_get_iteration(cursor), ==, 1);
  assert_stop(cursor, ds_cursor_step_out(cursor, &error), DS_CURSOR_STEPPED,
              "outer_foreach0/iter0/inner_foreach0");
  g_assert_cmpint(ds_cursor_get_iteration(cursor), ==, 0);
  assert_stop(cursor, ds_cursor_step(cursor, &error), DS_CURSOR_STEPPED,
              "outer_foreach0/iter1/inner_foreach0");
  assert_stop(cursor, ds_cursor_step_out(cursor, &error), DS_CURSOR_STEPPED, "outer_foreach0");
  g_assert_cmpint(ds_cursor_get_iteration(cursor), ==, -1);
  g_assert_cmpint(ds_cursor_step_out(cursor, &error), ==, DS_CURSOR_FINISHED);
  g_assert_no_error(error);
}

/* The running sum at outer row t, inner row u, from the session's inputs. */
static void expected_sum(DsSession *session, int t, int u, float out[2])
{
  DsGraph *graph = ds_session_get_graph(session);
  const float *data = ds_session_get_entry(session, graph->node_row_ptr[0])->data;
  const float *s0 = ds_session_get_entry(session, graph->node_row_ptr[1])->data;
  out[0] = s0[0];
  out[1] = s0[1];
  for (int i = 0; i <= t * 3 + u; i++) {
    out[0] += data[i * 2];
    out[1] += data[i * 2 + 1];
  }
}

static void test_breakpoint_at_iteration(void)
{
  g_autoptr(DsSession) session = open_nested();
  g_autoptr(DsCursor) cursor = ds_cursor_new(session);
  GError *error = NULL;
  guint id = ds_cursor_add_breakpoint(cursor, "inner_add0 if iter==2", &error);
  g_assert_no_error(error);
  g_assert_cmpuint(id, ==, 1);
  for (int t = 0; t < 2; t++) {
    g_autofree char *path =
        g_strdup_printf("outer_foreach0/iter%d/inner_foreach0/iter2/inner_add0", t);
    assert_stop(cursor, ds_cursor_continue(cursor, &error), DS_CURSOR_BREAKPOINT, path);
    g_assert_cmpuint(ds_cursor_get_hit(cursor), ==, id);
    float want[2];
    expected_sum(session, t, 2, want);
    const float *got = ds_cursor_get_outputs(cursor)[0].data;
    g_assert_cmpfloat_with_epsilon(got[0], want[0], 1e-5);
    g_assert_cmpfloat_with_epsilon(got[1], want[1], 1e-5);
  }
  g_assert_cmpint(ds_cursor_continue(cursor, &error), ==, DS_CURSOR_FINISHED);

  /* By op type, with a statistic: the first elemwise_add whose outputs' max passes the sum's
   * value at (0, 1); and a one-time run_to. */
  g_assert_true(ds_cursor_remove_breakpoint(cursor, id));
  g_assert_false(ds_cursor_remove_breakpoint(cursor, id));
  float at01[2];
  expected_sum(session, 0, 1, at01);
  g_autofree char *spec = g_strdup_printf("elemwise_add if max>=%.9g", MAX(at01[0], at01[1]));
  float at00[2];
  expected_sum(session, 0, 0, at00);
  if (MAX(at00[0], at00[1]) < MAX(at01[0], at01[1])) {
    assert_stop(cursor, ds_cursor_run_to(cursor, spec, &error), DS_CURSOR_BREAKPOINT,
                "outer_foreach0/iter0/inner_foreach0/iter1/inner_add0");
    g_assert_null(ds_cursor_get_breakpoint(cursor, ds_cursor_get_hit(cursor) + 1));
    g_assert_cmpint(ds_cursor_continue(cursor, &error), ==, DS_CURSOR_FINISHED); /* it is gone */
  }
  g_assert_no_error(error);
}

static void test_breakpoint_errors(void)
{
  g_autoptr(DsSession) session = open_nested();
  g_autoptr(DsCursor) cursor = ds_cursor_new(session);
  static const struct {
    const char *spec, *says;
  } cases[] = {
      {"", "expected a node name"},
      {"inner_add0 when iter==1", "expected 'if CONDITION'"},
      {"inner_add0 if iter=1", "expected ==, !=, <, <=, > or >= after 'iter'"},
      {"inner_add0 if iter==", "expected a number after 'iter =='"},
      {"inner_add0 if 3==iter", "must start with iter"},
      {"inner_add0 if s7>1", "'s7' is not iter, nan, inf, min, max, mean, numel or a symbol"},
      {"no_such_node", "no node, op or region"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    GError *error = NULL;
    g_assert_cmpuint(ds_cursor_add_breakpoint(cursor, cases[i].spec, &error), ==, 0);
    g_assert_error(error, DS_ERROR, DS_ERROR_INPUT);
    if (strstr(error->message, cases[i].says) == NULL)
      g_error("'%s': '%s' does not say '%s'", cases[i].spec, error->message, cases[i].says);
    g_error_free(error);
  }
  /* Ops and nodes inside subgraphs, and any node. */
  GError *error = NULL;
  g_assert_cmpuint(ds_cursor_add_breakpoint(cursor, "_copy", &error), >, 0);
  g_assert_cmpuint(ds_cursor_add_breakpoint(cursor, "* if nan>0 && numel>=2", &error), >, 0);
  g_assert_no_error(error);
}

/* ---- tensors at stops ---- */

typedef struct {
  GPtrArray *names;   /* per node run: its name */
  GPtrArray *outputs; /* per node run: GBytes of all its outputs, concatenated */
} Capture;

static GBytes *outputs_bytes(const DsNode *node, const DsTensor *outputs)
{
  GByteArray *bytes = g_byte_array_new();
  for (guint k = 0; k < ds_node_n_op_outputs(node); k++)
    g_byte_array_append(bytes, outputs[k].data, (guint)ds_tensor_nbytes(&outputs[k]));
  return g_byte_array_free_to_bytes(bytes);
}

static void capture_end(gpointer data, const DsNode *node, const DsTensor *inputs,
                        const DsTensor *outputs)
{
  Capture *c = data;
  (void)inputs;
  g_ptr_array_add(c->names, g_strdup(node->name));
  g_ptr_array_add(c->outputs, outputs_bytes(node, outputs));
}

static gboolean tensor_equals(const DsTensor *t, GBytes *bytes)
{
  gsize n;
  const void *data = g_bytes_get_data(bytes, &n);
  return n == ds_tensor_nbytes(t) && memcmp(t->data, data, n) == 0;
}

/* Steps through the whole run node by node: each stop's outputs equal the unpaused run's for
 * the same node, and every live tensor still holds what it held when its node ran. */
static void check_stops_match_run(DsSession *session, const char *first_break)
{
  GError *error = NULL;
  Capture capture = {g_ptr_array_new_with_free_func(g_free),
                     g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref)};
  const DsExecutorHooks hooks = {.node_end = capture_end};
  ds_session_set_hooks(session, &hooks, &capture);
  g_assert_true(ds_session_run(session, &error));
  ds_session_set_hooks(session, NULL, NULL);
  g_assert_cmpuint(capture.names->len, >, 0);

  g_autoptr(DsCursor) cursor = ds_cursor_new(session);
  /* Keyed by "depth/graph/entry": the bytes each live tensor had when written. */
  g_autoptr(GHashTable) written =
      g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_bytes_unref);
  guint n = 0, n_live_checked = 0;
  gboolean broke = first_break == NULL;
  if (first_break != NULL)
    g_assert_cmpuint(ds_cursor_add_breakpoint(cursor, first_break, &error), >, 0);
  for (;;) {
    DsCursorStop stop = ds_cursor_step_into(cursor, &error);
    g_assert_no_error(error);
    if (stop == DS_CURSOR_FINISHED)
      break;
    broke |= stop == DS_CURSOR_BREAKPOINT;
    const DsNode *node = ds_cursor_get_node(cursor);
    if (node == NULL)
      continue; /* the end of a region */
    g_assert_cmpuint(n, <, capture.names->len);
    g_assert_cmpstr(node->name, ==, capture.names->pdata[n]);
    g_autoptr(GBytes) now = outputs_bytes(node, ds_cursor_get_outputs(cursor));
    g_assert_true(g_bytes_equal(now, capture.outputs->pdata[n]));
    n++;

    guint depth = ds_cursor_get_n_frames(cursor) - 1;
    DsGraph *graph = ds_cursor_get_frame(cursor, depth)->graph;
    for (guint k = 0; k < ds_node_n_op_outputs(node); k++) {
      const DsTensor *t = &ds_cursor_get_outputs(cursor)[k];
      g_hash_table_replace(
          written,
          g_strdup_printf("%u/%p/%u", depth, (void *)graph, graph->node_row_ptr[node->id] + k),
          g_bytes_new(t->data, ds_tensor_nbytes(t)));
    }
    g_autoptr(GArray) live = ds_cursor_list_live(cursor);
    for (guint i = 0; i < live->len; i++) {
      const DsCursorTensor *item = &g_array_index(live, DsCursorTensor, i);
      g_autofree char *key =
          g_strdup_printf("%u/%p/%u", item->frame,
                          (void *)ds_cursor_get_frame(cursor, item->frame)->graph, item->entry);
      GBytes *bytes = g_hash_table_lookup(written, key);
      g_assert_nonnull(item->name);
      if (bytes == NULL)
        continue; /* an input of the model or of the subgraph */
      if (!tensor_equals(item->tensor, bytes))
        g_error("at %s: live tensor %s (frame %u) no longer holds what was written", node->name,
                item->name, item->frame);
      n_live_checked++;
    }
  }
  g_assert_cmpuint(n, ==, capture.names->len);
  g_assert_cmpuint(n_live_checked, >, 0);
  g_assert_true(broke);
  g_ptr_array_unref(capture.names);
  g_ptr_array_unref(capture.outputs);
}

static void test_tensors_lstm(void)
{
  g_autofree char *path = source_path("control", "lstm-foreach-symbol.json");
  const char *shapes[] = {"data=(5, 4, 16)", NULL};
  g_autoptr(DsSession) session = open_session(path, shapes);
  check_stops_match_run(session, "lstm_h2h if iter==3");
}

/* A backward pass steps like a forward one: its nodes stop with what the plain run computed,
 * into the backward loop's iterations, under either loop policy. */
static void test_backward_lstm(void)
{
  g_autofree char *path = source_path("control", "lstm-foreach-symbol.json");
  static const DsLoopPolicy policies[] = {
      {DS_LOOP_RECOMPUTE, 0}, {DS_LOOP_SAVE, 0}, {DS_LOOP_CHECKPOINT, 5}};
  for (guint policy = 0; policy < G_N_ELEMENTS(policies); policy++) {
    GError *error = NULL;
    g_autoptr(DsSession) session = ds_session_new(path, &error);
    g_assert_no_error(error);
    DsShape shape;
    g_assert_true(ds_session_parse_shape(session, "(5, 4, 16)", &shape, &error));
    g_assert_true(ds_session_declare_shape(session, "data", &shape, &error));
    g_assert_true(ds_session_add_backward(session, NULL, policies[policy], &error));
    g_assert_true(ds_session_prepare(session, TRUE, 1, ds_backend_find("cpu"), 1, &error));
    g_assert_no_error(error);
    check_stops_match_run(session, "lstm_i2h_backward_dot if iter==3");

    g_autoptr(DsCursor) cursor = ds_cursor_new(session);
    /* checkpointing, the backward loop runs segments, each a loop of its own: with 5 rows
     * in one segment, the innermost iteration is the one the condition names */
    assert_stop(cursor, ds_cursor_run_to(cursor, "lstm_i2h_backward_dot if iter==1", &error),
                DS_CURSOR_BREAKPOINT,
                policies[policy].keep == DS_LOOP_CHECKPOINT
                    ? "lstm_foreach0_backward_foreach/iter0/lstm_foreach0_segment_backward_foreach/"
                      "iter1/lstm_i2h_backward_dot"
                    : "lstm_foreach0_backward_foreach/iter1/lstm_i2h_backward_dot");
    g_assert_no_error(error);
  }
}

static void test_tensors_decoder(void)
{
  g_autofree char *path = source_path("control", "greedy-decoder-symbol.json");
  g_autoptr(DsSession) session = open_session(path, NULL);
  check_stops_match_run(session, "_while_loop");
}

static void test_tensors_static(void)
{
  g_autofree char *path = source_path("sample", "sample-symbol.json");
  const char *shapes[] = {"data=(2, 1, 28, 28)", NULL};
  g_autoptr(DsSession) session = open_session(path, shapes);
  g_assert_nonnull(ds_session_get_executor(session)); /* the static executor */
  check_stops_match_run(session, "Convolution if mean>-1e30");
}

/* A saved partition: regions are frames, a breakpoint can name one, step runs one whole. */
static void test_region_frames(void)
{
  GError *error = NULL;
  g_autofree char *src = source_path("dynamic", "boolean-mask-symbol.json");
  g_autoptr(DsGraph) graph = ds_mxnet_json_load(src, &error);
  g_assert_no_error(error);
  const DsSubgraphProperty *prop = ds_subgraph_property_find("static-dynamic");
  g_autoptr(DsPartition) partition = ds_partition_label(graph, prop, &error);
  g_autoptr(DsGraph) built = ds_partition_build(partition, prop, NULL, &error);
  g_assert_no_error(error);
  g_autofree char *path = g_build_filename(tmp_dir, "partitioned-symbol.json", NULL);
  g_assert_true(ds_mxnet_json_save(built, path, &error));
  const char *shapes[] = {"data=(6, 8)", NULL};
  g_autoptr(DsSession) session = open_session(path, shapes);
  g_autoptr(DsCursor) cursor = ds_cursor_new(session);

  assert_stop(cursor, ds_cursor_step_into(cursor, &error), DS_CURSOR_STEPPED, "static0/fc0");
  g_assert_cmpint(ds_cursor_get_frame(cursor, 1)->kind, ==, DS_FRAME_REGION);
  g_assert_cmpstr(ds_cursor_get_frame(cursor, 1)->name, ==, "static0");
  assert_stop(cursor, ds_cursor_step_out(cursor, &error), DS_CURSOR_STEPPED, "static0");
  g_assert_null(ds_cursor_get_node(cursor));
  assert_stop(cursor, ds_cursor_step(cursor, &error), DS_CURSOR_STEPPED, "boolean_mask0");
  /* The mask's count is the unbacked symbol u0, bound now: a condition can test it. */
  int64_t u0;
  g_assert_true(ds_session_lookup_symbol(session, "u0", &u0));
  g_assert_cmpint(ds_cursor_get_outputs(cursor)[0].shape[0], ==, u0);
  assert_stop(cursor, ds_cursor_step(cursor, &error), DS_CURSOR_STEPPED, "static2");
  assert_stop(cursor, ds_cursor_step(cursor, &error), DS_CURSOR_STEPPED, "nonzero0");
  g_assert_cmpint(ds_cursor_step(cursor, &error), ==, DS_CURSOR_FINISHED);

  g_autofree char *spec = g_strdup_printf("static2 if u0==%" G_GINT64_FORMAT, u0);
  g_assert_cmpuint(ds_cursor_add_breakpoint(cursor, spec, &error), >, 0);
  assert_stop(cursor, ds_cursor_continue(cursor, &error), DS_CURSOR_BREAKPOINT, "static2");
  g_assert_cmpint(ds_cursor_continue(cursor, &error), ==, DS_CURSOR_FINISHED);
  g_assert_no_error(error);
  g_unlink(path);
}

/* A NaN in the data: `* if nan>0` stops at the first node that reads it, in its iteration. */
static void test_nan_breakpoint(void)
{
  g_autofree char *path = source_path("control", "lstm-foreach-symbol.json");
  const char *shapes[] = {"data=(5, 4, 16)", NULL};
  g_autoptr(DsSession) session = open_session(path, shapes);
  DsGraph *graph = ds_session_get_graph(session);
  float *data = NULL;
  for (guint i = 0; i < graph->n_nodes; i++)
    if (strcmp(graph->nodes[i]->name, "data") == 0)
      data = ds_session_get_entry(session, graph->node_row_ptr[i])->data;
  g_assert_nonnull(data);
  data[2 * 4 * 16 + 5] = NAN; /* row 2 */
  g_autoptr(DsCursor) cursor = ds_cursor_new(session);
  GError *error = NULL;
  g_assert_cmpuint(ds_cursor_add_breakpoint(cursor, "* if nan>0", &error), ==, 1);
  assert_stop(cursor, ds_cursor_continue(cursor, &error), DS_CURSOR_BREAKPOINT,
              "lstm_foreach0/iter2/lstm_i2h");
  const DsTensor *x = &ds_cursor_get_inputs(cursor)[0];
  g_assert_true(isnan(((const float *)x->data)[5]));
}

/* ---- ending runs early ---- */

static void test_reset_and_free_paused(void)
{
  g_autoptr(DsSession) session = open_nested();
  GError *error = NULL;
  g_assert_true(ds_session_run(session, &error));
  float want[2];
  memcpy(want, ds_session_get_output(session, 1)->data, sizeof want);

  DsCursor *cursor = ds_cursor_new(session);
  g_assert_cmpint(ds_cursor_step_into(cursor, &error), ==, DS_CURSOR_STEPPED);
  ds_cursor_reset(cursor); /* the rest of that run never happens */
  g_assert_false(ds_cursor_is_paused(cursor));
  assert_stop(cursor, ds_cursor_step_into(cursor, &error), DS_CURSOR_STEPPED,
              "outer_foreach0/iter0/inner_foreach0/iter0/inner_add0");
  g_assert_cmpuint(ds_cursor_get_n_steps(cursor), ==, 1);
  g_assert_cmpint(ds_cursor_continue(cursor, &error), ==, DS_CURSOR_FINISHED);
  g_assert_cmpmem(ds_session_get_output(session, 1)->data, sizeof want, want, sizeof want);

  /* Cancel: the command fails with DS_ERROR_CANCELLED, and the next one starts over. */
  g_assert_cmpint(ds_cursor_step_into(cursor, &error), ==, DS_CURSOR_STEPPED);
  ds_cursor_cancel(cursor);
  g_assert_cmpint(ds_cursor_continue(cursor, &error), ==, DS_CURSOR_FAILED);
  g_assert_error(error, DS_ERROR, DS_ERROR_CANCELLED);
  g_clear_error(&error);
  g_assert_cmpint(ds_cursor_step_into(cursor, &error), ==, DS_CURSOR_STEPPED);
  ds_cursor_free(cursor); /* while paused */

  /* The session runs plainly again, hooks gone, to the same result. */
  g_assert_true(ds_session_run(session, &error));
  g_assert_cmpmem(ds_session_get_output(session, 1)->data, sizeof want, want, sizeof want);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("ds-cursor-XXXXXX", NULL);
  g_test_add_func("/cursor/step-into-sequence", test_step_into_sequence);
  g_test_add_func("/cursor/step-over-and-out", test_step_over_and_out);
  g_test_add_func("/cursor/breakpoint-at-iteration", test_breakpoint_at_iteration);
  g_test_add_func("/cursor/breakpoint-errors", test_breakpoint_errors);
  g_test_add_func("/cursor/tensors-lstm", test_tensors_lstm);
  g_test_add_func("/cursor/tensors-decoder", test_tensors_decoder);
  g_test_add_func("/cursor/backward-lstm", test_backward_lstm);
  g_test_add_func("/cursor/tensors-static", test_tensors_static);
  g_test_add_func("/cursor/region-frames", test_region_frames);
  g_test_add_func("/cursor/nan-breakpoint", test_nan_breakpoint);
  g_test_add_func("/cursor/reset-and-free-paused", test_reset_and_free_paused);
  int status = g_test_run();
  g_autofree char *nested = g_build_filename(tmp_dir, "nested-symbol.json", NULL);
  g_unlink(nested);
  g_rmdir(tmp_dir);
  g_free(tmp_dir);
  return status;
}
