/* ds-bindings-panel.c: symbol and input rows, and applying them to a session. */
#include "ds-bindings-panel.h"

#include <glib/gi18n.h>
#include <string.h>

#include "ds-error.h"
#include "ds-expr.h"

#define DEFAULT_SIZE 8 /* a free symbol's value until one is typed, clamped into its range */

typedef struct {
  char *name;
  GtkWidget *entry; /* NULL for symbols that are not set by hand */
  int64_t lo, hi, fallback;
} SymbolRow;

typedef struct {
  char *name;
  char *path; /* the .npy file, or NULL: random data */
  GtkWidget *shape_entry; /* a declared shape, "(1, 3, s1, s1)", or empty: the file's */
  GtkWidget *file_label, *clear;
  DsBindingsPanel *panel;
} InputRow;

struct _DsBindingsPanel {
  GtkBox parent;
  DsSession *session;
  const DsGraphShapes *shapes;
  GtkWidget *symbols, *inputs; /* GtkGrids */
  GtkWidget *derived, *derived_expander; /* data-dependent and derived symbols, out of the way */
  GPtrArray *symbol_rows, *input_rows;
  gboolean pending; /* shown values (defaults included) not applied to the session yet */
};

G_DEFINE_FINAL_TYPE(DsBindingsPanel, ds_bindings_panel, GTK_TYPE_BOX)

enum { SIGNAL_APPLY_REQUESTED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void symbol_row_free(gpointer data)
{
  SymbolRow *r = data;
  g_free(r->name);
  g_free(r);
}

static void input_row_free(gpointer data)
{
  InputRow *r = data;
  g_free(r->name);
  g_free(r->path);
  g_free(r);
}

static void clear_grid(GtkWidget *grid)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child(grid)) != NULL)
    gtk_grid_remove(GTK_GRID(grid), child);
}

static GtkWidget *dim_label(const char *text)
{
  GtkWidget *label = gtk_label_new(text);
  gtk_label_set_xalign(GTK_LABEL(label), 0);
  gtk_widget_add_css_class(label, "dim-label");
  return label;
}

/* A symbol's or input's name: long ones (SSD's anchors) ellipsized in the middle, whole in the
 * tooltip, so that they do not widen the sidebar. */
static GtkWidget *name_label(const char *text)
{
  GtkWidget *label = gtk_label_new(text);
  gtk_label_set_xalign(GTK_LABEL(label), 0);
  gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_MIDDLE);
  gtk_label_set_width_chars(GTK_LABEL(label), 6);
  gtk_widget_set_hexpand(label, TRUE);
  gtk_widget_set_tooltip_text(label, text);
  gtk_widget_add_css_class(label, "monospace");
  return label;
}

static char *range_text(int64_t lo, int64_t hi)
{
  if (hi >= INT64_MAX / 2)
    return g_strdup_printf("[%" G_GINT64_FORMAT ", ∞)", lo);
  return g_strdup_printf("[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]", lo, hi);
}

/* ---- symbols ---- */

static void mark_pending(DsBindingsPanel *p)
{
  p->pending = TRUE;
}

static void on_entry_activate(GtkEntry *entry, DsBindingsPanel *p)
{
  (void)entry;
  g_signal_emit(p, signals[SIGNAL_APPLY_REQUESTED], 0);
}

/* Whether every model input has a known shape: symbols come from the inputs' shapes. */
static gboolean inputs_known(DsBindingsPanel *p)
{
  DsGraph *graph = ds_session_get_graph(p->session);
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    if (!ds_node_is_variable(node) ||
        ds_session_classify_variable(p->session, node) != DS_VARIABLE_DATA)
      continue;
    const DsShape *shape = p->shapes != NULL ? &p->shapes->shapes[graph->node_row_ptr[i]] : NULL;
    if (shape == NULL || !ds_shape_is_known(shape))
      return FALSE;
  }
  return TRUE;
}

/* Symbols to type a value for first; the data-dependent and derived ones (hundreds in a
 * detection model) in an expander below them. */
