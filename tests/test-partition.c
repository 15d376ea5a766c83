/* test-partition.c: subgraph properties, labelling, the partitioned graph and its inverse, and
 * the `_CachedOp` op that runs a region.
 *
 *  - static-dynamic on small graphs: one dynamic op in a chain gives three regions (seed
 *    000), a skip edge around it keeps the regions convex, a seed cut from its own region
 *    tries again;
 *  - elementwise on the sample model and bert: only regions of two or more such ops;
 *  - build: the partition-time hints a property sees, the MXNet JSON round trip, flatten as
 *    its inverse, and the same output shapes and dtypes through `_CachedOp` as through the
 *    original graph (concretely, and symbolically for bert);
 *  - every real model: label with each property, build, validate, round trip, flatten back.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "ds-config.h"
#include "ds-error.h"
#include "ds-expr.h"
#include "ds-infer.h"
#include "ds-mxnet-json.h"
#include "ds-op.h"
#include "ds-partition.h"
#include "ds-test-cover.h"

static char *model_path(const char *file)
{
  const char *shared = g_getenv("DS_SHARED_DIR");
  return g_build_filename(shared != NULL ? shared : DS_SHARED_DIR, "models", "mxnet", file, NULL);
}

static char *sample_path(void)
{
  const char *source = g_getenv("DS_SOURCE_DIR");
  return g_build_filename(source != NULL ? source : ".", "data", "sample", "sample-symbol.json",
                          NULL);
}

static DsGraph *load_path(const char *path)
{
  GError *error = NULL;
  DsGraph *graph = ds_mxnet_json_load(path, &error);
  if (error != NULL)
    g_test_message("%s", error->message);
  g_assert_no_error(error);
  return graph;
}

static DsGraph *load_text(const char *text)
{
  GError *error = NULL;
  DsGraph *graph = ds_mxnet_json_load_data(text, strlen(text), "test", &error);
  if (error != NULL)
    g_test_message("%s", error->message);
  g_assert_no_error(error);
  return graph;
}

static DsPartition *label(const DsGraph *graph, const char *property)
{
  GError *error = NULL;
  const DsSubgraphProperty *prop = ds_subgraph_property_find(property);
  g_assert_nonnull(prop);
  DsPartition *partition = ds_partition_label(graph, prop, &error);
  g_assert_no_error(error);
  g_assert_nonnull(partition);
  return partition;
}

static DsGraph *build(const DsPartition *partition, const char *property,
                      const DsGraphShapes *shapes)
{
  GError *error = NULL;
  DsGraph *built =
      ds_partition_build(partition, ds_subgraph_property_find(property), shapes, &error);
  if (error != NULL)
    g_test_message("%s", error->message);
  g_assert_no_error(error);
  g_assert_nonnull(built);
  g_assert_true(ds_graph_validate(built, NULL, &error));
  return built;
}

/* A region's nodes by name, comma-separated, in node order. */
static char *region_names(const DsPartition *partition, guint r)
{
  GString *out = g_string_new(NULL);
  const DsRegion *region = &partition->regions[r];
  for (guint i = 0; i < region->n_nodes; i++)
    g_string_append_printf(out, "%s%s", i ? "," : "",
                           partition->graph->nodes[region->nodes[i]]->name);
  return g_string_free(out, FALSE);
}

/* Entries as "node:index" names, comma-separated. */
static char *entry_names(const DsGraph *graph, GArray *entries)
{
  GString *out = g_string_new(NULL);
  for (guint i = 0; i < entries->len; i++) {
    guint e = g_array_index(entries, guint, i), v = 0;
    while (graph->node_row_ptr[v + 1] <= e)
      v++;
    g_string_append_printf(out, "%s%s:%u", i ? "," : "", graph->nodes[v]->name,
                           e - graph->node_row_ptr[v]);
  }
  return g_string_free(out, FALSE);
}

static void assert_region(const DsPartition *partition, guint r, const char *name,
                          DsRegionKind kind, const char *nodes, const char *inputs,
                          const char *outputs)
{
  g_assert_cmpuint(r, <, partition->n_regions);
  g_assert_cmpstr(partition->regions[r].name, ==, name);
  g_assert_cmpint(partition->regions[r].kind, ==, kind);
  g_autofree char *got_nodes = region_names(partition, r);
  g_assert_cmpstr(got_nodes, ==, nodes);
  g_autoptr(GArray) in = ds_region_inputs(partition, r);
  g_autoptr(GArray) out = ds_region_outputs(partition, r);
  g_autofree char *got_in = entry_names(partition->graph, in);
  g_autofree char *got_out = entry_names(partition->graph, out);
  g_assert_cmpstr(got_in, ==, inputs);
  g_assert_cmpstr(got_out, ==, outputs);
}

static gboolean have_boolean_mask(void)
{
  if (ds_op_lookup("_contrib_boolean_mask") != NULL)
    return TRUE;
  g_test_skip("no dynamic-shape op (_contrib_boolean_mask) in this build");
  return FALSE;
}

/* ------------------------------------------------------------------------------------------ */
/* Labelling */

static void test_properties(void)
{
  const DsSubgraphProperty *const *props = ds_subgraph_properties();
  guint n = 0;
  for (; props[n] != NULL; n++) {
    g_assert_nonnull(props[n]->description);
    g_assert_true(ds_subgraph_property_find(props[n]->name) == props[n]);
  }
  g_assert_cmpuint(n, ==, 2);
  g_assert_nonnull(ds_subgraph_property_find("static-dynamic"));
  g_assert_nonnull(ds_subgraph_property_find("elementwise"));
  g_assert_null(ds_subgraph_property_find("tensorrt"));
  g_assert_null(ds_subgraph_property_find(NULL));
}

