/* ds-viz-scene.c: from a graph, its partition, shapes and a profile to what is drawn. */
#include "ds-viz.h"

#include <glib/gi18n.h>

#include <math.h>
#include <string.h>

#include "ds-error.h"
#include "ds-op.h"
#include "ds-ops-control.h"
#include "ds-viz-scopes.h"

/* ---- colours ---- */

#define FILL_OP             "#ffffff"
#define FILL_INPUT          "#dbe9f6"
#define FILL_WEIGHT         "#eeeeee"
#define FILL_SUBINPUT       "#f3f0e6"
#define FILL_COLLAPSED      "#fff2cc"
#define FILL_STATIC         "#eaf3fb"
#define FILL_DYNAMIC        "#fdf0e2"
#define FILL_DEVICE         "#e8f5e0"
#define FILL_LOOP           "#eef7ea"
#define FILL_COND           "#f6eefa"
#define FILL_BODY           "#fbfbf8"
#define FILL_DATA_DEPENDENT "#cab2d6"
#define FILL_NO_DATA        "#f4f4f4"
#define FILL_GRADIENT       "#fce4dc"
#define FILL_GROUP          "#f1f4f8"

/* Light to dark: readable black text on every step. */
static const char *const heat[] = {"#fff7ec", "#fee8c8", "#fdd49e", "#fdbb84", "#fc8d59"};
static const char *const reuse[] = {"#f1a340", "#f7cf8f", "#e8e8e8", "#b8e0b0", "#7fc97f"};

/* ---- the profile, by node key ---- */

static void node_profile_free(gpointer data)
{
  DsVizNodeProfile *np = data;
  g_free(np->last_shapes);
  g_free(np);
}

static char *shapes_text(const DsReportShapes *shapes)
{
  GString *out = g_string_new(NULL);
  for (guint i = 0; i < shapes->n_shapes; i++) {
    const DsReportShape *shape = &shapes->shapes[i];
    g_string_append(out, out->len > 0 ? ", (" : "(");
    for (guint d = 0; d < shape->n_dims; d++)
      g_string_append_printf(out, "%s%" G_GINT64_FORMAT, d > 0 ? ", " : "", shape->dims[d]);
    g_string_append(out, shape->n_dims == 1 ? ",)" : ")");
  }
  return g_string_free(out, FALSE);
}

/* The profiler's keys, with a saved partition's region stripped: "fc1", "while0/fc1",
 * "while0/cond/lt0", as this file names nodes. */
static const char *strip_region(const DsReport *report, const char *key)
{
  for (guint i = 0; i < report->model.n_partition; i++) {
    const char *region = report->model.partition[i];
    gsize n = strlen(region);
    if (n > 0 && strncmp(key, region, n) == 0 && key[n] == '/')
      return key + n + 1;
  }
  return key;
}

static void index_profile(const DsReport *report, GHashTable *index)
{
  for (guint i = 0; i < report->n_events; i++) {
    const DsReportEvent *e = &report->events[i];
    const char *k = strip_region(report, e->key);
    DsVizNodeProfile *np = g_hash_table_lookup(index, k);
    if (np == NULL) {
      np = g_new0(DsVizNodeProfile, 1);
      g_hash_table_insert(index, g_strdup(k), np);
    }
    np->total_ns += (guint64)e->dur_ns;
    np->count++;
    np->fresh += (guint64)e->fresh_bytes;
    np->reused += (guint64)e->reused_bytes;
    if (e->gpu_ns > 0) { /* DS_REPORT_NONE unless traced on a GPU */
      np->gpu_ns += (guint64)e->gpu_ns;
      np->has_gpu = TRUE;
    }
    if (e->output_shapes != NULL) {
      g_free(np->last_shapes);
      np->last_shapes = shapes_text(e->output_shapes);
    }
  }
}

GHashTable *ds_viz_index_profile(const DsReport *report)
{
  GHashTable *index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, node_profile_free);
  index_profile(report, index);
  return index;
}

/* ---- building ---- */

typedef struct {
  DsVizScene *scene;
  const DsVizOptions *o;
  GHashTable *collapse;  /* ids to collapse -> (unused) */
  GHashTable *collapsed; /* id -> scene node index + 1, once made */
  GHashTable *clusters;  /* id -> cluster index + 1 */
  GHashTable *profile;   /* key -> DsVizNodeProfile */
  GHashTable *edge_seen; /* "from>to" */
  guint64 max_ns;
  gboolean show_weights;
  gboolean any_gradient; /* a gradient node was drawn in its own colour */
  DsVizScopes *scopes;   /* the top level's name-scope groups, or NULL */
  GHashTable *expand;    /* ids the caller keeps open -> (unused) */
} Builder;

