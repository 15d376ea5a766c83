/* ds-onnx-model.c: decoding an ONNX ModelProto into DsOnnxModel (see ds-onnx-model.h): the
 * model, graphs, nodes, attributes and value types, and the entry points. Tensors are decoded in
 * ds-onnx-tensor.c, with the helpers all decoders share in ds-onnx-decoder.c.
 *
 * One recursive decoder per message type, each reading its fields in a loop over a
 * DsPbReader and skipping fields it does not know. Repeated fields collect into GArrays whose
 * buffers the arena then adopts, so a message of any size costs no copy at its end and an error
 * anywhere leaks nothing: the model (arena and all) is freed whole.
 *
 * Error messages name where in the model a problem is: the innermost graph, the node (its index
 * in that graph, name and op_type), the attribute. Writers put a graph's nodes (field 1) before
 * its name (field 2), and a node's inputs and outputs before its name and op_type, so graphs and
 * nodes are read in two passes: a quick one for the names (skipping everything else, nested
 * messages in O(1)) and then the full one.
 */
#include "ds-onnx-private.h"

#include <string.h>

#include "ds-error.h"
#include "ds-file.h"

#define SNIFF_MAX_IR 127

const char *ds_onnx_type_kind_name(DsOnnxTypeKind kind)
{
  switch (kind) {
  case DS_ONNX_TYPE_NONE:
    return "none";
  case DS_ONNX_TYPE_TENSOR:
    return "tensor";
  case DS_ONNX_TYPE_SEQUENCE:
    return "sequence";
  case DS_ONNX_TYPE_MAP:
    return "map";
  case DS_ONNX_TYPE_OPTIONAL:
    return "optional";
  case DS_ONNX_TYPE_SPARSE_TENSOR:
    return "sparse tensor";
  }
  return "unknown";
}

gboolean ds_onnx_value_require_tensor(const DsOnnxModel *model, const DsOnnxValueInfo *value,
                                      const char *role, GError **error)
{
  g_return_val_if_fail(model != NULL && value != NULL, FALSE);
  if (value->kind == DS_ONNX_TYPE_TENSOR)
    return TRUE;
  if (value->kind == DS_ONNX_TYPE_NONE)
    g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED, "%s: %s '%s' has no type",
                model->display_name, role != NULL ? role : "value", value->name);
  else {
    const char *kind = ds_onnx_type_kind_name(value->kind);
    g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
                "%s: %s '%s' has %s %s type; only tensors are supported", model->display_name,
                role != NULL ? role : "value", value->name,
                strchr("aeiou", kind[0]) != NULL ? "an" : "a", kind);
  }
  if (error != NULL && *error != NULL)
    ds_pb_one_line((*error)->message);
  return FALSE;
}

const DsOnnxAttribute *ds_onnx_node_find_attribute(const DsOnnxNode *node, const char *name)
{
  g_return_val_if_fail(node != NULL && name != NULL, NULL);
  for (gsize i = 0; i < node->n_attributes; i++)
    if (strcmp(node->attributes[i].name, name) == 0)
      return &node->attributes[i];
  return NULL;
}

/* ---- Small messages ---------------------------------------------------------------------- */

/* OperatorSetIdProto: domain = 1, version = 2. */
static gboolean decode_opset(const DsOnnxDecoder *d, DsPbReader *r, DsOnnxOpset *opset,
                             GError **error)
{
  opset->domain = "";
  opset->version = 0;
  while (ds_pb_more(r)) {
    guint32 field;
    DsPbWire wire;
    if (!ds_pb_read_tag(r, &field, &wire, error))
      return FALSE;
    gboolean ok;
    if (field == 1)
      ok = ds_onnx_read_string(d, r, field, wire, &opset->domain, error);
    else if (field == 2)
      ok = ds_onnx_read_int64_field(r, field, wire, &opset->version, error);
    else
      ok = ds_pb_skip(r, wire, error);
    if (!ok)
      return FALSE;
  }
  return TRUE;
}

/* ---- ValueInfoProto and its type --------------------------------------------------------- */

