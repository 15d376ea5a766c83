/* ds-onnx-ops-math.c: ONNX's elementwise math, comparisons, logic, casts and reductions.
 *
 * Most ops map one to one: binary ops onto the broadcasting engine ops (ONNX's multidirectional
 * broadcasting is NumPy's), comparisons onto the NumPy-style ops with bool results, Where onto
 * the broadcasting `_npi_where`. The variadic Max, Min, Sum and Mean chain binary nodes.
 * Reductions use MXNet's sum, mean, max and min when the result keeps at least one dim; a
 * reduction to a 0-dim result (every axis, no keepdims) or to one MXNet cannot compute takes
 * the NumPy-style ops, which give ONNX's shapes.
 *
 * Arithmetic, comparisons and casts of small constants (scalars and vectors: shape arithmetic
 * such as Sub(rank, axis) or Div(dim, heads)) are folded while importing, so that a Reshape or
 * ConstantOfShape further on still sees a constant.
 */
#include "ds-onnx-translate.h"

#include <math.h>

/* ---- Folding small constants --------------------------------------------------------------- */

/* Constants up to this many elements (of rank 0 or 1) fold. */
#define FOLD_MAX 64

typedef enum {
  FOLD_NONE,
  FOLD_ADD,
  FOLD_SUB,
  FOLD_MUL,
  FOLD_DIV,
  FOLD_MOD,
  FOLD_FMOD,
  FOLD_MAX_OF,
  FOLD_MIN_OF,
  FOLD_EQ,
  FOLD_LT,
  FOLD_LE,
  FOLD_GT,
  FOLD_GE,
  FOLD_AND,
  FOLD_OR,
  FOLD_XOR,
  FOLD_NEG,
  FOLD_ABS,
  FOLD_FLOOR,
  FOLD_CEIL,
  FOLD_ROUND,
  FOLD_SQRT,
  FOLD_SIGN,
  FOLD_NOT,
  FOLD_COPY,
} FoldOp;

/* A small constant's values: exact int64 for integer and bool dtypes, doubles for floats. */
typedef struct {
  DsDType dtype;
  int rank;
  int n;
  gint64 i[FOLD_MAX];
  double f[FOLD_MAX];
} SmallConst;

static gboolean is_float_dtype(DsDType t)
{
  return t == DS_DTYPE_FLOAT32 || t == DS_DTYPE_FLOAT64;
}

/* Input `idx` as a SmallConst, if it is a constant of rank <= 1 and at most FOLD_MAX elements of
 * a dtype the engine computes in. */
static gboolean small_const(DsOnnxBuilder *b, const DsOnnxNode *node, guint idx, SmallConst *c)
{
  const DsNDArray *a = ds_onnx_input_const(b, node, idx);
  if (a == NULL || a->view.ndim > 1 || ds_tensor_numel(&a->view) > FOLD_MAX ||
      ds_dtype_is_storage_only(a->view.dtype))
    return FALSE;
  c->dtype = a->view.dtype;
  c->rank = a->view.ndim;
  c->n = (int)ds_tensor_numel(&a->view);
  for (int k = 0; k < c->n; k++)
    c->f[k] = c->dtype == DS_DTYPE_FLOAT32   ? ((const float *)a->view.data)[k]
              : c->dtype == DS_DTYPE_FLOAT64 ? ((const double *)a->view.data)[k]
                                             : 0.0;
  if (!is_float_dtype(c->dtype) && ds_onnx_const_ints(a, c->i, FOLD_MAX) != c->n)
    return FALSE;
  if (!is_float_dtype(c->dtype))
    for (int k = 0; k < c->n; k++)
      c->f[k] = (double)c->i[k];
  return TRUE;
}

/* Element k of `c` stored into dtype `t`'s representation inside `out`: integers wrap to their
 * width, floats round; FALSE for a value an integer cannot hold (NaN, out of int64). */
static gboolean fold_store(DsNDArray *out, int k, gboolean from_float, double f, gint64 i)
{
  void *d = out->view.data;
  DsDType t = out->view.dtype;
  if (is_float_dtype(t)) {
    double v = from_float ? f : (double)i;
    if (t == DS_DTYPE_FLOAT32)
      ((float *)d)[k] = (float)v;
    else
      ((double *)d)[k] = v;
    return TRUE;
  }
  if (from_float) {
    if (t == DS_DTYPE_BOOL) {
      ((guint8 *)d)[k] = f != 0.0;
      return TRUE;
    }
    if (!(f > -9.2e18 && f < 9.2e18))
      return FALSE;
    i = (gint64)f; /* truncation toward zero, as C and NumPy cast */
  }
  switch (t) {
  case DS_DTYPE_INT64:
    ((gint64 *)d)[k] = i;
    break;
  case DS_DTYPE_INT32:
    ((gint32 *)d)[k] = (gint32)(guint32)(guint64)i;
    break;
  case DS_DTYPE_INT8:
    ((gint8 *)d)[k] = (gint8)(guint8)(guint64)i;
    break;
  case DS_DTYPE_UINT8:
    ((guint8 *)d)[k] = (guint8)(guint64)i;
    break;
  case DS_DTYPE_BOOL:
    ((guint8 *)d)[k] = i != 0;
    break;
  default:
    return FALSE;
  }
  return TRUE;
}

/* Python's modulo on integers (the divisor's sign); x % 0 is 0, as the engine's kernels give. */
static gint64 fold_int_mod(gint64 x, gint64 y, gboolean c_style)
{
  if (y == 0 || y == -1)
    return 0;
  gint64 r = x % y;
  return !c_style && r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
}

static gboolean fold_is_compare(FoldOp op)
{
  return op >= FOLD_EQ && op <= FOLD_XOR;
}

