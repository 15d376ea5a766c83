/* ds-partition.c: labelling regions with a subgraph property, building the partitioned graph
 * around them, and flattening a partitioned graph back.
 *
 * Labelling grows one region at a time from seeds in node order, so the result does not
 * depend on hash order. A region grows by breadth-first search over the edges the property
 * accepts, is then cut down to a convex set (no path leaves it and comes back: such a region,
 * replaced by one node, would make the graph cyclic), and is then filtered. The graph built
 * from the regions lists them, and the nodes left outside, in a topological order of the
 * graph in which each region counts as one node (its quotient graph), ties going to the unit
 * whose first node comes first, so that a graph partitioned twice comes out the same.
 */
#include "ds-partition.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "ds-error.h"
#include "ds-op.h"

/* ------------------------------------------------------------------------------------------ */
/* Properties */

static gboolean has_trait(const DsNode *node, guint traits)
{
  return node->op != NULL && (node->op->traits & traits) != 0;
}

static gboolean any_op(const DsSubgraphProperty *prop, const DsNode *seed)
{
  (void)prop;
  return seed->op != NULL;
}

/* Ops no static plan can hold: those that decide their shapes from data, and loops and
 * branches, which run their subgraphs themselves (a `_CachedOp` is a region already: it is
 * inlined before anything runs). */
static gboolean runs_dynamically(const DsNode *node)
{
  if (node->op == NULL || node->op->id == DS_OP_CACHED_OP)
    return FALSE;
  return (node->op->traits & (DS_OP_TRAIT_DYNAMIC_SHAPE | DS_OP_TRAIT_CONTROL_FLOW)) != 0;
}

/* Seed 000's selector: a dynamic-shape op stops the growth both ways, so each one is a region
 * of its own and static regions grow around it up to it. */
static gboolean both_static(const DsSubgraphProperty *prop, const DsNode *node, const DsNode *other)
{
  (void)prop;
  return !runs_dynamically(node) && !runs_dynamically(other);
}

#define ELEMENTWISE_TRAITS (DS_OP_TRAIT_ELEMWISE | DS_OP_TRAIT_BROADCAST)

static gboolean elementwise_seed(const DsSubgraphProperty *prop, const DsNode *seed)
{
  (void)prop;
  return has_trait(seed, ELEMENTWISE_TRAITS);
}

static gboolean elementwise_edge(const DsSubgraphProperty *prop, const DsNode *node,
                                 const DsNode *other)
{
  (void)prop;
  (void)node;
  return has_trait(other, ELEMENTWISE_TRAITS);
}

/* One elementwise op alone fuses with nothing: not worth a subgraph. */
static void elementwise_filter(const DsSubgraphProperty *prop, const DsNode *const *nodes, guint n,
                               gboolean *keep)
{
  (void)prop;
  (void)nodes;
  if (n < 2)
    for (guint i = 0; i < n; i++)
      keep[i] = FALSE;
}

static const DsSubgraphProperty static_dynamic_property = {
    .name = "static-dynamic",
    .description = "each dynamic-shape op alone; the static regions between them",
    .select = any_op,
    .select_input = both_static,
    .select_output = both_static,
};

static const DsSubgraphProperty elementwise_property = {
    .name = "elementwise",
    .description = "chains of two or more elementwise and broadcast ops (fusion candidates)",
    .select = elementwise_seed,
    .select_input = elementwise_edge,
    .select_output = elementwise_edge,
    .filter = elementwise_filter,
};

/* Placement: static-dynamic's rule, and the same side of the host/device line. The property
 * is made per call (it carries the graph's per-node decision), so it is not in the list. */
typedef struct {
  DsSubgraphProperty base;
  const gboolean *on_device; /* per node id */
} PlacementProperty;

static gboolean same_placement(const DsSubgraphProperty *prop, const DsNode *node,
                               const DsNode *other)
{
  const PlacementProperty *pp = (const PlacementProperty *)prop;
  return both_static(prop, node, other) && pp->on_device[node->id] == pp->on_device[other->id];
}

static const DsSubgraphProperty *const properties[] = {
    &static_dynamic_property,
    &elementwise_property,
    NULL,
};

const DsSubgraphProperty *const *ds_subgraph_properties(void)
{
  return properties;
}