static guint add_node(Builder *b, DsVizNodeKind kind, char *id, char *label, const char *fill,
                      gint cluster, const DsNode *node)
{
  char *tooltip = node != NULL && node->op != NULL
                      ? g_strdup_printf("%s (%s)", node->name, node->op_name)
                      : g_strdup(label);
  DsVizNode n = {.kind = kind,
                 .id = id,
                 .label = label,
                 .fill = g_strdup(fill),
                 .tooltip = tooltip,
                 .cluster = cluster,
                 .node = node};
  g_array_append_val(b->scene->nodes, n);
  for (gint c = cluster; c >= 0; c = g_array_index(b->scene->clusters, DsVizCluster, c).parent)
    g_array_index(b->scene->clusters, DsVizCluster, c).n_nodes += node != NULL;
  return b->scene->nodes->len - 1;
}

static void add_edge(Builder *b, gint from, guint to, char *label)
{
  g_autofree char *key = g_strdup_printf("%d>%u", from, to);
  if (from < 0 || (guint)from == to || g_hash_table_contains(b->edge_seen, key)) {
    g_free(label);
    return;
  }
  g_hash_table_add(b->edge_seen, g_steal_pointer(&key));
  DsVizEdge e = {.from = (guint)from, .to = to, .label = label};
  g_array_append_val(b->scene->edges, e);
}

static gint add_cluster(Builder *b, DsVizClusterKind kind, const char *id, char *label,
                        const char *fill, gint parent)
{
  DsVizCluster c = {
      .kind = kind, .id = g_strdup(id), .label = label, .fill = g_strdup(fill), .parent = parent};
  g_array_append_val(b->scene->clusters, c);
  g_hash_table_insert(b->clusters, g_strdup(id), GUINT_TO_POINTER(b->scene->clusters->len));
  return (gint)b->scene->clusters->len - 1;
}

/* "(s0, 10*s1) = (4, 320)" for an entry of the model graph. */
static char *edge_label(Builder *b, DsGraph *graph, gboolean top, DsEntry entry)
{
  if (!top)
    return NULL;
  guint e = ds_graph_entry_id(graph, entry);
  const DsShape *sym = b->o->symbolic != NULL ? &b->o->symbolic->shapes[e] : NULL;
  const DsShape *con = b->o->concrete != NULL ? &b->o->concrete->shapes[e] : NULL;
  g_autofree char *s = sym != NULL && sym->ndim >= 0 ? ds_shape_to_string(sym) : NULL;
  g_autofree char *c = con != NULL && con->ndim >= 0 ? ds_shape_to_string(con) : NULL;
  if (s != NULL && c != NULL && strcmp(s, c) != 0)
    return g_strdup_printf("%s = %s", s, c);
  return g_strdup(s != NULL ? s : c);
}

/* A few attributes worth reading on the node itself. */
static void append_key_attrs(GString *label, const DsNode *node)
{
  static const char *const keys[] = {
      "kernel", "stride", "num_filter", "num_hidden",     "act_type", "pool_type",  "axis",
      "axes",   "shape",  "scalar",     "max_iterations", "mode",     "num_outputs"};
  int shown = 0;
  for (guint k = 0; k < G_N_ELEMENTS(keys) && shown < 3; k++) {
    for (guint a = 0; a < node->n_attrs; a++) {
      if (strcmp(node->attrs[a].key, keys[k]) != 0)
        continue;
      g_autofree char *value = g_strndup(node->attrs[a].value, 24);
      g_string_append_printf(label, "\n%s=%s", keys[k], value);
      shown++;
    }
  }
}

/* The weights an op reads, folded into its box as Netron draws them: one line per shape,
 * naming the inputs of that shape ("gamma, beta, moving_mean, moving_var (64,)"). */
static void append_weights(Builder *b, DsGraph *graph, const DsNode *node, GString *label)
{
  g_autoptr(GPtrArray) shapes = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
  for (guint k = 0; k < node->n_inputs; k++) {
    guint src = node->inputs[k].node_id;
    if (b->o->is_weight == NULL || !b->o->is_weight[src])
      continue;
    char buf[16];
    const char *role = node->op != NULL ? ds_op_input_name(node->op, node->n_inputs, k, buf)
                                        : graph->nodes[src]->name;
    char *shape = edge_label(b, graph, TRUE, node->inputs[k]);
    if (shape == NULL)
      shape = g_strdup("?");
    guint at = 0;
    while (at < shapes->len && strcmp(shapes->pdata[at], shape) != 0)
      at++;
    if (at == shapes->len) {
      g_ptr_array_add(shapes, shape);
      g_ptr_array_add(names, g_ptr_array_new_with_free_func(g_free));
    } else {
      g_free(shape);
    }
    g_ptr_array_add(names->pdata[at], g_strdup(role));
  }
  for (guint i = 0; i < shapes->len; i++) {
    GPtrArray *roles = names->pdata[i];
    g_string_append_c(label, '\n');
    for (guint r = 0; r < roles->len; r++)
      g_string_append_printf(label, "%s%s", r > 0 ? ", " : "", (char *)roles->pdata[r]);
    g_string_append_printf(label, " %s", (char *)shapes->pdata[i]);
  }
}

