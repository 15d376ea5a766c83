/* ds-onnx-ops-training.c: the optimizers of the ai.onnx.preview.training domain.
 *
 * Adagrad, Momentum (standard and Nesterov) and Adam update n tensors at once: inputs R (the
 * learning rate, a scalar), T (the update count, an int64 scalar), then X1..Xn, G1..Gn and the
 * optimizer's state (H for Adagrad, V for Momentum, V and H for Adam); outputs the new X's, then
 * the new states. Each update is built from elementwise engine ops, so a training step exported
 * to ONNX can be run and stepped through like any graph. What depends on T (Adagrad's decayed
 * rate, Momentum's first-step beta, Adam's bias correction) is computed in float64 from T and
 * cast to float32 once.
 */
#include "ds-onnx-translate.h"

#include <math.h>
#include <string.h>

#define MAX_TENSORS 64

typedef struct {
  DsOnnxBuilder *b;
  const DsOnnxNode *node;
  guint n;      /* tensors updated */
  guint tensor; /* the one being built, for names */
  GError **error;
} Update;

/* `op` on `in` as "<node>/<what><tensor>", attributes as key, value pairs ended by NULL. */
#define STEP(u, op, what, in, n_in, out, ...)                                                      \
  ds_onnx_emit1((u)->b, (u)->node, op, ds_onnx_printf((u)->b, "%s%u", what, (u)->tensor + 1), in,  \
                n_in, out, (u)->error, __VA_ARGS__)

static gboolean binary(Update *u, const char *op, const char *what, DsEntry x, DsEntry y,
                       DsEntry *out)
{
  DsEntry in[2] = {x, y};
  return STEP(u, op, what, in, 2, out, NULL);
}

static gboolean scaled(Update *u, const char *what, DsEntry x, double by, DsEntry *out)
{
  return STEP(u, "_mul_scalar", what, &x, 1, out, "scalar", ds_onnx_fmt_float(u->b, by), NULL);
}

/* x * k + y: regularisation (k = norm_coefficient) and moving averages. */
static gboolean scaled_add(Update *u, const char *what, DsEntry x, double k, DsEntry y,
                           DsEntry *out)
{
  DsEntry kx;
  return scaled(u, ds_onnx_printf(u->b, "%s_scaled", what), x, k, &kx) &&
         binary(u, "broadcast_add", what, kx, y, out);
}

/* Input `i` of the node. */
static gboolean in(Update *u, guint i, DsEntry *out)
{
  return ds_onnx_input(u->b, u->node, i, out, u->error);
}

/* Reads n from the input count: 2 + n * per_tensor inputs, n * outputs_per outputs. */
static gboolean count_tensors(Update *u, guint per_tensor, guint outputs_per)
{
  const DsOnnxNode *node = u->node;
  if (node->n_inputs < 2 + per_tensor || (node->n_inputs - 2) % per_tensor != 0)
    return ds_onnx_invalid(u->error, "%u inputs: expected R, T and %u inputs per tensor",
                           (guint)node->n_inputs, per_tensor);
  u->n = (node->n_inputs - 2) / per_tensor;
  if (u->n > MAX_TENSORS)
    return ds_onnx_unsupported(u->error, "%u tensors at once (at most %d)", u->n, MAX_TENSORS);
  if (node->n_outputs > u->n * outputs_per)
    return ds_onnx_invalid(u->error, "%u outputs for %u tensors", (guint)node->n_outputs, u->n);
  return TRUE;
}

/* T as a float64 scalar. */
static gboolean t_as_double(Update *u, DsEntry *out)
{
  DsEntry t;
  return in(u, 1, &t) && ds_onnx_emit1(u->b, u->node, "Cast", "T_float64", &t, 1, out, u->error,
                                       "dtype", "float64", NULL);
}

/* `value` where T (as float64, `t64`) is past 0, `value_when_zero` where it is 0. */
static gboolean unless_first(Update *u, const char *what, DsEntry t64, DsEntry value,
                             DsEntry value_when_zero, DsEntry *out)
{
  DsEntry later, cond[3];
  if (!ds_onnx_emit1(u->b, u->node, "_greater_scalar", ds_onnx_printf(u->b, "%s_later", what), &t64,
                     1, &later, u->error, "scalar", "0", NULL))
    return FALSE;
  cond[0] = later, cond[1] = value, cond[2] = value_when_zero;
  return ds_onnx_emit1(u->b, u->node, "_npi_where", what, cond, 3, out, u->error, NULL);
}

static gboolean to_float32(Update *u, const char *what, DsEntry x, DsEntry *out)
{
  return ds_onnx_emit1(u->b, u->node, "Cast", what, &x, 1, out, u->error, "dtype", "float32", NULL);
}

/* The current tensor's X, its states (`n_states` of them, the inputs after the G's) and its
 * regularised gradient norm_coefficient * X + G. */
