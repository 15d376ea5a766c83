/* ds-mxnet-json.c: MXNet symbol JSON, read with cJSON and written in dmlc::JSONWriter's layout.
 *
 * Reading follows nnvm's LoadJSON (the "attrs", legacy "attr" and "param" keys, two- or
 * three-element entries, optional node_row_ptr, nested "subgraphs") and then MXNet's
 * LoadLegacyJSON upgrades for files older than the layout we write (see upgrade_graph()).
 * Every index in the file is checked before it is used, so a bad file gets an error that
 * names the file and the node, never a crash.
 *
 * Writing reproduces the layout MXNet 1.4 and later write: 2-space indentation, every array
 * element and object member on its own line, "," at line ends, `"key": value`, empty arrays
 * as [], no newline at the end; strings escaped as dmlc's WriteString does (only \r \n \t \\
 * and \"). Nodes keep their attributes in file order, which for a file MXNet wrote is the
 * sorted order its std::map gives, so load-then-save gives the same bytes.
 */
#include "ds-mxnet-json.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ds-error.h"
#include "ds-file.h"
#include "ds-op.h"

#define MXNET_VERSION_LEGACY   800   /* a file without attrs.mxnet_version is MXNet 0.8 */
#define MXNET_VERSION_0_9_0    900   /* aux states (BatchNorm's moving stats) became inputs */
#define MXNET_VERSION_0_9_4    904   /* initializers moved onto variables */
#define MXNET_VERSION_0_9_5    905   /* argmax/argmin axis became optional */
#define MXNET_VERSION_LAYOUT   10400 /* from 1.4 on, files are in the layout we write */
#define MXNET_VERSION_UPGRADED 10500 /* what an upgraded file is stamped with (MXNet 1.5) */
#define MAX_OUTPUTS_PER_NODE   65536 /* far above any op; bounds per-output arrays downstream */
#define MAX_UPGRADE_NEW_INPUTS 8     /* the 0.8 upgrade adds aux states: BatchNorm's 2 */
#define INDENT_BYTES_PER_LEVEL 2

/* Keys MXNet moved into hidden "__key__" form (kHiddenKeys in src/c_api/c_api_common.h). */
static const char *const hidden_keys[] = {"ctx_group", "lr_mult", "wd_mult", "force_mirroring",
                                          "mirror_stage"};

/* Initializers the 0.9.4 upgrade puts on an op's variable inputs (FSetInputVarAttrOnCompose). */
static const struct {
  const char *op;
  guint index;
  const char *init;
} var_init_rules[] = {
    {"BatchNorm", 3, "[\"zero\", {}]"},
    {"BatchNorm", 4, "[\"one\", {}]"},
    {"_contrib_SyncBatchNorm", 3, "[\"zero\", {}]"},
    {"_contrib_SyncBatchNorm", 4, "[\"one\", {}]"},
    {"LeakyReLU", 1, "[\"Constant\", {\"value\": 0.25}]"},
    {"UpSampling", 1, "[\"bilinear\", {}]"},
    {"IdentityAttachKLSparseReg", 1, "[\"zero\", {}]"},
};

#define NODE_FMT        "node %u '%s' (%s)"
#define NODE_ARGS(node) (node)->id, (node)->name, (node)->op_name

/* ---- Reading ---------------------------------------------------------------------------- */

/* A JSON number that is an integer in [0, max]. */
static gboolean json_get_uint(const cJSON *item, guint64 max, guint64 *out)
{
  if (!cJSON_IsNumber(item))
    return FALSE;
  double d = item->valuedouble;
  if (!(d >= 0.0 && d <= (double)max))
    return FALSE;
  guint64 v = (guint64)d;
  if ((double)v != d)
    return FALSE;
  *out = v;
  return TRUE;
}

/* Replaces the value of `key`, or appends it. */
static void node_set_attr(DsNode *node, const char *key, const char *value)
{
  for (guint i = 0; i < node->n_attrs; i++) {
    if (strcmp(node->attrs[i].key, key) == 0) {
      char *copy = g_strdup(value);
      g_free(node->attrs[i].value);
      node->attrs[i].value = copy;
      return;
    }
  }
  ds_node_add_attr(node, key, value);
}

static void node_remove_attr(DsNode *node, guint i)
{
  g_free(node->attrs[i].key);
  g_free(node->attrs[i].value);
  memmove(&node->attrs[i], &node->attrs[i + 1], (node->n_attrs - i - 1) * sizeof(DsAttr));
  node->n_attrs--;
}

static int compare_attrs(const void *a, const void *b)
{
  return strcmp(((const DsAttr *)a)->key, ((const DsAttr *)b)->key);
}

/* Reads an entry: [node, index, version], or [node, index] in legacy files. */
static gboolean parse_entry(const cJSON *item, DsEntry *out)
{
  guint64 v[3] = {0, 0, 0};
  int n = cJSON_IsArray(item) ? cJSON_GetArraySize(item) : 0;
  if (n != 2 && n != 3)
    return FALSE;
  int k = 0;
  for (const cJSON *e = item->child; e != NULL; e = e->next, k++)
    if (!json_get_uint(e, G_MAXUINT32, &v[k]))
      return FALSE;
  out->node_id = (guint32)v[0];
  out->index = (guint32)v[1];
  out->version = (guint32)v[2];
  return TRUE;
}

static DsGraph *graph_from_json(cJSON *obj, const char *where, gboolean top, int parent_version,
                                GError **error);

/* Copies an attribute object ("attrs", legacy "attr" or "param") into the node. `index` maps
 * the node's keys to their position + 1, so that a node with many attributes reads in linear
 * time. A key given twice keeps its first position and its last value, as dmlc's map reading
 * does; with `keep_existing`, keys already present win (nnvm inserts "param" that way). */
