/* ds-onnx-private.h: what the ONNX decoders share: ds-onnx-decoder.c (the arena, messages,
 * field readers), ds-onnx-tensor.c (TensorProto) and ds-onnx-model.c (every other message).
 * Nothing outside engine/onnx/ includes it.
 *
 * Every decoder reads one message through a DsPbReader, skips the fields it does not know, and
 * puts what it keeps in the model's arena: strings as NUL-terminated copies, repeated fields as
 * GArrays whose buffers the arena adopts, so an error anywhere leaks nothing once the model is
 * freed whole.
 */
#pragma once

#include "ds-onnx-model.h"
#include "ds-protobuf.h"

/* ---- The arena ----------------------------------------------------------------------------- */

DsOnnxArena *ds_onnx_arena_new(void);
/* Frees every block the arena handed out or adopted. NULL is ignored. */
void ds_onnx_arena_free(DsOnnxArena *a);
/* Zeroed memory for `n` bytes, aligned for any member type. */
void *ds_onnx_arena_alloc(DsOnnxArena *a, gsize n);
/* A NUL-terminated copy of `len` bytes. */
char *ds_onnx_arena_strndup(DsOnnxArena *a, const guint8 *bytes, gsize len);
/* Takes over the GArray's buffer (leaving the array empty): its elements, *n_out of them, live
 * as long as the arena. NULL when it has none. */
const void *ds_onnx_arena_take(DsOnnxArena *a, GArray *array, gsize *n_out);

/* ---- Where the decoder is ------------------------------------------------------------------- */

typedef struct {
  DsOnnxArena *arena;
  const char *file; /* the display name, for messages */
} DsOnnxDecoder;

/* The innermost graph, node and attribute being read, for messages. */
typedef struct {
  const char *graph; /* NULL outside any graph */
  gboolean in_node;
  gsize node_index;
  const char *node_name;
  const char *op_type;
  const char *attribute; /* NULL outside an attribute */
} DsOnnxScope;

/* Sets a DS_ERROR `code` "<file>: graph 'g': node 3 'name' (Op): attribute 'a': <message>",
 * leaving out what `s` (which may be NULL) does not have, on one line whatever the names hold. */
void ds_onnx_scope_error(const DsOnnxDecoder *d, const DsOnnxScope *s, GError **error, int code,
                         const char *fmt, ...) G_GNUC_PRINTF(5, 6);

/* ---- Field readers, for a field whose tag was just read ---------------------------------------
 */

/* A string: valid UTF-8 without NUL bytes (names end up in C strings and on screen). */
gboolean ds_onnx_read_string(const DsOnnxDecoder *d, DsPbReader *r, guint32 field, DsPbWire wire,
                             const char **out, GError **error);
/* Bytes of any value, copied with a NUL after them. */
gboolean ds_onnx_read_blob(const DsOnnxDecoder *d, DsPbReader *r, guint32 field, DsPbWire wire,
                           DsOnnxBytes *out, GError **error);
gboolean ds_onnx_read_int64_field(DsPbReader *r, guint32 field, DsPbWire wire, int64_t *out,
                                  GError **error);
gboolean ds_onnx_read_int32_field(DsPbReader *r, guint32 field, DsPbWire wire, int32_t *out,
                                  GError **error);
/* Enters a nested message of type `what`. With `seen` (a singular field), a second occurrence is
 * refused: the format would merge the two, which no ONNX writer relies on. */
gboolean ds_onnx_enter_field(DsPbReader *r, guint32 field, DsPbWire wire, const char *what,
                             gboolean *seen, DsPbReader *sub, GError **error);
/* Appends one StringStringEntryProto (key = 1, value = 2) to `pairs` (of DsOnnxStringPair). */
gboolean ds_onnx_read_string_pair(const DsOnnxDecoder *d, DsPbReader *r, guint32 field,
                                  DsPbWire wire, GArray *pairs, GError **error);

/* The string fields `field_a` and `field_b` (0: none) of the message `r` reads, without reading
 * anything else or moving `r`: the first pass over a graph or a node, whose names writers put
 * after the fields whose messages need them. The last occurrence wins, as in the format. */
gboolean ds_onnx_prescan_strings(const DsOnnxDecoder *d, const DsPbReader *r, guint32 field_a,
                                 const char **out_a, guint32 field_b, const char **out_b,
                                 GError **error);

/* ---- TensorProto (ds-onnx-tensor.c) -----------------------------------------------------------
 */

/* Decodes and checks the tensor `r` reads; `s` is where it is, for messages. */
gboolean ds_onnx_decode_tensor(const DsOnnxDecoder *d, const DsOnnxScope *s, DsPbReader *r,
                               DsOnnxTensor *t, GError **error);
/* Appends one TensorProto field to `tensors` (of DsOnnxTensor). */
gboolean ds_onnx_read_tensor(const DsOnnxDecoder *d, const DsOnnxScope *s, DsPbReader *r,
                             guint32 field, DsPbWire wire, GArray *tensors, GError **error);
