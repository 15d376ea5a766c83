/* ds-plan.c: liveness and greedy-by-size offset assignment. */
#include "ds-plan.h"

#include "ds-error.h"
#include "ds-ndarray.h"
#include "ds-op.h"

static gsize align_up(gsize n)
{
  return (n + DS_PLAN_ALIGN - 1) & ~(gsize)(DS_PLAN_ALIGN - 1);
}

gboolean ds_entry_nbytes(const DsShape *shape, DsDType dtype, gsize *nbytes)
{
  int64_t dims[DS_MAX_NDIM];
  if (!ds_shape_get_concrete(shape, dims))
    return FALSE;
  return ds_shape_checked_nbytes(dims, shape->ndim, ds_dtype_size(dtype), G_MAXSIZE / 2, nbytes);
}

/* What planning needs that does not depend on sizes, computed once per graph: lifetimes, view
 * aliases and, for every buffer, the other buffers live at the same time. A re-plan for new
 * sizes then only sorts by size and places each buffer against its own conflict list. */
struct _DsPlanner {
  const DsGraph *graph; /* borrowed: the caller keeps it alive */
  gboolean *in_region;  /* the nodes planned here; NULL for all */
  guint n_entries;
  guint *first_use, *last_use, *storage;
  gboolean *pinned;
  guint n_aliases;
  guint *buffers; /* entries that own arena bytes (unpinned storage roots) */
  guint n_buffers;
  guint *conflict_start; /* CSR: buffer i conflicts with conflicts[start[i] .. start[i+1]) */
  guint *conflicts;      /* buffer indices */
};

static int by_first_use(gconstpointer a, gconstpointer b, gpointer data)
{
  const guint *first = data;
  guint x = first[*(const guint *)a], y = first[*(const guint *)b];
  return x < y ? -1 : (x > y);
}

DsPlanner *ds_planner_new(const DsGraph *graph)
{
  return ds_planner_new_region(graph, NULL);
}

/* In a region, entries produced outside it are pinned like variables (the caller binds them),
 * and entries read outside it live to the end, like graph outputs. */
DsPlanner *ds_planner_new_region(const DsGraph *graph, const gboolean *in_region)
{
  DsPlanner *pl = g_new0(DsPlanner, 1);
  guint n = ds_graph_n_entries(graph);
  pl->graph = graph;
  if (in_region != NULL)
    pl->in_region = g_memdup2(in_region, sizeof(gboolean) * graph->n_nodes);
  pl->n_entries = n;
  pl->first_use = g_new0(guint, n);
  pl->last_use = g_new0(guint, n);
  pl->storage = g_new(guint, n);
  pl->pinned = g_new0(gboolean, n);

  /* 1. Lifetimes: from the writing node to the last reader (graph outputs to the end). */
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    for (guint k = 0; k < node->n_outputs; k++) {
      guint e = graph->node_row_ptr[i] + k;
      pl->first_use[e] = pl->last_use[e] = i;
      pl->storage[e] = e;
      pl->pinned[e] = ds_node_is_variable(node) || (pl->in_region != NULL && !pl->in_region[i]);
    }
    gboolean reader_outside = pl->in_region != NULL && !pl->in_region[i];
    for (guint k = 0; k < node->n_inputs; k++) {
      guint e = ds_graph_entry_id(graph, node->inputs[k]);
      pl->last_use[e] = reader_outside ? graph->n_nodes : MAX(pl->last_use[e], i);
    }
  }
  for (guint h = 0; h < graph->n_heads; h++)
    pl->last_use[ds_graph_entry_id(graph, graph->heads[h])] = graph->n_nodes;

  /* 2. Views alias their source when the source is planned here (a view of a pinned weight
   * keeps its own buffer: the caller owns the weight). View ops keep the byte count by
   * definition. The source's lifetime grows to cover every alias; nodes come in topological
   * order, so a view of a view finds its final storage already resolved. */
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    if (node->op == NULL || !(node->op->traits & DS_OP_TRAIT_VIEW) || node->n_inputs < 1 ||
        node->n_outputs != 1 || pl->pinned[graph->node_row_ptr[i]])
      continue;
    guint out = graph->node_row_ptr[i];
    guint root = pl->storage[ds_graph_entry_id(graph, node->inputs[0])];
    if (pl->pinned[root])
      continue;
    pl->storage[out] = root;
    pl->last_use[root] = MAX(pl->last_use[root], pl->last_use[out]);
    pl->n_aliases++;
  }

  /* 3. The buffers, and which of them are live at the same time: a sweep in order of first
   * use, keeping the buffers still live. */
  pl->buffers = g_new(guint, n + 1);
  for (guint e = 0; e < n; e++)
    if (!pl->pinned[e] && pl->storage[e] == e)
      pl->buffers[pl->n_buffers++] = e;
  g_qsort_with_data(pl->buffers, (gint)pl->n_buffers, sizeof(guint), by_first_use, pl->first_use);
  g_autoptr(GArray) pairs = g_array_new(FALSE, FALSE, sizeof(guint) * 2);
  g_autoptr(GArray) active = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint b = 0; b < pl->n_buffers; b++) {
    guint e = pl->buffers[b];
    for (guint j = 0; j < active->len;) {
      guint o = g_array_index(active, guint, j);
      if (pl->last_use[pl->buffers[o]] < pl->first_use[e]) {
        g_array_remove_index_fast(active, j);
        continue;
      }
      guint pair[2] = {b, o};
      g_array_append_vals(pairs, pair, 1);
      j++;
    }
    g_array_append_val(active, b);
  }
  pl->conflict_start = g_new0(guint, pl->n_buffers + 1);
  for (guint p = 0; p < pairs->len; p++) {
    const guint *pair = &g_array_index(pairs, guint, p * 2);
    pl->conflict_start[pair[0] + 1]++;
    pl->conflict_start[pair[1] + 1]++;
  }
  for (guint b = 0; b < pl->n_buffers; b++)
    pl->conflict_start[b + 1] += pl->conflict_start[b];
  pl->conflicts = g_new(guint, pl->conflict_start[pl->n_buffers] + 1);
  g_autofree guint *fill = g_memdup2(pl->conflict_start, sizeof(guint) * (pl->n_buffers + 1));
  for (guint p = 0; p < pairs->len; p++) {
    const guint *pair = &g_array_index(pairs, guint, p * 2);
    pl->conflicts[fill[pair[0]]++] = pair[1];
    pl->conflicts[fill[pair[1]]++] = pair[0];
  }
  return pl;
}

