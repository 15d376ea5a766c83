/* ds-file.h: reading whole files for the format parsers, and writing reports whole. */
#pragma once

#include <glib.h>

/* Maps `path` read-only (the parsers read it in place, without a copy). A file that cannot be
 * opened or mapped is a DS_ERROR_IO error "<path>: cannot open: <reason>". Free with
 * g_mapped_file_unref(). */
GMappedFile *ds_file_map(const char *path, GError **error);

/* Writes `length` bytes to `path` atomically: a temporary file beside it, then a rename, so a
 * failed write leaves no partial file and an existing file intact. The error is DS_ERROR_IO
 * "<path>: cannot write: <reason>". */
gboolean ds_file_write_atomic(const char *path, const char *data, gsize length, GError **error);
