/* test-viz.c: what a graph picture shows and where. Node, edge and cluster counts against the
 * IR and the partition; edge labels with symbolic and bound shapes; control-flow bodies as
 * nested clusters and collapsing; overlay colours following a profile; the geometry (boxes in
 * bounds, clusters around their nodes, edges from node to node) and its stability. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "ds-backend.h"
#include "ds-error.h"
#include "ds-mxnet-json.h"
#include "ds-session.h"
#include "ds-viz-layout.h"
#include "ds-viz-scopes.h"

static char *data_path(const char *dir, const char *name)
{
  const char *src = g_getenv("DS_SOURCE_DIR");
  return g_build_filename(src != NULL ? src : "..", "data", dir, name, NULL);
}

static DsSession *open_model(const char *dir, const char *name, const char *shape_of,
                             const char *shape)
{
  g_autofree char *path = data_path(dir, name);
  GError *error = NULL;
  DsSession *session = ds_session_new(path, &error);
  g_assert_no_error(error);
  if (shape_of != NULL) {
    DsShape s;
    g_assert_true(ds_session_parse_shape(session, shape, &s, &error));
    g_assert_true(ds_session_declare_shape(session, shape_of, &s, &error));
  }
  return session;
}

static gboolean *weights_of(DsSession *session)
{
  DsGraph *graph = ds_session_get_graph(session);
  gboolean *w = g_new0(gboolean, graph->n_nodes + 1);
  for (guint i = 0; i < graph->n_nodes; i++)
    w[i] = ds_node_is_variable(graph->nodes[i]) &&
           ds_session_classify_variable(session, graph->nodes[i]) != DS_VARIABLE_DATA;
  return w;
}

static const DsVizNode *find_node(const DsVizScene *scene, const char *id)
{
  for (guint i = 0; i < scene->nodes->len; i++)
    if (strcmp(g_array_index(scene->nodes, DsVizNode, i).id, id) == 0)
      return &g_array_index(scene->nodes, DsVizNode, i);
  return NULL;
}

static guint node_index(const DsVizScene *scene, const char *id)
{
  const DsVizNode *n = find_node(scene, id);
  g_assert_nonnull(n);
  return (guint)(n - &g_array_index(scene->nodes, DsVizNode, 0));
}

static const DsVizEdge *find_edge(const DsVizScene *scene, const char *from, const char *to)
{
  guint a = node_index(scene, from), b = node_index(scene, to);
  for (guint i = 0; i < scene->edges->len; i++) {
    const DsVizEdge *e = &g_array_index(scene->edges, DsVizEdge, i);
    if (e->from == a && e->to == b)
      return e;
  }
  return NULL;
}

/* Distinct (producer, consumer) pairs among drawn nodes. */
static guint distinct_edges(const DsGraph *graph, const gboolean *hidden)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < graph->n_nodes; i++)
    for (guint k = 0; k < graph->nodes[i]->n_inputs; k++) {
      guint from = graph->nodes[i]->inputs[k].node_id;
      if (hidden == NULL || !hidden[from])
        g_hash_table_add(seen, g_strdup_printf("%u>%u", from, i));
    }
  return g_hash_table_size(seen);
}

static gboolean is_control_node(const DsNode *node)
{
  return node->n_subgraphs > 0 &&
         (strcmp(node->op_name, "_foreach") == 0 || strcmp(node->op_name, "_while_loop") == 0 ||
          strcmp(node->op_name, "_cond") == 0);
}

/* Clusters a graph's control flow gives: one per control node and one per subgraph, nested. */
static guint control_clusters(const DsGraph *graph)
{
  guint n = 0;
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    if (!is_control_node(node))
      continue;
    n += 1 + node->n_subgraphs;
    for (guint s = 0; s < node->n_subgraphs; s++)
      n += control_clusters(node->subgraphs[s]);
  }
  return n;
}

/* Every node of every level: what is drawn when nothing is hidden or collapsed. */
static guint all_nodes(const DsGraph *graph)
{
  guint n = graph->n_nodes;
  for (guint i = 0; i < graph->n_nodes; i++)
    for (guint s = 0; s < graph->nodes[i]->n_subgraphs; s++)
      n += all_nodes(graph->nodes[i]->subgraphs[s]);
  return n;
}

/* Loop and cond clusters read "<word>  <name>"; each body's parent is its control node's
 * cluster and its id is "<control id>/<role>". */
static void check_control_clusters(const DsVizScene *scene)
{
  for (guint i = 0; i < scene->clusters->len; i++) {
    const DsVizCluster *c = &g_array_index(scene->clusters, DsVizCluster, i);
    if (c->kind == DS_VIZ_CLUSTER_BODY) {
      g_assert_cmpint(c->parent, >=, 0);
      const DsVizCluster *p = &g_array_index(scene->clusters, DsVizCluster, c->parent);
      g_assert_true(p->kind == DS_VIZ_CLUSTER_LOOP || p->kind == DS_VIZ_CLUSTER_COND);
      g_autofree char *prefix = g_strconcat(p->id, "/", NULL);
      g_assert_true(g_str_has_prefix(c->id, prefix));
      g_assert_cmpstr(c->label, ==, c->id + strlen(prefix));
    } else if (c->kind == DS_VIZ_CLUSTER_LOOP || c->kind == DS_VIZ_CLUSTER_COND) {
      const DsVizNode *out = find_node(scene, c->id);
      g_assert_nonnull(out);
      g_assert_cmpint(out->cluster, ==, (gint)i);
      const char *word = strcmp(out->node->op_name, "_foreach") == 0      ? "foreach"
                         : strcmp(out->node->op_name, "_while_loop") == 0 ? "while"
                                                                          : "cond";
      g_assert_true((c->kind == DS_VIZ_CLUSTER_COND) == (strcmp(word, "cond") == 0));
      g_autofree char *label = g_strdup_printf("%s  %s", word, out->node->name);
      g_assert_cmpstr(c->label, ==, label);
      if (c->parent >= 0)
        g_assert_cmpint(g_array_index(scene->clusters, DsVizCluster, c->parent).kind, ==,
                        DS_VIZ_CLUSTER_BODY);
    }
  }
}

/* ---- counts and labels ---- */

