/* ds-ops-signal.h: Fourier transforms: ids and parsed attributes.
 *
 * _contrib_dft follows ONNX's DFT (opset 17) and numpy.fft's conventions; ONNX's STFT is
 * built from it by the importer (framing, window, then a one-sided DFT of every frame).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define DS_OPS_SIGNAL(X) X(DFT, "_contrib_dft")

/* _contrib_dft(data): the discrete Fourier transform of every line of `data` along `axis`.
 * data's last axis holds one value (real input) or two (real and imaginary parts); `axis`
 * (negative counts from the end) is one of the others. The line is cut or zero-padded to
 * `length` values (0: the axis's size) and transformed: X[k] = sum_j x[j] exp(-2 pi i j k / n),
 * or with `inverse` the sum with exp(+2 pi i j k / n) divided by n, as numpy.fft.ifft. With
 * `onesided` (real input only, not inverse) only the bins 0 .. n/2 are kept, the rest being
 * their complex conjugates. The output has the data's shape with the axis's size n (or n/2 + 1)
 * and a last axis of 2, in the data's dtype (float32 or float64). */
typedef struct {
  int axis;
  int64_t length;
  bool inverse;
  bool onesided;
} DsDftParam;