const DsSubgraphProperty *ds_subgraph_property_find(const char *name)
{
  for (guint i = 0; name != NULL && properties[i] != NULL; i++)
    if (strcmp(properties[i]->name, name) == 0)
      return properties[i];
  return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Partitions */

static DsPartition *partition_new(const DsGraph *graph, guint n_regions)
{
  DsPartition *partition = g_new0(DsPartition, 1);
  partition->graph = graph;
  partition->n_regions = n_regions;
  partition->regions = g_new0(DsRegion, MAX(n_regions, 1));
  partition->region_of_node = g_new(int, MAX(graph->n_nodes, 1));
  for (guint i = 0; i < graph->n_nodes; i++)
    partition->region_of_node[i] = -1;
  return partition;
}

void ds_partition_free(DsPartition *partition)
{
  if (partition == NULL)
    return;
  for (guint r = 0; r < partition->n_regions; r++) {
    g_free(partition->regions[r].nodes);
    g_free(partition->regions[r].name);
  }
  g_free(partition->regions);
  g_free(partition->region_of_node);
  g_free(partition);
}

static DsRegionKind kind_of_nodes(const DsGraph *graph, const guint *nodes, guint n)
{
  for (guint i = 0; i < n; i++)
    if (runs_dynamically(graph->nodes[nodes[i]]))
      return DS_REGION_DYNAMIC;
  return DS_REGION_STATIC;
}

/* A binary min-heap of node ids: the ready units of the quotient graph, by first node. */
typedef struct {
  guint *items;
  guint n;
} MinHeap;

static void heap_push(MinHeap *heap, guint value)
{
  guint i = heap->n++;
  heap->items[i] = value;
  while (i > 0 && heap->items[(i - 1) / 2] > heap->items[i]) {
    guint parent = (i - 1) / 2, tmp = heap->items[parent];
    heap->items[parent] = heap->items[i];
    heap->items[i] = tmp;
    i = parent;
  }
}

static guint heap_pop(MinHeap *heap)
{
  guint top = heap->items[0];
  heap->items[0] = heap->items[--heap->n];
  for (guint i = 0;;) {
    guint l = 2 * i + 1, r = l + 1, m = i;
    if (l < heap->n && heap->items[l] < heap->items[m])
      m = l;
    if (r < heap->n && heap->items[r] < heap->items[m])
      m = r;
    if (m == i)
      break;
    guint tmp = heap->items[m];
    heap->items[m] = heap->items[i];
    heap->items[i] = tmp;
    i = m;
  }
  return top;
}

/* The units of the quotient graph (each region one unit, each other node one) in a
 * topological order, ties by first node id; each unit is given by its first node. Regions
 * must be convex, which makes the quotient graph acyclic; FALSE if it is not. */
static gboolean quotient_order(const DsGraph *graph, const int *region_of_node, guint n_regions,
                               guint *order, guint *n_order)
{
  guint n = graph->n_nodes, n_units = n_regions + n;
  /* Unit of node v: its region, or n_regions + v. */
#define UNIT_OF(v) (region_of_node[v] >= 0 ? (guint)region_of_node[v] : n_regions + (v))
  g_autofree guint *first = g_new(guint, MAX(n_regions, 1));
  for (guint r = 0; r < n_regions; r++)
    first[r] = G_MAXUINT;
  for (guint v = 0; v < n; v++)
    if (region_of_node[v] >= 0)
      first[region_of_node[v]] = MIN(first[region_of_node[v]], v);

  /* Edges between units, as CSR lists of consumer units; a repeated edge is counted as often
   * in the in-degree as in the lists, so it cancels out. */
  g_autofree guint *start = g_new0(guint, n_units + 1);
  g_autofree guint *indegree = g_new0(guint, n_units);
  for (guint v = 0; v < n; v++)
    for (guint k = 0; k < graph->nodes[v]->n_inputs; k++) {
      guint u = graph->nodes[v]->inputs[k].node_id;
      if (UNIT_OF(u) != UNIT_OF(v)) {
        start[UNIT_OF(u) + 1]++;
        indegree[UNIT_OF(v)]++;
      }
    }
  for (guint i = 0; i < n_units; i++)
    start[i + 1] += start[i];
  g_autofree guint *fill = g_memdup2(start, sizeof(guint) * n_units);
  g_autofree guint *edges = g_new(guint, MAX(start[n_units], 1));
  for (guint v = 0; v < n; v++)
    for (guint k = 0; k < graph->nodes[v]->n_inputs; k++) {
      guint u = graph->nodes[v]->inputs[k].node_id;
      if (UNIT_OF(u) != UNIT_OF(v))
        edges[fill[UNIT_OF(u)]++] = UNIT_OF(v);
    }

  MinHeap heap = {g_new(guint, MAX(n, 1)), 0};
  for (guint v = 0; v < n; v++) {
    guint unit = UNIT_OF(v);
    gboolean is_first = region_of_node[v] < 0 || first[region_of_node[v]] == v;
    if (is_first && indegree[unit] == 0)
      heap_push(&heap, v);
  }
  *n_order = 0;
  while (heap.n > 0) {
    guint v = heap_pop(&heap), unit = UNIT_OF(v);
    order[(*n_order)++] = v;
    for (guint i = start[unit]; i < start[unit + 1]; i++) {
      guint next = edges[i];
      if (--indegree[next] == 0)
        heap_push(&heap, next < n_regions ? first[next] : next - n_regions);
    }
  }
  g_free(heap.items);
#undef UNIT_OF
  guint expected = n_regions;
  for (guint v = 0; v < n; v++)
    expected += region_of_node[v] < 0;
  return *n_order == expected;
}

/* ------------------------------------------------------------------------------------------ */
/* Labelling */

typedef struct {
  const DsGraph *graph;
  const DsSubgraphProperty *prop;
  guint *consumer_start; /* CSR: consumers of node v are consumers[start[v] .. start[v + 1]) */
  guint *consumers;
  int *label;          /* per node: its region (labelling order), or -1 */
  gboolean *in_region; /* the region being grown */
  gboolean *tainted;   /* reached from the region through a node outside it */
  GArray *members;     /* node ids of the region being grown */
} Labeler;

static void build_consumers(Labeler *lb)
{
  const DsGraph *graph = lb->graph;
  guint n = graph->n_nodes;
  lb->consumer_start = g_new0(guint, n + 1);
  for (guint v = 0; v < n; v++)
    for (guint k = 0; k < graph->nodes[v]->n_inputs; k++)
      lb->consumer_start[graph->nodes[v]->inputs[k].node_id + 1]++;
  for (guint v = 0; v < n; v++)
    lb->consumer_start[v + 1] += lb->consumer_start[v];
  g_autofree guint *fill = g_memdup2(lb->consumer_start, sizeof(guint) * (n + 1));
  lb->consumers = g_new(guint, MAX(lb->consumer_start[n], 1));
  for (guint v = 0; v < n; v++)
    for (guint k = 0; k < graph->nodes[v]->n_inputs; k++)
      lb->consumers[fill[graph->nodes[v]->inputs[k].node_id]++] = v;
}

/* May node `v` join the region being grown (the property aside)? */
static gboolean may_join(const Labeler *lb, guint v)
{
  const DsNode *node = lb->graph->nodes[v];
  return !lb->in_region[v] && lb->label[v] < 0 && !ds_node_is_variable(node) && node->op != NULL;
}

static void add_member(Labeler *lb, guint v)
{
  lb->in_region[v] = TRUE;
  g_array_append_val(lb->members, v);
}

/* Breadth-first growth from `seed` over the edges the property accepts. */
static void grow(Labeler *lb, guint seed)
{
  const DsGraph *graph = lb->graph;
  const DsSubgraphProperty *prop = lb->prop;
  g_array_set_size(lb->members, 0);
  add_member(lb, seed);
  for (guint i = 0; i < lb->members->len; i++) {
    const DsNode *node = graph->nodes[g_array_index(lb->members, guint, i)];
    for (guint k = 0; k < node->n_inputs; k++) {
      guint p = node->inputs[k].node_id;
      if (may_join(lb, p) && prop->select_input(prop, node, graph->nodes[p]))
        add_member(lb, p);
    }
    for (guint c = lb->consumer_start[node->id]; c < lb->consumer_start[node->id + 1]; c++) {
      guint v = lb->consumers[c];
      if (may_join(lb, v) && prop->select_output(prop, node, graph->nodes[v]))
        add_member(lb, v);
    }
  }
}

static int compare_guint(gconstpointer a, gconstpointer b)
{
  guint x = *(const guint *)a, y = *(const guint *)b;
  return x < y ? -1 : (x > y);
}

/* Keeps only the members still marked in_region, in node order. */
static void compact_members(Labeler *lb)
{
  guint kept = 0;
  for (guint i = 0; i < lb->members->len; i++) {
    guint v = g_array_index(lb->members, guint, i);
    if (lb->in_region[v])
      g_array_index(lb->members, guint, kept++) = v;
  }
  g_array_set_size(lb->members, kept);
}

/* Makes the region convex in one sweep in node order: a node outside it that reads the region
 * or a tainted node is tainted, and a region node that reads a tainted node leaves the region
 * (and is tainted in turn). What is left has no path out and back in: the first node outside
 * on such a path would be tainted, and so would every later one, and the node back in would
 * have been dropped. Returns TRUE if it dropped any. Members come out sorted. */
static gboolean make_convex(Labeler *lb)
{
  const DsGraph *graph = lb->graph;
  g_array_sort(lb->members, compare_guint);
  guint lo = g_array_index(lb->members, guint, 0);
  guint hi = g_array_index(lb->members, guint, lb->members->len - 1);
  gboolean dropped = FALSE;
  /* Nothing before the first member can be tainted, and nothing after the last matters. */
  for (guint v = lo; v <= hi; v++) {
    const DsNode *node = graph->nodes[v];
    gboolean reads_tainted = FALSE, reads_region = FALSE;
    for (guint k = 0; k < node->n_inputs; k++) {
      guint u = node->inputs[k].node_id;
      reads_tainted |= lb->tainted[u];
      reads_region |= lb->in_region[u];
    }
    if (lb->in_region[v]) {
      if (reads_tainted) {
        lb->in_region[v] = FALSE;
        lb->tainted[v] = TRUE;
        dropped = TRUE;
      }
    } else {
      lb->tainted[v] = reads_tainted || reads_region;
    }
  }
  for (guint v = lo; v <= hi; v++)
    lb->tainted[v] = FALSE;
  if (dropped)
    compact_members(lb);
  return dropped;
}

/* Applies the property's filter; TRUE if it dropped any member. */
static gboolean apply_filter(Labeler *lb)
{
  if (lb->prop->filter == NULL || lb->members->len == 0)
    return FALSE;
  guint n = lb->members->len;
  g_autofree const DsNode **nodes = g_new(const DsNode *, n);
  g_autofree gboolean *keep = g_new(gboolean, n);
  for (guint i = 0; i < n; i++) {
    nodes[i] = lb->graph->nodes[g_array_index(lb->members, guint, i)];
    keep[i] = TRUE;
  }
  lb->prop->filter(lb->prop, nodes, n, keep);
  gboolean dropped = FALSE;
  for (guint i = 0; i < n; i++)
    if (!keep[i]) {
      lb->in_region[nodes[i]->id] = FALSE;
      dropped = TRUE;
    }
  if (dropped)
    compact_members(lb);
  return dropped;
}

/* Grows, cuts and filters one region from `seed`; labels it `region` unless nothing is left.
 * The filter may cut a convex region into a non-convex one, and cutting may leave a region
 * the filter refuses: both run again until neither drops anything (each round shrinks it). */
static gboolean label_region(Labeler *lb, guint seed, int region)
{
  grow(lb, seed);
  do {
    if (lb->members->len > 0)
      make_convex(lb);
  } while (apply_filter(lb));
  for (guint i = 0; i < lb->members->len; i++) {
    guint v = g_array_index(lb->members, guint, i);
    lb->label[v] = region;
    lb->in_region[v] = FALSE;
  }
  return lb->members->len > 0;
}

/* The partition for labels given in labelling order: regions renumbered in the quotient
 * graph's topological order, their nodes listed, kinds and names given. */
static DsPartition *number_regions(const DsGraph *graph, const DsSubgraphProperty *prop,
                                   const int *label, guint n_labelled, GError **error)
{
  guint n = graph->n_nodes;
  g_autofree guint *order = g_new(guint, MAX(n, 1));
  guint n_order = 0;
  if (!quotient_order(graph, label, n_labelled, order, &n_order)) {
    /* Every region is convex when made, so this would be a bug here, not in the graph. */
    g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                "partition '%s': the regions depend on each other in a cycle", prop->name);
    return NULL;
  }
  DsPartition *partition = partition_new(graph, n_labelled);
  g_autofree int *final_index = g_new(int, MAX(n_labelled, 1));
  guint next = 0;
  for (guint i = 0; i < n_order; i++)
    if (label[order[i]] >= 0)
      final_index[label[order[i]]] = (int)next++;
  g_autofree guint *counts = g_new0(guint, MAX(n_labelled, 1));
  for (guint v = 0; v < n; v++)
    if (label[v] >= 0) {
      partition->region_of_node[v] = final_index[label[v]];
      counts[partition->region_of_node[v]]++;
    }
  for (guint r = 0; r < n_labelled; r++)
    partition->regions[r].nodes = g_new(guint, MAX(counts[r], 1));
  for (guint v = 0; v < n; v++) {
    int r = partition->region_of_node[v];
    if (r >= 0) {
      DsRegion *region = &partition->regions[r];
      region->nodes[region->n_nodes++] = v;
    }
  }
  g_autofree char *prefix = g_strdelimit(g_strdup(prop->name), "-", '_');
  for (guint r = 0; r < n_labelled; r++) {
    DsRegion *region = &partition->regions[r];
    region->kind = kind_of_nodes(graph, region->nodes, region->n_nodes);
    if (strcmp(prop->name, static_dynamic_property.name) == 0 ||
        strcmp(prop->name, "placement") == 0)
      region->name =
          g_strdup_printf("%s%u", region->kind == DS_REGION_DYNAMIC ? "dynamic" : "static", r);
    else
      region->name = g_strdup_printf("%s%u", prefix, r);
  }
  return partition;
}

