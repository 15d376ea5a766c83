/* test-params.c: MXNet .params round trips, hand-built records of every layout MXNet wrote,
 * and bad files (truncated at every byte, huge counts and dims, sparse storage). */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "ds-error.h"
#include "ds-params.h"

#define V1_MAGIC 0xF993fac8u
#define V2_MAGIC 0xF993fac9u
#define V3_MAGIC 0xF993facau

static void put_u32(GByteArray *b, guint32 v)
{
  guint8 x[4] = {v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, (v >> 24) & 0xff};
  g_byte_array_append(b, x, 4);
}

static void put_u64(GByteArray *b, guint64 v)
{
  put_u32(b, (guint32)v);
  put_u32(b, (guint32)(v >> 32));
}

static void put_name(GByteArray *b, const char *name)
{
  put_u64(b, strlen(name));
  g_byte_array_append(b, (const guint8 *)name, (guint)strlen(name));
}

static GByteArray *list_header(guint64 n_arrays)
{
  GByteArray *b = g_byte_array_new();
  put_u64(b, 0x112);
  put_u64(b, 0);
  put_u64(b, n_arrays);
  return b;
}

/* Context (cpu 0 or gpu 1) and type flag, as NDArray::Save writes them after the shape. */
static void put_ctx_type(GByteArray *b, guint32 dev_type, guint32 type_flag)
{
  put_u32(b, dev_type);
  put_u32(b, dev_type == 1 ? 0 : 1);
  put_u32(b, type_flag);
}

static DsParams *load_bytes(GByteArray *b, GError **error)
{
  DsParams *params = ds_params_load_data(b->data, b->len, "hand.params", error);
  g_byte_array_unref(b);
  return params;
}

static DsNDArray *filled(DsDType dtype, int ndim, const int64_t *shape, guint seed)
{
  DsNDArray *a = ds_ndarray_new(dtype, ndim, shape, "t", NULL);
  for (size_t i = 0; i < a->nbytes; i++)
    ((guint8 *)a->view.data)[i] = dtype == DS_DTYPE_BOOL ? (i + seed) % 2 : (guint8)(i * 7 + seed);
  return a;
}

/* TRUE if `needle` occurs in the first `len` bytes of `bytes`, which may hold NULs. */
static gboolean bytes_contain(const guint8 *bytes, gsize len, const char *needle)
{
  gsize n = strlen(needle);
  for (gsize i = 0; i + n <= len; i++)
    if (memcmp(bytes + i, needle, n) == 0)
      return TRUE;
  return FALSE;
}