static const char *heat_fill(guint64 ns, guint64 max)
{
  if (max == 0)
    return heat[0];
  double t = (double)ns / (double)max;
  return heat[MIN((int)(t * G_N_ELEMENTS(heat)), (int)G_N_ELEMENTS(heat) - 1)];
}

char *ds_viz_format_ns(guint64 ns)
{
  if (ns >= 1000000)
    return g_strdup_printf("%.2f ms", ns / 1e6);
  if (ns >= 1000)
    return g_strdup_printf("%.1f µs", ns / 1e3);
  return g_strdup_printf("%" G_GUINT64_FORMAT " ns", ns);
}

/* Long generated names ("staticbertencoder0_transformer1_..._transpose3") keep their start
 * and end, which say which block and which op; the tooltip keeps the whole name. */
#define LABEL_NAME_CHARS 36

static char *short_name(const char *name)
{
  glong n = g_utf8_strlen(name, -1);
  if (n <= LABEL_NAME_CHARS)
    return g_strdup(name);
  /* The start says which block, the end which op: the cut goes in the middle. */
  glong head = (LABEL_NAME_CHARS - 1) / 2, tail = LABEL_NAME_CHARS - 1 - head;
  g_autofree char *start = g_utf8_substring(name, 0, head);
  return g_strconcat(start, "…", g_utf8_offset_to_pointer(name, n - tail), NULL);
}

/* A partition region's cluster: its kind, and where it runs when placed on a device. */
static gint add_region_cluster(Builder *b, const DsRegion *region, gint parent)
{
  const char *kind = region->kind == DS_REGION_STATIC ? "static" : "dynamic";
  if (region->backend != NULL)
    return add_cluster(b, DS_VIZ_CLUSTER_DEVICE, region->name,
                       g_strdup_printf("%s (%s, on %s)", region->name, kind, region->backend->name),
                       FILL_DEVICE, parent);
  return add_cluster(
      b, region->kind == DS_REGION_STATIC ? DS_VIZ_CLUSTER_STATIC : DS_VIZ_CLUSTER_DYNAMIC,
      region->name, g_strdup_printf("%s (%s)", region->name, kind),
      region->kind == DS_REGION_STATIC ? FILL_STATIC : FILL_DYNAMIC, parent);
}

/* The label and fill of an op node, with the overlay's value. */
static void op_look(Builder *b, const DsNode *node, const char *key, const char *scope,
                    GString *label, const char **fill)
{
  /* Inside a layer group's box, the group's scope is on the box: the node's own part is what
   * tells it apart ("multiheadattentioncell0_query_fwd" in "bertencoder0_transformer3"). */
  const char *own = node->name;
  gsize n = scope != NULL ? strlen(scope) : 0;
  if (n > 0 && strncmp(own, scope, n) == 0 && (own[n] == '_' || own[n] == '/') && own[n + 1])
    own += n + 1;
  g_autofree char *name = short_name(own);
  g_string_append_printf(label, "%s\n%s", name, node->op_name);
  append_key_attrs(label, node);
  *fill = FILL_OP;
  if (b->o->overlay == DS_VIZ_OVERLAY_NONE)
    return;
  const DsVizNodeProfile *np = g_hash_table_lookup(b->profile, key);
  if (np == NULL) {
    *fill = FILL_NO_DATA;
    return;
  }
  switch (b->o->overlay) {
  case DS_VIZ_OVERLAY_TIME: {
    g_autofree char *t = ds_viz_format_ns(np->total_ns);
    g_autofree char *gpu = np->has_gpu ? ds_viz_format_ns(np->gpu_ns) : NULL;
    g_string_append_printf(label, "\n%s%s%s", t, gpu != NULL ? " · GPU " : "",
                           gpu != NULL ? gpu : "");
    *fill = heat_fill(np->total_ns, b->max_ns);
    break;
  }
  case DS_VIZ_OVERLAY_MEMORY: {
    guint64 all = np->fresh + np->reused;
    if (all == 0) {
      g_string_append(label, "\nno new buffer");
      *fill = reuse[2];
      break;
    }
    double share = (double)np->reused / (double)all;
    g_autofree char *f = g_format_size(np->fresh), *r = g_format_size(np->reused);
    g_string_append_printf(label, "\nfresh %s, reused %s", f, r);
    *fill = reuse[share < 0.2 ? 0 : share < 0.5 ? 1 : share < 0.8 ? 3 : 4];
    break;
  }
  default:
    if (node->op != NULL && (node->op->traits & DS_OP_TRAIT_DYNAMIC_SHAPE)) {
      g_string_append_printf(label, "\n→ %s", np->last_shapes != NULL ? np->last_shapes : "?");
      *fill = FILL_DATA_DEPENDENT;
    }
  }
}