gboolean ds_partition_device_runs(const DsBackend *device, const DsGraph *graph, const DsNode *node,
                                  const DsGraphShapes *shapes)
{
  if (ds_node_is_variable(node) || node->op == NULL || node->op->id == DS_OP_CACHED_OP ||
      has_trait(node, DS_OP_TRAIT_CONTROL_FLOW) || device->get_kernel(node->op->id) == NULL)
    return FALSE;
  if (device->supports == NULL)
    return TRUE;
  if (shapes == NULL)
    return FALSE;
  DsDType in[64], out[64];
  guint n_out = ds_node_n_op_outputs(node);
  if (node->n_inputs > G_N_ELEMENTS(in) || n_out > G_N_ELEMENTS(out))
    return FALSE;
  for (guint k = 0; k < node->n_inputs; k++)
    in[k] = shapes->dtypes[ds_graph_entry_id(graph, node->inputs[k])];
  for (guint k = 0; k < n_out; k++)
    out[k] = shapes->dtypes[graph->node_row_ptr[node->id] + k];
  for (guint k = 0; k < node->n_inputs; k++)
    if (in[k] == DS_DTYPE_UNKNOWN)
      return FALSE;
  for (guint k = 0; k < n_out; k++)
    if (out[k] == DS_DTYPE_UNKNOWN)
      return FALSE;
  return device->supports(node->op->id, node->param, in, (int)node->n_inputs, out, (int)n_out);
}

