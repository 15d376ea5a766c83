/* ds-window-recent.c: recent models, in the header's menu and on the empty window. */
#include "ds-window-private.h"

#include <glib/gi18n.h>

/* The desktop's recent files (GtkRecentManager) also hold what file choosers saved (an
 * exported PNG) and are rewritten by every application: the window keeps its own list of
 * models in its state file, and adds to the desktop's for the desktop's sake. */
#define MODEL_GROUP "dynscope-model"

GPtrArray *ds_window_list_recent(DsWindow *w)
{
  (void)w;
  return ds_window_state_get_recent();
}

void ds_window_add_recent(DsWindow *w, const char *path)
{
  ds_window_state_add_recent(path);
  ds_window_refresh_recent(w);
  g_autofree char *uri = g_filename_to_uri(path, NULL, NULL);
  if (uri == NULL)
    return;
  const char *groups[] = {MODEL_GROUP, NULL};
  GtkRecentData data = {
      .mime_type = g_str_has_suffix(path, ".onnx") ? "application/x-onnx" : "application/json",
      .app_name = (char *)g_get_application_name(),
      .app_exec = "dynscope %f",
      .groups = (char **)groups,
  };
  gtk_recent_manager_add_full(gtk_recent_manager_get_default(), uri, &data);
}

static void on_recent_clicked(GtkButton *button, DsWindow *w)
{
  const char *path = g_object_get_data(G_OBJECT(button), "path");
  GtkWidget *popover = gtk_widget_get_ancestor(GTK_WIDGET(button), GTK_TYPE_POPOVER);
  if (popover != NULL)
    gtk_popover_popdown(GTK_POPOVER(popover));
  gtk_widget_activate_action(GTK_WIDGET(w), "win.open-file", "s", path);
}

static void fill(DsWindow *w, GtkWidget *list, GPtrArray *paths)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child(list)) != NULL)
    gtk_box_remove(GTK_BOX(list), child);
  if (paths->len == 0) {
    GtkWidget *none = gtk_label_new(_("No recent models"));
    gtk_widget_add_css_class(none, "dim-label");
    gtk_box_append(GTK_BOX(list), none);
  }
  for (guint i = 0; i < paths->len; i++) {
    const char *path = paths->pdata[i];
    g_autofree char *base = g_path_get_basename(path);
    g_autofree char *dir = g_path_get_dirname(path);
    GtkWidget *labels = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
    GtkWidget *name = gtk_label_new(base);
    gtk_label_set_xalign(GTK_LABEL(name), 0);
    GtkWidget *where = gtk_label_new(dir);
    gtk_label_set_xalign(GTK_LABEL(where), 0);
    gtk_label_set_ellipsize(GTK_LABEL(where), PANGO_ELLIPSIZE_START);
    gtk_widget_add_css_class(where, "dim-label");
    gtk_widget_add_css_class(where, "caption");
    gtk_box_append(GTK_BOX(labels), name);
    gtk_box_append(GTK_BOX(labels), where);
    GtkWidget *button = gtk_button_new();
    gtk_button_set_child(GTK_BUTTON(button), labels);
    gtk_widget_add_css_class(button, "flat");
    gtk_widget_set_tooltip_text(button, path);
    g_object_set_data_full(G_OBJECT(button), "path", g_strdup(path), g_free);
    g_signal_connect(button, "clicked", G_CALLBACK(on_recent_clicked), w);
    gtk_box_append(GTK_BOX(list), button);
  }
}

void ds_window_refresh_recent(DsWindow *w)
{
  g_autoptr(GPtrArray) paths = ds_window_list_recent(w);
  fill(w, w->recent_list, paths);
  fill(w, w->empty_recent, paths);
}

/* Another window may have opened a model since. */
static void on_recent_shown(GtkWidget *popover, DsWindow *w)
{
  (void)popover;
  ds_window_refresh_recent(w);
}

GtkWidget *ds_window_build_recent_button(DsWindow *w)
{
  GtkWidget *button = gtk_menu_button_new();
  gtk_widget_set_tooltip_text(button, _("Recent models"));
  w->recent_list = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
  GtkWidget *popover = gtk_popover_new();
  gtk_popover_set_child(GTK_POPOVER(popover), w->recent_list);
  gtk_menu_button_set_popover(GTK_MENU_BUTTON(button), popover);
  g_signal_connect(popover, "show", G_CALLBACK(on_recent_shown), w);
  return button;
}

GtkWidget *ds_window_build_empty_page(DsWindow *w)
{
  GtkWidget *page = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12);
  gtk_widget_set_valign(page, GTK_ALIGN_CENTER);
  gtk_widget_set_halign(page, GTK_ALIGN_CENTER);
  GtkWidget *icon = gtk_image_new_from_icon_name("org.dynscope.Dynscope");
  gtk_image_set_pixel_size(GTK_IMAGE(icon), 128);
  GtkWidget *title = gtk_label_new(_("Open a Model"));
  gtk_widget_add_css_class(title, "title-1");
  GtkWidget *hint =
      gtk_label_new(_("Open a model graph (Ctrl+O) or drop one here. Recent models:"));
  gtk_widget_add_css_class(hint, "dim-label");
  w->empty_recent = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
  GtkWidget *open = gtk_button_new_with_mnemonic(_("_Open…"));
  gtk_actionable_set_action_name(GTK_ACTIONABLE(open), "win.open");
  gtk_widget_add_css_class(open, "suggested-action");
  gtk_widget_add_css_class(open, "pill");
  gtk_widget_set_halign(open, GTK_ALIGN_CENTER);
  gtk_box_append(GTK_BOX(page), icon);
  gtk_box_append(GTK_BOX(page), title);
  gtk_box_append(GTK_BOX(page), hint);
  gtk_box_append(GTK_BOX(page), w->empty_recent);
  gtk_box_append(GTK_BOX(page), open);
  ds_window_refresh_recent(w);
  return page;
}
