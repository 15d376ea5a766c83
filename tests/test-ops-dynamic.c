/* test-ops-dynamic.c: the dynamic-shape ops (_contrib_boolean_mask, _npx_nonzero,
 * _zeros_shape, _ones_shape, _full_shape, _contrib_dynamic_reshape, _contrib_dynamic_arange,
 * _npi_unique): registration and traits, attribute parsing, shape and dtype rules in concrete
 * inference (the data-dependent dims stay unknown) and symbolic inference (they become unbacked
 * symbols with the right range, made once), and the CPU kernels, which allocate their own
 * outputs through a test allocator, against reference loops written here, on random data. */
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

/* Concrete inference of a node with the inputs' shapes given as text; outputs start unknown.
 * Returns the outputs' shapes joined by " " or "error: <message>". */
static char *shapes_for(DsNode *n, const char *const *in_text)
{
  DsShape in[4], out[4];
  for (guint k = 0; k < n->n_inputs; k++)
    in[k] = shp(in_text[k]);
  for (guint k = 0; k < n->n_outputs; k++)
    out[k] = DS_SHAPE_UNKNOWN;
  g_autofree char *msg = infer(n, in, out);
  if (msg != NULL)
    return g_strdup_printf("error: %s", msg);
  GString *s = g_string_new(NULL);
  for (guint k = 0; k < n->n_outputs; k++) {
    g_autofree char *one = ds_shape_to_string(&out[k]);
    g_string_append_printf(s, "%s%s", k > 0 ? " " : "", one);
  }
  return g_string_free(s, FALSE);
}

/* Checks a node's output shapes for its inputs' shapes; a `want` starting with "error" expects
 * an error whose message contains what follows "error:" (if anything). */
static void check_shapes(DsNode *n, const char *const *in, const char *want)
{
  g_autofree char *got = shapes_for(n, in);
  if (g_str_has_prefix(want, "error")) {
    if (!g_str_has_prefix(got, "error: node 'node0'"))
      g_error("%s on %s: got %s, want an error", n->op_name, in[0], got);
    if (want[5] == ':' && strstr(got, want + 6) == NULL)
      g_error("%s on %s: '%s' does not mention '%s'", n->op_name, in[0], got, want + 6);
  } else if (strcmp(got, want) != 0) {
    g_error("%s on %s: got %s, want %s", n->op_name, in[0], got, want);
  }
}

/* Checks `d` is an unbacked symbol with range [0, hi] (hi DS_EXPR_INF: unbounded). */
static void assert_unbacked(Sym *s, DsDim d, int64_t hi)
{
  g_assert_nonnull(d.expr);
  g_assert_true(ds_expr_is_unbacked(d.expr));
  int64_t lo, h;
  ds_expr_ctx_get_range(s->exprs, d.expr, &lo, &h);
  g_assert_cmpint(lo, ==, 0);
  g_assert_cmpint(h, ==, hi);
}

/* ---- tensor helpers ---- */

/* Whether element i is nonzero, float16 by its bits: the reference for masks and nonzero. */
static bool is_true(const DsTensor *x, int64_t i)
{
  if (x->dtype == DS_DTYPE_FLOAT16)
    return (((uint16_t *)x->data)[i] & 0x7fff) != 0;
  return get(x, i) != 0.0 || isnan(get(x, i));
}

/* A 1-D tensor of `n` values in dtype t. */
static DsTensor vector_of(DsDType t, int n, const double *values)
{
  int64_t dims[1] = {n};
  DsTensor x = tensor_dims(t, 1, dims);
  for (int i = 0; i < n; i++)
    set(&x, i, values[i]);
  return x;
}

/* A scalar tensor, shape () or (1,). */
static DsTensor scalar_of(DsDType t, bool rank1, double v)
{
  int64_t dims[1] = {1};
  DsTensor x = tensor_dims(t, rank1 ? 1 : 0, dims);
  set(&x, 0, v);
  return x;
}

/* ---- the test allocator: the executor's part for dynamic outputs ---- */

typedef struct {
  GPtrArray *buffers; /* freed with the allocator */
  int calls;
  DsStatus fail_with; /* DS_STATUS_OK: allocate */
} TestAlloc;

static DsStatus test_alloc_output(void *alloc_data, int index, DsTensor *output)
{
  TestAlloc *a = alloc_data;
  a->calls++;
  /* The kernel must have said what it wants before asking. */
  g_assert_cmpint(index, >=, 0);
  g_assert_cmpint(output->ndim, >=, 0);
  g_assert_cmpint(output->ndim, <=, DS_MAX_NDIM);
  g_assert_true(ds_dtype_is_valid(output->dtype));
  for (int d = 0; d < output->ndim; d++)
    g_assert_cmpint(output->shape[d], >=, 0);
  if (a->fail_with != DS_STATUS_OK)
    return a->fail_with;
  size_t bytes = ds_tensor_nbytes(output);
  /* Poisoned, so an element the kernel forgets to write shows up. */
  void *buf = g_malloc(MAX(bytes, 1));
  memset(buf, 0xA5, MAX(bytes, 1));
  g_ptr_array_add(a->buffers, buf);
  output->data = buf;
  return DS_STATUS_OK;
}

static TestAlloc test_alloc_new(void)
{
  return (TestAlloc){g_ptr_array_new_with_free_func(g_free), 0, DS_STATUS_OK};
}

static void test_alloc_free(TestAlloc *a)
{
  g_ptr_array_unref(a->buffers);
}

static DsStatus run_dynamic(DsOpId op, const void *param, DsTensor *in, int n_in, DsTensor *out,
                            int n_out, TestAlloc *alloc)
{
  return run_kernel_dynamic(op, param, in, n_in, out, n_out, test_alloc_output, alloc);
}

static void assert_tensor_shape(const DsTensor *t, DsDType dtype, int ndim, const int64_t *dims)
{
  g_assert_cmpint(t->dtype, ==, dtype);
  g_assert_cmpint(t->ndim, ==, ndim);
  for (int d = 0; d < ndim; d++)
    g_assert_cmpint(t->shape[d], ==, dims[d]);
  g_assert_nonnull(t->data);
}

static const DsDType move_types[] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT64, DS_DTYPE_FLOAT16,
                                     DS_DTYPE_INT32,   DS_DTYPE_INT64,   DS_DTYPE_INT8,
                                     DS_DTYPE_UINT8,   DS_DTYPE_BOOL};
static const DsDType number_types[] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT64, DS_DTYPE_INT32,
                                       DS_DTYPE_INT64,   DS_DTYPE_INT8,    DS_DTYPE_UINT8};

/* ================================ registry and attributes ================================ */

static void test_registration(void)
{
  static const struct {
    const char *name;
    DsOpId id;
    guint traits;
    const char *input1;
  } ops[] = {
      {"_contrib_boolean_mask", DS_OP_BOOLEAN_MASK, DS_OP_TRAIT_DYNAMIC_SHAPE, "index"},
      {"_npx_nonzero", DS_OP_NONZERO, DS_OP_TRAIT_DYNAMIC_SHAPE, NULL},
      {"_zeros_shape", DS_OP_ZEROS_SHAPE, DS_OP_TRAIT_DYNAMIC_SHAPE | DS_OP_TRAIT_SHAPE_INPUT,
       NULL},
      {"_ones_shape", DS_OP_ONES_SHAPE, DS_OP_TRAIT_DYNAMIC_SHAPE | DS_OP_TRAIT_SHAPE_INPUT, NULL},
      {"_full_shape", DS_OP_FULL_SHAPE, DS_OP_TRAIT_DYNAMIC_SHAPE | DS_OP_TRAIT_SHAPE_INPUT, NULL},
      {"_contrib_dynamic_reshape", DS_OP_DYNAMIC_RESHAPE,
       DS_OP_TRAIT_DYNAMIC_SHAPE | DS_OP_TRAIT_SHAPE_INPUT, "shape"},
      {"_contrib_dynamic_arange", DS_OP_DYNAMIC_ARANGE, DS_OP_TRAIT_DYNAMIC_SHAPE, "stop"},
      {"_npi_unique", DS_OP_UNIQUE, DS_OP_TRAIT_DYNAMIC_SHAPE, NULL},
  };
  char buf[16];
  for (guint i = 0; i < G_N_ELEMENTS(ops); i++) {
    const DsOpDef *op = ds_op_lookup(ops[i].name);
    g_assert_nonnull(op);
    g_assert_cmpint(op->id, ==, ops[i].id);
    g_assert_true(ds_op_get(op->id) == op);
    g_assert_cmpstr(ds_op_id_name(op->id), ==, ops[i].name);
    g_assert_cmpuint(op->traits, ==, ops[i].traits);
    g_assert_nonnull(ds_cpu_backend_get()->get_kernel(op->id));
    if (ops[i].input1 != NULL)
      g_assert_cmpstr(ds_op_input_name(op, 3, 1, buf), ==, ops[i].input1);
  }
  g_assert_cmpstr(ds_op_input_name(ds_op_get(DS_OP_ZEROS_SHAPE), 1, 0, buf), ==, "shape");
  g_assert_cmpstr(ds_op_input_name(ds_op_get(DS_OP_NONZERO), 1, 0, buf), ==, "x");
  g_assert_cmpstr(ds_op_input_name(ds_op_get(DS_OP_DYNAMIC_ARANGE), 3, 2, buf), ==, "step");
  /* Input counts. */
  g_autoptr(DsGraph) g = ds_graph_new();
  g_assert_cmpint(make_node(g, "_contrib_boolean_mask", 2, NULL)->op->num_inputs(NULL), ==, 2);
  g_assert_cmpint(ds_op_get(DS_OP_DYNAMIC_ARANGE)->num_inputs(NULL), ==, 3);
  g_assert_cmpint(ds_op_get(DS_OP_FULL_SHAPE)->num_inputs(NULL), ==, 1);
}

