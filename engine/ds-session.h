/* ds-session.h: one model and what feeds it, from files to a bound executor.
 *
 * The command line and the desktop app both go through a session: load the graph, feed
 * variables from .npy files and a .params file, declare shapes, infer, fill what is left
 * with random data if asked, bind, run.
 *
 * Memory policy: the session owns its graph, fed arrays, shapes and executor.
 */
#pragma once

#include "ds-backend.h"
#include "ds-executor.h"
#include "ds-graph.h"
#include "ds-infer.h"
#include "ds-ndarray.h"
#include "ds-runner.h"

typedef struct _DsPartition DsPartition;

typedef enum {
  DS_VARIABLE_DATA,   /* a model input */
  DS_VARIABLE_WEIGHT, /* a learned parameter (weight, bias, gamma, beta...) */
  DS_VARIABLE_AUX,    /* an auxiliary state (BatchNorm's moving statistics) */
} DsVariableKind;

typedef struct _DsSession DsSession;

/* Loads a model file: MXNet symbol JSON or ONNX, chosen by content. An ONNX file's
 * initializers feed their variables (as weights), and its inputs' named dims are declared as
 * symbols. */
DsSession *ds_session_new(const char *model_path, GError **error);
/* Whether the file is ONNX (by its first bytes, as ds_session_new() chooses). */
gboolean ds_session_file_is_onnx(const char *model_path);
/* One line naming every node the model has but the engine cannot run (ONNX ops, opsets or
 * attributes it does not map), or NULL. ds_session_prepare() and ds_session_compile() refuse
 * such a model with this message before running anything. */
const char *ds_session_get_unsupported(DsSession *session);
/* The file format in words: "MXNet 1.5.0 JSON", "ONNX IR 8, opset 13, from pytorch 1.13.1". */
const char *ds_session_get_format(DsSession *session);
/* The same as an identifier: "mxnet-json" or "onnx" (profile reports carry it). */
const char *ds_session_get_format_id(DsSession *session);
void ds_session_free(DsSession *session);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsSession, ds_session_free)

DsGraph *ds_session_get_graph(DsSession *session);

/* Makes the session run the model's backward pass after its forward pass (ds-backward.h):
 * the graph becomes the forward nodes, then the gradient nodes, and its outputs the model's
 * outputs followed by the gradient of every input and weight. Shapes are inferred from what
 * is fed and declared so far. `head_grad_given`: per model output, TRUE to feed its gradient
 * as the variable ds_backward_head_grad_name() names, or NULL for ones. `loop_policy`: what
 * loops keep of their forward pass for their backward pass. Call once, before preparing. */
gboolean ds_session_add_backward(DsSession *session, const gboolean *head_grad_given,
                                 DsLoopPolicy loop_policy, GError **error);
/* After ds_session_add_backward: how many of the graph's nodes, the first ones, are the
 * forward pass's, and the policy the backward pass was built with. FALSE without one. */
gboolean ds_session_get_backward(DsSession *session, guint *n_forward_nodes,
                                 DsLoopPolicy *policy);
/* The model's own outputs: all of them, or those before the gradients. */
guint ds_session_get_n_model_outputs(DsSession *session);
/* How many gradients the outputs hold after the model's own (0 without a backward pass), and
 * the variable the i-th is the gradient of. */
guint ds_session_get_n_gradients(DsSession *session);
const char *ds_session_get_gradient_variable(DsSession *session, guint i);
const char *ds_session_get_model_path(DsSession *session);

/* Feeds variable `name` from a .npy file. The error names the argument if no variable is
 * called so. */
gboolean ds_session_feed_npy(DsSession *session, const char *name, const char *path,
                             GError **error);
/* Feeds variable `name`, taking ownership of `array`. */
gboolean ds_session_feed(DsSession *session, const char *name, DsNDArray *array, GError **error);
/* Forgets what feeds variable `name` (a file or an earlier random fill) and any shape declared
 * for it: the next ds_session_prepare() goes by the file's shape and the bindings again.
 * Unknown names are ignored. */
void ds_session_unfeed(DsSession *session, const char *name);
/* Feeds every array of a .params file to the variable of the same name; an array that
 * matches no variable is an error naming it. */
