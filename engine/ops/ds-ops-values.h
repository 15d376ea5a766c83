/* ds-ops-values.h: shape values (DsShapeValue) through the ops that compute shapes.
 *
 * Exporters build a Reshape's target, an Expand's shape or a ConstantOfShape's size from the
 * input's own shape: Shape -> Cast -> Slice/Gather -> Concat with constants -> Reshape. The
 * tensors along such a chain are data to the ops, so their shape rules alone would give the
 * consumer data-dependent dims. The graph driver (ds-infer.c) calls these two rules around
 * every op's own: values flow from Shape (its input's dims) and from small integer weights
 * through Cast, Slice, Gather, Concat, Unsqueeze, Squeeze, reshapes to 0-D or 1-D, and integer
 * arithmetic; the consumers (Reshape, Expand, ConstantOfShape, and Slice, Range and Tile with
 * computed bounds) then take their output shape from the value, so `--shapes` keeps
 * `(batch, seq, 2048)` where the file computes it.
 */
#pragma once

#include "ds-graph.h"
#include "ds-shape.h"

/* Before the op's own rule: the output shapes that input values decide (Reshape to a computed
 * target, Expand, ConstantOfShape, Range), assigned into `out`. */
gboolean ds_op_values_shape(DsShapeCtx *ctx, const DsNode *node, DsShape *in, DsShape *out,
                            GError **error);
/* After it: the output values the op computes from its inputs' values and shapes. */
gboolean ds_op_values_propagate(DsShapeCtx *ctx, const DsNode *node, const DsShape *in,
                                const DsShape *out, GError **error);
