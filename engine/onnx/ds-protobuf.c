/* ds-protobuf.c: the wire-format reader (see ds-protobuf.h for the format and the errors).
 *
 * Every read first checks that the bytes it needs lie inside [pos, end); lengths are compared
 * against what is left rather than added to pos, so a length near 2^64 cannot wrap around.
 */
#include "ds-protobuf.h"

#include <stdarg.h>
#include <string.h>

#include "ds-error.h"

#define VARINT_MAX_BYTES 10
#define FIELD_NUMBER_MAX ((1u << 29) - 1)

void ds_pb_reader_init(DsPbReader *r, const guint8 *data, gsize size, const char *name,
                       const char *what)
{
  g_return_if_fail(data != NULL || size == 0);
  r->base = data;
  r->pos = 0;
  r->end = size;
  r->depth = 0;
  r->tag_pos = 0;
  r->name = name != NULL ? name : "<protobuf>";
  r->what = what != NULL ? what : "message";
}

void ds_pb_set_error(const DsPbReader *r, gsize offset, GError **error, int code, const char *fmt,
                     ...)
{
  if (error == NULL)
    return;
  va_list args;
  va_start(args, fmt);
  g_autofree char *message = g_strdup_vprintf(fmt, args);
  va_end(args);
  g_set_error(error, DS_ERROR, code, "%s: byte %" G_GSIZE_FORMAT " (%s): %s", r->name, offset,
              r->what, message);
  ds_pb_one_line((*error)->message);
}

void ds_pb_one_line(char *message)
{
  for (char *p = message; *p != '\0'; p++)
    if ((guchar)*p < 0x20 || *p == 0x7f)
      *p = '?';
}

const char *ds_pb_wire_name(DsPbWire wire)
{
  switch (wire) {
  case DS_PB_WIRE_VARINT:
    return "varint";
  case DS_PB_WIRE_FIXED64:
    return "64-bit";
  case DS_PB_WIRE_LEN:
    return "length-delimited";
  case DS_PB_WIRE_FIXED32:
    return "32-bit";
  }
  return "invalid";
}

/* Fails unless `n` more bytes are left in the message. */
static gboolean need(const DsPbReader *r, gsize n, const char *what, GError **error)
{
  if (r->end - r->pos >= n)
    return TRUE;
  ds_pb_set_error(r, r->pos, error, DS_ERROR_PARSE,
                  "expected %s of %" G_GSIZE_FORMAT " bytes, but the message ends first "
                  "(bytes left: %" G_GSIZE_FORMAT ")",
                  what, n, r->end - r->pos);
  return FALSE;
}

gboolean ds_pb_read_varint(DsPbReader *r, guint64 *value, GError **error)
{
  gsize start = r->pos;
  guint64 v = 0;
  for (int i = 0; i < VARINT_MAX_BYTES; i++) {
    if (r->pos >= r->end) {
      ds_pb_set_error(r, start, error, DS_ERROR_PARSE,
                      r->pos == start ? "expected a varint, but the message ends"
                                      : "the data ends inside a varint (truncated varint)");
      return FALSE;
    }
    guint8 byte = r->base[r->pos++];
    /* The tenth byte carries bit 63 alone: anything more does not fit in 64 bits. */
    if (i == VARINT_MAX_BYTES - 1 && byte > 1) {
      ds_pb_set_error(r, start, error, DS_ERROR_PARSE,
                      byte & 0x80 ? "a varint longer than 10 bytes"
                                  : "a varint whose value overflows 64 bits");
      return FALSE;
    }
    v |= (guint64)(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      *value = v;
      return TRUE;
    }
  }
  g_assert_not_reached();
}

gboolean ds_pb_read_int64(DsPbReader *r, int64_t *value, GError **error)
{
  guint64 v;
  if (!ds_pb_read_varint(r, &v, error))
    return FALSE;
  *value = (int64_t)v;
  return TRUE;
}

