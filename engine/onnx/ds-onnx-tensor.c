/* ds-onnx-tensor.c: TensorProto decoded and checked (dims, sizes, where the data is), and the
 * TensorProto.DataType helpers of ds-onnx-model.h.
 *
 * A tensor's data is in exactly one place: raw_data (little-endian bytes), one typed field
 * chosen by its data type, or another file (data_location EXTERNAL). Sizes are checked once
 * every field is read, since the fields may come in any order.
 */
#include "ds-onnx-private.h"

#include <string.h>

#include "ds-error.h"

/* ---- Element types ----------------------------------------------------------------------- */

typedef struct {
  const char *name;
  guint8 size; /* bytes per element; 0: none fixed */
} ElemType;

static const ElemType elem_types[] = {
    [DS_ONNX_UNDEFINED] = {"undefined", 0},
    [DS_ONNX_FLOAT] = {"float", 4},
    [DS_ONNX_UINT8] = {"uint8", 1},
    [DS_ONNX_INT8] = {"int8", 1},
    [DS_ONNX_UINT16] = {"uint16", 2},
    [DS_ONNX_INT16] = {"int16", 2},
    [DS_ONNX_INT32] = {"int32", 4},
    [DS_ONNX_INT64] = {"int64", 8},
    [DS_ONNX_STRING] = {"string", 0},
    [DS_ONNX_BOOL] = {"bool", 1},
    [DS_ONNX_FLOAT16] = {"float16", 2},
    [DS_ONNX_DOUBLE] = {"double", 8},
    [DS_ONNX_UINT32] = {"uint32", 4},
    [DS_ONNX_UINT64] = {"uint64", 8},
    [DS_ONNX_COMPLEX64] = {"complex64", 8},
    [DS_ONNX_COMPLEX128] = {"complex128", 16},
    [DS_ONNX_BFLOAT16] = {"bfloat16", 2},
    [DS_ONNX_FLOAT8E4M3FN] = {"float8e4m3fn", 1},
    [DS_ONNX_FLOAT8E4M3FNUZ] = {"float8e4m3fnuz", 1},
    [DS_ONNX_FLOAT8E5M2] = {"float8e5m2", 1},
    [DS_ONNX_FLOAT8E5M2FNUZ] = {"float8e5m2fnuz", 1},
    [DS_ONNX_UINT4] = {"uint4", 0},
    [DS_ONNX_INT4] = {"int4", 0},
    [DS_ONNX_FLOAT4E2M1] = {"float4e2m1", 0},
    [DS_ONNX_FLOAT8E8M0] = {"float8e8m0", 1},
};

static gboolean is_4bit(int data_type)
{
  return data_type == DS_ONNX_UINT4 || data_type == DS_ONNX_INT4 || data_type == DS_ONNX_FLOAT4E2M1;
}

const char *ds_onnx_elem_type_name(int data_type)
{
  if (data_type < 0 || (gsize)data_type >= G_N_ELEMENTS(elem_types))
    return NULL;
  return elem_types[data_type].name;
}

gsize ds_onnx_elem_size(int data_type)
{
  if (data_type < 0 || (gsize)data_type >= G_N_ELEMENTS(elem_types))
    return 0;
  return elem_types[data_type].size;
}

gboolean ds_onnx_data_bytes(int data_type, guint64 n_elements, guint64 *n_bytes)
{
  if (is_4bit(data_type)) {
    *n_bytes = n_elements / 2 + n_elements % 2;
    return TRUE;
  }
  gsize size = ds_onnx_elem_size(data_type);
  if (size == 0)
    return FALSE;
  return g_uint64_checked_mul(n_bytes, n_elements, size);
}

/* ---- TensorProto ------------------------------------------------------------------------- */

/* What the typed data fields hold while a tensor is read. */
typedef struct {
  GArray *float_data, *int32_data, *int64_data, *double_data, *uint64_data, *string_data;
  GArray *dims, *external;
  gboolean has_raw;
  const guint8 *raw;
  gsize raw_len;
} TensorFields;

