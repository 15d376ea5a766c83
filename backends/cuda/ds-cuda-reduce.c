/* ds-cuda-reduce.c: CUDA kernels of the reductions and row-wise normalisations, host side.
 *
 * sum, mean, max, min, prod, nansum, nanprod, norm and the NumPy forms (_npi_sum...) reduce any
 * set of axes: the input's dims are collapsed into kept and reduced lists (DsCudaReducePlan) and
 * the device code takes a block per output row or a thread per output column, splitting long
 * reductions across blocks through a workspace of partial results. softmax, log_softmax,
 * softmin, SoftmaxActivation and LayerNorm view their input as (outer, len, inner) around the
 * axis; BatchNorm (inference) and InstanceNorm follow the CPU kernels' formulas
 * (ds-cpu-nn.c). The dims and axes come from the geometry both backends share
 * (core/ds-geometry-reduce.h). float32, and float64 for the axis reductions;
 * supports() keeps everything else on the CPU.
 */
#include <string.h>

#include "ds-cuda-reduce-launch.h"
#include "ds-cuda.h"
#include "ds-geometry-reduce.h"
#include "ds-geometry-tensor.h"

_Static_assert(DS_CUDA_RED_MAX_DIMS == DS_MAX_NDIM, "reduction plans must hold any tensor's dims");

static bool is_float_dtype(DsDType t)
{
  return t == DS_DTYPE_FLOAT32 || t == DS_DTYPE_FLOAT64;
}

static bool all_f32(const DsTensor *t, int n)
{
  for (int i = 0; i < n; i++)
    if (t[i].dtype != DS_DTYPE_FLOAT32)
      return false;
  return true;
}

static bool all_f32_dtypes(const DsDType *t, int n)
{
  for (int i = 0; i < n; i++)
    if (t[i] != DS_DTYPE_FLOAT32)
      return false;
  return true;
}

/* ------------------------------------------------------------------------------------------ */
/* Axis reductions */

/* Reduced positions a block (row kernel) or a column of 8 lanes (column kernel) should have
 * before a reduction is split further: below this, a second kernel costs more than it saves. */
#define ROW_MIN_PER_SPLIT 4096
#define COL_MIN_PER_SPLIT 256
/* Blocks worth having in flight (a few per SM), and the most parts a reduction is cut into. */
#define TARGET_BLOCKS 1024
#define MAX_SPLITS    1024

/* Lays out the reduction of `in` over the axes `mask` marks into `out` (whose element count
 * must be the kept dims'); false if it is not. The dims are the ones every backend collapses
 * (ds_geom_reduce); the device adds how to cut the work. */
static bool reduce_plan(const DsTensor *in, const DsTensor *out, const bool *mask,
                        DsCudaReducePlan *p)
{
  DsGeomReduce g;
  ds_geom_reduce(in, mask, &g);
  memset(p, 0, sizeof *p);
  p->nk = g.nk;
  p->nr = g.nr;
  memcpy(p->kshape, g.kshape, sizeof p->kshape);
  memcpy(p->kstride, g.kstride, sizeof p->kstride);
  memcpy(p->rshape, g.rshape, sizeof p->rshape);
  memcpy(p->rstride, g.rstride, sizeof p->rstride);
  p->n_out = g.n_out;
  p->count = g.count;
  /* Columns when neighbouring outputs are neighbours in memory, and for short reductions,
   * where a block per output would leave most of its threads idle. */
  p->columns = g.inner_kept || p->count < 32;
  p->splits = 1;
  if (p->count > 0 && p->n_out > 0) {
    int64_t blocks = p->columns ? (p->n_out + 31) / 32 : p->n_out;
    int64_t by_fill = (TARGET_BLOCKS + blocks - 1) / blocks;
    int64_t by_work = p->count / (p->columns ? COL_MIN_PER_SPLIT : ROW_MIN_PER_SPLIT);
    p->splits = (int)CLAMP(MIN(by_fill, by_work), 1, MAX_SPLITS);
  }
  return p->n_out == ds_tensor_numel(out);
}

