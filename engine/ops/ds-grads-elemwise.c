/* ds-grads-elemwise.c: gradients of the elementwise family, as engine ops.
 *
 * g is the gradient flowing into the output, x (a, b) the inputs, y the output. A derivative
 * is written with the output where that is cheaper and as exact (sigmoid' = y (1 - y)). */
#include <math.h>

#include "ds-grad.h"
#include "ds-grads.h"

#define MUL(a, b) ds_grad_op2(ctx, "elemwise_mul", (a), (b), NULL)
#define DIV(a, b) ds_grad_op2(ctx, "elemwise_div", (a), (b), NULL)
#define ADD(a, b) ds_grad_op2(ctx, "elemwise_add", (a), (b), NULL)
#define BMUL(a, b) ds_grad_op2(ctx, "broadcast_mul", (a), (b), NULL)
#define BDIV(a, b) ds_grad_op2(ctx, "broadcast_div", (a), (b), NULL)
#define UN(op, a) ds_grad_op1(ctx, (op), (a), NULL)
#define SC(op, a, s) ds_grad_scalar(ctx, (op), (a), (s))

gboolean ds_grad_unary_formula(DsGradCtx *ctx, DsOpId id, DsEntry g, DsEntry x, DsEntry y,
                               DsEntry *dx)
{
  switch (id) {
  case DS_OP_RELU:
    *dx = MUL(g, SC("_greater_scalar", x, 0));
    break;
  case DS_OP_SIGMOID:
    *dx = MUL(g, MUL(y, SC("_rminus_scalar", y, 1)));
    break;
  case DS_OP_TANH:
    *dx = MUL(g, SC("_rminus_scalar", UN("square", y), 1));
    break;
  case DS_OP_EXP:
    *dx = MUL(g, y);
    break;
  case DS_OP_EXPM1:
    *dx = MUL(g, SC("_plus_scalar", y, 1));
    break;
  case DS_OP_LOG:
    *dx = DIV(g, x);
    break;
  case DS_OP_LOG1P:
    *dx = DIV(g, SC("_plus_scalar", x, 1));
    break;
  case DS_OP_LOG2:
    *dx = DIV(g, SC("_mul_scalar", x, M_LN2));
    break;
  case DS_OP_LOG10:
    *dx = DIV(g, SC("_mul_scalar", x, M_LN10));
    break;
  case DS_OP_SQRT:
    *dx = SC("_mul_scalar", DIV(g, y), 0.5);
    break;
  case DS_OP_RSQRT: /* -x^(-3/2) / 2 */
    *dx = MUL(g, SC("_mul_scalar", SC("_power_scalar", x, -1.5), -0.5));
    break;
  case DS_OP_CBRT: /* 1 / (3 y^2) */
    *dx = DIV(g, SC("_mul_scalar", UN("square", y), 3));
    break;
  case DS_OP_RCBRT: /* -y / (3 x) */
    *dx = MUL(g, SC("_mul_scalar", DIV(y, x), -1.0 / 3.0));
    break;
  case DS_OP_SQUARE:
    *dx = MUL(g, SC("_mul_scalar", x, 2));
    break;
  case DS_OP_ABS:
    *dx = MUL(g, UN("sign", x));
    break;
  case DS_OP_NEGATIVE:
    *dx = UN("negative", g);
    break;
  case DS_OP_RECIPROCAL: /* -y^2 */
    *dx = MUL(g, UN("negative", UN("square", y)));
    break;
  case DS_OP_ERF: /* 2/sqrt(pi) exp(-x^2) */
    *dx = MUL(g, SC("_mul_scalar", UN("exp", UN("negative", UN("square", x))), M_2_SQRTPI));
    break;
  case DS_OP_SIN:
    *dx = MUL(g, UN("cos", x));
    break;
  case DS_OP_COS:
    *dx = MUL(g, UN("negative", UN("sin", x)));
    break;
  case DS_OP_TAN: /* 1 + y^2 */
    *dx = MUL(g, SC("_plus_scalar", UN("square", y), 1));
    break;
  case DS_OP_ARCSIN:
    *dx = DIV(g, UN("sqrt", SC("_rminus_scalar", UN("square", x), 1)));
    break;
  case DS_OP_ARCCOS:
    *dx = UN("negative", DIV(g, UN("sqrt", SC("_rminus_scalar", UN("square", x), 1))));
    break;
  case DS_OP_ARCTAN:
    *dx = DIV(g, SC("_plus_scalar", UN("square", x), 1));
    break;
  case DS_OP_SINH:
    *dx = MUL(g, UN("cosh", x));
    break;
  case DS_OP_COSH:
    *dx = MUL(g, UN("sinh", x));
    break;
  case DS_OP_ARCSINH:
    *dx = DIV(g, UN("sqrt", SC("_plus_scalar", UN("square", x), 1)));
    break;
  case DS_OP_ARCCOSH:
    *dx = DIV(g, UN("sqrt", SC("_minus_scalar", UN("square", x), 1)));
    break;
  case DS_OP_ARCTANH:
    *dx = DIV(g, SC("_rminus_scalar", UN("square", x), 1));
    break;
  case DS_OP_SOFTSIGN: /* 1 / (1 + |x|)^2 */
    *dx = DIV(g, UN("square", SC("_plus_scalar", UN("abs", x), 1)));
    break;
  case DS_OP_HARD_SWISH: { /* x clip(x + 3, 0, 6) / 6: clip(x + 3, 0, 6) / 6 + x [-3 < x < 3] / 6 */
    DsEntry ramp = ds_grad_op1(ctx, "clip", SC("_plus_scalar", x, 3), "a_min", "0", "a_max", "6",
                               NULL);
    DsEntry inside = MUL(SC("_greater_scalar", x, -3), SC("_lesser_scalar", x, 3));
    *dx = MUL(g, SC("_mul_scalar", ADD(ramp, MUL(x, inside)), 1.0 / 6.0));
    break;
  }
  case DS_OP_DEGREES:
    *dx = SC("_mul_scalar", g, 180.0 / M_PI);
    break;
  case DS_OP_RADIANS:
    *dx = SC("_mul_scalar", g, M_PI / 180.0);
    break;
  default: /* floor, ceil, rint, round, trunc, fix, sign, logical_not: flat almost everywhere */
    return FALSE;
  }
  return TRUE;
}