/* The node input feeding variable `v` (node order) of subgraph `s`. */
static int feeding_input(const DsNode *node, guint s, guint v)
{
  switch (node->op->id) {
  case DS_OP_FOREACH: {
    const DsForeachParam *p = node->param;
    for (int j = 0; j < p->n_data; j++)
      if (p->data_locs[j] == (int)v)
        return j;
    for (int k = 0; k < p->n_states; k++)
      if (p->state_locs[k] == (int)v)
        return p->n_data + k;
    for (int r = 0; r < p->n_remain; r++)
      if (p->remain_locs[r] == (int)v)
        return p->n_data + p->n_states + r;
    return -1;
  }
  case DS_OP_WHILE_LOOP: {
    const DsWhileLoopParam *p = node->param;
    return s == 0 ? (v < (guint)p->n_cond_inputs ? p->cond_input_locs[v] : -1)
                  : (v < (guint)p->n_func_inputs ? p->func_input_locs[v] : -1);
  }
  default: {
    const DsCondParam *p = node->param;
    if (s == 0)
      return v < (guint)p->n_cond_inputs ? p->cond_input_locs[v] : -1;
    if (s == 1)
      return v < (guint)p->n_then_inputs ? p->then_input_locs[v] : -1;
    return v < (guint)p->n_else_inputs ? p->else_input_locs[v] : -1;
  }
  }
}

static const char *subgraph_role(const DsNode *node, guint s)
{
  switch (node->op->id) {
  case DS_OP_FOREACH:
    return "body";
  case DS_OP_WHILE_LOOP:
    return s == 0 ? "cond" : "func";
  default:
    return s == 0 ? "cond" : s == 1 ? "then" : "else";
  }
}

static gboolean is_control(const DsNode *node)
{
  return node->op != NULL && (node->op->traits & DS_OP_TRAIT_CONTROL_FLOW) &&
         node->n_subgraphs > 0 && node->op->id != DS_OP_CACHED_OP;
}

static guint collapsed_node(Builder *b, const char *id, const char *text, gint cluster,
                            const DsNode *node)
{
  gpointer known = g_hash_table_lookup(b->collapsed, id);
  if (known != NULL)
    return GPOINTER_TO_UINT(known) - 1;
  guint n = add_node(b, DS_VIZ_NODE_COLLAPSED, g_strdup(id), g_strdup(text), FILL_COLLAPSED,
                     cluster, node);
  g_hash_table_insert(b->collapsed, g_strdup(id), GUINT_TO_POINTER(n + 1));
  g_ptr_array_add(b->scene->collapsed, g_strdup(id));
  return n;
}

/* The box standing for a collapsed name-scope group, made with its first node. */
static guint group_box(Builder *b, const DsGraph *graph, const char *group, gint cluster)
{
  if (g_hash_table_contains(b->collapsed, group))
    return collapsed_node(b, group, NULL, cluster, NULL);
  guint inside = 0;
  for (guint i = 0; i < graph->n_nodes; i++)
    inside += b->scopes->group_of[i] != NULL && strcmp(b->scopes->group_of[i], group) == 0;
  g_autofree char *text = g_strdup_printf(_("%s\ngroup (collapsed)\n%u nodes inside"), group,
                                          inside);
  return collapsed_node(b, group, text, cluster, NULL);
}

static guint count_nodes(const DsGraph *graph)
{
  guint n = 0;
  for (guint i = 0; i < graph->n_nodes; i++) {
    n += !ds_node_is_variable(graph->nodes[i]);
    for (guint s = 0; s < graph->nodes[i]->n_subgraphs; s++)
      n += count_nodes(graph->nodes[i]->subgraphs[s]);
  }
  return n;
}

static gint *add_graph(Builder *b, DsGraph *graph, const char *path, const char *key_path,
                       gint cluster, const gint *feeds, gboolean top);

/* A loop or branch: a cluster holding its subgraphs, and the node itself where its outputs
 * leave. Returns the scene node standing for its outputs. */