/* One element of a binary fold, in int64 (wrapping as the kernels do) or in double. */
static void fold_binary_value(FoldOp op, gboolean ints, gint64 xi, gint64 yi, double xf, double yf,
                              gint64 *ri, double *rf)
{
  guint64 ux = (guint64)xi, uy = (guint64)yi;
  switch (op) {
  case FOLD_ADD:
    *ri = (gint64)(ux + uy), *rf = xf + yf;
    break;
  case FOLD_SUB:
    *ri = (gint64)(ux - uy), *rf = xf - yf;
    break;
  case FOLD_MUL:
    *ri = (gint64)(ux * uy), *rf = xf * yf;
    break;
  case FOLD_DIV:
    *ri = yi == 0 ? 0 : (yi == -1 ? (gint64)(0u - ux) : xi / yi), *rf = xf / yf;
    break;
  case FOLD_MOD:
  case FOLD_FMOD: {
    *ri = fold_int_mod(xi, yi, op == FOLD_FMOD);
    double r = fmod(xf, yf);
    *rf = op == FOLD_MOD && r != 0.0 && ((r < 0.0) != (yf < 0.0)) ? r + yf : r;
    break;
  }
  case FOLD_MAX_OF:
    *ri = MAX(xi, yi), *rf = (xf > yf || isnan(xf)) ? xf : yf;
    break;
  case FOLD_MIN_OF:
    *ri = MIN(xi, yi), *rf = (xf < yf || isnan(xf)) ? xf : yf;
    break;
  case FOLD_EQ:
    *ri = ints ? xi == yi : xf == yf;
    break;
  case FOLD_LT:
    *ri = ints ? xi < yi : xf < yf;
    break;
  case FOLD_LE:
    *ri = ints ? xi <= yi : xf <= yf;
    break;
  case FOLD_GT:
    *ri = ints ? xi > yi : xf > yf;
    break;
  case FOLD_GE:
    *ri = ints ? xi >= yi : xf >= yf;
    break;
  case FOLD_AND:
    *ri = (ints ? xi != 0 : xf != 0.0) && (ints ? yi != 0 : yf != 0.0);
    break;
  case FOLD_OR:
    *ri = (ints ? xi != 0 : xf != 0.0) || (ints ? yi != 0 : yf != 0.0);
    break;
  case FOLD_XOR:
    *ri = (ints ? xi != 0 : xf != 0.0) != (ints ? yi != 0 : yf != 0.0);
    break;
  default:
    break;
  }
}

/* Folds a binary op whose two inputs are small constants of one dtype, broadcasting as NumPy
 * does (rank <= 1: equal lengths, or one of them 1). *done says whether it did. */
static gboolean fold_binary(DsOnnxBuilder *b, const DsOnnxNode *node, FoldOp op, gboolean *done,
                            GError **error)
{
  *done = FALSE;
  SmallConst x, y;
  if (op == FOLD_NONE || node->n_inputs != 2 || !small_const(b, node, 0, &x) ||
      !small_const(b, node, 1, &y) || x.dtype != y.dtype)
    return TRUE;
  if (x.n != y.n && x.n != 1 && y.n != 1)
    return TRUE; /* the engine op reports the mismatch */
  int n = x.n == 1 ? y.n : x.n, rank = MAX(x.rank, y.rank);
  gboolean ints = !is_float_dtype(x.dtype);
  DsDType out_dtype = fold_is_compare(op) ? DS_DTYPE_BOOL : x.dtype;
  int64_t dims[1] = {n};
  g_autoptr(DsNDArray) out = ds_ndarray_new(out_dtype, rank, dims, node->outputs[0], error);
  if (out == NULL)
    return FALSE;
  for (int k = 0; k < n; k++) {
    int kx = x.n == 1 ? 0 : k, ky = y.n == 1 ? 0 : k;
    gint64 ri = 0;
    double rf = 0.0;
    fold_binary_value(op, ints, x.i[kx], y.i[ky], x.f[kx], y.f[ky], &ri, &rf);
    gboolean float_result = !ints && !fold_is_compare(op);
    if (!fold_store(out, k, float_result, rf, ri))
      return TRUE;
  }
  *done = TRUE;
  return ds_onnx_set_output_const(b, node, 0, g_steal_pointer(&out), error);
}

/* The same for unary ops and casts (`to` is the result's dtype; DS_DTYPE_UNKNOWN keeps the
 * input's). */
static gboolean fold_unary(DsOnnxBuilder *b, const DsOnnxNode *node, FoldOp op, DsDType to,
                           gboolean *done, GError **error)
{
  *done = FALSE;
  SmallConst x;
  if (op == FOLD_NONE || !small_const(b, node, 0, &x))
    return TRUE;
  gboolean ints = !is_float_dtype(x.dtype);
  if (ints && op == FOLD_SQRT)
    return TRUE;
  int64_t dims[1] = {x.n};
  DsDType out_dtype = to != DS_DTYPE_UNKNOWN ? to : x.dtype;
  g_autoptr(DsNDArray) out = ds_ndarray_new(out_dtype, x.rank, dims, node->outputs[0], error);
  if (out == NULL)
    return FALSE;
  for (int k = 0; k < x.n; k++) {
    gint64 i = x.i[k];
    double f = x.f[k];
    switch (op) {
    case FOLD_NEG:
      i = (gint64)(0u - (guint64)i), f = -f;
      break;
    case FOLD_ABS:
      i = i < 0 ? (gint64)(0u - (guint64)i) : i, f = fabs(f);
      break;
    case FOLD_FLOOR:
      f = floor(f);
      break;
    case FOLD_CEIL:
      f = ceil(f);
      break;
    case FOLD_ROUND:
      f = nearbyint(f);
      break;
    case FOLD_SQRT:
      f = sqrt(f);
      break;
    case FOLD_SIGN:
      i = (i > 0) - (i < 0), f = f > 0 ? 1.0 : (f < 0 ? -1.0 : f);
      break;
    case FOLD_NOT:
      i = ints ? i == 0 : f == 0.0, ints = TRUE;
      break;
    default: /* FOLD_COPY, casts */
      break;
    }
    if (!fold_store(out, k, !ints, f, i))
      return TRUE;
  }
  *done = TRUE;
  return ds_onnx_set_output_const(b, node, 0, g_steal_pointer(&out), error);
}

/* One input, one output, an engine op with the given attributes (key, value pairs, NULL). */
static gboolean unary_attrs(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op,
                            GError **error, const char *k0, const char *v0, const char *k1,
                            const char *v1)
{
  DsEntry x;
  if (!ds_onnx_input(b, node, 0, &x, error))
    return FALSE;
  const char *keys[2] = {k0, k1}, *values[2] = {v0, v1};
  guint n = k0 == NULL ? 0 : (k1 == NULL ? 1 : 2);
  DsNode *out = ds_onnx_emitv(b, node, op, NULL, &x, 1, keys, values, n, error);
  return out != NULL && ds_onnx_bind_outputs(b, node, out, error);
}

static gboolean unary(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op, GError **error)
{
  return unary_attrs(b, node, op, error, NULL, NULL, NULL, NULL);
}

/* A unary op, folded when its input is a small constant. */
static gboolean unary_fold(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op, FoldOp fold,
                           GError **error)
{
  gboolean done;
  if (!fold_unary(b, node, fold, DS_DTYPE_UNKNOWN, &done, error))
    return FALSE;
  return done || unary(b, node, op, error);
}

/* Two inputs with NumPy broadcasting (ONNX's multidirectional broadcasting, opset 7 on), folded
 * when both are small constants. */
static gboolean binary_fold(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op, FoldOp fold,
                            GError **error)
{
  gboolean done;
  if (!fold_binary(b, node, fold, &done, error))
    return FALSE;
  if (done)
    return TRUE;
  DsEntry in[2];
  if (!ds_onnx_input(b, node, 0, &in[0], error) || !ds_onnx_input(b, node, 1, &in[1], error))
    return FALSE;
  DsNode *n = ds_onnx_emit(b, node, op, NULL, in, 2, error, NULL);
  return n != NULL && ds_onnx_bind_outputs(b, node, n, error);
}

