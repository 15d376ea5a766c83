/* ds-window-state.c: the window's size, the last folder and the recent models, kept between
 * sessions.
 *
 * A key file in the user's config folder ($XDG_CONFIG_HOME/dynscope/state.ini) rather than
 * GSettings: it needs no schema compiled and installed, so a binary run from the build tree
 * remembers as well as an installed one.
 */
#include "ds-window-private.h"

#include <glib/gstdio.h>
#include <string.h>

#include "ds-file.h"

#define MIN_SIZE   400
#define MAX_RECENT 10

static char *state_path(void)
{
  return g_build_filename(g_get_user_config_dir(), "dynscope", "state.ini", NULL);
}

static GKeyFile *load(void)
{
  GKeyFile *keys = g_key_file_new();
  g_autofree char *path = state_path();
  /* A missing or damaged file means defaults. */
  g_key_file_load_from_file(keys, path, G_KEY_FILE_NONE, NULL);
  return keys;
}

static void save(GKeyFile *keys)
{
  g_autofree char *path = state_path();
  g_autofree char *dir = g_path_get_dirname(path);
  gsize length;
  g_autofree char *data = g_key_file_to_data(keys, &length, NULL);
  /* Remembering is a courtesy: failing to write it must not bother anyone. */
  if (g_mkdir_with_parents(dir, 0700) == 0)
    ds_file_write_atomic(path, data, length, NULL);
}

void ds_window_state_restore(GtkWindow *window)
{
  g_autoptr(GKeyFile) keys = load();
  int width = g_key_file_get_integer(keys, "window", "width", NULL);
  int height = g_key_file_get_integer(keys, "window", "height", NULL);
  if (width >= MIN_SIZE && height >= MIN_SIZE)
    gtk_window_set_default_size(window, width, height);
  if (g_key_file_get_boolean(keys, "window", "maximized", NULL))
    gtk_window_maximize(window);
}

void ds_window_state_save(GtkWindow *window)
{
  g_autoptr(GKeyFile) keys = load();
  int width, height;
  gtk_window_get_default_size(window, &width, &height);
  gboolean maximized = gtk_window_is_maximized(window);
  /* A maximized window keeps the size it had before, to come back to. */
  if (!maximized && width >= MIN_SIZE && height >= MIN_SIZE) {
    g_key_file_set_integer(keys, "window", "width", width);
    g_key_file_set_integer(keys, "window", "height", height);
  }
  g_key_file_set_boolean(keys, "window", "maximized", maximized);
  save(keys);
}

char *ds_window_state_get_folder(void)
{
  g_autoptr(GKeyFile) keys = load();
  char *folder = g_key_file_get_string(keys, "files", "last-folder", NULL);
  if (folder != NULL && !g_file_test(folder, G_FILE_TEST_IS_DIR))
    g_clear_pointer(&folder, g_free);
  return folder;
}

void ds_window_state_set_folder(const char *path_in_folder)
{
  g_autofree char *absolute = g_canonicalize_filename(path_in_folder, NULL);
  g_autofree char *folder = g_path_get_dirname(absolute);
  g_autoptr(GKeyFile) keys = load();
  g_key_file_set_string(keys, "files", "last-folder", folder);
  save(keys);
}

GPtrArray *ds_window_state_get_recent(void)
{
  g_autoptr(GKeyFile) keys = load();
  g_auto(GStrv) paths = g_key_file_get_string_list(keys, "files", "recent", NULL, NULL);
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; paths != NULL && paths[i] != NULL && out->len < MAX_RECENT; i++)
    if (g_path_is_absolute(paths[i]) && g_file_test(paths[i], G_FILE_TEST_IS_REGULAR))
      g_ptr_array_add(out, g_strdup(paths[i]));
  return out;
}

void ds_window_state_add_recent(const char *path)
{
  g_autoptr(GKeyFile) keys = load();
  g_auto(GStrv) old = g_key_file_get_string_list(keys, "files", "recent", NULL, NULL);
  g_autoptr(GPtrArray) paths = g_ptr_array_new();
  g_ptr_array_add(paths, (gpointer)path);
  for (guint i = 0; old != NULL && old[i] != NULL && paths->len < MAX_RECENT; i++)
    if (strcmp(old[i], path) != 0)
      g_ptr_array_add(paths, old[i]);
  g_key_file_set_string_list(keys, "files", "recent", (const char *const *)paths->pdata,
                             paths->len);
  save(keys);
}
