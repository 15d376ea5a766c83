/* ds-test-tmpdir.c: make and clear a flat temporary folder. */
#include "ds-test-tmpdir.h"

#include <glib/gstdio.h>

char *ds_test_tmpdir_new(const char *prefix)
{
  GError *error = NULL;
  g_autofree char *template = g_strconcat(prefix, "-XXXXXX", NULL);
  char *dir = g_dir_make_tmp(template, &error);
  g_assert_no_error(error);
  return dir;
}

void ds_test_tmpdir_free(char *dir)
{
  GDir *d = g_dir_open(dir, 0, NULL);
  const char *name;
  while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_unlink(path);
  }
  if (d != NULL)
    g_dir_close(d);
  g_rmdir(dir);
  g_free(dir);
}
