/* ds-grads-tensor.c: gradients of data movement and reductions, as engine ops. Moving data
 * back is the same movement reversed: a reshape's gradient is reshaped back, a transpose's is
 * transposed by the inverse permutation, a concatenation's is sliced apart. */
#include "ds-grad.h"
#include "ds-grads.h"
#include "ds-dtype.h"

/* Reshape, Flatten, expand_dims, squeeze and reshape_like: g in x's shape. */
DS_GRAD_FN(ds_grad_reshape)
{
  (void)error;
  in_grads[0] = ds_grad_op2(ctx, "reshape_like", out_grads[0], ds_grad_input(ctx, 0), NULL);
  return TRUE;
}

DS_GRAD_FN(ds_grad_transpose)
{
  const DsTransposeParam *p = ctx->node->param;
  if (p->n_axes == 0) { /* reversed axes: their own inverse */
    in_grads[0] = ds_grad_op1(ctx, "transpose", out_grads[0], NULL);
    return TRUE;
  }
  int ndim = p->n_axes;
  int64_t inverse[DS_MAX_NDIM];
  for (int i = 0; i < ndim; i++) {
    int64_t a = p->axes[i] < 0 ? p->axes[i] + ndim : p->axes[i];
    if (a < 0 || a >= ndim)
      return ds_grad_fail(ctx, error, "axes out of range");
    inverse[a] = i;
  }
  g_autofree char *axes = ds_grad_tuple(inverse, ndim);
  in_grads[0] = ds_grad_op1(ctx, "transpose", out_grads[0], "axes", axes, NULL);
  return TRUE;
}

DS_GRAD_FN(ds_grad_swap_axis)
{
  (void)error;
  const DsSwapAxisParam *p = ctx->node->param;
  char d1[16], d2[16];
  g_snprintf(d1, sizeof d1, "%d", p->dim1);
  g_snprintf(d2, sizeof d2, "%d", p->dim2);
  in_grads[0] = ds_grad_op1(ctx, "SwapAxis", out_grads[0], "dim1", d1, "dim2", d2, NULL);
  return TRUE;
}

/* Pieces of g along `axis` from `begin` to `end` (an attribute string, "None" for the end). */
static DsEntry slice(DsGradCtx *ctx, DsEntry x, int axis, int64_t begin, const char *end)
{
  char a[16], b[32];
  g_snprintf(a, sizeof a, "%d", axis);
  g_snprintf(b, sizeof b, "%" G_GINT64_FORMAT, begin);
  return ds_grad_op1(ctx, "slice_axis", x, "axis", a, "begin", b, "end", end, NULL);
}

/* Input i's part of g: the slice at its offset along the axis, so the inputs' sizes there
 * must be known numbers. */
DS_GRAD_FN(ds_grad_concat)
{
  const DsConcatParam *p = ctx->node->param;
  const DsShape *os = &ctx->out_shapes[0];
  if (os->ndim < 1)
    return ds_grad_fail(ctx, error, "its output shape is not known");
  int axis = p->dim < 0 ? p->dim + os->ndim : p->dim;
  int64_t offset = 0;
  for (guint i = 0; i < ctx->node->n_inputs; i++) {
    DsDim d = ctx->in_shapes[i].ndim == os->ndim ? ctx->in_shapes[i].dims[axis] : DS_DIM_UNKNOWN;
    if (!ds_dim_is_const(d))
      return ds_grad_fail(ctx, error, "the size of input %u along axis %d is not a known number", i,
                          axis);
    char end[32];
    g_snprintf(end, sizeof end, "%" G_GINT64_FORMAT, offset + d.value);
    in_grads[i] = slice(ctx, out_grads[0], axis, offset, end);
    offset += d.value;
  }
  return TRUE;
}

/* The outputs' gradients concatenated back (zeros for an output nothing read), each given its
 * axis back first when the split squeezed it. */
DS_GRAD_FN(ds_grad_slice_channel)
{
  (void)error;
  const DsSliceChannelParam *p = ctx->node->param;
  guint n = ctx->node->n_outputs;
  g_autofree DsEntry *parts = g_new(DsEntry, n);
  char axis[16], count[16];
  g_snprintf(axis, sizeof axis, "%d", p->axis);
  g_snprintf(count, sizeof count, "%u", n);
  for (guint j = 0; j < n; j++) {
    DsEntry g = ds_grad_is_none(out_grads[j])
                    ? ds_grad_op1(ctx, "zeros_like", ds_grad_output(ctx, j), NULL)
                    : out_grads[j];
    parts[j] = p->squeeze_axis ? ds_grad_op1(ctx, "expand_dims", g, "axis", axis, NULL) : g;
  }
  in_grads[0] = ds_grad_op(ctx, "Concat", n, parts, "dim", axis, "num_args", count, NULL);
  return TRUE;
}

/* g split along the new axis, which goes again. */
DS_GRAD_FN(ds_grad_stack)
{
  (void)error;
  const DsStackParam *p = ctx->node->param;
  char axis[16], count[16];
  g_snprintf(axis, sizeof axis, "%d", p->axis);
  g_snprintf(count, sizeof count, "%u", ctx->node->n_inputs);
  DsEntry split = ds_grad_op1(ctx, "SliceChannel", out_grads[0], "axis", axis, "num_outputs",
                              count, "squeeze_axis", "True", NULL);
  for (guint i = 0; i < ctx->node->n_inputs; i++)
    in_grads[i] = (DsEntry){split.node_id, i, 0};
  return TRUE;
}

