/* ds-cpu-rnn.c: the fused RNN op at inference (lstm, gru, rnn_relu, rnn_tanh), layout TNC,
 * and _contrib_RecurrentLayer, one layer with ONNX's semantics (at the end of the file).
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
  if (!rnn_dims(param, &inputs[0], &d))
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

/* --- _contrib_RecurrentLayer: ONNX's LSTM, GRU and RNN -------------------------------------- */

/* Per direction: one sgemm projects the whole sequence through W with the biases folded in
 * (all of them, except the recurrent bias of GRU's candidate gate when linear_before_reset
 * puts it under the reset gate); each step then adds h * R^T and runs the gate math in ONNX's
 * gate order. GRU without linear_before_reset needs the reset gate before its candidate's
 * recurrent product, (r . h) * R_h^T, so its step is two products with the gate math split
 * around them. */

typedef struct {
  int64_t t, n, in, h, dirs, gates, gh;
  bool bf; /* batch-first layouts (N, T, ...) */
} RecDims;

static bool rec_dims(const DsRecurrentLayerParam *p, const DsTensor *data, RecDims *d)
{
  if (data->ndim != 3)
    return false;
  d->bf = p->batch_first;
  d->t = data->shape[d->bf ? 1 : 0];
  d->n = data->shape[d->bf ? 0 : 1];
  d->in = data->shape[2];
  d->h = p->state_size;
  d->dirs = ds_recurrent_dirs(p);
  d->gates = ds_rnn_n_gates(p->mode);
  d->gh = d->gates * d->h;
  return d->h > 0;
}

/* Workspace layout, in floats. */
typedef struct {
  int64_t lens;  /* N int64 lengths (2 floats each), first to stay 8-byte aligned */
  int64_t proj;  /* T*N x G*H input projections of one direction, in the data's row order */
  int64_t step;  /* N x G*H: one step's gates (batch-first: gathered from proj) */
  int64_t hbuf;  /* N x H state */
  int64_t cbuf;  /* N x H LSTM cell */
  int64_t hproj; /* N x G*H GRU: recurrent projection */
  int64_t rh;    /* N x H GRU without linear_before_reset: r . h */
  int64_t total;
} RecWorkspace;

static RecWorkspace rec_workspace_layout(const DsRecurrentLayerParam *p, const RecDims *d)
{
  RecWorkspace w;
  int64_t off = 0;
  w.lens = off;
  off += p->use_sequence_length ? 2 * d->n : 0;
  w.proj = off;
  off += d->t * d->n * d->gh;
  w.step = off;
  off += d->bf ? d->n * d->gh : 0;
  w.hbuf = off;
  off += d->n * d->h;
  w.cbuf = off;
  off += p->mode == DS_RNN_LSTM ? d->n * d->h : 0;
  w.hproj = off;
  off += p->mode == DS_RNN_GRU ? d->n * d->gh : 0;
  w.rh = off;
  off += p->mode == DS_RNN_GRU && !p->linear_before_reset ? d->n * d->h : 0;
  w.total = off;
  return w;
}

static size_t rec_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                            const DsTensor *outputs, int n_outputs)
{
  (void)n_inputs;
  (void)outputs;
  (void)n_outputs;
  RecDims d;
  if (!rec_dims(param, &inputs[0], &d))
    return 0;
  return (size_t)rec_workspace_layout(param, &d).total * sizeof(float);
}

typedef struct {
  const RecDims *d;
  const DsRecurrentLayerParam *p;
  float *gates;          /* N x G*H: input projection, plus h * R^T except for GRU */
  const float *hproj;    /* GRU: N x G*H recurrent projection (linear_before_reset: with Rb_h) */
  float *h, *c, *rh;     /* N x H state, LSTM cell, GRU's r . h */
  const float *peep;     /* LSTM peepholes i, o, f (3 x H), or NULL */
  float *y;              /* this step's output row of batch entry 0 */
  int64_t y_stride;      /* between batch entries' output rows */
  const int64_t *len;    /* per batch entry, or NULL */
  int64_t step;          /* time index t */
  float clip;            /* > 0: gate inputs are clipped to [-clip, clip] */
  bool phase2;           /* GRU without linear_before_reset: the candidate half of the step */
} RecStepJob;