static size_t plan_workspace(const DsCudaReducePlan *p)
{
  return p->splits > 1 ? (size_t)p->splits * (size_t)p->n_out * sizeof(double) : 0;
}

/* Workspace for the partial results, from the same plan the kernel will make. */
static size_t reduce_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                               const DsTensor *outputs, int n_outputs)
{
  bool mask[DS_MAX_NDIM];
  DsCudaReducePlan plan;
  if (!ds_reduce_axes_mask(param, inputs[0].ndim, mask) ||
      !reduce_plan(&inputs[0], &outputs[0], mask, &plan))
    return 0;
  return plan_workspace(&plan);
}

static size_t np_reduce_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                                  const DsTensor *outputs, int n_outputs)
{
  bool mask[DS_MAX_NDIM];
  DsCudaReducePlan plan;
  if (!ds_np_reduce_axes_mask(param, inputs[0].ndim, mask) ||
      !reduce_plan(&inputs[0], &outputs[0], mask, &plan))
    return 0;
  return plan_workspace(&plan);
}

/* Reduces input 0 over the axes `mask` marks into output 0. An empty reduction gives the
 * identity (0, -inf, +inf; NaN for a mean), as the CPU kernels do. */
static DsStatus run_reduce_masked(const DsKernelCtx *ctx, int op, const bool *mask)
{
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (!is_float_dtype(in->dtype) || out->dtype != in->dtype)
    return DS_STATUS_UNSUPPORTED;
  DsCudaReducePlan plan;
  if (!reduce_plan(in, out, mask, &plan))
    return DS_STATUS_INVALID_ARGUMENT;
  if (plan.n_out == 0)
    return DS_STATUS_OK;
  if (plan.splits > 1 && ctx->workspace == NULL)
    return DS_STATUS_INVALID_ARGUMENT;
  return ds_cuda_status(ds_cuda_launch_reduce(op, in->dtype, in->data, out->data, &plan,
                                              ctx->workspace, ds_cuda_stream()));
}

/* sum, mean, max, min: MXNet's axes (None or () reduce everything; `exclude` inverts). */
static DsStatus run_reduce(const DsKernelCtx *ctx, int op)
{
  bool mask[DS_MAX_NDIM];
  if (!ds_reduce_axes_mask(ctx->param, ctx->inputs[0].ndim, mask))
    return DS_STATUS_INVALID_ARGUMENT;
  return run_reduce_masked(ctx, op, mask);
}

/* _npi_sum...: NumPy's axes (None reduces everything, () nothing). */
static DsStatus run_np_reduce(const DsKernelCtx *ctx, int op)
{
  bool mask[DS_MAX_NDIM];
  if (!ds_np_reduce_axes_mask(ctx->param, ctx->inputs[0].ndim, mask))
    return DS_STATUS_INVALID_ARGUMENT;
  return run_reduce_masked(ctx, op, mask);
}

#define REDUCE_KERNEL(NAME, RUN, OP)                                                               \
  static DsStatus NAME(const DsKernelCtx *ctx)                                                     \
  {                                                                                                \
    return RUN(ctx, OP);                                                                           \
  }
REDUCE_KERNEL(k_sum, run_reduce, DS_MATH_RED_SUM)
REDUCE_KERNEL(k_mean, run_reduce, DS_MATH_RED_MEAN)
REDUCE_KERNEL(k_max, run_reduce, DS_MATH_RED_MAX)
REDUCE_KERNEL(k_min, run_reduce, DS_MATH_RED_MIN)
REDUCE_KERNEL(k_prod, run_reduce, DS_MATH_RED_PROD)
REDUCE_KERNEL(k_nansum, run_reduce, DS_MATH_RED_NANSUM)
REDUCE_KERNEL(k_nanprod, run_reduce, DS_MATH_RED_NANPROD)
REDUCE_KERNEL(k_np_sum, run_np_reduce, DS_MATH_RED_SUM)
REDUCE_KERNEL(k_np_mean, run_np_reduce, DS_MATH_RED_MEAN)
REDUCE_KERNEL(k_np_max, run_np_reduce, DS_MATH_RED_MAX)
REDUCE_KERNEL(k_np_min, run_np_reduce, DS_MATH_RED_MIN)
#undef REDUCE_KERNEL

