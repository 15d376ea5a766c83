/* ds-canvas-painter.c: culling, level of detail and a cached minimap. */
#include "ds-canvas-painter.h"

#include <math.h>
#include <pango/pangocairo.h>
#include <stdio.h>
#include <string.h>

#define MIN_TEXT_PX   3.0   /* text smaller than this on screen is not drawn */
#define MINIMAP_SIZE  180.0 /* its longer side, in pixels */
#define NODE_FONT     DS_VIZ_NODE_FONT_SIZE
#define EDGE_FONT     DS_VIZ_EDGE_FONT_SIZE
#define CLUSTER_FONT  DS_VIZ_CLUSTER_FONT_SIZE
#define EDGE_LABEL_ZOOM 0.5 /* below this zoom, edge labels would only clutter */
#define LABEL_PAD     3.0   /* graph points kept between a node's text and its border */
#define CORNER_GAP    12.0  /* pixels between the legend or minimap and the widget's edge */
#define GROUP_LABEL_PX 10.0    /* a collapsed box's name when zoomed out, in pixels */
#define GROUP_LABEL_MIN_BOX 40.0 /* ... drawn on boxes at least this wide on screen */

struct _DsCanvasPainter {
  PangoFontDescription *font, *bold;
  cairo_surface_t *minimap; /* the whole graph at minimap scale */
  const DsVizLayout *minimap_of;
};

DsCanvasPainter *ds_canvas_painter_new(void)
{
  DsCanvasPainter *p = g_new0(DsCanvasPainter, 1);
  /* Graphviz's font: the boxes were made for text in it. */
  p->font = pango_font_description_from_string(DS_VIZ_FONT);
  p->bold = pango_font_description_copy(p->font);
  pango_font_description_set_weight(p->bold, PANGO_WEIGHT_BOLD);
  return p;
}

void ds_canvas_painter_reset(DsCanvasPainter *p)
{
  g_clear_pointer(&p->minimap, cairo_surface_destroy);
  p->minimap_of = NULL;
}

void ds_canvas_painter_free(DsCanvasPainter *p)
{
  if (p == NULL)
    return;
  ds_canvas_painter_reset(p);
  pango_font_description_free(p->font);
  pango_font_description_free(p->bold);
  g_free(p);
}

/* ---- primitives ---- */

static void set_hex(cairo_t *cr, const char *hex, double alpha)
{
  guint r = 255, g = 255, b = 255;
  if (hex != NULL && hex[0] == '#' && strlen(hex) == 7)
    sscanf(hex + 1, "%2x%2x%2x", &r, &g, &b);
  cairo_set_source_rgba(cr, r / 255.0, g / 255.0, b / 255.0, alpha);
}

static void rounded_box(cairo_t *cr, const DsVizBox *b, double r)
{
  double x0 = b->x - b->width / 2, y0 = b->y - b->height / 2;
  double x1 = x0 + b->width, y1 = y0 + b->height;
  r = MIN(r, MIN(b->width, b->height) / 2);
  cairo_new_sub_path(cr);
  cairo_arc(cr, x1 - r, y0 + r, r, -G_PI / 2, 0);
  cairo_arc(cr, x1 - r, y1 - r, r, 0, G_PI / 2);
  cairo_arc(cr, x0 + r, y1 - r, r, G_PI / 2, G_PI);
  cairo_arc(cr, x0 + r, y0 + r, r, G_PI, 3 * G_PI / 2);
  cairo_close_path(cr);
}

/* A rounded path `pad_px` screen pixels outside `box`, at any zoom: for outlines and halos. */
static void around_box(cairo_t *cr, const DsVizBox *box, double pad_px, double radius,
                       double zoom)
{
  DsVizBox b = *box;
  double pad = pad_px / MAX(zoom, 0.05);
  b.width += 2 * pad, b.height += 2 * pad;
  rounded_box(cr, &b, radius);
}

/* One layout reused for every text of a frame: shaping dominates drawing big graphs. */
typedef struct {
  PangoLayout *layout;
  const PangoFontDescription *font;
  double size;
} TextStyle;

