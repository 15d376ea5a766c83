/* test-ops-index.c: repeat, tile, reverse, stack, SliceChannel, slice_like, argsort,
 * gather_nd, shape_array and size_array: attribute parsing (including every spelling the
 * detection models use), shape and dtype rules on concrete and symbolic dims, and the CPU
 * kernels (looked up through the backend's table) against reference loops written here, on
 * random data. */
#include <cjson/cJSON.h>
#include <glib.h>
#include <math.h>
#include <string.h>

#include "ds-cpu.h"
#include "ds-error.h"
#include "ds-expr.h"
#include "ds-op.h"
#include "ds-ops-common.h"
#include "ds-test-ops.h"

/* ---- node and shape helpers ---- */

/* One-input, one-output op: the output shape for input `in`, or "error: <message>". */
static char *unary_shape(DsNode *n, const char *in)
{
  DsShape s_in[1] = {shp(in)}, s_out[1] = {DS_SHAPE_UNKNOWN};
  char *msg = infer(n, s_in, s_out);
  if (msg != NULL) {
    char *r = g_strdup_printf("error: %s", msg);
    g_free(msg);
    return r;
  }
  return ds_shape_to_string(&s_out[0]);
}

/* Checks a one-input op's output shape; a `want` starting with "error" expects an error whose
 * message contains the rest of `want` after "error:" (if anything). */
static void check_unary_shape(const char *op_name, const char *in, const char *want, ...)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  va_list args;
  va_start(args, want);
  GError *error = NULL;
  DsNode *n = make_node_v(g, op_name, 1, &error, args);
  va_end(args);
  g_assert_no_error(error);
  g_autofree char *got = unary_shape(n, in);
  if (g_str_has_prefix(want, "error")) {
    if (!g_str_has_prefix(got, "error: node 'node0'"))
      g_error("%s on %s: got %s, want an error", op_name, in, got);
    if (want[5] == ':' && strstr(got, want + 6) == NULL)
      g_error("%s on %s: '%s' does not mention '%s'", op_name, in, got, want + 6);
  } else if (strcmp(got, want) != 0) {
    g_error("%s on %s: got %s, want %s", op_name, in, got, want);
  }
}

/* ---- tensor helpers ---- */

static void unravel(const int64_t *shape, int ndim, int64_t flat, int64_t *idx)
{
  for (int d = ndim - 1; d >= 0; d--) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
}

static int64_t ravel(const int64_t *shape, int ndim, const int64_t *idx)
{
  int64_t off = 0;
  for (int d = 0; d < ndim; d++)
    off = off * shape[d] + idx[d];
  return off;
}

/* The output tensors the node's rule gives for the inputs' shapes, in dtype `t`. */
static void outputs_for(DsNode *n, const DsTensor *in, int n_in, DsTensor *out, int n_out,
                        DsDType t)
{
  DsShape s_in[8], s_out[16];
  g_assert_cmpint(n_in, <=, 8);
  g_assert_cmpint(n_out, <=, 16);
  for (int k = 0; k < n_in; k++) {
    s_in[k].ndim = in[k].ndim;
    for (int d = 0; d < in[k].ndim; d++)
      s_in[k].dims[d] = ds_dim(in[k].shape[d]);
  }
  for (int k = 0; k < n_out; k++)
    s_out[k] = DS_SHAPE_UNKNOWN;
  g_autofree char *msg = infer(n, s_in, s_out);
  if (msg != NULL)
    g_error("%s", msg);
  for (int k = 0; k < n_out; k++) {
    int64_t dims[DS_MAX_NDIM];
    g_assert_true(ds_shape_get_concrete(&s_out[k], dims));
    out[k] = tensor_dims(t, s_out[k].ndim, dims);
  }
}

static DsTensor output_for(DsNode *n, const DsTensor *in, int n_in, DsDType t)
{
  DsTensor out;
  outputs_for(n, in, n_in, &out, 1, t);
  return out;
}

static const DsDType move_types[] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT64, DS_DTYPE_FLOAT16,
                                     DS_DTYPE_INT32,   DS_DTYPE_INT64,   DS_DTYPE_INT8,
                                     DS_DTYPE_UINT8,   DS_DTYPE_BOOL};

/* A shape given as a count and dims, for case tables. */
typedef struct {
  int nd;
  int64_t dims[DS_MAX_NDIM];
} Dims;

/* ================================ shape rules ================================ */

static void test_shape_repeat(void)
{
  check_unary_shape("repeat", "(2, 3)", "(12,)", "repeats", "2", NULL);
  check_unary_shape("repeat", "(2, 3)", "(2, 6)", "repeats", "2", "axis", "1", NULL);
  check_unary_shape("repeat", "(2, 3)", "(2, 6)", "repeats", "2", "axis", "-1", NULL);
  check_unary_shape("repeat", "(2, 3)", "(4, 3)", "repeats", "2", "axis", "-2", NULL);
  check_unary_shape("repeat", "(2, 3)", "(6,)", "repeats", "1", "axis", "None", NULL);
  check_unary_shape("repeat", "(1,)", "(1000,)", "repeats", "1000", NULL); /* mask_rcnn */
  check_unary_shape("repeat", "(1000, 4)", "(1000, 16)", "repeats", "4", "axis", "-1", NULL);
  check_unary_shape("repeat", "()", "(3,)", "repeats", "3", NULL);
  check_unary_shape("repeat", "(2, 3)", "(0,)", "repeats", "0", "axis", "1", NULL);
  check_unary_shape("repeat", "?", "(0,)", "repeats", "0", NULL);
  check_unary_shape("repeat", "?", "?", "repeats", "2", NULL);
  check_unary_shape("repeat", "(0, 3)", "(0, 3)", "repeats", "5", "axis", "0", NULL);
  check_unary_shape("repeat", "(?, 3)", "(?, 6)", "repeats", "2", "axis", "1", NULL);
  check_unary_shape("repeat", "(?, 3)", "(?,)", "repeats", "2", NULL);
  check_unary_shape("repeat", "(2, 3)", "error:axis 2", "repeats", "2", "axis", "2", NULL);
  check_unary_shape("repeat", "(2, 3)", "error", "repeats", "2", "axis", "-3", NULL);
  check_unary_shape("repeat", "()", "error", "repeats", "2", "axis", "0", NULL);
  g_autofree char *m1 = parse_error("repeat", 1, "repeats", "-1", NULL);
  g_assert_nonnull(strstr(m1, "repeats='-1'"));
  g_autofree char *m2 = parse_error("repeat", 1, "axis", "0", NULL);
  g_assert_nonnull(strstr(m2, "'repeats' is missing"));

  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "repeat", 1, "repeats", "1000", NULL);
  const DsRepeatParam *p = n->param;
  g_assert_cmpint(p->repeats, ==, 1000);
  g_assert_false(p->has_axis);

  /* Symbolic: the repeated axis is a product; without an axis, the size times repeats. */
  Sym s = sym_new();
  DsNode *ax = make_node(g, "repeat", 1, "repeats", "2", "axis", "0", NULL);
  DsShape in[1] = {sym_shp(s.exprs, "(s0, 3)")}, out[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, ax, in, out));
  assert_shape(&out[0], "(2*s0, 3)");
  DsNode *flat = make_node(g, "repeat", 1, "repeats", "2", NULL);
  DsShape out2[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, flat, in, out2));
  assert_shape(&out2[0], "(6*s0,)");
  sym_free(&s);
}

static void test_shape_tile(void)
{
  check_unary_shape("tile", "(2, 3)", "(4, 9)", "reps", "(2, 3)", NULL);
  check_unary_shape("tile", "(2, 3)", "(2, 6)", "reps", "(2,)", NULL);
  check_unary_shape("tile", "(2, 3)", "(2, 4, 9)", "reps", "(2, 2, 3)", NULL);
  check_unary_shape("tile", "(3,)", "(2, 12)", "reps", "(2, 4)", NULL);
  check_unary_shape("tile", "(1000,)", "(1000,)", "reps", "1", NULL); /* mask_rcnn */
  check_unary_shape("tile", "(1, 2)", "(1, 4)", "reps", "(2,)", NULL);
  check_unary_shape("tile", "(2, 3)", "(2, 3)", "reps", "()", NULL);
  check_unary_shape("tile", "()", "(2, 3)", "reps", "(2, 3)", NULL);
  check_unary_shape("tile", "(2, 3)", "(0, 6)", "reps", "(0, 2)", NULL);
  check_unary_shape("tile", "(0, 3)", "(0, 6)", "reps", "(4, 2)", NULL);
  check_unary_shape("tile", "(?, 3)", "(?, 6)", "reps", "(3, 2)", NULL);
  check_unary_shape("tile", "?", "?", "reps", "(3, 2)", NULL);
  g_autofree char *m1 = parse_error("tile", 1, "reps", "(2, -1)", NULL);
  g_assert_nonnull(strstr(m1, "reps"));
  g_autofree char *m2 = parse_error("tile", 1, NULL);
  g_assert_nonnull(strstr(m2, "'reps' is missing"));
  g_autofree char *m3 = parse_error("tile", 1, "reps", "(1, 1, 1, 1, 1, 1, 1, 1, 1)", NULL);
  g_assert_nonnull(strstr(m3, "reps"));

  Sym s = sym_new();
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "tile", 1, "reps", "(3, 1)", NULL);
  DsShape in[1] = {sym_shp(s.exprs, "(s0, 4)")}, out[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, n, in, out));
  assert_shape(&out[0], "(3*s0, 4)");
  DsNode *m = make_node(g, "tile", 1, "reps", "(2, 1, 1)", NULL);
  DsShape out2[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, m, in, out2));
  assert_shape(&out2[0], "(2, s0, 4)");
  sym_free(&s);
}

static void test_shape_reverse(void)
{
  check_unary_shape("reverse", "(2, 3)", "(2, 3)", "axis", "1", NULL); /* mask_rcnn */
  check_unary_shape("flip", "(2, 3, 4)", "(2, 3, 4)", "axis", "(0, 2)", NULL);
  check_unary_shape("reverse", "(2, 3)", "(2, 3)", "axis", "(-1, -2)", NULL);
  check_unary_shape("reverse", "(2, 3)", "(2, 3)", "axis", "(1, 1)", NULL);
  check_unary_shape("reverse", "(0, 3)", "(0, 3)", "axis", "0", NULL);
  check_unary_shape("reverse", "(2, 3)", "error:axis 2", "axis", "2", NULL);
  check_unary_shape("reverse", "(2, 3)", "error", "axis", "-3", NULL);
  g_autofree char *m1 = parse_error("reverse", 1, NULL);
  g_assert_nonnull(strstr(m1, "'axis' is missing"));
  /* Elementwise in both directions: a known output gives the input. */
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "reverse", 1, "axis", "0", NULL);
  DsShape in[1] = {DS_SHAPE_UNKNOWN}, out[1] = {shp("(5, 7)")};
  g_assert_null(infer(n, in, out));
  assert_shape(&in[0], "(5, 7)");
  DsShape in2[1] = {shp("(5, 7)")}, out2[1] = {shp("(5, 8)")};
  g_autofree char *msg = infer(n, in2, out2);
  g_assert_nonnull(msg);
}

