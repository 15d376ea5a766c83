/* ds-grad.c: adding gradient nodes; what every family's gradient functions share. */
#include "ds-grad.h"

#include "ds-error.h"

/* "<forward node>_backward_<op>", numbered from 2 when taken; the op's leading underscores
 * dropped ("fc1_backward_mul_scalar"). */
static char *unique_name(DsGradCtx *ctx, const char *op_name)
{
  while (*op_name == '_')
    op_name++;
  char *name = g_strdup_printf("%s_backward_%s", ctx->node->name, op_name);
  for (guint k = 2; g_hash_table_contains(ctx->names, name); k++) {
    g_free(name);
    name = g_strdup_printf("%s_backward_%s_%u", ctx->node->name, op_name, k);
  }
  g_hash_table_add(ctx->names, g_strdup(name));
  return name;
}

DsEntry ds_grad_op_v(DsGradCtx *ctx, const char *op_name, guint n_inputs, const DsEntry *inputs,
                     va_list attrs)
{
  g_autofree char *name = unique_name(ctx, op_name);
  DsNode *node = ds_graph_add_node(ctx->graph, name, op_name);
  node->inputs = g_new(DsEntry, MAX(n_inputs, 1u));
  node->n_inputs = n_inputs;
  for (guint i = 0; i < n_inputs; i++)
    node->inputs[i] = (DsEntry){inputs[i].node_id, inputs[i].index, 0};
  for (const char *key = va_arg(attrs, const char *); key != NULL;
       key = va_arg(attrs, const char *))
    ds_node_add_attr(node, key, va_arg(attrs, const char *));
  return (DsEntry){node->id, 0, 0};
}

DsEntry ds_grad_op(DsGradCtx *ctx, const char *op_name, guint n_inputs, const DsEntry *inputs,
                   ...)
{
  va_list attrs;
  va_start(attrs, inputs);
  DsEntry e = ds_grad_op_v(ctx, op_name, n_inputs, inputs, attrs);
  va_end(attrs);
  return e;
}

DsEntry ds_grad_op1(DsGradCtx *ctx, const char *op_name, DsEntry a, ...)
{
  va_list attrs;
  va_start(attrs, a);
  DsEntry e = ds_grad_op_v(ctx, op_name, 1, &a, attrs);
  va_end(attrs);
  return e;
}

DsEntry ds_grad_op2(DsGradCtx *ctx, const char *op_name, DsEntry a, DsEntry b, ...)
{
  va_list attrs;
  va_start(attrs, b);
  DsEntry in[2] = {a, b};
  DsEntry e = ds_grad_op_v(ctx, op_name, 2, in, attrs);
  va_end(attrs);
  return e;
}

void ds_grad_number_text(double value, char text[G_ASCII_DTOSTR_BUF_SIZE])
{
  /* the fewest digits that read back as the same double: 1e-05, not 1.0000000000000001e-05 */
  static const char *const formats[] = {"%.15g", "%.16g", "%.17g"};
  for (guint i = 0; i < G_N_ELEMENTS(formats); i++) {
    g_ascii_formatd(text, G_ASCII_DTOSTR_BUF_SIZE, formats[i], value);
    if (g_ascii_strtod(text, NULL) == value)
      return;
  }
}

DsEntry ds_grad_scalar(DsGradCtx *ctx, const char *op_name, DsEntry a, double scalar)
{
  char text[G_ASCII_DTOSTR_BUF_SIZE];
  ds_grad_number_text(scalar, text);
  return ds_grad_op1(ctx, op_name, a, "scalar", text, NULL);
}

DsEntry ds_grad_input(const DsGradCtx *ctx, guint i)
{
  return ctx->node->inputs[i];
}

DsEntry ds_grad_output(const DsGradCtx *ctx, guint i)
{
  return (DsEntry){ctx->node->id, i, 0};
}

gboolean ds_grad_dims_equal(DsDim a, DsDim b)
{
  if (a.expr != NULL || b.expr != NULL)
    return a.expr == b.expr;
  return a.value >= 0 && a.value == b.value;
}

char *ds_grad_tuple(const int64_t *values, int n)
{
  GString *s = g_string_new("(");
  for (int i = 0; i < n; i++)
    g_string_append_printf(s, "%s%" G_GINT64_FORMAT, i ? ", " : "", values[i]);
  if (n == 1)
    g_string_append_c(s, ',');
  g_string_append_c(s, ')');
  return g_string_free(s, FALSE);
}

gboolean ds_grad_sum_to(DsGradCtx *ctx, DsEntry grad, const DsShape *grad_shape, guint input,
                        DsEntry *out, GError **error)
{
  const DsShape *to = &ctx->in_shapes[input];
  if (grad_shape->ndim < 0 || to->ndim < 0 || to->ndim > grad_shape->ndim)
    return ds_grad_fail(ctx, error, "the shapes of its input %u and output are not known", input);
  int lead = grad_shape->ndim - to->ndim;
  int64_t axes[DS_MAX_NDIM];
  int n_axes = 0;
  for (int i = 0; i < grad_shape->ndim; i++) {
    if (i < lead) {
      axes[n_axes++] = i;
      continue;
    }
    DsDim from_dim = grad_shape->dims[i], to_dim = to->dims[i - lead];
    if (ds_grad_dims_equal(from_dim, to_dim))
      continue;
    if (ds_dim_is_value(to_dim, 1)) {
      axes[n_axes++] = i;
      continue;
    }
    return ds_grad_fail(ctx, error,
                        "cannot tell whether axis %d of input %u was broadcast (give the input "
                        "shapes)",
                        i - lead, input);
  }
  if (n_axes == 0) {
    *out = grad;
    return TRUE;
  }
  g_autofree char *axis = ds_grad_tuple(axes, n_axes);
  DsEntry summed = ds_grad_op1(ctx, "sum", grad, "axis", axis, "keepdims", "True", NULL);
  *out = lead == 0 ? summed : ds_grad_op2(ctx, "reshape_like", summed, ds_grad_input(ctx, input), NULL);
  return TRUE;
}

void ds_grad_copy_attrs(DsGradCtx *ctx, DsEntry e, const char *except)
{
  DsNode *to = ctx->graph->nodes[e.node_id];
  for (guint i = 0; i < ctx->node->n_attrs; i++) {
    const char *key = ctx->node->attrs[i].key;
    if (!g_str_has_prefix(key, "__") && (except == NULL || !g_str_equal(key, except)))
      ds_node_add_attr(to, key, ctx->node->attrs[i].value);
  }
}

gboolean ds_grad_zero(DsGradCtx *ctx, const DsEntry *out_grads, DsEntry *in_grads,
                      GError **error)
{
  (void)ctx, (void)out_grads, (void)in_grads, (void)error;
  return TRUE;
}

gboolean ds_grad_fail(const DsGradCtx *ctx, GError **error, const char *format, ...)
{
  va_list args;
  va_start(args, format);
  g_autofree char *reason = g_strdup_vprintf(format, args);
  va_end(args);
  g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
              "cannot build the gradient of node '%s' (%s): %s", ctx->node->name,
              ctx->node->op_name, reason);
  return FALSE;
}