DsPartition *ds_partition_label_placement(const DsGraph *graph, const DsGraphShapes *shapes,
                                          const DsBackend *device, GError **error)
{
  g_autofree gboolean *on_device = g_new0(gboolean, MAX(graph->n_nodes, 1));
  for (guint i = 0; i < graph->n_nodes; i++)
    on_device[i] = ds_partition_device_runs(device, graph, graph->nodes[i], shapes);
  PlacementProperty prop = {
      .base =
          {
              .name = "placement",
              .description = "regions on the device backend and regions on the host",
              .select = any_op,
              .select_input = same_placement,
              .select_output = same_placement,
          },
      .on_device = on_device,
  };
  DsPartition *partition = ds_partition_label(graph, &prop.base, error);
  if (partition == NULL)
    return NULL;
  for (guint r = 0; r < partition->n_regions; r++) {
    DsRegion *region = &partition->regions[r];
    if (!on_device[region->nodes[0]])
      continue;
    region->backend = device;
    g_free(region->name);
    region->name = g_strdup_printf("%s%u", device->name, r);
  }
  return partition;
}

DsPartition *ds_partition_label(const DsGraph *graph, const DsSubgraphProperty *prop,
                                GError **error)
{
  g_return_val_if_fail(graph != NULL && prop != NULL, NULL);
  guint n = graph->n_nodes;
  Labeler lb = {
      .graph = graph,
      .prop = prop,
      .label = g_new(int, MAX(n, 1)),
      .in_region = g_new0(gboolean, MAX(n, 1)),
      .tainted = g_new0(gboolean, MAX(n, 1)),
      .members = g_array_new(FALSE, FALSE, sizeof(guint)),
  };
  for (guint v = 0; v < n; v++)
    lb.label[v] = -1;
  build_consumers(&lb);

  /* Seeds in node order. Convexity may drop a seed from its own region (the region reached
   * one of its producers, and another path from there leaves and comes back to the seed):
   * the seed then tries again against the graph with that region taken out. It only retries
   * after a region was made, which labels at least one node, so this ends; a seed whose
   * attempt made nothing (the filter refused it all) is not revisited. */
  int n_labelled = 0;
  for (guint v = 0; v < n; v++) {
    const DsNode *node = graph->nodes[v];
    if (ds_node_is_variable(node) || node->op == NULL || !prop->select(prop, node))
      continue;
    while (lb.label[v] < 0 && label_region(&lb, v, n_labelled))
      n_labelled++;
  }

  DsPartition *partition = number_regions(graph, prop, lb.label, (guint)n_labelled, error);
  g_free(lb.consumer_start);
  g_free(lb.consumers);
  g_free(lb.label);
  g_free(lb.in_region);
  g_free(lb.tainted);
  g_array_unref(lb.members);
  return partition;
}

