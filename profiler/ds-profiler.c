/* ds-profiler.c: recording nodes, frames, memory and GPU work from the executor's hooks. */
#include "ds-profiler-private.h"

#include <string.h>

#include "ds-expr.h"
#include "ds-node-timer.h"

/* An address range and the buffer that last held it in this run. */
typedef struct {
  guintptr start, end;
  guint buffer;
} Segment;

/* Per graph: how many nodes (and heads) read each entry. */
typedef struct {
  guint n_entries;
  guint *readers;
} GraphInfo;

/* What the entries of one frame's graph hold: a buffer and the readers it has left. */
typedef struct {
  GraphInfo *info;
  gint *buffer_of;
  guint *readers_left;
} Table;

typedef struct {
  DsFrameKind kind;
  DsGraph *graph;
  guint record;
  gint64 iteration;
  Table own;
  Table *table;
  guint gpu_pushed_at; /* ids pushed to CUPTI when it was entered */
} PFrame;

/* A node that began and has not ended yet. */
typedef struct {
  guint64 start_ns;
  guint64 gpu_id;
} Open;

/* ---- strings ---- */

static guint intern(Strings *s, const char *text)
{
  gpointer found = g_hash_table_lookup(s->index, text);
  if (found != NULL)
    return GPOINTER_TO_UINT(found) - 1;
  char *copy = g_strdup(text);
  g_ptr_array_add(s->strings, copy);
  g_hash_table_insert(s->index, copy, GUINT_TO_POINTER(s->strings->len));
  return s->strings->len - 1;
}

const char *ds_profiler_string(const DsProfiler *p, guint index)
{
  return p->strings.strings->pdata[index];
}

/* ---- setup ---- */

static void graph_info_free(gpointer data)
{
  GraphInfo *info = data;
  g_free(info->readers);
  g_free(info);
}

static void frame_free(gpointer data)
{
  PFrame *f = data;
  g_free(f->own.buffer_of);
  g_free(f->own.readers_left);
  g_free(f);
}

DsProfiler *ds_profiler_new(DsSession *session)
{
  DsProfiler *p = g_new0(DsProfiler, 1);
  p->session = session;
  p->strings.strings = g_ptr_array_new_with_free_func(g_free);
  p->strings.index = g_hash_table_new(g_str_hash, g_str_equal);
  intern(&p->strings, "");
  p->events = g_array_new(FALSE, FALSE, sizeof(Event));
  p->records = g_array_new(FALSE, FALSE, sizeof(FrameRecord));
  FrameRecord root = {.parent = -1, .kind = DS_FRAME_GRAPH, .iteration = -1, .resolved = TRUE};
  g_array_append_val(p->records, root);
  p->buffers = g_array_new(FALSE, FALSE, sizeof(Buffer));
  p->shape_pool = g_array_new(FALSE, FALSE, sizeof(gint64));
  p->run_ns = g_array_new(FALSE, FALSE, sizeof(guint64));
  p->starts = g_array_new(FALSE, FALSE, sizeof(Open));
  p->gpu_targets = g_array_new(FALSE, FALSE, sizeof(gint64));
  p->gpu_records = g_array_new(FALSE, FALSE, sizeof(GpuRecord));
  p->frames = g_ptr_array_new_with_free_func(frame_free);
  p->infos = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, graph_info_free);
  p->segments = g_array_new(FALSE, FALSE, sizeof(Segment));
  return p;
}

static void pop_gpu_ids(DsProfiler *p, guint down_to);

void ds_profiler_free(DsProfiler *p)
{
  if (p == NULL)
    return;
  pop_gpu_ids(p, 0); /* a failed run that was not ended */
  ds_cupti_free(p->cupti);
  g_free(p->gpu_unavailable);
  g_array_unref(p->gpu_targets);
  g_array_unref(p->gpu_records);
  g_hash_table_unref(p->strings.index);
  g_ptr_array_unref(p->strings.strings);
  g_array_unref(p->events);
  g_array_unref(p->records);
  g_array_unref(p->buffers);
  g_array_unref(p->shape_pool);
  g_array_unref(p->run_ns);
  g_array_unref(p->starts);
  g_ptr_array_unref(p->frames);
  g_hash_table_unref(p->infos);
  g_array_unref(p->segments);
  g_free(p);
}

