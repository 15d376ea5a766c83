/* ds-window-inspector.c: what the selected node is, did in the last run, and holds at a stop. */
#include "ds-window-private.h"

#include <glib/gi18n.h>
#include <string.h>

#include "ds-tensor-stats.h"

/* Whether `node` is one of the model graph's own nodes (shapes are known for those only;
 * nodes inside loop bodies have theirs per iteration). */
static gboolean in_model_graph(DsGraph *graph, const DsNode *node)
{
  return node != NULL && node->id < graph->n_nodes && graph->nodes[node->id] == node;
}

static char *shape_text(const DsGraphShapes *shapes, guint entry)
{
  if (shapes == NULL)
    return NULL;
  const DsShape *s = &shapes->shapes[entry];
  return s->ndim >= 0 ? ds_shape_to_string(s) : NULL;
}

/* "in 0  data  (s0, 16) = (8, 16)": the symbolic shape, and the concrete one after a run
 * where it says more. */
static void append_entry(DsWindow *w, GString *text, DsGraph *graph, const char *role, guint k,
                         DsEntry entry)
{
  g_autofree char *name = ds_graph_dup_entry_name(graph, entry);
  guint id = ds_graph_entry_id(graph, entry);
  g_autofree char *symbolic = shape_text(w->shapes, id);
  const DsGraphShapes *run = w->debugger != NULL && ds_debugger_get_report(w->debugger) != NULL
                                 ? ds_session_get_run_shapes(w->session)
                                 : NULL;
  g_autofree char *concrete = shape_text(run, id);
  g_autofree char *escaped = g_markup_escape_text(name, -1);
  g_string_append_printf(text, "  %s %u  <tt>%s</tt>  %s", role, k, escaped,
                         symbolic != NULL ? symbolic : "?");
  if (concrete != NULL && (symbolic == NULL || strcmp(concrete, symbolic) != 0))
    g_string_append_printf(text, " = %s", concrete);
  g_string_append_c(text, '\n');
}

static void append_last_run(DsWindow *w, GString *text, const DsVizNode *n)
{
  const DsVizNodeProfile *np =
      w->profile != NULL && n->key != NULL ? g_hash_table_lookup(w->profile, n->key) : NULL;
  if (np == NULL)
    return;
  g_autofree char *total = ds_viz_format_ns(np->total_ns);
  g_autofree char *mean = ds_viz_format_ns(np->count > 0 ? np->total_ns / np->count : 0);
  g_autofree char *fresh = g_format_size(np->fresh);
  g_autofree char *reused = g_format_size(np->reused);
  g_string_append_printf(text, "\n<b>%s</b>\n", _("last run"));
  g_string_append_printf(text,
                         ngettext("  time %s in %lu execution (mean %s)\n",
                                  "  time %s in %lu executions (mean %s)\n", np->count),
                         total, (unsigned long)np->count, mean);
  if (np->has_gpu) {
    g_autofree char *gpu = ds_viz_format_ns(np->gpu_ns);
    g_string_append_printf(text, _("  GPU kernel time %s\n"), gpu);
  }
  g_string_append_printf(text, _("  memory: fresh %s, reused %s\n"), fresh, reused);
  if (np->last_shapes != NULL)
    g_string_append_printf(text, _("  last output shapes %s\n"), np->last_shapes);
}

static void append_tensor(GString *text, const char *role, guint k, const char *name,
                          const DsTensor *t)
{
  DsTensorStats stats;
  ds_tensor_get_stats(t, &stats);
  g_autofree char *line = ds_tensor_stats_to_string(&stats);
  g_autofree char *escaped = g_markup_escape_text(name, -1);
  g_autofree char *escaped_line = g_markup_escape_text(line, -1);
  g_autoptr(GString) shape = g_string_new("(");
  for (int d = 0; d < t->ndim; d++)
    g_string_append_printf(shape, "%s%" G_GINT64_FORMAT, d > 0 ? ", " : "", t->shape[d]);
  g_string_append(shape, t->ndim == 1 ? ",)" : ")");
  g_string_append_printf(text, "  %s %u  <tt>%s</tt>  %s %s\n    <small>%s</small>\n", role, k,
                         escaped, ds_dtype_name(t->dtype), shape->str, escaped_line);
}

