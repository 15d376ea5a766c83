/* ds-geometry-tensor.c: the shape geometry of the data-movement ops, shared by every backend. */
#include "ds-geometry-tensor.h"

#include <string.h>

bool ds_geom_same_shape(const DsTensor *a, const DsTensor *b)
{
  if (a->ndim != b->ndim)
    return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d])
      return false;
  return true;
}

int ds_geom_axis(int64_t axis, int ndim)
{
  int64_t a = axis < 0 ? axis + ndim : axis;
  return a >= 0 && a < ndim ? (int)a : -1;
}

void ds_geom_strides(const int64_t *shape, int ndim, int64_t *strides)
{
  int64_t s = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    strides[d] = s;
    s *= shape[d];
  }
}

/* ---- broadcasts ---- */

bool ds_geom_broadcast_strides(const DsTensor *in, const DsTensor *out, int64_t *in_stride)
{
  int lead = out->ndim - in->ndim;
  if (lead < 0)
    return false;
  int64_t s = 1;
  for (int d = out->ndim - 1; d >= 0; d--) {
    int64_t dim = d >= lead ? in->shape[d - lead] : 1;
    if (dim != out->shape[d] && dim != 1)
      return false;
    in_stride[d] = dim == 1 ? 0 : s;
    s *= dim;
  }
  return true;
}

bool ds_geom_broadcast(const DsTensor *const *ops, int n_ops, const DsTensor *out,
                       DsGeomBcast *plan)
{
  int64_t st[DS_GEOM_BCAST_MAX_OPS][DS_MAX_NDIM];
  memset(plan, 0, sizeof *plan);
  if (n_ops < 1 || n_ops > DS_GEOM_BCAST_MAX_OPS)
    return false;
  for (int k = 0; k < n_ops; k++)
    if (!ds_geom_broadcast_strides(ops[k], out, st[k]))
      return false;
  int n = 0;
  for (int i = 0; i < out->ndim; i++) {
    int64_t len = out->shape[i];
    if (len == 1)
      continue;
    /* Merge into the previous dim when every operand steps from one into the other. */
    bool merge = n > 0;
    for (int k = 0; k < n_ops && merge; k++)
      merge = plan->stride[k][n - 1] == st[k][i] * len;
    if (merge) {
      plan->shape[n - 1] *= len;
      for (int k = 0; k < n_ops; k++)
        plan->stride[k][n - 1] = st[k][i];
      continue;
    }
    plan->shape[n] = len;
    for (int k = 0; k < n_ops; k++)
      plan->stride[k][n] = st[k][i];
    n++;
  }
  if (n == 0) { /* a single element: one dim of 1, every stride 0 */
    plan->shape[0] = 1;
    n = 1;
  }
  plan->ndim = n;
  return true;
}

/* ---- transpose, SwapAxis ---- */

bool ds_geom_transpose_perm(const int64_t *axes, int n_axes, int ndim, int *perm)
{
  if (n_axes == 0) {
    for (int i = 0; i < ndim; i++)
      perm[i] = ndim - 1 - i;
    return true;
  }
  if (n_axes != ndim)
    return false;
  bool seen[DS_MAX_NDIM] = {false};
  for (int i = 0; i < ndim; i++) {
    int a = ds_geom_axis(axes[i], ndim);
    if (a < 0 || seen[a])
      return false;
    seen[a] = true;
    perm[i] = a;
  }
  return true;
}

bool ds_geom_swap_perm(int64_t dim1, int64_t dim2, int ndim, int *perm)
{
  int d1 = ds_geom_axis(dim1, ndim), d2 = ds_geom_axis(dim2, ndim);
  if (d1 < 0 || d2 < 0)
    return false;
  for (int i = 0; i < ndim; i++)
    perm[i] = i;
  perm[d1] = d2;
  perm[d2] = d1;
  return true;
}

