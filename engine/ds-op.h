/* ds-op.h: the op registry.
 *
 * Ops form a closed enum (ggml's rule: adding an op is visible in one list, and tables indexed
 * by op are checked for completeness at start-up). The lists live per family in
 * engine/ops/ds-ops-*.h. A DsOpDef says how to parse an op's attributes, how many inputs and
 * outputs it has, how to infer shapes and dtypes, and its traits. Kernels are not here: each
 * backend keeps its own table indexed by DsOpId (backends/cpu/ds-cpu-backend.c).
 */
#pragma once

#include <glib.h>

#include "ds-dtype.h"
#include "ds-graph.h"
#include "ds-shape.h"
#include "ops/ds-ops-control.h"
#include "ops/ds-ops-dynamic.h"
#include "ops/ds-ops-elemwise.h"
#include "ops/ds-ops-index.h"
#include "ops/ds-ops-linalg.h"
#include "ops/ds-ops-nn.h"
#include "ops/ds-ops-signal.h"
#include "ops/ds-ops-subgraph.h"
#include "ops/ds-ops-tensor.h"
#include "ops/ds-ops-vision.h"

#define DS_OP_LIST(X)                                                                         \
  DS_OPS_NN(X) DS_OPS_ELEMWISE(X) DS_OPS_TENSOR(X) DS_OPS_INDEX(X) DS_OPS_VISION(X)            \
      DS_OPS_DYNAMIC(X) DS_OPS_SUBGRAPH(X) DS_OPS_CONTROL(X) DS_OPS_SIGNAL(X)                 \
      DS_OPS_LINALG(X)

#define DS_OP_ENUM_ENTRY(id, name, ...) DS_OP_##id,
typedef enum { DS_OP_LIST(DS_OP_ENUM_ENTRY) DS_OP_COUNT } DsOpId;
#undef DS_OP_ENUM_ENTRY

typedef enum {
  DS_OP_TRAIT_ELEMWISE = 1 << 0,       /* out[i] depends on in[i] only; shapes equal */
  DS_OP_TRAIT_BROADCAST = 1 << 1,      /* NumPy-style broadcasting binary op */
  DS_OP_TRAIT_DYNAMIC_SHAPE = 1 << 2,  /* output shape depends on input values */
  DS_OP_TRAIT_CONTROL_FLOW = 1 << 3,   /* owns subgraphs it runs */
  DS_OP_TRAIT_MUTATES_INPUT = 1 << 4,  /* writes some inputs in training (BatchNorm stats) */
  DS_OP_TRAIT_SHAPE_INPUT = 1 << 5,    /* reads a shape from an input tensor's values */
  DS_OP_TRAIT_VIEW = 1 << 6,           /* output is its input's bytes reinterpreted (Reshape) */
  DS_OP_TRAIT_SOURCE = 1 << 7,         /* no inputs; makes data (_zeros, _arange) */
} DsOpTraits;

/* Shape inference. `in` has node->n_inputs shapes and `out` node->n_outputs; both may be
 * partly unknown on entry. The function fills what it can deduce, in both directions
 * (FullyConnected fills its weight's shape from data and num_hidden, as MXNet does), through
 * ds_shape_ctx_assign()/unify_dim() so contradictions are caught. It returns FALSE only on a
 * contradiction or invalid attribute, with an error from ds_shape_ctx_set_error(). Leaving
 * something unknown is not an error: the driver iterates and reports what stays unknown. */
typedef gboolean (*DsInferShapeFn)(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                   DsShape *in, DsShape *out, GError **error);

/* Dtype inference, same conventions: DS_DTYPE_UNKNOWN marks an unknown slot. NULL in DsOpDef
 * means "all inputs and outputs share one dtype". */
typedef gboolean (*DsInferTypeFn)(const DsNode *node, const void *param, DsDType *in,
                                  DsDType *out, GError **error);

/* What an op's gradient function works with (MXNet's FGradient, built from engine ops): the
 * graph being built (the forward nodes, then the gradient nodes added so far), the forward node,
 * and what inference knew of its inputs and outputs: shapes (ranks, dims constant or symbolic)
 * and dtypes, indexed like the node's inputs and outputs. Gradient nodes are added through
 * engine/ops/ds-grad.h, which names them after the forward node. */
