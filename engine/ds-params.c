/* ds-params.c: MXNet .params files (NDArray::Save of a list, as mx.nd.save writes it).
 *
 * Layout, all little-endian:
 *   uint64 0x112, uint64 reserved, uint64 array count, the arrays,
 *   uint64 name count (0, or the array count), each name as uint64 length + bytes.
 * An array record is one of
 *   V2 (0xF993fac9) / V3 (0xF993faca): int32 storage type, [sparse: storage shape], shape;
 *   V1 (0xF993fac8): shape;
 *   legacy (no magic; the first uint32 is ndim): uint32 dims;
 * where a shape is int32 ndim + int64 dims; then (unless the array is "none") int32 device
 * type, int32 device id, int32 type flag (mshadow numbering, as DsDType), and the raw data.
 * V1/V2/legacy use MXNet's legacy shape semantics, where ndim 0 marks a none (empty) array;
 * V3 uses NumPy semantics: ndim 0 is a scalar and ndim -1 (or a dim of -1) is unknown.
 *
 * Every count and length is checked against the bytes left before anything is allocated.
 */
#include "ds-params.h"

#include <string.h>

#include "ds-error.h"
#include "ds-file.h"

#define PARAMS_LIST_MAGIC  G_GUINT64_CONSTANT(0x112)
#define NDARRAY_V1_MAGIC   0xF993fac8u
#define NDARRAY_V2_MAGIC   0xF993fac9u
#define NDARRAY_V3_MAGIC   0xF993facau
#define STORAGE_DEFAULT    0
#define STORAGE_ROW_SPARSE 1
#define STORAGE_CSR        2
#define DEV_TYPE_CPU       1
#define NAME_PREFIX_BYTES  4 /* "arg:" and "aux:" */

/* A bounds-checked cursor over the file's bytes. */
typedef struct {
  const guint8 *data;
  gsize len;
  gsize pos;
  const char *name; /* the file, for messages */
} Reader;

static gsize reader_left(const Reader *r)
{
  return r->len - r->pos;
}

static gboolean read_u32(Reader *r, guint32 *out)
{
  if (reader_left(r) < 4)
    return FALSE;
  const guint8 *p = r->data + r->pos;
  *out = (guint32)p[0] | (guint32)p[1] << 8 | (guint32)p[2] << 16 | (guint32)p[3] << 24;
  r->pos += 4;
  return TRUE;
}

static gboolean read_u64(Reader *r, guint64 *out)
{
  guint32 lo, hi;
  if (reader_left(r) < 8)
    return FALSE;
  read_u32(r, &lo);
  read_u32(r, &hi);
  *out = (guint64)hi << 32 | lo;
  return TRUE;
}

static gboolean read_i32(Reader *r, gint32 *out)
{
  guint32 v;
  if (!read_u32(r, &v))
    return FALSE;
  *out = (gint32)v;
  return TRUE;
}

static gboolean read_i64(Reader *r, gint64 *out)
{
  guint64 v;
  if (!read_u64(r, &v))
    return FALSE;
  *out = (gint64)v;
  return TRUE;
}

static void set_truncated(const Reader *r, guint index, const char *what, GError **error)
{
  g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
              "%s: truncated in array %u (%s) at byte %" G_GSIZE_FORMAT, r->name, index, what,
              r->pos);
}

/* Copies `nbytes` of elements stored little-endian, swapping on big-endian hosts. */
static void copy_little_endian(void *dst, const void *src, gsize nbytes, gsize elem_bytes)
{
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
  (void)elem_bytes;
  if (nbytes > 0)
    memcpy(dst, src, nbytes);
#else
  const guint8 *s = src;
  guint8 *o = dst;
  for (gsize i = 0; i < nbytes; i += elem_bytes)
    for (gsize b = 0; b < elem_bytes; b++)
      o[i + b] = s[i + elem_bytes - 1 - b];
#endif
}

/* Reads a shape: int32 ndim then int64 dims (V1 and later) or uint32 dims (legacy, whose ndim
 * was already read as the record's first word). Sets *is_none for MXNet's empty array. */