static guint add_control(Builder *b, const DsNode *node, const char *path, const char *key_path,
                         gint parent, const gint *producers, DsGraph *graph, gboolean top)
{
  g_autofree char *id = g_strdup_printf("%s%s", path, node->name);
  gboolean loop = node->op->id != DS_OP_COND;
  const char *word = node->op->id == DS_OP_FOREACH ? "foreach" : loop ? "while" : "cond";
  if (g_hash_table_contains(b->collapse, id)) {
    guint inside = 0;
    for (guint s = 0; s < node->n_subgraphs; s++)
      inside += count_nodes(node->subgraphs[s]);
    g_autofree char *text =
        g_strdup_printf("%s\n%s (collapsed)\n%u nodes inside", node->name, word, inside);
    guint n = collapsed_node(b, id, text, parent, node);
    for (guint k = 0; k < node->n_inputs; k++)
      add_edge(b, producers[node->inputs[k].node_id], n,
               edge_label(b, graph, top, node->inputs[k]));
    return n;
  }
  gint c = add_cluster(b, loop ? DS_VIZ_CLUSTER_LOOP : DS_VIZ_CLUSTER_COND, id,
                       g_strdup_printf("%s  %s", word, node->name), loop ? FILL_LOOP : FILL_COND,
                       parent);
  g_autoptr(GString) label = g_string_new(NULL);
  const char *fill;
  g_autofree char *key = g_strdup_printf("%s%s", key_path, node->name);
  op_look(b, node, key, NULL, label, &fill);
  guint out = add_node(b, DS_VIZ_NODE_OP, g_strdup(id),
                       g_string_free(g_steal_pointer(&label), FALSE), fill, c, node);
  g_array_index(b->scene->nodes, DsVizNode, out).key = g_strdup(key);
  for (guint s = 0; s < node->n_subgraphs; s++) {
    DsGraph *sub = node->subgraphs[s];
    const char *role = subgraph_role(node, s);
    g_autofree char *sub_id = g_strdup_printf("%s/%s", id, role);
    gint body = add_cluster(b, DS_VIZ_CLUSTER_BODY, sub_id, g_strdup(role), FILL_BODY, c);
    /* What the node feeds each variable of the subgraph. */
    g_autofree gint *feeds = g_new(gint, sub->n_nodes + 1);
    g_autofree DsEntry *feed_entries = g_new0(DsEntry, sub->n_nodes + 1);
    guint v = 0;
    for (guint i = 0; i < sub->n_nodes; i++) {
      feeds[i] = -1;
      if (!ds_node_is_variable(sub->nodes[i]))
        continue;
      int input = feeding_input(node, s, v++);
      if (input >= 0 && (guint)input < node->n_inputs) {
        feeds[i] = producers[node->inputs[input].node_id];
        feed_entries[i] = node->inputs[input];
      }
    }
    g_autofree char *sub_path = g_strdup_printf("%s/", sub_id);
    /* Profile keys: a loop body is its iterations; conditions and branches are named. */
    gboolean named = strcmp(role, "body") != 0 && strcmp(role, "func") != 0;
    g_autofree char *sub_key =
        g_strdup_printf("%s%s/%s%s", key_path, node->name, named ? role : "", named ? "/" : "");
    g_autofree gint *inner = add_graph(b, sub, sub_path, sub_key, body, feeds, FALSE);
    for (guint i = 0; i < sub->n_nodes; i++)
      if (ds_node_is_variable(sub->nodes[i]) && feeds[i] >= 0 && inner[i] >= 0)
        add_edge(b, feeds[i], (guint)inner[i], edge_label(b, graph, top, feed_entries[i]));
    for (guint h = 0; h < sub->n_heads; h++)
      add_edge(b, inner[sub->heads[h].node_id], out, NULL);
  }
  return out;
}

/* Adds one graph level. Returns, per node, the scene node that stands for its outputs (-1:
 * not drawn). `feeds` (bodies) are what feeds each variable from outside. */
static gint *add_graph(Builder *b, DsGraph *graph, const char *path, const char *key_path,
                       gint cluster, const gint *feeds, gboolean top)
{
  gint *scene_of = g_new(gint, graph->n_nodes + 1);
  const DsPartition *partition = top ? b->o->partition : NULL;
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    scene_of[i] = -1;
    if (ds_node_is_variable(node)) {
      gboolean weight = top && b->o->is_weight != NULL && b->o->is_weight[i];
      if (weight && !b->show_weights)
        continue;
      DsVizNodeKind kind = !top     ? DS_VIZ_NODE_SUBINPUT
                           : weight ? DS_VIZ_NODE_WEIGHT
                                    : DS_VIZ_NODE_INPUT;
      const char *fill = kind == DS_VIZ_NODE_SUBINPUT ? FILL_SUBINPUT
                         : weight                     ? FILL_WEIGHT
                                                      : FILL_INPUT;
      scene_of[i] = (gint)add_node(b, kind, g_strdup_printf("%s%s", path, node->name),
                                   g_strdup(node->name), fill, cluster, node);
      continue;
    }
    gint container = cluster;
    int r = partition != NULL ? partition->region_of_node[i] : -1;
    if (r >= 0) {
      const DsRegion *region = &partition->regions[r];
      if (g_hash_table_contains(b->collapse, region->name)) {
        g_autofree char *text = g_strdup_printf(
            "%s\n%s region (collapsed)\n%u nodes", region->name,
            region->kind == DS_REGION_STATIC ? "static" : "dynamic", region->n_nodes);
        guint n = collapsed_node(b, region->name, text, cluster, NULL);
        for (guint k = 0; k < node->n_inputs; k++)
          add_edge(b, scene_of[node->inputs[k].node_id], n,
                   edge_label(b, graph, top, node->inputs[k]));
        scene_of[i] = (gint)n;
        continue;
      }
      gpointer known = g_hash_table_lookup(b->clusters, region->name);
      container = known != NULL ? (gint)GPOINTER_TO_UINT(known) - 1
                                : add_region_cluster(b, region, cluster);
    }
    const char *group = top && r < 0 && b->scopes != NULL ? b->scopes->group_of[i] : NULL;
    if (group != NULL) {
      if (!g_hash_table_contains(b->expand, group)) {
        scene_of[i] = (gint)group_box(b, graph, group, cluster);
        g_hash_table_insert(b->scene->hidden_in, g_strdup(node->name), g_strdup(group));
        for (guint k = 0; k < node->n_inputs; k++)
          add_edge(b, scene_of[node->inputs[k].node_id], (guint)scene_of[i],
                   edge_label(b, graph, top, node->inputs[k]));
        continue;
      }
      gpointer known = g_hash_table_lookup(b->clusters, group);
      container = known != NULL ? (gint)GPOINTER_TO_UINT(known) - 1
                                : add_cluster(b, DS_VIZ_CLUSTER_GROUP, group, g_strdup(group),
                                              FILL_GROUP, cluster);
    }
    if (is_control(node)) {
      scene_of[i] = (gint)add_control(b, node, path, key_path, container, scene_of, graph, top);
      continue;
    }
    g_autoptr(GString) label = g_string_new(NULL);
    const char *fill;
    g_autofree char *key = g_strdup_printf("%s%s", key_path, node->name);
    op_look(b, node, key, group, label, &fill);
    if (top && b->o->fold_weights)
      append_weights(b, graph, node, label);
    if (top && b->o->n_forward_nodes > 0 && i >= b->o->n_forward_nodes &&
        strcmp(fill, FILL_OP) == 0) { /* an overlay's colour says more */
      fill = FILL_GRADIENT;
      b->any_gradient = TRUE;
    }
    scene_of[i] =
        (gint)add_node(b, DS_VIZ_NODE_OP, g_strdup_printf("%s%s", path, node->name),
                       g_string_free(g_steal_pointer(&label), FALSE), fill, container, node);
    g_array_index(b->scene->nodes, DsVizNode, scene_of[i]).key = g_strdup(key);
    for (guint k = 0; k < node->n_inputs; k++)
      add_edge(b, scene_of[node->inputs[k].node_id], (guint)scene_of[i],
               edge_label(b, graph, top, node->inputs[k]));
  }
  return scene_of;
}

