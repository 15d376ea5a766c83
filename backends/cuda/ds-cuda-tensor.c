/* ds-cuda-tensor.c: CUDA kernels of the data-movement ops: the views (Reshape, Flatten,
 * expand_dims, squeeze, reshape_like, _np_reshape, _np_squeeze), transpose, SwapAxis, Concat,
 * stack, SliceChannel, slice, slice_axis, the broadcasts (broadcast_to, broadcast_axis,
 * broadcast_like, _contrib_expand), tile, repeat, reverse, take, and the dynamic-shape
 * _contrib_boolean_mask and _npx_nonzero.
 *
 * Each kernel checks shapes with the geometry its CPU twin (backends/cpu/ds-cpu-tensor.c,
 * ds-cpu-index.c, ds-cpu-dynamic.c) uses too (core/ds-geometry-tensor.h) and
 * describes its work as a strided copy plan (ds-cuda-tensor-launch.h) over the output: one launcher
 * then simplifies it and picks memcpy, a tiled transpose or a gather kernel. Elements move by size,
 * so every dtype is supported.
 *
 * Only two kernels wait for the device: take in raise mode (whether an index was out of
 * range) and the dynamic-shape ones (how many elements the mask keeps), each for one value.
 */
#include <string.h>

#include "ds-cuda-tensor-launch.h"
#include "ds-cuda.h"
#include "ds-geometry-tensor.h"
#include "ds-ops-kernel-args.h"

/* ---- helpers ------------------------------------------------------------------------------ */

/* A plan over a contiguous output of `nd` dims `shape`, input strides to be filled in. */
static void plan_over_output(DsCudaCopyPlan *p, const int64_t *shape, int nd)
{
  memset(p, 0, sizeof *p);
  p->ndim = nd;
  memcpy(p->shape, shape, sizeof(int64_t) * (size_t)nd);
  ds_geom_strides(shape, nd, p->out_stride);
}

static DsStatus run_plan(const DsCudaCopyPlan *p, DsDType t, const void *in, void *out)
{
  return ds_cuda_status(ds_cuda_launch_copy(p, ds_dtype_size(t), in, out, ds_cuda_stream()));
}

/* How the device reads elements of dtype `t` as indices or truth values. */
static DsCudaElemKind elem_kind(DsDType t)
{
  switch (t) {
  case DS_DTYPE_FLOAT64:
    return DS_CUDA_ELEM_F64;
  case DS_DTYPE_FLOAT16:
    return DS_CUDA_ELEM_F16;
  case DS_DTYPE_INT32:
    return DS_CUDA_ELEM_I32;
  case DS_DTYPE_INT64:
    return DS_CUDA_ELEM_I64;
  case DS_DTYPE_INT8:
    return DS_CUDA_ELEM_I8;
  case DS_DTYPE_UINT8:
    return DS_CUDA_ELEM_U8;
  case DS_DTYPE_BOOL:
    return DS_CUDA_ELEM_BOOL;
  default:
    return DS_CUDA_ELEM_F32;
  }
}

/* One value from the device, after everything queued before it: the only waits here. */
static DsStatus read_back(void *host, const void *dev, size_t bytes)
{
  cudaStream_t s = ds_cuda_stream();
  cudaError_t err = cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, s);
  if (err == cudaSuccess)
    err = cudaStreamSynchronize(s);
  return ds_cuda_status(err);
}

/* ---- views -------------------------------------------------------------------------------- */

/* The bytes pass through; the executor usually gives the output the input's buffer. */
static DsStatus k_view(const DsKernelCtx *ctx)
{
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (in->dtype != out->dtype || ds_tensor_numel(in) != ds_tensor_numel(out))
    return DS_STATUS_INVALID_ARGUMENT;
  size_t bytes = ds_tensor_nbytes(out);
  if (in->data == out->data || bytes == 0)
    return DS_STATUS_OK;
  return ds_cuda_status(cudaMemcpyAsync(out->data, in->data, bytes, cudaMemcpyDeviceToDevice,
                                        ds_cuda_stream()));
}

/* ---- transpose, SwapAxis ------------------------------------------------------------------- */

