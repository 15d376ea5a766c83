/* ds-backward.h: the backward pass as a graph.
 *
 * From a forward graph and what inference knows of its entries, builds one graph that runs the
 * forward pass and then the gradients of its heads with respect to every input and weight
 * (MXNet's Gradient pass over FGradient): each op's gradient function adds engine ops, so the
 * backward pass runs on any executor and backend, and every step of it is a node a user can
 * see, step through and time. The seed of each head is ones (the gradient of the sum of its
 * values), or a variable the caller feeds. */
#pragma once

#include <glib.h>

#include "ds-graph.h"
#include "ds-infer.h"
#include "ds-op.h"

struct _DsBackward {
  /* forward nodes first, with their ids, then the gradient nodes; heads: the forward heads,
   * then one gradient per variable in `variables` */
  DsGraph *graph;
  guint n_forward_nodes; /* the forward pass's nodes (prepared loops count as theirs) */
  guint n_forward_heads;
  /* names of the variables whose gradients the heads after the forward ones hold, in order */
  GPtrArray *variables;
  /* per forward head: the position in graph->arg_nodes of the variable its given gradient is
   * fed through, or -1 */
  int *head_grad_args;
};

/* The name of the variable that feeds head `output_name`'s gradient ("prob_output_head_grad"),
 * for the heads given as DS_HEAD_GRAD_GIVEN. Caller frees. */
char *ds_backward_head_grad_name(const char *output_name);

/* Builds the backward graph of `forward`, whose entries `shapes` describes (shapes and
 * dtypes). `heads`: per head, what seeds its gradient (NULL: ones everywhere). Every float
 * variable that is not an auxiliary state gets a gradient (zeros when no head depends on it);
 * integer values and the ops that are not differentiable pass none. An op on the way without
 * a gradient yet is an error naming the node. A `_foreach` on the way is changed to keep the
 * state each iteration starts from, for its backward loop (ds-grads-control.c). */
DsBackward *ds_backward_build(const DsGraph *forward, const DsGraphShapes *shapes,
                              const DsHeadGrad *heads, DsLoopPolicy loop_policy,
                              GError **error);
void ds_backward_free(DsBackward *backward);
/* The policy as --recompute spells it: "save", "auto", "recompute", "checkpoint:16". Caller
 * frees. */
char *ds_backward_policy_name(DsLoopPolicy policy);
/* The policy `text` spells (save, auto, recompute, checkpoint:K with K >= 2); FALSE for
 * anything else. */
gboolean ds_backward_parse_policy(const char *text, DsLoopPolicy *policy);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsBackward, ds_backward_free)
