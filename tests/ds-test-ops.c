/* ds-test-ops.c: helpers shared by the op test programs; see ds-test-ops.h. */
#include "ds-test-ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

DsThreadPool *pool;
GRand *rng;

void ds_test_ops_init(guint32 seed)
{
  pool = ds_thread_pool_new(2);
  rng = g_rand_new_with_seed(seed);
}


/* ---- nodes ---- */

DsNode *make_node_v(DsGraph *g, const char *op_name, int n_inputs, GError **error, va_list args)
{
  DsNode *n = ds_graph_add_node(g, "node0", op_name);
  n->op = ds_op_lookup(op_name);
  g_assert_nonnull(n->op);
  for (const char *key = va_arg(args, const char *); key != NULL; key = va_arg(args, const char *))
    ds_node_add_attr(n, key, va_arg(args, const char *));
  n->n_inputs = (guint)n_inputs;
  n->inputs = g_new0(DsEntry, MAX(n_inputs, 1));
  n->param = n->op->param_size > 0 ? g_malloc0(n->op->param_size) : NULL;
  if (n->op->parse != NULL && !n->op->parse(n, n->param, error))
    return NULL;
  n->n_outputs = (guint)n->op->num_outputs(n->param);
  return n;
}

DsNode *make_node(DsGraph *g, const char *op_name, int n_inputs, ...)
{
  va_list args;
  va_start(args, n_inputs);
  GError *error = NULL;
  DsNode *n = make_node_v(g, op_name, n_inputs, &error, args);
  va_end(args);
  g_assert_no_error(error);
  return n;
}

char *parse_error(const char *op_name, int n_inputs, ...)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  va_list args;
  va_start(args, n_inputs);
  GError *error = NULL;
  DsNode *n = make_node_v(g, op_name, n_inputs, &error, args);
  va_end(args);
  g_assert_null(n);
  g_assert_nonnull(error);
  g_assert_true(g_str_has_prefix(error->message, "node 'node0'"));
  char *msg = g_strdup(error->message);
  g_error_free(error);
  return msg;
}

DsNode *node_v(DsGraph *g, const char *op_name, GError **error, va_list args)
{
  DsNode *n = ds_graph_add_node(g, "layer0", op_name);
  n->op = ds_op_lookup(op_name);
  g_assert_nonnull(n->op);
  for (const char *key = va_arg(args, const char *); key != NULL; key = va_arg(args, const char *))
    ds_node_add_attr(n, key, va_arg(args, const char *));
  n->param = n->op->param_size > 0 ? g_malloc0(n->op->param_size) : NULL;
  if (n->op->parse != NULL && !n->op->parse(n, n->param, error))
    return NULL;
  n->n_inputs = (guint)n->op->num_inputs(n->param);
  n->n_outputs = (guint)n->op->num_outputs(n->param);
  return n;
}

DsNode *node_new(DsGraph *g, const char *op_name, ...)
{
  va_list args;
  va_start(args, op_name);
  GError *error = NULL;
  DsNode *n = node_v(g, op_name, &error, args);
  va_end(args);
  g_assert_no_error(error);
  return n;
}

void parse_fails(int code, const char *needle, const char *op_name, ...)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  va_list args;
  va_start(args, op_name);
  GError *error = NULL;
  DsNode *n = node_v(g, op_name, &error, args);
  va_end(args);
  g_assert_null(n);
  g_assert_error(error, DS_ERROR, code);
  g_test_message("%s", error->message);
  g_assert_nonnull(strstr(error->message, "'layer0'"));
  g_assert_nonnull(strstr(error->message, needle));
  g_error_free(error);
}

/* ---- shapes ---- */

DsShape shp(const char *text)
{
  if (strcmp(text, "?") == 0)
    return DS_SHAPE_UNKNOWN;
  DsShape s = {.ndim = 0};
  for (const char *p = text; *p != '\0';) {
    if (*p == '?') {
      s.dims[s.ndim++] = DS_DIM_UNKNOWN;
      p++;
    } else if (g_ascii_isdigit(*p)) {
      char *end;
      s.dims[s.ndim++] = ds_dim(g_ascii_strtoll(p, &end, 10));
      p = end;
    } else {
      p++;
    }
  }
  return s;
}