static gboolean binary(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op, GError **error)
{
  return binary_fold(b, node, op, FOLD_NONE, error);
}

#define UNARY(fn, op)                                                                              \
  static gboolean fn(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)                     \
  {                                                                                                \
    return unary(b, node, op, error);                                                              \
  }
#define UNARY_FOLD(fn, op, fold)                                                                   \
  static gboolean fn(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)                     \
  {                                                                                                \
    return unary_fold(b, node, op, fold, error);                                                   \
  }
#define BINARY(fn, op)                                                                             \
  static gboolean fn(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)                     \
  {                                                                                                \
    return binary(b, node, op, error);                                                             \
  }
#define BINARY_FOLD(fn, op, fold)                                                                  \
  static gboolean fn(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)                     \
  {                                                                                                \
    return binary_fold(b, node, op, fold, error);                                                  \
  }

UNARY(translate_relu, "relu")
UNARY(translate_sigmoid, "sigmoid")
UNARY(translate_tanh, "tanh")
UNARY(translate_exp, "exp")
UNARY(translate_log, "log")
UNARY_FOLD(translate_sqrt, "sqrt", FOLD_SQRT)
UNARY_FOLD(translate_abs, "abs", FOLD_ABS)
UNARY_FOLD(translate_neg, "negative", FOLD_NEG)
UNARY(translate_reciprocal, "reciprocal")
UNARY(translate_erf, "erf")
UNARY_FOLD(translate_identity, "_copy", FOLD_COPY)
UNARY_FOLD(translate_floor, "floor", FOLD_FLOOR)
UNARY_FOLD(translate_ceil, "ceil", FOLD_CEIL)
UNARY_FOLD(translate_round, "rint", FOLD_ROUND) /* half to even, as ONNX's Round */
UNARY_FOLD(translate_sign, "sign", FOLD_SIGN)
UNARY(translate_sin, "sin")
UNARY(translate_cos, "cos")
UNARY(translate_tan, "tan")
UNARY(translate_asin, "arcsin")
UNARY(translate_acos, "arccos")
UNARY(translate_atan, "arctan")
UNARY(translate_sinh, "sinh")
UNARY(translate_cosh, "cosh")
UNARY(translate_asinh, "arcsinh")
UNARY(translate_acosh, "arccosh")
UNARY(translate_atanh, "arctanh")
UNARY(translate_softsign, "softsign")
UNARY(translate_hard_swish, "hard_swish")
UNARY_FOLD(translate_not, "logical_not", FOLD_NOT)
UNARY(translate_isnan, "_npi_isnan")
BINARY_FOLD(translate_add, "broadcast_add", FOLD_ADD)
BINARY_FOLD(translate_sub, "broadcast_sub", FOLD_SUB)
BINARY_FOLD(translate_mul, "broadcast_mul", FOLD_MUL)
/* Integers truncate toward zero, as in ONNX Runtime. */
BINARY_FOLD(translate_div, "broadcast_div", FOLD_DIV)
/* The exponent may have another dtype (Pow-12 on). */
BINARY(translate_pow, "broadcast_power")
BINARY_FOLD(translate_and, "broadcast_logical_and", FOLD_AND)
BINARY_FOLD(translate_or, "broadcast_logical_or", FOLD_OR)
BINARY_FOLD(translate_xor, "broadcast_logical_xor", FOLD_XOR)
BINARY_FOLD(translate_equal, "_npi_equal", FOLD_EQ)
BINARY_FOLD(translate_greater, "_npi_greater", FOLD_GT)
BINARY_FOLD(translate_greater_equal, "_npi_greater_equal", FOLD_GE)
BINARY_FOLD(translate_less, "_npi_less", FOLD_LT)
BINARY_FOLD(translate_less_equal, "_npi_less_equal", FOLD_LE)
/* The slope broadcasts to the data (PRelu-7 on). */
BINARY(translate_prelu, "broadcast_prelu")

/* ---- Activations with attributes ----------------------------------------------------------- */

/* An op taking the ONNX node's float attribute `key` (`def` when absent) under the same name. */
static gboolean float_attr_op(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op,
                              const char *key, double def, GError **error)
{
  double v = ds_onnx_attr_float(node, key, (float)def);
  return unary_attrs(b, node, op, error, key, ds_onnx_fmt_float(b, v), NULL, NULL);
}

/* The same with two attributes. */
static gboolean float_attrs_op(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op,
                               const char *k0, double d0, const char *k1, double d1, GError **error)
{
  double v0 = ds_onnx_attr_float(node, k0, (float)d0), v1 = ds_onnx_attr_float(node, k1, (float)d1);
  return unary_attrs(b, node, op, error, k0, ds_onnx_fmt_float(b, v0), k1,
                     ds_onnx_fmt_float(b, v1));
}

static gboolean translate_leaky_relu(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  double alpha = ds_onnx_attr_float(node, "alpha", 0.01f);
  return unary_attrs(b, node, "LeakyReLU", error, "act_type", "leaky", "slope",
                     ds_onnx_fmt_float(b, alpha));
}

static gboolean translate_elu(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  double alpha = ds_onnx_attr_float(node, "alpha", 1.0f);
  return unary_attrs(b, node, "LeakyReLU", error, "act_type", "elu", "slope",
                     ds_onnx_fmt_float(b, alpha));
}

static gboolean translate_selu(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return float_attrs_op(b, node, "selu", "alpha", 1.67326319217681884765625, "gamma",
                        1.05070102214813232421875, error);
}

static gboolean translate_celu(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return float_attr_op(b, node, "celu", "alpha", 1.0, error);
}

static gboolean translate_thresholded_relu(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return float_attr_op(b, node, "thresholded_relu", "alpha", 1.0, error);
}

static gboolean translate_hard_sigmoid(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return float_attrs_op(b, node, "hard_sigmoid", "alpha", 0.2, "beta", 0.5, error);
}

static gboolean translate_shrink(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return float_attrs_op(b, node, "shrink", "lambd", 0.5, "bias", 0.0, error);
}

static gboolean translate_softplus(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return unary_attrs(b, node, "Activation", error, "act_type", "softrelu", NULL, NULL);
}

/* Mish-18: x * tanh(softplus(x)). */
static gboolean translate_mish(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  DsEntry xt[2], sp, y;
  return ds_onnx_input(b, node, 0, &xt[0], error) &&
         ds_onnx_emit1(b, node, "Activation", "softplus", &xt[0], 1, &sp, error, "act_type",
                       "softrelu", NULL) &&
         ds_onnx_emit1(b, node, "tanh", "tanh", &sp, 1, &xt[1], error, NULL) &&
         ds_onnx_emit1(b, node, "elemwise_mul", "mish", xt, 2, &y, error, NULL) &&
         ds_onnx_set_output(b, node, 0, y, error);
}