static void fill_symbols(DsBindingsPanel *p)
{
  clear_grid(p->symbols);
  clear_grid(p->derived);
  g_ptr_array_set_size(p->symbol_rows, 0);
  DsExprCtx *exprs = ds_session_get_exprs(p->session);
  int row = 0, derived = 0;
  for (guint id = 0; id < ds_expr_ctx_get_n_symbols(exprs); id++) {
    const DsExpr *symbol = ds_expr_ctx_get_symbol(exprs, id);
    const DsExpr *resolved = ds_expr_resolve(exprs, symbol);
    SymbolRow *r = g_new0(SymbolRow, 1);
    r->name = g_strdup(ds_expr_get_symbol_name(symbol));
    ds_expr_ctx_get_range(exprs, resolved, &r->lo, &r->hi);
    r->fallback = CLAMP(DEFAULT_SIZE, r->lo, r->hi);
    gboolean settable = !ds_expr_is_unbacked(symbol) && resolved == symbol;
    GtkWidget *grid = settable ? p->symbols : p->derived;
    int at = settable ? row++ : derived++;
    GtkWidget *name = name_label(r->name);
    gtk_grid_attach(GTK_GRID(grid), name, 0, at, 1, 1);
    g_autofree char *range = range_text(r->lo, r->hi);
    if (ds_expr_is_unbacked(symbol)) {
      g_autofree char *text = g_strdup_printf(_("data-dependent, %s"), range);
      gtk_grid_attach(GTK_GRID(grid), dim_label(text), 1, at, 2, 1);
    } else if (!settable) {
      g_autofree char *expr = ds_expr_to_string(resolved);
      g_autofree char *text = g_strdup_printf(_("= %s"), expr);
      gtk_grid_attach(GTK_GRID(grid), dim_label(text), 1, at, 2, 1);
    } else {
      r->entry = gtk_entry_new();
      g_autofree char *hint = g_strdup_printf("%" G_GINT64_FORMAT, r->fallback);
      gtk_entry_set_placeholder_text(GTK_ENTRY(r->entry), hint);
      gtk_editable_set_width_chars(GTK_EDITABLE(r->entry), 8);
      gtk_entry_set_input_purpose(GTK_ENTRY(r->entry), GTK_INPUT_PURPOSE_DIGITS);
      g_autofree char *tip = g_strdup_printf(_("A value for %s in %s (empty: %s)"), r->name, range,
                                             hint);
      gtk_widget_set_tooltip_text(r->entry, tip);
      g_signal_connect(r->entry, "activate", G_CALLBACK(on_entry_activate), p);
      g_signal_connect_swapped(r->entry, "changed", G_CALLBACK(mark_pending), p);
      gtk_grid_attach(GTK_GRID(grid), r->entry, 1, at, 1, 1);
      gtk_grid_attach(GTK_GRID(grid), dim_label(range), 2, at, 1, 1);
    }
    g_ptr_array_add(p->symbol_rows, r);
  }
  if (row == 0)
    gtk_grid_attach(GTK_GRID(p->symbols),
                    dim_label(inputs_known(p) ? _("No symbols to set: every input's size is known.")
                                              : _("No symbols yet: declare the shapes of the "
                                                  "inputs shown with ? above.")),
                    0, 0, 3, 1);
  g_autofree char *title = g_strdup_printf(
      ngettext("%d data-dependent or derived symbol", "%d data-dependent or derived symbols",
               derived),
      derived);
  gtk_expander_set_label(GTK_EXPANDER(p->derived_expander), title);
  gtk_widget_set_visible(p->derived_expander, derived > 0);
}

static SymbolRow *find_symbol(DsBindingsPanel *p, const char *name)
{
  for (guint i = 0; i < p->symbol_rows->len; i++) {
    SymbolRow *r = p->symbol_rows->pdata[i];
    if (strcmp(r->name, name) == 0)
      return r;
  }
  return NULL;
}

gboolean ds_bindings_panel_set_value(DsBindingsPanel *p, const char *name, const char *text)
{
  SymbolRow *r = find_symbol(p, name);
  if (r == NULL || r->entry == NULL)
    return FALSE;
  gtk_editable_set_text(GTK_EDITABLE(r->entry), text);
  return TRUE;
}