/* TensorShapeProto.Dimension: dim_value = 1, dim_param = 2 (a oneof: the last one wins). */
static gboolean decode_dim(const DsOnnxDecoder *d, DsPbReader *r, DsOnnxDim *dim, GError **error)
{
  dim->kind = DS_ONNX_DIM_UNKNOWN;
  dim->value = 0;
  dim->param = NULL;
  while (ds_pb_more(r)) {
    guint32 field;
    DsPbWire wire;
    if (!ds_pb_read_tag(r, &field, &wire, error))
      return FALSE;
    if (field == 1) {
      if (!ds_onnx_read_int64_field(r, field, wire, &dim->value, error))
        return FALSE;
      /* Some exporters write -1 for "unknown"; that is what it means here. */
      dim->kind = dim->value >= 0 ? DS_ONNX_DIM_VALUE : DS_ONNX_DIM_UNKNOWN;
      dim->param = NULL;
    } else if (field == 2) {
      if (!ds_onnx_read_string(d, r, field, wire, &dim->param, error))
        return FALSE;
      dim->kind = dim->param[0] != '\0' ? DS_ONNX_DIM_PARAM : DS_ONNX_DIM_UNKNOWN;
      dim->value = 0;
    } else if (!ds_pb_skip(r, wire, error)) {
      return FALSE;
    }
  }
  if (dim->kind != DS_ONNX_DIM_VALUE)
    dim->value = 0;
  if (dim->kind != DS_ONNX_DIM_PARAM)
    dim->param = NULL;
  return TRUE;
}

/* TensorShapeProto: dim = 1. */
static gboolean decode_shape(const DsOnnxDecoder *d, DsPbReader *r, DsOnnxValueInfo *vi,
                             GError **error)
{
  g_autoptr(GArray) dims = g_array_new(FALSE, FALSE, sizeof(DsOnnxDim));
  while (ds_pb_more(r)) {
    guint32 field;
    DsPbWire wire;
    if (!ds_pb_read_tag(r, &field, &wire, error))
      return FALSE;
    if (field == 1) {
      DsPbReader sub;
      DsOnnxDim dim;
      if (!ds_onnx_enter_field(r, field, wire, "TensorShapeProto.Dimension", NULL, &sub, error) ||
          !decode_dim(d, &sub, &dim, error))
        return FALSE;
      g_array_append_val(dims, dim);
    } else if (!ds_pb_skip(r, wire, error)) {
      return FALSE;
    }
  }
  vi->has_shape = TRUE;
  vi->dims = ds_onnx_arena_take(d->arena, dims, &vi->n_dims);
  return TRUE;
}

/* TypeProto.Tensor: elem_type = 1, shape = 2. */
static gboolean decode_tensor_type(const DsOnnxDecoder *d, DsPbReader *r, DsOnnxValueInfo *vi,
                                   GError **error)
{
  gboolean seen_shape = FALSE;
  while (ds_pb_more(r)) {
    guint32 field;
    DsPbWire wire;
    if (!ds_pb_read_tag(r, &field, &wire, error))
      return FALSE;
    if (field == 1) {
      int32_t v;
      if (!ds_onnx_read_int32_field(r, field, wire, &v, error))
        return FALSE;
      vi->elem_type = v;
    } else if (field == 2) {
      DsPbReader sub;
      if (!ds_onnx_enter_field(r, field, wire, "TensorShapeProto", &seen_shape, &sub, error) ||
          !decode_shape(d, &sub, vi, error))
        return FALSE;
    } else if (!ds_pb_skip(r, wire, error)) {
      return FALSE;
    }
  }
  return TRUE;
}

/* TypeProto: tensor_type = 1, sequence_type = 4, map_type = 5, sparse_tensor_type = 8,
 * optional_type = 9 (a oneof). Only tensors are read further; the others are named by kind. */