static gboolean read_attr_object(DsNode *node, GHashTable *index, const cJSON *obj, const char *key,
                                 gboolean keep_existing, const char *where, GError **error)
{
  if (!cJSON_IsObject(obj)) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: " NODE_FMT ": \"%s\" must be an object",
                where, NODE_ARGS(node), key);
    return FALSE;
  }
  for (const cJSON *a = obj->child; a != NULL; a = a->next) {
    if (!cJSON_IsString(a)) {
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                  "%s: " NODE_FMT ": attribute \"%s\" must be a string", where, NODE_ARGS(node),
                  a->string);
      return FALSE;
    }
    guint at = GPOINTER_TO_UINT(g_hash_table_lookup(index, a->string));
    if (at == 0) {
      ds_node_add_attr(node, a->string, a->valuestring);
      g_hash_table_insert(index, node->attrs[node->n_attrs - 1].key,
                          GUINT_TO_POINTER(node->n_attrs));
    } else if (!keep_existing) {
      char *copy = g_strdup(a->valuestring);
      g_free(node->attrs[at - 1].value);
      node->attrs[at - 1].value = copy;
    }
  }
  return TRUE;
}

/* Reads node `id` (of the `n_nodes` the file lists) from its JSON object and appends it to
 * `graph`. Inputs are checked to name one of the file's nodes; order, cycles and output
 * indices are checked once all nodes are read. */
static gboolean read_node(DsGraph *graph, cJSON *obj, guint id, guint n_nodes, const char *where,
                          int version, GError **error)
{
  cJSON *op = NULL, *name = NULL, *inputs = NULL, *attrs = NULL, *param = NULL;
  cJSON *subgraphs = NULL;
  const char *attrs_key = "attrs";

  if (!cJSON_IsObject(obj)) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: node %u is not a JSON object", where, id);
    return FALSE;
  }
  /* As in dmlc's reader, a key given twice takes its last value; "attr" and "attrs" fill the
   * same dict, so the later one wins. Other keys (control_deps, backward_source_id...) are
   * not kept. */
  for (cJSON *item = obj->child; item != NULL; item = item->next) {
    if (strcmp(item->string, "op") == 0)
      op = item;
    else if (strcmp(item->string, "name") == 0)
      name = item;
    else if (strcmp(item->string, "inputs") == 0)
      inputs = item;
    else if (strcmp(item->string, "attrs") == 0 || strcmp(item->string, "attr") == 0) {
      attrs = item;
      attrs_key = item->string;
    } else if (strcmp(item->string, "param") == 0)
      param = item;
    else if (strcmp(item->string, "subgraphs") == 0)
      subgraphs = item;
  }
  if (!cJSON_IsString(op)) {
    /* The name is what a user finds the node by: give it whenever the node has one. */
    if (cJSON_IsString(name))
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: node %u '%s': \"op\" is %s", where, id,
                  name->valuestring, op == NULL ? "missing" : "not a string");
    else
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: node %u: \"op\" is %s", where, id,
                  op == NULL ? "missing" : "not a string");
    return FALSE;
  }
  if (!cJSON_IsString(name)) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: node %u (%s): \"name\" is %s", where, id,
                op->valuestring, name == NULL ? "missing" : "not a string");
    return FALSE;
  }
  DsNode *node = ds_graph_add_node(graph, name->valuestring, op->valuestring);
  if (!node->is_variable)
    node->op = ds_op_lookup(node->op_name);

  GHashTable *index = g_hash_table_new(g_str_hash, g_str_equal);
  gboolean ok =
      (attrs == NULL || read_attr_object(node, index, attrs, attrs_key, FALSE, where, error)) &&
      (param == NULL || read_attr_object(node, index, param, "param", TRUE, where, error));
  g_hash_table_unref(index);
  if (!ok)
    return FALSE;
  node->json_empty_attrs = attrs != NULL && node->n_attrs == 0;

  if (inputs == NULL || !cJSON_IsArray(inputs)) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: " NODE_FMT ": \"inputs\" is %s", where,
                NODE_ARGS(node), inputs == NULL ? "missing" : "not an array");
    return FALSE;
  }
  int n_inputs = cJSON_GetArraySize(inputs);
  node->inputs = g_new0(DsEntry, MAX(n_inputs, 1));
  for (cJSON *e = inputs->child; e != NULL; e = e->next) {
    DsEntry entry;
    guint k = node->n_inputs;
    if (!parse_entry(e, &entry)) {
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                  "%s: " NODE_FMT ": input %u must be [node, index, version] (or [node, index])"
                  " of non-negative integers",
                  where, NODE_ARGS(node), k);
      return FALSE;
    }
    if (entry.node_id >= n_nodes) {
      g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                  "%s: " NODE_FMT ": input %u refers to node %u, but the graph has %u nodes", where,
                  NODE_ARGS(node), k, entry.node_id, n_nodes);
      return FALSE;
    }
    node->inputs[node->n_inputs++] = entry;
  }

  if (subgraphs != NULL) {
    if (!cJSON_IsArray(subgraphs)) {
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                  "%s: " NODE_FMT ": \"subgraphs\" is not an array", where, NODE_ARGS(node));
      return FALSE;
    }
    int n_sub = cJSON_GetArraySize(subgraphs);
    node->subgraphs = g_new0(DsGraph *, MAX(n_sub, 1));
    for (cJSON *s = subgraphs->child; s != NULL; s = s->next) {
      char *sub_where = g_strdup_printf("%s: " NODE_FMT ": subgraph %u", where, NODE_ARGS(node),
                                        node->n_subgraphs);
      DsGraph *sub = graph_from_json(s, sub_where, FALSE, version, error);
      g_free(sub_where);
      if (sub == NULL)
        return FALSE;
      node->subgraphs[node->n_subgraphs++] = sub;
    }
  }
  return TRUE;
}

/* TRUE if node `from` depends (through inputs) on node `target`. Inputs may point anywhere
 * here, so this is a plain DFS with a visited set. */
static gboolean node_reaches(const DsGraph *graph, guint from, guint target)
{
  gboolean found = FALSE;
  guint8 *visited = g_new0(guint8, graph->n_nodes);
  GArray *stack = g_array_new(FALSE, FALSE, sizeof(guint));
  g_array_append_val(stack, from);
  visited[from] = 1;
  while (stack->len > 0 && !found) {
    guint id = g_array_index(stack, guint, stack->len - 1);
    g_array_set_size(stack, stack->len - 1);
    const DsNode *node = graph->nodes[id];
    for (guint k = 0; k < node->n_inputs; k++) {
      guint src = node->inputs[k].node_id;
      if (src == target) {
        found = TRUE;
        break;
      }
      if (!visited[src]) {
        visited[src] = 1;
        g_array_append_val(stack, src);
      }
    }
  }
  g_array_free(stack, TRUE);
  g_free(visited);
  return found;
}