/* At a stop on this node: its inputs and outputs, with statistics and first values. */
static void append_stop(DsWindow *w, GString *text, const DsNode *node)
{
  DsCursor *cursor = ds_debugger_get_cursor(w->debugger);
  if (!w->stopped || node == NULL || ds_cursor_get_node(cursor) != node)
    return;
  guint n_frames = ds_cursor_get_n_frames(cursor);
  DsGraph *graph = ds_cursor_get_frame(cursor, n_frames - 1)->graph;
  g_string_append_printf(text, "\n<b>%s</b>\n", _("at this stop"));
  const DsTensor *inputs = ds_cursor_get_inputs(cursor);
  for (guint k = 0; k < node->n_inputs; k++) {
    g_autofree char *name = ds_graph_dup_entry_name(graph, node->inputs[k]);
    append_tensor(text, _("in"), k, name, &inputs[k]);
  }
  const DsTensor *outputs = ds_cursor_get_outputs(cursor);
  for (guint k = 0; k < ds_node_n_op_outputs(node); k++) {
    g_autofree char *name =
        ds_graph_dup_entry_name(graph, (DsEntry){.node_id = node->id, .index = k});
    append_tensor(text, _("out"), k, name, &outputs[k]);
  }
}

static gboolean has_breakpoint_on(DsWindow *w, const char *name)
{
  DsCursor *cursor = w->debugger != NULL ? ds_debugger_get_cursor(w->debugger) : NULL;
  for (guint i = 0; cursor != NULL && i < w->breakpoints->len; i++) {
    const DsWindowBreakpoint *b = w->breakpoints->pdata[i];
    const DsBreakpoint *bp = ds_cursor_get_breakpoint(cursor, b->id);
    if (bp != NULL && strcmp(ds_breakpoint_get_target(bp), name) == 0)
      return TRUE;
  }
  return FALSE;
}

void ds_window_inspect(DsWindow *w, gint index)
{
  const DsVizScene *scene = ds_graph_canvas_get_scene(DS_GRAPH_CANVAS(w->canvas));
  const DsVizNode *n =
      scene != NULL && index >= 0 ? &g_array_index(scene->nodes, DsVizNode, index) : NULL;
  gboolean op = n != NULL && n->node != NULL && !ds_node_is_variable(n->node);
  gtk_widget_set_sensitive(w->breakpoint_button, op);
  gtk_widget_set_sensitive(w->condition_entry, op);
  gtk_button_set_label(GTK_BUTTON(w->breakpoint_button),
                       op && has_breakpoint_on(w, n->node->name) ? _("Clear Breakpoint")
                                                                  : _("Set Breakpoint"));
  if (n == NULL) {
    gtk_label_set_markup(GTK_LABEL(w->inspector),
                         _("<i>Select a node to see its op, attributes and shapes.</i>"));
    return;
  }
  g_autoptr(GString) text = g_string_new(NULL);
  g_autofree char *id = g_markup_escape_text(n->id, -1);
  g_string_append_printf(text, "<b>%s</b>\n", id);
  const DsNode *node = n->node;
  DsGraph *graph = ds_session_get_graph(w->session);
  gboolean top = in_model_graph(graph, node);
  if (node == NULL) {
    g_string_append(text, _("A collapsed region or loop: double-click it to expand it.\n"));
  } else if (ds_node_is_variable(node)) {
    g_string_append_printf(text, "%s\n", n->kind == DS_VIZ_NODE_WEIGHT ? _("weight") : _("input"));
    if (top)
      append_entry(w, text, graph, _("shape"), 0, (DsEntry){.node_id = node->id});
  } else {
    g_autofree char *op_name = g_markup_escape_text(node->op_name, -1);
    g_string_append_printf(text, "%s <tt>%s</tt>\n\n<b>%s</b>\n", _("op"), op_name,
                           _("attributes"));
    for (guint a = 0; a < node->n_attrs; a++) {
      if (g_str_has_prefix(node->attrs[a].key, "__"))
        continue;
      g_autofree char *key = g_markup_escape_text(node->attrs[a].key, -1);
      g_autofree char *value = g_markup_escape_text(node->attrs[a].value, -1);
      g_string_append_printf(text, "  %s = <tt>%s</tt>\n", key, value);
    }
    if (top) {
      g_string_append_printf(text, "\n<b>%s</b>\n", _("inputs"));
      for (guint k = 0; k < node->n_inputs; k++)
        append_entry(w, text, graph, _("in"), k, node->inputs[k]);
      g_string_append_printf(text, "\n<b>%s</b>\n", _("outputs"));
      for (guint k = 0; k < ds_node_n_op_outputs(node); k++)
        append_entry(w, text, graph, _("out"), k, (DsEntry){.node_id = node->id, .index = k});
    }
    append_last_run(w, text, n);
    append_stop(w, text, node);
  }
  gtk_label_set_markup(GTK_LABEL(w->inspector), text->str);
}

