/* ds-cli-run.c: --run: bind, run, and print a per-node table or save the outputs. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "ds-backend.h"
#include "ds-cli.h"
#include "ds-attr.h"
#include "ds-partition.h"
#include "ds-error.h"
#include "ds-expr.h"
#include "ds-memory.h"
#include "ds-node-timer.h"
#include "ds-npy.h"

static int compare_u64(const void *a, const void *b)
{
  guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
  return x < y ? -1 : x > y;
}

static char *format_bytes(gsize bytes)
{
  return g_format_size_full(bytes, G_FORMAT_SIZE_IEC_UNITS);
}

/* "packed weights: ..." when products packed weights for the micro-kernel (made once, kept
 * beside the weights: memory a user should see). */
static void print_packed_weights(DsSession *session)
{
  guint n;
  gsize bytes = ds_session_get_packed_weight_bytes(session, &n);
  if (bytes == 0)
    return;
  g_autofree char *text = format_bytes(bytes);
  printf("packed weights: %s (%u weight%s packed once for the GEMM micro-kernel)\n", text, n,
         n == 1 ? "" : "s");
}

/* "placement: 3 regions on cuda (41 op nodes), 2 on the host (3 op nodes); copies per run:
 * ..." when a device runs part of the model. */
static void print_placement(DsSession *session, const DsRunnerStats *st, int repeat)
{
  const DsPartition *placement = ds_session_get_placement(session);
  const DsBackend *device = ds_session_get_device(session);
  if (placement == NULL || device == NULL)
    return;
  guint device_regions = 0, device_nodes = 0, host_regions = 0, host_nodes = 0;
  for (guint r = 0; r < placement->n_regions; r++) {
    const DsRegion *region = &placement->regions[r];
    if (region->backend != NULL) {
      device_regions++;
      device_nodes += region->n_nodes;
    } else {
      host_regions++;
      host_nodes += region->n_nodes;
    }
  }
  g_autofree char *to_device = format_bytes(st->copy_to_device_bytes / (guint64)repeat);
  g_autofree char *to_host = format_bytes(st->copy_to_host_bytes / (guint64)repeat);
  printf("placement: %u region%s on %s (%u op nodes), %u on the host (%u op nodes); copies on "
         "region edges: %s to the device and %s back per run (weights once), %" G_GUINT64_FORMAT
         " tensors in all\n",
         device_regions, device_regions == 1 ? "" : "s", device->name, device_nodes, host_regions,
         host_nodes, to_device, to_host, st->n_copies);
}

