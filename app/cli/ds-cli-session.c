/* ds-cli-session.c: what every mode of the command line shares: the session a model opens
 * with the options' device, executor, shapes, facts, bindings and inputs; byte counts; the
 * one-line failure. The modes call it; it calls none of them.
 */
#include "ds-cli.h"

#include <glib/gi18n.h>
#include <string.h>

#include "ds-attr.h"
#include "ds-backward.h"
#include "ds-error.h"

int ds_cli_fail(GError *error)
{
  int status = ds_error_exit_status(error);
  g_printerr("dynscope: %s\n", error->message);
  g_error_free(error);
  return status;
}

static gboolean split_assignment(const char *arg, const char *option, char **name, char **value,
                                 GError **error)
{
  const char *eq = strchr(arg, '=');
  if (eq == NULL || eq == arg || eq[1] == '\0') {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT, _("%s '%s': expected NAME=VALUE"), option, arg);
    return FALSE;
  }
  *name = g_strndup(arg, (gsize)(eq - arg));
  *value = g_strdup(eq + 1);
  return TRUE;
}

/* --backward and its --head-grad NAME=FILE.npy: the gradients an output's NAME gets from a
 * file are fed as the variable the backward graph reads them from. */
static gboolean add_backward(DsSession *session, const DsCliOptions *options, GError **error)
{
  if (!options->backward) {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "--%s needs --backward",
                options->head_grads != NULL ? "head-grad" : "recompute");
    return FALSE;
  }
  const DsGraph *graph = ds_session_get_graph(session);
  g_autofree gboolean *given = g_new0(gboolean, MAX(graph->n_heads, 1u));
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  for (guint h = 0; h < graph->n_heads; h++)
    g_ptr_array_add(names, ds_graph_dup_output_name(graph, h));
  for (char **s = options->head_grads; s != NULL && *s != NULL; s++) {
    g_autofree char *name = NULL, *path = NULL;
    if (!split_assignment(*s, "--head-grad", &name, &path, error))
      return FALSE;
    guint h = 0;
    while (h < names->len && strcmp(g_ptr_array_index(names, h), name) != 0)
      h++;
    if (h == names->len) {
      g_autoptr(GString) list = g_string_new(NULL);
      for (guint k = 0; k < names->len; k++)
        g_string_append_printf(list, "%s%s", k ? ", " : "", (const char *)names->pdata[k]);
      g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                  "--head-grad %s: the model has no output called '%s' (its outputs: %s)", name,
                  name, names->len > 0 ? list->str : "none");
      return FALSE;
    }
    given[h] = TRUE;
  }
  DsLoopPolicy policy = {DS_LOOP_SAVE, 0, FALSE};
  if (options->recompute != NULL && !ds_backward_parse_policy(options->recompute, &policy)) {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                "--recompute %s: expected save, auto, recompute or checkpoint:K with K >= 2",
                options->recompute);
    return FALSE;
  }
  if (!ds_session_add_backward(session, given, policy, error))
    return FALSE;
  for (char **s = options->head_grads; s != NULL && *s != NULL; s++) {
    g_autofree char *name = NULL, *path = NULL;
    split_assignment(*s, "--head-grad", &name, &path, NULL);
    g_autofree char *variable = ds_backward_head_grad_name(name);
    if (!ds_session_feed_npy(session, variable, path, error)) {
      g_prefix_error(error, "--head-grad %s: ", name);
      return FALSE;
    }
  }
  return TRUE;
}

DsSession *ds_cli_open_session(const char *model, const DsCliOptions *options, GError **error)
{
  g_autoptr(DsSession) session = ds_session_new(model, error);
  if (session == NULL)
    return NULL;
  if (options->device != NULL && strcmp(options->device, "cpu") != 0)
    ds_session_set_device(session, ds_backend_find(options->device));
  if (options->executor != NULL) {
    static const char *const names[] = {"auto", "static", "dynamic", NULL};
    guint i = 0;
    while (names[i] != NULL && strcmp(names[i], options->executor) != 0)
      i++;
    if (names[i] == NULL) {
      g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                  "--executor %s: expected auto, static or dynamic", options->executor);
      return NULL;
    }
    ds_session_set_executor_choice(session, (DsExecutorChoice)i);
  }
  for (char **s = options->input_shapes; s != NULL && *s != NULL; s++) {
    g_autofree char *name = NULL, *text = NULL;
    DsShape shape;
    if (!split_assignment(*s, "--input-shape", &name, &text, error))
      return NULL;
    if (!ds_session_parse_shape(session, text, &shape, error)) {
      g_prefix_error(error, "--input-shape %s: ", name);
      return NULL;
    }
    if (!ds_session_declare_shape(session, name, &shape, error))
      return NULL;
  }
  for (char **s = options->assumes; s != NULL && *s != NULL; s++)
    if (!ds_session_assume(session, *s, error))
      return NULL;
  for (char **s = options->binds; s != NULL && *s != NULL; s++) {
    g_autofree char *name = NULL, *text = NULL;
    int64_t value;
    if (!split_assignment(*s, "--bind", &name, &text, error))
      return NULL;
    if (!ds_attr_parse_int(text, &value) || value < 0) {
      g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "--bind %s: '%s' is not a size", name, text);
      return NULL;
    }
    if (!ds_session_bind_symbol(session, name, value, error))
      return NULL;
  }
  if (options->params != NULL && !ds_session_feed_params(session, options->params, error))
    return NULL;
  for (char **s = options->inputs; s != NULL && *s != NULL; s++) {
    g_autofree char *name = NULL, *path = NULL;
    if (!split_assignment(*s, "--input", &name, &path, error) ||
        !ds_session_feed_npy(session, name, path, error))
      return NULL;
  }
  if ((options->backward || options->head_grads != NULL || options->recompute != NULL) &&
      !add_backward(session, options, error))
    return NULL;
  return g_steal_pointer(&session);
}

gboolean ds_cli_parse_bytes(const char *text, guint64 *bytes)
{
  char *end;
  double value = g_ascii_strtod(text, &end);
  if (end == text || value < 0)
    return FALSE;
  static const char *const units = "KMGT";
  double scale = 1;
  if (*end != '\0') {
    const char *unit = strchr(units, g_ascii_toupper(*end));
    if (unit == NULL)
      return FALSE;
    for (const char *u = units; u <= unit; u++)
      scale *= 1024;
    end++;
    if (g_ascii_strcasecmp(end, "iB") == 0 || g_ascii_strcasecmp(end, "B") == 0)
      end += strlen(end);
  }
  if (*end != '\0' || value * scale > 1.8e19 || value * scale < 1)
    return FALSE;
  *bytes = (guint64)(value * scale);
  return TRUE;
}

