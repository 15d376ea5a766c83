/* fuzz-mxnet-json.c: libFuzzer target for the MXNet symbol JSON loader and saver.
 *
 * Any input must load or fail with a DS_ERROR, never crash or leak. A graph that loads must
 * save, load again, and save to the same bytes: the saver's output is always a valid file
 * and the round trip is a fixed point.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds-error.h"
#include "ds-mxnet-json.h"
#include "ds-ndarray.h"

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
  DsGraph *graph = ds_mxnet_json_load_data((const char *)data, size, "fuzz.json", &error);
  if (graph == NULL) {
    if (error == NULL || error->domain != DS_ERROR)
      abort();
    g_error_free(error);
    return 0;
  }
  gsize len, len2;
  char *text = ds_mxnet_json_save_to_data(graph, &len);
  DsGraph *again = ds_mxnet_json_load_data(text, len, "saved.json", &error);
  if (again == NULL) {
    fprintf(stderr, "the saved graph does not load: %s\n%s\n", error->message, text);
    abort();
  }
  char *text2 = ds_mxnet_json_save_to_data(again, &len2);
  if (len != len2 || memcmp(text, text2, len) != 0) {
    fprintf(stderr, "saving is not a fixed point:\n%s\n---\n%s\n", text, text2);
    abort();
  }
  g_free(text2);
  g_free(text);
  ds_graph_unref(again);
  ds_graph_unref(graph);
  return 0;
}