/* Gelu-20: x * Phi(x) with the error function (LeakyReLU's gelu), or its tanh approximation
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
static gboolean translate_gelu(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  const char *approximate = ds_onnx_attr_string(node, "approximate", "none");
  if (strcmp(approximate, "none") == 0)
    return unary_attrs(b, node, "LeakyReLU", error, "act_type", "gelu", NULL, NULL);
  if (strcmp(approximate, "tanh") != 0)
    return ds_onnx_invalid(error, "approximate must be 'none' or 'tanh', not '%s'", approximate);
  /* Pairs of operands: (x, x), (x^2, x), (x, 0.044715 x^3), (x, 1 + tanh(...)). */
  DsEntry xx[2], x2x[2], xc[2], xt[2], inner, scaled, t, y;
  if (!ds_onnx_input(b, node, 0, &xx[0], error))
    return FALSE;
  xx[1] = x2x[1] = xc[0] = xt[0] = xx[0];
  return ds_onnx_emit1(b, node, "elemwise_mul", "x2", xx, 2, &x2x[0], error, NULL) &&
         ds_onnx_emit1(b, node, "elemwise_mul", "x3", x2x, 2, &xc[1], error, NULL) &&
         ds_onnx_emit1(b, node, "_mul_scalar", "cx3", &xc[1], 1, &xc[1], error, "scalar",
                       "0.044715", NULL) &&
         ds_onnx_emit1(b, node, "elemwise_add", "inner", xc, 2, &inner, error, NULL) &&
         ds_onnx_emit1(b, node, "_mul_scalar", "scaled", &inner, 1, &scaled, error, "scalar",
                       "0.7978845608028654", NULL) &&
         ds_onnx_emit1(b, node, "tanh", "tanh", &scaled, 1, &t, error, NULL) &&
         ds_onnx_emit1(b, node, "_plus_scalar", "one_plus", &t, 1, &xt[1], error, "scalar", "1",
                       NULL) &&
         ds_onnx_emit1(b, node, "elemwise_mul", "x_times", xt, 2, &y, error, NULL) &&
         ds_onnx_emit1(b, node, "_mul_scalar", "gelu", &y, 1, &y, error, "scalar", "0.5",
                       NULL) &&
         ds_onnx_set_output(b, node, 0, y, error);
}

/* IsInf-10: detect_negative and detect_positive pick the test. */
static gboolean translate_isinf(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  gboolean neg = ds_onnx_attr_int(node, "detect_negative", 1) != 0;
  gboolean pos = ds_onnx_attr_int(node, "detect_positive", 1) != 0;
  if (neg && pos)
    return unary(b, node, "_npi_isinf", error);
  if (pos)
    return unary(b, node, "_npi_isposinf", error);
  if (neg)
    return unary(b, node, "_npi_isneginf", error);
  /* Neither: every element is false, which x < x gives for any x (NaN included). */
  DsEntry x[2];
  if (!ds_onnx_input(b, node, 0, &x[0], error))
    return FALSE;
  x[1] = x[0];
  DsNode *n = ds_onnx_emit(b, node, "_npi_less", NULL, x, 2, error, NULL);
  return n != NULL && ds_onnx_bind_outputs(b, node, n, error);
}

/* ---- Mod, BitShift, Where ------------------------------------------------------------------ */

/* Mod-10: fmod=0 is Python's modulo (the divisor's sign), fmod=1 C's fmod (the dividend's). */
static gboolean translate_mod(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  gint64 fmod_flag = ds_onnx_attr_int(node, "fmod", 0);
  if (fmod_flag != 0 && fmod_flag != 1)
    return ds_onnx_invalid(error, "fmod must be 0 or 1, not %" G_GINT64_FORMAT, fmod_flag);
  return binary_fold(b, node, fmod_flag ? "_npi_fmod" : "broadcast_mod",
                     fmod_flag ? FOLD_FMOD : FOLD_MOD, error);
}

static gboolean translate_bit_shift(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  const char *dir = ds_onnx_attr_string(node, "direction", NULL);
  if (dir == NULL)
    return ds_onnx_invalid(error, "the direction attribute is missing");
  if (g_strcmp0(dir, "LEFT") == 0)
    return binary(b, node, "_npi_bitwise_left_shift", error);
  if (g_strcmp0(dir, "RIGHT") == 0)
    return binary(b, node, "_npi_bitwise_right_shift", error);
  return ds_onnx_invalid(error, "direction must be LEFT or RIGHT, not '%s'", dir);
}

/* BitwiseAnd, BitwiseOr, BitwiseXor (opset 18): NumPy's, broadcasting. */
static gboolean translate_bitwise_and(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return binary(b, node, "_npi_bitwise_and", error);
}

static gboolean translate_bitwise_or(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return binary(b, node, "_npi_bitwise_or", error);
}

static gboolean translate_bitwise_xor(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return binary(b, node, "_npi_bitwise_xor", error);
}

/* BitwiseNot (opset 18): ~x is -1 - x in two's complement, and 255 - x for uint8. */
static gboolean translate_bitwise_not(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  DsDType t = ds_onnx_input_dtype(b, node, 0);
  if (t != DS_DTYPE_INT8 && t != DS_DTYPE_UINT8 && t != DS_DTYPE_INT32 && t != DS_DTYPE_INT64)
    return ds_onnx_unsupported(error, "only int8, uint8, int32 and int64 inputs are supported");
  return unary_attrs(b, node, "_rminus_scalar", error, "scalar",
                     t == DS_DTYPE_UINT8 ? "255" : "-1", NULL, NULL);
}

static gboolean translate_where(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  DsEntry in[3];
  for (guint i = 0; i < 3; i++)
    if (!ds_onnx_input(b, node, i, &in[i], error))
      return FALSE;
  DsNode *n = ds_onnx_emit(b, node, "_npi_where", NULL, in, 3, error, NULL);
  return n != NULL && ds_onnx_bind_outputs(b, node, n, error);
}

/* ---- Variadic Max, Min, Sum, Mean ---------------------------------------------------------- */

/* in0 (op) in1 (op) ... as a chain of broadcasting nodes; the last one carries the node's name.
 * One input is a copy. Stores the chain's result in `out`. */
