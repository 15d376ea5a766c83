/* test-npy.c: .npy round trips, hand-written headers of every version, errors, and interop
 * with numpy itself when /usr/bin/python3 has it. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "ds-test-tmpdir.h"
#include "ds-error.h"
#include "ds-npy.h"

#define PYTHON "/usr/bin/python3"

/* TRUE if `needle` occurs in the first `len` bytes of `bytes`, which may hold NULs. */
static gboolean bytes_contain(const guint8 *bytes, gsize len, const char *needle)
{
  gsize n = strlen(needle);
  for (gsize i = 0; i + n <= len; i++)
    if (memcmp(bytes + i, needle, n) == 0)
      return TRUE;
  return FALSE;
}

/* A tensor of `dtype` and `shape` whose bytes are a recognisable pattern. Bools hold 0/1. */
static DsNDArray *pattern_array(DsDType dtype, int ndim, const int64_t *shape)
{
  GError *error = NULL;
  DsNDArray *array = ds_ndarray_new(dtype, ndim, shape, "test", &error);
  g_assert_no_error(error);
  guint8 *bytes = array->view.data;
  for (size_t i = 0; i < array->nbytes; i++)
    bytes[i] = dtype == DS_DTYPE_BOOL ? (guint8)(i % 3 == 0) : (guint8)(i * 37 + 11);
  return array;
}

static void assert_same_array(const DsNDArray *a, const DsNDArray *b)
{
  g_assert_cmpint(a->view.dtype, ==, b->view.dtype);
  g_assert_cmpint(a->view.ndim, ==, b->view.ndim);
  for (int i = 0; i < a->view.ndim; i++)
    g_assert_cmpint(a->view.shape[i], ==, b->view.shape[i]);
  g_assert_cmpuint(a->nbytes, ==, b->nbytes);
  if (a->nbytes > 0)
    g_assert_cmpmem(a->view.data, a->nbytes, b->view.data, b->nbytes);
}

static void test_roundtrip(void)
{
  static const int64_t shapes[][DS_MAX_NDIM] = {
      {0}, {0}, {7}, {2, 3}, {2, 0, 4}, {1, 2, 3, 1, 2, 1, 2, 1},
  };
  static const int ndims[] = {0, 1, 1, 2, 3, 8};
  char *dir = ds_test_tmpdir_new("ds-test-npy");
  for (int d = 0; d < DS_DTYPE_COUNT; d++) {
    if (ds_dtype_npy_code((DsDType)d) == NULL) {
      /* bfloat16: NumPy has no such type, so saving is refused with a message, not written. */
      GError *error = NULL;
      g_autoptr(DsNDArray) array = pattern_array((DsDType)d, ndims[2], shapes[2]);
      g_autofree char *path = g_build_filename(dir, "bf16.npy", NULL);
      g_assert_false(ds_npy_save(path, &array->view, &error));
      g_assert_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED);
      g_assert_nonnull(strstr(error->message, ds_dtype_name((DsDType)d)));
      g_error_free(error);
      g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
      continue;
    }
    for (guint s = 0; s < G_N_ELEMENTS(ndims); s++) {
      GError *error = NULL;
      g_autoptr(DsNDArray) array = pattern_array((DsDType)d, ndims[s], shapes[s]);
      gsize len;
      g_autofree guint8 *bytes = ds_npy_encode(&array->view, &len);
      g_assert_cmpmem(bytes, 8, "\x93NUMPY\x01\x00", 8);
      gsize header_len = bytes[8] | (gsize)bytes[9] << 8;
      g_assert_cmpuint((10 + header_len) % 64, ==, 0);
      g_assert_cmpint(bytes[10 + header_len - 1], ==, '\n');
      g_assert_cmpuint(len, ==, 10 + header_len + array->nbytes);

      g_autoptr(DsNDArray) back = ds_npy_load_data(bytes, len, "mem", &error);
      g_assert_no_error(error);
      assert_same_array(array, back);

      g_autofree char *path = g_build_filename(dir, "a.npy", NULL);
      g_assert_true(ds_npy_save(path, &array->view, &error));
      g_assert_no_error(error);
      g_autoptr(DsNDArray) from_file = ds_npy_load(path, &error);
      g_assert_no_error(error);
      assert_same_array(array, from_file);
      g_autofree char *contents = NULL;
      gsize file_len;
      g_assert_true(g_file_get_contents(path, &contents, &file_len, NULL));
      g_assert_cmpmem(contents, file_len, bytes, len);
    }
  }
  ds_test_tmpdir_free(dir);
}