static gboolean decode_type(const DsOnnxDecoder *d, DsPbReader *r, DsOnnxValueInfo *vi,
                            GError **error)
{
  gboolean seen = FALSE;
  while (ds_pb_more(r)) {
    guint32 field;
    DsPbWire wire;
    if (!ds_pb_read_tag(r, &field, &wire, error))
      return FALSE;
    DsOnnxTypeKind kind;
    switch (field) {
    case 1:
      kind = DS_ONNX_TYPE_TENSOR;
      break;
    case 4:
      kind = DS_ONNX_TYPE_SEQUENCE;
      break;
    case 5:
      kind = DS_ONNX_TYPE_MAP;
      break;
    case 8:
      kind = DS_ONNX_TYPE_SPARSE_TENSOR;
      break;
    case 9:
      kind = DS_ONNX_TYPE_OPTIONAL;
      break;
    default:
      if (!ds_pb_skip(r, wire, error))
        return FALSE;
      continue;
    }
    DsPbReader sub;
    if (!ds_onnx_enter_field(r, field, wire, "TypeProto value", &seen, &sub, error))
      return FALSE;
    vi->kind = kind;
    if (kind == DS_ONNX_TYPE_TENSOR && !decode_tensor_type(d, &sub, vi, error))
      return FALSE;
  }
  return TRUE;
}

/* ValueInfoProto: name = 1, type = 2. */
static gboolean decode_value_info(const DsOnnxDecoder *d, DsPbReader *r, DsOnnxValueInfo *vi,
                                  GError **error)
{
  memset(vi, 0, sizeof *vi);
  vi->name = "";
  gboolean seen_type = FALSE;
  while (ds_pb_more(r)) {
    guint32 field;
    DsPbWire wire;
    if (!ds_pb_read_tag(r, &field, &wire, error))
      return FALSE;
    if (field == 1) {
      if (!ds_onnx_read_string(d, r, field, wire, &vi->name, error))
        return FALSE;
    } else if (field == 2) {
      DsPbReader sub;
      if (!ds_onnx_enter_field(r, field, wire, "TypeProto", &seen_type, &sub, error) ||
          !decode_type(d, &sub, vi, error))
        return FALSE;
    } else if (!ds_pb_skip(r, wire, error)) {
      return FALSE;
    }
  }
  return TRUE;
}

/* Appends one ValueInfoProto to `values`; `role` names the list for messages. */
static gboolean read_value_info(const DsOnnxDecoder *d, const DsOnnxScope *s, DsPbReader *r,
                                guint32 field, DsPbWire wire, const char *role, GArray *values,
                                GError **error)
{
  DsPbReader sub;
  DsOnnxValueInfo vi;
  if (!ds_onnx_enter_field(r, field, wire, "ValueInfoProto", NULL, &sub, error) ||
      !decode_value_info(d, &sub, &vi, error))
    return FALSE;
  if (vi.name[0] == '\0') {
    ds_onnx_scope_error(d, s, error, DS_ERROR_PARSE, "%s %u has no name", role, values->len);
    return FALSE;
  }
  g_array_append_val(values, vi);
  return TRUE;
}

/* ---- Graphs, nodes, attributes ----------------------------------------------------------- */

static gboolean decode_graph(const DsOnnxDecoder *d, DsPbReader *r, DsOnnxGraph *g, GError **error);

/* Reads one GraphProto field into a graph allocated in the arena. */
static gboolean read_graph(const DsOnnxDecoder *d, DsPbReader *r, guint32 field, DsPbWire wire,
                           gboolean *seen, DsOnnxGraph *g, GError **error)
{
  DsPbReader sub;
  return ds_onnx_enter_field(r, field, wire, "GraphProto", seen, &sub, error) &&
         decode_graph(d, &sub, g, error);
}

/* The attribute type its value fields imply, for files that leave `type` out (IR version 1):
 * the one kind of value present, or UNDEFINED when there is none or more than one. */
static DsOnnxAttrType implied_attr_type(const gboolean present[15])
{
  DsOnnxAttrType found = DS_ONNX_ATTR_UNDEFINED;
  for (int k = 1; k < 15; k++) {
    if (!present[k])
      continue;
    if (found != DS_ONNX_ATTR_UNDEFINED)
      return DS_ONNX_ATTR_UNDEFINED;
    found = (DsOnnxAttrType)k;
  }
  return found;
}

