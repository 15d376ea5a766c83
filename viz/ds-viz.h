/* ds-viz.h: what a graph picture shows, before anything is laid out.
 *
 * A scene is the model as it is drawn: op nodes, inputs (weights optional), edges labelled
 * with shapes, partition regions and control-flow bodies as nested clusters, any of which
 * can be collapsed into one node, and colours from a profile overlay with their legend. It
 * knows nothing of Graphviz (ds-viz-layout.h lays it out), so what is drawn can be tested by
 * counting.
 *
 * Memory policy: a scene owns its strings; it refers to the graph's nodes, so the graph must
 * outlive it.
 */
#pragma once

#include "ds-graph.h"
#include "ds-infer.h"
#include "ds-partition.h"
#include "ds-report.h"

typedef enum {
  DS_VIZ_NODE_OP,
  DS_VIZ_NODE_INPUT,     /* a model input (data) */
  DS_VIZ_NODE_WEIGHT,    /* a weight or auxiliary state */
  DS_VIZ_NODE_SUBINPUT,  /* a variable of a loop body or branch: what the loop feeds it */
  DS_VIZ_NODE_COLLAPSED, /* a region or control-flow node drawn as one box */
} DsVizNodeKind;

typedef enum {
  DS_VIZ_CLUSTER_STATIC,  /* a static partition region */
  DS_VIZ_CLUSTER_DYNAMIC, /* a region holding a dynamic-shape op */
  DS_VIZ_CLUSTER_DEVICE,  /* a region placed on a device backend (CUDA) */
  DS_VIZ_CLUSTER_LOOP,    /* a _foreach or _while_loop node and its subgraphs */
  DS_VIZ_CLUSTER_COND,    /* a _cond node and its subgraphs */
  DS_VIZ_CLUSTER_BODY,    /* one subgraph: body, cond, func, then, else */
  DS_VIZ_CLUSTER_GROUP,   /* nodes of one name scope (a layer), ds-viz-scopes.h */
} DsVizClusterKind;

typedef enum {
  DS_VIZ_OVERLAY_NONE,
  DS_VIZ_OVERLAY_TIME,    /* heat map of each node's total time */
  DS_VIZ_OVERLAY_MEMORY,  /* fresh against reused output bytes */
  DS_VIZ_OVERLAY_DYNAMIC, /* the output sizes data-dependent ops produced */
} DsVizOverlay;

typedef struct {
  DsVizNodeKind kind;
  char *id;    /* unique: the node's path ("while0/func/fc1"), or the cluster's */
  char *label; /* lines separated by '\n': name, op, key attributes, overlay value */
  char *fill;  /* "#rrggbb" */
  char *tooltip;
  char *key;          /* an op node's profile key ("while0/fc1", docs/profile-report.md) */
  gint cluster;       /* innermost cluster holding it, or -1 */
  const DsNode *node; /* NULL for a collapsed cluster */
} DsVizNode;

typedef struct {
  guint from, to; /* node indices */
  char *label;    /* "(s0, 10*s1) = (4, 320)", or NULL when unknown */
} DsVizEdge;

typedef struct {
  DsVizClusterKind kind;
  char *id;    /* "static0", "while0", "while0/func" */
  char *label; /* "while  while0", "then", "static0 (static)", "cuda2 (static, on cuda)" */
  char *fill;
  gint parent;   /* enclosing cluster, or -1 */
  guint n_nodes; /* graph nodes inside it, nested ones included */
} DsVizCluster;

typedef struct {
  char *fill;
  char *text;
} DsVizLegendEntry;

typedef struct {
  char *title;
  GArray *nodes;        /* DsVizNode */
  GArray *edges;        /* DsVizEdge */
  GArray *clusters;     /* DsVizCluster */
  GArray *legend;       /* DsVizLegendEntry */
  GPtrArray *collapsed; /* ids of the regions, bodies and groups drawn as one box */
  GHashTable *hidden_in; /* name of a top-level node inside a collapsed group -> the group's
                          * id (its scope), which expands to show it */
} DsVizScene;

/* Regions and bodies are collapsed when more than this many graph nodes would be drawn,
 * largest first, unless the caller asks for none. */
#define DS_VIZ_AUTO_COLLAPSE_NODES 1200

typedef struct {
  const DsPartition *partition;  /* regions as clusters, or NULL */
  const DsGraphShapes *symbolic; /* edge labels: symbolic shapes, or NULL */
  const DsGraphShapes *concrete; /* edge labels: "= (4, 320)" where they differ, or NULL */
  const gboolean *is_weight;     /* per variable node: hide-able, or NULL (none are) */
  guint n_forward_nodes;         /* with a backward pass, the graph's first nodes are the
                                  * forward pass's and the others are drawn as gradient nodes;
                                  * 0 without one */
  const DsReport *report;        /* a profile (docs/profile-report.md), or NULL */
  DsVizOverlay overlay;
  gint show_weights; /* 1 show, 0 hide, -1 auto (hidden over 200 op nodes) */
  gboolean fold_weights; /* weights drawn inside the box of the op reading them, by role and
                          * shape, instead of as boxes of their own */
  gboolean collapse_all;
  gboolean collapse_none;      /* also turns automatic collapsing off */
  const char *const *collapse; /* ids of regions or bodies to collapse, NULL-terminated */
  const char *const *expand;   /* ids never collapsed automatically (the user opened them) */
  const char *focus;           /* lay out only this region or body's inside, or NULL */
  gboolean group_scopes;       /* a big graph's top-level nodes in groups by name scope
                                * (ds-viz-scopes.h), collapsed unless in `expand`; not with
                                * a partition */
  const char *title;
} DsVizOptions;

/* The scene for `graph` (with its control-flow subgraphs). Errors: an overlay without a
 * report, a report that does not say what the overlay needs, a collapse or focus id that
 * names no region or body (the message lists them). */
DsVizScene *ds_viz_scene_build(DsGraph *graph, const DsVizOptions *options, GError **error);
void ds_viz_scene_free(DsVizScene *scene);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsVizScene, ds_viz_scene_free)

/* A profile's events summed by node key (DsVizNode.key): every instance of the node in every
 * loop iteration and run. */
typedef struct {
  guint64 total_ns, count;
  guint64 fresh, reused; /* output bytes, docs/profile-report.md */
  char *last_shapes;     /* output shapes of the last execution: "(4, 32), (4,)" */
  /* Kernel time on the GPU, when the report has it (has_gpu). */
  guint64 gpu_ns;
  gboolean has_gpu;
} DsVizNodeProfile;

/* key -> DsVizNodeProfile. Caller unrefs. */
GHashTable *ds_viz_index_profile(const DsReport *report);

/* A duration as the overlay writes it: "1.25 ms", "830.0 µs", "120 ns" (caller frees). */
char *ds_viz_format_ns(guint64 ns);

/* The cluster with this id, or -1. */
gint ds_viz_scene_find_cluster(const DsVizScene *scene, const char *id);
