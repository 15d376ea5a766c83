/* ds-file.c */
#include "ds-file.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "ds-error.h"

GMappedFile *ds_file_map(const char *path, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  int fd = g_open(path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) {
    int saved = errno;
    g_set_error(error, DS_ERROR, DS_ERROR_IO, "%s: cannot open: %s", path, g_strerror(saved));
    return NULL;
  }
  GError *local = NULL;
  GMappedFile *file = g_mapped_file_new_from_fd(fd, FALSE, &local);
  close(fd);
  if (file == NULL) {
    g_set_error(error, DS_ERROR, DS_ERROR_IO, "%s: cannot read: %s", path, local->message);
    g_error_free(local);
  }
  return file;
}

gboolean ds_file_write_atomic(const char *path, const char *data, gsize length, GError **error)
{
  g_return_val_if_fail(path != NULL, FALSE);
  GError *local = NULL;
  /* GLib writes a temporary file beside `path`, syncs it and renames it over `path`: a reader
   * sees the old file or the new one, and a failure removes the temporary file. */
  if (g_file_set_contents_full(path, data, (gssize)length,
                               G_FILE_SET_CONTENTS_CONSISTENT | G_FILE_SET_CONTENTS_ONLY_EXISTING,
                               0644, &local))
    return TRUE;
  g_autofree char *dir = g_path_get_dirname(path);
  const char *why = local->message;
  if (!g_file_test(dir, G_FILE_TEST_IS_DIR))
    why = "its folder does not exist";
  else if (g_file_test(path, G_FILE_TEST_IS_DIR))
    why = "it is a folder";
  else if (local->domain == G_FILE_ERROR && local->code == G_FILE_ERROR_ACCES)
    why = "permission denied";
  g_set_error(error, DS_ERROR, DS_ERROR_IO, "%s: cannot write: %s", path, why);
  g_error_free(local);
  return FALSE;
}