/* data -> a (relu) -> dyn (boolean_mask with idx) -> c (relu). */
static const char chain_json[] =
    "{\"nodes\": ["
    "{\"op\": \"null\", \"name\": \"data\", \"attrs\": {\"__shape__\": \"(6, 3)\"},"
    " \"inputs\": []},"
    "{\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]},"
    "{\"op\": \"null\", \"name\": \"idx\", \"attrs\": {\"__shape__\": \"(6,)\"}, \"inputs\": []},"
    "{\"op\": \"_contrib_boolean_mask\", \"name\": \"dyn\", \"inputs\": [[1, 0, 0], [2, 0, 0]]},"
    "{\"op\": \"relu\", \"name\": \"c\", \"inputs\": [[3, 0, 0]]}],"
    " \"arg_nodes\": [0, 2], \"heads\": [[4, 0, 0]],"
    " \"attrs\": {\"mxnet_version\": [\"int\", 10500]}}";

static void test_static_dynamic_chain(void)
{
  if (!have_boolean_mask())
    return;
  g_autoptr(DsGraph) graph = load_text(chain_json);
  g_autoptr(DsPartition) p = label(graph, "static-dynamic");
  g_assert_cmpuint(p->n_regions, ==, 3);
  assert_region(p, 0, "static0", DS_REGION_STATIC, "a", "data:0", "a:0");
  assert_region(p, 1, "dynamic1", DS_REGION_DYNAMIC, "dyn", "a:0,idx:0", "dyn:0");
  assert_region(p, 2, "static2", DS_REGION_STATIC, "c", "dyn:0", "c:0");
  g_assert_cmpint(p->region_of_node[0], ==, -1);
  g_assert_cmpint(p->region_of_node[2], ==, -1);

  /* Built: three _CachedOp nodes in a chain, between the two variables. */
  g_autoptr(DsGraph) built = build(p, "static-dynamic", NULL);
  g_assert_cmpuint(built->n_nodes, ==, 5);
  g_assert_cmpuint(ds_graph_count_ops(built), ==, 3);
  DsNode *dyn = ds_graph_find_node(built, "dynamic1");
  g_assert_nonnull(dyn);
  g_assert_cmpstr(dyn->op_name, ==, "_CachedOp");
  g_assert_cmpuint(dyn->n_inputs, ==, 2);
  g_assert_cmpuint(dyn->n_subgraphs, ==, 1);
  /* Subgraph variables are named after what they read: list_outputs' name for an op output,
   * the variable's own name otherwise. */
  DsGraph *sub = dyn->subgraphs[0];
  g_assert_cmpstr(sub->nodes[0]->name, ==, "a_output");
  g_assert_cmpstr(sub->nodes[1]->name, ==, "idx");
  g_assert_cmpstr(sub->nodes[2]->name, ==, "dyn");
  g_assert_cmpuint(sub->n_arg_nodes, ==, 2);
  g_assert_cmpstr(built->nodes[built->heads[0].node_id]->name, ==, "static2");
}

/* a feeds dyn and, through a skip edge, c, which also reads dyn. {a, c} would grow together,
 * but the path a -> dyn -> c leaves it and comes back: c must go. */
static const char skip_json[] =
    "{\"nodes\": ["
    "{\"op\": \"null\", \"name\": \"data\", \"inputs\": []},"
    "{\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]},"
    "{\"op\": \"null\", \"name\": \"idx\", \"inputs\": []},"
    "{\"op\": \"_contrib_boolean_mask\", \"name\": \"dyn\", \"inputs\": [[1, 0, 0], [2, 0, 0]]},"
    "{\"op\": \"broadcast_add\", \"name\": \"c\", \"inputs\": [[1, 0, 0], [3, 0, 0]]},"
    "{\"op\": \"relu\", \"name\": \"d\", \"inputs\": [[4, 0, 0]]}],"
    " \"arg_nodes\": [0, 2], \"heads\": [[5, 0, 0]],"
    " \"attrs\": {\"mxnet_version\": [\"int\", 10500]}}";

static void test_static_dynamic_convex(void)
{
  if (!have_boolean_mask())
    return;
  g_autoptr(DsGraph) graph = load_text(skip_json);
  g_autoptr(DsPartition) p = label(graph, "static-dynamic");
  g_assert_cmpuint(p->n_regions, ==, 3);
  assert_region(p, 0, "static0", DS_REGION_STATIC, "a", "data:0", "a:0");
  assert_region(p, 1, "dynamic1", DS_REGION_DYNAMIC, "dyn", "a:0,idx:0", "dyn:0");
  assert_region(p, 2, "static2", DS_REGION_STATIC, "c,d", "a:0,dyn:0", "d:0");
  g_autoptr(DsGraph) built = build(p, "static-dynamic", NULL);
  g_assert_cmpuint(ds_graph_count_ops(built), ==, 3);
}

/* A test property: seeds are the nodes called "s..."; nodes called "x..." never join. */
static gboolean s_seed(const DsSubgraphProperty *prop, const DsNode *seed)
{
  (void)prop;
  return seed->name[0] == 's';
}

static gboolean not_x(const DsSubgraphProperty *prop, const DsNode *node, const DsNode *other)
{
  (void)prop;
  (void)node;
  return other->name[0] != 'x';
}

static const DsSubgraphProperty s_property = {
    .name = "test-seeds",
    .description = "test",
    .select = s_seed,
    .select_input = not_x,
    .select_output = not_x,
};

/* s grows to its producer r, but r -> x -> s leaves and comes back, so s is cut from its own
 * region; it then seeds again without r. */
static const char retry_json[] =
    "{\"nodes\": ["
    "{\"op\": \"null\", \"name\": \"data\", \"inputs\": []},"
    "{\"op\": \"relu\", \"name\": \"r\", \"inputs\": [[0, 0, 0]]},"
    "{\"op\": \"relu\", \"name\": \"x\", \"inputs\": [[1, 0, 0]]},"
    "{\"op\": \"elemwise_add\", \"name\": \"s\", \"inputs\": [[1, 0, 0], [2, 0, 0]]}],"
    " \"arg_nodes\": [0], \"heads\": [[3, 0, 0]],"
    " \"attrs\": {\"mxnet_version\": [\"int\", 10500]}}";