static void text_style(TextStyle *t, const PangoFontDescription *font, double size)
{
  if (t->font == font && t->size == size)
    return;
  PangoFontDescription *d = pango_font_description_copy(font);
  pango_font_description_set_absolute_size(d, size * PANGO_SCALE);
  pango_layout_set_font_description(t->layout, d);
  pango_font_description_free(d);
  t->font = font;
  t->size = size;
}

/* Centred lines of text at (x, y). */
static void draw_text(cairo_t *cr, TextStyle *t, const char *text, double x, double y)
{
  pango_layout_set_width(t->layout, -1);
  pango_layout_set_text(t->layout, text, -1);
  int w, h;
  pango_layout_get_pixel_size(t->layout, &w, &h);
  cairo_move_to(cr, x - w / 2.0, y - h / 2.0);
  pango_cairo_show_layout(cr, t->layout);
}

/* Lays node text out inside `box`: each line middle-ellipsized to the box's width (the
 * layer index at the end of a long name stays; the whole name is in the tooltip), and the
 * font made smaller when the lines are taller than the box (the layout measured them with
 * another font). Its size in graph points in *w, *h. */
static void layout_node_text(DsCanvasPainter *p, TextStyle *t, const DsVizNode *n,
                             const DsVizBox *box, double *w, double *h)
{
  const char *text = n->label;
  double room_w = MAX(box->width - 2 * LABEL_PAD, 1), room_h = MAX(box->height - 2 * LABEL_PAD, 1);
  double size = n->kind == DS_VIZ_NODE_WEIGHT ? DS_VIZ_WEIGHT_FONT_SIZE : NODE_FONT;
  text_style(t, p->font, size);
  pango_layout_set_width(t->layout, (int)(room_w * PANGO_SCALE));
  pango_layout_set_ellipsize(t->layout, PANGO_ELLIPSIZE_MIDDLE);
  pango_layout_set_alignment(t->layout, PANGO_ALIGN_CENTER);
  pango_layout_set_text(t->layout, text, -1);
  PangoRectangle ink, logical;
  pango_layout_get_extents(t->layout, &ink, &logical);
  double height = (double)logical.height / PANGO_SCALE;
  if (height > room_h) {
    text_style(t, p->font, size * room_h / height);
    pango_layout_get_extents(t->layout, &ink, &logical);
    height = (double)logical.height / PANGO_SCALE;
  }
  *w = MIN((double)logical.width / PANGO_SCALE, room_w);
  *h = height;
}

static void draw_node_text(DsCanvasPainter *p, cairo_t *cr, TextStyle *t, const DsVizNode *n,
                           const DsVizBox *box)
{
  double w, h;
  layout_node_text(p, t, n, box, &w, &h);
  double room_w = MAX(box->width - 2 * LABEL_PAD, 1);
  cairo_move_to(cr, box->x - room_w / 2, box->y - h / 2);
  pango_cairo_show_layout(cr, t->layout);
  /* The layout is shared with every other text of the frame. */
  pango_layout_set_width(t->layout, -1);
  pango_layout_set_ellipsize(t->layout, PANGO_ELLIPSIZE_NONE);
  pango_layout_set_alignment(t->layout, PANGO_ALIGN_LEFT);
}

/* The first line of a node's text at a readable size on screen, whatever the zoom. */
static void draw_box_name(DsCanvasPainter *p, cairo_t *cr, TextStyle *t, const DsVizNode *n,
                          const DsVizBox *box, double zoom)
{
  g_autofree char *name = g_strndup(n->label, strcspn(n->label, "\n"));
  text_style(t, p->bold, GROUP_LABEL_PX / zoom);
  pango_layout_set_width(t->layout, (int)(box->width * PANGO_SCALE));
  pango_layout_set_ellipsize(t->layout, PANGO_ELLIPSIZE_MIDDLE);
  pango_layout_set_alignment(t->layout, PANGO_ALIGN_CENTER);
  pango_layout_set_text(t->layout, name, -1);
  int w, h;
  pango_layout_get_size(t->layout, &w, &h);
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  cairo_move_to(cr, box->x - box->width / 2, box->y - (double)h / PANGO_SCALE / 2);
  pango_cairo_show_layout(cr, t->layout);
  pango_layout_set_width(t->layout, -1);
  pango_layout_set_ellipsize(t->layout, PANGO_ELLIPSIZE_NONE);
  pango_layout_set_alignment(t->layout, PANGO_ALIGN_LEFT);
}

