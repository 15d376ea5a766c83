/* ds-infer.h: shape and dtype inference over a whole graph.
 *
 * Every entry (node output) gets a shape and a dtype. Variables are seeded from their
 * `__shape__`/`__dtype__` attributes (a 0 dim means unknown, MXNet's legacy convention) and from
 * whatever the caller feeds; then each op's rules run in topological order, forwards and
 * backwards, until nothing changes (MXNet's InferShape does the same passes).
 *
 * Memory policy: DsGraphShapes is owned by the caller and refers to no graph memory.
 */
#pragma once

#include "ds-graph.h"
#include "ds-shape.h"

typedef struct {
  guint n_entries;
  DsShape *shapes; /* per entry id */
  DsDType *dtypes; /* per entry id; DS_DTYPE_UNKNOWN when not inferred */
  /* Per entry id: the contents of small integer tensors shapes are computed from (see
   * DsShapeValue), for inference only; NULL where none are kept (evaluated copies). */
  DsShapeValue *values;
} DsGraphShapes;

/* All entries unknown except what variables' attributes declare. */
DsGraphShapes *ds_graph_shapes_new(const DsGraph *graph, GError **error);
/* For symbolic inference: gives each variable dim still unknown after inference (a 0 in its
 * `__shape__`, MXNet's "unknown", that nothing determined) a fresh symbol of `exprs`.
 * Returns how many it gave. */
guint ds_graph_shapes_symbolize_unknown(DsGraphShapes *shapes, const DsGraph *graph,
                                        DsExprCtx *exprs);
/* Replaces every expression dim by its resolved form (after merges); a dim that resolved to
 * a constant becomes a plain constant. */
void ds_graph_shapes_resolve(DsGraphShapes *shapes, DsExprCtx *exprs);
/* Evaluates every expression dim with symbol values indexed by symbol id (`bound` says which
 * are set) into a concrete copy. An unbound symbol is a DS_ERROR_SHAPE error naming the node,
 * unless `partial`, where such dims stay symbolic. */
DsGraphShapes *ds_graph_shapes_evaluate(const DsGraphShapes *shapes, const DsGraph *graph,
                                        DsExprCtx *exprs, const int64_t *values,
                                        const gboolean *bound, gboolean partial,
                                        GError **error);
DsGraphShapes *ds_graph_shapes_copy(const DsGraphShapes *shapes);
void ds_graph_shapes_free(DsGraphShapes *shapes);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsGraphShapes, ds_graph_shapes_free)

/* Gives a variable the contents of a small integer weight (a Reshape target, a Gather index):
 * `data` holds `n` int64 values. Ignored when longer than DS_SHAPE_VALUE_MAX. */
void ds_graph_shapes_set_value(DsGraphShapes *shapes, const DsGraph *graph,
                               const DsNode *variable, const int64_t *data, gsize n);

/* Declares a variable's shape and dtype (DS_DTYPE_UNKNOWN to leave it). A mismatch with what
 * the graph declares is a DS_ERROR_INPUT error naming the variable and both shapes. */
gboolean ds_graph_shapes_set_variable(DsGraphShapes *shapes, const DsGraph *graph,
                                      const DsNode *variable, const DsShape *shape,
                                      DsDType dtype, GError **error);

/* Runs inference to a fixpoint. With `require_complete`, every entry an op consumes or the
 * graph outputs must end known, or the error names the first node left unknown; without it,
 * unknown shapes and unsupported ops are left as they are (for --info on partial graphs). */
gboolean ds_infer_graph(const DsGraph *graph, DsGraphShapes *shapes, DsShapeCtx *ctx,
                        gboolean require_complete, GError **error);
/* Inference of a subgraph within its node's shape rule: as ds_infer_graph() without
 * `require_complete`, except that a variable whose dtype nothing gives stays unknown rather
 * than becoming float32. The node's dtype rule gives the subgraph's dtypes; MXNet's float32
 * default applies once, to the whole graph, and here it could clash with a dtype an op in the
 * subgraph fixes (a gradient's one_hot made float64). */
gboolean ds_infer_subgraph_shapes(const DsGraph *graph, DsGraphShapes *shapes, DsShapeCtx *ctx,
                                  GError **error);

/* The shape and dtype of one entry. Borrowed. */
static inline const DsShape *ds_graph_shapes_get(const DsGraphShapes *shapes, const DsGraph *graph,
                                                 DsEntry entry)
{
  return &shapes->shapes[ds_graph_entry_id(graph, entry)];
}

/* Outputs the op itself produces; a file may list more (MKL-DNN workspaces), which stay
 * empty. */
guint ds_node_n_op_outputs(const DsNode *node);