/* AttributeProto: name = 1, f = 2, i = 3, s = 4, t = 5, g = 6, floats = 7, ints = 8,
 * strings = 9, tensors = 10, graphs = 11, tp = 14, type_protos = 15, type = 20,
 * ref_attr_name = 21, sparse_tensor = 22, sparse_tensors = 23. */
static gboolean decode_attribute(const DsOnnxDecoder *d, const DsOnnxScope *node_scope, gsize index,
                                 DsPbReader *r, DsOnnxAttribute *a, GError **error)
{
  memset(a, 0, sizeof *a);
  a->name = "";
  a->s.data = "";
  DsOnnxScope s = *node_scope;
  if (!ds_onnx_prescan_strings(d, r, 1, &a->name, 0, NULL, error))
    return FALSE;
  g_autofree char *index_label = NULL;
  if (a->name[0] == '\0') {
    index_label = g_strdup_printf("#%" G_GSIZE_FORMAT, index);
    s.attribute = index_label;
    ds_onnx_scope_error(d, &s, error, DS_ERROR_PARSE, "the attribute has no name");
    return FALSE;
  }
  s.attribute = a->name;

  g_autoptr(GArray) floats = g_array_new(FALSE, FALSE, sizeof(float));
  g_autoptr(GArray) ints = g_array_new(FALSE, FALSE, sizeof(int64_t));
  g_autoptr(GArray) strings = g_array_new(FALSE, FALSE, sizeof(DsOnnxBytes));
  g_autoptr(GArray) tensors = g_array_new(FALSE, FALSE, sizeof(DsOnnxTensor));
  g_autoptr(GArray) graphs = g_array_new(FALSE, FALSE, sizeof(DsOnnxGraph));
  g_autoptr(GArray) type_protos = g_array_new(FALSE, FALSE, sizeof(DsOnnxValueInfo));
  gboolean present[15] = {FALSE};
  gboolean seen_t = FALSE, seen_g = FALSE, seen_tp = FALSE;
  const char *ref_attr_name = NULL;
  int32_t type = 0;
  while (ds_pb_more(r)) {
    guint32 field;
    DsPbWire wire;
    if (!ds_pb_read_tag(r, &field, &wire, error))
      return FALSE;
    gboolean ok = TRUE;
    DsPbReader sub;
    DsOnnxBytes blob;
    switch (field) {
    case 2:
      ok = ds_pb_expect_wire(r, field, wire, DS_PB_WIRE_FIXED32, error) &&
           ds_pb_read_float(r, &a->f, error);
      present[DS_ONNX_ATTR_FLOAT] = TRUE;
      break;
    case 3:
      ok = ds_onnx_read_int64_field(r, field, wire, &a->i, error);
      present[DS_ONNX_ATTR_INT] = TRUE;
      break;
    case 4:
      ok = ds_onnx_read_blob(d, r, field, wire, &a->s, error);
      present[DS_ONNX_ATTR_STRING] = TRUE;
      break;
    case 5: {
      DsOnnxTensor *t = ds_onnx_arena_alloc(d->arena, sizeof *t);
      ok = ds_onnx_enter_field(r, field, wire, "TensorProto", &seen_t, &sub, error) &&
           ds_onnx_decode_tensor(d, &s, &sub, t, error);
      a->t = t;
      present[DS_ONNX_ATTR_TENSOR] = TRUE;
      break;
    }
    case 6: {
      DsOnnxGraph *g = ds_onnx_arena_alloc(d->arena, sizeof *g);
      ok = read_graph(d, r, field, wire, &seen_g, g, error);
      a->g = g;
      present[DS_ONNX_ATTR_GRAPH] = TRUE;
      break;
    }
    case 7:
      ok = ds_pb_read_repeated_float(r, wire, floats, error);
      present[DS_ONNX_ATTR_FLOATS] = TRUE;
      break;
    case 8:
      ok = ds_pb_read_repeated_int64(r, wire, ints, error);
      present[DS_ONNX_ATTR_INTS] = TRUE;
      break;
    case 9:
      ok = ds_onnx_read_blob(d, r, field, wire, &blob, error);
      if (ok)
        g_array_append_val(strings, blob);
      present[DS_ONNX_ATTR_STRINGS] = TRUE;
      break;
    case 10:
      ok = ds_onnx_read_tensor(d, &s, r, field, wire, tensors, error);
      present[DS_ONNX_ATTR_TENSORS] = TRUE;
      break;
    case 11: {
      DsOnnxGraph g;
      ok = read_graph(d, r, field, wire, NULL, &g, error);
      if (ok)
        g_array_append_val(graphs, g);
      present[DS_ONNX_ATTR_GRAPHS] = TRUE;
      break;
    }
    case 14: {
      DsOnnxValueInfo *tp = ds_onnx_arena_alloc(d->arena, sizeof *tp);
      tp->name = "";
      ok = ds_onnx_enter_field(r, field, wire, "TypeProto", &seen_tp, &sub, error) &&
           decode_type(d, &sub, tp, error);
      a->tp = tp;
      present[DS_ONNX_ATTR_TYPE_PROTO] = TRUE;
      break;
    }
    case 15: {
      DsOnnxValueInfo tp = {.name = ""};
      ok = ds_onnx_enter_field(r, field, wire, "TypeProto", NULL, &sub, error) &&
           decode_type(d, &sub, &tp, error);
      if (ok)
        g_array_append_val(type_protos, tp);
      present[DS_ONNX_ATTR_TYPE_PROTOS] = TRUE;
      break;
    }
    case 22:
    case 23:
      present[field == 22 ? DS_ONNX_ATTR_SPARSE_TENSOR : DS_ONNX_ATTR_SPARSE_TENSORS] = TRUE;
      ok = ds_pb_expect_wire(r, field, wire, DS_PB_WIRE_LEN, error) && ds_pb_skip(r, wire, error);
      break;
    case 20:
      ok = ds_onnx_read_int32_field(r, field, wire, &type, error);
      break;
    case 21:
      ok = ds_onnx_read_string(d, r, field, wire, &ref_attr_name, error);
      break;
    default: /* name (read already), doc_string, and fields this reader does not know */
      ok = ds_pb_skip(r, wire, error);
      break;
    }
    if (!ok)
      return FALSE;
  }

  if (ref_attr_name != NULL && ref_attr_name[0] != '\0') {
    ds_onnx_scope_error(
        d, &s, error, DS_ERROR_UNSUPPORTED,
        "refers to the attribute '%s' of an enclosing function (ref_attr_name), which "
        "is not supported",
        ref_attr_name);
    return FALSE;
  }
  if (type == DS_ONNX_ATTR_UNDEFINED)
    type = implied_attr_type(present);
  if (type == DS_ONNX_ATTR_UNDEFINED) {
    ds_onnx_scope_error(d, &s, error, DS_ERROR_PARSE,
                        "no type, and no single value to tell it from");
    return FALSE;
  }
  if (type < DS_ONNX_ATTR_UNDEFINED || type > DS_ONNX_ATTR_TYPE_PROTOS) {
    ds_onnx_scope_error(d, &s, error, DS_ERROR_PARSE,
                        "type %d is not an AttributeProto.AttributeType", type);
    return FALSE;
  }
  a->type = (DsOnnxAttrType)type;
  switch (a->type) {
  case DS_ONNX_ATTR_SPARSE_TENSOR:
  case DS_ONNX_ATTR_SPARSE_TENSORS:
    ds_onnx_scope_error(d, &s, error, DS_ERROR_UNSUPPORTED,
                        "sparse tensor attributes are not supported");
    return FALSE;
  case DS_ONNX_ATTR_TYPE_PROTO:
    if (a->tp == NULL) {
      ds_onnx_scope_error(d, &s, error, DS_ERROR_PARSE,
                          "a TYPE_PROTO attribute without a type (tp)");
      return FALSE;
    }
    break;
  case DS_ONNX_ATTR_TENSOR:
    if (a->t == NULL) {
      ds_onnx_scope_error(d, &s, error, DS_ERROR_PARSE, "a TENSOR attribute without a tensor (t)");
      return FALSE;
    }
    break;
  case DS_ONNX_ATTR_GRAPH:
    if (a->g == NULL) {
      ds_onnx_scope_error(d, &s, error, DS_ERROR_PARSE, "a GRAPH attribute without a graph (g)");
      return FALSE;
    }
    break;
  default:
    break;
  }
  a->floats = ds_onnx_arena_take(d->arena, floats, &a->n_floats);
  a->ints = ds_onnx_arena_take(d->arena, ints, &a->n_ints);
  a->strings = ds_onnx_arena_take(d->arena, strings, &a->n_strings);
  a->tensors = ds_onnx_arena_take(d->arena, tensors, &a->n_tensors);
  a->graphs = ds_onnx_arena_take(d->arena, graphs, &a->n_graphs);
  a->type_protos = ds_onnx_arena_take(d->arena, type_protos, &a->n_type_protos);
  return TRUE;
}