/* What seeds the gradient of each head of a graph whose backward pass is built: ones (the
 * gradient of the sum of its values), a variable the caller feeds, or nothing (an output only
 * kept for the backward pass, such as a loop's saved states). */
typedef enum { DS_HEAD_GRAD_ONES, DS_HEAD_GRAD_GIVEN, DS_HEAD_GRAD_NONE } DsHeadGrad;

/* What a loop's backward pass keeps of its forward pass (seed 002): `save` keeps every
 * intermediate value of every iteration the body's backward graph reads; `recompute` keeps only
 * the state each iteration starts from and computes the iteration's forward values again in
 * the backward loop, trading a second forward pass for memory; `checkpoint` keeps only every
 * `every`-th state and, segment by segment backwards, runs the forward loop again from it to
 * recompute the states in between. */
typedef enum { DS_LOOP_RECOMPUTE, DS_LOOP_SAVE, DS_LOOP_CHECKPOINT } DsLoopKeep;
typedef struct {
  DsLoopKeep keep;
  int every; /* checkpoint: the segment length */
  /* and for the whole graph, loop bodies included: whether a value an elementwise op made
   * from values kept anyway is computed again in the backward pass rather than kept
   * (ds-recompute.h) */
  gboolean recompute_cheap;
} DsLoopPolicy;

typedef struct _DsBackward DsBackward;
typedef struct _DsGradCtx DsGradCtx;

struct _DsGradCtx {
  DsGraph *graph;
  const DsNode *node;
  const DsShape *in_shapes;
  const DsShape *out_shapes;
  const DsDType *in_dtypes;
  const DsDType *out_dtypes;
  GHashTable *names; /* every node name in `graph`, so new names stay unique */
  DsLoopPolicy loop_policy;
  /* For control-flow ops: the backward graph of subgraph `body` (ds-backward.h), given the
   * shapes and dtypes of its inputs (in arg_nodes order) and a seed per head. NULL with
   * `error` set on failure; the caller frees it with backward_free. Given by the backward
   * pass, which owns the recursion. */
  DsBackward *(*backward_subgraph)(const DsGradCtx *ctx, const DsGraph *body,
                                   const DsShape *in_shapes, const DsDType *in_dtypes,
                                   const DsHeadGrad *heads, GError **error);
  void (*backward_free)(DsBackward *backward);
};

/* "No gradient flows here": an input that gets none (an index, a mask), an output nothing
 * reads. */
#define DS_GRAD_NONE ((DsEntry){G_MAXUINT32, 0, 0})
static inline gboolean ds_grad_is_none(DsEntry e) { return e.node_id == G_MAXUINT32; }

/* The op's gradient: given `out_grads` (one entry per output of the node, hidden ones
 * included: the gradient flowing back into it, zeros where nothing reads that output), adds the
 * nodes that compute each input's gradient and sets `in_grads[i]` to the entry holding it;
 * in_grads[i] starts as DS_GRAD_NONE, which is where it stays for an input that has no
 * gradient. The backward pass calls it once per node, from the heads back, and sums the
 * gradients of an entry that feeds several nodes. FALSE with `error` set names the node. */
typedef gboolean (*DsOpGradFn)(DsGradCtx *ctx, const DsEntry *out_grads, DsEntry *in_grads,
                               GError **error);

/* For a loop whose backward pass reads values of its forward iterations: rewrites the forward
 * `node` (in ctx->graph, before any gradient is built) to keep them, as step outputs inserted
 * at output `*moved_from`; the node's outputs from there on move up by the count returned.
 * 0 when nothing is kept (or the node was rewritten already), -1 with `error` set. */
typedef int (*DsOpGradPrepareFn)(DsGradCtx *ctx, DsNode *node, guint *moved_from, GError **error);

