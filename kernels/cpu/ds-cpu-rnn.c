/* ds-cpu-rnn.c: the fused RNN op at inference (lstm, gru, rnn_relu, rnn_tanh), layout TNC.
 *
 * MXNet's flat parameter vector holds, for each layer and then each direction, the input
 * weights Wx (G*H x I_l) followed by the recurrent weights Wh (G*H x H); after all the weights
 * come, in the same order, the biases bx (G*H) and bh (G*H). G is 4 for LSTM (gates i, f, g, o),
 * 3 for GRU (r, z, n), 1 for the plain RNNs; I_l is the input size for layer 0 and D*H after.
 * GRU applies the reset gate to the recurrent part of the candidate, bias included:
 * n = tanh(Wx_n x + bx_n + r * (Wh_n h + bh_n)).
 *
 * Per layer and direction, one sgemm projects the whole sequence (T*N rows) through Wx with the
 * biases folded in; each step then adds h * Wh^T with one more sgemm (sgemv at batch 1) and
 * runs the gate math. With use_sequence_length, batch entry b only runs steps t < len[b]: its
 * later outputs are 0 and its state stops at its last step, so the reverse direction starts at
 * len[b] - 1, as cuDNN's padded layout does.
 *
 * float32 only.
 */
/* As in ds-cpu-nn.c: lets GCC vectorise the selects in the gate math. */
#pragma GCC optimize("no-trapping-math")

#include <string.h>

#include "ds-cpu-gemm.h"
#include "ds-cpu.h"

typedef struct {
  int64_t t, n, in, h, layers, dirs, gates;
  int64_t gh; /* gates * h */
} RnnDims;

static bool rnn_dims(const DsRNNParam *p, const DsTensor *data, RnnDims *d)
{
  if (data->ndim != 3)
    return false;
  d->t = data->shape[0];
  d->n = data->shape[1];
  d->in = data->shape[2];
  d->h = p->state_size;
  d->layers = p->num_layers;
  d->dirs = p->bidirectional ? 2 : 1;
  d->gates = ds_rnn_n_gates(p->mode);
  d->gh = d->gates * d->h;
  return d->h > 0 && d->layers > 0;
}

/* Workspace layout, in floats from the (64-byte aligned) start. */
typedef struct {
  int64_t lens;       /* N int64 sequence lengths (2 floats each), first to stay 8-byte aligned */
  int64_t proj;       /* T*N x G*H: input projections of one direction */
  int64_t layer;      /* T*N x D*H each: outputs of hidden layers (ping-pong) */
  int64_t hbuf, cbuf; /* N x H */
  int64_t hproj;      /* N x G*H: GRU's recurrent projection */
  int64_t total;
} RnnWorkspace;

static RnnWorkspace rnn_workspace_layout(const DsRNNParam *p, const RnnDims *d)
{
  RnnWorkspace w;
  int64_t off = 0;
  w.lens = off;
  off += p->use_sequence_length ? 2 * d->n : 0;
  w.proj = off;
  off += d->t * d->n * d->gh;
  w.layer = off;
  off += (d->layers > 2 ? 2 : d->layers - 1) * d->t * d->n * d->dirs * d->h;
  w.hbuf = off;
  off += d->n * d->h;
  w.cbuf = off;
  off += p->mode == DS_RNN_LSTM ? d->n * d->h : 0;
  w.hproj = off;
  off += p->mode == DS_RNN_GRU ? d->n * d->gh : 0;
  w.total = off;
  return w;
}

static size_t rnn_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                            const DsTensor *outputs, int n_outputs)
{
  RnnDims d;
  if (n_inputs < 1 || !rnn_dims(param, &inputs[0], &d))
    return 0;
  return (size_t)rnn_workspace_layout(param, &d).total * sizeof(float);
}

typedef struct {
  const RnnDims *d;
  DsRNNMode mode;
  float *gates;       /* N x G*H for this step: input projection plus (LSTM, RNN) h * Wh^T */
  const float *hproj; /* GRU: N x G*H recurrent projection with bh */
  float *h, *c;       /* N x H state, updated in place */
  float *y;           /* this step's output rows: N rows of D*H, at this direction's offset */
  const int64_t *len; /* per batch entry, or NULL */
  int64_t step;       /* time index t */
} StepJob;

