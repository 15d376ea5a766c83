/* ds-cuda-device.c: the device every kernel of the CUDA backend runs on: the check that finds
 * it, its stream, blocking copies, cuBLAS, and the status of a launch.
 *
 * Everything runs on one non-blocking stream on device 0. The device is looked at once, the
 * first time anything asks (ds_cuda_unavailable()); nothing else touches CUDA before that says
 * yes, so a machine without a GPU or driver gets a clear message and never a CUDA error later.
 * cuBLAS is loaded only once a device has been found (ds-cuda-blas.h says why).
 */
#include "ds-cuda.h"

#include <glib.h>
#include <string.h>

static cudaStream_t stream;
static char *unavailable_reason;

static void *probe_device(void *unused)
{
  (void)unused;
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    unavailable_reason = g_strdup_printf("no usable CUDA device (%s)", cudaGetErrorString(err));
    return NULL;
  }
  if (n == 0) {
    unavailable_reason = g_strdup("no CUDA device");
    return NULL;
  }
  const char *blas_failure = NULL;
  if (ds_cuda_blas_load(&blas_failure) == NULL) {
    unavailable_reason = g_strdup(blas_failure);
    return NULL;
  }
  err = cudaSetDevice(0);
  if (err == cudaSuccess)
    err = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (err != cudaSuccess)
    unavailable_reason = g_strdup_printf("CUDA device 0 cannot start (%s)",
                                         cudaGetErrorString(err));
  else
    ds_tensor_set_device_reader(ds_cuda_copy_to_host);
  return NULL;
}

const char *ds_cuda_unavailable(void)
{
  static GOnce once = G_ONCE_INIT;
  g_once(&once, probe_device, NULL);
  return unavailable_reason;
}

cudaStream_t ds_cuda_stream(void) { return stream; }

const DsCudaBlas *ds_cuda_blas(void) { return ds_cuda_blas_load(NULL); }

static cublasHandle_t cublas_handle;

cublasHandle_t ds_cuda_cublas(void)
{
  static gsize done;
  cublasHandle_t handle = NULL;
  if (g_once_init_enter(&done)) {
    const DsCudaBlas *blas = ds_cuda_blas();
    if (blas == NULL || blas->create(&handle) != CUBLAS_STATUS_SUCCESS)
      handle = NULL;
    else
      blas->set_stream(handle, stream);
    cublas_handle = handle;
    g_once_init_leave(&done, 1);
  }
  return cublas_handle;
}

DsStatus ds_cuda_status(cudaError_t err)
{
  switch (err) {
  case cudaSuccess:
    return DS_STATUS_OK;
  case cudaErrorMemoryAllocation:
    return DS_STATUS_NO_MEMORY;
  default:
    return DS_STATUS_DEVICE_ERROR;
  }
}

DsStatus ds_cuda_cublas_status(cublasStatus_t st)
{
  switch (st) {
  case CUBLAS_STATUS_SUCCESS:
    return DS_STATUS_OK;
  case CUBLAS_STATUS_ALLOC_FAILED:
    return DS_STATUS_NO_MEMORY;
  case CUBLAS_STATUS_INVALID_VALUE:
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return DS_STATUS_UNSUPPORTED;
  default:
    return DS_STATUS_DEVICE_ERROR;
  }
}

static bool copy_sync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
  if (bytes == 0)
    return true;
  return cudaMemcpyAsync(dst, src, bytes, kind, stream) == cudaSuccess &&
         cudaStreamSynchronize(stream) == cudaSuccess;
}

bool ds_cuda_copy_to_device(void *dst, const void *src, size_t bytes)
{
  return copy_sync(dst, src, bytes, cudaMemcpyHostToDevice);
}

bool ds_cuda_copy_to_host(void *dst, const void *src, size_t bytes)
{
  return copy_sync(dst, src, bytes, cudaMemcpyDeviceToHost);
}

bool ds_cuda_synchronize(void) { return cudaStreamSynchronize(stream) == cudaSuccess; }

/* The kernel driver's version ("580.65.06"): the first word of digits and dots in the first
 * line of the file the NVIDIA module writes ("NVRM version: NVIDIA UNIX Open Kernel Module for
 * x86_64  580.159.04  Release Build ..."), or NULL. */
static char *kernel_driver_version(void)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents("/proc/driver/nvidia/version", &text, NULL, NULL))
    return NULL;
  text[strcspn(text, "\n")] = '\0';
  g_auto(GStrv) words = g_strsplit_set(text, " \t", -1);
  for (char **w = words; *w != NULL; w++)
    if (g_ascii_isdigit(**w) && strchr(*w, '.') != NULL &&
        strspn(*w, "0123456789.") == strlen(*w))
      return g_strdup(*w);
  return NULL;
}

/* "cuda 13.0: NVIDIA H200, sm_90, 139 GiB, driver 580.65.06" or "cuda 13.0: no usable device
 * (reason)"; the version is the runtime's this build was linked with. */
void ds_cuda_describe(char *line, size_t size)
{
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  g_autofree char *label = g_strdup_printf("cuda %d.%d", runtime / 1000, runtime % 1000 / 10);
  const char *why = ds_cuda_unavailable();
  if (why != NULL) {
    g_snprintf(line, size, "%s: %s", label, why);
    return;
  }
  struct cudaDeviceProp prop;
  int driver = 0;
  cudaDriverGetVersion(&driver);
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    g_snprintf(line, size, "%s: device 0 cannot be described", label);
    return;
  }
  g_autofree char *kernel_driver = kernel_driver_version();
  g_autofree char *driver_text = kernel_driver != NULL
                                     ? g_strdup_printf("driver %s", kernel_driver)
                                     : g_strdup_printf("driver for CUDA %d.%d", driver / 1000,
                                                       driver % 1000 / 10);
  g_snprintf(line, size, "%s: %s, sm_%d%d, %.0f GiB, %s", label, prop.name, prop.major,
             prop.minor, (double)prop.totalGlobalMem / (1u << 30), driver_text);
}

/* The cuBLAS handle (its workspace lives in device memory) and the stream. Buffers are freed
 * by their owners; anything left is a leak a checker should see. */
void ds_cuda_release(void)
{
  if (unavailable_reason != NULL || stream == NULL)
    return;
  cudaStreamSynchronize(stream);
  if (cublas_handle != NULL) {
    ds_cuda_blas()->destroy(cublas_handle);
    cublas_handle = NULL;
  }
  cudaStreamDestroy(stream);
  stream = NULL;
}

