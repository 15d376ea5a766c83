/* ds-tensor.c */
#include "ds-tensor.h"

#include <string.h>

bool ds_shape_checked_nbytes(const int64_t *shape, int ndim, size_t elem_bytes,
                             size_t limit_bytes, size_t *nbytes_out)
{
  size_t bytes = elem_bytes;
  if (ndim < 0 || ndim > DS_MAX_NDIM)
    return false;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0)
      return false;
    if (shape[i] == 0) {
      bytes = 0;
      continue;
    }
    if (bytes != 0 && (uint64_t)shape[i] > limit_bytes / bytes)
      return false;
    bytes *= (size_t)shape[i];
  }
  /* A zero dim anywhere makes the tensor empty, but keep checking the other dims for sanity. */
  for (int i = 0; i < ndim; i++)
    if (shape[i] == 0)
      bytes = 0;
  if (bytes > limit_bytes)
    return false;
  *nbytes_out = bytes;
  return true;
}

static DsDeviceReadFn device_reader;

void ds_tensor_set_device_reader(DsDeviceReadFn read) { device_reader = read; }

bool ds_tensor_copy_to_host(const DsTensor *t, void *dst)
{
  size_t bytes = ds_tensor_nbytes(t);
  if (bytes == 0)
    return true;
  if (t->data == NULL)
    return false;
  if (t->memory == DS_MEMORY_HOST) {
    memcpy(dst, t->data, bytes);
    return true;
  }
  return device_reader != NULL && device_reader(dst, t->data, bytes);
}
