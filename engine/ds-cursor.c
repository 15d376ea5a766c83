/* ds-cursor.c: the debug cursor, a worker thread paused inside the executor's hooks. */
#include "ds-cursor.h"

#include <string.h>

#include "ds-error.h"
#include "ds-expr.h"
#include "ds-partition.h"

typedef enum {
  MODE_INTO, /* stop at the next event */
  MODE_OVER, /* ... at the depth of the last stop or above */
  MODE_OUT,  /* ... above the depth of the last stop */
  MODE_CONTINUE,
} Mode;

typedef enum {
  PHASE_IDLE,    /* no run */
  PHASE_RUNNING, /* the worker runs; the controller waits */
  PHASE_PAUSED,  /* the worker waits inside a hook; the stop may be read */
  PHASE_DONE,    /* the run has finished; the worker waits for the next */
} Phase;

/* What the cursor knows of a graph once: who reads each entry, and names. */
typedef struct {
  DsGraph *graph;
  guint n_entries;
  guint *readers; /* per entry: nodes reading it, +1 for graph outputs (read "at the end") */
  guint *vars;    /* entries of the variables, in node order: a subgraph's inputs */
  guint n_vars;
  char **names; /* per entry, made when first listed */
} GraphInfo;

/* The tensors of one graph in one frame: what each entry holds and who still reads it. */
typedef struct {
  GraphInfo *info;
  DsTensor *values;
  gboolean *have;
  guint *readers_left;
} Table;

typedef struct {
  DsCursorFrame pub;
  Table own;    /* used by graph and subgraph frames */
  Table *table; /* own, or the parent's for a region (same graph) */
} Frame;

typedef struct {
  guint id;
  DsBreakpoint *bp;
  gboolean once; /* run_to's: removed when hit */
} Breakpoint;

struct _DsCursor {
  DsSession *session;
  GHashTable *infos; /* DsGraph* -> GraphInfo* */
  GPtrArray *breakpoints;
  guint next_id;

  GMutex lock;
  GCond changed;
  Phase phase;
  GThread *worker;  /* made by the first command, kept for later runs */
  gboolean start;   /* the worker is to start a run */
  gboolean quit;    /* the worker is to end */
  gint abort; /* atomic: cancel the run at the next node */
  gboolean run_ok;
  GError *run_error;

  /* Written by the worker while running, read by the controller while paused. */
  Mode mode;
  guint mode_depth;
  GPtrArray *frames; /* Frame*, reused across pushes; [0, depth] are in use */
  guint depth;       /* index of the innermost frame */
  const DsNode *stop_node;
  const char *stop_region;
  guint stop_depth;
  guint hit;
  const DsTensor *stop_inputs, *stop_outputs;
  guint64 n_steps;
};

/* ---- graph facts and tables ---- */

static void graph_info_free(gpointer data)
{
  GraphInfo *info = data;
  for (guint e = 0; info->names != NULL && e < info->n_entries; e++)
    g_free(info->names[e]);
  g_free(info->names);
  g_free(info->readers);
  g_free(info->vars);
  g_free(info);
}

static GraphInfo *graph_info(DsCursor *c, DsGraph *graph)
{
  GraphInfo *info = g_hash_table_lookup(c->infos, graph);
  if (info != NULL)
    return info;
  info = g_new0(GraphInfo, 1);
  info->graph = graph;
  info->n_entries = ds_graph_n_entries(graph);
  info->readers = ds_graph_count_readers(graph);
  info->vars = g_new0(guint, graph->n_nodes + 1);
  for (guint i = 0; i < graph->n_nodes; i++)
    if (ds_node_is_variable(graph->nodes[i]))
      info->vars[info->n_vars++] = graph->node_row_ptr[i];
  g_hash_table_insert(c->infos, graph, info);
  return info;
}

static const char *entry_name(GraphInfo *info, guint e)
{
  if (info->names == NULL)
    info->names = g_new0(char *, info->n_entries + 1);
  if (info->names[e] == NULL) {
    DsGraph *graph = info->graph;
    guint node = 0;
    while (node + 1 < graph->n_nodes && graph->node_row_ptr[node + 1] <= e)
      node++;
    DsEntry entry = {.node_id = node, .index = e - graph->node_row_ptr[node]};
    info->names[e] = ds_graph_dup_entry_name(graph, entry);
  }
  return info->names[e];
}

