/* test-ops-control.c: the control-flow ops (_foreach, _while_loop, _cond): registration and
 * traits, attribute parsing (every error names the node), shape and dtype inference in concrete
 * and symbolic mode on MXNet's acceptance examples written as graphs here and on the sample
 * models of data/control (a foreach over a free length, a while loop's data-dependent length as
 * one unbacked symbol, a cond whose branches disagree), and the byte-identical JSON round trip of
 * nested subgraphs. Running the ops is the executor's business and tested with it. */
#include <glib.h>
#include <string.h>

#include "ds-error.h"
#include "ds-expr.h"
#include "ds-infer.h"
#include "ds-mxnet-json.h"
#include "ds-op.h"
#include "ds-test-cover.h"

/* ---- graph helpers ---- */

static DsGraph *load_text(const char *text)
{
  GError *error = NULL;
  DsGraph *g = ds_mxnet_json_load_data(text, strlen(text), "test.json", &error);
  if (error != NULL)
    g_error("%s", error->message);
  return g;
}

/* Loading `text` fails with `code`, naming node `node` and saying `what`. */
static void check_load_error(const char *text, int code, const char *node, const char *what)
{
  GError *error = NULL;
  DsGraph *g = ds_mxnet_json_load_data(text, strlen(text), "test.json", &error);
  if (g != NULL)
    g_error("loaded, but '%s' was expected:\n%s", what, text);
  g_test_message("%s", error->message);
  g_assert_error(error, DS_ERROR, code);
  g_autofree char *named = g_strdup_printf("node '%s' (", node);
  if (strstr(error->message, named) == NULL || strstr(error->message, what) == NULL)
    g_error("'%s' does not name %s and say '%s'", error->message, named, what);
  g_error_free(error);
}

static char *model_path(const char *name)
{
  const char *src = g_getenv("DS_SOURCE_DIR");
  return g_build_filename(src != NULL ? src : "..", "data", "control", name, NULL);
}

static DsGraph *load_model(const char *name)
{
  g_autofree char *path = model_path(name);
  GError *error = NULL;
  DsGraph *g = ds_mxnet_json_load(path, &error);
  g_assert_no_error(error);
  return g;
}

/* Heads' shapes, "; "-separated. */
static char *heads_text(const DsGraph *graph, const DsGraphShapes *shapes)
{
  GString *s = g_string_new(NULL);
  for (guint h = 0; h < graph->n_heads; h++) {
    g_autofree char *one = ds_shape_to_string(ds_graph_shapes_get(shapes, graph, graph->heads[h]));
    g_string_append_printf(s, "%s%s", h ? "; " : "", one);
  }
  return g_string_free(s, FALSE);
}

/* Declares "name", "(3, 4)" pairs (NULL-terminated) on the graph's variables; symbols parse in
 * `exprs` when given. A declared shape replaces the file's hint, as --input-shape does. */
static void declare(const DsGraph *graph, DsGraphShapes *shapes, DsExprCtx *exprs,
                    const char *const *declared)
{
  for (guint i = 0; declared != NULL && declared[i] != NULL; i += 2) {
    DsNode *var = ds_graph_find_node((DsGraph *)graph, declared[i]);
    g_assert_nonnull(var);
    DsShape shape = {.ndim = 0};
    g_auto(GStrv) parts = g_strsplit_set(declared[i + 1], "(), ", -1);
    for (guint k = 0; parts[k] != NULL; k++) {
      if (parts[k][0] == '\0')
        continue;
      if (exprs != NULL) {
        GError *error = NULL;
        const DsExpr *e = ds_expr_parse(exprs, parts[k], &error);
        g_assert_no_error(error);
        shape.dims[shape.ndim++] = ds_dim_from_expr(e);
      } else {
        shape.dims[shape.ndim++] = ds_dim(g_ascii_strtoll(parts[k], NULL, 10));
      }
    }
    shapes->shapes[graph->node_row_ptr[var->id]] = shape;
  }
}

/* Concrete inference; the heads' shapes, or "error: <message>". */
static char *infer_concrete(const DsGraph *graph, const char *const *declared,
                            gboolean require_complete, DsGraphShapes **shapes_out)
{
  GError *error = NULL;
  DsGraphShapes *shapes = ds_graph_shapes_new(graph, &error);
  g_assert_no_error(error);
  declare(graph, shapes, NULL, declared);
  DsShapeCtx *ctx = ds_shape_ctx_new();
  gboolean ok = ds_infer_graph(graph, shapes, ctx, require_complete, &error);
  ds_shape_ctx_free(ctx);
  char *text = ok ? heads_text(graph, shapes) : g_strdup_printf("error: %s", error->message);
  g_clear_error(&error);
  if (shapes_out != NULL)
    *shapes_out = shapes;
  else
    ds_graph_shapes_free(shapes);
  return text;
}

/* A symbolic inference kept for inspection. */
typedef struct {
  DsExprCtx *exprs;
  DsShapeCtx *ctx;
  DsGraphShapes *shapes;
  char *heads; /* or "error: <message>" */
} Sym;

static void sym_infer(Sym *s, const DsGraph *graph, const char *const *declared)
{
  GError *error = NULL;
  s->exprs = ds_expr_ctx_new();
  s->ctx = ds_shape_ctx_new_symbolic(s->exprs);
  s->shapes = ds_graph_shapes_new(graph, &error);
  g_assert_no_error(error);
  declare(graph, s->shapes, s->exprs, declared);
  ds_graph_shapes_symbolize_unknown(s->shapes, graph, s->exprs);
  if (ds_infer_graph(graph, s->shapes, s->ctx, TRUE, &error)) {
    ds_graph_shapes_resolve(s->shapes, s->exprs);
    s->heads = heads_text(graph, s->shapes);
  } else {
    s->heads = g_strdup_printf("error: %s", error->message);
    g_error_free(error);
  }
}

static void sym_clear(Sym *s)
{
  g_free(s->heads);
  ds_graph_shapes_free(s->shapes);
  ds_shape_ctx_free(s->ctx);
  ds_expr_ctx_free(s->exprs);
}

/* The facts with their reasons, "; "-separated. */
static char *facts_text(Sym *s)
{
  GPtrArray *list = ds_expr_ctx_list_facts(s->exprs);
  GString *f = g_string_new(NULL);
  for (guint i = 0; i < list->len; i++) {
    const DsExprFact *fact = list->pdata[i];
    g_string_append_printf(f, "%s%s (%s)", i ? "; " : "", fact->text,
                           fact->reason != NULL ? fact->reason : "no reason");
  }
  ds_expr_facts_free(list);
  return g_string_free(f, FALSE);
}

static void assert_error_has(const char *got, const char *node, const char *what)
{
  g_test_message("%s", got);
  g_autofree char *named = g_strdup_printf("node '%s' (", node);
  if (!g_str_has_prefix(got, "error: ") || strstr(got, named) == NULL || strstr(got, what) == NULL)
    g_error("'%s' is not an error naming %s and saying '%s'", got, named, what);
}

/* ---- the graphs ---- */

/* A foreach over `data` carrying s, with a free variable: body out = (x <op> s) <op> free, new
 * state = out. Body inputs: x 0, s 1, free 2. */
#define FE_OK                                                                                      \
  "\"num_args\": \"4\", \"num_outputs\": \"2\", \"num_out_data\": \"1\", \"in_data_locs\": "       \
  "\"[0]\", \"in_state_locs\": \"[1]\", \"remain_locs\": \"[2]\""
#define FE_HEADS "[4, 0, 0], [5, 0, 0]"