static gboolean tensor_inputs(Update *u, double norm, guint n_states, DsEntry *x, DsEntry *states,
                              DsEntry *gradient)
{
  DsEntry g;
  if (!in(u, 2 + u->tensor, x) || !in(u, 2 + u->n + u->tensor, &g))
    return FALSE;
  for (guint k = 0; k < n_states; k++)
    if (!in(u, 2 + (2 + k) * u->n + u->tensor, &states[k]))
      return FALSE;
  return scaled_add(u, "gradient", *x, norm, g, gradient);
}

/* Binds the current tensor's outputs: `n` values, the new X then the new states, each output
 * group n tensors apart. */
static gboolean tensor_outputs(Update *u, const DsEntry *values, guint n)
{
  for (guint k = 0; k < n; k++)
    if (!ds_onnx_set_output(u->b, u->node, k * u->n + u->tensor, values[k], u->error))
      return FALSE;
  return TRUE;
}

/* X - rate * numerator / (sqrt(H) + epsilon): Adagrad's and Adam's step. */
static gboolean descend(Update *u, const char *what, DsEntry x, DsEntry rate, DsEntry numerator,
                        DsEntry h, double epsilon, DsEntry *out)
{
  DsEntry root, step;
  return STEP(u, "sqrt", "root", &h, 1, &root, NULL) &&
         STEP(u, "_plus_scalar", "root_eps", &root, 1, &root, "scalar",
              ds_onnx_fmt_float(u->b, epsilon), NULL) &&
         binary(u, "broadcast_div", "direction", numerator, root, &step) &&
         binary(u, "broadcast_mul", "step", rate, step, &step) &&
         binary(u, "broadcast_sub", what, x, step, out);
}

/* A float64 scalar constant named `what`. */
static DsEntry constant(Update *u, const char *what, double value)
{
  return ds_onnx_add_scalar(u->b, what, DS_DTYPE_FLOAT64, value, FALSE);
}

/* ---- Adagrad --------------------------------------------------------------------------------- */

/* r' = R / (1 + T * decay_factor); G' = norm_coefficient * X + G; H' = H + G'^2;
 * X' = X - r' * G' / (sqrt(H') + epsilon). */
static gboolean translate_adagrad(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  Update u = {b, node, 0, 0, error};
  if (!count_tensors(&u, 3, 2))
    return FALSE;
  const double norm = ds_onnx_attr_float(node, "norm_coefficient", 0.0f);
  const double epsilon = ds_onnx_attr_float(node, "epsilon", 0.0f);
  const double decay = ds_onnx_attr_float(node, "decay_factor", 0.0f);
  DsEntry r, t64, td, rate64, rate;
  if (!in(&u, 0, &r) || !t_as_double(&u, &t64) ||
      !ds_onnx_emit1(b, node, "_mul_scalar", "decayed_steps", &t64, 1, &td, error, "scalar",
                     ds_onnx_fmt_float(b, decay), NULL) ||
      !ds_onnx_emit1(b, node, "_plus_scalar", "rate_divisor", &td, 1, &td, error, "scalar", "1",
                     NULL) ||
      !ds_onnx_emit1(b, node, "_rdiv_scalar", "rate_scale", &td, 1, &rate64, error, "scalar", "1",
                     NULL) ||
      !to_float32(&u, "rate_scale_float32", rate64, &rate) ||
      !ds_onnx_emit1(b, node, "broadcast_mul", "rate", (DsEntry[]){r, rate}, 2, &rate, error, NULL))
    return FALSE;
  for (u.tensor = 0; u.tensor < u.n; u.tensor++) {
    DsEntry x, h, greg, sq, out[2]; /* X', H' */
    if (!tensor_inputs(&u, norm, 1, &x, &h, &greg) ||
        !binary(&u, "broadcast_mul", "gradient_squared", greg, greg, &sq) ||
        !binary(&u, "broadcast_add", "H_new", h, sq, &out[1]) ||
        !descend(&u, "X_new", x, rate, greg, out[1], epsilon, &out[0]) ||
        !tensor_outputs(&u, out, 2))
      return FALSE;
  }
  return TRUE;
}

/* ---- Momentum -------------------------------------------------------------------------------- */

/* G' = norm_coefficient * X + G; V' = alpha * V + beta' * G' with beta' = beta, or 1 on the first
 * update (T = 0); X' = X - R * V' (standard) or X - R * (G' + alpha * V') (nesterov). */