static GraphInfo *graph_info(DsProfiler *p, DsGraph *graph)
{
  GraphInfo *info = g_hash_table_lookup(p->infos, graph);
  if (info != NULL)
    return info;
  info = g_new0(GraphInfo, 1);
  info->n_entries = ds_graph_n_entries(graph);
  info->readers = ds_graph_count_readers(graph);
  g_hash_table_insert(p->infos, graph, info);
  return info;
}

static void table_reset(Table *t, GraphInfo *info)
{
  if (t->info == NULL || t->info->n_entries < info->n_entries) {
    g_free(t->buffer_of);
    g_free(t->readers_left);
    t->buffer_of = g_new(gint, info->n_entries + 1);
    t->readers_left = g_new(guint, info->n_entries + 1);
  }
  t->info = info;
  for (guint e = 0; e < info->n_entries; e++)
    t->buffer_of[e] = -1;
  memcpy(t->readers_left, info->readers, sizeof(guint) * info->n_entries);
}

static PFrame *frame_at(DsProfiler *p, guint depth)
{
  while (p->frames->len <= depth)
    g_ptr_array_add(p->frames, g_new0(PFrame, 1));
  return p->frames->pdata[depth];
}

/* ---- GPU tracing ---- */

/* Ids pushed to CUPTI are popped down to `down_to`: after each node, and what failed nodes
 * left when their frame or the run ends, so the thread's id stack stays balanced. */
static void pop_gpu_ids(DsProfiler *p, guint down_to)
{
  for (; p->n_gpu_pushed > down_to; p->n_gpu_pushed--)
    ds_cupti_pop(p->cupti);
}

static void push_gpu_id(DsProfiler *p, guint64 id)
{
  if (p->cupti == NULL)
    return;
  ds_cupti_push(p->cupti, id);
  p->n_gpu_pushed++;
}

/* A new external id, for work that will belong to `target` (GpuRecord's event or record). */
static guint64 gpu_id_new(DsProfiler *p, gint64 target)
{
  g_array_append_val(p->gpu_targets, target);
  return p->gpu_targets->len;
}

/* Traces the GPU when the session runs on a device that is there; keeps the reason when
 * CUPTI cannot start. */
static void start_gpu_trace(DsProfiler *p)
{
  p->gpu_tried = TRUE;
  const DsBackend *device = ds_session_get_device(p->session);
  if (device == NULL || (device->unavailable != NULL && device->unavailable() != NULL))
    return;
  p->cupti = ds_cupti_start(&p->gpu_unavailable);
  p->has_gpu = p->cupti != NULL;
  p->gpu_dropped = ds_cupti_get_dropped(p->cupti);
}

/* After a run: waits for the device, so every kernel has its record, then attributes them. */
static void collect_gpu_trace(DsProfiler *p)
{
  pop_gpu_ids(p, 0);
  const DsBackend *device = ds_session_get_device(p->session);
  if (device != NULL && device->synchronize != NULL)
    device->synchronize();
  guint64 dropped_before = ds_cupti_get_dropped(p->cupti);
  ds_cupti_flush(p->cupti);
  guint n;
  const DsCuptiRecord *records = ds_cupti_records(p->cupti, &n);
  ds_profiler_add_gpu_records(p, records, n);
  ds_cupti_clear(p->cupti);
  p->gpu_dropped += ds_cupti_get_dropped(p->cupti) - dropped_before;
}

static guint64 since_origin(const DsProfiler *p, guint64 ns)
{
  return ns > p->origin_ns ? ns - p->origin_ns : 0;
}