static char *foreach_doc_op(const char *op, const char *data_attrs, const char *state_shape,
                            const char *free_shape, const char *attrs, const char *heads)
{
  return g_strdup_printf(
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", \"attrs\": {%s}, \"inputs\": []}, "
      "{\"op\": \"null\", \"name\": \"s0\", \"attrs\": {%s}, \"inputs\": []}, {\"op\": \"null\", "
      "\"name\": \"free\", \"attrs\": {%s}, \"inputs\": []},"
      " {\"op\": \"_foreach\", \"name\": \"loop\", \"attrs\": {%s},"
      " \"inputs\": [[0, 0, 0], [1, 0, 0], [2, 0, 0]],"
      " \"subgraphs\": [{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, {\"op\": "
      "\"null\", \"name\": \"s\", \"inputs\": []},"
      " {\"op\": \"%s\", \"name\": \"add0\", \"inputs\": [[0, 0, 0], [1, 0, 0]]}, {\"op\": "
      "\"null\", \"name\": \"free\", \"inputs\": []},"
      " {\"op\": \"%s\", \"name\": \"add1\", \"inputs\": [[2, 0, 0], [3, 0, 0]]},"
      " {\"op\": \"_copy\", \"name\": \"copy0\", \"inputs\": [[4, 0, 0]]}],"
      " \"arg_nodes\": [0, 1, 3], \"heads\": [%s]}]}],"
      " \"arg_nodes\": [0, 1, 2], \"heads\": [[3, 0, 0], [3, 1, 0]], \"attrs\": "
      "{\"mxnet_version\": [\"int\", 10600]}}",
      data_attrs, state_shape, free_shape, attrs, op, op, heads);
}

static char *foreach_doc(const char *attrs, const char *heads)
{
  return foreach_doc_op("elemwise_add", "\"__shape__\": \"(3, 2)\"", "\"__shape__\": \"(2,)\"",
                        "\"__shape__\": \"(2,)\"", attrs, heads);
}

/* A while loop (MXNet's case 1.1 and 2.1): cond i < 6; func i + 1, s + i, and a copy of i for a
 * step output. Node inputs i0, s0; cond input i; func inputs i 0, s 1. */
#define WL_OK                                                                                      \
  "\"num_args\": \"4\", \"num_outputs\": \"2\", \"num_out_data\": \"0\", \"max_iterations\": "     \
  "\"10\", \"cond_input_locs\": \"[0]\", \"func_input_locs\": \"[0, 1]\", \"func_var_locs\": "     \
  "\"[0, 1]\""
#define WL_STEPS                                                                                   \
  "\"num_args\": \"4\", \"num_outputs\": \"3\", \"num_out_data\": \"1\", \"max_iterations\": "     \
  "\"10\", \"cond_input_locs\": \"[0]\", \"func_input_locs\": \"[0, 1]\", \"func_var_locs\": "     \
  "\"[0, 1]\""

static char *while_doc(const char *i0_attrs, const char *attrs, const char *cond_heads,
                       const char *func_heads, const char *heads)
{
  return g_strdup_printf(
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"i0\", \"attrs\": {%s}, \"inputs\": []}, "
      "{\"op\": \"null\", \"name\": \"s0\", \"attrs\": {\"__shape__\": \"(1,)\"}, \"inputs\": []},"
      " {\"op\": \"_while_loop\", \"name\": \"loop\", \"attrs\": {%s},"
      " \"inputs\": [[0, 0, 0], [1, 0, 0]], \"subgraphs\": ["
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"i\", \"inputs\": []}, {\"op\": "
      "\"_lesser_scalar\", \"name\": \"lesser0\","
      " \"attrs\": {\"scalar\": \"6\"}, \"inputs\": [[0, 0, 0]]}],"
      " \"arg_nodes\": [0], \"heads\": [%s]},"
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"i\", \"inputs\": []}, {\"op\": "
      "\"_plus_scalar\", \"name\": \"plus0\","
      " \"attrs\": {\"scalar\": \"1\"}, \"inputs\": [[0, 0, 0]]}, {\"op\": \"null\", \"name\": "
      "\"s\", \"inputs\": []},"
      " {\"op\": \"elemwise_add\", \"name\": \"add0\", \"inputs\": [[2, 0, 0], [0, 0, 0]]},"
      " {\"op\": \"_copy\", \"name\": \"copy0\", \"inputs\": [[0, 0, 0]]}],"
      " \"arg_nodes\": [0, 2], \"heads\": [%s]}]}],"
      " \"arg_nodes\": [0, 1], \"heads\": [%s], \"attrs\": {\"mxnet_version\": [\"int\", 10600]}}",
      i0_attrs, attrs, cond_heads, func_heads, heads);
}

static char *while_ok(const char *attrs)
{
  return while_doc("\"__shape__\": \"(1,)\"", attrs, "[1, 0, 0]", "[1, 0, 0], [3, 0, 0]",
                   "[2, 0, 0], [2, 1, 0]");
}

/* contrib.cond's docstring: pred a * b < 5, then (a + 5) * (b + 5), else (a - 5) * (b - 5). The
 * branches' last nodes are `then_last` and `else_last` (their inputs: node 1 is a +- 5, node 3
 * b +- 5). */
#define COND_OK                                                                                    \
  "\"num_args\": \"5\", \"num_outputs\": \"1\", \"cond_input_locs\": \"[0, 1]\", "                 \
  "\"then_input_locs\": \"[0, 1]\", \"else_input_locs\": \"[0, 1]\""
#define THEN_MUL                                                                                   \
  "{\"op\": \"elemwise_mul\", \"name\": \"then_mul\", \"inputs\": [[1, 0, 0], [3, 0, 0]]}"
#define ELSE_MUL                                                                                   \
  "{\"op\": \"elemwise_mul\", \"name\": \"else_mul\", \"inputs\": [[1, 0, 0], [3, 0, 0]]}"

static char *cond_doc(const char *a_shape, const char *b_shape, const char *attrs,
                      const char *pred_op, const char *then_last, const char *else_last)
{
  return g_strdup_printf(
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"a\", \"attrs\": {%s}, \"inputs\": []}, {\"op\": "
      "\"null\", \"name\": \"b\", \"attrs\": {%s}, \"inputs\": []},"
      " {\"op\": \"_cond\", \"name\": \"choose\", \"attrs\": {%s},"
      " \"inputs\": [[0, 0, 0], [1, 0, 0]], \"subgraphs\": ["
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"a\", \"inputs\": []}, {\"op\": \"null\", "
      "\"name\": \"b\", \"inputs\": []},"
      " {\"op\": \"%s\", \"name\": \"mul0\", \"inputs\": [[0, 0, 0], [1, 0, 0]]},"
      " {\"op\": \"_lesser_scalar\", \"name\": \"lesser0\", \"attrs\": {\"scalar\": \"5\"},"
      " \"inputs\": [[2, 0, 0]]}], \"arg_nodes\": [0, 1], \"heads\": [[3, 0, 0]]},"
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"a\", \"inputs\": []}, {\"op\": "
      "\"_plus_scalar\", \"name\": \"then_a\","
      " \"attrs\": {\"scalar\": \"5\"}, \"inputs\": [[0, 0, 0]]}, {\"op\": \"null\", \"name\": "
      "\"b\", \"inputs\": []},"
      " {\"op\": \"_plus_scalar\", \"name\": \"then_b\", \"attrs\": {\"scalar\": \"5\"},"
      " \"inputs\": [[2, 0, 0]]}, %s], \"arg_nodes\": [0, 2], \"heads\": [[4, 0, 0]]},"
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"a\", \"inputs\": []}, {\"op\": "
      "\"_minus_scalar\", \"name\": \"else_a\","
      " \"attrs\": {\"scalar\": \"5\"}, \"inputs\": [[0, 0, 0]]}, {\"op\": \"null\", \"name\": "
      "\"b\", \"inputs\": []},"
      " {\"op\": \"_minus_scalar\", \"name\": \"else_b\", \"attrs\": {\"scalar\": \"5\"},"
      " \"inputs\": [[2, 0, 0]]}, %s], \"arg_nodes\": [0, 2], \"heads\": [[4, 0, 0]]}]}],"
      " \"arg_nodes\": [0, 1], \"heads\": [[2, 0, 0]], \"attrs\": {\"mxnet_version\": [\"int\", "
      "10600]}}",
      a_shape, b_shape, attrs, pred_op, then_last, else_last);
}

