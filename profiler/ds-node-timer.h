/* ds-node-timer.h: per-node wall time from the executor's hooks.
 *
 * The smallest profiler: it adds each node's monotonic-clock time (ns) to a per-node total
 * and counts executions. It plugs into the executor's per-node hooks and nothing else.
 *
 * Memory policy: the timer owns its arrays; it must outlive the runs it times.
 */
#pragma once

#include "ds-executor.h"

typedef struct _DsNodeTimer DsNodeTimer;

/* A timer for a graph of `n_nodes` nodes. */
DsNodeTimer *ds_node_timer_new(guint n_nodes);
void ds_node_timer_free(DsNodeTimer *timer);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsNodeTimer, ds_node_timer_free)

/* Installs the timer's hooks on `exec` (replacing any others). */
void ds_node_timer_attach(DsNodeTimer *timer, DsExecutor *exec);
/* The timer's hooks, for any executor (the dynamic one, a session); their data is the timer. */
const DsExecutorHooks *ds_node_timer_get_hooks(void);

/* Total ns spent in node `id` over all runs, and how many times it ran. */
guint64 ds_node_timer_get_total_ns(const DsNodeTimer *timer, guint id);
guint64 ds_node_timer_get_count(const DsNodeTimer *timer, guint id);

/* The monotonic clock in ns. */
guint64 ds_monotonic_ns(void);
