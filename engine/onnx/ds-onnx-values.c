/* ds-onnx-values.c: ONNX tensors as engine arrays. */
#include "ds-onnx-values.h"

#include <string.h>

#include "ds-error.h"
#include "ds-file.h"
#include "ds-onnx-private.h"

DsDType ds_onnx_dtype(int data_type)
{
  switch (data_type) {
  case DS_ONNX_FLOAT:
    return DS_DTYPE_FLOAT32;
  case DS_ONNX_DOUBLE:
    return DS_DTYPE_FLOAT64;
  case DS_ONNX_FLOAT16:
    return DS_DTYPE_FLOAT16;
  case DS_ONNX_UINT8:
    return DS_DTYPE_UINT8;
  case DS_ONNX_INT8:
    return DS_DTYPE_INT8;
  case DS_ONNX_INT32:
    return DS_DTYPE_INT32;
  case DS_ONNX_INT64:
    return DS_DTYPE_INT64;
  case DS_ONNX_BOOL:
    return DS_DTYPE_BOOL;
  case DS_ONNX_INT16:
    return DS_DTYPE_INT16;
  case DS_ONNX_UINT16:
    return DS_DTYPE_UINT16;
  case DS_ONNX_UINT32:
    return DS_DTYPE_UINT32;
  case DS_ONNX_UINT64:
    return DS_DTYPE_UINT64;
  case DS_ONNX_BFLOAT16:
    return DS_DTYPE_BFLOAT16;
  default:
    return DS_DTYPE_UNKNOWN;
  }
}

int ds_onnx_data_type_of(DsDType dtype)
{
  static const int codes[DS_DTYPE_COUNT] = {
      [DS_DTYPE_FLOAT32] = DS_ONNX_FLOAT, [DS_DTYPE_FLOAT64] = DS_ONNX_DOUBLE,
      [DS_DTYPE_FLOAT16] = DS_ONNX_FLOAT16, [DS_DTYPE_UINT8] = DS_ONNX_UINT8,
      [DS_DTYPE_INT32] = DS_ONNX_INT32,     [DS_DTYPE_INT8] = DS_ONNX_INT8,
      [DS_DTYPE_INT64] = DS_ONNX_INT64,     [DS_DTYPE_BOOL] = DS_ONNX_BOOL,
      [DS_DTYPE_INT16] = DS_ONNX_INT16,     [DS_DTYPE_UINT16] = DS_ONNX_UINT16,
      [DS_DTYPE_UINT32] = DS_ONNX_UINT32,   [DS_DTYPE_UINT64] = DS_ONNX_UINT64,
      [DS_DTYPE_BFLOAT16] = DS_ONNX_BFLOAT16,
  };
  return ds_dtype_is_valid(dtype) ? codes[dtype] : DS_ONNX_UNDEFINED;
}

/* The external file's bytes [offset, offset + n), from a location that must stay inside
 * `base_dir`: no absolute paths, no `..` components (ONNX Runtime's rule as well). */
static gboolean read_external(const DsOnnxTensor *t, const char *base_dir, const char *what,
                              void *out, gsize n, GError **error)
{
  const char *loc = t->external_location;
  if (loc == NULL || *loc == '\0' || g_path_is_absolute(loc) || loc[0] == '/' ||
      loc[0] == '\\') {
    g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                "%s: external data location '%s' must be a path relative to the model's folder",
                what, loc != NULL ? loc : "");
    return FALSE;
  }
  g_auto(GStrv) parts = g_strsplit_set(loc, "/\\", -1);
  for (int i = 0; parts[i] != NULL; i++)
    if (strcmp(parts[i], "..") == 0) {
      g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                  "%s: external data location '%s' leaves the model's folder", what, loc);
      return FALSE;
    }
  g_autofree char *path = g_build_filename(base_dir != NULL ? base_dir : ".", loc, NULL);
  /* A symbolic link could still point outside: compare the resolved folders. */
  g_autofree char *real_base = realpath(base_dir != NULL ? base_dir : ".", NULL);
  g_autofree char *real_path = realpath(path, NULL);
  if (real_base != NULL && real_path != NULL &&
      !(g_str_has_prefix(real_path, real_base) &&
        (real_path[strlen(real_base)] == '/' || strcmp(real_base, "/") == 0))) {
    g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                "%s: external data file '%s' resolves outside the model's folder", what, loc);
    return FALSE;
  }
  GMappedFile *file = ds_file_map(path, error);
  if (file == NULL) {
    g_prefix_error(error, "%s: external data: ", what);
    return FALSE;
  }
  gsize size = g_mapped_file_get_length(file);
  guint64 want = t->has_external_length ? t->external_length : n;
  gboolean ok = want == n && t->external_offset <= size && n <= size - t->external_offset;
  if (ok && n > 0)
    memcpy(out, g_mapped_file_get_contents(file) + t->external_offset, n);
  g_mapped_file_unref(file);
  if (!ok)
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: external data file '%s' (%" G_GSIZE_FORMAT " bytes) does not hold %" G_GSIZE_FORMAT
                " bytes at offset %" G_GUINT64_FORMAT,
                what, loc, size, n, t->external_offset);
  return ok;
}

/* Typed-array values (int32_data holds every narrow type, and the bits of float16 and
 * bfloat16; uint64_data uint32 and uint64). */
