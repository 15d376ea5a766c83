/* ds-graph-canvas.c: drawing, panning, zooming and picking. */
#include "ds-graph-canvas.h"

#include "ds-canvas-painter.h"

#include <math.h>

#define MIN_ZOOM      0.02
#define MAX_ZOOM      8.0
#define MINIMAP_NODES 150 /* graphs bigger than this get a minimap */

struct _DsGraphCanvas {
  GtkWidget parent;
  DsVizScene *scene;
  DsVizLayout *layout;
  double zoom;
  double offset_x, offset_y; /* widget position of the graph's origin */
  double drag_x, drag_y;     /* offset when a drag began */
  double pinch_zoom;         /* zoom when a pinch began */
  /* Where the pointer is (widget coordinates), from the motion controller: scroll events
   * on X11 carry no position, and the keys zoom about the pointer too. */
  double pointer_x, pointer_y;
  gboolean pointer_inside;
  gint hover, selected, current;
  gboolean *marks;   /* per scene node: a breakpoint is set */
  gboolean *matches; /* per scene node: the search matches it */
  gboolean fitted; /* fit again on the first allocation */
  DsCanvasPainter *painter;
};

G_DEFINE_FINAL_TYPE(DsGraphCanvas, ds_graph_canvas, GTK_TYPE_WIDGET)

enum {
  SIGNAL_NODE_SELECTED,
  SIGNAL_EXPAND_REQUESTED,
  SIGNAL_TOGGLE_BREAKPOINT,
  SIGNAL_CONTEXT_MENU,
  N_SIGNALS
};
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
  if (!isfinite(factor) || !isfinite(x) || !isfinite(y) || factor <= 0)
    return;
  double zoom = CLAMP(c->zoom * factor, MIN_ZOOM, MAX_ZOOM);
  double gx, gy;
  to_graph(c, x, y, &gx, &gy);
  c->zoom = zoom;
  c->offset_x = x - gx * zoom;
  c->offset_y = y - gy * zoom;
  gtk_widget_queue_draw(GTK_WIDGET(c));
}

#define FIT_MARGIN 24.0
/* Node text (10 points at zoom 1) is read easily from 7 pixels: a graph that would be shown
 * smaller whole opens at this zoom instead, at its inputs, so that names can be read. */
#define READABLE_ZOOM 0.7

static gboolean canvas_size(DsGraphCanvas *c, double *w, double *h)
{
  *w = gtk_widget_get_width(GTK_WIDGET(c));
  *h = gtk_widget_get_height(GTK_WIDGET(c));
  return c->layout != NULL && *w > 2 * FIT_MARGIN && *h > 2 * FIT_MARGIN;
}

/* Shows the graph at `zoom`, centred across; centred down too when it fits, else from the
 * top. */
static void show_at(DsGraphCanvas *c, double zoom, double w, double h)
{
  c->zoom = CLAMP(zoom, MIN_ZOOM, MAX_ZOOM);
  c->offset_x = (w - c->layout->width * c->zoom) / 2;
  if (c->layout->width * c->zoom > w - 2 * FIT_MARGIN)
    c->offset_x = FIT_MARGIN;
  c->offset_y = c->layout->height * c->zoom <= h - 2 * FIT_MARGIN
                    ? (h - c->layout->height * c->zoom) / 2
                    : FIT_MARGIN;
  c->fitted = TRUE;
  gtk_widget_queue_draw(GTK_WIDGET(c));
}

static double whole_zoom(DsGraphCanvas *c, double w, double h)
{
  double zx = (w - 2 * FIT_MARGIN) / MAX(c->layout->width, 1.0);
  double zy = (h - 2 * FIT_MARGIN) / MAX(c->layout->height, 1.0);
  return MIN(MIN(zx, zy), 1.5); /* small graphs are not blown up past 1.5 */
}

