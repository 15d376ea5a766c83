/* ds-cpu-gemm.c: the sgemm/sgemv and dgemm/dgemv routers and convolution GEMM sizes. */
#include "ds-cpu-gemm.h"

#include <cblas.h>
#include <limits.h>

static bool fits_int(int64_t v)
{
  return v >= 0 && v <= INT_MAX;
}

/* y = beta * y for a strided vector; beta == 0 writes zeros so that NaN garbage in an
 * uninitialised output does not survive (some OpenBLAS versions compute 0 * y). */
static void scale_vector(float *y, int64_t n, int64_t inc, float beta)
{
  if (beta == 1.0f)
    return;
  for (int64_t i = 0; i < n; i++)
    y[i * inc] = beta == 0.0f ? 0.0f : beta * y[i * inc];
}

DsStatus ds_cpu_sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                      const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                      float *c, int64_t ldc)
{
  if (!fits_int(m) || !fits_int(n) || !fits_int(k) || !fits_int(lda) || !fits_int(ldb) ||
      !fits_int(ldc))
    return DS_STATUS_INVALID_ARGUMENT;
  if (m == 0 || n == 0)
    return DS_STATUS_OK;
  if (k == 0) {
    for (int64_t i = 0; i < m; i++)
      scale_vector(c + i * ldc, n, 1, beta);
    return DS_STATUS_OK;
  }

  if (m == 1) {
    /* c (1 x n) = op(B)^T applied to the row vector op(A): a gemv on B. A's single row is
     * contiguous unless A is stored transposed (k x 1), where its elements are lda apart. */
    int inc_a = trans_a ? (int)lda : 1;
    scale_vector(c, n, 1, beta);
    if (trans_b) /* B stored n x k */
      cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)n, (int)k, alpha, b, (int)ldb, a, inc_a, 1.0f,
                  c, 1);
    else /* B stored k x n */
      cblas_sgemv(CblasRowMajor, CblasTrans, (int)k, (int)n, alpha, b, (int)ldb, a, inc_a, 1.0f, c,
                  1);
    return DS_STATUS_OK;
  }
  if (n == 1) {
    /* c (m x 1, stride ldc) = op(A) times the column vector op(B). */
    int inc_b = trans_b ? 1 : (int)ldb;
    scale_vector(c, m, ldc, beta);
    if (trans_a) /* A stored k x m */
      cblas_sgemv(CblasRowMajor, CblasTrans, (int)k, (int)m, alpha, a, (int)lda, b, inc_b, 1.0f, c,
                  (int)ldc);
    else /* A stored m x k */
      cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)m, (int)k, alpha, a, (int)lda, b, inc_b, 1.0f,
                  c, (int)ldc);
    return DS_STATUS_OK;
  }
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, alpha, a, (int)lda, b,
              (int)ldb, beta, c, (int)ldc);
  return DS_STATUS_OK;
}

static void scale_vector_f64(double *y, int64_t n, int64_t inc, double beta)
{
  if (beta == 1.0)
    return;
  for (int64_t i = 0; i < n; i++)
    y[i * inc] = beta == 0.0 ? 0.0 : beta * y[i * inc];
}

/* ds_cpu_sgemm's routing in double precision. */
DsStatus ds_cpu_dgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                      const double *a, int64_t lda, const double *b, int64_t ldb, double beta,
                      double *c, int64_t ldc)
{
  if (!fits_int(m) || !fits_int(n) || !fits_int(k) || !fits_int(lda) || !fits_int(ldb) ||
      !fits_int(ldc))
    return DS_STATUS_INVALID_ARGUMENT;
  if (m == 0 || n == 0)
    return DS_STATUS_OK;
  if (k == 0) {
    for (int64_t i = 0; i < m; i++)
      scale_vector_f64(c + i * ldc, n, 1, beta);
    return DS_STATUS_OK;
  }
  if (m == 1) {
    int inc_a = trans_a ? (int)lda : 1;
    scale_vector_f64(c, n, 1, beta);
    cblas_dgemv(CblasRowMajor, trans_b ? CblasNoTrans : CblasTrans, trans_b ? (int)n : (int)k,
                trans_b ? (int)k : (int)n, alpha, b, (int)ldb, a, inc_a, 1.0, c, 1);
    return DS_STATUS_OK;
  }
  if (n == 1) {
    int inc_b = trans_b ? 1 : (int)ldb;
    scale_vector_f64(c, m, ldc, beta);
    cblas_dgemv(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_a ? (int)k : (int)m,
                trans_a ? (int)m : (int)k, alpha, a, (int)lda, b, inc_b, 1.0, c, (int)ldc);
    return DS_STATUS_OK;
  }
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, alpha, a, (int)lda, b,
              (int)ldb, beta, c, (int)ldc);
  return DS_STATUS_OK;
}

bool ds_cpu_conv_gemm_dims(const DsConvolutionParam *param, const int64_t *data_shape, int ndim,
                           DsConvGemmDims *dims)
{
  int ns = param->n_spatial;
  if (ndim != ns + 2 || param->num_group < 1 || param->num_filter < 1 ||
      data_shape[1] % param->num_group != 0 ||
      param->num_filter % param->num_group != 0)
    return false;
  int64_t out_plane = 1, kvol = 1;
  for (int i = 0; i < ns; i++) {
    int64_t dk = param->dilate[i] * (param->kernel[i] - 1) + 1;
    int64_t pb, pe;
    ds_conv_axis_pads(param, i, data_shape[2 + i], &pb, &pe);
    int64_t padded = data_shape[2 + i] + pb + pe;
    if (padded < dk)
      return false;
    out_plane *= (padded - dk) / param->stride[i] + 1;
    kvol *= param->kernel[i];
  }
  dims->m = param->num_filter / param->num_group;
  dims->n = out_plane;
  dims->k = data_shape[1] / param->num_group * kvol;
  dims->count = data_shape[0] * param->num_group;
  return true;
}
