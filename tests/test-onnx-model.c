/* test-onnx-model.c: the protobuf wire reader and the ONNX model decoder.
 *
 * Most models here are written byte by byte with a small protobuf writer, so each test says
 * exactly what is in the file, malformed files included; each error test checks the message.
 * The last test has the `onnx` Python package (through tests/make_onnx_cases.py) write real
 * models and a JSON account of them, and compares that with what the decoder read; it is
 * skipped when /usr/bin/python3 cannot import onnx.
 */
#include <cjson/cJSON.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "ds-test-tmpdir.h"
#include "ds-config.h"
#include "ds-error.h"
#include "ds-onnx-model.h"
#include "ds-protobuf.h"

#define PYTHON "/usr/bin/python3"

/* ---- A tiny protobuf writer -------------------------------------------------------------- */

static GByteArray *msg_new(void)
{
  return g_byte_array_new();
}

static void w_varint(GByteArray *b, guint64 v)
{
  do {
    guint8 byte = (guint8)(v & 0x7f);
    v >>= 7;
    if (v != 0)
      byte |= 0x80;
    g_byte_array_append(b, &byte, 1);
  } while (v != 0);
}

static void w_tag(GByteArray *b, guint32 field, guint wire)
{
  w_varint(b, (guint64)field << 3 | wire);
}

static void w_int(GByteArray *b, guint32 field, int64_t v)
{
  w_tag(b, field, 0);
  w_varint(b, (guint64)v);
}

static void w_float(GByteArray *b, guint32 field, float f)
{
  guint32 bits;
  memcpy(&bits, &f, 4);
  guint8 le[4] = {bits & 0xff, (bits >> 8) & 0xff, (bits >> 16) & 0xff, bits >> 24};
  w_tag(b, field, 5);
  g_byte_array_append(b, le, 4);
}

static void w_bytes(GByteArray *b, guint32 field, const void *data, gsize len)
{
  w_tag(b, field, 2);
  w_varint(b, len);
  g_byte_array_append(b, data, (guint)len);
}

static void w_str(GByteArray *b, guint32 field, const char *s)
{
  w_bytes(b, field, s, strlen(s));
}

/* Appends `sub` as a nested message and frees it. */
static void w_msg(GByteArray *b, guint32 field, GByteArray *sub)
{
  w_bytes(b, field, sub->data, sub->len);
  g_byte_array_unref(sub);
}

static void w_packed_int64(GByteArray *b, guint32 field, const int64_t *v, gsize n)
{
  GByteArray *run = msg_new();
  for (gsize i = 0; i < n; i++)
    w_varint(run, (guint64)v[i]);
  w_msg(b, field, run);
}

/* ---- ONNX messages built from the writer --------------------------------------------------- */

/* A ValueInfoProto of a float tensor whose dims are given as text: "N,3,?,7" (a number is a
 * dim_value, "?" a dimension with neither field, anything else a dim_param). */
static GByteArray *value_info(const char *name, int elem_type, const char *dims)
{
  GByteArray *shape = msg_new();
  g_auto(GStrv) parts = g_strsplit(dims, ",", -1);
  for (int i = 0; dims[0] != '\0' && parts[i] != NULL; i++) {
    GByteArray *dim = msg_new();
    if (g_ascii_isdigit(parts[i][0]))
      w_int(dim, 1, g_ascii_strtoll(parts[i], NULL, 10));
    else if (strcmp(parts[i], "?") != 0)
      w_str(dim, 2, parts[i]);
    w_msg(shape, 1, dim);
  }
  GByteArray *tensor_type = msg_new();
  w_int(tensor_type, 1, elem_type);
  w_msg(tensor_type, 2, shape);
  GByteArray *type = msg_new();
  w_msg(type, 1, tensor_type);
  GByteArray *vi = msg_new();
  w_str(vi, 1, name);
  w_msg(vi, 2, type);
  return vi;
}

static GByteArray *tensor_head(const char *name, int data_type, const int64_t *dims, gsize n_dims)
{
  GByteArray *t = msg_new();
  w_packed_int64(t, 1, dims, n_dims);
  w_int(t, 2, data_type);
  if (name != NULL)
    w_str(t, 8, name);
  return t;
}

static GByteArray *tensor_raw(const char *name, int data_type, const int64_t *dims, gsize n_dims,
                              const void *raw, gsize len)
{
  GByteArray *t = tensor_head(name, data_type, dims, n_dims);
  w_bytes(t, 9, raw, len);
  return t;
}

/* float_data, unpacked (one tag per value), which readers must accept as well as packed. */
static GByteArray *tensor_floats(const char *name, const int64_t *dims, gsize n_dims,
                                 const float *values, gsize n)
{
  GByteArray *t = tensor_head(name, DS_ONNX_FLOAT, dims, n_dims);
  for (gsize i = 0; i < n; i++)
    w_float(t, 4, values[i]);
  return t;
}

static GByteArray *attr_head(const char *name, DsOnnxAttrType type)
{
  GByteArray *a = msg_new();
  w_str(a, 1, name);
  w_int(a, 20, type);
  return a;
}

static GByteArray *attr_int(const char *name, int64_t v)
{
  GByteArray *a = attr_head(name, DS_ONNX_ATTR_INT);
  w_int(a, 3, v);
  return a;
}

static GByteArray *attr_float(const char *name, float v)
{
  GByteArray *a = attr_head(name, DS_ONNX_ATTR_FLOAT);
  w_float(a, 2, v);
  return a;
}

static GByteArray *attr_string(const char *name, const char *v)
{
  GByteArray *a = attr_head(name, DS_ONNX_ATTR_STRING);
  w_str(a, 4, v);
  return a;
}

static GByteArray *attr_ints_packed(const char *name, const int64_t *v, gsize n)
{
  GByteArray *a = attr_head(name, DS_ONNX_ATTR_INTS);
  w_packed_int64(a, 8, v, n);
  return a;
}

static GByteArray *attr_ints_unpacked(const char *name, const int64_t *v, gsize n)
{
  GByteArray *a = attr_head(name, DS_ONNX_ATTR_INTS);
  for (gsize i = 0; i < n; i++)
    w_int(a, 8, v[i]);
  return a;
}

static GByteArray *attr_graph(const char *name, GByteArray *graph)
{
  GByteArray *a = attr_head(name, DS_ONNX_ATTR_GRAPH);
  w_msg(a, 6, graph);
  return a;
}

/* A NodeProto; `inputs` and `outputs` are comma-separated ("" items allowed), the attributes a
 * NULL-terminated list taken over. The fields go in the order writers use. */
static GByteArray *node(const char *name, const char *op_type, const char *inputs,
                        const char *outputs, ...)
{
  GByteArray *n = msg_new();
  g_auto(GStrv) ins = g_strsplit(inputs, ",", -1);
  g_auto(GStrv) outs = g_strsplit(outputs, ",", -1);
  for (int i = 0; inputs[0] != '\0' && ins[i] != NULL; i++)
    w_str(n, 1, ins[i]);
  for (int i = 0; outputs[0] != '\0' && outs[i] != NULL; i++)
    w_str(n, 2, outs[i]);
  if (name != NULL)
    w_str(n, 3, name);
  if (op_type != NULL)
    w_str(n, 4, op_type);
  va_list args;
  va_start(args, outputs);
  GByteArray *attr;
  while ((attr = va_arg(args, GByteArray *)) != NULL)
    w_msg(n, 5, attr);
  va_end(args);
  return n;
}

/* A GraphProto with one node per item of the NULL-terminated list (taken over), then its name:
 * the order writers use, nodes first. Inputs and outputs are added by the caller. */