static void table_reset(Table *t, GraphInfo *info)
{
  if (t->info == NULL || t->info->n_entries < info->n_entries) {
    g_free(t->values);
    g_free(t->have);
    g_free(t->readers_left);
    t->values = g_new(DsTensor, info->n_entries + 1);
    t->have = g_new(gboolean, info->n_entries + 1);
    t->readers_left = g_new(guint, info->n_entries + 1);
  }
  t->info = info;
  memset(t->have, 0, sizeof(gboolean) * info->n_entries);
  memcpy(t->readers_left, info->readers, sizeof(guint) * info->n_entries);
}

static void frame_free(gpointer data)
{
  Frame *f = data;
  g_free(f->own.values);
  g_free(f->own.have);
  g_free(f->own.readers_left);
  g_free(f);
}

/* The frame at `depth`, made or reused. */
static Frame *frame_at(DsCursor *c, guint depth)
{
  while (c->frames->len <= depth)
    g_ptr_array_add(c->frames, g_new0(Frame, 1));
  return c->frames->pdata[depth];
}

static Frame *top(DsCursor *c)
{
  return c->frames->pdata[c->depth];
}

/* ---- stopping ---- */

static gboolean lookup_symbol(gpointer data, const char *name, int64_t *value)
{
  return ds_session_lookup_symbol(((DsCursor *)data)->session, name, value);
}

gint64 ds_cursor_get_iteration(DsCursor *c)
{
  for (guint d = c->depth + 1; d-- > 0;) {
    const Frame *f = c->frames->pdata[d];
    if (f->pub.iteration >= 0)
      return f->pub.iteration;
  }
  return -1;
}

/* The first breakpoint that stops at this event (a node that ran, or a region left). */
static guint find_hit(DsCursor *c, const DsNode *node, const char *region, const DsTensor *outputs)
{
  for (guint i = 0; i < c->breakpoints->len; i++) {
    const Breakpoint *b = c->breakpoints->pdata[i];
    gboolean match = node != NULL ? ds_breakpoint_matches(b->bp, node)
                                  : strcmp(ds_breakpoint_get_target(b->bp), region) == 0;
    if (!match)
      continue;
    DsBreakpointScope scope = {
        .iteration = ds_cursor_get_iteration(c),
        .lookup_symbol = lookup_symbol,
        .lookup_data = c,
        .outputs = outputs,
        .n_outputs = node != NULL ? ds_node_n_op_outputs(node) : 0,
    };
    if (ds_breakpoint_test(b->bp, &scope))
      return b->id;
  }
  return 0;
}

/* An event at `depth`: a node that ran there, or a region left. Stops when the command or a
 * breakpoint says so, and waits there for the next command. */
static void event(DsCursor *c, guint depth, const DsNode *node, const char *region,
                  const DsTensor *inputs, const DsTensor *outputs)
{
  if (g_atomic_int_get(&c->abort))
    return;
  guint hit = c->breakpoints->len > 0 ? find_hit(c, node, region, outputs) : 0;
  gboolean stop = hit != 0 || c->mode == MODE_INTO ||
                  (c->mode == MODE_OVER && depth <= c->mode_depth) ||
                  (c->mode == MODE_OUT && depth < c->mode_depth);
  if (!stop)
    return;
  g_mutex_lock(&c->lock);
  c->stop_node = node;
  c->stop_region = region;
  c->stop_depth = depth;
  c->stop_inputs = inputs;
  c->stop_outputs = outputs;
  c->hit = hit;
  c->phase = PHASE_PAUSED;
  g_cond_broadcast(&c->changed);
  while (c->phase == PHASE_PAUSED)
    g_cond_wait(&c->changed, &c->lock);
  g_mutex_unlock(&c->lock);
}

/* ---- hooks (worker thread) ---- */

static gboolean on_node_begin(gpointer data, const DsNode *node)
{
  (void)node;
  return !g_atomic_int_get(&((DsCursor *)data)->abort);
}