const char *ds_window_get_inspector_text(DsWindow *w)
{
  return gtk_label_get_text(GTK_LABEL(w->inspector));
}

/* The same request as F9 or the canvas's menu: the canvas's signal, which the debugger part
 * answers (it may refuse with a banner while a run is going). */
static void on_breakpoint_clicked(GtkButton *button, DsWindow *w)
{
  (void)button;
  g_signal_emit_by_name(w->canvas, "toggle-breakpoint",
                        ds_graph_canvas_get_selected(DS_GRAPH_CANVAS(w->canvas)));
}

static void on_condition_activate(GtkEntry *entry, DsWindow *w)
{
  (void)entry;
  on_breakpoint_clicked(NULL, w);
}

GtkWidget *ds_window_build_inspector(DsWindow *w)
{
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 8);
  gtk_widget_set_margin_start(box, 12);
  gtk_widget_set_margin_end(box, 12);
  gtk_widget_set_margin_top(box, 12);
  gtk_widget_set_margin_bottom(box, 12);
  w->inspector = gtk_label_new(NULL);
  gtk_label_set_wrap(GTK_LABEL(w->inspector), TRUE);
  gtk_label_set_wrap_mode(GTK_LABEL(w->inspector), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_selectable(GTK_LABEL(w->inspector), TRUE);
  gtk_label_set_xalign(GTK_LABEL(w->inspector), 0);
  gtk_label_set_yalign(GTK_LABEL(w->inspector), 0);
  gtk_box_append(GTK_BOX(box), w->inspector);

  GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
  w->breakpoint_button = gtk_button_new_with_label(_("Set Breakpoint"));
  gtk_widget_set_tooltip_text(w->breakpoint_button,
                              _("Stop when this node has run, if the condition holds (F9)"));
  g_signal_connect(w->breakpoint_button, "clicked", G_CALLBACK(on_breakpoint_clicked), w);
  w->condition_entry = gtk_entry_new();
  gtk_entry_set_placeholder_text(GTK_ENTRY(w->condition_entry), _("condition: iter==2 && nan>0"));
  gtk_widget_set_tooltip_text(
      w->condition_entry,
      _("Optional: iter, nan, inf, min, max, mean, numel or a symbol, compared with == != < <= "
        "> >=, joined by &&"));
  gtk_widget_set_hexpand(w->condition_entry, TRUE);
  g_signal_connect(w->condition_entry, "activate", G_CALLBACK(on_condition_activate), w);
  gtk_box_append(GTK_BOX(row), w->breakpoint_button);
  gtk_box_append(GTK_BOX(row), w->condition_entry);
  gtk_box_append(GTK_BOX(box), row);
  return box;
}
