/* ds-onnx-model.h: ONNX model files decoded into plain C structs.
 *
 * The decoded subset of onnx.proto: ModelProto (IR version, opset imports, producer, metadata,
 * the graph), GraphProto (nodes, initializers, inputs, outputs, value_info), NodeProto,
 * AttributeProto (float, int, string, tensor, graph, type and their lists; subgraphs
 * recursively, so Loop, If and Scan bodies come with their nodes), TensorProto (dims, data type,
 * raw or typed data, external data references) and ValueInfoProto (tensor element type and shape,
 * each dim a value, a named parameter or unknown). Other fields are skipped. Nothing here knows the
 * engine's graph IR; mapping a DsOnnxModel onto it is a later step.
 *
 * Checks made while decoding, each a one-line DS_ERROR naming the file and the graph, node,
 * attribute or tensor (or the byte offset, for a malformed encoding): the wire format itself
 * (ds-protobuf.h); names valid UTF-8 without NUL bytes; a node has an op_type, an attribute and
 * an initializer have a name; a tensor's dims are not negative, their product and byte size
 * fit in 64 bits, raw_data holds exactly that many bytes and a typed data field holds one value
 * per element (two for complex types) in the field its data type uses; an external tensor has
 * a location and, if it says, the right length. Refused as unsupported: attributes referring to
 * a function's attributes (ref_attr_name), sparse tensors (attributes and initializers),
 * segmented tensors. Sequence, map and optional types are decoded only as far as their kind
 * (DsOnnxTypeKind); ds_onnx_value_require_tensor() reports them by name.
 *
 * Memory policy: a DsOnnxModel owns everything reachable from it, in one arena freed by
 * ds_onnx_model_free(); nothing inside is freed on its own. Strings are NUL-terminated copies.
 * raw_data points into the model's own copy of the file (the mapping itself, for a model
 * loaded from a path), so it is not aligned: read it with memcpy. All pointers are valid until
 * the model is freed; treat everything as read-only.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

/* TensorProto.DataType values, as in onnx.proto. */
typedef enum {
  DS_ONNX_UNDEFINED = 0,
  DS_ONNX_FLOAT = 1,
  DS_ONNX_UINT8 = 2,
  DS_ONNX_INT8 = 3,
  DS_ONNX_UINT16 = 4,
  DS_ONNX_INT16 = 5,
  DS_ONNX_INT32 = 6,
  DS_ONNX_INT64 = 7,
  DS_ONNX_STRING = 8,
  DS_ONNX_BOOL = 9,
  DS_ONNX_FLOAT16 = 10,
  DS_ONNX_DOUBLE = 11,
  DS_ONNX_UINT32 = 12,
  DS_ONNX_UINT64 = 13,
  DS_ONNX_COMPLEX64 = 14,
  DS_ONNX_COMPLEX128 = 15,
  DS_ONNX_BFLOAT16 = 16,
  DS_ONNX_FLOAT8E4M3FN = 17,
  DS_ONNX_FLOAT8E4M3FNUZ = 18,
  DS_ONNX_FLOAT8E5M2 = 19,
  DS_ONNX_FLOAT8E5M2FNUZ = 20,
  DS_ONNX_UINT4 = 21,
  DS_ONNX_INT4 = 22,
  DS_ONNX_FLOAT4E2M1 = 23,
  DS_ONNX_FLOAT8E8M0 = 24,
} DsOnnxDataType;

/* AttributeProto.AttributeType values, as in onnx.proto. */
typedef enum {
  DS_ONNX_ATTR_UNDEFINED = 0,
  DS_ONNX_ATTR_FLOAT = 1,
  DS_ONNX_ATTR_INT = 2,
  DS_ONNX_ATTR_STRING = 3,
  DS_ONNX_ATTR_TENSOR = 4,
  DS_ONNX_ATTR_GRAPH = 5,
  DS_ONNX_ATTR_FLOATS = 6,
  DS_ONNX_ATTR_INTS = 7,
  DS_ONNX_ATTR_STRINGS = 8,
  DS_ONNX_ATTR_TENSORS = 9,
  DS_ONNX_ATTR_GRAPHS = 10,
  DS_ONNX_ATTR_SPARSE_TENSOR = 11,
  DS_ONNX_ATTR_SPARSE_TENSORS = 12,
  DS_ONNX_ATTR_TYPE_PROTO = 13,
  DS_ONNX_ATTR_TYPE_PROTOS = 14,
} DsOnnxAttrType;

typedef struct DsOnnxGraph DsOnnxGraph;

