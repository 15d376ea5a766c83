/* ds-report-csv.c: one row per executed node (RFC 4180: quoted where needed, CRLF-free). */
#include <string.h>

#include "ds-profiler-private.h"

static void field(GString *row, const char *text, gboolean last)
{
  if (strpbrk(text, ",\"\n\r") != NULL) {
    g_string_append_c(row, '"');
    for (const char *c = text; *c != '\0'; c++) {
      if (*c == '"')
        g_string_append_c(row, '"');
      g_string_append_c(row, *c);
    }
    g_string_append_c(row, '"');
  } else {
    g_string_append(row, text);
  }
  g_string_append_c(row, last ? '\n' : ',');
}

/* A GPU count, or an empty field when the runs were not traced on a GPU. */
static void gpu_field(GString *row, const DsProfiler *p, guint64 value, gboolean last)
{
  if (p->has_gpu)
    g_string_append_printf(row, "%" G_GUINT64_FORMAT, value);
  g_string_append_c(row, last ? '\n' : ',');
}

char *ds_profiler_build_csv(DsProfiler *p)
{
  ds_profiler_resolve(p);
  GString *csv = g_string_new("run,event,path,key,node,op,region,body,iteration,depth,backend,"
                              "start_ns,end_ns,dur_ns,input_shapes,output_shapes,fresh_bytes,"
                              "reused_bytes,live_bytes,gpu_ns,gpu_kernels,gpu_copy_bytes\n");
  for (guint i = 0; i < p->events->len; i++) {
    const Event *e = &g_array_index(p->events, Event, i);
    g_autofree char *path = ds_profiler_event_path(p, e);
    g_autofree char *key = ds_profiler_event_key(p, e);
    g_autofree char *inputs = ds_profiler_event_shapes_text(p, e, FALSE);
    g_autofree char *outputs = ds_profiler_event_shapes_text(p, e, TRUE);
    g_string_append_printf(csv, "%u,%u,", e->run, i);
    field(csv, path, FALSE);
    field(csv, key, FALSE);
    field(csv, e->node->name, FALSE);
    field(csv, e->node->op_name, FALSE);
    field(csv, ds_profiler_string(p, e->region), FALSE);
    field(csv, ds_profiler_string(p, e->body), FALSE);
    g_string_append_printf(csv,
                           "%" G_GINT64_FORMAT ",%u,%s,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                           ",%" G_GUINT64_FORMAT ",",
                           e->iteration, e->depth, e->on_device ? "cuda" : "cpu", e->start_ns,
                           e->end_ns, e->end_ns - e->start_ns);
    field(csv, inputs, FALSE);
    field(csv, outputs, FALSE);
    g_string_append_printf(csv, "%zu,%zu,%zu,", e->fresh_bytes, e->reused_bytes, e->live_bytes);
    gpu_field(csv, p, e->gpu_ns, FALSE);
    gpu_field(csv, p, e->gpu_kernels, FALSE);
    gpu_field(csv, p, e->gpu_copy_bytes, TRUE);
  }
  return g_string_free(csv, FALSE);
}