/* ---- what to collapse ---- */

typedef struct {
  char *id;
  guint size;
} Collapsible;

static int by_size_desc(const void *a, const void *b)
{
  const Collapsible *x = a, *y = b;
  if (x->size != y->size)
    return x->size < y->size ? 1 : -1;
  return strcmp(x->id, y->id);
}

/* Every region and control-flow node with the graph nodes it holds. */
static void list_collapsible(DsGraph *graph, const DsPartition *partition, const char *path,
                             GArray *out)
{
  for (guint r = 0; partition != NULL && r < partition->n_regions; r++) {
    guint size = 0;
    for (guint j = 0; j < partition->regions[r].n_nodes; j++) {
      const DsNode *node = graph->nodes[partition->regions[r].nodes[j]];
      size++;
      for (guint s = 0; s < node->n_subgraphs; s++)
        size += count_nodes(node->subgraphs[s]);
    }
    Collapsible c = {g_strdup(partition->regions[r].name), size};
    g_array_append_val(out, c);
  }
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    if (!is_control(node))
      continue;
    Collapsible c = {g_strdup_printf("%s%s", path, node->name), 1};
    for (guint s = 0; s < node->n_subgraphs; s++)
      c.size += count_nodes(node->subgraphs[s]);
    g_array_append_val(out, c);
    for (guint s = 0; s < node->n_subgraphs; s++) {
      g_autofree char *sub = g_strdup_printf("%s/%s/", c.id, subgraph_role(node, s));
      list_collapsible(node->subgraphs[s], NULL, sub, out);
    }
  }
}