static char *cond_ok(const char *attrs)
{
  return cond_doc("\"__shape__\": \"(1,)\"", "\"__shape__\": \"(1,)\"", attrs, "elemwise_mul",
                  THEN_MUL, ELSE_MUL);
}

/* ------------------------------------------------------------------------------------------ */
/* Registration */

static void test_registry(void)
{
  static const struct {
    const char *name;
    DsOpId id;
    guint traits;
  } ops[] = {
      {"_foreach", DS_OP_FOREACH, DS_OP_TRAIT_CONTROL_FLOW},
      {"_while_loop", DS_OP_WHILE_LOOP, DS_OP_TRAIT_CONTROL_FLOW | DS_OP_TRAIT_DYNAMIC_SHAPE},
      {"_cond", DS_OP_COND, DS_OP_TRAIT_CONTROL_FLOW},
  };
  for (guint i = 0; i < G_N_ELEMENTS(ops); i++) {
    const DsOpDef *op = ds_op_lookup(ops[i].name);
    g_assert_nonnull(op);
    g_assert_true(op == ds_op_get(ops[i].id));
    g_assert_cmpstr(ds_op_id_name(ops[i].id), ==, ops[i].name);
    g_assert_cmpuint(op->traits, ==, ops[i].traits);
    g_assert_nonnull(op->parse);
    g_assert_nonnull(op->infer_type);
  }
  g_assert_cmpuint(ds_op_get(DS_OP_FOREACH)->param_size, ==, sizeof(DsForeachParam));
  g_assert_cmpuint(ds_op_get(DS_OP_WHILE_LOOP)->param_size, ==, sizeof(DsWhileLoopParam));
  g_assert_cmpuint(ds_op_get(DS_OP_COND)->param_size, ==, sizeof(DsCondParam));
}

/* ------------------------------------------------------------------------------------------ */
/* Attributes */

static void test_foreach_params(void)
{
  g_autofree char *text = foreach_doc(FE_OK, FE_HEADS);
  g_autoptr(DsGraph) g = load_text(text);
  const DsNode *loop = ds_graph_find_node(g, "loop");
  const DsForeachParam *p = loop->param;
  g_assert_cmpint(p->num_args, ==, 4);
  g_assert_cmpint(p->num_outputs, ==, 2);
  g_assert_cmpint(p->num_out_data, ==, 1);
  g_assert_cmpint(p->n_data, ==, 1);
  g_assert_cmpint(p->n_states, ==, 1);
  g_assert_cmpint(p->n_remain, ==, 1);
  g_assert_cmpint(p->data_locs[0], ==, 0);
  g_assert_cmpint(p->state_locs[0], ==, 1);
  g_assert_cmpint(p->remain_locs[0], ==, 2);
  g_assert_cmpuint(loop->n_inputs, ==, 3);
  g_assert_cmpuint(loop->n_outputs, ==, 2);

  g_autoptr(DsGraph) lstm = load_model("lstm-foreach-symbol.json");
  p = ds_graph_find_node(lstm, "lstm_foreach0")->param;
  g_assert_cmpint(p->num_args, ==, 8);
  g_assert_cmpint(p->n_states, ==, 2);
  g_assert_cmpint(p->state_locs[0], ==, 3);
  g_assert_cmpint(p->state_locs[1], ==, 6);
  g_assert_cmpint(p->n_remain, ==, 4);
  g_assert_cmpint(p->remain_locs[3], ==, 5);
}

