/* ds-onnx-import.h: an ONNX model mapped onto the engine's graph IR.
 *
 * Every ONNX node becomes one or more engine nodes (ds-onnx-ops-*.c say how, op by op and
 * opset by opset); graph inputs become variables whose declared shapes keep ONNX's named dims
 * (`dim_param`) as symbols of the symbolic engine, with fresh symbols (`unk__0`...) for dims
 * the file leaves unknown; initializers and Constant values become weights; Loop, If and Scan
 * become `_while_loop`, `_cond` and `_foreach` nodes owning their translated bodies, with the
 * outer values a body reads passed in as explicit inputs. The graph's outputs keep their ONNX
 * names.
 *
 * A node whose op, opset or attributes the engine cannot run does not stop the import: it
 * becomes an opaque node (op NULL, its attributes kept for display), so the model can still be
 * inspected and drawn, and `unsupported` lists every such node in one line for the session to
 * refuse a run with before anything runs.
 *
 * Memory policy: a DsOnnxImport owns its graph reference and arrays; the model may be freed
 * once the import returns.
 */
#pragma once

#include <glib.h>

#include "ds-graph.h"
#include "ds-ndarray.h"
#include "ds-onnx-model.h"

/* The opsets of the default domain ("" or "ai.onnx") that the importer maps. Older models load
 * too, with each op checked against the oldest form its translator maps; newer ones are
 * refused. From 18 on, an op whose form changed after 17 is checked against the newest form
 * its translator maps (ds-onnx-versions.c). */
#define DS_ONNX_MIN_OPSET 7
#define DS_ONNX_MAX_OPSET 21

typedef struct {
  char *name;  /* a variable of the top graph */
  char *shape; /* its declared shape as text for ds_session_parse_shape(): "(N, 3, 224, 224)" */
} DsOnnxInputShape;

typedef struct {
  DsGraph *graph;            /* heads named by head_names */
  GPtrArray *weights;        /* DsNDArray*, each named by its variable (owned) */
  GPtrArray *weight_names;   /* char*, parallel to weights */
  GArray *input_shapes;      /* DsOnnxInputShape, for data inputs with a known rank */
  char *unsupported;         /* NULL, or "N nodes cannot run: 'a' (Op: reason), ..." */
  gint64 opset;              /* of the default domain */
  char *format;              /* "ONNX IR 8, opset 13, from pytorch 1.13.1" */
} DsOnnxImport;

/* Maps `model`. `base_dir` is the model's folder, for external data. Errors (a malformed graph:
 * an undefined input, a missing required attribute, a sequence-typed input) name the file and
 * the node. */
DsOnnxImport *ds_onnx_import(const DsOnnxModel *model, const char *base_dir, GError **error);
void ds_onnx_import_free(DsOnnxImport *import);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsOnnxImport, ds_onnx_import_free)