/* g put back between zeros: the parts of a zero x before and after the slice, around g. */
DS_GRAD_FN(ds_grad_slice_axis)
{
  (void)error;
  const DsSliceAxisParam *p = ctx->node->param;
  DsEntry zeros = ds_grad_op1(ctx, "zeros_like", ds_grad_input(ctx, 0), NULL);
  DsEntry parts[3];
  guint n = 0;
  char axis[16], begin[32], end[32];
  g_snprintf(axis, sizeof axis, "%d", p->axis);
  g_snprintf(begin, sizeof begin, "%" G_GINT64_FORMAT, p->begin);
  if (p->begin != 0)
    parts[n++] = slice(ctx, zeros, p->axis, 0, begin);
  parts[n++] = out_grads[0];
  if (p->has_end) {
    g_snprintf(end, sizeof end, "%" G_GINT64_FORMAT, p->end);
    parts[n++] = ds_grad_op1(ctx, "slice_axis", zeros, "axis", axis, "begin", end, "end", "None",
                             NULL);
  }
  char count[16];
  g_snprintf(count, sizeof count, "%u", n);
  in_grads[0] = n == 1 ? parts[0]
                       : ds_grad_op(ctx, "Concat", n, parts, "dim", axis, "num_args", count, NULL);
  return TRUE;
}

/* An int64 as an attribute value, "None" for DS_SLICE_NONE. */
static void bound_text(char *buf, gsize size, int64_t v)
{
  if (v == DS_SLICE_NONE)
    g_strlcpy(buf, "None", size);
  else
    g_snprintf(buf, size, "%" G_GINT64_FORMAT, v);
}

/* slice (unit steps): g put back between zeros one axis at a time, as slice_axis's gradient
 * does, last sliced axis first. The zeros around g on axis j are cut from a zero x, with the
 * axes still sliced in g cut as the forward slice cut them and the rest whole, so the pieces
 * fit symbolic shapes too. */
DS_GRAD_FN(ds_grad_slice)
{
  const DsSliceParam *p = ctx->node->param;
  int ndim = ctx->in_shapes[0].ndim;
  if (ndim < 0)
    return ds_grad_fail(ctx, error, "its input shape is not known");
  int64_t begin[DS_MAX_NDIM], end[DS_MAX_NDIM];
  bool sliced[DS_MAX_NDIM] = {false};
  for (int d = 0; d < ndim; d++)
    begin[d] = end[d] = DS_SLICE_NONE;
  for (int i = 0; i < p->n_axes; i++) {
    int64_t a = p->has_axes ? p->axes[i] : i;
    a = a < 0 ? a + ndim : a;
    if (a < 0 || a >= ndim)
      return ds_grad_fail(ctx, error, "axes out of range");
    if (p->n_step > 0 && p->step[i] != 1 && p->step[i] != DS_SLICE_NONE)
      return ds_grad_fail(ctx, error, "slices with steps other than 1 are not done yet");
    begin[a] = p->begin[i] == 0 ? DS_SLICE_NONE : p->begin[i];
    end[a] = p->end[i];
    sliced[a] = begin[a] != DS_SLICE_NONE || end[a] != DS_SLICE_NONE;
  }
  DsEntry g = out_grads[0], zeros = DS_GRAD_NONE;
  for (int j = ndim - 1; j >= 0; j--) {
    if (!sliced[j])
      continue;
    if (ds_grad_is_none(zeros))
      zeros = ds_grad_op1(ctx, "zeros_like", ds_grad_input(ctx, 0), NULL);
    DsEntry parts[3];
    guint n = 0;
    for (int side = 0; side < 2; side++) {
      int64_t from = side == 0 ? DS_SLICE_NONE : end[j], to = side == 0 ? begin[j] : DS_SLICE_NONE;
      if ((side == 0 ? begin[j] : end[j]) == DS_SLICE_NONE) {
        if (side == 1)
          break;
        parts[n++] = g;
        continue;
      }
      GString *b = g_string_new("("), *e = g_string_new("(");
      for (int d = 0; d < ndim; d++) {
        char bt[32], et[32];
        gboolean cut = d < j && sliced[d];
        bound_text(bt, sizeof bt, d == j ? from : cut ? begin[d] : DS_SLICE_NONE);
        bound_text(et, sizeof et, d == j ? to : cut ? end[d] : DS_SLICE_NONE);
        g_string_append_printf(b, "%s%s", d ? ", " : "", bt);
        g_string_append_printf(e, "%s%s", d ? ", " : "", et);
      }
      g_string_append_c(b, ')');
      g_string_append_c(e, ')');
      parts[n++] = ds_grad_op1(ctx, "slice", zeros, "begin", b->str, "end", e->str, NULL);
      g_string_free(b, TRUE);
      g_string_free(e, TRUE);
      if (side == 0)
        parts[n++] = g;
    }
    char axis[16], count[16];
    g_snprintf(axis, sizeof axis, "%d", j);
    g_snprintf(count, sizeof count, "%u", n);
    g = n == 1 ? parts[0] : ds_grad_op(ctx, "Concat", n, parts, "dim", axis, "num_args", count, NULL);
  }
  in_grads[0] = g;
  return TRUE;
}

/* The op again on g, under the forward node's attributes: reverse, SequenceReverse (the same
 * sequence lengths) and trilu (the same diagonal) are their own adjoints. */