static void add_gpu_record(DsProfiler *p, const DsCuptiRecord *r)
{
  GpuRecord g = {
      .kind = r->kind,
      .copy = r->copy,
      .name = r->name != NULL ? intern(&p->strings, r->name) : 0,
      .event = -1,
      .record = -1,
      .start_ns = since_origin(p, r->start_ns),
      .end_ns = since_origin(p, r->end_ns),
      .bytes = r->bytes,
  };
  guint64 id = r->external_id;
  gint64 target = id > 0 && id <= p->gpu_targets->len
                      ? g_array_index(p->gpu_targets, gint64, id - 1)
                      : GPU_TARGET_NONE;
  gboolean kernel = r->kind == DS_CUPTI_KERNEL;
  guint64 dur = g.end_ns > g.start_ns ? g.end_ns - g.start_ns : 0;
  guint *kernels = NULL;
  guint64 *ns = NULL, *bytes = NULL;
  if (target >= 0 && target < p->events->len) {
    Event *e = &g_array_index(p->events, Event, target);
    g.event = (gint)target;
    kernels = &e->gpu_kernels, ns = &e->gpu_ns, bytes = &e->gpu_copy_bytes;
  } else if (target < 0 && target != GPU_TARGET_NONE && -target - 1 < p->records->len) {
    FrameRecord *f = &g_array_index(p->records, FrameRecord, -target - 1);
    g.record = (gint)(-target - 1);
    kernels = &f->gpu_kernels, ns = &f->gpu_ns, bytes = &f->gpu_copy_bytes;
  } else {
    p->gpu_unattributed++;
  }
  if (kernels != NULL && kernel) {
    (*kernels)++;
    *ns += dur;
  } else if (bytes != NULL) {
    *bytes += r->bytes;
  }
  g_array_append_val(p->gpu_records, g);
}

void ds_profiler_add_gpu_records(DsProfiler *p, const DsCuptiRecord *records, guint n)
{
  p->has_gpu = TRUE;
  for (guint i = 0; i < n; i++)
    add_gpu_record(p, &records[i]);
}

/* ---- runs ---- */

void ds_profiler_begin_run(DsProfiler *p)
{
  if (!p->gpu_tried)
    start_gpu_trace(p);
  pop_gpu_ids(p, 0); /* an earlier run failed and was not ended */
  guint64 now = ds_monotonic_ns();
  if (p->n_runs == 0)
    p->origin_ns = now;
  p->run_start_ns = now;
  g_array_set_size(p->starts, 0);
  g_array_set_size(p->segments, 0);
  p->live_bytes = 0;
  p->depth = 0;
  DsGraph *graph = ds_session_get_graph(p->session);
  PFrame *root = frame_at(p, 0);
  root->kind = DS_FRAME_GRAPH;
  root->graph = graph;
  root->record = 0;
  root->iteration = -1;
  table_reset(&root->own, graph_info(p, graph));
  root->table = &root->own;
}

static void buffer_die(DsProfiler *p, guint b)
{
  Buffer *buf = &g_array_index(p->buffers, Buffer, b);
  if (!buf->live)
    return;
  buf->live = FALSE;
  p->live_bytes -= buf->bytes;
}

void ds_profiler_end_run(DsProfiler *p)
{
  guint64 wall = ds_monotonic_ns() - p->run_start_ns;
  g_array_append_val(p->run_ns, wall);
  /* The graph's outputs live to the end of the run. */
  for (guint b = 0; b < p->buffers->len; b++)
    buffer_die(p, b);
  p->n_runs++;
  if (p->cupti != NULL) {
    guint64 t0 = ds_monotonic_ns();
    collect_gpu_trace(p);
    p->overhead_ns += ds_monotonic_ns() - t0;
  }
}

/* ---- memory from addresses ---- */