static void on_node_end(gpointer data, const DsNode *node, const DsTensor *inputs,
                        const DsTensor *outputs)
{
  DsCursor *c = data;
  Frame *f = top(c);
  Table *t = f->table;
  DsGraph *graph = t->info->graph;
  /* Inputs are recorded too: that is how variables read in place get their values. */
  for (guint k = 0; k < node->n_inputs; k++) {
    guint e = ds_graph_entry_id(graph, node->inputs[k]);
    if (!t->have[e]) {
      t->values[e] = inputs[k];
      t->have[e] = TRUE;
    }
    if (t->readers_left[e] > 0)
      t->readers_left[e]--;
  }
  guint base = graph->node_row_ptr[node->id];
  for (guint k = 0; k < ds_node_n_op_outputs(node); k++) {
    t->values[base + k] = outputs[k];
    t->have[base + k] = TRUE;
  }
  f->pub.node = node;
  c->n_steps++;
  event(c, c->depth, node, NULL, inputs, outputs);
}

static void on_frame_enter(gpointer data, const DsFrame *frame)
{
  DsCursor *c = data;
  Frame *parent = top(c);
  Frame *f = frame_at(c, c->depth + 1);
  c->depth++;
  f->pub = (DsCursorFrame){
      .kind = frame->kind,
      .graph = frame->graph,
      .owner = frame->owner,
      .name = frame->name,
      .iteration = frame->iteration,
  };
  if (frame->kind == DS_FRAME_REGION) {
    f->table = parent->table;
    return;
  }
  GraphInfo *info = graph_info(c, frame->graph);
  table_reset(&f->own, info);
  f->table = &f->own;
  for (guint k = 0; k < MIN(frame->n_inputs, info->n_vars); k++) {
    f->own.values[info->vars[k]] = frame->inputs[k];
    f->own.have[info->vars[k]] = TRUE;
  }
}

static void on_frame_exit(gpointer data, const DsFrame *frame)
{
  DsCursor *c = data;
  g_return_if_fail(c->depth > 0);
  c->depth--;
  /* Leaving a region is a step of the frame above; leaving a subgraph run is not (the loop or
   * branch node's own end follows). */
  if (frame->kind == DS_FRAME_REGION)
    event(c, c->depth, NULL, frame->name, NULL, NULL);
}

static const DsExecutorHooks cursor_hooks = {
    .node_begin = on_node_begin,
    .node_end = on_node_end,
    .frame_enter = on_frame_enter,
    .frame_exit = on_frame_exit,
};

static gboolean begin_run(DsCursor *c, GError **error)
{
  if (!ds_session_is_bound(c->session)) {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "%s: the model is not bound yet: prepare it first",
                ds_session_get_model_path(c->session));
    return FALSE;
  }
  DsGraph *graph = ds_session_get_graph(c->session);
  GraphInfo *info = graph_info(c, graph);
  Frame *root = frame_at(c, 0);
  root->pub = (DsCursorFrame){.kind = DS_FRAME_GRAPH, .graph = graph, .iteration = -1};
  table_reset(&root->own, info);
  root->table = &root->own;
  for (guint v = 0; v < info->n_vars; v++) {
    root->own.values[info->vars[v]] = *ds_session_get_entry(c->session, info->vars[v]);
    root->own.have[info->vars[v]] = TRUE;
  }
  c->depth = 0;
  c->n_steps = 0;
  return TRUE;
}

/* One thread for all the cursor's runs: starting a thread per run would cost more than a
 * small model's run. */
static gpointer worker_main(gpointer data)
{
  DsCursor *c = data;
  g_mutex_lock(&c->lock);
  for (;;) {
    while (!c->start && !c->quit)
      g_cond_wait(&c->changed, &c->lock);
    if (c->quit)
      break;
    c->start = FALSE;
    g_mutex_unlock(&c->lock);
    GError *error = NULL;
    ds_session_set_hooks(c->session, &cursor_hooks, c);
    gboolean ok = ds_session_run(c->session, &error);
    ds_session_set_hooks(c->session, NULL, NULL);
    g_mutex_lock(&c->lock);
    c->run_ok = ok;
    c->run_error = error;
    c->depth = 0;
    c->phase = PHASE_DONE;
    g_cond_broadcast(&c->changed);
  }
  g_mutex_unlock(&c->lock);
  return NULL;
}