static gboolean read_shape(Reader *r, guint index, guint32 magic, int *ndim_out, int64_t *shape,
                           gboolean *is_none, GError **error)
{
  gboolean legacy =
      magic != NDARRAY_V1_MAGIC && magic != NDARRAY_V2_MAGIC && magic != NDARRAY_V3_MAGIC;
  gboolean numpy_semantics = magic == NDARRAY_V3_MAGIC;
  gint32 ndim;
  if (legacy) {
    ndim = (gint32)magic;
  } else if (!read_i32(r, &ndim)) {
    set_truncated(r, index, "its ndim", error);
    return FALSE;
  }
  *is_none = FALSE;
  if (numpy_semantics && ndim == -1) {
    *is_none = TRUE;
    return TRUE;
  }
  if (ndim < 0 || ndim > DS_MAX_NDIM) {
    if (legacy)
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                  "%s: array %u: unknown record magic 0x%08x (as a legacy record it would "
                  "have %u dimensions; at most %d are supported)",
                  r->name, index, magic, magic, DS_MAX_NDIM);
    else
      g_set_error(error, DS_ERROR, ndim < 0 ? DS_ERROR_PARSE : DS_ERROR_LIMIT,
                  "%s: array %u has %d dimensions (at most %d are supported)", r->name, index,
                  (int)ndim, DS_MAX_NDIM);
    return FALSE;
  }
  for (gint32 i = 0; i < ndim; i++) {
    if (legacy) {
      guint32 dim;
      if (!read_u32(r, &dim)) {
        set_truncated(r, index, "its shape", error);
        return FALSE;
      }
      shape[i] = dim;
    } else {
      gint64 dim;
      if (!read_i64(r, &dim)) {
        set_truncated(r, index, "its shape", error);
        return FALSE;
      }
      if (numpy_semantics && dim == -1) {
        *is_none = TRUE;
      } else if (dim < 0) {
        g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                    "%s: array %u: dimension %d is negative (%" G_GINT64_FORMAT ")", r->name, index,
                    (int)i, (gint64)dim);
        return FALSE;
      }
      shape[i] = dim;
    }
  }
  /* Legacy shape semantics: ndim 0 is the none array, not a scalar. */
  if (!numpy_semantics && ndim == 0)
    *is_none = TRUE;
  *ndim_out = ndim;
  return TRUE;
}

/* Reads one array record into *out (a new DsNDArray). */
static gboolean read_array(Reader *r, guint index, DsNDArray **out, GError **error)
{
  guint32 magic;
  if (!read_u32(r, &magic)) {
    set_truncated(r, index, "its magic", error);
    return FALSE;
  }
  if (magic == NDARRAY_V2_MAGIC || magic == NDARRAY_V3_MAGIC) {
    gint32 stype;
    if (!read_i32(r, &stype)) {
      set_truncated(r, index, "its storage type", error);
      return FALSE;
    }
    if (stype == STORAGE_ROW_SPARSE || stype == STORAGE_CSR) {
      g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
                  "%s: array %u has sparse storage (%s); only dense arrays are supported", r->name,
                  index, stype == STORAGE_CSR ? "csr" : "row_sparse");
      return FALSE;
    }
    if (stype != STORAGE_DEFAULT) {
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: array %u has unknown storage type %d",
                  r->name, index, (int)stype);
      return FALSE;
    }
  }

  int ndim = 0;
  int64_t shape[DS_MAX_NDIM];
  gboolean is_none;
  if (!read_shape(r, index, magic, &ndim, shape, &is_none, error))
    return FALSE;
  if (is_none) {
    g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
                "%s: array %u is MXNet's empty (none) array, which has no shape or data", r->name,
                index);
    return FALSE;
  }

  gint32 dev_type, dev_id, type_flag;
  if (!read_i32(r, &dev_type) || !read_i32(r, &dev_id)) {
    set_truncated(r, index, "its context", error);
    return FALSE;
  }
  if (!read_i32(r, &type_flag)) {
    set_truncated(r, index, "its type flag", error);
    return FALSE;
  }
  if (!ds_dtype_is_valid(type_flag)) {
    g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
                "%s: array %u has type flag %d, which is not supported (0-12: float32, "
                "float64, float16, uint8, int32, int8, int64, bool, int16, uint16, uint32, "
                "uint64, bfloat16)",
                r->name, index, (int)type_flag);
    return FALSE;
  }
  DsDType dtype = (DsDType)type_flag;
  size_t nbytes;
  if (!ds_shape_checked_nbytes(shape, ndim, ds_dtype_size(dtype), SIZE_MAX, &nbytes)) {
    g_set_error(error, DS_ERROR, DS_ERROR_LIMIT,
                "%s: array %u: the shape's byte size does not fit in memory addresses", r->name,
                index);
    return FALSE;
  }
  if (nbytes > reader_left(r)) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: truncated in array %u (its data): it needs %zu bytes, %" G_GSIZE_FORMAT
                " are left",
                r->name, index, nbytes, reader_left(r));
    return FALSE;
  }
  char *what = g_strdup_printf("%s: array %u", r->name, index);
  DsNDArray *array = ds_ndarray_new(dtype, ndim, shape, what, error);
  g_free(what);
  if (array == NULL)
    return FALSE;
  copy_little_endian(array->view.data, r->data + r->pos, nbytes, ds_dtype_size(dtype));
  r->pos += nbytes;
  *out = array;
  return TRUE;
}

