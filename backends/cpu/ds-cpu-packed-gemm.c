/* ds-cpu-packed-gemm.c: packing a constant B once, packing A per call, the 6 x 16 micro-kernel
 * and the loops around it (see ds-cpu-packed-gemm.h).
 *
 * Blocking: each thread takes a range of B's column panels. Within a panel the depth is cut
 * into KC-deep slices, so the slice of the panel (KC x 16 floats, 16 KiB) stays in L1 while
 * every row panel of A passes over it; A, packed MC rows at a time (at most MC x K floats),
 * stays in L2. */
#include "ds-cpu-packed-gemm.h"

#include <string.h>

#include "ds-constant.h"

#if defined(__AVX2__) && defined(__FMA__)
#define DS_PACKED_GEMM 1
#include <immintrin.h>
#else
#define DS_PACKED_GEMM 0
#endif

enum {
  MR = 6,   /* rows of C per micro-kernel call */
  NR = 16,  /* columns of C per micro-kernel call: one panel of packed B */
  KC = 256, /* depth per pass over a panel */
  MC = 144, /* rows of A packed at once */
  SMALL_CHUNK_FLOPS = 32768, /* the least work worth handing to another thread */
};

struct DsPackedMatrix {
  int64_t k, n, n_panels;
  int64_t reserved[5]; /* keeps `panels` 64-byte aligned */
  float panels[];      /* n_panels x k x NR */
};

int64_t ds_packed_matrix_get_k(const DsPackedMatrix *b) { return b->k; }
int64_t ds_packed_matrix_get_n(const DsPackedMatrix *b) { return b->n; }

/* ---- packing ---- */

enum { KEY_K, KEY_N, KEY_LDB, KEY_TRANS };

static void pack_b(const DsTensor *source, const DsDerivedKey *key, void *form)
{
  const float *b = source->data;
  const int64_t k = key->params[KEY_K], n = key->params[KEY_N], ldb = key->params[KEY_LDB];
  const bool trans = key->params[KEY_TRANS] != 0;
  DsPackedMatrix *packed = form;
  packed->k = k;
  packed->n = n;
  packed->n_panels = (n + NR - 1) / NR;
  for (int64_t j = 0; j < packed->n_panels; j++) {
    float *dst = packed->panels + j * k * NR;
    for (int c = 0; c < NR; c++) {
      const int64_t col = j * NR + c;
      if (col >= n) {
        for (int64_t p = 0; p < k; p++)
          dst[p * NR + c] = 0.0f;
      } else if (trans) { /* B stored n x k: the column is a contiguous row */
        const float *src = b + col * ldb;
        for (int64_t p = 0; p < k; p++)
          dst[p * NR + c] = src[p];
      } else {
        for (int64_t p = 0; p < k; p++)
          dst[p * NR + c] = b[p * ldb + col];
      }
    }
  }
}

static size_t packed_bytes(int64_t k, int64_t n)
{
  return sizeof(DsPackedMatrix) + (size_t)((n + NR - 1) / NR) * (size_t)k * NR * sizeof(float);
}

const DsPackedMatrix *ds_cpu_pack_constant(const DsTensor *b, bool trans_b, int64_t k, int64_t n,
                                           int64_t ldb)
{
  if (!DS_PACKED_GEMM || b->dtype != DS_DTYPE_FLOAT32 || k <= 0 || n <= 0 ||
      ldb < (trans_b ? k : n) || k > (INT64_C(1) << 40) / n)
    return NULL;
  DsDerivedKey key = {.kind = "sgemm-b-panels-16", .params = {k, n, ldb, trans_b}};
  return ds_tensor_get_derived(b, &key, packed_bytes(k, n), pack_b);
}

bool ds_cpu_packed_sgemm_suits(int64_t m) { return DS_PACKED_GEMM && m > 0 && m <= MC; }

size_t ds_cpu_packed_sgemm_workspace(int64_t m, int64_t k)
{
  if (!DS_PACKED_GEMM || m <= 0 || k <= 0)
    return 0;
  int64_t rows = m < MC ? (m + MR - 1) / MR * MR : MC;
  return (size_t)rows * (size_t)k * sizeof(float);
}

#if DS_PACKED_GEMM

/* Rows [0, m) of A into row panels of MR: panel i holds k steps of MR floats (rows past m are
 * zeros, so the micro-kernel never branches on them). */
static void pack_a(const float *a, int64_t lda, int64_t m, int64_t k, float *dst)
{
  for (int64_t i = 0; i < m; i += MR, dst += k * MR) {
    const int64_t rows = m - i < MR ? m - i : MR;
    for (int64_t p = 0; p < k; p++) {
      for (int64_t r = 0; r < rows; r++)
        dst[p * MR + r] = a[(i + r) * lda + p];
      for (int64_t r = rows; r < MR; r++)
        dst[p * MR + r] = 0.0f;
    }
  }
}