static GByteArray *graph(const char *name, ...)
{
  GByteArray *g = msg_new();
  va_list args;
  va_start(args, name);
  GByteArray *n;
  while ((n = va_arg(args, GByteArray *)) != NULL)
    w_msg(g, 1, n);
  va_end(args);
  w_str(g, 2, name);
  return g;
}

/* A ModelProto: ir_version 8, opset "" 13, then the graph (taken over). */
static GByteArray *model(GByteArray *g)
{
  GByteArray *m = msg_new();
  w_int(m, 1, 8);
  w_str(m, 2, "test-writer");
  w_str(m, 3, "0.1");
  w_msg(m, 7, g);
  GByteArray *opset = msg_new();
  w_str(opset, 1, "");
  w_int(opset, 2, 13);
  w_msg(m, 8, opset);
  return m;
}

static DsOnnxModel *parse(GByteArray *bytes, GError **error)
{
  return ds_onnx_model_parse(bytes->data, bytes->len, "test.onnx", error);
}

/* Parses `bytes` (taken over), which must fail with `code` and a message containing each
 * NULL-terminated fragment. */
static void expect_error(GByteArray *bytes, int code, ...)
{
  GError *error = NULL;
  DsOnnxModel *m = parse(bytes, &error);
  g_assert_null(m);
  g_assert_nonnull(error);
  g_test_message("error: %s", error->message);
  g_assert_error(error, DS_ERROR, code);
  g_assert_true(g_str_has_prefix(error->message, "test.onnx: "));
  g_assert_null(strchr(error->message, '\n'));
  va_list args;
  va_start(args, code);
  const char *fragment;
  while ((fragment = va_arg(args, const char *)) != NULL) {
    if (strstr(error->message, fragment) == NULL)
      g_error("message \"%s\" lacks \"%s\"", error->message, fragment);
  }
  va_end(args);
  g_error_free(error);
  g_byte_array_unref(bytes);
}

static GByteArray *bytes_of(const char *data, gsize len)
{
  GByteArray *b = msg_new();
  g_byte_array_append(b, (const guint8 *)data, (guint)len);
  return b;
}

/* ---- The wire reader ----------------------------------------------------------------------- */