/* ------------------------------------------------------------------------------------------ */
/* Region inputs and outputs */

/* Inputs with the version of their first use, which the node replacing the region reads. */
static void collect_inputs(const DsPartition *partition, guint r, GArray *ids, GArray *versions)
{
  const DsGraph *graph = partition->graph;
  const DsRegion *region = &partition->regions[r];
  g_autofree gboolean *seen = g_new0(gboolean, MAX(ds_graph_n_entries(graph), 1));
  for (guint i = 0; i < region->n_nodes; i++) {
    const DsNode *node = graph->nodes[region->nodes[i]];
    for (guint k = 0; k < node->n_inputs; k++) {
      DsEntry in = node->inputs[k];
      guint e = ds_graph_entry_id(graph, in);
      if (partition->region_of_node[in.node_id] == (int)r || seen[e])
        continue;
      seen[e] = TRUE;
      g_array_append_val(ids, e);
      if (versions != NULL)
        g_array_append_val(versions, in.version);
    }
  }
}

GArray *ds_region_inputs(const DsPartition *partition, guint region)
{
  g_return_val_if_fail(region < partition->n_regions, NULL);
  GArray *ids = g_array_new(FALSE, FALSE, sizeof(guint));
  collect_inputs(partition, region, ids, NULL);
  return ids;
}

GArray *ds_region_outputs(const DsPartition *partition, guint region)
{
  g_return_val_if_fail(region < partition->n_regions, NULL);
  const DsGraph *graph = partition->graph;
  const int *region_of = partition->region_of_node;
  g_autofree gboolean *read = g_new0(gboolean, MAX(ds_graph_n_entries(graph), 1));
  for (guint v = 0; v < graph->n_nodes; v++) {
    if (region_of[v] == (int)region)
      continue;
    const DsNode *node = graph->nodes[v];
    for (guint k = 0; k < node->n_inputs; k++)
      if (region_of[node->inputs[k].node_id] == (int)region)
        read[ds_graph_entry_id(graph, node->inputs[k])] = TRUE;
  }
  for (guint h = 0; h < graph->n_heads; h++)
    read[ds_graph_entry_id(graph, graph->heads[h])] = TRUE;
  GArray *ids = g_array_new(FALSE, FALSE, sizeof(guint));
  const DsRegion *r = &partition->regions[region];
  for (guint i = 0; i < r->n_nodes; i++)
    for (guint e = graph->node_row_ptr[r->nodes[i]]; e < graph->node_row_ptr[r->nodes[i] + 1]; e++)
      if (read[e])
        g_array_append_val(ids, e);
  /* Region nodes come in node order, so their entries already ascend. */
  return ids;
}

/* ------------------------------------------------------------------------------------------ */
/* Building */

DsNode *ds_partition_default_create_node(const DsSubgraphProperty *prop, DsGraph *subgraph,
                                         const DsGraphShapes *subgraph_shapes, const char *name,
                                         GError **error)
{
  (void)prop;
  (void)subgraph_shapes;
  const DsOpDef *op = ds_op_get(DS_OP_CACHED_OP);
  DsNode *node = ds_node_new(name, op->name);
  node->op = op;
  node->subgraphs = g_new(DsGraph *, 1);
  node->subgraphs[0] = ds_graph_ref(subgraph);
  node->n_subgraphs = 1;
  node->param = g_malloc0(op->param_size);
  if (!op->parse(node, node->param, error)) {
    ds_node_free(node);
    return NULL;
  }
  node->n_outputs = (guint)op->num_outputs(node->param);
  return node;
}

/* MXNet's `__shape__` text: "(1, 3, 224, 224)", "(8,)"; a dim that is not a constant is 0,
 * MXNet's unknown. */
static char *shape_hint(const DsShape *shape)
{
  GString *out = g_string_new("(");
  for (int i = 0; i < shape->ndim; i++)
    g_string_append_printf(out, "%s%" G_GINT64_FORMAT, i > 0 ? ", " : "",
                           ds_dim_is_const(shape->dims[i]) ? shape->dims[i].value : 0);
  g_string_append(out, shape->ndim == 1 ? ",)" : ")");
  return g_string_free(out, FALSE);
}

