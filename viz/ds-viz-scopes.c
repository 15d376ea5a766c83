/* ds-viz-scopes.c: grouping a graph's nodes by the scopes in their names. */
#include "ds-viz-scopes.h"

#include <string.h>

#define MAX_DEPTH 6

/* A Gluon block prefix: letters, then the block's index ("transformer3", "conv0"). */
static gboolean is_block_word(const char *start, const char *end)
{
  gboolean letter = FALSE;
  for (const char *c = start; c < end; c++)
    letter |= g_ascii_isalpha(*c);
  return letter && end > start && g_ascii_isdigit(end[-1]);
}

char *ds_viz_name_scope(const char *name, guint depth)
{
  if (depth == 0)
    return NULL;
  if (strchr(name, '/') != NULL) {
    /* A path: every component but the last is a scope. */
    const char *p = name;
    while (*p == '/')
      p++;
    guint levels = 0;
    for (const char *c = p; *c != '\0'; c++)
      if (*c == '/' && c > p && c[-1] != '/' && ++levels == depth)
        return g_strndup(name, (gsize)(c - name));
    return NULL;
  }
  const char *p = name, *end = NULL;
  for (guint levels = 0; levels < depth; levels++) {
    const char *u = strchr(p, '_');
    if (u == NULL || !is_block_word(p, u))
      return NULL;
    end = u;
    p = u + 1;
  }
  return *p != '\0' ? g_strndup(name, (gsize)(end - name)) : NULL;
}

/* Groups at `depth`: per node its scope if that scope is big enough; NULL if they do not
 * split the graph well. */
static DsVizScopes *try_depth(const DsGraph *graph, guint depth, guint n_ops)
{
  g_autoptr(GHashTable) sizes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  char **scope_of = g_new0(char *, graph->n_nodes + 1); /* with holes: freed one by one */
  for (guint i = 0; i < graph->n_nodes; i++) {
    if (ds_node_is_variable(graph->nodes[i]))
      continue;
    scope_of[i] = ds_viz_name_scope(graph->nodes[i]->name, depth);
    if (scope_of[i] == NULL)
      continue;
    guint n = GPOINTER_TO_UINT(g_hash_table_lookup(sizes, scope_of[i]));
    g_hash_table_insert(sizes, g_strdup(scope_of[i]), GUINT_TO_POINTER(n + 1));
  }
  guint groups = 0, covered = 0, largest = 0;
  GHashTableIter iter;
  gpointer key, value;
  g_hash_table_iter_init(&iter, sizes);
  while (g_hash_table_iter_next(&iter, &key, &value)) {
    guint n = GPOINTER_TO_UINT(value);
    if (n < DS_VIZ_SCOPE_MIN_GROUP)
      continue;
    groups++;
    covered += n;
    largest = MAX(largest, n);
  }
  /* Several groups, together most of the graph, none of them most of it. */
  DsVizScopes *scopes = NULL;
  if (groups < 2 || covered * 2 < n_ops || largest * 5 > n_ops * 3)
    goto out;
  scopes = g_new0(DsVizScopes, 1);
  scopes->n_nodes = graph->n_nodes;
  scopes->n_groups = groups;
  scopes->depth = depth;
  scopes->group_of = g_new0(char *, graph->n_nodes + 1);
  for (guint i = 0; i < graph->n_nodes; i++)
    if (scope_of[i] != NULL &&
        GPOINTER_TO_UINT(g_hash_table_lookup(sizes, scope_of[i])) >= DS_VIZ_SCOPE_MIN_GROUP)
      scopes->group_of[i] = g_steal_pointer(&scope_of[i]);
out:
  for (guint i = 0; i < graph->n_nodes; i++)
    g_free(scope_of[i]);
  g_free(scope_of);
  return scopes;
}

DsVizScopes *ds_viz_scopes_find(const DsGraph *graph)
{
  guint n_ops = ds_graph_count_ops(graph);
  if (n_ops < DS_VIZ_SCOPE_MIN_OPS)
    return NULL;
  for (guint depth = 1; depth <= MAX_DEPTH; depth++) {
    DsVizScopes *scopes = try_depth(graph, depth, n_ops);
    if (scopes != NULL)
      return scopes;
  }
  return NULL;
}

void ds_viz_scopes_free(DsVizScopes *scopes)
{
  if (scopes == NULL)
    return;
  for (guint i = 0; i < scopes->n_nodes; i++)
    g_free(scopes->group_of[i]);
  g_free(scopes->group_of);
  g_free(scopes);
}
