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
