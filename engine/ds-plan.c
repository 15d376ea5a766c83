/* ds-plan.c: liveness and greedy-by-size offset assignment. */
#include "ds-plan.h"

#include "ds-error.h"
#include "ds-ndarray.h"
#include "ds-op.h"

static gsize align_up(gsize n) { return (n + DS_PLAN_ALIGN - 1) & ~(gsize)(DS_PLAN_ALIGN - 1); }

gboolean ds_entry_nbytes(const DsShape *shape, DsDType dtype, gsize *nbytes)
{
  int64_t dims[DS_MAX_NDIM];
  if (!ds_shape_get_concrete(shape, dims))
    return FALSE;
  return ds_shape_checked_nbytes(dims, shape->ndim, ds_dtype_size(dtype), G_MAXSIZE / 2, nbytes);
}

typedef struct {
  guint entry;
  gsize size; /* aligned */
} Item;

static int by_size_desc(gconstpointer a, gconstpointer b)
{
  const Item *x = a, *y = b;
  if (x->size != y->size)
    return x->size > y->size ? -1 : 1;
  return x->entry < y->entry ? -1 : (x->entry > y->entry); /* stable: same input, same plan */
}

typedef struct {
  gsize offset, end;
} Range;

static int by_offset(gconstpointer a, gconstpointer b)
{
  const Range *x = a, *y = b;
  return x->offset < y->offset ? -1 : (x->offset > y->offset);
}

DsPlan *ds_plan_new(const DsGraph *graph, const DsGraphShapes *shapes, GError **error)
{
  guint n = ds_graph_n_entries(graph);
  g_autoptr(DsPlan) plan = g_new0(DsPlan, 1);
  plan->n_entries = n;
  plan->offsets = g_new(gsize, n);
  plan->sizes = g_new0(gsize, n);
  plan->first_use = g_new0(guint, n);
  plan->last_use = g_new0(guint, n);
  plan->storage = g_new(guint, n);
  for (guint e = 0; e < n; e++)
    plan->storage[e] = e;

  /* 1. Sizes and lifetimes. */
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    for (guint k = 0; k < node->n_outputs; k++) {
      guint e = graph->node_row_ptr[i] + k;
      if (!ds_entry_nbytes(&shapes->shapes[e], shapes->dtypes[e], &plan->sizes[e])) {
        g_set_error(error, DS_ERROR, DS_ERROR_LIMIT,
                    "node '%s' (%s): output %u has no concrete size, or its size overflows",
                    node->name, node->op_name, k);
        return NULL;
      }
      plan->first_use[e] = plan->last_use[e] = i;
      plan->offsets[e] = ds_node_is_variable(node) ? DS_PLAN_PINNED : 0;
    }
    for (guint k = 0; k < node->n_inputs; k++) {
      guint e = ds_graph_entry_id(graph, node->inputs[k]);
      plan->last_use[e] = MAX(plan->last_use[e], i);
    }
  }
  for (guint h = 0; h < graph->n_heads; h++)
    plan->last_use[ds_graph_entry_id(graph, graph->heads[h])] = graph->n_nodes;

  /* 2. Views alias their source when the bytes are the same and the source is planned here
   * (a view of a pinned weight keeps its own buffer: the caller owns the weight). The source's
   * lifetime grows to cover every alias. Nodes come in topological order, so a view of a view
   * finds its final storage already resolved. */
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    if (node->op == NULL || !(node->op->traits & DS_OP_TRAIT_VIEW) || node->n_inputs < 1 ||
        node->n_outputs != 1)
      continue;
    guint out = graph->node_row_ptr[i];
    guint root = plan->storage[ds_graph_entry_id(graph, node->inputs[0])];
    if (plan->offsets[root] == DS_PLAN_PINNED || plan->sizes[root] != plan->sizes[out])
      continue;
    plan->storage[out] = root;
    plan->last_use[root] = MAX(plan->last_use[root], plan->last_use[out]);
    plan->n_aliases++;
  }

  /* 3. The max-live lower bound, by a sweep over node steps with a difference array. */
  g_autofree gint64 *delta = g_new0(gint64, graph->n_nodes + 2);
  g_autoptr(GArray) items = g_array_new(FALSE, FALSE, sizeof(Item));
  for (guint e = 0; e < n; e++) {
    if (plan->offsets[e] == DS_PLAN_PINNED || plan->sizes[e] == 0 || plan->storage[e] != e)
      continue;
    Item item = {e, align_up(plan->sizes[e])};
    g_array_append_val(items, item);
    plan->total_bytes += item.size;
    delta[plan->first_use[e]] += (gint64)item.size;
    delta[plan->last_use[e] + 1] -= (gint64)item.size;
  }
  gint64 live = 0;
  for (guint t = 0; t <= graph->n_nodes; t++) {
    live += delta[t];
    if ((gsize)live > plan->max_live_bytes) {
      plan->max_live_bytes = (gsize)live;
      plan->peak_node = MIN(t, graph->n_nodes - 1);
    }
  }
  plan->n_buffers = items->len;

  /* 4. Greedy by size: each buffer goes into the lowest gap among the already placed buffers
   * whose lifetimes overlap its own. */
  g_array_sort(items, by_size_desc);
  g_autoptr(GArray) placed = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) conflicts = g_array_new(FALSE, FALSE, sizeof(Range));
  for (guint i = 0; i < items->len; i++) {
    Item *item = &g_array_index(items, Item, i);
    guint e = item->entry;
    g_array_set_size(conflicts, 0);
    for (guint j = 0; j < placed->len; j++) {
      guint o = g_array_index(placed, guint, j);
      if (plan->first_use[o] <= plan->last_use[e] && plan->first_use[e] <= plan->last_use[o]) {
        Range r = {plan->offsets[o], plan->offsets[o] + align_up(plan->sizes[o])};
        g_array_append_val(conflicts, r);
      }
    }
    g_array_sort(conflicts, by_offset);
    gsize offset = 0;
    for (guint j = 0; j < conflicts->len; j++) {
      Range *r = &g_array_index(conflicts, Range, j);
      if (r->offset >= offset + item->size)
        break; /* the gap before this range fits */
      offset = MAX(offset, r->end);
    }
    plan->offsets[e] = offset;
    plan->arena_bytes = MAX(plan->arena_bytes, offset + item->size);
    g_array_append_val(placed, e);
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
