/* ds-app.c: the GtkApplication: one window per activation, keyboard shortcuts, About. */
#include "ds-app.h"

#include <glib/gi18n.h>
#include <gtk/gtk.h>

#include "ds-config.h"
#include "ds-gui-resources.h"
#include "ds-window.h"

#define DS_APP_ID "org.dynscope.Dynscope"

static void on_activate(GtkApplication *app, gpointer data)
{
  const char *model = data;
  DsWindow *window = ds_window_new(app);
  gtk_window_present(GTK_WINDOW(window));
  if (model != NULL)
    ds_window_open(window, model, NULL); /* a failure shows in the window's banner */
}

/* Quitting closes each window as its close button does (each remembers its state), the one
 * last used last, so that its state is what the next start finds; the application ends with
 * its last window. */
static void on_quit(GSimpleAction *action, GVariant *parameter, gpointer app)
{
  (void)action, (void)parameter;
  /* Most recently focused first. */
  GList *windows = g_list_reverse(g_list_copy(gtk_application_get_windows(GTK_APPLICATION(app))));
  for (GList *l = windows; l != NULL; l = l->next)
    gtk_window_close(l->data);
  g_list_free(windows);
}

static void on_about(GSimpleAction *action, GVariant *parameter, gpointer app)
{
  (void)action, (void)parameter;
  static const char *const authors[] = {"The dynscope developers", NULL};
  gtk_show_about_dialog(gtk_application_get_active_window(GTK_APPLICATION(app)),
                        "program-name", "dynscope",
                        "logo-icon-name", DS_APP_ID,
                        "version", DS_VERSION,
                        "comments", _("Debug and profile neural-network graphs with dynamic "
                                      "shapes and control flow"),
                        "license-type", GTK_LICENSE_APACHE_2_0,
                        "authors", authors,
                        /* TRANSLATORS: your names, one per line */
                        "translator-credits", _("translator-credits"),
                        NULL);
}

/* Debugger keys as IDEs have them: F5 continue, F10 over, F11 into, Shift+F11 out. */
static void set_accels(GtkApplication *app)
{
  static const struct {
    const char *action;
    const char *keys[3];
  } accels[] = {
      {"app.quit", {"<Control>q", NULL}},
      {"win.close", {"<Control>w", NULL}},
      {"win.show-help-overlay", {"<Control>question", "<Control>F1", NULL}},
      {"win.open", {"<Control>o", NULL}},
      {"win.find", {"<Control>f", NULL}},
      {"win.run", {"<Control>r", NULL}},
      {"win.continue", {"F5", NULL}},
      {"win.step", {"F10", NULL}},
      {"win.step-into", {"F11", NULL}},
      {"win.step-out", {"<Shift>F11", NULL}},
      {"win.reset", {"<Shift>F5", NULL}},
      {"win.cancel", {"Escape", NULL}},
  };
  for (guint i = 0; i < G_N_ELEMENTS(accels); i++)
    gtk_application_set_accels_for_action(app, accels[i].action, accels[i].keys);
}

GtkApplication *ds_app_new(const char *model)
{
  /* GtkApplication looks for the shortcuts window in its resources at startup, before any
   * window exists: they must be registered by then. */
  ds_gui_register_resource();
  /* Windows are independent: a second `dynscope MODEL` opens its own process. */
  GtkApplication *app = gtk_application_new(DS_APP_ID, G_APPLICATION_NON_UNIQUE);
  g_set_application_name("dynscope");
  g_signal_connect(app, "activate", G_CALLBACK(on_activate), (gpointer)model);
  static const GActionEntry actions[] = {{.name = "quit", .activate = on_quit},
                                         {.name = "about", .activate = on_about}};
  g_action_map_add_action_entries(G_ACTION_MAP(app), actions, G_N_ELEMENTS(actions), app);
  set_accels(app);
  return app;
}

int ds_app_run(const char *argv0, const char *model)
{
  g_autoptr(GtkApplication) app = ds_app_new(model);
  char *args[] = {(char *)argv0, NULL};
  return g_application_run(G_APPLICATION(app), 1, args);
}