/* norm: sum's axes (DsNormParam.axes), the L1 or L2 fold; an out_dtype other than the data's
 * stays on the CPU. */
static DsStatus k_norm(const DsKernelCtx *ctx)
{
  const DsNormParam *p = ctx->param;
  bool mask[DS_MAX_NDIM];
  if (!ds_reduce_axes_mask(&p->axes, ctx->inputs[0].ndim, mask))
    return DS_STATUS_INVALID_ARGUMENT;
  return run_reduce_masked(ctx, p->ord == 1 ? DS_MATH_RED_L1 : DS_MATH_RED_L2, mask);
}

static size_t norm_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                             const DsTensor *outputs, int n_outputs)
{
  return reduce_workspace(&((const DsNormParam *)param)->axes, inputs, n_inputs, outputs,
                          n_outputs);
}

/* ------------------------------------------------------------------------------------------ */
/* softmax, log_softmax */

/* The valid-length input (use_length) is left to the CPU: supports() refuses it. */
static DsStatus run_softmax(const DsKernelCtx *ctx, bool log, bool negate)
{
  const DsSoftmaxParam *p = ctx->param;
  if (p->use_length || !all_f32(ctx->inputs, 1) || !all_f32(ctx->outputs, 1))
    return DS_STATUS_UNSUPPORTED;
  const DsTensor *x = &ctx->inputs[0];
  DsGeomAxis g;
  if (!ds_geom_axis_split(x, p->axis, p->trailing_axes, &g) ||
      !ds_geom_same_shape(x, &ctx->outputs[0]))
    return DS_STATUS_INVALID_ARGUMENT;
  return ds_cuda_status(ds_cuda_launch_softmax_f32(x->data, ctx->outputs[0].data, g.outer, g.len,
                                                   g.inner, (float)p->temperature, log,
                                                   negate, ds_cuda_stream()));
}

static DsStatus k_softmax(const DsKernelCtx *ctx)
{
  return run_softmax(ctx, false, false);
}
static DsStatus k_log_softmax(const DsKernelCtx *ctx)
{
  return run_softmax(ctx, true, false);
}
static DsStatus k_softmin(const DsKernelCtx *ctx)
{
  return run_softmax(ctx, false, true);
}

/* ------------------------------------------------------------------------------------------ */
/* LayerNorm, BatchNorm, InstanceNorm */

/* LayerNorm's and BatchNorm's checks: every input and the three outputs float32, output 0
 * of the data's shape, which splits around `axis`. */
static DsStatus norm_geometry(const DsKernelCtx *ctx, int n_in, int64_t axis, bool trailing,
                              DsGeomAxis *g)
{
  if (!all_f32(ctx->inputs, n_in) || !all_f32(ctx->outputs, 3))
    return DS_STATUS_UNSUPPORTED;
  const DsTensor *x = &ctx->inputs[0];
  if (!ds_geom_axis_split(x, axis, trailing, g) || !ds_geom_same_shape(x, &ctx->outputs[0]))
    return DS_STATUS_INVALID_ARGUMENT;
  return DS_STATUS_OK;
}

/* LayerNorm over `axis` (and every axis after it with trailing_axes); the mean and std outputs
 * get one value per normalised row. */