/* "executor: dynamic, 3 regions (...)" and the memory lines, for either executor. */
static void print_executor_summary(DsSession *session, DsGraph *graph, int repeat)
{
  print_packed_weights(session);
  DsRunnerStats st;
  if (!ds_session_get_stats(session, &st))
    return;
  if (st.plan != NULL) {
    /* One plan for the whole graph. */
    const DsPlan *plan = st.plan;
    g_autofree char *arena = format_bytes(plan->arena_bytes);
    g_autofree char *total = format_bytes(plan->total_bytes);
    g_autofree char *live = format_bytes(plan->max_live_bytes);
    g_autofree char *ws = format_bytes(st.workspace_bytes);
    printf("executor: static (1 region), %u op nodes, %d run%s\n", ds_graph_count_ops(graph),
           repeat, repeat == 1 ? "" : "s");
    printf("memory: planned peak %s (%zu bytes) in %u buffers; without reuse %s; max-live "
           "bound %s; workspace %s\n",
           arena, plan->arena_bytes, plan->n_buffers, total, live, ws);
    return;
  }
  print_placement(session, &st, repeat);
  printf("executor: dynamic, %u regions (%u static on cached plans, %u dynamic-shape op%s, "
         "%u other op%s run imperatively), %u op nodes, %d run%s\n",
         st.n_regions + st.n_dynamic_nodes + st.n_imperative_nodes, st.n_regions,
         st.n_dynamic_nodes, st.n_dynamic_nodes == 1 ? "" : "s", st.n_imperative_nodes,
         st.n_imperative_nodes == 1 ? "" : "s", ds_graph_count_ops(graph), repeat,
         repeat == 1 ? "" : "s");
  /* The sizes the data decided in the last run. */
  DsExprCtx *exprs = ds_session_get_exprs(session);
  g_autoptr(GString) symbols = g_string_new(NULL);
  for (guint id = 0; id < ds_expr_ctx_get_n_symbols(exprs); id++) {
    const DsExpr *sym = ds_expr_ctx_get_symbol(exprs, id);
    int64_t value;
    if (ds_expr_is_unbacked(sym) &&
        ds_session_lookup_symbol(session, ds_expr_get_symbol_name(sym), &value))
      g_string_append_printf(symbols, "%s%s = %" G_GINT64_FORMAT, symbols->len ? ", " : "",
                             ds_expr_get_symbol_name(sym), value);
  }
  if (symbols->len > 0)
    printf("data-dependent sizes: %s\n", symbols->str);
  g_autofree char *held = format_bytes(st.memory_bytes);
  g_autofree char *pool = format_bytes(st.pool.bytes_held);
  printf("memory: %s held (region plans and workspaces, plus a pool of %u buffer%s, %s); "
         "%" G_GUINT64_FORMAT " allocations, %" G_GUINT64_FORMAT " re-plans\n",
         held, st.pool.n_buffers, st.pool.n_buffers == 1 ? "" : "s", pool, st.n_allocations,
         st.n_replans);
}

/* `node_ns[id]`: the time of the model graph's node `id` over all runs. */
static void print_table(DsSession *session, const guint64 *node_ns, int repeat,
                        const guint64 *run_ns)
{
  DsGraph *graph = ds_session_get_graph(session);
  const DsGraphShapes *shapes = ds_session_get_run_shapes(session);
  int name_width = 4;
  for (guint i = 0; i < graph->n_nodes; i++)
    if (!ds_node_is_variable(graph->nodes[i]))
      name_width = MAX(name_width, MIN(48, (int)strlen(graph->nodes[i]->name)));

  printf("%-*s  %-18s  %-22s  %10s\n", name_width, "node", "op", "output shape", "µs");
  guint64 total_ns = 0;
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    if (ds_node_is_variable(node))
      continue;
    g_autofree char *shape = ds_shape_to_string(&shapes->shapes[graph->node_row_ptr[i]]);
    double us = (double)node_ns[i] / repeat / 1000.0;
    total_ns += node_ns[i];
    printf("%-*.*s  %-18s  %-22s  %10.1f\n", name_width, name_width, node->name, node->op_name,
           shape, us);
  }
  guint64 sorted[repeat];
  memcpy(sorted, run_ns, sizeof sorted);
  qsort(sorted, (size_t)repeat, sizeof(guint64), compare_u64);
  printf("\n");
  print_executor_summary(session, graph, repeat);
  printf("time per run: %.3f ms in nodes (mean); wall median %.3f ms, min %.3f ms\n",
         (double)total_ns / repeat / 1e6, (double)sorted[repeat / 2] / 1e6,
         (double)sorted[0] / 1e6);
}

/* A file name from an output name: keep it readable, never leave the folder. */
static char *output_file_name(const char *name, guint index, GHashTable *used)
{
  g_autofree char *safe = g_strdup(name);
  for (char *p = safe; *p; p++)
    if (!g_ascii_isalnum(*p) && *p != '_' && *p != '-' && *p != '.')
      *p = '_';
  char *file = g_strdup_printf("%s.npy", safe);
  if (g_hash_table_contains(used, file)) {
    g_free(file);
    file = g_strdup_printf("%s_%u.npy", safe, index);
  }
  g_hash_table_add(used, g_strdup(file));
  return file;
}

/* The names of the files --save-outputs writes: one .npy per head, in head order, then
 * outputs.json. Known from the graph alone, so they can be checked before the run. */
