/* ds-params.h: MXNet .params files (the NDArray list that save_parameters and save_checkpoint
 * write): magic 0x112, then the arrays, then their names ("arg:fc1_weight", "aux:bn_moving_mean"
 * or bare names from Gluon's save_parameters).
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

DsParams *ds_params_load(const char *path, GError **error);
DsParams *ds_params_load_data(const guint8 *data, gsize len, const char *name, GError **error);
void ds_params_free(DsParams *params);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsParams, ds_params_free)

/* The array called `name` (prefix stripped), or NULL. Borrowed. */
const DsNDArray *ds_params_lookup(const DsParams *params, const char *name);

/* Writes arrays in the V2 NDArray format with "arg:"/"aux:" prefixes, atomically. */
gboolean ds_params_save(const char *path, const DsParam *items, guint n_items, GError **error);