/* Inputs must refer to earlier nodes. A later one is either a cycle or a misordered file;
 * say which. */
static gboolean check_order(const DsGraph *graph, const char *where, GError **error)
{
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    for (guint k = 0; k < node->n_inputs; k++) {
      guint src = node->inputs[k].node_id;
      if (src < i)
        continue;
      if (src == i)
        g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                    "%s: " NODE_FMT ": input %u refers to the node itself (a cycle)", where,
                    NODE_ARGS(node), k);
      else if (node_reaches(graph, src, i))
        g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                    "%s: " NODE_FMT ": input %u refers to node %u '%s', which depends on it "
                    "(a cycle)",
                    where, NODE_ARGS(node), k, src, graph->nodes[src]->name);
      else
        g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                    "%s: " NODE_FMT ": input %u refers to node %u '%s', which comes later "
                    "(nodes must be in topological order)",
                    where, NODE_ARGS(node), k, src, graph->nodes[src]->name);
      return FALSE;
    }
  }
  return TRUE;
}

/* Sets each node's n_outputs from node_row_ptr, after checking it. */
static gboolean read_row_ptr(DsGraph *graph, const cJSON *row_ptr, const char *where,
                             GError **error)
{
  if (!cJSON_IsArray(row_ptr)) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: \"node_row_ptr\" is not an array", where);
    return FALSE;
  }
  guint n = (guint)cJSON_GetArraySize(row_ptr);
  if (n != graph->n_nodes + 1) {
    g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                "%s: node_row_ptr has %u entries for %u nodes (it needs %u)", where, n,
                graph->n_nodes, graph->n_nodes + 1);
    return FALSE;
  }
  guint64 prev = 0;
  guint i = 0;
  for (const cJSON *e = row_ptr->child; e != NULL; e = e->next, i++) {
    guint64 v;
    if (!json_get_uint(e, G_MAXUINT32, &v)) {
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                  "%s: node_row_ptr[%u] is not a non-negative integer", where, i);
      return FALSE;
    }
    if (i == 0) {
      if (v != 0) {
        g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                    "%s: node_row_ptr starts at %" G_GUINT64_FORMAT ", not 0", where, v);
        return FALSE;
      }
    } else {
      DsNode *node = graph->nodes[i - 1];
      if (v <= prev || v - prev > MAX_OUTPUTS_PER_NODE) {
        g_set_error(
            error, DS_ERROR, DS_ERROR_INVALID,
            "%s: node_row_ptr gives " NODE_FMT " %" G_GINT64_FORMAT " outputs (%" G_GUINT64_FORMAT
            " after %" G_GUINT64_FORMAT "); it must increase by 1 to %d per node",
            where, NODE_ARGS(node), (gint64)v - (gint64)prev, v, prev, MAX_OUTPUTS_PER_NODE);
        return FALSE;
      }
      node->n_outputs = (guint)(v - prev);
    }
    prev = v;
  }
  return TRUE;
}

static gboolean read_heads(DsGraph *graph, const cJSON *heads, const char *where, GError **error)
{
  if (!cJSON_IsArray(heads)) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: \"heads\" is %s", where,
                heads == NULL ? "missing" : "not an array");
    return FALSE;
  }
  graph->heads = g_new0(DsEntry, MAX(cJSON_GetArraySize(heads), 1));
  for (const cJSON *e = heads->child; e != NULL; e = e->next) {
    DsEntry entry;
    guint h = graph->n_heads;
    if (!parse_entry(e, &entry)) {
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                  "%s: head %u must be [node, index, version] (or [node, index]) of "
                  "non-negative integers",
                  where, h);
      return FALSE;
    }
    if (entry.node_id >= graph->n_nodes) {
      g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                  "%s: head %u refers to node %u, but the graph has %u nodes", where, h,
                  entry.node_id, graph->n_nodes);
      return FALSE;
    }
    graph->heads[graph->n_heads++] = entry;
  }
  return TRUE;
}

static gboolean read_arg_nodes(DsGraph *graph, const cJSON *args, const char *where, GError **error)
{
  if (!cJSON_IsArray(args)) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: \"arg_nodes\" is %s", where,
                args == NULL ? "missing" : "not an array");
    return FALSE;
  }
  graph->arg_nodes = g_new0(guint, MAX(cJSON_GetArraySize(args), 1));
  for (const cJSON *e = args->child; e != NULL; e = e->next) {
    guint64 id;
    guint a = graph->n_arg_nodes;
    if (!json_get_uint(e, G_MAXUINT32, &id)) {
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                  "%s: arg_nodes[%u] is not a non-negative integer", where, a);
      return FALSE;
    }
    if (id >= graph->n_nodes) {
      g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                  "%s: arg_nodes[%u] = %" G_GUINT64_FORMAT " is out of range (the graph has %u "
                  "nodes)",
                  where, a, id, graph->n_nodes);
      return FALSE;
    }
    const DsNode *node = graph->nodes[id];
    if (!node->is_variable) {
      g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                  "%s: arg_nodes[%u] = " NODE_FMT ", which is not a variable", where, a,
                  NODE_ARGS(node));
      return FALSE;
    }
    graph->arg_nodes[graph->n_arg_nodes++] = (guint)id;
  }
  return TRUE;
}

/* attrs.output_names (["list_str", [name, ...]], one per head), which a converted ONNX model
 * carries so that its outputs keep their names; absent in MXNet's own files. */
static gboolean read_output_names(DsGraph *graph, const char *where, GError **error)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(graph->attrs, "output_names");
  if (v == NULL)
    return TRUE;
  const cJSON *list = cJSON_IsArray(v) && cJSON_GetArraySize(v) == 2 ? v->child->next : NULL;
  gboolean ok = list != NULL && cJSON_IsString(v->child) &&
                strcmp(v->child->valuestring, "list_str") == 0 && cJSON_IsArray(list) &&
                (guint)cJSON_GetArraySize(list) == graph->n_heads;
  for (const cJSON *name = ok ? list->child : NULL; name != NULL; name = name->next)
    ok = ok && cJSON_IsString(name) && name->valuestring[0] != '\0';
  if (!ok) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: attrs.output_names must be [\"list_str\", [name, ...]] with one name per "
                "head (%u)",
                where, graph->n_heads);
    return FALSE;
  }
  graph->head_names = g_new0(char *, graph->n_heads + 1);
  guint h = 0;
  for (const cJSON *name = list->child; name != NULL; name = name->next)
    graph->head_names[h++] = g_strdup(name->valuestring);
  return TRUE;
}

