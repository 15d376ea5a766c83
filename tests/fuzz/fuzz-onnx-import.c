/* fuzz-onnx-import.c: libFuzzer target for the ONNX importer (decoder + mapping onto the IR).
 *
 * Any input must decode and import, or fail with a DS_ERROR: op translators read attributes,
 * constants and subgraphs of arbitrary shape here. A graph that imports must pass
 * ds_graph_validate (the importer runs it) and survive shape and dtype inference, which reads
 * every attribute the translators wrote.
 */
#include <stdint.h>
#include <stdlib.h>

#include "ds-error.h"
#include "ds-infer.h"
#include "ds-ndarray.h"
#include "ds-onnx-import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  /* Initializers claiming gigabytes must be refused, not allocated. */
  ds_memory_set_limit_bytes(64u << 20);
  GError *error = NULL;
  DsOnnxModel *model = ds_onnx_model_parse(data, size, "fuzz.onnx", &error);
  if (model == NULL) {
    if (error == NULL || error->domain != DS_ERROR)
      abort();
    g_error_free(error);
    return 0;
  }
  /* External data points nowhere: a folder that does not exist. */
  DsOnnxImport *import = ds_onnx_import(model, "/nonexistent-fuzz-dir", &error);
  ds_onnx_model_free(model);
  if (import == NULL) {
    if (error == NULL || error->domain != DS_ERROR)
      abort();
    g_error_free(error);
    return 0;
  }
  if (import->weights->len != import->weight_names->len)
    abort();
  DsGraphShapes *shapes = ds_graph_shapes_new(import->graph, &error);
  if (shapes != NULL) {
    DsShapeCtx *ctx = ds_shape_ctx_new();
    if (!ds_infer_graph(import->graph, shapes, ctx, FALSE, &error) &&
        (error == NULL || error->domain != DS_ERROR))
      abort();
    ds_shape_ctx_free(ctx);
    ds_graph_shapes_free(shapes);
  }
  g_clear_error(&error);
  ds_onnx_import_free(import);
  return 0;
}