gboolean ds_pb_read_int32(DsPbReader *r, int32_t *value, GError **error)
{
  gsize start = r->pos;
  int64_t v;
  if (!ds_pb_read_int64(r, &v, error))
    return FALSE;
  /* Writers sign-extend a negative int32 to 64 bits; any other value is not an int32. */
  if (v < G_MININT32 || v > G_MAXINT32) {
    ds_pb_set_error(r, start, error, DS_ERROR_PARSE,
                    "expected a 32-bit integer, found %" G_GINT64_FORMAT, v);
    return FALSE;
  }
  *value = (int32_t)v;
  return TRUE;
}

gboolean ds_pb_read_sint64(DsPbReader *r, int64_t *value, GError **error)
{
  guint64 v;
  if (!ds_pb_read_varint(r, &v, error))
    return FALSE;
  *value = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
  return TRUE;
}

gboolean ds_pb_read_fixed32(DsPbReader *r, guint32 *value, GError **error)
{
  if (!need(r, 4, "a 32-bit value", error))
    return FALSE;
  const guint8 *p = r->base + r->pos;
  *value = (guint32)p[0] | (guint32)p[1] << 8 | (guint32)p[2] << 16 | (guint32)p[3] << 24;
  r->pos += 4;
  return TRUE;
}

gboolean ds_pb_read_fixed64(DsPbReader *r, guint64 *value, GError **error)
{
  if (!need(r, 8, "a 64-bit value", error))
    return FALSE;
  const guint8 *p = r->base + r->pos;
  guint64 v = 0;
  for (int i = 7; i >= 0; i--)
    v = v << 8 | p[i];
  *value = v;
  r->pos += 8;
  return TRUE;
}

gboolean ds_pb_read_float(DsPbReader *r, float *value, GError **error)
{
  guint32 bits;
  if (!ds_pb_read_fixed32(r, &bits, error))
    return FALSE;
  memcpy(value, &bits, sizeof *value);
  return TRUE;
}

gboolean ds_pb_read_double(DsPbReader *r, double *value, GError **error)
{
  guint64 bits;
  if (!ds_pb_read_fixed64(r, &bits, error))
    return FALSE;
  memcpy(value, &bits, sizeof *value);
  return TRUE;
}

gboolean ds_pb_read_bytes(DsPbReader *r, const guint8 **bytes, gsize *len, GError **error)
{
  gsize start = r->pos;
  guint64 n;
  if (!ds_pb_read_varint(r, &n, error))
    return FALSE;
  if (n > r->end - r->pos) {
    ds_pb_set_error(r, start, error, DS_ERROR_PARSE,
                    "a length of %" G_GUINT64_FORMAT " bytes runs past the end of the message "
                    "(bytes left: %" G_GSIZE_FORMAT ")",
                    n, r->end - r->pos);
    return FALSE;
  }
  *bytes = r->base + r->pos;
  *len = (gsize)n;
  r->pos += (gsize)n;
  return TRUE;
}

gboolean ds_pb_enter(DsPbReader *r, DsPbReader *sub, const char *what, GError **error)
{
  gsize start = r->pos;
  if (r->depth >= DS_PB_MAX_DEPTH) {
    ds_pb_set_error(r, start, error, DS_ERROR_LIMIT,
                    "messages nested more than %d deep (a %s inside)", DS_PB_MAX_DEPTH, what);
    return FALSE;
  }
  const guint8 *bytes;
  gsize len;
  if (!ds_pb_read_bytes(r, &bytes, &len, error))
    return FALSE;
  *sub = *r;
  sub->pos = (gsize)(bytes - r->base);
  sub->end = sub->pos + len;
  sub->depth = r->depth + 1;
  sub->tag_pos = sub->pos;
  sub->what = what;
  return TRUE;
}