void ds_canvas_painter_measure_label(DsCanvasPainter *p, const DsVizScene *scene,
                                     const DsVizLayout *layout, guint index, double *width,
                                     double *height)
{
  PangoContext *context = pango_font_map_create_context(pango_cairo_font_map_get_default());
  TextStyle t = {.layout = pango_layout_new(context)};
  layout_node_text(p, &t, &g_array_index(scene->nodes, DsVizNode, index),
                   &layout->nodes[index].box, width, height);
  g_object_unref(t.layout);
  g_object_unref(context);
}

/* ---- what is visible ---- */

typedef struct {
  double x0, y0, x1, y1; /* graph coordinates */
} Rect;

static gboolean box_visible(const Rect *r, const DsVizBox *b)
{
  return b->x + b->width / 2 >= r->x0 && b->x - b->width / 2 <= r->x1 &&
         b->y + b->height / 2 >= r->y0 && b->y - b->height / 2 <= r->y1;
}

static gboolean edge_visible(const Rect *r, const DsVizEdgeGeometry *g)
{
  double x0 = G_MAXDOUBLE, y0 = G_MAXDOUBLE, x1 = -G_MAXDOUBLE, y1 = -G_MAXDOUBLE;
  for (guint k = 0; k < g->n_points; k++) {
    x0 = MIN(x0, g->points[k].x), x1 = MAX(x1, g->points[k].x);
    y0 = MIN(y0, g->points[k].y), y1 = MAX(y1, g->points[k].y);
  }
  if (g->has_arrow) {
    x0 = MIN(x0, g->arrow_tip.x), x1 = MAX(x1, g->arrow_tip.x);
    y0 = MIN(y0, g->arrow_tip.y), y1 = MAX(y1, g->arrow_tip.y);
  }
  return x1 >= r->x0 && x0 <= r->x1 && y1 >= r->y0 && y0 <= r->y1;
}

static gboolean touches(const DsVizEdge *e, gint node)
{
  return node >= 0 && ((gint)e->from == node || (gint)e->to == node);
}

/* ---- the graph ---- */

static void draw_edge(cairo_t *cr, const DsVizEdgeGeometry *g)
{
  cairo_move_to(cr, g->points[0].x, g->points[0].y);
  for (guint k = 1; k + 2 < g->n_points; k += 3)
    cairo_curve_to(cr, g->points[k].x, g->points[k].y, g->points[k + 1].x, g->points[k + 1].y,
                   g->points[k + 2].x, g->points[k + 2].y);
  if (g->has_arrow)
    cairo_line_to(cr, g->arrow_tip.x, g->arrow_tip.y);
  cairo_stroke(cr);
  if (!g->has_arrow)
    return;
  /* A small head along the last segment. */
  DsVizPoint a = g->points[g->n_points - 1], t = g->arrow_tip;
  double dx = t.x - a.x, dy = t.y - a.y, len = hypot(dx, dy);
  if (len > 0.01) {
    dx /= len, dy /= len;
    cairo_move_to(cr, t.x, t.y);
    cairo_line_to(cr, t.x - 7 * dx + 3.5 * dy, t.y - 7 * dy - 3.5 * dx);
    cairo_line_to(cr, t.x - 7 * dx - 3.5 * dy, t.y - 7 * dy + 3.5 * dx);
    cairo_close_path(cr);
    cairo_fill(cr);
  }
}

static void draw_edges(DsCanvasPainter *p, cairo_t *cr, const DsCanvasView *v, const Rect *r,
                       TextStyle *text)
{
  gboolean labels = text != NULL && v->zoom >= EDGE_LABEL_ZOOM && v->zoom * EDGE_FONT >= MIN_TEXT_PX;
  for (guint i = 0; i < v->layout->n_edges; i++) {
    const DsVizEdge *e = &g_array_index(v->scene->edges, DsVizEdge, i);
    const DsVizEdgeGeometry *g = &v->layout->edges[i];
    if (g->n_points < 4 || (r != NULL && !edge_visible(r, g)))
      continue;
    gboolean lit = touches(e, v->hover) || touches(e, v->selected);
    if (lit)
      cairo_set_source_rgba(cr, 0.1, 0.45, 0.9, 1.0);
    else
      cairo_set_source_rgba(cr, v->fg[0], v->fg[1], v->fg[2], 0.55);
    cairo_set_line_width(cr, lit ? 2.0 : 1.0);
    draw_edge(cr, g);
    if (labels && g->has_label && e->label != NULL) {
      text_style(text, p->font, EDGE_FONT);
      draw_text(cr, text, e->label, g->label.x, g->label.y);
    }
  }
}