static inline float rec_clip(float v, float clip)
{
  if (clip <= 0.0f)
    return v;
  return v < -clip ? -clip : v > clip ? clip : v;
}

static void rec_lstm_row(const RecStepJob *job, int64_t b)
{
  const int64_t hn = job->d->h;
  const float *restrict g = job->gates + b * job->d->gh;
  float *restrict h = job->h + b * hn, *restrict c = job->c + b * hn;
  const float *pi = job->peep, *po = job->peep != NULL ? job->peep + hn : NULL;
  const float *pf = job->peep != NULL ? job->peep + 2 * hn : NULL;
  const float clip = job->clip;
  /* ONNX's order: i, o, f, c. */
  for (int64_t j = 0; j < hn; j++) {
    float cp = c[j];
    float i = ds_vmath_sigmoid(rec_clip(g[j] + (pi != NULL ? pi[j] * cp : 0.0f), clip));
    float f = ds_vmath_sigmoid(rec_clip(g[2 * hn + j] + (pf != NULL ? pf[j] * cp : 0.0f), clip));
    float cc = ds_vmath_tanh(rec_clip(g[3 * hn + j], clip));
    float cn = f * cp + i * cc;
    float o = ds_vmath_sigmoid(rec_clip(g[hn + j] + (po != NULL ? po[j] * cn : 0.0f), clip));
    c[j] = cn;
    h[j] = o * ds_vmath_tanh(cn);
  }
}

/* GRU, ONNX's order z, r, h. With linear_before_reset the whole step is here; without it,
 * phase 1 leaves z in `gates` and r . h in `rh`, and phase 2 (after rh * R_h^T went into the
 * hproj's candidate block) finishes. */
static void rec_gru_row(const RecStepJob *job, int64_t b)
{
  const int64_t hn = job->d->h, gh = job->d->gh;
  float *restrict g = job->gates + b * gh;
  const float *restrict hp = job->hproj + b * gh;
  float *restrict h = job->h + b * hn;
  const float clip = job->clip;
  if (job->p->linear_before_reset) {
    for (int64_t j = 0; j < hn; j++) {
      float z = ds_vmath_sigmoid(rec_clip(g[j] + hp[j], clip));
      float r = ds_vmath_sigmoid(rec_clip(g[hn + j] + hp[hn + j], clip));
      float n = ds_vmath_tanh(rec_clip(g[2 * hn + j] + r * hp[2 * hn + j], clip));
      h[j] = (1.0f - z) * n + z * h[j];
    }
    return;
  }
  float *restrict rh = job->rh + b * hn;
  if (!job->phase2) {
    for (int64_t j = 0; j < hn; j++) {
      g[j] = ds_vmath_sigmoid(rec_clip(g[j] + hp[j], clip));
      float r = ds_vmath_sigmoid(rec_clip(g[hn + j] + hp[hn + j], clip));
      rh[j] = r * h[j];
    }
    return;
  }
  for (int64_t j = 0; j < hn; j++) {
    float z = g[j];
    float n = ds_vmath_tanh(rec_clip(g[2 * hn + j] + hp[2 * hn + j], clip));
    h[j] = (1.0f - z) * n + z * h[j];
  }
}

