/* ds-plan.h: static memory planning by liveness.
 *
 * Every intermediate entry gets a byte offset in one arena. Entries whose lifetimes (from the
 * node that writes them to the last node that reads them) overlap never share bytes; the
 * others reuse each other's. Offsets are assigned greedily, largest first, at the lowest gap
 * that fits (the "greedy by size" scheme TFLite's arena planner uses), which lands within a few
 * percent of the max-live lower bound on real networks.
 *
 * Variables (inputs and weights) are pinned: they live in the caller's buffers, not the arena.
 * Graph outputs live to the end. The output of a view op (Reshape, Flatten, expand_dims...)
 * aliases its input's bytes instead of getting a buffer: its kernel then has nothing to copy.
 *
 * Memory policy: a DsPlan is immutable once built; the caller frees it.
 */
#pragma once

#include "ds-graph.h"
#include "ds-infer.h"

#define DS_PLAN_ALIGN 64
#define DS_PLAN_PINNED ((gsize)-1)

typedef struct {
  guint n_entries;
  gsize *offsets;        /* byte offset in the arena, or DS_PLAN_PINNED for variables */
  gsize *sizes;          /* bytes per entry (unaligned) */
  guint *first_use;      /* node id that writes the entry */
  guint *last_use;       /* last node id that reads it (n_nodes for graph outputs) */
  guint *storage;        /* the entry whose bytes this one uses: itself, or a view's source */
  gsize arena_bytes;     /* the planned peak: the arena's size */
  gsize total_bytes;     /* sum of all intermediate buffers (no reuse at all) */
  gsize max_live_bytes;  /* lower bound: the most bytes live at any one node */
  guint n_buffers;       /* intermediate entries planned */
  guint n_aliases;       /* view outputs sharing their input's bytes */
  guint peak_node;       /* the node at which the most bytes are live */
} DsPlan;

/* Plans `graph` with fully known `shapes`. */
DsPlan *ds_plan_new(const DsGraph *graph, const DsGraphShapes *shapes, GError **error);

/* The size-independent half of planning (lifetimes, view aliases, which buffers are live at
 * the same time), computed once per graph so that re-planning for new sizes ("compile once,
 * run many sizes") costs a sort and a pass over each buffer's conflicts, not a scan of all
 * pairs. The graph must outlive the planner. */
typedef struct _DsPlanner DsPlanner;
DsPlanner *ds_planner_new(const DsGraph *graph);
/* A planner for the nodes with in_region[id] set (copied): entries produced outside the
 * region are pinned (their sizes are not needed), and entries read outside it or by the
 * graph's heads live to the end of the region. */
DsPlanner *ds_planner_new_region(const DsGraph *graph, const gboolean *in_region);
DsPlan *ds_planner_plan(DsPlanner *planner, const DsGraphShapes *shapes, GError **error);
void ds_planner_free(DsPlanner *planner);
void ds_plan_free(DsPlan *plan);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsPlan, ds_plan_free)

/* Bytes of one entry given its shape and dtype; FALSE if the size overflows. */
gboolean ds_entry_nbytes(const DsShape *shape, DsDType dtype, gsize *nbytes);
