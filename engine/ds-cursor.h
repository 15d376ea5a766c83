/* ds-cursor.h: a resumable debug cursor over a session's run.
 *
 * A run is paused and resumed node by node, into loops, branches and partition regions: the
 * cursor is where execution stands, a stack of frames (the model's graph, then each region
 * or subgraph run entered, with its loop iteration or branch) and the node that last ran.
 * Commands run to the next stop and return why they stopped:
 *   step       the next node of this frame, running a loop or region whole; at a frame's
 *              end, the node after the loop in the frame above;
 *   step into  the very next node, entering the subgraph or region it runs;
 *   step out   to the end of the frame: after its loop, branch or region node;
 *   continue   to the next breakpoint or the end of the run;
 *   run to     continue with a one-time breakpoint.
 * A stop is after a node ran, so its inputs and outputs are there to read, and so is every
 * tensor of every frame that a later node still reads (ds_cursor_list_live()). Breakpoints
 * (ds-breakpoint.h) stop any command. After the end of a run, the next command starts a new
 * one.
 *
 * The run goes through the executors' own code: the cursor is a set of hooks. It runs in a
 * worker thread that waits inside the hook at each stop, so a paused run keeps every buffer
 * and the stack of nested executors exactly as they were, and a plain ds_session_run()
 * without hooks does nothing extra. Commands block until the stop; call them from one thread
 * (the GUI calls them off its main loop), and read stops only between commands.
 *
 * Memory policy: the cursor borrows a prepared session, which must outlive it and not be run
 * by anyone else while the cursor is paused. Everything read at a stop is borrowed and valid
 * until the next command.
 */
#pragma once

#include "ds-breakpoint.h"
#include "ds-session.h"

typedef struct _DsCursor DsCursor;

typedef enum {
  DS_CURSOR_FAILED,     /* the run failed or was cancelled: error set, the run is over */
  DS_CURSOR_STEPPED,    /* stopped where the command ended */
  DS_CURSOR_BREAKPOINT, /* stopped at a breakpoint (ds_cursor_get_hit()) */
  DS_CURSOR_FINISHED,   /* the run completed; the session holds its outputs */
} DsCursorStop;

/* One frame of the stack. The outermost is the model's graph (DS_FRAME_GRAPH). */
typedef struct {
  DsFrameKind kind;
  DsGraph *graph;
  const DsNode *owner; /* the control-flow node running this subgraph */
  const char *name;    /* region name, or role: body, cond, func, then, else */
  gint64 iteration;    /* loop iteration, or -1 */
  const DsNode *node;  /* the node that last ran here, or NULL */
} DsCursorFrame;

/* A tensor that is live at a stop. */
typedef struct {
  guint frame;      /* the frame whose graph holds it */
  guint entry;      /* its entry in that graph */
  const char *name; /* "fc1_output", "data": the entry's name */
  const DsTensor *tensor;
} DsCursorTensor;

DsCursor *ds_cursor_new(DsSession *session);
/* Cancels a paused run first. */
void ds_cursor_free(DsCursor *cursor);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsCursor, ds_cursor_free)

/* ---- breakpoints ---- */

/* Adds a breakpoint from a spec (ds-breakpoint.h); its id (from 1), or 0 with an error if
 * the spec is malformed or names a symbol the model does not have. */
guint ds_cursor_add_breakpoint(DsCursor *cursor, const char *spec, GError **error);
gboolean ds_cursor_remove_breakpoint(DsCursor *cursor, guint id);
/* The breakpoint with this id, or NULL. Borrowed. */
const DsBreakpoint *ds_cursor_get_breakpoint(DsCursor *cursor, guint id);

/* ---- commands ---- */

DsCursorStop ds_cursor_step(DsCursor *cursor, GError **error);
DsCursorStop ds_cursor_step_into(DsCursor *cursor, GError **error);
DsCursorStop ds_cursor_step_out(DsCursor *cursor, GError **error);
DsCursorStop ds_cursor_continue(DsCursor *cursor, GError **error);
DsCursorStop ds_cursor_run_to(DsCursor *cursor, const char *spec, GError **error);
/* Abandons a paused run (its later nodes do not run); the next command starts a new one. */
void ds_cursor_reset(DsCursor *cursor);
/* From any thread: the command in progress stops before its next node and fails with
 * DS_ERROR_CANCELLED. */
void ds_cursor_cancel(DsCursor *cursor);

/* ---- at a stop ---- */

gboolean ds_cursor_is_paused(DsCursor *cursor);
guint ds_cursor_get_n_frames(DsCursor *cursor);
const DsCursorFrame *ds_cursor_get_frame(DsCursor *cursor, guint i); /* 0: outermost */
/* Where it stopped, as a path: "while0/iter3/fc1", "cond0/then/relu1", "static0" (after a
 * region). Caller frees. */
char *ds_cursor_dup_path(DsCursor *cursor);
/* The node that just ran, or NULL after a region (the path names it) or when not paused. */
const DsNode *ds_cursor_get_node(DsCursor *cursor);
/* Its inputs and outputs (node->n_inputs and ds_node_n_op_outputs() of them). */
const DsTensor *ds_cursor_get_inputs(DsCursor *cursor);
const DsTensor *ds_cursor_get_outputs(DsCursor *cursor);
/* The breakpoint that stopped the last command, or 0. */
guint ds_cursor_get_hit(DsCursor *cursor);
/* Nodes run so far in this run, nested ones included. */
guint64 ds_cursor_get_n_steps(DsCursor *cursor);
/* The innermost loop iteration at the stop, or -1. */
gint64 ds_cursor_get_iteration(DsCursor *cursor);
/* Every live tensor, outermost frame first (DsCursorTensor). Caller frees the array. */
GArray *ds_cursor_list_live(DsCursor *cursor);