static void rec_step_rows(void *data, int64_t begin, int64_t end)
{
  const RecStepJob *job = data;
  const int64_t hn = job->d->h;
  const bool gru_split = job->p->mode == DS_RNN_GRU && !job->p->linear_before_reset;
  for (int64_t b = begin; b < end; b++) {
    float *restrict y = job->y + b * job->y_stride;
    if (job->len != NULL && job->step >= job->len[b]) {
      /* Past its length: the entry keeps its state, and its output is 0. */
      if (gru_split && !job->phase2)
        memset(job->rh + b * hn, 0, (size_t)hn * sizeof(float));
      else
        memset(y, 0, (size_t)hn * sizeof(float));
      continue;
    }
    const float *restrict g = job->gates + b * job->d->gh;
    float *restrict h = job->h + b * hn;
    switch (job->p->mode) {
    case DS_RNN_LSTM:
      rec_lstm_row(job, b);
      break;
    case DS_RNN_GRU:
      rec_gru_row(job, b);
      if (gru_split && !job->phase2)
        continue; /* the output comes with phase 2 */
      break;
    case DS_RNN_TANH:
      for (int64_t j = 0; j < hn; j++)
        h[j] = ds_vmath_tanh(rec_clip(g[j], job->clip));
      break;
    case DS_RNN_RELU:
      for (int64_t j = 0; j < hn; j++) {
        float v = rec_clip(g[j], job->clip);
        h[j] = v > 0.0f ? v : 0.0f;
      }
      break;
    }
    memcpy(y, h, (size_t)hn * sizeof(float));
  }
}

/* The inputs of one run, resolved from the flags. */
typedef struct {
  const float *x, *w, *r, *bias, *h0, *c0, *peep;
  float *y, *yh, *yc;
  int64_t *len;
} RecIO;

/* proj = x * W_d^T + the biases folded for direction d. */
static DsStatus rec_project(const DsKernelCtx *ctx, const RecDims *d, const RecIO *io,
                            const DsRecurrentLayerParam *p, int64_t dir, float *proj)
{
  const int64_t G = d->gh;
  const float *wb = io->bias != NULL ? io->bias + dir * 2 * G : NULL;
  const float *rb = wb != NULL ? wb + G : NULL;
  /* GRU with linear_before_reset keeps all of Rb for the step (in hproj); otherwise every
   * recurrent bias adds outside the activations and folds in here. */
  bool fold_rb = !(p->mode == DS_RNN_GRU && p->linear_before_reset);
  for (int64_t j = 0; j < G; j++)
    proj[j] = (wb != NULL ? wb[j] : 0.0f) + (rb != NULL && fold_rb ? rb[j] : 0.0f);
  /* The other rows copy the first. */
  BiasFillJob fill = {proj + G, proj, NULL, G};
  ds_parallel_for(ctx->pool, d->t * d->n - 1, grain_rows(G), bias_fill_rows, &fill);
  return ds_cpu_sgemm(false, true, d->t * d->n, G, d->in, 1.0f, io->x, d->in,
                      io->w + dir * G * d->in, d->in, 1.0f, proj, G);
}

/* One step's recurrent products and gate math for direction `dir` at time t. */
static DsStatus rec_step(const DsKernelCtx *ctx, const RecDims *d, const RecIO *io,
                         const DsRecurrentLayerParam *p, const RecWorkspace *ws, int64_t dir,
                         int64_t t)
{
  const int64_t N = d->n, G = d->gh, H = d->h, T = d->t, D = d->dirs;
  float *w = ctx->workspace;
  float *proj = w + ws->proj, *h = w + ws->hbuf;
  const float *r = io->r + dir * G * H;
  float *gates;
  if (d->bf) { /* gather the step's rows: (b, t) is row b * T + t */
    gates = w + ws->step;
    for (int64_t b = 0; b < N; b++)
      memcpy(gates + b * G, proj + (b * T + t) * G, (size_t)G * sizeof(float));
  } else {
    gates = proj + t * N * G;
  }
  RecStepJob job = {d, p, gates, w + ws->hproj, h, w + ws->cbuf, w + ws->rh,
                    io->peep != NULL ? io->peep + dir * 3 * H : NULL,
                    NULL, 0, io->len, t, (float)p->clip, false};
  /* Y is (T, D, N, H), or (N, T, D, H) batch-first. */
  job.y = d->bf ? io->y + (t * D + dir) * H : io->y + (t * D + dir) * N * H;
  job.y_stride = d->bf ? T * D * H : H;
  DsStatus st;
  if (p->mode != DS_RNN_GRU) {
    st = ds_cpu_sgemm(false, true, N, G, H, 1.0f, h, H, r, H, 1.0f, gates, G);
  } else if (p->linear_before_reset) {
    float *hproj = w + ws->hproj;
    const float *rb = io->bias != NULL ? io->bias + dir * 2 * G + G : NULL;
    if (rb != NULL) {
      BiasFillJob fill = {hproj, rb, NULL, G};
      ds_parallel_for(ctx->pool, N, grain_rows(G), bias_fill_rows, &fill);
    }
    st = ds_cpu_sgemm(false, true, N, G, H, 1.0f, h, H, r, H, rb != NULL ? 1.0f : 0.0f, hproj, G);
  } else {
    /* z and r first (R's first 2H rows), then the candidate's (r . h) * R_h^T. */
    float *hproj = w + ws->hproj;
    st = ds_cpu_sgemm(false, true, N, 2 * H, H, 1.0f, h, H, r, H, 0.0f, hproj, G);
    if (st != DS_STATUS_OK)
      return st;
    ds_parallel_for(ctx->pool, N, grain_rows(G * 8), rec_step_rows, &job);
    st = ds_cpu_sgemm(false, true, N, H, H, 1.0f, w + ws->rh, H, r + 2 * H * H, H, 0.0f,
                      hproj + 2 * H, G);
    job.phase2 = true;
  }
  if (st != DS_STATUS_OK)
    return st;
  ds_parallel_for(ctx->pool, N, grain_rows(G * 8), rec_step_rows, &job);
  return DS_STATUS_OK;
}

