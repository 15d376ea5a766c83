/* ds-ops-linalg.h: linear algebra on stacks of matrices: ids.
 *
 * MXNet 1.x's la_op family (src/operator/tensor/la_op.cc, la_op.h). So far the determinant,
 * which ONNX's Det maps onto.
 */
#pragma once

/* _linalg_det (alias linalg_det): A (..., n, n), float32 or float64, gives det(A) of every
 * matrix, shaped (...), or (1,) for a single matrix: MXNet 1.x's legacy shapes have no 0-dim
 * arrays (DetShape). Like MXNet it has two hidden outputs, the LU factors (A's shape and dtype)
 * and the pivots ((..., n), int32), as LAPACK's getrf leaves them for A's row-major bytes read
 * column-major, i.e. for the transpose of A (det(A) = det(A^T)): the pivots count from 1. No
 * attributes. */
#define DS_OPS_LINALG(X) X(LINALG_DET, "_linalg_det")