/* The typed value, or the default when empty; FALSE with an error if it is not a size. */
static gboolean symbol_value(SymbolRow *r, int64_t *value, GError **error)
{
  g_autofree char *text = g_strstrip(g_strdup(gtk_editable_get_text(GTK_EDITABLE(r->entry))));
  if (text[0] == '\0') {
    *value = r->fallback;
    return TRUE;
  }
  guint64 v;
  if (!g_ascii_string_to_unsigned(text, 10, 0, G_MAXINT64, &v, NULL)) {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT, _("symbol %s: '%s' is not a size"), r->name,
                text);
    return FALSE;
  }
  if ((int64_t)v < r->lo || (int64_t)v > r->hi) {
    g_autofree char *range = range_text(r->lo, r->hi);
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT, _("symbol %s: %s is outside its range %s"),
                r->name, text, range);
    return FALSE;
  }
  *value = (int64_t)v;
  return TRUE;
}

gint64 ds_bindings_panel_get_value(DsBindingsPanel *p, const char *name)
{
  SymbolRow *r = find_symbol(p, name);
  int64_t value;
  if (r == NULL || r->entry == NULL || !symbol_value(r, &value, NULL))
    return -1;
  return value;
}

/* ---- inputs ---- */

static void show_input_file(InputRow *r)
{
  g_autofree char *base = r->path != NULL ? g_path_get_basename(r->path) : NULL;
  gtk_label_set_text(GTK_LABEL(r->file_label), base != NULL ? base : _("random"));
  gtk_widget_set_tooltip_text(r->file_label, r->path);
  gtk_widget_set_visible(r->clear, r->path != NULL);
}

static void on_file_chosen(GtkNativeDialog *dialog, int response, InputRow *r)
{
  if (response == GTK_RESPONSE_ACCEPT) {
    g_autoptr(GFile) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
    char *path = file != NULL ? g_file_get_path(file) : NULL;
    if (path != NULL) {
      g_free(r->path);
      r->path = path;
      r->panel->pending = TRUE;
      show_input_file(r);
    }
  }
  g_object_unref(dialog);
}

static void on_load_clicked(GtkButton *button, InputRow *r)
{
  GtkRoot *root = gtk_widget_get_root(GTK_WIDGET(button));
  g_autofree char *title = g_strdup_printf(_("Feed %s from an .npy file"), r->name);
  GtkFileChooserNative *dialog =
      gtk_file_chooser_native_new(title, GTK_WINDOW(root), GTK_FILE_CHOOSER_ACTION_OPEN,
                                  _("_Load"), _("_Cancel"));
  GtkFileFilter *filter = gtk_file_filter_new();
  gtk_file_filter_set_name(filter, _("NumPy arrays (.npy)"));
  gtk_file_filter_add_pattern(filter, "*.npy");
  gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(dialog), filter);
  g_signal_connect(dialog, "response", G_CALLBACK(on_file_chosen), r);
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(dialog));
}

static void on_clear_clicked(GtkButton *button, InputRow *r)
{
  (void)button;
  g_clear_pointer(&r->path, g_free);
  r->panel->pending = TRUE;
  show_input_file(r);
}

