/* ds-test-gui.c: waiting for GTK, screenshots, and real input through XTest. */
#include "ds-test-gui.h"

#include <X11/XKBlib.h>
#include <X11/extensions/XTest.h>
#include <gdk/x11/gdkx.h>
#include <math.h>
#include <string.h>

char *ds_test_data_path(const char *dir, const char *name)
{
  const char *src = g_getenv("DS_SOURCE_DIR");
  return g_build_filename(src != NULL ? src : "..", "data", dir, name, NULL);
}

static void on_after_paint(GdkFrameClock *clock, gboolean *painted)
{
  (void)clock;
  *painted = TRUE;
}

void ds_test_wait_for_frame(GtkWidget *window)
{
  GdkFrameClock *clock = gtk_widget_get_frame_clock(window);
  if (clock == NULL)
    return;
  gboolean painted = FALSE;
  gulong handler = g_signal_connect(clock, "after-paint", G_CALLBACK(on_after_paint), &painted);
  gdk_frame_clock_request_phase(clock, GDK_FRAME_CLOCK_PHASE_PAINT);
  gint64 deadline = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;
  while (!painted && g_get_monotonic_time() < deadline) {
    if (!g_main_context_iteration(NULL, FALSE))
      g_usleep(1000);
  }
  g_signal_handler_disconnect(clock, handler);
  g_assert_true(painted);
}

/* Main-loop turns alone are not enough: the frame clock ticks on its own timer, and on a
 * loaded machine any fixed number of turns can pass before it does. */
void ds_test_settle(void)
{
  GListModel *toplevels = gtk_window_get_toplevels();
  for (guint i = 0; i < g_list_model_get_n_items(toplevels); i++) {
    g_autoptr(GtkWidget) window = g_list_model_get_item(toplevels, i);
    if (gtk_widget_get_mapped(window))
      ds_test_wait_for_frame(window);
  }
  for (int i = 0; i < 50; i++)
    g_main_context_iteration(NULL, FALSE);
}

void ds_test_wait_idle(DsWindow *window)
{
  while (ds_window_is_busy(window))
    g_main_context_iteration(NULL, TRUE);
  ds_test_settle();
}

void ds_test_present(GtkWindow *window)
{
  gtk_window_present(window);
  gint64 deadline = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;
  while (!(gtk_widget_get_mapped(GTK_WIDGET(window)) &&
           gtk_widget_get_width(GTK_WIDGET(window)) > 0) &&
         g_get_monotonic_time() < deadline) {
    if (!g_main_context_iteration(NULL, FALSE))
      g_usleep(1000);
  }
  g_assert_true(gtk_widget_get_mapped(GTK_WIDGET(window)));
  ds_test_settle();
}

gint ds_test_find_node(const DsVizScene *scene, const char *id)
{
  for (guint i = 0; i < scene->nodes->len; i++)
    if (strcmp(g_array_index(scene->nodes, DsVizNode, i).id, id) == 0)
      return (gint)i;
  return -1;
}

GtkWidget *ds_test_find(GtkWidget *root, DsTestMatch match, gconstpointer data)
{
  if (match(root, data))
    return root;
  for (GtkWidget *c = gtk_widget_get_first_child(root); c != NULL;
       c = gtk_widget_get_next_sibling(c)) {
    GtkWidget *found = ds_test_find(c, match, data);
    if (found != NULL)
      return found;
  }
  return NULL;
}

static gboolean is_of_type(GtkWidget *widget, gconstpointer type)
{
  return G_TYPE_CHECK_INSTANCE_TYPE(widget, GPOINTER_TO_SIZE(type));
}

GtkWidget *ds_test_find_widget(GtkWidget *root, GType type)
{
  return ds_test_find(root, is_of_type, GSIZE_TO_POINTER(type));
}

/* The recent models' buttons keep their file as object data "path". */
static gboolean has_path(GtkWidget *widget, gconstpointer path)
{
  return g_strcmp0(g_object_get_data(G_OBJECT(widget), "path"), path) == 0;
}

GtkWidget *ds_test_find_button_with_path(GtkWidget *root, const char *path)
{
  return ds_test_find(root, has_path, path);
}

/* ---- the X server ---- */

static Display *x_display(void)
{
  GdkDisplay *display = gdk_display_get_default();
  if (display == NULL || !GDK_IS_X11_DISPLAY(display))
    return NULL;
  return gdk_x11_display_get_xdisplay(display);
}

gboolean ds_test_input_available(void)
{
  Display *dpy = x_display();
  int event, error, major, minor;
  return dpy != NULL && XTestQueryExtension(dpy, &event, &error, &major, &minor);
}

