/* main.c: one binary, headless or desktop. */
#include <glib.h>
#include <locale.h>

#include "ds-cli.h"

int main(int argc, char **argv)
{
  setlocale(LC_ALL, "");
  /* Numbers in files and tables are always written the C way ("0.5", never "0,5"). */
  setlocale(LC_NUMERIC, "C");
  gboolean wants_gui = FALSE;
  int status = ds_cli_main(argc, argv, &wants_gui);
  if (wants_gui) {
    g_printerr("dynscope: this build has no desktop app; use --run, --info or --save "
               "(see --help)\n");
    return 2;
  }
  return status;
}
