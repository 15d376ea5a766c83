/* ds-backends.c: the compiled-in backends. The only file that names them. */
#include <string.h>

#include "ds-backend.h"
#include "ds-cpu.h"

const DsBackend *ds_backend_find(const char *name)
{
  if (name == NULL || strcmp(name, "cpu") == 0)
    return ds_cpu_backend_get();
  return NULL;
}
