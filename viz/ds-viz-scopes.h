/* ds-viz-scopes.h: a big graph's nodes in groups by name scope, as its author built it.
 *
 * Exporters name nodes after the blocks that made them: Gluon writes block prefixes, each a
 * word ending in its index ("bertencoder0_transformer3_dense0_fwd"), ONNX exporters write
 * paths ("/encoder/layer.3/attention/MatMul"). The depth chosen is the shallowest at which the
 * names split into several sizeable groups none of which holds most of the graph (BERT's
 * twelve transformer layers, resnet's four stages), so that each can be drawn as one box.
 *
 * Memory policy: the result owns its strings.
 */
#pragma once

#include "ds-graph.h"

/* Fewer op nodes than this are drawn as they are. */
#define DS_VIZ_SCOPE_MIN_OPS 150
/* A scope holding fewer op nodes is no group. */
#define DS_VIZ_SCOPE_MIN_GROUP 4

typedef struct {
  char **group_of; /* per top-level node: its group's scope, or NULL (inputs, weights, loners) */
  guint n_nodes;
  guint n_groups;
  guint depth; /* scope levels the groups are named by */
} DsVizScopes;

/* The groups of `graph`'s top-level op nodes, or NULL when it is small or no depth groups it
 * well. */
DsVizScopes *ds_viz_scopes_find(const DsGraph *graph);
void ds_viz_scopes_free(DsVizScopes *scopes);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsVizScopes, ds_viz_scopes_free)

/* The first `depth` scope levels of a node name ("bertencoder0_transformer3",
 * "/encoder/layer.3"), or NULL when the name has fewer with its own name below them. */
char *ds_viz_name_scope(const char *name, guint depth);