/* Output axis i reads input axis perm[i]. */
static DsStatus permute(const DsKernelCtx *ctx, const int *perm)
{
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  DsCudaCopyPlan p;
  plan_over_output(&p, out->shape, in->ndim);
  if (!ds_geom_permute(in, out, perm, p.in_stride))
    return DS_STATUS_INVALID_ARGUMENT;
  return run_plan(&p, in->dtype, in->data, out->data);
}

static DsStatus k_transpose(const DsKernelCtx *ctx)
{
  int perm[DS_MAX_NDIM];
  DsStatus st = ds_kernel_args_transpose(ctx, perm);
  return st == DS_STATUS_OK ? permute(ctx, perm) : st;
}

static DsStatus k_swap_axis(const DsKernelCtx *ctx)
{
  int perm[DS_MAX_NDIM];
  DsStatus st = ds_kernel_args_swap_axis(ctx, perm);
  return st == DS_STATUS_OK ? permute(ctx, perm) : st;
}

/* ---- Concat, stack, SliceChannel ----------------------------------------------------------- */

/* Each input is copied into its block of the output: one (usually 2-D memcpy) launch each. */
static DsStatus k_concat(const DsKernelCtx *ctx)
{
  const DsConcatParam *prm = ctx->param;
  DsTensor *out = &ctx->outputs[0];
  int nd = out->ndim, axis;
  if (!ds_geom_concat(ctx->inputs, ctx->n_inputs, out, prm->dim, &axis))
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t ostride[DS_MAX_NDIM], offset = 0;
  ds_geom_strides(out->shape, nd, ostride);
  for (int k = 0; k < ctx->n_inputs; k++) {
    const DsTensor *t = &ctx->inputs[k];
    DsCudaCopyPlan p = {.ndim = nd, .out_base = offset * ostride[axis]};
    memcpy(p.shape, t->shape, sizeof(int64_t) * (size_t)nd);
    ds_geom_strides(t->shape, nd, p.in_stride);
    memcpy(p.out_stride, ostride, sizeof(int64_t) * (size_t)nd);
    DsStatus st = run_plan(&p, out->dtype, t->data, out->data);
    if (st != DS_STATUS_OK)
      return st;
    offset += t->shape[axis];
  }
  return DS_STATUS_OK;
}

/* Input k fills slot k of the new axis: the output is (outer, num_args, inner). */
static DsStatus k_stack(const DsKernelCtx *ctx)
{
  DsTensor *out = &ctx->outputs[0];
  int64_t outer, inner;
  DsStatus args = ds_kernel_args_stack(ctx, &outer, &inner);
  if (args != DS_STATUS_OK)
    return args;
  for (int k = 0; k < ctx->n_inputs; k++) {
    DsCudaCopyPlan plan = {.ndim = 2,
                           .shape = {outer, inner},
                           .in_stride = {inner, 1},
                           .out_stride = {ctx->n_inputs * inner, 1},
                           .out_base = k * inner};
    DsStatus st = run_plan(&plan, out->dtype, ctx->inputs[k].data, out->data);
    if (st != DS_STATUS_OK)
      return st;
  }
  return DS_STATUS_OK;
}

/* Output k is part k of the axis: the input is (outer, n, part * trail). */
static DsStatus k_slice_channel(const DsKernelCtx *ctx)
{
  const DsTensor *in = &ctx->inputs[0];
  int n;
  int64_t outer, inner;
  DsStatus args = ds_kernel_args_slice_channel(ctx, &n, &outer, &inner);
  if (args != DS_STATUS_OK)
    return args;
  for (int k = 0; k < n; k++) {
    DsCudaCopyPlan plan = {.ndim = 2,
                           .shape = {outer, inner},
                           .in_stride = {n * inner, 1},
                           .out_stride = {inner, 1},
                           .in_base = k * inner};
    DsStatus st = run_plan(&plan, in->dtype, in->data, ctx->outputs[k].data);
    if (st != DS_STATUS_OK)
      return st;
  }
  return DS_STATUS_OK;
}

/* ---- slice_axis, slice ------------------------------------------------------------------- */

