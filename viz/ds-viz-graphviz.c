/* ds-viz-graphviz.c: the one file that talks to Graphviz (cgraph to build, gvc to lay out
 * with dot and to render). */
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <string.h>

#include "ds-error.h"
#include "ds-viz-layout.h"

/* Graphviz keeps process-wide state in its context (plugins, fonts): one per process. */
static GVC_t *context(void)
{
  static GVC_t *gvc;
  static GMutex lock;
  g_mutex_lock(&lock);
  if (gvc == NULL)
    gvc = gvContext();
  g_mutex_unlock(&lock);
  return gvc;
}

/* Graphviz's layout is not reentrant: one layout at a time. */
static GMutex layout_lock;

static void set(void *object, const char *name, const char *value)
{
  agsafeset(object, (char *)name, (char *)value, (char *)"");
}

static const char *node_shape(DsVizNodeKind kind)
{
  switch (kind) {
  case DS_VIZ_NODE_INPUT:
    return "ellipse";
  case DS_VIZ_NODE_WEIGHT:
    return "note";
  case DS_VIZ_NODE_SUBINPUT:
    return "invhouse";
  case DS_VIZ_NODE_COLLAPSED:
    return "box3d";
  default:
    return "box";
  }
}

typedef struct {
  Agraph_t *root;
  Agraph_t **clusters; /* per scene cluster */
  Agnode_t **nodes;    /* per scene node */
  Agedge_t **edges;    /* per scene edge */
} Built;

static Agraph_t *cluster_graph(Built *g, const DsVizScene *scene, gint c)
{
  if (c < 0)
    return g->root;
  if (g->clusters[c] != NULL)
    return g->clusters[c];
  const DsVizCluster *cl = &g_array_index(scene->clusters, DsVizCluster, c);
  Agraph_t *parent = cluster_graph(g, scene, cl->parent);
  /* Graphviz draws subgraphs whose names start with "cluster" as boxes. */
  g_autofree char *name = g_strdup_printf("cluster_%d", c);
  Agraph_t *sub = agsubg(parent, name, 1);
  set(sub, "label", cl->label);
  set(sub, "style", "filled,rounded");
  set(sub, "fillcolor", cl->fill);
  set(sub, "color", cl->kind == DS_VIZ_CLUSTER_BODY ? "#b0b0a0" : "#8090a0");
  set(sub, "labeljust", "l");
  set(sub, "fontname", DS_VIZ_FONT);
  set(sub, "fontsize", cl->kind == DS_VIZ_CLUSTER_BODY ? G_STRINGIFY(DS_VIZ_BODY_FONT_SIZE)
                                                       : G_STRINGIFY(DS_VIZ_CLUSTER_FONT_SIZE));
  g->clusters[c] = sub;
  return sub;
}