static void test_shape_stack(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  static const struct {
    const char *axis, *want;
  } cases[] = {
      {"0", "(2, 2, 3)"},  {"1", "(2, 2, 3)"}, {"2", "(2, 3, 2)"}, {"-1", "(2, 3, 2)"},
      {"-3", "(2, 2, 3)"}, {"3", "error"},     {"-4", "error"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    DsNode *n = make_node(g, "stack", 2, "axis", cases[i].axis, "num_args", "2", NULL);
    g_assert_cmpint(n->op->num_inputs(n->param), ==, 2);
    DsShape in[2] = {shp("(2, 3)"), shp("(2, 3)")}, out[1] = {DS_SHAPE_UNKNOWN};
    g_autofree char *msg = infer(n, in, out);
    if (strcmp(cases[i].want, "error") == 0) {
      g_assert_nonnull(msg);
      continue;
    }
    g_assert_null(msg);
    assert_shape(&out[0], cases[i].want);
  }
  /* The default axis is 0; inputs fill each other and the output fills the inputs. */
  DsNode *n = make_node(g, "stack", 3, "num_args", "3", NULL);
  g_assert_cmpint(((DsStackParam *)n->param)->axis, ==, 0);
  DsShape in[3] = {shp("(?, 4)"), shp("(1000, ?)"), DS_SHAPE_UNKNOWN}, out[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(n, in, out));
  assert_shape(&out[0], "(3, 1000, 4)");
  assert_shape(&in[0], "(1000, 4)");
  assert_shape(&in[2], "(1000, 4)");
  DsShape in2[3] = {DS_SHAPE_UNKNOWN, DS_SHAPE_UNKNOWN, DS_SHAPE_UNKNOWN},
          out2[1] = {shp("(3, 7, 2)")};
  g_assert_null(infer(n, in2, out2));
  assert_shape(&in2[1], "(7, 2)");
  DsShape in3[3] = {DS_SHAPE_UNKNOWN, DS_SHAPE_UNKNOWN, DS_SHAPE_UNKNOWN},
          out3[1] = {shp("(2, 7, 2)")};
  g_autofree char *m0 = infer(n, in3, out3);
  g_assert_nonnull(m0);
  /* Errors name the input that disagrees and both sizes. */
  DsNode *two = make_node(g, "stack", 2, "num_args", "2", NULL);
  DsShape in4[2] = {shp("(2, 3)"), shp("(2, 5)")}, out4[1] = {DS_SHAPE_UNKNOWN};
  g_autofree char *m1 = infer(two, in4, out4);
  g_assert_nonnull(m1);
  g_assert_nonnull(strstr(m1, "arg1"));
  g_assert_nonnull(strstr(m1, "5"));
  DsShape in5[2] = {shp("(2, 3)"), shp("(2, 3, 1)")}, out5[1] = {DS_SHAPE_UNKNOWN};
  g_autofree char *m2 = infer(two, in5, out5);
  g_assert_nonnull(strstr(m2, "rank"));
  DsNode *one = make_node(g, "stack", 1, "axis", "0", "num_args", "1", NULL);
  DsShape in6[1] = {shp("(1000,)")}, out6[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(one, in6, out6));
  assert_shape(&out6[0], "(1, 1000)");
  g_autofree char *m3 = parse_error("stack", 2, "axis", "0", NULL);
  g_assert_nonnull(strstr(m3, "num_args"));
  g_autofree char *m4 = parse_error("stack", 0, "num_args", "0", NULL);
  g_assert_nonnull(strstr(m4, "num_args"));

  /* Symbolic: one input's symbol fills the other. */
  Sym s = sym_new();
  DsShape in7[2] = {sym_shp(s.exprs, "(s0, 4)"), sym_shp(s.exprs, "(?, 4)")},
          out7[1] = {DS_SHAPE_UNKNOWN};
  DsNode *last = make_node(g, "stack", 2, "axis", "-1", "num_args", "2", NULL);
  g_assert_null(infer_in(s.ctx, last, in7, out7));
  assert_shape(&out7[0], "(s0, 4, 2)");
  assert_shape(&in7[1], "(s0, 4)");
  sym_free(&s);
}

/* Runs SliceChannel's rule with `n` output slots as given; the error, or NULL. */
static char *split_shapes(DsNode *n, DsShape *in, DsShape *out, DsShapeCtx *ctx)
{
  return infer_in(ctx, n, in, out);
}

static void test_shape_slice_channel(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "SliceChannel", 1, "num_outputs", "3", NULL);
  const DsSliceChannelParam *p = n->param;
  g_assert_cmpint(p->axis, ==, 1);
  g_assert_false(p->squeeze_axis);
  g_assert_cmpint(n->op->num_outputs(n->param), ==, 3);
  g_assert_cmpint(n->op->num_visible_outputs(n->param), ==, 3);
  DsShape in[1] = {shp("(4, 6)")}, out[3] = {DS_SHAPE_UNKNOWN, DS_SHAPE_UNKNOWN, DS_SHAPE_UNKNOWN};
  g_assert_null(split_shapes(n, in, out, NULL));
  for (int k = 0; k < 3; k++)
    assert_shape(&out[k], "(4, 2)");

  /* The detection models' spellings. */
  DsNode *last = make_node(g, "SliceChannel", 1, "axis", "-1", "num_outputs", "4", NULL);
  DsShape in2[1] = {shp("(1, 1000, 4)")}, out2[4];
  for (int k = 0; k < 4; k++)
    out2[k] = DS_SHAPE_UNKNOWN;
  g_assert_null(split_shapes(last, in2, out2, NULL));
  assert_shape(&out2[3], "(1, 1000, 1)");
  DsNode *sq =
      make_node(g, "split", 1, "axis", "0", "num_outputs", "1", "squeeze_axis", "True", NULL);
  DsShape in3[1] = {shp("(1, 1000, 4)")}, out3[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(split_shapes(sq, in3, out3, NULL));
  assert_shape(&out3[0], "(1000, 4)");
  DsNode *nosq = make_node(g, "SliceChannel", 1, "axis", "0", "num_outputs", "1", "squeeze_axis",
                           "False", NULL);
  DsShape in4[1] = {shp("(1, 1000, 4)")}, out4[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(split_shapes(nosq, in4, out4, NULL));
  assert_shape(&out4[0], "(1, 1000, 4)");

  /* Backwards, as MXNet's rule does: one known output gives the data. */
  DsShape in5[1] = {DS_SHAPE_UNKNOWN},
          out5[3] = {DS_SHAPE_UNKNOWN, shp("(2, 5)"), DS_SHAPE_UNKNOWN};
  g_assert_null(split_shapes(n, in5, out5, NULL));
  assert_shape(&in5[0], "(2, 15)");
  assert_shape(&out5[0], "(2, 5)");
  DsShape in6[1] = {shp("(?, ?, 4)")}, out6[1] = {shp("(7, ?)")};
  g_assert_null(split_shapes(sq, in6, out6, NULL));
  assert_shape(&in6[0], "(1, 7, 4)");
  assert_shape(&out6[0], "(7, 4)");

  /* Errors name the sizes. */
  DsNode *four = make_node(g, "SliceChannel", 1, "axis", "1", "num_outputs", "4", NULL);
  DsShape in7[1] = {shp("(4, 6)")}, out7[4];
  for (int k = 0; k < 4; k++)
    out7[k] = DS_SHAPE_UNKNOWN;
  g_autofree char *m1 = split_shapes(four, in7, out7, NULL);
  g_assert_nonnull(strstr(m1, "6 is not a multiple of 4"));
  DsShape in8[1] = {shp("(2, 1000, 4)")}, out8[1] = {DS_SHAPE_UNKNOWN};
  g_autofree char *m2 = split_shapes(sq, in8, out8, NULL);
  g_assert_nonnull(strstr(m2, "squeeze_axis"));
  DsShape in9[1] = {shp("(4, 6)")}, out9[3] = {DS_SHAPE_UNKNOWN, shp("(4, 3)"), DS_SHAPE_UNKNOWN};
  g_autofree char *m3 = split_shapes(n, in9, out9, NULL);
  g_assert_nonnull(m3);
  DsNode *far = make_node(g, "SliceChannel", 1, "axis", "2", "num_outputs", "2", NULL);
  DsShape in10[1] = {shp("(4, 6)")}, out10[2] = {DS_SHAPE_UNKNOWN, DS_SHAPE_UNKNOWN};
  g_autofree char *m4 = split_shapes(far, in10, out10, NULL);
  g_assert_nonnull(m4);
  g_autofree char *m5 = parse_error("SliceChannel", 1, "axis", "1", NULL);
  g_assert_nonnull(strstr(m5, "num_outputs"));
  g_autofree char *m6 = parse_error("split", 1, "num_outputs", "0", NULL);
  g_assert_nonnull(strstr(m6, "num_outputs"));

  /* Symbolic: a provable multiple divides; a bare symbol does not. */
  Sym s = sym_new();
  DsShape in11[1] = {sym_shp(s.exprs, "(s0, 8)")}, out11[4];
  for (int k = 0; k < 4; k++)
    out11[k] = DS_SHAPE_UNKNOWN;
  g_assert_null(split_shapes(last, in11, out11, s.ctx));
  assert_shape(&out11[2], "(s0, 2)");
  DsNode *rows = make_node(g, "SliceChannel", 1, "axis", "0", "num_outputs", "2", NULL);
  DsShape in12[1] = {sym_shp(s.exprs, "(2*s1, 3)")},
          out12[2] = {DS_SHAPE_UNKNOWN, DS_SHAPE_UNKNOWN};
  g_assert_null(split_shapes(rows, in12, out12, s.ctx));
  assert_shape(&out12[1], "(s1, 3)");
  DsShape in13[1] = {sym_shp(s.exprs, "(s2, 3)")}, out13[2] = {DS_SHAPE_UNKNOWN, DS_SHAPE_UNKNOWN};
  g_autofree char *m7 = split_shapes(rows, in13, out13, s.ctx);
  g_assert_nonnull(strstr(m7, "not provably a multiple of 2"));
  /* Backwards from a symbolic output. */
  DsShape in14[1] = {DS_SHAPE_UNKNOWN}, out14[2] = {sym_shp(s.exprs, "(s3, 3)"), DS_SHAPE_UNKNOWN};
  g_assert_null(split_shapes(rows, in14, out14, s.ctx));
  assert_shape(&in14[0], "(2*s3, 3)");
  sym_free(&s);
}

static void test_shape_slice_like(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  static const struct {
    const char *axes, *data, *like, *want;
  } cases[] = {
      {NULL, "(4, 5, 6)", "(2, 3, 4)", "(2, 3, 4)"},
      {"()", "(3, 4)", "(2, 3)", "(2, 3)"},
      {"(2, 3)", "(1, 9, 128, 128)", "(1, 256, 32, 40)", "(1, 9, 32, 40)"}, /* the models */
      {"(0,)", "(4, 5, 6)", "(2,)", "(2, 5, 6)"},
      {"0", "(3, 4)", "(2, 3)", "(2, 4)"},
      {"(-1,)", "(3, 4)", "(2, 3)", "(3, 3)"},
      {"(0, -1)", "(3, 4)", "(3, 4)", "(3, 4)"},
      {"(1, 1)", "(3, 4)", "(3, 0)", "(3, 0)"},
      {NULL, "(0, 4)", "(0, 2)", "(0, 2)"},
      {"(2, 3)", "(1, 9, ?, 128)", "(1, 9, 8, ?)", "(1, 9, 8, ?)"},
      {NULL, "(4, 5, 6)", "(2, 3)", "error:same rank"},
      {NULL, "(4, 5)", "(2, 6)", "error:larger than the data"},
      {"(1,)", "(4, 5)", "(9,)", "error:past the last axis"},
      {"(2,)", "(4, 5)", "(4, 5)", "error"},
      {"(-3,)", "(4, 5)", "(4, 5)", "error"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    DsNode *n = cases[i].axes != NULL ? make_node(g, "slice_like", 2, "axes", cases[i].axes, NULL)
                                      : make_node(g, "slice_like", 2, NULL);
    DsShape in[2] = {shp(cases[i].data), shp(cases[i].like)}, out[1] = {DS_SHAPE_UNKNOWN};
    g_autofree char *msg = infer(n, in, out);
    if (g_str_has_prefix(cases[i].want, "error")) {
      if (msg == NULL)
        g_error("slice_like %s like %s: no error", cases[i].data, cases[i].like);
      if (cases[i].want[5] == ':')
        g_assert_nonnull(strstr(msg, cases[i].want + 6));
      continue;
    }
    if (msg != NULL)
      g_error("slice_like %s like %s: %s", cases[i].data, cases[i].like, msg);
    assert_shape(&out[0], cases[i].want);
  }
  /* Unknown ranks leave the output unknown. */
  DsNode *n = make_node(g, "slice_like", 2, "axes", "(2, 3)", NULL);
  DsShape in[2] = {shp("(1, 2, 3, 4)"), DS_SHAPE_UNKNOWN}, out[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(n, in, out));
  g_assert_cmpint(out[0].ndim, ==, -1);

  /* Symbolic: the output takes shape_like's dims; a size the facts cannot order becomes a
   * guard, one they prove too large is an error. */
  Sym s = sym_new();
  DsShape in2[2] = {shp("(1, 2, 64, 64)"), sym_shp(s.exprs, "(1, 5, s0, s1)")},
          out2[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, n, in2, out2));
  assert_shape(&out2[0], "(1, 2, s0, s1)");
  g_assert_cmpuint(ds_shape_ctx_get_guards(s.ctx)->len, ==, 2);
  GError *error = NULL;
  g_assert_true(ds_expr_ctx_assume(s.exprs, "s0 >= 100", &error));
  DsShape in3[2] = {shp("(1, 2, 64, 64)"), sym_shp(s.exprs, "(1, 5, s0, s1)")},
          out3[1] = {DS_SHAPE_UNKNOWN};
  g_autofree char *msg = infer_in(s.ctx, n, in3, out3);
  g_assert_nonnull(strstr(msg, "larger than the data"));
  sym_free(&s);

  /* The data and the output share a dtype; shape_like may have any. */
  DsDType t_in[2] = {DS_DTYPE_FLOAT32, DS_DTYPE_INT64}, t_out[1] = {DS_DTYPE_UNKNOWN};
  g_assert_true(n->op->infer_type(n, n->param, t_in, t_out, &error));
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_FLOAT32);
  g_assert_cmpint(t_in[1], ==, DS_DTYPE_INT64);
}

static void test_shape_argsort(void)
{
  check_unary_shape("argsort", "(3, 4)", "(3, 4)", NULL);
  check_unary_shape("argsort", "(1, 1000)", "(1, 1000)", "axis", "1", "is_ascend", "False", NULL);
  check_unary_shape("argsort", "(3, 4)", "(3, 4)", "axis", "-2", NULL);
  check_unary_shape("argsort", "(3, 4)", "(12,)", "axis", "None", NULL);
  check_unary_shape("argsort", "()", "(1,)", NULL);
  check_unary_shape("argsort", "(0, 4)", "(0, 4)", NULL);
  check_unary_shape("argsort", "(?, 4)", "(?,)", "axis", "None", NULL);
  check_unary_shape("argsort", "(3, 4)", "error:axis 2", "axis", "2", NULL);
  check_unary_shape("argsort", "(2, 300)", "error:uint8", "dtype", "uint8", NULL);
  check_unary_shape("argsort", "(2, 256)", "(2, 256)", "dtype", "uint8", NULL);
  g_autofree char *m1 = parse_error("argsort", 1, "dtype", "float16", NULL);
  g_assert_nonnull(strstr(m1, "dtype"));
  g_autofree char *m2 = parse_error("argsort", 1, "dtype", "int8", NULL);
  g_assert_nonnull(strstr(m2, "dtype"));
  g_autofree char *m3 = parse_error("argsort", 1, "is_ascend", "maybe", NULL);
  g_assert_nonnull(strstr(m3, "is_ascend"));

  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "argsort", 1, NULL);
  const DsArgsortParam *p = n->param;
  g_assert_true(p->has_axis);
  g_assert_cmpint(p->axis, ==, -1);
  g_assert_true(p->is_ascend);
  g_assert_cmpint(p->dtype, ==, DS_DTYPE_FLOAT32);
  /* The indices' dtype is the attribute's, whatever the data's. */
  GError *error = NULL;
  DsDType t_in[1] = {DS_DTYPE_INT32}, t_out[1] = {DS_DTYPE_UNKNOWN};
  g_assert_true(n->op->infer_type(n, n->param, t_in, t_out, &error));
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_FLOAT32);
  DsNode *i64 = make_node(g, "argsort", 1, "dtype", "int64", NULL);
  t_out[0] = DS_DTYPE_UNKNOWN;
  g_assert_true(i64->op->infer_type(i64, i64->param, t_in, t_out, &error));
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_INT64);
  t_out[0] = DS_DTYPE_FLOAT64;
  g_assert_false(i64->op->infer_type(i64, i64->param, t_in, t_out, &error));
  g_assert_nonnull(strstr(error->message, "node 'node0'"));
  g_clear_error(&error);

  Sym s = sym_new();
  DsShape in[1] = {sym_shp(s.exprs, "(s0, 7)")}, out[1] = {DS_SHAPE_UNKNOWN};
  DsNode *flat = make_node(g, "argsort", 1, "axis", "None", NULL);
  g_assert_null(infer_in(s.ctx, flat, in, out));
  assert_shape(&out[0], "(7*s0,)");
  sym_free(&s);
}