static void test_roundtrip(void)
{
  static const int64_t s2[] = {3, 4}, s1[] = {5}, s0[] = {0}, sz[] = {2, 0, 3};
  DsParam items[] = {
      {"fc1_weight", FALSE, filled(DS_DTYPE_FLOAT32, 2, s2, 1)},
      {"fc1_bias", FALSE, filled(DS_DTYPE_FLOAT64, 1, s1, 2)},
      {"bn_moving_mean", TRUE, filled(DS_DTYPE_FLOAT16, 1, s1, 3)},
      {"step", FALSE, filled(DS_DTYPE_INT64, 0, s0, 4)},
      {"mask", TRUE, filled(DS_DTYPE_BOOL, 2, s2, 5)},
      {"empty", FALSE, filled(DS_DTYPE_UINT8, 3, sz, 6)},
      {"ids", FALSE, filled(DS_DTYPE_INT32, 1, s1, 7)},
      {"q", FALSE, filled(DS_DTYPE_INT8, 2, s2, 8)},
  };
  GError *error = NULL;
  char *dir = g_dir_make_tmp("ds-test-params-XXXXXX", &error);
  g_assert_no_error(error);
  char *path = g_build_filename(dir, "model.params", NULL);
  g_assert_true(ds_params_save(path, items, G_N_ELEMENTS(items), &error));
  g_assert_no_error(error);

  g_autoptr(DsParams) params = ds_params_load(path, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(params->n_items, ==, G_N_ELEMENTS(items));
  for (guint i = 0; i < G_N_ELEMENTS(items); i++) {
    const DsParam *p = &params->items[i];
    g_assert_cmpstr(p->name, ==, items[i].name);
    g_assert_cmpint(p->is_aux, ==, items[i].is_aux);
    g_assert_cmpint(p->array->view.dtype, ==, items[i].array->view.dtype);
    g_assert_cmpint(p->array->view.ndim, ==, items[i].array->view.ndim);
    for (int d = 0; d < p->array->view.ndim; d++)
      g_assert_cmpint(p->array->view.shape[d], ==, items[i].array->view.shape[d]);
    g_assert_cmpmem(p->array->view.data, p->array->nbytes, items[i].array->view.data,
                    items[i].array->nbytes);
    g_assert_true(ds_params_lookup(params, items[i].name) == p->array);
  }
  g_assert_null(ds_params_lookup(params, "nothing"));

  /* The bytes are V2 records with prefixed names; the scalar alone needs V3. */
  gsize len;
  g_autofree guint8 *bytes = ds_params_encode(items, G_N_ELEMENTS(items), &len);
  g_autofree char *contents = NULL;
  gsize file_len;
  g_assert_true(g_file_get_contents(path, &contents, &file_len, NULL));
  g_assert_cmpmem(contents, file_len, bytes, len);
  guint32 first_magic;
  memcpy(&first_magic, bytes + 24, 4);
  g_assert_cmphex(GUINT32_FROM_LE(first_magic), ==, V2_MAGIC);
  g_assert_true(bytes_contain(bytes, len, "arg:fc1_weight"));
  g_assert_true(bytes_contain(bytes, len, "aux:bn_moving_mean"));

  for (guint i = 0; i < G_N_ELEMENTS(items); i++)
    ds_ndarray_free(items[i].array);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
}

/* One array per layout MXNet ever wrote, in one list, with bare names and a gpu context. */
static void test_layouts(void)
{
  GByteArray *b = list_header(4);
  /* Legacy: uint32 ndim, uint32 dims. */
  put_u32(b, 2);
  put_u32(b, 2);
  put_u32(b, 1);
  put_ctx_type(b, 1, 4);
  put_u32(b, 11);
  put_u32(b, 22);
  /* V1: int64 dims, no storage type; saved from a gpu. */
  put_u32(b, V1_MAGIC);
  put_u32(b, 1);
  put_u64(b, 3);
  put_ctx_type(b, 2, 3);
  g_byte_array_append(b, (const guint8 *)"abc", 3);
  /* V2 dense. */
  put_u32(b, V2_MAGIC);
  put_u32(b, 0);
  put_u32(b, 1);
  put_u64(b, 1);
  put_ctx_type(b, 1, 6);
  put_u64(b, G_GUINT64_CONSTANT(0x0102030405060708));
  /* V3: a NumPy scalar. */
  put_u32(b, V3_MAGIC);
  put_u32(b, 0);
  put_u32(b, 0);
  put_ctx_type(b, 1, 0);
  float one = 1.0f;
  g_byte_array_append(b, (const guint8 *)&one, 4);
  put_u64(b, 4);
  put_name(b, "legacy");
  put_name(b, "arg:v1");
  put_name(b, "aux:v2");
  put_name(b, "v3");

  GError *error = NULL;
  g_autoptr(DsParams) params = load_bytes(b, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(params->n_items, ==, 4);
  const DsParam *p = params->items;
  g_assert_cmpstr(p[0].name, ==, "legacy");
  g_assert_cmpint(p[0].array->view.dtype, ==, DS_DTYPE_INT32);
  g_assert_cmpint(p[0].array->view.ndim, ==, 2);
  g_assert_cmpint(((gint32 *)p[0].array->view.data)[1], ==, 22);
  g_assert_cmpstr(p[1].name, ==, "v1");
  g_assert_false(p[1].is_aux);
  g_assert_cmpint(p[1].array->view.dtype, ==, DS_DTYPE_UINT8);
  g_assert_cmpmem(p[1].array->view.data, 3, "abc", 3);
  g_assert_cmpstr(p[2].name, ==, "v2");
  g_assert_true(p[2].is_aux);
  g_assert_cmpint(((gint64 *)p[2].array->view.data)[0], ==, 0x0102030405060708);
  g_assert_cmpstr(p[3].name, ==, "v3");
  g_assert_cmpint(p[3].array->view.ndim, ==, 0);
  g_assert_cmpfloat(*(float *)p[3].array->view.data, ==, 1.0f);

  /* mx.nd.save of a list stores no names: arrays are named by position. */
  GByteArray *u = list_header(2);
  for (int i = 0; i < 2; i++) {
    put_u32(u, V2_MAGIC);
    put_u32(u, 0);
    put_u32(u, 1);
    put_u64(u, 1);
    put_ctx_type(u, 1, 5);
    guint8 v = (guint8)i;
    g_byte_array_append(u, &v, 1);
  }
  put_u64(u, 0);
  g_autoptr(DsParams) unnamed = load_bytes(u, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(unnamed->items[0].name, ==, "0");
  g_assert_cmpstr(unnamed->items[1].name, ==, "1");
  g_assert_cmpint(*(gint8 *)unnamed->items[1].array->view.data, ==, 1);

  /* An empty list. */
  GByteArray *e = list_header(0);
  put_u64(e, 0);
  g_autoptr(DsParams) none = load_bytes(e, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(none->n_items, ==, 0);
}

static void test_truncated_everywhere(void)
{
  static const int64_t s2[] = {2, 3}, s1[] = {4};
  DsParam items[] = {
      {"w", FALSE, filled(DS_DTYPE_FLOAT32, 2, s2, 1)},
      {"moving_var", TRUE, filled(DS_DTYPE_INT64, 1, s1, 2)},
  };
  gsize len;
  g_autofree guint8 *bytes = ds_params_encode(items, 2, &len);
  for (gsize cut = 0; cut < len; cut++) {
    GError *error = NULL;
    /* A copy of exactly `cut` bytes, so reading past the end is caught by sanitizers. */
    g_autofree guint8 *copy = g_memdup2(bytes, MAX(cut, 1));
    DsParams *params = ds_params_load_data(cut > 0 ? copy : NULL, cut, "cut.params", &error);
    g_assert_null(params);
    g_assert_error(error, DS_ERROR, DS_ERROR_PARSE);
    g_assert_nonnull(strstr(error->message, "cut.params"));
    g_error_free(error);
  }
  GError *error = NULL;
  g_autoptr(DsParams) whole = ds_params_load_data(bytes, len, "whole.params", &error);
  g_assert_no_error(error);
  g_assert_cmpuint(whole->n_items, ==, 2);
  /* Bytes after the names are refused too. */
  g_autofree guint8 *longer = g_malloc0(len + 1);
  memcpy(longer, bytes, len);
  g_assert_null(ds_params_load_data(longer, len + 1, "long.params", &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_PARSE);
  g_clear_error(&error);
  for (guint i = 0; i < 2; i++)
    ds_ndarray_free(items[i].array);
}

typedef struct {
  GByteArray *bytes;
  int code;
  const char *message;
} BadCase;

static GByteArray *v2_record_header(guint64 n_arrays, guint32 stype, guint32 ndim)
{
  GByteArray *b = list_header(n_arrays);
  put_u32(b, V2_MAGIC);
  put_u32(b, stype);
  put_u32(b, ndim);
  return b;
}

static void test_bad_files(void)
{
  BadCase cases[16];
  guint n = 0;

  GByteArray *b = list_header(G_GUINT64_CONSTANT(1) << 60);
  put_u64(b, 0);
  cases[n++] = (BadCase){b, DS_ERROR_PARSE, "claims 1152921504606846976 arrays"};

  b = v2_record_header(1, 0, 2);
  put_u64(b, G_GUINT64_CONSTANT(1) << 40);
  put_u64(b, G_GUINT64_CONSTANT(1) << 40);
  put_ctx_type(b, 1, 0);
  cases[n++] = (BadCase){b, DS_ERROR_LIMIT, "array 0"};

  b = v2_record_header(1, 0, 1);
  put_u64(b, G_GUINT64_CONSTANT(1) << 40);
  put_ctx_type(b, 1, 0);
  put_u64(b, 0);
  cases[n++] = (BadCase){b, DS_ERROR_PARSE, "truncated in array 0 (its data)"};

  b = v2_record_header(1, 0, 1000);
  cases[n++] = (BadCase){b, DS_ERROR_LIMIT, "1000 dimensions"};

  b = v2_record_header(1, 1, 1);
  cases[n++] = (BadCase){b, DS_ERROR_UNSUPPORTED, "sparse storage (row_sparse)"};

  b = v2_record_header(1, 2, 1);
  cases[n++] = (BadCase){b, DS_ERROR_UNSUPPORTED, "sparse storage (csr)"};

  b = v2_record_header(1, 7, 1);
  cases[n++] = (BadCase){b, DS_ERROR_PARSE, "unknown storage type 7"};

  b = v2_record_header(1, 0, 0);
  cases[n++] = (BadCase){b, DS_ERROR_UNSUPPORTED, "none"};

  b = v2_record_header(1, 0, 1);
  put_u64(b, 2);
  put_ctx_type(b, 1, 13);
  cases[n++] = (BadCase){b, DS_ERROR_UNSUPPORTED, "type flag 13"};

  b = v2_record_header(1, 0, 1);
  put_u64(b, (guint64)-5);
  cases[n++] = (BadCase){b, DS_ERROR_PARSE, "negative"};

  b = list_header(1);
  put_u32(b, 0x12345678);
  cases[n++] = (BadCase){b, DS_ERROR_PARSE, "unknown record magic 0x12345678"};

  b = v2_record_header(1, 0, 1);
  put_u64(b, 1);
  put_ctx_type(b, 1, 3);
  g_byte_array_append(b, (const guint8 *)"x", 1);
  put_u64(b, 2);
  cases[n++] = (BadCase){b, DS_ERROR_PARSE, "2 names for 1 arrays"};

  b = v2_record_header(1, 0, 1);
  put_u64(b, 1);
  put_ctx_type(b, 1, 3);
  g_byte_array_append(b, (const guint8 *)"x", 1);
  put_u64(b, 1);
  put_u64(b, G_GUINT64_CONSTANT(1) << 62);
  cases[n++] = (BadCase){b, DS_ERROR_PARSE, "the name of array 0"};

  b = g_byte_array_new();
  put_u64(b, 0x113);
  put_u64(b, 0);
  cases[n++] = (BadCase){b, DS_ERROR_PARSE, "not an MXNet .params file"};

  for (guint i = 0; i < n; i++) {
    GError *error = NULL;
    g_test_message("case %u", i);
    DsParams *params = load_bytes(cases[i].bytes, &error);
    g_assert_null(params);
    g_assert_error(error, DS_ERROR, cases[i].code);
    g_assert_nonnull(strstr(error->message, "hand.params"));
    g_assert_nonnull(strstr(error->message, cases[i].message));
    g_error_free(error);
  }

  GError *error = NULL;
  g_assert_null(ds_params_load("/nonexistent/dir/x.params", &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_IO);
  g_assert_nonnull(strstr(error->message, "/nonexistent/dir/x.params"));
  g_clear_error(&error);
  DsParam item = {"w", FALSE, filled(DS_DTYPE_FLOAT32, 1, (int64_t[]){2}, 0)};
  g_assert_false(ds_params_save("/nonexistent/dir/x.params", &item, 1, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_IO);
  g_clear_error(&error);
  ds_ndarray_free(item.array);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/engine/params/roundtrip", test_roundtrip);
  g_test_add_func("/engine/params/layouts", test_layouts);
  g_test_add_func("/engine/params/truncated-everywhere", test_truncated_everywhere);
  g_test_add_func("/engine/params/bad-files", test_bad_files);
  return g_test_run();
}