static void test_seed_retry(void)
{
  GError *error = NULL;
  g_autoptr(DsGraph) graph = load_text(retry_json);
  g_autoptr(DsPartition) p = ds_partition_label(graph, &s_property, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(p->n_regions, ==, 2);
  assert_region(p, 0, "test_seeds0", DS_REGION_STATIC, "r", "data:0", "r:0");
  assert_region(p, 1, "test_seeds1", DS_REGION_STATIC, "s", "r:0,x:0", "s:0");
  g_assert_cmpint(p->region_of_node[2], ==, -1);
  g_autoptr(DsGraph) built = ds_partition_build(p, &s_property, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(built->n_nodes, ==, 4);
  g_assert_cmpstr(built->nodes[2]->name, ==, "x");
}

/* Regions of the elementwise property: two or more elementwise or broadcast ops each. */
static guint check_elementwise(const DsGraph *graph)
{
  g_autoptr(DsPartition) p = label(graph, "elementwise");
  for (guint r = 0; r < p->n_regions; r++) {
    const DsRegion *region = &p->regions[r];
    g_autofree char *name = g_strdup_printf("elementwise%u", r);
    g_assert_cmpstr(region->name, ==, name);
    g_assert_cmpint(region->kind, ==, DS_REGION_STATIC);
    g_assert_cmpuint(region->n_nodes, >=, 2);
    for (guint i = 0; i < region->n_nodes; i++) {
      const DsNode *node = graph->nodes[region->nodes[i]];
      g_assert_true(node->op->traits & (DS_OP_TRAIT_ELEMWISE | DS_OP_TRAIT_BROADCAST));
      g_assert_cmpint(p->region_of_node[node->id], ==, (int)r);
    }
  }
  /* Each region's nodes became one. */
  guint n_in_regions = 0;
  for (guint r = 0; r < p->n_regions; r++)
    n_in_regions += p->regions[r].n_nodes;
  g_autoptr(DsGraph) built = build(p, "elementwise", NULL);
  g_assert_cmpuint(ds_graph_count_ops(built), ==,
                   ds_graph_count_ops(graph) - n_in_regions + p->n_regions);
  return p->n_regions;
}

static void test_elementwise_models(void)
{
  g_autofree char *sample = sample_path();
  g_autoptr(DsGraph) g1 = load_path(sample);
  /* Conv, BatchNorm, relu, pool: no two elementwise ops meet. */
  g_assert_cmpuint(check_elementwise(g1), ==, 0);
  g_autofree char *bert_path = model_path("gluonnlp_static_bert_qa-symbol.json");
  g_autoptr(DsGraph) bert = load_path(bert_path);
  guint n = check_elementwise(bert);
  g_test_message("bert: %u elementwise regions", n);
  g_assert_cmpuint(n, >, 0);
}

/* ------------------------------------------------------------------------------------------ */
/* Building and flattening */

/* Shapes inferred from the graph's hints and `declared` ("name", "(2, 384)" pairs, NULL
 * ended), concretely. */
static DsGraphShapes *infer(const DsGraph *graph, const char *const *declared,
                            gboolean require_complete)
{
  GError *error = NULL;
  DsGraphShapes *shapes = ds_graph_shapes_new(graph, &error);
  g_assert_no_error(error);
  for (guint i = 0; declared != NULL && declared[i] != NULL; i += 2) {
    DsNode *var = ds_graph_find_node((DsGraph *)graph, declared[i]);
    g_assert_nonnull(var);
    int64_t dims[DS_MAX_NDIM];
    gchar **parts = g_strsplit_set(declared[i + 1], "(), ", -1);
    int n = 0;
    for (guint k = 0; parts[k] != NULL; k++)
      if (parts[k][0] != '\0')
        dims[n++] = g_ascii_strtoll(parts[k], NULL, 10);
    g_strfreev(parts);
    DsShape shape = ds_shape_from_concrete(dims, n);
    g_assert_true(
        ds_graph_shapes_set_variable(shapes, graph, var, &shape, DS_DTYPE_UNKNOWN, &error));
  }
  DsShapeCtx *ctx = ds_shape_ctx_new();
  gboolean ok = ds_infer_graph(graph, shapes, ctx, require_complete, &error);
  ds_shape_ctx_free(ctx);
  if (error != NULL)
    g_test_message("%s", error->message);
  g_assert_no_error(error);
  g_assert_true(ok);
  return shapes;
}

static void assert_same_heads(const DsGraph *a, const DsGraphShapes *sa, const DsGraph *b,
                              const DsGraphShapes *sb)
{
  g_assert_cmpuint(a->n_heads, ==, b->n_heads);
  for (guint h = 0; h < a->n_heads; h++) {
    g_autofree char *x = ds_shape_to_string(ds_graph_shapes_get(sa, a, a->heads[h]));
    g_autofree char *y = ds_shape_to_string(ds_graph_shapes_get(sb, b, b->heads[h]));
    g_assert_cmpstr(x, ==, y);
    g_assert_cmpint(sa->dtypes[ds_graph_entry_id(a, a->heads[h])], ==,
                    sb->dtypes[ds_graph_entry_id(b, b->heads[h])]);
  }
}

/* Saves, loads and saves again: the same bytes, and the subgraph nodes come back. */
static void assert_round_trip(const DsGraph *built)
{
  GError *error = NULL;
  gsize len = 0;
  g_autofree char *text = ds_mxnet_json_save_to_data(built, &len);
  g_autoptr(DsGraph) again = ds_mxnet_json_load_data(text, len, "built", &error);
  if (error != NULL)
    g_test_message("%s", error->message);
  g_assert_no_error(error);
  g_assert_cmpuint(again->n_nodes, ==, built->n_nodes);
  g_assert_cmpuint(again->n_heads, ==, built->n_heads);
  g_assert_cmpmem(again->heads, again->n_heads * sizeof(DsEntry), built->heads,
                  built->n_heads * sizeof(DsEntry));
  for (guint i = 0; i < built->n_nodes; i++) {
    const DsNode *x = built->nodes[i], *y = again->nodes[i];
    g_assert_cmpstr(x->name, ==, y->name);
    g_assert_cmpstr(x->op_name, ==, y->op_name);
    g_assert_true(x->op == y->op);
    g_assert_cmpuint(x->n_outputs, ==, y->n_outputs);
    g_assert_cmpuint(x->n_subgraphs, ==, y->n_subgraphs);
    for (guint s = 0; s < x->n_subgraphs; s++)
      g_assert_cmpuint(x->subgraphs[s]->n_nodes, ==, y->subgraphs[s]->n_nodes);
  }
  g_autofree char *text2 = ds_mxnet_json_save_to_data(again, NULL);
  g_assert_cmpstr(text, ==, text2);
}

/* An input as "producer:index:version", for comparing graphs whose node ids differ. */
static char *input_text(const DsGraph *graph, DsEntry in)
{
  return g_strdup_printf("%s:%u:%u", graph->nodes[in.node_id]->name, in.index, in.version);
}

/* flatten(built) has the nodes of `graph` (names, ops, attributes, inputs by name), and
 * its regions are those of `p` (unless NULL). */
static void assert_flattens_back(const DsGraph *graph, const DsPartition *p, DsGraph *built)
{
  GError *error = NULL;
  DsPartition *fp = NULL;
  g_autoptr(DsGraph) flat = ds_partition_flatten(built, &fp, &error);
  g_assert_no_error(error);
  g_assert_nonnull(flat);
  g_autoptr(DsPartition) flat_partition = fp;
  g_assert_true(flat_partition->graph == flat);
  g_assert_cmpuint(flat->n_nodes, ==, graph->n_nodes);
  g_assert_cmpuint(flat->n_heads, ==, graph->n_heads);
  g_assert_cmpuint(flat->n_arg_nodes, ==, graph->n_arg_nodes);
  /* Names may repeat in a file; compare by name where they do not. */
  g_autoptr(GHashTable) count = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < graph->n_nodes; i++)
    g_hash_table_insert(
        count, graph->nodes[i]->name,
        GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(count, graph->nodes[i]->name)) + 1));
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *x = graph->nodes[i];
    if (GPOINTER_TO_UINT(g_hash_table_lookup(count, x->name)) > 1)
      continue;
    const DsNode *y = ds_graph_find_node(flat, x->name);
    g_assert_nonnull(y);
    g_assert_cmpstr(x->op_name, ==, y->op_name);
    g_assert_true(x->op == y->op);
    g_assert_cmpuint(x->n_attrs, ==, y->n_attrs);
    for (guint k = 0; k < x->n_attrs; k++) {
      g_assert_cmpstr(x->attrs[k].key, ==, y->attrs[k].key);
      g_assert_cmpstr(x->attrs[k].value, ==, y->attrs[k].value);
    }
    g_assert_cmpuint(x->n_inputs, ==, y->n_inputs);
    g_assert_cmpuint(x->n_outputs, ==, y->n_outputs);
    for (guint k = 0; k < x->n_inputs; k++) {
      g_autofree char *a = input_text(graph, x->inputs[k]);
      g_autofree char *b = input_text(flat, y->inputs[k]);
      g_assert_cmpstr(a, ==, b);
    }
  }
  for (guint h = 0; h < graph->n_heads; h++) {
    g_autofree char *a = input_text(graph, graph->heads[h]);
    g_autofree char *b = input_text(flat, flat->heads[h]);
    g_assert_cmpstr(a, ==, b);
  }
  if (p == NULL)
    return;
  g_assert_cmpuint(flat_partition->n_regions, ==, p->n_regions);
  for (guint r = 0; r < p->n_regions; r++) {
    g_assert_cmpstr(flat_partition->regions[r].name, ==, p->regions[r].name);
    g_assert_cmpint(flat_partition->regions[r].kind, ==, p->regions[r].kind);
    g_assert_cmpuint(flat_partition->regions[r].n_nodes, ==, p->regions[r].n_nodes);
    /* Same nodes, by name (the order inside a region is topological in both). */
    g_autoptr(GHashTable) names = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < p->regions[r].n_nodes; i++)
      g_hash_table_add(names, graph->nodes[p->regions[r].nodes[i]]->name);
    for (guint i = 0; i < flat_partition->regions[r].n_nodes; i++) {
      const char *name = flat->nodes[flat_partition->regions[r].nodes[i]]->name;
      g_assert_true(g_hash_table_contains(names, name));
    }
  }
}

