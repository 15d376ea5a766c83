/* ds-graph.h: the IR. A graph is a list of nodes in topological order.
 *
 * The layout mirrors MXNet's symbol JSON (NNVM), so a file round-trips losslessly:
 *  - a variable is a node whose op is "null"; arg_nodes lists them;
 *  - an input is an entry (node, output index, version);
 *  - a node has `n_outputs` outputs, hidden ones included (BatchNorm has 3, one visible), and
 *    entry ids are `node_row_ptr[node] + index`;
 *  - attributes keep their original strings in file order; `param` holds them parsed;
 *  - control-flow nodes own nested graphs in `subgraphs`.
 *
 * Memory policy: a graph owns its nodes, and each node owns its strings, arrays, parsed param
 * and subgraphs. Graphs are reference counted and are not modified once a loader or pass has
 * returned them, so threads may share them.
 */
#pragma once

#include <glib.h>

typedef struct _DsGraph DsGraph;
typedef struct _DsNode DsNode;
typedef struct _DsOpDef DsOpDef;
struct cJSON;

typedef struct {
  guint32 node_id;
  guint32 index;
  guint32 version; /* MXNet bumps it for inputs an op mutates (BatchNorm's moving stats) */
} DsEntry;

typedef struct {
  char *key;
  char *value;
} DsAttr;

struct _DsNode {
  guint id;             /* position in the graph */
  char *name;
  char *op_name;        /* as spelled in the file; "null" for variables */
  const DsOpDef *op;    /* NULL for variables, and for ops this build does not know (such a
                         * graph loads, prints and saves, but does not run) */
  gboolean is_variable; /* op_name is "null" */
  DsAttr *attrs;        /* file order; hidden keys (`__shape__`...) included */
  guint n_attrs;
  DsEntry *inputs;
  guint n_inputs;
  guint n_outputs;      /* all outputs, hidden ones included */
  DsGraph **subgraphs;  /* owned; control-flow bodies and partition regions */
  guint n_subgraphs;
  void *param;          /* op->param_size bytes parsed from attrs; NULL for variables */
  gboolean json_empty_attrs; /* the file wrote an empty "attrs": {} (MXNet never does); the
                              * JSON saver writes it back so that such a file round-trips */
};

struct _DsGraph {
  gint ref_count;
  DsNode **nodes;       /* topological order: inputs always refer to earlier nodes */
  guint n_nodes;
  guint *arg_nodes;     /* ids of variable nodes, as the file lists them */
  guint n_arg_nodes;
  guint *node_row_ptr;  /* n_nodes + 1 entries; entry id = node_row_ptr[node] + index */
  DsEntry *heads;       /* the graph's outputs */
  guint n_heads;
  char **head_names;    /* NULL, or a name per head given by the file (ONNX's output names);
                         * ds_graph_dup_output_name() prefers them */
  struct cJSON *attrs;  /* graph-level "attrs" object (mxnet_version ...), written back as is */
  int mxnet_version;    /* from attrs; 800 for a legacy file without one */
  GHashTable *by_name;  /* node name -> DsNode*, built on first lookup */
};

/* Reference counting. ds_graph_unref() frees the graph and everything it owns. */
DsGraph *ds_graph_ref(DsGraph *graph);
void ds_graph_unref(DsGraph *graph);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsGraph, ds_graph_unref)

/* An empty graph with ref count 1, for loaders and passes to fill. */
DsGraph *ds_graph_new(void);

/* A new node appended to `graph` (id = position), owning copies of `name` and `op_name`. */
DsNode *ds_graph_add_node(DsGraph *graph, const char *name, const char *op_name);

/* A node in no graph yet (one output), owning copies of `name` and `op_name`, for passes
 * that build a node before it has a place (a partition's create_node). Hand it to
 * ds_graph_append_node(), or free it with ds_node_free(). */
DsNode *ds_node_new(const char *name, const char *op_name);
/* A deep copy in no graph: strings, attributes, inputs as they are (the caller remaps them),
 * output count and a reference on each subgraph. `param` stays NULL, for
 * ds_graph_parse_params() to fill in the copy's graph. */
DsNode *ds_node_copy(const DsNode *node);
void ds_node_free(DsNode *node);
/* A copy of `graph` that a pass may change: every node copied (ds_node_copy, with its op and
 * a reference on each subgraph), the variables, heads, head names and graph attributes, and
 * the params parsed again. NULL with `error` set when a param does not parse. */
DsGraph *ds_graph_copy(const DsGraph *graph, GError **error);
/* Appends `node` (in no graph) to `graph`, which takes ownership and sets its id. */
void ds_graph_append_node(DsGraph *graph, DsNode *node);

/* Appends an attribute; the node owns copies of both strings. */
void ds_node_add_attr(DsNode *node, const char *key, const char *value);

/* The attribute's value, or NULL. Borrowed. */
const char *ds_node_get_attr(const DsNode *node, const char *key);

static inline gboolean ds_node_is_variable(const DsNode *node) { return node->is_variable; }

/* The first node called `name`, or NULL. Borrowed. */
DsNode *ds_graph_find_node(DsGraph *graph, const char *name);

/* Number of entries (all nodes' outputs). */
static inline guint ds_graph_n_entries(const DsGraph *graph)
{
  return graph->node_row_ptr[graph->n_nodes];
}

static inline guint ds_graph_entry_id(const DsGraph *graph, DsEntry entry)
{
  return graph->node_row_ptr[entry.node_id] + entry.index;
}

/* The node that produces entry `e` (a binary search over node_row_ptr). */
static inline guint ds_graph_entry_node(const DsGraph *graph, guint e)
{
  guint lo = 0, hi = graph->n_nodes;
  while (hi - lo > 1) {
    guint mid = (lo + hi) / 2;
    if (graph->node_row_ptr[mid] <= e)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* Recomputes node_row_ptr from each node's n_outputs. */
void ds_graph_update_row_ptr(DsGraph *graph);

/* Checks structure: inputs refer to earlier nodes and existing outputs (which also rules out
 * cycles), heads and arg_nodes are in range, input counts fit the ops. Names the node. */
gboolean ds_graph_validate(const DsGraph *graph, const char *file, GError **error);

/* Parses every known op node's attributes into node->param with its op's parser, and checks
 * its input count. */
gboolean ds_graph_parse_params(DsGraph *graph, GError **error);

/* The name MXNet's list_outputs() gives head `i`: "fc1_output", "bn_mean", a variable's name. */
char *ds_graph_dup_output_name(const DsGraph *graph, guint i);
/* The same name for any entry, head or not ("bn0_mean" for BatchNorm's hidden mean). */
char *ds_graph_dup_entry_name(const DsGraph *graph, DsEntry entry);

/* Number of op (non-variable) nodes. */
guint ds_graph_count_ops(const DsGraph *graph);
/* The same with the ops of every nested graph (loop and branch bodies, regions) counted. */
guint ds_graph_count_ops_nested(const DsGraph *graph);
/* Per entry, how many times nodes read it, plus one for each time it is a graph output (read
 * "at the end"): a tensor is live until that many reads are done. Caller frees. */
guint *ds_graph_count_readers(const DsGraph *graph);