DS_GRAD_FN(ds_grad_self_adjoint)
{
  (void)error;
  guint n = ctx->node->n_inputs;
  g_autofree DsEntry *in = g_new(DsEntry, n);
  in[0] = out_grads[0];
  for (guint i = 1; i < n; i++)
    in[i] = ds_grad_input(ctx, i);
  DsEntry e = ds_grad_op(ctx, ctx->node->op->name, n, in, NULL);
  ds_grad_copy_attrs(ctx, e, NULL);
  in_grads[0] = e;
  return TRUE;
}

/* A running sum's gradient is the running sum of g the other way round. */
DS_GRAD_FN(ds_grad_cumsum)
{
  (void)error;
  const DsCumsumParam *p = ctx->node->param;
  DsEntry e = ds_grad_op2(ctx, "cumsum", out_grads[0], ds_grad_input(ctx, 1), "reverse",
                          p->reverse ? "False" : "True", NULL);
  ds_grad_copy_attrs(ctx, e, "reverse");
  in_grads[0] = e;
  return TRUE;
}

/* depth_to_space and space_to_depth undo each other, block and channel order alike. */
DS_GRAD_FN(ds_grad_depth_space)
{
  (void)error;
  const char *inverse =
      ctx->node->op->id == DS_OP_DEPTH_TO_SPACE ? "space_to_depth" : "depth_to_space";
  DsEntry e = ds_grad_op1(ctx, inverse, out_grads[0], NULL);
  ds_grad_copy_attrs(ctx, e, NULL);
  in_grads[0] = e;
  return TRUE;
}

/* tile: each element of x appears once per tile, so its gradient sums g over the tiles: g
 * reshaped to (r0, d0, r1, d1, ...), summed over the r axes, shaped like x. */
DS_GRAD_FN(ds_grad_tile)
{
  const DsTileParam *p = ctx->node->param;
  int ndim = ctx->out_shapes[0].ndim;
  if (ndim < 0)
    return ds_grad_fail(ctx, error, "its output shape is not known");
  if (2 * ndim > DS_MAX_NDIM)
    return ds_grad_fail(ctx, error, "a rank-%d tile's tiles would need rank %d", ndim, 2 * ndim);
  int64_t split[2 * DS_MAX_NDIM], axes[DS_MAX_NDIM];
  int n = 0, n_axes = 0;
  for (int d = 0; d < ndim; d++) {
    int r = d - (ndim - p->n_reps); /* reps align to the right */
    int64_t reps = r >= 0 ? p->reps[r] : 1;
    split[n++] = -4; /* MXNet's Reshape: split this dim into (reps, the rest) */
    split[n++] = reps;
    split[n++] = -1;
    axes[n_axes++] = 2 * d;
  }
  g_autofree char *shape = ds_grad_tuple(split, n);
  g_autofree char *axis = ds_grad_tuple(axes, n_axes);
  DsEntry g = ds_grad_op1(ctx, "Reshape", out_grads[0], "shape", shape, NULL);
  g = ds_grad_op1(ctx, "sum", g, "axis", axis, NULL);
  in_grads[0] = ds_grad_op2(ctx, "reshape_like", g, ds_grad_input(ctx, 0), NULL);
  return TRUE;
}

/* repeat: the `repeats` copies of each element are adjacent along the axis, so g reshaped
 * with that axis split into (size, repeats) and summed over the repeats is x's gradient (the
 * flattened x's without an axis). */
DS_GRAD_FN(ds_grad_repeat)
{
  const DsRepeatParam *p = ctx->node->param;
  int ndim = ctx->in_shapes[0].ndim;
  if (ndim < 0)
    return ds_grad_fail(ctx, error, "its input shape is not known");
  int axis = p->has_axis ? (p->axis < 0 ? p->axis + ndim : p->axis) : 0;
  int64_t split[DS_MAX_NDIM + 2];
  int n = 0;
  for (int d = 0; d < axis; d++)
    split[n++] = 0;
  split[n++] = -4, split[n++] = -1, split[n++] = p->repeats, split[n++] = -2;
  g_autofree char *shape = ds_grad_tuple(split, n);
  char summed[16];
  g_snprintf(summed, sizeof summed, "%d", axis + 1);
  DsEntry g = ds_grad_op1(ctx, "Reshape", out_grads[0], "shape", shape, NULL);
  g = ds_grad_op1(ctx, "sum", g, "axis", summed, NULL);
  in_grads[0] = ds_grad_op2(ctx, "reshape_like", g, ds_grad_input(ctx, 0), NULL);
  return TRUE;
}

/* Indices as the scatter ops take them: int64, clipped to the axis first in clip mode (whose
 * size must then be a known number). Wrap and raise modes pass them as they are: the scatter
 * counts negative ones from the end, as wrap does for indices in [-size, size). */
static gboolean scatter_indices(DsGradCtx *ctx, DsEntry index, DsDim size, gboolean clip,
                                DsEntry *out, GError **error)
{
  if (clip) {
    if (!ds_dim_is_const(size))
      return ds_grad_fail(ctx, error, "clip mode needs the axis's size as a number");
    char hi[32];
    g_snprintf(hi, sizeof hi, "%" G_GINT64_FORMAT, size.value - 1);
    index = ds_grad_op1(ctx, "clip", index, "a_min", "0", "a_max", hi, NULL);
  }
  *out = ds_grad_op1(ctx, "Cast", index, "dtype", "int64", NULL);
  return TRUE;
}