static void rnn_step_rows(void *data, int64_t begin, int64_t end)
{
  const StepJob *job = data;
  const int64_t hn = job->d->h, gh = job->d->gh, ystride = job->d->dirs * hn;
  for (int64_t b = begin; b < end; b++) {
    float *restrict y = job->y + b * ystride;
    if (job->len != NULL && job->step >= job->len[b]) {
      memset(y, 0, (size_t)hn * sizeof(float));
      continue;
    }
    const float *restrict g = job->gates + b * gh;
    float *restrict h = job->h + b * hn;
    switch (job->mode) {
    case DS_RNN_LSTM: {
      float *restrict c = job->c + b * hn;
      for (int64_t j = 0; j < hn; j++) {
        float i = ds_vmath_sigmoid(g[j]);
        float f = ds_vmath_sigmoid(g[hn + j]);
        float gg = ds_vmath_tanh(g[2 * hn + j]);
        float o = ds_vmath_sigmoid(g[3 * hn + j]);
        float cn = f * c[j] + i * gg;
        c[j] = cn;
        h[j] = o * ds_vmath_tanh(cn);
      }
      break;
    }
    case DS_RNN_GRU: {
      const float *restrict gh_row = job->hproj + b * gh;
      for (int64_t j = 0; j < hn; j++) {
        float r = ds_vmath_sigmoid(g[j] + gh_row[j]);
        float z = ds_vmath_sigmoid(g[hn + j] + gh_row[hn + j]);
        float nn = ds_vmath_tanh(g[2 * hn + j] + r * gh_row[2 * hn + j]);
        h[j] = (1.0f - z) * nn + z * h[j];
      }
      break;
    }
    case DS_RNN_TANH:
      for (int64_t j = 0; j < hn; j++)
        h[j] = ds_vmath_tanh(g[j]);
      break;
    case DS_RNN_RELU:
      for (int64_t j = 0; j < hn; j++)
        h[j] = g[j] > 0.0f ? g[j] : 0.0f;
      break;
    }
    memcpy(y, h, (size_t)hn * sizeof(float));
  }
}

typedef struct {
  float *rows;
  const float *b1, *b2; /* b2 may be NULL */
  int64_t cols;
} BiasFillJob;

static void bias_fill_rows(void *data, int64_t begin, int64_t end)
{
  const BiasFillJob *job = data;
  const float *restrict b1 = job->b1, *restrict b2 = job->b2;
  const int64_t cols = job->cols;
  for (int64_t r = begin; r < end; r++) {
    float *restrict y = job->rows + r * cols;
    if (b2 != NULL)
      for (int64_t j = 0; j < cols; j++)
        y[j] = b1[j] + b2[j];
    else
      for (int64_t j = 0; j < cols; j++)
        y[j] = b1[j];
  }
}

static int64_t grain_rows(int64_t cost)
{
  int64_t g = DS_CPU_PARALLEL_GRAIN / (cost > 0 ? cost : 1);
  return g < 1 ? 1 : g;
}

/* Reads sequence lengths (any numeric dtype MXNet allows) clamped to [0, T]. */
static bool read_lengths(const DsTensor *t, int64_t n, int64_t steps, int64_t *out)
{
  if (ds_tensor_numel(t) != n)
    return false;
  for (int64_t i = 0; i < n; i++) {
    double v;
    switch (t->dtype) {
    case DS_DTYPE_FLOAT32:
      v = ((const float *)t->data)[i];
      break;
    case DS_DTYPE_FLOAT64:
      v = ((const double *)t->data)[i];
      break;
    case DS_DTYPE_INT32:
      v = ((const int32_t *)t->data)[i];
      break;
    case DS_DTYPE_INT64:
      v = (double)((const int64_t *)t->data)[i];
      break;
    case DS_DTYPE_UINT8:
      v = ((const uint8_t *)t->data)[i];
      break;
    case DS_DTYPE_INT8:
      v = ((const int8_t *)t->data)[i];
      break;
    default:
      return false;
    }
    out[i] = !(v > 0.0) ? 0 : v >= (double)steps ? steps : (int64_t)v;
  }
  return true;
}