DsShape sym_shp(DsExprCtx *exprs, const char *text)
{
  g_autofree char *inner = g_strndup(text + 1, strlen(text) - 2);
  g_auto(GStrv) parts = g_strsplit(inner, ",", -1);
  DsShape s = {.ndim = 0};
  for (int i = 0; parts[i] != NULL; i++) {
    g_strstrip(parts[i]);
    if (parts[i][0] == '\0')
      continue;
    if (strcmp(parts[i], "?") == 0) {
      s.dims[s.ndim++] = DS_DIM_UNKNOWN;
      continue;
    }
    GError *error = NULL;
    const DsExpr *e = ds_expr_parse(exprs, parts[i], &error);
    g_assert_no_error(error);
    s.dims[s.ndim++] = ds_dim_from_expr(e);
  }
  return s;
}

void assert_shape(const DsShape *s, const char *want)
{
  g_autofree char *got = ds_shape_to_string(s);
  g_assert_cmpstr(got, ==, want);
}

char *infer_in(DsShapeCtx *ctx, DsNode *n, DsShape *in, DsShape *out)
{
  DsShapeCtx *own = ctx == NULL ? ds_shape_ctx_new() : NULL;
  DsShapeCtx *c = ctx != NULL ? ctx : own;
  ds_shape_ctx_set_node(c, n);
  ds_test_cover("shape", n->op->id);
  GError *error = NULL;
  gboolean ok = n->op->infer_shape(c, n, n->param, in, out, &error);
  ds_shape_ctx_free(own);
  if (ok) {
    g_assert_no_error(error);
    return NULL;
  }
  g_assert_error(error, DS_ERROR, DS_ERROR_SHAPE);
  g_assert_true(g_str_has_prefix(error->message, "node 'node0' ("));
  char *msg = g_strdup(error->message);
  g_error_free(error);
  return msg;
}

char *infer(DsNode *n, DsShape *in, DsShape *out)
{
  return infer_in(NULL, n, in, out);
}

gboolean infer_err(DsNode *n, DsShape *in, DsShape *out, GError **error)
{
  DsShapeCtx *ctx = ds_shape_ctx_new();
  ds_shape_ctx_set_node(ctx, n);
  ds_test_cover("shape", n->op->id);
  gboolean ok = n->op->infer_shape(ctx, n, n->param, in, out, error);
  ds_shape_ctx_free(ctx);
  return ok;
}