static void draw_mark(cairo_t *cr, const DsVizBox *b)
{
  double x = b->x - b->width / 2, y = b->y - b->height / 2;
  cairo_arc(cr, x, y, 6, 0, 2 * G_PI);
  cairo_set_source_rgb(cr, 0.85, 0.1, 0.1);
  cairo_fill_preserve(cr);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_set_line_width(cr, 1.5);
  cairo_stroke(cr);
}

/* Everything in graph coordinates; `r` (the visible part) NULL draws all, and `text` NULL
 * draws no text (the minimap). */
static void draw_graph(DsCanvasPainter *p, cairo_t *cr, const DsCanvasView *v, const Rect *r,
                       TextStyle *text)
{
  gboolean dark = 0.3 * v->fg[0] + 0.6 * v->fg[1] + 0.1 * v->fg[2] > 0.5;
  /* Clusters first, outermost first (they were made in that order). */
  for (guint i = 0; i < v->layout->n_clusters; i++) {
    const DsVizCluster *cl = &g_array_index(v->scene->clusters, DsVizCluster, i);
    const DsVizClusterGeometry *g = &v->layout->clusters[i];
    if (g->box.width <= 0 || (r != NULL && !box_visible(r, &g->box)))
      continue;
    rounded_box(cr, &g->box, 8);
    /* In the dark style a cluster is a tint of the background, so that edges and labels in
     * the theme's light colour stay visible on it; nodes stay light cards with dark text. */
    set_hex(cr, cl->fill, dark ? 0.16 : 0.85);
    cairo_fill_preserve(cr);
    cairo_set_source_rgba(cr, 0.5, 0.55, 0.6, 0.9);
    cairo_set_line_width(cr, 1.0);
    cairo_stroke(cr);
    if (text != NULL && v->zoom * CLUSTER_FONT >= MIN_TEXT_PX) {
      if (dark)
        cairo_set_source_rgb(cr, v->fg[0], v->fg[1], v->fg[2]);
      else
        cairo_set_source_rgb(cr, 0.2, 0.22, 0.25);
      text_style(text, p->bold, CLUSTER_FONT);
      draw_text(cr, text, cl->label, g->label.x, g->label.y);
    }
  }
  draw_edges(p, cr, v, r, text);
  gboolean node_text = text != NULL && v->zoom * NODE_FONT >= MIN_TEXT_PX;
  for (guint i = 0; i < v->layout->n_nodes; i++) {
    const DsVizNode *n = &g_array_index(v->scene->nodes, DsVizNode, i);
    const DsVizNodeGeometry *g = &v->layout->nodes[i];
    if (r != NULL && !box_visible(r, &g->box))
      continue;
    rounded_box(cr, &g->box, n->kind == DS_VIZ_NODE_OP ? 6 : 2);
    set_hex(cr, n->fill, 1.0);
    cairo_fill_preserve(cr);
    gboolean lit = (gint)i == v->hover || (gint)i == v->selected;
    cairo_set_source_rgb(cr, lit ? 0.1 : 0.2, lit ? 0.45 : 0.2, lit ? 0.9 : 0.2);
    cairo_set_line_width(cr, (gint)i == v->selected ? 3.0 : lit ? 2.0 : 1.0);
    cairo_stroke(cr);
    if (node_text) {
      /* Node text is dark on the light fills every kind and overlay uses. */
      cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
      draw_node_text(p, cr, text, n, &g->box);
    } else if (text != NULL && n->kind == DS_VIZ_NODE_COLLAPSED &&
               g->box.width * v->zoom >= GROUP_LABEL_MIN_BOX) {
      /* Zoomed out, a collapsed group or loop keeps its name: the map of the graph. */
      draw_box_name(p, cr, text, n, &g->box, v->zoom);
    }
    if (v->marks != NULL && v->marks[i])
      draw_mark(cr, &g->box);
    if (v->matches != NULL && v->matches[i]) {
      /* Outside the box, a few pixels wide at any zoom, under the selection's blue. */
      around_box(cr, &g->box, 3, 7, v->zoom);
      cairo_set_source_rgba(cr, 0.98, 0.78, 0.0, 0.9);
      cairo_set_line_width(cr, 3 / MAX(v->zoom, 0.05));
      cairo_stroke(cr);
    }
  }
  /* Where execution stands, on top of everything, with a halo that stays visible at any
   * zoom. */
  if (v->current >= 0 && (guint)v->current < v->layout->n_nodes) {
    around_box(cr, &v->layout->nodes[v->current].box, 4, 8, v->zoom);
    cairo_set_source_rgba(cr, 0.95, 0.45, 0.05, 0.35);
    cairo_set_line_width(cr, 10 / MAX(v->zoom, 0.05));
    cairo_stroke_preserve(cr);
    cairo_set_source_rgb(cr, 0.9, 0.35, 0.0);
    cairo_set_line_width(cr, 3 / MAX(v->zoom, 0.05));
    cairo_stroke(cr);
  }
}

