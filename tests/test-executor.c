/* test-executor.c: binding, reshaping to new sizes without recompiling, hooks and limits. */
#include <glib.h>
#include <string.h>

#include "ds-backend.h"
#include "ds-error.h"
#include "ds-npy.h"
#include "ds-session.h"

static char *sample_path(const char *file)
{
  return g_build_filename(g_getenv("DS_SOURCE_DIR"), "data", "sample", file, NULL);
}

static DsSession *open_sample(int batch, DsNDArray **input_out)
{
  g_autofree char *model = sample_path("sample-symbol.json");
  g_autofree char *params = sample_path("sample.params");
  g_autofree char *input = sample_path("sample-input.npy");
  GError *error = NULL;
  DsSession *session = ds_session_new(model, &error);
  g_assert_no_error(error);
  g_assert_true(ds_session_feed_params(session, params, &error));
  g_autoptr(DsNDArray) one = ds_npy_load(input, &error);
  g_assert_no_error(error);
  int64_t shape[4] = {batch, 1, 28, 28};
  DsNDArray *many = ds_ndarray_new(DS_DTYPE_FLOAT32, 4, shape, "data", &error);
  g_assert_no_error(error);
  /* Row b is the sample scaled by (b + 1), so rows differ. */
  for (int b = 0; b < batch; b++)
    for (int i = 0; i < 28 * 28; i++)
      ((float *)many->view.data)[b * 784 + i] = ((float *)one->view.data)[i] * (float)(b + 1);
  *input_out = many;
  g_assert_true(ds_session_declare_shape(session, "data",
                                         &(DsShape){.ndim = 4,
                                                    .dims = {ds_dim(batch), ds_dim(1), ds_dim(28),
                                                             ds_dim(28)}},
                                         &error));
  g_assert_no_error(error);
  return session;
}

static void test_reshape_runs_new_sizes(void)
{
  GError *error = NULL;
  DsNDArray *input1, *input3;
  g_autoptr(DsSession) s1 = open_sample(1, &input1);
  g_assert_true(ds_session_feed(s1, "data", input1, &error));
  g_assert_true(ds_session_prepare(s1, FALSE, 0, ds_backend_find("cpu"), 2, &error));
  DsExecutor *exec = ds_session_get_executor(s1);
  g_assert_true(ds_executor_run(exec, &error));
  float expected[10];
  memcpy(expected, ds_executor_get_output(exec, 0)->data, sizeof expected);

  /* The batch-3 shapes come from a second session; the first executor takes them. */
  g_autoptr(DsSession) s3 = open_sample(3, &input3);
  const DsGraphShapes *shapes3 = ds_session_infer_partial(s3, &error);
  g_assert_no_error(error);
  gsize arena1 = ds_executor_get_plan(exec)->arena_bytes;
  g_assert_true(ds_executor_reshape(exec, shapes3, &error));
  g_assert_cmpuint(ds_executor_get_plan(exec)->arena_bytes, >, arena1);
  /* The data input changed shape, so a run without rebinding it is refused. */
  g_assert_false(ds_executor_run(exec, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_INPUT);
  g_assert_nonnull(strstr(error->message, "data"));
  g_clear_error(&error);
  DsGraph *graph = ds_session_get_graph(s1);
  g_assert_true(ds_executor_bind(exec, ds_graph_find_node(graph, "data"), &input3->view, &error));
  g_assert_true(ds_executor_run(exec, &error));
  const DsTensor *out = ds_executor_get_output(exec, 0);
  g_assert_cmpint(out->shape[0], ==, 3);
  /* Row 0 is the batch-1 input: same probabilities, up to the rounding of a convolution that
   * batches images into one GEMM. The weights kept their bindings. */
  for (int i = 0; i < 10; i++)
    g_assert_cmpfloat_with_epsilon(((float *)out->data)[i], expected[i], 1e-5);

  /* Back to batch 1: the arena is kept (it never shrinks), the result is the same. */
  const DsGraphShapes *shapes1 = ds_executor_get_shapes(exec);
  g_autoptr(DsSession) again = open_sample(1, &input1);
  g_assert_true(ds_session_feed(again, "data", input1, &error));
  g_assert_true(ds_executor_reshape(exec, ds_session_infer_partial(again, &error), &error));
  (void)shapes1;
  g_assert_true(ds_executor_bind(exec, ds_graph_find_node(graph, "data"), &input1->view, &error));
  g_assert_true(ds_executor_run(exec, &error));
  g_assert_cmpmem(ds_executor_get_output(exec, 0)->data, sizeof expected, expected,
                  sizeof expected);
  ds_ndarray_free(input3);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/engine/executor/reshape-runs-new-sizes", test_reshape_runs_new_sizes);
  return g_test_run();
}