static void copy_typed(const DsOnnxTensor *t, DsTensor *out, guint64 n)
{
  for (guint64 i = 0; i < n; i++) {
    double d = 0;
    int64_t v = 0; /* uint64 values from 2^63 up wrap here and back when stored */
    gboolean is_float = FALSE;
    switch (t->data) {
    case DS_ONNX_DATA_FLOAT:
      d = t->float_data[i], is_float = TRUE;
      break;
    case DS_ONNX_DATA_DOUBLE:
      d = t->double_data[i], is_float = TRUE;
      break;
    case DS_ONNX_DATA_INT32:
      v = t->int32_data[i];
      break;
    case DS_ONNX_DATA_INT64:
      v = t->int64_data[i];
      break;
    case DS_ONNX_DATA_UINT64:
      v = (int64_t)t->uint64_data[i];
      break;
    default:
      break;
    }
    switch (out->dtype) {
    case DS_DTYPE_FLOAT32:
      ((float *)out->data)[i] = is_float ? (float)d : (float)v;
      break;
    case DS_DTYPE_FLOAT64:
      ((double *)out->data)[i] = is_float ? d : (double)v;
      break;
    case DS_DTYPE_FLOAT16: /* int32_data holds the half's bits */
    case DS_DTYPE_BFLOAT16:
    case DS_DTYPE_UINT16:
      ((guint16 *)out->data)[i] = (guint16)v;
      break;
    case DS_DTYPE_INT16:
      ((gint16 *)out->data)[i] = (gint16)v;
      break;
    case DS_DTYPE_UINT32:
      ((guint32 *)out->data)[i] = (guint32)v;
      break;
    case DS_DTYPE_UINT64:
      ((guint64 *)out->data)[i] = (guint64)v;
      break;
    case DS_DTYPE_UINT8:
    case DS_DTYPE_BOOL:
      ((guint8 *)out->data)[i] = (guint8)v;
      break;
    case DS_DTYPE_INT8:
      ((gint8 *)out->data)[i] = (gint8)v;
      break;
    case DS_DTYPE_INT32:
      ((gint32 *)out->data)[i] = (gint32)v;
      break;
    case DS_DTYPE_INT64:
      ((gint64 *)out->data)[i] = v;
      break;
    case DS_DTYPE_COUNT:
      break;
    }
  }
}

DsNDArray *ds_onnx_widen_storage(DsNDArray *array, GError **error)
{
  if (array == NULL || !ds_dtype_is_storage_only(array->view.dtype))
    return array;
  g_autoptr(DsNDArray) narrow = array;
  DsDType from = narrow->view.dtype, to = ds_onnx_compute_dtype(from);
  g_autofree char *what = g_strdup_printf("%s tensor", ds_dtype_name(from));
  DsNDArray *wide = ds_ndarray_new(to, narrow->view.ndim, narrow->view.shape, what, error);
  if (wide == NULL)
    return NULL;
  const void *src = narrow->view.data;
  void *dst = wide->view.data;
  for (int64_t i = 0, n = ds_tensor_numel(&narrow->view); i < n; i++) {
    if (from == DS_DTYPE_UINT64) /* the same 64 bits: values from 2^63 up read as negative */
      ((gint64 *)dst)[i] = (gint64)((const guint64 *)src)[i];
    else /* every other storage value is exact in its compute dtype */
      ds_tensor_store_f64(to, (char *)dst + (gsize)i * ds_dtype_size(to),
                          ds_tensor_load_f64(from, src, i));
  }
  return wide;
}

DsNDArray *ds_onnx_tensor_to_ndarray(const DsOnnxTensor *t, const char *base_dir,
                                     const char *what, GError **error)
{
  DsDType dtype = ds_onnx_dtype(t->data_type);
  if (dtype == DS_DTYPE_UNKNOWN) {
    g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
                "%s: element type %s is not supported (float, double, float16, bfloat16, "
                "int8, uint8, int16, uint16, int32, uint32, int64, uint64 and bool are)",
                what, ds_onnx_elem_type_name(t->data_type));
    return NULL;
  }
  if (t->n_dims > DS_MAX_NDIM) {
    g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED, "%s: %" G_GSIZE_FORMAT
                " dims, more than the %d supported", what, t->n_dims, DS_MAX_NDIM);
    return NULL;
  }
  g_autoptr(DsNDArray) array = ds_ndarray_new(dtype, (int)t->n_dims, t->dims, what, error);
  if (array == NULL)
    return NULL;
  gsize n = array->nbytes;
  switch (t->data) {
  case DS_ONNX_DATA_NONE:
    if (t->n_elements != 0) {
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: the tensor has no data", what);
      return NULL;
    }
    break;
  case DS_ONNX_DATA_RAW:
    memcpy(array->view.data, t->raw_data, n); /* the decoder checked n_bytes == n */
    break;
  case DS_ONNX_DATA_EXTERNAL:
    if (!read_external(t, base_dir, what, array->view.data, n, error))
      return NULL;
    break;
  default:
    copy_typed(t, &array->view, t->n_elements);
    break;
  }
  return g_steal_pointer(&array);
}

DsNDArray *ds_onnx_tensor_file_load(const char *path, char **name_out, GError **error)
{
  GMappedFile *file = ds_file_map(path, error);
  if (file == NULL)
    return NULL;
  DsOnnxArena *arena = ds_onnx_arena_new();
  DsOnnxDecoder d = {arena, path};
  DsPbReader r;
  ds_pb_reader_init(&r, (const guint8 *)g_mapped_file_get_contents(file),
                    g_mapped_file_get_length(file), path, "TensorProto");
  DsOnnxTensor t;
  DsNDArray *array = NULL;
  if (ds_onnx_decode_tensor(&d, NULL, &r, &t, error)) {
    g_autofree char *dir = g_path_get_dirname(path);
    array = ds_onnx_tensor_to_ndarray(&t, dir, path, error);
    if (array != NULL && name_out != NULL)
      *name_out = g_strdup(t.name);
  }
  ds_onnx_arena_free(arena);
  g_mapped_file_unref(file);
  return array;
}