static DsStatus k_slice_axis(const DsKernelCtx *ctx)
{
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  int nd = in->ndim, axis;
  int64_t first;
  DsStatus args = ds_kernel_args_slice_axis(ctx, &axis, &first);
  if (args != DS_STATUS_OK)
    return args;
  DsCudaCopyPlan plan;
  plan_over_output(&plan, out->shape, nd);
  ds_geom_strides(in->shape, nd, plan.in_stride);
  plan.in_base = first * plan.in_stride[axis];
  return run_plan(&plan, in->dtype, in->data, out->data);
}

/* Python slicing per axis (ds_slice_axis_range): a step becomes the axis' stride, a negative
 * one walking backwards from `first`. */
static DsStatus k_slice(const DsKernelCtx *ctx)
{
  const DsSliceParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  int nd = in->ndim;
  if (p->n_axes > nd || out->ndim != nd || out->dtype != in->dtype)
    return DS_STATUS_INVALID_ARGUMENT;
  DsCudaCopyPlan plan;
  plan_over_output(&plan, out->shape, nd);
  int64_t s = 1;
  for (int d = nd - 1; d >= 0; d--) {
    int64_t first = 0, count = in->shape[d], step = 1;
    int i = ds_slice_entry_for_axis(p, nd, d);
    if (i >= 0) {
      step = p->n_step > 0 ? p->step[i] : 1;
      if (step == 0)
        return DS_STATUS_INVALID_ARGUMENT;
      ds_slice_axis_range(in->shape[d], p->begin[i], p->end[i], step, &first, &count);
    }
    if (out->shape[d] != count)
      return DS_STATUS_INVALID_ARGUMENT;
    plan.in_stride[d] = s * step;
    if (count > 0)
      plan.in_base += first * s;
    s *= in->shape[d];
  }
  return run_plan(&plan, in->dtype, in->data, out->data);
}

/* ---- broadcasts, tile, repeat, reverse --------------------------------------------------- */

/* broadcast_to, broadcast_axis, broadcast_like, _contrib_expand: input 0 stretched to the
 * output's shape, right-aligned, its size-1 dims read with stride 0. */
static DsStatus k_broadcast(const DsKernelCtx *ctx)
{
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  DsCudaCopyPlan plan;
  plan_over_output(&plan, out->shape, out->ndim);
  if (in->dtype != out->dtype || !ds_geom_broadcast_strides(in, out, plan.in_stride))
    return DS_STATUS_INVALID_ARGUMENT;
  return run_plan(&plan, in->dtype, in->data, out->data);
}

/* Appends a plan dim of `size` elements with the given strides. */
static void plan_push(DsCudaCopyPlan *p, int64_t size, int64_t in_stride, int64_t out_stride)
{
  p->shape[p->ndim] = size;
  p->in_stride[p->ndim] = in_stride;
  p->out_stride[p->ndim] = out_stride;
  p->ndim++;
}

/* Each output dim of reps * dim elements splits into (reps, dim): the reps read stride 0. */
static DsStatus k_tile(const DsKernelCtx *ctx)
{
  const DsTileParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (in->dtype != out->dtype)
    return DS_STATUS_INVALID_ARGUMENT;
  int nd = out->ndim;
  int64_t ishape[DS_MAX_NDIM], istride[DS_MAX_NDIM], ostride[DS_MAX_NDIM];
  if (!ds_geom_tile(in, out, p->reps, p->n_reps, ishape))
    return DS_STATUS_INVALID_ARGUMENT;
  if (ds_tensor_numel(out) == 0)
    return DS_STATUS_OK;
  ds_geom_strides(ishape, nd, istride);
  ds_geom_strides(out->shape, nd, ostride);
  DsCudaCopyPlan plan = {.ndim = 0};
  for (int d = 0; d < nd; d++) {
    plan_push(&plan, out->shape[d] / ishape[d], 0, ishape[d] * ostride[d]);
    plan_push(&plan, ishape[d], istride[d], ostride[d]);
  }
  return run_plan(&plan, in->dtype, in->data, out->data);
}

/* Each element `repeats` times in a row along the axis (of the flattened input without one):
 * the axis splits into (len, repeats), the repeats reading stride 0. */
