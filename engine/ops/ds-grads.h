/* ds-grads.h: the ops' gradient functions (DsOpDef.grad), one file per family
 * (ds-grads-{elemwise,nn,tensor}.c). Each builds an op's gradient from engine ops through
 * ds-grad.h; the formulas are MXNet's FGradient ones. */
#pragma once

#include "ds-op.h"

#define DS_GRAD_FN(name)                                                                      \
  gboolean name(DsGradCtx *ctx, const DsEntry *out_grads, DsEntry *in_grads, GError **error)

/* elementwise: the unary math ops, the binary ops (element-wise and broadcasting), the scalar
 * ops, and the rest of the family */
DS_GRAD_FN(ds_grad_unary_math);
/* g times the derivative of unary math op `id` at x (y its output), into `dx`; FALSE for an op
 * that is flat almost everywhere (floor, sign...). For the nn ops that apply the same
 * functions (Activation). */
gboolean ds_grad_unary_formula(DsGradCtx *ctx, DsOpId id, DsEntry g, DsEntry x, DsEntry y,
                               DsEntry *dx);
DS_GRAD_FN(ds_grad_binary);
DS_GRAD_FN(ds_grad_scalar_op);
DS_GRAD_FN(ds_grad_identity);
DS_GRAD_FN(ds_grad_clip);
DS_GRAD_FN(ds_grad_where);
DS_GRAD_FN(ds_grad_np_where);
DS_GRAD_FN(ds_grad_act_param);
DS_GRAD_FN(ds_grad_add_n);
DS_GRAD_FN(ds_grad_div_sqrt_dim);

/* nn */
DS_GRAD_FN(ds_grad_fully_connected);
DS_GRAD_FN(ds_grad_dot);
DS_GRAD_FN(ds_grad_batch_dot);
DS_GRAD_FN(ds_grad_activation);
DS_GRAD_FN(ds_grad_leaky_relu);
DS_GRAD_FN(ds_grad_softmax);
DS_GRAD_FN(ds_grad_log_softmax);
DS_GRAD_FN(ds_grad_layer_norm);
DS_GRAD_FN(ds_grad_dropout);
DS_GRAD_FN(ds_grad_embedding);
DS_GRAD_FN(ds_grad_pooling);
DS_GRAD_FN(ds_grad_batch_norm);
DS_GRAD_FN(ds_grad_convolution);
DS_GRAD_FN(ds_grad_deconvolution);
DS_GRAD_FN(ds_grad_lrn);
DS_GRAD_FN(ds_grad_adaptive_avg_pool);
DS_GRAD_FN(ds_grad_resize);
DS_GRAD_FN(ds_grad_upsampling);
DS_GRAD_FN(ds_grad_softmax_output);
DS_GRAD_FN(ds_grad_matmul);
DS_GRAD_FN(ds_grad_instance_norm);
DS_GRAD_FN(ds_grad_l2_normalization);

/* control flow: a _foreach's backward loop, once ds_grad_foreach_prepare has made the forward
 * loop keep what its backward loop reads (the state each iteration starts from, and with the
 * save policy the forward values of each iteration), as extra step outputs after its own: the
 * node's later outputs move up by the count it returns, -1 with `error` set on failure. `ctx`
 * gives the node's input shapes and dtypes, the policy and the subgraph builder. */
DS_GRAD_FN(ds_grad_foreach);
int ds_grad_foreach_prepare(DsGradCtx *ctx, DsNode *node, guint *moved_from, GError **error);
/* _while_loop: differentiated as the _foreach over the iterations it ran (ds-grads-control.c),
 * prepared the same way */
DS_GRAD_FN(ds_grad_while_loop);
int ds_grad_while_loop_prepare(DsGradCtx *ctx, DsNode *node, guint *moved_from, GError **error);
/* _cond: the same condition choosing between the branches' backward graphs */
DS_GRAD_FN(ds_grad_cond);
/* _CachedOp: a _CachedOp over its subgraph's backward graph */
DS_GRAD_FN(ds_grad_cached_op);

/* tensor */
DS_GRAD_FN(ds_grad_reshape);
DS_GRAD_FN(ds_grad_transpose);
DS_GRAD_FN(ds_grad_swap_axis);
DS_GRAD_FN(ds_grad_concat);
DS_GRAD_FN(ds_grad_slice_channel);
DS_GRAD_FN(ds_grad_stack);
DS_GRAD_FN(ds_grad_slice_axis);
DS_GRAD_FN(ds_grad_broadcast);
DS_GRAD_FN(ds_grad_sum);
DS_GRAD_FN(ds_grad_mean);
/* max, min, prod, the nan- and norm reductions, log_sum(_exp): from input and output */
DS_GRAD_FN(ds_grad_reduce);
DS_GRAD_FN(ds_grad_cast);
DS_GRAD_FN(ds_grad_sequence_mask);
DS_GRAD_FN(ds_grad_slice);
DS_GRAD_FN(ds_grad_pad);
DS_GRAD_FN(ds_grad_self_adjoint);
DS_GRAD_FN(ds_grad_cumsum);
DS_GRAD_FN(ds_grad_depth_space);
DS_GRAD_FN(ds_grad_tile);
DS_GRAD_FN(ds_grad_repeat);
DS_GRAD_FN(ds_grad_take);
DS_GRAD_FN(ds_grad_take_along_axis);
DS_GRAD_FN(ds_grad_topk);
DS_GRAD_FN(ds_grad_gather_nd);
DS_GRAD_FN(ds_grad_scatter);
DS_GRAD_FN(ds_grad_sequence_last);
DS_GRAD_FN(ds_grad_boolean_mask);
DS_GRAD_FN(ds_grad_slice_like);
