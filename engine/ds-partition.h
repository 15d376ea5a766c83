/* ds-partition.h: graph partitioning through subgraph properties (MXNet's subgraph API).
 *
 * A property decides which nodes belong together. Its selector grows a region from a seed
 * node: `select` says whether a node may start a region, `select_input` and `select_output`
 * whether the region may grow from a node to one of its producers or consumers, and `filter`
 * may shrink or reject a finished region. One generic pass (ds_partition_label) applies any
 * property: it grows regions from seeds in topological order, keeps every region convex (no
 * path leaves a region and comes back, which would make the partitioned graph cyclic), and
 * then filters. ds_partition_build() replaces each region by the node the property's
 * `create_node` builds around the region's subgraph; the default builds MXNet's default
 * subgraph op (`_CachedOp`, see ops/ds-ops-subgraph.h), whose subgraph the executor runs.
 *
 * Properties built in:
 *   static-dynamic: every op that decides its output shape from data (DS_OP_TRAIT_DYNAMIC_SHAPE)
 *                   is a region of its own; maximal connected static regions between them
 *                   (seed 000's three subgraphs around one dynamic op);
 *   elementwise:    maximal chains of elementwise and broadcast ops of two or more nodes,
 *                   fusion candidates; other ops stay as they are.
 *
 * Memory policy: partitions and built graphs are owned by the caller; a property is static.
 */
#pragma once

#include "ds-backend.h"
#include "ds-graph.h"
#include "ds-infer.h"

typedef struct _DsSubgraphProperty DsSubgraphProperty;
typedef struct _DsPartition DsPartition;

struct _DsSubgraphProperty {
  const char *name;        /* "static-dynamic", as --property spells it */
  const char *description; /* one line for --help */
  /* May `seed` start a region? Variables are never selected. */
  gboolean (*select)(const DsSubgraphProperty *prop, const DsNode *seed);
  /* May the region grow from `node` (in it) to its producer `input` / consumer `output`? */
  gboolean (*select_input)(const DsSubgraphProperty *prop, const DsNode *node,
                           const DsNode *input);
  gboolean (*select_output)(const DsSubgraphProperty *prop, const DsNode *node,
                            const DsNode *output);
  /* Shrinks a region: `nodes` (n of them, topological order) are the candidates; the
   * function clears keep[i] for the ones to drop (all of them to reject the region). NULL
   * keeps every region. Dropped nodes may seed later regions. */
  void (*filter)(const DsSubgraphProperty *prop, const DsNode *const *nodes, guint n,
                 gboolean *keep);
  /* Builds the node that replaces region `region` (named `name`): it gets the region's
   * subgraph (variables for its inputs, in the order of the node's inputs, with `__shape__`
   * and `__dtype__` from the shapes known at partition time, 0 for a dim not known as a
   * constant) and the subgraph's shapes after inference from those inputs (NULL if the
   * caller gave none), so a backend could compile it. It must take a reference on `subgraph`
   * if it keeps it. NULL means ds_partition_default_create_node(). */
  DsNode *(*create_node)(const DsSubgraphProperty *prop, DsGraph *subgraph,
                         const DsGraphShapes *subgraph_shapes, const char *name,
                         GError **error);
};

/* The properties built in, and the one called `name` (NULL if none). */
const DsSubgraphProperty *const *ds_subgraph_properties(void);
const DsSubgraphProperty *ds_subgraph_property_find(const char *name);

/* A fresh `_CachedOp` node (not in any graph) owning a reference on `subgraph`. */
DsNode *ds_partition_default_create_node(const DsSubgraphProperty *prop, DsGraph *subgraph,
                                         const DsGraphShapes *subgraph_shapes,
                                         const char *name, GError **error);

typedef enum {
  DS_REGION_STATIC,  /* no dynamic-shape op: one cached plan per input sizes */
  DS_REGION_DYNAMIC, /* holds a dynamic-shape op: run imperatively */
} DsRegionKind;

typedef struct {
  guint n_nodes;
  guint *nodes;        /* node ids of the original graph, topological order */
  DsRegionKind kind;
  char *name;          /* "static0", "dynamic1", "elementwise2", "cuda3"... */
  const DsBackend *backend; /* placement: the device backend its nodes run on; NULL: the host */
} DsRegion;

struct _DsPartition {
  const DsGraph *graph; /* the graph it labels (borrowed: must outlive the partition) */
  guint n_regions;
  DsRegion *regions;    /* in an order that runs: a region's producers come first */
  int *region_of_node;  /* per node: its region, or -1 (variables, unselected ops) */
};

/* Labels the regions `prop` selects in `graph`. Nodes whose op is unknown are never selected. */
DsPartition *ds_partition_label(const DsGraph *graph, const DsSubgraphProperty *prop,
                                GError **error);
void ds_partition_free(DsPartition *partition);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsPartition, ds_partition_free)

/* Backend placement (seed 004's accelerator half): the static-dynamic regions, each split
 * further so that its nodes all run on `device` or all on the host. A node runs on `device`
 * when the backend has its kernel and supports its dtypes (from `shapes`, which may be
 * partial: an unknown dtype keeps the node on the host); loops, branches and `_CachedOp`
 * never do. Device regions are named after the backend ("cuda0") and carry it in `backend`;
 * the dynamic executor copies tensors across where host and device regions meet. */
DsPartition *ds_partition_label_placement(const DsGraph *graph, const DsGraphShapes *shapes,
                                          const DsBackend *device, GError **error);
/* Whether `device` can run `node` (the rule above). */
gboolean ds_partition_device_runs(const DsBackend *device, const DsGraph *graph,
                                  const DsNode *node, const DsGraphShapes *shapes);

/* Inputs and outputs of a region, as entry ids of the original graph: inputs are the entries
 * its nodes read that it does not produce (first-use order, no duplicates); outputs are the
 * entries it produces that another node or the graph's heads read (ascending). Caller frees. */
GArray *ds_region_inputs(const DsPartition *partition, guint region);
GArray *ds_region_outputs(const DsPartition *partition, guint region);

/* The partitioned graph: every region replaced by the node `prop` creates (named after the
 * region), unselected nodes and variables copied, heads kept. `shapes` (of `graph`, may be
 * symbolic or partial, or NULL) give the subgraph inputs their `__shape__`/`__dtype__`. The
 * result saves to MXNet JSON with the regions in each node's "subgraphs". */
DsGraph *ds_partition_build(const DsPartition *partition, const DsSubgraphProperty *prop,
                            const DsGraphShapes *shapes, GError **error);

/* The inverse, for running a partitioned file: every `_CachedOp` node's subgraph inlined
 * (recursively), and in `*partition` (if not NULL) one region per inlined node, so the
 * executor runs the file's regions as they were saved. A graph without subgraph nodes comes
 * back as a new reference with no regions labelled. */
DsGraph *ds_partition_flatten(DsGraph *graph, DsPartition **partition, GError **error);