static gboolean fold_inputs(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op,
                            gboolean last_named, DsEntry *out, GError **error)
{
  if (node->n_inputs < 1)
    return ds_onnx_invalid(error, "needs at least one input");
  DsEntry acc;
  if (!ds_onnx_input(b, node, 0, &acc, error))
    return FALSE;
  if (node->n_inputs == 1) {
    DsNode *n = ds_onnx_emit(b, node, "_copy", last_named ? NULL : "copy", &acc, 1, error, NULL);
    if (n == NULL)
      return FALSE;
    *out = ds_onnx_entry(n, 0);
    return TRUE;
  }
  for (guint i = 1; i < node->n_inputs; i++) {
    DsEntry pair[2] = {acc, {0, 0, 0}};
    if (!ds_onnx_input(b, node, i, &pair[1], error))
      return FALSE;
    gboolean last = i + 1 == node->n_inputs;
    const char *suffix = last && last_named ? NULL : ds_onnx_printf(b, "%s%u", op, i);
    DsNode *n = ds_onnx_emit(b, node, op, suffix, pair, 2, error, NULL);
    if (n == NULL)
      return FALSE;
    acc = ds_onnx_entry(n, 0);
  }
  *out = acc;
  return TRUE;
}

static gboolean variadic(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op, FoldOp fold,
                         GError **error)
{
  gboolean done;
  if (!fold_binary(b, node, fold, &done, error))
    return FALSE;
  if (done)
    return TRUE;
  DsEntry result;
  return fold_inputs(b, node, op, TRUE, &result, error) &&
         ds_onnx_set_output(b, node, 0, result, error);
}

static gboolean translate_max(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return variadic(b, node, "broadcast_maximum", FOLD_MAX_OF, error);
}

static gboolean translate_min(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return variadic(b, node, "broadcast_minimum", FOLD_MIN_OF, error);
}

static gboolean translate_sum(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return variadic(b, node, "broadcast_add", FOLD_ADD, error);
}

/* Mean (float types only): the sum divided by the input count. */
static gboolean translate_mean(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  if (node->n_inputs == 1)
    return variadic(b, node, "_copy", FOLD_NONE, error);
  DsEntry sum;
  if (!fold_inputs(b, node, "broadcast_add", FALSE, &sum, error))
    return FALSE;
  DsNode *n = ds_onnx_emit(b, node, "_div_scalar", NULL, &sum, 1, error, "scalar",
                           ds_onnx_printf(b, "%" G_GSIZE_FORMAT, node->n_inputs), NULL);
  return n != NULL && ds_onnx_bind_outputs(b, node, n, error);
}

/* ---- Clip ---------------------------------------------------------------------------------- */

/* The lowest and highest value of a dtype, as doubles (infinities for floats). */
static void dtype_range(DsDType t, double *lo, double *hi)
{
  switch (t) {
  case DS_DTYPE_UINT8:
    *lo = 0, *hi = 255;
    break;
  case DS_DTYPE_INT8:
    *lo = -128, *hi = 127;
    break;
  case DS_DTYPE_INT32:
    *lo = -2147483648.0, *hi = 2147483647.0;
    break;
  case DS_DTYPE_INT64:
    *lo = -9223372036854775808.0, *hi = 9223372036854775807.0;
    break;
  case DS_DTYPE_BOOL:
    *lo = 0, *hi = 1;
    break;
  default:
    *lo = -INFINITY, *hi = INFINITY;
    break;
  }
}

/* clip with constant bounds; a bound below the other one wins, as in NumPy's clip
 * (minimum(maximum(x, lo), hi)). */
static gboolean emit_clip(DsOnnxBuilder *b, const DsOnnxNode *node, double lo, double hi,
                          GError **error)
{
  if (lo > hi)
    lo = hi;
  return unary_attrs(b, node, "clip", error, "a_min", ds_onnx_fmt_float(b, lo), "a_max",
                     ds_onnx_fmt_float(b, hi));
}

/* Clip-6 takes its bounds as attributes (float types only); Clip-11 on as optional scalar
 * inputs, which may be computed at run time (then broadcast_maximum and _minimum apply them). */
static gboolean translate_clip(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  if (ds_onnx_opset(b) < 11)
    return emit_clip(b, node, ds_onnx_attr_float(node, "min", -INFINITY),
                     ds_onnx_attr_float(node, "max", INFINITY), error);
  gboolean has_lo = ds_onnx_has_input(node, 1), has_hi = ds_onnx_has_input(node, 2);
  if (!has_lo && !has_hi)
    return unary(b, node, "_copy", error);
  const DsNDArray *clo = has_lo ? ds_onnx_input_const(b, node, 1) : NULL;
  const DsNDArray *chi = has_hi ? ds_onnx_input_const(b, node, 2) : NULL;
  if ((!has_lo || clo != NULL) && (!has_hi || chi != NULL)) {
    /* A missing bound is the dtype's own extreme: ±inf for floats, the range for integers
     * (an integer clip compares in its dtype). */
    DsDType t = (clo != NULL ? clo : chi)->view.dtype;
    double lo, hi;
    dtype_range(t, &lo, &hi);
    if ((clo != NULL && !ds_onnx_const_scalar(clo, &lo)) ||
        (chi != NULL && !ds_onnx_const_scalar(chi, &hi)))
      return ds_onnx_invalid(error, "min and max must hold one value");
    return emit_clip(b, node, lo, hi, error);
  }
  DsEntry acc;
  if (!ds_onnx_input(b, node, 0, &acc, error))
    return FALSE;
  const char *ops[2] = {"broadcast_maximum", "broadcast_minimum"};
  gboolean has[2] = {has_lo, has_hi};
  for (guint i = 0; i < 2; i++) {
    if (!has[i])
      continue;
    DsEntry pair[2] = {acc, {0, 0, 0}};
    if (!ds_onnx_input(b, node, i + 1, &pair[1], error))
      return FALSE;
    gboolean last = i == 1 || !has_hi;
    DsNode *n = ds_onnx_emit(b, node, ops[i], last ? NULL : "min", pair, 2, error, NULL);
    if (n == NULL)
      return FALSE;
    acc = ds_onnx_entry(n, 0);
  }
  return ds_onnx_set_output(b, node, 0, acc, error);
}

/* ---- Cast, CastLike ------------------------------------------------------------------------ */

/* Casts to one of the engine's dtypes; strings and the types the engine lacks are refused.
 * Conversions follow C's (and NumPy's, and ONNX Runtime's static_cast): floats truncate toward
 * zero into integers, integers wrap to the target's width, nonzero is true. A cast to a storage
 * type converts to it and back to its compute dtype (ds-onnx-values.h): float16 and bfloat16
 * round to nearest even, int16, uint16 and uint32 wrap. One from a storage type reads the
 * compute dtype's value, which holds it exactly, except uint64, whose int64 bits are first
 * read back as uint64 so that values from 2^63 up convert as themselves. */
