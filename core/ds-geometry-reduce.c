/* ds-geometry-reduce.c: the shape geometry of the reductions and normalisations. */
#include "ds-geometry-reduce.h"

#include <string.h>

bool ds_geom_axis_split(const DsTensor *t, int64_t axis, bool trailing, DsGeomAxis *g)
{
  int64_t a = axis < 0 ? axis + t->ndim : axis;
  if (a < 0 || a >= t->ndim)
    return false;
  g->axis = (int)a;
  g->outer = ds_shape_span(t->shape, 0, g->axis);
  g->len = t->shape[g->axis];
  g->inner = ds_shape_span(t->shape, g->axis + 1, t->ndim);
  if (trailing) {
    g->len *= g->inner;
    g->inner = 1;
  }
  return true;
}

void ds_geom_reduce(const DsTensor *in, const bool *reduced, DsGeomReduce *g)
{
  memset(g, 0, sizeof *g);
  /* Innermost first: drop size-1 dims (their stride never matters) and merge neighbours of
   * the same role, which are contiguous with each other. */
  int64_t shape[DS_MAX_NDIM], stride[DS_MAX_NDIM];
  bool red[DS_MAX_NDIM];
  int n = 0;
  int64_t s = 1;
  for (int d = in->ndim - 1; d >= 0; d--) {
    int64_t len = in->shape[d];
    if (len != 1) {
      if (n > 0 && red[n - 1] == reduced[d]) {
        shape[n - 1] *= len;
      } else {
        shape[n] = len;
        stride[n] = s;
        red[n] = reduced[d];
        n++;
      }
    }
    s *= len;
  }
  /* `shape` runs innermost first: the lists want outermost first. */
  g->n_out = g->count = 1;
  for (int i = n - 1; i >= 0; i--) {
    if (red[i]) {
      g->rshape[g->nr] = shape[i];
      g->rstride[g->nr++] = stride[i];
      g->count *= shape[i];
    } else {
      g->kshape[g->nk] = shape[i];
      g->kstride[g->nk++] = stride[i];
      g->n_out *= shape[i];
    }
  }
  g->inner_kept = n == 0 || !red[0];
}
