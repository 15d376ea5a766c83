/* fuzz-params.c: libFuzzer target for the MXNet .params reader and writer.
 *
 * Any input must load or fail with a DS_ERROR. A list that loads must encode (V2 with
 * prefixes) to bytes that load back to the same names, flags, dtypes, shapes and data.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ds-error.h"
#include "ds-params.h"

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

static gboolean same_array(const DsNDArray *a, const DsNDArray *b)
{
  return a->view.dtype == b->view.dtype && a->view.ndim == b->view.ndim &&
         a->nbytes == b->nbytes &&
         memcmp(a->view.shape, b->view.shape, sizeof(int64_t) * (size_t)a->view.ndim) == 0 &&
         (a->nbytes == 0 || memcmp(a->view.data, b->view.data, a->nbytes) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  GError *error = NULL;
  DsParams *params = ds_params_load_data(data, size, "fuzz.params", &error);
  if (params == NULL) {
    if (error == NULL || error->domain != DS_ERROR)
      abort();
    g_error_free(error);
    return 0;
  }
  gsize len;
  guint8 *bytes = ds_params_encode(params->items, params->n_items, &len);
  DsParams *again = ds_params_load_data(bytes, len, "encoded.params", &error);
  if (again == NULL || again->n_items != params->n_items)
    abort();
  for (guint i = 0; i < params->n_items; i++) {
    const DsParam *x = &params->items[i], *y = &again->items[i];
    if (strcmp(x->name, y->name) != 0 || x->is_aux != y->is_aux || !same_array(x->array, y->array))
      abort();
  }
  ds_params_free(again);
  g_free(bytes);
  ds_params_free(params);
  return 0;
}