static gboolean emit_cast(DsOnnxBuilder *b, const DsOnnxNode *node, DsDType to, int onnx_type,
                          GError **error)
{
  if (to == DS_DTYPE_UNKNOWN)
    return ds_onnx_unsupported(error, "casts to %s are not supported",
                               ds_onnx_elem_type_name(onnx_type));
  DsDType from_storage = ds_onnx_has_input(node, 0) ? ds_onnx_value_storage(b, node->inputs[0])
                                                    : DS_DTYPE_UNKNOWN;
  if (from_storage == DS_DTYPE_UINT64 && to != DS_DTYPE_UINT64 && to != DS_DTYPE_INT64) {
    DsEntry x, bits;
    if (!ds_onnx_input(b, node, 0, &x, error) ||
        !ds_onnx_emit1(b, node, "Cast", "as_uint64", &x, 1, &bits, error, "dtype", "uint64", NULL))
      return FALSE;
    if (ds_dtype_is_storage_only(to))
      return ds_onnx_set_output_storage(b, node, 0, bits, to, error);
    DsNode *n = ds_onnx_emit(b, node, "Cast", NULL, &bits, 1, error, "dtype", ds_dtype_name(to),
                             NULL);
    return n != NULL && ds_onnx_bind_outputs(b, node, n, error);
  }
  if (ds_dtype_is_storage_only(to)) {
    DsEntry x;
    return ds_onnx_input(b, node, 0, &x, error) &&
           ds_onnx_set_output_storage(b, node, 0, x, to, error);
  }
  gboolean done;
  if (!fold_unary(b, node, FOLD_COPY, to, &done, error))
    return FALSE;
  return done || unary_attrs(b, node, "Cast", error, "dtype", ds_dtype_name(to), NULL, NULL);
}

static gboolean translate_cast(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  if (!ds_onnx_has_attr(node, "to"))
    return ds_onnx_invalid(error, "the 'to' attribute is missing");
  gint64 to = ds_onnx_attr_int(node, "to", -1);
  if (to < 0)
    return ds_onnx_unsupported(error, "'to' must be an element type code");
  return emit_cast(b, node, ds_onnx_dtype((int)to), (int)to, error);
}

/* CastLike-15: the target dtype is the second input's, which must be known while importing. */
static gboolean translate_cast_like(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  if (!ds_onnx_has_input(node, 1))
    return ds_onnx_invalid(error, "input 1 (target_type) is missing");
  DsDType to = ds_onnx_value_storage(b, node->inputs[1]);
  if (to == DS_DTYPE_UNKNOWN)
    to = ds_onnx_input_dtype(b, node, 1);
  if (to == DS_DTYPE_UNKNOWN)
    return ds_onnx_unsupported(error, "the dtype of target_type is not known while importing");
  return emit_cast(b, node, to, ds_onnx_data_type_of(to), error);
}

/* ---- Reductions ---------------------------------------------------------------------------- */

/* The axes of a Reduce* node: from the `axes` attribute, or (ReduceSum-13 on) the optional
 * second input. *n is -1 when none are given, -2 when the input is computed at run time. */
static gboolean reduce_axes(DsOnnxBuilder *b, const DsOnnxNode *node, gboolean axes_input,
                            gint64 *axes, int *n, GError **error)
{
  if (axes_input) {
    *n = -1;
    if (!ds_onnx_has_input(node, 1))
      return TRUE;
    const DsNDArray *c = ds_onnx_input_const(b, node, 1);
    if (c == NULL) {
      *n = -2; /* computed at run time */
      return TRUE;
    }
    *n = ds_onnx_const_ints(c, axes, DS_MAX_NDIM);
    if (*n < 0)
      return ds_onnx_invalid(error, "axes must be at most %d integers", DS_MAX_NDIM);
    return TRUE;
  }
  *n = ds_onnx_attr_ints(node, "axes", axes, DS_MAX_NDIM);
  if (*n > DS_MAX_NDIM)
    return ds_onnx_invalid(error, "axes lists more than %d axes", DS_MAX_NDIM);
  return TRUE;
}

/* ReduceSum-13 with axes computed at run time: the output's dims are only known once they are
 * read. */
static gboolean dynamic_reduce_sum(DsOnnxBuilder *b, const DsOnnxNode *node, gboolean keepdims,
                                   gboolean noop, GError **error)
{
  DsEntry in[2];
  if (!ds_onnx_input(b, node, 0, &in[0], error) || !ds_onnx_input(b, node, 1, &in[1], error))
    return FALSE;
  DsNode *n = ds_onnx_emit(b, node, "_contrib_dynamic_sum", NULL, in, 2, error, "keepdims",
                           keepdims ? "True" : "False", "noop_with_empty_axes",
                           noop ? "True" : "False", NULL);
  return n != NULL && ds_onnx_bind_outputs(b, node, n, error);
}

/* Whether MXNet's reduction (`mxnet_op`) gives ONNX's result: it keeps a dim (keepdims, or
 * fewer axes than the input's known rank) and its kernel takes the dtype (floats, int32,
 * int64; unknown dtypes are assumed to be floats). */
static gboolean mxnet_reduce_fits(DsOnnxBuilder *b, const DsOnnxNode *node, gboolean keepdims,
                                  int n_axes)
{
  DsDType t = ds_onnx_input_dtype(b, node, 0);
  if (t != DS_DTYPE_UNKNOWN && t != DS_DTYPE_FLOAT32 && t != DS_DTYPE_FLOAT64 &&
      t != DS_DTYPE_INT32 && t != DS_DTYPE_INT64)
    return FALSE;
  if (keepdims)
    return TRUE;
  int rank = ds_onnx_input_rank(b, node, 0);
  return n_axes > 0 && rank > n_axes;
}

/* Reduce*: `np_op` (NumPy shape rules) or, where it gives the same result, `mxnet_op` (NULL if
 * there is none). An empty axis list reduces everything, or nothing with ReduceSum-13's
 * noop_with_empty_axes. */
static gboolean reduce(DsOnnxBuilder *b, const DsOnnxNode *node, const char *mxnet_op,
                       const char *np_op, gboolean axes_input, GError **error)
{
  gint64 axes[DS_MAX_NDIM];
  int n_axes;
  if (!reduce_axes(b, node, axes_input, axes, &n_axes, error))
    return FALSE;
  gboolean keepdims = ds_onnx_attr_int(node, "keepdims", 1) != 0;
  gboolean noop = ds_onnx_attr_int(node, "noop_with_empty_axes", 0) != 0;
  if (n_axes == -2 && strcmp(np_op, "_npi_sum") != 0)
    return ds_onnx_unsupported(error, "axes computed at run time (only ReduceSum's are)");
  if (n_axes == -2)
    return dynamic_reduce_sum(b, node, keepdims, noop, error);
  if (n_axes <= 0 && noop)
    return unary(b, node, "_copy", error);
  const char *op =
      mxnet_op != NULL && mxnet_reduce_fits(b, node, keepdims, n_axes) ? mxnet_op : np_op;
  const char *keep = keepdims ? "True" : "False";
  if (n_axes <= 0)
    return unary_attrs(b, node, op, error, "keepdims", keep, NULL, NULL);
  return unary_attrs(b, node, op, error, "axis", ds_onnx_fmt_ints(b, axes, n_axes), "keepdims",
                     keep);
}