static gboolean translate_momentum(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  Update u = {b, node, 0, 0, error};
  if (!count_tensors(&u, 3, 2))
    return FALSE;
  const double norm = ds_onnx_attr_float(node, "norm_coefficient", 0.0f);
  const double alpha = ds_onnx_attr_float(node, "alpha", 0.0f);
  const double beta = ds_onnx_attr_float(node, "beta", 0.0f);
  const char *mode = ds_onnx_attr_string(node, "mode", "standard");
  const gboolean nesterov = strcmp(mode, "nesterov") == 0;
  if (!nesterov && strcmp(mode, "standard") != 0)
    return ds_onnx_invalid(error, "mode '%s' is neither standard nor nesterov", mode);
  DsEntry r, t64, beta64, beta_t;
  if (!in(&u, 0, &r) || !t_as_double(&u, &t64) ||
      !unless_first(&u, "beta_adjusted", t64, constant(&u, "beta", beta), constant(&u, "one", 1),
                    &beta64) ||
      !to_float32(&u, "beta_adjusted_float32", beta64, &beta_t))
    return FALSE;
  for (u.tensor = 0; u.tensor < u.n; u.tensor++) {
    DsEntry x, v, greg, push, dir, step, out[2]; /* X', V' */
    if (!tensor_inputs(&u, norm, 1, &x, &v, &greg) ||
        !binary(&u, "broadcast_mul", "push", beta_t, greg, &push) ||
        !scaled_add(&u, "V_new", v, alpha, push, &out[1]))
      return FALSE;
    dir = out[1];
    if (nesterov && !scaled_add(&u, "lookahead", out[1], alpha, greg, &dir))
      return FALSE;
    if (!binary(&u, "broadcast_mul", "step", r, dir, &step) ||
        !binary(&u, "broadcast_sub", "X_new", x, step, &out[0]) || !tensor_outputs(&u, out, 2))
      return FALSE;
  }
  return TRUE;
}

/* ---- Adam ------------------------------------------------------------------------------------ */

/* G' = norm_coefficient * X + G; V' = alpha * V + (1 - alpha) * G';
 * H' = beta * H + (1 - beta) * G'^2; r' = R * sqrt(1 - beta^T) / (1 - alpha^T), or R when T = 0;
 * X' = (1 - norm_coefficient_post) * (X - r' * V' / (sqrt(H') + epsilon)). */
static gboolean translate_adam(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  Update u = {b, node, 0, 0, error};
  if (!count_tensors(&u, 4, 3))
    return FALSE;
  const double norm = ds_onnx_attr_float(node, "norm_coefficient", 0.0f);
  const double norm_post = ds_onnx_attr_float(node, "norm_coefficient_post", 0.0f);
  const double alpha = ds_onnx_attr_float(node, "alpha", 0.9f);
  const double beta = ds_onnx_attr_float(node, "beta", 0.999f);
  const double epsilon = ds_onnx_attr_float(node, "epsilon", 1e-6f);
  if (!(alpha > 0.0) || !(beta > 0.0))
    return ds_onnx_unsupported(error, "alpha and beta must be positive");
  /* alpha^T and beta^T as exp(T ln alpha): T is data. */
  DsEntry r, t64, pw[2], correction, rate;
  const double bases[2] = {beta, alpha};
  static const char *const names[2] = {"beta_power", "alpha_power"};
  if (!in(&u, 0, &r) || !t_as_double(&u, &t64))
    return FALSE;
  for (int k = 0; k < 2; k++)
    if (!ds_onnx_emit1(b, node, "_mul_scalar", ds_onnx_printf(b, "%s_log", names[k]), &t64, 1,
                       &pw[k], error, "scalar", ds_onnx_fmt_float(b, log(bases[k])), NULL) ||
        !ds_onnx_emit1(b, node, "exp", names[k], &pw[k], 1, &pw[k], error, NULL) ||
        !ds_onnx_emit1(b, node, "_rminus_scalar", ds_onnx_printf(b, "%s_complement", names[k]),
                       &pw[k], 1, &pw[k], error, "scalar", "1", NULL))
      return FALSE;
  if (!ds_onnx_emit1(b, node, "sqrt", "beta_power_root", &pw[0], 1, &pw[0], error, NULL) ||
      !ds_onnx_emit1(b, node, "broadcast_div", "bias_correction", pw, 2, &correction, error,
                     NULL) ||
      !unless_first(&u, "correction", t64, correction, constant(&u, "one", 1), &correction) ||
      !to_float32(&u, "correction_float32", correction, &correction) ||
      !ds_onnx_emit1(b, node, "broadcast_mul", "rate", (DsEntry[]){r, correction}, 2, &rate, error,
                     NULL))
    return FALSE;
  for (u.tensor = 0; u.tensor < u.n; u.tensor++) {
    DsEntry x, state[2], greg, part, sq, out[3]; /* X', V', H' */
    if (!tensor_inputs(&u, norm, 2, &x, state, &greg) ||
        !scaled(&u, "V_part", greg, 1.0 - alpha, &part) ||
        !scaled_add(&u, "V_new", state[0], alpha, part, &out[1]) ||
        !binary(&u, "broadcast_mul", "gradient_squared", greg, greg, &sq) ||
        !scaled(&u, "H_part", sq, 1.0 - beta, &part) ||
        !scaled_add(&u, "H_new", state[1], beta, part, &out[2]) ||
        !descend(&u, "X_stepped", x, rate, out[1], out[2], epsilon, &out[0]) ||
        !scaled(&u, "X_new", out[0], 1.0 - norm_post, &out[0]) || !tensor_outputs(&u, out, 3))
      return FALSE;
  }
  return TRUE;
}

const DsOnnxOpTranslator ds_onnx_training_ops[] = {
    {"Adagrad", 1, translate_adagrad},
    {"Momentum", 1, translate_momentum},
    {"Adam", 1, translate_adam},
    {NULL, 0, NULL},
};
