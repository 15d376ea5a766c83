/* main.c: one binary, headless or desktop. */
#include <glib.h>
#include <locale.h>

#include "ds-app.h"
#include "ds-cli.h"

int main(int argc, char **argv)
{
  setlocale(LC_ALL, "");
  /* Numbers in files and tables are always written the C way ("0.5", never "0,5"). */
  setlocale(LC_NUMERIC, "C");
  gboolean wants_gui = FALSE;
  g_autofree char *model = NULL;
  int status = ds_cli_main(argc, argv, &wants_gui, &model);
  if (wants_gui)
    status = ds_app_run(argv[0], model);
  return status;
}