static gboolean choose_collapsed(Builder *b, DsGraph *graph, GError **error)
{
  g_autoptr(GArray) all = g_array_new(FALSE, FALSE, sizeof(Collapsible));
  list_collapsible(graph, b->o->partition, "", all);
  gboolean ok = TRUE;
  for (const char *const *name = b->o->collapse; name != NULL && *name != NULL; name++) {
    gboolean found = FALSE;
    for (guint i = 0; i < all->len && !found; i++)
      found = strcmp(g_array_index(all, Collapsible, i).id, *name) == 0;
    if (!found && ok) {
      g_autoptr(GString) known = g_string_new(NULL);
      for (guint i = 0; i < all->len; i++)
        g_string_append_printf(known, "%s%s", i > 0 ? ", " : "",
                               g_array_index(all, Collapsible, i).id);
      g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                  "--collapse %s: no region or loop is called so (there are: %s)", *name,
                  known->len > 0 ? known->str : "none");
      ok = FALSE;
    }
    g_hash_table_add(b->collapse, g_strdup(*name));
  }
  if (ok && b->o->focus != NULL) {
    /* One region or loop laid out alone: every other one is a box around it. */
    gboolean found = FALSE;
    g_autofree char *outer = g_strndup(b->o->focus, strcspn(b->o->focus, "/"));
    for (guint i = 0; i < all->len; i++) {
      const char *id = g_array_index(all, Collapsible, i).id;
      found |= strcmp(id, b->o->focus) == 0;
      if (strchr(id, '/') == NULL && strcmp(id, outer) != 0)
        g_hash_table_add(b->collapse, g_strdup(id));
    }
    if (!found) {
      g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "focus %s: no region or loop is called so",
                  b->o->focus);
      ok = FALSE;
    }
  } else if (ok && !b->o->collapse_none) {
    guint drawn = count_nodes(graph);
    g_autoptr(GHashTable) expand = g_hash_table_new(g_str_hash, g_str_equal);
    for (const char *const *e = b->o->expand; e != NULL && *e != NULL; e++)
      g_hash_table_add(expand, (gpointer)*e);
    if (all->len > 0)
      qsort(all->data, all->len, sizeof(Collapsible), by_size_desc);
    for (guint i = 0; i < all->len; i++) {
      Collapsible *c = &g_array_index(all, Collapsible, i);
      if (g_hash_table_contains(expand, c->id))
        continue;
      if (b->o->collapse_all) {
        /* Only the outermost: what is inside a collapsed box is not drawn anyway. */
        if (strchr(c->id, '/') == NULL)
          g_hash_table_add(b->collapse, g_strdup(c->id));
      } else if (drawn > DS_VIZ_AUTO_COLLAPSE_NODES && strchr(c->id, '/') == NULL &&
                 !g_hash_table_contains(b->collapse, c->id)) {
        g_hash_table_add(b->collapse, g_strdup(c->id));
        drawn -= c->size - 1;
      }
    }
  }
  for (guint i = 0; i < all->len; i++)
    g_free(g_array_index(all, Collapsible, i).id);
  return ok;
}

/* ---- legend ---- */

static void add_legend(DsVizScene *scene, const char *fill, char *text)
{
  DsVizLegendEntry e = {g_strdup(fill), text};
  g_array_append_val(scene->legend, e);
}

static void build_legend(Builder *b)
{
  /* In the user's language: the window draws these entries as they are. */
  DsVizScene *scene = b->scene;
  switch (b->o->overlay) {
  case DS_VIZ_OVERLAY_TIME:
    for (guint i = 0; i < G_N_ELEMENTS(heat); i++) {
      g_autofree char *lo = ds_viz_format_ns(b->max_ns * i / G_N_ELEMENTS(heat));
      g_autofree char *hi = ds_viz_format_ns(b->max_ns * (i + 1) / G_N_ELEMENTS(heat));
      add_legend(scene, heat[i], g_strdup_printf(_("total time %s - %s"), lo, hi));
    }
    add_legend(scene, FILL_NO_DATA, g_strdup(_("did not run")));
    break;
  case DS_VIZ_OVERLAY_MEMORY:
    add_legend(scene, reuse[0], g_strdup(_("outputs mostly in fresh memory (< 20% reused)")));
    add_legend(scene, reuse[1], g_strdup(_("20-50% reused")));
    add_legend(scene, reuse[3], g_strdup(_("50-80% reused")));
    add_legend(scene, reuse[4], g_strdup(_("outputs mostly in reused memory (>= 80%)")));
    add_legend(scene, reuse[2], g_strdup(_("no new buffer (a view)")));
    break;
  case DS_VIZ_OVERLAY_DYNAMIC:
    add_legend(scene, FILL_DATA_DEPENDENT,
               g_strdup(_("data-dependent op, with the output shapes it produced")));
    break;
  default:
    break;
  }
  gboolean kinds[DS_VIZ_NODE_COLLAPSED + 1] = {FALSE};
  gboolean regions[DS_VIZ_CLUSTER_DEVICE + 1] = {FALSE};
  for (guint i = 0; i < scene->nodes->len; i++)
    kinds[g_array_index(scene->nodes, DsVizNode, i).kind] = TRUE;
  for (guint i = 0; i < scene->clusters->len; i++) {
    DsVizClusterKind k = g_array_index(scene->clusters, DsVizCluster, i).kind;
    if (k <= DS_VIZ_CLUSTER_DEVICE)
      regions[k] = TRUE;
  }
  if (regions[DS_VIZ_CLUSTER_STATIC])
    add_legend(scene, FILL_STATIC, g_strdup(_("static region (one cached plan)")));
  if (regions[DS_VIZ_CLUSTER_DYNAMIC])
    add_legend(scene, FILL_DYNAMIC, g_strdup(_("dynamic region (run imperatively)")));
  if (regions[DS_VIZ_CLUSTER_DEVICE])
    add_legend(scene, FILL_DEVICE, g_strdup(_("region placed on the device (copies at its edges)")));
  if (kinds[DS_VIZ_NODE_INPUT])
    add_legend(scene, FILL_INPUT, g_strdup(_("model input")));
  if (kinds[DS_VIZ_NODE_WEIGHT])
    add_legend(scene, FILL_WEIGHT, g_strdup(_("weight")));
  if (kinds[DS_VIZ_NODE_SUBINPUT])
    add_legend(scene, FILL_SUBINPUT, g_strdup(_("what a loop or branch feeds its subgraph")));
  if (kinds[DS_VIZ_NODE_COLLAPSED])
    add_legend(scene, FILL_COLLAPSED, g_strdup(_("collapsed region, loop or group")));
  if (b->any_gradient)
    add_legend(scene, FILL_GRADIENT, g_strdup(_("gradient (the backward pass)")));
}