gboolean ds_session_feed_params(DsSession *session, const char *path, GError **error);
/* Declares a variable's shape ("data=(1,3,224,224)" on the command line). It replaces the
 * file's `__shape__` hint for that variable; fed arrays must match it. */
gboolean ds_session_declare_shape(DsSession *session, const char *name, const DsShape *shape,
                                  GError **error);

/* The shape declared for variable `name` (by ds_session_declare_shape(), or by an ONNX file's
 * input types, named dims as symbols), or NULL. Borrowed. */
const DsShape *ds_session_get_declared_shape(DsSession *session, const char *name);

/* Infers shapes as far as they go, without requiring completeness (for --info). */
const DsGraphShapes *ds_session_infer_partial(DsSession *session, GError **error);

/* Infers, optionally fills unfed variables with seeded random data (uniform [0, 1) for
 * floats, as mx.nd.random.uniform does; small integers for integer dtypes), and binds. With
 * `random_inputs` FALSE, unfed variables are an error naming all of them. */
gboolean ds_session_prepare(DsSession *session, gboolean random_inputs, guint64 seed,
                            const DsBackend *backend, int n_threads, GError **error);
/* Whether ds_session_prepare() (or ds_session_compile() and a resize) bound an executor that
 * runs: until then, and after anything that changes what it was bound for, there is none. */
gboolean ds_session_is_bound(DsSession *session);
/* The bound executor's statistics (memory, regions, placement copies); FALSE when none is
 * bound. */
gboolean ds_session_get_stats(DsSession *session, DsRunnerStats *stats);

/* ---- choosing the executor (MXNet's bind-time choice) ---- */

typedef enum {
  DS_EXECUTOR_AUTO,    /* dynamic if an op decides its shapes from data, or the file is
                        * partitioned; static otherwise */
  DS_EXECUTOR_STATIC,  /* one plan for the whole graph */
  DS_EXECUTOR_DYNAMIC, /* regions on cached plans, dynamic ops imperatively */
} DsExecutorChoice;

void ds_session_set_executor_choice(DsSession *session, DsExecutorChoice choice);
/* Whether ds_session_prepare() binds the dynamic executor. */
gboolean ds_session_uses_dynamic_executor(DsSession *session);
/* The regions of a partitioned file (its `_CachedOp` nodes, inlined on load), or NULL. */
const DsPartition *ds_session_get_file_partition(DsSession *session);

/* ---- placement on a device (seed 004) ---- */

/* Places the model on `device` (a backend with DS_MEMORY_DEVICE memory, such as "cuda"), or
 * back on the host only (NULL). At the next ds_session_prepare() or ds_session_compile() the
 * regions the device supports run there (ds_partition_label_placement), the rest on the
 * backend passed to it, on the dynamic executor, which copies tensors across region edges.
 * Preparing fails with a message when the device cannot run in this process. The placement
 * replaces the regions of a partitioned file. */
void ds_session_set_device(DsSession *session, const DsBackend *device);
const DsBackend *ds_session_get_device(DsSession *session);
/* The placement of the last binding on the device, or NULL. Borrowed. */
const DsPartition *ds_session_get_placement(DsSession *session);

/* After ds_session_prepare(), whichever executor was bound: "static" or "dynamic". */
const char *ds_session_get_executor_name(DsSession *session);
/* The bound executor, for tests and benchmarks that measure an executor itself: the static
 * one, or NULL when the dynamic one runs, and the reverse. Borrowed. Nothing else needs to
 * know which runs. */
DsExecutor *ds_session_get_executor(DsSession *session);
DsDynamicExecutor *ds_session_get_dynamic_executor(DsSession *session);
/* Bytes of the forms kernels derived from the fed weights (packed matrices, ds-constant.h),
 * and how many weights have one. */
gsize ds_session_get_packed_weight_bytes(DsSession *session, guint *n_weights);
gboolean ds_session_run(DsSession *session, GError **error);
/* Head `i`'s tensor and every entry's shape after the last run (shapes: NULL when nothing
 * is prepared, as after a change of device). Borrowed. */