/* Bytes with a length; `data` is a copy with a NUL after the last byte, so text can be used as
 * a C string (bytes may also hold NULs before `len`). */
typedef struct {
  const char *data;
  gsize len;
} DsOnnxBytes;

typedef struct {
  const char *key;
  const char *value;
} DsOnnxStringPair;

/* Where a tensor's elements are. */
typedef enum {
  DS_ONNX_DATA_NONE,     /* no data in the file (dims only) */
  DS_ONNX_DATA_RAW,      /* raw_data: little-endian bytes, packed 4-bit types two per byte */
  DS_ONNX_DATA_FLOAT,    /* float_data: FLOAT, COMPLEX64 (real, imaginary pairs) */
  DS_ONNX_DATA_INT32,    /* int32_data: INT32 and the narrower types, one value each */
  DS_ONNX_DATA_INT64,    /* int64_data: INT64 */
  DS_ONNX_DATA_DOUBLE,   /* double_data: DOUBLE, COMPLEX128 */
  DS_ONNX_DATA_UINT64,   /* uint64_data: UINT32, UINT64 */
  DS_ONNX_DATA_STRING,   /* string_data: STRING */
  DS_ONNX_DATA_EXTERNAL, /* in another file: external_location, _offset, _length */
} DsOnnxDataKind;

typedef struct {
  const char *name; /* "" for an unnamed tensor (attribute values often are) */
  int data_type;    /* a DsOnnxDataType */
  gsize n_dims;
  const int64_t *dims; /* each >= 0; no dims: a scalar */
  guint64 n_elements;  /* the product of the dims */
  guint64 n_bytes;     /* the data's size in bytes; 0 for STRING */

  DsOnnxDataKind data;
  const guint8 *raw_data; /* DATA_RAW: n_bytes bytes, unaligned */
  gsize n_values;         /* the length of the typed array in use */
  const float *float_data;
  const int32_t *int32_data;
  const int64_t *int64_data;
  const double *double_data;
  const guint64 *uint64_data;
  const DsOnnxBytes *string_data;

  int data_location; /* 0 DEFAULT, 1 EXTERNAL */
  gsize n_external_data;
  const DsOnnxStringPair *external_data; /* every key/value entry, in file order */
  const char *external_location;         /* DATA_EXTERNAL: the file, relative to the model's */
  guint64 external_offset;               /* 0 when not given */
  gboolean has_external_length;
  guint64 external_length;
} DsOnnxTensor;

typedef enum {
  DS_ONNX_DIM_UNKNOWN, /* neither given (a negative dim_value is read as unknown too) */
  DS_ONNX_DIM_VALUE,
  DS_ONNX_DIM_PARAM,
} DsOnnxDimKind;

typedef struct {
  DsOnnxDimKind kind;
  int64_t value;     /* DIM_VALUE */
  const char *param; /* DIM_PARAM: the symbol ("N", "batch") */
} DsOnnxDim;

typedef enum {
  DS_ONNX_TYPE_NONE, /* no type given */
  DS_ONNX_TYPE_TENSOR,
  DS_ONNX_TYPE_SEQUENCE,
  DS_ONNX_TYPE_MAP,
  DS_ONNX_TYPE_OPTIONAL,
  DS_ONNX_TYPE_SPARSE_TENSOR,
} DsOnnxTypeKind;

typedef struct {
  const char *name;
  DsOnnxTypeKind kind;
  int elem_type;      /* TYPE_TENSOR: a DsOnnxDataType, 0 when not given */
  gboolean has_shape; /* FALSE: not even the rank is known */
  gsize n_dims;
  const DsOnnxDim *dims;
} DsOnnxValueInfo;

typedef struct {
  const char *name;
  DsOnnxAttrType type; /* inferred from the value present when the file leaves it 0 */
  float f;
  int64_t i;
  DsOnnxBytes s;
  const DsOnnxTensor *t; /* TENSOR */
  const DsOnnxGraph *g;  /* GRAPH */
  gsize n_floats;
  const float *floats;
  gsize n_ints;
  const int64_t *ints;
  gsize n_strings;
  const DsOnnxBytes *strings;
  gsize n_tensors;
  const DsOnnxTensor *tensors;
  gsize n_graphs;
  const DsOnnxGraph *graphs;
  const DsOnnxValueInfo *tp; /* TYPE_PROTO: a type (its name is "") */
  gsize n_type_protos;
  const DsOnnxValueInfo *type_protos;
} DsOnnxAttribute;

