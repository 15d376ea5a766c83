/* ds-node-timer.c */
#include "ds-node-timer.h"

#include <time.h>

struct _DsNodeTimer {
  guint n_nodes;
  guint64 *total_ns;
  guint64 *count;
  guint64 started_ns;
  guint depth; /* subgraph frames entered: their nodes belong to another graph */
};

guint64 ds_monotonic_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (guint64)ts.tv_sec * 1000000000u + (guint64)ts.tv_nsec;
}

DsNodeTimer *ds_node_timer_new(guint n_nodes)
{
  DsNodeTimer *timer = g_new0(DsNodeTimer, 1);
  timer->n_nodes = n_nodes;
  timer->total_ns = g_new0(guint64, n_nodes);
  timer->count = g_new0(guint64, n_nodes);
  return timer;
}

void ds_node_timer_free(DsNodeTimer *timer)
{
  if (timer == NULL)
    return;
  g_free(timer->total_ns);
  g_free(timer->count);
  g_free(timer);
}

/* Only the top graph's nodes are timed: a loop's time is its node's, iterations included. */
static gboolean node_begin(gpointer data, const DsNode *node)
{
  DsNodeTimer *timer = data;
  (void)node;
  if (timer->depth == 0)
    timer->started_ns = ds_monotonic_ns();
  return TRUE;
}

static void node_end(gpointer data, const DsNode *node, const DsTensor *inputs,
                     const DsTensor *outputs)
{
  DsNodeTimer *timer = data;
  (void)inputs, (void)outputs;
  if (timer->depth > 0)
    return;
  timer->total_ns[node->id] += ds_monotonic_ns() - timer->started_ns;
  timer->count[node->id]++;
}

static void frame_enter(gpointer data, const DsFrame *frame)
{
  DsNodeTimer *timer = data;
  timer->depth += frame->kind == DS_FRAME_SUBGRAPH;
}

static void frame_exit(gpointer data, const DsFrame *frame)
{
  DsNodeTimer *timer = data;
  timer->depth -= frame->kind == DS_FRAME_SUBGRAPH;
}

static const DsExecutorHooks timer_hooks = {
    .node_begin = node_begin,
    .node_end = node_end,
    .frame_enter = frame_enter,
    .frame_exit = frame_exit,
};

void ds_node_timer_attach(DsNodeTimer *timer, DsExecutor *exec)
{
  g_return_if_fail(ds_executor_get_graph(exec)->n_nodes <= timer->n_nodes);
  ds_executor_set_hooks(exec, &timer_hooks, timer);
}

const DsExecutorHooks *ds_node_timer_get_hooks(void)
{
  return &timer_hooks;
}

guint64 ds_node_timer_get_total_ns(const DsNodeTimer *timer, guint id)
{
  g_return_val_if_fail(id < timer->n_nodes, 0);
  return timer->total_ns[id];
}

guint64 ds_node_timer_get_count(const DsNodeTimer *timer, guint id)
{
  g_return_val_if_fail(id < timer->n_nodes, 0);
  return timer->count[id];
}
