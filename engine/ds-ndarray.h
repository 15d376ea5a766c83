/* ds-ndarray.h: an owned tensor (what loaders return and what feeds a run).
 *
 * Memory policy: a DsNDArray owns its buffer (64-byte aligned). `view` describes it and may be
 * handed to kernels; it stays valid until ds_ndarray_free(). Every allocation is checked
 * against the process-wide limit before anything is allocated, so a file that claims a huge
 * shape gets an error instead of exhausting memory.
 */
#pragma once

#include <glib.h>

#include "ds-memory.h"
#include "ds-tensor.h"

typedef struct {
  DsTensor view;
  size_t nbytes;
} DsNDArray;

/* A zero-filled array. Fails with DS_ERROR_LIMIT if the size overflows or is over the limit;
 * `what` names it in the message (a file, an input name). */
DsNDArray *ds_ndarray_new(DsDType dtype, int ndim, const int64_t *shape, const char *what,
                          GError **error);
void ds_ndarray_free(DsNDArray *array);

/* Declares the array's data immutable from now on (a weight): views of it carry a DsConstant,
 * so kernels may keep forms derived from it, such as packed matrices (ds-constant.h). Nothing
 * may write the data afterwards; feed a new array instead. */
void ds_ndarray_make_constant(DsNDArray *array);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsNDArray, ds_ndarray_free)

/* Accounts `bytes` against the tensor memory budget (ds-memory.h) before they are
 * allocated; the error (DS_ERROR_LIMIT) starts with `what`. Thread-safe. */
gboolean ds_memory_reserve(size_t bytes, const char *what, GError **error);