/* Sets the name of `param` from a stored name, stripping and recording the prefix. */
static void set_param_name(DsParam *param, const char *stored, gsize len)
{
  if (len >= NAME_PREFIX_BYTES && memcmp(stored, "aux:", NAME_PREFIX_BYTES) == 0) {
    param->is_aux = TRUE;
    param->name = g_strndup(stored + NAME_PREFIX_BYTES, len - NAME_PREFIX_BYTES);
  } else if (len >= NAME_PREFIX_BYTES && memcmp(stored, "arg:", NAME_PREFIX_BYTES) == 0) {
    param->name = g_strndup(stored + NAME_PREFIX_BYTES, len - NAME_PREFIX_BYTES);
  } else {
    param->name = g_strndup(stored, len);
  }
}

DsParams *ds_params_load_data(const guint8 *data, gsize len, const char *name, GError **error)
{
  g_return_val_if_fail(data != NULL || len == 0, NULL);
  Reader r = {data, len, 0, name != NULL ? name : "<params>"};
  /* Items grow as records are read, so a huge claimed count allocates nothing up front. */
  GArray *items = g_array_new(FALSE, TRUE, sizeof(DsParam));
  guint64 magic, reserved, n_arrays, n_names;

  if (!read_u64(&r, &magic) || !read_u64(&r, &reserved)) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: truncated .params header (%" G_GSIZE_FORMAT " bytes)", r.name, len);
    goto fail;
  }
  if (magic != PARAMS_LIST_MAGIC) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: not an MXNet .params file (magic 0x%" G_GINT64_MODIFIER "x, expected 0x112)",
                r.name, magic);
    goto fail;
  }
  if (!read_u64(&r, &n_arrays)) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: truncated before the array count", r.name);
    goto fail;
  }
  /* The smallest record is 4 bytes (a legacy none array); anything more is a lie. */
  if (n_arrays > reader_left(&r) / 4) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: claims %" G_GUINT64_FORMAT " arrays, but only %" G_GSIZE_FORMAT
                " bytes follow",
                r.name, n_arrays, reader_left(&r));
    goto fail;
  }
  for (guint i = 0; i < n_arrays; i++) {
    DsParam param = {0};
    if (!read_array(&r, i, &param.array, error))
      goto fail;
    g_array_append_val(items, param);
  }

  if (!read_u64(&r, &n_names)) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: truncated before the name count", r.name);
    goto fail;
  }
  if (n_names != 0 && n_names != n_arrays) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: has %" G_GUINT64_FORMAT " names for %" G_GUINT64_FORMAT " arrays", r.name,
                n_names, n_arrays);
    goto fail;
  }
  for (guint i = 0; i < items->len; i++) {
    DsParam *param = &g_array_index(items, DsParam, i);
    if (n_names == 0) {
      /* An unnamed list (mx.nd.save of a Python list): arrays are known by position. */
      param->name = g_strdup_printf("%u", i);
      continue;
    }
    guint64 name_len;
    if (!read_u64(&r, &name_len)) {
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                  "%s: truncated in the name of array %u (its length)", r.name, i);
      goto fail;
    }
    if (name_len > reader_left(&r)) {
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                  "%s: truncated in the name of array %u: it claims %" G_GUINT64_FORMAT
                  " bytes, %" G_GSIZE_FORMAT " are left",
                  r.name, i, name_len, reader_left(&r));
      goto fail;
    }
    const char *stored = (const char *)r.data + r.pos;
    if (memchr(stored, '\0', name_len) != NULL) {
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: the name of array %u contains a NUL byte",
                  r.name, i);
      goto fail;
    }
    set_param_name(param, stored, name_len);
    r.pos += name_len;
  }
  if (reader_left(&r) != 0) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: %" G_GSIZE_FORMAT " unexpected bytes after the names", r.name,
                reader_left(&r));
    goto fail;
  }

  DsParams *params = g_new0(DsParams, 1);
  params->n_items = items->len;
  params->items = (DsParam *)g_array_free(items, FALSE);
  return params;