static GPtrArray *output_files(DsGraph *graph)
{
  g_autoptr(GHashTable) used = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < graph->n_heads; i++) {
    g_autofree char *name = ds_graph_dup_output_name(graph, i);
    g_ptr_array_add(files, output_file_name(name, i, used));
  }
  g_ptr_array_add(files, g_strdup("outputs.json"));
  return files;
}

/* Makes the folders of `dir` that are missing, outermost first, adding each one made to
 * `created` so that a failure can take them away again. The message names the folder at
 * fault; the caller says which option it was. */
static gboolean make_folders(const char *dir, GPtrArray *created, GError **error)
{
  if (g_file_test(dir, G_FILE_TEST_IS_DIR))
    return TRUE;
  if (g_file_test(dir, G_FILE_TEST_EXISTS)) {
    g_set_error(error, DS_ERROR, DS_ERROR_IO, "%s is a file, in the way of a folder", dir);
    return FALSE;
  }
  g_autofree char *parent = g_path_get_dirname(dir);
  if (strcmp(parent, dir) != 0 && !make_folders(parent, created, error))
    return FALSE;
  if (g_mkdir(dir, 0755) != 0) {
    g_set_error(error, DS_ERROR, DS_ERROR_IO, "cannot create the folder %s: %s", dir,
                g_strerror(errno));
    return FALSE;
  }
  g_ptr_array_add(created, g_strdup(dir));
  return TRUE;
}

/* Removes the folders make_folders made, innermost first (only while they are empty). */
static void remove_folders(GPtrArray *created)
{
  for (guint i = created->len; i-- > 0;)
    g_rmdir(g_ptr_array_index(created, i));
  g_ptr_array_set_size(created, 0);
}

/* Checks before the run that --save-outputs can create every file it will write into `dir`:
 * the folder exists or can be made, a file can be created in it (not a read-only folder or
 * file system), and no name it writes is taken by a folder. A run of minutes should not end in
 * a half-written folder; this leaves nothing behind either (what it made to find out, it
 * removes). */
static gboolean check_save_outputs(DsGraph *graph, const char *dir, GError **error)
{
  g_autoptr(GPtrArray) created = g_ptr_array_new_with_free_func(g_free);
  gboolean ok = make_folders(dir, created, error);
  if (!ok)
    g_prefix_error(error, "--save-outputs %s: ", dir);
  if (ok) {
    g_autofree char *probe = g_build_filename(dir, ".dynscope-probe-XXXXXX", NULL);
    int fd = g_mkstemp_full(probe, O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) {
      g_set_error(error, DS_ERROR, DS_ERROR_IO, "--save-outputs %s: cannot create files there: %s",
                  dir, g_strerror(errno));
      ok = FALSE;
    } else {
      g_close(fd, NULL);
      g_unlink(probe);
    }
  }
  g_autoptr(GPtrArray) files = output_files(graph);
  for (guint i = 0; ok && i < files->len; i++) {
    const char *file = g_ptr_array_index(files, i);
    g_autofree char *path = g_build_filename(dir, file, NULL);
    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
      g_set_error(error, DS_ERROR, DS_ERROR_IO,
                  "--save-outputs %s: %s is a folder, in the way of the file it would write", dir,
                  file);
      ok = FALSE;
    }
  }
  remove_folders(created);
  return ok;
}

/* Writes the outputs and their listing. Should a write still fail (a full disk), the files
 * this call created and the folders it made are removed, so the folder is as it was, except
 * for files it had replaced. */
