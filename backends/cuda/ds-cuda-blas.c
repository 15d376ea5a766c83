/* ds-cuda-blas.c: finds libcublas at run time (see ds-cuda-blas.h). */
#include "ds-cuda-blas.h"

#include <gmodule.h>

/* The soname of the major version the headers describe, then the file in the toolkit the
 * build found, for a binary started without its run path. */
#define DS_CUBLAS_SONAME "libcublas.so." G_STRINGIFY(CUBLAS_VER_MAJOR)

static DsCudaBlas blas;
static char *failure;

static GModule *open_library(void)
{
  const char *const candidates[] = {DS_CUBLAS_SONAME, DS_CUDA_LIBDIR "/" DS_CUBLAS_SONAME};
  char *first_error = NULL;
  GModule *module = NULL;
  for (size_t i = 0; i < G_N_ELEMENTS(candidates) && module == NULL; i++) {
    module = g_module_open(candidates[i], G_MODULE_BIND_LOCAL);
    if (module == NULL && first_error == NULL)
      first_error = g_strdup(g_module_error());
  }
  if (module == NULL)
    failure = g_strdup_printf("cuBLAS cannot be loaded (%s)", first_error);
  g_free(first_error);
  return module;
}

static gboolean find(GModule *module, const char *name, gpointer *slot)
{
  if (g_module_symbol(module, name, slot) && *slot != NULL)
    return TRUE;
  failure = g_strdup_printf("cuBLAS cannot be loaded (%s has no %s)", DS_CUBLAS_SONAME, name);
  return FALSE;
}

static void *load(void *unused)
{
  (void)unused;
  GModule *module = open_library();
  if (module == NULL)
    return NULL;
  /* Kept open for the life of the process: the backend's handle lives as long. */
  g_module_make_resident(module);
  const struct {
    const char *name;
    gpointer *slot;
  } symbols[] = {
      {"cublasCreate_v2", (gpointer *)&blas.create},
      {"cublasDestroy_v2", (gpointer *)&blas.destroy},
      {"cublasSetStream_v2", (gpointer *)&blas.set_stream},
      {"cublasSgemm_v2_64", (gpointer *)&blas.sgemm},
      {"cublasDgemm_v2_64", (gpointer *)&blas.dgemm},
      {"cublasSgemmStridedBatched_64", (gpointer *)&blas.sgemm_strided_batched},
      {"cublasDgemmStridedBatched_64", (gpointer *)&blas.dgemm_strided_batched},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(symbols); i++)
    if (!find(module, symbols[i].name, symbols[i].slot))
      return NULL;
  return &blas;
}

const DsCudaBlas *ds_cuda_blas_load(const char **reason)
{
  static GOnce once = G_ONCE_INIT;
  const DsCudaBlas *loaded = g_once(&once, load, NULL);
  if (loaded == NULL && reason != NULL)
    *reason = failure;
  return loaded;
}