static void test_shape_gather_nd(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "gather_nd", 2, NULL);
  g_assert_null(n->param);
  g_assert_cmpint(n->op->num_inputs(n->param), ==, 2);
  char buf[16];
  g_assert_cmpstr(ds_op_input_name(n->op, 2, 1, buf), ==, "indices");
  static const struct {
    const char *data, *idx, *want;
  } cases[] = {
      {"(3, 4, 5)", "(2, 6)", "(6, 5)"},
      {"(3, 4, 5)", "(1, 2, 3)", "(2, 3, 4, 5)"},
      {"(3, 4, 5)", "(3, 7)", "(7,)"},
      {"(1, 1000, 4)", "(2, 1000)", "(1000, 4)"}, /* mask_rcnn */
      {"(3, 4, 5)", "(2, 0)", "(0, 5)"},
      {"(3, ?, 5)", "(2, ?)", "(?, 5)"},
      {"(3, 4, 5)", "(?, 6)", "?"},
      {"?", "(2, 6)", "?"},
      {"(3, 4, 5)", "(4, 2)", "error:index 4 axes"},
      {"(3, 4, 5)", "(0, 2)", "error"},
      {"(3, 4, 5)", "(6,)", "error:at least 2 dims"},
      {"(2, 2, 2, 2, 2, 2)", "(1, 2, 2, 2, 2)", "error:more than"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    DsShape in[2] = {shp(cases[i].data), shp(cases[i].idx)}, out[1] = {DS_SHAPE_UNKNOWN};
    g_autofree char *msg = infer(n, in, out);
    if (g_str_has_prefix(cases[i].want, "error")) {
      if (msg == NULL)
        g_error("gather_nd %s by %s: no error", cases[i].data, cases[i].idx);
      if (cases[i].want[5] == ':')
        g_assert_nonnull(strstr(msg, cases[i].want + 6));
      continue;
    }
    if (msg != NULL)
      g_error("gather_nd %s by %s: %s", cases[i].data, cases[i].idx, msg);
    assert_shape(&out[0], cases[i].want);
  }
  /* Symbolic positions and data dims flow through; a symbolic M leaves the rank open. */
  Sym s = sym_new();
  DsShape in[2] = {sym_shp(s.exprs, "(s0, 4, 5)"), sym_shp(s.exprs, "(2, s1)")},
          out[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, n, in, out));
  assert_shape(&out[0], "(s1, 5)");
  DsShape in2[2] = {sym_shp(s.exprs, "(s0, 4, 5)"), sym_shp(s.exprs, "(s2, 3)")},
          out2[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, n, in2, out2));
  g_assert_cmpint(out2[0].ndim, ==, -1);
  sym_free(&s);
  /* Data and output share a dtype; indices may be floats or integers. */
  GError *error = NULL;
  DsDType t_in[2] = {DS_DTYPE_FLOAT32, DS_DTYPE_INT32}, t_out[1] = {DS_DTYPE_UNKNOWN};
  g_assert_true(n->op->infer_type(n, n->param, t_in, t_out, &error));
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_FLOAT32);
  g_assert_cmpint(t_in[1], ==, DS_DTYPE_INT32);
}

static void test_shape_shape_size_array(void)
{
  check_unary_shape("shape_array", "(2, 3, 4)", "(3,)", NULL);
  check_unary_shape("shape_array", "(0, 3)", "(2,)", NULL);
  check_unary_shape("shape_array", "(?, ?)", "(2,)", NULL);
  check_unary_shape("shape_array", "?", "?", NULL);
  check_unary_shape("size_array", "(2, 3, 4)", "(1,)", NULL);
  check_unary_shape("size_array", "?", "(1,)", NULL);
  g_autoptr(DsGraph) g = ds_graph_new();
  for (int k = 0; k < 2; k++) {
    DsNode *n = make_node(g, k == 0 ? "shape_array" : "size_array", 1, NULL);
    GError *error = NULL;
    DsDType t_in[1] = {DS_DTYPE_FLOAT32}, t_out[1] = {DS_DTYPE_UNKNOWN};
    g_assert_true(n->op->infer_type(n, n->param, t_in, t_out, &error));
    g_assert_cmpint(t_out[0], ==, DS_DTYPE_INT64);
    g_assert_cmpint(t_in[0], ==, DS_DTYPE_FLOAT32);
  }
  /* Symbolic dims are the output's values, not its shape. */
  Sym s = sym_new();
  DsNode *n = make_node(g, "shape_array", 1, NULL);
  DsShape in[1] = {sym_shp(s.exprs, "(s0, 3, 2*s1)")}, out[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, n, in, out));
  assert_shape(&out[0], "(3,)");
  sym_free(&s);
}