/* NodeProto: input = 1, output = 2, name = 3, op_type = 4, attribute = 5, domain = 7. */
static gboolean decode_node(const DsOnnxDecoder *d, const char *graph_name, gsize index,
                            DsPbReader *r, DsOnnxNode *node, GError **error)
{
  memset(node, 0, sizeof *node);
  node->name = "";
  node->op_type = "";
  node->domain = "";
  if (!ds_onnx_prescan_strings(d, r, 3, &node->name, 4, &node->op_type, error))
    return FALSE;
  DsOnnxScope s = {.graph = graph_name,
                   .in_node = TRUE,
                   .node_index = index,
                   .node_name = node->name,
                   .op_type = node->op_type};
  if (node->op_type[0] == '\0') {
    ds_onnx_scope_error(d, &s, error, DS_ERROR_PARSE, "the node has no op_type");
    return FALSE;
  }

  g_autoptr(GArray) inputs = g_array_new(FALSE, FALSE, sizeof(const char *));
  g_autoptr(GArray) outputs = g_array_new(FALSE, FALSE, sizeof(const char *));
  g_autoptr(GArray) attributes = g_array_new(FALSE, FALSE, sizeof(DsOnnxAttribute));
  while (ds_pb_more(r)) {
    guint32 field;
    DsPbWire wire;
    if (!ds_pb_read_tag(r, &field, &wire, error))
      return FALSE;
    gboolean ok;
    const char *str;
    DsPbReader sub;
    DsOnnxAttribute attr;
    switch (field) {
    case 1:
    case 2:
      ok = ds_onnx_read_string(d, r, field, wire, &str, error);
      if (ok)
        g_array_append_val(field == 1 ? inputs : outputs, str);
      break;
    case 5:
      ok = ds_onnx_enter_field(r, field, wire, "AttributeProto", NULL, &sub, error) &&
           decode_attribute(d, &s, attributes->len, &sub, &attr, error);
      if (ok)
        g_array_append_val(attributes, attr);
      break;
    case 7:
      ok = ds_onnx_read_string(d, r, field, wire, &node->domain, error);
      break;
    default: /* name and op_type (read already), doc_string, overload, metadata */
      ok = ds_pb_skip(r, wire, error);
      break;
    }
    if (!ok)
      return FALSE;
  }
  node->inputs = ds_onnx_arena_take(d->arena, inputs, &node->n_inputs);
  node->outputs = ds_onnx_arena_take(d->arena, outputs, &node->n_outputs);
  node->attributes = ds_onnx_arena_take(d->arena, attributes, &node->n_attributes);
  return TRUE;
}

