/* ds-window-backward.c: the backward pass in the window (the Backward Pass menu, the
 * win.backward action): off, or the model's forward and backward pass as one graph (the
 * gradient of every input and weight, the outputs' gradients ones) under a policy for what the
 * forward pass keeps. The gradient nodes are drawn, stepped, broken into and profiled like the
 * forward ones, and the memory overlay covers both passes.
 *
 * The choice belongs to the window and carries over to every model it opens; choosing it opens
 * the model again, as the graph changes. */
#include <glib/gi18n.h>
#include <string.h>

#include "ds-window-private.h"

/* The choices, as win.backward's state spells them ("off", or a --recompute policy). */
static const char *const choices[] = {"off", "save", "auto", "recompute", NULL};

gboolean ds_window_set_backward(DsWindow *w, const char *policy, GError **error)
{
  if (policy == NULL)
    policy = "off";
  if (!g_strv_contains(choices, policy)) {
    g_autofree char *message = g_strdup_printf(_("There is no backward pass policy '%s'"), policy);
    ds_window_show_banner(w, message);
    g_set_error_literal(error, DS_ERROR, DS_ERROR_INVALID, message);
    return FALSE;
  }
  if (ds_window_is_busy(w)) {
    const char *message = _("The backward pass cannot change while a command runs");
    ds_window_show_banner(w, message);
    g_set_error_literal(error, DS_ERROR, DS_ERROR_INVALID, message);
    return FALSE;
  }
  g_autofree char *before = g_steal_pointer(&w->backward);
  w->backward = strcmp(policy, "off") != 0 ? g_strdup(policy) : NULL;
  g_autofree char *path = g_strdup(w->path);
  g_autofree char *weights = g_strdup(w->weights_path);
  if (path != NULL && !ds_window_open_with_weights(w, path, weights, error)) {
    /* the model stays as it was drawn, and so does the choice */
    g_free(w->backward);
    w->backward = g_steal_pointer(&before);
    return FALSE;
  }
  GAction *action = g_action_map_lookup_action(G_ACTION_MAP(w), "backward");
  if (action != NULL)
    g_simple_action_set_state(G_SIMPLE_ACTION(action), g_variant_new_string(policy));
  return TRUE;
}

const char *ds_window_get_backward(DsWindow *w)
{
  return w->backward;
}

static void on_backward(GSimpleAction *action, GVariant *parameter, gpointer data)
{
  (void)action;
  ds_window_set_backward(data, g_variant_get_string(parameter, NULL), NULL);
}

void ds_window_add_backward_action(DsWindow *w)
{
  const GActionEntry entries[] = {
      {.name = "backward", .activate = on_backward, .parameter_type = "s", .state = "'off'"},
  };
  g_action_map_add_action_entries(G_ACTION_MAP(w), entries, G_N_ELEMENTS(entries), w);
}

GMenuModel *ds_window_backward_menu(void)
{
  const struct {
    const char *label, *choice;
  } items[] = {
      {N_("Forward Pass Only"), "off"},
      {N_("Backward Pass, Keeping Everything"), "save"},
      {N_("Backward Pass, Recomputing Cheap Values"), "auto"},
      {N_("Backward Pass, Recomputing Loops Too"), "recompute"},
  };
  GMenu *section = g_menu_new();
  for (guint i = 0; i < G_N_ELEMENTS(items); i++) {
    g_autofree char *detailed = g_strdup_printf("win.backward::%s", items[i].choice);
    g_menu_append(section, _(items[i].label), detailed);
  }
  return G_MENU_MODEL(section);
}