static void test_aliases_and_registration(void)
{
  static const struct {
    const char *name;
    DsOpId id;
  } cases[] = {
      {"repeat", DS_OP_REPEAT},
      {"tile", DS_OP_TILE},
      {"reverse", DS_OP_REVERSE},
      {"flip", DS_OP_REVERSE},
      {"stack", DS_OP_STACK},
      {"SliceChannel", DS_OP_SLICE_CHANNEL},
      {"split", DS_OP_SLICE_CHANNEL},
      {"slice_like", DS_OP_SLICE_LIKE},
      {"argsort", DS_OP_ARGSORT},
      {"gather_nd", DS_OP_GATHER_ND},
      {"shape_array", DS_OP_SHAPE_ARRAY},
      {"size_array", DS_OP_SIZE_ARRAY},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    const DsOpDef *op = ds_op_lookup(cases[i].name);
    g_assert_nonnull(op);
    g_assert_cmpint(op->id, ==, cases[i].id);
    g_assert_nonnull(ds_cpu_backend_get()->get_kernel(cases[i].id));
  }
  for (int id = DS_OP_REPEAT; id <= DS_OP_SIZE_ARRAY; id++) {
    g_assert_nonnull(ds_op_get((DsOpId)id));
    g_assert_nonnull(ds_cpu_backend_get()->get_kernel((DsOpId)id));
  }
  char buf[16];
  g_assert_cmpstr(ds_op_input_name(ds_op_get(DS_OP_SLICE_LIKE), 2, 1, buf), ==, "shape_like");
  g_assert_cmpstr(ds_op_input_name(ds_op_get(DS_OP_STACK), 3, 2, buf), ==, "arg2");
  g_assert_null(ds_op_get(DS_OP_SLICE_CHANNEL)->output_names);
}

/* Every node of the detection models whose op is in this family parses, with the input count
 * its attributes call for and the output count the file gives it. */
static void test_model_attributes(void)
{
  const char *shared = g_getenv("DS_SHARED_DIR");
  if (shared == NULL) {
    g_test_skip("DS_SHARED_DIR is not set");
    return;
  }
  static const char *const files[] = {
      "gluoncv_ssd_512_resnet50_v1-symbol.json",
      "gluoncv_mask_rcnn_resnet18_v1b_coco-symbol.json",
  };
  for (guint f = 0; f < G_N_ELEMENTS(files); f++) {
    g_autofree char *path = g_build_filename(shared, "models", "mxnet", files[f], NULL);
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL)) {
      g_test_skip("model files are not available");
      return;
    }
    cJSON *root = cJSON_Parse(text);
    g_assert_nonnull(root);
    const cJSON *nodes = cJSON_GetObjectItem(root, "nodes");
    const cJSON *row_ptr = cJSON_GetObjectItem(root, "node_row_ptr");
    g_autoptr(DsGraph) g = ds_graph_new();
    int parsed = 0, id = 0;
    const cJSON *node;
    cJSON_ArrayForEach(node, nodes)
    {
      int nid = id++;
      const char *op_name = cJSON_GetObjectItem(node, "op")->valuestring;
      const DsOpDef *op = ds_op_lookup(op_name);
      if (op == NULL || op->id < DS_OP_REPEAT || op->id > DS_OP_SIZE_ARRAY)
        continue;
      DsNode *n = ds_graph_add_node(g, cJSON_GetObjectItem(node, "name")->valuestring, op_name);
      n->op = op;
      const cJSON *attrs = cJSON_GetObjectItem(node, "attrs");
      const cJSON *a;
      cJSON_ArrayForEach(a, attrs) ds_node_add_attr(n, a->string, a->valuestring);
      n->param = op->param_size > 0 ? g_malloc0(op->param_size) : NULL;
      GError *error = NULL;
      if (op->parse != NULL && !op->parse(n, n->param, &error))
        g_error("%s: %s", files[f], error->message);
      g_assert_cmpint(op->num_inputs(n->param), ==,
                      cJSON_GetArraySize(cJSON_GetObjectItem(node, "inputs")));
      int n_out = cJSON_GetArrayItem(row_ptr, nid + 1)->valueint -
                  cJSON_GetArrayItem(row_ptr, nid)->valueint;
      g_assert_cmpint(op->num_outputs(n->param), ==, n_out);
      parsed++;
    }
    g_test_message("%s: %d nodes of this family parsed", files[f], parsed);
    g_assert_cmpint(parsed, >, 0);
    cJSON_Delete(root);
  }
}

/* ================================ kernels ================================ */

/* Checks out[i] == in[src[i]] bit for bit, for every output element. */
static void check_moved(const char *what, const DsTensor *in, const DsTensor *out,
                        const int64_t *src)
{
  int64_t n = ds_tensor_numel(out);
  for (int64_t i = 0; i < n; i++)
    if (bits(out, i) != bits(in, src[i]))
      g_error("%s (%s): out[%" G_GINT64_FORMAT "] is not in[%" G_GINT64_FORMAT "]", what,
              ds_dtype_name(out->dtype), i, src[i]);
}

static void check_repeat(DsDType t, Dims shape, const char *repeats, const char *axis)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = axis != NULL ? make_node(g, "repeat", 1, "repeats", repeats, "axis", axis, NULL)
                           : make_node(g, "repeat", 1, "repeats", repeats, NULL);
  const DsRepeatParam *p = n->param;
  DsTensor x = tensor_dims(t, shape.nd, shape.dims);
  fill_random(&x, -50, 50);
  DsTensor out = output_for(n, &x, 1, t);
  g_assert_cmpint(run_kernel(DS_OP_REPEAT, p, &x, 1, &out, 1), ==, DS_STATUS_OK);
  /* Reference: output position j along the repeated axis reads input position j / repeats. */
  int64_t total = ds_tensor_numel(&out);
  int64_t *src = g_new(int64_t, MAX(total, 1));
  for (int64_t i = 0; i < total; i++) {
    if (!p->has_axis) {
      src[i] = i / p->repeats;
      continue;
    }
    int axis = p->axis < 0 ? p->axis + x.ndim : p->axis;
    int64_t idx[DS_MAX_NDIM];
    unravel(out.shape, out.ndim, i, idx);
    idx[axis] /= p->repeats;
    src[i] = ravel(x.shape, x.ndim, idx);
  }
  check_moved("repeat", &x, &out, src);
  g_free(src);
  tensor_free(&x);
  tensor_free(&out);
}

static void test_kernel_repeat(void)
{
  static const struct {
    Dims shape;
    const char *repeats, *axis;
  } cases[] = {
      {{2, {2, 3}}, "2", NULL},      {{2, {2, 3}}, "3", "1"},     {{2, {2, 3}}, "2", "0"},
      {{2, {2, 3}}, "2", "-1"},      {{3, {2, 3, 4}}, "3", "-2"}, {{1, {1}}, "1000", NULL},
      {{2, {1000, 1}}, "4", "-1"},   {{0, {0}}, "5", NULL},       {{2, {0, 3}}, "2", "1"},
      {{2, {2, 3}}, "0", "1"},       {{2, {2, 3}}, "0", NULL},    {{2, {70, 300}}, "3", "1"},
      {{3, {40, 30, 20}}, "2", "0"}, {{2, {3, 4}}, "1", NULL},
  };
  for (guint t = 0; t < G_N_ELEMENTS(move_types); t++)
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++)
      check_repeat(move_types[t], cases[c].shape, cases[c].repeats, cases[c].axis);
  /* Large enough for the rows to be shared between threads. */
  check_repeat(DS_DTYPE_FLOAT32, (Dims){2, {400, 500}}, "3", "0");
  check_repeat(DS_DTYPE_FLOAT32, (Dims){2, {400, 500}}, "3", "-1");
}

static void check_tile(DsDType t, Dims shape, const char *reps)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "tile", 1, "reps", reps, NULL);
  DsTensor x = tensor_dims(t, shape.nd, shape.dims);
  fill_random(&x, -50, 50);
  DsTensor out = output_for(n, &x, 1, t);
  g_assert_cmpint(run_kernel(DS_OP_TILE, n->param, &x, 1, &out, 1), ==, DS_STATUS_OK);
  /* Reference: right-align the input's dims with the output's; each reads index mod size. */
  int64_t total = ds_tensor_numel(&out);
  int64_t *src = g_new(int64_t, MAX(total, 1));
  for (int64_t i = 0; i < total; i++) {
    int64_t idx[DS_MAX_NDIM], in_idx[DS_MAX_NDIM];
    unravel(out.shape, out.ndim, i, idx);
    for (int d = 0; d < x.ndim; d++)
      in_idx[d] = idx[d + out.ndim - x.ndim] % x.shape[d];
    src[i] = ravel(x.shape, x.ndim, in_idx);
  }
  check_moved("tile", &x, &out, src);
  g_free(src);
  tensor_free(&x);
  tensor_free(&out);
}

static void test_kernel_tile(void)
{
  static const struct {
    Dims shape;
    const char *reps;
  } cases[] = {
      {{2, {2, 3}}, "(2, 3)"},
      {{2, {2, 3}}, "(2,)"},
      {{2, {2, 3}}, "(2, 2, 3)"},
      {{1, {3}}, "(2, 4)"},
      {{1, {1000}}, "1"},
      {{2, {1, 2}}, "(2,)"},
      {{2, {2, 3}}, "()"},
      {{0, {0}}, "(2, 3)"},
      {{2, {0, 3}}, "(2, 2)"},
      {{2, {2, 3}}, "(0, 2)"},
      {{3, {4, 1, 5}}, "(1, 7, 1)"},
      {{2, {50, 300}}, "(3, 2)"},
      {{3, {2, 3, 1}}, "(1, 1, 64)"},
  };
  for (guint t = 0; t < G_N_ELEMENTS(move_types); t++)
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++)
      check_tile(move_types[t], cases[c].shape, cases[c].reps);
  check_tile(DS_DTYPE_FLOAT32, (Dims){2, {300, 400}}, "(2, 3)");
}

static void check_reverse(DsDType t, Dims shape, const char *axes)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "reverse", 1, "axis", axes, NULL);
  const DsReverseParam *p = n->param;
  DsTensor x = tensor_dims(t, shape.nd, shape.dims);
  fill_random(&x, -50, 50);
  DsTensor out = output_for(n, &x, 1, t);
  g_assert_cmpint(run_kernel(DS_OP_REVERSE, p, &x, 1, &out, 1), ==, DS_STATUS_OK);
  /* Reference: apply each listed reversal to the index in turn. */
  int64_t total = ds_tensor_numel(&out);
  int64_t *src = g_new(int64_t, MAX(total, 1));
  for (int64_t i = 0; i < total; i++) {
    int64_t idx[DS_MAX_NDIM];
    unravel(out.shape, out.ndim, i, idx);
    for (int k = 0; k < p->n_axes; k++) {
      int a = (int)(p->axes[k] < 0 ? p->axes[k] + x.ndim : p->axes[k]);
      idx[a] = x.shape[a] - 1 - idx[a];
    }
    src[i] = ravel(x.shape, x.ndim, idx);
  }
  check_moved("reverse", &x, &out, src);
  g_free(src);
  tensor_free(&x);
  tensor_free(&out);
}

static void test_kernel_reverse(void)
{
  static const struct {
    Dims shape;
    const char *axes;
  } cases[] = {
      {{2, {2, 3}}, "1"},
      {{2, {2, 3}}, "0"},
      {{2, {2, 3}}, "(0, 1)"},
      {{2, {2, 3}}, "(-1,)"},
      {{3, {2, 3, 4}}, "(0, 2)"},
      {{3, {2, 3, 4}}, "(1, -2)"},
      {{3, {2, 3, 4}}, "(2, 1, 2)"},
      {{3, {2, 3, 4}}, "()"},
      {{1, {1}}, "0"},
      {{2, {0, 3}}, "1"},
      {{2, {300, 200}}, "0"},
      {{2, {300, 200}}, "1"},
      {{4, {3, 1, 5, 2}}, "(1, 3)"},
      {{2, {1, 2}}, "1"},
  };
  for (guint t = 0; t < G_N_ELEMENTS(move_types); t++)
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++)
      check_reverse(move_types[t], cases[c].shape, cases[c].axes);
  check_reverse(DS_DTYPE_FLOAT32, (Dims){2, {1000, 700}}, "(0, 1)");
  check_reverse(DS_DTYPE_FLOAT64, (Dims){3, {100, 70, 90}}, "1");
}