static void build(Built *g, const DsVizScene *scene)
{
  g->root = agopen((char *)"dynscope", Agdirected, NULL);
  set(g->root, "rankdir", "TB");
  set(g->root, "nodesep", "0.25");
  set(g->root, "ranksep", "0.35");
  set(g->root, "fontname", DS_VIZ_FONT);
  /* Keep each node's outputs in the order the file lists them: the same graph gives the
   * same picture, and an edit moves little. */
  set(g->root, "ordering", "out");
  set(g->root, "newrank", "true");
  set(g->root, "outputorder", "edgesfirst");
  /* Edge labels as external labels: placed after layout, they do not add ranks, which
   * makes dot several times faster on big graphs (bert: 15 s to 3 s). */
  set(g->root, "forcelabels", "true");
  /* Bound dot's crossing minimisation on big graphs: its cost grows fast with size. */
  if (scene->nodes->len > 400) {
    set(g->root, "mclimit", "0.3");
    set(g->root, "nslimit", "2");
    set(g->root, "nslimit1", "2");
  }
  if (scene->title != NULL && scene->title[0] != '\0') {
    set(g->root, "label", scene->title);
    set(g->root, "labelloc", "t");
  }
  g->clusters = g_new0(Agraph_t *, scene->clusters->len + 1);
  g->nodes = g_new0(Agnode_t *, scene->nodes->len + 1);
  g->edges = g_new0(Agedge_t *, scene->edges->len + 1);
  for (guint i = 0; i < scene->nodes->len; i++) {
    const DsVizNode *n = &g_array_index(scene->nodes, DsVizNode, i);
    Agraph_t *owner = cluster_graph(g, scene, n->cluster);
    g_autofree char *name = g_strdup_printf("n%u", i);
    Agnode_t *node = agnode(owner, name, 1);
    set(node, "label", n->label);
    set(node, "tooltip", n->tooltip);
    set(node, "id", n->id);
    set(node, "shape", node_shape(n->kind));
    set(node, "style", n->kind == DS_VIZ_NODE_OP ? "filled,rounded" : "filled");
    set(node, "fillcolor", n->fill);
    set(node, "fontname", DS_VIZ_FONT);
    set(node, "fontsize", n->kind == DS_VIZ_NODE_WEIGHT ? G_STRINGIFY(DS_VIZ_WEIGHT_FONT_SIZE)
                                                        : G_STRINGIFY(DS_VIZ_NODE_FONT_SIZE));
    set(node, "margin", "0.08,0.04");
    set(node, "height", "0.3");
    g->nodes[i] = node;
  }
  for (guint i = 0; i < scene->edges->len; i++) {
    const DsVizEdge *e = &g_array_index(scene->edges, DsVizEdge, i);
    Agedge_t *edge = agedge(g->root, g->nodes[e->from], g->nodes[e->to], NULL, 1);
    set(edge, "arrowsize", "0.6");
    set(edge, "color", "#606870");
    if (e->label != NULL) {
      set(edge, "xlabel", e->label);
      set(edge, "fontsize", G_STRINGIFY(DS_VIZ_EDGE_FONT_SIZE));
      set(edge, "fontname", DS_VIZ_FONT);
      set(edge, "fontcolor", "#404850");
    }
    g->edges[i] = edge;
  }
  /* The legend: one table, beside the graph. */
  if (scene->legend->len > 0) {
    g_autoptr(GString) html = g_string_new(
        "<TABLE BORDER=\"1\" COLOR=\"#c0c0c0\" CELLBORDER=\"0\" CELLSPACING=\"3\" "
        "CELLPADDING=\"2\" STYLE=\"ROUNDED\"><TR><TD COLSPAN=\"2\"><B>legend</B></TD></TR>");
    for (guint i = 0; i < scene->legend->len; i++) {
      const DsVizLegendEntry *l = &g_array_index(scene->legend, DsVizLegendEntry, i);
      g_autofree char *text = g_markup_escape_text(l->text, -1);
      g_string_append_printf(html,
                             "<TR><TD BGCOLOR=\"%s\" BORDER=\"1\" WIDTH=\"16\" "
                             "HEIGHT=\"10\"></TD><TD ALIGN=\"LEFT\">%s</TD></TR>",
                             l->fill, text);
    }
    g_string_append(html, "</TABLE>");
    Agnode_t *legend = agnode(g->root, (char *)"legend", 1);
    set(legend, "shape", "plain");
    set(legend, "fontname", "Helvetica");
    set(legend, "fontsize", "9");
    agsafeset(legend, (char *)"label", agstrdup_html(g->root, html->str), (char *)"");
  }
}

static void built_free(Built *g)
{
  if (g->root != NULL)
    agclose(g->root);
  g_free(g->clusters);
  g_free(g->nodes);
  g_free(g->edges);
}

static gboolean run_layout(Built *g, GError **error)
{
  if (gvLayout(context(), g->root, "dot") != 0) {
    g_set_error(error, DS_ERROR, DS_ERROR_RUNTIME, "Graphviz could not lay the graph out");
    return FALSE;
  }
  return TRUE;
}

/* Graphviz's y grows upwards from the bottom left; ours downwards from the top left. */
static DsVizPoint flip(pointf p, double height)
{
  return (DsVizPoint){p.x, height - p.y};
}