/* The version in attrs.mxnet_version (["int", N]); MXNET_VERSION_LEGACY when absent. */
static gboolean read_version(const cJSON *attrs, const char *where, int *out, GError **error)
{
  *out = MXNET_VERSION_LEGACY;
  if (attrs == NULL)
    return TRUE;
  if (!cJSON_IsObject(attrs)) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: \"attrs\" is not an object", where);
    return FALSE;
  }
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(attrs, "mxnet_version");
  if (v == NULL)
    return TRUE;
  guint64 version;
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2 || !cJSON_IsString(v->child) ||
      strcmp(v->child->valuestring, "int") != 0 ||
      !json_get_uint(v->child->next, G_MAXINT, &version)) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: attrs.mxnet_version must be [\"int\", version]", where);
    return FALSE;
  }
  *out = (int)version;
  return TRUE;
}

/* MXNet's UpgradeJSON_FixParsing: attributes named after a hidden key ("ctx_group",
 * "weight_lr_mult") become "__ctx_group__", or move onto the variable input they name. */
static void upgrade_hidden_keys(DsGraph *graph)
{
  for (guint i = 0; i < graph->n_nodes; i++) {
    DsNode *node = graph->nodes[i];
    guint a = 0;
    while (a < node->n_attrs) {
      const char *key = node->attrs[a].key;
      gsize key_len = strlen(key);
      gboolean moved = FALSE;
      for (guint h = 0; h < G_N_ELEMENTS(hidden_keys); h++) {
        const char *hidden = hidden_keys[h];
        gsize hidden_len = strlen(hidden);
        const char *last = g_strrstr(key, hidden);
        if (last == NULL)
          continue;
        gsize pos = (gsize)(last - key);
        if (pos == 0 && key_len == hidden_len) {
          char *renamed = g_strdup_printf("__%s__", hidden);
          char *value = g_strdup(node->attrs[a].value);
          node_remove_attr(node, a);
          node_set_attr(node, renamed, value);
          g_free(renamed);
          g_free(value);
          moved = TRUE;
          break;
        }
        if (pos > 1 && pos == key_len - hidden_len) {
          /* "<argument>_<hidden>": put it on that argument's variable, if it is one. */
          if (node->is_variable || node->op == NULL)
            break;
          char *arg = g_strndup(key, pos - 1);
          char buf[16];
          for (guint k = 0; k < node->n_inputs; k++) {
            if (strcmp(ds_op_input_name(node->op, (int)node->n_inputs, (int)k, buf), arg) != 0)
              continue;
            DsNode *var = graph->nodes[node->inputs[k].node_id];
            if (var->is_variable) {
              char *renamed = g_strdup_printf("__%s__", hidden);
              node_set_attr(var, renamed, node->attrs[a].value);
              g_free(renamed);
              node_remove_attr(node, a);
              moved = TRUE;
            }
            break;
          }
          g_free(arg);
          break;
        }
      }
      /* A renamed key was appended at the end; re-examining it is harmless ("__x__" matches
       * no rule), and keys that stayed advance. */
      if (!moved)
        a++;
    }
  }
}

/* Moves the contents of `src` into a node newly appended to `graph`, keeping the new id.
 * `src` is left holding the fresh node's (empty) contents, for its old graph to free. */
static DsNode *move_node(DsGraph *graph, DsNode *src)
{
  DsNode *dst = ds_graph_add_node(graph, src->name, src->op_name);
  DsNode fresh = *dst;
  *dst = *src;
  dst->id = fresh.id;
  *src = fresh;
  return dst;
}

/* MXNet's UpgradeJSON_000800_000900: before 0.9, aux states (BatchNorm's moving_mean and
 * moving_var) were not inputs. Each op with fewer inputs than its attributes call for gets
 * new variables "<node>_<argument>" that copy the node's attributes, placed just before it
 * (where MXNet's DFS order puts them). Returns the new graph, or NULL on error. */
static DsGraph *upgrade_add_missing_inputs(DsGraph *old, const char *where, GError **error)
{
  guint *remap = g_new0(guint, MAX(old->n_nodes, 1));
  DsGraph *graph = ds_graph_new();
  gboolean inserted = FALSE;

  for (guint i = 0; i < old->n_nodes; i++) {
    DsNode *node = old->nodes[i];
    int wanted = -1;
    if (node->op != NULL) {
      void *param = node->op->param_size > 0 ? g_malloc0(node->op->param_size) : NULL;
      gboolean ok = node->op->parse == NULL || node->op->parse(node, param, error);
      if (ok)
        wanted = node->op->num_inputs(param);
      if (param != NULL && node->op->free_param != NULL)
        node->op->free_param(param); /* also after a parse that failed halfway */
      g_free(param);
      if (!ok) {
        g_prefix_error(error, "%s: ", where);
        goto fail;
      }
    }
    guint n_new = wanted > (int)node->n_inputs ? (guint)wanted - node->n_inputs : 0;
    if (n_new > MAX_UPGRADE_NEW_INPUTS) {
      g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                  "%s: " NODE_FMT ": has %u inputs, but its attributes call for %d", where,
                  NODE_ARGS(node), node->n_inputs, wanted);
      goto fail;
    }
    guint first_new = graph->n_nodes;
    for (guint k = 0; k < n_new; k++) {
      char buf[16];
      const char *arg = ds_op_input_name(node->op, wanted, (int)(node->n_inputs + k), buf);
      char *var_name =
          node->name[0] != '\0' ? g_strdup_printf("%s_%s", node->name, arg) : g_strdup(arg);
      DsNode *var = ds_graph_add_node(graph, var_name, "null");
      g_free(var_name);
      for (guint a = 0; a < node->n_attrs; a++)
        ds_node_add_attr(var, node->attrs[a].key, node->attrs[a].value);
      inserted = TRUE;
    }
    DsNode *moved = move_node(graph, node);
    remap[i] = moved->id;
    for (guint k = 0; k < moved->n_inputs; k++)
      moved->inputs[k].node_id = remap[moved->inputs[k].node_id];
    if (n_new > 0) {
      moved->inputs = g_renew(DsEntry, moved->inputs, moved->n_inputs + n_new);
      for (guint k = 0; k < n_new; k++)
        moved->inputs[moved->n_inputs++] = (DsEntry){first_new + k, 0, 0};
    }
  }

  /* Heads move with their nodes. MXNet lists every variable in arg_nodes when it saves, so
   * once variables were added the list is rebuilt that way. */
  graph->heads = g_steal_pointer(&old->heads);
  graph->n_heads = old->n_heads;
  old->n_heads = 0;
  for (guint h = 0; h < graph->n_heads; h++)
    graph->heads[h].node_id = remap[graph->heads[h].node_id];
  if (inserted) {
    graph->arg_nodes = g_new0(guint, MAX(graph->n_nodes, 1));
    for (guint i = 0; i < graph->n_nodes; i++)
      if (graph->nodes[i]->is_variable)
        graph->arg_nodes[graph->n_arg_nodes++] = i;
  } else {
    graph->arg_nodes = g_steal_pointer(&old->arg_nodes);
    graph->n_arg_nodes = old->n_arg_nodes;
    for (guint a = 0; a < graph->n_arg_nodes; a++)
      graph->arg_nodes[a] = remap[graph->arg_nodes[a]];
  }
  old->n_arg_nodes = 0;
  graph->attrs = g_steal_pointer(&old->attrs);
  graph->mxnet_version = old->mxnet_version;
  g_free(remap);
  ds_graph_unref(old);
  return graph;

