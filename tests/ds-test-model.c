/* ds-test-model.c: small models written from JSON text for a test (ds-test-model.h). */
#include "ds-test-model.h"

#include <string.h>

#include "ds-test-tmpdir.h"

DsTestModel ds_test_model_new(const char *json)
{
  DsTestModel m;
  GError *error = NULL;
  m.dir = ds_test_tmpdir_new("ds-test-model");
  m.path = g_build_filename(m.dir, "model-symbol.json", NULL);
  g_assert_true(g_file_set_contents(m.path, json, -1, &error));
  g_assert_no_error(error);
  return m;
}

void ds_test_model_clear(DsTestModel *model)
{
  g_free(model->path);
  ds_test_tmpdir_free(model->dir);
  *model = (DsTestModel){0};
}

DsNDArray *ds_test_array_f32(int ndim, const int64_t *shape, const float *values)
{
  GError *error = NULL;
  DsNDArray *a = ds_ndarray_new(DS_DTYPE_FLOAT32, ndim, shape, "test", &error);
  g_assert_no_error(error);
  memcpy(a->view.data, values, a->nbytes);
  return a;
}