const DsTensor *ds_session_get_output(DsSession *session, guint i);
const DsGraphShapes *ds_session_get_run_shapes(DsSession *session);
/* The shapes of the last symbolic inference (the dynamic executor's, or one asked for), or
 * NULL. Borrowed. */
const DsGraphShapes *ds_session_get_symbolic_shapes(DsSession *session);
/* An entry's tensor: a bound variable's at any time after ds_session_prepare(), others as the
 * executor last left them (ds_executor_get_entry()). Borrowed. */
const DsTensor *ds_session_get_entry(DsSession *session, guint entry);
/* Symbol `name`'s value: the one the running or last run bound (input sizes, data-dependent
 * `u0`), else the session's binding. FALSE if there is no such symbol or it has no value. */
gboolean ds_session_lookup_symbol(DsSession *session, const char *name, int64_t *value);
void ds_session_set_hooks(DsSession *session, const DsExecutorHooks *hooks, gpointer data);
void ds_session_set_deadline(DsSession *session, gint64 deadline_us);

/* ---- symbolic shapes ---- */

/* The session's expression engine: the symbols of declared shapes, assumptions and
 * inference. Borrowed. */
DsExprCtx *ds_session_get_exprs(DsSession *session);
/* Parses a shape like "(s0, 3, s1, s1)" or "(1, 2*s1)": integers or expressions. */
gboolean ds_session_parse_shape(DsSession *session, const char *text, DsShape *shape,
                                GError **error);
/* Adds a fact: "s1>=8", "s1 in [1, 4096]", "s2 == 2*s1". */
gboolean ds_session_assume(DsSession *session, const char *text, GError **error);
/* Gives symbol `name` a value (checked against its range and earlier bindings). */
gboolean ds_session_bind_symbol(DsSession *session, const char *name, int64_t value,
                                GError **error);

/* Infers every entry's shape as expressions over the declared symbols (and fresh symbols for
 * the `__shape__` dims MXNet marks unknown), learning facts on the way; dims are resolved.
 * Broadcasts the facts could not decide are listed by ds_session_get_notes(). Borrowed. */
const DsGraphShapes *ds_session_infer_symbolic(DsSession *session, GError **error);
/* Notes from the last symbolic inference (strings). Borrowed. */
GPtrArray *ds_session_get_notes(DsSession *session);
/* Guards from the last symbolic inference (DsShapeGuard*), checked by ds_session_evaluate().
 * Borrowed. */
GPtrArray *ds_session_get_guards(DsSession *session);
/* The symbolic shapes evaluated with the current bindings, after checking every guard the
 * bindings decide (a binding that breaks one is an error naming the node). Caller frees.
 * With `partial`, dims using unbound symbols stay symbolic instead of failing. */
DsGraphShapes *ds_session_evaluate(DsSession *session, const DsGraphShapes *symbolic,
                                   gboolean partial, GError **error);
/* Forgets a symbol's value (--sweep rebinds one symbol many times). */
void ds_session_unbind_symbol(DsSession *session, const char *name);

/* Compile once, run many sizes: infers symbolically once; then each ds_session_resize()
 * evaluates the shapes for the current bindings and re-plans the same executor (kernels stay
 * resolved, buffers grow only when needed). Data variables without a fed array are filled
 * at random for each size when `random_inputs`. */
gboolean ds_session_compile(DsSession *session, const DsBackend *backend, int n_threads,
                            GError **error);
gboolean ds_session_resize(DsSession *session, gboolean random_inputs, guint64 seed,
                           GError **error);
/* Time the last ds_session_resize() spent evaluating shapes and re-planning (ns), input
 * filling excluded. */
guint64 ds_session_get_resize_ns(DsSession *session);

/* How a variable is used, from the argument names of the ops that read it. */
DsVariableKind ds_session_classify_variable(DsSession *session, const DsNode *variable);
const char *ds_variable_kind_name(DsVariableKind kind);
/* Writes the arrays the model file itself holds (an ONNX file's initializers and constants)
 * to `path` as an MXNet .params file, "aux:" for what ops read as auxiliary states and "arg:"
 * for the rest, in graph order; `n_saved` says how many. */
gboolean ds_session_save_file_weights(DsSession *session, const char *path, guint *n_saved,
                                      GError **error);