fail:
  g_free(remap);
  ds_graph_unref(graph);
  ds_graph_unref(old);
  return NULL;
}

/* MXNet's UpgradeJSON_000903_000904: default initializers on some ops' variable inputs. */
static void upgrade_var_inits(DsGraph *graph)
{
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    const char *op_name = node->op != NULL ? node->op->name : node->op_name;
    for (guint r = 0; r < G_N_ELEMENTS(var_init_rules); r++) {
      if (strcmp(op_name, var_init_rules[r].op) != 0 || var_init_rules[r].index >= node->n_inputs)
        continue;
      DsNode *var = graph->nodes[node->inputs[var_init_rules[r].index].node_id];
      if (var->is_variable && ds_node_get_attr(var, "__init__") == NULL)
        ds_node_add_attr(var, "__init__", var_init_rules[r].init);
    }
  }
}

/* MXNet's UpgradeJSON_000904_000905: argmax/argmin's axis=-1 meant "flatten"; it is now
 * written as no axis at all. */
static void upgrade_reduce_axis(DsGraph *graph)
{
  for (guint i = 0; i < graph->n_nodes; i++) {
    DsNode *node = graph->nodes[i];
    if (strcmp(node->op_name, "argmax") != 0 && strcmp(node->op_name, "argmin") != 0)
      continue;
    for (guint a = 0; a < node->n_attrs; a++) {
      if (strcmp(node->attrs[a].key, "axis") == 0 && strcmp(node->attrs[a].value, "-1") == 0) {
        node_remove_attr(node, a);
        break;
      }
    }
  }
}

/* MXNet writes attributes from a std::map, so sorted by key, and never an empty "attrs". */
static void sort_attrs_recursively(DsGraph *graph)
{
  for (guint i = 0; i < graph->n_nodes; i++) {
    DsNode *node = graph->nodes[i];
    if (node->n_attrs > 1)
      qsort(node->attrs, node->n_attrs, sizeof(DsAttr), compare_attrs);
    node->json_empty_attrs = FALSE;
    for (guint s = 0; s < node->n_subgraphs; s++)
      sort_attrs_recursively(node->subgraphs[s]);
  }
}

/* Brings a file older than MXNET_VERSION_LAYOUT to what MXNet 1.5 would load and save:
 * the upgrade passes of src/nnvm/legacy_json_util.cc for the versions they apply to, sorted
 * attributes and the version stamp. Consumes `graph`; returns the upgraded one or NULL. */
static DsGraph *upgrade_graph(DsGraph *graph, int version, const char *where, GError **error)
{
  upgrade_hidden_keys(graph);
  if (version < MXNET_VERSION_0_9_0) {
    graph = upgrade_add_missing_inputs(graph, where, error);
    if (graph == NULL)
      return NULL;
  }
  if (version < MXNET_VERSION_0_9_4)
    upgrade_var_inits(graph);
  if (version < MXNET_VERSION_0_9_5)
    upgrade_reduce_axis(graph);
  sort_attrs_recursively(graph);

  /* MXNet's saver writes only the version into the graph's attrs. */
  if (graph->attrs != NULL)
    cJSON_Delete(graph->attrs);
  graph->attrs = cJSON_CreateObject();
  cJSON *stamp = cJSON_AddArrayToObject(graph->attrs, "mxnet_version");
  cJSON_AddItemToArray(stamp, cJSON_CreateString("int"));
  cJSON_AddItemToArray(stamp, cJSON_CreateNumber(MXNET_VERSION_UPGRADED));
  graph->mxnet_version = MXNET_VERSION_UPGRADED;
  return graph;
}

/* Output counts where the file gave none: the op's, once its attributes are parsed. */
static gboolean infer_output_counts(DsGraph *graph, const char *where, GError **error)
{
  guint64 n_entries = 0;
  for (guint i = 0; i < graph->n_nodes; i++) {
    DsNode *node = graph->nodes[i];
    if (node->op != NULL) {
      int n = node->op->num_outputs(node->param);
      if (n < 1 || n > MAX_OUTPUTS_PER_NODE) {
        g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                    "%s: " NODE_FMT ": its attributes call for %d outputs", where, NODE_ARGS(node),
                    n);
        return FALSE;
      }
      node->n_outputs = (guint)n;
    }
    /* Entry ids are guint: the total must fit, as node_row_ptr's values do. */
    n_entries += node->n_outputs;
    if (n_entries > G_MAXUINT32) {
      g_set_error(error, DS_ERROR, DS_ERROR_LIMIT,
                  "%s: " NODE_FMT ": the graph has more than %u outputs in all", where,
                  NODE_ARGS(node), G_MAXUINT32);
      return FALSE;
    }
  }
  return TRUE;
}