/* GraphProto: node = 1, name = 2, initializer = 5, input = 11, output = 12, value_info = 13,
 * sparse_initializer = 15. */
static gboolean decode_graph(const DsOnnxDecoder *d, DsPbReader *r, DsOnnxGraph *g, GError **error)
{
  memset(g, 0, sizeof *g);
  g->name = "";
  if (!ds_onnx_prescan_strings(d, r, 2, &g->name, 0, NULL, error))
    return FALSE;
  DsOnnxScope s = {.graph = g->name};

  g_autoptr(GArray) nodes = g_array_new(FALSE, FALSE, sizeof(DsOnnxNode));
  g_autoptr(GArray) initializers = g_array_new(FALSE, FALSE, sizeof(DsOnnxTensor));
  g_autoptr(GArray) inputs = g_array_new(FALSE, FALSE, sizeof(DsOnnxValueInfo));
  g_autoptr(GArray) outputs = g_array_new(FALSE, FALSE, sizeof(DsOnnxValueInfo));
  g_autoptr(GArray) value_info = g_array_new(FALSE, FALSE, sizeof(DsOnnxValueInfo));
  while (ds_pb_more(r)) {
    guint32 field;
    DsPbWire wire;
    if (!ds_pb_read_tag(r, &field, &wire, error))
      return FALSE;
    gboolean ok;
    DsPbReader sub;
    DsOnnxNode node;
    switch (field) {
    case 1:
      ok = ds_onnx_enter_field(r, field, wire, "NodeProto", NULL, &sub, error) &&
           decode_node(d, g->name, nodes->len, &sub, &node, error);
      if (ok)
        g_array_append_val(nodes, node);
      break;
    case 5:
      ok = ds_onnx_read_tensor(d, &s, r, field, wire, initializers, error);
      if (ok && g_array_index(initializers, DsOnnxTensor, initializers->len - 1).name[0] == 0) {
        ds_onnx_scope_error(d, &s, error, DS_ERROR_PARSE, "initializer %u has no name",
                            initializers->len - 1);
        ok = FALSE;
      }
      break;
    case 11:
      ok = read_value_info(d, &s, r, field, wire, "input", inputs, error);
      break;
    case 12:
      ok = read_value_info(d, &s, r, field, wire, "output", outputs, error);
      break;
    case 13:
      ok = read_value_info(d, &s, r, field, wire, "value_info", value_info, error);
      break;
    case 15:
      ds_onnx_scope_error(d, &s, error, DS_ERROR_UNSUPPORTED,
                          "sparse initializers are not supported");
      ok = FALSE;
      break;
    default: /* name (read already), doc_string, quantization annotations, metadata */
      ok = ds_pb_skip(r, wire, error);
      break;
    }
    if (!ok)
      return FALSE;
  }
  g->nodes = ds_onnx_arena_take(d->arena, nodes, &g->n_nodes);
  g->initializers = ds_onnx_arena_take(d->arena, initializers, &g->n_initializers);
  g->inputs = ds_onnx_arena_take(d->arena, inputs, &g->n_inputs);
  g->outputs = ds_onnx_arena_take(d->arena, outputs, &g->n_outputs);
  g->value_info = ds_onnx_arena_take(d->arena, value_info, &g->n_value_info);
  return TRUE;
}