DS_GRAD_FN(ds_grad_unary_math)
{
  (void)error;
  DsEntry dx;
  if (ds_grad_unary_formula(ctx, ctx->node->op->id, out_grads[0], ds_grad_input(ctx, 0),
                 ds_grad_output(ctx, 0), &dx))
    in_grads[0] = dx;
  return TRUE;
}

/* The gradients of a binary function at a, b with output y, before the broadcast axes are
 * summed away; FALSE for a function without one (comparisons, logic, bits). */
static gboolean binary_grad(DsGradCtx *ctx, DsMathBinaryFn fn, DsEntry g, DsEntry a, DsEntry b,
                            DsEntry y, DsEntry *da, DsEntry *db)
{
  switch (fn) {
  case DS_MATH_BIN_ADD:
    *da = *db = g;
    break;
  case DS_MATH_BIN_SUB:
    *da = g;
    *db = UN("negative", g);
    break;
  case DS_MATH_BIN_MUL:
    *da = BMUL(g, b);
    *db = BMUL(g, a);
    break;
  case DS_MATH_BIN_DIV: /* d/db = -a / b^2 = -y / b */
    *da = BDIV(g, b);
    *db = UN("negative", BMUL(g, BDIV(y, b)));
    break;
  case DS_MATH_BIN_MAX: /* ties go to a, as MXNet's maximum does */
    *da = BMUL(g, ds_grad_op2(ctx, "broadcast_greater_equal", a, b, NULL));
    *db = BMUL(g, ds_grad_op2(ctx, "broadcast_lesser", a, b, NULL));
    break;
  case DS_MATH_BIN_MIN:
    *da = BMUL(g, ds_grad_op2(ctx, "broadcast_lesser_equal", a, b, NULL));
    *db = BMUL(g, ds_grad_op2(ctx, "broadcast_greater", a, b, NULL));
    break;
  case DS_MATH_BIN_POW: /* b a^(b-1) and y ln a */
    *da = BMUL(g, BMUL(b, ds_grad_op2(ctx, "broadcast_power", a, SC("_minus_scalar", b, 1),
                                      NULL)));
    *db = BMUL(g, BMUL(y, UN("log", a)));
    break;
  case DS_MATH_BIN_HYPOT:
    *da = BMUL(g, BDIV(a, y));
    *db = BMUL(g, BDIV(b, y));
    break;
  case DS_MATH_BIN_MOD: /* a - b floor(a / b) */
    *da = g;
    *db = UN("negative", BMUL(g, UN("floor", BDIV(a, b))));
    break;
  case DS_MATH_BIN_FMOD: /* a - b trunc(a / b) */
    *da = g;
    *db = UN("negative", BMUL(g, UN("trunc", BDIV(a, b))));
    break;
  case DS_MATH_BIN_PRELU: { /* a < 0 ? a b : a */
    DsEntry negative = SC("_lesser_scalar", a, 0);
    DsEntry slope = ADD(SC("_greater_equal_scalar", a, 0), BMUL(negative, b));
    *da = BMUL(g, slope);
    *db = BMUL(g, SC("_minimum_scalar", a, 0));
    break;
  }
  default:
    return FALSE;
  }
  return TRUE;
}

