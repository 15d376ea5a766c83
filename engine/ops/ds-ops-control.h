/* ds-ops-control.h: MXNet's control-flow ops (`_foreach`, `_while_loop`, `_cond`): ids and
 * parsed attributes, with the exact rules that map a node's inputs and outputs onto the
 * subgraphs it runs.
 *
 * Each node owns its subgraphs in node->subgraphs (MXNet writes them in the node's
 * "subgraphs"). A subgraph's inputs are its variable nodes in node order (the order MXNet's
 * indexed graph gives them, and the one `_CachedOp` uses); its outputs are its heads. Every
 * "loc" below is a 0-based position: either into the node's inputs or into one subgraph's
 * inputs, as each field says. Parsing checks every loc is in range and every count matches the
 * subgraphs, so the executor (engine/ds-control-flow.c) can index with them unchecked.
 *
 * A loc list has no fixed bound: an exported If may feed its branches hundreds of outer values.
 * Each list is its own allocation, owned by the param and freed by the op's free_param.
 *
 * num_args is MXNet's own count, which includes the subgraphs as symbol arguments: a node has
 * num_args - 1 inputs for `_foreach`, num_args - 2 for `_while_loop`, num_args - 3 for `_cond`.
 *
 * No backend has a kernel for these ops: the executor runs the subgraphs itself.
 */
#pragma once

#include <stdint.h>

#include "ds-shape.h"

#define DS_OPS_CONTROL(X)                                                                          \
  X(FOREACH, "_foreach")                                                                           \
  X(WHILE_LOOP, "_while_loop")                                                                     \
  X(COND, "_cond")

/* _while_loop's max_iterations must lie in [1, DS_CONTROL_MAX_ITERATIONS]: a larger bound is
 * taken for a corrupt file rather than a loop anyone means to run. */
#define DS_CONTROL_MAX_ITERATIONS 100000000
/* The bound of a _while_loop whose file gives no max_iterations (MXNet always writes one). */
#define DS_CONTROL_DEFAULT_MAX_ITERATIONS 100000

/* _foreach: a loop over axis 0 of its data arrays (MXNet's contrib.foreach).
 *
 * subgraphs[0] is the body. The node's inputs are, in this order: the n_data data arrays, the
 * n_states initial states, the n_remain free variables (outer values the body reads). Body
 * inputs are fed so:
 *   node input j (j < n_data)                   -> body input data_locs[j]: row i of data j
 *                                                   at iteration i
 *   node input n_data + k (k < n_states)        -> body input state_locs[k]: state k (the
 *                                                   initial value at iteration 0, then the
 *                                                   body's previous new state k)
 *   node input n_data + n_states + r            -> body input remain_locs[r], every iteration
 * The three lists together name every body input exactly once.
 *
 * The body's outputs are num_out_data per-iteration outputs, then the n_states new states in
 * the order of state_locs. The node's outputs are the num_out_data stacked outputs (output o is
 * T rows, row i being body output o of iteration i) and then the final states (the initial
 * ones when T = 0).
 *
 * With the attribute reverse=True (not MXNet's) the rows are taken last to first: iteration i
 * reads row T - 1 - i of each data array and writes row T - 1 - i of each stacked output. With
 * keep_every=K and keep_from=F (not MXNet's either; F defaults to num_out_data, none) step
 * outputs F and later keep only iterations 0, K, 2K...: ceil(T / K) rows.
 *
 * Shapes: T is the size of axis 0, which every data array must share. A row of data array j
 * has its shape without axis 0, except that a 1-D array's rows have shape (1,), as in MXNet
 * (whose legacy shapes have no 0-dim arrays). Stacked output o has shape (T,) + the body's
 * output o. A new state must have the shape and dtype of its initial state.
 */
typedef struct {
  int num_args;     /* MXNet's count: the node's inputs + 1 (the body) */
  int num_outputs;  /* the body's heads = the node's outputs = num_out_data + n_states */
  int num_out_data; /* per-iteration outputs, stacked; they come first */
  int n_data;       /* data arrays iterated over (at least one) */
  int n_states;     /* loop-carried states */
  int n_remain;     /* free variables */
  int *data_locs;   /* body input fed by data array j (in_data_locs) */
  int *state_locs;  /* body input fed by state k (in_state_locs) */
  int *remain_locs; /* body input fed by free variable r (remain_locs) */
  bool reverse;     /* iteration i reads and writes row T - 1 - i (an extension, "reverse":
                     * the backward loop, ONNX's reversed Scan) */
  int keep_every;   /* step outputs from keep_from on keep only every keep_every-th row */
  int keep_from;    /* (extensions: a checkpointing loop's kept states) */
} DsForeachParam;

/* The shape of one row of a data array _foreach iterates over (see above): MXNet's
 * SliceFirstDim, which gives a 1-D array's rows the shape (1,) (MXNet 1.x has no 0-dim
 * arrays). */
