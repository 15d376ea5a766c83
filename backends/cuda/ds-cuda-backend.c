/* ds-cuda-backend.c: the CUDA backend's DsBackend: its kernel table, filled by the op
 * families, and device buffers. The device itself, its stream, copies and cuBLAS are
 * ds-cuda-device.c's, which every family calls too.
 */
#include "ds-cuda.h"

#include <glib.h>

static DsKernel kernel_table[DS_OP_COUNT];
static DsCudaSupportsFn supports_table[DS_OP_COUNT];

static void *build_table(void *unused)
{
  (void)unused;
  ds_cuda_elemwise_register(kernel_table, supports_table);
  ds_cuda_reduce_register(kernel_table, supports_table);
  ds_cuda_nn_register(kernel_table, supports_table);
  ds_cuda_tensor_register(kernel_table, supports_table);
  return NULL;
}

static const DsKernel *cuda_get_kernel(DsOpId op)
{
  static GOnce once = G_ONCE_INIT;
  g_once(&once, build_table, NULL);
  if (op >= DS_OP_COUNT || kernel_table[op].run == NULL)
    return NULL;
  return &kernel_table[op];
}

static bool cuda_supports(DsOpId op, const void *param, const DsDType *in, int n_in,
                          const DsDType *out, int n_out)
{
  if (cuda_get_kernel(op) == NULL)
    return false;
  /* The device kernels know float16 but none of the other storage types (bfloat16, int16,
   * uint16, uint32, uint64): placement keeps every node touching one on the CPU, whose Cast
   * converts them, rather than let a kernel read them as some other type. */
  for (int i = 0; i < n_in; i++)
    if (in[i] != DS_DTYPE_FLOAT16 && ds_dtype_is_storage_only(in[i]))
      return false;
  for (int i = 0; i < n_out; i++)
    if (out[i] != DS_DTYPE_FLOAT16 && ds_dtype_is_storage_only(out[i]))
      return false;
  return supports_table[op] == NULL || supports_table[op](op, param, in, n_in, out, n_out);
}

static void *cuda_alloc_buffer(size_t bytes)
{
  void *ptr = NULL;
  if (ds_cuda_unavailable() != NULL)
    return NULL;
  /* cudaMalloc aligns to 256 bytes; a zero-byte tensor still gets a distinct buffer. */
  if (cudaMalloc(&ptr, bytes == 0 ? 256 : bytes) != cudaSuccess) {
    (void)cudaGetLastError(); /* clear the sticky-free error so later calls are not blamed */
    return NULL;
  }
  return ptr;
}

static void cuda_free_buffer(void *ptr)
{
  if (ptr != NULL)
    cudaFree(ptr);
}

static void cuda_set_n_threads(int n_threads) { (void)n_threads; }

static const DsBackend cuda_backend = {
    .name = "cuda",
    .memory = DS_MEMORY_DEVICE,
    .get_kernel = cuda_get_kernel,
    .alloc_buffer = cuda_alloc_buffer,
    .free_buffer = cuda_free_buffer,
    .set_n_threads = cuda_set_n_threads,
    .unavailable = ds_cuda_unavailable,
    .copy_to_device = ds_cuda_copy_to_device,
    .copy_to_host = ds_cuda_copy_to_host,
    .synchronize = ds_cuda_synchronize,
    .supports = cuda_supports,
    .describe = ds_cuda_describe,
    .release = ds_cuda_release,
};

const DsBackend *ds_cuda_backend_get(void) { return &cuda_backend; }
