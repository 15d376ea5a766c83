/* ds-cli-debug.c: --run with --trace-steps and --break, on the debug cursor. */
#include <stdio.h>
#include <string.h>

#include "ds-backend.h"
#include "ds-cli.h"
#include "ds-cursor.h"
#include "ds-tensor-stats.h"

static char *shape_text(const DsTensor *t)
{
  DsShape s = ds_shape_from_concrete(t->shape, t->ndim);
  return ds_shape_to_string(&s);
}

/* "(4, 64)" or "(4, 64), (4,)" for a node's outputs. */
static char *outputs_text(const DsNode *node, const DsTensor *outputs)
{
  GString *text = g_string_new(NULL);
  for (guint k = 0; k < ds_node_n_op_outputs(node); k++) {
    g_autofree char *shape = shape_text(&outputs[k]);
    g_string_append_printf(text, "%s%s", k > 0 ? ", " : "", shape);
  }
  return g_string_free(text, FALSE);
}

static void print_trace_line(DsCursor *cursor, const DsNode *node)
{
  g_autofree char *path = ds_cursor_dup_path(cursor);
  g_autofree char *shapes = outputs_text(node, ds_cursor_get_outputs(cursor));
  printf("%6" G_GUINT64_FORMAT "  %-40s  %-22s  %s\n", ds_cursor_get_n_steps(cursor), path,
         node->op_name, shapes);
}

static void print_tensor_line(const char *role, guint k, const char *name, const DsTensor *t)
{
  DsTensorStats stats;
  ds_tensor_get_stats(t, &stats);
  g_autofree char *shape = shape_text(t);
  g_autofree char *summary = ds_tensor_stats_to_string(&stats);
  printf("  %-6s %u  %-28s  %-8s %-16s  %s\n", role, k, name, ds_dtype_name(t->dtype), shape,
         summary);
}

/* The node's inputs and outputs with their statistics, or a region's name. */
static void print_stop(DsCursor *cursor)
{
  g_autofree char *path = ds_cursor_dup_path(cursor);
  const DsBreakpoint *bp = ds_cursor_get_breakpoint(cursor, ds_cursor_get_hit(cursor));
  const DsNode *node = ds_cursor_get_node(cursor);
  printf("breakpoint %u '%s' at %s%s%s%s, step %" G_GUINT64_FORMAT "\n", ds_cursor_get_hit(cursor),
         bp != NULL ? ds_breakpoint_get_spec(bp) : "", path, node != NULL ? " (" : " (region",
         node != NULL ? node->op_name : "", ")", ds_cursor_get_n_steps(cursor));
  if (node == NULL)
    return;
  DsGraph *graph = ds_cursor_get_frame(cursor, ds_cursor_get_n_frames(cursor) - 1)->graph;
  const DsTensor *inputs = ds_cursor_get_inputs(cursor), *outputs = ds_cursor_get_outputs(cursor);
  for (guint k = 0; k < node->n_inputs; k++) {
    g_autofree char *name = ds_graph_dup_entry_name(graph, node->inputs[k]);
    print_tensor_line("input", k, name, &inputs[k]);
  }
  for (guint k = 0; k < ds_node_n_op_outputs(node); k++) {
    g_autofree char *name =
        ds_graph_dup_entry_name(graph, (DsEntry){.node_id = node->id, .index = k});
    print_tensor_line("output", k, name, &outputs[k]);
  }
}

int ds_cli_debug_run(const DsCliOptions *options, DsSession *session)
{
  GError *error = NULL;
  g_autoptr(DsCursor) cursor = ds_cursor_new(session);
  for (char **spec = options->breaks; spec != NULL && *spec != NULL; spec++)
    if (ds_cursor_add_breakpoint(cursor, *spec, &error) == 0)
      return ds_cli_fail(error);
  if (options->trace_steps)
    printf("%6s  %-40s  %-22s  %s\n", "step", "path", "op", "output shape");

  guint n_hits = 0;
  for (;;) {
    DsCursorStop stop = options->trace_steps ? ds_cursor_step_into(cursor, &error)
                                             : ds_cursor_continue(cursor, &error);
    if (stop == DS_CURSOR_FAILED)
      return ds_cli_fail(error);
    if (stop == DS_CURSOR_FINISHED)
      break;
    const DsNode *node = ds_cursor_get_node(cursor);
    if (options->trace_steps && node != NULL)
      print_trace_line(cursor, node);
    if (stop == DS_CURSOR_BREAKPOINT) {
      n_hits++;
      print_stop(cursor);
    }
  }
  printf("finished: %" G_GUINT64_FORMAT " steps, %u breakpoint stop%s\n",
         ds_cursor_get_n_steps(cursor), n_hits, n_hits == 1 ? "" : "s");
  return 0;
}