static void test_partition_counts(void)
{
  g_autoptr(DsSession) session =
      open_model("dynamic", "boolean-mask-symbol.json", "data", "(s0, 8)");
  GError *error = NULL;
  const DsGraphShapes *symbolic = ds_session_infer_symbolic(session, &error);
  g_assert_no_error(error);
  DsGraph *graph = ds_session_get_graph(session);
  g_autoptr(DsPartition) partition =
      ds_partition_label(graph, ds_subgraph_property_find("static-dynamic"), &error);
  g_assert_no_error(error);
  g_autofree gboolean *weights = weights_of(session);
  DsVizOptions o = {
      .partition = partition, .symbolic = symbolic, .is_weight = weights, .show_weights = 1};
  g_autoptr(DsVizScene) scene = ds_viz_scene_build(graph, &o, &error);
  g_assert_no_error(error);
  guint n_ops = 0, n_variables = 0;
  for (guint i = 0; i < graph->n_nodes; i++) {
    n_variables += ds_node_is_variable(graph->nodes[i]);
    n_ops += !ds_node_is_variable(graph->nodes[i]);
  }
  g_assert_cmpuint(n_ops, ==, 9);
  g_assert_cmpuint(scene->nodes->len, ==, n_ops + n_variables);
  g_assert_cmpuint(partition->n_regions, >=, 2);
  g_assert_cmpuint(scene->clusters->len, ==, partition->n_regions);
  for (guint r = 0; r < partition->n_regions; r++) {
    gint c = ds_viz_scene_find_cluster(scene, partition->regions[r].name);
    g_assert_cmpint(c, >=, 0);
    const DsVizCluster *cl = &g_array_index(scene->clusters, DsVizCluster, c);
    g_assert_cmpint(cl->kind, ==,
                    partition->regions[r].kind == DS_REGION_STATIC ? DS_VIZ_CLUSTER_STATIC
                                                                   : DS_VIZ_CLUSTER_DYNAMIC);
    g_assert_cmpint(cl->parent, ==, -1);
    g_assert_cmpuint(cl->n_nodes, ==, partition->regions[r].n_nodes);
  }
  g_assert_cmpuint(scene->edges->len, ==, distinct_edges(graph, NULL));
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsVizNode *n = find_node(scene, graph->nodes[i]->name);
    g_assert_nonnull(n);
    int r = partition->region_of_node[i];
    if (r < 0) {
      g_assert_cmpint(n->cluster, ==, -1);
    } else {
      const DsVizCluster *c = &g_array_index(scene->clusters, DsVizCluster, n->cluster);
      g_assert_cmpstr(c->id, ==, partition->regions[r].name);
    }
    g_assert_true(n->label != NULL && n->label[0] != '\0');
  }
  /* Shapes on edges: symbolic, then with a binding also concrete. */
  g_assert_cmpstr(find_edge(scene, "data", "fc0")->label, ==, "(s0, 8)");
  g_assert_cmpstr(find_edge(scene, "boolean_mask0", "fc1")->label, ==, "(u0, 16)");
  g_assert_true(ds_session_bind_symbol(session, "s0", 6, &error));
  g_autoptr(DsGraphShapes) concrete = ds_session_evaluate(session, symbolic, TRUE, &error);
  g_assert_no_error(error);
  o.concrete = concrete;
  g_autoptr(DsVizScene) bound = ds_viz_scene_build(graph, &o, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(find_edge(bound, "data", "fc0")->label, ==, "(s0, 8) = (6, 8)");
  g_assert_cmpstr(find_edge(bound, "boolean_mask0", "fc1")->label, ==, "(u0, 16)");

  /* Weights hidden: gone, and no edge touches them. */
  o.show_weights = 0;
  g_autoptr(DsVizScene) lean = ds_viz_scene_build(graph, &o, &error);
  g_assert_no_error(error);
  guint n_weights = 0;
  for (guint i = 0; i < graph->n_nodes; i++) {
    n_weights += weights[i];
    if (weights[i])
      g_assert_null(find_node(lean, graph->nodes[i]->name));
  }
  g_assert_cmpuint(n_weights, ==, 4);
  g_assert_cmpuint(lean->nodes->len, ==, graph->n_nodes - n_weights);
  g_assert_cmpuint(lean->edges->len, ==, distinct_edges(graph, weights));
  for (guint i = 0; i < lean->edges->len; i++) {
    const DsVizEdge *e = &g_array_index(lean->edges, DsVizEdge, i);
    g_assert_cmpint(g_array_index(lean->nodes, DsVizNode, e->from).kind, !=, DS_VIZ_NODE_WEIGHT);
    g_assert_cmpint(g_array_index(lean->nodes, DsVizNode, e->to).kind, !=, DS_VIZ_NODE_WEIGHT);
  }
  /* Shown, they are drawn as weights; the data input as an input. */
  g_assert_cmpint(find_node(scene, "fc0_weight")->kind, ==, DS_VIZ_NODE_WEIGHT);
  g_assert_cmpint(find_node(scene, "data")->kind, ==, DS_VIZ_NODE_INPUT);
}

/* A device that runs FullyConnected only: enough to place regions (nothing runs here). */
static const DsKernel *fc_only_kernel(DsOpId op)
{
  return op == DS_OP_FULLY_CONNECTED ? ds_backend_find("cpu")->get_kernel(op) : NULL;
}

