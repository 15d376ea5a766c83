/* ds-npy.c: NumPy .npy files, read and written as numpy.save writes them.
 *
 * Layout: the magic "\x93NUMPY", a major and a minor version byte, the header length
 * (little-endian uint16 in 1.0, uint32 in 2.0 and 3.0), the header, then the raw C-ordered
 * data. The header is a Python dict literal, e.g.
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and ending in '\n' so that the data starts on a 64-byte boundary.
 * Version 3.0 only differs in allowing UTF-8 in the header (field names of structured
 * dtypes, which are refused anyway).
 */
#include "ds-npy.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "ds-error.h"
#include "ds-file.h"

#define NPY_MAGIC             "\x93NUMPY"
#define NPY_MAGIC_BYTES       6
#define NPY_PREFIX_BYTES      8      /* magic + major + minor */
#define NPY_ALIGN_BYTES       64     /* numpy starts the data on a 64-byte boundary */
#define NPY_GROWTH_DIGITS     21     /* numpy leaves room for shape[0] to grow to 21 digits */
#define NPY_V1_MAX_HEADER     65535u /* the uint16 header length of version 1.0 */
#define NPY_WRITE_CHUNK_BYTES ((gsize)1 << 30)

/* The parsed header. `descr` points into the header text. */
typedef struct {
  const char *descr;
  gsize descr_len;
  gboolean have_descr;
  gboolean fortran_order;
  gboolean have_fortran_order;
  int ndim;
  int64_t shape[DS_MAX_NDIM];
  gboolean have_shape;
} NpyHeader;

/* A bounds-checked cursor over the header text, which is not NUL-terminated. */
typedef struct {
  const char *text;
  gsize len;
  gsize pos;
  const char *name; /* the file, for messages */
} HeaderCursor;

static void cursor_skip_space(HeaderCursor *c)
{
  while (c->pos < c->len && g_ascii_isspace(c->text[c->pos]))
    c->pos++;
}

/* Skips whitespace, then consumes `ch` if it is next. */
static gboolean cursor_accept(HeaderCursor *c, char ch)
{
  cursor_skip_space(c);
  if (c->pos < c->len && c->text[c->pos] == ch) {
    c->pos++;
    return TRUE;
  }
  return FALSE;
}

static gboolean cursor_expect(HeaderCursor *c, char ch, const char *what, GError **error)
{
  if (cursor_accept(c, ch))
    return TRUE;
  if (c->pos < c->len)
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: .npy header: expected '%c' %s at header byte %" G_GSIZE_FORMAT ", found '%c'",
                c->name, ch, what, c->pos, c->text[c->pos]);
  else
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: .npy header: expected '%c' %s, but the header ends", c->name, ch, what);
  return FALSE;
}

/* A quoted Python string without escapes (numpy writes none in the keys and descr we
 * accept). On success, *start and *n_out describe its contents inside the header text. */
static gboolean parse_string(HeaderCursor *c, const char **start, gsize *n_out, GError **error)
{
  cursor_skip_space(c);
  if (c->pos >= c->len || (c->text[c->pos] != '\'' && c->text[c->pos] != '"')) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: .npy header: expected a quoted string at header byte %" G_GSIZE_FORMAT,
                c->name, c->pos);
    return FALSE;
  }
  char quote = c->text[c->pos++];
  gsize begin = c->pos;
  while (c->pos < c->len && c->text[c->pos] != quote) {
    if (c->text[c->pos] == '\\') {
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                  "%s: .npy header: escape sequences in strings are not supported (header "
                  "byte %" G_GSIZE_FORMAT ")",
                  c->name, c->pos);
      return FALSE;
    }
    c->pos++;
  }
  if (c->pos >= c->len) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: .npy header: unterminated string", c->name);
    return FALSE;
  }
  *start = c->text + begin;
  *n_out = c->pos - begin;
  c->pos++;
  return TRUE;
}

/* Python's True/False. */
static gboolean parse_bool(HeaderCursor *c, gboolean *out, GError **error)
{
  cursor_skip_space(c);
  const char *at = c->text + c->pos;
  gsize left = c->len - c->pos;
  if (left >= 4 && memcmp(at, "True", 4) == 0) {
    c->pos += 4;
    *out = TRUE;
    return TRUE;
  }
  if (left >= 5 && memcmp(at, "False", 5) == 0) {
    c->pos += 5;
    *out = FALSE;
    return TRUE;
  }
  g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
              "%s: .npy header: 'fortran_order' must be True or False (header byte "
              "%" G_GSIZE_FORMAT ")",
              c->name, c->pos);
  return FALSE;
}

