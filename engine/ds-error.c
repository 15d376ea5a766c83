/* ds-error.c */
#include "ds-error.h"

G_DEFINE_QUARK(ds-error-quark, ds_error)

int ds_error_exit_status(const GError *error)
{
  if (error != NULL && error->domain == DS_ERROR && (error->code == DS_ERROR_RUNTIME || error->code == DS_ERROR_CANCELLED))
    return 1;
  return 2;
}
