/* ds-ndarray.c: owned tensors under a process-wide size limit. */
#include "ds-ndarray.h"

#include <stdlib.h>
#include <string.h>

#include "ds-constant.h"
#include "ds-error.h"

gboolean ds_memory_reserve(size_t bytes, const char *what, GError **error)
{
  if (ds_memory_try_reserve(bytes))
    return TRUE;
  g_set_error(error, DS_ERROR, DS_ERROR_LIMIT,
              "%s: %zu more bytes would exceed the memory limit of %zu bytes (%zu already held; "
              "see --max-memory)",
              what, bytes, ds_memory_get_limit_bytes(), ds_memory_get_used_bytes());
  return FALSE;
}

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

void ds_ndarray_make_constant(DsNDArray *array)
{
  if (array->view.constant == NULL)
    array->view.constant = ds_constant_new(array->view.data, array->nbytes);
}

void ds_ndarray_free(DsNDArray *array)
{
  if (array == NULL)
    return;
  ds_constant_free(array->view.constant);
  free(array->view.data);
  ds_memory_release(array->nbytes);
  g_free(array);
}