static void test_parse(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  const DsBooleanMaskParam *bm = make_node(g, "_contrib_boolean_mask", 2, NULL)->param;
  g_assert_cmpint(bm->axis, ==, 0);
  bm = make_node(g, "_contrib_boolean_mask", 2, "axis", "-1", NULL)->param;
  g_assert_cmpint(bm->axis, ==, -1);
  g_autofree char *m1 = parse_error("_contrib_boolean_mask", 2, "axis", "one", NULL);
  g_assert_nonnull(strstr(m1, "axis"));
  g_autofree char *m1b = parse_error("_contrib_boolean_mask", 2, "axis", "9999999999", NULL);
  g_assert_nonnull(strstr(m1b, "out of range"));

  const DsShapeInitParam *z = make_node(g, "_zeros_shape", 1, NULL)->param;
  g_assert_cmpint(z->dtype, ==, DS_DTYPE_FLOAT32);
  g_assert_cmpfloat(z->value, ==, 0.0);
  const DsShapeInitParam *o = make_node(g, "_ones_shape", 1, "dtype", "int32", NULL)->param;
  g_assert_cmpint(o->dtype, ==, DS_DTYPE_INT32);
  g_assert_cmpfloat(o->value, ==, 1.0);
  const DsShapeInitParam *f =
      make_node(g, "_full_shape", 1, "value", "-2.5", "dtype", "float64", NULL)->param;
  g_assert_cmpint(f->dtype, ==, DS_DTYPE_FLOAT64);
  g_assert_cmpfloat(f->value, ==, -2.5);
  g_autofree char *m2 = parse_error("_full_shape", 1, "dtype", "float32", NULL);
  g_assert_nonnull(strstr(m2, "'value' is missing"));
  g_autofree char *m3 = parse_error("_ones_shape", 1, "dtype", "float16", NULL);
  g_assert_nonnull(strstr(m3, "dtype"));
  g_autofree char *m4 = parse_error("_zeros_shape", 1, "dtype", "complex", NULL);
  g_assert_nonnull(strstr(m4, "dtype"));

  const DsDynamicArangeParam *a = make_node(g, "_contrib_dynamic_arange", 3, NULL)->param;
  g_assert_cmpint(a->dtype, ==, DS_DTYPE_FLOAT32);
  a = make_node(g, "_contrib_dynamic_arange", 3, "dtype", "int64", NULL)->param;
  g_assert_cmpint(a->dtype, ==, DS_DTYPE_INT64);
  g_autofree char *m5 = parse_error("_contrib_dynamic_arange", 3, "dtype", "bool", NULL);
  g_assert_nonnull(strstr(m5, "dtype"));

  /* unique: the flags decide the output count; axis None is no axis. */
  const DsUniqueParam *u = make_node(g, "_npi_unique", 1, NULL)->param;
  g_assert_false(u->return_index || u->return_inverse || u->return_counts || u->has_axis);
  g_assert_cmpint(ds_op_get(DS_OP_UNIQUE)->num_outputs(u), ==, 1);
  DsNode *un = make_node(g, "_npi_unique", 1, "return_index", "True", "return_inverse", "False",
                         "return_counts", "1", "axis", "None", NULL);
  u = un->param;
  g_assert_true(u->return_index && !u->return_inverse && u->return_counts && !u->has_axis);
  g_assert_cmpuint(un->n_outputs, ==, 3);
  g_assert_cmpint(un->op->num_visible_outputs(un->param), ==, 3);
  u = make_node(g, "_npi_unique", 1, "axis", "-2", "return_inverse", "true", NULL)->param;
  g_assert_true(u->has_axis && u->return_inverse);
  g_assert_cmpint(u->axis, ==, -2);
  g_assert_cmpint(ds_unique_num_outputs(u), ==, 2);
  g_autofree char *m6 = parse_error("_npi_unique", 1, "return_counts", "maybe", NULL);
  g_assert_nonnull(strstr(m6, "return_counts"));
  g_autofree char *m7 = parse_error("_npi_unique", 1, "axis", "x", NULL);
  g_assert_nonnull(strstr(m7, "axis"));
}

/* No FListOutputNames, as in MXNet: nnvm's default names apply ("output", or "output0",
 * "output1"... for unique with extras). */
static void test_output_names(void)
{
  for (int id = DS_OP_BOOLEAN_MASK; id <= DS_OP_UNIQUE; id++)
    g_assert_null(ds_op_get((DsOpId)id)->output_names);
}

/* ================================ dtype rules ================================ */

static void test_dtypes(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  GError *error = NULL;
  DsNode *bm = make_node(g, "_contrib_boolean_mask", 2, NULL);
  DsDType in[3] = {DS_DTYPE_FLOAT64, DS_DTYPE_INT32, DS_DTYPE_UNKNOWN}, out[4];
  out[0] = DS_DTYPE_UNKNOWN;
  g_assert_true(bm->op->infer_type(bm, bm->param, in, out, &error));
  g_assert_cmpint(out[0], ==, DS_DTYPE_FLOAT64);
  g_assert_cmpint(in[1], ==, DS_DTYPE_INT32); /* the index keeps its own dtype */
  /* Backwards: a known output gives the data's dtype. */
  DsDType in2[2] = {DS_DTYPE_UNKNOWN, DS_DTYPE_FLOAT32}, out2[1] = {DS_DTYPE_INT8};
  g_assert_true(bm->op->infer_type(bm, bm->param, in2, out2, &error));
  g_assert_cmpint(in2[0], ==, DS_DTYPE_INT8);

  DsNode *nz = make_node(g, "_npx_nonzero", 1, NULL);
  DsDType nz_in[1] = {DS_DTYPE_FLOAT32}, nz_out[1] = {DS_DTYPE_UNKNOWN};
  g_assert_true(nz->op->infer_type(nz, nz->param, nz_in, nz_out, &error));
  g_assert_cmpint(nz_out[0], ==, DS_DTYPE_INT64);

  DsNode *f = make_node(g, "_full_shape", 1, "value", "3", "dtype", "int8", NULL);
  DsDType f_in[1] = {DS_DTYPE_FLOAT32}, f_out[1] = {DS_DTYPE_UNKNOWN};
  g_assert_true(f->op->infer_type(f, f->param, f_in, f_out, &error));
  g_assert_cmpint(f_out[0], ==, DS_DTYPE_INT8);
  f_out[0] = DS_DTYPE_FLOAT32;
  g_assert_false(f->op->infer_type(f, f->param, f_in, f_out, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_SHAPE);
  g_clear_error(&error);

  DsNode *r = make_node(g, "_contrib_dynamic_reshape", 2, NULL);
  DsDType r_in[2] = {DS_DTYPE_UINT8, DS_DTYPE_INT64}, r_out[1] = {DS_DTYPE_UNKNOWN};
  g_assert_true(r->op->infer_type(r, r->param, r_in, r_out, &error));
  g_assert_cmpint(r_out[0], ==, DS_DTYPE_UINT8);

  DsNode *a = make_node(g, "_contrib_dynamic_arange", 3, "dtype", "int32", NULL);
  DsDType a_in[3] = {DS_DTYPE_FLOAT32, DS_DTYPE_INT64, DS_DTYPE_FLOAT64},
          a_out[1] = {DS_DTYPE_UNKNOWN};
  g_assert_true(a->op->infer_type(a, a->param, a_in, a_out, &error));
  g_assert_cmpint(a_out[0], ==, DS_DTYPE_INT32);

  DsNode *u = make_node(g, "_npi_unique", 1, "return_index", "True", "return_inverse", "True",
                        "return_counts", "True", NULL);
  DsDType u_in[1] = {DS_DTYPE_INT32},
          u_out[4] = {DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN};
  g_assert_true(u->op->infer_type(u, u->param, u_in, u_out, &error));
  g_assert_cmpint(u_out[0], ==, DS_DTYPE_INT32);
  for (int k = 1; k < 4; k++)
    g_assert_cmpint(u_out[k], ==, DS_DTYPE_INT64);
}

/* ================================ shape rules ================================ */

static void test_shape_boolean_mask(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *ax0 = make_node(g, "_contrib_boolean_mask", 2, NULL);
  DsNode *ax1 = make_node(g, "_contrib_boolean_mask", 2, "axis", "1", NULL);
  DsNode *axm = make_node(g, "_contrib_boolean_mask", 2, "axis", "-1", NULL);
  DsNode *ax3 = make_node(g, "_contrib_boolean_mask", 2, "axis", "3", NULL);
  check_shapes(ax0, (const char *[]){"(4, 3)", "(4,)"}, "(?, 3)");
  check_shapes(ax1, (const char *[]){"(4, 3, 2)", "(3,)"}, "(4, ?, 2)");
  check_shapes(axm, (const char *[]){"(4, 3, 2)", "(2,)"}, "(4, 3, ?)");
  check_shapes(ax0, (const char *[]){"(7,)", "(7,)"}, "(?,)");
  check_shapes(ax0, (const char *[]){"(0, 5)", "(0,)"}, "(?, 5)");
  check_shapes(ax0, (const char *[]){"(4, 3)", "?"}, "(?, 3)");
  check_shapes(ax0, (const char *[]){"?", "(4,)"}, "?");
  check_shapes(ax0, (const char *[]){"(4, 3)", "(5,)"}, "error:index (5,)");
  check_shapes(ax1, (const char *[]){"(4, 3)", "(4,)"}, "error:axis 1");
  check_shapes(ax0, (const char *[]){"(4, 3)", "(4, 1)"}, "error:index must have 1 dims");
  check_shapes(ax0, (const char *[]){"()", "(1,)"}, "error:0-dim");
  check_shapes(ax3, (const char *[]){"(4, 3)", "(4,)"}, "error:axis 3 is out of range");

  /* The index's length and the masked axis fill each other. */
  DsShape in[2] = {shp("(?, 3)"), shp("(6,)")}, out[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(ax0, in, out));
  assert_shape(&in[0], "(6, 3)");
  assert_shape(&out[0], "(?, 3)");
  DsShape in2[2] = {shp("(6, 3)"), shp("(?,)")}, out2[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(ax0, in2, out2));
  assert_shape(&in2[1], "(6,)");

  /* Symbolic: the kept count is an unbacked symbol in [0, the axis' size], made once. */
  Sym s = sym_new();
  DsShape si[2] = {shp("(10, 8)"), shp("(10,)")}, so[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, ax0, si, so));
  assert_shape(&so[0], "(u0, 8)");
  assert_unbacked(&s, so[0].dims[0], 10);
  const DsExpr *u0 = so[0].dims[0].expr;
  guint n_symbols = ds_expr_ctx_get_n_symbols(s.exprs);
  g_assert_null(infer_in(s.ctx, ax0, si, so));
  g_assert_true(so[0].dims[0].expr == u0);
  g_assert_cmpuint(ds_expr_ctx_get_n_symbols(s.exprs), ==, n_symbols);

  /* With a symbolic axis the bound is the symbol: u <= s0 is provable, u < s0 is not. */
  DsShape sj[2] = {sym_shp(s.exprs, "(4, s0)"), sym_shp(s.exprs, "(s0,)")},
          sjo[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, axm, sj, sjo));
  assert_shape(&sjo[0], "(4, u1)");
  g_assert_true(ds_expr_is_unbacked(sjo[0].dims[1].expr));
  g_assert_cmpint(ds_expr_less_equal(s.exprs, sjo[0].dims[1].expr, sj[0].dims[1].expr), ==,
                  DS_EXPR_TRUE);
  g_assert_cmpint(ds_expr_less(s.exprs, sjo[0].dims[1].expr, sj[0].dims[1].expr), !=, DS_EXPR_TRUE);
  /* A fresh output slot on another node gets a fresh symbol. */
  DsShape so2[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, ax0, si, so2));
  assert_shape(&so2[0], "(u2, 8)");
  sym_free(&s);
}

static void test_shape_nonzero(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "_npx_nonzero", 1, NULL);
  check_shapes(n, (const char *[]){"(2, 3, 4)"}, "(?, 3)");
  check_shapes(n, (const char *[]){"(5,)"}, "(?, 1)");
  check_shapes(n, (const char *[]){"()"}, "(?, 0)");
  check_shapes(n, (const char *[]){"(?, 3)"}, "(?, 2)");
  check_shapes(n, (const char *[]){"?"}, "?");

  Sym s = sym_new();
  DsShape in[1] = {shp("(2, 3, 4)")}, out[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, n, in, out));
  assert_shape(&out[0], "(u0, 3)");
  assert_unbacked(&s, out[0].dims[0], 24);
  const DsExpr *u0 = out[0].dims[0].expr;
  g_assert_null(infer_in(s.ctx, n, in, out));
  g_assert_true(out[0].dims[0].expr == u0);
  /* Symbolic data: the bound is the element count. */
  DsShape in2[1] = {sym_shp(s.exprs, "(s0, 5)")}, out2[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, n, in2, out2));
  assert_shape(&out2[0], "(u1, 2)");
  const DsExpr *size = ds_expr_mul(s.exprs, in2[0].dims[0].expr, ds_expr_const(s.exprs, 5));
  g_assert_cmpint(ds_expr_less_equal(s.exprs, out2[0].dims[0].expr, size), ==, DS_EXPR_TRUE);
  sym_free(&s);
}

