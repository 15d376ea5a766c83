/* ds-viz-layout.h: a scene laid out by Graphviz's dot, as geometry and as pictures.
 *
 * The geometry is what the desktop app draws and hit-tests itself: node boxes, edge splines
 * (cubic Bézier control points), label positions and cluster rectangles, in points, with the
 * origin at the top left and y growing downwards. ds-viz-graphviz.c is the only file that
 * talks to Graphviz.
 *
 * Memory policy: a layout owns its arrays; indices refer to the scene it was made from.
 */
#pragma once

#include "ds-viz.h"

/* The font Graphviz measures text with when it sizes boxes, and its sizes in points: whoever
 * draws the geometry draws text with the same, so that it fits the boxes made for it. */
#define DS_VIZ_FONT              "Helvetica"
#define DS_VIZ_NODE_FONT_SIZE    10
#define DS_VIZ_WEIGHT_FONT_SIZE  8
#define DS_VIZ_EDGE_FONT_SIZE    8
#define DS_VIZ_CLUSTER_FONT_SIZE 12
#define DS_VIZ_BODY_FONT_SIZE    10 /* a loop's or branch's body */

typedef struct {
  double x, y;
} DsVizPoint;

typedef struct {
  double x, y, width, height; /* centre and size */
} DsVizBox;

typedef struct {
  DsVizBox box;
  DsVizPoint label; /* centre of its text */
} DsVizNodeGeometry;

typedef struct {
  DsVizPoint *points; /* 1 + 3k control points of a cubic Bézier chain, tail to head */
  guint n_points;
  gboolean has_arrow;
  DsVizPoint arrow_tip; /* where the arrowhead points, at the head node's border */
  gboolean has_label;
  DsVizPoint label;
} DsVizEdgeGeometry;

typedef struct {
  DsVizBox box;
  DsVizPoint label;
} DsVizClusterGeometry;

typedef struct {
  double width, height;
  DsVizNodeGeometry *nodes;       /* per scene node */
  DsVizEdgeGeometry *edges;       /* per scene edge */
  DsVizClusterGeometry *clusters; /* per scene cluster */
  guint n_nodes, n_edges, n_clusters;
} DsVizLayout;

DsVizLayout *ds_viz_layout(const DsVizScene *scene, GError **error);
void ds_viz_layout_free(DsVizLayout *layout);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsVizLayout, ds_viz_layout_free)

/* Lays the scene out and renders it: "svg", "png" or "dot" (the laid-out graph in dot's own
 * language, with positions). */
gboolean ds_viz_render(const DsVizScene *scene, const char *format, char **data, gsize *length,
                       GError **error);
