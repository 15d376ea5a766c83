/* ds-dtype.h: element types, numbered as MXNet numbers them (mshadow type flags).
 *
 * The numbering is part of the file formats: `__dtype__` attributes, `.params` records and
 * `Cast(dtype=...)` all use these codes, so they must never be renumbered.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
  DS_DTYPE_FLOAT32 = 0,
  DS_DTYPE_FLOAT64 = 1,
  DS_DTYPE_FLOAT16 = 2, /* storage only: no CPU kernel computes in it */
  DS_DTYPE_UINT8 = 3,
  DS_DTYPE_INT32 = 4,
  DS_DTYPE_INT8 = 5,
  DS_DTYPE_INT64 = 6,
  DS_DTYPE_BOOL = 7,
  /* Storage only, like float16: what ONNX models carry and the engine reads, writes and casts,
   * computing in a wider type (int16/uint16 in int32, uint32/uint64 in int64, bfloat16 in
   * float32). MXNet 2.0's numbering. */
  DS_DTYPE_INT16 = 8,
  DS_DTYPE_UINT16 = 9,
  DS_DTYPE_UINT32 = 10,
  DS_DTYPE_UINT64 = 11,
  DS_DTYPE_BFLOAT16 = 12,
  DS_DTYPE_COUNT
} DsDType;

/* Returned by lookups that fail, and used by inference for "not known yet". */
#define DS_DTYPE_UNKNOWN ((DsDType)-1)

/* Bytes per element; 0 for an invalid code. */
size_t ds_dtype_size(DsDType dtype);

/* MXNet's spelling: "float32", "int64", "bool"... NULL for an invalid code. */
const char *ds_dtype_name(DsDType dtype);

/* Parses MXNet's spelling (also "uint8"/"int8"/"float16"); DS_DTYPE_UNKNOWN if unknown. */
DsDType ds_dtype_from_name(const char *name);

/* NumPy's array-protocol type string without the byte-order char: "f4", "i8", "b1"...
 * NULL for bfloat16, which NumPy has no type for, and for an invalid code. */
const char *ds_dtype_npy_code(DsDType dtype);

static inline bool ds_dtype_is_valid(int dtype) { return dtype >= 0 && dtype < DS_DTYPE_COUNT; }
static inline bool ds_dtype_is_float(DsDType d)
{
  return d == DS_DTYPE_FLOAT32 || d == DS_DTYPE_FLOAT64 || d == DS_DTYPE_FLOAT16 ||
         d == DS_DTYPE_BFLOAT16;
}
/* Types no kernel computes in: only Cast converts them, and ops that move bytes without
 * reading them as numbers (copies, reshapes) carry them. */
static inline bool ds_dtype_is_storage_only(DsDType d)
{
  return d == DS_DTYPE_FLOAT16 || d == DS_DTYPE_BFLOAT16 || d == DS_DTYPE_INT16 ||
         d == DS_DTYPE_UINT16 || d == DS_DTYPE_UINT32 || d == DS_DTYPE_UINT64;
}
