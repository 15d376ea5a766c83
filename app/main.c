/* main.c: one binary, headless or desktop (the desktop app when the build has GTK). */
#include <glib.h>
#include <glib/gi18n.h>
#include <locale.h>
#include <stdlib.h>

#include "ds-backend.h"
#include "ds-cli.h"
#include "ds-config.h"
#ifdef DS_HAVE_GTK
#include "ds-app.h"
#endif

/* Where the message catalogues are: $DYNSCOPE_LOCALEDIR when set; the ones po/ compiled into
 * the build tree when this executable is the one built there, so that `build/app/dynscope`
 * from a checkout speaks the user's language before anything is installed; else the installed
 * ones. */
static void setup_translations(void)
{
  const char *dir = g_getenv("DYNSCOPE_LOCALEDIR");
  if (dir == NULL || *dir == '\0') {
    dir = LOCALEDIR;
    g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
    /* /proc/self/exe has symlinks resolved, so compare it with the resolved build root. */
    char *root = realpath(DS_BUILD_ROOT, NULL);
    if (exe != NULL && root != NULL) {
      g_autofree char *prefix = g_strconcat(root, G_DIR_SEPARATOR_S, NULL);
      if (g_str_has_prefix(exe, prefix))
        dir = DS_BUILD_LOCALEDIR;
    }
    free(root);
  }
  bindtextdomain(GETTEXT_PACKAGE, dir);
  bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
  textdomain(GETTEXT_PACKAGE);
}

int main(int argc, char **argv)
{
  setlocale(LC_ALL, "");
  /* Numbers in files and tables are always written the C way ("0.5", never "0,5"). */
  setlocale(LC_NUMERIC, "C");
  setup_translations();
  gboolean wants_gui = FALSE;
  g_autofree char *model = NULL;
  int status = ds_cli_main(argc, argv, &wants_gui, &model);
  if (wants_gui) {
#ifdef DS_HAVE_GTK
    status = ds_app_run(argv[0], model);
#else
    g_printerr(_("dynscope: the desktop app is not in this build (configured with "
                 "-Dgtk=disabled); the headless modes are listed by --help\n"));
    status = 2;
#endif
  }
  ds_backends_release();
  return status;
}