static void test_shape_shape_init(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  static const char *const ops[] = {"_zeros_shape", "_ones_shape", "_full_shape"};
  for (guint i = 0; i < G_N_ELEMENTS(ops); i++) {
    DsNode *n = make_node(g, ops[i], 1, "value", "2", NULL);
    check_shapes(n, (const char *[]){"(3,)"}, "(?, ?, ?)");
    check_shapes(n, (const char *[]){"(0,)"}, "()");
    check_shapes(n, (const char *[]){"(8,)"}, "(?, ?, ?, ?, ?, ?, ?, ?)");
    check_shapes(n, (const char *[]){"(?,)"}, "?");
    check_shapes(n, (const char *[]){"?"}, "?");
    check_shapes(n, (const char *[]){"(9,)"}, "error:more than 8 dims");
    check_shapes(n, (const char *[]){"(2, 3)"}, "error:shape must have 1 dims");
    check_shapes(n, (const char *[]){"()"}, "error:shape must have 1 dims");
  }

  /* Symbolic: one unbounded unbacked symbol per dim; a symbolic length is refused. */
  DsNode *z = make_node(g, "_zeros_shape", 1, NULL);
  Sym s = sym_new();
  DsShape in[1] = {shp("(2,)")}, out[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, z, in, out));
  assert_shape(&out[0], "(u0, u1)");
  assert_unbacked(&s, out[0].dims[0], DS_EXPR_INF);
  assert_unbacked(&s, out[0].dims[1], DS_EXPR_INF);
  g_assert_true(out[0].dims[0].expr != out[0].dims[1].expr);
  g_assert_null(infer_in(s.ctx, z, in, out));
  assert_shape(&out[0], "(u0, u1)");
  DsShape in2[1] = {sym_shp(s.exprs, "(s0,)")}, out2[1] = {DS_SHAPE_UNKNOWN};
  g_autofree char *msg = infer_in(s.ctx, z, in2, out2);
  g_assert_nonnull(msg);
  g_assert_nonnull(strstr(msg, "constant length"));
  sym_free(&s);
}

static void test_shape_dynamic_reshape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "_contrib_dynamic_reshape", 2, NULL);
  check_shapes(n, (const char *[]){"(2, 3, 4)", "(2,)"}, "(?, ?)");
  check_shapes(n, (const char *[]){"(2, 3, 4)", "(5,)"}, "(?, ?, ?, ?, ?)");
  check_shapes(n, (const char *[]){"?", "(2,)"}, "?");
  check_shapes(n, (const char *[]){"(2, 3)", "?"}, "?");
  check_shapes(n, (const char *[]){"(2, 3)", "(2, 2)"}, "error:shape must have 1 dims");
  check_shapes(n, (const char *[]){"(2, 3)", "(12,)"}, "error:more than 8 dims");

  /* Symbolic: each dim is bounded by the data's element count when the data cannot be
   * empty, and unbounded otherwise ((0, 3) may become (3, 0)). */
  Sym s = sym_new();
  DsShape in[2] = {shp("(2, 3)"), shp("(3,)")}, out[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, n, in, out));
  assert_shape(&out[0], "(u0, u1, u2)");
  for (int d = 0; d < 3; d++)
    assert_unbacked(&s, out[0].dims[d], 6);
  g_assert_null(infer_in(s.ctx, n, in, out));
  assert_shape(&out[0], "(u0, u1, u2)");
  DsShape in2[2] = {shp("(0, 3)"), shp("(2,)")}, out2[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, n, in2, out2));
  assert_unbacked(&s, out2[0].dims[0], DS_EXPR_INF);
  DsShape in3[2] = {sym_shp(s.exprs, "(s0, 4)"), shp("(1,)")}, out3[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, n, in3, out3));
  const DsExpr *size = ds_expr_mul(s.exprs, in3[0].dims[0].expr, ds_expr_const(s.exprs, 4));
  g_assert_cmpint(ds_expr_less_equal(s.exprs, out3[0].dims[0].expr, size), ==, DS_EXPR_TRUE);
  sym_free(&s);
}

static void test_shape_dynamic_arange(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "_contrib_dynamic_arange", 3, NULL);
  check_shapes(n, (const char *[]){"()", "()", "()"}, "(?,)");
  check_shapes(n, (const char *[]){"(1,)", "()", "(1,)"}, "(?,)");
  check_shapes(n, (const char *[]){"?", "?", "?"}, "(?,)");
  check_shapes(n, (const char *[]){"()", "(2,)", "()"}, "error:stop");
  check_shapes(n, (const char *[]){"()", "()", "(1, 1)"}, "error:step must be a scalar");
  /* A (?,) bound must be (1,). */
  DsShape in[3] = {shp("(?,)"), shp("()"), shp("()")}, out[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(n, in, out));
  assert_shape(&in[0], "(1,)");

  Sym s = sym_new();
  DsShape si[3] = {shp("()"), shp("()"), shp("()")}, so[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, n, si, so));
  assert_shape(&so[0], "(u0,)");
  assert_unbacked(&s, so[0].dims[0], DS_EXPR_INF);
  g_assert_null(infer_in(s.ctx, n, si, so));
  assert_shape(&so[0], "(u0,)");
  sym_free(&s);
}

static void test_shape_unique(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *plain = make_node(g, "_npi_unique", 1, NULL);
  DsNode *all = make_node(g, "_npi_unique", 1, "return_index", "True", "return_inverse", "True",
                          "return_counts", "True", NULL);
  DsNode *inv = make_node(g, "_npi_unique", 1, "return_inverse", "True", NULL);
  DsNode *ax = make_node(g, "_npi_unique", 1, "axis", "1", "return_index", "True", "return_inverse",
                         "True", "return_counts", "True", NULL);
  DsNode *axm = make_node(g, "_npi_unique", 1, "axis", "-1", NULL);
  check_shapes(plain, (const char *[]){"(2, 3)"}, "(?,)");
  check_shapes(plain, (const char *[]){"()"}, "(?,)");
  check_shapes(plain, (const char *[]){"?"}, "?");
  check_shapes(all, (const char *[]){"(2, 3)"}, "(?,) (?,) (6,) (?,)");
  check_shapes(inv, (const char *[]){"(4, 5)"}, "(?,) (20,)");
  check_shapes(ax, (const char *[]){"(2, 5, 3)"}, "(2, ?, 3) (?,) (5,) (?,)");
  check_shapes(axm, (const char *[]){"(2, 5, 3)"}, "(2, 5, ?)");
  check_shapes(axm, (const char *[]){"()"}, "error:0-dim");
  check_shapes(ax, (const char *[]){"(4,)"}, "error:axis 1 is out of range");

  /* Symbolic: one unbacked count shared by the values, indices and counts. */
  Sym s = sym_new();
  DsShape in[1] = {shp("(3, 4)")}, out[4];
  for (int k = 0; k < 4; k++)
    out[k] = DS_SHAPE_UNKNOWN;
  g_assert_null(infer_in(s.ctx, all, in, out));
  assert_shape(&out[0], "(u0,)");
  assert_shape(&out[1], "(u0,)");
  assert_shape(&out[2], "(12,)");
  assert_shape(&out[3], "(u0,)");
  assert_unbacked(&s, out[0].dims[0], 12);
  g_assert_true(out[1].dims[0].expr == out[0].dims[0].expr);
  g_assert_true(out[3].dims[0].expr == out[0].dims[0].expr);
  g_assert_null(infer_in(s.ctx, all, in, out));
  assert_shape(&out[0], "(u0,)");
  assert_shape(&out[3], "(u0,)");
  g_assert_cmpuint(ds_expr_ctx_get_n_symbols(s.exprs), ==, 1);

  DsShape in2[1] = {sym_shp(s.exprs, "(s0, 7, 3)")}, out2[4];
  for (int k = 0; k < 4; k++)
    out2[k] = DS_SHAPE_UNKNOWN;
  g_assert_null(infer_in(s.ctx, ax, in2, out2));
  assert_shape(&out2[0], "(s0, u1, 3)");
  assert_shape(&out2[1], "(u1,)");
  assert_shape(&out2[2], "(7,)");
  assert_shape(&out2[3], "(u1,)");
  assert_unbacked(&s, out2[0].dims[1], 7);
  sym_free(&s);
}

/* ================================ kernels ================================ */

static void check_boolean_mask(DsDType t, DsDType index_t, int nd, const int64_t *dims, int axis,
                               int mode)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  g_autofree char *axis_text = g_strdup_printf("%d", axis);
  DsNode *n = make_node(g, "_contrib_boolean_mask", 2, "axis", axis_text, NULL);
  DsTensor x = tensor_dims(t, nd, dims);
  fill_random(&x, -50, 50);
  int a = axis < 0 ? axis + nd : axis;
  int64_t len = dims[a];
  int64_t idims[1] = {len};
  DsTensor index = tensor_dims(index_t, 1, idims);
  /* mode 0: random, 1: all false, 2: all true. */
  for (int64_t i = 0; i < len; i++) {
    if (mode == 0 && index_t == DS_DTYPE_FLOAT16)
      ((uint16_t *)index.data)[i] =
          g_rand_boolean(rng) ? 0x3c00 : (g_rand_boolean(rng) ? 0x8000 : 0);
    else if (mode == 0)
      set(&index, i, g_rand_boolean(rng) ? (double)g_rand_int_range(rng, 1, 4) : 0.0);
    else if (index_t == DS_DTYPE_FLOAT16)
      ((uint16_t *)index.data)[i] = mode == 2 ? 0x4000 : 0;
    else
      set(&index, i, mode == 2 ? 1.0 : 0.0);
  }
  /* The kept positions, by the reference's own truth test. */
  int64_t kept[64], n_kept = 0;
  g_assert_cmpint(len, <=, 64);
  for (int64_t i = 0; i < len; i++)
    if (is_true(&index, i))
      kept[n_kept++] = i;
  if (mode == 1)
    g_assert_cmpint(n_kept, ==, 0);
  if (mode == 2)
    g_assert_cmpint(n_kept, ==, len);

  DsTensor in[2] = {x, index}, out[1];
  TestAlloc alloc = test_alloc_new();
  g_assert_cmpint(run_dynamic(DS_OP_BOOLEAN_MASK, n->param, in, 2, out, 1, &alloc), ==,
                  DS_STATUS_OK);
  g_assert_cmpint(alloc.calls, ==, 1);
  int64_t want[DS_MAX_NDIM];
  memcpy(want, dims, sizeof(int64_t) * nd);
  want[a] = n_kept;
  assert_tensor_shape(&out[0], t, nd, want);
  int64_t total = ds_tensor_numel(&out[0]);
  for (int64_t i = 0; i < total; i++) {
    int64_t idx[DS_MAX_NDIM], src = 0;
    int64_t flat = i;
    for (int d = nd - 1; d >= 0; d--) {
      idx[d] = flat % want[d];
      flat /= want[d];
    }
    idx[a] = kept[idx[a]];
    for (int d = 0; d < nd; d++)
      src = src * dims[d] + idx[d];
    if (bits(&out[0], i) != bits(&x, src))
      g_error("boolean_mask %s axis %d: element %" G_GINT64_FORMAT " differs", ds_dtype_name(t),
              axis, i);
  }
  if (mode == 2)
    g_assert_cmpmem(out[0].data, ds_tensor_nbytes(&out[0]), x.data, ds_tensor_nbytes(&x));
  test_alloc_free(&alloc);
  tensor_free(&x);
  tensor_free(&index);
}

