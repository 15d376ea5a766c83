/* ds-backends.c: the compiled-in backends. The only file that names them. */
#include <string.h>

#include "ds-backend.h"
#include "ds-cpu-backend.h"
#ifdef DS_HAVE_CUDA
#include "ds-cuda-backend.h"
#endif

const DsBackend *ds_backend_find(const char *name)
{
  if (name == NULL || strcmp(name, "cpu") == 0)
    return ds_cpu_backend_get();
#ifdef DS_HAVE_CUDA
  if (strcmp(name, "cuda") == 0)
    return ds_cuda_backend_get();
#endif
  return NULL;
}

const char *const *ds_backend_names(void)
{
  static const char *const names[] = {
      "cpu",
#ifdef DS_HAVE_CUDA
      "cuda",
#endif
      NULL,
  };
  return names;
}

void ds_backends_release(void)
{
  for (const char *const *name = ds_backend_names(); *name != NULL; name++) {
    const DsBackend *backend = ds_backend_find(*name);
    if (backend->release != NULL)
      backend->release();
  }
}