/* `dead` reads data but nothing reads it: its region has no outputs, yet the node built for it
 * needs one. */
static const char dead_json[] =
    "{\"nodes\": ["
    "{\"op\": \"null\", \"name\": \"data\", \"attrs\": {\"__shape__\": \"(2, 3)\"},"
    " \"inputs\": []},"
    "{\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]},"
    "{\"op\": \"relu\", \"name\": \"dead\", \"inputs\": [[0, 0, 0]]},"
    "{\"op\": \"relu\", \"name\": \"b\", \"inputs\": [[1, 0, 0]]}],"
    " \"arg_nodes\": [0], \"heads\": [[3, 0, 0]],"
    " \"attrs\": {\"mxnet_version\": [\"int\", 10500]}}";

static void test_dead_region(void)
{
  g_autoptr(DsGraph) graph = load_text(dead_json);
  g_autoptr(DsPartition) p = label(graph, "static-dynamic");
  g_assert_cmpuint(p->n_regions, ==, 2);
  assert_region(p, 0, "static0", DS_REGION_STATIC, "a,b", "data:0", "b:0");
  assert_region(p, 1, "static1", DS_REGION_STATIC, "dead", "data:0", "");
  g_autoptr(DsGraph) built = build(p, "static-dynamic", NULL);
  DsNode *dead = ds_graph_find_node(built, "static1");
  g_assert_cmpuint(dead->n_outputs, ==, 1);
  assert_round_trip(built);
  assert_flattens_back(graph, p, built);
}

static const char *const bert_declared[] = {"data0", "(2, 384)", "data1", "(2, 384)",
                                            "data2", "(2,)",     NULL};