gboolean ds_pb_read_tag(DsPbReader *r, guint32 *field, DsPbWire *wire, GError **error)
{
  gsize start = r->pos;
  guint64 tag;
  if (!ds_pb_read_varint(r, &tag, error))
    return FALSE;
  r->tag_pos = start;
  guint64 number = tag >> 3;
  guint type = (guint)(tag & 7);
  if (number == 0 || number > FIELD_NUMBER_MAX) {
    ds_pb_set_error(r, start, error, DS_ERROR_PARSE,
                    "expected a field tag, found field number %" G_GUINT64_FORMAT
                    " (valid: 1 to %u)",
                    number, FIELD_NUMBER_MAX);
    return FALSE;
  }
  if (type == 3 || type == 4) {
    ds_pb_set_error(r, start, error, DS_ERROR_PARSE,
                    "field %" G_GUINT64_FORMAT " has wire type %u (a group), which is not "
                    "supported",
                    number, type);
    return FALSE;
  }
  if (type != DS_PB_WIRE_VARINT && type != DS_PB_WIRE_FIXED64 && type != DS_PB_WIRE_LEN &&
      type != DS_PB_WIRE_FIXED32) {
    ds_pb_set_error(r, start, error, DS_ERROR_PARSE,
                    "field %" G_GUINT64_FORMAT " has wire type %u, which does not exist "
                    "(expected 0, 1, 2 or 5)",
                    number, type);
    return FALSE;
  }
  *field = (guint32)number;
  *wire = (DsPbWire)type;
  return TRUE;
}

gboolean ds_pb_expect_wire(const DsPbReader *r, guint32 field, DsPbWire wire, DsPbWire want,
                           GError **error)
{
  if (wire == want)
    return TRUE;
  ds_pb_set_error(r, r->tag_pos, error, DS_ERROR_PARSE,
                  "field %u is %s (wire type %d), expected %s (wire type %d)", field,
                  ds_pb_wire_name(wire), (int)wire, ds_pb_wire_name(want), (int)want);
  return FALSE;
}

gboolean ds_pb_skip(DsPbReader *r, DsPbWire wire, GError **error)
{
  guint64 v;
  const guint8 *bytes;
  gsize len;
  switch (wire) {
  case DS_PB_WIRE_VARINT:
    return ds_pb_read_varint(r, &v, error);
  case DS_PB_WIRE_FIXED64:
    if (!need(r, 8, "a 64-bit value", error))
      return FALSE;
    r->pos += 8;
    return TRUE;
  case DS_PB_WIRE_LEN:
    return ds_pb_read_bytes(r, &bytes, &len, error);
  case DS_PB_WIRE_FIXED32:
    if (!need(r, 4, "a 32-bit value", error))
      return FALSE;
    r->pos += 4;
    return TRUE;
  }
  ds_pb_set_error(r, r->pos, error, DS_ERROR_PARSE, "cannot skip wire type %d", (int)wire);
  return FALSE;
}

/* Fails if `out` cannot take `n` more elements (GArray counts in a guint). */
static gboolean room_for(const DsPbReader *r, GArray *out, guint64 n, GError **error)
{
  if (n <= G_MAXUINT - out->len)
    return TRUE;
  ds_pb_set_error(r, r->pos, error, DS_ERROR_LIMIT, "a repeated field with more than %u values",
                  G_MAXUINT);
  return FALSE;
}

/* The element readers the repeated readers share: one value appended to `out`. */
typedef gboolean (*ReadOne)(DsPbReader *r, GArray *out, GError **error);

static gboolean one_int64(DsPbReader *r, GArray *out, GError **error)
{
  int64_t v;
  if (!ds_pb_read_int64(r, &v, error))
    return FALSE;
  g_array_append_val(out, v);
  return TRUE;
}

static gboolean one_uint64(DsPbReader *r, GArray *out, GError **error)
{
  guint64 v;
  if (!ds_pb_read_varint(r, &v, error))
    return FALSE;
  g_array_append_val(out, v);
  return TRUE;
}