/* Copies one direction's (N, H) state between a (D, N, H) or batch-first (N, D, H) tensor and
 * the contiguous buffer; `to_buf` says which way. */
static void rec_state_copy(const RecDims *d, int64_t dir, float *tensor, float *buf, bool to_buf)
{
  const int64_t H = d->h;
  for (int64_t b = 0; b < d->n; b++) {
    float *cell = tensor + (d->bf ? (b * d->dirs + dir) * H : (dir * d->n + b) * H);
    if (to_buf)
      memcpy(buf + b * H, cell, (size_t)H * sizeof(float));
    else
      memcpy(cell, buf + b * H, (size_t)H * sizeof(float));
  }
}

static DsStatus rec_check(const DsKernelCtx *ctx, const DsRecurrentLayerParam *p,
                          const RecDims *d, RecIO *io)
{
  const bool lstm = p->mode == DS_RNN_LSTM;
  int slot = 3;
  int bias = p->use_bias ? slot++ : -1, len = p->use_sequence_length ? slot++ : -1;
  int h0 = p->use_initial_h ? slot++ : -1, c0 = p->use_initial_c ? slot++ : -1;
  int peep = p->use_peephole ? slot++ : -1;
  int n_out = lstm ? 3 : 2;
  for (int i = 0; i < slot; i++)
    if (i != len && ctx->inputs[i].dtype != DS_DTYPE_FLOAT32)
      return DS_STATUS_UNSUPPORTED;
  for (int i = 0; i < n_out; i++)
    if (ctx->outputs[i].dtype != DS_DTYPE_FLOAT32)
      return DS_STATUS_UNSUPPORTED;
  const int64_t D = d->dirs, G = d->gh, H = d->h, N = d->n;
  if (ds_tensor_numel(&ctx->inputs[1]) != D * G * d->in ||
      ds_tensor_numel(&ctx->inputs[2]) != D * G * H ||
      (bias >= 0 && ds_tensor_numel(&ctx->inputs[bias]) != D * 2 * G) ||
      (h0 >= 0 && ds_tensor_numel(&ctx->inputs[h0]) != D * N * H) ||
      (c0 >= 0 && ds_tensor_numel(&ctx->inputs[c0]) != D * N * H) ||
      (peep >= 0 && ds_tensor_numel(&ctx->inputs[peep]) != D * 3 * H) ||
      ds_tensor_numel(&ctx->outputs[0]) != d->t * D * N * H)
    return DS_STATUS_INVALID_ARGUMENT;
  for (int i = 1; i < n_out; i++)
    if (ds_tensor_numel(&ctx->outputs[i]) != D * N * H)
      return DS_STATUS_INVALID_ARGUMENT;
  io->x = ctx->inputs[0].data;
  io->w = ctx->inputs[1].data;
  io->r = ctx->inputs[2].data;
  io->bias = bias >= 0 ? ctx->inputs[bias].data : NULL;
  io->h0 = h0 >= 0 ? ctx->inputs[h0].data : NULL;
  io->c0 = c0 >= 0 ? ctx->inputs[c0].data : NULL;
  io->peep = peep >= 0 ? ctx->inputs[peep].data : NULL;
  io->y = ctx->outputs[0].data;
  io->yh = ctx->outputs[1].data;
  io->yc = lstm ? ctx->outputs[2].data : NULL;
  io->len = NULL;
  if (len >= 0) {
    if (ctx->workspace == NULL)
      return DS_STATUS_INVALID_ARGUMENT;
    io->len = (int64_t *)ctx->workspace; /* the layout's first block */
    if (!read_lengths(&ctx->inputs[len], N, d->t, io->len))
      return DS_STATUS_INVALID_ARGUMENT;
  }
  return DS_STATUS_OK;
}