/* A name not yet in `names` (which takes a copy): `base`, else `base_1`, `base_2`... */
static char *unique_name(GHashTable *names, const char *base)
{
  char *name = g_strdup(base);
  for (guint i = 1; g_hash_table_contains(names, name); i++) {
    g_free(name);
    name = g_strdup_printf("%s_%u", base, i);
  }
  g_hash_table_add(names, g_strdup(name));
  return name;
}

/* State of one build: where each entry of the source graph went in the result. */
typedef struct {
  const DsPartition *partition;
  const DsSubgraphProperty *prop;
  const DsGraphShapes *shapes;
  const DsGraph *graph;
  DsGraph *result;
  guint *node_of_entry; /* source entry -> source node */
  DsEntry *map;         /* source entry -> result entry (version unused) */
  DsEntry *sub_map;     /* source entry -> entry of the subgraph being built */
} Builder;

static DsEntry remap(const DsEntry *map, const DsGraph *graph, DsEntry entry)
{
  DsEntry to = map[ds_graph_entry_id(graph, entry)];
  to.version = entry.version;
  return to;
}

static void copy_plain_node(Builder *b, const DsNode *node)
{
  DsNode *copy = ds_node_copy(node);
  for (guint k = 0; k < copy->n_inputs; k++)
    copy->inputs[k] = remap(b->map, b->graph, node->inputs[k]);
  ds_graph_append_node(b->result, copy);
  for (guint j = 0; j < node->n_outputs; j++)
    b->map[b->graph->node_row_ptr[node->id] + j] = (DsEntry){copy->id, j, 0};
}

/* The region's own graph: a variable per input (in input order, named as list_outputs names
 * the entry, with the partition-time shape and dtype as hints), the region's nodes, and its
 * outputs as heads. */
static DsGraph *region_subgraph(Builder *b, guint r, const GArray *inputs, const GArray *outputs,
                                GError **error)
{
  const DsGraph *graph = b->graph;
  const DsRegion *region = &b->partition->regions[r];
  g_autoptr(DsGraph) sub = ds_graph_new();
  sub->mxnet_version = graph->mxnet_version;
  g_autoptr(GHashTable) names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < region->n_nodes; i++)
    g_hash_table_add(names, g_strdup(graph->nodes[region->nodes[i]]->name));

  sub->arg_nodes = g_new(guint, MAX(inputs->len, 1));
  for (guint k = 0; k < inputs->len; k++) {
    guint e = g_array_index(inputs, guint, k), src = b->node_of_entry[e];
    DsEntry entry = {src, e - graph->node_row_ptr[src], 0};
    g_autofree char *base = ds_graph_dup_entry_name(graph, entry);
    g_autofree char *name = unique_name(names, base);
    DsNode *var = ds_graph_add_node(sub, name, "null");
    if (b->shapes != NULL && b->shapes->shapes[e].ndim >= 0) {
      g_autofree char *hint = shape_hint(&b->shapes->shapes[e]);
      ds_node_add_attr(var, "__shape__", hint);
    }
    if (b->shapes != NULL && b->shapes->dtypes[e] != DS_DTYPE_UNKNOWN) {
      char code[16];
      g_snprintf(code, sizeof code, "%d", (int)b->shapes->dtypes[e]);
      ds_node_add_attr(var, "__dtype__", code);
    }
    b->sub_map[e] = (DsEntry){var->id, 0, 0};
    sub->arg_nodes[sub->n_arg_nodes++] = var->id;
  }
  for (guint i = 0; i < region->n_nodes; i++) {
    const DsNode *node = graph->nodes[region->nodes[i]];
    DsNode *copy = ds_node_copy(node);
    for (guint k = 0; k < copy->n_inputs; k++)
      copy->inputs[k] = remap(b->sub_map, graph, node->inputs[k]);
    ds_graph_append_node(sub, copy);
    for (guint j = 0; j < node->n_outputs; j++)
      b->sub_map[graph->node_row_ptr[node->id] + j] = (DsEntry){copy->id, j, 0};
  }
  sub->heads = g_new(DsEntry, MAX(outputs->len, 1));
  for (guint j = 0; j < outputs->len; j++)
    sub->heads[sub->n_heads++] = b->sub_map[g_array_index(outputs, guint, j)];
  ds_graph_update_row_ptr(sub);
  if (!ds_graph_parse_params(sub, error) || !ds_graph_validate(sub, region->name, error))
    return NULL;
  return g_steal_pointer(&sub);
}