/* take: g added into zeros at the rows the indices took (scatter_nd_update, reduction add,
 * so a row taken twice gets both), with the axis moved to the front and back. */
DS_GRAD_FN(ds_grad_take)
{
  const DsTakeParam *p = ctx->node->param;
  const DsShape *xs = &ctx->in_shapes[0], *is = &ctx->in_shapes[1];
  if (xs->ndim < 1 || is->ndim < 0)
    return ds_grad_fail(ctx, error, "its input shapes are not known");
  int axis = p->axis < 0 ? p->axis + xs->ndim : p->axis, k = is->ndim;
  DsEntry index;
  if (!scatter_indices(ctx, ds_grad_input(ctx, 1), xs->dims[axis], p->mode == DS_TAKE_CLIP,
                       &index, error))
    return FALSE;
  index = ds_grad_op1(ctx, "expand_dims", index, "axis", "-1", NULL);
  DsEntry g = out_grads[0], zeros = ds_grad_op1(ctx, "zeros_like", ds_grad_input(ctx, 0), NULL);
  if (axis == 0) {
    in_grads[0] = ds_grad_op(ctx, "scatter_nd_update", 3, (DsEntry[]){zeros, index, g},
                             "reduction", "add", NULL);
    return TRUE;
  }
  /* g is x.shape[:axis] + indices.shape + x.shape[axis+1:]: the indices' axes to the front */
  int64_t perm_g[DS_MAX_NDIM], perm_x[DS_MAX_NDIM], back[DS_MAX_NDIM];
  int n = 0;
  for (int d = 0; d < k; d++)
    perm_g[n++] = axis + d;
  for (int d = 0; d < axis; d++)
    perm_g[n++] = d;
  for (int d = axis + k; d < xs->ndim - 1 + k; d++)
    perm_g[n++] = d;
  n = 0;
  perm_x[n++] = axis;
  for (int d = 0; d < xs->ndim; d++)
    if (d != axis)
      perm_x[n++] = d;
  for (int d = 0; d < xs->ndim; d++)
    back[perm_x[d]] = d;
  g_autofree char *pg = ds_grad_tuple(perm_g, xs->ndim - 1 + k);
  g_autofree char *px = ds_grad_tuple(perm_x, xs->ndim);
  g_autofree char *pb = ds_grad_tuple(back, xs->ndim);
  g = ds_grad_op1(ctx, "transpose", g, "axes", pg, NULL);
  zeros = ds_grad_op1(ctx, "transpose", zeros, "axes", px, NULL);
  DsEntry dx = ds_grad_op(ctx, "scatter_nd_update", 3, (DsEntry[]){zeros, index, g}, "reduction",
                          "add", NULL);
  in_grads[0] = ds_grad_op1(ctx, "transpose", dx, "axes", pb, NULL);
  return TRUE;
}

/* take_along_axis and pick: g added into zeros where the indices read (put_along_axis,
 * reduction add). pick's index loses the axis unless keepdims, so it and g get it back. */
DS_GRAD_FN(ds_grad_take_along_axis)
{
  const DsShape *xs = &ctx->in_shapes[0];
  if (xs->ndim < 1)
    return ds_grad_fail(ctx, error, "its input shape is not known");
  gboolean pick = ctx->node->op->id == DS_OP_PICK;
  int axis = pick ? ((const DsPickParam *)ctx->node->param)->axis
                  : ((const DsTakeAlongAxisParam *)ctx->node->param)->axis;
  axis = axis < 0 ? axis + xs->ndim : axis;
  gboolean clip = pick && ((const DsPickParam *)ctx->node->param)->mode == DS_PICK_CLIP;
  DsEntry index, g = out_grads[0];
  if (!scatter_indices(ctx, ds_grad_input(ctx, 1), xs->dims[axis], clip, &index, error))
    return FALSE;
  char at[16];
  g_snprintf(at, sizeof at, "%d", axis);
  if (pick && !((const DsPickParam *)ctx->node->param)->keepdims) {
    index = ds_grad_op1(ctx, "expand_dims", index, "axis", at, NULL);
    g = ds_grad_op1(ctx, "expand_dims", g, "axis", at, NULL);
  }
  DsEntry zeros = ds_grad_op1(ctx, "zeros_like", ds_grad_input(ctx, 0), NULL);
  in_grads[0] = ds_grad_op(ctx, "put_along_axis", 3, (DsEntry[]){zeros, index, g}, "axis", at,
                           "reduction", "add", NULL);
  return TRUE;
}

/* topk's values came from the positions its indices give: g added into zeros there. Without
 * the indices among its outputs, a topk returning them is run again. */
