/* ds-protobuf.h: a bounds-checked reader of the protocol buffers wire format.
 *
 * A message is a sequence of (tag, value) pairs; the tag is a varint holding the field number
 * and the wire type, which says how long the value is: 0 a varint, 1 eight bytes, 2 a varint
 * length then that many bytes (strings, bytes, nested messages, packed repeated numbers),
 * 5 four bytes. Wire types 3 and 4 (groups, a proto1 relic) and 6-7 are refused. Fixed-size
 * values are little-endian.
 *
 * A DsPbReader is a window [pos, end) over one buffer. Entering a length-delimited field gives a
 * reader over just that field, one level deeper; the depth is limited so that a file nesting
 * subgraphs without end cannot exhaust the stack of a recursive decoder. Every read checks the
 * window first, so no read goes past the message it belongs to, let alone the buffer.
 *
 * Errors are DS_ERROR_PARSE (DS_ERROR_LIMIT for the depth), one line naming the file, the byte
 * offset from the start of the buffer, the message being read and what was expected:
 *   "model.onnx: byte 57 (NodeProto): the data ends inside a varint".
 *
 * Memory policy: a reader only points into the caller's buffer, which must outlive it; the
 * repeated-number readers append to a caller's GArray.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

/* Messages nest at most this deep (the outermost message is depth 0). */
#define DS_PB_MAX_DEPTH 64

typedef enum {
  DS_PB_WIRE_VARINT = 0,
  DS_PB_WIRE_FIXED64 = 1,
  DS_PB_WIRE_LEN = 2,
  DS_PB_WIRE_FIXED32 = 5,
} DsPbWire;

typedef struct {
  const guint8 *base; /* the whole buffer: offsets in messages count from here */
  gsize pos;          /* the next byte to read */
  gsize end;          /* the end of this message */
  guint depth;        /* 0 for the outermost message */
  gsize tag_pos;      /* where the last tag read began, for messages about its field */
  const char *name;   /* the file, for messages */
  const char *what;   /* the message type being read ("NodeProto"), for messages */
} DsPbReader;

/* A reader over all of `data`, the outermost message `what` of the file `name`. Both strings
 * must outlive the reader. */
void ds_pb_reader_init(DsPbReader *r, const guint8 *data, gsize size, const char *name,
                       const char *what);

/* TRUE while the message has fields left. */
static inline gboolean ds_pb_more(const DsPbReader *r)
{
  return r->pos < r->end;
}

/* Sets a DS_ERROR `code` "<name>: byte <offset> (<what>): <message>". */
void ds_pb_set_error(const DsPbReader *r, gsize offset, GError **error, int code, const char *fmt,
                     ...) G_GNUC_PRINTF(5, 6);

/* Replaces ASCII control characters in `message` with '?', in place: names read from a file
 * may hold newlines, and an error message stays one line. */
void ds_pb_one_line(char *message);

/* The wire type's name for messages ("varint", "length-delimited"...). */
const char *ds_pb_wire_name(DsPbWire wire);

/* Reads a tag: a field number in 1..2^29-1 and one of the four wire types. */
gboolean ds_pb_read_tag(DsPbReader *r, guint32 *field, DsPbWire *wire, GError **error);

/* Fails, naming the field, unless `wire` is `want`. For a field whose tag was just read. */
gboolean ds_pb_expect_wire(const DsPbReader *r, guint32 field, DsPbWire wire, DsPbWire want,
                           GError **error);

/* A varint of at most 10 bytes whose value fits in 64 bits. */
gboolean ds_pb_read_varint(DsPbReader *r, guint64 *value, GError **error);
/* int64 and int32 fields: a varint read as two's complement. An int32 must be in range. */
gboolean ds_pb_read_int64(DsPbReader *r, int64_t *value, GError **error);
gboolean ds_pb_read_int32(DsPbReader *r, int32_t *value, GError **error);
/* sint64 fields: a zigzag-encoded varint (0, -1, 1, -2... as 0, 1, 2, 3...). */
gboolean ds_pb_read_sint64(DsPbReader *r, int64_t *value, GError **error);

gboolean ds_pb_read_fixed32(DsPbReader *r, guint32 *value, GError **error);
gboolean ds_pb_read_fixed64(DsPbReader *r, guint64 *value, GError **error);
gboolean ds_pb_read_float(DsPbReader *r, float *value, GError **error);
gboolean ds_pb_read_double(DsPbReader *r, double *value, GError **error);

/* A length-delimited value: *bytes points into the buffer (not NUL-terminated). */
gboolean ds_pb_read_bytes(DsPbReader *r, const guint8 **bytes, gsize *len, GError **error);

/* A length-delimited nested message of type `what` (a static string): `sub` reads it, one
 * level deeper, and `r` moves past it. Fails past DS_PB_MAX_DEPTH. */
gboolean ds_pb_enter(DsPbReader *r, DsPbReader *sub, const char *what, GError **error);

/* Skips the value of a field of any valid wire type (an unknown field). */
gboolean ds_pb_skip(DsPbReader *r, DsPbWire wire, GError **error);

/* Repeated numeric fields, given the wire type of the field's tag: a packed run (wire type 2)
 * appends all its values, an unpacked element (the element's own wire type) appends one. Both
 * forms may be mixed for one field, as the format allows. The GArray holds int64_t, guint64,
 * int32_t, float or double respectively. */
gboolean ds_pb_read_repeated_int64(DsPbReader *r, DsPbWire wire, GArray *out, GError **error);
gboolean ds_pb_read_repeated_uint64(DsPbReader *r, DsPbWire wire, GArray *out, GError **error);
gboolean ds_pb_read_repeated_int32(DsPbReader *r, DsPbWire wire, GArray *out, GError **error);
gboolean ds_pb_read_repeated_float(DsPbReader *r, DsPbWire wire, GArray *out, GError **error);
gboolean ds_pb_read_repeated_double(DsPbReader *r, DsPbWire wire, GArray *out, GError **error);