bool ds_geom_permute(const DsTensor *in, const DsTensor *out, const int *perm, int64_t *in_stride)
{
  int64_t istride[DS_MAX_NDIM];
  ds_geom_strides(in->shape, in->ndim, istride);
  for (int i = 0; i < in->ndim; i++) {
    if (out->shape[i] != in->shape[perm[i]])
      return false;
    in_stride[i] = istride[perm[i]];
  }
  return true;
}

/* ---- Concat, stack, SliceChannel ---- */

bool ds_geom_concat(const DsTensor *inputs, int n_inputs, const DsTensor *out, int64_t dim,
                    int *axis)
{
  int nd = out->ndim, a = ds_geom_axis(dim, nd);
  if (a < 0)
    return false;
  int64_t total = 0;
  for (int k = 0; k < n_inputs; k++) {
    const DsTensor *t = &inputs[k];
    if (t->ndim != nd || t->dtype != out->dtype)
      return false;
    for (int d = 0; d < nd; d++)
      if (d != a && t->shape[d] != out->shape[d])
        return false;
    total += t->shape[a];
  }
  *axis = a;
  return total == out->shape[a];
}

bool ds_geom_stack(const DsTensor *inputs, int n_inputs, const DsTensor *out, int64_t axis,
                   int64_t *outer, int64_t *inner)
{
  const DsTensor *first = &inputs[0];
  int nd = first->ndim;
  /* The new axis counts among out's nd + 1 dims. */
  int64_t a = axis < 0 ? axis + nd + 1 : axis;
  if (a < 0 || a > nd || out->ndim != nd + 1 || out->shape[a] != n_inputs)
    return false;
  for (int k = 0; k < n_inputs; k++)
    if (inputs[k].dtype != out->dtype || !ds_geom_same_shape(&inputs[k], first))
      return false;
  for (int d = 0; d < nd; d++)
    if (out->shape[d < a ? d : d + 1] != first->shape[d])
      return false;
  *outer = ds_shape_span(first->shape, 0, (int)a);
  *inner = ds_shape_span(first->shape, (int)a, nd);
  return true;
}

bool ds_geom_split(const DsTensor *in, const DsTensor *outs, int n, int64_t axis, bool squeeze,
                   int64_t *outer, int64_t *inner)
{
  int nd = in->ndim, a = ds_geom_axis(axis, nd);
  if (a < 0 || n < 1 || in->shape[a] % n != 0 || (squeeze && in->shape[a] != n))
    return false;
  int64_t part = in->shape[a] / n;
  for (int k = 0; k < n; k++) {
    const DsTensor *o = &outs[k];
    if (o->dtype != in->dtype || o->ndim != nd - (squeeze ? 1 : 0))
      return false;
    for (int d = 0, j = 0; d < nd; d++) {
      if (d == a && squeeze)
        continue;
      if (o->shape[j++] != (d == a ? part : in->shape[d]))
        return false;
    }
  }
  *outer = ds_shape_span(in->shape, 0, a);
  *inner = part * ds_shape_span(in->shape, a + 1, nd);
  return true;
}

/* ---- slice_axis, tile, repeat, reverse ---- */

bool ds_geom_slice_axis(const DsTensor *in, const DsTensor *out, int64_t axis, int64_t begin,
                        int64_t end, bool has_end, int *axis_out, int64_t *first)
{
  int nd = in->ndim, a = ds_geom_axis(axis, nd);
  if (a < 0 || out->ndim != nd)
    return false;
  int64_t len = in->shape[a];
  int64_t b = begin < 0 ? begin + len : begin;
  int64_t e = !has_end ? len : (end < 0 ? end + len : end);
  if (len == 0)
    b = e = 0;
  if (b < 0 || e > len || b > e || out->shape[a] != e - b)
    return false;
  for (int d = 0; d < nd; d++)
    if (d != a && out->shape[d] != in->shape[d])
      return false;
  *axis_out = a;
  *first = b;
  return true;
}