/* Replaces region `r` by the node the property creates around its subgraph. */
static gboolean build_region(Builder *b, guint r, GError **error)
{
  const DsGraph *graph = b->graph;
  const DsRegion *region = &b->partition->regions[r];
  g_autoptr(GArray) inputs = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) versions = g_array_new(FALSE, FALSE, sizeof(guint32));
  collect_inputs(b->partition, r, inputs, versions);
  g_autoptr(GArray) outputs = ds_region_outputs(b->partition, r);
  /* A region nothing reads (dead code) still needs an output: a subgraph op has at least one.
   * Its last node's first output serves, and stays unread. */
  if (outputs->len == 0) {
    guint last = region->nodes[region->n_nodes - 1];
    g_array_append_val(outputs, graph->node_row_ptr[last]);
  }

  g_autoptr(DsGraph) sub = region_subgraph(b, r, inputs, outputs, error);
  if (sub == NULL)
    return FALSE;
  /* What a backend compiling the region would see: shapes inferred from the hints alone
   * (concretely: a dim not known as a constant stays unknown). */
  g_autoptr(DsGraphShapes) sub_shapes = NULL;
  if (b->shapes != NULL) {
    sub_shapes = ds_graph_shapes_new(sub, error);
    if (sub_shapes == NULL)
      return FALSE;
    DsShapeCtx *ctx = ds_shape_ctx_new();
    gboolean ok = ds_infer_graph(sub, sub_shapes, ctx, FALSE, error);
    ds_shape_ctx_free(ctx);
    if (!ok) {
      g_prefix_error(error, "region '%s': ", region->name);
      return FALSE;
    }
  }

  DsNode *node =
      b->prop->create_node != NULL
          ? b->prop->create_node(b->prop, sub, sub_shapes, region->name, error)
          : ds_partition_default_create_node(b->prop, sub, sub_shapes, region->name, error);
  if (node == NULL)
    return FALSE;
  if (node->n_outputs != outputs->len) {
    g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                "property '%s': the node made for region '%s' has %u outputs, the region %u",
                b->prop->name, region->name, node->n_outputs, outputs->len);
    ds_node_free(node);
    return FALSE;
  }
  /* The node's inputs are the region's, wherever they went in the result. */
  g_free(node->inputs);
  node->inputs = g_new(DsEntry, MAX(inputs->len, 1));
  node->n_inputs = inputs->len;
  for (guint k = 0; k < inputs->len; k++) {
    node->inputs[k] = b->map[g_array_index(inputs, guint, k)];
    node->inputs[k].version = g_array_index(versions, guint32, k);
  }
  if (node->op != NULL && node->param != NULL &&
      (guint)node->op->num_inputs(node->param) != node->n_inputs) {
    g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                "property '%s': the node made for region '%s' takes %d inputs, the region %u",
                b->prop->name, region->name, node->op->num_inputs(node->param), inputs->len);
    ds_node_free(node);
    return FALSE;
  }
  ds_graph_append_node(b->result, node);
  for (guint j = 0; j < outputs->len; j++)
    b->map[g_array_index(outputs, guint, j)] = (DsEntry){node->id, j, 0};
  return TRUE;
}

/* Heads, arguments and graph attributes of `result`, from `graph` through `map`; then the
 * checks every graph passes. */
static gboolean finish_graph(DsGraph *result, const DsGraph *graph, const DsEntry *map,
                             GError **error)
{
  result->heads = g_new(DsEntry, MAX(graph->n_heads, 1));
  for (guint h = 0; h < graph->n_heads; h++)
    result->heads[result->n_heads++] = remap(map, graph, graph->heads[h]);
  if (graph->head_names != NULL)
    result->head_names = g_strdupv(graph->head_names);
  result->arg_nodes = g_new(guint, MAX(graph->n_arg_nodes, 1));
  for (guint a = 0; a < graph->n_arg_nodes; a++)
    result->arg_nodes[result->n_arg_nodes++] =
        map[graph->node_row_ptr[graph->arg_nodes[a]]].node_id;
  if (graph->attrs != NULL)
    result->attrs = cJSON_Duplicate(graph->attrs, TRUE);
  result->mxnet_version = graph->mxnet_version;
  ds_graph_update_row_ptr(result);
  return ds_graph_parse_params(result, error) && ds_graph_validate(result, NULL, error);
}

DsGraph *ds_partition_build(const DsPartition *partition, const DsSubgraphProperty *prop,
                            const DsGraphShapes *shapes, GError **error)
{
  g_return_val_if_fail(partition != NULL && prop != NULL, NULL);
  const DsGraph *graph = partition->graph;
  guint n = graph->n_nodes, n_entries = ds_graph_n_entries(graph);
  g_return_val_if_fail(shapes == NULL || shapes->n_entries == n_entries, NULL);

  g_autofree guint *order = g_new(guint, MAX(n, 1));
  guint n_order = 0;
  if (!quotient_order(graph, partition->region_of_node, partition->n_regions, order, &n_order)) {
    g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                "partition '%s': a region is not convex (a path leaves it and comes back), so "
                "its regions depend on each other in a cycle",
                prop->name);
    return NULL;
  }
  g_autoptr(DsGraph) result = ds_graph_new();
  g_autofree guint *node_of_entry = g_new(guint, MAX(n_entries, 1));
  for (guint v = 0; v < n; v++)
    for (guint e = graph->node_row_ptr[v]; e < graph->node_row_ptr[v + 1]; e++)
      node_of_entry[e] = v;
  g_autofree DsEntry *map = g_new0(DsEntry, MAX(n_entries, 1));
  g_autofree DsEntry *sub_map = g_new0(DsEntry, MAX(n_entries, 1));
  Builder b = {partition, prop, shapes, graph, result, node_of_entry, map, sub_map};

  for (guint i = 0; i < n_order; i++) {
    int r = partition->region_of_node[order[i]];
    if (r < 0)
      copy_plain_node(&b, graph->nodes[order[i]]);
    else if (!build_region(&b, (guint)r, error))
      return NULL;
  }
  if (!finish_graph(result, graph, map, error))
    return NULL;
  return g_steal_pointer(&result);
}

/* ------------------------------------------------------------------------------------------ */
/* Flattening */