/* ---- commands (controller thread) ---- */

/* Waits for the worker to pause or finish; the lock is held. */
static void wait_for_worker(DsCursor *c)
{
  while (c->phase == PHASE_RUNNING)
    g_cond_wait(&c->changed, &c->lock);
}

static void remove_once_breakpoints(DsCursor *c)
{
  for (guint i = c->breakpoints->len; i-- > 0;)
    if (((Breakpoint *)c->breakpoints->pdata[i])->once)
      g_ptr_array_remove_index(c->breakpoints, i);
}

static DsCursorStop command(DsCursor *c, Mode mode, GError **error)
{
  g_mutex_lock(&c->lock);
  c->mode = mode;
  if (c->phase == PHASE_PAUSED) {
    c->mode_depth = c->stop_depth;
    c->phase = PHASE_RUNNING;
    g_cond_broadcast(&c->changed);
  } else {
    g_clear_error(&c->run_error);
    g_atomic_int_set(&c->abort, FALSE); /* a cancel meant for an earlier command */
    c->mode_depth = 0;
    if (!begin_run(c, error)) {
      g_mutex_unlock(&c->lock);
      return DS_CURSOR_FAILED;
    }
    c->phase = PHASE_RUNNING;
    c->start = TRUE;
    if (c->worker == NULL)
      c->worker = g_thread_new("dynscope-cursor", worker_main, c);
    g_cond_broadcast(&c->changed);
  }
  wait_for_worker(c);
  DsCursorStop stop;
  if (c->phase == PHASE_PAUSED) {
    stop = c->hit != 0 ? DS_CURSOR_BREAKPOINT : DS_CURSOR_STEPPED;
  } else {
    c->phase = PHASE_IDLE;
    c->hit = 0;
    c->stop_node = NULL;
    c->stop_region = NULL;
    stop = c->run_ok ? DS_CURSOR_FINISHED : DS_CURSOR_FAILED;
    if (!c->run_ok)
      g_propagate_error(error, g_steal_pointer(&c->run_error));
    g_atomic_int_set(&c->abort, FALSE);
  }
  g_mutex_unlock(&c->lock);
  remove_once_breakpoints(c);
  return stop;
}

DsCursorStop ds_cursor_step(DsCursor *c, GError **error)
{
  return command(c, MODE_OVER, error);
}
DsCursorStop ds_cursor_step_into(DsCursor *c, GError **error)
{
  return command(c, MODE_INTO, error);
}
DsCursorStop ds_cursor_step_out(DsCursor *c, GError **error)
{
  return command(c, MODE_OUT, error);
}
DsCursorStop ds_cursor_continue(DsCursor *c, GError **error)
{
  return command(c, MODE_CONTINUE, error);
}

DsCursorStop ds_cursor_run_to(DsCursor *c, const char *spec, GError **error)
{
  guint id = ds_cursor_add_breakpoint(c, spec, error);
  if (id == 0)
    return DS_CURSOR_FAILED;
  ((Breakpoint *)c->breakpoints->pdata[c->breakpoints->len - 1])->once = TRUE;
  return command(c, MODE_CONTINUE, error);
}

void ds_cursor_cancel(DsCursor *c)
{
  g_atomic_int_set(&c->abort, TRUE);
}

void ds_cursor_reset(DsCursor *c)
{
  g_mutex_lock(&c->lock);
  if (c->phase == PHASE_PAUSED || c->phase == PHASE_RUNNING) {
    g_atomic_int_set(&c->abort, TRUE);
    c->phase = PHASE_RUNNING;
    g_cond_broadcast(&c->changed);
    wait_for_worker(c);
  }
  g_clear_error(&c->run_error);
  c->phase = PHASE_IDLE;
  c->hit = 0;
  c->stop_node = NULL;
  c->stop_region = NULL;
  g_atomic_int_set(&c->abort, FALSE);
  g_mutex_unlock(&c->lock);
}

/* ---- setup ---- */

static void breakpoint_free(gpointer data)
{
  Breakpoint *b = data;
  ds_breakpoint_free(b->bp);
  g_free(b);
}