/* The built graph infers to the same output shapes and dtypes, through _CachedOp's nested
 * inference, as the original. */
static void check_model_build(const char *path, const char *const *declared)
{
  g_autoptr(DsGraph) graph = load_path(path);
  g_autoptr(DsGraphShapes) shapes = infer(graph, declared, TRUE);
  const char *props[] = {"static-dynamic", "elementwise"};
  for (guint i = 0; i < G_N_ELEMENTS(props); i++) {
    g_autoptr(DsPartition) p = label(graph, props[i]);
    g_autoptr(DsGraph) built = build(p, props[i], shapes);
    g_autoptr(DsGraphShapes) built_shapes = infer(built, declared, TRUE);
    assert_same_heads(graph, shapes, built, built_shapes);
    assert_round_trip(built);
    assert_flattens_back(graph, p, built);
  }
}

static void test_build_sample(void)
{
  g_autofree char *sample = sample_path();
  check_model_build(sample, NULL);
  /* No dynamic op: the whole sample is one static region. */
  g_autoptr(DsGraph) graph = load_path(sample);
  g_autoptr(DsPartition) p = label(graph, "static-dynamic");
  g_assert_cmpuint(p->n_regions, ==, 1);
  g_assert_cmpuint(p->regions[0].n_nodes, ==, ds_graph_count_ops(graph));
  g_autoptr(GArray) out = ds_region_outputs(p, 0);
  g_assert_cmpuint(out->len, ==, 1);
}

static void test_build_bert(void)
{
  g_autofree char *path = model_path("gluonnlp_static_bert_qa-symbol.json");
  check_model_build(path, bert_declared);

  /* Partitioned twice: static-dynamic regions holding the elementwise ones. Flattening
   * inlines both levels back to the original nodes. */
  g_autoptr(DsGraph) graph = load_path(path);
  g_autoptr(DsGraphShapes) shapes = infer(graph, bert_declared, TRUE);
  g_autoptr(DsPartition) p1 = label(graph, "elementwise");
  g_autoptr(DsGraph) once = build(p1, "elementwise", shapes);
  g_autoptr(DsPartition) p2 = label(once, "static-dynamic");
  g_assert_cmpuint(p2->n_regions, ==, 1);
  g_autoptr(DsGraphShapes) once_shapes = infer(once, bert_declared, TRUE);
  g_autoptr(DsGraph) twice = build(p2, "static-dynamic", once_shapes);
  g_autoptr(DsGraphShapes) twice_shapes = infer(twice, bert_declared, TRUE);
  assert_same_heads(graph, shapes, twice, twice_shapes);
  assert_round_trip(twice);
  assert_flattens_back(graph, NULL, twice);
}

/* A property whose create_node checks what it is given. */
static guint n_created;

static DsNode *checking_create(const DsSubgraphProperty *prop, DsGraph *subgraph,
                               const DsGraphShapes *subgraph_shapes, const char *name,
                               GError **error)
{
  g_assert_nonnull(subgraph_shapes);
  g_assert_cmpuint(subgraph_shapes->n_entries, ==, ds_graph_n_entries(subgraph));
  /* The sample's single region reads data (1, 1, 28, 28) float32 and every weight. */
  DsNode *data = ds_graph_find_node(subgraph, "data");
  g_assert_nonnull(data);
  g_assert_true(ds_node_is_variable(data));
  g_assert_cmpstr(ds_node_get_attr(data, "__shape__"), ==, "(1, 1, 28, 28)");
  g_assert_cmpstr(ds_node_get_attr(data, "__dtype__"), ==, "0");
  DsNode *bias = ds_graph_find_node(subgraph, "conv0_bias");
  g_assert_nonnull(bias);
  g_assert_cmpstr(ds_node_get_attr(bias, "__shape__"), ==, "(8,)");
  /* Every subgraph entry is known from the hints alone. */
  for (guint e = 0; e < subgraph_shapes->n_entries; e++)
    g_assert_true(ds_shape_is_known(&subgraph_shapes->shapes[e]));
  n_created++;
  return ds_partition_default_create_node(prop, subgraph, subgraph_shapes, name, error);
}

static void test_build_hints(void)
{
  GError *error = NULL;
  g_autofree char *sample = sample_path();
  g_autoptr(DsGraph) graph = load_path(sample);
  g_autoptr(DsGraphShapes) shapes = infer(graph, NULL, TRUE);
  DsSubgraphProperty prop = *ds_subgraph_property_find("static-dynamic");
  prop.create_node = checking_create;
  g_autoptr(DsPartition) p = ds_partition_label(graph, &prop, &error);
  g_assert_no_error(error);
  n_created = 0;
  g_autoptr(DsGraph) built = ds_partition_build(p, &prop, shapes, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(n_created, ==, 1);
  /* Variables first (as in the file), then the one subgraph node. */
  g_assert_cmpuint(built->n_nodes, ==, graph->n_nodes - ds_graph_count_ops(graph) + 1);
  const DsNode *node = built->nodes[built->heads[0].node_id];
  g_assert_cmpstr(node->op_name, ==, "_CachedOp");
  g_assert_cmpstr(node->name, ==, "static0");
  g_assert_cmpuint(node->n_attrs, ==, 0);
  const DsCachedOpParam *param = node->param;
  g_assert_cmpint(param->n_inputs, ==, (int)node->n_inputs);
  g_assert_cmpint(param->n_outputs, ==, 1);
  /* The subgraph's variables read the original variables, in order. */
  const DsGraph *sub = node->subgraphs[0];
  for (guint k = 0; k < node->n_inputs; k++)
    g_assert_cmpstr(sub->nodes[k]->name, ==, built->nodes[node->inputs[k].node_id]->name);
}

/* A property's create_node that fails, or makes a node that does not fit the region. */
static DsNode *failing_create(const DsSubgraphProperty *prop, DsGraph *subgraph,
                              const DsGraphShapes *subgraph_shapes, const char *name,
                              GError **error)
{
  (void)prop;
  (void)subgraph;
  (void)subgraph_shapes;
  g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED, "cannot compile region '%s'", name);
  return NULL;
}