static void test_protobuf_varints(void)
{
  GError *error = NULL;
  guint64 v;
  DsPbReader r;

  /* The largest value: nine 0xff bytes and a final 0x01. */
  static const guint8 max[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  ds_pb_reader_init(&r, max, sizeof max, "v", "Test");
  g_assert_true(ds_pb_read_varint(&r, &v, &error));
  g_assert_no_error(error);
  g_assert_cmpuint(v, ==, G_MAXUINT64);
  g_assert_false(ds_pb_more(&r));

  /* A tenth byte of 2 would be bit 64. */
  static const guint8 over[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
  ds_pb_reader_init(&r, over, sizeof over, "v", "Test");
  g_assert_false(ds_pb_read_varint(&r, &v, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_PARSE);
  g_assert_nonnull(strstr(error->message, "overflows 64 bits"));
  g_clear_error(&error);

  /* Eleven bytes. */
  static const guint8 longer[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x81, 0x00};
  ds_pb_reader_init(&r, longer, sizeof longer, "v", "Test");
  g_assert_false(ds_pb_read_varint(&r, &v, &error));
  g_assert_nonnull(strstr(error->message, "longer than 10 bytes"));
  g_clear_error(&error);

  /* Zigzag and int32 sign extension. */
  static const guint8 zz[] = {0x03, 0x04};
  ds_pb_reader_init(&r, zz, sizeof zz, "v", "Test");
  int64_t s;
  g_assert_true(ds_pb_read_sint64(&r, &s, &error));
  g_assert_cmpint(s, ==, -2);
  g_assert_true(ds_pb_read_sint64(&r, &s, &error));
  g_assert_cmpint(s, ==, 2);
  static const guint8 minus_one[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  ds_pb_reader_init(&r, minus_one, sizeof minus_one, "v", "Test");
  int32_t i32;
  g_assert_true(ds_pb_read_int32(&r, &i32, &error));
  g_assert_cmpint(i32, ==, -1);
  static const guint8 big[] = {0x80, 0x80, 0x80, 0x80, 0x10};
  ds_pb_reader_init(&r, big, sizeof big, "v", "Test");
  g_assert_false(ds_pb_read_int32(&r, &i32, &error));
  g_assert_nonnull(strstr(error->message, "expected a 32-bit integer"));
  g_clear_error(&error);
}

static void test_protobuf_fields(void)
{
  GError *error = NULL;
  DsPbReader r;
  guint32 field;
  DsPbWire wire;

  /* Every valid wire type is skipped; then field 3 has ints packed and unpacked. */
  GByteArray *b = msg_new();
  w_int(b, 9, 300);
  w_tag(b, 10, 1);
  g_byte_array_append(b, (const guint8 *)"12345678", 8);
  w_str(b, 11, "skip me");
  w_float(b, 12, 1.0f);
  int64_t packed[] = {1, -1, 1 << 20};
  w_packed_int64(b, 3, packed, 3);
  w_int(b, 3, 42);
  ds_pb_reader_init(&r, b->data, b->len, "f", "Test");
  g_autoptr(GArray) ints = g_array_new(FALSE, FALSE, sizeof(int64_t));
  while (ds_pb_more(&r)) {
    g_assert_true(ds_pb_read_tag(&r, &field, &wire, &error));
    if (field == 3)
      g_assert_true(ds_pb_read_repeated_int64(&r, wire, ints, &error));
    else
      g_assert_true(ds_pb_skip(&r, wire, &error));
    g_assert_no_error(error);
  }
  g_assert_cmpuint(ints->len, ==, 4);
  g_assert_cmpint(g_array_index(ints, int64_t, 1), ==, -1);
  g_assert_cmpint(g_array_index(ints, int64_t, 2), ==, 1 << 20);
  g_assert_cmpint(g_array_index(ints, int64_t, 3), ==, 42);
  g_byte_array_unref(b);

  /* Packed floats must be whole values. */
  b = msg_new();
  w_bytes(b, 4, "\0\0\x80\x3f\0\0", 6);
  ds_pb_reader_init(&r, b->data, b->len, "f", "Test");
  g_autoptr(GArray) floats = g_array_new(FALSE, FALSE, sizeof(float));
  g_assert_true(ds_pb_read_tag(&r, &field, &wire, &error));
  g_assert_false(ds_pb_read_repeated_float(&r, wire, floats, &error));
  g_assert_nonnull(strstr(error->message, "not a multiple of 4"));
  g_clear_error(&error);
  g_byte_array_unref(b);

  /* A truncated fixed64, and field number 0. */
  static const guint8 short64[] = {0x09, 1, 2, 3};
  ds_pb_reader_init(&r, short64, sizeof short64, "f", "Test");
  g_assert_true(ds_pb_read_tag(&r, &field, &wire, &error));
  g_assert_false(ds_pb_skip(&r, wire, &error));
  g_assert_nonnull(strstr(error->message, "f: byte 1 (Test): expected a 64-bit value"));
  g_clear_error(&error);
  static const guint8 zero_field[] = {0x02, 0x00};
  ds_pb_reader_init(&r, zero_field, sizeof zero_field, "f", "Test");
  g_assert_false(ds_pb_read_tag(&r, &field, &wire, &error));
  g_assert_nonnull(strstr(error->message, "field number 0"));
  g_clear_error(&error);

  /* A nested message's reader stops at its end, not the buffer's. */
  b = msg_new();
  GByteArray *inner = msg_new();
  w_int(inner, 1, 5);
  w_msg(b, 1, inner);
  w_int(b, 2, 6);
  ds_pb_reader_init(&r, b->data, b->len, "f", "Outer");
  DsPbReader sub;
  g_assert_true(ds_pb_read_tag(&r, &field, &wire, &error));
  g_assert_true(ds_pb_enter(&r, &sub, "Inner", &error));
  g_assert_cmpuint(sub.depth, ==, 1);
  guint64 v;
  g_assert_true(ds_pb_read_tag(&sub, &field, &wire, &error));
  g_assert_true(ds_pb_read_varint(&sub, &v, &error));
  g_assert_cmpuint(v, ==, 5);
  g_assert_false(ds_pb_more(&sub));
  g_assert_true(ds_pb_more(&r));
  g_byte_array_unref(b);
}

/* ---- Decoding models ----------------------------------------------------------------------- */

/* The Conv model: opsets, a Conv with int, ints, float and string attributes, a raw_data and a
 * float_data initializer, an input (N, 3, H, W) and an output with an unknown dim. */
static GByteArray *conv_model(void)
{
  int64_t w_dims[] = {2, 3, 1, 1};
  float w_values[6] = {1, 2, 3, 4, 5, 6.5f};
  int64_t b_dims[] = {2};
  float b_values[] = {0.25f, -1};
  int64_t kernel[] = {1, 1};
  int64_t pads[] = {0, 0, 0, 0};
  GByteArray *g =
      graph("main",
            node("conv1", "Conv", "X,W,B", "Y", attr_ints_packed("kernel_shape", kernel, 2),
                 attr_ints_unpacked("pads", pads, 4), attr_int("group", 1),
                 attr_float("epsilon", 0.125f), attr_string("auto_pad", "NOTSET"), NULL),
            node("", "Clip", "Y,,hi", "Z", NULL), NULL);
  w_msg(g, 5, tensor_raw("W", DS_ONNX_FLOAT, w_dims, 4, w_values, sizeof w_values));
  w_msg(g, 5, tensor_floats("B", b_dims, 1, b_values, 2));
  w_msg(g, 11, value_info("X", DS_ONNX_FLOAT, "N,3,H,W"));
  w_msg(g, 12, value_info("Z", DS_ONNX_FLOAT, "N,2,?,W"));
  GByteArray *m = model(g);
  GByteArray *opset = msg_new();
  w_str(opset, 1, "com.microsoft");
  w_int(opset, 2, 1);
  w_msg(m, 8, opset);
  return m;
}

static void test_model_conv(void)
{
  GError *error = NULL;
  GByteArray *bytes = conv_model();
  g_autoptr(DsOnnxModel) m = parse(bytes, &error);
  g_byte_array_unref(bytes);
  g_assert_no_error(error);

  g_assert_cmpint(m->ir_version, ==, 8);
  g_assert_cmpstr(m->producer_name, ==, "test-writer");
  g_assert_cmpstr(m->producer_version, ==, "0.1");
  g_assert_cmpstr(m->display_name, ==, "test.onnx");
  g_assert_cmpuint(m->n_opsets, ==, 2);
  g_assert_cmpstr(m->opsets[0].domain, ==, "");
  g_assert_cmpint(m->opsets[0].version, ==, 13);
  g_assert_cmpstr(m->opsets[1].domain, ==, "com.microsoft");
  g_assert_cmpint(m->opsets[1].version, ==, 1);

  const DsOnnxGraph *g = m->graph;
  g_assert_cmpstr(g->name, ==, "main");
  g_assert_cmpuint(g->n_nodes, ==, 2);
  const DsOnnxNode *conv = &g->nodes[0];
  g_assert_cmpstr(conv->name, ==, "conv1");
  g_assert_cmpstr(conv->op_type, ==, "Conv");
  g_assert_cmpstr(conv->domain, ==, "");
  g_assert_cmpuint(conv->n_inputs, ==, 3);
  g_assert_cmpstr(conv->inputs[1], ==, "W");
  g_assert_cmpuint(conv->n_outputs, ==, 1);
  g_assert_cmpstr(conv->outputs[0], ==, "Y");
  g_assert_cmpuint(conv->n_attributes, ==, 5);
  const DsOnnxAttribute *a = ds_onnx_node_find_attribute(conv, "kernel_shape");
  g_assert_nonnull(a);
  g_assert_cmpint(a->type, ==, DS_ONNX_ATTR_INTS);
  g_assert_cmpuint(a->n_ints, ==, 2);
  g_assert_cmpint(a->ints[1], ==, 1);
  a = ds_onnx_node_find_attribute(conv, "pads");
  g_assert_cmpuint(a->n_ints, ==, 4);
  a = ds_onnx_node_find_attribute(conv, "group");
  g_assert_cmpint(a->type, ==, DS_ONNX_ATTR_INT);
  g_assert_cmpint(a->i, ==, 1);
  a = ds_onnx_node_find_attribute(conv, "epsilon");
  g_assert_cmpint(a->type, ==, DS_ONNX_ATTR_FLOAT);
  g_assert_cmpfloat(a->f, ==, 0.125f);
  a = ds_onnx_node_find_attribute(conv, "auto_pad");
  g_assert_cmpint(a->type, ==, DS_ONNX_ATTR_STRING);
  g_assert_cmpuint(a->s.len, ==, 6);
  g_assert_cmpstr(a->s.data, ==, "NOTSET");
  g_assert_null(ds_onnx_node_find_attribute(conv, "dilations"));

  /* An omitted optional input is an empty name. */
  const DsOnnxNode *clip = &g->nodes[1];
  g_assert_cmpstr(clip->name, ==, "");
  g_assert_cmpuint(clip->n_inputs, ==, 3);
  g_assert_cmpstr(clip->inputs[1], ==, "");
  g_assert_cmpstr(clip->inputs[2], ==, "hi");

  g_assert_cmpuint(g->n_initializers, ==, 2);
  const DsOnnxTensor *w = &g->initializers[0];
  g_assert_cmpstr(w->name, ==, "W");
  g_assert_cmpint(w->data_type, ==, DS_ONNX_FLOAT);
  g_assert_cmpuint(w->n_dims, ==, 4);
  g_assert_cmpint(w->dims[1], ==, 3);
  g_assert_cmpuint(w->n_elements, ==, 6);
  g_assert_cmpuint(w->n_bytes, ==, 24);
  g_assert_cmpint(w->data, ==, DS_ONNX_DATA_RAW);
  float w_back[6];
  memcpy(w_back, w->raw_data, sizeof w_back);
  g_assert_cmpfloat(w_back[5], ==, 6.5f);
  const DsOnnxTensor *b = &g->initializers[1];
  g_assert_cmpint(b->data, ==, DS_ONNX_DATA_FLOAT);
  g_assert_cmpuint(b->n_values, ==, 2);
  g_assert_cmpfloat(b->float_data[0], ==, 0.25f);
  g_assert_cmpfloat(b->float_data[1], ==, -1.0f);
  g_assert_null(b->raw_data);

  g_assert_cmpuint(g->n_inputs, ==, 1);
  const DsOnnxValueInfo *x = &g->inputs[0];
  g_assert_cmpstr(x->name, ==, "X");
  g_assert_cmpint(x->kind, ==, DS_ONNX_TYPE_TENSOR);
  g_assert_cmpint(x->elem_type, ==, DS_ONNX_FLOAT);
  g_assert_true(x->has_shape);
  g_assert_cmpuint(x->n_dims, ==, 4);
  g_assert_cmpint(x->dims[0].kind, ==, DS_ONNX_DIM_PARAM);
  g_assert_cmpstr(x->dims[0].param, ==, "N");
  g_assert_cmpint(x->dims[1].kind, ==, DS_ONNX_DIM_VALUE);
  g_assert_cmpint(x->dims[1].value, ==, 3);
  g_assert_cmpstr(x->dims[2].param, ==, "H");
  g_assert_cmpstr(x->dims[3].param, ==, "W");
  g_assert_true(ds_onnx_value_require_tensor(m, x, "input", &error));
  const DsOnnxValueInfo *z = &g->outputs[0];
  g_assert_cmpint(z->dims[1].value, ==, 2);
  g_assert_cmpint(z->dims[2].kind, ==, DS_ONNX_DIM_UNKNOWN);
  g_assert_null(z->dims[2].param);
}

/* A Loop whose body holds an If whose branches each hold a node: three graphs deep. */
static GByteArray *loop_if_model(void)
{
  GByteArray *then_g = graph("then_branch", node("one", "Constant", "", "t_out", NULL), NULL);
  w_msg(then_g, 12, value_info("t_out", DS_ONNX_FLOAT, "1"));
  GByteArray *else_g = graph("else_branch", node("two", "Neg", "x", "e_out", NULL), NULL);
  w_msg(else_g, 12, value_info("e_out", DS_ONNX_FLOAT, "1"));
  GByteArray *body = graph("loop_body",
                           node("pick", "If", "cond", "delta", attr_graph("then_branch", then_g),
                                attr_graph("else_branch", else_g), NULL),
                           node("step", "Add", "x,delta", "x_next", NULL),
                           node("again", "Identity", "cond", "cond_out", NULL), NULL);
  w_msg(body, 11, value_info("iter", DS_ONNX_INT64, ""));
  w_msg(body, 11, value_info("cond", DS_ONNX_BOOL, ""));
  w_msg(body, 11, value_info("x", DS_ONNX_FLOAT, "1"));
  w_msg(body, 12, value_info("cond_out", DS_ONNX_BOOL, ""));
  w_msg(body, 12, value_info("x_next", DS_ONNX_FLOAT, "1"));
  GByteArray *g =
      graph("top", node("loop", "Loop", "M,,x0", "x_final", attr_graph("body", body), NULL), NULL);
  w_msg(g, 11, value_info("M", DS_ONNX_INT64, ""));
  w_msg(g, 11, value_info("x0", DS_ONNX_FLOAT, "1"));
  w_msg(g, 12, value_info("x_final", DS_ONNX_FLOAT, "1"));
  return model(g);
}

static void test_model_subgraphs(void)
{
  GError *error = NULL;
  GByteArray *bytes = loop_if_model();
  g_autoptr(DsOnnxModel) m = parse(bytes, &error);
  g_byte_array_unref(bytes);
  g_assert_no_error(error);

  const DsOnnxNode *loop = &m->graph->nodes[0];
  g_assert_cmpstr(loop->op_type, ==, "Loop");
  g_assert_cmpstr(loop->inputs[1], ==, "");
  const DsOnnxAttribute *body_attr = ds_onnx_node_find_attribute(loop, "body");
  g_assert_nonnull(body_attr);
  g_assert_cmpint(body_attr->type, ==, DS_ONNX_ATTR_GRAPH);
  const DsOnnxGraph *body = body_attr->g;
  g_assert_cmpstr(body->name, ==, "loop_body");
  g_assert_cmpuint(body->n_nodes, ==, 3);
  g_assert_cmpuint(body->n_inputs, ==, 3);
  g_assert_cmpuint(body->n_outputs, ==, 2);
  /* A scalar: a shape with no dims, not an unknown shape. */
  g_assert_true(body->inputs[0].has_shape);
  g_assert_cmpuint(body->inputs[0].n_dims, ==, 0);

  const DsOnnxNode *pick = &body->nodes[0];
  g_assert_cmpstr(pick->op_type, ==, "If");
  const DsOnnxAttribute *then_attr = ds_onnx_node_find_attribute(pick, "then_branch");
  const DsOnnxAttribute *else_attr = ds_onnx_node_find_attribute(pick, "else_branch");
  g_assert_nonnull(then_attr);
  g_assert_nonnull(else_attr);
  g_assert_cmpstr(then_attr->g->name, ==, "then_branch");
  g_assert_cmpstr(then_attr->g->nodes[0].op_type, ==, "Constant");
  g_assert_cmpstr(else_attr->g->name, ==, "else_branch");
  g_assert_cmpstr(else_attr->g->nodes[0].op_type, ==, "Neg");
  g_assert_cmpstr(else_attr->g->outputs[0].name, ==, "e_out");
  g_assert_cmpstr(body->nodes[2].outputs[0], ==, "cond_out");
}

/* A graph nesting `levels` Loop bodies. */
static GByteArray *nested_loops(int levels)
{
  GByteArray *g = graph("innermost", node("leaf", "Identity", "a", "b", NULL), NULL);
  for (int i = 0; i < levels; i++) {
    g_autofree char *name = g_strdup_printf("level%d", i);
    g = graph(name, node(name, "Loop", "", "", attr_graph("body", g), NULL), NULL);
  }
  return model(g);
}

static void test_model_depth(void)
{
  /* Each level of subgraph is three messages deep (graph, node, attribute): 20 levels fit under
   * the limit of 64, 25 do not. */
  GError *error = NULL;
  GByteArray *ok = nested_loops(20);
  g_autoptr(DsOnnxModel) m = parse(ok, &error);
  g_assert_no_error(error);
  g_byte_array_unref(ok);
  expect_error(nested_loops(25), DS_ERROR_LIMIT, "nested more than 64 deep", "byte ", NULL);
}

/* A model around one initializer (taken over). */
static GByteArray *model_with_initializer(GByteArray *tensor)
{
  GByteArray *g = graph("g", node("n", "Identity", "t", "u", NULL), NULL);
  w_msg(g, 5, tensor);
  return model(g);
}

static void test_model_wire_errors(void)
{
  /* Truncated varint: ir_version's value starts with a continuation byte, then the data ends. */
  expect_error(bytes_of("\x08\x80", 2), DS_ERROR_PARSE, "byte 1 (ModelProto)", "truncated varint",
               NULL);
  /* The graph claims 16 bytes, 1 follows. */
  expect_error(bytes_of("\x08\x08\x3a\x10\x0a", 5), DS_ERROR_PARSE, "byte 3 (ModelProto)",
               "length of 16 bytes runs past the end", NULL);
  /* Wire type 3, a group. */
  expect_error(bytes_of("\x08\x08\x0b", 3), DS_ERROR_PARSE, "byte 2", "wire type 3 (a group)",
               NULL);
  /* Wire types 6 and 7 do not exist. */
  expect_error(bytes_of("\x0e", 1), DS_ERROR_PARSE, "byte 0", "wire type 6", NULL);
  /* A known field with the wrong wire type: producer_name as a varint. */
  expect_error(bytes_of("\x08\x08\x10\x01", 4), DS_ERROR_PARSE, "byte 2",
               "field 2 is varint (wire type 0), expected length-delimited", NULL);
  /* A nested message whose last field runs past the message, though not past the buffer. */
  expect_error(bytes_of("\x3a\x02\x12\x05hello", 9), DS_ERROR_PARSE, "(GraphProto)",
               "runs past the end of the message", NULL);
  /* Well-formed, but no graph. */
  expect_error(bytes_of("\x08\x08", 2), DS_ERROR_PARSE, "the model has no graph", NULL);
  /* A name that is not UTF-8. */
  expect_error(bytes_of("\x08\x08\x12\x02\xff\xfe", 6), DS_ERROR_PARSE, "byte 2",
               "expected a UTF-8 string", NULL);
  /* A graph appearing twice. */
  expect_error(bytes_of("\x3a\x00\x3a\x00", 4), DS_ERROR_PARSE, "appears twice", NULL);
}

static void test_model_tensor_errors(void)
{
  int64_t dims_2x3[] = {2, 3};
  float f2[2] = {1, 2};
  expect_error(model_with_initializer(tensor_raw("t", DS_ONNX_FLOAT, dims_2x3, 2, f2, sizeof f2)),
               DS_ERROR_PARSE,
               "graph 'g': tensor 't': raw_data is 8 bytes, its dims and float "
               "call for 24",
               NULL);

  int64_t negative[] = {2, -3};
  expect_error(model_with_initializer(tensor_raw("neg", DS_ONNX_FLOAT, negative, 2, f2, 8)),
               DS_ERROR_PARSE, "tensor 'neg': dim 1 is -3", NULL);

  /* 2^40 * 2^40 elements: the product overflows before any size is compared. */
  int64_t huge[] = {(int64_t)1 << 40, (int64_t)1 << 40};
  expect_error(model_with_initializer(tensor_raw("huge", DS_ONNX_FLOAT, huge, 2, f2, 8)),
               DS_ERROR_LIMIT, "tensor 'huge': the product of its 2 dims overflows 64 bits", NULL);
  /* 2^62 elements fit in 64 bits, their 2^64 bytes of float do not. */
  int64_t wide[] = {(int64_t)1 << 62};
  expect_error(model_with_initializer(tensor_raw("wide", DS_ONNX_FLOAT, wide, 1, f2, 8)),
               DS_ERROR_LIMIT, "tensor 'wide'", "overflow 64 bits of bytes", NULL);
  /* A zero dim makes the tensor empty however large the others are. */
  int64_t empty[] = {(int64_t)1 << 62, 0, (int64_t)1 << 62};
  GError *error = NULL;
  GByteArray *bytes = model_with_initializer(tensor_raw("e", DS_ONNX_FLOAT, empty, 3, "", 0));
  g_autoptr(DsOnnxModel) m = parse(bytes, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(m->graph->initializers[0].n_elements, ==, 0);
  g_byte_array_unref(bytes);

  /* float_data with too few values; int64 values in float_data; raw_data and float_data. */
  expect_error(model_with_initializer(tensor_floats("few", dims_2x3, 2, f2, 2)), DS_ERROR_PARSE,
               "tensor 'few': float_data holds 2 values, its dims and float call for 6", NULL);
  GByteArray *t = tensor_head("ints", DS_ONNX_INT64, dims_2x3, 1);
  w_float(t, 4, 1.0f);
  w_float(t, 4, 2.0f);
  expect_error(model_with_initializer(t), DS_ERROR_PARSE,
               "tensor 'ints': int64 tensors keep their values in int64_data, not float_data",
               NULL);
  t = tensor_raw("both", DS_ONNX_FLOAT, dims_2x3, 1, f2, 8);
  w_float(t, 4, 1.0f);
  expect_error(model_with_initializer(t), DS_ERROR_PARSE, "holds both raw_data and float_data",
               NULL);

  /* No data_type; an unknown one; a segment. */
  t = msg_new();
  w_str(t, 8, "untyped");
  expect_error(model_with_initializer(t), DS_ERROR_PARSE, "tensor 'untyped' has no data_type",
               NULL);
  expect_error(model_with_initializer(tensor_head("odd", 99, dims_2x3, 1)), DS_ERROR_UNSUPPORTED,
               "data type 99", NULL);
  t = tensor_head("seg", DS_ONNX_FLOAT, dims_2x3, 1);
  w_bytes(t, 3, "", 0);
  expect_error(model_with_initializer(t), DS_ERROR_UNSUPPORTED, "segmented tensors", NULL);

  /* An initializer without a name. */
  expect_error(model_with_initializer(tensor_raw(NULL, DS_ONNX_FLOAT, dims_2x3, 1, f2, 8)),
               DS_ERROR_PARSE, "graph 'g': initializer 0 has no name", NULL);
}

/* An external-data tensor: location, offset, length. */
static GByteArray *external_tensor(const char *location, const char *offset, const char *length)
{
  int64_t dims[] = {3, 4};
  GByteArray *t = tensor_head("ext", DS_ONNX_FLOAT, dims, 2);
  const char *keys[] = {"location", "offset", "length", "checksum"};
  const char *values[] = {location, offset, length, "abc"};
  for (int i = 0; i < 4; i++) {
    if (values[i] == NULL)
      continue;
    GByteArray *entry = msg_new();
    w_str(entry, 1, keys[i]);
    w_str(entry, 2, values[i]);
    w_msg(t, 13, entry);
  }
  w_int(t, 14, 1);
  return t;
}

static void test_model_external(void)
{
  GError *error = NULL;
  GByteArray *bytes = model_with_initializer(external_tensor("weights.bin", "4096", "48"));
  g_autoptr(DsOnnxModel) m = parse(bytes, &error);
  g_byte_array_unref(bytes);
  g_assert_no_error(error);
  const DsOnnxTensor *t = &m->graph->initializers[0];
  g_assert_cmpint(t->data, ==, DS_ONNX_DATA_EXTERNAL);
  g_assert_cmpint(t->data_location, ==, 1);
  g_assert_cmpstr(t->external_location, ==, "weights.bin");
  g_assert_cmpuint(t->external_offset, ==, 4096);
  g_assert_true(t->has_external_length);
  g_assert_cmpuint(t->external_length, ==, 48);
  g_assert_cmpuint(t->n_external_data, ==, 4);
  g_assert_cmpstr(t->external_data[3].key, ==, "checksum");
  g_assert_cmpstr(t->external_data[3].value, ==, "abc");

  expect_error(model_with_initializer(external_tensor(NULL, "0", "48")), DS_ERROR_PARSE,
               "tensor 'ext' is stored externally but has no 'location' entry", NULL);
  expect_error(model_with_initializer(external_tensor("w.bin", "-1", NULL)), DS_ERROR_PARSE,
               "external data offset '-1' is not a non-negative decimal integer", NULL);
  expect_error(model_with_initializer(external_tensor("w.bin", NULL, "47")), DS_ERROR_PARSE,
               "its external data is 47 bytes long, its dims and float call for 48", NULL);
}

static void test_model_node_errors(void)
{
  /* The second node has a name and no op_type. */
  GByteArray *g = graph("body_graph", node("ok", "Relu", "a", "b", NULL),
                        node("nameless_op", NULL, "b", "c", NULL), NULL);
  expect_error(model(g), DS_ERROR_PARSE,
               "test.onnx: graph 'body_graph': node 1 'nameless_op': the node has no op_type",
               NULL);

  /* Control characters in names do not break the message's single line. */
  g = graph("two\nlines", node("x\ty", NULL, "", "", NULL), NULL);
  expect_error(model(g), DS_ERROR_PARSE, "graph 'two?lines': node 0 'x?y': the node has no op_type",
               NULL);

  /* The same inside a Loop body names the body, not the outer graph. */
  GByteArray *body = graph("inner", node(NULL, NULL, "", "", NULL), NULL);
  g = graph("outer", node("loop", "Loop", "", "", attr_graph("body", body), NULL), NULL);
  expect_error(model(g), DS_ERROR_PARSE, "graph 'inner': node 0: the node has no op_type", NULL);

  /* ref_attr_name only has a meaning inside functions. */
  GByteArray *a = attr_head("alpha", DS_ONNX_ATTR_FLOAT);
  w_str(a, 21, "outer_alpha");
  g = graph("g", node("lr", "LeakyRelu", "x", "y", a, NULL), NULL);
  expect_error(model(g), DS_ERROR_UNSUPPORTED,
               "graph 'g': node 0 'lr' (LeakyRelu): attribute 'alpha': refers to the attribute "
               "'outer_alpha' of an enclosing function (ref_attr_name)",
               NULL);

  /* An attribute without a name; a GRAPH attribute without a graph; a sparse tensor. */
  a = msg_new();
  w_int(a, 20, DS_ONNX_ATTR_INT);
  w_int(a, 3, 1);
  g = graph("g", node("n", "Foo", "x", "y", a, NULL), NULL);
  expect_error(model(g), DS_ERROR_PARSE,
               "node 0 'n' (Foo): attribute '#0': the attribute has "
               "no name",
               NULL);
  g = graph("g", node("n", "If", "c", "y", attr_head("then_branch", DS_ONNX_ATTR_GRAPH), NULL),
            NULL);
  expect_error(model(g), DS_ERROR_PARSE,
               "attribute 'then_branch': a GRAPH attribute without a "
               "graph",
               NULL);
  a = attr_head("sp", DS_ONNX_ATTR_SPARSE_TENSOR);
  w_bytes(a, 22, "", 0);
  g = graph("g", node("n", "Constant", "", "y", a, NULL), NULL);
  expect_error(model(g), DS_ERROR_UNSUPPORTED, "attribute 'sp': sparse tensor attributes", NULL);

  /* A graph input without a name. */
  g = graph("g", NULL);
  w_msg(g, 11, value_info("", DS_ONNX_FLOAT, "1"));
  expect_error(model(g), DS_ERROR_PARSE, "graph 'g': input 0 has no name", NULL);
}

static void test_model_attribute_types(void)
{
  /* IR version 1 files leave `type` out: it comes from the one value present. */
  GByteArray *a = msg_new();
  w_str(a, 1, "k");
  w_int(a, 3, 7);
  GByteArray *b = msg_new();
  w_str(b, 1, "names");
  w_str(b, 9, "x");
  w_bytes(b, 9, "y\0z", 3);
  GByteArray *g = graph("g", node("n", "Foo", "x", "y", a, b, NULL), NULL);
  GByteArray *bytes = model(g);
  GError *error = NULL;
  g_autoptr(DsOnnxModel) m = parse(bytes, &error);
  g_byte_array_unref(bytes);
  g_assert_no_error(error);
  const DsOnnxNode *n = &m->graph->nodes[0];
  g_assert_cmpint(n->attributes[0].type, ==, DS_ONNX_ATTR_INT);
  g_assert_cmpint(n->attributes[0].i, ==, 7);
  g_assert_cmpint(n->attributes[1].type, ==, DS_ONNX_ATTR_STRINGS);
  g_assert_cmpuint(n->attributes[1].n_strings, ==, 2);
  g_assert_cmpstr(n->attributes[1].strings[0].data, ==, "x");
  /* Bytes may hold NULs; the copy has one more after them. */
  g_assert_cmpuint(n->attributes[1].strings[1].len, ==, 3);
  g_assert_cmpmem(n->attributes[1].strings[1].data, 4, "y\0z\0", 4);
}

static void test_model_types(void)
{
  /* A sequence input and an optional output are decoded as kinds and refused by name. */
  GByteArray *seq_type = msg_new();
  w_msg(seq_type, 4, msg_new());
  GByteArray *seq = msg_new();
  w_str(seq, 1, "seq");
  w_msg(seq, 2, seq_type);
  GByteArray *opt_type = msg_new();
  w_msg(opt_type, 9, msg_new());
  GByteArray *opt = msg_new();
  w_str(opt, 1, "opt");
  w_msg(opt, 2, opt_type);
  GByteArray *untyped = msg_new();
  w_str(untyped, 1, "untyped");
  /* A tensor type without a shape: rank unknown. */
  GByteArray *tt = msg_new();
  w_int(tt, 1, DS_ONNX_INT64);
  GByteArray *rankless_type = msg_new();
  w_msg(rankless_type, 1, tt);
  GByteArray *rankless = msg_new();
  w_str(rankless, 1, "rankless");
  w_msg(rankless, 2, rankless_type);
  GByteArray *g = graph("g", NULL);
  w_msg(g, 11, seq);
  w_msg(g, 11, rankless);
  w_msg(g, 12, opt);
  w_msg(g, 13, untyped);
  GByteArray *bytes = model(g);
  GError *error = NULL;
  g_autoptr(DsOnnxModel) m = parse(bytes, &error);
  g_byte_array_unref(bytes);
  g_assert_no_error(error);
  const DsOnnxGraph *graph_ = m->graph;
  g_assert_cmpint(graph_->inputs[0].kind, ==, DS_ONNX_TYPE_SEQUENCE);
  g_assert_false(ds_onnx_value_require_tensor(m, &graph_->inputs[0], "input", &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED);
  g_assert_cmpstr(error->message, ==,
                  "test.onnx: input 'seq' has a sequence type; only tensors are supported");
  g_clear_error(&error);
  g_assert_cmpint(graph_->inputs[1].kind, ==, DS_ONNX_TYPE_TENSOR);
  g_assert_cmpint(graph_->inputs[1].elem_type, ==, DS_ONNX_INT64);
  g_assert_false(graph_->inputs[1].has_shape);
  g_assert_cmpint(graph_->outputs[0].kind, ==, DS_ONNX_TYPE_OPTIONAL);
  g_assert_false(ds_onnx_value_require_tensor(m, &graph_->outputs[0], "output", &error));
  g_assert_nonnull(strstr(error->message, "output 'opt' has an optional type"));
  g_clear_error(&error);
  g_assert_cmpint(graph_->value_info[0].kind, ==, DS_ONNX_TYPE_NONE);
  g_assert_false(ds_onnx_value_require_tensor(m, &graph_->value_info[0], "value", &error));
  g_assert_nonnull(strstr(error->message, "value 'untyped' has no type"));
  g_clear_error(&error);
}

static void test_elem_types(void)
{
  g_assert_cmpstr(ds_onnx_elem_type_name(DS_ONNX_FLOAT), ==, "float");
  g_assert_cmpstr(ds_onnx_elem_type_name(DS_ONNX_BFLOAT16), ==, "bfloat16");
  g_assert_cmpstr(ds_onnx_elem_type_name(DS_ONNX_FLOAT8E8M0), ==, "float8e8m0");
  g_assert_null(ds_onnx_elem_type_name(-1));
  g_assert_null(ds_onnx_elem_type_name(25));
  g_assert_cmpuint(ds_onnx_elem_size(DS_ONNX_FLOAT), ==, 4);
  g_assert_cmpuint(ds_onnx_elem_size(DS_ONNX_INT64), ==, 8);
  g_assert_cmpuint(ds_onnx_elem_size(DS_ONNX_BOOL), ==, 1);
  g_assert_cmpuint(ds_onnx_elem_size(DS_ONNX_COMPLEX128), ==, 16);
  g_assert_cmpuint(ds_onnx_elem_size(DS_ONNX_STRING), ==, 0);
  g_assert_cmpuint(ds_onnx_elem_size(DS_ONNX_INT4), ==, 0);
  g_assert_cmpuint(ds_onnx_elem_size(1000), ==, 0);
  guint64 n;
  g_assert_true(ds_onnx_data_bytes(DS_ONNX_INT4, 5, &n));
  g_assert_cmpuint(n, ==, 3);
  g_assert_true(ds_onnx_data_bytes(DS_ONNX_DOUBLE, 5, &n));
  g_assert_cmpuint(n, ==, 40);
  g_assert_false(ds_onnx_data_bytes(DS_ONNX_STRING, 5, &n));
  g_assert_false(ds_onnx_data_bytes(DS_ONNX_DOUBLE, G_MAXUINT64 / 4, &n));
}

static void test_sniff(void)
{
  GByteArray *m = conv_model();
  g_assert_true(ds_onnx_is_model_file(m->data, m->len));
  g_assert_true(ds_onnx_is_model_file(m->data, 2));
  g_assert_false(ds_onnx_is_model_file(m->data, 1));
  g_byte_array_unref(m);
  const char *json = "{\"nodes\": []}";
  g_assert_false(ds_onnx_is_model_file((const guint8 *)json, strlen(json)));
  g_assert_false(ds_onnx_is_model_file((const guint8 *)"\x93NUMPY\x01\x00", 8));
  g_assert_false(ds_onnx_is_model_file((const guint8 *)"\x12\x01\x00\x00", 4));
  g_assert_false(ds_onnx_is_model_file((const guint8 *)"\x08\x00\x12", 3)); /* ir_version 0 */
  g_assert_false(ds_onnx_is_model_file((const guint8 *)"\x08\x80\x01", 3)); /* two bytes */
  g_assert_false(ds_onnx_is_model_file((const guint8 *)"\x08\x07\x03", 3)); /* wire type 3 */
  g_assert_false(ds_onnx_is_model_file((const guint8 *)"\x08\x07\x02", 3)); /* field 0 */
  g_assert_false(ds_onnx_is_model_file(NULL, 0));
}

static void test_load(void)
{
  GError *error = NULL;
  char *dir = ds_test_tmpdir_new("ds-test-onnx");
  g_autofree char *path = g_build_filename(dir, "conv.onnx", NULL);
  GByteArray *bytes = conv_model();
  g_assert_true(g_file_set_contents(path, (const char *)bytes->data, bytes->len, &error));
  g_byte_array_unref(bytes);
  g_autoptr(DsOnnxModel) m = ds_onnx_model_load(path, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(m->display_name, ==, path);
  g_assert_cmpuint(m->graph->n_initializers, ==, 2);
  g_assert_cmpfloat(((const float *)m->graph->initializers[1].float_data)[0], ==, 0.25f);

  /* Errors name the path: a missing file, an empty one. */
  g_autofree char *missing = g_build_filename(dir, "missing.onnx", NULL);
  g_assert_null(ds_onnx_model_load(missing, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_IO);
  g_assert_true(g_str_has_prefix(error->message, missing));
  g_clear_error(&error);
  g_autofree char *empty = g_build_filename(dir, "empty.onnx", NULL);
  g_assert_true(g_file_set_contents(empty, "", 0, &error));
  g_assert_null(ds_onnx_model_load(empty, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_PARSE);
  g_assert_true(g_str_has_prefix(error->message, empty));
  g_assert_nonnull(strstr(error->message, "no graph"));
  g_clear_error(&error);
  ds_test_tmpdir_free(dir);
}

/* ---- Files written by the onnx package ------------------------------------------------------ */

static guint32 fnv1a(const guint8 *data, gsize len)
{
  guint32 h = 0x811c9dc5u;
  for (gsize i = 0; i < len; i++)
    h = (h ^ data[i]) * 0x01000193u;
  return h;
}

static const char *type_kind_json(DsOnnxTypeKind kind)
{
  return ds_onnx_type_kind_name(kind);
}

static const char *data_kind_json(DsOnnxDataKind kind)
{
  static const char *const names[] = {"none",   "raw",    "float",  "int32",   "int64",
                                      "double", "uint64", "string", "external"};
  return names[kind];
}

static cJSON *json_graph(const DsOnnxGraph *g);

static cJSON *json_tensor(const DsOnnxTensor *t)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", t->name);
  cJSON_AddNumberToObject(o, "data_type", t->data_type);
  cJSON *dims = cJSON_AddArrayToObject(o, "dims");
  for (gsize i = 0; i < t->n_dims; i++)
    cJSON_AddItemToArray(dims, cJSON_CreateNumber((double)t->dims[i]));
  cJSON_AddStringToObject(o, "data", data_kind_json(t->data));
  if (t->data == DS_ONNX_DATA_RAW) {
    cJSON_AddNumberToObject(o, "raw_fnv", fnv1a(t->raw_data, t->n_bytes));
  } else if (t->data == DS_ONNX_DATA_STRING) {
    cJSON *strings = cJSON_AddArrayToObject(o, "strings");
    for (gsize i = 0; i < t->n_values; i++)
      cJSON_AddItemToArray(strings, cJSON_CreateString(t->string_data[i].data));
  } else if (t->data == DS_ONNX_DATA_EXTERNAL) {
    cJSON *e = cJSON_AddObjectToObject(o, "external");
    cJSON_AddStringToObject(e, "location", t->external_location);
    cJSON_AddNumberToObject(e, "offset", (double)t->external_offset);
    if (t->has_external_length)
      cJSON_AddNumberToObject(e, "length", (double)t->external_length);
    else
      cJSON_AddNullToObject(e, "length");
  } else if (t->data != DS_ONNX_DATA_NONE) {
    cJSON *values = cJSON_AddArrayToObject(o, "values");
    for (gsize i = 0; i < t->n_values; i++) {
      double v = t->data == DS_ONNX_DATA_FLOAT    ? t->float_data[i]
                 : t->data == DS_ONNX_DATA_INT32  ? t->int32_data[i]
                 : t->data == DS_ONNX_DATA_INT64  ? (double)t->int64_data[i]
                 : t->data == DS_ONNX_DATA_DOUBLE ? t->double_data[i]
                                                  : (double)t->uint64_data[i];
      cJSON_AddItemToArray(values, cJSON_CreateNumber(v));
    }
  }
  return o;
}

/* The type of `v`, without its name (an attribute's types have none). */
static cJSON *json_type(const DsOnnxValueInfo *v)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "kind", type_kind_json(v->kind));
  cJSON_AddNumberToObject(o, "elem_type", v->elem_type);
  if (!v->has_shape) {
    cJSON_AddNullToObject(o, "shape");
    return o;
  }
  cJSON *shape = cJSON_AddArrayToObject(o, "shape");
  for (gsize i = 0; i < v->n_dims; i++) {
    const DsOnnxDim *d = &v->dims[i];
    cJSON_AddItemToArray(shape, d->kind == DS_ONNX_DIM_VALUE ? cJSON_CreateNumber((double)d->value)
                                : d->kind == DS_ONNX_DIM_PARAM ? cJSON_CreateString(d->param)
                                                               : cJSON_CreateNull());
  }
  return o;
}

static cJSON *json_value(const DsOnnxValueInfo *v)
{
  cJSON *o = json_type(v);
  cJSON_AddStringToObject(o, "name", v->name);
  return o;
}

static cJSON *json_attribute(const DsOnnxAttribute *a)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", a->name);
  cJSON_AddNumberToObject(o, "type", a->type);
  cJSON *list;
  switch (a->type) {
  case DS_ONNX_ATTR_FLOAT:
    cJSON_AddNumberToObject(o, "f", a->f);
    break;
  case DS_ONNX_ATTR_INT:
    cJSON_AddNumberToObject(o, "i", (double)a->i);
    break;
  case DS_ONNX_ATTR_STRING:
    cJSON_AddStringToObject(o, "s", a->s.data);
    break;
  case DS_ONNX_ATTR_TENSOR:
    cJSON_AddItemToObject(o, "t", json_tensor(a->t));
    break;
  case DS_ONNX_ATTR_GRAPH:
    cJSON_AddItemToObject(o, "g", json_graph(a->g));
    break;
  case DS_ONNX_ATTR_FLOATS:
    list = cJSON_AddArrayToObject(o, "floats");
    for (gsize i = 0; i < a->n_floats; i++)
      cJSON_AddItemToArray(list, cJSON_CreateNumber(a->floats[i]));
    break;
  case DS_ONNX_ATTR_INTS:
    list = cJSON_AddArrayToObject(o, "ints");
    for (gsize i = 0; i < a->n_ints; i++)
      cJSON_AddItemToArray(list, cJSON_CreateNumber((double)a->ints[i]));
    break;
  case DS_ONNX_ATTR_STRINGS:
    list = cJSON_AddArrayToObject(o, "strings");
    for (gsize i = 0; i < a->n_strings; i++)
      cJSON_AddItemToArray(list, cJSON_CreateString(a->strings[i].data));
    break;
  case DS_ONNX_ATTR_TENSORS:
    list = cJSON_AddArrayToObject(o, "tensors");
    for (gsize i = 0; i < a->n_tensors; i++)
      cJSON_AddItemToArray(list, json_tensor(&a->tensors[i]));
    break;
  case DS_ONNX_ATTR_GRAPHS:
    list = cJSON_AddArrayToObject(o, "graphs");
    for (gsize i = 0; i < a->n_graphs; i++)
      cJSON_AddItemToArray(list, json_graph(&a->graphs[i]));
    break;
  case DS_ONNX_ATTR_TYPE_PROTO:
    cJSON_AddItemToObject(o, "tp", json_type(a->tp));
    break;
  case DS_ONNX_ATTR_TYPE_PROTOS:
    list = cJSON_AddArrayToObject(o, "type_protos");
    for (gsize i = 0; i < a->n_type_protos; i++)
      cJSON_AddItemToArray(list, json_type(&a->type_protos[i]));
    break;
  default:
    break;
  }
  return o;
}

static cJSON *json_strings(const char *const *strings, gsize n)
{
  cJSON *list = cJSON_CreateArray();
  for (gsize i = 0; i < n; i++)
    cJSON_AddItemToArray(list, cJSON_CreateString(strings[i]));
  return list;
}

static cJSON *json_values(const DsOnnxValueInfo *values, gsize n)
{
  cJSON *list = cJSON_CreateArray();
  for (gsize i = 0; i < n; i++)
    cJSON_AddItemToArray(list, json_value(&values[i]));
  return list;
}

static cJSON *json_graph(const DsOnnxGraph *g)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", g->name);
  cJSON *nodes = cJSON_AddArrayToObject(o, "nodes");
  for (gsize i = 0; i < g->n_nodes; i++) {
    const DsOnnxNode *n = &g->nodes[i];
    cJSON *no = cJSON_CreateObject();
    cJSON_AddStringToObject(no, "name", n->name);
    cJSON_AddStringToObject(no, "op_type", n->op_type);
    cJSON_AddStringToObject(no, "domain", n->domain);
    cJSON_AddItemToObject(no, "inputs", json_strings(n->inputs, n->n_inputs));
    cJSON_AddItemToObject(no, "outputs", json_strings(n->outputs, n->n_outputs));
    cJSON *attrs = cJSON_AddArrayToObject(no, "attributes");
    for (gsize k = 0; k < n->n_attributes; k++)
      cJSON_AddItemToArray(attrs, json_attribute(&n->attributes[k]));
    cJSON_AddItemToArray(nodes, no);
  }
  cJSON *inits = cJSON_AddArrayToObject(o, "initializers");
  for (gsize i = 0; i < g->n_initializers; i++)
    cJSON_AddItemToArray(inits, json_tensor(&g->initializers[i]));
  cJSON_AddItemToObject(o, "inputs", json_values(g->inputs, g->n_inputs));
  cJSON_AddItemToObject(o, "outputs", json_values(g->outputs, g->n_outputs));
  cJSON_AddItemToObject(o, "value_info", json_values(g->value_info, g->n_value_info));
  return o;
}

static cJSON *json_model(const DsOnnxModel *m)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "ir_version", (double)m->ir_version);
  cJSON_AddStringToObject(o, "producer_name", m->producer_name);
  cJSON_AddStringToObject(o, "producer_version", m->producer_version);
  cJSON *opsets = cJSON_AddArrayToObject(o, "opsets");
  for (gsize i = 0; i < m->n_opsets; i++) {
    cJSON *pair = cJSON_CreateArray();
    cJSON_AddItemToArray(pair, cJSON_CreateString(m->opsets[i].domain));
    cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)m->opsets[i].version));
    cJSON_AddItemToArray(opsets, pair);
  }
  cJSON *metadata = cJSON_AddArrayToObject(o, "metadata");
  for (gsize i = 0; i < m->n_metadata; i++) {
    const char *kv[] = {m->metadata[i].key, m->metadata[i].value};
    cJSON_AddItemToArray(metadata, cJSON_CreateStringArray(kv, 2));
  }
  cJSON_AddItemToObject(o, "graph", json_graph(m->graph));
  return o;
}