/* A tuple of non-negative integers: "()", "(3,)", "(2, 3)". Python 2's "3L" is accepted. */
static gboolean parse_shape(HeaderCursor *c, NpyHeader *h, GError **error)
{
  gboolean saw_comma = FALSE;
  if (!cursor_expect(c, '(', "to open the shape tuple", error))
    return FALSE;
  h->ndim = 0;
  while (!cursor_accept(c, ')')) {
    if (h->ndim > 0 && !saw_comma) {
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                  "%s: .npy header: expected ',' or ')' in the shape at header byte "
                  "%" G_GSIZE_FORMAT,
                  c->name, c->pos);
      return FALSE;
    }
    cursor_skip_space(c);
    if (c->pos < c->len && c->text[c->pos] == '-') {
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                  "%s: .npy header: the shape has a negative dimension", c->name);
      return FALSE;
    }
    if (c->pos >= c->len || !g_ascii_isdigit(c->text[c->pos])) {
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                  "%s: .npy header: expected a dimension in the shape at header byte "
                  "%" G_GSIZE_FORMAT,
                  c->name, c->pos);
      return FALSE;
    }
    int64_t dim = 0;
    while (c->pos < c->len && g_ascii_isdigit(c->text[c->pos])) {
      int digit = c->text[c->pos++] - '0';
      if (dim > (G_MAXINT64 - digit) / 10) {
        g_set_error(error, DS_ERROR, DS_ERROR_LIMIT,
                    "%s: .npy header: a dimension of the shape does not fit in 64 bits", c->name);
        return FALSE;
      }
      dim = dim * 10 + digit;
    }
    if (c->pos < c->len && (c->text[c->pos] == 'L' || c->text[c->pos] == 'l'))
      c->pos++;
    if (h->ndim == DS_MAX_NDIM) {
      g_set_error(error, DS_ERROR, DS_ERROR_LIMIT, "%s: the shape has more than %d dimensions",
                  c->name, DS_MAX_NDIM);
      return FALSE;
    }
    h->shape[h->ndim++] = dim;
    saw_comma = cursor_accept(c, ',');
  }
  /* "(3)" is the integer 3 in Python, not a tuple. */
  if (h->ndim == 1 && !saw_comma) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: .npy header: the shape is not a tuple (a one-element tuple needs a comma)",
                c->name);
    return FALSE;
  }
  return TRUE;
}

static gboolean duplicate_key(HeaderCursor *c, gboolean seen, const char *key, GError **error)
{
  if (seen)
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: .npy header: key '%s' appears twice", c->name,
                key);
  return seen;
}

/* Parses the dict literal. numpy requires exactly the keys descr, fortran_order and shape. */
static gboolean parse_header(HeaderCursor *c, NpyHeader *h, GError **error)
{
  memset(h, 0, sizeof *h);
  if (!cursor_expect(c, '{', "to open the header dict", error))
    return FALSE;
  while (!cursor_accept(c, '}')) {
    const char *key;
    gsize key_len;
    if (!parse_string(c, &key, &key_len, error))
      return FALSE;
    if (!cursor_expect(c, ':', "after a key", error))
      return FALSE;
    if (key_len == 5 && memcmp(key, "descr", 5) == 0) {
      if (duplicate_key(c, h->have_descr, "descr", error))
        return FALSE;
      cursor_skip_space(c);
      if (c->pos < c->len && c->text[c->pos] == '[') {
        g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
                    "%s: structured dtypes (a list of fields in 'descr') are not supported",
                    c->name);
        return FALSE;
      }
      if (!parse_string(c, &h->descr, &h->descr_len, error))
        return FALSE;
      h->have_descr = TRUE;
    } else if (key_len == 13 && memcmp(key, "fortran_order", 13) == 0) {
      if (duplicate_key(c, h->have_fortran_order, "fortran_order", error))
        return FALSE;
      if (!parse_bool(c, &h->fortran_order, error))
        return FALSE;
      h->have_fortran_order = TRUE;
    } else if (key_len == 5 && memcmp(key, "shape", 5) == 0) {
      if (duplicate_key(c, h->have_shape, "shape", error))
        return FALSE;
      if (!parse_shape(c, h, error))
        return FALSE;
      h->have_shape = TRUE;
    } else {
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                  "%s: .npy header: unexpected key '%.*s' (numpy writes only 'descr', "
                  "'fortran_order' and 'shape')",
                  c->name, (int)MIN(key_len, 64), key);
      return FALSE;
    }
    if (!cursor_accept(c, ',')) {
      if (!cursor_expect(c, '}', "or ',' after a value", error))
        return FALSE;
      break;
    }
  }
  cursor_skip_space(c);
  if (c->pos != c->len) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: .npy header: unexpected text after the dict at header byte "
                "%" G_GSIZE_FORMAT,
                c->name, c->pos);
    return FALSE;
  }
  if (!h->have_descr || !h->have_fortran_order || !h->have_shape) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: .npy header: missing key '%s'", c->name,
                !h->have_descr           ? "descr"
                : !h->have_fortran_order ? "fortran_order"
                                         : "shape");
    return FALSE;
  }
  return TRUE;
}

