/* ds-onnx-values.h: ONNX tensors as engine arrays.
 *
 * Initializers, Constant values and the test data files of ONNX's conformance suite
 * (`input_0.pb`: one serialized TensorProto) all become DsNDArrays here. Element types the
 * engine has map one to one (float, double, float16, uint8, int8, int32, int64, bool); others
 * (uint16, strings, complex...) are refused as unsupported, naming the tensor.
 */
#pragma once

#include <glib.h>

#include "ds-ndarray.h"
#include "ds-onnx-model.h"

/* The engine dtype of an ONNX element type, or DS_DTYPE_UNKNOWN. */
DsDType ds_onnx_dtype(int data_type);
/* The ONNX element type of an engine dtype. */
int ds_onnx_data_type_of(DsDType dtype);

/* Half precision is a storage type to the engine: ONNX float16 values are computed in float32
 * (as ONNX Runtime's CPU provider does for ops without half kernels), with casts where they
 * enter and leave the graph. The dtype a value of engine dtype `dtype` is computed in. */
static inline DsDType ds_onnx_compute_dtype(DsDType dtype)
{
  return dtype == DS_DTYPE_FLOAT16 ? DS_DTYPE_FLOAT32 : dtype;
}
/* `array` (taken) in its compute dtype: a float16 array becomes the float32 array of the same
 * values (exactly: every half is a float); others are returned as they are. */
DsNDArray *ds_onnx_widen_half(DsNDArray *array, GError **error);

/* A copy of `tensor`'s elements. External data is read from `base_dir` (the model's folder),
 * refusing a location that is absolute or leaves that folder. `what` names the tensor in
 * messages (a file and an initializer). */
DsNDArray *ds_onnx_tensor_to_ndarray(const DsOnnxTensor *tensor, const char *base_dir,
                                     const char *what, GError **error);

/* A file holding one serialized TensorProto (the conformance suite's input_N.pb and
 * output_N.pb). `name_out`, if not NULL, receives the tensor's name (caller frees). */
DsNDArray *ds_onnx_tensor_file_load(const char *path, char **name_out, GError **error);
