/* ds-ops-subgraph.h: ops that run a subgraph they own: ids and parsed attributes.
 *
 * `_CachedOp` is MXNet's default subgraph op (older builds call it `_subgraph_op`): the node
 * a partition (ds-partition.h) puts in place of a region, calling the region's graph like a
 * function. Its inputs feed the subgraph's variables, in the order of the subgraph's nodes,
 * and its outputs are the subgraph's heads. No backend has a kernel for it: the executor runs
 * the subgraph itself.
 */
#pragma once

#define DS_OPS_SUBGRAPH(X) X(CACHED_OP, "_CachedOp")

/* _CachedOp: nothing is read from attributes (MXNet's CachedOp flags are optional and only
 * tune its runtime); the counts come from node->subgraphs[0], which parsing requires. */
typedef struct {
  int n_inputs;  /* the subgraph's variable nodes */
  int n_outputs; /* the subgraph's heads */
} DsCachedOpParam;

#include <glib.h>

#include "ds-dtype.h"
#include "ds-graph.h"

/* Dtype inference through a subgraph for the node that owns it (`_CachedOp`, loop bodies,
 * branches): `in` are the dtypes of the subgraph's variables (in node order) and `out` of its
 * heads, both read and completed. It runs the subgraph's own dtype rules to a fixpoint, not
 * ds_infer_graph(), whose float32 default for unknown variables belongs to the outer graph.
 * Errors are prefixed "node 'N' (op): in its <what>: ". */
gboolean ds_ops_infer_subgraph_dtypes(const DsNode *node, const DsGraph *sub, const char *what,
                                      DsDType *in, DsDType *out, GError **error);
