/* ds-test-model.h: small models written from JSON text for a test, and arrays to feed them. */
#pragma once

#include <glib.h>

#include "ds-ndarray.h"

typedef struct {
  char *dir;  /* a temporary folder holding only the model */
  char *path; /* DIR/model-symbol.json */
} DsTestModel;

/* Writes `json` to a new temporary folder; the test fails if it cannot. */
DsTestModel ds_test_model_new(const char *json);
/* Removes the file and its folder. */
void ds_test_model_clear(DsTestModel *model);

/* A float32 array of `shape` holding a copy of `values`. */
DsNDArray *ds_test_array_f32(int ndim, const int64_t *shape, const float *values);