static void test_kernel_boolean_mask(void)
{
  static const struct {
    int nd;
    int64_t dims[4];
  } shapes[] = {{3, {4, 5, 3}}, {1, {17}}, {4, {2, 3, 6, 5}}, {2, {40, 1}}};
  for (guint s = 0; s < G_N_ELEMENTS(shapes); s++)
    for (int axis = -shapes[s].nd; axis < shapes[s].nd; axis++)
      for (int mode = 0; mode < 3; mode++)
        for (guint t = 0; t < G_N_ELEMENTS(move_types); t++)
          check_boolean_mask(move_types[t], move_types[(t + s + 1) % G_N_ELEMENTS(move_types)],
                             shapes[s].nd, shapes[s].dims, axis, mode);
  /* A zero-size data: (0, 3) masked on axis 0 by an empty index, and on axis 1. */
  int64_t empty[2] = {0, 3};
  check_boolean_mask(DS_DTYPE_FLOAT32, DS_DTYPE_BOOL, 2, empty, 0, 0);
  check_boolean_mask(DS_DTYPE_FLOAT32, DS_DTYPE_BOOL, 2, empty, 1, 2);
  /* A row large enough to use the thread pool. */
  int64_t big[2] = {64, 5000};
  check_boolean_mask(DS_DTYPE_FLOAT32, DS_DTYPE_INT32, 2, big, 0, 0);

  /* Errors: a wrong index length, and an allocation that fails. */
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "_contrib_boolean_mask", 2, NULL);
  DsTensor in[2] = {tensor_new(DS_DTYPE_FLOAT32, "(4, 3)"), tensor_new(DS_DTYPE_INT32, "(3,)")};
  DsTensor out[1];
  TestAlloc alloc = test_alloc_new();
  g_assert_cmpint(run_dynamic(DS_OP_BOOLEAN_MASK, n->param, in, 2, out, 1, &alloc), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  tensor_free(&in[1]);
  in[1] = tensor_new(DS_DTYPE_INT32, "(4,)");
  alloc.fail_with = DS_STATUS_NO_MEMORY;
  g_assert_cmpint(run_dynamic(DS_OP_BOOLEAN_MASK, n->param, in, 2, out, 1, &alloc), ==,
                  DS_STATUS_NO_MEMORY);
  /* Without an allocator (a static executor), a dynamic kernel says so. */
  const DsKernel *k = ds_cpu_backend_get()->get_kernel(DS_OP_BOOLEAN_MASK);
  int64_t ws[4];
  out[0] = (DsTensor){.ndim = -1};
  DsKernelCtx ctx = {n->param, in, 2, out, 1, ws, pool, NULL, NULL};
  g_assert_cmpint(k->run(&ctx), ==, DS_STATUS_UNSUPPORTED);
  /* An output the executor already shaped is checked, not reallocated. */
  set(&in[1], 1, 1);
  set(&in[1], 3, 1);
  fill_random(&in[0], -5, 5);
  DsTensor pre = tensor_new(DS_DTYPE_FLOAT32, "(2, 3)");
  ctx.outputs = &pre;
  g_assert_cmpint(k->run(&ctx), ==, DS_STATUS_OK);
  g_assert_cmpmem(pre.data, 3 * sizeof(float), (float *)in[0].data + 3, 3 * sizeof(float));
  g_assert_cmpmem((float *)pre.data + 3, 3 * sizeof(float), (float *)in[0].data + 9,
                  3 * sizeof(float));
  DsTensor wrong = tensor_new(DS_DTYPE_FLOAT32, "(3, 3)");
  ctx.outputs = &wrong;
  g_assert_cmpint(k->run(&ctx), ==, DS_STATUS_INVALID_ARGUMENT);
  tensor_free(&pre);
  tensor_free(&wrong);
  test_alloc_free(&alloc);
  tensor_free(&in[0]);
  tensor_free(&in[1]);
}

static void check_nonzero(DsDType t, int nd, const int64_t *dims, double density)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "_npx_nonzero", 1, NULL);
  DsTensor x = tensor_dims(t, nd, dims);
  int64_t size = ds_tensor_numel(&x);
  for (int64_t i = 0; i < size; i++) {
    bool on = g_rand_double(rng) < density;
    if (t == DS_DTYPE_FLOAT16)
      ((uint16_t *)x.data)[i] = on ? (uint16_t)g_rand_int_range(rng, 1, 0x7c00) : 0x8000;
    else
      set(&x, i, on ? (double)g_rand_int_range(rng, 1, 100) : 0.0);
  }
  DsTensor out[1];
  TestAlloc alloc = test_alloc_new();
  g_assert_cmpint(run_dynamic(DS_OP_NONZERO, n->param, &x, 1, out, 1, &alloc), ==, DS_STATUS_OK);
  int64_t count = 0;
  for (int64_t i = 0; i < size; i++)
    count += is_true(&x, i);
  int64_t want[2] = {count, nd};
  assert_tensor_shape(&out[0], DS_DTYPE_INT64, 2, want);
  const int64_t *coords = out[0].data;
  int64_t row = 0;
  for (int64_t i = 0; i < size; i++) {
    if (!is_true(&x, i))
      continue;
    int64_t flat = i;
    for (int d = nd - 1; d >= 0; d--) {
      g_assert_cmpint(coords[row * nd + d], ==, flat % dims[d]);
      flat /= dims[d];
    }
    row++;
  }
  g_assert_cmpint(row, ==, count);
  test_alloc_free(&alloc);
  tensor_free(&x);
}

static void test_kernel_nonzero(void)
{
  int64_t d3[3] = {3, 4, 5}, d1[1] = {13}, d4[4] = {2, 1, 3, 2}, d0[1] = {0}, dz[2] = {0, 4};
  for (guint t = 0; t < G_N_ELEMENTS(move_types); t++) {
    check_nonzero(move_types[t], 3, d3, 0.4);
    check_nonzero(move_types[t], 1, d1, 0.7);
    check_nonzero(move_types[t], 4, d4, 1.0);
    check_nonzero(move_types[t], 3, d3, 0.0); /* none nonzero: (0, 3) */
    check_nonzero(move_types[t], 0, d0, 1.0); /* a 0-dim nonzero: (1, 0) */
    check_nonzero(move_types[t], 0, d0, 0.0); /* a 0-dim zero: (0, 0) */
    check_nonzero(move_types[t], 2, dz, 1.0); /* an empty input */
  }
  /* NaN is nonzero, and so is -0.0 not. */
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "_npx_nonzero", 1, NULL);
  DsTensor x = vector_of(DS_DTYPE_FLOAT64, 4, (double[]){-0.0, NAN, 0.0, -3.0});
  DsTensor out[1];
  TestAlloc alloc = test_alloc_new();
  g_assert_cmpint(run_dynamic(DS_OP_NONZERO, n->param, &x, 1, out, 1, &alloc), ==, DS_STATUS_OK);
  g_assert_cmpint(out[0].shape[0], ==, 2);
  g_assert_cmpint(((int64_t *)out[0].data)[0], ==, 1);
  g_assert_cmpint(((int64_t *)out[0].data)[1], ==, 3);
  test_alloc_free(&alloc);
  tensor_free(&x);
}

/* Runs a shape-tensor source on a shape holding `values` (in dtype `shape_t`). */
static DsStatus run_shape_init(DsNode *n, DsDType shape_t, int n_values, const double *values,
                               DsTensor *out, TestAlloc *alloc)
{
  DsTensor s = vector_of(shape_t, n_values, values);
  DsStatus status = run_dynamic(n->op->id, n->param, &s, 1, out, 1, alloc);
  tensor_free(&s);
  return status;
}

static void test_kernel_shape_init(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  static const DsDType out_types[] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT64, DS_DTYPE_INT32,
                                      DS_DTYPE_INT64,   DS_DTYPE_INT8,    DS_DTYPE_UINT8,
                                      DS_DTYPE_BOOL};
  for (guint t = 0; t < G_N_ELEMENTS(out_types); t++) {
    const char *dt = ds_dtype_name(out_types[t]);
    DsNode *nodes[3] = {make_node(g, "_zeros_shape", 1, "dtype", dt, NULL),
                        make_node(g, "_ones_shape", 1, "dtype", dt, NULL),
                        make_node(g, "_full_shape", 1, "dtype", dt, "value", "7.75", NULL)};
    double want_value[3] = {0.0, 1.0, 7.75};
    if (!ds_dtype_is_float(out_types[t]))
      want_value[2] = out_types[t] == DS_DTYPE_BOOL ? 1.0 : 7.0;
    for (int k = 0; k < 3; k++) {
      DsDType shape_t = number_types[(t + k) % G_N_ELEMENTS(number_types)];
      DsTensor out[1];
      TestAlloc alloc = test_alloc_new();
      g_assert_cmpint(run_shape_init(nodes[k], shape_t, 3, (double[]){2, 3, 40}, out, &alloc), ==,
                      DS_STATUS_OK);
      assert_tensor_shape(&out[0], out_types[t], 3, (int64_t[]){2, 3, 40});
      for (int64_t i = 0; i < 240; i++)
        g_assert_cmpfloat(get(&out[0], i), ==, want_value[k]);
      test_alloc_free(&alloc);
    }
  }
  DsNode *f = make_node(g, "_full_shape", 1, "value", "-1.5", "dtype", "float64", NULL);
  DsTensor out[1];
  TestAlloc alloc = test_alloc_new();
  /* A zero dim gives an empty tensor; no values give a scalar; a big one uses the pool. */
  g_assert_cmpint(run_shape_init(f, DS_DTYPE_INT64, 2, (double[]){0, 5}, out, &alloc), ==,
                  DS_STATUS_OK);
  assert_tensor_shape(&out[0], DS_DTYPE_FLOAT64, 2, (int64_t[]){0, 5});
  g_assert_cmpint(run_shape_init(f, DS_DTYPE_INT64, 0, NULL, out, &alloc), ==, DS_STATUS_OK);
  g_assert_cmpint(out[0].ndim, ==, 0);
  g_assert_cmpfloat(get(&out[0], 0), ==, -1.5);
  g_assert_cmpint(run_shape_init(f, DS_DTYPE_FLOAT32, 2, (double[]){300, 1000}, out, &alloc), ==,
                  DS_STATUS_OK);
  for (int64_t i = 0; i < 300000; i += 997)
    g_assert_cmpfloat(get(&out[0], i), ==, -1.5);
  g_assert_cmpfloat(get(&out[0], 299999), ==, -1.5);
  /* Negative, fractional or NaN dims, and too many of them, are invalid; so are dims whose
   * product cannot be allocated. */
  g_assert_cmpint(run_shape_init(f, DS_DTYPE_INT32, 2, (double[]){2, -1}, out, &alloc), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  g_assert_cmpint(run_shape_init(f, DS_DTYPE_FLOAT32, 1, (double[]){2.5}, out, &alloc), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  g_assert_cmpint(run_shape_init(f, DS_DTYPE_FLOAT64, 1, (double[]){NAN}, out, &alloc), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  g_assert_cmpint(
      run_shape_init(f, DS_DTYPE_INT64, 9, (double[]){1, 1, 1, 1, 1, 1, 1, 1, 1}, out, &alloc), ==,
      DS_STATUS_INVALID_ARGUMENT);
  g_assert_cmpint(run_shape_init(f, DS_DTYPE_INT64, 3, (double[]){1e9, 1e9, 1e9}, out, &alloc), ==,
                  DS_STATUS_NO_MEMORY);
  /* float16 shapes cannot be read as numbers. */
  DsTensor h = tensor_new(DS_DTYPE_FLOAT16, "(2,)");
  g_assert_cmpint(run_dynamic(DS_OP_FULL_SHAPE, f->param, &h, 1, out, 1, &alloc), ==,
                  DS_STATUS_UNSUPPORTED);
  tensor_free(&h);
  test_alloc_free(&alloc);
}

static DsStatus run_dynamic_reshape(DsTensor *x, DsDType shape_t, int n_values,
                                    const double *values, DsTensor *out, TestAlloc *alloc)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "_contrib_dynamic_reshape", 2, NULL);
  DsTensor in[2] = {*x, vector_of(shape_t, n_values, values)};
  DsStatus status = run_dynamic(DS_OP_DYNAMIC_RESHAPE, n->param, in, 2, out, 1, alloc);
  tensor_free(&in[1]);
  return status;
}