typedef struct {
  const char *name;    /* may be "" */
  const char *op_type; /* never "" */
  const char *domain;  /* "" (or "ai.onnx") for the standard operators */
  gsize n_inputs;
  const char *const *inputs; /* "" marks an omitted optional input */
  gsize n_outputs;
  const char *const *outputs; /* "" marks an unused optional output */
  gsize n_attributes;
  const DsOnnxAttribute *attributes;
} DsOnnxNode;

struct DsOnnxGraph {
  const char *name;
  gsize n_nodes;
  const DsOnnxNode *nodes;
  gsize n_initializers;
  const DsOnnxTensor *initializers;
  gsize n_inputs;
  const DsOnnxValueInfo *inputs; /* older files list initializers here too */
  gsize n_outputs;
  const DsOnnxValueInfo *outputs;
  gsize n_value_info;
  const DsOnnxValueInfo *value_info;
};

typedef struct {
  const char *domain; /* "" or "ai.onnx": the standard operator set */
  int64_t version;
} DsOnnxOpset;

typedef struct DsOnnxArena DsOnnxArena;

typedef struct {
  const char *display_name; /* the path or name given, for messages */
  int64_t ir_version;
  gsize n_opsets;
  const DsOnnxOpset *opsets;
  const char *producer_name;
  const char *producer_version;
  const char *domain;
  int64_t model_version;
  gsize n_metadata;
  const DsOnnxStringPair *metadata;
  gsize n_functions; /* model-local functions (FunctionProto): counted, not decoded */
  const DsOnnxGraph *graph;

  /* private */
  DsOnnxArena *arena;
  GBytes *bytes;
} DsOnnxModel;

/* Decodes a ModelProto from `data`, which is copied. `display_name` names it in messages
 * (NULL: "<onnx>"). Caller frees with ds_onnx_model_free(). */
DsOnnxModel *ds_onnx_model_parse(const guint8 *data, gsize size, const char *display_name,
                                 GError **error);
/* Maps the file at `path` and decodes it; the model keeps the mapping for its raw_data.
 * Errors name the path. */
DsOnnxModel *ds_onnx_model_load(const char *path, GError **error);
void ds_onnx_model_free(DsOnnxModel *model);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsOnnxModel, ds_onnx_model_free)

/* A content sniff on the first `n` bytes of a file: TRUE if they can start an ONNX model.
 * Writers emit fields in field-number order, so a model begins with field 1, ir_version, as a
 * varint: the byte 0x08, then a one-byte varint from 1 to 127 (IR versions are small). A third
 * byte, when there is one, must begin another valid tag (field number > 0, wire type 0, 1, 2
 * or 5). JSON, .npy and .params files never begin with 0x08, so they are never taken for ONNX.
 * A model without ir_version is not recognised, though ds_onnx_model_parse() reads it. */
gboolean ds_onnx_is_model_file(const guint8 *head, gsize n);

/* A TensorProto.DataType's lower-case name ("float", "int64", "bfloat16"), or NULL for a value
 * outside the enum. */
const char *ds_onnx_elem_type_name(int data_type);
/* Bytes per element: 0 for UNDEFINED, STRING, the 4-bit types (two per byte; see
 * ds_onnx_data_bytes()) and values outside the enum. */
gsize ds_onnx_elem_size(int data_type);
/* The bytes `n_elements` of `data_type` take in raw_data, 4-bit types included. FALSE for
 * types without a fixed size (UNDEFINED, STRING, unknown values) or a size over 64 bits. */
gboolean ds_onnx_data_bytes(int data_type, guint64 n_elements, guint64 *n_bytes);

/* The kind's name ("tensor", "sequence", "map", "optional", "sparse tensor", "none"). */
const char *ds_onnx_type_kind_name(DsOnnxTypeKind kind);
/* Fails with DS_ERROR_UNSUPPORTED unless `value` has a tensor type, e.g.
 * "model.onnx: input 'seq' has a sequence type; only tensors are supported". `role` names the
 * value's place ("input", "output"). */
gboolean ds_onnx_value_require_tensor(const DsOnnxModel *model, const DsOnnxValueInfo *value,
                                      const char *role, GError **error);

/* The attribute of `node` called `name`, or NULL. */
const DsOnnxAttribute *ds_onnx_node_find_attribute(const DsOnnxNode *node, const char *name);

/* The indices of `graph`'s nodes in an order where each comes after the nodes producing what
 * it reads (its inputs and its bodies' outer values): the file's order where that already
 * holds, as ONNX Runtime sorts a graph it loads (ds-onnx-order.c). `order` holds n_nodes
 * indices. FALSE, naming a node, when the nodes form a cycle. */
gboolean ds_onnx_graph_order(const DsOnnxGraph *graph, gsize *order, GError **error);
