/* ds-onnx-decoder.c: what the ONNX message decoders share (ds-onnx-private.h): the arena that
 * owns a model's memory, messages that say where in the model a problem is, and readers for
 * string, bytes, integer and nested-message fields.
 */
#include "ds-onnx-private.h"

#include <string.h>

#include "ds-error.h"

#define ARENA_BLOCK_BYTES ((gsize)64 << 10)
#define ARENA_ALIGN       16

/* ---- Arena: everything the model points to ---------------------------------------------- */

struct DsOnnxArena {
  GPtrArray *blocks; /* g_free'd with the arena */
  guint8 *cur;       /* free space in the newest small block */
  gsize left;
};

DsOnnxArena *ds_onnx_arena_new(void)
{
  DsOnnxArena *a = g_new0(DsOnnxArena, 1);
  a->blocks = g_ptr_array_new_with_free_func(g_free);
  return a;
}

void ds_onnx_arena_free(DsOnnxArena *a)
{
  if (a == NULL)
    return;
  g_ptr_array_unref(a->blocks);
  g_free(a);
}

/* Zeroed memory for `n` bytes, aligned for any member type. Large requests get a block of their
 * own so that small ones keep filling the current block. */
void *ds_onnx_arena_alloc(DsOnnxArena *a, gsize n)
{
  if (n == 0)
    n = 1;
  gsize rounded = (n + ARENA_ALIGN - 1) & ~(gsize)(ARENA_ALIGN - 1);
  if (rounded > ARENA_BLOCK_BYTES / 4) {
    void *own = g_malloc0(n);
    g_ptr_array_add(a->blocks, own);
    return own;
  }
  if (rounded > a->left) {
    a->cur = g_malloc0(ARENA_BLOCK_BYTES);
    a->left = ARENA_BLOCK_BYTES;
    g_ptr_array_add(a->blocks, a->cur);
  }
  void *p = a->cur;
  a->cur += rounded;
  a->left -= rounded;
  return p;
}

/* A NUL-terminated copy of `len` bytes. */
char *ds_onnx_arena_strndup(DsOnnxArena *a, const guint8 *bytes, gsize len)
{
  char *s = ds_onnx_arena_alloc(a, len + 1);
  if (len > 0)
    memcpy(s, bytes, len);
  return s;
}

/* Takes over the GArray's buffer (leaving the array empty); NULL when it has no elements. */
const void *ds_onnx_arena_take(DsOnnxArena *a, GArray *array, gsize *n_out)
{
  *n_out = array->len;
  if (array->len == 0)
    return NULL;
  gsize len;
  void *data = g_array_steal(array, &len);
  g_ptr_array_add(a->blocks, data);
  return data;
}

/* ---- Messages ---------------------------------------------------------------------------- */

void ds_onnx_scope_error(const DsOnnxDecoder *d, const DsOnnxScope *s, GError **error, int code,
                         const char *fmt, ...)
{
  if (error == NULL)
    return;
  GString *where = g_string_new(d->file);
  g_string_append(where, ": ");
  if (s != NULL && s->graph != NULL) {
    if (s->graph[0] != '\0')
      g_string_append_printf(where, "graph '%s': ", s->graph);
    else
      g_string_append(where, "unnamed graph: ");
  }
  if (s != NULL && s->in_node) {
    g_string_append_printf(where, "node %" G_GSIZE_FORMAT, s->node_index);
    if (s->node_name != NULL && s->node_name[0] != '\0')
      g_string_append_printf(where, " '%s'", s->node_name);
    if (s->op_type != NULL && s->op_type[0] != '\0')
      g_string_append_printf(where, " (%s)", s->op_type);
    g_string_append(where, ": ");
  }
  if (s != NULL && s->attribute != NULL)
    g_string_append_printf(where, "attribute '%s': ", s->attribute);
  va_list args;
  va_start(args, fmt);
  g_string_append_vprintf(where, fmt, args);
  va_end(args);
  ds_pb_one_line(where->str);
  g_set_error_literal(error, DS_ERROR, code, where->str);
  g_string_free(where, TRUE);
}

/* ---- Field helpers ----------------------------------------------------------------------- */

/* A string field: valid UTF-8 without NUL bytes (names end up in C strings and on screen),
 * copied into the arena. */
gboolean ds_onnx_read_string(const DsOnnxDecoder *d, DsPbReader *r, guint32 field, DsPbWire wire,
                             const char **out, GError **error)
{
  if (!ds_pb_expect_wire(r, field, wire, DS_PB_WIRE_LEN, error))
    return FALSE;
  const guint8 *bytes;
  gsize len;
  if (!ds_pb_read_bytes(r, &bytes, &len, error))
    return FALSE;
  /* With a length, g_utf8_validate_len() also refuses NUL bytes. */
  if (!g_utf8_validate_len((const char *)bytes, len, NULL)) {
    ds_pb_set_error(r, r->tag_pos, error, DS_ERROR_PARSE,
                    "field %u: expected a UTF-8 string without NUL bytes", field);
    return FALSE;
  }
  *out = ds_onnx_arena_strndup(d->arena, bytes, len);
  return TRUE;
}