static void check_stack(DsDType t, Dims shape, int num, const char *axis)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  g_autofree char *num_text = g_strdup_printf("%d", num);
  DsNode *n = make_node(g, "stack", num, "axis", axis, "num_args", num_text, NULL);
  DsTensor xs[4];
  for (int k = 0; k < num; k++) {
    xs[k] = tensor_dims(t, shape.nd, shape.dims);
    fill_random(&xs[k], -50, 50);
  }
  DsTensor out = output_for(n, xs, num, t);
  g_assert_cmpint(run_kernel(DS_OP_STACK, n->param, xs, num, &out, 1), ==, DS_STATUS_OK);
  /* Reference: the index along the new axis picks the input; the others index it. */
  int a = (int)(((DsStackParam *)n->param)->axis);
  a = a < 0 ? a + shape.nd + 1 : a;
  int64_t total = ds_tensor_numel(&out);
  for (int64_t i = 0; i < total; i++) {
    int64_t idx[DS_MAX_NDIM], in_idx[DS_MAX_NDIM];
    unravel(out.shape, out.ndim, i, idx);
    for (int d = 0; d < shape.nd; d++)
      in_idx[d] = idx[d < a ? d : d + 1];
    const DsTensor *from = &xs[idx[a]];
    if (bits(&out, i) != bits(from, ravel(from->shape, from->ndim, in_idx)))
      g_error("stack axis=%s (%s): out[%" G_GINT64_FORMAT "] differs", axis, ds_dtype_name(t), i);
  }
  for (int k = 0; k < num; k++)
    tensor_free(&xs[k]);
  tensor_free(&out);
}

static void test_kernel_stack(void)
{
  static const struct {
    Dims shape;
    int num;
    const char *axis;
  } cases[] = {
      {{2, {2, 3}}, 2, "0"},  {{2, {2, 3}}, 2, "1"},       {{2, {2, 3}}, 3, "2"},
      {{2, {2, 3}}, 3, "-1"}, {{2, {2, 3}}, 2, "-3"},      {{1, {1000}}, 1, "0"},
      {{1, {1000}}, 3, "0"},  {{1, {1000}}, 2, "-1"},      {{2, {0, 3}}, 2, "1"},
      {{0, {0}}, 4, "0"},     {{3, {20, 30, 40}}, 4, "1"},
  };
  for (guint t = 0; t < G_N_ELEMENTS(move_types); t++)
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++)
      check_stack(move_types[t], cases[c].shape, cases[c].num, cases[c].axis);
  check_stack(DS_DTYPE_FLOAT32, (Dims){2, {500, 600}}, 3, "1");
}

static void check_split(DsDType t, Dims shape, const char *num, const char *axis,
                        const char *squeeze)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "SliceChannel", 1, "num_outputs", num, "axis", axis, "squeeze_axis",
                        squeeze, NULL);
  const DsSliceChannelParam *p = n->param;
  DsTensor x = tensor_dims(t, shape.nd, shape.dims);
  fill_random(&x, -50, 50);
  DsTensor outs[8];
  outputs_for(n, &x, 1, outs, p->num_outputs, t);
  g_assert_cmpint(run_kernel(DS_OP_SLICE_CHANNEL, p, &x, 1, outs, p->num_outputs), ==,
                  DS_STATUS_OK);
  /* Reference: output k, position j along the axis, reads input position k * part + j. */
  int a = p->axis < 0 ? p->axis + x.ndim : p->axis;
  int64_t part = x.shape[a] / p->num_outputs;
  for (int k = 0; k < p->num_outputs; k++) {
    int64_t total = ds_tensor_numel(&outs[k]);
    for (int64_t i = 0; i < total; i++) {
      int64_t idx[DS_MAX_NDIM], in_idx[DS_MAX_NDIM];
      unravel(outs[k].shape, outs[k].ndim, i, idx);
      for (int d = 0, j = 0; d < x.ndim; d++) {
        if (d == a && p->squeeze_axis)
          in_idx[d] = k;
        else if (d == a)
          in_idx[d] = k * part + idx[j++];
        else
          in_idx[d] = idx[j++];
      }
      if (bits(&outs[k], i) != bits(&x, ravel(x.shape, x.ndim, in_idx)))
        g_error("split axis=%s (%s): output %d [%" G_GINT64_FORMAT "] differs", axis,
                ds_dtype_name(t), k, i);
    }
    tensor_free(&outs[k]);
  }
  tensor_free(&x);
}

static void test_kernel_slice_channel(void)
{
  static const struct {
    Dims shape;
    const char *num, *axis, *squeeze;
  } cases[] = {
      {{2, {4, 6}}, "3", "1", "False"},        {{2, {4, 6}}, "2", "0", "False"},
      {{3, {1, 1000, 4}}, "4", "-1", "False"}, {{3, {1, 1000, 4}}, "1", "0", "True"},
      {{3, {1, 1000, 4}}, "1", "0", "False"},  {{3, {2, 4, 3}}, "4", "-2", "True"},
      {{2, {0, 6}}, "3", "1", "False"},        {{2, {6, 0}}, "2", "0", "False"},
      {{3, {30, 40, 50}}, "5", "1", "False"},  {{1, {8}}, "8", "0", "True"},
  };
  for (guint t = 0; t < G_N_ELEMENTS(move_types); t++)
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++)
      check_split(move_types[t], cases[c].shape, cases[c].num, cases[c].axis, cases[c].squeeze);
  check_split(DS_DTYPE_FLOAT32, (Dims){2, {600, 1000}}, "4", "1", "False");
}

static void check_slice_like(DsDType t, Dims shape, Dims like_shape, const char *axes)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = axes != NULL ? make_node(g, "slice_like", 2, "axes", axes, NULL)
                           : make_node(g, "slice_like", 2, NULL);
  DsTensor in[2] = {tensor_dims(t, shape.nd, shape.dims),
                    tensor_dims(DS_DTYPE_INT64, like_shape.nd, like_shape.dims)};
  fill_random(&in[0], -50, 50);
  DsTensor out = output_for(n, in, 2, t);
  g_assert_cmpint(run_kernel(DS_OP_SLICE_LIKE, n->param, in, 2, &out, 1), ==, DS_STATUS_OK);
  /* Reference: every kept position has the same index in the data. */
  int64_t total = ds_tensor_numel(&out);
  int64_t *src = g_new(int64_t, MAX(total, 1));
  for (int64_t i = 0; i < total; i++) {
    int64_t idx[DS_MAX_NDIM];
    unravel(out.shape, out.ndim, i, idx);
    src[i] = ravel(in[0].shape, in[0].ndim, idx);
  }
  check_moved("slice_like", &in[0], &out, src);
  g_free(src);
  tensor_free(&in[0]);
  tensor_free(&in[1]);
  tensor_free(&out);
}

static void test_kernel_slice_like(void)
{
  static const struct {
    Dims shape, like;
    const char *axes;
  } cases[] = {
      {{3, {4, 5, 6}}, {3, {2, 3, 4}}, NULL},
      {{2, {3, 4}}, {2, {2, 3}}, "()"},
      {{4, {1, 3, 32, 32}}, {4, {1, 8, 10, 12}}, "(2, 3)"},
      {{3, {4, 5, 6}}, {1, {2}}, "(0,)"},
      {{2, {3, 4}}, {2, {2, 3}}, "(-1,)"},
      {{2, {3, 4}}, {2, {3, 4}}, NULL},
      {{2, {3, 4}}, {2, {0, 4}}, NULL},
      {{2, {300, 200}}, {2, {299, 150}}, NULL},
      {{3, {5, 1, 7}}, {3, {2, 1, 1}}, "(0, 2)"},
  };
  for (guint t = 0; t < G_N_ELEMENTS(move_types); t++)
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++)
      check_slice_like(move_types[t], cases[c].shape, cases[c].like, cases[c].axes);
  check_slice_like(DS_DTYPE_FLOAT32, (Dims){2, {1000, 800}}, (Dims){2, {900, 700}}, NULL);
}

/* True if key a sorts before key b: numbers in the asked order, NaN after every number. */
static gboolean ref_before(double a, double b, gboolean ascend)
{
  if (isnan(a) || isnan(b))
    return !isnan(a) && isnan(b);
  return ascend ? a < b : a > b;
}

static void check_argsort(DsDType t, Dims shape, const char *axis, const char *ascend,
                          DsDType out_t, gboolean with_nan)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "argsort", 1, "axis", axis, "is_ascend", ascend, "dtype",
                        ds_dtype_name(out_t), NULL);
  const DsArgsortParam *p = n->param;
  DsTensor x = tensor_dims(t, shape.nd, shape.dims);
  /* Few distinct values, so equal keys are common and stability shows. */
  int64_t count = ds_tensor_numel(&x);
  for (int64_t i = 0; i < count; i++) {
    double v = t == DS_DTYPE_BOOL ? g_rand_int_range(rng, 0, 2) : g_rand_int_range(rng, -6, 7);
    if (ds_dtype_is_float(t))
      v = g_rand_boolean(rng) ? v : v + g_rand_double(rng);
    if (t == DS_DTYPE_UINT8)
      v = fabs(v);
    set(&x, i, v);
    if (with_nan && g_rand_int_range(rng, 0, 5) == 0)
      set(&x, i, NAN);
  }
  DsTensor out = output_for(n, &x, 1, out_t);
  g_assert_cmpint(run_kernel(DS_OP_ARGSORT, p, &x, 1, &out, 1), ==, DS_STATUS_OK);

  /* Reference: a stable insertion sort of each line of keys, in double. */
  int64_t len = count, inner = 1;
  if (x.ndim > 0 && p->has_axis) {
    int a = p->axis < 0 ? p->axis + x.ndim : p->axis;
    len = x.shape[a];
    inner = ds_shape_span(x.shape, a + 1, x.ndim);
  }
  g_assert_cmpint(ds_tensor_numel(&out), ==, count);
  int64_t lines = len > 0 ? count / len : 0;
  int64_t *order = g_new(int64_t, MAX(len, 1));
  for (int64_t line = 0; line < lines; line++) {
    int64_t first = (line / inner) * len * inner + line % inner;
    for (int64_t j = 0; j < len; j++) {
      int64_t v = j, k = j;
      double key = get(&x, first + v * inner);
      while (k > 0 && ref_before(key, get(&x, first + order[k - 1] * inner), p->is_ascend)) {
        order[k] = order[k - 1];
        k--;
      }
      order[k] = v;
    }
    for (int64_t j = 0; j < len; j++) {
      double got = get(&out, first + j * inner);
      if (got != (double)order[j])
        g_error("argsort %s axis=%s ascend=%s -> %s: line %" G_GINT64_FORMAT
                " position %" G_GINT64_FORMAT " is %g, want %" G_GINT64_FORMAT,
                ds_dtype_name(t), axis, ascend, ds_dtype_name(out_t), line, j, got, order[j]);
    }
  }
  g_free(order);
  tensor_free(&x);
  tensor_free(&out);
}

