/* ds-params.h: MXNet .params files (the NDArray list that save_parameters and save_checkpoint
 * write): magic 0x112, then the arrays, then their names ("arg:fc1_weight", "aux:bn_moving_mean"
 * or bare names from Gluon's save_parameters).
 *
 * All record versions MXNet writes are read: V3 (NumPy shapes), V2, V1 and the legacy layout.
 * Only dense arrays are supported; sparse storage, and MXNet's empty "none" array (which has
 * no shape or data), are refused with a message naming the file and the array. A list saved
 * without names has its arrays named by position: "0", "1"...
 *
 * Memory policy: a DsParams owns its items, their names and their arrays.
 */
#pragma once

#include <glib.h>

#include "ds-ndarray.h"

typedef struct {
  char *name;        /* without the "arg:"/"aux:" prefix */
  gboolean is_aux;   /* the file said "aux:" */
  DsNDArray *array;
} DsParam;

typedef struct {
  DsParam *items;
  guint n_items;
} DsParams;

/* Reads a file. Caller frees the result with ds_params_free(). */
DsParams *ds_params_load(const char *path, GError **error);
/* Parses a file's bytes; `name` is used in messages. Caller frees the result. */
DsParams *ds_params_load_data(const guint8 *data, gsize len, const char *name, GError **error);
/* Frees the items, their names and their arrays. */
void ds_params_free(DsParams *params);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsParams, ds_params_free)

/* The array called `name` (prefix stripped), or NULL. Borrowed. */
const DsNDArray *ds_params_lookup(const DsParams *params, const char *name);

/* Writes arrays in the V2 NDArray format with "arg:"/"aux:" prefixes, atomically. A 0-dim
 * array is written as a V3 record, the only one that can hold a scalar. Every item needs an
 * array. */
gboolean ds_params_save(const char *path, const DsParam *items, guint n_items, GError **error);
/* The bytes ds_params_save() writes. Caller frees. */
guint8 *ds_params_encode(const DsParam *items, guint n_items, gsize *len_out);
