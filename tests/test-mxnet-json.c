/* test-mxnet-json.c: the MXNet symbol JSON loader and saver on the real models (lossless
 * round trips of the current layout, upgrades of the old ones), nested subgraphs, and bad
 * files that must give the right error naming the file and node. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ds-config.h"
#include "ds-error.h"
#include "ds-mxnet-json.h"
#include "ds-op.h"

typedef struct {
  const char *file;
  guint n_nodes; /* as in the file; the 0.8 upgrade may add variables */
  gboolean current_layout;
} ModelCase;

static const ModelCase models[] = {
    {"djl_mlp-symbol.json", 12, TRUE},
    {"gluoncv_resnet18_v1-symbol.json", 171, TRUE},
    {"gluoncv_squeezenet1.0-symbol.json", 119, TRUE},
    {"gluoncv_mask_rcnn_resnet18_v1b_coco-symbol.json", 462, TRUE},
    {"gluoncv_ssd_512_resnet50_v1-symbol.json", 758, TRUE},
    {"gluonnlp_static_bert_qa-symbol.json", 737, TRUE},
    {"mms_lstm_ptb-symbol.json", 14, FALSE},
    {"mxnet_test_dnnl_model1.json", 73, FALSE},
    {"mxnet_legacy_save_000800.json", 17, FALSE},
};

static char *model_path(const char *file)
{
  const char *shared = g_getenv("DS_SHARED_DIR");
  return g_build_filename(shared != NULL ? shared : DS_SHARED_DIR, "models", "mxnet", file, NULL);
}

/* TRUE when this build knows BatchNorm with its five inputs, so the 0.8 upgrade adds the
 * moving statistics as it does in MXNet. */
static gboolean batchnorm_takes_aux(void)
{
  const DsOpDef *bn = ds_op_lookup("BatchNorm");
  if (bn == NULL)
    return FALSE;
  void *param = bn->param_size > 0 ? g_malloc0(bn->param_size) : NULL;
  DsGraph *g = ds_graph_new();
  DsNode *node = ds_graph_add_node(g, "bn", "BatchNorm");
  gboolean ok = bn->parse == NULL || bn->parse(node, param, NULL);
  int n = ok ? bn->num_inputs(param) : -1;
  g_free(param);
  ds_graph_unref(g);
  return n == 5;
}

static guint expected_nodes(const ModelCase *m)
{
  if (g_str_has_prefix(m->file, "mxnet_legacy") && batchnorm_takes_aux())
    return m->n_nodes + 2;
  return m->n_nodes;
}

static DsGraph *load_model(const char *file)
{
  GError *error = NULL;
  g_autofree char *path = model_path(file);
  DsGraph *graph = ds_mxnet_json_load(path, &error);
  if (error != NULL)
    g_test_message("%s", error->message);
  g_assert_no_error(error);
  g_assert_nonnull(graph);
  return graph;
}

static void test_load_all(void)
{
  for (guint i = 0; i < G_N_ELEMENTS(models); i++) {
    g_autoptr(DsGraph) graph = load_model(models[i].file);
    g_test_message("%s: %u nodes", models[i].file, graph->n_nodes);
    g_assert_cmpuint(graph->n_nodes, ==, expected_nodes(&models[i]));
    g_assert_cmpuint(graph->n_heads, >=, 1);
    g_assert_cmpuint(ds_graph_n_entries(graph), >=, graph->n_nodes);
    g_assert_cmpint(graph->mxnet_version, >=, 10400);
  }
}

static void test_save_identical(void)
{
  GError *error = NULL;
  char *dir = g_dir_make_tmp("ds-test-json-XXXXXX", &error);
  g_assert_no_error(error);
  for (guint i = 0; i < G_N_ELEMENTS(models); i++) {
    if (!models[i].current_layout)
      continue;
    g_autofree char *path = model_path(models[i].file);
    g_autofree char *original = NULL;
    gsize original_len;
    g_assert_true(g_file_get_contents(path, &original, &original_len, NULL));
    g_autoptr(DsGraph) graph = load_model(models[i].file);
    gsize len;
    g_autofree char *saved = ds_mxnet_json_save_to_data(graph, &len);
    g_test_message("%s: %" G_GSIZE_FORMAT " bytes, saved %" G_GSIZE_FORMAT, models[i].file,
                   original_len, len);
    g_assert_cmpmem(saved, len, original, original_len);

    g_autofree char *out = g_build_filename(dir, "out.json", NULL);
    g_assert_true(ds_mxnet_json_save(graph, out, &error));
    g_assert_no_error(error);
    g_autofree char *written = NULL;
    gsize written_len;
    g_assert_true(g_file_get_contents(out, &written, &written_len, NULL));
    g_assert_cmpmem(written, written_len, original, original_len);
    g_unlink(out);
  }
  g_rmdir(dir);
  g_free(dir);
}