static DsStatus rnn_run(const DsKernelCtx *ctx)
{
  const DsRNNParam *p = ctx->param;
  bool lstm = p->mode == DS_RNN_LSTM;
  int n_in = 3 + (lstm ? 1 : 0) + (p->use_sequence_length ? 1 : 0);
  int n_out = p->state_outputs ? (lstm ? 3 : 2) : 1;
  if (ctx->n_inputs < n_in || ctx->n_outputs < n_out)
    return DS_STATUS_INVALID_ARGUMENT;
  RnnDims d;
  if (!rnn_dims(p, &ctx->inputs[0], &d))
    return DS_STATUS_INVALID_ARGUMENT;
  int n_float_in = p->use_sequence_length ? n_in - 1 : n_in;
  for (int i = 0; i < n_float_in; i++)
    if (ctx->inputs[i].dtype != DS_DTYPE_FLOAT32)
      return DS_STATUS_UNSUPPORTED;
  for (int i = 0; i < n_out; i++)
    if (ctx->outputs[i].dtype != DS_DTYPE_FLOAT32)
      return DS_STATUS_UNSUPPORTED;

  const int64_t T = d.t, N = d.n, H = d.h, D = d.dirs, G = d.gh;
  const int64_t total_layers = d.layers * D;
  /* Parameter count (MXNet's GetRnnParamSize) and the offset where the biases start. */
  int64_t n_weights = 0;
  for (int64_t l = 0; l < d.layers; l++)
    n_weights += D * G * ((l == 0 ? d.in : D * H) + H);
  int64_t n_params = n_weights + total_layers * 2 * G;
  const DsTensor *state = &ctx->inputs[2];
  const DsTensor *cell = lstm ? &ctx->inputs[3] : NULL;
  if (ds_tensor_numel(&ctx->inputs[1]) != n_params ||
      ds_tensor_numel(state) != total_layers * N * H ||
      (cell != NULL && ds_tensor_numel(cell) != total_layers * N * H) ||
      ds_tensor_numel(&ctx->outputs[0]) != T * N * D * H)
    return DS_STATUS_INVALID_ARGUMENT;
  for (int i = 1; i < n_out; i++)
    if (ds_tensor_numel(&ctx->outputs[i]) != total_layers * N * H)
      return DS_STATUS_INVALID_ARGUMENT;
  RnnWorkspace ws = rnn_workspace_layout(p, &d);
  if (ws.total > 0 && ctx->workspace == NULL)
    return DS_STATUS_INVALID_ARGUMENT;

  float *w = ctx->workspace;
  int64_t *len = NULL;
  if (p->use_sequence_length) {
    len = (int64_t *)(w + ws.lens);
    if (!read_lengths(&ctx->inputs[n_in - 1], N, T, len))
      return DS_STATUS_INVALID_ARGUMENT;
  }

  float *proj = w + ws.proj, *hbuf = w + ws.hbuf, *cbuf = w + ws.cbuf, *hproj = w + ws.hproj;
  const float *params = ctx->inputs[1].data;
  const float *wptr = params, *bptr = params + n_weights;
  const float *x = ctx->inputs[0].data;
  float *out = ctx->outputs[0].data;
  float *hy = p->state_outputs ? ctx->outputs[1].data : NULL;
  float *cy = p->state_outputs && lstm ? ctx->outputs[2].data : NULL;

  for (int64_t l = 0; l < d.layers; l++) {
    int64_t in_l = l == 0 ? d.in : D * H;
    float *y = l == d.layers - 1 ? out : w + ws.layer + (l % 2) * T * N * D * H;
    for (int64_t dir = 0; dir < D; dir++) {
      int64_t idx = l * D + dir;
      const float *wx = wptr, *wh = wptr + G * in_l;
      const float *bx = bptr, *bh = bptr + G;
      wptr += G * (in_l + H);
      bptr += 2 * G;

      /* proj = x * Wx^T + bx (+ bh, except for GRU where bh goes inside the reset gate). */
      BiasFillJob fill = {proj, bx, p->mode == DS_RNN_GRU ? NULL : bh, G};
      ds_parallel_for(ctx->pool, T * N, grain_rows(G), bias_fill_rows, &fill);
      DsStatus st =
          ds_cpu_sgemm(false, true, T * N, G, in_l, 1.0f, x, in_l, wx, in_l, 1.0f, proj, G);
      if (st != DS_STATUS_OK)
        return st;

      memcpy(hbuf, (const float *)state->data + idx * N * H, (size_t)(N * H) * sizeof(float));
      if (lstm)
        memcpy(cbuf, (const float *)cell->data + idx * N * H, (size_t)(N * H) * sizeof(float));
      for (int64_t s = 0; s < T; s++) {
        int64_t t = dir == 0 ? s : T - 1 - s;
        float *gates = proj + t * N * G;
        if (p->mode == DS_RNN_GRU) {
          BiasFillJob hfill = {hproj, bh, NULL, G};
          ds_parallel_for(ctx->pool, N, grain_rows(G), bias_fill_rows, &hfill);
          st = ds_cpu_sgemm(false, true, N, G, H, 1.0f, hbuf, H, wh, H, 1.0f, hproj, G);
        } else {
          st = ds_cpu_sgemm(false, true, N, G, H, 1.0f, hbuf, H, wh, H, 1.0f, gates, G);
        }
        if (st != DS_STATUS_OK)
          return st;
        StepJob job = {&d, p->mode, gates, hproj, hbuf, cbuf, y + t * N * D * H + dir * H, len, t};
        ds_parallel_for(ctx->pool, N, grain_rows(G * 8), rnn_step_rows, &job);
      }
      if (hy != NULL)
        memcpy(hy + idx * N * H, hbuf, (size_t)(N * H) * sizeof(float));
      if (cy != NULL)
        memcpy(cy + idx * N * H, cbuf, (size_t)(N * H) * sizeof(float));
    }
    x = y;
  }
  return DS_STATUS_OK;
}

const DsKernel ds_cpu_rnn_kernel = {rnn_run, rnn_workspace};