DS_GRAD_FN(ds_grad_topk)
{
  const DsTopkParam *p = ctx->node->param;
  if (p->ret_typ != DS_TOPK_VALUE && p->ret_typ != DS_TOPK_BOTH)
    return TRUE; /* indices or a mask: constant almost everywhere */
  const DsShape *xs = &ctx->in_shapes[0];
  if (xs->ndim < 1)
    return ds_grad_fail(ctx, error, "its input shape is not known");
  DsEntry x = ds_grad_input(ctx, 0), g = out_grads[0], indices;
  if (p->ret_typ == DS_TOPK_BOTH) {
    indices = ds_grad_output(ctx, 1);
  } else {
    indices = ds_grad_op1(ctx, "topk", x, "ret_typ", "indices", "dtype", "int64", NULL);
    ds_grad_copy_attrs(ctx, indices, "ret_typ");
    ds_node_add_attr(ctx->graph->nodes[indices.node_id], "dtype", "int64");
  }
  indices = ds_grad_op1(ctx, "Cast", indices, "dtype", "int64", NULL);
  DsEntry zeros = ds_grad_op1(ctx, "zeros_like", x, NULL);
  char axis[16];
  g_snprintf(axis, sizeof axis, "%d", p->has_axis ? p->axis : 0);
  if (!p->has_axis) /* of the flattened data */
    zeros = ds_grad_op1(ctx, "Reshape", zeros, "shape", "(-1,)", NULL);
  DsEntry dx = ds_grad_op(ctx, "put_along_axis", 3, (DsEntry[]){zeros, indices, g}, "axis", axis,
                          "reduction", "add", NULL);
  in_grads[0] = p->has_axis ? dx : ds_grad_op2(ctx, "reshape_like", dx, x, NULL);
  return TRUE;
}

/* batch_gather_nd (batch_dims 0) and gather_nd: g added into zeros at the slices the index
 * tuples read (scatter_nd_update, reduction add). gather_nd holds its tuples on the first
 * axis of the indices, the scatter on the last: they move there. */
DS_GRAD_FN(ds_grad_gather_nd)
{
  DsEntry index = ds_grad_input(ctx, 1);
  if (ctx->node->op->id == DS_OP_GATHER_ND) {
    int k = ctx->in_shapes[1].ndim;
    if (k < 1)
      return ds_grad_fail(ctx, error, "its index shape is not known");
    int64_t perm[DS_MAX_NDIM];
    for (int d = 0; d < k; d++)
      perm[d] = (d + 1) % k;
    g_autofree char *axes = ds_grad_tuple(perm, k);
    index = ds_grad_op1(ctx, "transpose", index, "axes", axes, NULL);
  } else if (((const DsBatchGatherNdParam *)ctx->node->param)->batch_dims != 0) {
    return ds_grad_fail(ctx, error, "batch_dims other than 0 are not done yet");
  }
  index = ds_grad_op1(ctx, "Cast", index, "dtype", "int64", NULL);
  DsEntry zeros = ds_grad_op1(ctx, "zeros_like", ds_grad_input(ctx, 0), NULL);
  in_grads[0] = ds_grad_op(ctx, "scatter_nd_update", 3, (DsEntry[]){zeros, index, out_grads[0]},
                           "reduction", "add", NULL);
  return TRUE;
}

/* scatter_nd_update and put_along_axis, reduction none or add: the updates' gradient is g
 * read where they went; the data's is g, except where an update replaced it (none), which
 * gets zeros. (Duplicate indices under none, which ONNX leaves undefined, are not handled.) */
DS_GRAD_FN(ds_grad_scatter)
{
  gboolean along = ctx->node->op->id == DS_OP_PUT_ALONG_AXIS;
  DsScatterReduction reduction = along
                                     ? ((const DsPutAlongAxisParam *)ctx->node->param)->reduction
                                     : ((const DsScatterNdParam *)ctx->node->param)->reduction;
  if (reduction != DS_SCATTER_NONE && reduction != DS_SCATTER_ADD)
    return ds_grad_fail(ctx, error, "only the reductions none and add are done yet");
  char axis[16];
  if (along)
    g_snprintf(axis, sizeof axis, "%d", ((const DsPutAlongAxisParam *)ctx->node->param)->axis);
  DsEntry g = out_grads[0], index = ds_grad_input(ctx, 1), updates = ds_grad_input(ctx, 2);
  in_grads[2] = along ? ds_grad_op2(ctx, "take_along_axis", g, index, "axis", axis, NULL)
                      : ds_grad_op2(ctx, "batch_gather_nd", g, index, NULL);
  if (reduction == DS_SCATTER_ADD) {
    in_grads[0] = g;
    return TRUE;
  }
  DsEntry zeros = ds_grad_op1(ctx, "zeros_like", updates, NULL);
  in_grads[0] = along ? ds_grad_op(ctx, "put_along_axis", 3, (DsEntry[]){g, index, zeros}, "axis",
                                   axis, NULL)
                      : ds_grad_op(ctx, "scatter_nd_update", 3, (DsEntry[]){g, index, zeros}, NULL);
  return TRUE;
}

/* SequenceLast: g goes back to each sequence's last valid step (put_along_axis at its
 * length - 1), or, without lengths, to the last step of all (after zeros for the others). */
DS_GRAD_FN(ds_grad_sequence_last)
{
  const DsSequenceLastParam *p = ctx->node->param;
  int ndim = ctx->in_shapes[0].ndim;
  if (ndim < 2)
    return ds_grad_fail(ctx, error, "its input shape is not known");
  char axis[16];
  g_snprintf(axis, sizeof axis, "%d", p->axis);
  DsEntry x = ds_grad_input(ctx, 0);
  DsEntry g = ds_grad_op1(ctx, "expand_dims", out_grads[0], "axis", axis, NULL);
  DsEntry zeros = ds_grad_op1(ctx, "zeros_like", x, NULL);
  if (!p->use_sequence_length) {
    DsEntry before = ds_grad_op1(ctx, "slice_axis", zeros, "axis", axis, "begin", "0", "end", "-1",
                                 NULL);
    in_grads[0] = ds_grad_op2(ctx, "Concat", before, g, "dim", axis, "num_args", "2", NULL);
    return TRUE;
  }
  /* the lengths (batch,) as (1, batch, 1...) or (batch, 1, 1...), spread like g */
  int64_t shape[DS_MAX_NDIM];
  for (int d = 0; d < ndim; d++)
    shape[d] = 1;
  shape[p->axis == 0 ? 1 : 0] = -1;
  g_autofree char *spread = ds_grad_tuple(shape, ndim);
  DsEntry last = ds_grad_scalar(ctx, "_minus_scalar", ds_grad_input(ctx, 1), 1);
  last = ds_grad_op1(ctx, "Reshape", last, "shape", spread, NULL);
  last = ds_grad_op2(ctx, "broadcast_like", last, g, NULL);
  last = ds_grad_op1(ctx, "Cast", last, "dtype", "int64", NULL);
  in_grads[0] = ds_grad_op(ctx, "put_along_axis", 3, (DsEntry[]){zeros, last, g}, "axis", axis,
                           "reduction", "add", NULL);
  return TRUE;
}