static void assert_same_graph(const DsGraph *a, const DsGraph *b)
{
  g_assert_cmpuint(a->n_nodes, ==, b->n_nodes);
  for (guint i = 0; i < a->n_nodes; i++) {
    const DsNode *x = a->nodes[i], *y = b->nodes[i];
    g_assert_cmpstr(x->name, ==, y->name);
    g_assert_cmpstr(x->op_name, ==, y->op_name);
    g_assert_true(x->op == y->op);
    g_assert_cmpuint(x->n_outputs, ==, y->n_outputs);
    g_assert_cmpuint(x->n_attrs, ==, y->n_attrs);
    for (guint k = 0; k < x->n_attrs; k++) {
      g_assert_cmpstr(x->attrs[k].key, ==, y->attrs[k].key);
      g_assert_cmpstr(x->attrs[k].value, ==, y->attrs[k].value);
    }
    g_assert_cmpuint(x->n_inputs, ==, y->n_inputs);
    g_assert_cmpmem(x->inputs, x->n_inputs * sizeof(DsEntry), y->inputs,
                    y->n_inputs * sizeof(DsEntry));
    g_assert_cmpuint(x->n_subgraphs, ==, y->n_subgraphs);
    for (guint s = 0; s < x->n_subgraphs; s++)
      assert_same_graph(x->subgraphs[s], y->subgraphs[s]);
  }
  g_assert_cmpmem(a->heads, a->n_heads * sizeof(DsEntry), b->heads, b->n_heads * sizeof(DsEntry));
  g_assert_cmpmem(a->arg_nodes, a->n_arg_nodes * sizeof(guint), b->arg_nodes,
                  b->n_arg_nodes * sizeof(guint));
  g_assert_cmpmem(a->node_row_ptr, (a->n_nodes + 1) * sizeof(guint), b->node_row_ptr,
                  (b->n_nodes + 1) * sizeof(guint));
}

/* The old files save in the current layout; that output loads to the same graph and saves to
 * the same bytes again. */
static void test_upgrade_roundtrip(void)
{
  for (guint i = 0; i < G_N_ELEMENTS(models); i++) {
    if (models[i].current_layout)
      continue;
    GError *error = NULL;
    g_autoptr(DsGraph) graph = load_model(models[i].file);
    g_assert_cmpint(graph->mxnet_version, ==, 10500);
    gsize len;
    g_autofree char *saved = ds_mxnet_json_save_to_data(graph, &len);
    g_assert_true(g_str_has_suffix(saved, "  \"attrs\": {\n    \"mxnet_version\": [\n"
                                          "      \"int\",\n      10500\n    ]\n  }\n}"));
    g_assert_null(strstr(saved, "\"attr\":"));
    g_assert_null(strstr(saved, "\"param\":"));
    g_assert_null(strstr(saved, ", \n"));
    g_autoptr(DsGraph) again = ds_mxnet_json_load_data(saved, len, "saved.json", &error);
    g_assert_no_error(error);
    assert_same_graph(graph, again);
    gsize len2;
    g_autofree char *saved2 = ds_mxnet_json_save_to_data(again, &len2);
    g_assert_cmpmem(saved2, len2, saved, len);
  }
}

static void assert_attr(const DsGraph *graph, const char *node_name, const char *key,
                        const char *value)
{
  DsNode *node = ds_graph_find_node((DsGraph *)graph, node_name);
  g_assert_nonnull(node);
  g_assert_cmpstr(ds_node_get_attr(node, key), ==, value);
}

static void assert_sorted_attrs(const DsGraph *graph)
{
  for (guint i = 0; i < graph->n_nodes; i++)
    for (guint k = 1; k < graph->nodes[i]->n_attrs; k++)
      g_assert_cmpint(strcmp(graph->nodes[i]->attrs[k - 1].key, graph->nodes[i]->attrs[k].key), <,
                      0);
}