/* Every input and head must name an existing output of its node. */
static gboolean check_output_indices(const DsGraph *graph, const char *where, GError **error)
{
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    for (guint k = 0; k < node->n_inputs; k++) {
      const DsNode *src = graph->nodes[node->inputs[k].node_id];
      if (node->inputs[k].index >= src->n_outputs) {
        g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                    "%s: " NODE_FMT ": input %u refers to output %u of node %u '%s', which has "
                    "%u output(s)",
                    where, NODE_ARGS(node), k, node->inputs[k].index, src->id, src->name,
                    src->n_outputs);
        return FALSE;
      }
    }
  }
  for (guint h = 0; h < graph->n_heads; h++) {
    const DsNode *src = graph->nodes[graph->heads[h].node_id];
    if (graph->heads[h].index >= src->n_outputs) {
      g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                  "%s: head %u refers to output %u of node %u '%s', which has %u output(s)", where,
                  h, graph->heads[h].index, src->id, src->name, src->n_outputs);
      return FALSE;
    }
  }
  return TRUE;
}

/* Builds one graph (the document, or a node's subgraph) from its JSON object. `where` names
 * it in messages. A subgraph takes its parent's version; upgrading an old document also sorts
 * its subgraphs' attributes. */
static DsGraph *graph_from_json(cJSON *obj, const char *where, gboolean top, int parent_version,
                                GError **error)
{
  DsGraph *graph = ds_graph_new();
  cJSON *nodes = NULL, *arg_nodes = NULL, *row_ptr = NULL, *heads = NULL, *attrs = NULL;
  int version = parent_version;

  if (!cJSON_IsObject(obj)) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: the graph is not a JSON object", where);
    goto fail;
  }
  for (cJSON *item = obj->child; item != NULL; item = item->next) {
    if (strcmp(item->string, "nodes") == 0)
      nodes = item;
    else if (strcmp(item->string, "arg_nodes") == 0)
      arg_nodes = item;
    else if (strcmp(item->string, "node_row_ptr") == 0)
      row_ptr = item;
    else if (strcmp(item->string, "heads") == 0)
      heads = item;
    else if (strcmp(item->string, "attrs") == 0)
      attrs = item;
  }
  if (!cJSON_IsArray(nodes)) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: \"nodes\" is %s", where,
                nodes == NULL ? "missing" : "not an array");
    goto fail;
  }
  if (top && !read_version(attrs, where, &version, error))
    goto fail;
  if (attrs != NULL && !cJSON_IsObject(attrs)) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: \"attrs\" is not an object", where);
    goto fail;
  }
  graph->mxnet_version = version;

  guint n_nodes = (guint)cJSON_GetArraySize(nodes);
  guint id = 0;
  for (cJSON *n = nodes->child; n != NULL; n = n->next, id++)
    if (!read_node(graph, n, id, n_nodes, where, version, error))
      goto fail;
  if (!check_order(graph, where, error))
    goto fail;
  if (row_ptr != NULL && !read_row_ptr(graph, row_ptr, where, error))
    goto fail;
  if (!read_heads(graph, heads, where, error) || !read_arg_nodes(graph, arg_nodes, where, error))
    goto fail;
  if (attrs != NULL) {
    graph->attrs = cJSON_DetachItemViaPointer(obj, attrs);
    if (!read_output_names(graph, where, error))
      goto fail;
  }

  if (top && version < MXNET_VERSION_LAYOUT) {
    graph = upgrade_graph(graph, version, where, error);
    if (graph == NULL)
      return NULL;
  }
  if (!ds_graph_parse_params(graph, error)) {
    g_prefix_error(error, "%s: ", where);
    goto fail;
  }
  if (row_ptr == NULL && !infer_output_counts(graph, where, error))
    goto fail;
  ds_graph_update_row_ptr(graph);
  if (!check_output_indices(graph, where, error) || !ds_graph_validate(graph, where, error))
    goto fail;
  return graph;

fail:
  ds_graph_unref(graph);
  return NULL;
}

/* 1-based line and column of byte `offset`, for messages. */
static void offset_to_line(const char *data, gsize offset, guint *line, guint *column)
{
  *line = 1;
  *column = 1;
  for (gsize i = 0; i < offset; i++) {
    if (data[i] == '\n') {
      (*line)++;
      *column = 1;
    } else {
      (*column)++;
    }
  }
}

/* Bracket depth just before `offset`, skipping strings; *in_string says whether `offset` is
 * inside one. cJSON reports only where it stopped; this tells "too deep" apart from other
 * syntax errors. */
static guint depth_at(const char *data, gsize offset, gboolean *in_string_out)
{
  guint depth = 0;
  gboolean in_string = FALSE;
  for (gsize i = 0; i < offset; i++) {
    char c = data[i];
    if (in_string) {
      if (c == '\\')
        i++;
      else if (c == '"')
        in_string = FALSE;
    } else if (c == '"') {
      in_string = TRUE;
    } else if (c == '[' || c == '{') {
      depth++;
    } else if ((c == ']' || c == '}') && depth > 0) {
      depth--;
    }
  }
  if (in_string_out != NULL)
    *in_string_out = in_string;
  return depth;
}

/* TRUE if the text is a valid beginning cut short: it ends inside a string, or the parser,
 * given one more byte of whitespace, still fails only at the end. Called on errors only. */
static gboolean looks_truncated(const char *data, gsize len)
{
  gboolean in_string;
  depth_at(data, len, &in_string);
  if (in_string)
    return TRUE;
  char *padded = g_malloc(len + 1);
  memcpy(padded, data, len);
  padded[len] = ' ';
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(padded, len + 1, &end, FALSE);
  gboolean truncated = root == NULL && end != NULL && end >= padded + len;
  cJSON_Delete(root);
  g_free(padded);
  return truncated;
}