static gboolean one_int32(DsPbReader *r, GArray *out, GError **error)
{
  int32_t v;
  if (!ds_pb_read_int32(r, &v, error))
    return FALSE;
  g_array_append_val(out, v);
  return TRUE;
}

static gboolean one_float(DsPbReader *r, GArray *out, GError **error)
{
  float v;
  if (!ds_pb_read_float(r, &v, error))
    return FALSE;
  g_array_append_val(out, v);
  return TRUE;
}

static gboolean one_double(DsPbReader *r, GArray *out, GError **error)
{
  double v;
  if (!ds_pb_read_double(r, &v, error))
    return FALSE;
  g_array_append_val(out, v);
  return TRUE;
}

/* A packed run or one unpacked element. `elem_wire` is the element's own wire type;
 * `fixed_size` is its size for fixed-size elements (0 for varints), which lets a packed run
 * be checked and sized before it is read. */
static gboolean read_repeated(DsPbReader *r, DsPbWire wire, DsPbWire elem_wire, gsize fixed_size,
                              const char *what, ReadOne read_one, GArray *out, GError **error)
{
  if (wire == elem_wire) {
    if (!room_for(r, out, 1, error))
      return FALSE;
    return read_one(r, out, error);
  }
  if (wire != DS_PB_WIRE_LEN) {
    ds_pb_set_error(r, r->tag_pos, error, DS_ERROR_PARSE,
                    "a repeated %s field is %s (wire type %d), expected %s or packed "
                    "(length-delimited)",
                    what, ds_pb_wire_name(wire), (int)wire, ds_pb_wire_name(elem_wire));
    return FALSE;
  }
  /* The packed run is read through a reader of its own, so no element can run past it. */
  DsPbReader run = *r;
  const guint8 *bytes;
  gsize len;
  gsize start = r->pos;
  if (!ds_pb_read_bytes(r, &bytes, &len, error))
    return FALSE;
  run.pos = (gsize)(bytes - r->base);
  run.end = run.pos + len;
  if (fixed_size > 0) {
    if (len % fixed_size != 0) {
      ds_pb_set_error(r, start, error, DS_ERROR_PARSE,
                      "a packed run of %s values is %" G_GSIZE_FORMAT
                      " bytes long, not a multiple of %" G_GSIZE_FORMAT,
                      what, len, fixed_size);
      return FALSE;
    }
    if (!room_for(r, out, len / fixed_size, error))
      return FALSE;
  }
  while (ds_pb_more(&run)) {
    if (fixed_size == 0 && !room_for(r, out, 1, error))
      return FALSE;
    if (!read_one(&run, out, error))
      return FALSE;
  }
  return TRUE;
}

gboolean ds_pb_read_repeated_int64(DsPbReader *r, DsPbWire wire, GArray *out, GError **error)
{
  return read_repeated(r, wire, DS_PB_WIRE_VARINT, 0, "int64", one_int64, out, error);
}

gboolean ds_pb_read_repeated_uint64(DsPbReader *r, DsPbWire wire, GArray *out, GError **error)
{
  return read_repeated(r, wire, DS_PB_WIRE_VARINT, 0, "uint64", one_uint64, out, error);
}

gboolean ds_pb_read_repeated_int32(DsPbReader *r, DsPbWire wire, GArray *out, GError **error)
{
  return read_repeated(r, wire, DS_PB_WIRE_VARINT, 0, "int32", one_int32, out, error);
}

gboolean ds_pb_read_repeated_float(DsPbReader *r, DsPbWire wire, GArray *out, GError **error)
{
  return read_repeated(r, wire, DS_PB_WIRE_FIXED32, 4, "float", one_float, out, error);
}

gboolean ds_pb_read_repeated_double(DsPbReader *r, DsPbWire wire, GArray *out, GError **error)
{
  return read_repeated(r, wire, DS_PB_WIRE_FIXED64, 8, "double", one_double, out, error);
}