static void test_legacy_upgrade(void)
{
  g_autoptr(DsGraph) g = load_model("mxnet_legacy_save_000800.json");
  assert_sorted_attrs(g);
  /* "param" and "attr" merge; hidden keys get underscores. */
  assert_attr(g, "data", "__ctx_group__", "stage1");
  assert_attr(g, "data", "__lr_mult__", "0.2");
  assert_attr(g, "data", "ctx_group", NULL);
  assert_attr(g, "fc1_weight", "__wd_mult__", "0.3");
  assert_attr(g, "fc1", "num_hidden", "128");
  assert_attr(g, "fc1", "no_bias", "False");
  assert_attr(g, "fc1", "__ctx_group__", "stage1");
  assert_attr(g, "relu1", "act_type", "relu");
  assert_attr(g, "softmax", "normalization", "null");
  /* On a variable "weight_lr_mult" stays as it is. On fc1 it names fc1's "weight" input,
   * so it moves to that variable as __lr_mult__, when this build knows the op's inputs. */
  assert_attr(g, "fc1_weight", "weight_lr_mult", "1.2");
  const DsOpDef *fc = ds_op_lookup("FullyConnected");
  char buf[16];
  if (fc != NULL && strcmp(ds_op_input_name(fc, 3, 1, buf), "weight") == 0) {
    assert_attr(g, "fc1_weight", "__lr_mult__", "1.2");
    assert_attr(g, "fc1", "weight_lr_mult", NULL);
  } else {
    assert_attr(g, "fc1", "weight_lr_mult", "1.2");
  }
  /* Before 0.9 BatchNorm's moving statistics were not inputs: the upgrade adds them. */
  DsNode *bn = ds_graph_find_node(g, "batchnorm0");
  g_assert_nonnull(bn);
  if (batchnorm_takes_aux()) {
    g_assert_cmpuint(bn->n_inputs, ==, 5);
    DsNode *mean = g->nodes[bn->inputs[3].node_id];
    DsNode *var = g->nodes[bn->inputs[4].node_id];
    g_assert_cmpstr(mean->name, ==, "batchnorm0_moving_mean");
    g_assert_cmpstr(var->name, ==, "batchnorm0_moving_var");
    g_assert_cmpuint(mean->id, ==, bn->id - 2);
    g_assert_true(mean->is_variable && var->is_variable);
    assert_attr(g, "batchnorm0_moving_mean", "__init__", "[\"zero\", {}]");
    assert_attr(g, "batchnorm0_moving_var", "__init__", "[\"one\", {}]");
    assert_attr(g, "batchnorm0_moving_var", "eps", "0.001");
    assert_attr(g, "batchnorm0_moving_var", "__ctx_group__", "stage2");
    g_assert_cmpuint(g->n_arg_nodes, ==, 12);
    g_assert_cmpuint(g->heads[0].node_id, ==, 18);
  } else {
    g_assert_cmpuint(bn->n_inputs, ==, 3);
    g_assert_cmpuint(g->n_arg_nodes, ==, 10);
    g_assert_cmpuint(g->heads[0].node_id, ==, 16);
  }

  g_autoptr(DsGraph) lstm = load_model("mms_lstm_ptb-symbol.json");
  assert_sorted_attrs(lstm);
  assert_attr(lstm, "lstm_begin_state_0", "shape", "(2, 0, 200)");
  assert_attr(lstm, "lstm_begin_state_0", "__layout__", "LNC");
  assert_attr(lstm, "lstm_parameters", "__init__",
              "[\"fusedrnn\", {\"num_hidden\": 200, \"init\": null, \"mode\": \"lstm\", "
              "\"forget_bias\": 1.0, \"num_layers\": 2, \"bidirectional\": false}]");
  assert_attr(lstm, "lstm_rnn", "state_size", "200");

  /* The MKL-DNN file's Pooling nodes keep the 2 outputs its node_row_ptr gives them. */
  g_autoptr(DsGraph) dnnl = load_model("mxnet_test_dnnl_model1.json");
  DsNode *pool1 = ds_graph_find_node(dnnl, "pool1");
  g_assert_nonnull(pool1);
  g_assert_cmpuint(pool1->n_outputs, ==, 2);
  g_assert_cmpuint(dnnl->node_row_ptr[pool1->id + 1] - dnnl->node_row_ptr[pool1->id], ==, 2);
  g_assert_cmpuint(ds_graph_n_entries(dnnl), ==, 73 + 5);
}

/* Control-flow nodes own graphs in "subgraphs"; they, an empty "attrs": {}, escapes and
 * other graph attributes all come back in MXNet's layout. */
static const char subgraph_input[] =
    "{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", \"inputs\": []},"
    " {\"op\": \"_test_loop\", \"name\": \"loop0\", \"attrs\": {\"num_args\": \"1\","
    " \"note\": \"tab\\there \\\"q\\\" back\\\\slash\\nnl\"}, \"inputs\": [[0, 0, 0]],"
    " \"subgraphs\": [{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
    " {\"op\": \"_test_body\", \"name\": \"body\", \"attrs\": {}, \"inputs\": [[0, 0, 0]]}],"
    " \"arg_nodes\": [0], \"node_row_ptr\": [0, 1, 2], \"heads\": [[1, 0, 0]]}]}],"
    " \"arg_nodes\": [0], \"node_row_ptr\": [0, 1, 3], \"heads\": [[1, 1, 0]],"
    " \"attrs\": {\"mxnet_version\": [\"int\", 10600], \"extra\": {\"k\": [1.5, true, null,"
    " \"s\"]}}}";