/* The first segment that ends after `a` (segments are sorted and disjoint). */
static guint first_segment_after(const GArray *segments, guintptr a)
{
  guint lo = 0, hi = segments->len;
  while (lo < hi) {
    guint mid = (lo + hi) / 2;
    if (g_array_index(segments, Segment, mid).end <= a)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Places an output of `bytes` at `data`: a view of a live buffer (its index, *alias TRUE), or
 * a new buffer, fresh or taking over the memory of dead ones. */
static guint place(DsProfiler *p, const void *data, gsize bytes, guint event, gboolean *alias,
                   gsize *reused)
{
  guintptr a = (guintptr)data, b = a + bytes;
  GArray *segs = p->segments;
  guint i = first_segment_after(segs, a);
  if (i < segs->len) {
    const Segment *s = &g_array_index(segs, Segment, i);
    if (s->start <= a && b <= s->end && g_array_index(p->buffers, Buffer, s->buffer).live) {
      *alias = TRUE;
      return s->buffer;
    }
  }
  *alias = FALSE;
  gsize best = 0, taken = 0;
  gint from = -1;
  guint j = i;
  for (; j < segs->len && g_array_index(segs, Segment, j).start < b; j++) {
    const Segment *s = &g_array_index(segs, Segment, j);
    gsize overlap = MIN(b, s->end) - MAX(a, s->start);
    taken += overlap;
    if (overlap > best) {
      best = overlap;
      from = (gint)s->buffer;
    }
  }
  Buffer buf = {
      .bytes = bytes, .first_event = event, .last_event = event, .reused_from = from, .live = TRUE};
  guint index = p->buffers->len;
  g_array_append_val(p->buffers, buf);
  /* Segments [i, j) give way to the new one, keeping what sticks out on either side. */
  Segment pieces[3];
  guint n = 0;
  if (i < j && g_array_index(segs, Segment, i).start < a)
    pieces[n++] =
        (Segment){g_array_index(segs, Segment, i).start, a, g_array_index(segs, Segment, i).buffer};
  pieces[n++] = (Segment){a, b, index};
  if (i < j && g_array_index(segs, Segment, j - 1).end > b)
    pieces[n++] = (Segment){b, g_array_index(segs, Segment, j - 1).end,
                            g_array_index(segs, Segment, j - 1).buffer};
  g_array_remove_range(segs, i, j - i);
  g_array_insert_vals(segs, i, pieces, n);
  *reused = taken;
  p->live_bytes += bytes;
  return index;
}

/* ---- hooks ---- */

static gboolean on_node_begin(gpointer data, const DsNode *node)
{
  DsProfiler *p = data;
  (void)node;
  /* The id is pushed before the clock is read, so its cost is not the node's. */
  Open open = {.gpu_id = gpu_id_new(p, GPU_TARGET_NONE)};
  push_gpu_id(p, open.gpu_id);
  open.start_ns = ds_monotonic_ns();
  g_array_append_val(p->starts, open);
  return TRUE;
}

static gboolean on_device(const DsTensor *outputs, guint n)
{
  for (guint k = 0; k < n; k++)
    if (outputs[k].memory == DS_MEMORY_DEVICE)
      return TRUE;
  return FALSE;
}

static void record_shapes(DsProfiler *p, const DsNode *node, const DsTensor *inputs,
                          const DsTensor *outputs)
{
  guint n_out = ds_node_n_op_outputs(node);
  gint64 head[2] = {node->n_inputs, n_out};
  g_array_append_vals(p->shape_pool, head, 2);
  for (int side = 0; side < 2; side++) {
    const DsTensor *ts = side == 0 ? inputs : outputs;
    for (guint k = 0; k < (side == 0 ? node->n_inputs : n_out); k++) {
      gint64 ndim = ts[k].ndim;
      g_array_append_val(p->shape_pool, ndim);
      g_array_append_vals(p->shape_pool, ts[k].shape, (guint)MAX(ts[k].ndim, 0));
    }
  }
}

/* One reader of entry `e` is done: the buffer dies with its last reader. */
static void read_done(DsProfiler *p, Table *t, guint e)
{
  gint b = t->buffer_of[e];
  if (t->readers_left[e] > 0)
    t->readers_left[e]--;
  if (b < 0)
    return;
  Buffer *buf = &g_array_index(p->buffers, Buffer, b);
  if (buf->readers_left > 0 && --buf->readers_left == 0)
    buffer_die(p, (guint)b);
}

static void on_node_end(gpointer data, const DsNode *node, const DsTensor *inputs,
                        const DsTensor *outputs)
{
  DsProfiler *p = data;
  guint64 end = ds_monotonic_ns();
  Open open = {.start_ns = end};
  if (p->starts->len > 0) {
    open = g_array_index(p->starts, Open, p->starts->len - 1);
    g_array_set_size(p->starts, p->starts->len - 1);
  }
  if (p->n_gpu_pushed > 0)
    pop_gpu_ids(p, p->n_gpu_pushed - 1);
  PFrame *f = p->frames->pdata[p->depth];
  Table *t = f->table;
  DsGraph *graph = f->graph;
  guint index = p->events->len;
  Event ev = {
      .node = node,
      .graph = graph,
      .run = p->n_runs,
      .record = f->record,
      .iteration = f->iteration,
      .depth = p->depth,
      .start_ns = open.start_ns - p->origin_ns,
      .end_ns = end - p->origin_ns,
      .shapes = p->shape_pool->len,
      .on_device = on_device(outputs, ds_node_n_op_outputs(node)),
      .gpu_id = open.gpu_id,
  };
  if (open.gpu_id > 0)
    g_array_index(p->gpu_targets, gint64, open.gpu_id - 1) = index;
  record_shapes(p, node, inputs, outputs);

  guint base = graph->node_row_ptr[node->id], n_out = ds_node_n_op_outputs(node);
  for (guint k = 0; k < n_out; k++) {
    gsize bytes = ds_tensor_nbytes(&outputs[k]);
    guint e = base + k;
    t->buffer_of[e] = -1;
    if (bytes == 0 || outputs[k].data == NULL)
      continue;
    gboolean alias;
    gsize reused = 0;
    guint b = place(p, outputs[k].data, bytes, index, &alias, &reused);
    Buffer *buf = &g_array_index(p->buffers, Buffer, b);
    if (!alias) {
      buf->graph = graph;
      buf->entry = e;
      buf->record = f->record;
      ev.fresh_bytes += bytes - reused;
      ev.reused_bytes += reused;
    }
    buf->readers_left += t->info->readers[e];
    buf->last_event = index;
    t->buffer_of[e] = (gint)b;
  }
  for (guint k = 0; k < node->n_inputs; k++) {
    gint b = t->buffer_of[ds_graph_entry_id(graph, node->inputs[k])];
    if (b >= 0)
      g_array_index(p->buffers, Buffer, b).last_event = index;
  }
  /* Live while it runs: its inputs and its outputs, as the memory plan counts them. */
  ev.live_bytes = p->live_bytes;
  if (p->live_bytes > p->peak_live_bytes) {
    p->peak_live_bytes = p->live_bytes;
    p->peak_event = index;
  }
  for (guint k = 0; k < node->n_inputs; k++)
    read_done(p, t, ds_graph_entry_id(graph, node->inputs[k]));
  for (guint k = 0; k < n_out; k++) {
    gint b = t->buffer_of[base + k];
    if (b >= 0 && g_array_index(p->buffers, Buffer, b).readers_left == 0)
      buffer_die(p, (guint)b);
  }
  g_array_append_val(p->events, ev);
  p->overhead_ns += ds_monotonic_ns() - end;
}

static void on_frame_enter(gpointer data, const DsFrame *frame)
{
  DsProfiler *p = data;
  guint64 t0 = ds_monotonic_ns();
  PFrame *parent = p->frames->pdata[p->depth];
  PFrame *f = frame_at(p, ++p->depth);
  f->kind = frame->kind;
  f->graph = frame->graph;
  FrameRecord record = {
      .parent = (gint)parent->record,
      .kind = frame->kind,
      .owner = frame->owner,
      .name = frame->name,
      .iteration = frame->iteration,
  };
  f->record = p->records->len;
  f->gpu_pushed_at = p->n_gpu_pushed;
  /* Work a placed region launches outside its nodes (the copies on its edges) is its own. */
  if (frame->kind == DS_FRAME_REGION && frame->backend != NULL) {
    record.gpu_id = gpu_id_new(p, -(gint64)f->record - 1);
    push_gpu_id(p, record.gpu_id);
  }
  g_array_append_val(p->records, record);
  if (frame->kind == DS_FRAME_REGION) {
    f->iteration = parent->iteration;
    f->table = parent->table;
    p->overhead_ns += ds_monotonic_ns() - t0;
    return;
  }
  f->iteration = frame->iteration;
  GraphInfo *info = graph_info(p, frame->graph);
  table_reset(&f->own, info);
  f->table = &f->own;
  /* The subgraph's inputs: views of the buffers of the frame above, where they are. */
  guint v = 0;
  for (guint i = 0; i < frame->graph->n_nodes && v < frame->n_inputs; i++) {
    if (!ds_node_is_variable(frame->graph->nodes[i]))
      continue;
    const DsTensor *in = &frame->inputs[v++];
    guintptr a = (guintptr)in->data;
    guint s = first_segment_after(p->segments, a);
    if (in->data == NULL || s >= p->segments->len)
      continue;
    const Segment *seg = &g_array_index(p->segments, Segment, s);
    Buffer *buf = &g_array_index(p->buffers, Buffer, seg->buffer);
    if (seg->start <= a && a + ds_tensor_nbytes(in) <= seg->end && buf->live) {
      guint e = frame->graph->node_row_ptr[i];
      f->own.buffer_of[e] = (gint)seg->buffer;
      buf->readers_left += info->readers[e];
    }
  }
  p->overhead_ns += ds_monotonic_ns() - t0;
}

/* Names a frame from its parent's: a region by its name; a subgraph run by its node, the
 * iteration, and the role where it is not the loop's body (as the cursor writes paths). */
static void resolve_record(DsProfiler *p, FrameRecord *r)
{
  const FrameRecord *up = &g_array_index(p->records, FrameRecord, r->parent);
  const char *prefix = ds_profiler_string(p, up->prefix);
  const char *key = ds_profiler_string(p, up->key_prefix);
  const char *sep = *prefix != '\0' ? "/" : "", *sep_key = *key != '\0' ? "/" : "";
  g_autofree char *path = NULL, *path_key = NULL;
  if (r->kind == DS_FRAME_REGION) {
    path = g_strdup_printf("%s%s%s", prefix, sep, r->name);
    path_key = g_strdup_printf("%s%s%s", key, sep_key, r->name);
    r->region = intern(&p->strings, r->name);
  } else {
    gboolean named = strcmp(r->name, "body") != 0 && strcmp(r->name, "func") != 0;
    g_autofree char *iter =
        r->iteration >= 0 ? g_strdup_printf("/iter%" G_GINT64_FORMAT, r->iteration) : g_strdup("");
    path = g_strdup_printf("%s%s%s%s%s%s", prefix, sep, r->owner->name, iter, named ? "/" : "",
                           named ? r->name : "");
    path_key = g_strdup_printf("%s%s%s%s%s", key, sep_key, r->owner->name, named ? "/" : "",
                               named ? r->name : "");
    g_autofree char *body = g_strdup_printf("%s%s%s/%s", key, sep_key, r->owner->name, r->name);
    r->body = intern(&p->strings, body);
  }
  r->prefix = intern(&p->strings, path);
  r->key_prefix = intern(&p->strings, path_key);
  r->resolved = TRUE;
}

void ds_profiler_resolve(DsProfiler *p)
{
  /* Parents come before their children. */
  for (guint i = 0; i < p->records->len; i++) {
    FrameRecord *r = &g_array_index(p->records, FrameRecord, i);
    if (!r->resolved)
      resolve_record(p, r);
  }
  for (; p->n_resolved < p->events->len; p->n_resolved++) {
    Event *e = &g_array_index(p->events, Event, p->n_resolved);
    const FrameRecord *r = &g_array_index(p->records, FrameRecord, e->record);
    e->prefix = r->prefix;
    e->key_prefix = r->key_prefix;
    e->region = r->kind == DS_FRAME_REGION ? r->region : 0;
    e->body = r->kind == DS_FRAME_SUBGRAPH ? r->body : 0;
  }
}

guint ds_profiler_record_prefix(const DsProfiler *p, guint record)
{
  return g_array_index(p->records, FrameRecord, record).prefix;
}

static void on_frame_exit(gpointer data, const DsFrame *frame)
{
  DsProfiler *p = data;
  g_return_if_fail(p->depth > 0);
  PFrame *f = p->frames->pdata[p->depth--];
  pop_gpu_ids(p, f->gpu_pushed_at); /* its own id, and those of nodes that failed in it */
  if (frame->kind != DS_FRAME_SUBGRAPH)
    return;
  /* What the subgraph still held (its outputs, inputs it did not read) is let go: the loop
   * has copied what it keeps. */
  Table *t = &f->own;
  for (guint e = 0; e < t->info->n_entries; e++) {
    gint b = t->buffer_of[e];
    if (b < 0 || t->readers_left[e] == 0)
      continue;
    Buffer *buf = &g_array_index(p->buffers, Buffer, b);
    buf->readers_left -= MIN(buf->readers_left, t->readers_left[e]);
    t->readers_left[e] = 0;
    if (buf->readers_left == 0)
      buffer_die(p, (guint)b);
  }
}

static const DsExecutorHooks profiler_hooks = {
    .node_begin = on_node_begin,
    .node_end = on_node_end,
    .frame_enter = on_frame_enter,
    .frame_exit = on_frame_exit,
};

const DsExecutorHooks *ds_profiler_get_hooks(void)
{
  return &profiler_hooks;
}

/* ---- queries ---- */

guint ds_profiler_get_n_runs(const DsProfiler *p)
{
  return p->n_runs;
}
guint ds_profiler_get_n_events(const DsProfiler *p)
{
  return p->events->len;
}

guint64 ds_profiler_get_node_total_ns(const DsProfiler *p, guint id)
{
  DsGraph *graph = ds_session_get_graph(p->session);
  guint64 total = 0;
  for (guint i = 0; i < p->events->len; i++) {
    const Event *e = &g_array_index(p->events, Event, i);
    if (e->graph == graph && e->node->id == id)
      total += e->end_ns - e->start_ns;
  }
  return total;
}

gboolean ds_profiler_has_gpu(const DsProfiler *p)
{
  return p->has_gpu;
}

guint64 ds_profiler_get_node_gpu_ns(const DsProfiler *p, guint id)
{
  DsGraph *graph = ds_session_get_graph(p->session);
  guint64 total = 0;
  for (guint i = 0; i < p->events->len; i++) {
    const Event *e = &g_array_index(p->events, Event, i);
    if (e->graph == graph && e->node->id == id)
      total += e->gpu_ns;
  }
  return total;
}

gsize ds_profiler_get_peak_live_bytes(DsProfiler *p, char **where)
{
  ds_profiler_resolve(p);
  if (where != NULL)
    *where = p->events->len > 0
                 ? ds_profiler_event_path(p, &g_array_index(p->events, Event, p->peak_event))
                 : g_strdup("");
  return p->peak_live_bytes;
}

gboolean ds_profiler_get_mean_ns(DsProfiler *p, const char *name, guint64 *ns)
{
  ds_profiler_resolve(p);
  guint64 total = 0;
  gboolean found = FALSE;
  for (guint i = 0; i < p->events->len; i++) {
    const Event *e = &g_array_index(p->events, Event, i);
    g_autofree char *key = ds_profiler_event_key(p, e);
    if (strcmp(key, name) == 0 || strcmp(e->node->name, name) == 0) {
      total += e->end_ns - e->start_ns;
      found = TRUE;
    }
  }
  *ns = p->n_runs > 0 ? total / p->n_runs : total;
  return found;
}

static int compare_u64(const void *a, const void *b)
{
  guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
  return x < y ? -1 : x > y;
}

guint64 ds_profiler_get_median_run_ns(const DsProfiler *p)
{
  if (p->run_ns->len == 0)
    return 0;
  g_autofree guint64 *sorted = g_memdup2(p->run_ns->data, sizeof(guint64) * p->run_ns->len);
  qsort(sorted, p->run_ns->len, sizeof(guint64), compare_u64);
  return sorted[p->run_ns->len / 2];
}

/* ---- event details ---- */

char *ds_profiler_event_path(const DsProfiler *p, const Event *e)
{
  const char *prefix = ds_profiler_string(p, e->prefix);
  return g_strdup_printf("%s%s%s", prefix, *prefix != '\0' ? "/" : "", e->node->name);
}

char *ds_profiler_event_key(const DsProfiler *p, const Event *e)
{
  const char *prefix = ds_profiler_string(p, e->key_prefix);
  return g_strdup_printf("%s%s%s", prefix, *prefix != '\0' ? "/" : "", e->node->name);
}

guint ds_profiler_event_n_shapes(const DsProfiler *p, const Event *e, gboolean outputs)
{
  return (guint)g_array_index(p->shape_pool, gint64, e->shapes + (outputs ? 1 : 0));
}

const gint64 *ds_profiler_event_shape(const DsProfiler *p, const Event *e, gboolean outputs,
                                      guint i, int *ndim)
{
  const gint64 *pool = (const gint64 *)p->shape_pool->data;
  guint at = e->shapes + 2;
  guint skip = (outputs ? (guint)pool[e->shapes] : 0) + i;
  for (guint k = 0; k < skip; k++)
    at += 1 + (guint)pool[at];
  *ndim = (int)pool[at];
  return pool + at + 1;
}

char *ds_profiler_event_shapes_text(const DsProfiler *p, const Event *e, gboolean outputs)
{
  GString *text = g_string_new(NULL);
  for (guint i = 0; i < ds_profiler_event_n_shapes(p, e, outputs); i++) {
    int ndim;
    const gint64 *dims = ds_profiler_event_shape(p, e, outputs, i, &ndim);
    g_string_append_printf(text, "%s(", i > 0 ? ", " : "");
    for (int d = 0; d < ndim; d++)
      g_string_append_printf(text, "%s%" G_GINT64_FORMAT, d > 0 ? ", " : "", dims[d]);
    g_string_append(text, ndim == 1 ? ",)" : ")");
  }
  return g_string_free(text, FALSE);
}

GPtrArray *ds_profiler_event_symbolic(const DsProfiler *p, const Event *e)
{
  const DsGraphShapes *symbolic = ds_session_get_symbolic_shapes(p->session);
  if (symbolic == NULL || e->graph != ds_session_get_graph(p->session))
    return NULL;
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  guint base = e->graph->node_row_ptr[e->node->id];
  for (guint k = 0; k < ds_node_n_op_outputs(e->node); k++)
    g_ptr_array_add(out, ds_shape_to_string(&symbolic->shapes[base + k]));
  return out;
}

void ds_profiler_add_bindings(const DsProfiler *p, cJSON *object)
{
  DsExprCtx *exprs = ds_session_get_exprs(p->session);
  for (guint id = 0; id < ds_expr_ctx_get_n_symbols(exprs); id++) {
    const char *name = ds_expr_get_symbol_name(ds_expr_ctx_get_symbol(exprs, id));
    int64_t value;
    if (ds_session_lookup_symbol(p->session, name, &value))
      cJSON_AddNumberToObject(object, name, (double)value);
  }
}