static DsStatus k_layer_norm(const DsKernelCtx *ctx)
{
  const DsLayerNormParam *p = ctx->param;
  DsGeomAxis g;
  DsStatus st = norm_geometry(ctx, 3, p->axis, p->trailing_axes, &g);
  if (st != DS_STATUS_OK)
    return st;
  const DsTensor *x = &ctx->inputs[0];
  const int64_t outer = g.outer, len = g.len, inner = g.inner;
  if (ds_tensor_numel(&ctx->inputs[1]) != len || ds_tensor_numel(&ctx->inputs[2]) != len)
    return DS_STATUS_INVALID_ARGUMENT;
  for (int i = 1; i < 3; i++)
    if (ds_tensor_numel(&ctx->outputs[i]) != outer * inner)
      return DS_STATUS_INVALID_ARGUMENT;
  return ds_cuda_status(ds_cuda_launch_layer_norm_f32(
      x->data, ctx->inputs[1].data, ctx->inputs[2].data, ctx->outputs[0].data, ctx->outputs[1].data,
      ctx->outputs[2].data, outer, len, inner, (float)p->eps, ds_cuda_stream()));
}

/* BatchNorm at inference: the moving statistics normalise, whatever use_global_stats says,
 * and the hidden mean and var outputs report them (the CPU kernel's choices). */
static DsStatus k_batch_norm(const DsKernelCtx *ctx)
{
  const DsBatchNormParam *p = ctx->param;
  DsGeomAxis g;
  DsStatus st = norm_geometry(ctx, 5, p->axis, false, &g);
  if (st != DS_STATUS_OK)
    return st;
  const DsTensor *x = &ctx->inputs[0];
  const int64_t channels = g.len, inner = g.inner;
  for (int i = 1; i < 5; i++)
    if (ds_tensor_numel(&ctx->inputs[i]) != channels)
      return DS_STATUS_INVALID_ARGUMENT;
  for (int i = 1; i < 3; i++)
    if (ds_tensor_numel(&ctx->outputs[i]) != channels)
      return DS_STATUS_INVALID_ARGUMENT;
  int64_t n = ds_tensor_numel(x);
  if (n > 0) {
    st = ds_cuda_status(ds_cuda_launch_batch_norm_f32(
        x->data, ctx->inputs[1].data, ctx->inputs[2].data, ctx->inputs[3].data, ctx->inputs[4].data,
        ctx->outputs[0].data, n, channels, inner, (float)p->eps, p->fix_gamma, ds_cuda_stream()));
    if (st != DS_STATUS_OK)
      return st;
  }
  for (int i = 1; i < 3; i++) {
    void *dst = ctx->outputs[i].data;
    const void *src = ctx->inputs[i + 2].data;
    if (channels > 0 && dst != src) {
      cudaError_t err = cudaMemcpyAsync(dst, src, (size_t)channels * sizeof(float),
                                        cudaMemcpyDeviceToDevice, ds_cuda_stream());
      if (err != cudaSuccess)
        return ds_cuda_status(err);
    }
  }
  return DS_STATUS_OK;
}

/* InstanceNorm on (N, C, spatial...): each (image, channel) plane by its own statistics. */
static DsStatus k_instance_norm(const DsKernelCtx *ctx)
{
  const DsInstanceNormParam *p = ctx->param;
  if (!all_f32(ctx->inputs, 3) || !all_f32(ctx->outputs, 1))
    return DS_STATUS_UNSUPPORTED;
  const DsTensor *x = &ctx->inputs[0];
  if (x->ndim < 3 || !ds_geom_same_shape(x, &ctx->outputs[0]))
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t channels = x->shape[1];
  if (ds_tensor_numel(&ctx->inputs[1]) != channels || ds_tensor_numel(&ctx->inputs[2]) != channels)
    return DS_STATUS_INVALID_ARGUMENT;
  return ds_cuda_status(ds_cuda_launch_instance_norm_f32(
      x->data, ctx->inputs[1].data, ctx->inputs[2].data, ctx->outputs[0].data,
      x->shape[0] * channels, ds_shape_span(x->shape, 2, x->ndim), channels, (float)p->eps,
      ds_cuda_stream()));
}

/* ------------------------------------------------------------------------------------------ */
/* supports() */

static bool supports_reduce(DsOpId op, const void *param, const DsDType *in, int n_in,
                            const DsDType *out, int n_out)
{
  (void)op;
  (void)param;
  return n_in >= 1 && n_out >= 1 && is_float_dtype(in[0]) && out[0] == in[0];
}

