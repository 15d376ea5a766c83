/* ds-cuda-blas.h: cuBLAS, loaded the first time a device needs it.
 *
 * Linking libcublas would make every start of dynscope pay for it: its static constructors
 * (through libcublasLt) take about 150 ms and 200 MB before main(), on machines with no GPU
 * and for runs that never touch one. So nothing links it; the backend loads it once a CUDA
 * device has been found, and calls it through this table. The members' types are cuBLAS's own
 * declarations, so a call through the table is checked exactly like a direct one.
 */
#pragma once

#include <cublas_v2.h>

typedef struct {
  __typeof__(cublasCreate_v2) *create;
  __typeof__(cublasDestroy_v2) *destroy;
  __typeof__(cublasSetStream_v2) *set_stream;
  __typeof__(cublasSgemm_v2_64) *sgemm;
  __typeof__(cublasDgemm_v2_64) *dgemm;
  __typeof__(cublasSgemmStridedBatched_64) *sgemm_strided_batched;
  __typeof__(cublasDgemmStridedBatched_64) *dgemm_strided_batched;
} DsCudaBlas;

/* The library's functions, loaded on the first call (thread-safe). NULL when it cannot be
 * loaded or lacks one of them, with `*reason` (when given) set to a one-line message naming
 * the library and the loader's complaint; later calls give the same answer. */
const DsCudaBlas *ds_cuda_blas_load(const char **reason);