static void tensor_fields_clear(TensorFields *f)
{
  GArray **arrays[] = {&f->float_data,  &f->int32_data,  &f->int64_data, &f->double_data,
                       &f->uint64_data, &f->string_data, &f->dims,       &f->external};
  for (gsize i = 0; i < G_N_ELEMENTS(arrays); i++)
    if (*arrays[i] != NULL)
      g_array_unref(*arrays[i]);
}

/* The typed field a data type keeps its values in, and how many values `n` elements take. */
static DsOnnxDataKind typed_field_for(int data_type, guint64 n, guint64 *n_values,
                                      guint64 *n_values_alt)
{
  *n_values = n;
  *n_values_alt = n;
  switch (data_type) {
  case DS_ONNX_FLOAT:
    return DS_ONNX_DATA_FLOAT;
  case DS_ONNX_COMPLEX64:
    *n_values = *n_values_alt = n * 2;
    return DS_ONNX_DATA_FLOAT;
  case DS_ONNX_DOUBLE:
    return DS_ONNX_DATA_DOUBLE;
  case DS_ONNX_COMPLEX128:
    *n_values = *n_values_alt = n * 2;
    return DS_ONNX_DATA_DOUBLE;
  case DS_ONNX_INT64:
    return DS_ONNX_DATA_INT64;
  case DS_ONNX_UINT32:
  case DS_ONNX_UINT64:
    return DS_ONNX_DATA_UINT64;
  case DS_ONNX_STRING:
    return DS_ONNX_DATA_STRING;
  case DS_ONNX_UINT4:
  case DS_ONNX_INT4:
  case DS_ONNX_FLOAT4E2M1:
    /* Writers pack two 4-bit values into each int32; one per int32 is accepted too. */
    *n_values = n / 2 + n % 2;
    return DS_ONNX_DATA_INT32;
  default:
    return DS_ONNX_DATA_INT32;
  }
}

static const char *data_field_name(DsOnnxDataKind kind)
{
  switch (kind) {
  case DS_ONNX_DATA_RAW:
    return "raw_data";
  case DS_ONNX_DATA_FLOAT:
    return "float_data";
  case DS_ONNX_DATA_INT32:
    return "int32_data";
  case DS_ONNX_DATA_INT64:
    return "int64_data";
  case DS_ONNX_DATA_DOUBLE:
    return "double_data";
  case DS_ONNX_DATA_UINT64:
    return "uint64_data";
  case DS_ONNX_DATA_STRING:
    return "string_data";
  case DS_ONNX_DATA_EXTERNAL:
    return "external data";
  case DS_ONNX_DATA_NONE:
    break;
  }
  return "no data";
}

/* "tensor 'w'" or "unnamed tensor", for messages. */
static char *tensor_label(const DsOnnxTensor *t)
{
  return t->name[0] != '\0' ? g_strdup_printf("tensor '%s'", t->name) : g_strdup("unnamed tensor");
}

/* The external_data entries "location", "offset" and "length". */
static gboolean read_external_keys(const DsOnnxDecoder *d, const DsOnnxScope *s, DsOnnxTensor *t,
                                   const char *label, GError **error)
{
  for (gsize i = 0; i < t->n_external_data; i++) {
    const DsOnnxStringPair *e = &t->external_data[i];
    guint64 *target = NULL;
    if (strcmp(e->key, "location") == 0)
      t->external_location = e->value;
    else if (strcmp(e->key, "offset") == 0)
      target = &t->external_offset;
    else if (strcmp(e->key, "length") == 0)
      target = &t->external_length;
    if (target == NULL)
      continue;
    if (!g_ascii_string_to_unsigned(e->value, 10, 0, G_MAXUINT64, target, NULL)) {
      ds_onnx_scope_error(d, s, error, DS_ERROR_PARSE,
                          "%s: external data %s '%s' is not a non-negative decimal integer", label,
                          e->key, e->value);
      return FALSE;
    }
    if (target == &t->external_length)
      t->has_external_length = TRUE;
  }
  return TRUE;
}

/* A data field a tensor holds, and its length in bytes or values. */
typedef struct {
  DsOnnxDataKind kind;
  gsize count;
} DataPresent;