/* _contrib_boolean_mask and _contrib_compress kept the slices along the axis where the mask
 * is nonzero: g goes back to them (scatter_nd_update at _npx_nonzero's positions, the axis
 * moved to the front and back), the dropped slices get zeros. compress without an axis kept
 * elements of the flattened data. The mask gets none. */
DS_GRAD_FN(ds_grad_boolean_mask)
{
  int ndim = ctx->in_shapes[0].ndim, axis;
  gboolean flat = FALSE;
  if (ctx->node->op->id == DS_OP_COMPRESS) {
    const DsCompressParam *p = ctx->node->param;
    flat = !p->has_axis;
    axis = p->has_axis ? p->axis : 0;
  } else {
    axis = ((const DsBooleanMaskParam *)ctx->node->param)->axis;
  }
  if (ndim < 1)
    return ds_grad_fail(ctx, error, "its input shape is not known");
  axis = flat ? 0 : axis < 0 ? axis + ndim : axis;
  DsEntry x = ds_grad_input(ctx, 0), g = out_grads[0];
  DsEntry at = ds_grad_op1(ctx, "_npx_nonzero", ds_grad_input(ctx, 1), NULL);
  DsEntry zeros = ds_grad_op1(ctx, "zeros_like", x, NULL);
  if (flat)
    zeros = ds_grad_op1(ctx, "Reshape", zeros, "shape", "(-1,)", NULL);
  g_autofree char *perm = NULL;
  if (axis != 0) { /* swapping axis and 0 is its own inverse */
    int64_t order[DS_MAX_NDIM];
    for (int d = 0; d < ndim; d++)
      order[d] = d;
    order[0] = axis, order[axis] = 0;
    perm = ds_grad_tuple(order, ndim);
    zeros = ds_grad_op1(ctx, "transpose", zeros, "axes", perm, NULL);
    g = ds_grad_op1(ctx, "transpose", g, "axes", perm, NULL);
  }
  DsEntry dx = ds_grad_op(ctx, "scatter_nd_update", 3, (DsEntry[]){zeros, at, g}, "reduction",
                          "add", NULL);
  if (perm != NULL)
    dx = ds_grad_op1(ctx, "transpose", dx, "axes", perm, NULL);
  in_grads[0] = flat ? ds_grad_op2(ctx, "reshape_like", dx, x, NULL) : dx;
  return TRUE;
}

/* slice_like cut x down to the other input's size from index 0 on: g padded back with zeros
 * at the end of every axis, by x's size less g's, read at run time (_contrib_dynamic_pad), so
 * symbolic and data-dependent sizes work as well. */
DS_GRAD_FN(ds_grad_slice_like)
{
  (void)error;
  DsEntry x = ds_grad_input(ctx, 0), g = out_grads[0];
  DsEntry missing = ds_grad_op2(ctx, "elemwise_sub", ds_grad_op1(ctx, "shape_array", x, NULL),
                                ds_grad_op1(ctx, "shape_array", g, NULL), NULL);
  DsEntry before = ds_grad_op1(ctx, "zeros_like", missing, NULL);
  DsEntry pads = ds_grad_op2(ctx, "Concat", before, missing, "dim", "0", "num_args", "2", NULL);
  DsEntry zero = ds_grad_op(ctx, "_zeros", 0, NULL, "shape", "(1,)", "dtype",
                            ds_dtype_name(ctx->in_dtypes[0]), NULL);
  DsEntry padded = ds_grad_op(ctx, "_contrib_dynamic_pad", 3, (DsEntry[]){g, pads, zero}, NULL);
  /* x's shape, which inference cannot read off the pads */
  in_grads[0] = ds_grad_op2(ctx, "reshape_like", padded, x, NULL);
  return TRUE;
}

/* Pad and _npi_pad, constant mode: the padding is constant, so x's gradient is g cropped back
 * to x (a slice). */
DS_GRAD_FN(ds_grad_pad)
{
  const DsPadParam *p = ctx->node->param;
  if (p->mode != DS_PAD_CONSTANT)
    return ds_grad_fail(ctx, error, "only constant padding is done yet");
  GString *b = g_string_new("("), *e = g_string_new("(");
  gboolean ok = TRUE;
  for (int d = 0; d < p->ndim; d++) {
    ok = ok && p->before[d] >= 0 && p->after[d] >= 0;
    g_string_append_printf(b, "%s%" G_GINT64_FORMAT, d ? ", " : "", p->before[d]);
    if (p->after[d] > 0)
      g_string_append_printf(e, "%s%" G_GINT64_FORMAT, d ? ", " : "", -p->after[d]);
    else
      g_string_append_printf(e, "%sNone", d ? ", " : "");
  }
  g_string_append_c(b, ')');
  g_string_append_c(e, ')');
  if (ok)
    in_grads[0] = ds_grad_op1(ctx, "slice", out_grads[0], "begin", b->str, "end", e->str, NULL);
  g_string_free(b, TRUE);
  g_string_free(e, TRUE);
  return ok ? TRUE : ds_grad_fail(ctx, error, "negative pad widths (crops) are not done yet");
}