DsCursor *ds_cursor_new(DsSession *session)
{
  DsCursor *c = g_new0(DsCursor, 1);
  c->session = session;
  c->infos = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, graph_info_free);
  c->breakpoints = g_ptr_array_new_with_free_func(breakpoint_free);
  c->frames = g_ptr_array_new_with_free_func(frame_free);
  c->next_id = 1;
  g_mutex_init(&c->lock);
  g_cond_init(&c->changed);
  frame_at(c, 0);
  return c;
}

void ds_cursor_free(DsCursor *c)
{
  if (c == NULL)
    return;
  ds_cursor_reset(c);
  if (c->worker != NULL) {
    g_mutex_lock(&c->lock);
    c->quit = TRUE;
    g_cond_broadcast(&c->changed);
    g_mutex_unlock(&c->lock);
    g_thread_join(c->worker);
  }
  g_mutex_clear(&c->lock);
  g_cond_clear(&c->changed);
  g_ptr_array_unref(c->frames);
  g_ptr_array_unref(c->breakpoints);
  g_hash_table_unref(c->infos);
  g_free(c);
}

/* The symbols of the session's shapes, for messages: "s0, u0". */
static char *known_symbols(DsSession *session)
{
  DsExprCtx *exprs = ds_session_get_exprs(session);
  g_autoptr(GString) names = g_string_new(NULL);
  for (guint id = 0; id < ds_expr_ctx_get_n_symbols(exprs); id++)
    g_string_append_printf(names, "%s%s", names->len > 0 ? ", " : "",
                           ds_expr_get_symbol_name(ds_expr_ctx_get_symbol(exprs, id)));
  return g_strdup(names->len > 0 ? names->str : "none");
}

static gboolean has_symbol(DsSession *session, const char *name)
{
  DsExprCtx *exprs = ds_session_get_exprs(session);
  for (guint id = 0; id < ds_expr_ctx_get_n_symbols(exprs); id++)
    if (strcmp(ds_expr_get_symbol_name(ds_expr_ctx_get_symbol(exprs, id)), name) == 0)
      return TRUE;
  return FALSE;
}

/* Whether a graph or any subgraph in it has a node or op called `target`. */
static gboolean graph_has_target(const DsGraph *graph, const char *target)
{
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    if (!ds_node_is_variable(node) &&
        (strcmp(node->name, target) == 0 || strcmp(node->op_name, target) == 0 ||
         (node->op != NULL && strcmp(node->op->name, target) == 0)))
      return TRUE;
    for (guint s = 0; s < node->n_subgraphs; s++)
      if (graph_has_target(node->subgraphs[s], target))
        return TRUE;
  }
  return FALSE;
}

static gboolean model_has_target(DsSession *session, const char *target)
{
  if (strcmp(target, "*") == 0 || graph_has_target(ds_session_get_graph(session), target))
    return TRUE;
  const DsPartition *partition = ds_session_get_file_partition(session);
  for (guint r = 0; partition != NULL && r < partition->n_regions; r++)
    if (strcmp(partition->regions[r].name, target) == 0)
      return TRUE;
  return FALSE;
}

guint ds_cursor_add_breakpoint(DsCursor *c, const char *spec, GError **error)
{
  g_autoptr(DsBreakpoint) bp = ds_breakpoint_parse(spec, error);
  if (bp == NULL)
    return 0;
  if (!model_has_target(c->session, ds_breakpoint_get_target(bp))) {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                "breakpoint '%s': no node, op or region of %s is called '%s'",
                ds_breakpoint_get_spec(bp), ds_session_get_model_path(c->session),
                ds_breakpoint_get_target(bp));
    return 0;
  }
  for (const char *const *s = ds_breakpoint_get_symbols(bp); *s != NULL; s++) {
    if (!has_symbol(c->session, *s)) {
      g_autofree char *known = known_symbols(c->session);
      g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                  "breakpoint '%s': '%s' is not iter, nan, inf, min, max, mean, numel or a "
                  "symbol of this model (symbols: %s)",
                  ds_breakpoint_get_spec(bp), *s, known);
      return 0;
    }
  }
  Breakpoint *b = g_new0(Breakpoint, 1);
  b->id = c->next_id++;
  b->bp = g_steal_pointer(&bp);
  g_ptr_array_add(c->breakpoints, b);
  return b->id;
}

