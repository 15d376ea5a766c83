/* ds-npy.h: NumPy .npy files (format versions 1.0, 2.0 and 3.0; C order).
 *
 * Fortran order, object arrays, structured dtypes and big-endian data other than single bytes
 * are refused with a message naming the file and what was found.
 */
#pragma once

#include <glib.h>

#include "ds-ndarray.h"

/* Reads a file. Caller frees the result with ds_ndarray_free(). */
DsNDArray *ds_npy_load(const char *path, GError **error);
/* Parses a file's bytes; `name` is used in messages. */
DsNDArray *ds_npy_load_data(const guint8 *data, gsize len, const char *name, GError **error);
/* Writes `tensor` as a version 1.0 file (2.0 if the header needs it), atomically: a temporary
 * file in the same folder, then a rename, so a failure never leaves a partial file. A bfloat16
 * tensor is refused (DS_ERROR_UNSUPPORTED): NumPy has no such type. */
gboolean ds_npy_save(const char *path, const DsTensor *tensor, GError **error);
/* The file's bytes, for callers that write elsewhere (NULL for bfloat16). Caller frees. */
guint8 *ds_npy_encode(const DsTensor *tensor, gsize *len_out);