static void test_kernel_argsort(void)
{
  static const DsDType key_types[] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT64, DS_DTYPE_INT32,
                                      DS_DTYPE_INT64,   DS_DTYPE_INT8,    DS_DTYPE_UINT8,
                                      DS_DTYPE_BOOL};
  static const struct {
    Dims shape;
    const char *axis;
  } cases[] = {
      {{2, {3, 5}}, "-1"},   {{2, {3, 5}}, "0"}, {{3, {2, 7, 3}}, "1"}, {{3, {2, 7, 3}}, "None"},
      {{2, {1, 1000}}, "1"}, {{1, {1}}, "0"},    {{2, {0, 5}}, "1"},    {{2, {5, 0}}, "1"},
      {{0, {0}}, "None"},    {{0, {0}}, "-1"},   {{2, {4, 300}}, "-1"}, {{2, {300, 4}}, "-2"},
      {{1, {33}}, "0"},
  };
  static const char *const orders[] = {"True", "False"};
  for (guint t = 0; t < G_N_ELEMENTS(key_types); t++)
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++)
      for (guint o = 0; o < 2; o++)
        check_argsort(key_types[t], cases[c].shape, cases[c].axis, orders[o], DS_DTYPE_FLOAT32,
                      FALSE);
  /* Many rows, sorted by several threads. */
  check_argsort(DS_DTYPE_FLOAT32, (Dims){2, {2000, 64}}, "-1", "False", DS_DTYPE_FLOAT32, TRUE);
  check_argsort(DS_DTYPE_INT64, (Dims){2, {64, 2000}}, "0", "True", DS_DTYPE_INT64, FALSE);
  /* Every output dtype, and NaN keys last in both orders. */
  static const DsDType out_types[] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT64, DS_DTYPE_INT32,
                                      DS_DTYPE_INT64, DS_DTYPE_UINT8};
  for (guint t = 0; t < G_N_ELEMENTS(out_types); t++)
    for (guint o = 0; o < 2; o++) {
      check_argsort(DS_DTYPE_FLOAT32, (Dims){2, {6, 40}}, "1", orders[o], out_types[t], TRUE);
      check_argsort(DS_DTYPE_FLOAT64, (Dims){3, {3, 50, 2}}, "-2", orders[o], out_types[t], TRUE);
    }

  /* A float16 key has no kernel; indices too many for the output dtype are refused. */
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "argsort", 1, NULL);
  DsTensor h = tensor_new(DS_DTYPE_FLOAT16, "(2, 3)"), ho = tensor_new(DS_DTYPE_FLOAT32, "(2, 3)");
  g_assert_cmpint(run_kernel(DS_OP_ARGSORT, n->param, &h, 1, &ho, 1), ==, DS_STATUS_UNSUPPORTED);
  DsArgsortParam small = *(const DsArgsortParam *)n->param;
  small.dtype = DS_DTYPE_UINT8;
  DsTensor big = tensor_new(DS_DTYPE_FLOAT32, "(2, 300)"),
           bo = tensor_new(DS_DTYPE_UINT8, "(2, 300)");
  g_assert_cmpint(run_kernel(DS_OP_ARGSORT, &small, &big, 1, &bo, 1), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  tensor_free(&h);
  tensor_free(&ho);
  tensor_free(&big);
  tensor_free(&bo);
}

/* Index value v on an axis of size dim as MXNet's gather_nd reads it, or -1 when out of
 * range: v in [-dim, dim - 1], then trunc(v + dim) mod dim. */
static int64_t ref_gather_index(double v, int64_t dim)
{
  if (!(v >= (double)-dim && v <= (double)(dim - 1)))
    return -1;
  return (int64_t)trunc(v + (double)dim) % dim;
}

static void check_gather_nd(DsDType t, DsDType idx_t, Dims data_shape, Dims idx_shape,
                            gboolean fractions)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "gather_nd", 2, NULL);
  DsTensor in[2] = {tensor_dims(t, data_shape.nd, data_shape.dims),
                    tensor_dims(idx_t, idx_shape.nd, idx_shape.dims)};
  fill_random(&in[0], -50, 50);
  int64_t m = idx_shape.dims[0], npos = ds_shape_span(idx_shape.dims, 1, idx_shape.nd);
  for (int64_t j = 0; j < m; j++)
    for (int64_t i = 0; i < npos; i++) {
      int64_t dim = data_shape.dims[j];
      double v = (double)g_rand_int_range(rng, (gint32)-dim, (gint32)dim);
      if (fractions && v < (double)(dim - 1) && v > (double)-dim)
        v += g_rand_double_range(rng, 0.0, 0.99);
      set(&in[1], j * npos + i, v);
    }
  DsTensor out = output_for(n, in, 2, t);
  g_assert_cmpint(run_kernel(DS_OP_GATHER_ND, n->param, in, 2, &out, 1), ==, DS_STATUS_OK);
  int64_t block = ds_shape_span(data_shape.dims, (int)m, data_shape.nd);
  int64_t *src = g_new(int64_t, MAX(ds_tensor_numel(&out), 1));
  for (int64_t i = 0; i < npos; i++) {
    int64_t idx[DS_MAX_NDIM] = {0};
    for (int64_t j = 0; j < m; j++) {
      idx[j] = ref_gather_index(get(&in[1], j * npos + i), data_shape.dims[j]);
      g_assert_cmpint(idx[j], >=, 0);
    }
    int64_t base = ravel(data_shape.dims, data_shape.nd, idx);
    for (int64_t k = 0; k < block; k++)
      src[i * block + k] = base + k;
  }
  check_moved("gather_nd", &in[0], &out, src);
  g_free(src);
  tensor_free(&in[0]);
  tensor_free(&in[1]);
  tensor_free(&out);
}

static void test_kernel_gather_nd(void)
{
  static const struct {
    Dims data, idx;
  } cases[] = {
      {{3, {3, 4, 5}}, {2, {2, 6}}},       {{3, {3, 4, 5}}, {3, {1, 2, 3}}},
      {{3, {3, 4, 5}}, {2, {3, 7}}},       {{3, {1, 1000, 4}}, {2, {2, 1000}}},
      {{4, {2, 3, 14, 14}}, {2, {3, 50}}}, {{3, {3, 4, 5}}, {2, {2, 0}}},
      {{2, {3, 0}}, {2, {1, 4}}},          {{1, {9}}, {3, {1, 2, 2}}},
  };
  static const DsDType idx_types[] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT64, DS_DTYPE_INT32,
                                      DS_DTYPE_INT64, DS_DTYPE_INT8};
  for (guint t = 0; t < G_N_ELEMENTS(move_types); t++)
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++)
      check_gather_nd(move_types[t], DS_DTYPE_FLOAT32, cases[c].data, cases[c].idx, FALSE);
  for (guint t = 0; t < G_N_ELEMENTS(idx_types); t++)
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++)
      check_gather_nd(DS_DTYPE_FLOAT32, idx_types[t], cases[c].data, cases[c].idx,
                      ds_dtype_is_float(idx_types[t]));
  check_gather_nd(DS_DTYPE_FLOAT32, DS_DTYPE_INT32, (Dims){3, {64, 128, 128}}, (Dims){2, {1, 64}},
                  FALSE);
  check_gather_nd(DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT32, (Dims){2, {300, 400}},
                  (Dims){3, {2, 200, 500}}, TRUE);
  /* Fractional and negative indices pick what MXNet's truncation picks. */
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "gather_nd", 2, NULL);
  DsTensor data = tensor_new(DS_DTYPE_FLOAT32, "(5,)"),
           idx = tensor_new(DS_DTYPE_FLOAT32, "(1, 5)");
  for (int i = 0; i < 5; i++)
    set(&data, i, 10 * i);
  static const double picks[5] = {2.7, -0.5, -5.0, 4.0, -1.0};
  static const double want[5] = {20, 40, 0, 40, 40};
  for (int i = 0; i < 5; i++)
    set(&idx, i, picks[i]);
  DsTensor pair[2] = {data, idx};
  DsTensor out = tensor_new(DS_DTYPE_FLOAT32, "(5,)");
  g_assert_cmpint(run_kernel(DS_OP_GATHER_ND, n->param, pair, 2, &out, 1), ==, DS_STATUS_OK);
  for (int i = 0; i < 5; i++)
    g_assert_cmpfloat(get(&out, i), ==, want[i]);
  /* Out of range, either way, and NaN: DS_STATUS_OUT_OF_RANGE. */
  static const double bad[] = {5.0, -5.5, 4.5, NAN};
  for (guint b = 0; b < G_N_ELEMENTS(bad); b++) {
    set(&pair[1], 3, bad[b]);
    g_assert_cmpint(run_kernel(DS_OP_GATHER_ND, n->param, pair, 2, &out, 1), ==,
                    DS_STATUS_OUT_OF_RANGE);
  }
  DsTensor iidx = tensor_new(DS_DTYPE_INT64, "(1, 2)");
  ((int64_t *)iidx.data)[1] = -6;
  DsTensor ipair[2] = {data, iidx};
  DsTensor iout = tensor_new(DS_DTYPE_FLOAT32, "(2,)");
  g_assert_cmpint(run_kernel(DS_OP_GATHER_ND, n->param, ipair, 2, &iout, 1), ==,
                  DS_STATUS_OUT_OF_RANGE);
  DsTensor hidx = tensor_new(DS_DTYPE_FLOAT16, "(1, 2)");
  DsTensor hpair[2] = {data, hidx};
  g_assert_cmpint(run_kernel(DS_OP_GATHER_ND, n->param, hpair, 2, &iout, 1), ==,
                  DS_STATUS_UNSUPPORTED);
  tensor_free(&data);
  tensor_free(&idx);
  tensor_free(&out);
  tensor_free(&iidx);
  tensor_free(&iout);
  tensor_free(&hidx);
}

