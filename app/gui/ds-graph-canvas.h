/* ds-graph-canvas.h: the graph, drawn from viz's geometry, to pan, zoom and pick from.
 *
 * The canvas draws a laid-out scene itself (clusters, edges, nodes, labels) so that it can
 * highlight what the pointer is over and hit-test clicks without asking Graphviz again.
 * Dragging pans; the mouse wheel, a pinch, Ctrl with a touchpad's scrolling, and the + and -
 * keys zoom about the pointer; a touchpad's scrolling pans. A graph opens whole when its
 * text can be read so, else at a readable zoom from its top; 0 or ds_graph_canvas_fit()
 * fits the whole graph, W or ds_graph_canvas_fit_width() its width. Hovering a node highlights it and its
 * edges; a click selects it ("node-selected"); a double click on a collapsed region or loop
 * asks for it to be expanded ("expand-requested"); F9 asks to toggle a breakpoint on the
 * selected node ("toggle-breakpoint") and a right click asks for a node's menu
 * ("context-menu"). Big graphs get a minimap in a corner.
 *
 * Memory policy: the canvas takes ownership of the scene and layout it is given.
 */
#pragma once

#include <gtk/gtk.h>

#include "ds-viz-layout.h"

G_BEGIN_DECLS

#define DS_TYPE_GRAPH_CANVAS (ds_graph_canvas_get_type())
G_DECLARE_FINAL_TYPE(DsGraphCanvas, ds_graph_canvas, DS, GRAPH_CANVAS, GtkWidget)

GtkWidget *ds_graph_canvas_new(void);

/* Shows `scene` laid out as `layout` (both taken), fitted to the widget; NULL clears. */
void ds_graph_canvas_set_graph(DsGraphCanvas *canvas, DsVizScene *scene, DsVizLayout *layout);
/* The same, keeping the zoom and position: the same graph drawn again (an overlay, a box
 * expanded). */
void ds_graph_canvas_replace_graph(DsGraphCanvas *canvas, DsVizScene *scene, DsVizLayout *layout);
const DsVizScene *ds_graph_canvas_get_scene(DsGraphCanvas *canvas);
const DsVizLayout *ds_graph_canvas_get_layout(DsGraphCanvas *canvas);

void ds_graph_canvas_fit(DsGraphCanvas *canvas);
void ds_graph_canvas_fit_width(DsGraphCanvas *canvas);
/* Zooms and scrolls so that `box` (graph coordinates) fills the widget, with a margin. */
void ds_graph_canvas_focus_box(DsGraphCanvas *canvas, const DsVizBox *box);
/* Zooms by `factor` about the pointer when it is over the canvas, else its centre. */
void ds_graph_canvas_zoom(DsGraphCanvas *canvas, double factor);
double ds_graph_canvas_get_zoom(DsGraphCanvas *canvas);
/* Scrolls, at the same zoom, so that graph point (gx, gy) is at widget point (x, y). */
void ds_graph_canvas_anchor(DsGraphCanvas *canvas, double gx, double gy, double x, double y);

/* Selects scene node `index` (-1: none) and, with `reveal`, scrolls it into view. Emits
 * "node-selected". */
void ds_graph_canvas_select(DsGraphCanvas *canvas, gint index, gboolean reveal);
gint ds_graph_canvas_get_selected(DsGraphCanvas *canvas);
/* Where graph point (gx, gy) is on the widget now. */
void ds_graph_canvas_to_widget(DsGraphCanvas *canvas, double gx, double gy, double *x, double *y);
/* The scene node under widget point (x, y), or -1. */
gint ds_graph_canvas_pick(DsGraphCanvas *canvas, double x, double y);
/* Marks node `index` as where execution stands (drawn with an orange halo) and scrolls it
 * into view; -1 clears. */
void ds_graph_canvas_set_current(DsGraphCanvas *canvas, gint index);
gint ds_graph_canvas_get_current(DsGraphCanvas *canvas);
/* Per scene node: a breakpoint is set there (a red dot); copied; NULL clears. Cleared when
 * the graph changes. */
void ds_graph_canvas_set_marks(DsGraphCanvas *canvas, const gboolean *marks);
/* Per scene node: the search matches it (outlined in yellow); copied; NULL clears. Cleared
 * when the graph changes. */
void ds_graph_canvas_set_matches(DsGraphCanvas *canvas, const gboolean *matches);

G_END_DECLS