DsVizLayout *ds_viz_layout(const DsVizScene *scene, GError **error)
{
  Built g = {0};
  g_mutex_lock(&layout_lock);
  build(&g, scene);
  if (!run_layout(&g, error)) {
    built_free(&g);
    g_mutex_unlock(&layout_lock);
    return NULL;
  }
  DsVizLayout *layout = g_new0(DsVizLayout, 1);
  boxf bb = GD_bb(g.root);
  layout->width = bb.UR.x - bb.LL.x;
  layout->height = bb.UR.y - bb.LL.y;
  double h = bb.UR.y;
  layout->n_nodes = scene->nodes->len;
  layout->nodes = g_new0(DsVizNodeGeometry, layout->n_nodes + 1);
  for (guint i = 0; i < layout->n_nodes; i++) {
    Agnode_t *n = g.nodes[i];
    DsVizPoint c = flip(ND_coord(n), h);
    layout->nodes[i].box = (DsVizBox){c.x, c.y, ND_width(n) * 72.0, ND_height(n) * 72.0};
    /* dot leaves a node's label position to the renderer: it is the node's centre. */
    layout->nodes[i].label = c;
  }
  layout->n_edges = scene->edges->len;
  layout->edges = g_new0(DsVizEdgeGeometry, layout->n_edges + 1);
  for (guint i = 0; i < layout->n_edges; i++) {
    Agedge_t *e = g.edges[i];
    DsVizEdgeGeometry *eg = &layout->edges[i];
    const splines *spl = ED_spl(e);
    if (spl != NULL && spl->size > 0) {
      const bezier *bz = &spl->list[0];
      eg->n_points = (guint)bz->size;
      eg->points = g_new(DsVizPoint, eg->n_points + 1);
      for (guint k = 0; k < eg->n_points; k++)
        eg->points[k] = flip(bz->list[k], h);
      if (bz->eflag) {
        eg->has_arrow = TRUE;
        eg->arrow_tip = flip(bz->ep, h);
      }
    }
    /* Shapes are external labels (xlabel), placed after the layout. */
    const textlabel_t *label = ED_xlabel(e) != NULL ? ED_xlabel(e) : ED_label(e);
    if (label != NULL && label->set) {
      eg->has_label = TRUE;
      eg->label = flip(label->pos, h);
    }
  }
  layout->n_clusters = scene->clusters->len;
  layout->clusters = g_new0(DsVizClusterGeometry, layout->n_clusters + 1);
  for (guint i = 0; i < layout->n_clusters; i++) {
    Agraph_t *c = g.clusters[i];
    if (c == NULL)
      continue; /* a cluster whose nodes are all hidden */
    boxf cb = GD_bb(c);
    DsVizPoint ll = flip(cb.LL, h), ur = flip(cb.UR, h);
    layout->clusters[i].box =
        (DsVizBox){(ll.x + ur.x) / 2, (ll.y + ur.y) / 2, ur.x - ll.x, ll.y - ur.y};
    layout->clusters[i].label =
        GD_label(c) != NULL ? flip(GD_label(c)->pos, h) : (DsVizPoint){ll.x, ur.y};
  }
  gvFreeLayout(context(), g.root);
  built_free(&g);
  g_mutex_unlock(&layout_lock);
  return layout;
}

void ds_viz_layout_free(DsVizLayout *layout)
{
  if (layout == NULL)
    return;
  for (guint i = 0; i < layout->n_edges; i++)
    g_free(layout->edges[i].points);
  g_free(layout->nodes);
  g_free(layout->edges);
  g_free(layout->clusters);
  g_free(layout);
}

gboolean ds_viz_render(const DsVizScene *scene, const char *format, char **data, gsize *length,
                       GError **error)
{
  static const char *const formats[] = {"svg", "png", "dot"};
  gboolean known = FALSE;
  for (guint i = 0; i < G_N_ELEMENTS(formats); i++)
    known |= strcmp(format, formats[i]) == 0;
  if (!known) {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "render: unknown format '%s' (svg, png, dot)",
                format);
    return FALSE;
  }
  Built g = {0};
  g_mutex_lock(&layout_lock);
  build(&g, scene);
  gboolean ok = run_layout(&g, error);
  if (ok) {
    char *out = NULL;
    unsigned int n = 0;
    if (gvRenderData(context(), g.root, format, &out, &n) != 0 || out == NULL) {
      g_set_error(error, DS_ERROR, DS_ERROR_RUNTIME,
                  "Graphviz could not render %s (is its %s plugin installed?)", format, format);
      ok = FALSE;
    } else {
      *data = g_malloc(n + 1);
      memcpy(*data, out, n);
      (*data)[n] = '\0';
      *length = n;
    }
    gvFreeRenderData(out);
    gvFreeLayout(context(), g.root);
  }
  built_free(&g);
  g_mutex_unlock(&layout_lock);
  return ok;
}
