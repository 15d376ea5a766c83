/* ds-tensor-stats.h: what a debugger shows of a tensor at a glance.
 *
 * Min, max and mean are over the finite elements only, so one NaN or Inf does not hide the
 * rest; NaNs and infinities are counted instead. The first elements are kept as a preview.
 */
#pragma once

#include "ds-tensor.h"

#define DS_TENSOR_PREVIEW 8

typedef struct {
  int64_t numel;
  int64_t n_nan, n_inf;
  double min, max, mean; /* over finite elements; NaN when there are none */
  int n_preview;
  double preview[DS_TENSOR_PREVIEW]; /* the first elements, in memory order */
} DsTensorStats;

/* Statistics of a tensor of any dtype (bool as 0/1); a device tensor is read through
 * ds_tensor_copy_to_host(). */
void ds_tensor_get_stats(const DsTensor *t, DsTensorStats *stats);

/* One line: "min -1.5 max 2 mean 0.25 nan 0 inf 0 [0.1, 0.2, ...]" (caller frees). */
char *ds_tensor_stats_to_string(const DsTensorStats *stats);
