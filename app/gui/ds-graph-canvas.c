/* ds-graph-canvas.c: drawing, panning, zooming and picking. */
#include "ds-graph-canvas.h"

#include <math.h>

#define MIN_ZOOM      0.02
#define MAX_ZOOM      8.0
#define MINIMAP_NODES 150 /* graphs bigger than this get a minimap */
#define MINIMAP_SIZE  180.0

struct _DsGraphCanvas {
  GtkWidget parent;
  DsVizScene *scene;
  DsVizLayout *layout;
  double zoom;
  double offset_x, offset_y; /* widget position of the graph's origin */
  double drag_x, drag_y;     /* offset when a drag began */
  double pinch_zoom;         /* zoom when a pinch began */
  gint hover, selected, current;
  gboolean fitted; /* fit again on the first allocation */
};

G_DEFINE_FINAL_TYPE(DsGraphCanvas, ds_graph_canvas, GTK_TYPE_WIDGET)

enum { SIGNAL_NODE_SELECTED, SIGNAL_EXPAND_REQUESTED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* ---- coordinates ---- */

static void to_graph(DsGraphCanvas *c, double x, double y, double *gx, double *gy)
{
  *gx = (x - c->offset_x) / c->zoom;
  *gy = (y - c->offset_y) / c->zoom;
}

void ds_graph_canvas_to_widget(DsGraphCanvas *c, double gx, double gy, double *x, double *y)
{
  *x = c->offset_x + gx * c->zoom;
  *y = c->offset_y + gy * c->zoom;
}

static void zoom_at(DsGraphCanvas *c, double factor, double x, double y)
{
  double zoom = CLAMP(c->zoom * factor, MIN_ZOOM, MAX_ZOOM);
  double gx, gy;
  to_graph(c, x, y, &gx, &gy);
  c->zoom = zoom;
  c->offset_x = x - gx * zoom;
  c->offset_y = y - gy * zoom;
  gtk_widget_queue_draw(GTK_WIDGET(c));
}

void ds_graph_canvas_fit(DsGraphCanvas *c)
{
  double w = gtk_widget_get_width(GTK_WIDGET(c)), h = gtk_widget_get_height(GTK_WIDGET(c));
  if (c->layout == NULL || w <= 0 || h <= 0) {
    c->fitted = FALSE;
    return;
  }
  const double margin = 24.0;
  double zx = (w - 2 * margin) / MAX(c->layout->width, 1.0);
  double zy = (h - 2 * margin) / MAX(c->layout->height, 1.0);
  /* Tall graphs fit their width and start at the top: a whole bert is unreadable anyway. */
  c->zoom = CLAMP(MIN(MAX(zx, zy * 4), MIN(zx, 1.5)), MIN_ZOOM, MAX_ZOOM);
  if (c->layout->height * c->zoom <= h - 2 * margin)
    c->zoom = CLAMP(MIN(zx, zy), MIN_ZOOM, 1.5);
  c->offset_x = (w - c->layout->width * c->zoom) / 2;
  c->offset_y = c->layout->height * c->zoom <= h ? (h - c->layout->height * c->zoom) / 2 : margin;
  c->fitted = TRUE;
  gtk_widget_queue_draw(GTK_WIDGET(c));
}

void ds_graph_canvas_focus_box(DsGraphCanvas *c, const DsVizBox *box)
{
  double w = gtk_widget_get_width(GTK_WIDGET(c)), h = gtk_widget_get_height(GTK_WIDGET(c));
  if (w <= 0 || h <= 0 || box->width <= 0 || box->height <= 0)
    return;
  const double margin = 24.0;
  c->zoom =
      CLAMP(MIN((w - 2 * margin) / box->width, (h - 2 * margin) / box->height), MIN_ZOOM, 2.0);
  c->offset_x = w / 2 - box->x * c->zoom;
  c->offset_y = h / 2 - box->y * c->zoom;
  c->fitted = TRUE;
  gtk_widget_queue_draw(GTK_WIDGET(c));
}

void ds_graph_canvas_zoom(DsGraphCanvas *c, double factor)
{
  zoom_at(c, factor, gtk_widget_get_width(GTK_WIDGET(c)) / 2.0,
          gtk_widget_get_height(GTK_WIDGET(c)) / 2.0);
}

double ds_graph_canvas_get_zoom(DsGraphCanvas *c)
{
  return c->zoom;
}

gint ds_graph_canvas_pick(DsGraphCanvas *c, double x, double y)
{
  if (c->layout == NULL)
    return -1;
  double gx, gy;
  to_graph(c, x, y, &gx, &gy);
  /* Last drawn is on top. */
  for (guint i = c->layout->n_nodes; i-- > 0;) {
    const DsVizBox *b = &c->layout->nodes[i].box;
    if (fabs(gx - b->x) <= b->width / 2 && fabs(gy - b->y) <= b->height / 2)
      return (gint)i;
  }
  return -1;
}

void ds_graph_canvas_select(DsGraphCanvas *c, gint index, gboolean reveal)
{
  if (c->scene == NULL || index >= (gint)c->scene->nodes->len)
    index = -1;
  c->selected = index;
  if (reveal && index >= 0) {
    const DsVizBox *b = &c->layout->nodes[index].box;
    double w = gtk_widget_get_width(GTK_WIDGET(c)), h = gtk_widget_get_height(GTK_WIDGET(c));
    double x = c->offset_x + b->x * c->zoom, y = c->offset_y + b->y * c->zoom;
    if (x < 0 || x > w || y < 0 || y > h) {
      c->offset_x += w / 2 - x;
      c->offset_y += h / 2 - y;
    }
  }
  g_signal_emit(c, signals[SIGNAL_NODE_SELECTED], 0, index);
  gtk_widget_queue_draw(GTK_WIDGET(c));
}

gint ds_graph_canvas_get_selected(DsGraphCanvas *c)
{
  return c->selected;
}

void ds_graph_canvas_set_current(DsGraphCanvas *c, gint index)
{
  c->current = index;
  gtk_widget_queue_draw(GTK_WIDGET(c));
}

/* ---- drawing ---- */

static void set_hex(cairo_t *cr, const char *hex, double alpha)
{
  GdkRGBA rgba;
  if (hex == NULL || !gdk_rgba_parse(&rgba, hex))
    rgba = (GdkRGBA){1, 1, 1, 1};
  cairo_set_source_rgba(cr, rgba.red, rgba.green, rgba.blue, alpha);
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

/* Centred lines of text at (x, y), in the widget's font. */
static void draw_text(GtkWidget *widget, cairo_t *cr, const char *text, double x, double y,
                      double size, gboolean bold)
{
  PangoLayout *layout = gtk_widget_create_pango_layout(widget, text);
  PangoFontDescription *font = pango_font_description_from_string("Sans");
  pango_font_description_set_absolute_size(font, size * PANGO_SCALE);
  if (bold)
    pango_font_description_set_weight(font, PANGO_WEIGHT_BOLD);
  pango_layout_set_font_description(layout, font);
  pango_layout_set_alignment(layout, PANGO_ALIGN_CENTER);
  int w, h;
  pango_layout_get_pixel_size(layout, &w, &h);
  cairo_move_to(cr, x - w / 2.0, y - h / 2.0);
  pango_cairo_show_layout(cr, layout);
  pango_font_description_free(font);
  g_object_unref(layout);
}

static gboolean touches(const DsVizEdge *e, gint node)
{
  return node >= 0 && ((gint)e->from == node || (gint)e->to == node);
}

static void draw_edges(DsGraphCanvas *c, cairo_t *cr, const GdkRGBA *fg)
{
  for (guint i = 0; i < c->layout->n_edges; i++) {
    const DsVizEdge *e = &g_array_index(c->scene->edges, DsVizEdge, i);
    const DsVizEdgeGeometry *g = &c->layout->edges[i];
    if (g->n_points < 4)
      continue;
    gboolean lit = touches(e, c->hover) || touches(e, c->selected);
    cairo_set_source_rgba(cr, lit ? 0.1 : fg->red, lit ? 0.45 : fg->green, lit ? 0.9 : fg->blue,
                          lit ? 1.0 : 0.55);
    cairo_set_line_width(cr, lit ? 2.0 : 1.0);
    cairo_move_to(cr, g->points[0].x, g->points[0].y);
    for (guint k = 1; k + 2 < g->n_points; k += 3)
      cairo_curve_to(cr, g->points[k].x, g->points[k].y, g->points[k + 1].x, g->points[k + 1].y,
                     g->points[k + 2].x, g->points[k + 2].y);
    if (g->has_arrow)
      cairo_line_to(cr, g->arrow_tip.x, g->arrow_tip.y);
    cairo_stroke(cr);
    if (g->has_arrow) {
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
    if (g->has_label && e->label != NULL && c->zoom >= 0.5)
      draw_text(GTK_WIDGET(c), cr, e->label, g->label.x, g->label.y, 8, FALSE);
  }
}

static void draw_graph(DsGraphCanvas *c, cairo_t *cr, gboolean details)
{
  GdkRGBA fg;
  /* The theme's text colour (light or dark style) for edges. GTK 4.8 has no
   * gtk_widget_get_color(). */
  gtk_style_context_get_color(gtk_widget_get_style_context(GTK_WIDGET(c)), &fg);
  /* Clusters first, outermost first (they were made in that order). */
  for (guint i = 0; i < c->layout->n_clusters; i++) {
    const DsVizCluster *cl = &g_array_index(c->scene->clusters, DsVizCluster, i);
    const DsVizClusterGeometry *g = &c->layout->clusters[i];
    if (g->box.width <= 0)
      continue;
    rounded_box(cr, &g->box, 8);
    set_hex(cr, cl->fill, 0.85);
    cairo_fill_preserve(cr);
    cairo_set_source_rgba(cr, 0.5, 0.55, 0.6, 0.9);
    cairo_set_line_width(cr, 1.0);
    cairo_stroke(cr);
    if (details)
      draw_text(GTK_WIDGET(c), cr, cl->label, g->label.x, g->label.y, 11, TRUE);
  }
  if (details)
    draw_edges(c, cr, &fg);
  for (guint i = 0; i < c->layout->n_nodes; i++) {
    const DsVizNode *n = &g_array_index(c->scene->nodes, DsVizNode, i);
    const DsVizNodeGeometry *g = &c->layout->nodes[i];
    rounded_box(cr, &g->box, n->kind == DS_VIZ_NODE_OP ? 6 : 2);
    set_hex(cr, n->fill, 1.0);
    cairo_fill_preserve(cr);
    gboolean lit = (gint)i == c->hover || (gint)i == c->selected;
    if ((gint)i == c->current) {
      cairo_set_source_rgb(cr, 0.9, 0.3, 0.1);
      cairo_set_line_width(cr, 4.0);
    } else {
      cairo_set_source_rgb(cr, lit ? 0.1 : 0.2, lit ? 0.45 : 0.2, lit ? 0.9 : 0.2);
      cairo_set_line_width(cr, (gint)i == c->selected ? 3.0 : lit ? 2.0 : 1.0);
    }
    cairo_stroke(cr);
    if (details) {
      /* Node text is dark on the light fills every kind and overlay uses. */
      cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
      draw_text(GTK_WIDGET(c), cr, n->label, g->label.x, g->label.y, 10, FALSE);
    }
  }
}

static void draw_minimap(DsGraphCanvas *c, cairo_t *cr, double w, double h)
{
  double scale = MINIMAP_SIZE / MAX(c->layout->width, c->layout->height);
  double mw = c->layout->width * scale, mh = c->layout->height * scale;
  double x0 = w - mw - 12, y0 = h - mh - 12;
  cairo_save(cr);
  cairo_rectangle(cr, x0 - 4, y0 - 4, mw + 8, mh + 8);
  cairo_set_source_rgba(cr, 0.5, 0.5, 0.5, 0.25);
  cairo_fill(cr);
  cairo_translate(cr, x0, y0);
  cairo_scale(cr, scale, scale);
  draw_graph(c, cr, FALSE);
  /* The part the widget shows. */
  double gx0, gy0, gx1, gy1;
  to_graph(c, 0, 0, &gx0, &gy0);
  to_graph(c, w, h, &gx1, &gy1);
  cairo_rectangle(cr, gx0, gy0, gx1 - gx0, gy1 - gy0);
  cairo_set_source_rgba(cr, 0.1, 0.45, 0.9, 0.9);
  cairo_set_line_width(cr, 2.0 / scale);
  cairo_stroke(cr);
  cairo_restore(cr);
}

static void canvas_snapshot(GtkWidget *widget, GtkSnapshot *snapshot)
{
  DsGraphCanvas *c = DS_GRAPH_CANVAS(widget);
  double w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
  if (c->layout == NULL || w <= 0 || h <= 0)
    return;
  if (!c->fitted)
    ds_graph_canvas_fit(c);
  cairo_t *cr = gtk_snapshot_append_cairo(snapshot, &GRAPHENE_RECT_INIT(0, 0, w, h));
  cairo_save(cr);
  cairo_translate(cr, c->offset_x, c->offset_y);
  cairo_scale(cr, c->zoom, c->zoom);
  draw_graph(c, cr, TRUE);
  cairo_restore(cr);
  if (c->scene->nodes->len > MINIMAP_NODES)
    draw_minimap(c, cr, w, h);
  cairo_destroy(cr);
}

/* ---- input ---- */

static void on_drag_begin(GtkGestureDrag *g, double x, double y, DsGraphCanvas *c)
{
  (void)g, (void)x, (void)y;
  c->drag_x = c->offset_x;
  c->drag_y = c->offset_y;
}

static void on_drag_update(GtkGestureDrag *g, double dx, double dy, DsGraphCanvas *c)
{
  (void)g;
  c->offset_x = c->drag_x + dx;
  c->offset_y = c->drag_y + dy;
  gtk_widget_queue_draw(GTK_WIDGET(c));
}

static gboolean on_scroll(GtkEventControllerScroll *s, double dx, double dy, DsGraphCanvas *c)
{
  (void)dx;
  double x = gtk_widget_get_width(GTK_WIDGET(c)) / 2.0,
         y = gtk_widget_get_height(GTK_WIDGET(c)) / 2.0;
  GdkEvent *event = gtk_event_controller_get_current_event(GTK_EVENT_CONTROLLER(s));
  if (event != NULL)
    gdk_event_get_position(event, &x, &y);
  zoom_at(c, pow(1.1, -dy), x, y);
  return TRUE;
}

static void on_pinch_begin(GtkGesture *g, GdkEventSequence *s, DsGraphCanvas *c)
{
  (void)g, (void)s;
  c->pinch_zoom = c->zoom;
}

static void on_pinch(GtkGestureZoom *g, double scale, DsGraphCanvas *c)
{
  double x, y;
  gtk_gesture_get_bounding_box_center(GTK_GESTURE(g), &x, &y);
  zoom_at(c, c->pinch_zoom * scale / c->zoom, x, y);
}

static void on_motion(GtkEventControllerMotion *m, double x, double y, DsGraphCanvas *c)
{
  (void)m;
  gint hover = ds_graph_canvas_pick(c, x, y);
  if (hover != c->hover) {
    c->hover = hover;
    gtk_widget_set_tooltip_text(
        GTK_WIDGET(c),
        hover >= 0 ? g_array_index(c->scene->nodes, DsVizNode, hover).tooltip : NULL);
    gtk_widget_queue_draw(GTK_WIDGET(c));
  }
}

static void on_leave(GtkEventControllerMotion *m, DsGraphCanvas *c)
{
  (void)m;
  c->hover = -1;
  gtk_widget_queue_draw(GTK_WIDGET(c));
}

static void on_click(GtkGestureClick *g, int n_press, double x, double y, DsGraphCanvas *c)
{
  (void)g;
  gtk_widget_grab_focus(GTK_WIDGET(c));
  gint node = ds_graph_canvas_pick(c, x, y);
  if (n_press == 2 && node >= 0 &&
      g_array_index(c->scene->nodes, DsVizNode, node).kind == DS_VIZ_NODE_COLLAPSED) {
    g_signal_emit(c, signals[SIGNAL_EXPAND_REQUESTED], 0,
                  g_array_index(c->scene->nodes, DsVizNode, node).id);
    return;
  }
  ds_graph_canvas_select(c, node, FALSE);
}

static gboolean on_key(GtkEventControllerKey *k, guint keyval, guint code, GdkModifierType mods,
                       DsGraphCanvas *c)
{
  (void)k, (void)code, (void)mods;
  switch (keyval) {
  case GDK_KEY_plus:
  case GDK_KEY_equal:
  case GDK_KEY_KP_Add:
    ds_graph_canvas_zoom(c, 1.25);
    return TRUE;
  case GDK_KEY_minus:
  case GDK_KEY_KP_Subtract:
    ds_graph_canvas_zoom(c, 0.8);
    return TRUE;
  case GDK_KEY_0:
  case GDK_KEY_KP_0:
    ds_graph_canvas_fit(c);
    return TRUE;
  default:
    return FALSE;
  }
}

/* ---- the widget ---- */

void ds_graph_canvas_set_graph(DsGraphCanvas *c, DsVizScene *scene, DsVizLayout *layout)
{
  ds_viz_scene_free(c->scene);
  ds_viz_layout_free(c->layout);
  c->scene = scene;
  c->layout = layout;
  c->hover = c->selected = c->current = -1;
  c->fitted = FALSE;
  ds_graph_canvas_fit(c);
  gtk_widget_queue_draw(GTK_WIDGET(c));
}

const DsVizScene *ds_graph_canvas_get_scene(DsGraphCanvas *c)
{
  return c->scene;
}
const DsVizLayout *ds_graph_canvas_get_layout(DsGraphCanvas *c)
{
  return c->layout;
}

static void canvas_dispose(GObject *object)
{
  DsGraphCanvas *c = DS_GRAPH_CANVAS(object);
  g_clear_pointer(&c->scene, ds_viz_scene_free);
  g_clear_pointer(&c->layout, ds_viz_layout_free);
  G_OBJECT_CLASS(ds_graph_canvas_parent_class)->dispose(object);
}

static void ds_graph_canvas_class_init(DsGraphCanvasClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = canvas_dispose;
  widget_class->snapshot = canvas_snapshot;
  signals[SIGNAL_NODE_SELECTED] =
      g_signal_new("node-selected", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                   NULL, G_TYPE_NONE, 1, G_TYPE_INT);
  signals[SIGNAL_EXPAND_REQUESTED] =
      g_signal_new("expand-requested", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                   NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  gtk_widget_class_set_css_name(widget_class, "graphcanvas");
}

static void ds_graph_canvas_init(DsGraphCanvas *c)
{
  GtkWidget *widget = GTK_WIDGET(c);
  c->zoom = 1.0;
  c->hover = c->selected = c->current = -1;
  gtk_widget_set_focusable(widget, TRUE);
  gtk_widget_set_hexpand(widget, TRUE);
  gtk_widget_set_vexpand(widget, TRUE);
  gtk_widget_set_overflow(widget, GTK_OVERFLOW_HIDDEN);

  GtkGesture *drag = gtk_gesture_drag_new();
  g_signal_connect(drag, "drag-begin", G_CALLBACK(on_drag_begin), c);
  g_signal_connect(drag, "drag-update", G_CALLBACK(on_drag_update), c);
  gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(drag));

  GtkEventController *scroll =
      gtk_event_controller_scroll_new(GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);
  g_signal_connect(scroll, "scroll", G_CALLBACK(on_scroll), c);
  gtk_widget_add_controller(widget, scroll);

  GtkGesture *pinch = gtk_gesture_zoom_new();
  g_signal_connect(pinch, "begin", G_CALLBACK(on_pinch_begin), c);
  g_signal_connect(pinch, "scale-changed", G_CALLBACK(on_pinch), c);
  gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(pinch));

  GtkEventController *motion = gtk_event_controller_motion_new();
  g_signal_connect(motion, "motion", G_CALLBACK(on_motion), c);
  g_signal_connect(motion, "leave", G_CALLBACK(on_leave), c);
  gtk_widget_add_controller(widget, motion);

  GtkGesture *click = gtk_gesture_click_new();
  g_signal_connect(click, "pressed", G_CALLBACK(on_click), c);
  gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(click));

  GtkEventController *keys = gtk_event_controller_key_new();
  g_signal_connect(keys, "key-pressed", G_CALLBACK(on_key), c);
  gtk_widget_add_controller(widget, keys);
}

GtkWidget *ds_graph_canvas_new(void)
{
  return g_object_new(DS_TYPE_GRAPH_CANVAS, NULL);
}