/* ModelProto: ir_version = 1, producer_name = 2, producer_version = 3, domain = 4,
 * model_version = 5, graph = 7, opset_import = 8, metadata_props = 14, functions = 25. */
static gboolean decode_model(const DsOnnxDecoder *d, DsPbReader *r, DsOnnxModel *m, GError **error)
{
  g_autoptr(GArray) opsets = g_array_new(FALSE, FALSE, sizeof(DsOnnxOpset));
  g_autoptr(GArray) metadata = g_array_new(FALSE, FALSE, sizeof(DsOnnxStringPair));
  gboolean seen_graph = FALSE;
  while (ds_pb_more(r)) {
    guint32 field;
    DsPbWire wire;
    if (!ds_pb_read_tag(r, &field, &wire, error))
      return FALSE;
    gboolean ok;
    DsPbReader sub;
    DsOnnxOpset opset;
    switch (field) {
    case 1:
      ok = ds_onnx_read_int64_field(r, field, wire, &m->ir_version, error);
      break;
    case 2:
      ok = ds_onnx_read_string(d, r, field, wire, &m->producer_name, error);
      break;
    case 3:
      ok = ds_onnx_read_string(d, r, field, wire, &m->producer_version, error);
      break;
    case 4:
      ok = ds_onnx_read_string(d, r, field, wire, &m->domain, error);
      break;
    case 5:
      ok = ds_onnx_read_int64_field(r, field, wire, &m->model_version, error);
      break;
    case 7: {
      DsOnnxGraph *g = ds_onnx_arena_alloc(d->arena, sizeof *g);
      ok = read_graph(d, r, field, wire, &seen_graph, g, error);
      m->graph = g;
      break;
    }
    case 8:
      ok = ds_onnx_enter_field(r, field, wire, "OperatorSetIdProto", NULL, &sub, error) &&
           decode_opset(d, &sub, &opset, error);
      if (ok)
        g_array_append_val(opsets, opset);
      break;
    case 14:
      ok = ds_onnx_read_string_pair(d, r, field, wire, metadata, error);
      break;
    case 25:
      ok = ds_pb_expect_wire(r, field, wire, DS_PB_WIRE_LEN, error) && ds_pb_skip(r, wire, error);
      m->n_functions++;
      break;
    default: /* doc_string, training_info and fields this reader does not know */
      ok = ds_pb_skip(r, wire, error);
      break;
    }
    if (!ok)
      return FALSE;
  }
  if (m->graph == NULL) {
    ds_onnx_scope_error(d, NULL, error, DS_ERROR_PARSE,
                        "the model has no graph (ModelProto.graph)");
    return FALSE;
  }
  m->opsets = ds_onnx_arena_take(d->arena, opsets, &m->n_opsets);
  m->metadata = ds_onnx_arena_take(d->arena, metadata, &m->n_metadata);
  return TRUE;
}