void ds_graph_canvas_fit(DsGraphCanvas *c)
{
  double w, h;
  if (!canvas_size(c, &w, &h)) {
    c->fitted = FALSE;
    return;
  }
  show_at(c, whole_zoom(c, w, h), w, h);
}

void ds_graph_canvas_fit_width(DsGraphCanvas *c)
{
  double w, h;
  if (!canvas_size(c, &w, &h)) {
    c->fitted = FALSE;
    return;
  }
  show_at(c, MIN((w - 2 * FIT_MARGIN) / MAX(c->layout->width, 1.0), 1.5), w, h);
}

/* A graph first shown: whole when its text can be read so; else at a readable zoom, from its
 * top (where the inputs are), centred across on its first node. */
static void first_view(DsGraphCanvas *c)
{
  double w, h;
  if (!canvas_size(c, &w, &h)) {
    c->fitted = FALSE;
    return;
  }
  double whole = whole_zoom(c, w, h);
  if (whole >= READABLE_ZOOM || c->layout->n_nodes == 0) {
    show_at(c, whole, w, h);
    return;
  }
  show_at(c, READABLE_ZOOM, w, h);
  if (c->layout->width * c->zoom > w - 2 * FIT_MARGIN) {
    const DsVizBox *top = &c->layout->nodes[0].box;
    for (guint i = 1; i < c->layout->n_nodes; i++)
      if (c->layout->nodes[i].box.y < top->y)
        top = &c->layout->nodes[i].box;
    double x = w / 2 - top->x * c->zoom;
    /* Not past the graph's left or right edge. */
    c->offset_x = CLAMP(x, w - FIT_MARGIN - c->layout->width * c->zoom, FIT_MARGIN);
  }
}

void ds_graph_canvas_focus_box(DsGraphCanvas *c, const DsVizBox *box)
{
  double w = gtk_widget_get_width(GTK_WIDGET(c)), h = gtk_widget_get_height(GTK_WIDGET(c));
  if (w <= 0 || h <= 0 || box->width <= 0 || box->height <= 0)
    return;
  c->zoom = CLAMP(MIN((w - 2 * FIT_MARGIN) / box->width, (h - 2 * FIT_MARGIN) / box->height),
                  MIN_ZOOM, 2.0);
  c->offset_x = w / 2 - box->x * c->zoom;
  c->offset_y = h / 2 - box->y * c->zoom;
  c->fitted = TRUE;
  gtk_widget_queue_draw(GTK_WIDGET(c));
}

void ds_graph_canvas_zoom(DsGraphCanvas *c, double factor)
{
  if (c->pointer_inside)
    zoom_at(c, factor, c->pointer_x, c->pointer_y);
  else
    zoom_at(c, factor, gtk_widget_get_width(GTK_WIDGET(c)) / 2.0,
            gtk_widget_get_height(GTK_WIDGET(c)) / 2.0);
}