static inline DsShape ds_ops_foreach_row_shape(const DsShape *data)
{
  if (data->ndim < 1)
    return DS_SHAPE_UNKNOWN;
  if (data->ndim == 1)
    return (DsShape){.ndim = 1, .dims = {ds_dim(1)}};
  DsShape row = {.ndim = data->ndim - 1};
  for (int d = 1; d < data->ndim; d++)
    row.dims[d - 1] = data->dims[d];
  return row;
}

/* _while_loop: `while cond(vars): outputs, vars = func(vars)` (MXNet's contrib.while_loop).
 *
 * subgraphs[0] is cond, subgraphs[1] is func. The node's inputs hold the loop variables'
 * initial values and the free variables, in an order only the locs tell:
 *   cond input i  <- node input cond_input_locs[i]
 *   func input i  <- node input func_input_locs[i]
 *   loop variable k (k < n_func_vars) is func input func_var_locs[k], that is node input
 *   func_input_locs[func_var_locs[k]]; no two loop variables share a node input.
 * Each iteration runs cond on the current values; its one output (a single element, shape (1,)
 * or ()) is read as a boolean: nonzero runs func once more, zero ends the loop. A loop also
 * ends after max_iterations runs of func. func's outputs are num_out_data step outputs, then
 * the n_func_vars new loop variables in loop-variable order; a new value replaces its loop
 * variable wherever it feeds cond or func (a node input that is not a loop variable keeps its
 * value throughout).
 *
 * The node's outputs are the num_out_data stacked step outputs, then the final loop variables
 * (the initial ones when func never ran). A stacked output holds exactly the iterations run:
 * shape (n,) + func's output, n in [0, max_iterations]. MXNet instead pads it to max_iterations
 * rows (the rows past n left undefined), so this is where the two differ. Symbolic inference
 * gives every stacked output the same unbacked dim for n, bounded by max_iterations. A new
 * loop variable must have the shape and dtype of its initial value, as MXNet requires.
 *
 * ONNX's Loop lets a loop variable change shape between iterations (a greedy decoder appends a
 * token each step: (1, 1), (1, 2), ...). The hidden attribute __carried_shapes__="any" asks
 * for that: such a variable's changing dims become data-dependent (its rank unknown if that
 * changes), and the run lets it grow or shrink. Its dtype must still stay. The importer sets it
 * on every Loop.
 */
typedef struct {
  int num_args;           /* MXNet's count: the node's inputs + 2 (cond and func) */
  int n_inputs;           /* the node's inputs: num_args - 2 */
  int num_outputs;        /* func's heads = the node's outputs = num_out_data + n_func_vars */
  int num_out_data;       /* step outputs, stacked; they come first */
  int64_t max_iterations; /* in [1, DS_CONTROL_MAX_ITERATIONS]; default
                           * DS_CONTROL_DEFAULT_MAX_ITERATIONS */
  int n_cond_inputs;      /* cond's variables */
  int *cond_input_locs; /* node input feeding cond input i */
  int n_func_inputs;                        /* func's variables */
  int *func_input_locs; /* node input feeding func input i */
  int n_func_vars;                          /* loop variables */
  int *func_var_locs;   /* func input holding loop variable k */
  gboolean any_carried_shapes; /* __carried_shapes__="any": ONNX's Loop, not MXNet's rule */
} DsWhileLoopParam;

/* _cond: `then(...) if cond(...) else else(...)` (MXNet's contrib.cond).
 *
 * subgraphs[0] is cond, [1] then, [2] else. Inputs map as for _while_loop:
 *   cond input i <- node input cond_input_locs[i]
 *   then input i <- node input then_input_locs[i]
 *   else input i <- node input else_input_locs[i]
 * cond's one output (a single element, shape (1,) or ()) picks the branch: nonzero runs then,
 * zero runs else. The node's num_outputs outputs are the chosen branch's heads; both branches
 * have num_outputs heads, of the same dtypes and, as MXNet requires, the same shapes.
 *
 * ONNX's If lets the branches give different shapes, even ranks (an exported squeeze of a
 * dynamic dim gives (1, 128) or (1, 128, 1)), and ONNX Runtime runs a branch that could not be
 * inferred until it is taken. The hidden attribute __branch_shapes__="any" (which MXNet's
 * parser skips, as it skips every __name__) asks for that: a dim the branches give differently
 * is data-dependent, different ranks leave the output's rank to the run, and one branch that
 * cannot be inferred is no error while the other can be. The importer sets it on every If.
 */
typedef struct {
  int num_args;      /* MXNet's count: the node's inputs + 3 (cond, then and else) */
  int n_inputs;      /* the node's inputs: num_args - 3 */
  int num_outputs;   /* each branch's heads = the node's outputs */
  int n_cond_inputs; /* cond's variables */
  int *cond_input_locs; /* node input feeding cond input i */
  int n_then_inputs;                        /* then's variables */
  int *then_input_locs; /* node input feeding then input i */
  int n_else_inputs;                        /* else's variables */
  int *else_input_locs; /* node input feeding else input i */
  gboolean any_branch_shapes; /* __branch_shapes__="any": ONNX's If, not MXNet's rule */
} DsCondParam;