static void test_kernel_shape_size_array(void)
{
  static const Dims shapes[] = {{3, {2, 3, 4}}, {1, {7}}, {2, {0, 5}}, {0, {0}}, {4, {1, 1, 1, 9}}};
  for (guint c = 0; c < G_N_ELEMENTS(shapes); c++) {
    for (guint t = 0; t < G_N_ELEMENTS(move_types); t++) {
      DsTensor x = tensor_dims(move_types[t], shapes[c].nd, shapes[c].dims);
      int64_t n_dims = shapes[c].nd;
      DsTensor s = tensor_dims(DS_DTYPE_INT64, 1, &n_dims);
      g_assert_cmpint(run_kernel(DS_OP_SHAPE_ARRAY, NULL, &x, 1, &s, 1), ==, DS_STATUS_OK);
      for (int d = 0; d < shapes[c].nd; d++)
        g_assert_cmpint(((int64_t *)s.data)[d], ==, shapes[c].dims[d]);
      DsTensor z = tensor_new(DS_DTYPE_INT64, "(1,)");
      g_assert_cmpint(run_kernel(DS_OP_SIZE_ARRAY, NULL, &x, 1, &z, 1), ==, DS_STATUS_OK);
      g_assert_cmpint(((int64_t *)z.data)[0], ==, ds_tensor_numel(&x));
      tensor_free(&x);
      tensor_free(&s);
      tensor_free(&z);
    }
  }
  /* The output must be int64 and sized by the input's rank. */
  DsTensor x = tensor_new(DS_DTYPE_FLOAT32, "(2, 3)");
  DsTensor wrong = tensor_new(DS_DTYPE_INT32, "(2,)"), short_ = tensor_new(DS_DTYPE_INT64, "(1,)");
  g_assert_cmpint(run_kernel(DS_OP_SHAPE_ARRAY, NULL, &x, 1, &wrong, 1), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  g_assert_cmpint(run_kernel(DS_OP_SHAPE_ARRAY, NULL, &x, 1, &short_, 1), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  tensor_free(&x);
  tensor_free(&wrong);
  tensor_free(&short_);
}

/* Kernels check what they are handed against their attributes instead of trusting it. */
static void test_kernel_bad_arguments(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsTensor x = tensor_new(DS_DTYPE_FLOAT32, "(2, 3)");
  DsTensor y = tensor_new(DS_DTYPE_FLOAT32, "(2, 5)");
  DsNode *rep = make_node(g, "repeat", 1, "repeats", "2", "axis", "1", NULL);
  g_assert_cmpint(run_kernel(DS_OP_REPEAT, rep->param, &x, 1, &y, 1), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  DsNode *tile = make_node(g, "tile", 1, "reps", "(2,)", NULL);
  g_assert_cmpint(run_kernel(DS_OP_TILE, tile->param, &x, 1, &y, 1), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  DsNode *rev = make_node(g, "reverse", 1, "axis", "2", NULL);
  DsTensor x2 = tensor_new(DS_DTYPE_FLOAT32, "(2, 3)");
  g_assert_cmpint(run_kernel(DS_OP_REVERSE, rev->param, &x, 1, &x2, 1), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  DsNode *split = make_node(g, "SliceChannel", 1, "num_outputs", "2", NULL);
  DsTensor halves[2] = {tensor_new(DS_DTYPE_FLOAT32, "(2, 1)"),
                        tensor_new(DS_DTYPE_FLOAT32, "(2, 1)")};
  g_assert_cmpint(run_kernel(DS_OP_SLICE_CHANNEL, split->param, &x, 1, halves, 2), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  DsNode *like = make_node(g, "slice_like", 2, NULL);
  DsTensor pair[2] = {x, y};
  g_assert_cmpint(run_kernel(DS_OP_SLICE_LIKE, like->param, pair, 2, &y, 1), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  tensor_free(&x);
  tensor_free(&x2);
  tensor_free(&y);
  tensor_free(&halves[0]);
  tensor_free(&halves[1]);
}

/* ================================ ONNX gathers, scatters, topk ================================ */

static DsTensor filled(DsDType t, const char *shape, const double *values)
{
  DsTensor x = tensor_new(t, shape);
  for (int64_t i = 0; i < ds_tensor_numel(&x); i++)
    set(&x, i, values[i]);
  return x;
}

static void assert_values(const DsTensor *x, const double *want)
{
  for (int64_t i = 0; i < ds_tensor_numel(x); i++)
    if (fabs(get(x, i) - want[i]) > 1e-6)
      g_error("element %" G_GINT64_FORMAT ": got %g, want %g", i, get(x, i), want[i]);
}

static void test_shape_onnx_index(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  /* take_along_axis: the indices' shape; same ranks. */
  DsNode *ta = make_node(g, "take_along_axis", 2, "axis", "-1", NULL);
  DsShape in[3] = {shp("(3, 4)"), shp("(2, 7)")}, out[2] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(ta, in, out));
  assert_shape(&out[0], "(2, 7)");
  in[1] = shp("(2,)");
  out[0] = DS_SHAPE_UNKNOWN;
  g_autofree char *e1 = infer(ta, in, out);
  g_assert_nonnull(strstr(e1, "rank"));
  DsNode *ta3 = make_node(g, "take_along_axis", 2, "axis", "2", NULL);
  in[1] = shp("(3, 4)");
  out[0] = DS_SHAPE_UNKNOWN;
  g_autofree char *e2 = infer(ta3, in, out);
  g_assert_nonnull(e2);

  /* put_along_axis: the data's shape; updates share the indices' shape. */
  DsNode *pa = make_node(g, "put_along_axis", 3, "reduction", "mul", NULL);
  g_assert_cmpint(((DsPutAlongAxisParam *)pa->param)->reduction, ==, DS_SCATTER_MUL);
  DsShape pin[3] = {shp("(3, 4)"), shp("(2, 4)"), DS_SHAPE_UNKNOWN}, pout[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(pa, pin, pout));
  assert_shape(&pout[0], "(3, 4)");
  assert_shape(&pin[2], "(2, 4)");
  g_autofree char *m1 = parse_error("put_along_axis", 3, "reduction", "sub", NULL);
  g_assert_nonnull(strstr(m1, "reduction"));

  /* batch_gather_nd: indices.shape[:-1] + data.shape[batch_dims + k:]. */
  static const struct {
    const char *batch, *data, *idx, *want;
  } nd[] = {
      {"0", "(2, 2)", "(2, 2)", "(2,)"},           {"0", "(2, 2)", "(2, 1)", "(2, 2)"},
      {"0", "(2, 2, 2)", "(2, 1, 2)", "(2, 1, 2)"}, {"1", "(2, 2, 2)", "(2, 1)", "(2, 2)"},
      {"1", "(2, 3, 4, 5)", "(2, 6, 2)", "(2, 6, 5)"}, {"0", "(2, 2)", "(2, 3)", "error"},
      {"1", "(2, 2)", "(3, 1)", "error"},
  };
  for (guint c = 0; c < G_N_ELEMENTS(nd); c++) {
    DsNode *n = make_node(g, "batch_gather_nd", 2, "batch_dims", nd[c].batch, NULL);
    DsShape ni[2] = {shp(nd[c].data), shp(nd[c].idx)}, no[1] = {DS_SHAPE_UNKNOWN};
    g_autofree char *msg = infer(n, ni, no);
    if (strcmp(nd[c].want, "error") == 0) {
      g_assert_nonnull(msg);
    } else {
      g_assert_null(msg);
      assert_shape(&no[0], nd[c].want);
    }
  }
  g_autofree char *m2 = parse_error("batch_gather_nd", 2, "batch_dims", "-1", NULL);
  g_assert_nonnull(strstr(m2, "batch_dims"));

  /* scatter_nd_update: updates are indices.shape[:-1] + data.shape[k:]. */
  DsNode *sn = make_node(g, "scatter_nd_update", 3, NULL);
  DsShape si[3] = {shp("(4, 4, 4)"), shp("(2, 1)"), DS_SHAPE_UNKNOWN}, so[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(sn, si, so));
  assert_shape(&si[2], "(2, 4, 4)");
  assert_shape(&so[0], "(4, 4, 4)");

  /* topk: k along the axis; every output the same shape; k < 1 keeps the axis. */
  DsNode *tk = make_node(g, "topk", 1, "k", "2", "ret_typ", "both", "dtype", "int64", NULL);
  g_assert_cmpint(tk->op->num_outputs(tk->param), ==, 2);
  DsShape ti[1] = {shp("(3, 4)")}, to[2] = {DS_SHAPE_UNKNOWN, DS_SHAPE_UNKNOWN};
  g_assert_null(infer(tk, ti, to));
  assert_shape(&to[0], "(3, 2)");
  assert_shape(&to[1], "(3, 2)");
  DsDType tin[1] = {DS_DTYPE_FLOAT64}, tout[2] = {DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN};
  GError *error = NULL;
  g_assert_true(tk->op->infer_type(tk, tk->param, tin, tout, &error));
  g_assert_cmpint(tout[0], ==, DS_DTYPE_FLOAT64);
  g_assert_cmpint(tout[1], ==, DS_DTYPE_INT64);
  check_unary_shape("topk", "(3, 4)", "(3, 4)", "k", "0", NULL);
  check_unary_shape("topk", "(3, 4)", "(2, 4)", "k", "2", "axis", "0", NULL);
  check_unary_shape("topk", "(3, 4)", "(2,)", "k", "2", "axis", "None", NULL);
  check_unary_shape("topk", "(3, 4)", "(3, 4)", "k", "2", "ret_typ", "mask", NULL);
  check_unary_shape("topk", "(3, 4)", "error", "k", "5", NULL);
  DsNode *tkd = make_node(g, "topk", 1, NULL);
  const DsTopkParam *tp = tkd->param;
  g_assert_true(tp->has_axis);
  g_assert_cmpint(tp->axis, ==, -1);
  g_assert_cmpint(tp->k, ==, 1);
  g_assert_cmpint(tp->ret_typ, ==, DS_TOPK_INDICES);
  g_assert_cmpint(tp->dtype, ==, DS_DTYPE_FLOAT32);
  {
    Sym s = sym_new();
    DsNode *tks = make_node(g, "topk", 1, "k", "3", "ret_typ", "value", NULL);
    DsShape xi[1] = {sym_shp(s.exprs, "(B, L)")}, xo[1] = {DS_SHAPE_UNKNOWN};
    g_assert_null(infer_in(s.ctx, tks, xi, xo));
    assert_shape(&xo[0], "(B, 3)");
    g_assert_cmpint(ds_shape_ctx_get_guards(s.ctx)->len, ==, 1);
    sym_free(&s);
  }
}

static void test_kernel_onnx_index(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  /* take_along_axis: ONNX's GatherElements examples, negative indices included. */
  static const struct {
    const char *axis, *dshape, *ishape;
    double data[9], idx[6], want[6];
  } ge[] = {
      {"1", "(2, 2)", "(2, 2)", {1, 2, 3, 4}, {0, 0, 1, 0}, {1, 1, 4, 3}},
      {"0", "(3, 3)", "(2, 3)", {1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 0, 2, 0, 0}, {4, 8, 3, 7, 2, 3}},
      {"0", "(3, 3)", "(2, 3)", {1, 2, 3, 4, 5, 6, 7, 8, 9}, {-1, -2, 0, -2, 0, 0},
       {7, 5, 3, 4, 2, 3}},
  };
  for (guint c = 0; c < G_N_ELEMENTS(ge); c++)
    for (guint t = 0; t < G_N_ELEMENTS(move_types); t++) {
      if (move_types[t] == DS_DTYPE_FLOAT16 || move_types[t] == DS_DTYPE_BOOL)
        continue;
      DsNode *n = make_node(g, "take_along_axis", 2, "axis", ge[c].axis, NULL);
      DsTensor in[2] = {filled(move_types[t], ge[c].dshape, ge[c].data),
                        filled(t % 2 ? DS_DTYPE_INT32 : DS_DTYPE_INT64, ge[c].ishape, ge[c].idx)};
      DsTensor out = output_for(n, in, 2, move_types[t]);
      run_ok(DS_OP_TAKE_ALONG_AXIS, n->param, in, 2, &out, 1);
      assert_values(&out, ge[c].want);
      set(&in[1], 0, 3);
      g_assert_cmpint(run_kernel(DS_OP_TAKE_ALONG_AXIS, n->param, in, 2, &out, 1), ==,
                      DS_STATUS_OUT_OF_RANGE);
      tensors_free(in, 2);
      tensor_free(&out);
    }

  /* put_along_axis: ScatterElements' examples; duplicates add, multiply, or the last wins. */
  static const struct {
    const char *axis, *reduction, *dshape, *ishape;
    double data[9], idx[6], upd[6], want[9];
  } se[] = {
      {"0", "none", "(3, 3)", "(2, 3)", {0}, {1, 0, 2, 0, 2, 1}, {1.0, 1.1, 1.2, 2.0, 2.1, 2.2},
       {2.0, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2}},
      {"1", "add", "(1, 5)", "(1, 2)", {1, 2, 3, 4, 5}, {1, 1}, {1.1, 2.1}, {1, 5.2, 3, 4, 5}},
      {"1", "mul", "(1, 5)", "(1, 2)", {1, 2, 3, 4, 5}, {1, 1}, {1.1, 2.1}, {1, 4.62, 3, 4, 5}},
      {"1", "none", "(1, 5)", "(1, 2)", {1, 2, 3, 4, 5}, {-4, -4}, {1.1, 2.1}, {1, 2.1, 3, 4, 5}},
      {"-1", "max", "(1, 3)", "(1, 2)", {1, 2, 3}, {0, 2}, {5, 0}, {5, 2, 3}},
      {"1", "min", "(1, 3)", "(1, 2)", {1, 2, 3}, {0, 2}, {5, 0}, {1, 2, 0}},
  };
  for (guint c = 0; c < G_N_ELEMENTS(se); c++) {
    DsNode *n = make_node(g, "put_along_axis", 3, "axis", se[c].axis, "reduction", se[c].reduction,
                          NULL);
    DsTensor in[3] = {filled(DS_DTYPE_FLOAT64, se[c].dshape, se[c].data),
                      filled(DS_DTYPE_INT64, se[c].ishape, se[c].idx),
                      filled(DS_DTYPE_FLOAT64, se[c].ishape, se[c].upd)};
    DsTensor out = output_for(n, in, 3, DS_DTYPE_FLOAT64);
    run_ok(DS_OP_PUT_ALONG_AXIS, n->param, in, 3, &out, 1);
    assert_values(&out, se[c].want);
    set(&in[1], 0, 9);
    g_assert_cmpint(run_kernel(DS_OP_PUT_ALONG_AXIS, n->param, in, 3, &out, 1), ==,
                    DS_STATUS_OUT_OF_RANGE);
    tensors_free(in, 3);
    tensor_free(&out);
  }

  /* batch_gather_nd: ONNX's GatherND examples. */
  static const struct {
    const char *batch, *dshape, *ishape;
    double data[8], idx[4], want[8];
  } gn[] = {
      {"0", "(2, 2)", "(2, 2)", {0, 1, 2, 3}, {0, 0, 1, 1}, {0, 3}},
      {"0", "(2, 2)", "(2, 1)", {0, 1, 2, 3}, {1, 0}, {2, 3, 0, 1}},
      {"0", "(2, 2, 2)", "(2, 2)", {0, 1, 2, 3, 4, 5, 6, 7}, {0, 1, 1, 0}, {2, 3, 4, 5}},
      {"0", "(2, 2, 2)", "(1, 1)", {0, 1, 2, 3, 4, 5, 6, 7}, {-1}, {4, 5, 6, 7}},
      {"1", "(2, 2, 2)", "(2, 1)", {0, 1, 2, 3, 4, 5, 6, 7}, {1, 0}, {2, 3, 4, 5}},
  };
  for (guint c = 0; c < G_N_ELEMENTS(gn); c++) {
    DsNode *n = make_node(g, "batch_gather_nd", 2, "batch_dims", gn[c].batch, NULL);
    DsTensor in[2] = {filled(DS_DTYPE_INT32, gn[c].dshape, gn[c].data),
                      filled(DS_DTYPE_INT64, gn[c].ishape, gn[c].idx)};
    DsTensor out = output_for(n, in, 2, DS_DTYPE_INT32);
    run_ok(DS_OP_BATCH_GATHER_ND, n->param, in, 2, &out, 1);
    assert_values(&out, gn[c].want);
    set(&in[1], 0, 2);
    g_assert_cmpint(run_kernel(DS_OP_BATCH_GATHER_ND, n->param, in, 2, &out, 1), ==,
                    DS_STATUS_OUT_OF_RANGE);
    tensors_free(in, 2);
    tensor_free(&out);
  }

  /* scatter_nd_update: ONNX's ScatterND example, then slices, then duplicates that add. */
  {
    DsNode *n = make_node(g, "scatter_nd_update", 3, NULL);
    double d[8] = {1, 2, 3, 4, 5, 6, 7, 8}, i[4] = {4, 3, 1, 7}, u[4] = {9, 10, 11, 12};
    DsTensor in[3] = {filled(DS_DTYPE_FLOAT32, "(8,)", d), filled(DS_DTYPE_INT64, "(4, 1)", i),
                      filled(DS_DTYPE_FLOAT32, "(4,)", u)};
    DsTensor out = output_for(n, in, 3, DS_DTYPE_FLOAT32);
    run_ok(DS_OP_SCATTER_ND_UPDATE, n->param, in, 3, &out, 1);
    double want[8] = {1, 11, 3, 10, 9, 6, 7, 12};
    assert_values(&out, want);
    tensors_free(in, 3);
    tensor_free(&out);

    double d2[8] = {0}, i2[2] = {1, 0}, u2[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    DsTensor in2[3] = {filled(DS_DTYPE_INT64, "(2, 2, 2)", d2), filled(DS_DTYPE_INT64, "(2, 1)", i2),
                       filled(DS_DTYPE_INT64, "(2, 2, 2)", u2)};
    DsTensor out2 = output_for(n, in2, 3, DS_DTYPE_INT64);
    run_ok(DS_OP_SCATTER_ND_UPDATE, n->param, in2, 3, &out2, 1);
    double want2[8] = {5, 6, 7, 8, 1, 2, 3, 4};
    assert_values(&out2, want2);
    tensors_free(in2, 3);
    tensor_free(&out2);

    DsNode *add = make_node(g, "scatter_nd_update", 3, "reduction", "add", NULL);
    double d3[3] = {1, 1, 1}, i3[2] = {0, 0}, u3[2] = {5, 6};
    DsTensor in3[3] = {filled(DS_DTYPE_FLOAT64, "(3,)", d3), filled(DS_DTYPE_INT32, "(2, 1)", i3),
                       filled(DS_DTYPE_FLOAT64, "(2,)", u3)};
    DsTensor out3 = output_for(add, in3, 3, DS_DTYPE_FLOAT64);
    run_ok(DS_OP_SCATTER_ND_UPDATE, add->param, in3, 3, &out3, 1);
    double want3[3] = {12, 1, 1};
    assert_values(&out3, want3);
    set(&in3[1], 1, -4);
    g_assert_cmpint(run_kernel(DS_OP_SCATTER_ND_UPDATE, add->param, in3, 3, &out3, 1), ==,
                    DS_STATUS_OUT_OF_RANGE);
    tensors_free(in3, 3);
    tensor_free(&out3);
  }

  /* topk: largest and smallest, ties by index, NaN last, masks, the flattened form. */
  {
    double x[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    DsNode *n = make_node(g, "topk", 1, "k", "3", "ret_typ", "both", "dtype", "int64", NULL);
    DsTensor in = filled(DS_DTYPE_FLOAT32, "(3, 4)", x);
    DsTensor out[2];
    outputs_for(n, &in, 1, out, 2, DS_DTYPE_FLOAT32);
    tensor_free(&out[1]);
    out[1] = tensor_new(DS_DTYPE_INT64, "(3, 3)");
    run_ok(DS_OP_TOPK, n->param, &in, 1, out, 2);
    double vals[9] = {3, 2, 1, 7, 6, 5, 11, 10, 9}, idx[9] = {3, 2, 1, 3, 2, 1, 3, 2, 1};
    assert_values(&out[0], vals);
    assert_values(&out[1], idx);
    tensors_free(out, 2);
    tensor_free(&in);

    double ties[5] = {1, 3, NAN, 3, 2};
    DsTensor t = filled(DS_DTYPE_FLOAT64, "(5,)", ties);
    DsNode *big = make_node(g, "topk", 1, "k", "3", "ret_typ", "both", NULL);
    DsTensor o2[2] = {tensor_new(DS_DTYPE_FLOAT64, "(3,)"), tensor_new(DS_DTYPE_FLOAT32, "(3,)")};
    run_ok(DS_OP_TOPK, big->param, &t, 1, o2, 2);
    double tv[3] = {3, 3, 2}, ti[3] = {1, 3, 4};
    assert_values(&o2[0], tv);
    assert_values(&o2[1], ti);
    DsNode *small = make_node(g, "topk", 1, "k", "2", "ret_typ", "indices", "is_ascend", "True",
                              "dtype", "int32", NULL);
    DsTensor o3 = tensor_new(DS_DTYPE_INT32, "(2,)");
    run_ok(DS_OP_TOPK, small->param, &t, 1, &o3, 1);
    double si[2] = {0, 4};
    assert_values(&o3, si);
    DsNode *mask = make_node(g, "topk", 1, "k", "2", "ret_typ", "mask", NULL);
    DsTensor o4 = tensor_new(DS_DTYPE_FLOAT64, "(5,)");
    run_ok(DS_OP_TOPK, mask->param, &t, 1, &o4, 1);
    double mv[5] = {0, 1, 0, 1, 0};
    assert_values(&o4, mv);
    DsNode *all = make_node(g, "topk", 1, "k", "0", "ret_typ", "value", "axis", "None", NULL);
    DsTensor o5 = tensor_new(DS_DTYPE_FLOAT64, "(5,)");
    run_ok(DS_OP_TOPK, all->param, &t, 1, &o5, 1);
    g_assert_cmpfloat(get(&o5, 0), ==, 3);
    g_assert_true(isnan(get(&o5, 4)));
    tensor_free(&t);
    tensors_free(o2, 2);
    tensor_free(&o3);
    tensor_free(&o4);
    tensor_free(&o5);
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  ds_test_ops_init(90417);

  g_test_add_func("/ops/index/shape/repeat", test_shape_repeat);
  g_test_add_func("/ops/index/shape/tile", test_shape_tile);
  g_test_add_func("/ops/index/shape/reverse", test_shape_reverse);
  g_test_add_func("/ops/index/shape/stack", test_shape_stack);
  g_test_add_func("/ops/index/shape/slice-channel", test_shape_slice_channel);
  g_test_add_func("/ops/index/shape/slice-like", test_shape_slice_like);
  g_test_add_func("/ops/index/shape/argsort", test_shape_argsort);
  g_test_add_func("/ops/index/shape/gather-nd", test_shape_gather_nd);
  g_test_add_func("/ops/index/shape/shape-size-array", test_shape_shape_size_array);
  g_test_add_func("/ops/index/aliases", test_aliases_and_registration);
  g_test_add_func("/ops/index/model-attributes", test_model_attributes);
  g_test_add_func("/ops/index/kernel/repeat", test_kernel_repeat);
  g_test_add_func("/ops/index/kernel/tile", test_kernel_tile);
  g_test_add_func("/ops/index/kernel/reverse", test_kernel_reverse);
  g_test_add_func("/ops/index/kernel/stack", test_kernel_stack);
  g_test_add_func("/ops/index/kernel/slice-channel", test_kernel_slice_channel);
  g_test_add_func("/ops/index/kernel/slice-like", test_kernel_slice_like);
  g_test_add_func("/ops/index/kernel/argsort", test_kernel_argsort);
  g_test_add_func("/ops/index/kernel/gather-nd", test_kernel_gather_nd);
  g_test_add_func("/ops/index/kernel/shape-size-array", test_kernel_shape_size_array);
  g_test_add_func("/ops/index/kernel/bad-arguments", test_kernel_bad_arguments);
  g_test_add_func("/ops/index/shape/onnx-index", test_shape_onnx_index);
  g_test_add_func("/ops/index/kernel/onnx-index", test_kernel_onnx_index);

  int status = g_test_run();
  g_rand_free(rng);
  ds_thread_pool_free(pool);
  return status;
}