/* ---- the micro-kernel ---- */

/* One depth step of the tile: rows [0, mr) of acc += A(:, p) * B(p, :). */
#define TILE_STEP(acc, p)                                                                       \
  do {                                                                                          \
    const __m256 b0 = _mm256_load_ps(b + (p) * NR), b1 = _mm256_load_ps(b + (p) * NR + 8);     \
    _Pragma("GCC unroll 6") for (int i = 0; i < mr; i++) {                                     \
      const __m256 ai = _mm256_broadcast_ss(a + i * a_row + (p) * a_step);                     \
      acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);                                           \
      acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);                                           \
    }                                                                                           \
  } while (0)

/* C[mr x nr] (row stride ldc) = A * B panel over `kc` steps, + bias (when given), + C (when
 * `add_c`). A's element (i, p) is at a[i * a_row + p * a_step]: a packed row panel (1, MR) or
 * A itself (lda, 1). `mr` is a constant in every inlined copy, so the tile lives in registers.
 * With one to three rows, one chain of FMAs per register would wait on the FMA latency (four
 * cycles, two units: eight chains keep them busy), so short tiles sum into two or four sets of
 * accumulators over alternate steps. */
static inline __attribute__((always_inline)) void
micro_kernel(int mr, int64_t kc, const float *restrict a, int64_t a_row, int64_t a_step,
             const float *restrict b, float *restrict c, int64_t ldc, int nr, const float *bias,
             bool add_c)
{
  enum { SETS = 4 };
  const int sets = mr == 1 ? 4 : mr <= 3 ? 2 : 1;
  __m256 acc[SETS][MR][2];
  _Pragma("GCC unroll 4") for (int s = 0; s < SETS; s++)
    _Pragma("GCC unroll 6") for (int i = 0; i < MR; i++)
      acc[s][i][0] = acc[s][i][1] = _mm256_setzero_ps();
  int64_t p = 0;
  if (sets == 4) {
    for (; p + 4 <= kc; p += 4) {
      TILE_STEP(acc[0], p);
      TILE_STEP(acc[1], p + 1);
      TILE_STEP(acc[2], p + 2);
      TILE_STEP(acc[3], p + 3);
    }
  } else if (sets == 2) {
    for (; p + 2 <= kc; p += 2) {
      TILE_STEP(acc[0], p);
      TILE_STEP(acc[1], p + 1);
    }
  }
  for (; p < kc; p++)
    TILE_STEP(acc[0], p);
  _Pragma("GCC unroll 6") for (int i = 0; i < mr; i++) {
    if (sets >= 2) {
      acc[0][i][0] = _mm256_add_ps(acc[0][i][0], acc[1][i][0]);
      acc[0][i][1] = _mm256_add_ps(acc[0][i][1], acc[1][i][1]);
    }
    if (sets == 4) {
      acc[2][i][0] = _mm256_add_ps(acc[2][i][0], acc[3][i][0]);
      acc[2][i][1] = _mm256_add_ps(acc[2][i][1], acc[3][i][1]);
      acc[0][i][0] = _mm256_add_ps(acc[0][i][0], acc[2][i][0]);
      acc[0][i][1] = _mm256_add_ps(acc[0][i][1], acc[2][i][1]);
    }
  }
  if (nr == NR) {
    const __m256 bias0 = bias != NULL ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();
    const __m256 bias1 = bias != NULL ? _mm256_loadu_ps(bias + 8) : _mm256_setzero_ps();
    _Pragma("GCC unroll 6") for (int i = 0; i < mr; i++) {
      float *row = c + i * ldc;
      __m256 lo = _mm256_add_ps(acc[0][i][0], bias0), hi = _mm256_add_ps(acc[0][i][1], bias1);
      if (add_c) {
        lo = _mm256_add_ps(lo, _mm256_loadu_ps(row));
        hi = _mm256_add_ps(hi, _mm256_loadu_ps(row + 8));
      }
      _mm256_storeu_ps(row, lo);
      _mm256_storeu_ps(row + 8, hi);
    }
    return;
  }
  /* The last panel: only nr columns of C exist. */
  float tile[NR] __attribute__((aligned(32)));
  _Pragma("GCC unroll 6") for (int i = 0; i < mr; i++) {
    float *row = c + i * ldc;
    _mm256_store_ps(tile, acc[0][i][0]);
    _mm256_store_ps(tile + 8, acc[0][i][1]);
    for (int j = 0; j < nr; j++)
      row[j] = tile[j] + (bias != NULL ? bias[j] : 0.0f) + (add_c ? row[j] : 0.0f);
  }
}