static DsStatus k_repeat(const DsKernelCtx *ctx)
{
  const DsRepeatParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (in->dtype != out->dtype || p->repeats < 0)
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t n = ds_tensor_numel(in), reps = p->repeats;
  if (reps == 0)
    return ds_tensor_numel(out) == 0 ? DS_STATUS_OK : DS_STATUS_INVALID_ARGUMENT;
  int axis;
  if (!ds_geom_repeat(in, out, reps, p->has_axis, p->axis, &axis))
    return DS_STATUS_INVALID_ARGUMENT;
  DsCudaCopyPlan plan = {.ndim = 0};
  if (axis < 0) {
    plan_push(&plan, n, 1, reps);
    plan_push(&plan, reps, 0, 1);
    return run_plan(&plan, in->dtype, in->data, out->data);
  }
  int nd = in->ndim;
  int64_t istride[DS_MAX_NDIM], ostride[DS_MAX_NDIM];
  ds_geom_strides(in->shape, nd, istride);
  ds_geom_strides(out->shape, nd, ostride);
  for (int d = 0; d < nd; d++) {
    if (d != axis) {
      plan_push(&plan, in->shape[d], istride[d], ostride[d]);
      continue;
    }
    plan_push(&plan, in->shape[d], istride[d], reps * ostride[d]);
    plan_push(&plan, reps, 0, ostride[d]);
  }
  return run_plan(&plan, in->dtype, in->data, out->data);
}

/* Every listed axis reverses once (listing one twice restores it, as MXNet's kernel does). */
static DsStatus k_reverse(const DsKernelCtx *ctx)
{
  const DsReverseParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  int nd = in->ndim;
  if (in->dtype != out->dtype || !ds_geom_same_shape(in, out) || in->data == out->data)
    return DS_STATUS_INVALID_ARGUMENT;
  DsCudaCopyPlan plan;
  plan_over_output(&plan, out->shape, nd);
  if (!ds_geom_reverse(in->shape, nd, p->axes, p->n_axes, plan.in_stride, &plan.in_base))
    return DS_STATUS_INVALID_ARGUMENT;
  return run_plan(&plan, in->dtype, in->data, out->data);
}

/* ---- take -------------------------------------------------------------------------------- */

/* Raise mode needs a flag the device sets on a bad index. */
static size_t take_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                             const DsTensor *outputs, int n_outputs)
{
  const DsTakeParam *p = param;
  (void)inputs, (void)n_inputs, (void)outputs, (void)n_outputs;
  return p->mode == DS_TAKE_RAISE ? sizeof(int) : 0;
}

static DsStatus k_take(const DsKernelCtx *ctx)
{
  const DsTakeParam *p = ctx->param;
  const DsTensor *data = &ctx->inputs[0], *idx = &ctx->inputs[1];
  DsTensor *out = &ctx->outputs[0];
  DsGeomTake g;
  DsStatus st = ds_geom_take(data, idx, out, p->axis, &g);
  if (st != DS_STATUS_OK || g.outer * g.k == 0)
    return st;
  bool raise = p->mode == DS_TAKE_RAISE;
  int *flag = raise ? ctx->workspace : NULL;
  if (raise && flag == NULL)
    return DS_STATUS_INVALID_ARGUMENT;
  cudaStream_t s = ds_cuda_stream();
  if (raise) {
    st = ds_cuda_status(cudaMemsetAsync(flag, 0, sizeof *flag, s));
    if (st != DS_STATUS_OK)
      return st;
  }
  int mode = p->mode == DS_TAKE_CLIP   ? DS_CUDA_TAKE_CLIP
             : p->mode == DS_TAKE_WRAP ? DS_CUDA_TAKE_WRAP
                                       : DS_CUDA_TAKE_RAISE;
  st = ds_cuda_status(ds_cuda_launch_take(data->data, idx->data, elem_kind(idx->dtype), out->data,
                                          g.outer, g.k, g.m, g.trail, ds_dtype_size(data->dtype),
                                          mode, flag, s));
  if (st != DS_STATUS_OK || !raise)
    return st;
  int bad = 0;
  st = read_back(&bad, flag, sizeof bad);
  if (st != DS_STATUS_OK)
    return st;
  return bad ? DS_STATUS_OUT_OF_RANGE : DS_STATUS_OK;
}

/* ---- boolean_mask, nonzero (dynamic shapes) ------------------------------------------------ */

/* Scratch of a compaction over `n` flags: the tile offsets and total, then the kept
 * positions. */
