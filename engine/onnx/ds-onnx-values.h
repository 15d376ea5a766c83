/* ds-onnx-values.h: ONNX tensors as engine arrays.
 *
 * Initializers, Constant values and the test data files of ONNX's conformance suite
 * (`input_0.pb`: one serialized TensorProto) all become DsNDArrays here. Element types the
 * engine has map one to one (float, double, float16, bfloat16, uint8, int8, int16, uint16, int32,
 * uint32, int64, uint64, bool); others (strings, complex...) are refused as unsupported, naming
 * the tensor.
 */
#pragma once

#include <glib.h>

#include "ds-ndarray.h"
#include "ds-onnx-model.h"

/* The engine dtype of an ONNX element type, or DS_DTYPE_UNKNOWN. */
DsDType ds_onnx_dtype(int data_type);
/* The ONNX element type of an engine dtype. */
int ds_onnx_data_type_of(DsDType dtype);

/* float16, bfloat16, int16, uint16, uint32 and uint64 are storage types to the engine
 * (ds_dtype_is_storage_only): ONNX values of these types are computed in a wider dtype (as ONNX
 * Runtime's CPU provider computes float16 in float32 for ops without half kernels), with casts
 * where they enter and leave the graph and where a Cast produces them. float16 and bfloat16
 * compute in float32, int16 and uint16 in int32, uint32 in int64, all exactly; uint64 in
 * int64 by its bits, so sums, products and left shifts wrap as uint64 does, but values from
 * 2^63 up compare, divide and shift right as the negative numbers they read as. The dtype a
 * value of engine dtype `dtype` is computed in. */
static inline DsDType ds_onnx_compute_dtype(DsDType dtype)
{
  switch (dtype) {
  case DS_DTYPE_FLOAT16:
  case DS_DTYPE_BFLOAT16:
    return DS_DTYPE_FLOAT32;
  case DS_DTYPE_INT16:
  case DS_DTYPE_UINT16:
    return DS_DTYPE_INT32;
  case DS_DTYPE_UINT32:
  case DS_DTYPE_UINT64:
    return DS_DTYPE_INT64;
  case DS_DTYPE_FLOAT32:
  case DS_DTYPE_FLOAT64:
  case DS_DTYPE_UINT8:
  case DS_DTYPE_INT32:
  case DS_DTYPE_INT8:
  case DS_DTYPE_INT64:
  case DS_DTYPE_BOOL:
  case DS_DTYPE_COUNT:
    break;
  }
  return dtype;
}
/* `array` (taken) in its compute dtype: a storage-type array becomes the array of the same
 * values in ds_onnx_compute_dtype(); others are returned as they are. */
DsNDArray *ds_onnx_widen_storage(DsNDArray *array, GError **error);

/* A copy of `tensor`'s elements. External data is read from `base_dir` (the model's folder),
 * refusing a location that is absolute or leaves that folder. `what` names the tensor in
 * messages (a file and an initializer). */
DsNDArray *ds_onnx_tensor_to_ndarray(const DsOnnxTensor *tensor, const char *base_dir,
                                     const char *what, GError **error);

/* A file holding one serialized TensorProto (the conformance suite's input_N.pb and
 * output_N.pb). `name_out`, if not NULL, receives the tensor's name (caller frees). */
DsNDArray *ds_onnx_tensor_file_load(const char *path, char **name_out, GError **error);