/* The exact bytes numpy 1.24's numpy.save writes for np.zeros((2, 3), '<f4'). */
static void test_header_bytes(void)
{
  int64_t shape[2] = {2, 3};
  g_autoptr(DsNDArray) array = ds_ndarray_new(DS_DTYPE_FLOAT32, 2, shape, "t", NULL);
  gsize len;
  g_autofree guint8 *bytes = ds_npy_encode(&array->view, &len);
  GString *expected = g_string_new_len("\x93NUMPY\x01\x00v\x00", 10);
  g_string_append(expected, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  while (expected->len < 127)
    g_string_append_c(expected, ' ');
  g_string_append_c(expected, '\n');
  g_assert_cmpuint(len, ==, 128 + 24);
  g_assert_cmpmem(bytes, 128, expected->str, expected->len);
  g_string_free(expected, TRUE);

  /* A scalar has no growth padding; a 1-D shape is written "(n,)". */
  g_autoptr(DsNDArray) scalar = ds_ndarray_new(DS_DTYPE_INT64, 0, shape, "t", NULL);
  g_autofree guint8 *sbytes = ds_npy_encode(&scalar->view, &len);
  g_assert_true(bytes_contain(sbytes, 128, "'descr': '<i8'"));
  g_assert_true(bytes_contain(sbytes, 128, "'shape': (), }"));
  int64_t n = 5;
  g_autoptr(DsNDArray) vec = ds_ndarray_new(DS_DTYPE_BOOL, 1, &n, "t", NULL);
  g_autofree guint8 *vbytes = ds_npy_encode(&vec->view, &len);
  g_assert_true(bytes_contain(vbytes, 128, "'descr': '|b1'"));
  g_assert_true(bytes_contain(vbytes, 128, "'shape': (5,), }"));
}

/* A file with a hand-written header; `major` picks the length field's width. */
static GByteArray *npy_with_header(guint major, const char *header, const void *data,
                                   gsize data_len)
{
  GByteArray *out = g_byte_array_new();
  guint8 prefix[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', (guint8)major, 0};
  g_byte_array_append(out, prefix, 8);
  gsize n = strlen(header);
  guint8 field[4] = {n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, (n >> 24) & 0xff};
  g_byte_array_append(out, field, major == 1 ? 2 : 4);
  g_byte_array_append(out, (const guint8 *)header, (guint)n);
  g_byte_array_append(out, data, (guint)data_len);
  return out;
}

static DsNDArray *load_bytes(GByteArray *bytes, GError **error)
{
  DsNDArray *array = ds_npy_load_data(bytes->data, bytes->len, "hand.npy", error);
  g_byte_array_unref(bytes);
  return array;
}

static void test_versions(void)
{
  GError *error = NULL;
  gint32 values[6] = {1, -2, 3, -4, 5, -6};
  /* Version 2.0: uint32 header length, double quotes, extra spaces, Python 2 "L" suffixes. */
  g_autoptr(DsNDArray) v2 = load_bytes(
      npy_with_header(2, "{\"descr\": \"<i4\" , \"fortran_order\":False,\"shape\":(2L, 3L)}  \n",
                      values, sizeof values),
      &error);
  g_assert_no_error(error);
  g_assert_cmpint(v2->view.dtype, ==, DS_DTYPE_INT32);
  g_assert_cmpint(v2->view.ndim, ==, 2);
  g_assert_cmpint(v2->view.shape[1], ==, 3);
  g_assert_cmpmem(v2->view.data, v2->nbytes, values, sizeof values);

  /* Version 3.0 (UTF-8 header), keys in another order, a 1-D Fortran-ordered array (the same
   * bytes as C order). */
  double d[3] = {0.5, -1.25, 3e10};
  g_autoptr(DsNDArray) v3 = load_bytes(
      npy_with_header(3, "{'shape': (3,), 'fortran_order': True, 'descr': '<f8', }\n", d, sizeof d),
      &error);
  g_assert_no_error(error);
  g_assert_cmpint(v3->view.dtype, ==, DS_DTYPE_FLOAT64);
  g_assert_cmpmem(v3->view.data, v3->nbytes, d, sizeof d);

  /* float16 storage, '=' byte order and a scalar. */
  guint16 half = 0x3c00;
  g_autoptr(DsNDArray) h = load_bytes(
      npy_with_header(1, "{'descr': '=f2', 'fortran_order': False, 'shape': ()}\n", &half, 2),
      &error);
  g_assert_no_error(error);
  g_assert_cmpint(h->view.dtype, ==, DS_DTYPE_FLOAT16);
  g_assert_cmpint(h->view.ndim, ==, 0);

  /* Single-byte types take any byte-order character. */
  guint8 bytes[2] = {7, 9};
  g_autoptr(DsNDArray) u = load_bytes(
      npy_with_header(1, "{'descr': '<u1', 'fortran_order': False, 'shape': (2,), }\n", bytes, 2),
      &error);
  g_assert_no_error(error);
  g_assert_cmpint(u->view.dtype, ==, DS_DTYPE_UINT8);
}

typedef struct {
  const char *header;
  gsize data_len;
  int code;
  const char *message;
} HeaderCase;

static void test_errors(void)
{
  static const HeaderCase cases[] = {
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }\n", 24, DS_ERROR_UNSUPPORTED,
       "Fortran"},
      {"{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }\n", 24, DS_ERROR_UNSUPPORTED,
       "big-endian"},
      {"{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }\n", 16, DS_ERROR_UNSUPPORTED,
       "'<c8' is not supported"},
      {"{'descr': '|O', 'fortran_order': False, 'shape': (2,), }\n", 16, DS_ERROR_UNSUPPORTED,
       "object arrays"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }\n", 8,
       DS_ERROR_UNSUPPORTED, "structured"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", 20, DS_ERROR_PARSE,
       "truncated data"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", 28, DS_ERROR_PARSE,
       "unexpected data"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, "
       "4611686018427387904), }\n",
       0, DS_ERROR_LIMIT, "does not fit"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }\n", 0,
       DS_ERROR_LIMIT, "64 bits"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }\n", 16,
       DS_ERROR_PARSE, "truncated data"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1), }\n", 4,
       DS_ERROR_LIMIT, "more than 8"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }\n", 0, DS_ERROR_PARSE,
       "negative"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3), }\n", 12, DS_ERROR_PARSE,
       "not a tuple"},
      {"{'descr': '<f4', 'shape': (3,), }\n", 12, DS_ERROR_PARSE, "missing key 'fortran_order'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'extra': 1}\n", 12, DS_ERROR_PARSE,
       "unexpected key 'extra'"},
      {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (3,), }\n", 12, DS_ERROR_PARSE,
       "True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), } x\n", 12, DS_ERROR_PARSE,
       "after the dict"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,", 12, DS_ERROR_PARSE, "header"},
  };
  static const guint8 zeros[64];
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    GError *error = NULL;
    g_test_message("case %u: %s", i, cases[i].header);
    DsNDArray *array =
        load_bytes(npy_with_header(1, cases[i].header, zeros, cases[i].data_len), &error);
    g_assert_null(array);
    g_assert_error(error, DS_ERROR, cases[i].code);
    g_assert_nonnull(strstr(error->message, "hand.npy"));
    g_assert_nonnull(strstr(error->message, cases[i].message));
    g_error_free(error);
  }

  GError *error = NULL;
  g_assert_null(ds_npy_load_data((const guint8 *)"PK\x03\x04 not npy", 15, "x.npy", &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_PARSE);
  g_assert_nonnull(strstr(error->message, "not a .npy file"));
  g_clear_error(&error);
  g_assert_null(ds_npy_load_data((const guint8 *)"\x93NUMPY\x04\x00\x10\x00", 10, "x.npy", &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED);
  g_clear_error(&error);
  g_assert_null(
      ds_npy_load_data((const guint8 *)"\x93NUMPY\x01\x00\xff\x00{", 11, "x.npy", &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_PARSE);
  g_assert_nonnull(strstr(error->message, "truncated .npy header"));
  g_clear_error(&error);
  g_assert_null(ds_npy_load_data(NULL, 0, "empty.npy", &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_PARSE);
  g_clear_error(&error);
  g_assert_null(ds_npy_load("/nonexistent/dir/file.npy", &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_IO);
  g_assert_nonnull(strstr(error->message, "/nonexistent/dir/file.npy"));
  g_clear_error(&error);

  /* The memory limit applies before allocation, with the file's bytes all present. */
  size_t old_limit = ds_memory_get_limit_bytes();
  ds_memory_set_limit_bytes(16);
  DsNDArray *big = load_bytes(
      npy_with_header(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (8,), }\n", zeros, 32),
      &error);
  ds_memory_set_limit_bytes(old_limit);
  g_assert_null(big);
  g_assert_error(error, DS_ERROR, DS_ERROR_LIMIT);
  g_clear_error(&error);
}

static void test_save_errors(void)
{
  GError *error = NULL;
  int64_t n = 3;
  g_autoptr(DsNDArray) array = ds_ndarray_new(DS_DTYPE_FLOAT32, 1, &n, "t", NULL);
  g_assert_false(ds_npy_save("/nonexistent/dir/out.npy", &array->view, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_IO);
  g_assert_nonnull(strstr(error->message, "/nonexistent/dir/out.npy"));
  g_clear_error(&error);

  /* A failed save leaves neither a partial file nor a temporary one behind. */
  char *dir = ds_test_tmpdir_new("ds-test-npy");
  g_autofree char *sub = g_build_filename(dir, "sub", NULL);
  g_assert_cmpint(g_mkdir(sub, 0700), ==, 0);
  g_assert_false(ds_npy_save(sub, &array->view, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_IO);
  g_clear_error(&error);
  GDir *d = g_dir_open(dir, 0, NULL);
  guint n_entries = 0;
  while (g_dir_read_name(d) != NULL)
    n_entries++;
  g_dir_close(d);
  g_assert_cmpuint(n_entries, ==, 1);
  g_rmdir(sub);
  ds_test_tmpdir_free(dir);
}

static gboolean python_has_numpy(void)
{
  const char *argv[] = {PYTHON, "-c", "import numpy", NULL};
  int status = -1;
  if (!g_file_test(PYTHON, G_FILE_TEST_IS_EXECUTABLE))
    return FALSE;
  if (!g_spawn_sync(NULL, (char **)argv, NULL,
                    G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL,
                    &status, NULL))
    return FALSE;
  return g_spawn_check_wait_status(status, NULL);
}

static void run_python(const char *script, const char *dir)
{
  const char *argv[] = {PYTHON, "-c", script, dir, NULL};
  g_autofree char *out = NULL, *err = NULL;
  int status = -1;
  GError *error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                             &status, &error));
  g_assert_no_error(error);
  if (!g_spawn_check_wait_status(status, NULL))
    g_test_message("python output: %s\n%s", out, err);
  g_assert_true(g_spawn_check_wait_status(status, NULL));
}

static void test_numpy_interop(void)
{
  if (!python_has_numpy()) {
    g_test_skip("/usr/bin/python3 cannot import numpy");
    return;
  }
  char *dir = ds_test_tmpdir_new("ds-test-npy");
  GError *error = NULL;

  /* numpy writes, we read. */
  run_python("import numpy as np, sys, os\n"
             "d = sys.argv[1]\n"
             "np.save(os.path.join(d, 'f4.npy'), np.arange(24, dtype='<f4').reshape(2, 3, 4))\n"
             "np.save(os.path.join(d, 'i8.npy'), np.array(-7, dtype='<i8'))\n"
             "np.save(os.path.join(d, 'b1.npy'), np.array([True, False, True]))\n"
             "np.save(os.path.join(d, 'f2.npy'), np.array([1.5, -2], dtype='<f2'))\n"
             "np.save(os.path.join(d, 'u1.npy'), np.zeros((0, 5), dtype='u1'))\n"
             "np.save(os.path.join(d, 'i2.npy'), np.array([-2, 300], dtype='<i2'))\n"
             "np.save(os.path.join(d, 'u8.npy'), np.array([2**64 - 1, 5], dtype='<u8'))\n",
             dir);
  /* The storage integers: every bit kept, uint64 beyond int64's range too. */
  g_autofree char *i2_path = g_build_filename(dir, "i2.npy", NULL);
  g_autoptr(DsNDArray) i2 = ds_npy_load(i2_path, &error);
  g_assert_no_error(error);
  g_assert_cmpint(i2->view.dtype, ==, DS_DTYPE_INT16);
  g_assert_cmpint(((gint16 *)i2->view.data)[0], ==, -2);
  g_assert_cmpint(((gint16 *)i2->view.data)[1], ==, 300);
  g_autofree char *u8_path = g_build_filename(dir, "u8.npy", NULL);
  g_autoptr(DsNDArray) u8 = ds_npy_load(u8_path, &error);
  g_assert_no_error(error);
  g_assert_cmpint(u8->view.dtype, ==, DS_DTYPE_UINT64);
  g_assert_cmpuint(((guint64 *)u8->view.data)[0], ==, G_MAXUINT64);
  g_autofree char *f4_path = g_build_filename(dir, "f4.npy", NULL);
  g_autoptr(DsNDArray) f4 = ds_npy_load(f4_path, &error);
  g_assert_no_error(error);
  g_assert_cmpint(f4->view.ndim, ==, 3);
  for (int i = 0; i < 24; i++)
    g_assert_cmpfloat(((float *)f4->view.data)[i], ==, (float)i);
  g_autofree char *i8_path = g_build_filename(dir, "i8.npy", NULL);
  g_autoptr(DsNDArray) i8 = ds_npy_load(i8_path, &error);
  g_assert_no_error(error);
  g_assert_cmpint(i8->view.ndim, ==, 0);
  g_assert_cmpint(*(int64_t *)i8->view.data, ==, -7);
  g_autofree char *b1_path = g_build_filename(dir, "b1.npy", NULL);
  g_autoptr(DsNDArray) b1 = ds_npy_load(b1_path, &error);
  g_assert_no_error(error);
  g_assert_cmpint(b1->view.dtype, ==, DS_DTYPE_BOOL);
  g_assert_cmpmem(b1->view.data, 3, "\x01\x00\x01", 3);
  g_autofree char *f2_path = g_build_filename(dir, "f2.npy", NULL);
  g_autoptr(DsNDArray) f2 = ds_npy_load(f2_path, &error);
  g_assert_no_error(error);
  g_assert_cmpint(f2->view.dtype, ==, DS_DTYPE_FLOAT16);
  g_assert_cmpuint(((guint16 *)f2->view.data)[0], ==, 0x3e00);
  g_autofree char *u1_path = g_build_filename(dir, "u1.npy", NULL);
  g_autoptr(DsNDArray) u1 = ds_npy_load(u1_path, &error);
  g_assert_no_error(error);
  g_assert_cmpint(u1->view.shape[1], ==, 5);

  /* We write, numpy reads, and our bytes equal numpy.save's for the same array. */
  int64_t shape[3] = {2, 3, 4};
  g_autoptr(DsNDArray) ours = ds_ndarray_new(DS_DTYPE_FLOAT32, 3, shape, "t", NULL);
  for (int i = 0; i < 24; i++)
    ((float *)ours->view.data)[i] = (float)i * 0.5f;
  g_autofree char *ours_path = g_build_filename(dir, "ours.npy", NULL);
  g_assert_true(ds_npy_save(ours_path, &ours->view, &error));
  g_assert_no_error(error);
  int64_t n = 4;
  g_autoptr(DsNDArray) ints = ds_ndarray_new(DS_DTYPE_INT32, 1, &n, "t", NULL);
  for (int i = 0; i < 4; i++)
    ((gint32 *)ints->view.data)[i] = -i;
  g_autofree char *ints_path = g_build_filename(dir, "ints.npy", NULL);
  g_assert_true(ds_npy_save(ints_path, &ints->view, &error));
  run_python("import numpy as np, sys, os\n"
             "d = sys.argv[1]\n"
             "a = np.load(os.path.join(d, 'ours.npy'))\n"
             "want = (np.arange(24, dtype='<f4') * 0.5).reshape(2, 3, 4)\n"
             "assert a.dtype == np.float32 and (a == want).all(), a\n"
             "b = np.load(os.path.join(d, 'ints.npy'))\n"
             "assert b.dtype == np.int32 and list(b) == [0, -1, -2, -3], b\n"
             "np.save(os.path.join(d, 'theirs.npy'), want)\n"
             "assert open(os.path.join(d, 'theirs.npy'), 'rb').read() == "
             "open(os.path.join(d, 'ours.npy'), 'rb').read()\n",
             dir);
  ds_test_tmpdir_free(dir);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/engine/npy/roundtrip", test_roundtrip);
  g_test_add_func("/engine/npy/header-bytes", test_header_bytes);
  g_test_add_func("/engine/npy/versions", test_versions);
  g_test_add_func("/engine/npy/errors", test_errors);
  g_test_add_func("/engine/npy/save-errors", test_save_errors);
  g_test_add_func("/engine/npy/numpy-interop", test_numpy_interop);
  return g_test_run();
}