static void test_kernel_dynamic_reshape(void)
{
  static const struct {
    int n;
    double codes[4];
    int nd;
    int64_t want[4];
  } cases[] = {
      {2, {0, -1}, 2, {2, 12}},
      {2, {-1, 4}, 2, {6, 4}},
      {3, {4, 0, -1}, 3, {4, 3, 2}},
      {1, {24}, 1, {24}},
      {1, {-1}, 1, {24}},
      {4, {0, 0, 2, 2}, 4, {2, 3, 2, 2}},
      {4, {1, -1, 1, 3}, 4, {1, 8, 1, 3}},
      {3, {0, 0, 0}, 3, {2, 3, 4}},
  };
  for (guint t = 0; t < G_N_ELEMENTS(move_types); t++) {
    DsTensor x = tensor_new(move_types[t], "(2, 3, 4)");
    fill_random(&x, -100, 100);
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
      DsTensor out[1];
      TestAlloc alloc = test_alloc_new();
      /* Signed dtypes only: -1 is a code. */
      DsDType shape_t = number_types[(t + c) % (G_N_ELEMENTS(number_types) - 1)];
      g_assert_cmpint(run_dynamic_reshape(&x, shape_t, cases[c].n, cases[c].codes, out, &alloc), ==,
                      DS_STATUS_OK);
      assert_tensor_shape(&out[0], move_types[t], cases[c].nd, cases[c].want);
      g_assert_true(out[0].data != x.data);
      g_assert_cmpmem(out[0].data, ds_tensor_nbytes(&out[0]), x.data, ds_tensor_nbytes(&x));
      test_alloc_free(&alloc);
    }
    tensor_free(&x);
  }
  /* Errors: a size mismatch, two -1, a 0 past the data's rank, another negative code, a
   * fractional code; and a -1 next to a 0 dim, which any size would satisfy. */
  static const struct {
    int n;
    double codes[5];
  } bad[] = {{2, {5, -1}}, {2, {-1, -1}},  {4, {0, 0, 0, 0}}, {2, {-2, 4}},
             {1, {25}},    {2, {1.5, 16}}, {3, {0, 0, 5}}};
  DsTensor x = tensor_new(DS_DTYPE_FLOAT32, "(2, 3, 4)");
  for (guint b = 0; b < G_N_ELEMENTS(bad); b++) {
    DsTensor out[1];
    TestAlloc alloc = test_alloc_new();
    g_assert_cmpint(run_dynamic_reshape(&x, DS_DTYPE_FLOAT64, bad[b].n, bad[b].codes, out, &alloc),
                    ==, DS_STATUS_INVALID_ARGUMENT);
    g_assert_cmpint(alloc.calls, ==, 0);
    test_alloc_free(&alloc);
  }
  tensor_free(&x);
  DsTensor e = tensor_new(DS_DTYPE_FLOAT32, "(0, 3)");
  DsTensor out[1];
  TestAlloc alloc = test_alloc_new();
  g_assert_cmpint(run_dynamic_reshape(&e, DS_DTYPE_INT64, 2, (double[]){3, 0}, out, &alloc), ==,
                  DS_STATUS_INVALID_ARGUMENT); /* 0 copies the data's 3: (3, 3) holds 9 */
  g_assert_cmpint(run_dynamic_reshape(&e, DS_DTYPE_INT64, 3, (double[]){3, 5, 0}, out, &alloc), ==,
                  DS_STATUS_INVALID_ARGUMENT); /* 0 past the rank */
  g_assert_cmpint(run_dynamic_reshape(&e, DS_DTYPE_INT64, 2, (double[]){-1, 0}, out, &alloc), ==,
                  DS_STATUS_OK);
  assert_tensor_shape(&out[0], DS_DTYPE_FLOAT32, 2, (int64_t[]){0, 3});
  g_assert_cmpint(run_dynamic_reshape(&e, DS_DTYPE_INT64, 3, (double[]){5, 0, 0}, out, &alloc), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  g_assert_cmpint(run_dynamic_reshape(&e, DS_DTYPE_INT64, 2, (double[]){0, -1}, out, &alloc), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  g_assert_cmpint(run_dynamic_reshape(&e, DS_DTYPE_INT64, 2, (double[]){7, -1}, out, &alloc), ==,
                  DS_STATUS_OK);
  assert_tensor_shape(&out[0], DS_DTYPE_FLOAT32, 2, (int64_t[]){7, 0});
  g_assert_cmpint(run_dynamic_reshape(&e, DS_DTYPE_INT64, 3, (double[]){3, 0, 1}, out, &alloc), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  test_alloc_free(&alloc);
  tensor_free(&e);
}

/* Runs _contrib_dynamic_arange with bounds in the given dtypes; checks the values against
 * start + i * step in double, converted as C converts (truncation for integers). */
static void check_arange(DsDType out_t, double start, double stop, double step, int64_t want_n)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "_contrib_dynamic_arange", 3, "dtype", ds_dtype_name(out_t), NULL);
  DsDType bt = ds_dtype_is_float(out_t) ? DS_DTYPE_FLOAT64 : DS_DTYPE_INT64;
  DsTensor in[3] = {scalar_of(DS_DTYPE_FLOAT64, false, start), scalar_of(bt, true, stop),
                    scalar_of(DS_DTYPE_FLOAT32, false, step)};
  DsTensor out[1];
  TestAlloc alloc = test_alloc_new();
  g_assert_cmpint(run_dynamic(DS_OP_DYNAMIC_ARANGE, n->param, in, 3, out, 1, &alloc), ==,
                  DS_STATUS_OK);
  assert_tensor_shape(&out[0], out_t, 1, &want_n);
  double fstep = (float)step;
  for (int64_t i = 0; i < want_n; i++) {
    double v = start + (double)i * fstep;
    double want = out_t == DS_DTYPE_FLOAT32  ? (double)(float)v
                  : ds_dtype_is_float(out_t) ? v
                                             : (double)(int64_t)v;
    if (out_t == DS_DTYPE_INT8)
      want = (double)(int8_t)(int64_t)v;
    if (out_t == DS_DTYPE_UINT8)
      want = (double)(uint8_t)(int64_t)v;
    if (get(&out[0], i) != want)
      g_error("arange(%g, %g, %g) as %s: [%" G_GINT64_FORMAT "] = %g, want %g", start, stop, step,
              ds_dtype_name(out_t), i, get(&out[0], i), want);
  }
  test_alloc_free(&alloc);
  for (int i = 0; i < 3; i++)
    tensor_free(&in[i]);
}

static void test_kernel_dynamic_arange(void)
{
  for (guint t = 0; t < G_N_ELEMENTS(number_types); t++) {
    DsDType ot = number_types[t];
    check_arange(ot, 0, 10, 3, 4);
    check_arange(ot, 5, 0, -1.5, 4);
    check_arange(ot, 5, 0, 1, 0);  /* empty: stop before start */
    check_arange(ot, 3, 3, 1, 0);  /* empty: stop at start */
    check_arange(ot, 0, 5, -1, 0); /* empty: the wrong direction */
    check_arange(ot, 1, 2, 0.25, 4);
    check_arange(ot, -7, 7, 2, 7);
  }
  check_arange(DS_DTYPE_FLOAT64, 0, 100000, 1, 100000);
  check_arange(DS_DTYPE_FLOAT32, 0.5, 1, 0.125, 4);

  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "_contrib_dynamic_arange", 3, NULL);
  static const double bad[][3] = {{0, 10, 0}, {NAN, 10, 1}, {0, INFINITY, 1}, {0, 1e300, 1e-300}};
  DsTensor out[1];
  TestAlloc alloc = test_alloc_new();
  for (guint b = 0; b < G_N_ELEMENTS(bad); b++) {
    DsTensor in[3];
    for (int i = 0; i < 3; i++)
      in[i] = scalar_of(DS_DTYPE_FLOAT64, false, bad[b][i]);
    g_assert_cmpint(run_dynamic(DS_OP_DYNAMIC_ARANGE, n->param, in, 3, out, 1, &alloc), ==,
                    DS_STATUS_INVALID_ARGUMENT);
    for (int i = 0; i < 3; i++)
      tensor_free(&in[i]);
  }
  /* A bound of two elements is not a scalar. */
  DsTensor in[3] = {scalar_of(DS_DTYPE_INT32, false, 0), tensor_new(DS_DTYPE_INT32, "(2,)"),
                    scalar_of(DS_DTYPE_INT32, false, 1)};
  g_assert_cmpint(run_dynamic(DS_OP_DYNAMIC_ARANGE, n->param, in, 3, out, 1, &alloc), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  g_assert_cmpint(alloc.calls, ==, 0);
  for (int i = 0; i < 3; i++)
    tensor_free(&in[i]);
  test_alloc_free(&alloc);
}

/* ---- unique ---- */

/* The items unique compares: `len` slices of `outer` x `inner` elements, or every element. */
typedef struct {
  const DsTensor *x;
  int64_t outer, len, inner;
} Items;

static double item_elem(const Items *it, int64_t k, int64_t e)
{
  int64_t o = e / it->inner, i = e % it->inner;
  return get(it->x, (o * it->len + k) * it->inner + i);
}

/* NumPy's order: NaN last, NaNs equal. */
static int ref_cmp(const Items *it, int64_t a, int64_t b)
{
  for (int64_t e = 0; e < it->outer * it->inner; e++) {
    double x = item_elem(it, a, e), y = item_elem(it, b, e);
    int c = isnan(x) || isnan(y) ? (int)isnan(x) - (int)isnan(y) : (x > y) - (x < y);
    if (c != 0)
      return c;
  }
  return 0;
}