static DsNode *misfit_create(const DsSubgraphProperty *prop, DsGraph *subgraph,
                             const DsGraphShapes *subgraph_shapes, const char *name, GError **error)
{
  DsNode *node = ds_partition_default_create_node(prop, subgraph, subgraph_shapes, name, error);
  node->n_outputs++;
  return node;
}

static void test_build_create_errors(void)
{
  GError *error = NULL;
  g_autofree char *sample = sample_path();
  g_autoptr(DsGraph) graph = load_path(sample);
  DsSubgraphProperty prop = *ds_subgraph_property_find("static-dynamic");
  g_autoptr(DsPartition) p = ds_partition_label(graph, &prop, &error);
  g_assert_no_error(error);
  prop.create_node = failing_create;
  g_assert_null(ds_partition_build(p, &prop, NULL, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED);
  g_assert_nonnull(strstr(error->message, "static0"));
  g_clear_error(&error);
  prop.create_node = misfit_create;
  g_assert_null(ds_partition_build(p, &prop, NULL, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_INVALID);
  g_test_message("%s", error->message);
  g_assert_nonnull(strstr(error->message, "static0"));
  g_clear_error(&error);
}

/* Symbolic inference of `graph` with `declared` ("name", "(s0, s1)" pairs, NULL ended), as the
 * session does it but on the graph itself, so that a partitioned graph goes through
 * _CachedOp's nested inference (a session would flatten it first). Gives every head's shape,
 * "; "-separated, and the number of symbols and the facts. */
static void infer_symbolic_graph(const DsGraph *graph, const char *const *declared, char **heads,
                                 char **facts)
{
  GError *error = NULL;
  DsExprCtx *exprs = ds_expr_ctx_new();
  DsShapeCtx *ctx = ds_shape_ctx_new_symbolic(exprs);
  g_autoptr(DsGraphShapes) shapes = ds_graph_shapes_new(graph, &error);
  g_assert_no_error(error);
  for (guint i = 0; declared[i] != NULL; i += 2) {
    DsNode *var = ds_graph_find_node((DsGraph *)graph, declared[i]);
    g_assert_nonnull(var);
    DsShape shape = {.ndim = 0};
    gchar **parts = g_strsplit_set(declared[i + 1], "(), ", -1);
    for (guint k = 0; parts[k] != NULL; k++)
      if (parts[k][0] != '\0') {
        const DsExpr *e = ds_expr_parse(exprs, parts[k], &error);
        g_assert_no_error(error);
        shape.dims[shape.ndim++] = ds_dim_from_expr(e);
      }
    g_strfreev(parts);
    /* A declared shape replaces the file's hint, as --input-shape does. */
    shapes->shapes[graph->node_row_ptr[var->id]] = shape;
  }
  ds_graph_shapes_symbolize_unknown(shapes, graph, exprs);
  gboolean ok = ds_infer_graph(graph, shapes, ctx, FALSE, &error);
  if (error != NULL)
    g_test_message("%s", error->message);
  g_assert_no_error(error);
  g_assert_true(ok);
  ds_graph_shapes_resolve(shapes, exprs);
  GString *out = g_string_new(NULL);
  for (guint h = 0; h < graph->n_heads; h++) {
    g_autofree char *text = ds_shape_to_string(ds_graph_shapes_get(shapes, graph, graph->heads[h]));
    g_string_append_printf(out, "%s%s", h ? "; " : "", text);
  }
  *heads = g_string_free(out, FALSE);
  /* Symbols made count too: a data-dependent dim made afresh on every pass would show here. */
  GPtrArray *list = ds_expr_ctx_list_facts(exprs);
  GString *f = g_string_new(NULL);
  g_string_append_printf(f, "%u symbols", ds_expr_ctx_get_n_symbols(exprs));
  for (guint i = 0; i < list->len; i++)
    g_string_append_printf(f, "; %s", ((const DsExprFact *)list->pdata[i])->text);
  *facts = g_string_free(f, FALSE);
  ds_expr_facts_free(list);
  ds_shape_ctx_free(ctx);
  ds_expr_ctx_free(exprs);
}

/* The graph and its static-dynamic partition give the same symbolic heads and facts. */
static void check_symbolic(const DsGraph *graph, const char *const *declared,
                           const char *expected_head)
{
  g_autoptr(DsPartition) p = label(graph, "static-dynamic");
  g_autoptr(DsGraph) built = build(p, "static-dynamic", NULL);
  g_autofree char *heads0 = NULL, *facts0 = NULL, *heads1 = NULL, *facts1 = NULL;
  infer_symbolic_graph(graph, declared, &heads0, &facts0);
  infer_symbolic_graph(built, declared, &heads1, &facts1);
  g_test_message("heads %s; facts %s", heads1, facts1);
  g_assert_cmpstr(heads0, ==, expected_head);
  g_assert_cmpstr(heads1, ==, heads0);
  g_assert_cmpstr(facts1, ==, facts0);
}

/* A symbolic inference runs through _CachedOp: bert still learns s1 == 384 and gets the same
 * output expression. */
static void test_symbolic_bert(void)
{
  g_autofree char *path = model_path("gluonnlp_static_bert_qa-symbol.json");
  g_autoptr(DsGraph) graph = load_path(path);
  static const char *const declared[] = {"data0", "(s0, s1)", "data1", "(s0, s1)",
                                         "data2", "(s0,)",    NULL};
  check_symbolic(graph, declared, "(s0, 384, 2)");
}

/* The data-dependent count of a dynamic region is one unbacked symbol, made once although the
 * fixpoint infers the region's node several times, and carried into the next region. */
static void test_symbolic_dynamic(void)
{
  if (!have_boolean_mask())
    return;
  g_autoptr(DsGraph) graph = load_text(chain_json);
  static const char *const declared[] = {"data", "(s0, 3)", "idx", "(s0,)", NULL};
  check_symbolic(graph, declared, "(u0, 3)");
}

/* Flattening a graph without subgraph nodes gives it back. */
static void test_flatten_none(void)
{
  GError *error = NULL;
  g_autofree char *sample = sample_path();
  g_autoptr(DsGraph) graph = load_path(sample);
  DsPartition *p = NULL;
  g_autoptr(DsGraph) flat = ds_partition_flatten(graph, &p, &error);
  g_assert_no_error(error);
  g_assert_true(flat == graph);
  g_assert_cmpuint(p->n_regions, ==, 0);
  for (guint i = 0; i < graph->n_nodes; i++)
    g_assert_cmpint(p->region_of_node[i], ==, -1);
  ds_partition_free(p);
}

/* ------------------------------------------------------------------------------------------ */
/* _CachedOp */

/* A hand-written file: x -> sg (_subgraph_op, MXNet's older name) whose subgraph holds a
 * nested _CachedOp; the heads are the relu and the nested node's square. */
static const char nested_json[] =
    "{\"nodes\": ["
    "{\"op\": \"null\", \"name\": \"x\", \"attrs\": {\"__shape__\": \"(2, 5)\", \"__dtype__\": "
    "\"1\"}, \"inputs\": []},"
    "{\"op\": \"_subgraph_op\", \"name\": \"sg\", \"inputs\": [[0, 0, 0]], \"subgraphs\": [{"
    "  \"nodes\": [{\"op\": \"null\", \"name\": \"in\", \"inputs\": []},"
    "   {\"op\": \"relu\", \"name\": \"r\", \"inputs\": [[0, 0, 0]]},"
    "   {\"op\": \"_CachedOp\", \"name\": \"inner\", \"inputs\": [[1, 0, 0]], \"subgraphs\": [{"
    "     \"nodes\": [{\"op\": \"null\", \"name\": \"y\", \"inputs\": []},"
    "      {\"op\": \"square\", \"name\": \"sq\", \"inputs\": [[0, 0, 0]]}],"
    "     \"arg_nodes\": [0], \"heads\": [[1, 0, 0]]}]}],"
    "  \"arg_nodes\": [0], \"heads\": [[1, 0, 0], [2, 0, 0]]}]},"
    "{\"op\": \"elemwise_add\", \"name\": \"sum\", \"inputs\": [[1, 0, 0], [1, 1, 0]]}],"
    " \"arg_nodes\": [0], \"heads\": [[2, 0, 0]],"
    " \"attrs\": {\"mxnet_version\": [\"int\", 10500]}}";

static void test_cached_op_nested(void)
{
  ds_test_cover("shape", DS_OP_CACHED_OP);
  GError *error = NULL;
  g_autoptr(DsGraph) graph = load_text(nested_json);
  DsNode *sg = ds_graph_find_node(graph, "sg");
  g_assert_true(sg->op == ds_op_lookup("_CachedOp"));
  g_assert_true(sg->op->traits & DS_OP_TRAIT_CONTROL_FLOW);
  g_assert_cmpuint(sg->n_outputs, ==, 2);
  g_autoptr(DsGraphShapes) shapes = infer(graph, NULL, TRUE);
  g_autofree char *s = ds_shape_to_string(ds_graph_shapes_get(shapes, graph, graph->heads[0]));
  g_assert_cmpstr(s, ==, "(2, 5)");
  g_assert_cmpint(shapes->dtypes[ds_graph_entry_id(graph, graph->heads[0])], ==, DS_DTYPE_FLOAT64);

  /* Flattening inlines both levels; the region is named after the outer node. */
  DsPartition *fp = NULL;
  g_autoptr(DsGraph) flat = ds_partition_flatten(graph, &fp, &error);
  g_assert_no_error(error);
  g_autoptr(DsPartition) p = fp;
  g_assert_cmpuint(flat->n_nodes, ==, 4);
  g_assert_cmpstr(flat->nodes[1]->name, ==, "r");
  g_assert_cmpstr(flat->nodes[2]->name, ==, "sq");
  g_assert_cmpuint(flat->nodes[3]->inputs[0].node_id, ==, 1);
  g_assert_cmpuint(flat->nodes[3]->inputs[1].node_id, ==, 2);
  g_assert_cmpuint(p->n_regions, ==, 1);
  g_assert_cmpstr(p->regions[0].name, ==, "sg");
  g_autofree char *names = region_names(p, 0);
  g_assert_cmpstr(names, ==, "r,sq");

  /* The input shape of a later inference wins over nothing: a different size flows through. */
  g_autoptr(DsGraphShapes) other = ds_graph_shapes_new(graph, &error);
  DsShape shape = ds_shape_from_concrete((int64_t[]){7, 3}, 2);
  other->shapes[0] = shape;
  DsShapeCtx *ctx = ds_shape_ctx_new();
  g_assert_true(ds_infer_graph(graph, other, ctx, TRUE, &error));
  ds_shape_ctx_free(ctx);
  g_autofree char *s2 = ds_shape_to_string(ds_graph_shapes_get(other, graph, graph->heads[0]));
  g_assert_cmpstr(s2, ==, "(7, 3)");
}

/* A subgraph node without its subgraph is refused at load, naming the node. */
static void test_cached_op_without_subgraph(void)
{
  static const char text[] =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
      " {\"op\": \"_CachedOp\", \"name\": \"lonely\", \"inputs\": [[0, 0, 0]]}],"
      " \"arg_nodes\": [0], \"heads\": [[1, 0, 0]],"
      " \"attrs\": {\"mxnet_version\": [\"int\", 10500]}}";
  GError *error = NULL;
  DsGraph *graph = ds_mxnet_json_load_data(text, strlen(text), "lonely.json", &error);
  g_assert_null(graph);
  g_assert_error(error, DS_ERROR, DS_ERROR_INVALID);
  g_test_message("%s", error->message);
  g_assert_nonnull(strstr(error->message, "'lonely'"));
  g_assert_nonnull(strstr(error->message, "subgraph"));
  g_clear_error(&error);
}

/* A nested contradiction is reported through the outer node. */
static void test_cached_op_contradiction(void)
{
  g_autoptr(DsGraph) graph = load_text(nested_json);
  GError *error = NULL;
  g_autoptr(DsGraphShapes) shapes = ds_graph_shapes_new(graph, &error);
  /* sum's output is (2, 5); claim sg's first output is (3, 5). */
  DsNode *sg = ds_graph_find_node(graph, "sg");
  shapes->shapes[graph->node_row_ptr[sg->id]] = ds_shape_from_concrete((int64_t[]){3, 5}, 2);
  DsShapeCtx *ctx = ds_shape_ctx_new();
  g_assert_false(ds_infer_graph(graph, shapes, ctx, TRUE, &error));
  ds_shape_ctx_free(ctx);
  g_assert_error(error, DS_ERROR, DS_ERROR_SHAPE);
  g_test_message("%s", error->message);
  g_assert_nonnull(strstr(error->message, "'sg'"));
  g_clear_error(&error);
}

/* ------------------------------------------------------------------------------------------ */
/* Every real model */

/* Sizes to declare, per file (others infer from their hints alone). */
static const struct {
  const char *file;
  const char *declared[7];
} model_inputs[] = {
    {"djl_mlp-symbol.json", {"data", "(2, 784)", NULL}},
    {"gluoncv_resnet18_v1-symbol.json", {"data", "(1, 3, 224, 224)", NULL}},
    {"gluoncv_squeezenet1.0-symbol.json", {"data", "(1, 3, 224, 224)", NULL}},
    {"mxnet_test_dnnl_model1.json", {"data", "(2, 3, 32, 32)", NULL}},
    {"gluonnlp_static_bert_qa-symbol.json",
     {"data0", "(2, 384)", "data1", "(2, 384)", "data2", "(2,)", NULL}},
    {"mxnet_legacy_save_000800.json", {"data", "(2, 16)", NULL}},
    {"mms_lstm_ptb-symbol.json", {"data", "(5, 2)", NULL}},
    {"gluoncv_mask_rcnn_resnet18_v1b_coco-symbol.json", {"data", "(1, 3, 256, 256)", NULL}},
    {"gluoncv_ssd_512_resnet50_v1-symbol.json", {"data", "(1, 3, 256, 256)", NULL}},
};

static const char *const *declared_for(const char *file)
{
  for (guint i = 0; i < G_N_ELEMENTS(model_inputs); i++)
    if (strcmp(model_inputs[i].file, file) == 0)
      return model_inputs[i].declared;
  return NULL;
}

static void test_all_models(void)
{
  GError *error = NULL;
  g_autofree char *dir_path = model_path("");
  g_autoptr(GDir) dir = g_dir_open(dir_path, 0, &error);
  g_assert_no_error(error);
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func(g_free);
  for (const char *name; (name = g_dir_read_name(dir)) != NULL;)
    if (g_str_has_suffix(name, ".json"))
      g_ptr_array_add(files, g_strdup(name));
  g_assert_cmpuint(files->len, >, 0);
  for (guint f = 0; f < files->len; f++) {
    g_autofree char *path = model_path(files->pdata[f]);
    g_autoptr(DsGraph) graph = load_path(path);
    const char *const *declared = declared_for(files->pdata[f]);
    g_autoptr(DsGraphShapes) shapes = infer(graph, declared, FALSE);
    for (const DsSubgraphProperty *const *prop = ds_subgraph_properties(); *prop != NULL; prop++) {
      g_autoptr(DsPartition) p = label(graph, (*prop)->name);
      g_test_message("%s: %s: %u regions", (const char *)files->pdata[f], (*prop)->name,
                     p->n_regions);
      /* Every op of a model is static, so static-dynamic makes one region per connected
       * part; each op is in exactly one. */
      if (strcmp((*prop)->name, "static-dynamic") == 0)
        for (guint v = 0; v < graph->n_nodes; v++)
          g_assert_cmpint(p->region_of_node[v] >= 0, ==,
                          !ds_node_is_variable(graph->nodes[v]) && graph->nodes[v]->op != NULL);
      g_autoptr(DsGraph) built = build(p, (*prop)->name, shapes);
      g_assert_cmpuint(built->n_heads, ==, graph->n_heads);
      g_autoptr(DsGraphShapes) built_shapes = infer(built, declared, FALSE);
      assert_same_heads(graph, shapes, built, built_shapes);
      g_autofree char *head =
          ds_shape_to_string(ds_graph_shapes_get(shapes, graph, graph->heads[0]));
      g_test_message("  %u nodes built, first output %s", built->n_nodes, head);
      assert_round_trip(built);
      assert_flattens_back(graph, p, built);
    }
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/engine/partition/properties", test_properties);
  g_test_add_func("/engine/partition/static-dynamic/chain", test_static_dynamic_chain);
  g_test_add_func("/engine/partition/static-dynamic/convex", test_static_dynamic_convex);
  g_test_add_func("/engine/partition/seed-retry", test_seed_retry);
  g_test_add_func("/engine/partition/dead-region", test_dead_region);
  g_test_add_func("/engine/partition/elementwise/models", test_elementwise_models);
  g_test_add_func("/engine/partition/build/sample", test_build_sample);
  g_test_add_func("/engine/partition/build/bert", test_build_bert);
  g_test_add_func("/engine/partition/build/hints", test_build_hints);
  g_test_add_func("/engine/partition/build/create-errors", test_build_create_errors);
  g_test_add_func("/engine/partition/build/symbolic-bert", test_symbolic_bert);
  g_test_add_func("/engine/partition/build/symbolic-dynamic", test_symbolic_dynamic);
  g_test_add_func("/engine/partition/flatten/none", test_flatten_none);
  g_test_add_func("/engine/partition/cached-op/nested", test_cached_op_nested);
  g_test_add_func("/engine/partition/cached-op/no-subgraph", test_cached_op_without_subgraph);
  g_test_add_func("/engine/partition/cached-op/contradiction", test_cached_op_contradiction);
  g_test_add_func("/engine/partition/models", test_all_models);
  return g_test_run();
}