static void test_foreach_errors(void)
{
  static const struct {
    const char *attrs;
    int code;
    const char *what;
  } cases[] = {
      {"\"num_outputs\": \"2\", \"num_out_data\": \"1\", \"in_data_locs\": \"[0]\","
       " \"in_state_locs\": \"[1]\", \"remain_locs\": \"[2]\"",
       DS_ERROR_INVALID, "required attribute 'num_args' is missing"},
      {"\"num_args\": \"4\", \"num_outputs\": \"2\", \"num_out_data\": \"1\", \"in_data_locs\":"
       " \"[0]\", \"in_state_locs\": \"[1]\"",
       DS_ERROR_INVALID, "required attribute 'remain_locs' is missing"},
      {"\"num_args\": \"x4\", \"num_outputs\": \"2\", \"num_out_data\": \"1\", \"in_data_locs\":"
       " \"[0]\", \"in_state_locs\": \"[1]\", \"remain_locs\": \"[2]\"",
       DS_ERROR_PARSE, "num_args='x4' is not an integer"},
      {"\"num_args\": \"3\", \"num_outputs\": \"2\", \"num_out_data\": \"1\", \"in_data_locs\":"
       " \"[]\", \"in_state_locs\": \"[1]\", \"remain_locs\": \"[2]\"",
       DS_ERROR_INVALID, "at least one data array"},
      {"\"num_args\": \"4\", \"num_outputs\": \"2\", \"num_out_data\": \"1\", \"in_data_locs\":"
       " \"[3]\", \"in_state_locs\": \"[1]\", \"remain_locs\": \"[2]\"",
       DS_ERROR_INVALID, "entry 0 is 3, not a position among the body's 3 inputs"},
      {"\"num_args\": \"4\", \"num_outputs\": \"2\", \"num_out_data\": \"1\", \"in_data_locs\":"
       " \"[0]\", \"in_state_locs\": \"[0]\", \"remain_locs\": \"[2]\"",
       DS_ERROR_INVALID, "body input 0 ('x') is listed twice"},
      {"\"num_args\": \"3\", \"num_outputs\": \"2\", \"num_out_data\": \"1\", \"in_data_locs\":"
       " \"[0]\", \"in_state_locs\": \"[1]\", \"remain_locs\": \"[2]\"",
       DS_ERROR_INVALID, "num_args=3, but in_data_locs, in_state_locs and remain_locs list 3"},
      {"\"num_args\": \"3\", \"num_outputs\": \"2\", \"num_out_data\": \"1\", \"in_data_locs\":"
       " \"[0]\", \"in_state_locs\": \"[1]\", \"remain_locs\": \"[]\"",
       DS_ERROR_INVALID, "list 2 inputs, but the body has 3"},
      {"\"num_args\": \"4\", \"num_outputs\": \"3\", \"num_out_data\": \"2\", \"in_data_locs\":"
       " \"[0]\", \"in_state_locs\": \"[1]\", \"remain_locs\": \"[2]\"",
       DS_ERROR_INVALID, "the body has 2 outputs, but 3 are expected"},
      {"\"num_args\": \"4\", \"num_outputs\": \"2\", \"num_out_data\": \"3\", \"in_data_locs\":"
       " \"[0]\", \"in_state_locs\": \"[1]\", \"remain_locs\": \"[2]\"",
       DS_ERROR_INVALID, "num_out_data=3 exceeds num_outputs=2"},
      {"\"num_args\": \"4\", \"num_outputs\": \"2\", \"num_out_data\": \"0\", \"in_data_locs\":"
       " \"[0]\", \"in_state_locs\": \"[1]\", \"remain_locs\": \"[2]\"",
       DS_ERROR_INVALID,
       "the body gives 2 new states (num_outputs - num_out_data), but "
       "in_state_locs lists 1"},
      {"\"num_args\": \"4\", \"num_outputs\": \"0\", \"num_out_data\": \"0\", \"in_data_locs\":"
       " \"[0]\", \"in_state_locs\": \"[1]\", \"remain_locs\": \"[2]\"",
       DS_ERROR_INVALID, "num_outputs=0 is outside [1,"},
      {"\"num_args\": \"4\", \"num_outputs\": \"2\", \"num_out_data\": \"1\", \"in_data_locs\":"
       " \"None\", \"in_state_locs\": \"[1]\", \"remain_locs\": \"[2]\"",
       DS_ERROR_INVALID, "in_data_locs='None': must be a tuple of positions"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *text = foreach_doc(cases[i].attrs, FE_HEADS);
    check_load_error(text, cases[i].code, "loop", cases[i].what);
  }

  /* A loc list has no fixed bound, so a long one is judged by what it feeds: here the counts. */
  GString *many = g_string_new("[0");
  for (int i = 1; i <= 200; i++)
    g_string_append_printf(many, ", %d", i % 3);
  g_string_append(many, "]");
  g_autofree char *attrs = g_strdup_printf(
      "\"num_args\": \"4\", \"num_outputs\": \"2\", \"num_out_data\": \"1\", \"in_data_locs\":"
      " \"%s\", \"in_state_locs\": \"[1]\", \"remain_locs\": \"[2]\"",
      many->str);
  g_string_free(many, TRUE);
  g_autofree char *text = foreach_doc(attrs, FE_HEADS);
  check_load_error(text, DS_ERROR_INVALID, "loop",
                   "num_args=4, but in_data_locs, in_state_locs and remain_locs list 203 inputs");

  /* A foreach needs its body, and only one graph. */
  static const char no_body[] =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", \"attrs\": {\"__shape__\": \"(3, 2)\"}, "
      "\"inputs\": []},"
      " {\"op\": \"_foreach\", \"name\": \"loop\", \"attrs\": {\"num_args\": \"2\","
      " \"num_outputs\": \"1\", \"num_out_data\": \"1\", \"in_data_locs\": \"[0]\","
      " \"in_state_locs\": \"[]\", \"remain_locs\": \"[]\"}, \"inputs\": [[0, 0, 0]]}],"
      " \"arg_nodes\": [0], \"heads\": [[1, 0, 0]], \"attrs\": {\"mxnet_version\": [\"int\", "
      "10600]}}";
  check_load_error(no_body, DS_ERROR_INVALID, "loop", "has 0 subgraphs");
}

static void test_while_loop_params(void)
{
  g_autoptr(DsGraph) g = load_model("greedy-decoder-symbol.json");
  const DsNode *loop = ds_graph_find_node(g, "decoder0");
  const DsWhileLoopParam *p = loop->param;
  g_assert_cmpint(p->num_args, ==, 9);
  g_assert_cmpint(p->n_inputs, ==, 7);
  g_assert_cmpuint(loop->n_inputs, ==, 7);
  g_assert_cmpint(p->num_outputs, ==, 4);
  g_assert_cmpint(p->num_out_data, ==, 2);
  g_assert_cmpint(p->max_iterations, ==, 20);
  g_assert_cmpint(p->n_cond_inputs, ==, 4);
  g_assert_cmpint(p->n_func_inputs, ==, 7);
  g_assert_cmpint(p->func_input_locs[3], ==, 0);
  g_assert_cmpint(p->n_func_vars, ==, 2);
  /* Loop variable k is node input func_input_locs[func_var_locs[k]]: i is 0, h is 1. */
  g_assert_cmpint(p->func_input_locs[p->func_var_locs[0]], ==, 0);
  g_assert_cmpint(p->func_input_locs[p->func_var_locs[1]], ==, 1);
}

static void test_while_loop_errors(void)
{
  static const struct {
    const char *attrs;
    int code;
    const char *what;
  } cases[] = {
      {"\"num_args\": \"4\", \"num_outputs\": \"2\", \"num_out_data\": \"0\", \"max_iterations\":"
       " \"0\", \"cond_input_locs\": \"[0]\", \"func_input_locs\": \"[0, 1]\", \"func_var_locs\":"
       " \"[0, 1]\"",
       DS_ERROR_INVALID, "max_iterations=0 is outside [1, 100000000]"},
      {"\"num_args\": \"4\", \"num_outputs\": \"2\", \"num_out_data\": \"0\", \"max_iterations\":"
       " \"-3\", \"cond_input_locs\": \"[0]\", \"func_input_locs\": \"[0, 1]\", \"func_var_locs\":"
       " \"[0, 1]\"",
       DS_ERROR_INVALID, "max_iterations=-3 is outside [1, 100000000]"},
      {"\"num_args\": \"4\", \"num_outputs\": \"2\", \"num_out_data\": \"0\", \"max_iterations\":"
       " \"100000001\", \"cond_input_locs\": \"[0]\", \"func_input_locs\": \"[0, 1]\","
       " \"func_var_locs\": \"[0, 1]\"",
       DS_ERROR_INVALID, "max_iterations=100000001 is outside [1, 100000000]"},
      {"\"num_args\": \"4\", \"num_outputs\": \"2\", \"num_out_data\": \"0\", \"max_iterations\":"
       " \"ten\", \"cond_input_locs\": \"[0]\", \"func_input_locs\": \"[0, 1]\","
       " \"func_var_locs\": \"[0, 1]\"",
       DS_ERROR_PARSE, "max_iterations='ten' is not an integer"},
      {"\"num_args\": \"4\", \"num_outputs\": \"2\", \"num_out_data\": \"0\", \"max_iterations\":"
       " \"10\", \"cond_input_locs\": \"[2]\", \"func_input_locs\": \"[0, 1]\", \"func_var_locs\":"
       " \"[0, 1]\"",
       DS_ERROR_INVALID, "entry 0 is 2, not a position among the node's 2 inputs"},
      {"\"num_args\": \"4\", \"num_outputs\": \"2\", \"num_out_data\": \"0\", \"max_iterations\":"
       " \"10\", \"cond_input_locs\": \"[0]\", \"func_input_locs\": \"[0, 1]\", \"func_var_locs\":"
       " \"[0, 2]\"",
       DS_ERROR_INVALID, "entry 1 is 2, not a position among func's 2 inputs"},
      {"\"num_args\": \"4\", \"num_outputs\": \"2\", \"num_out_data\": \"0\", \"max_iterations\":"
       " \"10\", \"cond_input_locs\": \"[0]\", \"func_input_locs\": \"[0, 1]\", \"func_var_locs\":"
       " \"[0, 0]\"",
       DS_ERROR_INVALID, "loop variables 0 and 1 are both node input 0"},
      {"\"num_args\": \"4\", \"num_outputs\": \"2\", \"num_out_data\": \"0\", \"max_iterations\":"
       " \"10\", \"cond_input_locs\": \"[0]\", \"func_input_locs\": \"[0, 0]\", \"func_var_locs\":"
       " \"[0, 1]\"",
       DS_ERROR_INVALID, "loop variables 0 and 1 are both node input 0"},
      {"\"num_args\": \"4\", \"num_outputs\": \"2\", \"num_out_data\": \"0\", \"max_iterations\":"
       " \"10\", \"cond_input_locs\": \"[0]\", \"func_input_locs\": \"[0, 1]\", \"func_var_locs\":"
       " \"[0]\"",
       DS_ERROR_INVALID,
       "func gives 2 new loop variables (num_outputs - num_out_data), but "
       "func_var_locs lists 1"},
      {"\"num_args\": \"4\", \"num_outputs\": \"2\", \"num_out_data\": \"0\", \"max_iterations\":"
       " \"10\", \"cond_input_locs\": \"[0, 1]\", \"func_input_locs\": \"[0, 1]\","
       " \"func_var_locs\": \"[0, 1]\"",
       DS_ERROR_INVALID, "cond_input_locs lists 2 inputs, but cond has 1"},
      {"\"num_args\": \"4\", \"num_outputs\": \"2\", \"num_out_data\": \"0\", \"max_iterations\":"
       " \"10\", \"cond_input_locs\": \"[0]\", \"func_input_locs\": \"[1]\", \"func_var_locs\":"
       " \"[0, 1]\"",
       DS_ERROR_INVALID, "func_input_locs lists 1 inputs, but func has 2 (its variables)"},
      {"\"num_args\": \"4\", \"num_outputs\": \"3\", \"num_out_data\": \"1\", \"max_iterations\":"
       " \"10\", \"cond_input_locs\": \"[0]\", \"func_input_locs\": \"[0, 1]\", \"func_var_locs\":"
       " \"[0, 1]\"",
       DS_ERROR_INVALID, "func has 2 outputs, but 3 are expected"},
      {"\"num_args\": \"1\", \"num_outputs\": \"2\", \"num_out_data\": \"0\", \"max_iterations\":"
       " \"10\", \"cond_input_locs\": \"[0]\", \"func_input_locs\": \"[0, 1]\", \"func_var_locs\":"
       " \"[0, 1]\"",
       DS_ERROR_INVALID, "num_args=1 is outside [2,"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *text = while_ok(cases[i].attrs);
    check_load_error(text, cases[i].code, "loop", cases[i].what);
  }

  /* MXNet always writes max_iterations; a file without one gets the documented bound. */
  g_autofree char *unbounded =
    while_ok("\"num_args\": \"4\", \"num_outputs\": \"2\", \"num_out_data\": \"0\","
             " \"cond_input_locs\": \"[0]\", \"func_input_locs\": \"[0, 1]\","
             " \"func_var_locs\": \"[0, 1]\"");
  g_autoptr(DsGraph) g = load_text(unbounded);
  const DsWhileLoopParam *p = ds_graph_find_node(g, "loop")->param;
  g_assert_cmpint(p->max_iterations, ==, DS_CONTROL_DEFAULT_MAX_ITERATIONS);
  /* cond gives one value. */
  g_autofree char *two = while_doc("\"__shape__\": \"(1,)\"", WL_OK, "[1, 0, 0], [0, 0, 0]",
                                   "[1, 0, 0], [3, 0, 0]", "[2, 0, 0], [2, 1, 0]");
  check_load_error(two, DS_ERROR_INVALID, "loop", "cond has 2 outputs, but 1 are expected");

  static const char one_graph[] =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"i0\", \"attrs\": {\"__shape__\": \"(1,)\"}, "
      "\"inputs\": []},"
      " {\"op\": \"_while_loop\", \"name\": \"loop\", \"attrs\": {\"num_args\": \"3\","
      " \"num_outputs\": \"1\", \"num_out_data\": \"0\", \"max_iterations\": \"3\","
      " \"cond_input_locs\": \"[0]\", \"func_input_locs\": \"[0]\", \"func_var_locs\": \"[0]\"},"
      " \"inputs\": [[0, 0, 0]], \"subgraphs\": [{\"nodes\": [{\"op\": \"null\", \"name\": \"i\", "
      "\"inputs\": []}], \"arg_nodes\": [0],"
      " \"heads\": [[0, 0, 0]]}]}],"
      " \"arg_nodes\": [0], \"heads\": [[1, 0, 0]], \"attrs\": {\"mxnet_version\": [\"int\", "
      "10600]}}";
  check_load_error(one_graph, DS_ERROR_INVALID, "loop", "has 1 subgraphs");
}

static void test_cond_errors(void)
{
  g_autofree char *ok = cond_ok(COND_OK);
  g_autoptr(DsGraph) g = load_text(ok);
  const DsCondParam *p = ds_graph_find_node(g, "choose")->param;
  g_assert_cmpint(p->num_args, ==, 5);
  g_assert_cmpint(p->n_inputs, ==, 2);
  g_assert_cmpint(p->num_outputs, ==, 1);
  g_assert_cmpint(p->n_cond_inputs, ==, 2);
  g_assert_cmpint(p->n_then_inputs, ==, 2);
  g_assert_cmpint(p->n_else_inputs, ==, 2);
  g_assert_cmpint(p->else_input_locs[1], ==, 1);

  static const struct {
    const char *attrs;
    int code;
    const char *what;
  } cases[] = {
      {"\"num_args\": \"5\", \"num_outputs\": \"1\", \"then_input_locs\": \"[0, 1]\","
       " \"else_input_locs\": \"[0, 1]\"",
       DS_ERROR_INVALID, "required attribute 'cond_input_locs' is missing"},
      {"\"num_args\": \"2\", \"num_outputs\": \"1\", \"cond_input_locs\": \"[0, 1]\","
       " \"then_input_locs\": \"[0, 1]\", \"else_input_locs\": \"[0, 1]\"",
       DS_ERROR_INVALID, "num_args=2 is outside [3,"},
      {"\"num_args\": \"5\", \"num_outputs\": \"1\", \"cond_input_locs\": \"[0, 1]\","
       " \"then_input_locs\": \"[0]\", \"else_input_locs\": \"[0, 1]\"",
       DS_ERROR_INVALID, "then_input_locs lists 1 inputs, but the then branch has 2"},
      {"\"num_args\": \"5\", \"num_outputs\": \"1\", \"cond_input_locs\": \"[0, 1]\","
       " \"then_input_locs\": \"[0, 1]\", \"else_input_locs\": \"[0, 5]\"",
       DS_ERROR_INVALID, "entry 1 is 5, not a position among the node's 2 inputs"},
      {"\"num_args\": \"5\", \"num_outputs\": \"2\", \"cond_input_locs\": \"[0, 1]\","
       " \"then_input_locs\": \"[0, 1]\", \"else_input_locs\": \"[0, 1]\"",
       DS_ERROR_INVALID, "the then branch has 1 outputs, but 2 are expected"},
      {"\"num_args\": \"6\", \"num_outputs\": \"1\", \"cond_input_locs\": \"[0, 1]\","
       " \"then_input_locs\": \"[0, 1]\", \"else_input_locs\": \"[0, 1]\"",
       DS_ERROR_INVALID, "has 2 inputs, but its attributes call for 3"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *text = cond_ok(cases[i].attrs);
    check_load_error(text, cases[i].code, "choose", cases[i].what);
  }
}

/* ------------------------------------------------------------------------------------------ */
/* Shapes and dtypes */

/* contrib.foreach's example, shape-wise: data (3, 2), state (2,), a free variable (2,) (its values,
 * [[1, 6], [6, 15], [15, 28]], are checked on the reference: tools/control_flow_cases.py). */
static void test_foreach_shapes(void)
{
  ds_test_cover("shape", DS_OP_FOREACH);
  g_autofree char *text = foreach_doc(FE_OK, FE_HEADS);
  g_autoptr(DsGraph) g = load_text(text);
  DsGraphShapes *shapes = NULL;
  g_autofree char *heads = infer_concrete(g, NULL, TRUE, &shapes);
  g_assert_cmpstr(heads, ==, "(3, 2); (2,)");
  g_assert_cmpint(shapes->dtypes[ds_graph_entry_id(g, g->heads[0])], ==, DS_DTYPE_FLOAT32);
  ds_graph_shapes_free(shapes);

  /* Another length flows through; the trip count is symbolic when the data's is. */
  static const char *const longer[] = {"data", "(7, 2)", NULL};
  g_autofree char *h7 = infer_concrete(g, longer, TRUE, NULL);
  g_assert_cmpstr(h7, ==, "(7, 2); (2,)");
  static const char *const free_len[] = {"data", "(s0, 2)", NULL};
  Sym s;
  sym_infer(&s, g, free_len);
  g_assert_cmpstr(s.heads, ==, "(s0, 2); (2,)");
  sym_clear(&s);

  /* Shapes also flow backwards: a state known only from its final value. */
  g_autofree char *back = foreach_doc_op("elemwise_add", "\"__shape__\": \"(3, 2)\"", "",
                                         "\"__shape__\": \"(2,)\"", FE_OK, FE_HEADS);
  g_autoptr(DsGraph) gb = load_text(back);
  g_autofree char *hb = infer_concrete(gb, NULL, TRUE, NULL);
  g_assert_cmpstr(hb, ==, "(3, 2); (2,)");

  /* The op's rule works without a context too (it makes its own). */
  DsNode *loop = ds_graph_find_node(g, "loop");
  DsShape in[3] = {ds_shape_from_concrete((int64_t[]){4, 2}, 2),
                   ds_shape_from_concrete((int64_t[]){2}, 1), DS_SHAPE_UNKNOWN};
  DsShape out[2] = {DS_SHAPE_UNKNOWN, DS_SHAPE_UNKNOWN};
  GError *error = NULL;
  g_assert_true(loop->op->infer_shape(NULL, loop, loop->param, in, out, &error));
  g_assert_no_error(error);
  g_autofree char *o0 = ds_shape_to_string(&out[0]), *i2 = ds_shape_to_string(&in[2]);
  g_assert_cmpstr(o0, ==, "(4, 2)");
  g_assert_cmpstr(i2, ==, "(2,)");
}

/* A 1-D data array's rows are (1,), as in MXNet, so a stacked output is (T, 1). */
static void test_foreach_one_dim(void)
{
  g_autofree char *text =
      foreach_doc_op("elemwise_add", "\"__shape__\": \"(4,)\"", "\"__shape__\": \"(1,)\"",
                     "\"__shape__\": \"(1,)\"", FE_OK, FE_HEADS);
  g_autoptr(DsGraph) g = load_text(text);
  g_autofree char *heads = infer_concrete(g, NULL, TRUE, NULL);
  g_assert_cmpstr(heads, ==, "(4, 1); (1,)");
}

static void test_foreach_shape_errors(void)
{
  /* The state grows from (1,) to (2,): named, with both shapes. */
  g_autofree char *grow =
      foreach_doc_op("broadcast_add", "\"__shape__\": \"(3, 2)\"", "\"__shape__\": \"(1,)\"",
                     "\"__shape__\": \"(2,)\"", FE_OK, FE_HEADS);
  g_autoptr(DsGraph) g = load_text(grow);
  g_autofree char *got = infer_concrete(g, NULL, TRUE, NULL);
  assert_error_has(got, "loop",
                   "state 0 ('s'): the body's new value has shape (2,), but the initial value "
                   "has (1,)");

  /* Two data arrays of different lengths (free becomes a data array of length 2). */
  g_autofree char *lens = foreach_doc(
      "\"num_args\": \"4\", \"num_outputs\": \"2\", \"num_out_data\": \"1\", \"in_data_locs\":"
      " \"[0, 2]\", \"in_state_locs\": \"[1]\", \"remain_locs\": \"[]\"",
      FE_HEADS);
  g_autoptr(DsGraph) gl = load_text(lens);
  g_autofree char *got2 = infer_concrete(gl, NULL, TRUE, NULL);
  assert_error_has(got2, "loop",
                   "must share axis 0 (the trip count), but data array 1 has 2 "
                   "where the others give 3");

  /* A 0-dim data array has no axis to iterate over. */
  static const char *const scalar[] = {"data", "()", NULL};
  g_autofree char *text = foreach_doc(FE_OK, FE_HEADS);
  g_autoptr(DsGraph) g0 = load_text(text);
  g_autofree char *got3 = infer_concrete(g0, scalar, TRUE, NULL);
  assert_error_has(got3, "loop", "data array 0 has shape (): foreach iterates over axis 0");
}

/* MXNet's case 1.1 (i = 1, s = 0, while i <= 5) and 2.1 (i as a step output). */
static void test_while_loop_shapes(void)
{
  ds_test_cover("shape", DS_OP_WHILE_LOOP);
  g_autofree char *text = while_ok(WL_OK);
  g_autoptr(DsGraph) g = load_text(text);
  g_autofree char *heads = infer_concrete(g, NULL, TRUE, NULL);
  g_assert_cmpstr(heads, ==, "(1,); (1,)");

  g_autofree char *steps =
      while_doc("\"__shape__\": \"(1,)\"", WL_STEPS, "[1, 0, 0]", "[4, 0, 0], [1, 0, 0], [3, 0, 0]",
                "[2, 0, 0], [2, 1, 0], [2, 2, 0]");
  g_autoptr(DsGraph) gs = load_text(steps);
  /* Concrete inference cannot tell the length: only running the loop does. */
  g_autofree char *partial = infer_concrete(gs, NULL, FALSE, NULL);
  g_assert_cmpstr(partial, ==, "(?, 1); (1,); (1,)");
  g_autofree char *complete = infer_concrete(gs, NULL, TRUE, NULL);
  assert_error_has(complete, "loop", "cannot infer the shape of output 0");

  /* Symbolically, an unbacked symbol in [0, max_iterations], made once. */
  Sym s;
  sym_infer(&s, gs, NULL);
  g_assert_cmpstr(s.heads, ==, "(u0, 1); (1,); (1,)");
  g_assert_cmpuint(ds_expr_ctx_get_n_symbols(s.exprs), ==, 1);
  const DsShape *stacked = ds_graph_shapes_get(s.shapes, gs, gs->heads[0]);
  g_assert_true(ds_expr_is_unbacked(stacked->dims[0].expr));
  int64_t lo, hi;
  ds_expr_ctx_get_range(s.exprs, stacked->dims[0].expr, &lo, &hi);
  g_assert_cmpint(lo, ==, 0);
  g_assert_cmpint(hi, ==, 10);
  sym_clear(&s);

  /* Dtypes: an int64 counter stays int64, through cond and func. */
  g_autofree char *typed = while_doc("\"__shape__\": \"(1,)\", \"__dtype__\": \"6\"", WL_OK,
                                     "[1, 0, 0]", "[1, 0, 0], [3, 0, 0]", "[2, 0, 0], [2, 1, 0]");
  g_autoptr(DsGraph) gt = load_text(typed);
  DsGraphShapes *shapes = NULL;
  g_autofree char *ht = infer_concrete(gt, NULL, FALSE, &shapes);
  g_assert_cmpint(shapes->dtypes[ds_graph_entry_id(gt, gt->heads[0])], ==, DS_DTYPE_INT64);
  ds_graph_shapes_free(shapes);
}

static void test_while_loop_shape_errors(void)
{
  /* func doubles i's length: the loop variable must keep its shape. */
  static const char grow[] =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"i0\", \"attrs\": {\"__shape__\": \"(1,)\"}, "
      "\"inputs\": []},"
      " {\"op\": \"_while_loop\", \"name\": \"loop\", \"attrs\": {\"num_args\": \"3\","
      " \"num_outputs\": \"1\", \"num_out_data\": \"0\", \"max_iterations\": \"3\","
      " \"cond_input_locs\": \"[0]\", \"func_input_locs\": \"[0]\", \"func_var_locs\": \"[0]\"},"
      " \"inputs\": [[0, 0, 0]], \"subgraphs\": ["
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"i\", \"inputs\": []}, {\"op\": "
      "\"_lesser_scalar\", \"name\": \"lesser0\","
      " \"attrs\": {\"scalar\": \"6\"}, \"inputs\": [[0, 0, 0]]}], \"arg_nodes\": [0],"
      " \"heads\": [[1, 0, 0]]},"
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"i\", \"inputs\": []}, {\"op\": \"Concat\", "
      "\"name\": \"cat0\", \"attrs\":"
      " {\"num_args\": \"2\", \"dim\": \"0\"}, \"inputs\": [[0, 0, 0], [0, 0, 0]]}],"
      " \"arg_nodes\": [0], \"heads\": [[1, 0, 0]]}]}],"
      " \"arg_nodes\": [0], \"heads\": [[1, 0, 0]], \"attrs\": {\"mxnet_version\": [\"int\", "
      "10600]}}";
  g_autoptr(DsGraph) g = load_text(grow);
  g_autofree char *got = infer_concrete(g, NULL, TRUE, NULL);
  assert_error_has(got, "loop",
                   "loop variable 0 ('i'): func's new value has shape (2,), but the initial "
                   "value has (1,)");

  /* cond must give one value. */
  g_autofree char *wide = while_doc("\"__shape__\": \"(3,)\"", WL_OK, "[1, 0, 0]",
                                    "[1, 0, 0], [3, 0, 0]", "[2, 0, 0], [2, 1, 0]");
  g_autoptr(DsGraph) gw = load_text(wide);
  g_autofree char *got2 = infer_concrete(gw, NULL, FALSE, NULL);
  assert_error_has(got2, "loop", "cond's output has shape (3,), but must hold one value");
}

/* contrib.cond's example: (1,) inputs give a (1,) output. */
static void test_cond_shapes(void)
{
  ds_test_cover("shape", DS_OP_COND);
  g_autofree char *text = cond_ok(COND_OK);
  g_autoptr(DsGraph) g = load_text(text);
  g_autofree char *heads = infer_concrete(g, NULL, TRUE, NULL);
  g_assert_cmpstr(heads, ==, "(1,)");

  /* The branches disagree: named with both shapes. */
  static const char then_cat[] =
      "{\"op\": \"Concat\", \"name\": \"then_cat\", \"attrs\": {\"num_args\": \"2\", \"dim\":"
      " \"0\"}, \"inputs\": [[1, 0, 0], [3, 0, 0]]}";
  g_autofree char *bad = cond_doc("\"__shape__\": \"(1,)\"", "\"__shape__\": \"(1,)\"", COND_OK,
                                  "elemwise_mul", then_cat, ELSE_MUL);
  g_autoptr(DsGraph) gb = load_text(bad);
  g_autofree char *got = infer_concrete(gb, NULL, TRUE, NULL);
  assert_error_has(got, "choose",
                   "output 0: the then branch gives shape (2,), but the else branch gives (1,)");

  /* ONNX's rule allows it: the length is data-dependent, bounded by the longer branch, and
   * the run decides it. Any other rule name is an error naming the attribute. */
  g_autofree char *any = cond_doc("\"__shape__\": \"(1,)\"", "\"__shape__\": \"(1,)\"",
                                  COND_OK ", \"__branch_shapes__\": \"any\"", "elemwise_mul",
                                  then_cat, ELSE_MUL);
  g_autoptr(DsGraph) ga = load_text(any);
  Sym sa;
  sym_infer(&sa, ga, NULL);
  g_assert_cmpstr(sa.heads, ==, "(u0,)");
  GPtrArray *notes = ds_shape_ctx_get_notes(sa.ctx);
  g_assert_cmpuint(notes->len, ==, 1);
  g_assert_nonnull(strstr(notes->pdata[0], "(2,) from the then branch and (1,) from the else"));
  sym_clear(&sa);
  g_autofree char *got_any = infer_concrete(ga, NULL, FALSE, NULL);
  g_assert_cmpstr(got_any, ==, "(?,)");
  g_autofree char *odd = cond_doc("\"__shape__\": \"(1,)\"", "\"__shape__\": \"(1,)\"",
                                  COND_OK ", \"__branch_shapes__\": \"some\"", "elemwise_mul",
                                  then_cat, ELSE_MUL);
  check_load_error(odd, DS_ERROR_PARSE, "choose", "__branch_shapes__");

  /* Symbolically, the branches' shapes are merged: then gives a's length, else b's (the
   * condition broadcasts, so it leaves them apart). */
  static const char then_a[] =
      "{\"op\": \"_copy\", \"name\": \"then_copy\", \"inputs\": [[1, 0, 0]]}";
  static const char else_b[] =
      "{\"op\": \"_copy\", \"name\": \"else_copy\", \"inputs\": [[3, 0, 0]]}";
  g_autofree char *merge = cond_doc("\"__shape__\": \"(0,)\"", "\"__shape__\": \"(0,)\"", COND_OK,
                                    "broadcast_mul", then_a, else_b);
  g_autoptr(DsGraph) gm = load_text(merge);
  Sym s;
  sym_infer(&s, gm, NULL);
  g_assert_cmpstr(s.heads, ==, "(s0,)");
  g_autofree char *facts = facts_text(&s);
  g_test_message("facts: %s", facts);
  g_assert_nonnull(strstr(facts, "choose"));
  sym_clear(&s);

  /* Dtypes must agree as well (with the inputs' dtypes unknown, else's output dtype would run
   * backwards into them instead, as in MXNet). */
  static const char then_cast[] =
      "{\"op\": \"Cast\", \"name\": \"then_cast\", \"attrs\": {\"dtype\": \"int32\"},"
      " \"inputs\": [[1, 0, 0]]}";
  g_autofree char *typed = cond_doc("\"__shape__\": \"(1,)\", \"__dtype__\": \"0\"",
                                    "\"__shape__\": \"(1,)\", \"__dtype__\": \"0\"", COND_OK,
                                    "elemwise_mul", then_cast, ELSE_MUL);
  g_autoptr(DsGraph) gt = load_text(typed);
  g_autofree char *got3 = infer_concrete(gt, NULL, TRUE, NULL);
  assert_error_has(got3, "choose",
                   "output 0: the then branch gives dtype int32, but the else branch gives "
                   "float32");
}

/* ------------------------------------------------------------------------------------------ */
/* The sample models */

static void test_model_lstm(void)
{
  g_autoptr(DsGraph) g = load_model("lstm-foreach-symbol.json");
  static const char *const five[] = {"data", "(5, 4, 16)", NULL};
  DsGraphShapes *shapes = NULL;
  g_autofree char *heads = infer_concrete(g, five, TRUE, &shapes);
  g_assert_cmpstr(heads, ==, "(5, 4, 32); (4, 32); (4, 32)");
  for (guint h = 0; h < g->n_heads; h++)
    g_assert_cmpint(shapes->dtypes[ds_graph_entry_id(g, g->heads[h])], ==, DS_DTYPE_FLOAT32);
  ds_graph_shapes_free(shapes);

  /* The file leaves T free (0 in its __shape__): symbolically s0. */
  Sym s;
  sym_infer(&s, g, NULL);
  g_assert_cmpstr(s.heads, ==, "(s0, 4, 32); (4, 32); (4, 32)");
  g_assert_cmpuint(ds_expr_ctx_get_n_symbols(s.exprs), ==, 1);
  sym_clear(&s);

  /* A wrong weight is caught inside the body, named. */
  static const char *const wrong[] = {"data", "(5, 4, 16)", "i2h_weight", "(128, 15)", NULL};
  g_autofree char *got = infer_concrete(g, wrong, TRUE, NULL);
  assert_error_has(got, "lstm_foreach0", "in its body");
}

static void test_model_decoder(void)
{
  g_autoptr(DsGraph) g = load_model("greedy-decoder-symbol.json");
  g_autofree char *partial = infer_concrete(g, NULL, FALSE, NULL);
  g_assert_cmpstr(partial, ==, "(?, 1); (?, 1); (1,); (1, 8)");

  Sym s;
  sym_infer(&s, g, NULL);
  g_assert_cmpstr(s.heads, ==, "(u0, 1); (u0, 1); (1,); (1, 8)");
  /* One symbol for both stacked outputs, made once over the fixpoint's passes. */
  g_assert_cmpuint(ds_expr_ctx_get_n_symbols(s.exprs), ==, 1);
  const DsShape *tokens = ds_graph_shapes_get(s.shapes, g, g->heads[0]);
  int64_t lo, hi;
  ds_expr_ctx_get_range(s.exprs, tokens->dims[0].expr, &lo, &hi);
  g_assert_cmpint(lo, ==, 0);
  g_assert_cmpint(hi, ==, 20);
  for (guint h = 0; h < g->n_heads; h++)
    g_assert_cmpint(s.shapes->dtypes[ds_graph_entry_id(g, g->heads[h])], ==, DS_DTYPE_FLOAT32);
  sym_clear(&s);
}

static void test_model_cond_in_loop(void)
{
  g_autoptr(DsGraph) g = load_model("cond-in-loop-symbol.json");
  static const char *const six[] = {"data", "(6, 3)", NULL};
  g_autofree char *heads = infer_concrete(g, six, TRUE, NULL);
  g_assert_cmpstr(heads, ==, "(6, 3); (3,)");
  Sym s;
  sym_infer(&s, g, NULL);
  g_assert_cmpstr(s.heads, ==, "(s0, 3); (3,)");
  sym_clear(&s);
}

/* ------------------------------------------------------------------------------------------ */
/* JSON round trips */

/* A foreach whose body runs a foreach (compact text, as a hand-written file might be). */
static const char nested_json[] =
    "{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", \"attrs\": {\"__shape__\": \"(2, 3, "
    "2)\"}, \"inputs\": []}, {\"op\": \"null\", \"name\": \"s0\", \"attrs\": {\"__shape__\": "
    "\"(2,)\"}, \"inputs\": []},"
    " {\"op\": \"_foreach\", \"name\": \"outer\", \"attrs\": {\"in_data_locs\": \"[0]\","
    " \"in_state_locs\": \"[1]\", \"num_args\": \"3\", \"num_out_data\": \"1\","
    " \"num_outputs\": \"2\", \"remain_locs\": \"[]\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]],"
    " \"subgraphs\": [{\"nodes\": [{\"op\": \"null\", \"name\": \"row\", \"inputs\": []}, {\"op\": "
    "\"null\", \"name\": \"s\", \"inputs\": []},"
    "  {\"op\": \"_foreach\", \"name\": \"inner\", \"attrs\": {\"in_data_locs\": \"[0]\","
    "   \"in_state_locs\": \"[1]\", \"num_args\": \"3\", \"num_out_data\": \"1\","
    "   \"num_outputs\": \"2\", \"remain_locs\": \"[]\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]],"
    "   \"subgraphs\": [{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, {\"op\": "
    "\"null\", \"name\": \"s\", \"inputs\": []},"
    "     {\"op\": \"elemwise_add\", \"name\": \"add0\", \"inputs\": [[0, 0, 0], [1, 0, 0]]},"
    "     {\"op\": \"_copy\", \"name\": \"copy0\", \"inputs\": [[2, 0, 0]]}],"
    "     \"arg_nodes\": [0, 1], \"node_row_ptr\": [0, 1, 2, 3, 4],"
    "     \"heads\": [[2, 0, 0], [3, 0, 0]]}]}],"
    "  \"arg_nodes\": [0, 1], \"node_row_ptr\": [0, 1, 2, 4],"
    "  \"heads\": [[2, 0, 0], [2, 1, 0]]}]}],"
    " \"arg_nodes\": [0, 1], \"node_row_ptr\": [0, 1, 2, 4], \"heads\": [[2, 0, 0], [2, 1, 0]],"
    "\"attrs\": {\"mxnet_version\": [\"int\", 10600]}}";

static void test_nested_round_trip(void)
{
  GError *error = NULL;
  g_autoptr(DsGraph) g = load_text(nested_json);
  gsize len;
  g_autofree char *saved = ds_mxnet_json_save_to_data(g, &len);
  g_autoptr(DsGraph) again = ds_mxnet_json_load_data(saved, len, "saved.json", &error);
  g_assert_no_error(error);
  g_autofree char *saved2 = ds_mxnet_json_save_to_data(again, NULL);
  g_assert_cmpstr(saved2, ==, saved);
  /* The nested node parsed as a foreach too, and its shapes come through both levels. */
  const DsNode *outer = ds_graph_find_node(again, "outer");
  g_assert_true(outer->subgraphs[0]->nodes[2]->op == ds_op_get(DS_OP_FOREACH));
  g_autofree char *heads = infer_concrete(again, NULL, TRUE, NULL);
  g_assert_cmpstr(heads, ==, "(2, 3, 2); (2,)");
  static const char *const free_dims[] = {"data", "(s0, s1, 2)", NULL};
  Sym s;
  sym_infer(&s, again, free_dims);
  g_assert_cmpstr(s.heads, ==, "(s0, s1, 2); (2,)");
  sym_clear(&s);
}

/* The sample files are in MXNet's layout: loading and saving gives their bytes back (less the
 * final newline, which MXNet does not write). */
static void test_model_files_round_trip(void)
{
  static const char *const names[] = {"lstm-foreach-symbol.json", "greedy-decoder-symbol.json",
                                      "cond-in-loop-symbol.json"};
  for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
    g_autofree char *path = model_path(names[i]);
    g_autofree char *text = NULL;
    gsize len;
    GError *error = NULL;
    g_assert_true(g_file_get_contents(path, &text, &len, &error));
    g_assert_no_error(error);
    if (len > 0 && text[len - 1] == '\n')
      text[--len] = '\0';
    g_autoptr(DsGraph) g = load_model(names[i]);
    g_autofree char *saved = ds_mxnet_json_save_to_data(g, NULL);
    g_assert_cmpstr(saved, ==, text);
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/ops/control/registry", test_registry);
  g_test_add_func("/ops/control/foreach/params", test_foreach_params);
  g_test_add_func("/ops/control/foreach/errors", test_foreach_errors);
  g_test_add_func("/ops/control/while-loop/params", test_while_loop_params);
  g_test_add_func("/ops/control/while-loop/errors", test_while_loop_errors);
  g_test_add_func("/ops/control/cond/params-and-errors", test_cond_errors);
  g_test_add_func("/ops/control/foreach/shapes", test_foreach_shapes);
  g_test_add_func("/ops/control/foreach/one-dim", test_foreach_one_dim);
  g_test_add_func("/ops/control/foreach/shape-errors", test_foreach_shape_errors);
  g_test_add_func("/ops/control/while-loop/shapes", test_while_loop_shapes);
  g_test_add_func("/ops/control/while-loop/shape-errors", test_while_loop_shape_errors);
  g_test_add_func("/ops/control/cond/shapes", test_cond_shapes);
  g_test_add_func("/ops/control/model/lstm", test_model_lstm);
  g_test_add_func("/ops/control/model/greedy-decoder", test_model_decoder);
  g_test_add_func("/ops/control/model/cond-in-loop", test_model_cond_in_loop);
  g_test_add_func("/ops/control/json/nested-round-trip", test_nested_round_trip);
  g_test_add_func("/ops/control/json/model-files", test_model_files_round_trip);
  return g_test_run();
}
