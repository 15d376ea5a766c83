/* fuzz-onnx-model.c: libFuzzer target for the ONNX model decoder and its wire reader.
 *
 * Any input must decode or fail with a DS_ERROR. A model that decodes is walked whole, every
 * array and string read to its end, so that the sanitizers see any pointer or count that does
 * not match what was allocated, and the invariants the header promises are checked: names are
 * never NULL, raw_data has exactly n_bytes, typed arrays have n_values, bytes end in a NUL.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ds-error.h"
#include "ds-onnx-model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile unsigned sink;

static void touch(const void *p, size_t n)
{
  const unsigned char *b = p;
  unsigned h = 0;
  for (size_t i = 0; i < n; i++)
    h = h * 31 + b[i];
  sink += h;
}

static void check_string(const char *s)
{
  if (s == NULL)
    abort();
  touch(s, strlen(s));
}

static void check_bytes(const DsOnnxBytes *b)
{
  if (b->data == NULL || b->data[b->len] != '\0')
    abort();
  touch(b->data, b->len);
}

static void check_graph(const DsOnnxModel *m, const DsOnnxGraph *g);

static void check_tensor(const DsOnnxTensor *t)
{
  check_string(t->name);
  if (ds_onnx_elem_type_name(t->data_type) == NULL)
    abort();
  touch(t->dims, t->n_dims * sizeof *t->dims);
  guint64 n = 1;
  for (gsize i = 0; i < t->n_dims; i++) {
    if (t->dims[i] < 0)
      abort();
    if (t->dims[i] == 0)
      n = 0;
  }
  if (n != 0 && t->n_elements == 0)
    abort();
  for (gsize i = 0; i < t->n_external_data; i++) {
    check_string(t->external_data[i].key);
    check_string(t->external_data[i].value);
  }
  switch (t->data) {
  case DS_ONNX_DATA_RAW:
    if (t->raw_data == NULL && t->n_bytes > 0)
      abort();
    touch(t->raw_data, t->n_bytes);
    break;
  case DS_ONNX_DATA_FLOAT:
    touch(t->float_data, t->n_values * sizeof(float));
    break;
  case DS_ONNX_DATA_INT32:
    touch(t->int32_data, t->n_values * sizeof(int32_t));
    break;
  case DS_ONNX_DATA_INT64:
    touch(t->int64_data, t->n_values * sizeof(int64_t));
    break;
  case DS_ONNX_DATA_DOUBLE:
    touch(t->double_data, t->n_values * sizeof(double));
    break;
  case DS_ONNX_DATA_UINT64:
    touch(t->uint64_data, t->n_values * sizeof(guint64));
    break;
  case DS_ONNX_DATA_STRING:
    if (t->n_values != t->n_elements)
      abort();
    for (gsize i = 0; i < t->n_values; i++)
      check_bytes(&t->string_data[i]);
    break;
  case DS_ONNX_DATA_EXTERNAL:
    check_string(t->external_location);
    if (t->has_external_length && t->external_length != t->n_bytes)
      abort();
    break;
  case DS_ONNX_DATA_NONE:
    break;
  }
}

static void check_value(const DsOnnxModel *m, const DsOnnxValueInfo *v)
{
  check_string(v->name);
  for (gsize i = 0; i < v->n_dims; i++) {
    const DsOnnxDim *d = &v->dims[i];
    if ((d->kind == DS_ONNX_DIM_PARAM) != (d->param != NULL))
      abort();
    if (d->param != NULL)
      check_string(d->param);
    if (d->kind == DS_ONNX_DIM_VALUE && d->value < 0)
      abort();
  }
  GError *error = NULL;
  if (!ds_onnx_value_require_tensor(m, v, "value", &error)) {
    if (error == NULL || error->domain != DS_ERROR)
      abort();
    g_error_free(error);
  }
}

static void check_attribute(const DsOnnxModel *m, const DsOnnxAttribute *a)
{
  check_string(a->name);
  if (a->name[0] == '\0')
    abort();
  check_bytes(&a->s);
  if (a->type == DS_ONNX_ATTR_TENSOR && a->t == NULL)
    abort();
  if (a->type == DS_ONNX_ATTR_GRAPH && a->g == NULL)
    abort();
  if (a->t != NULL)
    check_tensor(a->t);
  if (a->g != NULL)
    check_graph(m, a->g);
  touch(a->floats, a->n_floats * sizeof(float));
  touch(a->ints, a->n_ints * sizeof(int64_t));
  for (gsize i = 0; i < a->n_strings; i++)
    check_bytes(&a->strings[i]);
  for (gsize i = 0; i < a->n_tensors; i++)
    check_tensor(&a->tensors[i]);
  for (gsize i = 0; i < a->n_graphs; i++)
    check_graph(m, &a->graphs[i]);
  if (a->type == DS_ONNX_ATTR_TYPE_PROTO && a->tp == NULL)
    abort();
  if (a->tp != NULL)
    check_value(m, a->tp);
  for (gsize i = 0; i < a->n_type_protos; i++)
    check_value(m, &a->type_protos[i]);
}

static void check_graph(const DsOnnxModel *m, const DsOnnxGraph *g)
{
  check_string(g->name);
  for (gsize i = 0; i < g->n_nodes; i++) {
    const DsOnnxNode *n = &g->nodes[i];
    check_string(n->name);
    check_string(n->op_type);
    if (n->op_type[0] == '\0')
      abort();
    check_string(n->domain);
    for (gsize k = 0; k < n->n_inputs; k++)
      check_string(n->inputs[k]);
    for (gsize k = 0; k < n->n_outputs; k++)
      check_string(n->outputs[k]);
    for (gsize k = 0; k < n->n_attributes; k++)
      check_attribute(m, &n->attributes[k]);
    if (n->n_attributes > 0 &&
        ds_onnx_node_find_attribute(n, n->attributes[0].name) != &n->attributes[0])
      abort();
  }
  for (gsize i = 0; i < g->n_initializers; i++) {
    check_tensor(&g->initializers[i]);
    if (g->initializers[i].name[0] == '\0')
      abort();
  }
  for (gsize i = 0; i < g->n_inputs; i++)
    check_value(m, &g->inputs[i]);
  for (gsize i = 0; i < g->n_outputs; i++)
    check_value(m, &g->outputs[i]);
  for (gsize i = 0; i < g->n_value_info; i++)
    check_value(m, &g->value_info[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  (void)ds_onnx_is_model_file(data, size);
  GError *error = NULL;
  DsOnnxModel *m = ds_onnx_model_parse(data, size, "fuzz.onnx", &error);
  if (m == NULL) {
    if (error == NULL || error->domain != DS_ERROR || strchr(error->message, '\n') != NULL)
      abort();
    g_error_free(error);
    return 0;
  }
  if (m->graph == NULL)
    abort();
  check_string(m->producer_name);
  check_string(m->producer_version);
  check_string(m->domain);
  for (gsize i = 0; i < m->n_opsets; i++)
    check_string(m->opsets[i].domain);
  for (gsize i = 0; i < m->n_metadata; i++) {
    check_string(m->metadata[i].key);
    check_string(m->metadata[i].value);
  }
  check_graph(m, m->graph);
  ds_onnx_model_free(m);
  return 0;
}