static gboolean translate_reduce_sum(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return reduce(b, node, "sum", "_npi_sum", ds_onnx_opset(b) >= 13, error);
}

/* The other reductions took their axes as an input from opset 18 on (ReduceSum from 13). */
#define REDUCE(fn, mxnet_op, np_op)                                                                \
  static gboolean fn(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)                     \
  {                                                                                                \
    return reduce(b, node, mxnet_op, np_op, ds_onnx_opset(b) >= 18, error);                        \
  }
REDUCE(translate_reduce_mean, "mean", "_npi_mean")
REDUCE(translate_reduce_max, "max", "_npi_max")
REDUCE(translate_reduce_min, "min", "_npi_min")
REDUCE(translate_reduce_prod, NULL, "_npi_prod")
REDUCE(translate_reduce_sum_square, NULL, "sum_square")
REDUCE(translate_reduce_l1, NULL, "l1_norm")
REDUCE(translate_reduce_l2, NULL, "l2_norm")
REDUCE(translate_reduce_log_sum, NULL, "log_sum")
REDUCE(translate_reduce_log_sum_exp, NULL, "log_sum_exp")

/* ArgMax, ArgMin: int64 indices along `axis` (0 by default); select_last_index from opset 12. */
static gboolean arg_reduce(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op, GError **error)
{
  DsEntry x;
  if (!ds_onnx_input(b, node, 0, &x, error))
    return FALSE;
  gint64 axis = ds_onnx_attr_int(node, "axis", 0);
  gboolean keepdims = ds_onnx_attr_int(node, "keepdims", 1) != 0;
  gboolean last = ds_onnx_attr_int(node, "select_last_index", 0) != 0;
  DsNode *n = ds_onnx_emit(
      b, node, op, NULL, &x, 1, error, "axis", ds_onnx_printf(b, "%" G_GINT64_FORMAT, axis),
      "keepdims", keepdims ? "True" : "False", "select_last_index", last ? "True" : "False", NULL);
  return n != NULL && ds_onnx_bind_outputs(b, node, n, error);
}

static gboolean translate_argmax(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return arg_reduce(b, node, "_npi_argmax", error);
}

static gboolean translate_argmin(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return arg_reduce(b, node, "_npi_argmin", error);
}

/* ---- Window functions ---------------------------------------------------------------------- */

/* Appends `op` on `in` as a helper node "<node>/<suffix>" with one attribute (or none). */
static gboolean helper(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op, const char *suffix,
                       const DsEntry *in, guint n_in, const char *key, const char *value,
                       DsEntry *out, GError **error)
{
  const char *keys[1] = {key}, *values[1] = {value};
  DsNode *n = ds_onnx_emitv(b, node, op, suffix, in, n_in, keys, values, key != NULL, error);
  if (n == NULL)
    return FALSE;
  *out = ds_onnx_entry(n, 0);
  return TRUE;
}

/* coef * cos(k * 2 pi * t) for the window's t = n / N. */
static gboolean window_term(DsOnnxBuilder *b, const DsOnnxNode *node, DsEntry t, int k, double coef,
                            DsEntry *out, GError **error)
{
  const char *tag = ds_onnx_printf(b, "cos%d", k);
  DsEntry angle, c;
  return helper(b, node, "_mul_scalar", ds_onnx_printf(b, "%s_angle", tag), &t, 1, "scalar",
                ds_onnx_fmt_float(b, 2.0 * k * G_PI), &angle, error) &&
         helper(b, node, "cos", tag, &angle, 1, NULL, NULL, &c, error) &&
         helper(b, node, "_mul_scalar", ds_onnx_printf(b, "%s_scaled", tag), &c, 1, "scalar",
                ds_onnx_fmt_float(b, coef), out, error);
}

/* HannWindow, HammingWindow, BlackmanWindow (opset 17): a0 + a1 cos(2 pi n / N) +
 * a2 cos(4 pi n / N) for n in [0, size), N = size (periodic) or size - 1. The size is a scalar
 * tensor, so the length is data: the positions come from _contrib_dynamic_arange. The window
 * is computed in float64 for a double output, else in float32 and cast (or rounded to half). */
static gboolean window(DsOnnxBuilder *b, const DsOnnxNode *node, double a0, double a1, double a2,
                       GError **error)
{
  gint64 out_type = ds_onnx_attr_int(node, "output_datatype", 1);
  DsDType out_dtype = ds_onnx_dtype((int)out_type);
  if (out_dtype == DS_DTYPE_UNKNOWN)
    return ds_onnx_unsupported(error, "windows of %s are not supported",
                               ds_onnx_elem_type_name((int)out_type));
  DsDType calc = out_dtype == DS_DTYPE_FLOAT64 ? DS_DTYPE_FLOAT64 : DS_DTYPE_FLOAT32;
  const char *calc_name = ds_dtype_name(calc);
  gboolean periodic = ds_onnx_attr_int(node, "periodic", 1) != 0;
  DsEntry range[3], n, size_f, denom, t, acc, term;
  if (!ds_onnx_input(b, node, 0, &range[1], error))
    return FALSE;
  range[0] = ds_onnx_add_scalar(b, "window_start", DS_DTYPE_INT64, 0.0, FALSE);
  range[2] = ds_onnx_add_scalar(b, "window_step", DS_DTYPE_INT64, 1.0, FALSE);
  if (!helper(b, node, "_contrib_dynamic_arange", "positions", range, 3, "dtype", calc_name, &n,
              error) ||
      !helper(b, node, "Cast", "length", &range[1], 1, "dtype", calc_name, &size_f, error))
    return FALSE;
  denom = size_f;
  if (!periodic &&
      !helper(b, node, "_minus_scalar", "length_minus_1", &size_f, 1, "scalar", "1", &denom, error))
    return FALSE;
  DsEntry pair[2] = {n, denom};
  if (!helper(b, node, "broadcast_div", "fraction", pair, 2, NULL, NULL, &t, error) ||
      !window_term(b, node, t, 1, a1, &term, error) ||
      !helper(b, node, "_plus_scalar", "first_terms", &term, 1, "scalar", ds_onnx_fmt_float(b, a0),
              &acc, error))
    return FALSE;
  if (a2 != 0.0) {
    DsEntry sum[2] = {acc, {0, 0, 0}};
    if (!window_term(b, node, t, 2, a2, &sum[1], error) ||
        !helper(b, node, "broadcast_add", "all_terms", sum, 2, NULL, NULL, &acc, error))
      return FALSE;
  }
  if (ds_dtype_is_storage_only(out_dtype))
    return ds_onnx_set_output_storage(b, node, 0, acc, out_dtype, error);
  DsNode *y =
      ds_onnx_emit(b, node, "Cast", NULL, &acc, 1, error, "dtype", ds_dtype_name(out_dtype), NULL);
  return y != NULL && ds_onnx_bind_outputs(b, node, y, error);
}