static void test_placement_clusters(void)
{
  g_autoptr(DsSession) session =
      open_model("dynamic", "boolean-mask-symbol.json", "data", "(s0, 8)");
  GError *error = NULL;
  const DsGraphShapes *symbolic = ds_session_infer_symbolic(session, &error);
  g_assert_no_error(error);
  DsGraph *graph = ds_session_get_graph(session);
  DsBackend fake = *ds_backend_find("cpu");
  fake.name = "fakedev";
  fake.memory = DS_MEMORY_DEVICE;
  fake.get_kernel = fc_only_kernel;
  g_autoptr(DsPartition) placement = ds_partition_label_placement(graph, symbolic, &fake, &error);
  g_assert_no_error(error);
  DsVizOptions o = {.partition = placement, .symbolic = symbolic};
  g_autoptr(DsVizScene) scene = ds_viz_scene_build(graph, &o, &error);
  g_assert_no_error(error);
  guint device_clusters = 0;
  for (guint r = 0; r < placement->n_regions; r++) {
    const DsRegion *region = &placement->regions[r];
    const DsVizCluster *cl = &g_array_index(scene->clusters, DsVizCluster,
                                            ds_viz_scene_find_cluster(scene, region->name));
    if (region->backend == NULL) {
      g_assert_cmpint(cl->kind, !=, DS_VIZ_CLUSTER_DEVICE);
      continue;
    }
    device_clusters++;
    g_assert_cmpint(cl->kind, ==, DS_VIZ_CLUSTER_DEVICE);
    g_assert_true(g_str_has_prefix(cl->label, "fakedev"));
    g_assert_true(g_str_has_suffix(cl->label, ", on fakedev)"));
    for (guint k = 0; k < region->n_nodes; k++)
      g_assert_cmpstr(graph->nodes[region->nodes[k]]->op_name, ==, "FullyConnected");
  }
  g_assert_cmpuint(device_clusters, >=, 1);
  gboolean legend = FALSE;
  for (guint i = 0; i < scene->legend->len; i++)
    legend |= strstr(g_array_index(scene->legend, DsVizLegendEntry, i).text,
                     "placed on the device") != NULL;
  g_assert_true(legend);
  g_autoptr(DsVizLayout) layout = ds_viz_layout(scene, &error);
  g_assert_no_error(error);
}

static const char nested_json[] =
    "{\"nodes\": ["
    " {\"op\": \"null\", \"name\": \"data\", \"attrs\": {\"__shape__\": \"(2, 3, 2)\"}, "
    "\"inputs\": []},"
    " {\"op\": \"null\", \"name\": \"s0\", \"attrs\": {\"__shape__\": \"(2,)\"}, \"inputs\": []},"
    " {\"op\": \"_foreach\", \"name\": \"outer0\", \"attrs\": {\"in_data_locs\": \"[0]\", "
    "\"in_state_locs\": \"[1]\", \"num_args\": \"3\", \"num_out_data\": \"1\", "
    "\"num_outputs\": \"2\", \"remain_locs\": \"[]\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]],"
    "  \"subgraphs\": [{\"nodes\": ["
    "   {\"op\": \"null\", \"name\": \"row\", \"inputs\": []},"
    "   {\"op\": \"null\", \"name\": \"s\", \"inputs\": []},"
    "   {\"op\": \"_foreach\", \"name\": \"inner0\", \"attrs\": {\"in_data_locs\": \"[0]\", "
    "\"in_state_locs\": \"[1]\", \"num_args\": \"3\", \"num_out_data\": \"1\", "
    "\"num_outputs\": \"2\", \"remain_locs\": \"[]\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]],"
    "    \"subgraphs\": [{\"nodes\": ["
    "     {\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
    "     {\"op\": \"null\", \"name\": \"s\", \"inputs\": []},"
    "     {\"op\": \"elemwise_add\", \"name\": \"add0\", \"inputs\": [[0, 0, 0], [1, 0, 0]]},"
    "     {\"op\": \"_copy\", \"name\": \"copy0\", \"inputs\": [[2, 0, 0]]}],"
    "     \"arg_nodes\": [0, 1], \"heads\": [[2, 0, 0], [3, 0, 0]]}]}],"
    "   \"arg_nodes\": [0, 1], \"heads\": [[2, 0, 0], [2, 1, 0]]}]}],"
    " \"arg_nodes\": [0, 1], \"heads\": [[2, 0, 0], [2, 1, 0]]}";

static DsGraph *load_nested(void)
{
  GError *error = NULL;
  DsGraph *graph = ds_mxnet_json_load_data(nested_json, strlen(nested_json), "nested.json", &error);
  g_assert_no_error(error);
  return graph;
}

