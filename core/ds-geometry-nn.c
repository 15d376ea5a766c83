/* ds-geometry-nn.c: the shape geometry of the neural-network ops, shared by every backend. */
#include "ds-geometry-nn.h"

/* ---- matrix products ---- */

bool ds_geom_fully_connected(const DsTensor *x, const DsTensor *w, const DsTensor *bias,
                             const DsTensor *y, int64_t num_hidden, bool flatten, DsGeomGemm *g)
{
  if (num_hidden <= 0)
    return false;
  int64_t rows = flatten ? (x->ndim > 0 ? x->shape[0] : 1)
                         : ds_shape_span(x->shape, 0, x->ndim > 0 ? x->ndim - 1 : 0);
  int64_t in_features = ds_tensor_numel(w) / num_hidden;
  if (ds_tensor_numel(w) != num_hidden * in_features || ds_tensor_numel(x) != rows * in_features)
    return false;
  if ((y != NULL && ds_tensor_numel(y) != rows * num_hidden) ||
      (bias != NULL && ds_tensor_numel(bias) != num_hidden))
    return false;
  /* W is stored (num_hidden x in_features) and read transposed. */
  *g = (DsGeomGemm){.m = rows,
                    .n = num_hidden,
                    .k = in_features,
                    .lda = in_features,
                    .ldb = in_features,
                    .count = 1};
  return true;
}

bool ds_geom_dot(const DsTensor *a, const DsTensor *b, const DsTensor *y, bool ta, bool tb,
                 DsGeomGemm *g)
{
  if (a->ndim < 1 || b->ndim < 1)
    return false;
  int64_t k = ta ? a->shape[0] : a->shape[a->ndim - 1];
  int64_t k2 = tb ? b->shape[b->ndim - 1] : b->shape[0];
  if (k != k2)
    return false;
  int64_t m = k > 0 ? ds_tensor_numel(a) / k : 0, n = k2 > 0 ? ds_tensor_numel(b) / k2 : 0;
  if (k == 0) { /* the other dims still give the output's size */
    m = ta ? ds_shape_span(a->shape, 1, a->ndim) : ds_shape_span(a->shape, 0, a->ndim - 1);
    n = tb ? ds_shape_span(b->shape, 0, b->ndim - 1) : ds_shape_span(b->shape, 1, b->ndim);
  }
  if (ds_tensor_numel(y) != m * n)
    return false;
  *g = (DsGeomGemm){.m = m, .n = n, .k = k, .lda = ta ? m : k, .ldb = tb ? k : n, .count = 1};
  return true;
}

bool ds_geom_batch_dot(const DsTensor *a, const DsTensor *b, const DsTensor *y, bool ta, bool tb,
                       DsGeomGemm *g)
{
  int nd = a->ndim;
  if (nd < 3 || b->ndim != nd || y->ndim != nd)
    return false;
  int64_t batch = ds_shape_span(a->shape, 0, nd - 2);
  if (ds_shape_span(b->shape, 0, nd - 2) != batch)
    return false;
  int64_t ar = a->shape[nd - 2], ac = a->shape[nd - 1];
  int64_t br = b->shape[nd - 2], bc = b->shape[nd - 1];
  int64_t m = ta ? ac : ar, k = ta ? ar : ac;
  int64_t n = tb ? br : bc, k2 = tb ? bc : br;
  if (k != k2 || y->shape[nd - 2] != m || y->shape[nd - 1] != n)
    return false;
  *g = (DsGeomGemm){.m = m,
                    .n = n,
                    .k = k,
                    .lda = ac,
                    .ldb = bc,
                    .count = batch,
                    .a_stride = ar * ac,
                    .b_stride = br * bc};
  return true;
}

/* Matrix strides of an operand's batch dims (its dims but the last `mat_dims`), right-aligned
 * to the output's `nb` batch dims; false if a dim neither matches nor broadcasts. */
static bool matmul_steps(const DsTensor *t, int mat_dims, int nb, const int64_t *batch,
                         int64_t *steps)
{
  int tb = t->ndim - mat_dims;
  int64_t stride = 1;
  for (int i = nb - 1; i >= 0; i--) {
    int j = i - (nb - tb);
    int64_t d = j >= 0 ? t->shape[j] : 1;
    if (d != batch[i] && d != 1)
      return false;
    steps[i] = d == 1 ? 0 : stride;
    stride *= d;
  }
  return true;
}

