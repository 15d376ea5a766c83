/* fuzz-npy.c: libFuzzer target for the .npy reader and writer.
 *
 * Any input must load or fail with a DS_ERROR. An array that loads must encode to a file that
 * loads back to the same dtype, shape and bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ds-error.h"
#include "ds-npy.h"

#define FUZZ_MEMORY_LIMIT_BYTES ((size_t)64 << 20)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  (void)argv;
  ds_memory_set_limit_bytes(FUZZ_MEMORY_LIMIT_BYTES);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  GError *error = NULL;
  DsNDArray *array = ds_npy_load_data(data, size, "fuzz.npy", &error);
  if (array == NULL) {
    if (error == NULL || error->domain != DS_ERROR)
      abort();
    g_error_free(error);
    return 0;
  }
  gsize len;
  guint8 *bytes = ds_npy_encode(&array->view, &len);
  DsNDArray *again = ds_npy_load_data(bytes, len, "encoded.npy", &error);
  if (again == NULL || again->view.dtype != array->view.dtype ||
      again->view.ndim != array->view.ndim || again->nbytes != array->nbytes ||
      memcmp(again->view.shape, array->view.shape, sizeof(int64_t) * (size_t)array->view.ndim) !=
        0 ||
      (array->nbytes > 0 && memcmp(again->view.data, array->view.data, array->nbytes) != 0))
    abort();
  ds_ndarray_free(again);
  g_free(bytes);
  ds_ndarray_free(array);
  return 0;
}
