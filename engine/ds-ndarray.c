/* ds-ndarray.c: owned tensors under a process-wide size limit. */
#include "ds-ndarray.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ds-error.h"

static size_t limit_bytes;

size_t ds_memory_get_limit_bytes(void)
{
  if (limit_bytes == 0) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    guint64 total = pages > 0 && page > 0 ? (guint64)pages * (guint64)page : (guint64)8 << 30;
    limit_bytes = (size_t)(total / 4 * 3);
  }
  return limit_bytes;
}

void ds_memory_set_limit_bytes(size_t bytes) { limit_bytes = bytes; }

static gsize used_bytes; /* atomic */

gboolean ds_memory_reserve(size_t bytes, const char *what, GError **error)
{
  size_t limit = ds_memory_get_limit_bytes();
  for (;;) {
    gsize used = (gsize)g_atomic_pointer_get(&used_bytes);
    if (bytes > limit || used > limit - bytes) {
      g_set_error(error, DS_ERROR, DS_ERROR_LIMIT,
                  "%s: %zu more bytes would exceed the memory limit of %zu bytes (%zu already "
                  "held; see --max-memory)",
                  what, bytes, limit, used);
      return FALSE;
    }
    if (g_atomic_pointer_compare_and_exchange(&used_bytes, (gpointer)used,
                                              (gpointer)(used + bytes)))
      return TRUE;
  }
}

void ds_memory_release(size_t bytes)
{
  g_atomic_pointer_add(&used_bytes, -(gssize)bytes);
}

size_t ds_memory_get_used_bytes(void) { return (gsize)g_atomic_pointer_get(&used_bytes); }

DsNDArray *ds_ndarray_new(DsDType dtype, int ndim, const int64_t *shape, const char *what,
                          GError **error)
{
  size_t nbytes;
  if (!ds_dtype_is_valid(dtype)) {
    g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED, "%s: invalid dtype code %d", what,
                (int)dtype);
    return NULL;
  }
  if (ndim < 0 || ndim > DS_MAX_NDIM) {
    g_set_error(error, DS_ERROR, DS_ERROR_LIMIT, "%s: %d dimensions (at most %d supported)",
                what, ndim, DS_MAX_NDIM);
    return NULL;
  }
  if (!ds_shape_checked_nbytes(shape, ndim, ds_dtype_size(dtype), ds_memory_get_limit_bytes(),
                               &nbytes)) {
    g_set_error(error, DS_ERROR, DS_ERROR_LIMIT,
                "%s: a tensor of this shape would exceed the memory limit of %zu bytes "
                "(or has a negative dim)",
                what, ds_memory_get_limit_bytes());
    return NULL;
  }
  if (!ds_memory_reserve(nbytes, what, error))
    return NULL;
  DsNDArray *array = g_new0(DsNDArray, 1);
  array->view.dtype = dtype;
  array->view.ndim = ndim;
  if (ndim > 0) /* a scalar's shape may be NULL */
    memcpy(array->view.shape, shape, sizeof(int64_t) * (size_t)ndim);
  array->nbytes = nbytes;
  size_t rounded = (nbytes + 63) & ~(size_t)63;
  array->view.data = aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (array->view.data == NULL) {
    ds_memory_release(nbytes);
    g_free(array);
    g_set_error(error, DS_ERROR, DS_ERROR_LIMIT, "%s: out of memory allocating %zu bytes", what,
                nbytes);
    return NULL;
  }
  memset(array->view.data, 0, nbytes);
  return array;
}

void ds_ndarray_free(DsNDArray *array)
{
  if (array == NULL)
    return;
  free(array->view.data);
  ds_memory_release(array->nbytes);
  g_free(array);
}
