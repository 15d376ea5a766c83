/* ds-cuda.h: the CUDA backend's private interface between its files.
 *
 * Host-side files (*.c, compiled by the C compiler) read the op's parameters and shapes and
 * call launchers; device code lives in *.cu files (nvcc), whose launchers take plain pointers,
 * sizes and the stream, and return the launch's cudaError_t. Every kernel runs on one stream,
 * ds_cuda_stream(), so work stays in order without synchronising; only kernels that must see
 * a value on the host (dynamic output sizes) wait for it.
 */
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdbool.h>

#include "ds-backend.h"
#include "ds-cuda-backend.h"
#include "ds-cuda-blas.h"

/* ---- the device (ds-cuda-device.c) ---- */

/* Why device 0 cannot be used, or NULL once it was found, cuBLAS loaded and the stream made;
 * looked at once. DsBackend.unavailable. */
const char *ds_cuda_unavailable(void);
/* Blocking copies on the stream; false on a device error. */
bool ds_cuda_copy_to_device(void *dst, const void *src, size_t bytes);
bool ds_cuda_copy_to_host(void *dst, const void *src, size_t bytes);
bool ds_cuda_synchronize(void);
/* DsBackend.describe and DsBackend.release. */
void ds_cuda_describe(char *line, size_t size);
void ds_cuda_release(void);
/* The stream every kernel and copy is queued on. Valid once the backend is available. */
cudaStream_t ds_cuda_stream(void);
/* cuBLAS's functions, loaded by the device check: valid once the backend is available. */
const DsCudaBlas *ds_cuda_blas(void);
/* The cuBLAS handle, bound to ds_cuda_stream(), created on first use; NULL if that failed. */
cublasHandle_t ds_cuda_cublas(void);

/* A launch's or library call's result as a kernel status. */
DsStatus ds_cuda_status(cudaError_t err);
DsStatus ds_cuda_cublas_status(cublasStatus_t st);

/* Blocks of 256 threads, enough of them for `n` elements (grid-stride loops cover the rest). */
static inline unsigned ds_cuda_blocks(long long n)
{
  long long b = (n + 255) / 256;
  return (unsigned)(b < 1 ? 1 : b > 65535 * 8 ? 65535 * 8 : b);
}

/* Family registration: each fills its ops' slots of the kernel table, and its ops' dtype
 * checks for DsBackend.supports. */
typedef bool (*DsCudaSupportsFn)(DsOpId op, const void *param, const DsDType *in, int n_in,
                                 const DsDType *out, int n_out);
void ds_cuda_elemwise_register(DsKernel *table, DsCudaSupportsFn *supports);
void ds_cuda_reduce_register(DsKernel *table, DsCudaSupportsFn *supports);
void ds_cuda_nn_register(DsKernel *table, DsCudaSupportsFn *supports);
void ds_cuda_tensor_register(DsKernel *table, DsCudaSupportsFn *supports);