/* The binary function each binary op applies (the DS_OPS_BINARY list's third column). */
static DsMathBinaryFn binary_fn(DsOpId id)
{
  switch (id) {
#define BINARY_FN_CASE(ID, NAME, FN, TYPE)                                                     \
  case DS_OP_##ID:                                                                           \
    return DS_MATH_BIN_##FN;
    DS_OPS_BINARY(BINARY_FN_CASE)
#undef BINARY_FN_CASE
  default:
    g_assert_not_reached();
  }
}

DS_GRAD_FN(ds_grad_binary)
{
  DsEntry da, db;
  if (!binary_grad(ctx, binary_fn(ctx->node->op->id), out_grads[0], ds_grad_input(ctx, 0),
                   ds_grad_input(ctx, 1), ds_grad_output(ctx, 0), &da, &db))
    return TRUE;
  if ((ctx->node->op->traits & DS_OP_TRAIT_BROADCAST) == 0) {
    /* elemwise_*: both inputs have the output's shape, whatever symbols spell it */
    in_grads[0] = da, in_grads[1] = db;
    return TRUE;
  }
  return ds_grad_sum_to(ctx, da, &ctx->out_shapes[0], 0, &in_grads[0], error) &&
         ds_grad_sum_to(ctx, db, &ctx->out_shapes[0], 1, &in_grads[1], error);
}

DS_GRAD_FN(ds_grad_scalar_op)
{
  (void)error;
  const DsScalarParam *p = ctx->node->param;
  DsEntry g = out_grads[0], x = ds_grad_input(ctx, 0), y = ds_grad_output(ctx, 0);
  double s = p->scalar;
  switch (p->fn) {
  case DS_MATH_BIN_ADD:
    in_grads[0] = g;
    break;
  case DS_MATH_BIN_SUB:
    in_grads[0] = p->reverse ? UN("negative", g) : g;
    break;
  case DS_MATH_BIN_MUL:
    in_grads[0] = SC("_mul_scalar", g, s);
    break;
  case DS_MATH_BIN_DIV: /* s / x: -y / x */
    in_grads[0] = p->reverse ? UN("negative", MUL(g, DIV(y, x))) : SC("_div_scalar", g, s);
    break;
  case DS_MATH_BIN_POW: /* s^x: y ln s; x^s: s x^(s-1) */
    in_grads[0] = p->reverse ? MUL(g, SC("_mul_scalar", y, log(s)))
                             : MUL(g, SC("_mul_scalar", SC("_power_scalar", x, s - 1), s));
    break;
  case DS_MATH_BIN_MAX:
    in_grads[0] = MUL(g, SC("_greater_equal_scalar", x, s));
    break;
  case DS_MATH_BIN_MIN:
    in_grads[0] = MUL(g, SC("_lesser_equal_scalar", x, s));
    break;
  case DS_MATH_BIN_HYPOT:
    in_grads[0] = MUL(g, DIV(x, y));
    break;
  case DS_MATH_BIN_MOD: /* x mod s: 1; s mod x: -floor(s / x) */
    in_grads[0] = p->reverse ? UN("negative", MUL(g, UN("floor", SC("_rdiv_scalar", x, s)))) : g;
    break;
  default: /* comparisons and logic */
    break;
  }
  return TRUE;
}

/* _copy, and the ops that pass their input through when a model runs for inference. */
DS_GRAD_FN(ds_grad_identity)
{
  (void)ctx, (void)error;
  in_grads[0] = out_grads[0];
  return TRUE;
}