static size_t compact_workspace(int64_t n)
{
  return n > 0 ? (size_t)(ds_cuda_compact_scratch(n) + n) * sizeof(int64_t) : 0;
}

/* Counts the nonzero flags on the device and brings the count to the host. */
static DsStatus count_true(const DsTensor *mask, int64_t n, int64_t *scratch, int64_t *count)
{
  *count = 0;
  if (n == 0)
    return DS_STATUS_OK;
  DsStatus st = ds_cuda_status(
      ds_cuda_launch_count_true(mask->data, elem_kind(mask->dtype), n, scratch, ds_cuda_stream()));
  if (st != DS_STATUS_OK)
    return st;
  return read_back(count, scratch + ds_cuda_compact_scratch(n) - 1, sizeof *count);
}

static size_t boolean_mask_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                                     const DsTensor *outputs, int n_outputs)
{
  (void)n_inputs, (void)outputs, (void)n_outputs;
  int axis = ds_geom_axis(((const DsBooleanMaskParam *)param)->axis, inputs[0].ndim);
  return axis < 0 ? 0 : compact_workspace(inputs[0].shape[axis]);
}

/* The slices along the axis whose mask entry is nonzero: count them (one wait), size the
 * output, list the kept positions, gather the slices. */
static DsStatus k_boolean_mask(const DsKernelCtx *ctx)
{
  const DsBooleanMaskParam *p = ctx->param;
  const DsTensor *data = &ctx->inputs[0], *index = &ctx->inputs[1];
  int axis;
  DsStatus st = ds_geom_boolean_mask(data, index, p->axis, &axis);
  if (st != DS_STATUS_OK)
    return st;
  int64_t len = data->shape[axis], n_kept;
  int64_t *scratch = ctx->workspace;
  if (len > 0 && scratch == NULL)
    return DS_STATUS_NO_MEMORY;
  st = count_true(index, len, scratch, &n_kept);
  if (st != DS_STATUS_OK)
    return st;
  int64_t shape[DS_MAX_NDIM];
  memcpy(shape, data->shape, sizeof shape);
  shape[axis] = n_kept;
  st = ds_kernel_prepare_output(ctx, 0, data->dtype, data->ndim, shape);
  if (st != DS_STATUS_OK)
    return st;
  DsTensor *out = &ctx->outputs[0];
  size_t bytes = ds_tensor_nbytes(out);
  if (bytes == 0)
    return DS_STATUS_OK;
  cudaStream_t s = ds_cuda_stream();
  if (n_kept == len) /* every slice kept */
    return ds_cuda_status(
        cudaMemcpyAsync(out->data, data->data, bytes, cudaMemcpyDeviceToDevice, s));
  int64_t *pos = scratch + ds_cuda_compact_scratch(len);
  st = ds_cuda_status(
      ds_cuda_launch_true_positions(index->data, elem_kind(index->dtype), len, scratch, pos, s));
  if (st != DS_STATUS_OK)
    return st;
  int64_t outer = ds_shape_span(data->shape, 0, axis);
  int64_t row = ds_shape_span(data->shape, axis + 1, data->ndim);
  return ds_cuda_status(ds_cuda_launch_gather_kept(data->data, out->data, pos, outer, n_kept, len,
                                                   row, ds_dtype_size(data->dtype), s));
}

static size_t nonzero_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                                const DsTensor *outputs, int n_outputs)
{
  (void)param, (void)n_inputs, (void)outputs, (void)n_outputs;
  return compact_workspace(ds_tensor_numel(&inputs[0]));
}

/* (count, ndim) int64 coordinates of the nonzero elements in row-major order. */
static DsStatus k_nonzero(const DsKernelCtx *ctx)
{
  const DsTensor *x = &ctx->inputs[0];
  if (!ds_dtype_is_valid(x->dtype))
    return DS_STATUS_UNSUPPORTED;
  int64_t n = ds_tensor_numel(x), count;
  int64_t *scratch = ctx->workspace;
  if (n > 0 && scratch == NULL)
    return DS_STATUS_NO_MEMORY;
  DsStatus st = count_true(x, n, scratch, &count);
  if (st != DS_STATUS_OK)
    return st;
  int64_t shape[2] = {count, x->ndim};
  st = ds_kernel_prepare_output(ctx, 0, DS_DTYPE_INT64, 2, shape);
  if (st != DS_STATUS_OK || count == 0 || x->ndim == 0)
    return st;
  cudaStream_t s = ds_cuda_stream();
  int64_t *pos = scratch + ds_cuda_compact_scratch(n);
  st = ds_cuda_status(ds_cuda_launch_true_positions(x->data, elem_kind(x->dtype), n, scratch,
                                                    pos, s));
  if (st != DS_STATUS_OK)
    return st;
  return ds_cuda_status(
      ds_cuda_launch_unravel(pos, count, x->shape, x->ndim, ctx->outputs[0].data, s));
}