bool ds_geom_matmul(const DsTensor *a, const DsTensor *b, const DsTensor *y, DsGeomMatmul *g)
{
  if (a->ndim < 1 || b->ndim < 1)
    return false;
  const int am = a->ndim > 1 ? 2 : 1, bm = b->ndim > 1 ? 2 : 1;
  g->m = a->ndim > 1 ? a->shape[a->ndim - 2] : 1;
  g->k = a->shape[a->ndim - 1];
  g->n = b->ndim > 1 ? b->shape[b->ndim - 1] : 1;
  if ((b->ndim > 1 ? b->shape[b->ndim - 2] : b->shape[0]) != g->k)
    return false;
  g->nb = a->ndim - am > b->ndim - bm ? a->ndim - am : b->ndim - bm;
  int want = g->nb + (a->ndim > 1) + (b->ndim > 1);
  if (y->ndim != want)
    return false;
  g->count = 1;
  for (int i = 0; i < g->nb; i++) {
    g->batch[i] = y->shape[i];
    g->count *= g->batch[i];
  }
  if ((a->ndim > 1 && y->shape[g->nb] != g->m) || (b->ndim > 1 && y->shape[want - 1] != g->n))
    return false;
  if (!matmul_steps(a, am, g->nb, g->batch, g->a_step) ||
      !matmul_steps(b, bm, g->nb, g->batch, g->b_step))
    return false;
  int64_t a_mats = ds_shape_span(a->shape, 0, a->ndim - am);
  int64_t b_mats = ds_shape_span(b->shape, 0, b->ndim - bm);
  g->one_gemm = b_mats == 1 && a_mats == g->count;
  return true;
}

/* ---- sliding windows ---- */

/* The per-axis sizes of a window over `ns` spatial dims, normalised to three. Global pooling
 * takes each whole plane with stride 1 and no padding. */
static void window_axes(const DsTensor *data, const DsTensor *out, const DsGeomWindowAttrs *a,
                        int ns, bool global, DsGeomWindow *g)
{
  g->in_plane = g->out_plane = g->kvol = 1;
  for (int i = 0; i < DS_GEOM_SPATIAL; i++) {
    int s = i - (DS_GEOM_SPATIAL - ns); /* index into the attribute tuples, < 0 for a new dim */
    bool attr = s >= 0 && !global;      /* the attributes say */
    g->in[i] = s >= 0 ? data->shape[2 + s] : 1;
    g->out[i] = s >= 0 ? out->shape[2 + s] : 1;
    g->kernel[i] = global ? g->in[i] : attr ? a->kernel[s] : 1;
    g->stride[i] = attr ? a->stride[s] : 1;
    g->dilate[i] = attr ? a->dilate[s] : 1;
    g->pad[i] = attr ? a->pad[s] : 0;
    g->pad_end[i] = attr ? a->pad_end[s] : 0;
    g->in_plane *= g->in[i];
    g->out_plane *= g->out[i];
    g->kvol *= g->kernel[i];
  }
}

bool ds_geom_conv(const DsTensor *data, const DsTensor *out, const DsGeomWindowAttrs *a,
                  int64_t num_filter, int64_t num_group, DsGeomWindow *g)
{
  int ns = a->n_spatial;
  if (ns < 1 || ns > DS_GEOM_SPATIAL || data->ndim != ns + 2 || out->ndim != ns + 2)
    return false;
  g->batch = data->shape[0];
  g->channels = data->shape[1];
  g->filters = out->shape[1]; /* num_filter, or with num_filter=0 the weight's count */
  g->groups = num_group;
  if (num_filter != 0 && g->filters != num_filter)
    return false;
  if (g->groups < 1 || g->channels % g->groups != 0 || g->filters % g->groups != 0 ||
      out->shape[0] != g->batch)
    return false;
  window_axes(data, out, a, ns, false, g);
  g->direct = true;
  for (int i = 0; i < DS_GEOM_SPATIAL; i++) {
    int64_t dk = g->dilate[i] * (g->kernel[i] - 1) + 1;
    int64_t padded = g->in[i] + g->pad[i] + g->pad_end[i];
    if (g->stride[i] < 1 || padded < dk || g->out[i] != (padded - dk) / g->stride[i] + 1)
      return false;
    if (g->kernel[i] != 1 || g->stride[i] != 1 || g->pad[i] != 0 || g->pad_end[i] != 0)
      g->direct = false;
  }
  return true;
}

bool ds_geom_conv_weights(const DsGeomWindow *g, const DsTensor *weight, const DsTensor *bias)
{
  return ds_tensor_numel(weight) == g->filters * (g->channels / g->groups) * g->kvol &&
         (bias == NULL || ds_tensor_numel(bias) == g->filters);
}

bool ds_geom_pool(const DsTensor *x, const DsTensor *y, const DsGeomWindowAttrs *a, bool global,
                  DsGeomWindow *g)
{
  int nd = x->ndim, ns = nd - 2;
  if (nd < 3 || nd > 5 || y->ndim != nd || (!global && a->n_spatial != ns) ||
      y->shape[0] != x->shape[0] || y->shape[1] != x->shape[1])
    return false;
  g->batch = x->shape[0];
  g->channels = g->filters = x->shape[1];
  g->groups = 1;
  g->direct = false;
  window_axes(x, y, a, ns, global, g);
  for (int i = 0; i < DS_GEOM_SPATIAL; i++)
    if (global && g->out[i] != 1)
      return false;
  return true;
}