static const char subgraph_expected[] =
    "{\n"
    "  \"nodes\": [\n"
    "    {\n"
    "      \"op\": \"null\",\n"
    "      \"name\": \"data\",\n"
    "      \"inputs\": []\n"
    "    },\n"
    "    {\n"
    "      \"op\": \"_test_loop\",\n"
    "      \"name\": \"loop0\",\n"
    "      \"attrs\": {\n"
    "        \"num_args\": \"1\",\n"
    "        \"note\": \"tab\\there \\\"q\\\" back\\\\slash\\nnl\"\n"
    "      },\n"
    "      \"inputs\": [\n"
    "        [\n"
    "          0,\n"
    "          0,\n"
    "          0\n"
    "        ]\n"
    "      ],\n"
    "      \"subgraphs\": [\n"
    "        {\n"
    "          \"nodes\": [\n"
    "            {\n"
    "              \"op\": \"null\",\n"
    "              \"name\": \"x\",\n"
    "              \"inputs\": []\n"
    "            },\n"
    "            {\n"
    "              \"op\": \"_test_body\",\n"
    "              \"name\": \"body\",\n"
    "              \"attrs\": {},\n"
    "              \"inputs\": [\n"
    "                [\n"
    "                  0,\n"
    "                  0,\n"
    "                  0\n"
    "                ]\n"
    "              ]\n"
    "            }\n"
    "          ],\n"
    "          \"arg_nodes\": [\n"
    "            0\n"
    "          ],\n"
    "          \"node_row_ptr\": [\n"
    "            0,\n"
    "            1,\n"
    "            2\n"
    "          ],\n"
    "          \"heads\": [\n"
    "            [\n"
    "              1,\n"
    "              0,\n"
    "              0\n"
    "            ]\n"
    "          ]\n"
    "        }\n"
    "      ]\n"
    "    }\n"
    "  ],\n"
    "  \"arg_nodes\": [\n"
    "    0\n"
    "  ],\n"
    "  \"node_row_ptr\": [\n"
    "    0,\n"
    "    1,\n"
    "    3\n"
    "  ],\n"
    "  \"heads\": [\n"
    "    [\n"
    "      1,\n"
    "      1,\n"
    "      0\n"
    "    ]\n"
    "  ],\n"
    "  \"attrs\": {\n"
    "    \"mxnet_version\": [\n"
    "      \"int\",\n"
    "      10600\n"
    "    ],\n"
    "    \"extra\": {\n"
    "      \"k\": [\n"
    "        1.5,\n"
    "        true,\n"
    "        null,\n"
    "        \"s\"\n"
    "      ]\n"
    "    }\n"
    "  }\n"
    "}";

static void test_subgraphs(void)
{
  GError *error = NULL;
  g_autoptr(DsGraph) g =
      ds_mxnet_json_load_data(subgraph_input, strlen(subgraph_input), "loop.json", &error);
  g_assert_no_error(error);
  g_assert_cmpuint(g->n_nodes, ==, 2);
  g_assert_cmpint(g->mxnet_version, ==, 10600);
  DsNode *loop = g->nodes[1];
  g_assert_null(loop->op); /* an op this build does not know still loads and saves */
  g_assert_cmpuint(loop->n_outputs, ==, 2);
  g_assert_cmpstr(ds_node_get_attr(loop, "note"), ==, "tab\there \"q\" back\\slash\nnl");
  g_assert_cmpuint(loop->n_subgraphs, ==, 1);
  const DsGraph *body = loop->subgraphs[0];
  g_assert_cmpuint(body->n_nodes, ==, 2);
  g_assert_null(body->attrs);
  g_assert_true(body->nodes[1]->json_empty_attrs);
  g_assert_cmpuint(body->heads[0].node_id, ==, 1);

  gsize len;
  g_autofree char *saved = ds_mxnet_json_save_to_data(g, &len);
  g_assert_cmpstr(saved, ==, subgraph_expected);
  g_autoptr(DsGraph) again = ds_mxnet_json_load_data(saved, len, "saved.json", &error);
  g_assert_no_error(error);
  assert_same_graph(g, again);
  g_autofree char *saved2 = ds_mxnet_json_save_to_data(again, NULL);
  g_assert_cmpstr(saved2, ==, subgraph_expected);
}

/* A graph built in memory (no file attrs) is stamped with a version, so it reads back as
 * current instead of as MXNet 0.8. */