/* Where widget point (x, y) is on the screen. */
static void to_root(GtkWidget *widget, double x, double y, int *rx, int *ry)
{
  GtkNative *native = gtk_widget_get_native(widget);
  graphene_point_t p;
  g_assert_true(gtk_widget_compute_point(widget, GTK_WIDGET(native),
                                         &GRAPHENE_POINT_INIT((float)x, (float)y), &p));
  double sx, sy;
  gtk_native_get_surface_transform(native, &sx, &sy);
  GdkSurface *surface = gtk_native_get_surface(native);
  Display *dpy = x_display();
  Window child;
  int ox, oy;
  XTranslateCoordinates(dpy, gdk_x11_surface_get_xid(surface), DefaultRootWindow(dpy), 0, 0,
                        &ox, &oy, &child);
  *rx = ox + (int)lround(p.x + sx);
  *ry = oy + (int)lround(p.y + sy);
}

/* Lets the server deliver what was sent and GTK handle it and draw. */
static void handled(void)
{
  XSync(x_display(), False);
  gint64 until = g_get_monotonic_time() + 30000;
  while (g_get_monotonic_time() < until)
    if (!g_main_context_iteration(NULL, FALSE))
      g_usleep(1000);
  ds_test_settle();
  XSync(x_display(), False);
}

static void move_raw(GtkWidget *widget, double x, double y)
{
  int rx, ry;
  to_root(widget, x, y, &rx, &ry);
  XTestFakeMotionEvent(x_display(), -1, rx, ry, CurrentTime);
}

void ds_test_input_move(GtkWidget *widget, double x, double y)
{
  move_raw(widget, x, y);
  handled();
}

void ds_test_input_click(GtkWidget *widget, double x, double y, guint button, guint count)
{
  ds_test_input_move(widget, x, y);
  for (guint i = 0; i < count; i++) {
    XTestFakeButtonEvent(x_display(), button, True, CurrentTime);
    XTestFakeButtonEvent(x_display(), button, False, CurrentTime);
    XSync(x_display(), False);
  }
  handled();
}

void ds_test_input_wheel(GtkWidget *widget, double x, double y, int notches)
{
  ds_test_input_move(widget, x, y);
  guint button = notches > 0 ? 4 : 5;
  for (int i = 0; i < abs(notches); i++) {
    XTestFakeButtonEvent(x_display(), button, True, CurrentTime);
    XTestFakeButtonEvent(x_display(), button, False, CurrentTime);
    handled();
  }
}

void ds_test_input_drag(GtkWidget *widget, double x0, double y0, double x1, double y1)
{
  ds_test_input_move(widget, x0, y0);
  XTestFakeButtonEvent(x_display(), 1, True, CurrentTime);
  handled();
  for (int i = 1; i <= 8; i++) {
    move_raw(widget, x0 + (x1 - x0) * i / 8, y0 + (y1 - y0) * i / 8);
    handled();
  }
  XTestFakeButtonEvent(x_display(), 1, False, CurrentTime);
  handled();
}

static void fake_key(KeySym sym, Bool press)
{
  KeyCode code = XKeysymToKeycode(x_display(), sym);
  g_assert_cmpuint(code, !=, 0);
  XTestFakeKeyEvent(x_display(), code, press, CurrentTime);
}

void ds_test_input_key(const char *accelerator)
{
  guint keyval;
  GdkModifierType mods;
  g_assert_true(gtk_accelerator_parse(accelerator, &keyval, &mods));
  /* A symbol on a key's shifted level ("question") needs Shift, as the user presses it. */
  KeyCode code = XKeysymToKeycode(x_display(), keyval);
  g_assert_cmpuint(code, !=, 0);
  if (XkbKeycodeToKeysym(x_display(), code, 0, 0) != keyval)
    mods |= GDK_SHIFT_MASK;
  static const struct {
    GdkModifierType mask;
    KeySym key;
  } modifiers[] = {
      {GDK_CONTROL_MASK, XK_Control_L}, {GDK_SHIFT_MASK, XK_Shift_L}, {GDK_ALT_MASK, XK_Alt_L}};
  for (guint i = 0; i < G_N_ELEMENTS(modifiers); i++)
    if (mods & modifiers[i].mask)
      fake_key(modifiers[i].key, True);
  fake_key(keyval, True);
  fake_key(keyval, False);
  for (guint i = G_N_ELEMENTS(modifiers); i-- > 0;)
    if (mods & modifiers[i].mask)
      fake_key(modifiers[i].key, False);
  handled();
}

void ds_test_input_type(const char *text)
{
  for (const char *c = text; *c != '\0'; c++) {
    const char *name = gdk_keyval_name(gdk_unicode_to_keyval((guint32)(guchar)*c));
    g_assert_nonnull(name);
    ds_test_input_key(name);
  }
}