/* Maps a descr such as '<f4' or '|u1' to a dtype. */
static gboolean dtype_from_descr(const NpyHeader *h, const char *name, DsDType *out, GError **error)
{
  const char *d = h->descr;
  gsize n = h->descr_len;
  int shown = (int)MIN(n, 32);
  char order = '=';
  if (n > 0 && strchr("<>|=", d[0]) != NULL) {
    order = d[0];
    d++;
    n--;
  }
  for (int i = 0; i < DS_DTYPE_COUNT; i++) {
    const char *code = ds_dtype_npy_code((DsDType)i);
    if (code == NULL || strlen(code) != n || memcmp(code, d, n) != 0)
      continue;
    if (ds_dtype_size((DsDType)i) > 1 && order == '>') {
      g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
                  "%s: big-endian data ('%.*s') is not supported; save it little-endian", name,
                  shown, h->descr);
      return FALSE;
    }
    if (ds_dtype_size((DsDType)i) > 1 && order == '|') {
      g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
                  "%s: dtype '%.*s' has no byte order, which a multi-byte type needs", name, shown,
                  h->descr);
      return FALSE;
    }
    *out = (DsDType)i;
    return TRUE;
  }
  if (n > 0 && d[0] == 'O') {
    g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
                "%s: object arrays ('%.*s') are not supported", name, shown, h->descr);
    return FALSE;
  }
  g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
              "%s: dtype '%.*s' is not supported (supported: <f4 <f8 <f2 <i2 <i4 <i8 |u1 <u2 "
              "<u4 <u8 |i1 |b1)",
              name, shown, h->descr);
  return FALSE;
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

