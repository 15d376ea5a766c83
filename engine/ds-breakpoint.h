/* ds-breakpoint.h: where the debug cursor stops on its own.
 *
 * A breakpoint names a node or an op type, with an optional condition, in gdb's form:
 *
 *     fc1                       every time node fc1 has run
 *     FullyConnected            every FullyConnected node
 *     fc1 if iter==3            in the fourth iteration of the innermost loop
 *     * if nan>0                the first node whose outputs hold a NaN
 *     dense0 if s1>512 && max>=10
 *
 * A condition is `NAME OP NUMBER` (OP: == != < <= > >=), several joined by `&&`. NAME is
 * `iter` (the innermost loop iteration, from 0), a statistic of the node's outputs taken
 * together (`nan`, `inf`: counts; `min`, `max`, `mean`: over finite elements; `numel`), or a
 * symbol of the model's shapes (`s1`, or `u0`, a size the data decided). A condition whose
 * name has no value at the stop (no loop, a symbol not yet bound) is false.
 *
 * Memory policy: a DsBreakpoint owns its strings; it does not refer to any graph.
 */
#pragma once

#include "ds-graph.h"
#include "ds-tensor.h"

typedef struct _DsBreakpoint DsBreakpoint;

/* What a condition is tested against: the stop's loop iteration and symbols, and the node's
 * outputs. */
typedef struct {
  gint64 iteration; /* -1 outside loops */
  gboolean (*lookup_symbol)(gpointer data, const char *name, int64_t *value);
  gpointer lookup_data;
  const DsTensor *outputs;
  guint n_outputs;
} DsBreakpointScope;

/* Parses a spec; errors say what was expected where. */
DsBreakpoint *ds_breakpoint_parse(const char *spec, GError **error);
void ds_breakpoint_free(DsBreakpoint *bp);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsBreakpoint, ds_breakpoint_free)

/* The spec as given, and its target ("*" for any node). Borrowed. */
const char *ds_breakpoint_get_spec(const DsBreakpoint *bp);
const char *ds_breakpoint_get_target(const DsBreakpoint *bp);
/* The symbol names its conditions use (NULL-terminated, borrowed). */
const char *const *ds_breakpoint_get_symbols(const DsBreakpoint *bp);

/* Whether the target names this node or its op. */
gboolean ds_breakpoint_matches(const DsBreakpoint *bp, const DsNode *node);
/* Whether the condition holds (no condition: always). */
gboolean ds_breakpoint_test(const DsBreakpoint *bp, const DsBreakpointScope *scope);