static gboolean save_outputs(DsSession *session, const char *dir, GError **error)
{
  DsGraph *graph = ds_session_get_graph(session);
  g_autoptr(GPtrArray) created = g_ptr_array_new_with_free_func(g_free);
  if (!make_folders(dir, created, error)) {
    g_prefix_error(error, "--save-outputs %s: ", dir);
    return FALSE;
  }
  g_autoptr(GPtrArray) files = output_files(graph);
  g_autoptr(GPtrArray) written = g_ptr_array_new_with_free_func(g_free);
  cJSON *root = cJSON_CreateObject();
  cJSON *outputs = cJSON_AddArrayToObject(root, "outputs");
  /* after the model's outputs, the gradients (--backward), each named by its variable */
  guint n_model = ds_session_get_n_model_outputs(session);
  cJSON *gradients =
      ds_session_get_n_gradients(session) > 0 ? cJSON_AddArrayToObject(root, "gradients") : NULL;
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < graph->n_heads; i++) {
    const DsTensor *t = ds_session_get_output(session, i);
    cJSON *list = i < n_model ? outputs : gradients;
    g_autofree char *name = i < n_model
                                ? ds_graph_dup_output_name(graph, i)
                                : g_strdup(ds_session_get_gradient_variable(session, i - n_model));
    const char *file = g_ptr_array_index(files, i);
    char *path = g_build_filename(dir, file, NULL);
    gboolean is_new = !g_file_test(path, G_FILE_TEST_EXISTS);
    ok = ds_npy_save(path, t, error);
    if (ok && is_new)
      g_ptr_array_add(written, path);
    else
      g_free(path);
    cJSON *item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "name", name);
    cJSON_AddStringToObject(item, "file", file);
    cJSON *shape = cJSON_AddArrayToObject(item, "shape");
    for (int d = 0; d < t->ndim; d++)
      cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->shape[d]));
    cJSON_AddStringToObject(item, "dtype", ds_dtype_name(t->dtype));
    cJSON_AddItemToArray(list, item);
  }
  if (ok) {
    char *text = cJSON_Print(root);
    g_autofree char *path = g_build_filename(dir, "outputs.json", NULL);
    g_autofree char *content = g_strconcat(text, "\n", NULL);
    cJSON_free(text);
    ok = g_file_set_contents(path, content, -1, error);
  }
  cJSON_Delete(root);
  if (!ok) {
    for (guint i = 0; i < written->len; i++)
      g_unlink(g_ptr_array_index(written, i));
    remove_folders(created);
  }
  return ok;
}

static int default_threads(void)
{
  return (int)MAX(1u, g_get_num_processors());
}

/* --sweep SYM=START:STOP[:STEP]: compile once, then one row per size. */
static int run_sweep(const DsCliOptions *options, int threads)
{
  GError *error = NULL;
  g_auto(GStrv) parts = NULL;
  g_autofree char *sym = NULL, *range = NULL;
  int64_t from = 0, to = 0, step = 1;
  const char *eq = strchr(options->sweep, '=');
  if (eq != NULL) {
    sym = g_strndup(options->sweep, (gsize)(eq - options->sweep));
    parts = g_strsplit(eq + 1, ":", 3);
  }
  if (parts == NULL || g_strv_length(parts) < 2 || !ds_attr_parse_int(parts[0], &from) ||
      !ds_attr_parse_int(parts[1], &to) ||
      (parts[2] != NULL && !ds_attr_parse_int(parts[2], &step)) || from < 0 || to < from ||
      step < 1 || (to - from) / step > 100000) {
    g_printerr("dynscope: --sweep %s: expected SYM=START:STOP[:STEP] with 0 <= START <= STOP, "
               "STEP >= 1\n",
               options->sweep);
    return 2;
  }
  g_autoptr(DsSession) session = ds_cli_open_session(options->run_model, options, &error);
  if (session == NULL || !ds_session_compile(session, ds_backend_find("cpu"), threads, &error))
    return ds_cli_fail(error);

  DsGraph *graph = ds_session_get_graph(session);
  printf("%-10s  %-24s  %12s  %12s  %14s\n", sym, "output shape", "resize µs", "run ms",
         ds_session_uses_dynamic_executor(session) ? "memory held" : "planned peak");
  for (int64_t v = from; v <= to; v += step) {
    ds_session_unbind_symbol(session, sym);
    if (!ds_session_bind_symbol(session, sym, v, &error) ||
        !ds_session_resize(session, options->random_inputs, (guint64)options->seed, &error))
      return ds_cli_fail(error);
    if (options->timeout_s > 0)
      ds_session_set_deadline(session, g_get_monotonic_time() + (gint64)(options->timeout_s * 1e6));
    guint64 run_ns[options->repeat];
    for (int r = 0; r < options->repeat; r++) {
      guint64 start = ds_monotonic_ns();
      if (!ds_session_run(session, &error))
        return ds_cli_fail(error);
      run_ns[r] = ds_monotonic_ns() - start;
    }
    qsort(run_ns, (size_t)options->repeat, sizeof(guint64), compare_u64);
    g_autofree char *shape = ds_shape_to_string(
        &ds_session_get_run_shapes(session)->shapes[ds_graph_entry_id(graph, graph->heads[0])]);
    DsRunnerStats st;
    ds_session_get_stats(session, &st);
    g_autofree char *peak = format_bytes(st.memory_bytes);
    printf("%-10" G_GINT64_FORMAT "  %-24s  %12.1f  %12.3f  %14s\n", v, shape,
           (double)ds_session_get_resize_ns(session) / 1e3,
           (double)run_ns[options->repeat / 2] / 1e6, peak);
  }
  return 0;
}