static void check_unique(DsDType t, int nd, const int64_t *dims, const char *axis, int flags,
                         bool with_nan)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  const char *yes = "True", *no = "False";
  DsNode *n =
      make_node(g, "_npi_unique", 1, "return_index", flags & 1 ? yes : no, "return_inverse",
                flags & 2 ? yes : no, "return_counts", flags & 4 ? yes : no, "axis", axis, NULL);
  const DsUniqueParam *p = n->param;
  DsTensor x = tensor_dims(t, nd, dims);
  /* Few distinct values, so there are repeats (whole repeated slices too, along an axis). */
  fill_random(&x, 0, 3);
  if (ds_dtype_is_float(t))
    for (int64_t i = 0; i < ds_tensor_numel(&x); i++)
      set(&x, i,
          with_nan && g_rand_int_range(rng, 0, 5) == 0 ? NAN : floor(get(&x, i) * 2) / 2 - 0.5);
  Items it = {&x, 1, ds_tensor_numel(&x), 1};
  int a = -1;
  if (p->has_axis) {
    a = p->axis < 0 ? p->axis + nd : p->axis;
    it.outer = 1;
    for (int d = 0; d < a; d++)
      it.outer *= dims[d];
    it.len = dims[a];
    it.inner = 1;
    for (int d = a + 1; d < nd; d++)
      it.inner *= dims[d];
    /* Copy some slices onto others so that whole slices repeat. */
    for (int64_t k = 1; k < it.len; k += 2) {
      int64_t from = g_rand_int_range(rng, 0, (gint32)k);
      for (int64_t o = 0; o < it.outer; o++)
        for (int64_t i = 0; i < it.inner; i++)
          set(&x, (o * it.len + k) * it.inner + i, get(&x, (o * it.len + from) * it.inner + i));
    }
  }

  /* The reference: first occurrences, sorted by selection; counts and inverse by search. */
  int64_t n_items = it.len;
  g_autofree int64_t *firsts = g_new(int64_t, MAX(n_items, 1));
  int64_t n_unique = 0;
  for (int64_t k = 0; k < n_items; k++) {
    bool seen = false;
    for (int64_t j = 0; j < n_unique && !seen; j++)
      seen = ref_cmp(&it, firsts[j], k) == 0;
    if (!seen)
      firsts[n_unique++] = k;
  }
  for (int64_t i = 0; i < n_unique; i++)
    for (int64_t j = i + 1; j < n_unique; j++)
      if (ref_cmp(&it, firsts[j], firsts[i]) < 0) {
        int64_t tmp = firsts[i];
        firsts[i] = firsts[j];
        firsts[j] = tmp;
      }

  int n_out = ds_unique_num_outputs(p);
  DsTensor out[4];
  TestAlloc alloc = test_alloc_new();
  g_assert_cmpint(run_dynamic(DS_OP_UNIQUE, p, &x, 1, out, n_out, &alloc), ==, DS_STATUS_OK);
  g_assert_cmpint(alloc.calls, ==, n_out);
  /* The values: item firsts[g] of the data at position g. */
  if (p->has_axis) {
    int64_t want[DS_MAX_NDIM];
    memcpy(want, dims, sizeof(int64_t) * nd);
    want[a] = n_unique;
    assert_tensor_shape(&out[0], t, nd, want);
  } else {
    assert_tensor_shape(&out[0], t, 1, &n_unique);
  }
  Items got = {&out[0], it.outer, n_unique, it.inner};
  for (int64_t gi = 0; gi < n_unique; gi++)
    for (int64_t e = 0; e < it.outer * it.inner; e++) {
      double v = item_elem(&got, gi, e), w = item_elem(&it, firsts[gi], e);
      if (!(v == w || (isnan(v) && isnan(w))))
        g_error("unique %s axis %s: value %" G_GINT64_FORMAT "/%" G_GINT64_FORMAT " is %g, want %g",
                ds_dtype_name(t), axis, gi, e, v, w);
    }
  int k = 1;
  if (p->return_index) {
    assert_tensor_shape(&out[k], DS_DTYPE_INT64, 1, &n_unique);
    for (int64_t gi = 0; gi < n_unique; gi++)
      g_assert_cmpint(((int64_t *)out[k].data)[gi], ==, firsts[gi]);
    k++;
  }
  if (p->return_inverse) {
    assert_tensor_shape(&out[k], DS_DTYPE_INT64, 1, &n_items);
    for (int64_t j = 0; j < n_items; j++) {
      int64_t gi = ((int64_t *)out[k].data)[j];
      g_assert_cmpint(gi, >=, 0);
      g_assert_cmpint(gi, <, n_unique);
      g_assert_cmpint(ref_cmp(&it, firsts[gi], j), ==, 0);
    }
    k++;
  }
  if (p->return_counts) {
    assert_tensor_shape(&out[k], DS_DTYPE_INT64, 1, &n_unique);
    int64_t total = 0;
    for (int64_t gi = 0; gi < n_unique; gi++) {
      int64_t c = 0;
      for (int64_t j = 0; j < n_items; j++)
        c += ref_cmp(&it, firsts[gi], j) == 0;
      g_assert_cmpint(((int64_t *)out[k].data)[gi], ==, c);
      total += c;
    }
    g_assert_cmpint(total, ==, n_items);
  }
  test_alloc_free(&alloc);
  tensor_free(&x);
}

static void test_kernel_unique(void)
{
  static const DsDType types[] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT64, DS_DTYPE_INT32,
                                  DS_DTYPE_INT64,   DS_DTYPE_INT8,    DS_DTYPE_UINT8,
                                  DS_DTYPE_BOOL};
  int64_t d3[3] = {3, 6, 2}, d1[1] = {50}, d2[2] = {40, 2}, d0[1] = {0}, de[2] = {0, 3};
  for (int flags = 0; flags < 8; flags++) {
    for (guint t = 0; t < G_N_ELEMENTS(types); t++) {
      check_unique(types[t], 3, d3, "None", flags, false);
      check_unique(types[t], 1, d1, "None", flags, false);
      check_unique(types[t], 3, d3, "0", flags, false);
      check_unique(types[t], 3, d3, "1", flags, false);
      check_unique(types[t], 3, d3, "-1", flags, false);
      check_unique(types[t], 2, d2, "0", flags, false);
    }
    check_unique(DS_DTYPE_FLOAT32, 1, d1, "None", flags, true);
    check_unique(DS_DTYPE_FLOAT64, 2, d2, "0", flags, true);
    check_unique(DS_DTYPE_INT32, 0, d0, "None", flags, false);   /* a 0-dim: (1,) */
    check_unique(DS_DTYPE_FLOAT32, 2, de, "None", flags, false); /* empty: (0,) */
    check_unique(DS_DTYPE_FLOAT32, 2, de, "0", flags, false);
  }
  /* A long input: the merge sort's passes beyond the first runs. */
  int64_t big[1] = {5000};
  check_unique(DS_DTYPE_INT64, 1, big, "None", 7, false);

  /* NaNs make one unique value, last; -0.0 and 0.0 are one. */
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "_npi_unique", 1, "return_counts", "True", NULL);
  DsTensor x = vector_of(DS_DTYPE_FLOAT64, 7, (double[]){NAN, 2, -0.0, NAN, 0.0, -1, 2});
  DsTensor out[2];
  TestAlloc alloc = test_alloc_new();
  g_assert_cmpint(run_dynamic(DS_OP_UNIQUE, n->param, &x, 1, out, 2, &alloc), ==, DS_STATUS_OK);
  g_assert_cmpint(out[0].shape[0], ==, 4);
  g_assert_cmpfloat(get(&out[0], 0), ==, -1);
  g_assert_cmpfloat(get(&out[0], 1), ==, 0);
  g_assert_cmpfloat(get(&out[0], 2), ==, 2);
  g_assert_true(isnan(get(&out[0], 3)));
  static const int64_t counts[4] = {1, 2, 2, 2};
  g_assert_cmpmem(out[1].data, sizeof counts, counts, sizeof counts);
  /* float16 keys are not compared. */
  DsTensor h = tensor_new(DS_DTYPE_FLOAT16, "(3,)");
  g_assert_cmpint(run_dynamic(DS_OP_UNIQUE, n->param, &h, 1, out, 2, &alloc), ==,
                  DS_STATUS_UNSUPPORTED);
  tensor_free(&h);
  tensor_free(&x);
  test_alloc_free(&alloc);
}

/* ================================ ONNX's dynamic forms ================================ */

/* A tensor of dtype t and shape `shape` holding `values`. */
static DsTensor values_of(DsDType t, const char *shape, const double *values)
{
  DsTensor x = tensor_new(t, shape);
  for (int64_t i = 0; i < ds_tensor_numel(&x); i++)
    set(&x, i, values[i]);
  return x;
}

static void assert_values(const DsTensor *x, const double *want)
{
  for (int64_t i = 0; i < ds_tensor_numel(x); i++)
    if (fabs(get(x, i) - want[i]) > 1e-9)
      g_error("element %" G_GINT64_FORMAT ": got %g, want %g", i, get(x, i), want[i]);
}