static bool supports_softmax(DsOpId op, const void *param, const DsDType *in, int n_in,
                             const DsDType *out, int n_out)
{
  (void)op;
  const DsSoftmaxParam *p = param;
  return p != NULL && !p->use_length && n_in >= 1 && n_out >= 1 && in[0] == DS_DTYPE_FLOAT32 &&
         out[0] == DS_DTYPE_FLOAT32;
}

/* Every input and (up to three) output float32, with at least `want_in` inputs. */
static bool supports_norm(int want_in, const DsDType *in, int n_in, const DsDType *out, int n_out)
{
  return n_in >= want_in && n_out >= 1 && all_f32_dtypes(in, want_in) &&
         all_f32_dtypes(out, MIN(n_out, 3));
}

static bool supports_layer_norm(DsOpId op, const void *param, const DsDType *in, int n_in,
                                const DsDType *out, int n_out)
{
  (void)op;
  (void)param;
  return supports_norm(3, in, n_in, out, n_out);
}

static bool supports_batch_norm(DsOpId op, const void *param, const DsDType *in, int n_in,
                                const DsDType *out, int n_out)
{
  (void)op;
  (void)param;
  return supports_norm(5, in, n_in, out, n_out);
}

static bool supports_instance_norm(DsOpId op, const void *param, const DsDType *in, int n_in,
                                   const DsDType *out, int n_out)
{
  (void)op;
  (void)param;
  return supports_norm(3, in, n_in, out, MIN(n_out, 1));
}

/* ------------------------------------------------------------------------------------------ */

typedef struct {
  DsOpId id;
  DsKernel kernel;
  DsCudaSupportsFn supports;
} OpEntry;

static const OpEntry reduce_ops[] = {
    {DS_OP_SUM, {k_sum, reduce_workspace}, supports_reduce},
    {DS_OP_MEAN, {k_mean, reduce_workspace}, supports_reduce},
    {DS_OP_MAX, {k_max, reduce_workspace}, supports_reduce},
    {DS_OP_MIN, {k_min, reduce_workspace}, supports_reduce},
    {DS_OP_PROD, {k_prod, reduce_workspace}, supports_reduce},
    {DS_OP_NANSUM, {k_nansum, reduce_workspace}, supports_reduce},
    {DS_OP_NANPROD, {k_nanprod, reduce_workspace}, supports_reduce},
    {DS_OP_NORM, {k_norm, norm_workspace}, supports_reduce},
    {DS_OP_NP_SUM, {k_np_sum, np_reduce_workspace}, supports_reduce},
    {DS_OP_NP_MEAN, {k_np_mean, np_reduce_workspace}, supports_reduce},
    {DS_OP_NP_MAX, {k_np_max, np_reduce_workspace}, supports_reduce},
    {DS_OP_NP_MIN, {k_np_min, np_reduce_workspace}, supports_reduce},
    {DS_OP_SOFTMAX, {k_softmax, NULL}, supports_softmax},
    {DS_OP_LOG_SOFTMAX, {k_log_softmax, NULL}, supports_softmax},
    {DS_OP_SOFTMIN, {k_softmin, NULL}, supports_softmax},
    {DS_OP_SOFTMAX_ACTIVATION, {k_softmax, NULL}, supports_softmax},
    {DS_OP_LAYER_NORM, {k_layer_norm, NULL}, supports_layer_norm},
    {DS_OP_BATCH_NORM, {k_batch_norm, NULL}, supports_batch_norm},
    {DS_OP_INSTANCE_NORM, {k_instance_norm, NULL}, supports_instance_norm},
};

void ds_cuda_reduce_register(DsKernel *table, DsCudaSupportsFn *supports)
{
  for (size_t i = 0; i < G_N_ELEMENTS(reduce_ops); i++) {
    table[reduce_ops[i].id] = reduce_ops[i].kernel;
    supports[reduce_ops[i].id] = reduce_ops[i].supports;
  }
}
