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
  g_assert_cmpuint(scene->nodes->len, ==, graph->n_nodes);
  g_assert_cmpuint(scene->clusters->len, ==, partition->n_regions);
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
  g_assert_cmpstr(find_edge(bound, "data", "fc0")->label, ==, "(s0, 8) = (6, 8)");
  g_assert_cmpstr(find_edge(bound, "boolean_mask0", "fc1")->label, ==, "(u0, 16)");

  /* Weights hidden: gone, and no edge touches them. */
  o.show_weights = 0;
  g_autoptr(DsVizScene) lean = ds_viz_scene_build(graph, &o, &error);
  guint n_weights = 0;
  for (guint i = 0; i < graph->n_nodes; i++) {
    n_weights += weights[i];
    if (weights[i])
      g_assert_null(find_node(lean, graph->nodes[i]->name));
  }
  g_assert_cmpuint(n_weights, ==, 4);
  g_assert_cmpuint(lean->nodes->len, ==, graph->n_nodes - n_weights);
  g_assert_cmpuint(lean->edges->len, ==, distinct_edges(graph, weights));
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
  g_assert_cmpuint(scene->clusters->len, ==, 4);
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
  o.collapse = NULL;
  o.collapse_all = TRUE;
  g_autoptr(DsVizScene) all = ds_viz_scene_build(nested, &o, &error);
  g_assert_cmpuint(all->clusters->len, ==, 0);
  g_assert_cmpuint(all->nodes->len, ==, 3); /* data, s0, outer0 */

  /* An id that names nothing is refused, with the ids there are. */
  const char *bogus[] = {"nope", NULL};
  DsVizOptions bad = {.collapse = bogus};
  g_assert_null(ds_viz_scene_build(nested, &bad, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_INPUT);
  g_assert_nonnull(strstr(error->message, "outer0/body/inner0"));
  g_clear_error(&error);

  /* The samples: a while loop's two subgraphs, a cond inside a foreach. */
  g_autoptr(DsSession) decoder = open_model("control", "greedy-decoder-symbol.json", NULL, NULL);
  g_autoptr(DsVizScene) ds =
      ds_viz_scene_build(ds_session_get_graph(decoder), &(DsVizOptions){0}, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(ds->clusters->len, ==, 3);
  g_assert_cmpstr(g_array_index(ds->clusters, DsVizCluster, 0).label, ==, "while  decoder0");
  g_assert_cmpint(ds_viz_scene_find_cluster(ds, "decoder0/cond"), >=, 0);
  g_assert_cmpint(ds_viz_scene_find_cluster(ds, "decoder0/func"), >=, 0);
  g_autoptr(DsSession) cil = open_model("control", "cond-in-loop-symbol.json", NULL, NULL);
  g_autoptr(DsVizScene) cs =
      ds_viz_scene_build(ds_session_get_graph(cil), &(DsVizOptions){0}, &error);
  g_assert_cmpuint(cs->clusters->len, ==, 6); /* loop, body, cond node, cond, then, else */
  gint choose = ds_viz_scene_find_cluster(cs, "loop0/body/choose0");
  g_assert_cmpstr(g_array_index(cs->clusters, DsVizCluster, choose).label, ==, "cond  choose0");
  g_assert_cmpint(ds_viz_scene_find_cluster(cs, "loop0/body/choose0/then"), >=, 0);
  g_assert_cmpint(ds_viz_scene_find_cluster(cs, "loop0/body/choose0/else"), >=, 0);
}

/* ---- overlays ---- */

static cJSON *event(const char *key, double ns, double fresh, double reused, int rows)
{
  cJSON *e = cJSON_CreateObject();
  cJSON_AddStringToObject(e, "key", key);
  cJSON_AddNumberToObject(e, "dur_ns", ns);
  cJSON_AddNumberToObject(e, "fresh_bytes", fresh);
  cJSON_AddNumberToObject(e, "reused_bytes", reused);
  cJSON *shapes = cJSON_AddArrayToObject(e, "output_shapes");
  cJSON *shape = cJSON_CreateArray();
  cJSON_AddItemToArray(shape, cJSON_CreateNumber(rows));
  cJSON_AddItemToArray(shape, cJSON_CreateNumber(16));
  cJSON_AddItemToArray(shapes, shape);
  return e;
}

static void test_overlays(void)
{
  g_autoptr(DsSession) session =
      open_model("dynamic", "boolean-mask-symbol.json", "data", "(6, 8)");
  DsGraph *graph = ds_session_get_graph(session);
  GError *error = NULL;
  cJSON *report = cJSON_CreateObject();
  cJSON *events = cJSON_AddArrayToObject(report, "events");
  static const char *const names[] = {"fc0",           "relu0", "score0",   "reshape0", "greater0",
                                      "boolean_mask0", "fc1",   "softmax0", "nonzero0"};
  for (guint i = 0; i < G_N_ELEMENTS(names); i++)
    cJSON_AddItemToArray(events, event(names[i], strcmp(names[i], "fc1") == 0 ? 10000 : 1000,
                                       strcmp(names[i], "relu0") == 0 ? 0 : 384,
                                       strcmp(names[i], "relu0") == 0 ? 384 : 0, 3));
  DsVizOptions o = {.report = report, .overlay = DS_VIZ_OVERLAY_TIME};
  g_autoptr(DsVizScene) time = ds_viz_scene_build(graph, &o, &error);
  g_assert_no_error(error);
  const char *darkest = g_array_index(time->legend, DsVizLegendEntry, 4).fill;
  const char *lightest = g_array_index(time->legend, DsVizLegendEntry, 0).fill;
  g_assert_cmpstr(find_node(time, "fc1")->fill, ==, darkest);
  g_assert_cmpstr(find_node(time, "fc0")->fill, ==, lightest);
  g_assert_nonnull(strstr(find_node(time, "fc1")->label, "10.0 µs"));

  o.overlay = DS_VIZ_OVERLAY_MEMORY;
  g_autoptr(DsVizScene) memory = ds_viz_scene_build(graph, &o, &error);
  const char *fresh = g_array_index(memory->legend, DsVizLegendEntry, 0).fill;
  const char *reused = g_array_index(memory->legend, DsVizLegendEntry, 3).fill;
  g_assert_cmpstr(find_node(memory, "fc0")->fill, ==, fresh);
  g_assert_cmpstr(find_node(memory, "relu0")->fill, ==, reused);

  o.overlay = DS_VIZ_OVERLAY_DYNAMIC;
  g_autoptr(DsVizScene) dynamic = ds_viz_scene_build(graph, &o, &error);
  const DsVizNode *mask = find_node(dynamic, "boolean_mask0");
  g_assert_cmpstr(mask->fill, ==, g_array_index(dynamic->legend, DsVizLegendEntry, 0).fill);
  g_assert_nonnull(strstr(mask->label, "(3, 16)"));
  g_assert_cmpstr(find_node(dynamic, "fc0")->fill, !=, mask->fill);
  cJSON_Delete(report);

  DsVizOptions none = {.overlay = DS_VIZ_OVERLAY_TIME};
  g_assert_null(ds_viz_scene_build(graph, &none, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_INPUT);
  g_clear_error(&error);
}

/* ---- geometry ---- */

static int compare_strings(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

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

static void test_geometry(void)
{
  GError *error = NULL;
  g_autoptr(DsSession) session = open_model("control", "cond-in-loop-symbol.json", NULL, NULL);
  DsGraph *graph = ds_session_get_graph(session);
  g_autoptr(DsVizScene) scene = ds_viz_scene_build(graph, &(DsVizOptions){0}, &error);
  g_autoptr(DsVizLayout) layout = ds_viz_layout(scene, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(layout->n_nodes, ==, scene->nodes->len);
  DsVizBox page = {layout->width / 2, layout->height / 2, layout->width, layout->height};
  for (guint i = 0; i < layout->n_nodes; i++) {
    const DsVizBox *b = &layout->nodes[i].box;
    g_assert_cmpfloat(b->width, >, 0);
    g_assert_true(box_contains(&page, b, 1.0));
    gint c = g_array_index(scene->nodes, DsVizNode, i).cluster;
    for (; c >= 0; c = g_array_index(scene->clusters, DsVizCluster, c).parent)
      g_assert_true(box_contains(&layout->clusters[c].box, b, 1.0));
  }
  for (guint i = 0; i < layout->n_edges; i++) {
    const DsVizEdge *e = &g_array_index(scene->edges, DsVizEdge, i);
    const DsVizEdgeGeometry *g = &layout->edges[i];
    g_assert_cmpuint(g->n_points, >=, 4);
    g_assert_cmpuint((g->n_points - 1) % 3, ==, 0);
    DsVizPoint head = g->has_arrow ? g->arrow_tip : g->points[g->n_points - 1];
    g_assert_cmpfloat(distance_to_box(g->points[0], &layout->nodes[e->from].box), <, 4.0);
    g_assert_cmpfloat(distance_to_box(head, &layout->nodes[e->to].box), <, 4.0);
    g_assert_true(g->has_label == (e->label != NULL));
  }
  /* The same scene, the same picture. */
  g_autoptr(DsVizLayout) again = ds_viz_layout(scene, &error);
  for (guint i = 0; i < layout->n_nodes; i++)
    g_assert_cmpmem(&layout->nodes[i], sizeof(DsVizNodeGeometry), &again->nodes[i],
                    sizeof(DsVizNodeGeometry));
  g_autofree char *svg1 = NULL, *svg2 = NULL;
  gsize n1, n2;
  g_assert_true(ds_viz_render(scene, "svg", &svg1, &n1, &error));
  g_assert_true(ds_viz_render(scene, "svg", &svg2, &n2, &error));
  /* The same elements at the same places; Graphviz may list clusters in another order
   * within one process (it orders them by the addresses of their names). */
  g_auto(GStrv) lines1 = g_strsplit(svg1, "\n", -1), lines2 = g_strsplit(svg2, "\n", -1);
  g_assert_cmpuint(g_strv_length(lines1), ==, g_strv_length(lines2));
  qsort(lines1, g_strv_length(lines1), sizeof(char *), compare_strings);
  qsort(lines2, g_strv_length(lines2), sizeof(char *), compare_strings);
  for (guint i = 0; lines1[i] != NULL; i++)
    g_assert_cmpstr(lines1[i], ==, lines2[i]);
  g_assert_nonnull(strstr(svg1, "<svg"));
  g_autofree char *dot = NULL;
  g_assert_true(ds_viz_render(scene, "dot", &dot, &n1, &error));
  g_assert_nonnull(strstr(dot, "pos="));
  g_autofree char *bad = NULL;
  g_assert_false(ds_viz_render(scene, "bmp", &bad, &n1, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_INPUT);
  g_clear_error(&error);

  /* Collapsing the loop keeps the order of what is around it: data above acc0's consumers. */
  const char *loop[] = {"loop0", NULL};
  g_autoptr(DsVizScene) folded =
      ds_viz_scene_build(graph, &(DsVizOptions){.collapse = loop}, &error);
  g_autoptr(DsVizLayout) fl = ds_viz_layout(folded, &error);
  g_assert_no_error(error);
  guint data = node_index(folded, "data"), box = node_index(folded, "loop0");
  g_assert_cmpfloat(fl->nodes[data].box.y, <, fl->nodes[box].box.y);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/viz/partition-counts", test_partition_counts);
  g_test_add_func("/viz/control-flow-clusters", test_control_flow_clusters);
  g_test_add_func("/viz/overlays", test_overlays);
  g_test_add_func("/viz/geometry", test_geometry);
  return g_test_run();
}