static void test_onnx_registration_and_shapes(void)
{
  static const struct {
    const char *name;
    DsOpId id;
    guint traits;
  } ops[] = {
      {"_contrib_dynamic_slice", DS_OP_DYNAMIC_SLICE,
       DS_OP_TRAIT_DYNAMIC_SHAPE | DS_OP_TRAIT_SHAPE_INPUT},
      {"_contrib_dynamic_expand", DS_OP_DYNAMIC_EXPAND,
       DS_OP_TRAIT_DYNAMIC_SHAPE | DS_OP_TRAIT_SHAPE_INPUT},
      {"_contrib_dynamic_tile", DS_OP_DYNAMIC_TILE,
       DS_OP_TRAIT_DYNAMIC_SHAPE | DS_OP_TRAIT_SHAPE_INPUT},
      {"_contrib_dynamic_pad", DS_OP_DYNAMIC_PAD, DS_OP_TRAIT_DYNAMIC_SHAPE | DS_OP_TRAIT_SHAPE_INPUT},
      {"_contrib_dynamic_squeeze", DS_OP_DYNAMIC_SQUEEZE,
       DS_OP_TRAIT_DYNAMIC_SHAPE | DS_OP_TRAIT_SHAPE_INPUT},
      {"_contrib_dynamic_expand_dims", DS_OP_DYNAMIC_EXPAND_DIMS,
       DS_OP_TRAIT_DYNAMIC_SHAPE | DS_OP_TRAIT_SHAPE_INPUT},
      {"_contrib_dynamic_topk", DS_OP_DYNAMIC_TOPK, DS_OP_TRAIT_DYNAMIC_SHAPE},
      {"_contrib_dynamic_one_hot", DS_OP_DYNAMIC_ONE_HOT, DS_OP_TRAIT_DYNAMIC_SHAPE},
      {"_contrib_compress", DS_OP_COMPRESS, DS_OP_TRAIT_DYNAMIC_SHAPE},
  };
  for (guint i = 0; i < G_N_ELEMENTS(ops); i++) {
    const DsOpDef *op = ds_op_lookup(ops[i].name);
    g_assert_nonnull(op);
    g_assert_cmpint(op->id, ==, ops[i].id);
    g_assert_cmpuint(op->traits, ==, ops[i].traits);
    g_assert_nonnull(ds_cpu_backend_get()->get_kernel(op->id));
  }
  g_autoptr(DsGraph) g = ds_graph_new();
  /* dynamic_slice: the input count follows the flags; axes and use_axes exclude each other. */
  DsNode *sl = make_node(g, "_contrib_dynamic_slice", 5, "use_axes", "1", "use_steps", "1", NULL);
  g_assert_cmpint(sl->op->num_inputs(sl->param), ==, 5);
  g_autofree char *m1 =
      parse_error("_contrib_dynamic_slice", 4, "axes", "(0,)", "use_axes", "1", NULL);
  g_assert_nonnull(strstr(m1, "use_axes"));
  g_autofree char *m2 = parse_error("_contrib_dynamic_pad", 3, "mode", "wrap", NULL);
  g_assert_nonnull(strstr(m2, "mode"));
  g_autofree char *m3 = parse_error("_contrib_dynamic_topk", 2, "dtype", "uint8", NULL);
  g_assert_nonnull(strstr(m3, "dtype"));

  Sym s = sym_new();
  /* Sliced axes get unbacked lengths bounded by their size; the others pass through. */
  DsNode *sa = make_node(g, "_contrib_dynamic_slice", 3, "axes", "(-1,)", NULL);
  DsShape si[3] = {sym_shp(s.exprs, "(N, 10)"), shp("(1,)"), shp("(1,)")},
          so[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, sa, si, so));
  g_assert_true(ds_dim_is_known(so[0].dims[0]) && !ds_expr_is_unbacked(so[0].dims[0].expr));
  assert_unbacked(&s, so[0].dims[1], 10);
  /* Without axes, the bounds' length says how many leading axes are sliced. */
  DsNode *sb = make_node(g, "_contrib_dynamic_slice", 3, NULL);
  DsShape ti[3] = {shp("(4, 5, 6)"), shp("(2,)"), shp("(?,)")}, to[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, sb, ti, to));
  assert_unbacked(&s, to[0].dims[0], 4);
  assert_unbacked(&s, to[0].dims[1], 5);
  g_assert_cmpint(to[0].dims[2].value, ==, 6);
  assert_shape(&ti[2], "(2,)");
  DsShape bad[3] = {shp("(4, 5)"), shp("(2,)"), shp("(3,)")}, bo[1] = {DS_SHAPE_UNKNOWN};
  g_autofree char *e1 = infer_in(s.ctx, sb, bad, bo);
  g_assert_nonnull(e1);

  /* dynamic_expand: a data dim other than 1 stays; the rest come from the values. */
  DsNode *ex = make_node(g, "_contrib_dynamic_expand", 2, NULL);
  DsShape ei[2] = {shp("(3, 1)"), shp("(3,)")}, eo[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, ex, ei, eo));
  g_assert_cmpint(eo[0].ndim, ==, 3);
  g_assert_cmpint(eo[0].dims[1].value, ==, 3);
  assert_unbacked(&s, eo[0].dims[2], DS_EXPR_INF);

  /* dynamic_tile: reps has one entry per dim. */
  DsNode *ti2 = make_node(g, "_contrib_dynamic_tile", 2, NULL);
  DsShape ri[2] = {shp("(3, 0)"), shp("(3,)")}, ro[1] = {DS_SHAPE_UNKNOWN};
  g_autofree char *e2 = infer_in(s.ctx, ti2, ri, ro);
  g_assert_nonnull(e2);
  ri[1] = shp("(2,)");
  g_assert_null(infer_in(s.ctx, ti2, ri, ro));
  g_assert_cmpint(ro[0].dims[1].value, ==, 0);

  /* dynamic_pad: pads has two entries per dim; value is a scalar. */
  DsNode *pd = make_node(g, "_contrib_dynamic_pad", 3, NULL);
  DsShape pi[3] = {shp("(3, 4)"), DS_SHAPE_UNKNOWN, shp("()")}, po[1] = {DS_SHAPE_UNKNOWN};
  pi[1] = shp("(?,)");
  g_assert_null(infer_in(s.ctx, pd, pi, po));
  assert_shape(&pi[1], "(4,)");
  g_assert_cmpint(po[0].ndim, ==, 2);

  /* squeeze / expand_dims: the rank moves by the axes' count. */
  DsNode *sq = make_node(g, "_contrib_dynamic_squeeze", 2, NULL);
  DsShape qi[2] = {shp("(1, 3, 1)"), shp("(2,)")}, qo[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, sq, qi, qo));
  g_assert_cmpint(qo[0].ndim, ==, 1);
  qi[1] = shp("(4,)");
  qo[0] = DS_SHAPE_UNKNOWN;
  g_autofree char *e3 = infer_in(s.ctx, sq, qi, qo);
  g_assert_nonnull(e3);
  DsNode *ed = make_node(g, "_contrib_dynamic_expand_dims", 2, NULL);
  DsShape di[2] = {shp("(3,)"), shp("(2,)")}, dq[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, ed, di, dq));
  g_assert_cmpint(dq[0].ndim, ==, 3);

  /* dynamic_topk: the axis' length read at run time; int64 indices. */
  DsNode *tk = make_node(g, "_contrib_dynamic_topk", 2, "axis", "0", NULL);
  DsShape ki[2] = {sym_shp(s.exprs, "(7, M)"), shp("(1,)")},
          ko[2] = {DS_SHAPE_UNKNOWN, DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, tk, ki, ko));
  assert_unbacked(&s, ko[0].dims[0], 7);
  g_assert_true(ko[1].dims[0].expr == ko[0].dims[0].expr);
  DsDType kt[2] = {DS_DTYPE_FLOAT32, DS_DTYPE_INT64}, kot[2] = {DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN};
  GError *error = NULL;
  g_assert_true(tk->op->infer_type(tk, tk->param, kt, kot, &error));
  g_assert_cmpint(kot[0], ==, DS_DTYPE_FLOAT32);
  g_assert_cmpint(kot[1], ==, DS_DTYPE_INT64);

  /* one_hot: a new axis of unbounded length; the values' dtype. */
  DsNode *oh = make_node(g, "_contrib_dynamic_one_hot", 3, "axis", "1", NULL);
  DsShape hi[3] = {shp("(2, 3)"), shp("()"), shp("(2,)")}, ho[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, oh, hi, ho));
  g_assert_cmpint(ho[0].ndim, ==, 3);
  g_assert_cmpint(ho[0].dims[0].value, ==, 2);
  assert_unbacked(&s, ho[0].dims[1], DS_EXPR_INF);
  g_assert_cmpint(ho[0].dims[2].value, ==, 3);
  DsDType ht[3] = {DS_DTYPE_INT64, DS_DTYPE_FLOAT32, DS_DTYPE_INT32}, hot[1] = {DS_DTYPE_UNKNOWN};
  g_assert_true(oh->op->infer_type(oh, oh->param, ht, hot, &error));
  g_assert_cmpint(hot[0], ==, DS_DTYPE_INT32);

  /* compress: bounded by the axis, or by the element count without one. */
  DsNode *cp = make_node(g, "_contrib_compress", 2, NULL);
  DsShape ci[2] = {shp("(3, 4)"), shp("(5,)")}, co[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer_in(s.ctx, cp, ci, co));
  assert_unbacked(&s, co[0].dims[0], 12);
  DsNode *cpa = make_node(g, "_contrib_compress", 2, "axis", "-1", NULL);
  co[0] = DS_SHAPE_UNKNOWN;
  g_assert_null(infer_in(s.ctx, cpa, ci, co));
  g_assert_cmpint(co[0].dims[0].value, ==, 3);
  assert_unbacked(&s, co[0].dims[1], 4);

  /* _contrib_dynamic_arange with dtype "None" follows start. */
  DsNode *ar = make_node(g, "_contrib_dynamic_arange", 3, "dtype", "None", NULL);
  g_assert_cmpint(((DsDynamicArangeParam *)ar->param)->dtype, ==, DS_DTYPE_UNKNOWN);
  DsDType at[3] = {DS_DTYPE_INT32, DS_DTYPE_INT32, DS_DTYPE_INT32}, aot[1] = {DS_DTYPE_UNKNOWN};
  g_assert_true(ar->op->infer_type(ar, ar->param, at, aot, &error));
  g_assert_cmpint(aot[0], ==, DS_DTYPE_INT32);
  sym_free(&s);
}

/* Runs a dynamic kernel on inputs and checks the single output's shape and values. */
static void check_dynamic(DsNode *n, DsTensor *in, int n_in, DsDType dtype, int ndim,
                          const int64_t *dims, const double *want)
{
  DsTensor out[2];
  TestAlloc alloc = test_alloc_new();
  g_assert_cmpint(run_dynamic(n->op->id, n->param, in, n_in, out, 1, &alloc), ==, DS_STATUS_OK);
  assert_tensor_shape(&out[0], dtype, ndim, dims);
  if (want != NULL)
    assert_values(&out[0], want);
  test_alloc_free(&alloc);
}

static DsStatus dynamic_status(DsNode *n, DsTensor *in, int n_in, int n_out)
{
  DsTensor out[2];
  TestAlloc alloc = test_alloc_new();
  DsStatus status = run_dynamic(n->op->id, n->param, in, n_in, out, n_out, &alloc);
  test_alloc_free(&alloc);
  return status;
}

