/* ds-window-device.c: where the window runs its model: the CPU, or a device backend that
 * takes the regions it supports (the Run On menu, the win.device action).
 *
 * The choice belongs to the window and carries over to every model it opens. A device that
 * cannot run here (no GPU, no driver) is refused when chosen, with the reason in the banner,
 * so that the choice shown is always one that runs. The placement itself is made when the
 * session is next prepared, and the graph draws its device clusters after that run. */
#include <glib/gi18n.h>
#include <string.h>

#include "ds-window-private.h"

/* "CUDA GPU" for the menu; other backends by their own name. */
static const char *device_label(const char *name)
{
  if (strcmp(name, "cpu") == 0)
    return _("CPU");
  if (strcmp(name, "cuda") == 0)
    return _("CUDA GPU");
  return name;
}

/* The open model runs on the window's device from its next command on; the placement drawn
 * for the old one goes. */
static void apply_device(DsWindow *w)
{
  if (w->session == NULL)
    return;
  ds_session_set_device(w->session, w->device);
  ds_window_update_subtitle(w);
  if (w->debugger != NULL)
    ds_debugger_invalidate(w->debugger);
  GError *error = NULL;
  if (!ds_window_redraw(w, &error)) {
    ds_window_show_banner(w, error->message);
    g_error_free(error);
  }
}

/* Shows `message` in the banner and returns it as the error. */
static gboolean refuse(DsWindow *w, GError **error, DsErrorCode code, char *message)
{
  ds_window_show_banner(w, message);
  g_set_error_literal(error, DS_ERROR, code, message);
  g_free(message);
  return FALSE;
}

gboolean ds_window_set_device(DsWindow *w, const DsBackend *device, GError **error)
{
  if (ds_window_is_busy(w))
    return refuse(w, error, DS_ERROR_INVALID,
                  g_strdup(_("The device cannot change while a command runs")));
  if (device != NULL && device->memory == DS_MEMORY_HOST)
    device = NULL; /* the CPU: no placement */
  const char *why = device != NULL && device->unavailable != NULL ? device->unavailable() : NULL;
  if (why != NULL)
    return refuse(w, error, DS_ERROR_UNSUPPORTED,
                  g_strdup_printf(_("The %s backend cannot run here: %s"), device->name, why));
  w->device = device;
  GAction *action = g_action_map_lookup_action(G_ACTION_MAP(w), "device");
  if (action != NULL)
    g_simple_action_set_state(G_SIMPLE_ACTION(action),
                              g_variant_new_string(device != NULL ? device->name : "cpu"));
  ds_window_show_banner(w, NULL);
  apply_device(w);
  return TRUE;
}

const DsBackend *ds_window_get_device(DsWindow *w)
{
  return w->device;
}

static void on_device(GSimpleAction *action, GVariant *parameter, gpointer data)
{
  (void)action;
  DsWindow *w = data;
  const char *name = g_variant_get_string(parameter, NULL);
  const DsBackend *backend = ds_backend_find(name);
  if (backend == NULL) {
    g_autofree char *message = g_strdup_printf(_("This build has no %s backend"), name);
    ds_window_show_banner(w, message);
    return;
  }
  ds_window_set_device(w, backend, NULL);
}

void ds_window_add_device_action(DsWindow *w)
{
  const GActionEntry entries[] = {
      {.name = "device", .activate = on_device, .parameter_type = "s", .state = "'cpu'"},
  };
  g_action_map_add_action_entries(G_ACTION_MAP(w), entries, G_N_ELEMENTS(entries), w);
}

GMenuModel *ds_window_device_menu(void)
{
  GMenu *section = g_menu_new();
  for (const char *const *name = ds_backend_names(); *name != NULL; name++) {
    g_autofree char *detailed = g_strdup_printf("win.device::%s", *name);
    g_menu_append(section, device_label(*name), detailed);
  }
  return G_MENU_MODEL(section);
}
