/* ds-canvas-painter.h: draws a laid-out scene onto cairo, fast enough to follow the pointer.
 *
 * The canvas widget owns input and the view (zoom, offset, what is hovered); this draws what
 * the view shows, and nothing more: nodes and edges outside the viewport are skipped, text
 * too small to read is not shaped, and the minimap is drawn once per layout and reused. It
 * needs no GTK, so the benchmark times exactly what the app draws.
 *
 * Memory policy: the painter caches per layout; ds_canvas_painter_reset() drops the cache
 * when the scene or layout it was drawing is freed.
 */
#pragma once

#include <cairo.h>

#include "ds-viz-layout.h"

typedef struct {
  const DsVizScene *scene;
  const DsVizLayout *layout;
  double width, height;      /* the viewport, in widget pixels */
  double zoom;               /* widget pixels per graph point */
  double offset_x, offset_y; /* widget position of the graph's origin */
  gint hover, selected;      /* scene nodes, or -1 */
  gint current;              /* where execution stands, or -1 */
  const gboolean *marks;     /* per scene node: a breakpoint is set (a red dot), or NULL */
  const gboolean *matches;   /* per scene node: a search match (a yellow outline), or NULL */
  double fg[3];              /* the theme's text colour: edges and their labels */
  gboolean minimap;          /* draw the minimap in the bottom-right corner */
} DsCanvasView;

typedef struct _DsCanvasPainter DsCanvasPainter;

DsCanvasPainter *ds_canvas_painter_new(void);
void ds_canvas_painter_free(DsCanvasPainter *painter);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsCanvasPainter, ds_canvas_painter_free)
void ds_canvas_painter_reset(DsCanvasPainter *painter);

/* Draws the view: clusters, edges with shape labels, nodes, marks, the current node, the
 * overlay's legend (bottom left) and the minimap (bottom right), each moved to another
 * corner when it would cover the node where execution stands. */
void ds_canvas_painter_paint(DsCanvasPainter *painter, cairo_t *cr, const DsCanvasView *view);

/* The size, in graph points, at which node `index`'s text is drawn inside its box (lines
 * ellipsized in the middle to its width, the font shrunk to its height). */
void ds_canvas_painter_measure_label(DsCanvasPainter *painter, const DsVizScene *scene,
                                     const DsVizLayout *layout, guint index, double *width,
                                     double *height);
