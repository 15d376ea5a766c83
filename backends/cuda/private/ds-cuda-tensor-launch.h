/* ds-cuda-tensor-launch.h: C launchers of the data-movement device code (ds-cuda-tensor.cu).
 *
 * Everything here moves raw elements by size (1, 2, 4 or 8 bytes), so one launcher serves
 * every dtype. Offsets and strides count elements; each launcher queues its work on `stream`
 * and returns the launch's (or the copy's) error without waiting for it.
 */
#pragma once

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Tiling and repeating split each dim in two, so a plan may have twice the tensor rank. */
#define DS_CUDA_COPY_MAX_DIMS 16

/* A strided copy over the index space `shape`: the element at index (i0, i1, ...) moves from
 * in[in_base + sum(i_d * in_stride[d])] to out[out_base + sum(i_d * out_stride[d])]. Input
 * strides may be 0 (broadcast) or negative (reverse); output positions must not repeat. */
typedef struct {
  int ndim;
  int64_t shape[DS_CUDA_COPY_MAX_DIMS];
  int64_t in_stride[DS_CUDA_COPY_MAX_DIMS];
  int64_t out_stride[DS_CUDA_COPY_MAX_DIMS];
  int64_t in_base, out_base;
} DsCudaCopyPlan;

/* Runs a plan on elements of `elem_size` bytes (1, 2, 4 or 8). The launcher simplifies the
 * plan (size-1 dims dropped, contiguous neighbours merged, runs widened to bigger words) and
 * picks a plain or 2-D memcpy, a tiled transpose or the generic gather kernel. */
cudaError_t ds_cuda_launch_copy(const DsCudaCopyPlan *plan, size_t elem_size, const void *in,
                                void *out, cudaStream_t stream);

/* How a mask or an index tensor's elements are read. */
typedef enum {
  DS_CUDA_ELEM_F32,
  DS_CUDA_ELEM_F64,
  DS_CUDA_ELEM_F16,
  DS_CUDA_ELEM_I32,
  DS_CUDA_ELEM_I64,
  DS_CUDA_ELEM_I8,
  DS_CUDA_ELEM_U8,
  DS_CUDA_ELEM_BOOL,
} DsCudaElemKind;

/* take: out[o, j, t] = data[o, idx[j] (after `mode`), t] for the (outer, K, trail) blocks of
 * data (outer, M, trail). Indices are truncated toward zero (int64 read exactly); mode 0
 * clips, 1 wraps, 2 raises: an index out of [0, M) then sets *flag to 1 and writes nothing. */
enum { DS_CUDA_TAKE_CLIP = 0, DS_CUDA_TAKE_WRAP = 1, DS_CUDA_TAKE_RAISE = 2 };
cudaError_t ds_cuda_launch_take(const void *data, const void *idx, DsCudaElemKind idx_kind,
                                 void *out, int64_t outer, int64_t k, int64_t m, int64_t trail,
                                 size_t elem_size, int mode, int *flag, cudaStream_t stream);

/* ---- compaction (boolean_mask, nonzero) ---- */

/* Elements one block of the count and write passes covers. */
#define DS_CUDA_COMPACT_TILE 1024

/* int64 slots of scratch the compaction of `n` flags needs: one count per tile and the
 * total. */
static inline int64_t ds_cuda_compact_scratch(int64_t n)
{
  return (n + DS_CUDA_COMPACT_TILE - 1) / DS_CUDA_COMPACT_TILE + 1;
}

/* Counts the nonzero elements of mask[0, n) (NaN counts, either zero does not), leaving each
 * tile's exclusive offset in scratch[tile] and the total in
 * scratch[ds_cuda_compact_scratch(n) - 1]. n > 0. */
cudaError_t ds_cuda_launch_count_true(const void *mask, DsCudaElemKind kind, int64_t n,
                                      int64_t *scratch, cudaStream_t stream);
/* After ds_cuda_launch_count_true on the same mask: pos[j] = the position of the j-th nonzero
 * element, in order. */
cudaError_t ds_cuda_launch_true_positions(const void *mask, DsCudaElemKind kind, int64_t n,
                                          const int64_t *scratch, int64_t *pos,
                                          cudaStream_t stream);
/* boolean_mask's gather: data as (outer, len, row) elements; out[o, j, r] =
 * in[o, pos[j], r] for j < n_kept. */
cudaError_t ds_cuda_launch_gather_kept(const void *in, void *out, const int64_t *pos,
                                       int64_t outer, int64_t n_kept, int64_t len, int64_t row,
                                       size_t elem_size, cudaStream_t stream);
/* nonzero's coordinates: out[j, d] = coordinate d of flat position pos[j] in a row-major
 * tensor of `ndim` dims `shape`, for j < count. */
cudaError_t ds_cuda_launch_unravel(const int64_t *pos, int64_t count, const int64_t *shape,
                                   int ndim, int64_t *out, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