/* The bytes of the step outputs the backward pass added to loops (the states each iteration
 * started from, and with the save policy its forward values), after a run: the memory a
 * policy trades. */
static gsize loop_kept_bytes(DsSession *session)
{
  const DsGraph *graph = ds_session_get_graph(session);
  const DsGraphShapes *shapes = ds_session_get_run_shapes(session);
  gsize bytes = 0;
  for (guint i = 0; shapes != NULL && i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    const char *states = ds_node_get_attr(node, "__backward_saved_states__");
    const char *values = ds_node_get_attr(node, "__backward_saved_values__");
    const char *n_states = ds_node_get_attr(node, "num_outputs");
    const char *n_out = ds_node_get_attr(node, "num_out_data");
    if (states == NULL || values == NULL || n_states == NULL || n_out == NULL)
      continue;
    /* the kept outputs: from the model's own step outputs to the end of the step outputs */
    guint from = (guint)g_ascii_strtoull(states, NULL, 10);
    guint to = (guint)g_ascii_strtoull(n_out, NULL, 10);
    for (guint o = from; o < to && o < node->n_outputs; o++) {
      guint e = graph->node_row_ptr[i] + o;
      int64_t n = 1;
      for (int d = 0; d < shapes->shapes[e].ndim; d++)
        n *= shapes->shapes[e].dims[d].value;
      bytes += (gsize)n * ds_dtype_size(shapes->dtypes[e]);
    }
  }
  return bytes;
}

/* One policy's run for --what-if-recompute: its peak tensor memory (from opening the
 * session: inputs, weights, forward and backward), the median of `repeat` runs, and a copy of
 * every gradient. */
typedef struct {
  gsize peak_bytes;
  gsize kept_bytes; /* what the loops keep of their forward pass for the backward one */
  guint64 median_ns;
  GPtrArray *gradients; /* DsNDArray* */
} PolicyRun;

static gboolean run_policy(const DsCliOptions *options, const char *policy, int threads,
                           PolicyRun *out, GError **error)
{
  DsCliOptions o = *options;
  o.backward = TRUE;
  o.recompute = (char *)policy;
  ds_memory_reset_peak();
  gsize before = ds_memory_get_used_bytes();
  g_autoptr(DsSession) session = ds_cli_open_session(options->run_model, &o, error);
  if (session == NULL || !ds_session_prepare(session, options->random_inputs,
                                             (guint64)options->seed, ds_backend_find("cpu"),
                                             threads, error))
    return FALSE;
  g_autofree guint64 *ns = g_new(guint64, options->repeat);
  for (int r = 0; r < options->repeat; r++) {
    guint64 start = ds_monotonic_ns();
    if (!ds_session_run(session, error))
      return FALSE;
    ns[r] = ds_monotonic_ns() - start;
  }
  qsort(ns, (size_t)options->repeat, sizeof(guint64), compare_u64);
  out->median_ns = ns[options->repeat / 2];
  out->peak_bytes = ds_memory_get_peak_bytes() - before;
  out->kept_bytes = loop_kept_bytes(session);
  out->gradients = g_ptr_array_new_with_free_func((GDestroyNotify)ds_ndarray_free);
  guint n_model = ds_session_get_n_model_outputs(session);
  for (guint i = 0; i < ds_session_get_n_gradients(session); i++) {
    const DsTensor *t = ds_session_get_output(session, n_model + i);
    DsNDArray *copy = ds_ndarray_new(t->dtype, t->ndim, t->shape, "a gradient", error);
    if (copy == NULL)
      return FALSE;
    memcpy(copy->view.data, t->data, copy->nbytes);
    g_ptr_array_add(out->gradients, copy);
  }
  return TRUE;
}