void ds_planner_free(DsPlanner *pl)
{
  if (pl == NULL)
    return;
  g_free(pl->first_use);
  g_free(pl->last_use);
  g_free(pl->storage);
  g_free(pl->pinned);
  g_free(pl->in_region);
  g_free(pl->buffers);
  g_free(pl->conflict_start);
  g_free(pl->conflicts);
  g_free(pl);
}

typedef struct {
  guint buffer; /* index into planner->buffers */
  gsize size;   /* aligned */
} Item;

static int by_size_desc(gconstpointer a, gconstpointer b)
{
  const Item *x = a, *y = b;
  if (x->size != y->size)
    return x->size > y->size ? -1 : 1;
  return x->buffer < y->buffer ? -1 : (x->buffer > y->buffer); /* same input, same plan */
}

typedef struct {
  gsize offset, end;
} Range;

static int by_offset(gconstpointer a, gconstpointer b)
{
  const Range *x = a, *y = b;
  return x->offset < y->offset ? -1 : (x->offset > y->offset);
}

DsPlan *ds_planner_plan(DsPlanner *pl, const DsGraphShapes *shapes, GError **error)
{
  const DsGraph *graph = pl->graph;
  guint n = pl->n_entries;
  g_return_val_if_fail(shapes->n_entries == n, NULL);
  g_autoptr(DsPlan) plan = g_new0(DsPlan, 1);
  plan->n_entries = n;
  plan->offsets = g_new0(gsize, n);
  plan->sizes = g_new0(gsize, n);
  plan->first_use = g_memdup2(pl->first_use, sizeof(guint) * n);
  plan->last_use = g_memdup2(pl->last_use, sizeof(guint) * n);
  plan->storage = g_memdup2(pl->storage, sizeof(guint) * n);
  plan->n_aliases = pl->n_aliases;

  /* 1. Sizes. */
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    for (guint k = 0; k < node->n_outputs; k++) {
      guint e = graph->node_row_ptr[i] + k;
      if (pl->in_region != NULL && !pl->in_region[i]) {
        plan->offsets[e] = DS_PLAN_PINNED; /* outside the region: bound by the caller */
        continue;
      }
      if (!ds_entry_nbytes(&shapes->shapes[e], shapes->dtypes[e], &plan->sizes[e])) {
        g_set_error(error, DS_ERROR, DS_ERROR_LIMIT,
                    "node '%s' (%s): output %u has no concrete size, or its size overflows",
                    node->name, node->op_name, k);
        return NULL;
      }
      if (pl->pinned[e])
        plan->offsets[e] = DS_PLAN_PINNED;
    }
  }

  /* 2. The max-live lower bound, by a sweep over node steps with a difference array. */
  g_autofree gint64 *delta = g_new0(gint64, graph->n_nodes + 2);
  g_autofree Item *items = g_new(Item, pl->n_buffers + 1);
  guint n_items = 0;
  for (guint b = 0; b < pl->n_buffers; b++) {
    guint e = pl->buffers[b];
    if (plan->sizes[e] == 0)
      continue;
    items[n_items] = (Item){b, align_up(plan->sizes[e])};
    plan->total_bytes += items[n_items].size;
    delta[pl->first_use[e]] += (gint64)items[n_items].size;
    delta[pl->last_use[e] + 1] -= (gint64)items[n_items].size;
    n_items++;
  }
  gint64 live = 0;
  for (guint t = 0; t <= graph->n_nodes; t++) {
    live += delta[t];
    if ((gsize)live > plan->max_live_bytes) {
      plan->max_live_bytes = (gsize)live;
      plan->peak_node = MIN(t, graph->n_nodes - 1);
    }
  }
  plan->n_buffers = n_items;

  /* 3. Greedy by size: each buffer goes into the lowest gap among the already placed buffers
   * it conflicts with (the "greedy by size" scheme TFLite's arena planner uses). */
  qsort(items, n_items, sizeof(Item), by_size_desc);
  g_autofree gboolean *placed = g_new0(gboolean, pl->n_buffers + 1);
  g_autofree Range *ranges = g_new(Range, pl->conflict_start[pl->n_buffers] + 1);
  for (guint i = 0; i < n_items; i++) {
    guint b = items[i].buffer, e = pl->buffers[b];
    guint n_ranges = 0;
    for (guint c = pl->conflict_start[b]; c < pl->conflict_start[b + 1]; c++) {
      guint o = pl->conflicts[c];
      if (!placed[o])
        continue;
      guint oe = pl->buffers[o];
      ranges[n_ranges++] =
          (Range){plan->offsets[oe], plan->offsets[oe] + align_up(plan->sizes[oe])};
    }
    qsort(ranges, n_ranges, sizeof(Range), by_offset);
    gsize offset = 0;
    for (guint j = 0; j < n_ranges; j++) {
      if (ranges[j].offset >= offset + items[i].size)
        break; /* the gap before this range fits */
      offset = MAX(offset, ranges[j].end);
    }
    plan->offsets[e] = offset;
    plan->arena_bytes = MAX(plan->arena_bytes, offset + items[i].size);
    placed[b] = TRUE;
  }
  for (guint e = 0; e < n; e++)
    if (plan->storage[e] != e)
      plan->offsets[e] = plan->offsets[plan->storage[e]];
  if (plan->arena_bytes > ds_memory_get_limit_bytes()) {
    const DsNode *peak = graph->nodes[plan->peak_node];
    g_set_error(error, DS_ERROR, DS_ERROR_LIMIT,
                "node '%s' (%s): the memory plan peaks there at %zu bytes, over the limit of "
                "%zu bytes (--max-memory)",
                peak->name, peak->op_name, plan->arena_bytes, ds_memory_get_limit_bytes());
    return NULL;
  }
  return g_steal_pointer(&plan);
}

DsPlan *ds_plan_new(const DsGraph *graph, const DsGraphShapes *shapes, GError **error)
{
  DsPlanner *pl = ds_planner_new(graph);
  DsPlan *plan = ds_planner_plan(pl, shapes, error);
  ds_planner_free(pl);
  return plan;
}

void ds_plan_free(DsPlan *plan)
{
  if (plan == NULL)
    return;
  g_free(plan->offsets);
  g_free(plan->sizes);
  g_free(plan->first_use);
  g_free(plan->last_use);
  g_free(plan->storage);
  g_free(plan);
}
