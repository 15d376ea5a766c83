/* ds-app.c: the GtkApplication: one window per activation, keyboard shortcuts. */
#include "ds-app.h"

#include <glib/gi18n.h>
#include <gtk/gtk.h>

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

static void on_quit(GSimpleAction *action, GVariant *parameter, gpointer app)
{
  (void)action, (void)parameter;
  g_application_quit(G_APPLICATION(app));
}

int ds_app_run(const char *argv0, const char *model)
{
  /* Windows are independent: a second `dynscope MODEL` opens its own process. */
  g_autoptr(GtkApplication) app = gtk_application_new(DS_APP_ID, G_APPLICATION_NON_UNIQUE);
  g_signal_connect(app, "activate", G_CALLBACK(on_activate), (gpointer)model);
  GSimpleAction *quit = g_simple_action_new("quit", NULL);
  g_signal_connect(quit, "activate", G_CALLBACK(on_quit), app);
  g_action_map_add_action(G_ACTION_MAP(app), G_ACTION(quit));
  g_object_unref(quit);
  const char *quit_keys[] = {"<Control>q", NULL};
  gtk_application_set_accels_for_action(app, "app.quit", quit_keys);
  char *args[] = {(char *)argv0, NULL};
  return g_application_run(G_APPLICATION(app), 1, args);
}