static void test_built_graph(void)
{
  GError *error = NULL;
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *x = ds_graph_add_node(g, "x", "null");
  DsNode *y = ds_graph_add_node(g, "y", "_unknown_op_for_test");
  (void)x;
  y->inputs = g_new0(DsEntry, 1);
  y->n_inputs = 1;
  ds_node_add_attr(y, "k", "v");
  g->arg_nodes = g_new0(guint, 1);
  g->n_arg_nodes = 1;
  g->heads = g_new0(DsEntry, 1);
  g->heads[0].node_id = 1;
  g->n_heads = 1;
  ds_graph_update_row_ptr(g);
  g_autofree char *saved = ds_mxnet_json_save_to_data(g, NULL);
  g_assert_true(g_str_has_suffix(saved, "\"int\",\n      10500\n    ]\n  }\n}"));
  g_autoptr(DsGraph) back = ds_mxnet_json_load_data(saved, strlen(saved), "built", &error);
  g_assert_no_error(error);
  g_assert_cmpint(back->mxnet_version, ==, 10500);
  assert_same_graph(g, back);
}

typedef struct {
  const char *json;
  int code;
  const char *message;
} BadCase;

#define HEAD_OK "\"heads\": [[1, 0, 0]], \"attrs\": {\"mxnet_version\": [\"int\", 10500]}}"
#define VAR_X   "{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}"