/* The screen's pixels in widget's area, as packed 0xRRGGBB; NULL without an X server. */
static guint32 *screen_pixels(GtkWidget *widget, int *width, int *height)
{
  Display *dpy = x_display();
  if (dpy == NULL)
    return NULL;
  int x0, y0;
  to_root(widget, 0, 0, &x0, &y0);
  *width = gtk_widget_get_width(widget);
  *height = gtk_widget_get_height(widget);
  XImage *image = XGetImage(dpy, DefaultRootWindow(dpy), x0, y0, (unsigned)*width,
                            (unsigned)*height, AllPlanes, ZPixmap);
  g_assert_nonnull(image);
  g_assert_cmpint(image->depth, >=, 24); /* xvfb-run -s "-screen 0 WxHx24" */
  guint32 *pixels = g_new(guint32, (gsize)*width * (gsize)*height);
  for (int y = 0; y < *height; y++)
    for (int x = 0; x < *width; x++)
      pixels[(gsize)y * (gsize)*width + (gsize)x] = (guint32)XGetPixel(image, x, y) & 0xffffff;
  XDestroyImage(image);
  return pixels;
}

static gboolean differs(guint32 a, guint32 b)
{
  for (int shift = 0; shift < 24; shift += 8)
    if (abs((int)((a >> shift) & 0xff) - (int)((b >> shift) & 0xff)) > 24)
      return TRUE;
  return FALSE;
}

double ds_test_drawn_share(GtkWidget *widget)
{
  int w, h;
  g_autofree guint32 *pixels = screen_pixels(widget, &w, &h);
  if (pixels == NULL || w <= 0 || h <= 0)
    return 0;
  gsize n = (gsize)w * (gsize)h;
  g_autoptr(GHashTable) counts = g_hash_table_new(NULL, NULL);
  guint32 background = pixels[0];
  guint best = 0;
  for (gsize i = 0; i < n; i++) {
    guint c = GPOINTER_TO_UINT(g_hash_table_lookup(counts, GUINT_TO_POINTER(pixels[i]))) + 1;
    g_hash_table_insert(counts, GUINT_TO_POINTER(pixels[i]), GUINT_TO_POINTER(c));
    if (c > best)
      best = c, background = pixels[i];
  }
  gsize drawn = 0;
  for (gsize i = 0; i < n; i++)
    drawn += differs(pixels[i], background);
  return (double)drawn / (double)n;
}

guint ds_test_count_colour(GtkWidget *widget, double x, double y, double w, double h,
                           guint32 rgb)
{
  int width, height;
  g_autofree guint32 *pixels = screen_pixels(widget, &width, &height);
  if (pixels == NULL)
    return 0;
  guint n = 0;
  for (int py = MAX((int)y, 0); py < MIN((int)(y + h), height); py++)
    for (int px = MAX((int)x, 0); px < MIN((int)(x + w), width); px++) {
      guint32 p = pixels[(gsize)py * (gsize)width + (gsize)px];
      gboolean close = TRUE;
      for (int shift = 0; shift < 24; shift += 8)
        close &= abs((int)((p >> shift) & 0xff) - (int)((rgb >> shift) & 0xff)) <= 12;
      n += close;
    }
  return n;
}

/* The screen as the user sees it (popovers and menus included), or the window's own
 * drawing where there is no X server. */
void ds_test_screenshot(GtkWidget *window, const char *name)
{
  const char *dir = g_getenv("DS_GUI_SCREENSHOTS");
  if (dir == NULL)
    return;
  ds_test_settle();
  g_autofree char *file = g_strdup_printf("%s.png", name);
  g_autofree char *path = g_build_filename(dir, file, NULL);
  int w, h;
  g_autofree guint32 *pixels = screen_pixels(window, &w, &h);
  if (pixels != NULL) {
    guint8 *rgb = g_new(guint8, (gsize)w * (gsize)h * 3);
    for (gsize i = 0; i < (gsize)w * (gsize)h; i++) {
      rgb[i * 3] = (guint8)(pixels[i] >> 16);
      rgb[i * 3 + 1] = (guint8)(pixels[i] >> 8);
      rgb[i * 3 + 2] = (guint8)pixels[i];
    }
    g_autoptr(GBytes) bytes = g_bytes_new_take(rgb, (gsize)w * (gsize)h * 3);
    g_autoptr(GdkTexture) texture =
        gdk_memory_texture_new(w, h, GDK_MEMORY_R8G8B8, bytes, (gsize)w * 3);
    gdk_texture_save_to_png(texture, path);
    return;
  }
  GdkPaintable *paintable = gtk_widget_paintable_new(window);
  GskRenderNode *node = NULL;
  /* The paintable is empty until the window has drawn itself once since it changed. */
  for (int i = 0; i < 100 && node == NULL; i++) {
    ds_test_settle();
    g_usleep(10000);
    GtkSnapshot *snapshot = gtk_snapshot_new();
    gdk_paintable_snapshot(paintable, snapshot, gtk_widget_get_width(window),
                           gtk_widget_get_height(window));
    node = gtk_snapshot_free_to_node(snapshot);
  }
  if (node != NULL) {
    GskRenderer *renderer = gtk_native_get_renderer(gtk_widget_get_native(window));
    GdkTexture *texture = gsk_renderer_render_texture(renderer, node, NULL);
    gdk_texture_save_to_png(texture, path);
    g_object_unref(texture);
    gsk_render_node_unref(node);
  }
  g_object_unref(paintable);
}