static void test_control_flow_clusters(void)
{
  GError *error = NULL;
  g_autoptr(DsGraph) nested = load_nested();
  DsVizOptions o = {.show_weights = 1};
  g_autoptr(DsVizScene) scene = ds_viz_scene_build(nested, &o, &error);
  g_assert_no_error(error);
  /* outer0, its body, inner0, its body. */
  g_assert_cmpuint(control_clusters(nested), ==, 4);
  g_assert_cmpuint(scene->clusters->len, ==, control_clusters(nested));
  g_assert_cmpuint(scene->nodes->len, ==, all_nodes(nested));
  check_control_clusters(scene);
  gint outer = ds_viz_scene_find_cluster(scene, "outer0");
  gint outer_body = ds_viz_scene_find_cluster(scene, "outer0/body");
  gint inner = ds_viz_scene_find_cluster(scene, "outer0/body/inner0");
  gint inner_body = ds_viz_scene_find_cluster(scene, "outer0/body/inner0/body");
  g_assert_cmpint(outer, >=, 0);
  g_assert_cmpint(g_array_index(scene->clusters, DsVizCluster, outer_body).parent, ==, outer);
  g_assert_cmpint(g_array_index(scene->clusters, DsVizCluster, inner).parent, ==, outer_body);
  g_assert_cmpint(g_array_index(scene->clusters, DsVizCluster, inner_body).parent, ==, inner);
  g_assert_cmpstr(g_array_index(scene->clusters, DsVizCluster, outer).label, ==, "foreach  outer0");
  g_assert_cmpint(g_array_index(scene->clusters, DsVizCluster, inner_body).n_nodes, ==, 4);
  const DsVizNode *add = find_node(scene, "outer0/body/inner0/body/add0");
  g_assert_nonnull(add);
  g_assert_cmpint(add->cluster, ==, inner_body);
  /* What the loops feed their bodies, and where their outputs leave. */
  g_assert_nonnull(find_edge(scene, "data", "outer0/body/row"));
  g_assert_nonnull(find_edge(scene, "outer0/body/row", "outer0/body/inner0/body/x"));
  g_assert_nonnull(find_edge(scene, "outer0/body/inner0/body/add0", "outer0/body/inner0"));

  /* Collapsing the inner loop: one box, no clusters for it. */
  const char *inner_only[] = {"outer0/body/inner0", NULL};
  o.collapse = inner_only;
  g_autoptr(DsVizScene) folded = ds_viz_scene_build(nested, &o, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(folded->clusters->len, ==, 2);
  const DsVizNode *box = find_node(folded, "outer0/body/inner0");
  g_assert_nonnull(box);
  g_assert_cmpint(box->kind, ==, DS_VIZ_NODE_COLLAPSED);
  g_assert_null(find_node(folded, "outer0/body/inner0/body/add0"));
  g_assert_cmpuint(folded->collapsed->len, ==, 1);
  g_assert_cmpint(ds_viz_scene_find_cluster(folded, "outer0/body/inner0"), ==, -1);
  g_assert_cmpint(ds_viz_scene_find_cluster(folded, "outer0/body/inner0/body"), ==, -1);
  guint n_collapsed = 0;
  for (guint i = 0; i < folded->nodes->len; i++)
    n_collapsed += g_array_index(folded->nodes, DsVizNode, i).kind == DS_VIZ_NODE_COLLAPSED;
  g_assert_cmpuint(n_collapsed, ==, 1);
  /* The box sits where the loop was, fed by what fed the loop. */
  g_assert_cmpint(box->cluster, ==, ds_viz_scene_find_cluster(folded, "outer0/body"));
  g_assert_nonnull(find_edge(folded, "outer0/body/row", "outer0/body/inner0"));
  /* Collapsing the outer loop hides the inner one with it. */
  const char *outer_only[] = {"outer0", NULL};
  o.collapse = outer_only;
  g_autoptr(DsVizScene) outer_folded = ds_viz_scene_build(nested, &o, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(outer_folded->clusters->len, ==, 0);
  g_assert_cmpint(find_node(outer_folded, "outer0")->kind, ==, DS_VIZ_NODE_COLLAPSED);
  g_assert_nonnull(find_edge(outer_folded, "data", "outer0"));
  o.collapse = NULL;
  o.collapse_all = TRUE;
  g_autoptr(DsVizScene) all = ds_viz_scene_build(nested, &o, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(all->clusters->len, ==, 0);
  g_assert_cmpint(find_node(all, "outer0")->kind, ==, DS_VIZ_NODE_COLLAPSED);
  g_assert_cmpuint(all->nodes->len, ==, 3); /* data, s0, outer0 */

  /* An id that names nothing is refused, with the ids there are. */
  const char *bogus[] = {"nope", NULL};
  DsVizOptions bad = {.collapse = bogus};
  g_assert_null(ds_viz_scene_build(nested, &bad, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_INPUT);
  g_assert_nonnull(strstr(error->message, "nope"));
  g_assert_nonnull(strstr(error->message, "outer0, "));
  g_assert_nonnull(strstr(error->message, "outer0/body/inner0"));
  g_clear_error(&error);

  /* The samples: a while loop's two subgraphs, a cond inside a foreach. */
  g_autoptr(DsSession) decoder = open_model("control", "greedy-decoder-symbol.json", NULL, NULL);
  g_autoptr(DsVizScene) ds =
      ds_viz_scene_build(ds_session_get_graph(decoder), &(DsVizOptions){0}, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(ds->clusters->len, ==, 3);
  g_assert_cmpuint(ds->clusters->len, ==, control_clusters(ds_session_get_graph(decoder)));
  g_assert_cmpuint(ds->nodes->len, ==, all_nodes(ds_session_get_graph(decoder)));
  check_control_clusters(ds);
  g_assert_cmpstr(g_array_index(ds->clusters, DsVizCluster, 0).label, ==, "while  decoder0");
  g_assert_cmpint(ds_viz_scene_find_cluster(ds, "decoder0/cond"), >=, 0);
  g_assert_cmpint(ds_viz_scene_find_cluster(ds, "decoder0/func"), >=, 0);
  g_autoptr(DsSession) cil = open_model("control", "cond-in-loop-symbol.json", NULL, NULL);
  g_autoptr(DsVizScene) cs =
      ds_viz_scene_build(ds_session_get_graph(cil), &(DsVizOptions){0}, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(cs->clusters->len, ==, 6); /* loop, body, cond node, cond, then, else */
  g_assert_cmpuint(cs->clusters->len, ==, control_clusters(ds_session_get_graph(cil)));
  g_assert_cmpuint(cs->nodes->len, ==, all_nodes(ds_session_get_graph(cil)));
  check_control_clusters(cs);
  g_assert_cmpstr(g_array_index(cs->clusters, DsVizCluster, 0).label, ==, "foreach  loop0");

  gint choose = ds_viz_scene_find_cluster(cs, "loop0/body/choose0");
  g_assert_cmpint(g_array_index(cs->clusters, DsVizCluster, choose).parent, ==,
                  ds_viz_scene_find_cluster(cs, "loop0/body"));
  g_assert_cmpstr(g_array_index(cs->clusters, DsVizCluster, choose).label, ==, "cond  choose0");
  g_assert_cmpint(ds_viz_scene_find_cluster(cs, "loop0/body/choose0/then"), >=, 0);
  g_assert_cmpint(ds_viz_scene_find_cluster(cs, "loop0/body/choose0/else"), >=, 0);
}

/* ---- overlays ---- */

/* The one output shape of an event, (rows, 16). */
typedef struct {
  gint64 dims[2];
  DsReportShape shape;
  DsReportShapes shapes;
} EventShapes;

/* An event with what the overlays read; its shapes live in `s`. */
static DsReportEvent event(const char *key, gint64 ns, gint64 fresh, gint64 reused, int rows,
                           EventShapes *s)
{
  s->dims[0] = rows;
  s->dims[1] = 16;
  s->shape = (DsReportShape){.n_dims = 2, .dims = s->dims};
  s->shapes = (DsReportShapes){.n_shapes = 1, .shapes = &s->shape};
  return (DsReportEvent){.key = key,
                         .op = "?",
                         .iteration = -1,
                         .dur_ns = ns,
                         .gpu_ns = DS_REPORT_NONE,
                         .gpu_kernels = DS_REPORT_NONE,
                         .gpu_copy_bytes = DS_REPORT_NONE,
                         .output_shapes = &s->shapes,
                         .fresh_bytes = fresh,
                         .reused_bytes = reused};
}

static const DsVizLegendEntry *legend_entry(const DsVizScene *scene, guint i)
{
  g_assert_cmpuint(i, <, scene->legend->len);
  return &g_array_index(scene->legend, DsVizLegendEntry, i);
}

/* Where a fill stands in the legend, or -1. */
static gint legend_position(const DsVizScene *scene, const char *fill)
{
  for (guint i = 0; i < scene->legend->len; i++)
    if (strcmp(legend_entry(scene, i)->fill, fill) == 0)
      return (gint)i;
  return -1;
}

static void test_overlays(void)
{
  g_autoptr(DsSession) session =
      open_model("dynamic", "boolean-mask-symbol.json", "data", "(6, 8)");
  DsGraph *graph = ds_session_get_graph(session);
  GError *error = NULL;
  /* Every op but nonzero0 ran; fc1 took ten times as long as each of the others. fc0's
   * outputs went to fresh memory, relu0's to reused memory, reshape0 made a view. */
  static const char *const ran[] = {"fc0",      "relu0",         "score0", "reshape0",
                                    "greater0", "boolean_mask0", "fc1",    "softmax0"};
  DsReportEvent events[G_N_ELEMENTS(ran)];
  EventShapes shapes[G_N_ELEMENTS(ran)];
  for (guint i = 0; i < G_N_ELEMENTS(ran); i++) {
    gboolean slow = strcmp(ran[i], "fc1") == 0, reused = strcmp(ran[i], "relu0") == 0;
    gboolean view = strcmp(ran[i], "reshape0") == 0;
    events[i] = event(ran[i], slow ? 10000 : 1000, reused || view ? 0 : 384, reused ? 384 : 0, 3,
                      &shapes[i]);
  }
  /* Only what the overlays read: a report as ds_report_read_file() would give it. */
  DsReport report = {.run.repeat = 1, .n_events = G_N_ELEMENTS(ran), .events = events};
  DsVizOptions o = {.report = &report, .overlay = DS_VIZ_OVERLAY_TIME};
  g_autoptr(DsVizScene) time = ds_viz_scene_build(graph, &o, &error);
  g_assert_no_error(error);
  /* Five heat steps, light to dark, then what did not run. */
  g_assert_cmpuint(time->legend->len, >=, 6);
  for (guint i = 0; i < 5; i++)
    g_assert_true(g_str_has_prefix(legend_entry(time, i)->text, "total time"));
  g_assert_cmpstr(legend_entry(time, 5)->text, ==, "did not run");
  const char *lightest = legend_entry(time, 0)->fill, *darkest = legend_entry(time, 4)->fill;
  g_assert_cmpstr(lightest, !=, darkest);
  for (guint i = 0; i < G_N_ELEMENTS(ran); i++) {
    const DsVizNode *n = find_node(time, ran[i]);
    g_assert_cmpstr(n->fill, ==, strcmp(ran[i], "fc1") == 0 ? darkest : lightest);
  }
  g_assert_nonnull(strstr(find_node(time, "fc1")->label, "10.0 µs"));
  g_assert_nonnull(strstr(find_node(time, "fc0")->label, "1.0 µs"));
  g_assert_cmpstr(find_node(time, "nonzero0")->fill, ==, legend_entry(time, 5)->fill);

  o.overlay = DS_VIZ_OVERLAY_MEMORY;
  g_autoptr(DsVizScene) memory = ds_viz_scene_build(graph, &o, &error);
  g_assert_no_error(error);
  g_assert_true(g_str_has_prefix(legend_entry(memory, 0)->text, "outputs mostly in fresh"));
  gint fresh = legend_position(memory, find_node(memory, "fc0")->fill);
  gint reused = legend_position(memory, find_node(memory, "relu0")->fill);
  gint view = legend_position(memory, find_node(memory, "reshape0")->fill);
  g_assert_cmpint(fresh, ==, 0);
  g_assert_cmpint(reused, ==, 3);
  g_assert_true(g_str_has_prefix(legend_entry(memory, reused)->text, "outputs mostly in reused"));
  g_assert_true(g_str_has_prefix(legend_entry(memory, view)->text, "no new buffer"));
  g_assert_nonnull(strstr(find_node(memory, "reshape0")->label, "no new buffer"));
  g_assert_nonnull(strstr(find_node(memory, "fc0")->label, "fresh 384 bytes"));

  o.overlay = DS_VIZ_OVERLAY_DYNAMIC;
  g_autoptr(DsVizScene) dynamic = ds_viz_scene_build(graph, &o, &error);
  g_assert_no_error(error);
  const DsVizNode *mask = find_node(dynamic, "boolean_mask0");
  g_assert_cmpstr(mask->fill, ==, legend_entry(dynamic, 0)->fill);
  g_assert_nonnull(strstr(legend_entry(dynamic, 0)->text, "data-dependent"));
  g_assert_nonnull(strstr(mask->label, "→ (3, 16)"));
  g_assert_cmpstr(find_node(dynamic, "fc0")->fill, !=, mask->fill);
  g_assert_null(strstr(find_node(dynamic, "fc0")->label, "→"));
  /* nonzero0 is data-dependent too, but did not run. */
  g_assert_cmpstr(find_node(dynamic, "nonzero0")->fill, !=, mask->fill);

  /* No report: refused (the reader refuses one without events, test-report-model). */
  DsVizOptions none = {.overlay = DS_VIZ_OVERLAY_TIME};
  g_assert_null(ds_viz_scene_build(graph, &none, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_INPUT);
  g_clear_error(&error);
}

/* ---- geometry ---- */

static gboolean box_contains(const DsVizBox *outer, const DsVizBox *inner, double slack)
{
  return inner->x - inner->width / 2 >= outer->x - outer->width / 2 - slack &&
         inner->x + inner->width / 2 <= outer->x + outer->width / 2 + slack &&
         inner->y - inner->height / 2 >= outer->y - outer->height / 2 - slack &&
         inner->y + inner->height / 2 <= outer->y + outer->height / 2 + slack;
}

static double distance_to_box(DsVizPoint p, const DsVizBox *b)
{
  double dx = MAX(0.0, fabs(p.x - b->x) - b->width / 2);
  double dy = MAX(0.0, fabs(p.y - b->y) - b->height / 2);
  return sqrt(dx * dx + dy * dy);
}

/* Boxes inside the page and inside their clusters, edges from box to box, labels where edges
 * have them. */
static void check_geometry(const DsVizScene *scene, const DsVizLayout *layout)
{
  g_assert_cmpuint(layout->n_nodes, ==, scene->nodes->len);
  g_assert_cmpuint(layout->n_edges, ==, scene->edges->len);
  g_assert_cmpuint(layout->n_clusters, ==, scene->clusters->len);
  g_assert_cmpfloat(layout->width, >, 0);
  g_assert_cmpfloat(layout->height, >, 0);
  DsVizBox page = {layout->width / 2, layout->height / 2, layout->width, layout->height};
  for (guint i = 0; i < layout->n_nodes; i++) {
    const DsVizBox *b = &layout->nodes[i].box;
    g_assert_cmpfloat(b->width, >, 0);
    g_assert_cmpfloat(b->height, >, 0);
    g_assert_true(box_contains(&page, b, 1.0));
    gint c = g_array_index(scene->nodes, DsVizNode, i).cluster;
    for (; c >= 0; c = g_array_index(scene->clusters, DsVizCluster, c).parent)
      g_assert_true(box_contains(&layout->clusters[c].box, b, 1.0));
  }
  for (guint c = 0; c < layout->n_clusters; c++) {
    g_assert_cmpfloat(layout->clusters[c].box.width, >, 0);
    g_assert_true(box_contains(&page, &layout->clusters[c].box, 1.0));
    gint parent = g_array_index(scene->clusters, DsVizCluster, c).parent;
    if (parent >= 0)
      g_assert_true(box_contains(&layout->clusters[parent].box, &layout->clusters[c].box, 1.0));
  }
  for (guint i = 0; i < layout->n_edges; i++) {
    const DsVizEdge *e = &g_array_index(scene->edges, DsVizEdge, i);
    const DsVizEdgeGeometry *g = &layout->edges[i];
    g_assert_cmpuint(g->n_points, >=, 4);
    g_assert_cmpuint((g->n_points - 1) % 3, ==, 0);
    const DsVizBox *tail = &layout->nodes[e->from].box, *head = &layout->nodes[e->to].box;
    g_assert_cmpfloat(distance_to_box(g->points[0], tail), <, 4.0);
    /* The last control point is at the arrowhead's base, an arrow's length off the head. */
    g_assert_cmpfloat(distance_to_box(g->points[g->n_points - 1], head), <, 10.0);
    if (g->has_arrow)
      g_assert_cmpfloat(distance_to_box(g->arrow_tip, head), <, 4.0);
    g_assert_true(g->has_label == (e->label != NULL));
    if (g->has_label) {
      DsVizBox at = {g->label.x, g->label.y, 0, 0};
      g_assert_true(box_contains(&page, &at, 1.0));
    }
  }
}

static void assert_same_layout(const DsVizLayout *a, const DsVizLayout *b)
{
  g_assert_cmpfloat(a->width, ==, b->width);
  g_assert_cmpfloat(a->height, ==, b->height);
  g_assert_cmpuint(a->n_nodes, ==, b->n_nodes);
  g_assert_cmpuint(a->n_edges, ==, b->n_edges);
  g_assert_cmpuint(a->n_clusters, ==, b->n_clusters);
  g_assert_cmpmem(a->nodes, a->n_nodes * sizeof(DsVizNodeGeometry), b->nodes,
                  b->n_nodes * sizeof(DsVizNodeGeometry));
  g_assert_cmpmem(a->clusters, a->n_clusters * sizeof(DsVizClusterGeometry), b->clusters,
                  b->n_clusters * sizeof(DsVizClusterGeometry));
  for (guint i = 0; i < a->n_edges; i++) {
    const DsVizEdgeGeometry *x = &a->edges[i], *y = &b->edges[i];
    g_assert_cmpmem(x->points, x->n_points * sizeof(DsVizPoint), y->points,
                    y->n_points * sizeof(DsVizPoint));
    g_assert_true(x->has_arrow == y->has_arrow && x->has_label == y->has_label);
    g_assert_cmpmem(&x->arrow_tip, sizeof(DsVizPoint), &y->arrow_tip, sizeof(DsVizPoint));
    g_assert_cmpmem(&x->label, sizeof(DsVizPoint), &y->label, sizeof(DsVizPoint));
  }
}

static int compare_string_ptrs(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The SVG without its cluster groups, and those groups, sorted. */
static char *split_cluster_groups(const char *svg, GPtrArray *clusters)
{
  GString *rest = g_string_new(NULL);
  const char *at = svg;
  for (;;) {
    const char *start = strstr(at, "<g id=\"clust");
    if (start == NULL)
      break;
    const char *end = strstr(start, "</g>\n");
    g_assert_nonnull(end);
    end += strlen("</g>\n");
    g_string_append_len(rest, at, start - at);
    g_ptr_array_add(clusters, g_strndup(start, end - start));
    at = end;
  }
  g_string_append(rest, at);
  g_ptr_array_sort(clusters, compare_string_ptrs);
  return g_string_free(rest, FALSE);
}

static void test_geometry(void)
{
  GError *error = NULL;
  /* A loop holding a branch, with symbolic shapes on the edges. */
  g_autoptr(DsSession) session =
      open_model("control", "cond-in-loop-symbol.json", "data", "(s0, 3)");
  DsGraph *graph = ds_session_get_graph(session);
  const DsGraphShapes *symbolic = ds_session_infer_symbolic(session, &error);
  g_assert_no_error(error);
  g_autoptr(DsVizScene) scene =
      ds_viz_scene_build(graph, &(DsVizOptions){.symbolic = symbolic}, &error);
  g_assert_no_error(error);
  /* What the loop feeds its body carries the outer shape; inside, shapes are not drawn. */
  g_assert_cmpstr(find_edge(scene, "data", "loop0/body/x")->label, ==, "(s0, 3)");
  g_assert_null(find_edge(scene, "loop0/body/x", "loop0/body/choose0/cond/x")->label);
  g_autoptr(DsVizLayout) layout = ds_viz_layout(scene, &error);
  g_assert_no_error(error);
  check_geometry(scene, layout);
  guint labelled = 0;
  for (guint i = 0; i < layout->n_edges; i++)
    labelled += layout->edges[i].has_label;
  g_assert_cmpuint(labelled, >, 0);

  /* Partition regions, weights and labels. */
  g_autoptr(DsSession) mask = open_model("dynamic", "boolean-mask-symbol.json", "data", "(s0, 8)");
  DsGraph *mask_graph = ds_session_get_graph(mask);
  const DsGraphShapes *mask_shapes = ds_session_infer_symbolic(mask, &error);
  g_assert_no_error(error);
  g_autoptr(DsPartition) partition =
      ds_partition_label(mask_graph, ds_subgraph_property_find("static-dynamic"), &error);
  g_assert_no_error(error);
  g_autoptr(DsVizScene) regions = ds_viz_scene_build(
      mask_graph,
      &(DsVizOptions){.partition = partition, .symbolic = mask_shapes, .show_weights = 1}, &error);
  g_assert_no_error(error);
  g_autoptr(DsVizLayout) regions_layout = ds_viz_layout(regions, &error);
  g_assert_no_error(error);
  check_geometry(regions, regions_layout);

  /* Loops in loops. */
  g_autoptr(DsGraph) nested = load_nested();
  g_autoptr(DsVizScene) nested_scene = ds_viz_scene_build(nested, &(DsVizOptions){0}, &error);
  g_autoptr(DsVizLayout) nested_layout = ds_viz_layout(nested_scene, &error);
  g_assert_no_error(error);
  check_geometry(nested_scene, nested_layout);

  /* The same scene, the same geometry and the same picture, byte for byte. */
  g_autoptr(DsVizLayout) again = ds_viz_layout(scene, &error);
  g_assert_no_error(error);
  assert_same_layout(layout, again);
  g_autofree char *svg1 = NULL, *svg2 = NULL;
  gsize n1 = 0, n2 = 0;
  g_assert_true(ds_viz_render(scene, "svg", &svg1, &n1, &error));
  g_assert_true(ds_viz_render(scene, "svg", &svg2, &n2, &error));
  g_assert_nonnull(strstr(svg1, "<svg"));
  g_assert_cmpuint(n1, ==, n2);
  /* Graphviz 2.43 writes sibling clusters in the order of its subgraphs' ids, which are the
   * addresses of their interned names: within one process the order of the cluster groups
   * can change from one render to the next (across processes it does not; the render CLI
   * test compares bytes). Everything else must match byte for byte, in order, and the
   * cluster groups as a set. */
  g_autoptr(GPtrArray) clusters1 = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GPtrArray) clusters2 = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *rest1 = split_cluster_groups(svg1, clusters1);
  g_autofree char *rest2 = split_cluster_groups(svg2, clusters2);
  g_assert_cmpuint(clusters1->len, ==, scene->clusters->len);
  g_assert_cmpstr(rest1, ==, rest2);
  g_assert_cmpuint(clusters1->len, ==, clusters2->len);
  for (guint i = 0; i < clusters1->len; i++)
    g_assert_cmpstr(clusters1->pdata[i], ==, clusters2->pdata[i]);
  g_autofree char *dot = NULL;
  g_assert_true(ds_viz_render(scene, "dot", &dot, &n1, &error));
  g_assert_nonnull(strstr(dot, "pos="));
  g_autofree char *bad = NULL;
  g_assert_false(ds_viz_render(scene, "bmp", &bad, &n1, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_INPUT);
  g_assert_null(bad);
  g_clear_error(&error);
}

/* Ops before, beside and after a _foreach (body: add0, copy0). */
static const char around_json[] =
    "{\"nodes\": ["
    " {\"op\": \"null\", \"name\": \"data\", \"inputs\": []},"
    " {\"op\": \"null\", \"name\": \"s0\", \"inputs\": []},"
    " {\"op\": \"relu\", \"name\": \"pre0\", \"inputs\": [[0, 0, 0]]},"
    " {\"op\": \"_foreach\", \"name\": \"loop0\", \"attrs\": {\"in_data_locs\": \"[0]\", "
    "\"in_state_locs\": \"[1]\", \"num_args\": \"3\", \"num_out_data\": \"1\", "
    "\"num_outputs\": \"2\", \"remain_locs\": \"[]\"}, \"inputs\": [[2, 0, 0], [1, 0, 0]],"
    "  \"subgraphs\": [{\"nodes\": ["
    "   {\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
    "   {\"op\": \"null\", \"name\": \"s\", \"inputs\": []},"
    "   {\"op\": \"elemwise_add\", \"name\": \"add0\", \"inputs\": [[0, 0, 0], [1, 0, 0]]},"
    "   {\"op\": \"_copy\", \"name\": \"copy0\", \"inputs\": [[2, 0, 0]]}],"
    "   \"arg_nodes\": [0, 1], \"heads\": [[2, 0, 0], [3, 0, 0]]}]},"
    " {\"op\": \"sigmoid\", \"name\": \"post0\", \"inputs\": [[3, 0, 0]]},"
    " {\"op\": \"tanh\", \"name\": \"side0\", \"inputs\": [[0, 0, 0]]},"
    " {\"op\": \"tanh\", \"name\": \"side1\", \"inputs\": [[5, 0, 0]]},"
    " {\"op\": \"elemwise_add\", \"name\": \"join0\", \"inputs\": [[4, 0, 0], [6, 0, 0]]}],"
    " \"arg_nodes\": [0, 1], \"heads\": [[7, 0, 0], [3, 1, 0]]}";

/* Collapsing the loop keeps the vertical order of the nodes around it. */
static void test_collapse_keeps_order(void)
{
  GError *error = NULL;
  g_autoptr(DsGraph) graph =
      ds_mxnet_json_load_data(around_json, strlen(around_json), "around.json", &error);
  g_assert_no_error(error);
  g_autoptr(DsVizScene) open = ds_viz_scene_build(graph, &(DsVizOptions){0}, &error);
  g_assert_no_error(error);
  const char *loop[] = {"loop0", NULL};
  g_autoptr(DsVizScene) folded =
      ds_viz_scene_build(graph, &(DsVizOptions){.collapse = loop}, &error);
  g_assert_no_error(error);
  g_assert_cmpint(find_node(folded, "loop0")->kind, ==, DS_VIZ_NODE_COLLAPSED);
  g_assert_cmpuint(folded->clusters->len, ==, 0);
  g_assert_cmpuint(open->clusters->len, ==, 2);
  g_autoptr(DsVizLayout) a = ds_viz_layout(open, &error);
  g_assert_no_error(error);
  g_autoptr(DsVizLayout) b = ds_viz_layout(folded, &error);
  g_assert_no_error(error);
  check_geometry(open, a);
  check_geometry(folded, b);
  /* The folded picture is shorter: the body's ranks are gone. */
  g_assert_cmpfloat(b->height, <, a->height);
  static const char *const around[] = {"data", "s0", "pre0", "post0", "side0", "side1", "join0"};
  guint compared = 0;
  for (guint i = 0; i < G_N_ELEMENTS(around); i++)
    for (guint j = 0; j < G_N_ELEMENTS(around); j++) {
      double ya = a->nodes[node_index(open, around[i])].box.y;
      double yb = a->nodes[node_index(open, around[j])].box.y;
      if (ya >= yb - 1.0)
        continue; /* i not above j when open */
      double fa = b->nodes[node_index(folded, around[i])].box.y;
      double fb = b->nodes[node_index(folded, around[j])].box.y;
      g_assert_cmpfloat(fa, <, fb + 1.0);
      compared++;
    }
  g_assert_cmpuint(compared, >=, 10);
  /* And the loop's box sits between what feeds it and what it feeds. */
  guint box = node_index(folded, "loop0");
  g_assert_cmpfloat(b->nodes[node_index(folded, "pre0")].box.y, <, b->nodes[box].box.y);
  g_assert_cmpfloat(b->nodes[box].box.y, <, b->nodes[node_index(folded, "post0")].box.y);
}

/* Name scopes: Gluon block prefixes and ONNX paths; a big graph's layers as groups, collapsed
 * until opened, the nodes they hide findable by name. */
static void test_scope_groups(void)
{
  static const struct {
    const char *name;
    guint depth;
    const char *scope;
  } cases[] = {
      {"bertencoder0_transformer3_dense0_fwd", 1, "bertencoder0"},
      {"bertencoder0_transformer3_dense0_fwd", 2, "bertencoder0_transformer3"},
      {"bertencoder0_transformer3_dense0_fwd", 3, "bertencoder0_transformer3_dense0"},
      {"bertencoder0_transformer3_dense0_fwd", 4, NULL}, /* "fwd" is no block */
      {"resnetv10_stage1__plus0", 2, "resnetv10_stage1"},
      {"data", 1, NULL},
      {"/encoder/layer.3/attention/MatMul", 2, "/encoder/layer.3"},
      {"/encoder/layer.3/attention/MatMul", 3, "/encoder/layer.3/attention"},
      {"/encoder/layer.3/attention/MatMul", 4, NULL}, /* the op's own name stays */
      {"Gemm_0", 1, NULL},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *scope = ds_viz_name_scope(cases[i].name, cases[i].depth);
    g_assert_cmpstr(scope, ==, cases[i].scope);
  }

  /* Twelve layers of forty ops each after a stem: grouped at depth 2. */
  g_autoptr(GString) json = g_string_new("{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", "
                                         "\"inputs\": []}");
  guint n = 1;
  for (guint layer = 0; layer < 12; layer++)
    for (guint k = 0; k < 15; k++, n++)
      g_string_append_printf(json,
                             ", {\"op\": \"relu\", \"name\": \"net0_layer%u_relu%u\", "
                             "\"inputs\": [[%u, 0, 0]]}",
                             layer, k, n - 1);
  g_string_append_printf(json, "], \"arg_nodes\": [0], \"heads\": [[%u, 0, 0]]}", n - 1);
  GError *error = NULL;
  g_autoptr(DsGraph) graph = ds_mxnet_json_load_data(json->str, json->len, "layers.json", &error);
  g_assert_no_error(error);
  g_autoptr(DsVizScopes) scopes = ds_viz_scopes_find(graph);
  g_assert_nonnull(scopes);
  g_assert_cmpuint(scopes->depth, ==, 2);
  g_assert_cmpuint(scopes->n_groups, ==, 12);
  g_autoptr(DsVizScene) folded =
      ds_viz_scene_build(graph, &(DsVizOptions){.group_scopes = TRUE}, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(folded->nodes->len, ==, 1 + 12);
  g_assert_cmpuint(folded->edges->len, ==, 12);
  g_assert_cmpint(find_node(folded, "net0_layer4")->kind, ==, DS_VIZ_NODE_COLLAPSED);
  g_assert_cmpstr(g_hash_table_lookup(folded->hidden_in, "net0_layer4_relu7"), ==, "net0_layer4");
  const char *open[] = {"net0_layer4", NULL};
  g_autoptr(DsVizScene) opened =
      ds_viz_scene_build(graph, &(DsVizOptions){.group_scopes = TRUE, .expand = open}, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(opened->nodes->len, ==, 1 + 11 + 15);
  gint cluster = ds_viz_scene_find_cluster(opened, "net0_layer4");
  g_assert_cmpint(cluster, >=, 0);
  g_assert_cmpint(g_array_index(opened->clusters, DsVizCluster, cluster).kind, ==,
                  DS_VIZ_CLUSTER_GROUP);
  g_assert_null(g_hash_table_lookup(opened->hidden_in, "net0_layer4_relu7"));
  g_autoptr(DsVizLayout) layout = ds_viz_layout(opened, &error);
  g_assert_no_error(error);
  check_geometry(opened, layout);
  /* Small graphs and graphs with one scope are drawn as they are. */
  g_autoptr(DsVizScene) plain = ds_viz_scene_build(graph, &(DsVizOptions){0}, &error);
  g_assert_cmpuint(plain->nodes->len, ==, n);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/viz/scope-groups", test_scope_groups);
  g_test_add_func("/viz/partition-counts", test_partition_counts);
  g_test_add_func("/viz/control-flow-clusters", test_control_flow_clusters);
  g_test_add_func("/viz/placement-clusters", test_placement_clusters);
  g_test_add_func("/viz/overlays", test_overlays);
  g_test_add_func("/viz/geometry", test_geometry);
  g_test_add_func("/viz/collapse-keeps-order", test_collapse_keeps_order);
  return g_test_run();
}