struct _DsOpDef {
  DsOpId id;
  const char *name;              /* MXNet's registered name */
  const char *const *aliases;    /* NULL-terminated other names, or NULL */
  guint traits;                  /* DsOpTraits */
  gsize param_size;              /* bytes of the parsed attribute struct; 0 for none */
  /* Fills `param` (param_size zeroed bytes) from node attributes, applying MXNet's
   * defaults. NULL if the op has no attributes. */
  gboolean (*parse)(const DsNode *node, void *param, GError **error);
  /* Frees what parse allocated inside `param` (not `param` itself), also after a parse that
   * failed halfway; NULL for the ops whose params are plain structs. */
  void (*free_param)(void *param);
  /* Number of inputs given the parsed param (Concat's num_args, no_bias...). */
  int (*num_inputs)(const void *param);
  /* Total outputs (hidden included) and visible outputs. */
  int (*num_outputs)(const void *param);
  int (*num_visible_outputs)(const void *param);
  /* MXNet's argument names ("data", "weight", "bias"...), NULL-terminated; NULL means
   * "data" for a single input and "arg0", "arg1"... otherwise. Used for messages and
   * list_arguments. Ops with a varying list (Concat) give their repeated name once. */
  const char *const *input_names;
  /* MXNet's FListOutputNames ("output", "mean", "var"), or NULL. */
  const char *const *output_names;
  DsInferShapeFn infer_shape;
  DsInferTypeFn infer_type;
  /* Bit i set: input i is an auxiliary state (MXNet's FMutateInputs: BatchNorm's moving
   * mean and variance), listed by list_auxiliary_states rather than list_arguments. */
  guint aux_input_mask;
  /* How the op's gradient is built: ds_grad_zero() for an op that is not differentiable (a
   * comparison, floor, an index); NULL where no gradient has been written yet, which the
   * backward pass refuses, naming the node. */
  DsOpGradFn grad;
  /* NULL for the ops whose gradient reads only their inputs and outputs. */
  DsOpGradPrepareFn grad_prepare;
};

/* Whether input `i` of `op` is an auxiliary state. Inputs past the mask's width (a Scan over
 * 70 arrays has that many) never are. */
static inline gboolean ds_op_input_is_aux(const DsOpDef *op, guint i)
{
  return i < 32 && (op->aux_input_mask & (1u << i)) != 0;
}

/* The op called `name` (or an alias), or NULL. */
const DsOpDef *ds_op_lookup(const char *name);
const DsOpDef *ds_op_get(DsOpId id);
/* Registered name of an op id. */
const char *ds_op_id_name(DsOpId id);

/* The checks a kernel can rely on, made once when an executor binds the node's kernel: the op
 * has its parsed attributes (when it has any), and the node the input count they call for and
 * at least the outputs they write (it may have more: MXNet builds with MKL-DNN give Pooling a
 * hidden workspace output, which the kernel is not given). So a kernel's ctx holds exactly
 * num_inputs(param) inputs and num_outputs(param) outputs. FALSE with an error naming the
 * node otherwise. */
gboolean ds_op_check_node_args(const DsNode *node, GError **error);

/* Helpers for ops with fixed counts, for DsOpDef.num_inputs/num_outputs. */
int ds_op_count_1(const void *param);
int ds_op_count_2(const void *param);
int ds_op_count_3(const void *param);

/* Name of input `i` of `node` for messages ("weight", "arg1"). Borrowed or static. */
const char *ds_op_input_name(const DsOpDef *op, int n_inputs, int i, char buf[16]);

/* Family registration, called once by the registry: each fills its ops' table slots, every
 * family the same way, from its X-macro list: `DS_OPS_NN(DS_OP_TABLE_ENTRY)` stores the
 * definition called ID_def of every op ID the list names, so an op listed without a
 * definition does not compile. An entry may carry more columns than the id and the name (the
 * scalar ops' function); the registry's macros read those two. */
#define DS_OP_TABLE_ENTRY(id, name, ...) table[DS_OP_##id] = &id##_def;
void ds_ops_nn_register(const DsOpDef **table);
void ds_ops_elemwise_register(const DsOpDef **table);
void ds_ops_tensor_register(const DsOpDef **table);
void ds_ops_index_register(const DsOpDef **table);
void ds_ops_vision_register(const DsOpDef **table);
void ds_ops_subgraph_register(const DsOpDef **table);
void ds_ops_dynamic_register(const DsOpDef **table);
void ds_ops_control_register(const DsOpDef **table);
void ds_ops_signal_register(const DsOpDef **table);
void ds_ops_linalg_register(const DsOpDef **table);