/* The largest difference between two runs' gradients, bit for bit: 0 when identical. */
static double largest_difference(const GPtrArray *a, const GPtrArray *b)
{
  double worst = 0.0;
  for (guint i = 0; i < a->len && i < b->len; i++) {
    const DsTensor *x = &((DsNDArray *)g_ptr_array_index(a, i))->view;
    const DsTensor *y = &((DsNDArray *)g_ptr_array_index(b, i))->view;
    for (int64_t k = 0; k < ds_tensor_numel(x); k++)
      worst = MAX(worst, fabs(ds_tensor_load_f64(x->dtype, x->data, k) -
                              ds_tensor_load_f64(y->dtype, y->data, k)));
  }
  return worst;
}

/* --what-if-recompute: the forward and backward pass under each loop policy, from real runs
 * one after the other in this process: peak memory (everything held, inputs and weights
 * included), what the loops keep for the backward pass, median time, and whether the
 * gradients agree. */
static int run_what_if_recompute(const DsCliOptions *options, int threads)
{
  /* checkpointing every 16 rows, or as often as --recompute checkpoint:K says */
  const char *checkpoint = options->recompute != NULL &&
                                   g_str_has_prefix(options->recompute, "checkpoint:")
                               ? options->recompute
                               : "checkpoint:16";
  const char *const policies[] = {"save", "auto", "recompute", checkpoint};
  PolicyRun runs[G_N_ELEMENTS(policies)] = {{0}};
  GError *error = NULL;
  int status = 0;
  for (guint i = 0; i < G_N_ELEMENTS(policies) && status == 0; i++)
    if (!run_policy(options, policies[i], threads, &runs[i], &error))
      status = ds_cli_fail(error);
  if (status == 0) {
    printf("%-14s  %12s  %8s  %12s  %8s  %10s  %8s  %s\n", "policy", "peak memory", "vs save",
           "loops keep", "vs save", "run ms", "vs save", "gradients");
    for (guint i = 0; i < G_N_ELEMENTS(policies); i++) {
      g_autofree char *peak = format_bytes(runs[i].peak_bytes);
      g_autofree char *kept = format_bytes(runs[i].kept_bytes);
      double diff = largest_difference(runs[0].gradients, runs[i].gradients);
      g_autofree char *same = i == 0 ? g_strdup("")
                              : diff == 0.0 ? g_strdup("identical to save")
                                            : g_strdup_printf("differ from save by up to %.3g", diff);
      /* no loop: nothing kept to compare */
      g_autofree char *kept_ratio =
          runs[0].kept_bytes == 0
              ? g_strdup("-")
              : g_strdup_printf("%.2fx", (double)runs[i].kept_bytes / (double)runs[0].kept_bytes);
      printf("%-14s  %12s  %7.2fx  %12s  %8s  %10.3f  %7.2fx  %s\n", policies[i], peak,
             (double)runs[i].peak_bytes / (double)MAX(runs[0].peak_bytes, 1u), kept, kept_ratio,
             (double)runs[i].median_ns / 1e6,
             (double)runs[i].median_ns / (double)MAX(runs[0].median_ns, 1u), same);
    }
  }
  for (guint i = 0; i < G_N_ELEMENTS(policies); i++)
    if (runs[i].gradients != NULL)
      g_ptr_array_unref(runs[i].gradients);
  return status;
}

