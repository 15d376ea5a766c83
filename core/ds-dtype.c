/* ds-dtype.c: element type tables. */
#include "ds-dtype.h"

#include <assert.h>
#include <string.h>

static const struct {
  const char *name;
  const char *npy;
  size_t size;
} dtype_table[] = {
  [DS_DTYPE_FLOAT32] = {"float32", "f4", 4}, [DS_DTYPE_FLOAT64] = {"float64", "f8", 8},
  [DS_DTYPE_FLOAT16] = {"float16", "f2", 2}, [DS_DTYPE_UINT8] = {"uint8", "u1", 1},
  [DS_DTYPE_INT32] = {"int32", "i4", 4},     [DS_DTYPE_INT8] = {"int8", "i1", 1},
  [DS_DTYPE_INT64] = {"int64", "i8", 8},     [DS_DTYPE_BOOL] = {"bool", "b1", 1},
  [DS_DTYPE_INT16] = {"int16", "i2", 2},     [DS_DTYPE_UINT16] = {"uint16", "u2", 2},
  [DS_DTYPE_UINT32] = {"uint32", "u4", 4},   [DS_DTYPE_UINT64] = {"uint64", "u8", 8},
  /* NumPy has no bfloat16 (ml_dtypes adds one that .npy files cannot name), so no code. */
  [DS_DTYPE_BFLOAT16] = {"bfloat16", NULL, 2},
};
static_assert(sizeof dtype_table / sizeof dtype_table[0] == DS_DTYPE_COUNT,
              "every dtype needs a table row");

size_t ds_dtype_size(DsDType dtype)
{
  return ds_dtype_is_valid(dtype) ? dtype_table[dtype].size : 0;
}

const char *ds_dtype_name(DsDType dtype)
{
  return ds_dtype_is_valid(dtype) ? dtype_table[dtype].name : NULL;
}

const char *ds_dtype_npy_code(DsDType dtype)
{
  return ds_dtype_is_valid(dtype) ? dtype_table[dtype].npy : NULL;
}

DsDType ds_dtype_from_name(const char *name)
{
  if (name == NULL)
    return DS_DTYPE_UNKNOWN;
  for (int i = 0; i < DS_DTYPE_COUNT; i++)
    if (strcmp(name, dtype_table[i].name) == 0)
      return (DsDType)i;
  return DS_DTYPE_UNKNOWN;
}