void ds_graph_canvas_anchor(DsGraphCanvas *c, double gx, double gy, double x, double y)
{
  if (!isfinite(gx) || !isfinite(gy) || !isfinite(x) || !isfinite(y))
    return;
  c->offset_x = x - gx * c->zoom;
  c->offset_y = y - gy * c->zoom;
  c->fitted = TRUE;
  gtk_widget_queue_draw(GTK_WIDGET(c));
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

/* Scrolls node `index` to the middle if it is not inside the widget. */
static void reveal(DsGraphCanvas *c, gint index)
{
  const DsVizBox *b = &c->layout->nodes[index].box;
  double w = gtk_widget_get_width(GTK_WIDGET(c)), h = gtk_widget_get_height(GTK_WIDGET(c));
  double x0 = c->offset_x + (b->x - b->width / 2) * c->zoom;
  double y0 = c->offset_y + (b->y - b->height / 2) * c->zoom;
  double x1 = x0 + b->width * c->zoom, y1 = y0 + b->height * c->zoom;
  if (x0 < 0 || x1 > w || y0 < 0 || y1 > h) {
    c->offset_x += w / 2 - (x0 + x1) / 2;
    c->offset_y += h / 2 - (y0 + y1) / 2;
  }
}

void ds_graph_canvas_select(DsGraphCanvas *c, gint index, gboolean reveal_it)
{
  if (c->scene == NULL || index >= (gint)c->scene->nodes->len)
    index = -1;
  c->selected = index;
  if (reveal_it && index >= 0)
    reveal(c, index);
  g_signal_emit(c, signals[SIGNAL_NODE_SELECTED], 0, index);
  gtk_widget_queue_draw(GTK_WIDGET(c));
}

gint ds_graph_canvas_get_selected(DsGraphCanvas *c)
{
  return c->selected;
}

void ds_graph_canvas_set_current(DsGraphCanvas *c, gint index)
{
  if (c->scene == NULL || index >= (gint)c->scene->nodes->len)
    index = -1;
  c->current = index;
  if (index >= 0)
    reveal(c, index);
  gtk_widget_queue_draw(GTK_WIDGET(c));
}

gint ds_graph_canvas_get_current(DsGraphCanvas *c)
{
  return c->current;
}

void ds_graph_canvas_set_marks(DsGraphCanvas *c, const gboolean *marks)
{
  g_clear_pointer(&c->marks, g_free);
  if (marks != NULL && c->scene != NULL)
    c->marks = g_memdup2(marks, sizeof(gboolean) * c->scene->nodes->len);
  gtk_widget_queue_draw(GTK_WIDGET(c));
}

void ds_graph_canvas_set_matches(DsGraphCanvas *c, const gboolean *matches)
{
  g_clear_pointer(&c->matches, g_free);
  if (matches != NULL && c->scene != NULL)
    c->matches = g_memdup2(matches, sizeof(gboolean) * c->scene->nodes->len);
  gtk_widget_queue_draw(GTK_WIDGET(c));
}

/* A graph set before the canvas had a size is fitted as soon as it gets one, so the view
 * (and what zoom and picking report) is right from the first layout, not the first draw. */
static void canvas_size_allocate(GtkWidget *widget, int width, int height, int baseline)
{
  GTK_WIDGET_CLASS(ds_graph_canvas_parent_class)->size_allocate(widget, width, height, baseline);
  DsGraphCanvas *c = DS_GRAPH_CANVAS(widget);
  if (!c->fitted)
    first_view(c);
}

static void canvas_snapshot(GtkWidget *widget, GtkSnapshot *snapshot)
{
  DsGraphCanvas *c = DS_GRAPH_CANVAS(widget);
  double w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
  if (c->layout == NULL || w <= 0 || h <= 0)
    return;
  GdkRGBA fg;
  /* The theme's text colour (light or dark style) for edges. GTK 4.8 has no
   * gtk_widget_get_color(). */
  gtk_style_context_get_color(gtk_widget_get_style_context(widget), &fg);
  DsCanvasView view = {
      .scene = c->scene,
      .layout = c->layout,
      .width = w,
      .height = h,
      .zoom = c->zoom,
      .offset_x = c->offset_x,
      .offset_y = c->offset_y,
      .hover = c->hover,
      .selected = c->selected,
      .current = c->current,
      .marks = c->marks,
      .matches = c->matches,
      .fg = {fg.red, fg.green, fg.blue},
      .minimap = c->scene->nodes->len > MINIMAP_NODES,
  };
  cairo_t *cr = gtk_snapshot_append_cairo(snapshot, &GRAPHENE_RECT_INIT(0, 0, w, h));
  ds_canvas_painter_paint(c->painter, cr, &view);
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

/* A mouse wheel zooms about the pointer, a notch at a time. A touchpad's smooth scrolling
 * pans, as in maps and drawing programs, and zooms smoothly with Ctrl held; pinching zooms
 * too. */
static gboolean on_scroll(GtkEventControllerScroll *s, double dx, double dy, DsGraphCanvas *c)
{
  double x = c->pointer_inside ? c->pointer_x : gtk_widget_get_width(GTK_WIDGET(c)) / 2.0;
  double y = c->pointer_inside ? c->pointer_y : gtk_widget_get_height(GTK_WIDGET(c)) / 2.0;
  if (gtk_event_controller_scroll_get_unit(s) == GDK_SCROLL_UNIT_WHEEL) {
    zoom_at(c, pow(1.1, -dy), x, y);
    return TRUE;
  }
  GdkModifierType mods = gtk_event_controller_get_current_event_state(GTK_EVENT_CONTROLLER(s));
  if (mods & GDK_CONTROL_MASK) {
    zoom_at(c, exp(-dy / 100.0), x, y);
  } else if (isfinite(dx) && isfinite(dy)) {
    c->offset_x -= dx;
    c->offset_y -= dy;
    gtk_widget_queue_draw(GTK_WIDGET(c));
  }
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

/* Whether a menu opened on the canvas (a popover child) is showing. */
static gboolean menu_shown(DsGraphCanvas *c)
{
  for (GtkWidget *child = gtk_widget_get_first_child(GTK_WIDGET(c)); child != NULL;
       child = gtk_widget_get_next_sibling(child))
    if (GTK_IS_POPOVER(child) && gtk_widget_get_visible(child))
      return TRUE;
  return FALSE;
}

static void on_motion(GtkEventControllerMotion *m, double x, double y, DsGraphCanvas *c)
{
  (void)m;
  c->pointer_x = x, c->pointer_y = y, c->pointer_inside = TRUE;
  gint hover = ds_graph_canvas_pick(c, x, y);
  if (hover != c->hover) {
    c->hover = hover;
    /* No node's tooltip over an open menu. */
    gtk_widget_set_tooltip_text(
        GTK_WIDGET(c), hover >= 0 && !menu_shown(c)
                           ? g_array_index(c->scene->nodes, DsVizNode, hover).tooltip
                           : NULL);
    gtk_widget_queue_draw(GTK_WIDGET(c));
  }
}

static void on_leave(GtkEventControllerMotion *m, DsGraphCanvas *c)
{
  (void)m;
  c->hover = -1;
  c->pointer_inside = FALSE;
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

static void on_secondary_click(GtkGestureClick *g, int n_press, double x, double y,
                               DsGraphCanvas *c)
{
  (void)g, (void)n_press;
  gint node = ds_graph_canvas_pick(c, x, y);
  if (node < 0)
    return;
  ds_graph_canvas_select(c, node, FALSE);
  gtk_widget_set_tooltip_text(GTK_WIDGET(c), NULL); /* the menu goes where it was */
  c->hover = -1;
  g_signal_emit(c, signals[SIGNAL_CONTEXT_MENU], 0, node, x, y);
}

static gboolean on_key(GtkEventControllerKey *k, guint keyval, guint code, GdkModifierType mods,
                       DsGraphCanvas *c)
{
  (void)k, (void)code;
  if (mods & (GDK_CONTROL_MASK | GDK_ALT_MASK))
    return FALSE; /* the window's shortcuts */
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
  case GDK_KEY_w:
    ds_graph_canvas_fit_width(c);
    return TRUE;
  case GDK_KEY_F9:
    if (c->selected < 0)
      return FALSE;
    g_signal_emit(c, signals[SIGNAL_TOGGLE_BREAKPOINT], 0, c->selected);
    return TRUE;
  default:
    return FALSE;
  }
}

/* ---- the widget ---- */

void ds_graph_canvas_replace_graph(DsGraphCanvas *c, DsVizScene *scene, DsVizLayout *layout)
{
  double zoom = c->zoom, x = c->offset_x, y = c->offset_y;
  gboolean fitted = c->fitted;
  ds_graph_canvas_set_graph(c, scene, layout);
  if (fitted) {
    c->zoom = zoom, c->offset_x = x, c->offset_y = y;
    gtk_widget_queue_draw(GTK_WIDGET(c));
  }
}

void ds_graph_canvas_set_graph(DsGraphCanvas *c, DsVizScene *scene, DsVizLayout *layout)
{
  ds_canvas_painter_reset(c->painter);
  ds_viz_scene_free(c->scene);
  ds_viz_layout_free(c->layout);
  g_clear_pointer(&c->marks, g_free);
  g_clear_pointer(&c->matches, g_free);
  c->scene = scene;
  c->layout = layout;
  c->hover = c->selected = c->current = -1;
  c->fitted = FALSE;
  first_view(c);
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
  g_clear_pointer(&c->marks, g_free);
  g_clear_pointer(&c->matches, g_free);
  g_clear_pointer(&c->painter, ds_canvas_painter_free);
  G_OBJECT_CLASS(ds_graph_canvas_parent_class)->dispose(object);
}

static void ds_graph_canvas_class_init(DsGraphCanvasClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = canvas_dispose;
  widget_class->snapshot = canvas_snapshot;
  widget_class->size_allocate = canvas_size_allocate;
  signals[SIGNAL_NODE_SELECTED] =
      g_signal_new("node-selected", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                   NULL, G_TYPE_NONE, 1, G_TYPE_INT);
  signals[SIGNAL_EXPAND_REQUESTED] =
      g_signal_new("expand-requested", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                   NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  /* F9 on the selected node. */
  signals[SIGNAL_TOGGLE_BREAKPOINT] =
      g_signal_new("toggle-breakpoint", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                   NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT);
  /* A right click on a node (selected first), at widget point (x, y). */
  signals[SIGNAL_CONTEXT_MENU] =
      g_signal_new("context-menu", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                   NULL, G_TYPE_NONE, 3, G_TYPE_INT, G_TYPE_DOUBLE, G_TYPE_DOUBLE);
  gtk_widget_class_set_css_name(widget_class, "graphcanvas");
}

static void ds_graph_canvas_init(DsGraphCanvas *c)
{
  GtkWidget *widget = GTK_WIDGET(c);
  c->zoom = 1.0;
  c->painter = ds_canvas_painter_new();
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
      gtk_event_controller_scroll_new(GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect(scroll, "scroll", G_CALLBACK(on_scroll), c);
  gtk_widget_add_controller(widget, scroll);

  GtkGesture *pinch = gtk_gesture_zoom_new();
  g_signal_connect(pinch, "begin", G_CALLBACK(on_pinch_begin), c);
  g_signal_connect(pinch, "scale-changed", G_CALLBACK(on_pinch), c);
  gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(pinch));

  GtkEventController *motion = gtk_event_controller_motion_new();
  g_signal_connect(motion, "enter", G_CALLBACK(on_motion), c);
  g_signal_connect(motion, "motion", G_CALLBACK(on_motion), c);
  g_signal_connect(motion, "leave", G_CALLBACK(on_leave), c);
  gtk_widget_add_controller(widget, motion);

  GtkGesture *click = gtk_gesture_click_new();
  g_signal_connect(click, "pressed", G_CALLBACK(on_click), c);
  gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(click));

  GtkGesture *secondary = gtk_gesture_click_new();
  gtk_gesture_single_set_button(GTK_GESTURE_SINGLE(secondary), GDK_BUTTON_SECONDARY);
  g_signal_connect(secondary, "pressed", G_CALLBACK(on_secondary_click), c);
  gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(secondary));

  GtkEventController *keys = gtk_event_controller_key_new();
  g_signal_connect(keys, "key-pressed", G_CALLBACK(on_key), c);
  gtk_widget_add_controller(widget, keys);
}

GtkWidget *ds_graph_canvas_new(void)
{
  return g_object_new(DS_TYPE_GRAPH_CANVAS, NULL);
}