static gboolean is_subgraph_node(const DsNode *node)
{
  return node->op != NULL && node->op->id == DS_OP_CACHED_OP && node->n_subgraphs > 0;
}

/* Appends the op nodes of `node`'s subgraph to `result`, inlining nested subgraph nodes too.
 * `inputs` are the result entries the node reads; `outputs` receive where its heads went.
 * References keep their own versions. */
static gboolean inline_subgraph(DsGraph *result, const DsNode *node, const DsEntry *inputs,
                                DsEntry *outputs, GError **error)
{
  const DsGraph *sub = node->subgraphs[0];
  if (node->n_outputs > sub->n_heads) {
    g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                "node '%s' (%s): has %u outputs, but its subgraph only %u", node->name,
                node->op_name, node->n_outputs, sub->n_heads);
    return FALSE;
  }
  g_autofree DsEntry *map = g_new0(DsEntry, MAX(ds_graph_n_entries(sub), 1));
  guint k = 0;
  for (guint i = 0; i < sub->n_nodes; i++) {
    const DsNode *inner = sub->nodes[i];
    guint base = sub->node_row_ptr[i];
    if (ds_node_is_variable(inner)) {
      if (k >= node->n_inputs)
        break;
      for (guint j = 0; j < inner->n_outputs; j++)
        map[base + j] = inputs[k];
      k++;
    } else if (is_subgraph_node(inner)) {
      g_autofree DsEntry *in = g_new(DsEntry, MAX(inner->n_inputs, 1));
      for (guint j = 0; j < inner->n_inputs; j++)
        in[j] = remap(map, sub, inner->inputs[j]);
      if (!inline_subgraph(result, inner, in, &map[base], error))
        return FALSE;
    } else {
      DsNode *copy = ds_node_copy(inner);
      for (guint j = 0; j < copy->n_inputs; j++)
        copy->inputs[j] = remap(map, sub, inner->inputs[j]);
      ds_graph_append_node(result, copy);
      for (guint j = 0; j < inner->n_outputs; j++)
        map[base + j] = (DsEntry){copy->id, j, 0};
    }
  }
  guint n_vars = 0;
  for (guint i = 0; i < sub->n_nodes; i++)
    n_vars += ds_node_is_variable(sub->nodes[i]);
  if (n_vars != node->n_inputs) {
    g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                "node '%s' (%s): has %u inputs, but its subgraph %u variables", node->name,
                node->op_name, node->n_inputs, n_vars);
    return FALSE;
  }
  for (guint h = 0; h < node->n_outputs; h++)
    outputs[h] = remap(map, sub, sub->heads[h]);
  return TRUE;
}

DsGraph *ds_partition_flatten(DsGraph *graph, DsPartition **partition, GError **error)
{
  g_return_val_if_fail(graph != NULL, NULL);
  gboolean any = FALSE;
  for (guint v = 0; v < graph->n_nodes && !any; v++)
    any = is_subgraph_node(graph->nodes[v]);
  if (!any) {
    if (partition != NULL)
      *partition = partition_new(graph, 0);
    return ds_graph_ref(graph);
  }

  g_autoptr(DsGraph) result = ds_graph_new();
  g_autofree DsEntry *map = g_new0(DsEntry, MAX(ds_graph_n_entries(graph), 1));
  /* One region per subgraph node: its name and the range of result nodes it became. */
  g_autoptr(GArray) firsts = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) ends = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GPtrArray) names = g_ptr_array_new();
  for (guint v = 0; v < graph->n_nodes; v++) {
    const DsNode *node = graph->nodes[v];
    guint base = graph->node_row_ptr[v];
    if (!is_subgraph_node(node)) {
      DsNode *copy = ds_node_copy(node);
      for (guint k = 0; k < copy->n_inputs; k++)
        copy->inputs[k] = remap(map, graph, node->inputs[k]);
      ds_graph_append_node(result, copy);
      for (guint j = 0; j < node->n_outputs; j++)
        map[base + j] = (DsEntry){copy->id, j, 0};
      continue;
    }
    g_autofree DsEntry *in = g_new(DsEntry, MAX(node->n_inputs, 1));
    for (guint k = 0; k < node->n_inputs; k++)
      in[k] = remap(map, graph, node->inputs[k]);
    guint first = result->n_nodes;
    if (!inline_subgraph(result, node, in, &map[base], error))
      return NULL;
    /* A subgraph that only passes its inputs through leaves nothing to run. */
    if (result->n_nodes > first) {
      g_array_append_val(firsts, first);
      g_array_append_val(ends, result->n_nodes);
      g_ptr_array_add(names, node->name);
    }
  }
  if (!finish_graph(result, graph, map, error))
    return NULL;

  if (partition != NULL) {
    DsPartition *p = partition_new(result, firsts->len);
    for (guint r = 0; r < firsts->len; r++) {
      DsRegion *region = &p->regions[r];
      guint first = g_array_index(firsts, guint, r), end = g_array_index(ends, guint, r);
      region->n_nodes = end - first;
      region->nodes = g_new(guint, region->n_nodes);
      for (guint v = first; v < end; v++) {
        region->nodes[v - first] = v;
        p->region_of_node[v] = (int)r;
      }
      region->kind = kind_of_nodes(result, region->nodes, region->n_nodes);
      region->name = g_strdup(names->pdata[r]);
    }
    *partition = p;
  }
  return g_steal_pointer(&result);
}