/* The offset of the first NUL in the text: a NUL byte, or a "\u0000" escape inside a string.
 * cJSON reads strings into C strings, so either would cut a name or an attribute short without
 * a word (and a NUL byte elsewhere reads as a syntax error that does not say what it saw).
 * *escaped says which it was. FALSE if there is none. */
static gboolean find_nul(const char *data, gsize len, gsize *offset, gboolean *escaped)
{
  const char *byte = memchr(data, '\0', len);
  gsize limit = byte != NULL ? (gsize)(byte - data) : len;
  gboolean in_string = FALSE;
  for (gsize i = 0; i < limit; i++) {
    if (!in_string) {
      in_string = data[i] == '"';
    } else if (data[i] == '"') {
      in_string = FALSE;
    } else if (data[i] == '\\') {
      if (i + 5 < limit && memcmp(data + i + 1, "u0000", 5) == 0) {
        *offset = i;
        *escaped = TRUE;
        return TRUE;
      }
      i++;
    }
  }
  *offset = limit;
  *escaped = FALSE;
  return byte != NULL;
}

DsGraph *ds_mxnet_json_load_data(const char *data, gsize len, const char *name, GError **error)
{
  g_return_val_if_fail(data != NULL || len == 0, NULL);
  if (name == NULL)
    name = "<json>";
  if (len == 0) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: empty file, not a JSON document", name);
    return NULL;
  }
  gsize nul;
  gboolean escaped;
  if (find_nul(data, len, &nul, &escaped)) {
    guint line, column;
    offset_to_line(data, nul, &line, &column);
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: %s at byte %" G_GSIZE_FORMAT " (line %u, column %u): a symbol file is text "
                "without NULs",
                name, escaped ? "a \\u0000 escape" : "a NUL byte", nul, line, column);
    return NULL;
  }
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(data, len, &end, FALSE);
  gsize stop = end != NULL && end >= data ? (gsize)(end - data) : 0;
  if (root == NULL) {
    guint line, column;
    stop = MIN(stop, len);
    offset_to_line(data, stop, &line, &column);
    if (depth_at(data, stop, NULL) >= CJSON_NESTING_LIMIT)
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                  "%s: JSON nested deeper than %d levels at byte %" G_GSIZE_FORMAT, name,
                  CJSON_NESTING_LIMIT, stop);
    else if (looks_truncated(data, len))
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                  "%s: truncated JSON: the text ends (byte %" G_GSIZE_FORMAT ", line %u) "
                  "before the document does",
                  name, len, line);
    else
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                  "%s: malformed JSON at byte %" G_GSIZE_FORMAT " (line %u, column %u)", name, stop,
                  line, column);
    return NULL;
  }
  while (stop < len &&
         (data[stop] == ' ' || data[stop] == '\t' || data[stop] == '\n' || data[stop] == '\r'))
    stop++;
  if (stop < len) {
    guint line, column;
    offset_to_line(data, stop, &line, &column);
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: unexpected text after the JSON document at byte %" G_GSIZE_FORMAT
                " (line %u, column %u)",
                name, stop, line, column);
    cJSON_Delete(root);
    return NULL;
  }
  DsGraph *graph = graph_from_json(root, name, TRUE, MXNET_VERSION_LEGACY, error);
  cJSON_Delete(root);
  return graph;
}

DsGraph *ds_mxnet_json_load(const char *path, GError **error)
{
  g_autoptr(GMappedFile) file = ds_file_map(path, error);
  if (file == NULL)
    return NULL;
  return ds_mxnet_json_load_data(g_mapped_file_get_contents(file), g_mapped_file_get_length(file),
                                 path, error);
}

/* ---- Writing ---------------------------------------------------------------------------- */

/* dmlc::JSONWriter's state: one element counter per open array or object. */
typedef struct {
  GString *out;
  GArray *counts; /* guint per open scope */
} Writer;

static void writer_newline(Writer *w)
{
  g_string_append_c(w->out, '\n');
  for (guint i = 0; i < w->counts->len * INDENT_BYTES_PER_LEVEL; i++)
    g_string_append_c(w->out, ' ');
}

static void writer_open(Writer *w, char bracket)
{
  guint zero = 0;
  g_string_append_c(w->out, bracket);
  g_array_append_val(w->counts, zero);
}

static void writer_close(Writer *w, char bracket)
{
  guint n = g_array_index(w->counts, guint, w->counts->len - 1);
  g_array_set_size(w->counts, w->counts->len - 1);
  if (n != 0)
    writer_newline(w);
  g_string_append_c(w->out, bracket);
}

/* Starts the next element of the open scope. */
static void writer_item(Writer *w)
{
  guint *n = &g_array_index(w->counts, guint, w->counts->len - 1);
  if (*n > 0)
    g_string_append_c(w->out, ',');
  (*n)++;
  writer_newline(w);
}

static void writer_string(Writer *w, const char *s)
{
  g_string_append_c(w->out, '"');
  for (; *s != '\0'; s++) {
    switch (*s) {
    case '\r':
      g_string_append(w->out, "\\r");
      break;
    case '\n':
      g_string_append(w->out, "\\n");
      break;
    case '\t':
      g_string_append(w->out, "\\t");
      break;
    case '\\':
      g_string_append(w->out, "\\\\");
      break;
    case '"':
      g_string_append(w->out, "\\\"");
      break;
    default:
      g_string_append_c(w->out, *s);
    }
  }
  g_string_append_c(w->out, '"');
}

static void writer_key(Writer *w, const char *key)
{
  writer_item(w);
  writer_string(w, key);
  g_string_append(w->out, ": ");
}

static void writer_uint(Writer *w, guint64 v)
{
  writer_item(w);
  g_string_append_printf(w->out, "%" G_GUINT64_FORMAT, v);
}

static void writer_entry(Writer *w, DsEntry e)
{
  writer_open(w, '[');
  writer_uint(w, e.node_id);
  writer_uint(w, e.index);
  writer_uint(w, e.version);
  writer_close(w, ']');
}