fail:
  for (guint i = 0; i < items->len; i++) {
    DsParam *param = &g_array_index(items, DsParam, i);
    g_free(param->name);
    ds_ndarray_free(param->array);
  }
  g_array_free(items, TRUE);
  return NULL;
}

DsParams *ds_params_load(const char *path, GError **error)
{
  g_autoptr(GMappedFile) file = ds_file_map(path, error);
  if (file == NULL)
    return NULL;
  return ds_params_load_data((const guint8 *)g_mapped_file_get_contents(file),
                             g_mapped_file_get_length(file), path, error);
}

void ds_params_free(DsParams *params)
{
  if (params == NULL)
    return;
  for (guint i = 0; i < params->n_items; i++) {
    g_free(params->items[i].name);
    ds_ndarray_free(params->items[i].array);
  }
  g_free(params->items);
  g_free(params);
}

const DsNDArray *ds_params_lookup(const DsParams *params, const char *name)
{
  g_return_val_if_fail(params != NULL && name != NULL, NULL);
  for (guint i = 0; i < params->n_items; i++)
    if (strcmp(params->items[i].name, name) == 0)
      return params->items[i].array;
  return NULL;
}

static void put_u32(GByteArray *out, guint32 v)
{
  guint8 b[4] = {v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, (v >> 24) & 0xff};
  g_byte_array_append(out, b, 4);
}

static void put_u64(GByteArray *out, guint64 v)
{
  put_u32(out, (guint32)(v & 0xffffffffu));
  put_u32(out, (guint32)(v >> 32));
}

guint8 *ds_params_encode(const DsParam *items, guint n_items, gsize *len_out)
{
  g_return_val_if_fail(items != NULL || n_items == 0, NULL);
  g_return_val_if_fail(len_out != NULL, NULL);
  for (guint i = 0; i < n_items; i++) {
    const DsNDArray *array = items[i].array;
    g_return_val_if_fail(array != NULL && ds_dtype_is_valid(array->view.dtype) &&
                             array->view.ndim >= 0 && array->view.ndim <= DS_MAX_NDIM,
                         NULL);
  }
  GByteArray *out = g_byte_array_new();
  put_u64(out, PARAMS_LIST_MAGIC);
  put_u64(out, 0);
  put_u64(out, n_items);
  for (guint i = 0; i < n_items; i++) {
    const DsNDArray *array = items[i].array;
    /* V2 cannot hold a scalar (its ndim 0 means "none"); V3's NumPy semantics can. */
    put_u32(out, array->view.ndim == 0 ? NDARRAY_V3_MAGIC : NDARRAY_V2_MAGIC);
    put_u32(out, STORAGE_DEFAULT);
    put_u32(out, (guint32)array->view.ndim);
    for (int d = 0; d < array->view.ndim; d++)
      put_u64(out, (guint64)array->view.shape[d]);
    put_u32(out, DEV_TYPE_CPU);
    put_u32(out, 0);
    put_u32(out, (guint32)array->view.dtype);
    gsize at = out->len;
    g_byte_array_set_size(out, at + array->nbytes);
    copy_little_endian(out->data + at, array->view.data, array->nbytes,
                       ds_dtype_size(array->view.dtype));
  }
  put_u64(out, n_items);
  for (guint i = 0; i < n_items; i++) {
    const char *name = items[i].name != NULL ? items[i].name : "";
    gsize name_len = strlen(name);
    put_u64(out, NAME_PREFIX_BYTES + name_len);
    g_byte_array_append(out, (const guint8 *)(items[i].is_aux ? "aux:" : "arg:"),
                        NAME_PREFIX_BYTES);
    g_byte_array_append(out, (const guint8 *)name, name_len);
  }
  *len_out = out->len;
  return g_byte_array_free(out, FALSE);
}

gboolean ds_params_save(const char *path, const DsParam *items, guint n_items, GError **error)
{
  g_return_val_if_fail(path != NULL, FALSE);
  gsize len;
  guint8 *bytes = ds_params_encode(items, n_items, &len);
  if (bytes == NULL) {
    g_set_error(error, DS_ERROR, DS_ERROR_INVALID, "%s: invalid parameter list", path);
    return FALSE;
  }
  GError *local = NULL;
  /* g_file_set_contents writes a temporary file and renames it over `path`. */
  gboolean ok = g_file_set_contents(path, (const char *)bytes, (gssize)len, &local);
  g_free(bytes);
  if (!ok) {
    g_set_error(error, DS_ERROR, DS_ERROR_IO, "%s: cannot write: %s", path, local->message);
    g_error_free(local);
  }
  return ok;
}