gboolean ds_cursor_remove_breakpoint(DsCursor *c, guint id)
{
  for (guint i = 0; i < c->breakpoints->len; i++) {
    if (((Breakpoint *)c->breakpoints->pdata[i])->id == id) {
      g_ptr_array_remove_index(c->breakpoints, i);
      return TRUE;
    }
  }
  return FALSE;
}

const DsBreakpoint *ds_cursor_get_breakpoint(DsCursor *c, guint id)
{
  for (guint i = 0; i < c->breakpoints->len; i++) {
    const Breakpoint *b = c->breakpoints->pdata[i];
    if (b->id == id)
      return b->bp;
  }
  return NULL;
}

/* ---- reading a stop ---- */

gboolean ds_cursor_is_paused(DsCursor *c)
{
  return c->phase == PHASE_PAUSED;
}
guint ds_cursor_get_n_frames(DsCursor *c)
{
  return c->depth + 1;
}

const DsCursorFrame *ds_cursor_get_frame(DsCursor *c, guint i)
{
  g_return_val_if_fail(i <= c->depth, NULL);
  return &((Frame *)c->frames->pdata[i])->pub;
}

char *ds_cursor_dup_path(DsCursor *c)
{
  GString *path = g_string_new(NULL);
  for (guint d = 1; d <= c->depth; d++) {
    const DsCursorFrame *f = &((Frame *)c->frames->pdata[d])->pub;
    if (path->len > 0)
      g_string_append_c(path, '/');
    if (f->kind == DS_FRAME_REGION) {
      g_string_append(path, f->name);
      continue;
    }
    g_string_append(path, f->owner->name);
    if (f->iteration >= 0)
      g_string_append_printf(path, "/iter%" G_GINT64_FORMAT, f->iteration);
    /* A loop's body is the iteration itself; conditions and branches are named. */
    if (strcmp(f->name, "body") != 0 && strcmp(f->name, "func") != 0)
      g_string_append_printf(path, "/%s", f->name);
  }
  const char *last = c->phase != PHASE_PAUSED ? NULL
                     : c->stop_node != NULL   ? c->stop_node->name
                                              : c->stop_region;
  if (last != NULL)
    g_string_append_printf(path, "%s%s", path->len > 0 ? "/" : "", last);
  return g_string_free(path, FALSE);
}

const DsNode *ds_cursor_get_node(DsCursor *c)
{
  return c->phase == PHASE_PAUSED ? c->stop_node : NULL;
}

const DsTensor *ds_cursor_get_inputs(DsCursor *c)
{
  return c->phase == PHASE_PAUSED ? c->stop_inputs : NULL;
}

const DsTensor *ds_cursor_get_outputs(DsCursor *c)
{
  return c->phase == PHASE_PAUSED ? c->stop_outputs : NULL;
}

guint ds_cursor_get_hit(DsCursor *c)
{
  return c->hit;
}
guint64 ds_cursor_get_n_steps(DsCursor *c)
{
  return c->n_steps;
}

GArray *ds_cursor_list_live(DsCursor *c)
{
  GArray *live = g_array_new(FALSE, FALSE, sizeof(DsCursorTensor));
  if (c->phase != PHASE_PAUSED)
    return live;
  for (guint d = 0; d <= c->depth; d++) {
    Frame *f = c->frames->pdata[d];
    if (f->table != &f->own)
      continue; /* a region lists nothing of its own: its graph is its parent's */
    const Table *t = f->table;
    guint first = 0, last = 0; /* the outputs of the node that just ran, if in this table */
    if (t == top(c)->table && c->stop_node != NULL) {
      first = t->info->graph->node_row_ptr[c->stop_node->id];
      last = first + ds_node_n_op_outputs(c->stop_node);
    }
    for (guint e = 0; e < t->info->n_entries; e++) {
      /* Live: produced and still to be read, or the outputs of the node that just ran. */
      if (!t->have[e] || (t->readers_left[e] == 0 && (e < first || e >= last)))
        continue;
      DsCursorTensor item = {
          .frame = d,
          .entry = e,
          .name = entry_name(t->info, e),
          .tensor = &t->values[e],
      };
      g_array_append_val(live, item);
    }
  }
  return live;
}