static void fill_inputs(DsBindingsPanel *p)
{
  clear_grid(p->inputs);
  g_ptr_array_set_size(p->input_rows, 0);
  DsGraph *graph = ds_session_get_graph(p->session);
  int row = 0;
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    if (!ds_node_is_variable(node) ||
        ds_session_classify_variable(p->session, node) != DS_VARIABLE_DATA)
      continue;
    InputRow *r = g_new0(InputRow, 1);
    r->panel = p;
    r->name = g_strdup(node->name);
    GtkWidget *name = name_label(node->name);
    gtk_grid_attach(GTK_GRID(p->inputs), name, 0, row, 1, 1);
    const DsShape *shape =
        p->shapes != NULL ? &p->shapes->shapes[graph->node_row_ptr[i]] : NULL;
    g_autofree char *shape_text = shape != NULL && shape->ndim >= 0 ? ds_shape_to_string(shape)
                                                                    : g_strdup("?");
    r->shape_entry = gtk_entry_new();
    gtk_entry_set_placeholder_text(GTK_ENTRY(r->shape_entry), shape_text);
    gtk_widget_set_tooltip_text(r->shape_entry,
                                _("Declare this input's shape, with sizes or symbols: "
                                  "(1, 3, 224, 224), (s0, 16). Empty: the model's."));
    g_signal_connect(r->shape_entry, "activate", G_CALLBACK(on_entry_activate), p);
    g_signal_connect_swapped(r->shape_entry, "changed", G_CALLBACK(mark_pending), p);
    gtk_grid_attach(GTK_GRID(p->inputs), r->shape_entry, 1, row, 2, 1);
    r->file_label = gtk_label_new(NULL);
    gtk_label_set_xalign(GTK_LABEL(r->file_label), 0);
    gtk_label_set_ellipsize(GTK_LABEL(r->file_label), PANGO_ELLIPSIZE_MIDDLE);
    gtk_widget_set_hexpand(r->file_label, TRUE);
    gtk_grid_attach(GTK_GRID(p->inputs), r->file_label, 0, row + 1, 1, 1);
    GtkWidget *load = gtk_button_new_from_icon_name("document-open-symbolic");
    g_autofree char *tip = g_strdup_printf(_("Feed %s from an .npy file"), node->name);
    gtk_widget_set_tooltip_text(load, tip);
    g_signal_connect(load, "clicked", G_CALLBACK(on_load_clicked), r);
    gtk_grid_attach(GTK_GRID(p->inputs), load, 1, row + 1, 1, 1);
    r->clear = gtk_button_new_from_icon_name("edit-clear-symbolic");
    gtk_widget_set_tooltip_text(r->clear, _("Use random data"));
    g_signal_connect(r->clear, "clicked", G_CALLBACK(on_clear_clicked), r);
    gtk_grid_attach(GTK_GRID(p->inputs), r->clear, 2, row + 1, 1, 1);
    show_input_file(r);
    g_ptr_array_add(p->input_rows, r);
    row += 2;
  }
}

gboolean ds_bindings_panel_set_input_file(DsBindingsPanel *p, const char *name, const char *path)
{
  for (guint i = 0; i < p->input_rows->len; i++) {
    InputRow *r = p->input_rows->pdata[i];
    if (strcmp(r->name, name) == 0) {
      g_free(r->path);
      r->path = g_strdup(path);
      p->pending = TRUE;
      show_input_file(r);
      return TRUE;
    }
  }
  return FALSE;
}

gboolean ds_bindings_panel_set_input_shape(DsBindingsPanel *p, const char *name,
                                           const char *text)
{
  for (guint i = 0; i < p->input_rows->len; i++) {
    InputRow *r = p->input_rows->pdata[i];
    if (strcmp(r->name, name) == 0) {
      gtk_editable_set_text(GTK_EDITABLE(r->shape_entry), text != NULL ? text : "");
      return TRUE;
    }
  }
  return FALSE;
}

static const char *declared_text(InputRow *r)
{
  const char *text = gtk_editable_get_text(GTK_EDITABLE(r->shape_entry));
  while (g_ascii_isspace(*text))
    text++;
  return text;
}

gboolean ds_bindings_panel_declares_shapes(DsBindingsPanel *p)
{
  for (guint i = 0; i < p->input_rows->len; i++)
    if (*declared_text(p->input_rows->pdata[i]) != '\0')
      return TRUE;
  return FALSE;
}

/* ---- applying ---- */

static void mark_entry(GtkWidget *entry, gboolean bad)
{
  if (bad)
    gtk_widget_add_css_class(entry, "error");
  else
    gtk_widget_remove_css_class(entry, "error");
}

/* Every data input without a file gets the shape the bindings give it (its file shape may
 * leave a dim unknown, which random data cannot fill). */
static gboolean declare_input_shapes(DsBindingsPanel *p, GError **error)
{
  if (p->shapes == NULL)
    return TRUE;
  g_autoptr(DsGraphShapes) concrete = ds_session_evaluate(p->session, p->shapes, TRUE, error);
  if (concrete == NULL)
    return FALSE;
  DsGraph *graph = ds_session_get_graph(p->session);
  for (guint i = 0; i < p->input_rows->len; i++) {
    InputRow *r = p->input_rows->pdata[i];
    if (r->path != NULL || *declared_text(r) != '\0')
      continue;
    const DsNode *node = ds_graph_find_node(graph, r->name);
    const DsShape *shape = &concrete->shapes[graph->node_row_ptr[node->id]];
    int64_t dims[DS_MAX_NDIM];
    if (shape->ndim >= 0 && ds_shape_get_concrete(shape, dims) &&
        !ds_session_declare_shape(p->session, r->name, shape, error))
      return FALSE;
  }
  return TRUE;
}