DsNDArray *ds_npy_load_data(const guint8 *data, gsize len, const char *name, GError **error)
{
  g_return_val_if_fail(data != NULL || len == 0, NULL);
  if (name == NULL)
    name = "<npy>";
  if (len < NPY_PREFIX_BYTES || memcmp(data, NPY_MAGIC, NPY_MAGIC_BYTES) != 0) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: not a .npy file (it does not start with \"\\x93NUMPY\")", name);
    return NULL;
  }
  guint major = data[6], minor = data[7];
  gsize len_bytes;
  if (major == 1 && minor == 0)
    len_bytes = 2;
  else if ((major == 2 || major == 3) && minor == 0)
    len_bytes = 4;
  else {
    g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
                "%s: .npy format version %u.%u is not supported (1.0, 2.0 and 3.0 are)", name,
                major, minor);
    return NULL;
  }
  if (len - NPY_PREFIX_BYTES < len_bytes) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: truncated .npy header length", name);
    return NULL;
  }
  const guint8 *p = data + NPY_PREFIX_BYTES;
  gsize header_len = len_bytes == 2
                         ? (gsize)p[0] | (gsize)p[1] << 8
                         : (gsize)p[0] | (gsize)p[1] << 8 | (gsize)p[2] << 16 | (gsize)p[3] << 24;
  gsize header_start = NPY_PREFIX_BYTES + len_bytes;
  if (header_len > len - header_start) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: truncated .npy header (it claims %" G_GSIZE_FORMAT
                " bytes, the file has %" G_GSIZE_FORMAT " after the prefix)",
                name, header_len, len - header_start);
    return NULL;
  }

  NpyHeader h;
  HeaderCursor cursor = {(const char *)data + header_start, header_len, 0, name};
  if (!parse_header(&cursor, &h, error))
    return NULL;
  DsDType dtype;
  if (!dtype_from_descr(&h, name, &dtype, error))
    return NULL;
  /* For at most one dimension, Fortran and C order are the same bytes. */
  if (h.fortran_order && h.ndim > 1) {
    g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
                "%s: Fortran-ordered arrays are not supported; save it with "
                "numpy.ascontiguousarray",
                name);
    return NULL;
  }

  gsize elem_bytes = ds_dtype_size(dtype);
  size_t nbytes;
  if (!ds_shape_checked_nbytes(h.shape, h.ndim, elem_bytes, SIZE_MAX, &nbytes)) {
    g_set_error(error, DS_ERROR, DS_ERROR_LIMIT,
                "%s: the shape's byte size does not fit in memory addresses", name);
    return NULL;
  }
  gsize data_start = header_start + header_len;
  gsize available = len - data_start;
  if (nbytes != available) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: %s data: the header calls for %zu bytes, the file has %" G_GSIZE_FORMAT, name,
                nbytes > available ? "truncated" : "unexpected", nbytes, available);
    return NULL;
  }
  DsNDArray *array = ds_ndarray_new(dtype, h.ndim, h.shape, name, error);
  if (array == NULL)
    return NULL;
  copy_little_endian(array->view.data, data + data_start, nbytes, elem_bytes);
  return array;
}

DsNDArray *ds_npy_load(const char *path, GError **error)
{
  g_autoptr(GMappedFile) file = ds_file_map(path, error);
  if (file == NULL)
    return NULL;
  return ds_npy_load_data((const guint8 *)g_mapped_file_get_contents(file),
                          g_mapped_file_get_length(file), path, error);
}

/* The prefix numpy.save writes for `tensor`: magic, version, header length, dict, padding
 * and '\n'. */
static GByteArray *encode_prefix(const DsTensor *tensor)
{
  const char *code = ds_dtype_npy_code(tensor->dtype);
  GString *dict = g_string_new(NULL);
  g_string_append_printf(dict, "{'descr': '%c%s', 'fortran_order': False, 'shape': (",
                         ds_dtype_size(tensor->dtype) == 1 ? '|' : '<', code);
  for (int i = 0; i < tensor->ndim; i++)
    g_string_append_printf(dict, i == 0 ? "%" G_GINT64_FORMAT : ", %" G_GINT64_FORMAT,
                           tensor->shape[i]);
  g_string_append(dict, tensor->ndim == 1 ? ",), }" : "), }");
  if (tensor->ndim > 0) {
    char digits[24];
    int n = g_snprintf(digits, sizeof digits, "%" G_GINT64_FORMAT, tensor->shape[0]);
    for (int i = n; i < NPY_GROWTH_DIGITS; i++)
      g_string_append_c(dict, ' ');
  }

  /* numpy pads so that prefix + length field + header is a multiple of 64, adding a whole
   * 64 when it already is one; the header's last byte is '\n'. */
  gsize len_bytes = 2;
  gsize header_len = dict->len + 1;
  gsize pad = NPY_ALIGN_BYTES - (NPY_PREFIX_BYTES + len_bytes + header_len) % NPY_ALIGN_BYTES;
  if (header_len + pad > NPY_V1_MAX_HEADER) {
    len_bytes = 4;
    pad = NPY_ALIGN_BYTES - (NPY_PREFIX_BYTES + len_bytes + header_len) % NPY_ALIGN_BYTES;
  }
  gsize total = header_len + pad;

  GByteArray *out = g_byte_array_sized_new(NPY_PREFIX_BYTES + len_bytes + total);
  guint8 version[2] = {len_bytes == 2 ? 1 : 2, 0};
  g_byte_array_append(out, (const guint8 *)NPY_MAGIC, NPY_MAGIC_BYTES);
  g_byte_array_append(out, version, 2);
  guint8 field[4] = {total & 0xff, (total >> 8) & 0xff, (total >> 16) & 0xff, (total >> 24) & 0xff};
  g_byte_array_append(out, field, len_bytes);
  g_byte_array_append(out, (const guint8 *)dict->str, dict->len);
  for (gsize i = 0; i < pad; i++)
    g_byte_array_append(out, (const guint8 *)" ", 1);
  g_byte_array_append(out, (const guint8 *)"\n", 1);
  g_string_free(dict, TRUE);
  return out;
}