/* ---- the scene ---- */

void ds_viz_scene_free(DsVizScene *scene)
{
  if (scene == NULL)
    return;
  for (guint i = 0; scene->nodes != NULL && i < scene->nodes->len; i++) {
    DsVizNode *n = &g_array_index(scene->nodes, DsVizNode, i);
    g_free(n->id);
    g_free(n->label);
    g_free(n->fill);
    g_free(n->tooltip);
    g_free(n->key);
  }
  for (guint i = 0; scene->edges != NULL && i < scene->edges->len; i++)
    g_free(g_array_index(scene->edges, DsVizEdge, i).label);
  for (guint i = 0; scene->clusters != NULL && i < scene->clusters->len; i++) {
    DsVizCluster *c = &g_array_index(scene->clusters, DsVizCluster, i);
    g_free(c->id);
    g_free(c->label);
    g_free(c->fill);
  }
  for (guint i = 0; scene->legend != NULL && i < scene->legend->len; i++) {
    g_free(g_array_index(scene->legend, DsVizLegendEntry, i).fill);
    g_free(g_array_index(scene->legend, DsVizLegendEntry, i).text);
  }
  if (scene->nodes != NULL)
    g_array_unref(scene->nodes);
  if (scene->edges != NULL)
    g_array_unref(scene->edges);
  if (scene->clusters != NULL)
    g_array_unref(scene->clusters);
  if (scene->legend != NULL)
    g_array_unref(scene->legend);
  if (scene->collapsed != NULL)
    g_ptr_array_unref(scene->collapsed);
  if (scene->hidden_in != NULL)
    g_hash_table_unref(scene->hidden_in);
  g_free(scene->title);
  g_free(scene);
}

gint ds_viz_scene_find_cluster(const DsVizScene *scene, const char *id)
{
  for (guint i = 0; i < scene->clusters->len; i++)
    if (strcmp(g_array_index(scene->clusters, DsVizCluster, i).id, id) == 0)
      return (gint)i;
  return -1;
}

DsVizScene *ds_viz_scene_build(DsGraph *graph, const DsVizOptions *o, GError **error)
{
  g_autoptr(DsVizScene) scene = g_new0(DsVizScene, 1);
  scene->title = g_strdup(o->title != NULL ? o->title : "");
  scene->nodes = g_array_new(FALSE, FALSE, sizeof(DsVizNode));
  scene->edges = g_array_new(FALSE, FALSE, sizeof(DsVizEdge));
  scene->clusters = g_array_new(FALSE, FALSE, sizeof(DsVizCluster));
  scene->legend = g_array_new(FALSE, FALSE, sizeof(DsVizLegendEntry));
  scene->collapsed = g_ptr_array_new_with_free_func(g_free);
  scene->hidden_in = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  Builder b = {
      .scene = scene,
      .o = o,
      .collapse = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
      .collapsed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
      .clusters = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
      .profile = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, node_profile_free),
      .edge_seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
      .expand = g_hash_table_new(g_str_hash, g_str_equal),
      .scopes = o->group_scopes && o->partition == NULL && o->focus == NULL
                    ? ds_viz_scopes_find(graph)
                    : NULL,
  };
  for (const char *const *e = o->expand; e != NULL && *e != NULL; e++)
    g_hash_table_add(b.expand, (gpointer)*e);
  guint n_ops = count_nodes(graph);
  b.show_weights = !o->fold_weights && (o->show_weights >= 0 ? o->show_weights != 0 : n_ops <= 200);
  gboolean ok = TRUE;
  if (o->overlay != DS_VIZ_OVERLAY_NONE && o->report == NULL) {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                "--overlay needs a profile: give --report FILE.json");
    ok = FALSE;
  }
  if (ok && o->report != NULL)
    index_profile(o->report, b.profile);
  if (ok) {
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, b.profile);
    while (g_hash_table_iter_next(&iter, NULL, &value))
      b.max_ns = MAX(b.max_ns, ((DsVizNodeProfile *)value)->total_ns);
  }
  ok = ok && choose_collapsed(&b, graph, error);
  if (ok) {
    g_autofree gint *top = add_graph(&b, graph, "", "", -1, NULL, TRUE);
    build_legend(&b);
  }
  g_hash_table_unref(b.collapse);
  g_hash_table_unref(b.collapsed);
  g_hash_table_unref(b.clusters);
  g_hash_table_unref(b.profile);
  g_hash_table_unref(b.edge_seen);
  g_hash_table_unref(b.expand);
  ds_viz_scopes_free(b.scopes);
  return ok ? g_steal_pointer(&scene) : NULL;
}
