/* ds-grad.h: adding gradient nodes, for the ops' gradient functions (ds-grads-*.c).
 *
 * A gradient is built from engine ops, as MXNet's FGradient builds `_backward_*` nodes: every
 * backend runs it, and each piece shows in the graph, can be stepped through and is timed. The
 * nodes are named after the forward node they differentiate ("fc1_backward_dot"), so a user
 * can tell where each came from. */
#pragma once

#include <stdarg.h>

#include "ds-op.h"

/* Adds a node of `op_name` reading `inputs`, with attributes given as key, value string pairs
 * ending in NULL, named "<forward node>_backward_<op>" (with a number when taken). Returns its
 * first output. */
DsEntry ds_grad_op(DsGradCtx *ctx, const char *op_name, guint n_inputs, const DsEntry *inputs,
                   ...) G_GNUC_NULL_TERMINATED;
DsEntry ds_grad_op_v(DsGradCtx *ctx, const char *op_name, guint n_inputs, const DsEntry *inputs,
                     va_list attrs);
/* One- and two-input forms of ds_grad_op. */
DsEntry ds_grad_op1(DsGradCtx *ctx, const char *op_name, DsEntry a, ...) G_GNUC_NULL_TERMINATED;
DsEntry ds_grad_op2(DsGradCtx *ctx, const char *op_name, DsEntry a, DsEntry b,
                    ...) G_GNUC_NULL_TERMINATED;
/* `value` as an attribute: the fewest digits that read back as the same double. */
void ds_grad_number_text(double value, char text[G_ASCII_DTOSTR_BUF_SIZE]);
/* `op_name` with its scalar attribute: ds_grad_scalar(ctx, "_mul_scalar", x, 0.5). */
DsEntry ds_grad_scalar(DsGradCtx *ctx, const char *op_name, DsEntry a, double scalar);

/* The forward node's input i and output i, as entries. */
DsEntry ds_grad_input(const DsGradCtx *ctx, guint i);
DsEntry ds_grad_output(const DsGradCtx *ctx, guint i);

/* The gradient `grad`, of shape `grad_shape` (the forward output's, which input `input` was
 * broadcast to), summed over the broadcast axes back to that input's shape. `grad` itself when
 * the shapes are the same. FALSE with an error naming the node when the shapes cannot say
 * which axes were broadcast. */
gboolean ds_grad_sum_to(DsGradCtx *ctx, DsEntry grad, const DsShape *grad_shape, guint input,
                        DsEntry *out, GError **error);

/* Whether two dims are the same: equal constants, or the same expression. */
gboolean ds_grad_dims_equal(DsDim a, DsDim b);
/* The tuple attribute "(0, 2, 3)" of `n` values (caller frees). */
char *ds_grad_tuple(const int64_t *values, int n);

/* The forward node's attributes (not the `__hints__`) copied onto gradient node `e`, but for
 * `except` (NULL for none): a gradient that runs under the same attributes (a window op's, a
 * reversal's). */
void ds_grad_copy_attrs(DsGradCtx *ctx, DsEntry e, const char *except);

/* The gradient of an op that is not differentiable (a comparison, floor, an index): no input
 * gets one. */
gboolean ds_grad_zero(DsGradCtx *ctx, const DsEntry *out_grads, DsEntry *in_grads,
                      GError **error);
/* Sets a DS_ERROR_UNSUPPORTED error naming the node: "cannot build the gradient of node 'x'
 * (op): <reason>". Returns FALSE. */
gboolean ds_grad_fail(const DsGradCtx *ctx, GError **error, const char *format,
                      ...) G_GNUC_PRINTF(3, 4);