/* The checks once every field of a tensor is read: dims, sizes and where the data is. */
static gboolean check_tensor(const DsOnnxDecoder *d, const DsOnnxScope *s, DsOnnxTensor *t,
                             TensorFields *f, GError **error)
{
  g_autofree char *label = tensor_label(t);
  const char *type_name = ds_onnx_elem_type_name(t->data_type);
  if (t->data_type == DS_ONNX_UNDEFINED) {
    ds_onnx_scope_error(d, s, error, DS_ERROR_PARSE, "%s has no data_type", label);
    return FALSE;
  }
  if (type_name == NULL) {
    ds_onnx_scope_error(
        d, s, error, DS_ERROR_UNSUPPORTED,
        "%s has data type %d, which is not a TensorProto.DataType this reader knows "
        "(1 to %d)",
        label, t->data_type, DS_ONNX_FLOAT8E8M0);
    return FALSE;
  }

  /* Element count: 0 if any dim is 0, however large the others; else an exact product. */
  t->n_elements = 1;
  gboolean has_zero = FALSE;
  for (gsize i = 0; i < t->n_dims; i++) {
    if (t->dims[i] < 0) {
      ds_onnx_scope_error(d, s, error, DS_ERROR_PARSE,
                          "%s: dim %" G_GSIZE_FORMAT " is %" G_GINT64_FORMAT
                          " (a tensor's dims cannot be negative)",
                          label, i, t->dims[i]);
      return FALSE;
    }
    has_zero |= t->dims[i] == 0;
  }
  if (has_zero)
    t->n_elements = 0;
  for (gsize i = 0; i < t->n_dims && !has_zero; i++) {
    if (!g_uint64_checked_mul(&t->n_elements, t->n_elements, (guint64)t->dims[i])) {
      ds_onnx_scope_error(d, s, error, DS_ERROR_LIMIT,
                          "%s: the product of its %" G_GSIZE_FORMAT " dims overflows 64 bits",
                          label, t->n_dims);
      return FALSE;
    }
  }
  t->n_bytes = 0;
  if (t->data_type != DS_ONNX_STRING &&
      !ds_onnx_data_bytes(t->data_type, t->n_elements, &t->n_bytes)) {
    ds_onnx_scope_error(d, s, error, DS_ERROR_LIMIT,
                        "%s: %" G_GUINT64_FORMAT " elements of %s overflow 64 bits of bytes", label,
                        t->n_elements, type_name);
    return FALSE;
  }

  /* Exactly one place holds the data: raw_data, one typed field, or another file. */
  DataPresent present[7];
  gsize n_present = 0;
  if (f->has_raw)
    present[n_present++] = (DataPresent){DS_ONNX_DATA_RAW, f->raw_len};
  GArray *typed[] = {f->float_data,  f->int32_data,  f->int64_data,
                     f->double_data, f->uint64_data, f->string_data};
  DsOnnxDataKind typed_kind[] = {DS_ONNX_DATA_FLOAT,  DS_ONNX_DATA_INT32,  DS_ONNX_DATA_INT64,
                                 DS_ONNX_DATA_DOUBLE, DS_ONNX_DATA_UINT64, DS_ONNX_DATA_STRING};
  for (gsize i = 0; i < G_N_ELEMENTS(typed); i++)
    if (typed[i]->len > 0)
      present[n_present++] = (DataPresent){typed_kind[i], typed[i]->len};
  if (n_present > 1) {
    ds_onnx_scope_error(d, s, error, DS_ERROR_PARSE, "%s holds both %s and %s", label,
                        data_field_name(present[0].kind), data_field_name(present[1].kind));
    return FALSE;
  }

  if (t->data_location != 0 && t->data_location != 1) {
    ds_onnx_scope_error(d, s, error, DS_ERROR_PARSE,
                        "%s: data_location is %d (expected 0, DEFAULT, or 1, EXTERNAL)", label,
                        t->data_location);
    return FALSE;
  }
  if (!read_external_keys(d, s, t, label, error))
    return FALSE;
  if (t->data_location == 1) {
    if (n_present > 0) {
      ds_onnx_scope_error(d, s, error, DS_ERROR_PARSE, "%s is stored externally but also holds %s",
                          label, data_field_name(present[0].kind));
      return FALSE;
    }
    if (t->data_type == DS_ONNX_STRING) {
      ds_onnx_scope_error(d, s, error, DS_ERROR_UNSUPPORTED,
                          "%s: string tensors cannot be stored externally", label);
      return FALSE;
    }
    if (t->external_location == NULL || t->external_location[0] == '\0') {
      ds_onnx_scope_error(d, s, error, DS_ERROR_PARSE,
                          "%s is stored externally but has no 'location' entry", label);
      return FALSE;
    }
    if (t->has_external_length && t->external_length != t->n_bytes) {
      ds_onnx_scope_error(d, s, error, DS_ERROR_PARSE,
                          "%s: its external data is %" G_GUINT64_FORMAT
                          " bytes long, its dims and %s "
                          "call for %" G_GUINT64_FORMAT,
                          label, t->external_length, type_name, t->n_bytes);
      return FALSE;
    }
    t->data = DS_ONNX_DATA_EXTERNAL;
    return TRUE;
  }
  if (n_present == 0) {
    t->data = DS_ONNX_DATA_NONE;
    return TRUE;
  }

  t->data = present[0].kind;
  if (t->data == DS_ONNX_DATA_RAW) {
    if (t->data_type == DS_ONNX_STRING) {
      ds_onnx_scope_error(d, s, error, DS_ERROR_PARSE,
                          "%s: string tensors keep their values in string_data, not raw_data",
                          label);
      return FALSE;
    }
    if ((guint64)f->raw_len != t->n_bytes) {
      ds_onnx_scope_error(d, s, error, DS_ERROR_PARSE,
                          "%s: raw_data is %" G_GSIZE_FORMAT " bytes, its dims and %s call for "
                          "%" G_GUINT64_FORMAT,
                          label, f->raw_len, type_name, t->n_bytes);
      return FALSE;
    }
    t->raw_data = f->raw;
    return TRUE;
  }

  guint64 want, want_alt;
  DsOnnxDataKind expected = typed_field_for(t->data_type, t->n_elements, &want, &want_alt);
  if (expected != t->data) {
    ds_onnx_scope_error(d, s, error, DS_ERROR_PARSE,
                        "%s: %s tensors keep their values in %s, not %s", label, type_name,
                        data_field_name(expected), data_field_name(t->data));
    return FALSE;
  }
  /* want and want_alt were computed without overflow checks: n * 2 for complex types can only
   * wrap when n_bytes already did, which was refused above. */
  if ((guint64)present[0].count != want && (guint64)present[0].count != want_alt) {
    ds_onnx_scope_error(d, s, error, DS_ERROR_PARSE,
                        "%s: %s holds %" G_GSIZE_FORMAT " values, its dims and %s call for "
                        "%" G_GUINT64_FORMAT,
                        label, data_field_name(t->data), present[0].count, type_name, want_alt);
    return FALSE;
  }
  DsOnnxArena *a = d->arena;
  switch (t->data) {
  case DS_ONNX_DATA_FLOAT:
    t->float_data = ds_onnx_arena_take(a, f->float_data, &t->n_values);
    break;
  case DS_ONNX_DATA_INT32:
    t->int32_data = ds_onnx_arena_take(a, f->int32_data, &t->n_values);
    break;
  case DS_ONNX_DATA_INT64:
    t->int64_data = ds_onnx_arena_take(a, f->int64_data, &t->n_values);
    break;
  case DS_ONNX_DATA_DOUBLE:
    t->double_data = ds_onnx_arena_take(a, f->double_data, &t->n_values);
    break;
  case DS_ONNX_DATA_UINT64:
    t->uint64_data = ds_onnx_arena_take(a, f->uint64_data, &t->n_values);
    break;
  case DS_ONNX_DATA_STRING:
    t->string_data = ds_onnx_arena_take(a, f->string_data, &t->n_values);
    break;
  default:
    break;
  }
  return TRUE;
}