/* ---- Entry points ------------------------------------------------------------------------ */

void ds_onnx_model_free(DsOnnxModel *model)
{
  if (model == NULL)
    return;
  ds_onnx_arena_free(model->arena);
  if (model->bytes != NULL)
    g_bytes_unref(model->bytes);
  g_free(model);
}

/* Decodes `bytes`, which the model keeps (raw_data points into them). */
static DsOnnxModel *parse_bytes(GBytes *bytes, const char *display_name, GError **error)
{
  DsOnnxModel *m = g_new0(DsOnnxModel, 1);
  m->bytes = g_bytes_ref(bytes);
  m->arena = ds_onnx_arena_new();
  DsOnnxDecoder d = {m->arena, NULL};
  d.file = ds_onnx_arena_strndup(m->arena, (const guint8 *)display_name, strlen(display_name));
  m->display_name = d.file;
  m->producer_name = m->producer_version = m->domain = "";
  gsize size;
  const guint8 *data = g_bytes_get_data(bytes, &size);
  DsPbReader r;
  ds_pb_reader_init(&r, data, size, d.file, "ModelProto");
  if (!decode_model(&d, &r, m, error)) {
    ds_onnx_model_free(m);
    return NULL;
  }
  return m;
}

DsOnnxModel *ds_onnx_model_parse(const guint8 *data, gsize size, const char *display_name,
                                 GError **error)
{
  g_return_val_if_fail(data != NULL || size == 0, NULL);
  g_autoptr(GBytes) bytes = g_bytes_new(data, size);
  return parse_bytes(bytes, display_name != NULL ? display_name : "<onnx>", error);
}

DsOnnxModel *ds_onnx_model_load(const char *path, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  GMappedFile *file = ds_file_map(path, error);
  if (file == NULL)
    return NULL;
  g_autoptr(GBytes) bytes = g_mapped_file_get_bytes(file);
  g_mapped_file_unref(file);
  return parse_bytes(bytes, path, error);
}

gboolean ds_onnx_is_model_file(const guint8 *head, gsize n)
{
  if (head == NULL || n < 2)
    return FALSE;
  if (head[0] != 0x08 || head[1] == 0 || head[1] > SNIFF_MAX_IR)
    return FALSE;
  if (n == 2)
    return TRUE;
  guint wire = head[2] & 7;
  guint low_field = (head[2] >> 3) & 0x0f; /* the field number's low bits (more may follow) */
  gboolean continues = (head[2] & 0x80) != 0;
  return (wire == 0 || wire == 1 || wire == 2 || wire == 5) && (low_field != 0 || continues);
}