/* broadcast_to, broadcast_axis, broadcast_like: g summed over the broadcast axes.
 * broadcast_axis names them, so symbolic shapes need not tell. */
DS_GRAD_FN(ds_grad_broadcast)
{
  if (ctx->node->op->id == DS_OP_BROADCAST_AXIS) {
    const DsBroadcastAxisParam *p = ctx->node->param;
    g_autofree char *axes = ds_grad_tuple(p->axis, p->n_axes);
    in_grads[0] = ds_grad_op1(ctx, "sum", out_grads[0], "axis", axes, "keepdims", "True", NULL);
    return TRUE;
  }
  return ds_grad_sum_to(ctx, out_grads[0], &ctx->out_shapes[0], 0, &in_grads[0], error);
}

/* The axes a reduction reduced, for its rank-`ndim` input. */
static gboolean reduced_axes(DsGradCtx *ctx, bool *reduced, bool *keepdims, GError **error)
{
  int ndim = ctx->in_shapes[0].ndim;
  if (ndim < 0)
    return ds_grad_fail(ctx, error, "its input shape is not known");
  gboolean ok;
  DsOpId id = ctx->node->op->id;
  if (id == DS_OP_SUM || id == DS_OP_MEAN || id == DS_OP_MAX || id == DS_OP_MIN ||
      id == DS_OP_PROD || id == DS_OP_NANSUM || id == DS_OP_NANPROD || id == DS_OP_NORM) {
    /* norm's DsNormParam starts with its DsReduceParam */
    const DsReduceParam *p = ctx->node->param;
    ok = ds_reduce_axes_mask(p, ndim, reduced);
    *keepdims = p->keepdims;
  } else {
    const DsNpReduceParam *p = ctx->node->param;
    ok = ds_np_reduce_axes_mask(p, ndim, reduced);
    *keepdims = p->keepdims;
  }
  return ok ? TRUE : ds_grad_fail(ctx, error, "axes out of range");
}

/* g given the reduced axes back (size 1), then broadcast like x. A reduction over every axis
 * gave one value ((1,) from MXNet's sum, () from NumPy's), reshaped to ones. */
static DsEntry spread(DsGradCtx *ctx, DsEntry g, const bool *reduced, bool keepdims)
{
  int ndim = ctx->in_shapes[0].ndim;
  gboolean all = TRUE;
  for (int d = 0; d < ndim; d++)
    all = all && reduced[d];
  if (all && !keepdims && ndim > 0) {
    int64_t ones[DS_MAX_NDIM];
    for (int d = 0; d < ndim; d++)
      ones[d] = 1;
    g_autofree char *shape = ds_grad_tuple(ones, ndim);
    g = ds_grad_op1(ctx, "Reshape", g, "shape", shape, NULL);
    keepdims = TRUE;
  }
  for (int d = 0; d < ndim && !keepdims; d++) {
    if (reduced[d]) {
      char axis[16];
      g_snprintf(axis, sizeof axis, "%d", d);
      g = ds_grad_op1(ctx, "expand_dims", g, "axis", axis, NULL);
    }
  }
  return ds_grad_op2(ctx, "broadcast_like", g, ds_grad_input(ctx, 0), NULL);
}

DS_GRAD_FN(ds_grad_sum)
{
  bool reduced[DS_MAX_NDIM], keepdims;
  if (!reduced_axes(ctx, reduced, &keepdims, error))
    return FALSE;
  in_grads[0] = spread(ctx, out_grads[0], reduced, keepdims);
  return TRUE;
}

/* The sum's gradient over the count of values each mean took: a number when the reduced
 * dims are, else counted at run time as a sum of ones. */
DS_GRAD_FN(ds_grad_mean)
{
  bool reduced[DS_MAX_NDIM], keepdims;
  if (!reduced_axes(ctx, reduced, &keepdims, error))
    return FALSE;
  const DsShape *xs = &ctx->in_shapes[0];
  int64_t count = 1;
  for (int d = 0; d < xs->ndim; d++)
    if (reduced[d])
      count = ds_dim_is_const(xs->dims[d]) && count >= 0 ? count * xs->dims[d].value : -1;
  DsEntry g = spread(ctx, out_grads[0], reduced, keepdims);
  if (count >= 0) {
    in_grads[0] = ds_grad_scalar(ctx, "_div_scalar", g, (double)count);
    return TRUE;
  }
  int64_t axes[DS_MAX_NDIM];
  int n_axes = 0;
  for (int d = 0; d < xs->ndim; d++)
    if (reduced[d])
      axes[n_axes++] = d;
  g_autofree char *axis = ds_grad_tuple(axes, n_axes);
  DsEntry ones = ds_grad_op1(ctx, "ones_like", ds_grad_input(ctx, 0), NULL);
  DsEntry n = ds_grad_op1(ctx, "sum", ones, "axis", axis, "keepdims", "True", NULL);
  in_grads[0] = ds_grad_op2(ctx, "broadcast_div", g, n, NULL);
  return TRUE;
}