void infer_ok(DsNode *n, const char *const *ins, DsShape *in, DsShape *out)
{
  for (guint i = 0; i < n->n_inputs; i++)
    in[i] = shp(ins[i]);
  for (guint i = 0; i < n->n_outputs; i++)
    out[i] = DS_SHAPE_UNKNOWN;
  GError *error = NULL;
  gboolean ok = infer_err(n, in, out, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
}

void infer_fails(DsNode *n, const char *const *ins, const char *needle)
{
  DsShape in[8], out[8];
  for (guint i = 0; i < n->n_inputs; i++)
    in[i] = shp(ins[i]);
  for (guint i = 0; i < n->n_outputs; i++)
    out[i] = DS_SHAPE_UNKNOWN;
  GError *error = NULL;
  g_test_message("expecting a shape error for data %s", ins[0]);
  g_assert_false(infer_err(n, in, out, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_SHAPE);
  g_test_message("%s", error->message);
  g_assert_nonnull(strstr(error->message, "node 'layer0'"));
  g_assert_nonnull(strstr(error->message, needle));
  g_error_free(error);
}

Sym sym_new(void)
{
  Sym s;
  s.exprs = ds_expr_ctx_new();
  s.ctx = ds_shape_ctx_new_symbolic(s.exprs);
  return s;
}

void sym_free(Sym *s)
{
  ds_shape_ctx_free(s->ctx);
  ds_expr_ctx_free(s->exprs);
}

DsDim sym_dim(DsExprCtx *exprs, const char *name)
{
  return ds_dim_from_expr(ds_expr_symbol(exprs, name));
}

guint infer_symbolic(DsNode *n, DsExprCtx *exprs, DsShape *in, DsShape *out)
{
  DsShapeCtx *ctx = ds_shape_ctx_new_symbolic(exprs);
  ds_shape_ctx_set_node(ctx, n);
  ds_test_cover("shape", n->op->id);
  GError *error = NULL;
  gboolean ok = n->op->infer_shape(ctx, n, n->param, in, out, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
  guint n_guards = ds_shape_ctx_get_guards(ctx)->len;
  for (guint i = 0; i < n_guards; i++)
    g_test_message("guard: %s",
                   ((const DsShapeGuard *)ds_shape_ctx_get_guards(ctx)->pdata[i])->message);
  ds_shape_ctx_free(ctx);
  return n_guards;
}

/* ---- tensors ---- */

DsTensor tensor_dims(DsDType t, int ndim, const int64_t *dims)
{
  DsTensor x = {.dtype = t, .ndim = ndim};
  memcpy(x.shape, dims, sizeof(int64_t) * ndim);
  x.data = g_malloc0(MAX(ds_tensor_nbytes(&x), 1));
  return x;
}

DsTensor tensor_new(DsDType t, const char *shape)
{
  DsShape s = shp(shape);
  int64_t dims[DS_MAX_NDIM];
  for (int i = 0; i < s.ndim; i++)
    dims[i] = s.dims[i].value;
  return tensor_dims(t, s.ndim, dims);
}

DsTensor ftensor(const char *shape)
{
  return tensor_new(DS_DTYPE_FLOAT32, shape);
}

DsTensor rtensor(const char *shape, double lo, double hi)
{
  DsTensor t = ftensor(shape);
  float *p = t.data;
  for (int64_t i = 0; i < ds_tensor_numel(&t); i++)
    p[i] = (float)g_rand_double_range(rng, lo, hi);
  return t;
}

void tensor_free(DsTensor *x)
{
  g_free(x->data);
}

void tensors_free(DsTensor *t, int n)
{
  for (int i = 0; i < n; i++)
    g_free(t[i].data);
}

double get(const DsTensor *x, int64_t i)
{
  switch (x->dtype) {
  case DS_DTYPE_FLOAT32:
    return ((float *)x->data)[i];
  case DS_DTYPE_FLOAT64:
    return ((double *)x->data)[i];
  case DS_DTYPE_INT32:
    return ((int32_t *)x->data)[i];
  case DS_DTYPE_INT64:
    return (double)((int64_t *)x->data)[i];
  case DS_DTYPE_INT8:
    return ((int8_t *)x->data)[i];
  case DS_DTYPE_UINT8:
  case DS_DTYPE_BOOL:
    return ((uint8_t *)x->data)[i];
  default:
    g_assert_not_reached();
  }
}

void set(DsTensor *x, int64_t i, double v)
{
  switch (x->dtype) {
  case DS_DTYPE_FLOAT32:
    ((float *)x->data)[i] = (float)v;
    break;
  case DS_DTYPE_FLOAT64:
    ((double *)x->data)[i] = v;
    break;
  case DS_DTYPE_INT32:
    ((int32_t *)x->data)[i] = (int32_t)v;
    break;
  case DS_DTYPE_INT64:
    ((int64_t *)x->data)[i] = (int64_t)v;
    break;
  case DS_DTYPE_INT8:
    ((int8_t *)x->data)[i] = (int8_t)v;
    break;
  case DS_DTYPE_UINT8:
    ((uint8_t *)x->data)[i] = (uint8_t)v;
    break;
  case DS_DTYPE_BOOL:
    ((uint8_t *)x->data)[i] = v != 0;
    break;
  default:
    g_assert_not_reached();
  }
}

void fill_random(DsTensor *x, double lo, double hi)
{
  int64_t n = ds_tensor_numel(x);
  for (int64_t i = 0; i < n; i++) {
    if (x->dtype == DS_DTYPE_FLOAT16)
      ((uint16_t *)x->data)[i] = (uint16_t)g_rand_int(rng);
    else if (x->dtype == DS_DTYPE_BOOL)
      set(x, i, g_rand_int_range(rng, 0, 2));
    else if (!ds_dtype_is_float(x->dtype))
      set(x, i, g_rand_int_range(rng, (gint32)lo, (gint32)hi));
    else
      set(x, i, g_rand_double_range(rng, lo, hi));
  }
}

uint64_t bits(const DsTensor *x, int64_t i)
{
  uint64_t v = 0;
  size_t es = ds_dtype_size(x->dtype);
  memcpy(&v, (const char *)x->data + (size_t)i * es, es);
  return v;
}

/* ---- kernels, comparison ---- */

DsStatus run_kernel(DsOpId op, const void *param, DsTensor *in, int n_in, DsTensor *out, int n_out)
{
  const DsKernel *k = ds_cpu_backend_get()->get_kernel(op);
  g_assert_nonnull(k);
  ds_test_cover("cpu", op);
  size_t ws = k->workspace_bytes != NULL ? k->workspace_bytes(param, in, n_in, out, n_out) : 0;
  void *workspace = ws > 0 ? g_malloc(ws) : NULL;
  DsKernelCtx ctx = {param, in, n_in, out, n_out, workspace, pool};
  DsStatus status = k->run(&ctx);
  g_free(workspace);
  return status;
}

DsStatus run_kernel_dynamic(DsOpId op, const void *param, DsTensor *in, int n_in, DsTensor *out,
                            int n_out, DsOutputAllocFn alloc, void *alloc_data)
{
  const DsKernel *k = ds_cpu_backend_get()->get_kernel(op);
  g_assert_nonnull(k);
  ds_test_cover("cpu", op);
  for (int i = 0; i < n_out; i++)
    out[i] = (DsTensor){.dtype = DS_DTYPE_UNKNOWN, .ndim = -1, .data = NULL};
  size_t ws = k->workspace_bytes != NULL ? k->workspace_bytes(param, in, n_in, out, n_out) : 0;
  void *workspace = ws > 0 ? g_malloc(ws) : NULL;
  DsKernelCtx ctx = {param, in, n_in, out, n_out, workspace, pool, alloc, alloc_data};
  DsStatus status = k->run(&ctx);
  g_free(workspace);
  return status;
}

DsStatus run_kernel_on(DsOpId id, const void *param, DsTensor *in, int n_in, DsTensor *out,
                       int n_out, DsThreadPool *threads)
{
  const DsKernel *k = ds_cpu_backend_get()->get_kernel(id);
  g_assert_nonnull(k);
  ds_test_cover("cpu", id);
  size_t bytes = k->workspace_bytes != NULL ? k->workspace_bytes(param, in, n_in, out, n_out) : 0;
  void *ws = bytes > 0 ? aligned_alloc(64, (bytes + 63) & ~(size_t)63) : NULL;
  /* Garbage in the workspace and outputs must not leak into results. */
  if (ws != NULL)
    memset(ws, 0xff, bytes);
  for (int i = 0; i < n_out; i++)
    memset(out[i].data, 0xff, ds_tensor_nbytes(&out[i]));
  DsKernelCtx ctx = {param, in, n_in, out, n_out, ws, threads};
  DsStatus st = k->run(&ctx);
  free(ws);
  return st;
}

void run_ok(DsOpId id, const void *param, DsTensor *in, int n_in, DsTensor *out, int n_out)
{
  /* Both single-threaded and on the pool: the split must not change results. */
  g_assert_cmpint(run_kernel_on(id, param, in, n_in, out, n_out, NULL), ==, DS_STATUS_OK);
  g_assert_cmpint(run_kernel_on(id, param, in, n_in, out, n_out, pool), ==, DS_STATUS_OK);
}

gboolean close_to(const float *got, const double *want, int64_t n, double atol, double rtol,
                  const char *what)
{
  for (int64_t i = 0; i < n; i++) {
    double g = got[i], w = want[i];
    gboolean ok =
        (isnan(w) && isnan(g)) || (isinf(w) && g == w) || fabs(g - w) <= atol + rtol * fabs(w);
    if (!ok) {
      g_test_fail_printf("%s: element %" G_GINT64_FORMAT " is %.9g, expected %.9g", what, i, g, w);
      return FALSE;
    }
  }
  return TRUE;
}

double *dalloc(int64_t n)
{
  return g_new0(double, MAX(n, 1));
}