static gboolean translate_hann_window(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return window(b, node, 0.5, -0.5, 0.0, error);
}

static gboolean translate_hamming_window(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return window(b, node, 25.0 / 46.0, -21.0 / 46.0, 0.0, error);
}

static gboolean translate_blackman_window(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return window(b, node, 0.42, -0.5, 0.08, error);
}

/* ---- Det ----------------------------------------------------------------------------------- */

/* Det (opset 11) onto _linalg_det, whose result for a single matrix has MXNet's legacy shape
 * (1,) where ONNX's is a scalar: a rank-2 input reshapes it to (), and an input of a rank
 * unknown while importing reshapes it to the input's shape without its last two dims, read at
 * run time. */
static gboolean translate_det(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  const int rank = ds_onnx_input_rank(b, node, 0);
  if (rank >= 0 && rank < 2)
    return ds_onnx_invalid(error, "the input has rank %d, not a stack of matrices (..., n, n)",
                           rank);
  DsEntry x, in[2];
  if (!ds_onnx_input(b, node, 0, &x, error))
    return FALSE;
  if (rank > 2) {
    DsNode *y = ds_onnx_emit(b, node, "_linalg_det", NULL, &x, 1, error, NULL);
    return y != NULL && ds_onnx_bind_outputs(b, node, y, error);
  }
  if (!ds_onnx_emit1(b, node, "_linalg_det", "det", &x, 1, &in[0], error, NULL))
    return FALSE;
  DsNode *y;
  if (rank == 2) {
    y = ds_onnx_emit(b, node, "_np_reshape", NULL, in, 1, error, "newshape", "()", NULL);
  } else {
    if (!ds_onnx_emit1(b, node, "shape_array", "in_shape", &x, 1, &in[1], error, NULL) ||
        !ds_onnx_emit1(b, node, "slice", "batch_shape", &in[1], 1, &in[1], error, "begin",
                       "(0,)", "end", "(-2,)", NULL))
      return FALSE;
    y = ds_onnx_emit(b, node, "_contrib_dynamic_reshape", NULL, in, 2, error, NULL);
  }
  return y != NULL && ds_onnx_bind_outputs(b, node, y, error);
}

/* min_opset is the oldest opset whose form the translator handles (the importer reads opsets 7
 * to 17); an op unchanged since opset 1 or 6 says so. */
const DsOnnxOpTranslator ds_onnx_math_ops[] = {
    {"Relu", 6, translate_relu},
    {"Sigmoid", 6, translate_sigmoid},
    {"Tanh", 6, translate_tanh},
    {"Exp", 6, translate_exp},
    {"Log", 6, translate_log},
    {"Sqrt", 6, translate_sqrt},
    {"Abs", 6, translate_abs},
    {"Neg", 6, translate_neg},
    {"Reciprocal", 6, translate_reciprocal},
    {"Erf", 9, translate_erf},
    {"Identity", 1, translate_identity, 21},
    {"Floor", 6, translate_floor},
    {"Ceil", 6, translate_ceil},
    {"Round", 11, translate_round},
    {"Sign", 9, translate_sign},
    {"Sin", 7, translate_sin},
    {"Cos", 7, translate_cos},
    {"Tan", 7, translate_tan},
    {"Asin", 7, translate_asin},
    {"Acos", 7, translate_acos},
    {"Atan", 7, translate_atan},
    {"Sinh", 9, translate_sinh},
    {"Cosh", 9, translate_cosh},
    {"Asinh", 9, translate_asinh},
    {"Acosh", 9, translate_acosh},
    {"Atanh", 9, translate_atanh},
    {"IsNaN", 9, translate_isnan, 20},
    {"IsInf", 10, translate_isinf, 20},
    {"LeakyRelu", 6, translate_leaky_relu},
    {"Elu", 6, translate_elu},
    {"Selu", 6, translate_selu},
    {"Celu", 12, translate_celu},
    {"ThresholdedRelu", 10, translate_thresholded_relu},
    {"HardSigmoid", 6, translate_hard_sigmoid},
    {"HardSwish", 14, translate_hard_swish},
    {"Softplus", 1, translate_softplus},
    {"Mish", 18, translate_mish, 18},
    {"Gelu", 20, translate_gelu, 20},
    {"Softsign", 1, translate_softsign},
    {"Shrink", 9, translate_shrink},
    {"PRelu", 7, translate_prelu},
    {"Add", 7, translate_add},
    {"Sub", 7, translate_sub},
    {"Mul", 7, translate_mul},
    {"Div", 7, translate_div},
    {"Pow", 7, translate_pow},
    {"Mod", 10, translate_mod},
    {"BitShift", 11, translate_bit_shift},
    {"BitwiseAnd", 18, translate_bitwise_and, 18},
    {"BitwiseOr", 18, translate_bitwise_or, 18},
    {"BitwiseXor", 18, translate_bitwise_xor, 18},
    {"BitwiseNot", 18, translate_bitwise_not, 18},
    {"Max", 6, translate_max},
    {"Min", 6, translate_min},
    {"Sum", 6, translate_sum},
    {"Mean", 6, translate_mean},
    {"Equal", 7, translate_equal, 19},
    {"Greater", 7, translate_greater},
    {"Less", 7, translate_less},
    {"GreaterOrEqual", 12, translate_greater_equal},
    {"LessOrEqual", 12, translate_less_equal},
    {"And", 7, translate_and},
    {"Or", 7, translate_or},
    {"Xor", 7, translate_xor},
    {"Not", 1, translate_not},
    {"Where", 9, translate_where},
    {"Clip", 6, translate_clip},
    {"Cast", 6, translate_cast, 21},
    {"CastLike", 15, translate_cast_like, 21},
    {"ReduceSum", 1, translate_reduce_sum},
    {"ReduceMean", 1, translate_reduce_mean, 18},
    {"ReduceMax", 1, translate_reduce_max, 20},
    {"ReduceMin", 1, translate_reduce_min, 20},
    {"ReduceProd", 1, translate_reduce_prod, 18},
    {"ReduceSumSquare", 1, translate_reduce_sum_square, 18},
    {"ReduceL1", 1, translate_reduce_l1, 18},
    {"ReduceL2", 1, translate_reduce_l2, 18},
    {"ReduceLogSum", 1, translate_reduce_log_sum, 18},
    {"ReduceLogSumExp", 1, translate_reduce_log_sum_exp, 18},
    {"ArgMax", 1, translate_argmax},
    {"ArgMin", 1, translate_argmin},
    {"HannWindow", 17, translate_hann_window},
    {"HammingWindow", 17, translate_hamming_window},
    {"BlackmanWindow", 17, translate_blackman_window},
    {"Det", 11, translate_det},
    {NULL, 0, NULL},
};