static gboolean python_has_onnx(void)
{
  const char *argv[] = {PYTHON, "-c", "import onnx", NULL};
  int status = -1;
  if (!g_file_test(PYTHON, G_FILE_TEST_IS_EXECUTABLE))
    return FALSE;
  if (!g_spawn_sync(NULL, (char **)argv, NULL,
                    G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL,
                    &status, NULL))
    return FALSE;
  return g_spawn_check_wait_status(status, NULL);
}

static void test_onnx_package_files(void)
{
  if (!python_has_onnx()) {
    g_test_skip(PYTHON " cannot import onnx");
    return;
  }
  const char *source = g_getenv("DS_SOURCE_DIR");
  g_autofree char *script = g_build_filename(source != NULL ? source : DS_SOURCE_DIR, "tests",
                                             "make_onnx_cases.py", NULL);
  char *dir = ds_test_tmpdir_new("ds-test-onnx");
  const char *argv[] = {PYTHON, script, dir, NULL};
  g_autofree char *out = NULL, *err = NULL;
  int status = -1;
  GError *error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                             &status, &error));
  g_assert_no_error(error);
  if (!g_spawn_check_wait_status(status, NULL))
    g_error("%s failed: %s%s", script, out, err);

  g_autofree char *summary_path = g_build_filename(dir, "summary.json", NULL);
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(summary_path, &text, NULL, &error));
  cJSON *summary = cJSON_Parse(text);
  g_assert_nonnull(summary);
  int n_models = 0;
  const cJSON *expected;
  cJSON_ArrayForEach(expected, summary)
  {
    g_autofree char *path = g_build_filename(dir, expected->string, NULL);
    g_autoptr(DsOnnxModel) m = ds_onnx_model_load(path, &error);
    g_assert_no_error(error);
    g_autofree char *head = NULL;
    gsize head_len;
    g_assert_true(g_file_get_contents(path, &head, &head_len, &error));
    g_assert_true(ds_onnx_is_model_file((const guint8 *)head, MIN(head_len, 16)));
    cJSON *got = json_model(m);
    if (!cJSON_Compare(got, expected, TRUE)) {
      g_autofree char *got_text = cJSON_Print(got);
      g_autofree char *want_text = cJSON_Print(expected);
      g_error("%s: the decoder read\n%s\nthe onnx package read\n%s", expected->string, got_text,
              want_text);
    }
    cJSON_Delete(got);
    n_models++;
  }
  g_assert_cmpint(n_models, >=, 6);
  g_test_message("%d models written by the onnx package decoded alike", n_models);
  cJSON_Delete(summary);

  /* The generated JSON is not mistaken for a model. */
  g_assert_false(ds_onnx_is_model_file((const guint8 *)text, strlen(text)));
  ds_test_tmpdir_free(dir);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/onnx/protobuf/varints", test_protobuf_varints);
  g_test_add_func("/onnx/protobuf/fields", test_protobuf_fields);
  g_test_add_func("/onnx/model/conv", test_model_conv);
  g_test_add_func("/onnx/model/subgraphs", test_model_subgraphs);
  g_test_add_func("/onnx/model/depth", test_model_depth);
  g_test_add_func("/onnx/model/wire-errors", test_model_wire_errors);
  g_test_add_func("/onnx/model/tensor-errors", test_model_tensor_errors);
  g_test_add_func("/onnx/model/external", test_model_external);
  g_test_add_func("/onnx/model/node-errors", test_model_node_errors);
  g_test_add_func("/onnx/model/attribute-types", test_model_attribute_types);
  g_test_add_func("/onnx/model/types", test_model_types);
  g_test_add_func("/onnx/elem-types", test_elem_types);
  g_test_add_func("/onnx/sniff", test_sniff);
  g_test_add_func("/onnx/load", test_load);
  g_test_add_func("/onnx/onnx-package-files", test_onnx_package_files);
  return g_test_run();
}
