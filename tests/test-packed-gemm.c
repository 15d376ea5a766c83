/* test-packed-gemm.c: products with a weight packed once (ds-cpu-packed-gemm.h) against a
 * double-precision reference over edge sizes, and the constants that keep the packed forms
 * (ds-constant.h): built once, only for views inside the buffer, within the memory budget. */
#include <glib.h>
#include <math.h>

#include "ds-constant.h"
#include "ds-cpu-packed-gemm.h"
#include "ds-ndarray.h"

static gboolean packed_path_built(void)
{
  if (ds_cpu_packed_sgemm_workspace(8, 8) > 0)
    return TRUE;
  g_test_skip("the packed GEMM path needs AVX2 and FMA (a -march=native build on x86-64)");
  return FALSE;
}

static DsNDArray *random_matrix(int64_t rows, int64_t cols, GRand *rand)
{
  GError *error = NULL;
  int64_t shape[2] = {rows, cols};
  DsNDArray *array = ds_ndarray_new(DS_DTYPE_FLOAT32, 2, shape, "test", &error);
  g_assert_no_error(error);
  float *data = array->view.data;
  for (int64_t i = 0; i < rows * cols; i++)
    data[i] = (float)g_rand_double_range(rand, -1.0, 1.0);
  return array;
}

/* B(p, j) of B stored as `b` (k x n, or n x k when trans_b). */
static float b_at(const float *b, gboolean trans_b, int64_t k, int64_t n, int64_t p, int64_t j)
{
  return trans_b ? b[j * k + p] : b[p * n + j];
}

/* Checks C = A * B + bias (+ C0) for one size, B a constant, over `pool`. */
static void check_product(int64_t m, int64_t n, int64_t k, gboolean trans_b, gboolean with_bias,
                          gboolean accumulate, DsThreadPool *pool, GRand *rand)
{
  g_autoptr(DsNDArray) a = random_matrix(m, k, rand);
  g_autoptr(DsNDArray) b = trans_b ? random_matrix(n, k, rand) : random_matrix(k, n, rand);
  g_autoptr(DsNDArray) bias = random_matrix(1, n, rand);
  g_autoptr(DsNDArray) c = random_matrix(m, n, rand);
  ds_ndarray_make_constant(b);
  g_autofree float *c0 = g_memdup2(c->view.data, c->nbytes);

  const DsPackedMatrix *packed = ds_cpu_pack_constant(&b->view, trans_b, k, n, trans_b ? k : n);
  g_assert_nonnull(packed);
  g_assert_cmpint(ds_packed_matrix_get_k(packed), ==, k);
  g_assert_cmpint(ds_packed_matrix_get_n(packed), ==, n);
  void *workspace = NULL;
  gsize ws = ds_cpu_packed_sgemm_workspace(m, k);
  if (ws > 0)
    workspace = g_aligned_alloc(1, ws, 64);
  const float *av = a->view.data, *bv = b->view.data, *biasv = bias->view.data;
  ds_cpu_packed_sgemm(m, av, k, packed, with_bias ? biasv : NULL, accumulate, c->view.data, n,
                      workspace, pool);
  g_aligned_free(workspace);

  const float *got = c->view.data;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double want = (with_bias ? biasv[j] : 0.0) + (accumulate ? c0[i * n + j] : 0.0);
      double scale = 1.0;
      for (int64_t p = 0; p < k; p++) {
        double term = (double)av[i * k + p] * b_at(bv, trans_b, k, n, p, j);
        want += term;
        scale += fabs(term);
      }
      if (fabs(got[i * n + j] - want) > 1e-6 * scale)
        g_error("m=%" G_GINT64_FORMAT " n=%" G_GINT64_FORMAT " k=%" G_GINT64_FORMAT
                " trans_b=%d bias=%d accumulate=%d: C[%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                "] = %.9g, want %.9g",
                m, n, k, trans_b, with_bias, accumulate, i, j, got[i * n + j], want);
    }
}

/* Every row count of a micro-kernel tile and past one block of A (144 rows), columns around
 * the 16-wide panels, depths around the 256-deep slices. */
static void test_matches_reference(void)
{
  if (!packed_path_built())
    return;
  g_autoptr(GRand) rand = g_rand_new_with_seed(7);
  static const int64_t ms[] = {1, 2, 3, 4, 5, 6, 7, 12, 13, 16, 150};
  static const int64_t ns[] = {1, 15, 16, 17, 40};
  static const int64_t ks[] = {1, 4, 7, 256, 257};
  for (gsize mi = 0; mi < G_N_ELEMENTS(ms); mi++)
    for (gsize ni = 0; ni < G_N_ELEMENTS(ns); ni++)
      for (gsize ki = 0; ki < G_N_ELEMENTS(ks); ki++) {
        guint variant = (guint)(mi + ni + ki);
        check_product(ms[mi], ns[ni], ks[ki], variant % 2, variant % 3 == 0, variant % 4 == 1,
                      NULL, rand);
      }
}

