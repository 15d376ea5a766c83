/* ds-file.h: reading whole files for the format parsers. */
#pragma once

#include <glib.h>

/* Maps `path` read-only (the parsers read it in place, without a copy). A file that cannot be
 * opened or mapped is a DS_ERROR_IO error "<path>: cannot open: <reason>". Free with
 * g_mapped_file_unref(). */
GMappedFile *ds_file_map(const char *path, GError **error);