static const BadCase bad_cases[] = {
    {"{\"nodes\": [" VAR_X ", {\"op\": \"_t_op\", \"name\": \"y\", \"inputs\": [[2, 0, 0]]},"
     " {\"op\": \"_t_op\", \"name\": \"z\", \"inputs\": [[0, 0, 0]]}], \"arg_nodes\": "
     "[0], " HEAD_OK,
     DS_ERROR_INVALID, "node 1 'y' (_t_op): input 0 refers to node 2 'z', which comes later"},
    {"{\"nodes\": [" VAR_X ", {\"op\": \"_t_op\", \"name\": \"y\", \"inputs\": [[2, 0, 0]]},"
     " {\"op\": \"_t_op\", \"name\": \"z\", \"inputs\": [[1, 0, 0]]}], \"arg_nodes\": "
     "[0], " HEAD_OK,
     DS_ERROR_INVALID,
     "node 1 'y' (_t_op): input 0 refers to node 2 'z', which depends on it (a "
     "cycle)"},
    {"{\"nodes\": [" VAR_X ", {\"op\": \"_t_op\", \"name\": \"y\", \"inputs\": [[1, 0, 0]]}],"
     " \"arg_nodes\": [0], " HEAD_OK,
     DS_ERROR_INVALID, "node 1 'y' (_t_op): input 0 refers to the node itself (a cycle)"},
    {"{\"nodes\": [" VAR_X ", {\"op\": \"_t_op\", \"name\": \"y\", \"inputs\": [[0, 1, 0]]}],"
     " \"arg_nodes\": [0], " HEAD_OK,
     DS_ERROR_INVALID, "node 1 'y' (_t_op): input 0 refers to output 1 of node 0 'x', which has 1"},
    {"{\"nodes\": [" VAR_X ", {\"op\": \"_t_op\", \"name\": \"y\", \"inputs\": [[9, 0, 0]]}],"
     " \"arg_nodes\": [0], " HEAD_OK,
     DS_ERROR_INVALID, "node 1 'y' (_t_op): input 0 refers to node 9, but the graph has 2 nodes"},
    {"{\"nodes\": [" VAR_X ", {\"op\": \"_t_op\", \"name\": \"y\", \"inputs\": [[0, \"a\", 0]]}],"
     " \"arg_nodes\": [0], " HEAD_OK,
     DS_ERROR_PARSE, "node 1 'y' (_t_op): input 0 must be [node, index, version]"},
    {"{\"nodes\": [" VAR_X ", {\"op\": \"_t_op\", \"name\": \"y\", \"inputs\": [[0, 0, 0, 0]]}],"
     " \"arg_nodes\": [0], " HEAD_OK,
     DS_ERROR_PARSE, "node 1 'y' (_t_op): input 0 must be"},
    {"{\"nodes\": [" VAR_X ", {\"op\": \"_t_op\", \"name\": 5, \"inputs\": []}],"
     " \"arg_nodes\": [0], " HEAD_OK,
     DS_ERROR_PARSE, "node 1 (_t_op): \"name\" is not a string"},
    {"{\"nodes\": [" VAR_X ", {\"name\": \"y\", \"inputs\": []}], \"arg_nodes\": [0], " HEAD_OK,
     DS_ERROR_PARSE, "node 1 'y': \"op\" is missing"},
    {"{\"nodes\": [" VAR_X ", {\"op\": [], \"name\": \"y\", \"inputs\": []}],"
     " \"arg_nodes\": [0], " HEAD_OK,
     DS_ERROR_PARSE, "node 1 'y': \"op\" is not a string"},
    {"{\"nodes\": [" VAR_X ", {\"op\": 3, \"inputs\": []}], \"arg_nodes\": [0], " HEAD_OK,
     DS_ERROR_PARSE, "node 1: \"op\" is not a string"},
    {"{\"nodes\": [" VAR_X ", {\"op\": \"_t_op\", \"name\": \"y\\u0000z\", \"inputs\": []}],"
     " \"arg_nodes\": [0], " HEAD_OK,
     DS_ERROR_PARSE, "a \\u0000 escape at byte 80 (line 1, column 81)"},
    {"{\"nodes\": [" VAR_X ", {\"op\": \"_t_op\", \"name\": \"y\"}], \"arg_nodes\": [0], " HEAD_OK,
     DS_ERROR_PARSE, "node 1 'y' (_t_op): \"inputs\" is missing"},
    {"{\"nodes\": [" VAR_X ", {\"op\": \"_t_op\", \"name\": \"y\", \"attrs\": {\"a\": 1},"
     " \"inputs\": []}], \"arg_nodes\": [0], " HEAD_OK,
     DS_ERROR_PARSE, "node 1 'y' (_t_op): attribute \"a\" must be a string"},
    {"{\"nodes\": [" VAR_X ", {\"op\": \"_t_op\", \"name\": \"y\", \"attrs\": [],"
     " \"inputs\": []}], \"arg_nodes\": [0], " HEAD_OK,
     DS_ERROR_PARSE, "node 1 'y' (_t_op): \"attrs\" must be an object"},
    {"{\"nodes\": [" VAR_X ", 7], \"arg_nodes\": [0], " HEAD_OK, DS_ERROR_PARSE,
     "node 1 is not a JSON object"},
    {"{\"nodes\": {}, \"arg_nodes\": [0], " HEAD_OK, DS_ERROR_PARSE, "\"nodes\" is not an array"},
    {"{\"nodes\": [" VAR_X "], \"arg_nodes\": [0], \"attrs\": {\"mxnet_version\": [\"int\","
     " 10500]}}",
     DS_ERROR_PARSE, "\"heads\" is missing"},
    {"{\"nodes\": [" VAR_X "], \"arg_nodes\": [0], \"heads\": [[0, 0, 0]],"
     " \"attrs\": {\"mxnet_version\": [\"str\", \"1.5\"]}}",
     DS_ERROR_PARSE, "attrs.mxnet_version must be"},
    {"{\"nodes\": [" VAR_X ", {\"op\": \"_t_op\", \"name\": \"y\", \"inputs\": [[0, 0, 0]]}],"
     " \"arg_nodes\": [0], \"node_row_ptr\": [0, 1], " HEAD_OK,
     DS_ERROR_INVALID, "node_row_ptr has 2 entries for 2 nodes"},
    {"{\"nodes\": [" VAR_X ", {\"op\": \"_t_op\", \"name\": \"y\", \"inputs\": [[0, 0, 0]]}],"
     " \"arg_nodes\": [0], \"node_row_ptr\": [1, 2, 3], " HEAD_OK,
     DS_ERROR_INVALID, "node_row_ptr starts at 1"},
    {"{\"nodes\": [" VAR_X ", {\"op\": \"_t_op\", \"name\": \"y\", \"inputs\": [[0, 0, 0]]}],"
     " \"arg_nodes\": [0], \"node_row_ptr\": [0, 2, 2], " HEAD_OK,
     DS_ERROR_INVALID, "node_row_ptr gives node 1 'y' (_t_op) 0 outputs"},
    {"{\"nodes\": [" VAR_X ", {\"op\": \"_t_op\", \"name\": \"y\", \"inputs\": [[0, 0, 0]]}],"
     " \"arg_nodes\": [0], \"node_row_ptr\": [0, 1, \"2\"], " HEAD_OK,
     DS_ERROR_PARSE, "node_row_ptr[2] is not a non-negative integer"},
    {"{\"nodes\": [" VAR_X "], \"arg_nodes\": [0], \"heads\": [[7, 0, 0]],"
     " \"attrs\": {\"mxnet_version\": [\"int\", 10500]}}",
     DS_ERROR_INVALID, "head 0 refers to node 7, but the graph has 1 nodes"},
    {"{\"nodes\": [" VAR_X "], \"arg_nodes\": [0], \"heads\": [[0, 3, 0]],"
     " \"attrs\": {\"mxnet_version\": [\"int\", 10500]}}",
     DS_ERROR_INVALID, "head 0 refers to output 3 of node 0 'x'"},
    {"{\"nodes\": [" VAR_X "], \"arg_nodes\": [4], \"heads\": [[0, 0, 0]],"
     " \"attrs\": {\"mxnet_version\": [\"int\", 10500]}}",
     DS_ERROR_INVALID, "arg_nodes[0] = 4 is out of range"},
    {"{\"nodes\": [" VAR_X ", {\"op\": \"_t_op\", \"name\": \"y\", \"inputs\": [[0, 0, 0]]}],"
     " \"arg_nodes\": [1], " HEAD_OK,
     DS_ERROR_INVALID, "arg_nodes[0] = node 1 'y' (_t_op), which is not a variable"},
    {"{\"nodes\": [" VAR_X ", {\"op\": \"_t_op\", \"name\": \"y\", \"inputs\": [],"
     " \"subgraphs\": [{\"nodes\": [], \"arg_nodes\": [], \"heads\": [[0, 0, 0]]}]}],"
     " \"arg_nodes\": [0], " HEAD_OK,
     DS_ERROR_INVALID,
     "node 1 'y' (_t_op): subgraph 0: head 0 refers to node 0, but the graph has"
     " 0 nodes"},
    {"{\"nodes\": [}", DS_ERROR_PARSE, "malformed JSON at byte 11 (line 1, column 12)"},
    {"{\"nodes\": [" VAR_X "], \"arg_nodes\": [0], \"heads\": [[0, 0, 0]]} trailing",
     DS_ERROR_PARSE, "unexpected text after the JSON document at byte"},
    {"{\"nodes\": [" VAR_X "], \"arg_nodes\": [0], \"heads\": [[0, 0, 0]],"
     " \"attrs\": {\"mxnet_version\": [\"int\", 10500], \"output_names\": [\"list_str\","
     " [\"a\", \"b\"]]}}",
     DS_ERROR_PARSE,
     "attrs.output_names must be [\"list_str\", [name, ...]] with one name per head (1)"},
    {"{\"nodes\": [" VAR_X "], \"arg_nodes\": [0], \"heads\": [[0, 0, 0]],"
     " \"attrs\": {\"mxnet_version\": [\"int\", 10500], \"output_names\": [\"str\", \"a\"]}}",
     DS_ERROR_PARSE, "attrs.output_names must be"},
    {"", DS_ERROR_PARSE, "empty file"},
    {"[1, 2]", DS_ERROR_PARSE, "the graph is not a JSON object"},
};