/* ---- overlays on the widget ---- */

typedef enum { BOTTOM_LEFT, TOP_LEFT, BOTTOM_RIGHT, TOP_RIGHT } Corner;

/* Where a w x h overlay goes: the first of `corners` where it does not cover the node where
 * execution stands (with its halo), else the first. */
static void place(const DsCanvasView *v, double w, double h, const Corner *corners, guint n,
                  double *x, double *y)
{
  double cx0 = 0, cy0 = 0, cx1 = -1, cy1 = -1;
  if (v->current >= 0 && (guint)v->current < v->layout->n_nodes) {
    const DsVizBox *b = &v->layout->nodes[v->current].box;
    cx0 = v->offset_x + (b->x - b->width / 2) * v->zoom - 12;
    cy0 = v->offset_y + (b->y - b->height / 2) * v->zoom - 12;
    cx1 = cx0 + b->width * v->zoom + 24, cy1 = cy0 + b->height * v->zoom + 24;
  }
  for (guint i = 0; i < n; i++) {
    gboolean left = corners[i] == BOTTOM_LEFT || corners[i] == TOP_LEFT;
    gboolean top = corners[i] == TOP_LEFT || corners[i] == TOP_RIGHT;
    double ox = left ? CORNER_GAP : v->width - w - CORNER_GAP;
    double oy = top ? CORNER_GAP : v->height - h - CORNER_GAP;
    gboolean covers = cx1 > cx0 && ox < cx1 && ox + w > cx0 && oy < cy1 && oy + h > cy0;
    if (i == 0 || !covers)
      *x = ox, *y = oy;
    if (!covers)
      return;
  }
}

static void draw_minimap(DsCanvasPainter *p, cairo_t *cr, const DsCanvasView *v)
{
  double scale = MINIMAP_SIZE / MAX(v->layout->width, v->layout->height);
  int mw = (int)ceil(v->layout->width * scale), mh = (int)ceil(v->layout->height * scale);
  if (p->minimap_of != v->layout || p->minimap == NULL) {
    ds_canvas_painter_reset(p);
    p->minimap = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, MAX(mw, 1), MAX(mh, 1));
    cairo_t *mc = cairo_create(p->minimap);
    cairo_scale(mc, scale, scale);
    DsCanvasView whole = *v;
    whole.hover = whole.selected = whole.current = -1;
    whole.marks = NULL;
    whole.matches = NULL;
    draw_graph(p, mc, &whole, NULL, NULL);
    cairo_destroy(mc);
    p->minimap_of = v->layout;
  }
  static const Corner corners[] = {BOTTOM_RIGHT, TOP_RIGHT, BOTTOM_LEFT};
  double x0, y0;
  place(v, mw + 8, mh + 8, corners, G_N_ELEMENTS(corners), &x0, &y0);
  x0 += 4, y0 += 4;
  cairo_save(cr);
  cairo_rectangle(cr, x0 - 4, y0 - 4, mw + 8, mh + 8);
  cairo_set_source_rgba(cr, 0.5, 0.5, 0.5, 0.25);
  cairo_fill_preserve(cr);
  /* The part the widget shows, which can reach past the graph: kept inside the minimap. */
  cairo_clip(cr);
  /* Translucent: nodes under it stay visible. */
  cairo_set_source_surface(cr, p->minimap, x0, y0);
  cairo_paint_with_alpha(cr, 0.75);
  double gx0 = -v->offset_x / v->zoom, gy0 = -v->offset_y / v->zoom;
  cairo_rectangle(cr, x0 + gx0 * scale, y0 + gy0 * scale, v->width / v->zoom * scale,
                  v->height / v->zoom * scale);
  cairo_set_source_rgba(cr, 0.1, 0.45, 0.9, 0.9);
  cairo_set_line_width(cr, 2.0);
  cairo_stroke(cr);
  cairo_restore(cr);
}