/* A bytes field: any bytes, copied with a NUL after them. */
gboolean ds_onnx_read_blob(const DsOnnxDecoder *d, DsPbReader *r, guint32 field, DsPbWire wire,
                           DsOnnxBytes *out, GError **error)
{
  if (!ds_pb_expect_wire(r, field, wire, DS_PB_WIRE_LEN, error))
    return FALSE;
  const guint8 *bytes;
  gsize len;
  if (!ds_pb_read_bytes(r, &bytes, &len, error))
    return FALSE;
  out->data = ds_onnx_arena_strndup(d->arena, bytes, len);
  out->len = len;
  return TRUE;
}

gboolean ds_onnx_read_int64_field(DsPbReader *r, guint32 field, DsPbWire wire, int64_t *out,
                                  GError **error)
{
  return ds_pb_expect_wire(r, field, wire, DS_PB_WIRE_VARINT, error) &&
         ds_pb_read_int64(r, out, error);
}

gboolean ds_onnx_read_int32_field(DsPbReader *r, guint32 field, DsPbWire wire, int32_t *out,
                                  GError **error)
{
  return ds_pb_expect_wire(r, field, wire, DS_PB_WIRE_VARINT, error) &&
         ds_pb_read_int32(r, out, error);
}

/* Enters a nested message field, refusing a second occurrence of a singular one: the format
 * would merge the two, which no ONNX writer relies on and which this decoder does not do. */
gboolean ds_onnx_enter_field(DsPbReader *r, guint32 field, DsPbWire wire, const char *what,
                             gboolean *seen, DsPbReader *sub, GError **error)
{
  if (!ds_pb_expect_wire(r, field, wire, DS_PB_WIRE_LEN, error))
    return FALSE;
  if (seen != NULL) {
    if (*seen) {
      ds_pb_set_error(r, r->tag_pos, error, DS_ERROR_PARSE,
                      "field %u (a %s) appears twice; merging messages is not supported", field,
                      what);
      return FALSE;
    }
    *seen = TRUE;
  }
  return ds_pb_enter(r, sub, what, error);
}

/* The string fields listed in `fields` (up to two), without reading anything else: the first
 * pass over a graph or a node. The last occurrence wins, as in the format. */
gboolean ds_onnx_prescan_strings(const DsOnnxDecoder *d, const DsPbReader *r, guint32 field_a,
                                 const char **out_a, guint32 field_b, const char **out_b,
                                 GError **error)
{
  DsPbReader scan = *r;
  while (ds_pb_more(&scan)) {
    guint32 field;
    DsPbWire wire;
    if (!ds_pb_read_tag(&scan, &field, &wire, error))
      return FALSE;
    if (field == field_a) {
      if (!ds_onnx_read_string(d, &scan, field, wire, out_a, error))
        return FALSE;
    } else if (field_b != 0 && field == field_b) {
      if (!ds_onnx_read_string(d, &scan, field, wire, out_b, error))
        return FALSE;
    } else if (!ds_pb_skip(&scan, wire, error)) {
      return FALSE;
    }
  }
  return TRUE;
}

/* ---- StringStringEntryProto ------------------------------------------------------------- */

/* StringStringEntryProto: key = 1, value = 2. */
static gboolean decode_string_pair(const DsOnnxDecoder *d, DsPbReader *r, DsOnnxStringPair *pair,
                                   GError **error)
{
  pair->key = "";
  pair->value = "";
  while (ds_pb_more(r)) {
    guint32 field;
    DsPbWire wire;
    if (!ds_pb_read_tag(r, &field, &wire, error))
      return FALSE;
    gboolean ok;
    if (field == 1)
      ok = ds_onnx_read_string(d, r, field, wire, &pair->key, error);
    else if (field == 2)
      ok = ds_onnx_read_string(d, r, field, wire, &pair->value, error);
    else
      ok = ds_pb_skip(r, wire, error);
    if (!ok)
      return FALSE;
  }
  return TRUE;
}

/* Appends one StringStringEntryProto to `pairs`. */
gboolean ds_onnx_read_string_pair(const DsOnnxDecoder *d, DsPbReader *r, guint32 field,
                                  DsPbWire wire, GArray *pairs, GError **error)
{
  DsPbReader sub;
  DsOnnxStringPair pair;
  if (!ds_onnx_enter_field(r, field, wire, "StringStringEntryProto", NULL, &sub, error) ||
      !decode_string_pair(d, &sub, &pair, error))
    return FALSE;
  g_array_append_val(pairs, pair);
  return TRUE;
}