/* A number as the shortest text that reads back the same; integers without a fraction. */
static void write_number(Writer *w, double d)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  if (d >= -9.0e18 && d <= 9.0e18 && (double)(gint64)d == d) {
    g_string_append_printf(w->out, "%" G_GINT64_FORMAT, (gint64)d);
    return;
  }
  if (!(d - d == 0.0)) {
    /* Infinity: JSON has no spelling for it; this one reads back as infinity. */
    g_string_append(w->out, d > 0 ? "1e999" : "-1e999");
    return;
  }
  for (int precision = 15; precision <= 17; precision++) {
    char format[8];
    g_snprintf(format, sizeof format, "%%.%dg", precision);
    g_ascii_formatd(buf, sizeof buf, format, d);
    if (g_ascii_strtod(buf, NULL) == d)
      break;
  }
  g_string_append(w->out, buf);
}

/* A graph-level attribute value, kept as cJSON since nnvm's any-typed values vary. */
static void write_json_value(Writer *w, const cJSON *item)
{
  if (cJSON_IsObject(item)) {
    writer_open(w, '{');
    for (const cJSON *c = item->child; c != NULL; c = c->next) {
      writer_key(w, c->string != NULL ? c->string : "");
      write_json_value(w, c);
    }
    writer_close(w, '}');
  } else if (cJSON_IsArray(item)) {
    writer_open(w, '[');
    for (const cJSON *c = item->child; c != NULL; c = c->next) {
      writer_item(w);
      write_json_value(w, c);
    }
    writer_close(w, ']');
  } else if (cJSON_IsString(item)) {
    writer_string(w, item->valuestring);
  } else if (cJSON_IsNumber(item)) {
    write_number(w, item->valuedouble);
  } else if (cJSON_IsTrue(item)) {
    g_string_append(w->out, "true");
  } else if (cJSON_IsFalse(item)) {
    g_string_append(w->out, "false");
  } else {
    g_string_append(w->out, "null");
  }
}

static void write_graph(Writer *w, const DsGraph *graph, gboolean top);

static void write_node(Writer *w, const DsNode *node)
{
  writer_open(w, '{');
  writer_key(w, "op");
  writer_string(w, node->op_name);
  writer_key(w, "name");
  writer_string(w, node->name);
  if (node->n_attrs > 0 || node->json_empty_attrs) {
    writer_key(w, "attrs");
    writer_open(w, '{');
    for (guint a = 0; a < node->n_attrs; a++) {
      writer_key(w, node->attrs[a].key);
      writer_string(w, node->attrs[a].value);
    }
    writer_close(w, '}');
  }
  writer_key(w, "inputs");
  writer_open(w, '[');
  for (guint k = 0; k < node->n_inputs; k++) {
    writer_item(w);
    writer_entry(w, node->inputs[k]);
  }
  writer_close(w, ']');
  if (node->n_subgraphs > 0) {
    writer_key(w, "subgraphs");
    writer_open(w, '[');
    for (guint s = 0; s < node->n_subgraphs; s++) {
      writer_item(w);
      write_graph(w, node->subgraphs[s], FALSE);
    }
    writer_close(w, ']');
  }
  writer_close(w, '}');
}

/* Subgraphs carry "attrs" only when they had some; the document always gets one, since a
 * file without mxnet_version would read back as MXNet 0.8. */
static void write_graph(Writer *w, const DsGraph *graph, gboolean top)
{
  writer_open(w, '{');
  writer_key(w, "nodes");
  writer_open(w, '[');
  for (guint i = 0; i < graph->n_nodes; i++) {
    writer_item(w);
    write_node(w, graph->nodes[i]);
  }
  writer_close(w, ']');
  writer_key(w, "arg_nodes");
  writer_open(w, '[');
  for (guint a = 0; a < graph->n_arg_nodes; a++)
    writer_uint(w, graph->arg_nodes[a]);
  writer_close(w, ']');
  writer_key(w, "node_row_ptr");
  writer_open(w, '[');
  for (guint i = 0; i <= graph->n_nodes; i++)
    writer_uint(w, graph->node_row_ptr[i]);
  writer_close(w, ']');
  writer_key(w, "heads");
  writer_open(w, '[');
  for (guint h = 0; h < graph->n_heads; h++) {
    writer_item(w);
    writer_entry(w, graph->heads[h]);
  }
  writer_close(w, ']');
  if (graph->attrs != NULL) {
    writer_key(w, "attrs");
    write_json_value(w, graph->attrs);
  } else if (top) {
    writer_key(w, "attrs");
    writer_open(w, '{');
    writer_key(w, "mxnet_version");
    writer_open(w, '[');
    writer_item(w);
    writer_string(w, "int");
    writer_uint(w, graph->mxnet_version >= MXNET_VERSION_LAYOUT ? (guint64)graph->mxnet_version
                                                                : MXNET_VERSION_UPGRADED);
    writer_close(w, ']');
    if (graph->head_names != NULL) { /* an imported model's output names (nnvm's list_str) */
      writer_key(w, "output_names");
      writer_open(w, '[');
      writer_item(w);
      writer_string(w, "list_str");
      writer_item(w);
      writer_open(w, '[');
      for (guint h = 0; h < graph->n_heads; h++) {
        writer_item(w);
        writer_string(w, graph->head_names[h]);
      }
      writer_close(w, ']');
      writer_close(w, ']');
    }
    writer_close(w, '}');
  }
  writer_close(w, '}');
}

char *ds_mxnet_json_save_to_data(const DsGraph *graph, gsize *len_out)
{
  g_return_val_if_fail(graph != NULL, NULL);
  Writer w = {g_string_new(NULL), g_array_new(FALSE, FALSE, sizeof(guint))};
  write_graph(&w, graph, TRUE);
  g_array_free(w.counts, TRUE);
  if (len_out != NULL)
    *len_out = w.out->len;
  return g_string_free(w.out, FALSE);
}

gboolean ds_mxnet_json_save(const DsGraph *graph, const char *path, GError **error)
{
  g_return_val_if_fail(graph != NULL && path != NULL, FALSE);
  gsize len;
  char *text = ds_mxnet_json_save_to_data(graph, &len);
  GError *local = NULL;
  /* g_file_set_contents writes a temporary file and renames it over `path`. */
  gboolean ok = g_file_set_contents(path, text, (gssize)len, &local);
  g_free(text);
  if (!ok) {
    g_set_error(error, DS_ERROR, DS_ERROR_IO, "%s: cannot write: %s", path, local->message);
    g_error_free(local);
  }
  return ok;
}