gboolean ds_bindings_panel_apply(DsBindingsPanel *p, GError **error)
{
  g_return_val_if_fail(p->session != NULL, FALSE);
  /* Check every value before touching the session. */
  for (guint i = 0; i < p->symbol_rows->len; i++) {
    SymbolRow *r = p->symbol_rows->pdata[i];
    int64_t value;
    if (r->entry == NULL)
      continue;
    gboolean ok = symbol_value(r, &value, error);
    mark_entry(r->entry, !ok);
    if (!ok)
      return FALSE;
  }
  /* Whatever fed an input before (a file, or random data at other sizes) is forgotten; the
   * weights stay. */
  DsGraph *graph = ds_session_get_graph(p->session);
  for (guint i = 0; i < graph->n_nodes; i++)
    if (ds_node_is_variable(graph->nodes[i]) &&
        ds_session_classify_variable(p->session, graph->nodes[i]) == DS_VARIABLE_DATA)
      ds_session_unfeed(p->session, graph->nodes[i]->name);
  for (guint i = 0; i < p->input_rows->len; i++) {
    InputRow *r = p->input_rows->pdata[i];
    const char *text = declared_text(r);
    DsShape shape;
    if (*text == '\0')
      continue;
    gboolean ok = ds_session_parse_shape(p->session, text, &shape, error) &&
                  ds_session_declare_shape(p->session, r->name, &shape, error);
    mark_entry(r->shape_entry, !ok);
    if (!ok) {
      g_prefix_error(error, _("input %s: "), r->name);
      return FALSE;
    }
  }
  for (guint i = 0; i < p->symbol_rows->len; i++) {
    SymbolRow *r = p->symbol_rows->pdata[i];
    int64_t value;
    if (r->entry == NULL)
      continue;
    symbol_value(r, &value, NULL);
    ds_session_unbind_symbol(p->session, r->name);
    if (!ds_session_bind_symbol(p->session, r->name, value, error)) {
      mark_entry(r->entry, TRUE);
      return FALSE;
    }
  }
  for (guint i = 0; i < p->input_rows->len; i++) {
    InputRow *r = p->input_rows->pdata[i];
    if (r->path != NULL && !ds_session_feed_npy(p->session, r->name, r->path, error))
      return FALSE;
  }
  if (!declare_input_shapes(p, error))
    return FALSE;
  p->pending = FALSE;
  return TRUE;
}

gboolean ds_bindings_panel_has_pending(DsBindingsPanel *p)
{
  return p->session != NULL && p->pending;
}

/* ---- the widget ---- */

void ds_bindings_panel_set_session(DsBindingsPanel *p, DsSession *session,
                                   const DsGraphShapes *shapes)
{
  /* The same session again (its shapes changed): keep what was typed and chosen. */
  g_autoptr(GHashTable) values = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GHashTable) declared = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GHashTable) files = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  for (guint i = 0; session == p->session && i < p->symbol_rows->len; i++) {
    SymbolRow *r = p->symbol_rows->pdata[i];
    if (r->entry != NULL)
      g_hash_table_insert(values, g_strdup(r->name),
                          g_strdup(gtk_editable_get_text(GTK_EDITABLE(r->entry))));
  }
  for (guint i = 0; session == p->session && i < p->input_rows->len; i++) {
    InputRow *r = p->input_rows->pdata[i];
    g_hash_table_insert(declared, g_strdup(r->name), g_strdup(declared_text(r)));
    if (r->path != NULL)
      g_hash_table_insert(files, g_strdup(r->name), g_strdup(r->path));
  }
  /* A new model's defaults are still to be applied; the same one keeps its state. */
  gboolean pending = session != p->session || p->pending;
  p->session = session;
  p->shapes = shapes;
  clear_grid(p->symbols);
  clear_grid(p->derived);
  gtk_widget_set_visible(p->derived_expander, FALSE);
  clear_grid(p->inputs);
  g_ptr_array_set_size(p->symbol_rows, 0);
  g_ptr_array_set_size(p->input_rows, 0);
  if (session == NULL) {
    p->pending = FALSE;
    return;
  }
  fill_symbols(p);
  fill_inputs(p);
  GHashTableIter iter;
  gpointer key, value;
  g_hash_table_iter_init(&iter, values);
  while (g_hash_table_iter_next(&iter, &key, &value))
    ds_bindings_panel_set_value(p, key, value);
  g_hash_table_iter_init(&iter, declared);
  while (g_hash_table_iter_next(&iter, &key, &value))
    ds_bindings_panel_set_input_shape(p, key, value);
  g_hash_table_iter_init(&iter, files);
  while (g_hash_table_iter_next(&iter, &key, &value))
    ds_bindings_panel_set_input_file(p, key, value);
  p->pending = pending;
}