bool ds_geom_tile(const DsTensor *in, const DsTensor *out, const int64_t *reps, int n_reps,
                  int64_t *in_shape)
{
  int nd = n_reps == 0 || in->ndim > n_reps ? in->ndim : n_reps;
  if (out->ndim != nd)
    return false;
  for (int d = nd - 1; d >= 0; d--) {
    int i1 = d - (nd - in->ndim), i2 = d - (nd - n_reps);
    int64_t dim = i1 >= 0 ? in->shape[i1] : 1;
    int64_t rep = n_reps > 0 && i2 >= 0 ? reps[i2] : 1;
    if (out->shape[d] != dim * rep)
      return false;
    if (in_shape != NULL)
      in_shape[d] = dim;
  }
  return true;
}

bool ds_geom_repeat(const DsTensor *in, const DsTensor *out, int64_t repeats, bool has_axis,
                    int64_t axis, int *axis_out)
{
  *axis_out = -1;
  if (!has_axis)
    return out->ndim == 1 && out->shape[0] == ds_tensor_numel(in) * repeats;
  int nd = in->ndim, a = ds_geom_axis(axis, nd);
  if (a < 0 || out->ndim != nd)
    return false;
  for (int d = 0; d < nd; d++)
    if (out->shape[d] != (d == a ? in->shape[d] * repeats : in->shape[d]))
      return false;
  *axis_out = a;
  return true;
}

bool ds_geom_reverse(const int64_t *shape, int ndim, const int64_t *axes, int n_axes,
                     int64_t *stride, int64_t *base)
{
  bool flipped[DS_MAX_NDIM] = {false};
  for (int i = 0; i < n_axes; i++) {
    int a = ds_geom_axis(axes[i], ndim);
    if (a < 0)
      return false;
    flipped[a] = !flipped[a];
  }
  /* A reversed axis starts at its last element and walks backwards. */
  int64_t s = 1;
  *base = 0;
  for (int d = ndim - 1; d >= 0; d--) {
    stride[d] = flipped[d] ? -s : s;
    if (flipped[d] && shape[d] > 0)
      *base += (shape[d] - 1) * s;
    s *= shape[d];
  }
  return true;
}

/* ---- take, boolean_mask ---- */

DsStatus ds_geom_take(const DsTensor *data, const DsTensor *idx, const DsTensor *out, int64_t axis,
                      DsGeomTake *g)
{
  int nd = data->ndim;
  g->axis = ds_geom_axis(axis, nd);
  if (g->axis < 0 || out->dtype != data->dtype)
    return DS_STATUS_INVALID_ARGUMENT;
  if (!ds_dtype_is_valid(idx->dtype) || ds_dtype_is_storage_only(idx->dtype))
    return DS_STATUS_UNSUPPORTED;
  g->outer = ds_shape_span(data->shape, 0, g->axis);
  g->trail = ds_shape_span(data->shape, g->axis + 1, nd);
  g->k = ds_tensor_numel(idx);
  g->m = data->shape[g->axis];
  if (ds_tensor_numel(out) != g->outer * g->k * g->trail || out->ndim != nd - 1 + idx->ndim)
    return DS_STATUS_INVALID_ARGUMENT;
  if (g->outer * g->k != 0 && g->m == 0)
    return DS_STATUS_OUT_OF_RANGE; /* nothing to take from, whatever the mode */
  return DS_STATUS_OK;
}

DsStatus ds_geom_boolean_mask(const DsTensor *data, const DsTensor *mask, int64_t axis,
                              int *axis_out)
{
  int a = ds_geom_axis(axis, data->ndim);
  if (a < 0 || mask->ndim != 1 || mask->shape[0] != data->shape[a])
    return DS_STATUS_INVALID_ARGUMENT;
  if (!ds_dtype_is_valid(data->dtype) || !ds_dtype_is_valid(mask->dtype))
    return DS_STATUS_UNSUPPORTED;
  *axis_out = a;
  return DS_STATUS_OK;
}