DS_GRAD_FN(ds_grad_clip)
{
  (void)error;
  const DsClipParam *p = ctx->node->param;
  DsEntry x = ds_grad_input(ctx, 0);
  DsEntry inside = MUL(SC("_greater_equal_scalar", x, p->a_min), SC("_lesser_equal_scalar", x, p->a_max));
  in_grads[0] = MUL(out_grads[0], inside);
  return TRUE;
}

/* where(condition, x, y): the gradient goes to x where the condition holds, to y elsewhere. */
DS_GRAD_FN(ds_grad_where)
{
  (void)error;
  DsEntry cond = ds_grad_input(ctx, 0), g = out_grads[0];
  DsEntry zeros = UN("zeros_like", g);
  in_grads[1] = ds_grad_op(ctx, "where", 3, (DsEntry[]){cond, g, zeros}, NULL);
  in_grads[2] = ds_grad_op(ctx, "where", 3, (DsEntry[]){cond, zeros, g}, NULL);
  return TRUE;
}

/* _npi_where broadcasts: each of x and y gets g where it was chosen, summed back to its
 * shape. */
DS_GRAD_FN(ds_grad_np_where)
{
  DsEntry cond = ds_grad_input(ctx, 0), g = out_grads[0];
  DsEntry zeros = UN("zeros_like", g);
  DsEntry gx = ds_grad_op(ctx, "_npi_where", 3, (DsEntry[]){cond, g, zeros}, NULL);
  DsEntry gy = ds_grad_op(ctx, "_npi_where", 3, (DsEntry[]){cond, zeros, g}, NULL);
  return ds_grad_sum_to(ctx, gx, &ctx->out_shapes[0], 1, &in_grads[1], error) &&
         ds_grad_sum_to(ctx, gy, &ctx->out_shapes[0], 2, &in_grads[2], error);
}

/* The activations with parameters (DsActParam), their slopes:
 *   hard_sigmoid      alpha where 0 < alpha x + beta < 1, else 0
 *   selu              gamma for x > 0, else gamma alpha exp(x)
 *   celu              1 for x > 0, else exp(x / alpha)
 *   thresholded_relu  1 for x > alpha, else 0
 *   shrink            1 for |x| > lambd, else 0
 * A two-sided slope is chosen with `where`, so that exp overflowing on the side not taken
 * gives no NaN. */
DS_GRAD_FN(ds_grad_act_param)
{
  const DsActParam *p = ctx->node->param;
  DsEntry g = out_grads[0], x = ds_grad_input(ctx, 0), slope;
  switch (ctx->node->op->id) {
  case DS_OP_HARD_SIGMOID: {
    DsEntry z = SC("_plus_scalar", SC("_mul_scalar", x, p->alpha), p->beta);
    DsEntry inside = MUL(SC("_greater_scalar", z, 0), SC("_lesser_scalar", z, 1));
    slope = SC("_mul_scalar", inside, p->alpha);
    break;
  }
  case DS_OP_SELU:
  case DS_OP_CELU: {
    gboolean selu = ctx->node->op->id == DS_OP_SELU;
    DsEntry positive = SC("_greater_scalar", x, 0);
    DsEntry above = selu ? SC("_mul_scalar", UN("ones_like", x), p->beta) : UN("ones_like", x);
    DsEntry below = selu ? SC("_mul_scalar", UN("exp", x), p->beta * p->alpha)
                         : UN("exp", SC("_div_scalar", x, p->alpha));
    slope = ds_grad_op(ctx, "where", 3, (DsEntry[]){positive, above, below}, NULL);
    break;
  }
  case DS_OP_THRESHOLDED_RELU: slope = SC("_greater_scalar", x, p->alpha); break;
  case DS_OP_SHRINK:
    slope = ADD(SC("_greater_scalar", x, p->alpha), SC("_lesser_scalar", x, -p->alpha));
    break;
  default: return ds_grad_fail(ctx, error, "not an activation with parameters");
  }
  in_grads[0] = MUL(g, slope);
  return TRUE;
}

DS_GRAD_FN(ds_grad_add_n)
{
  (void)error;
  for (guint i = 0; i < ctx->node->n_inputs; i++)
    in_grads[i] = out_grads[0];
  return TRUE;
}

/* x / sqrt(d): the same scaling of g. */
DS_GRAD_FN(ds_grad_div_sqrt_dim)
{
  (void)error;
  in_grads[0] = UN("_contrib_div_sqrt_dim", out_grads[0]);
  return TRUE;
}