static void on_apply_clicked(GtkButton *button, DsBindingsPanel *p)
{
  (void)button;
  g_signal_emit(p, signals[SIGNAL_APPLY_REQUESTED], 0);
}

static GtkWidget *section_title(const char *text)
{
  GtkWidget *label = gtk_label_new(text);
  gtk_label_set_xalign(GTK_LABEL(label), 0);
  gtk_widget_add_css_class(label, "heading");
  return label;
}

static GtkWidget *new_grid(void)
{
  GtkWidget *grid = gtk_grid_new();
  gtk_grid_set_row_spacing(GTK_GRID(grid), 4);
  gtk_grid_set_column_spacing(GTK_GRID(grid), 8);
  return grid;
}

static void bindings_panel_dispose(GObject *object)
{
  DsBindingsPanel *p = DS_BINDINGS_PANEL(object);
  g_clear_pointer(&p->symbol_rows, g_ptr_array_unref);
  g_clear_pointer(&p->input_rows, g_ptr_array_unref);
  G_OBJECT_CLASS(ds_bindings_panel_parent_class)->dispose(object);
}

static void ds_bindings_panel_class_init(DsBindingsPanelClass *klass)
{
  G_OBJECT_CLASS(klass)->dispose = bindings_panel_dispose;
  /* The Apply button or Enter in a value: the window applies, as it knows when the session
   * may change. */
  signals[SIGNAL_APPLY_REQUESTED] =
      g_signal_new("apply-requested", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                   NULL, G_TYPE_NONE, 0);
}

static void ds_bindings_panel_init(DsBindingsPanel *p)
{
  gtk_orientable_set_orientation(GTK_ORIENTABLE(p), GTK_ORIENTATION_VERTICAL);
  gtk_box_set_spacing(GTK_BOX(p), 8);
  gtk_widget_set_margin_start(GTK_WIDGET(p), 12);
  gtk_widget_set_margin_end(GTK_WIDGET(p), 12);
  gtk_widget_set_margin_top(GTK_WIDGET(p), 12);
  p->symbol_rows = g_ptr_array_new_with_free_func(symbol_row_free);
  p->input_rows = g_ptr_array_new_with_free_func(input_row_free);
  /* The inputs first: their shapes are where the symbols come from. */
  gtk_box_append(GTK_BOX(p), section_title(_("Inputs")));
  p->inputs = new_grid();
  gtk_box_append(GTK_BOX(p), p->inputs);
  gtk_box_append(GTK_BOX(p), section_title(_("Symbols")));
  p->symbols = new_grid();
  gtk_box_append(GTK_BOX(p), p->symbols);
  p->derived = new_grid();
  p->derived_expander = gtk_expander_new(NULL);
  gtk_expander_set_child(GTK_EXPANDER(p->derived_expander), p->derived);
  gtk_widget_set_visible(p->derived_expander, FALSE);
  gtk_box_append(GTK_BOX(p), p->derived_expander);
  GtkWidget *apply = gtk_button_new_with_mnemonic(_("_Apply"));
  gtk_widget_set_tooltip_text(apply, _("Use these values for the next run or step"));
  gtk_widget_add_css_class(apply, "suggested-action");
  gtk_widget_set_halign(apply, GTK_ALIGN_END);
  g_signal_connect(apply, "clicked", G_CALLBACK(on_apply_clicked), p);
  gtk_box_append(GTK_BOX(p), apply);
}

GtkWidget *ds_bindings_panel_new(void)
{
  return g_object_new(DS_TYPE_BINDINGS_PANEL, NULL);
}