static gboolean tensor_is_valid(const DsTensor *tensor, size_t *nbytes)
{
  if (!ds_dtype_is_valid(tensor->dtype) || ds_dtype_npy_code(tensor->dtype) == NULL ||
      !ds_shape_checked_nbytes(tensor->shape, tensor->ndim, ds_dtype_size(tensor->dtype), SIZE_MAX,
                               nbytes))
    return FALSE;
  return *nbytes == 0 || tensor->data != NULL;
}

guint8 *ds_npy_encode(const DsTensor *tensor, gsize *len_out)
{
  size_t nbytes;
  g_return_val_if_fail(tensor != NULL && len_out != NULL, NULL);
  g_return_val_if_fail(tensor_is_valid(tensor, &nbytes), NULL);
  GByteArray *prefix = encode_prefix(tensor);
  gsize len = prefix->len + nbytes;
  guint8 *out = g_malloc(len);
  memcpy(out, prefix->data, prefix->len);
  copy_little_endian(out + prefix->len, tensor->data, nbytes, ds_dtype_size(tensor->dtype));
  g_byte_array_unref(prefix);
  *len_out = len;
  return out;
}

static gboolean write_all(int fd, const guint8 *p, gsize n)
{
  while (n > 0) {
    ssize_t w = write(fd, p, MIN(n, NPY_WRITE_CHUNK_BYTES));
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return FALSE;
    }
    p += w;
    n -= (gsize)w;
  }
  return TRUE;
}

/* Writes head then body to a temporary file next to `path` and renames it over `path`, so a
 * reader sees the old file or the complete new one, never a partial one. */
static gboolean write_atomically(const char *path, const guint8 *head, gsize head_len,
                                 const guint8 *body, gsize body_len, GError **error)
{
  char *tmp = g_strdup_printf("%s.XXXXXX", path);
  int fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, 0666);
  if (fd < 0) {
    int saved = errno;
    g_set_error(error, DS_ERROR, DS_ERROR_IO, "%s: cannot create a temporary file: %s", path,
                g_strerror(saved));
    g_free(tmp);
    return FALSE;
  }
  gboolean ok = write_all(fd, head, head_len) && write_all(fd, body, body_len) && fsync(fd) == 0;
  int saved = errno;
  if (close(fd) != 0 && ok) {
    ok = FALSE;
    saved = errno;
  }
  if (ok && g_rename(tmp, path) != 0) {
    ok = FALSE;
    saved = errno;
  }
  if (!ok) {
    g_unlink(tmp);
    g_set_error(error, DS_ERROR, DS_ERROR_IO, "%s: cannot write: %s", path, g_strerror(saved));
  }
  g_free(tmp);
  return ok;
}

gboolean ds_npy_save(const char *path, const DsTensor *tensor, GError **error)
{
  size_t nbytes;
  g_return_val_if_fail(path != NULL && tensor != NULL, FALSE);
  /* NumPy has no bfloat16: writing its bits as uint16 would read back as other numbers. */
  if (ds_dtype_is_valid(tensor->dtype) && ds_dtype_npy_code(tensor->dtype) == NULL) {
    g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
                "%s: NumPy has no %s type, so a .npy file cannot hold this tensor; cast it to "
                "float32 in the model", path, ds_dtype_name(tensor->dtype));
    return FALSE;
  }
  g_return_val_if_fail(tensor_is_valid(tensor, &nbytes), FALSE);
  GByteArray *prefix = encode_prefix(tensor);
  gboolean ok;
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
  ok = write_atomically(path, prefix->data, prefix->len, tensor->data, nbytes, error);
#else
  guint8 *swapped = g_malloc(MAX(nbytes, 1));
  copy_little_endian(swapped, tensor->data, nbytes, ds_dtype_size(tensor->dtype));
  ok = write_atomically(path, prefix->data, prefix->len, swapped, nbytes, error);
  g_free(swapped);
#endif
  g_byte_array_unref(prefix);
  return ok;
}
