/* ds-constant.h: immutable buffers (weights) and the forms kernels derive from them.
 *
 * A weight does not change between runs, so a kernel may prepare it once instead of on every
 * call: a GEMM packs the matrix into its micro-kernel's panel layout, as ONNX Runtime's PrePack
 * and oneDNN's weight reorders do. A DsConstant marks a buffer immutable and keeps those
 * derived forms, shared by every node, executor and thread that reads the buffer, and freed
 * with it. Views of the buffer carry it (DsTensor.constant). A view whose bytes do not lie
 * inside the buffer is not constant whatever it carries, so a copied view pointed elsewhere
 * (a loop-carried state, a scratch copy) can never reach a stale form.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ds-tensor.h"

/* Marks `nbytes` at `data` immutable until ds_constant_free(), which the buffer's owner calls
 * before freeing the buffer. NULL only when out of memory (the buffer is then an ordinary one). */
DsConstant *ds_constant_new(const void *data, size_t nbytes);
void ds_constant_free(DsConstant *constant);

/* Bytes held by the forms derived so far. */
size_t ds_constant_get_derived_bytes(DsConstant *constant);

/* The constant `t` lies in, or NULL. */
DsConstant *ds_tensor_get_constant(const DsTensor *t);

/* Which form of which view: forms with equal keys are the same bytes. */
typedef struct {
  const char *kind;  /* a static string naming the layout, e.g. "sgemm-b-panels" */
  size_t offset;     /* of the source view's data in the buffer, in bytes */
  int64_t params[6]; /* the layout's own parameters (dims, leading dims, transposition) */
} DsDerivedKey;

/* Writes the form of `key` made from `source` into `form` (64-byte aligned, of the size asked
 * for). */
typedef void (*DsDeriveFn)(const DsTensor *source, const DsDerivedKey *key, void *form);

/* The form `key` of `source`'s constant (key->offset is filled in here): `nbytes` bytes made
 * by `derive` on first use, accounted in the memory budget before they are allocated, then
 * kept until the constant is freed. NULL if `source` is not constant or the form cannot be had
 * (over the budget, out of memory): the caller then computes from `source` directly.
 * Thread-safe. */
const void *ds_tensor_get_derived(const DsTensor *source, DsDerivedKey *key, size_t nbytes,
                                  DsDeriveFn derive);