int ds_cli_run(const DsCliOptions *options)
{
  GError *error = NULL;
  int threads = options->threads > 0 ? options->threads : default_threads();
  gboolean debug = options->trace_steps || options->breaks != NULL;
  if (debug && (options->sweep != NULL || options->repeat > 1)) {
    g_printerr("dynscope: --trace-steps and --break run once: drop --%s\n",
               options->sweep != NULL ? "sweep" : "repeat");
    return 2;
  }
  if (options->sweep != NULL)
    return run_sweep(options, threads);
  if (options->what_if_recompute)
    return run_what_if_recompute(options, threads);
  g_autoptr(DsSession) session = ds_cli_open_session(options->run_model, options, &error);
  if (session == NULL ||
      (options->save_outputs != NULL &&
       !check_save_outputs(ds_session_get_graph(session), options->save_outputs, &error)) ||
      !ds_session_prepare(session, options->random_inputs, (guint64)options->seed,
                          ds_backend_find("cpu"), threads, &error))
    return ds_cli_fail(error);

  if (options->timeout_s > 0)
    ds_session_set_deadline(session, g_get_monotonic_time() + (gint64)(options->timeout_s * 1e6));
  if (debug) {
    int status = ds_cli_debug_run(options, session);
    if (status == 0 && options->save_outputs != NULL &&
        !save_outputs(session, options->save_outputs, &error))
      return ds_cli_fail(error);
    return status;
  }

  DsGraph *graph = ds_session_get_graph(session);
  if (!ds_cli_check_budget_options(options, &error))
    return ds_cli_fail(error);
  /* The full profiler when a report or budget needs it; else the per-node timer for the
   * table, which costs less. */
  g_autoptr(DsProfiler) profiler =
      ds_cli_profiling_wanted(options) ? ds_profiler_new(session) : NULL;
  g_autoptr(DsNodeTimer) timer = ds_node_timer_new(graph->n_nodes);
  gboolean table = options->save_outputs == NULL;
  if (profiler != NULL)
    ds_session_set_hooks(session, ds_profiler_get_hooks(), profiler);
  else if (table)
    ds_session_set_hooks(session, ds_node_timer_get_hooks(), timer);

  guint64 *run_ns = g_new0(guint64, options->repeat);
  gboolean ok = TRUE;
  for (int r = 0; ok && r < options->repeat; r++) {
    if (profiler != NULL)
      ds_profiler_begin_run(profiler);
    guint64 start = ds_monotonic_ns();
    ok = ds_session_run(session, &error);
    run_ns[r] = ds_monotonic_ns() - start;
    if (profiler != NULL && ok)
      ds_profiler_end_run(profiler);
  }
  ds_session_set_hooks(session, NULL, NULL);
  if (ok && options->save_outputs != NULL)
    ok = save_outputs(session, options->save_outputs, &error);
  if (ok && table) {
    g_autofree guint64 *node_ns = g_new0(guint64, graph->n_nodes + 1);
    for (guint i = 0; i < graph->n_nodes; i++)
      node_ns[i] = profiler != NULL ? ds_profiler_get_node_total_ns(profiler, i)
                                    : ds_node_timer_get_total_ns(timer, i);
    print_table(session, node_ns, options->repeat, run_ns);
  }
  if (ok && profiler != NULL)
    ok = ds_cli_write_reports(options, profiler, threads, &error);
  int status = ok ? 0 : ds_cli_fail(error);
  if (ok && (profiler != NULL || options->max_ms > 0)) {
    guint64 sorted[options->repeat];
    memcpy(sorted, run_ns, sizeof sorted);
    qsort(sorted, (size_t)options->repeat, sizeof(guint64), compare_u64);
    status = ds_cli_check_budgets(options, profiler, sorted[options->repeat / 2], options->repeat);
  }
  g_free(run_ns);
  return status;
}