/* The reductions whose gradient reads their input x and output y: g spread back over the
 * reduced axes (gs), times dy/dx, MXNet's ReduceAxesBackwardUseInOut formulas:
 *   max, min   gs * (x == y)   (every tied element gets the whole gradient, as in MXNet)
 *   prod       gs * y / x
 *   nansum     gs where x is not NaN, else 0; nanprod likewise with y / x
 *   sum_square 2 x gs;   l1_norm, norm ord 1: gs * sign(x);   l2_norm, norm ord 2: gs * x / y
 *   log_sum    gs / exp(y);   log_sum_exp: gs * exp(x - y) */
DS_GRAD_FN(ds_grad_reduce)
{
  bool reduced[DS_MAX_NDIM], keepdims;
  if (!reduced_axes(ctx, reduced, &keepdims, error))
    return FALSE;
  DsEntry x = ds_grad_input(ctx, 0), g = out_grads[0];
  if (ctx->out_dtypes[0] != ctx->in_dtypes[0]) /* norm's out_dtype */
    g = ds_grad_op1(ctx, "Cast", g, "dtype", ds_dtype_name(ctx->in_dtypes[0]), NULL);
  DsEntry gs = spread(ctx, g, reduced, keepdims);
  DsEntry ys = DS_GRAD_NONE;
  DsOpId id = ctx->node->op->id;
  gboolean reads_y = id != DS_OP_NANSUM && id != DS_OP_SUM_SQUARE && id != DS_OP_L1_NORM;
  if (id == DS_OP_NORM)
    reads_y = ((const DsNormParam *)ctx->node->param)->ord == 2;
  if (reads_y) {
    DsEntry y = ds_grad_output(ctx, 0);
    if (ctx->out_dtypes[0] != ctx->in_dtypes[0])
      y = ds_grad_op1(ctx, "Cast", y, "dtype", ds_dtype_name(ctx->in_dtypes[0]), NULL);
    ys = spread(ctx, y, reduced, keepdims);
  }
  DsEntry d; /* dy/dx, or the gradient itself where noted */
  switch (id) {
  case DS_OP_MAX:
  case DS_OP_MIN:
  case DS_OP_NP_MAX:
  case DS_OP_NP_MIN: d = ds_grad_op2(ctx, "broadcast_equal", x, ys, NULL); break;
  case DS_OP_PROD:
  case DS_OP_NP_PROD: d = ds_grad_op2(ctx, "elemwise_div", ys, x, NULL); break;
  case DS_OP_NANSUM: d = ds_grad_op2(ctx, "broadcast_equal", x, x, NULL); break;
  case DS_OP_NANPROD: {
    DsEntry kept = ds_grad_op2(ctx, "broadcast_equal", x, x, NULL);
    DsEntry ratio = ds_grad_op2(ctx, "elemwise_div", ys, x, NULL);
    DsEntry zeros = ds_grad_op1(ctx, "zeros_like", x, NULL);
    d = ds_grad_op(ctx, "where", 3, (DsEntry[]){kept, ratio, zeros}, NULL);
    break;
  }
  case DS_OP_SUM_SQUARE: d = ds_grad_scalar(ctx, "_mul_scalar", x, 2.0); break;
  case DS_OP_L1_NORM: d = ds_grad_op1(ctx, "sign", x, NULL); break;
  case DS_OP_NORM:
    d = reads_y ? ds_grad_op2(ctx, "elemwise_div", x, ys, NULL) : ds_grad_op1(ctx, "sign", x, NULL);
    break;
  case DS_OP_L2_NORM: d = ds_grad_op2(ctx, "elemwise_div", x, ys, NULL); break;
  case DS_OP_LOG_SUM: {
    in_grads[0] = ds_grad_op2(ctx, "elemwise_div", gs, ds_grad_op1(ctx, "exp", ys, NULL), NULL);
    return TRUE;
  }
  case DS_OP_LOG_SUM_EXP:
    d = ds_grad_op1(ctx, "exp", ds_grad_op2(ctx, "elemwise_sub", x, ys, NULL), NULL);
    break;
  default: return ds_grad_fail(ctx, error, "not a reduction with an input-output gradient");
  }
  in_grads[0] = ds_grad_op2(ctx, "elemwise_mul", gs, d, NULL);
  return TRUE;
}

/* Back to the input's dtype; an integer input gets none. */
DS_GRAD_FN(ds_grad_cast)
{
  (void)error;
  DsDType from = ctx->in_dtypes[0];
  if (ds_dtype_is_float(from))
    in_grads[0] = ds_grad_op1(ctx, "Cast", out_grads[0], "dtype", ds_dtype_name(from), NULL);
  return TRUE;
}

/* The masked positions got a constant: their gradient is 0. */
DS_GRAD_FN(ds_grad_sequence_mask)
{
  (void)error;
  const DsSequenceMaskParam *p = ctx->node->param;
  if (!p->use_sequence_length) {
    in_grads[0] = out_grads[0];
    return TRUE;
  }
  char axis[16];
  g_snprintf(axis, sizeof axis, "%d", p->axis);
  in_grads[0] = ds_grad_op2(ctx, "SequenceMask", out_grads[0], ds_grad_input(ctx, 1),
                            "use_sequence_length", "True", "value", "0", "axis", axis, NULL);
  return TRUE;
}