static void draw_legend(DsCanvasPainter *p, cairo_t *cr, const DsCanvasView *v, TextStyle *t)
{
  GArray *legend = v->scene->legend;
  if (legend == NULL || legend->len == 0)
    return;
  text_style(t, p->font, 11);
  const double swatch = 12, pad = 8, row = 18;
  double width = 0;
  for (guint i = 0; i < legend->len; i++) {
    pango_layout_set_text(t->layout, g_array_index(legend, DsVizLegendEntry, i).text, -1);
    int w, h;
    pango_layout_get_pixel_size(t->layout, &w, &h);
    width = MAX(width, w);
  }
  /* Bottom left: the graph starts at the top, and the minimap is bottom right. */
  double box_w = pad * 3 + swatch + width, box_h = pad * 2 + row * legend->len;
  static const Corner corners[] = {BOTTOM_LEFT, TOP_LEFT, TOP_RIGHT};
  double x, y;
  place(v, box_w, box_h, corners, G_N_ELEMENTS(corners), &x, &y);
  cairo_save(cr);
  cairo_rectangle(cr, x, y, box_w, box_h);
  /* Translucent: nodes under it show through. */
  cairo_set_source_rgba(cr, 1, 1, 1, 0.78);
  cairo_fill_preserve(cr);
  cairo_set_source_rgba(cr, 0.4, 0.4, 0.4, 0.8);
  cairo_set_line_width(cr, 1);
  cairo_stroke(cr);
  for (guint i = 0; i < legend->len; i++) {
    const DsVizLegendEntry *e = &g_array_index(legend, DsVizLegendEntry, i);
    double ry = y + pad + row * i;
    cairo_rectangle(cr, x + pad, ry + (row - swatch) / 2, swatch, swatch);
    set_hex(cr, e->fill, 1.0);
    cairo_fill_preserve(cr);
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    pango_layout_set_text(t->layout, e->text, -1);
    int w, h;
    pango_layout_get_pixel_size(t->layout, &w, &h);
    cairo_move_to(cr, x + pad * 2 + swatch, ry + (row - h) / 2.0);
    pango_cairo_show_layout(cr, t->layout);
  }
  cairo_restore(cr);
}

void ds_canvas_painter_paint(DsCanvasPainter *p, cairo_t *cr, const DsCanvasView *v)
{
  if (v->layout == NULL || v->scene == NULL || v->zoom <= 0)
    return;
  TextStyle text = {.layout = pango_cairo_create_layout(cr)};
  Rect visible = {.x0 = -v->offset_x / v->zoom,
                  .y0 = -v->offset_y / v->zoom,
                  .x1 = (v->width - v->offset_x) / v->zoom,
                  .y1 = (v->height - v->offset_y) / v->zoom};
  cairo_save(cr);
  cairo_translate(cr, v->offset_x, v->offset_y);
  cairo_scale(cr, v->zoom, v->zoom);
  pango_cairo_update_layout(cr, text.layout);
  draw_graph(p, cr, v, &visible, &text);
  cairo_restore(cr);
  pango_cairo_update_layout(cr, text.layout);
  text.font = NULL;
  draw_legend(p, cr, v, &text);
  /* A minimap says where the view is in a graph it does not show whole. */
  gboolean whole = visible.x0 <= 0 && visible.y0 <= 0 && visible.x1 >= v->layout->width &&
                   visible.y1 >= v->layout->height;
  if (v->minimap && !whole)
    draw_minimap(p, cr, v);
  g_object_unref(text.layout);
}