/* ---- placement: which nodes these kernels take ------------------------------------------- */

static bool all_valid(const DsDType *t, int n)
{
  for (int i = 0; i < n; i++)
    if (!ds_dtype_is_valid(t[i]))
      return false;
  return true;
}

/* Moves elements by size: every dtype. */
static bool supports_movement(DsOpId op, const void *param, const DsDType *in, int n_in,
                              const DsDType *out, int n_out)
{
  (void)op, (void)param;
  return all_valid(in, n_in) && all_valid(out, n_out);
}

/* take reads its indices as numbers: every dtype but float16 (as the CPU kernel). */
static bool supports_take(DsOpId op, const void *param, const DsDType *in, int n_in,
                          const DsDType *out, int n_out)
{
  return supports_movement(op, param, in, n_in, out, n_out) && n_in == 2 &&
         in[1] != DS_DTYPE_FLOAT16;
}

/* The kernels of this file, each with its placement check. */
static const struct {
  DsOpId op;
  DsKernel kernel;
  DsCudaSupportsFn supports;
} tensor_kernels[] = {
    {DS_OP_RESHAPE, {k_view, NULL}, supports_movement},
    {DS_OP_FLATTEN, {k_view, NULL}, supports_movement},
    {DS_OP_EXPAND_DIMS, {k_view, NULL}, supports_movement},
    {DS_OP_SQUEEZE, {k_view, NULL}, supports_movement},
    {DS_OP_RESHAPE_LIKE, {k_view, NULL}, supports_movement},
    {DS_OP_NP_RESHAPE, {k_view, NULL}, supports_movement},
    {DS_OP_NP_SQUEEZE, {k_view, NULL}, supports_movement},
    {DS_OP_TRANSPOSE, {k_transpose, NULL}, supports_movement},
    {DS_OP_SWAP_AXIS, {k_swap_axis, NULL}, supports_movement},
    {DS_OP_CONCAT, {k_concat, NULL}, supports_movement},
    {DS_OP_STACK, {k_stack, NULL}, supports_movement},
    {DS_OP_SLICE_CHANNEL, {k_slice_channel, NULL}, supports_movement},
    {DS_OP_SLICE_AXIS, {k_slice_axis, NULL}, supports_movement},
    {DS_OP_SLICE, {k_slice, NULL}, supports_movement},
    {DS_OP_BROADCAST_TO, {k_broadcast, NULL}, supports_movement},
    {DS_OP_BROADCAST_AXIS, {k_broadcast, NULL}, supports_movement},
    {DS_OP_BROADCAST_LIKE, {k_broadcast, NULL}, supports_movement},
    {DS_OP_EXPAND, {k_broadcast, NULL}, supports_movement},
    {DS_OP_TILE, {k_tile, NULL}, supports_movement},
    {DS_OP_REPEAT, {k_repeat, NULL}, supports_movement},
    {DS_OP_REVERSE, {k_reverse, NULL}, supports_movement},
    {DS_OP_TAKE, {k_take, take_workspace}, supports_take},
    {DS_OP_BOOLEAN_MASK, {k_boolean_mask, boolean_mask_workspace}, supports_movement},
    {DS_OP_NONZERO, {k_nonzero, nonzero_workspace}, supports_movement},
};

void ds_cuda_tensor_register(DsKernel *table, DsCudaSupportsFn *supports)
{
  for (size_t i = 0; i < G_N_ELEMENTS(tensor_kernels); i++) {
    table[tensor_kernels[i].op] = tensor_kernels[i].kernel;
    supports[tensor_kernels[i].op] = tensor_kernels[i].supports;
  }
}