static void test_bad_files(void)
{
  for (guint i = 0; i < G_N_ELEMENTS(bad_cases); i++) {
    GError *error = NULL;
    g_test_message("case %u: %s", i, bad_cases[i].json);
    DsGraph *g =
        ds_mxnet_json_load_data(bad_cases[i].json, strlen(bad_cases[i].json), "bad.json", &error);
    g_assert_null(g);
    g_assert_nonnull(error);
    g_test_message("-> %s", error->message);
    g_assert_error(error, DS_ERROR, bad_cases[i].code);
    g_assert_true(g_str_has_prefix(error->message, "bad.json: "));
    g_assert_nonnull(strstr(error->message, bad_cases[i].message));
    g_error_free(error);
  }
}

/* An imported model's output names travel in attrs.output_names and come back on load. */
static void test_output_names(void)
{
  static const char json[] = "{\"nodes\": [" VAR_X "], \"arg_nodes\": [0], \"heads\": [[0, 0, 0]],"
                             " \"attrs\": {\"mxnet_version\": [\"int\", 10500]}}";
  GError *error = NULL;
  g_autoptr(DsGraph) g = ds_mxnet_json_load_data(json, strlen(json), "named.json", &error);
  g_assert_no_error(error);
  g_assert_null(g->head_names);
  g_autofree char *plain = ds_mxnet_json_save_to_data(g, NULL);
  g_assert_null(strstr(plain, "output_names"));
  /* A graph built in memory with names (as the ONNX importer builds one) writes them. */
  g_autoptr(DsGraph) built = ds_mxnet_json_load_data(json, strlen(json), "named.json", &error);
  g_assert_no_error(error);
  g_clear_pointer(&built->attrs, cJSON_Delete);
  built->head_names = g_strsplit("logits", ",", -1);
  g_autofree char *text = ds_mxnet_json_save_to_data(built, NULL);
  g_assert_nonnull(strstr(text, "\"output_names\""));
  g_autoptr(DsGraph) back = ds_mxnet_json_load_data(text, strlen(text), "back.json", &error);
  g_assert_no_error(error);
  g_assert_nonnull(back->head_names);
  g_assert_cmpstr(back->head_names[0], ==, "logits");
  g_assert_null(back->head_names[1]);
  g_autofree char *name = ds_graph_dup_output_name(back, 0);
  g_assert_cmpstr(name, ==, "logits");
  g_autofree char *again = ds_mxnet_json_save_to_data(back, NULL);
  g_assert_cmpstr(again, ==, text);
}