static void micro_kernel_rows(int mr, int64_t kc, const float *a, int64_t a_row, int64_t a_step,
                              const float *b, float *c, int64_t ldc, int nr, const float *bias,
                              bool add_c)
{
  /* One inlined copy per row count, so that each has a constant `mr`. */
#define ROWS(R)                                                                                 \
  case R:                                                                                       \
    micro_kernel(R, kc, a, a_row, a_step, b, c, ldc, nr, bias, add_c);                          \
    break;
  switch (mr) {
    ROWS(6)
    ROWS(5)
    ROWS(4)
    ROWS(3)
    ROWS(2)
  default:
    micro_kernel(1, kc, a, a_row, a_step, b, c, ldc, nr, bias, add_c);
    break;
  }
#undef ROWS
}

/* ---- the loops ---- */

typedef struct {
  const DsPackedMatrix *b;
  const float *a; /* m rows of A: packed in row panels, or A itself (lda) when m <= MR */
  int64_t lda;    /* 0: packed */
  int64_t m;
  const float *bias;
  bool accumulate;
  float *c;
  int64_t ldc;
} PanelsJob;

static void panels_range(void *data, int64_t first, int64_t end)
{
  const PanelsJob *job = data;
  const int64_t k = job->b->k, n = job->b->n;
  for (int64_t j = first; j < end; j++) {
    const float *panel = job->b->panels + j * k * NR;
    const int nr = (int)(n - j * NR < NR ? n - j * NR : NR);
    const float *bias = job->bias != NULL ? job->bias + j * NR : NULL;
    for (int64_t k0 = 0; k0 < k; k0 += KC) {
      const int64_t kc = k - k0 < KC ? k - k0 : KC;
      for (int64_t i = 0; i < job->m; i += MR) {
        const int mr = (int)(job->m - i < MR ? job->m - i : MR);
        const float *a = job->lda == 0 ? job->a + i * k + k0 * MR : job->a + i * job->lda + k0;
        micro_kernel_rows(mr, kc, a, job->lda == 0 ? 1 : job->lda, job->lda == 0 ? MR : 1,
                          panel + k0 * NR, job->c + i * job->ldc + j * NR, job->ldc, nr,
                          k0 == 0 ? bias : NULL, job->accumulate || k0 > 0);
      }
    }
  }
}

void ds_cpu_packed_sgemm(int64_t m, const float *a, int64_t lda, const DsPackedMatrix *b,
                         const float *bias, bool accumulate, float *c, int64_t ldc,
                         void *workspace, DsThreadPool *pool)
{
  const int64_t k = b->k;
  for (int64_t i0 = 0; i0 < m; i0 += MC) {
    const int64_t rows = m - i0 < MC ? m - i0 : MC;
    /* A single row panel is read in place: packing it would cost more than it saves. */
    PanelsJob job = {b, a + i0 * lda, lda, rows, bias, accumulate, c + i0 * ldc, ldc};
    if (rows > MR) {
      pack_a(a + i0 * lda, lda, rows, k, workspace);
      job.a = workspace;
      job.lda = 0;
    }
    /* A small product (a loop body's, a batch of one) is shared in one contiguous range of
     * panels per thread, at least SMALL_CHUNK_FLOPS each: the pool's workers spin between
     * jobs, so a hand-over costs about a µs, and a thread gets the same panels each call,
     * which keep in its own cache. Measured on the 64-step LSTM Loop at 2 threads: batch 1
     * from 13 to 7.5 µs an iteration, batch 16 from 63 to 51. A large one is cut into pieces
     * of about a million flops that the threads take in turn, so that a core slowed down by
     * a neighbour does less of it. */
    const int64_t panel_flops = 2 * rows * k * NR;
    if (panel_flops * b->n_panels < 8000000) {
      const int64_t grain = SMALL_CHUNK_FLOPS / panel_flops;
      ds_parallel_for(pool, b->n_panels, grain < 1 ? 1 : grain, panels_range, &job);
    } else {
      const int64_t grain = panel_flops >= 1000000 ? 1 : 1000000 / panel_flops;
      ds_parallel_for_dynamic(pool, b->n_panels, grain, panels_range, &job);
    }
  }
}

#else /* !DS_PACKED_GEMM: ds_cpu_pack_constant() gives no matrix, so this only keeps the
       * contract for a caller that has one from elsewhere. */

void ds_cpu_packed_sgemm(int64_t m, const float *a, int64_t lda, const DsPackedMatrix *b,
                         const float *bias, bool accumulate, float *c, int64_t ldc,
                         void *workspace, DsThreadPool *pool)
{
  (void)workspace, (void)pool;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < b->n; j++) {
      const float *panel = b->panels + (j / NR) * b->k * NR + j % NR;
      float sum = bias != NULL ? bias[j] : 0.0f;
      for (int64_t p = 0; p < b->k; p++)
        sum += a[i * lda + p] * panel[p * NR];
      c[i * ldc + j] = sum + (accumulate ? c[i * ldc + j] : 0.0f);
    }
}

#endif
