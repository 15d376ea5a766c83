/* ds-tensor-stats.c */
#include "ds-tensor-stats.h"

#include <glib.h>
#include <math.h>

typedef struct {
  int64_t n_finite, n_nan, n_inf;
  double min, max, sum;
} Accumulator;

static inline void accumulate(Accumulator *acc, double x)
{
  if (isnan(x)) {
    acc->n_nan++;
  } else if (isinf(x)) {
    acc->n_inf++;
  } else {
    acc->min = x < acc->min ? x : acc->min;
    acc->max = x > acc->max ? x : acc->max;
    acc->sum += x;
    acc->n_finite++;
  }
}

void ds_tensor_get_stats(const DsTensor *t, DsTensorStats *stats)
{
  if (t->memory != DS_MEMORY_HOST && t->data != NULL) {
    /* A device tensor: read a host copy (without a reader, only the size is known). */
    DsTensor host = *t;
    host.memory = DS_MEMORY_HOST;
    host.data = g_try_malloc(MAX(ds_tensor_nbytes(t), 1));
    if (host.data == NULL || !ds_tensor_copy_to_host(t, host.data)) {
      g_free(host.data);
      host.data = NULL;
    }
    ds_tensor_get_stats(&host, stats);
    stats->numel = ds_tensor_numel(t);
    g_free(host.data);
    return;
  }
  Accumulator acc = {.min = INFINITY, .max = -INFINITY};
  int64_t n = t->data != NULL ? ds_tensor_numel(t) : 0;
  /* float32 is nearly every tensor a debugger is asked about: keep its loop tight. */
  if (t->dtype == DS_DTYPE_FLOAT32) {
    const float *x = t->data;
    for (int64_t i = 0; i < n; i++)
      accumulate(&acc, x[i]);
  } else {
    for (int64_t i = 0; i < n; i++)
      accumulate(&acc, ds_tensor_load_f64(t->dtype, t->data, i));
  }
  *stats = (DsTensorStats){
      .numel = ds_tensor_numel(t),
      .n_nan = acc.n_nan,
      .n_inf = acc.n_inf,
      .min = acc.n_finite > 0 ? acc.min : NAN,
      .max = acc.n_finite > 0 ? acc.max : NAN,
      .mean = acc.n_finite > 0 ? acc.sum / (double)acc.n_finite : NAN,
      .n_preview = (int)MIN(n, DS_TENSOR_PREVIEW),
  };
  for (int i = 0; i < stats->n_preview; i++)
    stats->preview[i] = ds_tensor_load_f64(t->dtype, t->data, i);
}

char *ds_tensor_stats_to_string(const DsTensorStats *stats)
{
  GString *out = g_string_new(NULL);
  g_string_append_printf(
      out, "min %.6g max %.6g mean %.6g nan %" G_GINT64_FORMAT " inf %" G_GINT64_FORMAT " [",
      stats->min, stats->max, stats->mean, stats->n_nan, stats->n_inf);
  for (int i = 0; i < stats->n_preview; i++)
    g_string_append_printf(out, "%s%.6g", i > 0 ? ", " : "", stats->preview[i]);
  g_string_append(out, stats->numel > stats->n_preview ? ", ...]" : "]");
  return g_string_free(out, FALSE);
}