/* TensorProto: dims = 1, data_type = 2, segment = 3, float_data = 4, int32_data = 5,
 * string_data = 6, int64_data = 7, name = 8, raw_data = 9, double_data = 10,
 * uint64_data = 11, external_data = 13, data_location = 14. */
gboolean ds_onnx_decode_tensor(const DsOnnxDecoder *d, const DsOnnxScope *s, DsPbReader *r,
                               DsOnnxTensor *t, GError **error)
{
  memset(t, 0, sizeof *t);
  t->name = "";
  TensorFields f = {
      .float_data = g_array_new(FALSE, FALSE, sizeof(float)),
      .int32_data = g_array_new(FALSE, FALSE, sizeof(int32_t)),
      .int64_data = g_array_new(FALSE, FALSE, sizeof(int64_t)),
      .double_data = g_array_new(FALSE, FALSE, sizeof(double)),
      .uint64_data = g_array_new(FALSE, FALSE, sizeof(guint64)),
      .string_data = g_array_new(FALSE, FALSE, sizeof(DsOnnxBytes)),
      .dims = g_array_new(FALSE, FALSE, sizeof(int64_t)),
      .external = g_array_new(FALSE, FALSE, sizeof(DsOnnxStringPair)),
  };
  gboolean ok = TRUE;
  while (ok && ds_pb_more(r)) {
    guint32 field;
    DsPbWire wire;
    if (!ds_pb_read_tag(r, &field, &wire, error)) {
      ok = FALSE;
      break;
    }
    int32_t v32;
    DsOnnxBytes blob;
    switch (field) {
    case 1:
      ok = ds_pb_read_repeated_int64(r, wire, f.dims, error);
      break;
    case 2:
      ok = ds_onnx_read_int32_field(r, field, wire, &v32, error);
      t->data_type = v32;
      break;
    case 3:
      ds_pb_set_error(r, r->tag_pos, error, DS_ERROR_UNSUPPORTED,
                      "segmented tensors (TensorProto.segment) are not supported");
      ok = FALSE;
      break;
    case 4:
      ok = ds_pb_read_repeated_float(r, wire, f.float_data, error);
      break;
    case 5:
      ok = ds_pb_read_repeated_int32(r, wire, f.int32_data, error);
      break;
    case 6:
      ok = ds_onnx_read_blob(d, r, field, wire, &blob, error);
      if (ok)
        g_array_append_val(f.string_data, blob);
      break;
    case 7:
      ok = ds_pb_read_repeated_int64(r, wire, f.int64_data, error);
      break;
    case 8:
      ok = ds_onnx_read_string(d, r, field, wire, &t->name, error);
      break;
    case 9:
      ok = ds_pb_expect_wire(r, field, wire, DS_PB_WIRE_LEN, error) &&
           ds_pb_read_bytes(r, &f.raw, &f.raw_len, error);
      f.has_raw = TRUE;
      break;
    case 10:
      ok = ds_pb_read_repeated_double(r, wire, f.double_data, error);
      break;
    case 11:
      ok = ds_pb_read_repeated_uint64(r, wire, f.uint64_data, error);
      break;
    case 13:
      ok = ds_onnx_read_string_pair(d, r, field, wire, f.external, error);
      break;
    case 14:
      ok = ds_onnx_read_int32_field(r, field, wire, &v32, error);
      t->data_location = v32;
      break;
    default:
      ok = ds_pb_skip(r, wire, error);
      break;
    }
  }
  if (ok) {
    t->dims = ds_onnx_arena_take(d->arena, f.dims, &t->n_dims);
    t->external_data = ds_onnx_arena_take(d->arena, f.external, &t->n_external_data);
    ok = check_tensor(d, s, t, &f, error);
  }
  tensor_fields_clear(&f);
  return ok;
}

/* Appends one TensorProto to `tensors`. */
gboolean ds_onnx_read_tensor(const DsOnnxDecoder *d, const DsOnnxScope *s, DsPbReader *r,
                             guint32 field, DsPbWire wire, GArray *tensors, GError **error)
{
  DsPbReader sub;
  DsOnnxTensor t;
  if (!ds_onnx_enter_field(r, field, wire, "TensorProto", NULL, &sub, error) ||
      !ds_onnx_decode_tensor(d, s, &sub, &t, error))
    return FALSE;
  g_array_append_val(tensors, t);
  return TRUE;
}