static void test_truncated_and_deep(void)
{
  GError *error = NULL;
  g_autofree char *path = model_path("gluoncv_resnet18_v1-symbol.json");
  g_autofree char *text = NULL;
  gsize len;
  g_assert_true(g_file_get_contents(path, &text, &len, NULL));
  for (gsize cut = 1; cut < len; cut += 997) {
    DsGraph *g = ds_mxnet_json_load_data(text, cut, "cut.json", &error);
    g_assert_null(g);
    g_assert_error(error, DS_ERROR, DS_ERROR_PARSE);
    g_assert_true(g_str_has_prefix(error->message, "cut.json: "));
    g_clear_error(&error);
  }
  g_assert_null(ds_mxnet_json_load_data(text, len / 2, "half.json", &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_PARSE);
  g_assert_nonnull(strstr(error->message, "half.json: truncated JSON"));
  g_clear_error(&error);

  gsize depth = 100000;
  g_autofree char *deep = g_malloc(depth);
  memset(deep, '[', depth);
  g_assert_null(ds_mxnet_json_load_data(deep, depth, "deep.json", &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_PARSE);
  g_assert_nonnull(strstr(error->message, "deep.json: JSON nested deeper than"));
  g_clear_error(&error);
  memset(deep, '{', depth);
  g_assert_null(ds_mxnet_json_load_data(deep, depth, "deep.json", &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_PARSE);
  g_clear_error(&error);
}

/* The 0.8 upgrade adds the inputs an op's attributes call for, but not without bound. */
static void test_legacy_missing_inputs(void)
{
  static const char json[] =
      "{\"nodes\": [" VAR_X ", {\"op\": \"add_n\", \"param\": {\"num_args\": \"100000\"},"
      " \"name\": \"sum\", \"inputs\": [[0, 0]]}], \"arg_nodes\": [0], \"heads\": [[1, 0]]}";
  GError *error = NULL;
  if (ds_op_lookup("add_n") == NULL) {
    g_test_skip("add_n is not registered in this build");
    return;
  }
  g_assert_null(ds_mxnet_json_load_data(json, strlen(json), "sum.json", &error));
  g_assert_nonnull(error);
  g_assert_true(g_str_has_prefix(error->message, "sum.json: "));
  g_clear_error(&error);
}

static void test_unknown_op_and_io(void)
{
  static const char json[] =
      "{\"nodes\": [" VAR_X ", {\"op\": \"NoSuchOpInAnyRegistry\", \"name\": \"y\", \"inputs\":"
      " [[0, 0, 0]]}], \"arg_nodes\": [0], " HEAD_OK;
  GError *error = NULL;
  g_autoptr(DsGraph) g = ds_mxnet_json_load_data(json, strlen(json), "unknown.json", &error);
  g_assert_no_error(error);
  g_assert_null(g->nodes[1]->op);
  g_assert_false(g->nodes[1]->is_variable);
  g_assert_true(g->nodes[0]->is_variable);

  g_assert_null(ds_mxnet_json_load("/nonexistent/dir/model.json", &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_IO);
  g_assert_nonnull(strstr(error->message, "/nonexistent/dir/model.json"));
  g_clear_error(&error);
  g_assert_false(ds_mxnet_json_save(g, "/nonexistent/dir/model.json", &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_IO);
  g_clear_error(&error);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/engine/mxnet-json/load-all", test_load_all);
  g_test_add_func("/engine/mxnet-json/save-identical", test_save_identical);
  g_test_add_func("/engine/mxnet-json/upgrade-roundtrip", test_upgrade_roundtrip);
  g_test_add_func("/engine/mxnet-json/legacy-upgrade", test_legacy_upgrade);
  g_test_add_func("/engine/mxnet-json/subgraphs", test_subgraphs);
  g_test_add_func("/engine/mxnet-json/built-graph", test_built_graph);
  g_test_add_func("/engine/mxnet-json/bad-files", test_bad_files);
  g_test_add_func("/engine/mxnet-json/output-names", test_output_names);
  g_test_add_func("/engine/mxnet-json/truncated-and-deep", test_truncated_and_deep);
  g_test_add_func("/engine/mxnet-json/legacy-missing-inputs", test_legacy_missing_inputs);
  g_test_add_func("/engine/mxnet-json/unknown-op-and-io", test_unknown_op_and_io);
  return g_test_run();
}