/* Products big enough to be shared out over threads, in pieces the threads take in turn. */
static void test_threads(void)
{
  if (!packed_path_built())
    return;
  g_autoptr(GRand) rand = g_rand_new_with_seed(11);
  DsThreadPool *pool = ds_thread_pool_new(3);
  check_product(150, 200, 300, FALSE, TRUE, FALSE, pool, rand);
  check_product(64, 333, 520, TRUE, FALSE, TRUE, pool, rand);
  ds_thread_pool_free(pool);
}

/* The form is built once and kept with the constant, counted in the memory budget until the
 * constant goes. */
static void test_packed_once(void)
{
  if (!packed_path_built())
    return;
  g_autoptr(GRand) rand = g_rand_new_with_seed(3);
  DsNDArray *b = random_matrix(64, 48, rand);
  gsize before = ds_memory_get_used_bytes();
  ds_ndarray_make_constant(b);
  const DsPackedMatrix *first = ds_cpu_pack_constant(&b->view, FALSE, 64, 48, 48);
  const DsPackedMatrix *again = ds_cpu_pack_constant(&b->view, FALSE, 64, 48, 48);
  g_assert_nonnull(first);
  g_assert_true(first == again);
  gsize held = ds_constant_get_derived_bytes(b->view.constant);
  g_assert_cmpuint(held, >=, 64 * 48 * sizeof(float));
  g_assert_cmpuint(ds_memory_get_used_bytes(), ==, before + held);
  /* Another layout of the same buffer is another form. */
  const DsPackedMatrix *transposed = ds_cpu_pack_constant(&b->view, TRUE, 48, 64, 48);
  g_assert_nonnull(transposed);
  g_assert_true(transposed != first);
  g_assert_cmpuint(ds_constant_get_derived_bytes(b->view.constant), >, held);
  gsize array_bytes = b->nbytes;
  ds_ndarray_free(b);
  g_assert_cmpuint(ds_memory_get_used_bytes(), ==, before - array_bytes);
}

/* Only views whose bytes lie in the constant's buffer are constant: a copied view pointed at
 * another buffer, as a loop-carried state is, must not find the weight's packed form. */
static void test_only_views_inside(void)
{
  if (!packed_path_built())
    return;
  g_autoptr(GRand) rand = g_rand_new_with_seed(5);
  g_autoptr(DsNDArray) b = random_matrix(8, 16, rand);
  g_autoptr(DsNDArray) other = random_matrix(8, 16, rand);
  g_assert_null(ds_cpu_pack_constant(&b->view, FALSE, 8, 16, 16)); /* not constant yet */
  ds_ndarray_make_constant(b);

  DsTensor elsewhere = b->view;
  elsewhere.data = other->view.data;
  g_assert_null(ds_tensor_get_constant(&elsewhere));
  g_assert_null(ds_cpu_pack_constant(&elsewhere, FALSE, 8, 16, 16));

  DsTensor overhanging = b->view;
  overhanging.data = (float *)b->view.data + 1;
  g_assert_null(ds_tensor_get_constant(&overhanging));

  /* Rows 4..7 as a view of their own: inside, and packed from their own bytes. */
  DsTensor lower = b->view;
  lower.shape[0] = 4;
  lower.data = (float *)b->view.data + 4 * 16;
  g_assert_true(ds_tensor_get_constant(&lower) == b->view.constant);
  const DsPackedMatrix *packed = ds_cpu_pack_constant(&lower, FALSE, 4, 16, 16);
  g_assert_nonnull(packed);
  float a[4] = {0, 0, 1, 0}, c[16];
  void *workspace = g_aligned_alloc(1, ds_cpu_packed_sgemm_workspace(1, 4) + 64, 64);
  ds_cpu_packed_sgemm(1, a, 4, packed, NULL, FALSE, c, 16, workspace, NULL);
  g_aligned_free(workspace);
  const float *row6 = (const float *)b->view.data + 6 * 16;
  for (int j = 0; j < 16; j++)
    g_assert_cmpfloat(c[j], ==, row6[j]);
}

/* No room in the budget: no form, and the caller computes from the weight itself. */
static void test_over_budget(void)
{
  if (!packed_path_built())
    return;
  g_autoptr(GRand) rand = g_rand_new_with_seed(9);
  g_autoptr(DsNDArray) b = random_matrix(128, 128, rand);
  ds_ndarray_make_constant(b);
  gsize limit = ds_memory_get_limit_bytes();
  ds_memory_set_limit_bytes(ds_memory_get_used_bytes() + 1024);
  g_assert_null(ds_cpu_pack_constant(&b->view, FALSE, 128, 128, 128));
  g_assert_cmpuint(ds_constant_get_derived_bytes(b->view.constant), ==, 0);
  ds_memory_set_limit_bytes(limit);
  g_assert_nonnull(ds_cpu_pack_constant(&b->view, FALSE, 128, 128, 128));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/packed-gemm/matches-reference", test_matches_reference);
  g_test_add_func("/packed-gemm/threads", test_threads);
  g_test_add_func("/packed-gemm/packed-once", test_packed_once);
  g_test_add_func("/packed-gemm/only-views-inside", test_only_views_inside);
  g_test_add_func("/packed-gemm/over-budget", test_over_budget);
  return g_test_run();
}
