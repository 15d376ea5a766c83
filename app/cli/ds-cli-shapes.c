/* ds-cli-shapes.c: --shapes: every node's output shapes as expressions, and the facts. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "ds-cli.h"
#include "ds-error.h"
#include "ds-expr.h"

/* A dim for --json: an integer, or a string Python's eval reads given the symbols. */
static cJSON *dim_json(DsDim d)
{
  if (ds_dim_is_const(d))
    return cJSON_CreateNumber((double)d.value);
  if (d.expr == NULL)
    return cJSON_CreateNull();
  g_autofree char *text = ds_expr_to_string(d.expr);
  return cJSON_CreateString(text);
}

static cJSON *shape_json(const DsShape *s)
{
  if (s->ndim < 0)
    return cJSON_CreateNull();
  cJSON *list = cJSON_CreateArray();
  for (int i = 0; i < s->ndim; i++)
    cJSON_AddItemToArray(list, dim_json(s->dims[i]));
  return list;
}

static cJSON *concrete_json(const DsShape *s)
{
  cJSON *list = cJSON_CreateArray();
  for (int i = 0; i < s->ndim; i++)
    cJSON_AddItemToArray(list, cJSON_CreateNumber((double)s->dims[i].value));
  return list;
}

/* "(s0, 10*s1) = (4, 320)" when the bindings evaluate it, else the symbolic form. */
static char *shape_text(const DsShape *symbolic, const DsShape *concrete)
{
  g_autofree char *sym = ds_shape_to_string(symbolic);
  int64_t dims[DS_MAX_NDIM];
  if (concrete == NULL || !ds_shape_get_concrete(concrete, dims))
    return g_steal_pointer(&sym);
  g_autofree char *con = ds_shape_to_string(concrete);
  if (strcmp(sym, con) == 0)
    return g_steal_pointer(&sym);
  return g_strdup_printf("%s = %s", sym, con);
}

int ds_cli_shapes(const DsCliOptions *options)
{
  GError *error = NULL;
  g_autoptr(DsSession) session = ds_cli_open_session(options->shapes_model, options, &error);
  if (session == NULL)
    return ds_cli_fail(error);
  const DsGraphShapes *shapes = ds_session_infer_symbolic(session, &error);
  if (shapes == NULL)
    return ds_cli_fail(error);
  DsGraph *graph = ds_session_get_graph(session);
  DsExprCtx *exprs = ds_session_get_exprs(session);
  /* Concrete values where the bindings (--bind, or fed inputs) evaluate a shape. */
  g_autoptr(DsGraphShapes) values = ds_session_evaluate(session, shapes, TRUE, &error);
  if (values == NULL)
    return ds_cli_fail(error);
  gboolean any_bound = options->binds != NULL || options->inputs != NULL;
  g_autoptr(GPtrArray) facts = ds_expr_ctx_list_facts(exprs);
  GPtrArray *notes = ds_session_get_notes(session);

  if (options->json) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "model", options->shapes_model);
    cJSON *symbols = cJSON_AddArrayToObject(root, "symbols");
    for (guint i = 0; i < ds_expr_ctx_get_n_symbols(exprs); i++) {
      const DsExpr *sym = ds_expr_ctx_get_symbol(exprs, i);
      if (ds_expr_resolve(exprs, sym) != sym)
        continue; /* merged into another: listed as a fact */
      int64_t lo, hi;
      ds_expr_ctx_get_range(exprs, sym, &lo, &hi);
      cJSON *item = cJSON_CreateObject();
      cJSON_AddStringToObject(item, "name", ds_expr_get_symbol_name(sym));
      cJSON *range = cJSON_AddArrayToObject(item, "range");
      cJSON_AddItemToArray(range, cJSON_CreateNumber((double)lo));
      cJSON_AddItemToArray(range, hi == DS_EXPR_INF ? cJSON_CreateNull()
                                                    : cJSON_CreateNumber((double)hi));
      cJSON_AddBoolToObject(item, "unbacked", ds_expr_is_unbacked(sym));
      cJSON_AddItemToArray(symbols, item);
    }
    cJSON *nodes = cJSON_AddArrayToObject(root, "nodes");
    for (guint n = 0; n < graph->n_nodes; n++) {
      const DsNode *node = graph->nodes[n];
      cJSON *item = cJSON_CreateObject();
      cJSON_AddStringToObject(item, "name", node->name);
      cJSON_AddStringToObject(item, "op", node->op_name);
      cJSON *outs = cJSON_AddArrayToObject(item, "outputs");
      cJSON *vals = any_bound ? cJSON_AddArrayToObject(item, "values") : NULL;
      for (guint k = 0; k < ds_node_n_op_outputs(node); k++) {
        guint e = graph->node_row_ptr[n] + k;
        cJSON_AddItemToArray(outs, shape_json(&shapes->shapes[e]));
        int64_t dims[DS_MAX_NDIM];
        if (vals != NULL)
          cJSON_AddItemToArray(vals, ds_shape_get_concrete(&values->shapes[e], dims)
                                       ? concrete_json(&values->shapes[e])
                                       : cJSON_CreateNull());
      }
      cJSON_AddItemToArray(nodes, item);
    }
    cJSON *facts_json = cJSON_AddArrayToObject(root, "facts");
    for (guint i = 0; i < facts->len; i++) {
      DsExprFact *f = facts->pdata[i];
      cJSON *item = cJSON_CreateObject();
      cJSON_AddStringToObject(item, "fact", f->text);
      if (f->reason != NULL)
        cJSON_AddStringToObject(item, "reason", f->reason);
      cJSON_AddItemToArray(facts_json, item);
    }
    cJSON *notes_json = cJSON_AddArrayToObject(root, "undecided");
    for (guint i = 0; i < notes->len; i++)
      cJSON_AddItemToArray(notes_json, cJSON_CreateString(notes->pdata[i]));
    char *text = cJSON_Print(root);
    printf("%s\n", text);
    cJSON_free(text);
    cJSON_Delete(root);
    return 0;
  }

  int name_width = 4;
  for (guint n = 0; n < graph->n_nodes; n++)
    name_width = MAX(name_width, MIN(56, (int)strlen(graph->nodes[n]->name)));
  printf("%-*s  %-20s  %s\n", name_width, "node", "op", "output shapes");
  for (guint n = 0; n < graph->n_nodes; n++) {
    const DsNode *node = graph->nodes[n];
    g_autoptr(GString) outs = g_string_new(NULL);
    for (guint k = 0; k < ds_node_n_op_outputs(node); k++) {
      guint e = graph->node_row_ptr[n] + k;
      g_autofree char *t =
        shape_text(&shapes->shapes[e], any_bound ? &values->shapes[e] : NULL);
      g_string_append_printf(outs, "%s%s", k ? "  " : "", t);
    }
    printf("%-*.*s  %-20s  %s\n", name_width, name_width, node->name, node->op_name, outs->str);
  }
  printf("\nfacts:\n");
  if (facts->len == 0)
    printf("  (none)\n");
  for (guint i = 0; i < facts->len; i++) {
    DsExprFact *f = facts->pdata[i];
    if (f->reason != NULL)
      printf("  %-28s  from %s\n", f->text, f->reason);
    else
      printf("  %s\n", f->text);
  }
  if (notes->len > 0) {
    printf("\nundecided:\n");
    for (guint i = 0; i < notes->len; i++)
      printf("  %s\n", (char *)notes->pdata[i]);
  }
  return 0;
}