static DsStatus rec_run(const DsKernelCtx *ctx)
{
  const DsRecurrentLayerParam *p = ctx->param;
  RecDims d;
  if (!rec_dims(p, &ctx->inputs[0], &d))
    return DS_STATUS_INVALID_ARGUMENT;
  RecWorkspace ws = rec_workspace_layout(p, &d);
  if (ws.total > 0 && ctx->workspace == NULL)
    return DS_STATUS_INVALID_ARGUMENT;
  RecIO io;
  DsStatus st = rec_check(ctx, p, &d, &io);
  if (st != DS_STATUS_OK)
    return st;
  const int64_t N = d.n, H = d.h, T = d.t;
  float *w = ctx->workspace;
  float *hbuf = w + ws.hbuf, *cbuf = w + ws.cbuf;
  if (T == 0 || N == 0) { /* no steps: the states are the initial ones */
    for (int64_t dir = 0; dir < d.dirs && N > 0; dir++) {
      memset(hbuf, 0, (size_t)(N * H) * sizeof(float));
      if (io.h0 != NULL)
        rec_state_copy(&d, dir, (float *)io.h0, hbuf, true);
      rec_state_copy(&d, dir, io.yh, hbuf, false);
      if (io.yc != NULL) {
        memset(hbuf, 0, (size_t)(N * H) * sizeof(float));
        if (io.c0 != NULL)
          rec_state_copy(&d, dir, (float *)io.c0, hbuf, true);
        rec_state_copy(&d, dir, io.yc, hbuf, false);
      }
    }
    return DS_STATUS_OK;
  }
  for (int64_t dir = 0; dir < d.dirs; dir++) {
    bool backward = p->direction == DS_RNN_REVERSE || dir == 1;
    st = rec_project(ctx, &d, &io, p, dir, w + ws.proj);
    if (st != DS_STATUS_OK)
      return st;
    memset(hbuf, 0, (size_t)(N * H) * sizeof(float));
    if (io.h0 != NULL)
      rec_state_copy(&d, dir, (float *)io.h0, hbuf, true);
    if (io.yc != NULL) {
      memset(cbuf, 0, (size_t)(N * H) * sizeof(float));
      if (io.c0 != NULL)
        rec_state_copy(&d, dir, (float *)io.c0, cbuf, true);
    }
    for (int64_t s = 0; s < T; s++) {
      st = rec_step(ctx, &d, &io, p, &ws, dir, backward ? T - 1 - s : s);
      if (st != DS_STATUS_OK)
        return st;
    }
    rec_state_copy(&d, dir, io.yh, hbuf, false);
    if (io.yc != NULL)
      rec_state_copy(&d, dir, io.yc, cbuf, false);
  }
  return DS_STATUS_OK;
}

const DsKernel ds_cpu_recurrent_layer_kernel = {rec_run, rec_workspace};
