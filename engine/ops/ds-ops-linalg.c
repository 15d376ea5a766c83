/* ds-ops-linalg.c: shape and dtype rules of the linear algebra ops (MXNet's la_op.h). */
#include "ds-ops-linalg.h"

#include "ds-error.h"
#include "ds-op.h"
#include "ds-ops-common.h"

static const char *const names_a[] = {"A", NULL};
static const char *const det_aliases[] = {"linalg_det", NULL};

/* --- _linalg_det -------------------------------------------------------------------------- */

/* MXNet's DetShape<1>: A (..., n, n) with rank >= 2; det (...), or (1,) for one matrix (the
 * legacy shape of a 2-dim input: MXNet gives 0-dim results only in its NumPy mode); the
 * hidden LU (A's shape) and pivots (..., n). The two matrix dims are merged through the shape
 * engine, so a symbolic n learnt from either side serves both. A known LU output gives back
 * an unknown A. */
static gboolean det_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param, DsShape *in,
                                DsShape *out, GError **error)
{
  (void)node;
  (void)param;
  DsShape *a = &in[0];
  if (a->ndim < 0 && out[1].ndim >= 0 && !ds_ops_assign_shape(ctx, a, &out[1], "A", error))
    return FALSE;
  if (a->ndim < 0)
    return TRUE;
  g_autofree char *s = ds_shape_to_string(a);
  if (a->ndim < 2) {
    ds_shape_ctx_set_error(ctx, error,
                           "A %s is not a matrix: the determinant takes a stack of square "
                           "matrices (..., n, n)",
                           s);
    return FALSE;
  }
  const int rows = a->ndim - 2, cols = a->ndim - 1;
  DsDim n = a->dims[rows];
  GError *local = NULL;
  if (!ds_shape_ctx_unify_dim(ctx, &n, a->dims[cols], "A", &local)) {
    g_clear_error(&local);
    g_autofree char *r = ds_dim_to_string(a->dims[rows]), *c = ds_dim_to_string(a->dims[cols]);
    ds_shape_ctx_set_error(ctx, error,
                           "A %s is not a stack of square matrices: its last two dims %s and %s "
                           "differ",
                           s, r, c);
    return FALSE;
  }
  a->dims[rows] = a->dims[cols] = n;
  DsShape det = {.ndim = rows}, pivot = {.ndim = cols};
  for (int d = 0; d < cols; d++)
    pivot.dims[d] = a->dims[d];
  for (int d = 0; d < rows; d++)
    det.dims[d] = a->dims[d];
  if (rows == 0)
    det = (DsShape){.ndim = 1, .dims = {ds_dim(1)}};
  return ds_ops_assign_shape(ctx, &out[0], &det, "output", error) &&
         ds_ops_assign_shape(ctx, &out[1], a, "LU", error) &&
         ds_ops_assign_shape(ctx, &out[2], &pivot, "pivot", error);
}

/* MXNet's DetType<1>: float32 or float64 A; det and LU in A's dtype, the pivots int32. */
static gboolean det_infer_type(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                               GError **error)
{
  (void)param;
  DsDType t = in[0] != DS_DTYPE_UNKNOWN ? in[0] : out[0] != DS_DTYPE_UNKNOWN ? out[0] : out[1];
  if (!ds_ops_assign_dtype(node, &out[2], DS_DTYPE_INT32, "pivot", error))
    return FALSE;
  if (t == DS_DTYPE_UNKNOWN)
    return TRUE;
  if (t != DS_DTYPE_FLOAT32 && t != DS_DTYPE_FLOAT64)
    return ds_ops_node_error(node, error, DS_ERROR_SHAPE,
                             "A has dtype %s, but the determinant takes float32 or float64",
                             ds_dtype_name(t));
  return ds_ops_assign_dtype(node, &in[0], t, "A", error) &&
         ds_ops_assign_dtype(node, &out[0], t, "output", error) &&
         ds_ops_assign_dtype(node, &out[1], t, "LU", error);
}

/* Three outputs, one visible, and no FListOutputNames: MXNet names them output0..2. */
static const DsOpDef LINALG_DET_def = {
    .id = DS_OP_LINALG_DET,
    .name = "_linalg_det",
    .aliases = det_aliases,
    .num_inputs = ds_op_count_1,
    .num_outputs = ds_op_count_3,
    .num_visible_outputs = ds_op_count_1,
    .input_names = names_a,
    .infer_shape = det_infer_shape,
    .infer_type = det_infer_type,
};

void ds_ops_linalg_register(const DsOpDef **table)
{
  DS_OPS_LINALG(DS_OP_TABLE_ENTRY)
}
