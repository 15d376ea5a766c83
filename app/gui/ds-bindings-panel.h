/* ds-bindings-panel.h: what a run is fed: the model's symbols and its inputs.
 *
 * One row per symbol of the symbolic shapes, with its range: free symbols take a value (a
 * default inside the range is shown until one is typed); data-dependent (`u0`) and merged
 * symbols are shown but not set. One row per model input, with its symbolic shape, which can
 * be declared (as --input-shape does; the symbols it names then join the list): random data
 * by default, or an .npy file. Applying binds the values, declares the input shapes they
 * give and feeds the files; anything invalid is refused with a message naming it, and the
 * session is left to be prepared again.
 *
 * Memory policy: the panel borrows the session given to ds_bindings_panel_set_session(); the
 * caller clears it (NULL) before freeing the session.
 */
#pragma once

#include <gtk/gtk.h>

#include "ds-session.h"

G_BEGIN_DECLS

#define DS_TYPE_BINDINGS_PANEL (ds_bindings_panel_get_type())
G_DECLARE_FINAL_TYPE(DsBindingsPanel, ds_bindings_panel, DS, BINDINGS_PANEL, GtkBox)

GtkWidget *ds_bindings_panel_new(void);

/* Fills the rows from the session's symbolic shapes (`shapes` may be NULL: no symbols). */
void ds_bindings_panel_set_session(DsBindingsPanel *panel, DsSession *session,
                                   const DsGraphShapes *shapes);

/* Types `text` into symbol `name`'s value; FALSE if the panel has no such symbol to set. */
gboolean ds_bindings_panel_set_value(DsBindingsPanel *panel, const char *name, const char *text);
/* Declares input `name`'s shape, like --input-shape: "(1, 3, 224, 224)", "(s0, 16)"; NULL or
 * "" goes back to the model's. FALSE if no such input. */
gboolean ds_bindings_panel_set_input_shape(DsBindingsPanel *panel, const char *name,
                                           const char *text);
/* Whether any input shape is declared (the symbolic shapes must then be inferred again). */
gboolean ds_bindings_panel_declares_shapes(DsBindingsPanel *panel);
/* Feeds input `name` from an .npy file (NULL: random data again); FALSE if no such input. */
gboolean ds_bindings_panel_set_input_file(DsBindingsPanel *panel, const char *name,
                                          const char *path);

/* Applies the values and files to the session. On failure the error names the symbol, input
 * or file, and the offending row is marked. */
gboolean ds_bindings_panel_apply(DsBindingsPanel *panel, GError **error);

/* Whether the panel shows values the session was not given yet: a model's defaults before
 * the first apply, or anything changed since. A run applies them first. */
gboolean ds_bindings_panel_has_pending(DsBindingsPanel *panel);

/* The value symbol `name` runs with (typed or default), or -1. */
gint64 ds_bindings_panel_get_value(DsBindingsPanel *panel, const char *name);

G_END_DECLS
