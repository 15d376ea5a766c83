/* ds-cpu-packed-gemm.h: float32 products with a weight matrix packed once.
 *
 * BLAS packs both operands into its micro-kernel's layout on every call. For a weight that is
 * wasted work, and for the small products of inference it dominates: OpenBLAS 0.3.21 spent
 * 28% of an MLP's time and about half of each LSTM step (16 rows) copying the same weights
 * again. Here a constant B (a weight, ds-constant.h) is packed once into column panels of 16
 * floats, K rows each, zero-padded past N, and kept with the weight; each call packs only A
 * (small next to the product) into row panels of 6 and runs a 6 x 16 micro-kernel that keeps
 * its tile of C in twelve AVX registers for the whole depth.
 *
 * The path exists only where the compiler targets AVX2 and FMA (the default -march=native
 * build on x86-64); elsewhere, and for operands that are not constants, callers use
 * ds_cpu_sgemm().
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ds-kernel.h"

typedef struct DsPackedMatrix DsPackedMatrix;

/* The packed form of the constant matrix B (k x n), read from `b`, a view of a constant whose
 * data holds B row-major with row stride `ldb` (in elements), or B transposed (n x k, row
 * stride ldb) when `trans_b`. Built on first use and kept with the constant. NULL when `b` is
 * not a constant, the path is not compiled in, a size is not positive, or the memory budget
 * has no room: compute with ds_cpu_sgemm() then. */
const DsPackedMatrix *ds_cpu_pack_constant(const DsTensor *b, bool trans_b, int64_t k, int64_t n,
                                           int64_t ldb);

/* Whether a product of `m` rows should take the packed path: up to 144 rows (one block of A,
 * the products of inference). Past that, packing the weight per call costs OpenBLAS little next
 * to the product, and its blocking over large operands is faster here (measured: 512 x 1024 x
 * 1024 at 0.90 of its speed on 1 thread and 0.77 on 2). */
bool ds_cpu_packed_sgemm_suits(int64_t m);

/* Workspace bytes ds_cpu_packed_sgemm() needs for `m` rows of depth `k` (0 when the path is not
 * compiled in). */
size_t ds_cpu_packed_sgemm_workspace(int64_t m, int64_t k);

/* Row-major C[m x n] = A[m x k] * B + bias (+ C when `accumulate`), B packed, A with row
 * stride `lda`, C with `ldc`; `bias` (n values) may be NULL. `workspace` holds
 * ds_cpu_packed_sgemm_workspace(m, k) bytes, 64-byte aligned. Column panels are shared out
 * over `pool` (may be NULL). */
void ds_cpu_packed_sgemm(int64_t m, const float *a, int64_t lda, const DsPackedMatrix *b,
                         const float *bias, bool accumulate, float *c, int64_t ldc,
                         void *workspace, DsThreadPool *pool);

/* The dims B was packed with. */
int64_t ds_packed_matrix_get_k(const DsPackedMatrix *b);
int64_t ds_packed_matrix_get_n(const DsPackedMatrix *b);