static void test_kernel_onnx_dynamic(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  double iota[24];
  for (int i = 0; i < 24; i++)
    iota[i] = i;

  /* dynamic_reshape with allowzero: a 0 is a 0. */
  {
    DsNode *n = make_node(g, "_contrib_dynamic_reshape", 2, "allowzero", "1", NULL);
    DsTensor in[2] = {tensor_new(DS_DTYPE_FLOAT32, "(0, 3, 4)"),
                      vector_of(DS_DTYPE_INT64, 3, (double[]){3, 4, 0})};
    check_dynamic(n, in, 2, DS_DTYPE_FLOAT32, 3, (int64_t[]){3, 4, 0}, NULL);
    tensors_free(in, 2);
    DsTensor in2[2] = {tensor_new(DS_DTYPE_FLOAT32, "(2, 3)"),
                       vector_of(DS_DTYPE_INT64, 2, (double[]){0, 6})};
    g_assert_cmpint(dynamic_status(n, in2, 2, 1), ==, DS_STATUS_INVALID_ARGUMENT);
    tensors_free(in2, 2);
  }

  /* unique, unsorted: values, first indices, inverse and counts in order of appearance. */
  {
    DsNode *n = make_node(g, "_npi_unique", 1, "return_index", "1", "return_inverse", "1",
                          "return_counts", "1", "sorted", "0", NULL);
    DsTensor x = vector_of(DS_DTYPE_FLOAT32, 6, (double[]){2, 1, 1, 3, 4, 3});
    DsTensor out[4];
    TestAlloc alloc = test_alloc_new();
    g_assert_cmpint(run_dynamic(DS_OP_UNIQUE, n->param, &x, 1, out, 4, &alloc), ==, DS_STATUS_OK);
    assert_values(&out[0], (double[]){2, 1, 3, 4});
    assert_values(&out[1], (double[]){0, 1, 3, 4});
    assert_values(&out[2], (double[]){0, 1, 1, 2, 3, 2});
    assert_values(&out[3], (double[]){1, 2, 2, 1});
    test_alloc_free(&alloc);
    tensor_free(&x);
  }

  /* dynamic_slice: ONNX's Slice cases. */
  {
    DsTensor x = values_of(DS_DTYPE_FLOAT32, "(4, 6)", iota);
    DsNode *plain = make_node(g, "_contrib_dynamic_slice", 3, NULL);
    DsTensor a[3] = {x, vector_of(DS_DTYPE_INT64, 2, (double[]){1, 0}),
                     vector_of(DS_DTYPE_INT64, 2, (double[]){3, 9e18})};
    check_dynamic(plain, a, 3, DS_DTYPE_FLOAT32, 2, (int64_t[]){2, 6}, iota + 6);
    tensor_free(&a[1]);
    tensor_free(&a[2]);
    /* Backwards to INT64_MIN on the last axis, every other row. */
    DsNode *full = make_node(g, "_contrib_dynamic_slice", 5, "use_axes", "1", "use_steps", "1",
                             NULL);
    DsTensor b[5] = {x, vector_of(DS_DTYPE_INT64, 2, (double[]){-1, 0}), tensor_new(DS_DTYPE_INT64, "(2,)"),
                     vector_of(DS_DTYPE_INT64, 2, (double[]){-1, 0}),
                     vector_of(DS_DTYPE_INT64, 2, (double[]){-2, 2})};
    ((int64_t *)b[2].data)[0] = INT64_MIN;
    ((int64_t *)b[2].data)[1] = INT64_MAX;
    check_dynamic(full, b, 5, DS_DTYPE_FLOAT32, 2, (int64_t[]){2, 3},
                  (double[]){5, 3, 1, 17, 15, 13});
    /* A positive step to INT64_MIN is empty. */
    set(&b[4], 0, 1);
    check_dynamic(full, b, 5, DS_DTYPE_FLOAT32, 2, (int64_t[]){2, 0}, NULL);
    set(&b[4], 0, 0);
    g_assert_cmpint(dynamic_status(full, b, 5, 1), ==, DS_STATUS_INVALID_ARGUMENT);
    set(&b[4], 0, 1);
    set(&b[3], 0, 0); /* axis 0 twice */
    g_assert_cmpint(dynamic_status(full, b, 5, 1), ==, DS_STATUS_INVALID_ARGUMENT);
    for (int i = 1; i < 5; i++)
      tensor_free(&b[i]);
    /* An axes attribute with steps as the fourth input. */
    DsNode *attr = make_node(g, "_contrib_dynamic_slice", 4, "axes", "(1,)", "use_steps", "1",
                             NULL);
    DsTensor c[4] = {x, vector_of(DS_DTYPE_INT32, 1, (double[]){-2}),
                     vector_of(DS_DTYPE_INT32, 1, (double[]){-100}),
                     vector_of(DS_DTYPE_INT32, 1, (double[]){-3})};
    check_dynamic(attr, c, 4, DS_DTYPE_FLOAT32, 2, (int64_t[]){4, 2},
                  (double[]){4, 1, 10, 7, 16, 13, 22, 19});
    for (int i = 1; i < 4; i++)
      tensor_free(&c[i]);
    tensor_free(&x);
  }

  /* dynamic_expand: both ways, and a mismatch. */
  {
    DsNode *n = make_node(g, "_contrib_dynamic_expand", 2, NULL);
    DsTensor in[2] = {values_of(DS_DTYPE_INT64, "(3, 1)", iota),
                      vector_of(DS_DTYPE_INT64, 3, (double[]){2, 1, 2})};
    check_dynamic(n, in, 2, DS_DTYPE_INT64, 3, (int64_t[]){2, 3, 2},
                  (double[]){0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2});
    set(&in[1], 1, 2);
    g_assert_cmpint(dynamic_status(n, in, 2, 1), ==, DS_STATUS_INVALID_ARGUMENT);
    tensors_free(in, 2);
  }

  /* dynamic_tile. */
  {
    DsNode *n = make_node(g, "_contrib_dynamic_tile", 2, NULL);
    DsTensor in[2] = {values_of(DS_DTYPE_UINT8, "(2, 2)", iota),
                      vector_of(DS_DTYPE_INT64, 2, (double[]){2, 1})};
    check_dynamic(n, in, 2, DS_DTYPE_UINT8, 2, (int64_t[]){4, 2}, (double[]){0, 1, 2, 3, 0, 1, 2, 3});
    set(&in[1], 1, -1);
    g_assert_cmpint(dynamic_status(n, in, 2, 1), ==, DS_STATUS_INVALID_ARGUMENT);
    tensors_free(in, 2);
  }

  /* dynamic_pad: befores then afters, the constant from its tensor; reflect. */
  {
    DsNode *n = make_node(g, "_contrib_dynamic_pad", 3, NULL);
    DsTensor in[3] = {values_of(DS_DTYPE_FLOAT32, "(2, 2)", iota),
                      vector_of(DS_DTYPE_INT64, 4, (double[]){0, 1, 1, 0}),
                      vector_of(DS_DTYPE_FLOAT64, 1, (double[]){7.5})};
    check_dynamic(n, in, 3, DS_DTYPE_FLOAT32, 2, (int64_t[]){3, 3},
                  (double[]){7.5, 0, 1, 7.5, 2, 3, 7.5, 7.5, 7.5});
    DsNode *r = make_node(g, "_contrib_dynamic_pad", 3, "mode", "reflect", NULL);
    check_dynamic(r, in, 3, DS_DTYPE_FLOAT32, 2, (int64_t[]){3, 3},
                  (double[]){1, 0, 1, 3, 2, 3, 1, 0, 1});
    set(&in[1], 0, -3);
    g_assert_cmpint(dynamic_status(n, in, 3, 1), ==, DS_STATUS_INVALID_ARGUMENT);
    tensors_free(in, 3);
  }

  /* dynamic_squeeze / expand_dims. */
  {
    DsNode *sq = make_node(g, "_contrib_dynamic_squeeze", 2, NULL);
    DsTensor in[2] = {values_of(DS_DTYPE_INT8, "(1, 3, 1)", iota),
                      vector_of(DS_DTYPE_INT64, 2, (double[]){-1, 0})};
    check_dynamic(sq, in, 2, DS_DTYPE_INT8, 1, (int64_t[]){3}, iota);
    set(&in[1], 0, 1);
    g_assert_cmpint(dynamic_status(sq, in, 2, 1), ==, DS_STATUS_INVALID_ARGUMENT);
    DsNode *ed = make_node(g, "_contrib_dynamic_expand_dims", 2, NULL);
    DsTensor in2[2] = {in[0], vector_of(DS_DTYPE_INT32, 2, (double[]){-1, 1})};
    check_dynamic(ed, in2, 2, DS_DTYPE_INT8, 5, (int64_t[]){1, 1, 3, 1, 1}, iota);
    tensors_free(in, 2);
    tensor_free(&in2[1]);
  }

  /* dynamic_topk: k from a tensor, values and int64 indices. */
  {
    DsNode *n = make_node(g, "_contrib_dynamic_topk", 2, NULL);
    DsTensor in[2] = {values_of(DS_DTYPE_FLOAT32, "(2, 3)", (double[]){1, 3, 2, 6, 5, 4}),
                      vector_of(DS_DTYPE_INT64, 1, (double[]){2})};
    DsTensor out[2];
    TestAlloc alloc = test_alloc_new();
    g_assert_cmpint(run_dynamic(DS_OP_DYNAMIC_TOPK, n->param, in, 2, out, 2, &alloc), ==,
                    DS_STATUS_OK);
    assert_tensor_shape(&out[0], DS_DTYPE_FLOAT32, 2, (int64_t[]){2, 2});
    assert_tensor_shape(&out[1], DS_DTYPE_INT64, 2, (int64_t[]){2, 2});
    assert_values(&out[0], (double[]){3, 2, 6, 5});
    assert_values(&out[1], (double[]){1, 2, 0, 1});
    test_alloc_free(&alloc);
    set(&in[1], 0, 4);
    g_assert_cmpint(dynamic_status(n, in, 2, 2), ==, DS_STATUS_INVALID_ARGUMENT);
    tensors_free(in, 2);
  }

  /* dynamic_one_hot: negative indices count from the end; out of range is all off. */
  {
    DsNode *n = make_node(g, "_contrib_dynamic_one_hot", 3, "axis", "0", NULL);
    DsTensor in[3] = {vector_of(DS_DTYPE_INT64, 3, (double[]){1, -1, 5}),
                      vector_of(DS_DTYPE_FLOAT32, 1, (double[]){3.7}),
                      vector_of(DS_DTYPE_INT32, 2, (double[]){-2, 9})};
    check_dynamic(n, in, 3, DS_DTYPE_INT32, 2, (int64_t[]){3, 3},
                  (double[]){-2, -2, -2, 9, -2, -2, -2, 9, -2});
    set(&in[1], 0, 0);
    g_assert_cmpint(dynamic_status(n, in, 3, 1), ==, DS_STATUS_INVALID_ARGUMENT);
    tensors_free(in, 3);
  }

  /* compress: a condition shorter than the axis, and the flattened form. */
  {
    DsNode *n = make_node(g, "_contrib_compress", 2, "axis", "1", NULL);
    DsTensor in[2] = {values_of(DS_DTYPE_FLOAT64, "(2, 3)", iota),
                      vector_of(DS_DTYPE_BOOL, 2, (double[]){0, 1})};
    check_dynamic(n, in, 2, DS_DTYPE_FLOAT64, 2, (int64_t[]){2, 1}, (double[]){1, 4});
    DsNode *flat = make_node(g, "_contrib_compress", 2, NULL);
    check_dynamic(flat, in, 2, DS_DTYPE_FLOAT64, 1, (int64_t[]){1}, (double[]){1});
    tensor_free(&in[1]);
    in[1] = vector_of(DS_DTYPE_BOOL, 4, (double[]){1, 1, 1, 1});
    g_assert_cmpint(dynamic_status(n, in, 2, 1), ==, DS_STATUS_INVALID_ARGUMENT);
    tensors_free(in, 2);
  }

  /* dynamic_arange with dtype "None": int32 bounds give int32 values. */
  {
    DsNode *n = make_node(g, "_contrib_dynamic_arange", 3, "dtype", "None", NULL);
    DsTensor in[3] = {scalar_of(DS_DTYPE_INT32, false, 10), scalar_of(DS_DTYPE_INT32, false, 4),
                      scalar_of(DS_DTYPE_INT32, false, -3)};
    check_dynamic(n, in, 3, DS_DTYPE_INT32, 1, (int64_t[]){2}, (double[]){10, 7});
    tensors_free(in, 3);
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  ds_test_ops_init(61283);

  g_test_add_func("/ops/dynamic/registration", test_registration);
  g_test_add_func("/ops/dynamic/parse", test_parse);
  g_test_add_func("/ops/dynamic/output-names", test_output_names);
  g_test_add_func("/ops/dynamic/dtypes", test_dtypes);
  g_test_add_func("/ops/dynamic/shape/boolean-mask", test_shape_boolean_mask);
  g_test_add_func("/ops/dynamic/shape/nonzero", test_shape_nonzero);
  g_test_add_func("/ops/dynamic/shape/shape-init", test_shape_shape_init);
  g_test_add_func("/ops/dynamic/shape/dynamic-reshape", test_shape_dynamic_reshape);
  g_test_add_func("/ops/dynamic/shape/dynamic-arange", test_shape_dynamic_arange);
  g_test_add_func("/ops/dynamic/shape/unique", test_shape_unique);
  g_test_add_func("/ops/dynamic/kernel/boolean-mask", test_kernel_boolean_mask);
  g_test_add_func("/ops/dynamic/kernel/nonzero", test_kernel_nonzero);
  g_test_add_func("/ops/dynamic/kernel/shape-init", test_kernel_shape_init);
  g_test_add_func("/ops/dynamic/kernel/dynamic-reshape", test_kernel_dynamic_reshape);
  g_test_add_func("/ops/dynamic/kernel/dynamic-arange", test_kernel_dynamic_arange);
  g_test_add_func("/ops/dynamic/kernel/unique", test_kernel_unique);
  g_test_add_func("/ops/dynamic/onnx-forms", test_onnx_registration_and_shapes);
  g_test_add_func("/ops/dynamic/kernel/onnx-forms", test_kernel_onnx_dynamic);

  int status = g_test_run();
  g_rand_free(rng);
  ds_thread_pool_free(pool);
  return status;
}
