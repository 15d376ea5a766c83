/* test-ops-vision.c: the vision op family (_contrib_box_nms, _contrib_ROIAlign,
 * _contrib_AdaptiveAvgPooling2D, Deconvolution): attribute parsing and defaults, the attribute
 * spellings of the detection models, shape and dtype rules (concrete and symbolic, backward
 * filling, errors naming the node), and the CPU kernels (looked up through the backend's table)
 * against independent double-precision references on random data. */
#include <cjson/cJSON.h>
#include <float.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ds-config.h"
#include "ds-cpu.h"
#include "ds-error.h"
#include "ds-expr.h"
#include "ds-op.h"
#include "ds-test-ops.h"

/* ---- tensors, kernels, comparison ----------------------------------------------------- */

static DsTensor shape_tensor(const DsShape *s)
{
  g_autofree char *text = ds_shape_to_string(s);
  return ftensor(text);
}

/* ---- registry, model attribute spellings -------------------------------------------------- */

static const char *const vision_ops[] = {"_contrib_box_nms", "_contrib_ROIAlign",
                                         "_contrib_AdaptiveAvgPooling2D", "Deconvolution",
                                         "_contrib_grid_sample", NULL};

static void test_registry(void)
{
  for (int i = 0; vision_ops[i] != NULL; i++) {
    const DsOpDef *op = ds_op_lookup(vision_ops[i]);
    g_assert_nonnull(op);
    g_assert_cmpstr(op->name, ==, vision_ops[i]);
    g_assert_true(ds_op_get(op->id) == op);
    g_assert_nonnull(ds_cpu_backend_get()->get_kernel(op->id));
    g_assert_nonnull(op->output_names);
  }
  g_assert_true(ds_op_lookup("_contrib_box_non_maximum_suppression") ==
                ds_op_lookup("_contrib_box_nms"));
  g_assert_true(ds_op_lookup("_npx_box_nms") == ds_op_lookup("_contrib_box_nms"));
  g_assert_true(ds_op_lookup("_npx_deconvolution") == ds_op_lookup("Deconvolution"));

  /* box_nms: one visible output and a hidden record, named as nnvm names them. */
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *nms = node_new(g, "_contrib_box_nms", NULL);
  g_assert_cmpint(nms->op->num_outputs(nms->param), ==, 2);
  g_assert_cmpint(nms->op->num_visible_outputs(nms->param), ==, 1);
  g_assert_cmpstr(nms->op->output_names[0], ==, "output0");
  char buf[16];
  DsNode *roi =
      node_new(g, "_contrib_ROIAlign", "pooled_size", "(2, 2)", "spatial_scale", "1", NULL);
  g_assert_cmpstr(ds_op_input_name(roi->op, 2, 1, buf), ==, "rois");
  DsNode *de = node_new(g, "Deconvolution", "kernel", "(2, 2)", "num_filter", "4", NULL);
  g_assert_cmpuint(de->n_inputs, ==, 2); /* no_bias defaults to true */
  g_assert_cmpstr(ds_op_input_name(de->op, 2, 1, buf), ==, "weight");
}

/* Every vision node of every shared model parses with its file's attribute spellings, with
 * MXNet's input count. */
static void test_model_attrs(void)
{
  const char *dir = g_getenv("DS_SHARED_DIR");
  g_autofree char *models =
      g_build_filename(dir != NULL ? dir : DS_SHARED_DIR, "models", "mxnet", NULL);
  g_autoptr(GDir) d = g_dir_open(models, 0, NULL);
  if (d == NULL) {
    g_test_skip("no shared models");
    return;
  }
  int parsed = 0;
  for (const char *name; (name = g_dir_read_name(d)) != NULL;) {
    if (!g_str_has_suffix(name, ".json"))
      continue;
    g_autofree char *path = g_build_filename(models, name, NULL);
    g_autofree char *text = NULL;
    gsize len;
    g_assert_true(g_file_get_contents(path, &text, &len, NULL));
    cJSON *root = cJSON_ParseWithLength(text, len);
    g_assert_nonnull(root);
    const cJSON *node_json;
    cJSON_ArrayForEach(node_json, cJSON_GetObjectItem(root, "nodes"))
    {
      const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(node_json, "op"));
      const DsOpDef *def = op != NULL ? ds_op_lookup(op) : NULL;
      if (def == NULL || !g_strv_contains(vision_ops, def->name))
        continue;
      g_autoptr(DsGraph) g = ds_graph_new();
      DsNode *n = ds_graph_add_node(g, "layer0", op);
      n->op = def;
      const char *const keys[] = {"param", "attr", "attrs"};
      for (int k = 0; k < 3; k++) {
        const cJSON *attr;
        cJSON_ArrayForEach(attr, cJSON_GetObjectItem(node_json, keys[k]))
        {
          if (cJSON_IsString(attr))
            ds_node_add_attr(n, attr->string, attr->valuestring);
        }
      }
      n->param = g_malloc0(n->op->param_size);
      GError *error = NULL;
      if (!n->op->parse(n, n->param, &error)) {
        g_test_fail_printf("%s: %s", name, error->message);
        g_error_free(error);
        continue;
      }
      int n_in = cJSON_GetArraySize(cJSON_GetObjectItem(node_json, "inputs"));
      g_assert_cmpint(n->op->num_inputs(n->param), ==, n_in);
      parsed++;
    }
    cJSON_Delete(root);
  }
  g_test_message("%d vision nodes parsed", parsed);
  g_assert_cmpint(parsed, >=, 7);
}

/* ---- _contrib_box_nms -------------------------------------------------------------------- */

static void test_box_nms_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[1], out[2];
  DsNode *n = node_new(g, "_contrib_box_nms", NULL);
  const DsBoxNMSParam *p = n->param;
  g_assert_cmpfloat(p->overlap_thresh, ==, 0.5f);
  g_assert_cmpfloat(p->valid_thresh, ==, 0.0f);
  g_assert_cmpint(p->topk, ==, -1);
  g_assert_cmpint(p->coord_start, ==, 2);
  g_assert_cmpint(p->score_index, ==, 1);
  g_assert_cmpint(p->id_index, ==, -1);
  g_assert_cmpint(p->background_id, ==, -1);
  g_assert_false(p->force_suppress);
  g_assert_cmpint(p->in_format, ==, DS_BOX_CORNER);
  g_assert_cmpint(p->out_format, ==, DS_BOX_CORNER);
  infer_ok(n, (const char *[]){"(2, 100, 6)"}, in, out);
  assert_shape(&out[0], "(2, 100, 6)");
  assert_shape(&out[1], "(2, 100, 1)");
  infer_ok(n, (const char *[]){"(3, 2, 50, 6)"}, in, out);
  assert_shape(&out[1], "(3, 2, 50, 1)");
  infer_ok(n, (const char *[]){"(50, 6)"}, in, out);
  assert_shape(&out[0], "(50, 6)");
  /* Backwards: the data from the output, or all but the width from the record. */
  in[0] = DS_SHAPE_UNKNOWN;
  out[0] = shp("(4, 10, 6)");
  out[1] = DS_SHAPE_UNKNOWN;
  GError *error = NULL;
  g_assert_true(infer_err(n, in, out, &error));
  assert_shape(&in[0], "(4, 10, 6)");
  in[0] = DS_SHAPE_UNKNOWN;
  out[0] = DS_SHAPE_UNKNOWN;
  out[1] = shp("(4, 10, 1)");
  g_assert_true(infer_err(n, in, out, &error));
  assert_shape(&in[0], "(4, 10, ?)");
  assert_shape(&out[0], "(4, 10, ?)");

  /* The width must hold every index: 6 with class ids, coord_start + 4... */
  DsNode *ids = node_new(g, "_contrib_box_nms", "id_index", "0", "coord_start", "2", "score_index",
                         "1", NULL);
  infer_fails(ids, (const char *[]){"(1, 10, 5)"}, "need at least 6");
  DsNode *wide = node_new(g, "_contrib_box_nms", "coord_start", "4", "score_index", "0", NULL);
  infer_fails(wide, (const char *[]){"(1, 10, 7)"}, "boxes have 7 values");
  infer_ok(wide, (const char *[]){"(1, 10, 8)"}, in, out);
  infer_fails(n, (const char *[]){"(6,)"}, "at least 2 dims");
}

static void test_box_nms_errors(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "_contrib_box_nms", NULL);
  /* An output that disagrees with the data. */
  DsShape in[1] = {shp("(2, 100, 6)")}, out[2] = {shp("(2, 99, 6)"), DS_SHAPE_UNKNOWN};
  GError *error = NULL;
  g_assert_false(infer_err(n, in, out, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_SHAPE);
  g_assert_nonnull(strstr(error->message, "node 'layer0' (_contrib_box_nms)"));
  g_assert_nonnull(strstr(error->message, "(2, 99, 6)"));
  g_clear_error(&error);

  parse_fails(DS_ERROR_INVALID, "score_index=3", "_contrib_box_nms", "score_index", "3", NULL);
  parse_fails(DS_ERROR_INVALID, "id_index=1 is also the score_index", "_contrib_box_nms",
              "id_index", "1", NULL);
  parse_fails(DS_ERROR_INVALID, "id_index=4", "_contrib_box_nms", "id_index", "4", NULL);
  parse_fails(DS_ERROR_INVALID, "coord_start", "_contrib_box_nms", "coord_start", "-1", NULL);
  parse_fails(DS_ERROR_PARSE, "in_format", "_contrib_box_nms", "in_format", "xyxy", NULL);
  parse_fails(DS_ERROR_PARSE, "topk", "_contrib_box_nms", "topk", "many", NULL);

  /* Symbolic: boxes and batch are symbols; a symbolic width gets a guard. */
  DsExprCtx *exprs = ds_expr_ctx_new();
  DsShape sin[1] = {{.ndim = 3, .dims = {sym_dim(exprs, "s0"), sym_dim(exprs, "s1"), ds_dim(6)}}};
  DsShape sout[2] = {DS_SHAPE_UNKNOWN, DS_SHAPE_UNKNOWN};
  g_assert_cmpuint(infer_symbolic(n, exprs, sin, sout), ==, 0);
  assert_shape(&sout[0], "(s0, s1, 6)");
  assert_shape(&sout[1], "(s0, s1, 1)");
  DsShape win[1] = {{.ndim = 2, .dims = {ds_dim(10), sym_dim(exprs, "s2")}}};
  DsShape wout[2] = {DS_SHAPE_UNKNOWN, DS_SHAPE_UNKNOWN};
  g_assert_cmpuint(infer_symbolic(n, exprs, win, wout), ==, 1);
  assert_shape(&wout[1], "(10, 1)");
  ds_expr_ctx_free(exprs);
}

/* MXNet's box_nms in double: per batch, boxes whose score exceeds valid_thresh (and whose class
 * is not the background), by score (stable), the topk first, greedy suppression of IoU above
 * the threshold (within a class unless forced), kept rows first and -1 rows after. Sets
 * *ambiguous when an IoU lies so close to the threshold that float rounding could decide. */
static void ref_box_nms(const DsBoxNMSParam *p, const float *x, int64_t batch, int64_t n, int64_t w,
                        double *out, double *rec, gboolean *ambiguous)
{
  const int64_t cs = p->coord_start;
  const int64_t topk = p->topk < 0 ? n : MIN(n, p->topk);
  if (topk < 1) {
    for (int64_t i = 0; i < batch * n * w; i++)
      out[i] = x[i];
    for (int64_t i = 0; i < batch * n; i++)
      rec[i] = (double)i;
    return;
  }
  int64_t *cand = g_new(int64_t, MAX(n, 1));
  gboolean *dead = g_new0(gboolean, MAX(n, 1));
  for (int64_t b = 0; b < batch; b++) {
    const float *xb = x + b * n * w;
    int64_t nv = 0;
    for (int64_t i = 0; i < n; i++) {
      double score = xb[i * w + p->score_index];
      gboolean ok = score > (double)p->valid_thresh;
      if (p->id_index >= 0 && (double)xb[i * w + p->id_index] == (double)p->background_id)
        ok = FALSE;
      if (ok)
        cand[nv++] = i;
    }
    /* Insertion sort: stable, highest score first. */
    for (int64_t i = 1; i < nv; i++) {
      int64_t v = cand[i], j = i;
      while (j > 0 && xb[cand[j - 1] * w + p->score_index] < xb[v * w + p->score_index]) {
        cand[j] = cand[j - 1];
        j--;
      }
      cand[j] = v;
    }
    int64_t k_n = MIN(nv, topk);
    for (int64_t i = 0; i < k_n; i++)
      dead[i] = FALSE;
    for (int64_t r = 0; r < k_n; r++) {
      if (dead[r])
        continue;
      for (int64_t q = r + 1; q < k_n; q++) {
        if (dead[q])
          continue;
        const float *a = xb + cand[r] * w, *c = xb + cand[q] * w;
        if (!p->force_suppress && p->id_index >= 0 && (int)a[p->id_index] != (int)c[p->id_index])
          continue;
        double ax0, ay0, ax1, ay1, cx0, cy0, cx1, cy1;
        if (p->in_format == DS_BOX_CORNER) {
          ax0 = a[cs], ay0 = a[cs + 1], ax1 = a[cs + 2], ay1 = a[cs + 3];
          cx0 = c[cs], cy0 = c[cs + 1], cx1 = c[cs + 2], cy1 = c[cs + 3];
        } else {
          ax0 = a[cs] - a[cs + 2] / 2.0, ax1 = a[cs] + a[cs + 2] / 2.0;
          ay0 = a[cs + 1] - a[cs + 3] / 2.0, ay1 = a[cs + 1] + a[cs + 3] / 2.0;
          cx0 = c[cs] - c[cs + 2] / 2.0, cx1 = c[cs] + c[cs + 2] / 2.0;
          cy0 = c[cs + 1] - c[cs + 3] / 2.0, cy1 = c[cs + 1] + c[cs + 3] / 2.0;
        }
        double iw = MAX(0.0, MIN(ax1, cx1) - MAX(ax0, cx0));
        double ih = MAX(0.0, MIN(ay1, cy1) - MAX(ay0, cy0));
        double aa = (ax1 - ax0 < 0 || ay1 - ay0 < 0) ? 0 : (ax1 - ax0) * (ay1 - ay0);
        double ca = (cx1 - cx0 < 0 || cy1 - cy0 < 0) ? 0 : (cx1 - cx0) * (cy1 - cy0);
        double inter = iw * ih, iou = inter / (aa + ca - inter);
        if (fabs(iou - (double)p->overlap_thresh) < 1e-4)
          *ambiguous = TRUE;
        if (iou > (double)p->overlap_thresh)
          dead[q] = TRUE;
      }
    }
    double *ob = out + b * n * w, *rb = rec + b * n;
    for (int64_t i = 0; i < n * w; i++)
      ob[i] = -1.0;
    for (int64_t i = 0; i < n; i++)
      rb[i] = -1.0;
    int64_t count = 0;
    for (int64_t k = 0; k < k_n; k++) {
      if (dead[k])
        continue;
      for (int64_t j = 0; j < w; j++)
        ob[count * w + j] = xb[cand[k] * w + j];
      rb[count] = (double)(b * n + cand[k]);
      count++;
    }
    /* Format conversion skips rows whose first coordinate is negative, as MXNet does. */
    if (p->in_format != p->out_format) {
      for (int64_t i = 0; i < n; i++) {
        double *c = ob + i * w + cs;
        if (c[0] < 0)
          continue;
        double a0 = c[0], a1 = c[1], a2 = c[2], a3 = c[3];
        if (p->out_format == DS_BOX_CENTER) {
          c[0] = (a0 + a2) / 2, c[1] = (a1 + a3) / 2, c[2] = a2 - a0, c[3] = a3 - a1;
        } else {
          c[0] = a0 - a2 / 2, c[1] = a1 - a3 / 2, c[2] = a0 + a2 / 2, c[3] = a1 + a3 / 2;
        }
      }
    }
  }
  g_free(cand);
  g_free(dead);
}

/* Random boxes in a few clusters (so that suppression happens), class ids in {-1, 0, 1, 2},
 * scores in [0, 1), and filler values elsewhere. */
static void fill_boxes(const DsBoxNMSParam *p, float *x, int64_t rows, int64_t w)
{
  const double centres[4][2] = {{0.3, 0.3}, {0.7, 0.4}, {0.5, 0.8}, {0.05, 0.6}};
  for (int64_t i = 0; i < rows; i++) {
    float *b = x + i * w;
    for (int64_t j = 0; j < w; j++)
      b[j] = (float)g_rand_double_range(rng, -2, 2);
    int k = g_rand_int_range(rng, 0, 4);
    double cx = centres[k][0] + g_rand_double_range(rng, -0.08, 0.08);
    double cy = centres[k][1] + g_rand_double_range(rng, -0.08, 0.08);
    double bw = g_rand_double_range(rng, 0.1, 0.3), bh = g_rand_double_range(rng, 0.1, 0.3);
    float *c = b + p->coord_start;
    if (p->in_format == DS_BOX_CORNER) {
      c[0] = (float)(cx - bw / 2), c[1] = (float)(cy - bh / 2);
      c[2] = (float)(cx + bw / 2), c[3] = (float)(cy + bh / 2);
    } else {
      c[0] = (float)cx, c[1] = (float)cy, c[2] = (float)bw, c[3] = (float)bh;
    }
    b[p->score_index] = (float)g_rand_double(rng);
    if (p->id_index >= 0)
      b[p->id_index] = (float)g_rand_int_range(rng, -1, 3);
  }
}

/* Builds a box_nms node with `attrs`, runs it on random boxes of shape `data` and compares both
 * outputs with the reference. */
static void check_box_nms(const char *data, ...)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  va_list args;
  va_start(args, data);
  GError *error = NULL;
  DsNode *n = node_v(g, "_contrib_box_nms", &error, args);
  va_end(args);
  g_assert_no_error(error);
  const DsBoxNMSParam *p = n->param;
  DsShape in[1], out[2];
  infer_ok(n, (const char *[]){data}, in, out);
  DsTensor x = ftensor(data);
  DsTensor y[2] = {shape_tensor(&out[0]), shape_tensor(&out[1])};
  const int64_t w = x.shape[x.ndim - 1], nb = x.shape[x.ndim - 2];
  const int64_t batch = ds_tensor_numel(&x) / (w * MAX(nb, 1));
  double *want = dalloc(ds_tensor_numel(&x)), *want_rec = dalloc(batch * nb);
  /* Redraw data whose outcome float rounding could flip. */
  for (int attempt = 0;; attempt++) {
    g_assert_cmpint(attempt, <, 20);
    fill_boxes(p, x.data, batch * nb, w);
    gboolean ambiguous = FALSE;
    ref_box_nms(p, x.data, batch, nb, w, want, want_rec, &ambiguous);
    if (!ambiguous)
      break;
  }
  run_ok(DS_OP_BOX_NMS, p, &x, 1, y, 2);
  g_autofree char *what = g_strdup_printf("box_nms %s", data);
  close_to(y[0].data, want, ds_tensor_numel(&x), 1e-6, 1e-6, what);
  close_to(y[1].data, want_rec, batch * nb, 0, 0, what);
  /* Something was kept and something was dropped, so the case tests what it means to. */
  int64_t kept = 0;
  for (int64_t i = 0; i < batch * nb; i++)
    kept += want_rec[i] >= 0;
  g_test_message("%s: %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT " boxes kept", what, kept,
                 batch * nb);
  g_free(want);
  g_free(want_rec);
  g_free(x.data);
  tensors_free(y, 2);
}

static void test_box_nms_kernel(void)
{
  /* The two detection models' settings. */
  check_box_nms("(1, 200, 5)", "coord_start", "1", "force_suppress", "True", "id_index", "-1",
                "overlap_thresh", "0.7", "score_index", "0", "topk", "60", NULL);
  check_box_nms("(2, 120, 6)", "coord_start", "2", "force_suppress", "False", "id_index", "0",
                "overlap_thresh", "0.45", "score_index", "1", "topk", "40", "valid_thresh", "0.01",
                NULL);
  /* Defaults (corner, no ids, valid_thresh 0, every box). */
  check_box_nms("(3, 80, 6)", NULL);
  /* Class-aware with a background class, and forced across classes. */
  check_box_nms("(2, 90, 6)", "id_index", "0", "background_id", "0", "valid_thresh", "0.2", NULL);
  check_box_nms("(2, 90, 6)", "id_index", "0", "force_suppress", "True", "overlap_thresh", "0.3",
                NULL);
  /* Center format in, corner out, and the other way; corner to corner with centers. */
  check_box_nms("(2, 70, 6)", "in_format", "center", "out_format", "corner", "overlap_thresh",
                "0.4", NULL);
  check_box_nms("(2, 70, 6)", "in_format", "corner", "out_format", "center", "id_index", "0", NULL);
  check_box_nms("(1, 70, 6)", "in_format", "center", "out_format", "center", NULL);
  /* Unusual layouts: extra columns, ids after the coordinates, more batch dims. */
  check_box_nms("(2, 2, 40, 8)", "coord_start", "1", "score_index", "0", "id_index", "6", NULL);
  check_box_nms("(30, 7)", "coord_start", "3", "score_index", "0", "id_index", "1", "topk", "10",
                NULL);
  /* topk larger than the boxes, topk 0 (MXNet returns the input as is), one box. */
  check_box_nms("(1, 20, 6)", "topk", "1000", NULL);
  check_box_nms("(2, 20, 6)", "topk", "0", "in_format", "center", NULL);
  check_box_nms("(1, 1, 6)", NULL);
  /* Nothing valid at all: every row -1. */
  check_box_nms("(2, 20, 6)", "valid_thresh", "2", NULL);
  /* Empty batches. */
  check_box_nms("(0, 20, 6)", NULL);
  /* Enough batches to split across threads. */
  check_box_nms("(64, 50, 6)", "id_index", "0", NULL);

  /* MXNet's documented example. */
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "_contrib_box_nms", "overlap_thresh", "0.1", "coord_start", "2",
                       "score_index", "1", "id_index", "0", "force_suppress", "True", NULL);
  DsTensor x = ftensor("(4, 6)");
  DsTensor y[2] = {ftensor("(4, 6)"), ftensor("(4, 1)")};
  const float boxes[] = {0, 0.5f, 0.1f, 0.1f, 0.2f,  0.2f,  1, 0.4f, 0.1f, 0.1f, 0.2f, 0.2f,
                         0, 0.3f, 0.1f, 0.1f, 0.14f, 0.14f, 2, 0.6f, 0.5f, 0.5f, 0.7f, 0.8f};
  memcpy(x.data, boxes, sizeof boxes);
  run_ok(DS_OP_BOX_NMS, n->param, &x, 1, y, 2);
  const double expect[] = {2,  0.6, 0.5, 0.5, 0.7, 0.8, 0,  0.5, 0.1, 0.1, 0.2, 0.2,
                           -1, -1,  -1,  -1,  -1,  -1,  -1, -1,  -1,  -1,  -1,  -1};
  close_to(y[0].data, expect, 24, 1e-7, 0, "box_nms documented example");
  const double expect_rec[] = {3, 0, -1, -1};
  close_to(y[1].data, expect_rec, 4, 0, 0, "box_nms documented example record");
  g_free(x.data);
  tensors_free(y, 2);
}

/* ---- _contrib_ROIAlign ------------------------------------------------------------------- */

static void test_roi_align_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[2], out[1];
  DsNode *n = node_new(g, "_contrib_ROIAlign", "pooled_size", "(14, 14)", "sample_ratio", "2",
                       "spatial_scale", "0.0625", NULL);
  const DsROIAlignParam *p = n->param;
  g_assert_cmpint(p->pooled_size[0], ==, 14);
  g_assert_cmpfloat(p->spatial_scale, ==, 0.0625f);
  g_assert_cmpint(p->sample_ratio, ==, 2);
  g_assert_false(p->position_sensitive);
  g_assert_false(p->aligned);
  infer_ok(n, (const char *[]){"(1, 256, 50, 60)", "(1000, 5)"}, in, out);
  assert_shape(&out[0], "(1000, 256, 14, 14)");
  /* rois from the output; their width is always 5. */
  infer_ok(n, (const char *[]){"(1, 256, 50, 60)", "?"}, in, out);
  assert_shape(&in[1], "(?, 5)");
  in[0] = shp("(2, ?, 9, 9)");
  in[1] = DS_SHAPE_UNKNOWN;
  out[0] = shp("(7, 32, 14, 14)");
  GError *error = NULL;
  g_assert_true(infer_err(n, in, out, &error));
  assert_shape(&in[0], "(2, 32, 9, 9)");
  assert_shape(&in[1], "(7, 5)");

  /* Position-sensitive: channels / (ph * pw), and back. */
  DsNode *ps = node_new(g, "_contrib_ROIAlign", "pooled_size", "(3, 2)", "spatial_scale", "0.5",
                        "position_sensitive", "True", "aligned", "True", NULL);
  g_assert_true(((const DsROIAlignParam *)ps->param)->aligned);
  infer_ok(ps, (const char *[]){"(2, 24, 9, 9)", "(5, 5)"}, in, out);
  assert_shape(&out[0], "(5, 4, 3, 2)");
  in[0] = shp("(2, ?, 9, 9)");
  in[1] = shp("(5, 5)");
  out[0] = shp("(5, 4, 3, 2)");
  g_assert_true(infer_err(ps, in, out, &error));
  assert_shape(&in[0], "(2, 24, 9, 9)");
  infer_fails(ps, (const char *[]){"(2, 25, 9, 9)", "(5, 5)"}, "divisible");

  /* Symbolic image size and roi count. */
  DsExprCtx *exprs = ds_expr_ctx_new();
  DsShape sin[2] = {
      {.ndim = 4, .dims = {ds_dim(1), ds_dim(64), sym_dim(exprs, "s0"), sym_dim(exprs, "s1")}},
      {.ndim = 2, .dims = {sym_dim(exprs, "s2"), ds_dim(5)}}};
  DsShape sout[1] = {DS_SHAPE_UNKNOWN};
  infer_symbolic(n, exprs, sin, sout);
  assert_shape(&sout[0], "(s2, 64, 14, 14)");
  ds_expr_ctx_free(exprs);

  infer_fails(n, (const char *[]){"(1, 256, 50)", "(10, 5)"}, "data must have 4 dims");
  infer_fails(n, (const char *[]){"(1, 256, 50, 60)", "(10, 4)"}, "rows of 5 values");
  infer_fails(n, (const char *[]){"(1, 256, 50, 60)", "(10, 5, 1)"}, "rois must have 2 dims");
  parse_fails(DS_ERROR_INVALID, "pooled_size", "_contrib_ROIAlign", "pooled_size", "7",
              "spatial_scale", "1", NULL);
  parse_fails(DS_ERROR_INVALID, "pooled_size", "_contrib_ROIAlign", "pooled_size", "(7, 0)",
              "spatial_scale", "1", NULL);
  parse_fails(DS_ERROR_INVALID, "spatial_scale", "_contrib_ROIAlign", "pooled_size", "(7, 7)",
              NULL);
  parse_fails(DS_ERROR_INVALID, "spatial_scale", "_contrib_ROIAlign", "pooled_size", "(7, 7)",
              "spatial_scale", "2", NULL);
  parse_fails(DS_ERROR_PARSE, "aligned", "_contrib_ROIAlign", "pooled_size", "(7, 7)",
              "spatial_scale", "1", "aligned", "maybe", NULL);
}

/* Bilinear sample of one plane at (y, x) with MXNet's edge rules: nothing more than one pixel
 * outside, clamped to the border otherwise. */
static double ref_bilinear(const float *plane, int64_t h, int64_t w, double y, double x)
{
  if (y < -1.0 || y > (double)h || x < -1.0 || x > (double)w)
    return 0.0;
  y = MAX(y, 0.0);
  x = MAX(x, 0.0);
  int64_t y0 = (int64_t)floor(y), x0 = (int64_t)floor(x), y1, x1;
  if (y0 >= h - 1) {
    y0 = y1 = h - 1;
    y = (double)y0;
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= w - 1) {
    x0 = x1 = w - 1;
    x = (double)x0;
  } else {
    x1 = x0 + 1;
  }
  double ly = y - (double)y0, lx = x - (double)x0;
  return (1 - ly) * (1 - lx) * plane[y0 * w + x0] + (1 - ly) * lx * plane[y0 * w + x1] +
         ly * (1 - lx) * plane[y1 * w + x0] + ly * lx * plane[y1 * w + x1];
}

/* ROIAlign in double: each bin the mean of a grid of bilinear samples. */
static void ref_roi_align(const DsROIAlignParam *p, const DsTensor *data, const DsTensor *rois,
                          int64_t out_c, double *out)
{
  const int64_t in_c = data->shape[1], h = data->shape[2], w = data->shape[3];
  const int64_t ph_n = p->pooled_size[0], pw_n = p->pooled_size[1];
  const float *x = data->data, *r = rois->data;
  for (int64_t n = 0; n < rois->shape[0]; n++) {
    const float *roi = r + n * 5;
    double *o = out + n * out_c * ph_n * pw_n;
    if (trunc(roi[0]) < 0) {
      for (int64_t i = 0; i < out_c * ph_n * pw_n; i++)
        o[i] = 0.0;
      continue;
    }
    int64_t b = (int64_t)trunc(roi[0]);
    double off = p->aligned ? 0.5 : 0.0, scale = p->spatial_scale;
    double x0 = roi[1] * scale - off, y0 = roi[2] * scale - off;
    double rw = roi[3] * scale - off - x0, rh = roi[4] * scale - off - y0;
    if (!p->aligned) {
      rw = MAX(rw, 1.0);
      rh = MAX(rh, 1.0);
    }
    double bh = rh / (double)ph_n, bw = rw / (double)pw_n;
    int64_t gh = p->sample_ratio > 0 ? p->sample_ratio : (int64_t)ceil(rh / (double)ph_n);
    int64_t gw = p->sample_ratio > 0 ? p->sample_ratio : (int64_t)ceil(rw / (double)pw_n);
    for (int64_t c = 0; c < out_c; c++)
      for (int64_t ph = 0; ph < ph_n; ph++)
        for (int64_t pw = 0; pw < pw_n; pw++) {
          int64_t cu = p->position_sensitive ? (c * ph_n + ph) * pw_n + pw : c;
          const float *plane = x + (b * in_c + cu) * h * w;
          double sum = 0.0;
          for (int64_t iy = 0; iy < gh; iy++)
            for (int64_t ix = 0; ix < gw; ix++) {
              double yy = y0 + ph * bh + (iy + 0.5) * bh / (double)gh;
              double xx = x0 + pw * bw + (ix + 0.5) * bw / (double)gw;
              sum += ref_bilinear(plane, h, w, yy, xx);
            }
          o[(c * ph_n + ph) * pw_n + pw] = sum / (double)(gh * gw);
        }
  }
}

/* Random rois over an image `img_h` x `img_w` (the map's size / spatial_scale), some reaching
 * past its edges, some tiny; row 1 gets a negative batch index. */
static void fill_rois(float *r, int64_t n, int64_t batch, double img_h, double img_w)
{
  for (int64_t i = 0; i < n; i++) {
    float *roi = r + i * 5;
    roi[0] = (float)g_rand_int_range(rng, 0, (gint32)batch);
    double x0 = g_rand_double_range(rng, -0.2 * img_w, 1.0 * img_w);
    double y0 = g_rand_double_range(rng, -0.2 * img_h, 1.0 * img_h);
    double s = i % 4 == 3 ? 0.05 : 0.8;
    roi[1] = (float)x0;
    roi[2] = (float)y0;
    roi[3] = (float)(x0 + g_rand_double_range(rng, 0.01, s) * img_w);
    roi[4] = (float)(y0 + g_rand_double_range(rng, 0.01, s) * img_h);
  }
  if (n > 1)
    r[5] = -1.0f;
}

static void check_roi_align(const char *data, int64_t n_rois, ...)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  va_list args;
  va_start(args, n_rois);
  GError *error = NULL;
  DsNode *n = node_v(g, "_contrib_ROIAlign", &error, args);
  va_end(args);
  g_assert_no_error(error);
  const DsROIAlignParam *p = n->param;
  g_autofree char *rshape = g_strdup_printf("(%" G_GINT64_FORMAT ", 5)", n_rois);
  DsShape in[2], out[1];
  infer_ok(n, (const char *[]){data, rshape}, in, out);
  DsTensor t[2] = {rtensor(data, -1, 1), ftensor(rshape)};
  fill_rois(t[1].data, n_rois, t[0].shape[0], t[0].shape[2] / p->spatial_scale,
            t[0].shape[3] / p->spatial_scale);
  DsTensor y = shape_tensor(&out[0]);
  run_ok(DS_OP_ROI_ALIGN, p, t, 2, &y, 1);
  double *want = dalloc(ds_tensor_numel(&y));
  ref_roi_align(p, &t[0], &t[1], y.shape[1], want);
  g_autofree char *what = g_strdup_printf("ROIAlign %s, %" G_GINT64_FORMAT " rois", data, n_rois);
  close_to(y.data, want, ds_tensor_numel(&y), 1e-5, 1e-4, what);
  g_free(want);
  tensors_free(t, 2);
  g_free(y.data);
}

static void test_roi_align_kernel(void)
{
  /* Mask R-CNN's setting, then adaptive sampling, aligned, position-sensitive. */
  check_roi_align("(2, 6, 12, 10)", 9, "pooled_size", "(4, 4)", "sample_ratio", "2",
                  "spatial_scale", "0.25", NULL);
  check_roi_align("(2, 5, 12, 10)", 9, "pooled_size", "(3, 2)", "sample_ratio", "-1",
                  "spatial_scale", "0.25", NULL);
  check_roi_align("(1, 4, 20, 17)", 8, "pooled_size", "(2, 3)", "spatial_scale", "1", NULL);
  check_roi_align("(2, 3, 12, 10)", 9, "pooled_size", "(4, 4)", "sample_ratio", "2",
                  "spatial_scale", "0.25", "aligned", "True", NULL);
  check_roi_align("(2, 3, 12, 10)", 9, "pooled_size", "(3, 3)", "spatial_scale", "0.5", "aligned",
                  "True", NULL);
  check_roi_align("(2, 18, 9, 11)", 7, "pooled_size", "(3, 2)", "sample_ratio", "3",
                  "spatial_scale", "0.5", "position_sensitive", "True", NULL);
  check_roi_align("(1, 12, 8, 8)", 6, "pooled_size", "(2, 2)", "spatial_scale", "0.125",
                  "position_sensitive", "True", "aligned", "True", NULL);
  /* Enough work to split across threads, with hundreds of samples per bin. */
  check_roi_align("(2, 16, 40, 36)", 40, "pooled_size", "(2, 2)", "spatial_scale", "1", NULL);
  /* Bins of more samples than the kernel computes at a time (up to 64 x 64). */
  check_roi_align("(1, 3, 80, 80)", 6, "pooled_size", "(1, 1)", "spatial_scale", "1", NULL);
  /* No rois. */
  check_roi_align("(1, 3, 8, 8)", 0, "pooled_size", "(2, 2)", "spatial_scale", "1", NULL);

  /* Rois the kernel refuses: an image past the batch; an empty aligned roi. */
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "_contrib_ROIAlign", "pooled_size", "(2, 2)", "spatial_scale", "1", NULL);
  DsTensor t[2] = {rtensor("(2, 3, 6, 6)", -1, 1), ftensor("(1, 5)")};
  DsTensor y = ftensor("(1, 3, 2, 2)");
  float *roi = t[1].data;
  const float bad_batch[] = {2.0f, 0.0f, 0.0f, 3.0f, 3.0f};
  memcpy(roi, bad_batch, sizeof bad_batch);
  g_assert_cmpint(run_kernel_on(DS_OP_ROI_ALIGN, n->param, t, 2, &y, 1, NULL), ==,
                  DS_STATUS_OUT_OF_RANGE);
  /* Indices in (-1, 0) truncate to image 0; NaN coordinates give NaN. */
  const float near_zero[] = {-0.5f, 0.0f, 0.0f, 3.0f, 3.0f};
  memcpy(roi, near_zero, sizeof near_zero);
  g_assert_cmpint(run_kernel_on(DS_OP_ROI_ALIGN, n->param, t, 2, &y, 1, NULL), ==, DS_STATUS_OK);
  g_assert_false(((float *)y.data)[0] == 0.0f);
  roi[0] = 0.0f;
  roi[3] = NAN;
  g_assert_cmpint(run_kernel_on(DS_OP_ROI_ALIGN, n->param, t, 2, &y, 1, NULL), ==, DS_STATUS_OK);
  g_assert_true(isnan(((float *)y.data)[0]));
  DsNode *al = node_new(g, "_contrib_ROIAlign", "pooled_size", "(2, 2)", "spatial_scale", "1",
                        "aligned", "True", NULL);
  const float empty[] = {0.0f, 2.0f, 2.0f, 2.0f, 4.0f};
  memcpy(roi, empty, sizeof empty);
  g_assert_cmpint(run_kernel_on(DS_OP_ROI_ALIGN, al->param, t, 2, &y, 1, NULL), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  tensors_free(t, 2);
  g_free(y.data);
}

/* ---- _contrib_AdaptiveAvgPooling2D ------------------------------------------------------- */

static void test_adaptive_avg_pool_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[1], out[1];
  DsNode *one = node_new(g, "_contrib_AdaptiveAvgPooling2D", "output_size", "1", NULL);
  infer_ok(one, (const char *[]){"(2, 512, 7, 9)"}, in, out);
  assert_shape(&out[0], "(2, 512, 1, 1)");
  DsNode *none = node_new(g, "_contrib_AdaptiveAvgPooling2D", NULL);
  infer_ok(none, (const char *[]){"(2, 3, 7, 9)"}, in, out);
  assert_shape(&out[0], "(2, 3, 1, 1)");
  DsNode *empty = node_new(g, "_contrib_AdaptiveAvgPooling2D", "output_size", "()", NULL);
  infer_ok(empty, (const char *[]){"(2, 3, 7, 9)"}, in, out);
  assert_shape(&out[0], "(2, 3, 1, 1)");
  DsNode *sq = node_new(g, "_contrib_AdaptiveAvgPooling2D", "output_size", "(5,)", NULL);
  infer_ok(sq, (const char *[]){"(2, 3, 7, 9)"}, in, out);
  assert_shape(&out[0], "(2, 3, 5, 5)");
  DsNode *rect = node_new(g, "_contrib_AdaptiveAvgPooling2D", "output_size", "(3, 11)", NULL);
  infer_ok(rect, (const char *[]){"(2, 3, 7, 9)"}, in, out);
  assert_shape(&out[0], "(2, 3, 3, 11)");
  /* Backwards: batch and channels. */
  in[0] = DS_SHAPE_UNKNOWN;
  out[0] = shp("(4, 8, 3, 11)");
  GError *error = NULL;
  g_assert_true(infer_err(rect, in, out, &error));
  assert_shape(&in[0], "(4, 8, ?, ?)");
  infer_fails(rect, (const char *[]){"(2, 3, 7)"}, "data must have 4 dims");
  in[0] = shp("(2, 3, 7, 9)");
  out[0] = shp("(2, 3, 4, 11)");
  g_assert_false(infer_err(rect, in, out, &error));
  g_assert_nonnull(strstr(error->message, "node 'layer0' (_contrib_AdaptiveAvgPooling2D)"));
  g_clear_error(&error);
  parse_fails(DS_ERROR_INVALID, "output_size", "_contrib_AdaptiveAvgPooling2D", "output_size",
              "(0, 2)", NULL);
  parse_fails(DS_ERROR_PARSE, "output_size", "_contrib_AdaptiveAvgPooling2D", "output_size", "big",
              NULL);

  /* Symbolic batch, channels and image size. */
  DsExprCtx *exprs = ds_expr_ctx_new();
  DsShape sin[1] = {
      {.ndim = 4,
       .dims = {sym_dim(exprs, "s0"), sym_dim(exprs, "s1"), sym_dim(exprs, "s2"), sym_dim(exprs, "s3")}}};
  DsShape sout[1] = {DS_SHAPE_UNKNOWN};
  g_assert_cmpuint(infer_symbolic(rect, exprs, sin, sout), ==, 0);
  assert_shape(&sout[0], "(s0, s1, 3, 11)");
  ds_expr_ctx_free(exprs);

  /* dtypes: float16 data gives a float32 output (MXNet's accumulation type). */
  DsDType t_in[1] = {DS_DTYPE_FLOAT16}, t_out[1] = {DS_DTYPE_UNKNOWN};
  g_assert_true(one->op->infer_type(one, one->param, t_in, t_out, &error));
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_FLOAT32);
  t_in[0] = DS_DTYPE_FLOAT64;
  t_out[0] = DS_DTYPE_UNKNOWN;
  g_assert_true(one->op->infer_type(one, one->param, t_in, t_out, &error));
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_FLOAT64);
  t_in[0] = DS_DTYPE_INT32;
  t_out[0] = DS_DTYPE_UNKNOWN;
  g_assert_false(one->op->infer_type(one, one->param, t_in, t_out, &error));
  g_assert_nonnull(strstr(error->message, "int32"));
  g_clear_error(&error);
}

/* Adaptive average pooling in double: window [floor(o * in / out), ceil((o + 1) * in / out)). */
static void ref_adaptive(const DsTensor *x, int64_t oh, int64_t ow, double *out)
{
  const int64_t planes = x->shape[0] * x->shape[1], ih = x->shape[2], iw = x->shape[3];
  const float *v = x->data;
  for (int64_t pl = 0; pl < planes; pl++)
    for (int64_t oy = 0; oy < oh; oy++)
      for (int64_t ox = 0; ox < ow; ox++) {
        int64_t y0 = (int64_t)floor((double)oy * ih / oh);
        int64_t y1 = (int64_t)ceil((double)(oy + 1) * ih / oh);
        int64_t x0 = (int64_t)floor((double)ox * iw / ow);
        int64_t x1 = (int64_t)ceil((double)(ox + 1) * iw / ow);
        double sum = 0.0;
        for (int64_t iy = y0; iy < y1; iy++)
          for (int64_t ix = x0; ix < x1; ix++)
            sum += v[(pl * ih + iy) * iw + ix];
        out[(pl * oh + oy) * ow + ox] = sum / (double)((y1 - y0) * (x1 - x0));
      }
}

static void check_adaptive(const char *data, const char *output_size)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "_contrib_AdaptiveAvgPooling2D", "output_size", output_size, NULL);
  DsShape in[1], out[1];
  infer_ok(n, (const char *[]){data}, in, out);
  DsTensor x = rtensor(data, -1, 1), y = shape_tensor(&out[0]);
  run_ok(DS_OP_ADAPTIVE_AVG_POOLING_2D, n->param, &x, 1, &y, 1);
  double *want = dalloc(ds_tensor_numel(&y));
  ref_adaptive(&x, y.shape[2], y.shape[3], want);
  g_autofree char *what = g_strdup_printf("AdaptiveAvgPooling2D %s -> %s", data, output_size);
  close_to(y.data, want, ds_tensor_numel(&y), 1e-6, 1e-5, what);
  g_free(want);
  g_free(x.data);
  g_free(y.data);
}

static void test_adaptive_avg_pool_kernel(void)
{
  check_adaptive("(2, 3, 7, 9)", "1");
  check_adaptive("(2, 3, 7, 9)", "(3, 4)");
  check_adaptive("(1, 2, 5, 5)", "(7, 3)"); /* windows overlap when upsampling */
  check_adaptive("(1, 4, 6, 6)", "(6, 6)");
  check_adaptive("(1, 2, 13, 1)", "(4, 2)");
  check_adaptive("(4, 64, 17, 23)", "(5, 7)"); /* split across threads */
}

/* ---- _contrib_grid_sample ----------------------------------------------------------------- */

static void test_grid_sample_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[2], out[1];
  DsNode *n = node_new(g, "_contrib_grid_sample", "mode", "bicubic", "padding_mode", "border",
                       "align_corners", "True", NULL);
  const DsGridSampleParam *p = n->param;
  g_assert_cmpint(p->mode, ==, DS_GRID_BICUBIC);
  g_assert_cmpint(p->padding, ==, DS_GRID_PAD_BORDER);
  g_assert_true(p->align_corners);
  infer_ok(n, (const char *[]){"(2, 3, 5, 7)", "(2, 4, 6, 2)"}, in, out);
  assert_shape(&out[0], "(2, 3, 4, 6)");
  /* ONNX opset 20's spellings of the modes. */
  DsNode *linear = node_new(g, "_contrib_grid_sample", "mode", "linear", NULL);
  g_assert_cmpint(((const DsGridSampleParam *)linear->param)->mode, ==, DS_GRID_BILINEAR);
  parse_fails(DS_ERROR_PARSE, "mode", "_contrib_grid_sample", "mode", "area", NULL);
  parse_fails(DS_ERROR_PARSE, "padding_mode", "_contrib_grid_sample", "padding_mode", "wrap",
              NULL);
  infer_fails(n, (const char *[]){"(2, 3, 5, 7)", "(2, 4, 6, 3)"},
              "its last axis must hold the 2 coordinates");
  infer_fails(n, (const char *[]){"(2, 3, 5, 7)", "(3, 4, 6, 2)"}, "grid");
  infer_fails(n, (const char *[]){"(2, 3, 5)", "(2, 4, 6, 2)"}, "data must have 4 dims");

  /* Symbolic batch and grid size. */
  DsExprCtx *exprs = ds_expr_ctx_new();
  DsShape sin[2] = {
      {.ndim = 4, .dims = {sym_dim(exprs, "s0"), ds_dim(3), sym_dim(exprs, "s1"), sym_dim(exprs, "s2")}},
      {.ndim = 4, .dims = {sym_dim(exprs, "s0"), sym_dim(exprs, "s3"), sym_dim(exprs, "s4"), ds_dim(2)}}};
  DsShape sout[1] = {DS_SHAPE_UNKNOWN};
  g_assert_cmpuint(infer_symbolic(n, exprs, sin, sout), ==, 0);
  assert_shape(&sout[0], "(s0, 3, s3, s4)");
  ds_expr_ctx_free(exprs);

  GError *error = NULL;
  DsDType t_in[2] = {DS_DTYPE_FLOAT64, DS_DTYPE_UNKNOWN}, t_out[1] = {DS_DTYPE_UNKNOWN};
  g_assert_true(n->op->infer_type(n, n->param, t_in, t_out, &error));
  g_assert_cmpint(t_in[1], ==, DS_DTYPE_FLOAT64);
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_FLOAT64);
  t_in[0] = DS_DTYPE_INT32;
  t_out[0] = DS_DTYPE_UNKNOWN;
  g_assert_false(n->op->infer_type(n, n->param, t_in, t_out, &error));
  g_assert_nonnull(strstr(error->message, "int32"));
  g_clear_error(&error);
}

/* Samples `data` (N, C, H, W float32) at `grid` with the given attributes. */
static DsTensor grid_sample(DsTensor *data, DsTensor *grid, const char *mode, const char *padding,
                            const char *align)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "_contrib_grid_sample", "mode", mode, "padding_mode", padding,
                       "align_corners", align, NULL);
  int64_t dims[4] = {data->shape[0], data->shape[1], grid->shape[1], grid->shape[2]};
  DsTensor y = tensor_dims(data->dtype, 4, dims);
  DsTensor in[2] = {*data, *grid};
  run_ok(DS_OP_GRID_SAMPLE, n->param, in, 2, &y, 1);
  return y;
}

static void test_grid_sample_kernel(void)
{
  /* At the pixel centres (align_corners: -1 and 1 are the corner centres) every mode gives
   * the image back. */
  DsTensor x = rtensor("(2, 3, 4, 5)", -1, 1);
  DsTensor grid = tensor_new(DS_DTYPE_FLOAT32, "(2, 4, 5, 2)");
  for (int64_t n = 0; n < 2; n++)
    for (int64_t i = 0; i < 4; i++)
      for (int64_t j = 0; j < 5; j++) {
        set(&grid, ((n * 4 + i) * 5 + j) * 2, -1.0 + 2.0 * (double)j / 4);
        set(&grid, ((n * 4 + i) * 5 + j) * 2 + 1, -1.0 + 2.0 * (double)i / 3);
      }
  static const char *const modes[] = {"bilinear", "nearest", "bicubic"};
  for (guint m = 0; m < G_N_ELEMENTS(modes); m++) {
    DsTensor y = grid_sample(&x, &grid, modes[m], "zeros", "True");
    for (int64_t i = 0; i < ds_tensor_numel(&x); i++)
      g_assert_cmpfloat_with_epsilon(get(&y, i), get(&x, i), 1e-5);
    tensor_free(&y);
  }
  tensor_free(&grid);
  tensor_free(&x);

  /* The top-left outer corner (-1, -1) without align_corners is pixel (-0.5, -0.5): a quarter
   * of pixel (0, 0) with zeros, all of it with border or reflection. */
  DsTensor img = tensor_new(DS_DTYPE_FLOAT32, "(1, 1, 2, 2)");
  static const double pixels[4] = {4, 1, 2, 3};
  for (int i = 0; i < 4; i++)
    set(&img, i, pixels[i]);
  DsTensor corner = tensor_new(DS_DTYPE_FLOAT32, "(1, 1, 3, 2)");
  static const double at[6] = {-1, -1, 0, 0, NAN, 0.5}; /* the corner, the centre, NaN */
  for (int i = 0; i < 6; i++)
    set(&corner, i, at[i]);
  static const struct {
    const char *padding;
    double corner, centre;
  } cases[] = {{"zeros", 1.0, 2.5}, {"border", 4.0, 2.5}, {"reflection", 4.0, 2.5}};
  for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
    DsTensor y = grid_sample(&img, &corner, "bilinear", cases[c].padding, "False");
    g_assert_cmpfloat_with_epsilon(get(&y, 0), cases[c].corner, 1e-6);
    g_assert_cmpfloat_with_epsilon(get(&y, 1), cases[c].centre, 1e-6);
    g_assert_cmpfloat(get(&y, 2), ==, 0.0); /* a NaN position reads nothing */
    tensor_free(&y);
  }
  tensor_free(&corner);

  /* float64 computes the same. */
  DsTensor img64 = tensor_new(DS_DTYPE_FLOAT64, "(1, 1, 2, 2)");
  DsTensor at64 = tensor_new(DS_DTYPE_FLOAT64, "(1, 1, 1, 2)");
  for (int i = 0; i < 4; i++)
    set(&img64, i, pixels[i]);
  set(&at64, 0, 0.25);
  set(&at64, 1, -0.5);
  DsTensor y64 = grid_sample(&img64, &at64, "bilinear", "zeros", "True");
  /* x = 0.625, y = 0.25 in pixels: rows 4 + 0.625 (1 - 4) and 2 + 0.625 (3 - 2). */
  g_assert_cmpfloat_with_epsilon(get(&y64, 0), 0.75 * 2.125 + 0.25 * 2.625, 1e-12);
  tensor_free(&y64);
  tensor_free(&at64);
  tensor_free(&img64);
  tensor_free(&img);

  /* Split across threads: the same bits as one thread. */
  DsTensor big = rtensor("(2, 16, 20, 20)", -1, 1), where = rtensor("(2, 24, 24, 2)", -1.2, 1.2);
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "_contrib_grid_sample", "mode", "bicubic", "padding_mode",
                       "reflection", NULL);
  DsTensor alone = tensor_new(DS_DTYPE_FLOAT32, "(2, 16, 24, 24)");
  DsTensor split = tensor_new(DS_DTYPE_FLOAT32, "(2, 16, 24, 24)");
  DsTensor in[2] = {big, where};
  g_assert_cmpint(run_kernel_on(DS_OP_GRID_SAMPLE, n->param, in, 2, &alone, 1, NULL), ==,
                  DS_STATUS_OK);
  g_assert_cmpint(run_kernel_on(DS_OP_GRID_SAMPLE, n->param, in, 2, &split, 1, pool), ==,
                  DS_STATUS_OK);
  g_assert_cmpmem(alone.data, ds_tensor_nbytes(&alone), split.data, ds_tensor_nbytes(&split));
  tensor_free(&alone);
  tensor_free(&split);
  tensor_free(&big);
  tensor_free(&where);
}

/* ---- Deconvolution ----------------------------------------------------------------------- */

static void test_deconvolution_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[3], out[1];
  /* Mask R-CNN's mask head. */
  DsNode *n = node_new(g, "Deconvolution", "adj", "(0, 0)", "dilate", "(1, 1)", "kernel", "(2, 2)",
                       "layout", "NCHW", "no_bias", "False", "num_filter", "256", "num_group", "1",
                       "pad", "(0, 0)", "stride", "(2, 2)", NULL);
  g_assert_cmpuint(n->n_inputs, ==, 3);
  infer_ok(n, (const char *[]){"(100, 256, 14, 14)", "?", "?"}, in, out);
  assert_shape(&out[0], "(100, 256, 28, 28)");
  assert_shape(&in[1], "(256, 256, 2, 2)");
  assert_shape(&in[2], "(256,)");

  /* Defaults: no bias, stride 1. (in - 1) + dk - 2 pad + adj. */
  DsNode *d = node_new(g, "Deconvolution", "kernel", "(3, 3)", "num_filter", "4", NULL);
  const DsDeconvolutionParam *p = d->param;
  g_assert_true(p->no_bias);
  g_assert_cmpint(p->stride[1], ==, 1);
  g_assert_cmpint(p->dilate[0], ==, 1);
  g_assert_cmpint(p->num_group, ==, 1);
  g_assert_false(p->has_target);
  infer_ok(d, (const char *[]){"(2, 3, 5, 6)", "?"}, in, out);
  assert_shape(&out[0], "(2, 4, 7, 8)");
  assert_shape(&in[1], "(3, 4, 3, 3)");
  /* Backwards: channels from the weight, batch from the output, and with stride 1 the spatial
   * dims too. */
  in[0] = DS_SHAPE_UNKNOWN;
  in[1] = shp("(3, 4, 3, 3)");
  out[0] = shp("(2, 4, 7, 8)");
  GError *error = NULL;
  g_assert_true(infer_err(d, in, out, &error));
  assert_shape(&in[0], "(2, 3, 5, 6)");

  DsNode *s2 =
      node_new(g, "Deconvolution", "kernel", "(3, 4)", "stride", "(2, 3)", "pad", "(1, 2)", "adj",
               "(1, 2)", "dilate", "(2, 1)", "num_filter", "6", "num_group", "3", NULL);
  infer_ok(s2, (const char *[]){"(1, 9, 5, 4)", "?"}, in, out);
  /* 2 * 4 + 5 - 2 + 1 = 12; 3 * 3 + 4 - 4 + 2 = 11. */
  assert_shape(&out[0], "(1, 6, 12, 11)");
  assert_shape(&in[1], "(9, 2, 3, 4)");

  /* target_shape decides the output and overrides pad and adj. */
  DsNode *t = node_new(g, "Deconvolution", "kernel", "(4, 4)", "stride", "(2, 2)", "pad", "(5, 5)",
                       "target_shape", "(16, 15)", "num_filter", "2", NULL);
  g_assert_true(((const DsDeconvolutionParam *)t->param)->has_target);
  infer_ok(t, (const char *[]){"(1, 3, 8, 8)", "?"}, in, out);
  assert_shape(&out[0], "(1, 2, 16, 15)");
  infer_fails(t, (const char *[]){"(1, 3, 6, 8)", "?"}, "exceeds the full output size 14");
  DsNode *t1 = node_new(g, "Deconvolution", "kernel", "(3,)", "target_shape", "(6,)", "num_filter",
                        "2", NULL);
  infer_ok(t1, (const char *[]){"(1, 3, 4)", "?"}, in, out);
  assert_shape(&out[0], "(1, 2, 6)");
  infer_ok(t1, (const char *[]){"(1, 3, 6)", "?"}, in, out);
  infer_fails(t1, (const char *[]){"(1, 3, 5)", "?"}, "needs adj 1");

  /* 1-D. */
  DsNode *one = node_new(g, "Deconvolution", "kernel", "(5,)", "stride", "(3,)", "pad", "(1,)",
                         "num_filter", "4", "no_bias", "0", NULL);
  infer_ok(one, (const char *[]){"(2, 3, 10)", "?", "?"}, in, out);
  assert_shape(&out[0], "(2, 4, 30)");
  assert_shape(&in[1], "(3, 4, 5)");

  /* Symbolic: (s1 - 1) * 2 + 2 is 2*s1; padding the kernel cannot cover gets a guard. */
  DsExprCtx *exprs = ds_expr_ctx_new();
  DsShape sin[3] = {
      {.ndim = 4, .dims = {sym_dim(exprs, "s0"), ds_dim(256), sym_dim(exprs, "s1"), sym_dim(exprs, "s2")}},
      DS_SHAPE_UNKNOWN,
      DS_SHAPE_UNKNOWN};
  DsShape sout[1] = {DS_SHAPE_UNKNOWN};
  g_assert_cmpuint(infer_symbolic(n, exprs, sin, sout), ==, 0);
  assert_shape(&sout[0], "(s0, 256, 2*s1, 2*s2)");
  DsNode *tight =
      node_new(g, "Deconvolution", "kernel", "(1, 1)", "pad", "(1, 0)", "num_filter", "3", NULL);
  DsShape tin[2] = {{.ndim = 4, .dims = {ds_dim(1), ds_dim(2), sym_dim(exprs, "s3"), ds_dim(4)}},
                    DS_SHAPE_UNKNOWN};
  DsShape tout[1] = {DS_SHAPE_UNKNOWN};
  g_assert_cmpuint(infer_symbolic(tight, exprs, tin, tout), ==, 1);
  assert_shape(&tout[0], "(1, 3, s3 - 2, 4)");
  /* A symbolic input with a target shape: the output is the target, the size a guard. */
  DsShape uin[2] = {{.ndim = 4, .dims = {ds_dim(1), ds_dim(3), sym_dim(exprs, "s4"), sym_dim(exprs, "s5")}},
                    DS_SHAPE_UNKNOWN};
  DsShape uout[1] = {DS_SHAPE_UNKNOWN};
  g_assert_cmpuint(infer_symbolic(t, exprs, uin, uout), ==, 2);
  assert_shape(&uout[0], "(1, 2, 16, 15)");
  ds_expr_ctx_free(exprs);

  /* Errors name the node and values. */
  infer_fails(n, (const char *[]){"(1, 256, 14)", "?", "?"}, "data must have 4 dims");
  infer_fails(n, (const char *[]){"(1, 256, 14, 14)", "(256, 128, 2, 2)", "?"}, "weight");
  infer_fails(s2, (const char *[]){"(1, 10, 5, 4)", "?"}, "num_group=3");
  infer_fails(tight, (const char *[]){"(1, 2, 2, 4)", "?"}, "leaves no output");
  parse_fails(DS_ERROR_INVALID, "adj", "Deconvolution", "kernel", "(3, 3)", "stride", "(2, 2)",
              "adj", "(2, 0)", "num_filter", "2", NULL);
  parse_fails(DS_ERROR_INVALID, "1-D, 2-D or 3-D", "Deconvolution", "kernel", "(3, 3, 3, 3)",
              "num_filter", "2", NULL);
  parse_fails(DS_ERROR_UNSUPPORTED, "NHWC", "Deconvolution", "kernel", "(3, 3)", "num_filter", "2",
              "layout", "NHWC", NULL);
  parse_fails(DS_ERROR_INVALID, "layout=NCW", "Deconvolution", "kernel", "(3, 3)", "num_filter",
              "2", "layout", "NCW", NULL);
  parse_fails(DS_ERROR_INVALID, "num_filter", "Deconvolution", "kernel", "(3, 3)", NULL);
  parse_fails(DS_ERROR_INVALID, "num_group", "Deconvolution", "kernel", "(3, 3)", "num_filter", "6",
              "num_group", "4", NULL);
  parse_fails(DS_ERROR_INVALID, "stride", "Deconvolution", "kernel", "(3, 3)", "num_filter", "2",
              "stride", "(2,)", NULL);
  parse_fails(DS_ERROR_INVALID, "target_shape", "Deconvolution", "kernel", "(3, 3)", "num_filter",
              "2", "target_shape", "(0, 8)", NULL);
  parse_fails(DS_ERROR_INVALID, "target_shape", "Deconvolution", "kernel", "(3, 3)", "num_filter",
              "2", "target_shape", "(8,)", NULL);
}

/* Transposed convolution in double, as a direct scatter: input (n, c, iz, iy, ix) times
 * weight (c, f, kz, ky, kx) adds to output (n, g * fg + f, i * s - p + k * d on each axis).
 * 1-D and 2-D have leading axes of 1. */
static void ref_deconvolution(const DsDeconvolutionParam *p, const DsTensor *x, const DsTensor *w,
                              const DsTensor *b, const DsTensor *y, double *out)
{
  int ns = p->n_spatial;
  int64_t in[3] = {1, 1, 1}, o[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1},
          d[3] = {1, 1, 1}, pd[3] = {0, 0, 0};
  for (int i = 0; i < ns; i++) {
    int j = 3 - ns + i;
    in[j] = x->shape[2 + i];
    o[j] = y->shape[2 + i];
    k[j] = p->kernel[i];
    s[j] = p->stride[i];
    d[j] = p->dilate[i];
    pd[j] = p->pad[i];
    if (p->has_target) {
      int64_t full = p->stride[i] * (in[j] - 1) + p->dilate[i] * (p->kernel[i] - 1) + 1;
      pd[j] = (full - p->target_shape[i] + 1) / 2;
    }
  }
  const int64_t batch = x->shape[0], c_in = x->shape[1], f_n = p->num_filter;
  const int64_t cg = c_in / p->num_group, fg = f_n / p->num_group;
  const int64_t in_plane = in[0] * in[1] * in[2], out_plane = o[0] * o[1] * o[2];
  const int64_t kvol = k[0] * k[1] * k[2];
  const float *xv = x->data, *wv = w->data, *bv = b != NULL ? b->data : NULL;
  for (int64_t n = 0; n < batch; n++)
    for (int64_t f = 0; f < f_n; f++)
      for (int64_t i = 0; i < out_plane; i++)
        out[(n * f_n + f) * out_plane + i] = bv != NULL ? bv[f] : 0.0;
  for (int64_t n = 0; n < batch; n++)
    for (int64_t c = 0; c < c_in; c++) {
      int64_t grp = c / cg;
      for (int64_t at = 0; at < in_plane; at++) {
        int64_t iz = at / (in[1] * in[2]), iy = at / in[2] % in[1], ix = at % in[2];
        double xval = xv[(n * c_in + c) * in_plane + at];
        for (int64_t f = 0; f < fg; f++)
          for (int64_t t = 0; t < kvol; t++) {
            int64_t kz = t / (k[1] * k[2]), ky = t / k[2] % k[1], kx = t % k[2];
            int64_t oz = iz * s[0] - pd[0] + kz * d[0], oy = iy * s[1] - pd[1] + ky * d[1];
            int64_t ox = ix * s[2] - pd[2] + kx * d[2];
            if (oz < 0 || oz >= o[0] || oy < 0 || oy >= o[1] || ox < 0 || ox >= o[2])
              continue;
            double wval = wv[(c * fg + f) * kvol + t];
            out[(n * f_n + grp * fg + f) * out_plane + (oz * o[1] + oy) * o[2] + ox] +=
                xval * wval;
          }
      }
    }
}

/* Builds a Deconvolution with `attrs`, infers its shapes from `data`, runs the kernel on random
 * data and compares with the reference. */
static void check_deconvolution(const char *data, ...)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  va_list args;
  va_start(args, data);
  GError *error = NULL;
  DsNode *n = node_v(g, "Deconvolution", &error, args);
  va_end(args);
  g_assert_no_error(error);
  const DsDeconvolutionParam *p = n->param;
  DsShape in[3], out[1];
  infer_ok(n, (const char *[]){data, "?", "?"}, in, out);
  g_autofree char *bs = g_strdup_printf("(%" G_GINT64_FORMAT ",)", p->num_filter);
  DsTensor t_in[3] = {rtensor(data, -1, 1), shape_tensor(&in[1]), rtensor(bs, -1, 1)};
  float *wv = t_in[1].data;
  for (int64_t i = 0; i < ds_tensor_numel(&t_in[1]); i++)
    wv[i] = (float)g_rand_double_range(rng, -1, 1);
  int n_in = p->no_bias ? 2 : 3;
  DsTensor t_out = shape_tensor(&out[0]);
  run_ok(DS_OP_DECONVOLUTION, p, t_in, n_in, &t_out, 1);
  double *want = dalloc(ds_tensor_numel(&t_out));
  ref_deconvolution(p, &t_in[0], &t_in[1], p->no_bias ? NULL : &t_in[2], &t_out, want);
  g_autofree char *os = ds_shape_to_string(&out[0]);
  g_autofree char *what = g_strdup_printf("Deconvolution %s -> %s", data, os);
  close_to(t_out.data, want, ds_tensor_numel(&t_out), 1e-4, 1e-4, what);
  g_free(want);
  tensors_free(t_in, 3);
  g_free(t_out.data);
}

static void test_deconvolution_kernel(void)
{
  /* 3-D (ONNX's ConvTranspose of a volumetric decoder): stride 2 with overlap, a strided
   * depth, dilation, groups and a target shape. */
  check_deconvolution("(2, 4, 3, 4, 5)", "kernel", "(3, 3, 3)", "stride", "(2, 2, 2)", "pad",
                      "(1, 1, 1)", "adj", "(1, 0, 1)", "num_filter", "6", "no_bias", "False",
                      NULL);
  check_deconvolution("(1, 6, 2, 3, 3)", "kernel", "(2, 3, 1)", "stride", "(3, 1, 2)", "dilate",
                      "(1, 2, 1)", "num_filter", "4", "num_group", "2", NULL);
  check_deconvolution("(1, 2, 3, 3, 3)", "kernel", "(3, 3, 3)", "stride", "(2, 2, 2)",
                      "target_shape", "(6, 6, 5)", "num_filter", "3", NULL);
  /* Mask R-CNN's 2x upsampling (kernel = stride: no overlap). */
  check_deconvolution("(3, 8, 7, 7)", "kernel", "(2, 2)", "stride", "(2, 2)", "num_filter", "6",
                      "no_bias", "False", NULL);
  /* Overlapping windows, padding and adj, stride 1 and 2. */
  check_deconvolution("(2, 4, 5, 6)", "kernel", "(3, 3)", "num_filter", "5", NULL);
  check_deconvolution("(2, 4, 5, 6)", "kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 1)",
                      "adj", "(1, 1)", "num_filter", "3", "no_bias", "False", NULL);
  check_deconvolution("(1, 3, 6, 5)", "kernel", "(4, 3)", "stride", "(3, 2)", "pad", "(2, 1)",
                      "adj", "(2, 0)", "num_filter", "4", NULL);
  /* Groups, dilation, both. */
  check_deconvolution("(2, 6, 5, 5)", "kernel", "(3, 3)", "stride", "(2, 2)", "num_filter", "4",
                      "num_group", "2", "no_bias", "False", NULL);
  check_deconvolution("(1, 4, 6, 7)", "kernel", "(3, 2)", "dilate", "(2, 3)", "pad", "(1, 2)",
                      "num_filter", "2", NULL);
  check_deconvolution("(2, 6, 4, 5)", "kernel", "(3, 3)", "stride", "(2, 1)", "dilate", "(1, 2)",
                      "pad", "(2, 1)", "num_filter", "9", "num_group", "3", "no_bias", "False",
                      NULL);
  check_deconvolution("(1, 4, 5, 5)", "kernel", "(3, 3)", "stride", "(2, 2)", "num_filter", "4",
                      "num_group", "4", NULL); /* depthwise */
  /* Target shapes: even and odd excess (pad and adj derived). */
  check_deconvolution("(1, 3, 8, 8)", "kernel", "(4, 4)", "stride", "(2, 2)", "target_shape",
                      "(16, 15)", "num_filter", "2", "no_bias", "False", NULL);
  check_deconvolution("(2, 2, 5)", "kernel", "(3,)", "stride", "(2,)", "target_shape", "(8,)",
                      "num_filter", "3", NULL);
  /* 1-D. */
  check_deconvolution("(2, 3, 10)", "kernel", "(5,)", "stride", "(3,)", "pad", "(1,)", "adj",
                      "(2,)", "dilate", "(2,)", "num_filter", "4", "no_bias", "False", NULL);
  /* An empty batch. */
  check_deconvolution("(0, 4, 5, 6)", "kernel", "(3, 3)", "num_filter", "2", NULL);
  /* Padding larger than the kernel reach: rows and columns drop out entirely. */
  check_deconvolution("(1, 2, 6, 6)", "kernel", "(2, 2)", "pad", "(2, 2)", "num_filter", "2", NULL);
  /* Column blocks of a few rows each (576 x 100 columns per row), filters across threads. */
  check_deconvolution("(1, 16, 30, 100)", "kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 1)",
                      "num_filter", "64", "no_bias", "False", NULL);
}

/* ---- _contrib_resize, _contrib_dynamic_resize, _contrib_non_max_suppression ------------- */

static DsTensor values_f32(const char *shape, const double *values)
{
  DsTensor x = tensor_new(DS_DTYPE_FLOAT32, shape);
  for (int64_t i = 0; i < ds_tensor_numel(&x); i++)
    set(&x, i, values[i]);
  return x;
}

/* Buffers handed to dynamic-shape kernels, freed by the caller. */
static DsStatus alloc_into(void *data, int index, DsTensor *output)
{
  (void)index;
  output->data = g_malloc0(MAX(ds_tensor_nbytes(output), 1));
  g_ptr_array_add(data, output->data);
  return DS_STATUS_OK;
}

static DsStatus run_dynamic(DsOpId op, const void *param, DsTensor *in, int n_in, DsTensor *out,
                            GPtrArray *buffers)
{
  return run_kernel_dynamic(op, param, in, n_in, out, 1, alloc_into, buffers);
}

static void assert_close(const DsTensor *x, const double *want, double tol)
{
  for (int64_t i = 0; i < ds_tensor_numel(x); i++)
    if (fabs(get(x, i) - want[i]) > tol)
      g_error("element %" G_GINT64_FORMAT ": got %.6f, want %.6f", i, get(x, i), want[i]);
}

static void test_resize_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  static const struct {
    const char *in, *key, *value, *want;
  } cases[] = {
      {"(1, 3, 4, 5)", "scales", "(1, 1, 2, 3)", "(1, 3, 8, 15)"},
      {"(1, 3, 4, 5)", "scales", "(1, 1, 0.6, 0.6)", "(1, 3, 2, 3)"},
      {"(1, 3, 4, 5)", "sizes", "(1, 3, 7, 2)", "(1, 3, 7, 2)"},
      {"?", "sizes", "(1, 3, 7, 2)", "(1, 3, 7, 2)"},
      {"(1, 3, 4)", "scales", "(1, 1, 2, 2)", "error"},
  };
  for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
    DsNode *n = make_node(g, "_contrib_resize", 1, cases[c].key, cases[c].value, NULL);
    DsShape in[1] = {shp(cases[c].in)}, out[1] = {DS_SHAPE_UNKNOWN};
    g_autofree char *msg = infer(n, in, out);
    if (strcmp(cases[c].want, "error") == 0) {
      g_assert_nonnull(msg);
    } else {
      g_assert_null(msg);
      assert_shape(&out[0], cases[c].want);
    }
  }
  /* tf_crop_and_resize scales the roi's extent. */
  DsNode *crop = make_node(g, "_contrib_resize", 1, "scales", "(1, 4)", "roi", "(0, 0, 1, 0.5)",
                           "coordinate_transformation_mode", "tf_crop_and_resize", NULL);
  DsShape ci[1] = {shp("(2, 4)")}, co[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(crop, ci, co));
  assert_shape(&co[0], "(2, 8)");
  /* Symbolic: whole factors multiply or divide; others stay unknown. */
  DsExprCtx *exprs = ds_expr_ctx_new();
  DsNode *sn = make_node(g, "_contrib_resize", 1, "scales", "(1, 2, 0.5, 1.5)", NULL);
  DsShape si[1] = {{.ndim = 4, .dims = {sym_dim(exprs, "N"), sym_dim(exprs, "H"), sym_dim(exprs, "W"),
                                        sym_dim(exprs, "C")}}},
          so[1] = {DS_SHAPE_UNKNOWN};
  infer_symbolic(sn, exprs, si, so);
  g_autofree char *text = ds_shape_to_string(&so[0]);
  g_assert_cmpstr(text, ==, "(N, 2*H, W//2, ?)");
  ds_expr_ctx_free(exprs);
  /* Parse errors: both or neither target, a crop without a roi, a bad mode. */
  g_autofree char *m1 = parse_error("_contrib_resize", 1, "scales", "(1,)", "sizes", "(1,)", NULL);
  g_assert_nonnull(strstr(m1, "scales"));
  g_autofree char *m2 = parse_error("_contrib_resize", 1, NULL);
  g_assert_nonnull(strstr(m2, "scales"));
  g_autofree char *m3 = parse_error("_contrib_resize", 1, "scales", "(1, 2)",
                                    "coordinate_transformation_mode", "tf_crop_and_resize", NULL);
  g_assert_nonnull(strstr(m3, "roi"));
  g_autofree char *m4 = parse_error("_contrib_resize", 1, "scales", "(1, 2)", "mode", "area", NULL);
  g_assert_nonnull(strstr(m4, "mode"));
  g_autofree char *m5 = parse_error("_contrib_resize", 1, "scales", "(1, -2)", NULL);
  g_assert_nonnull(strstr(m5, "positive"));
  /* The dynamic form: the data's rank, the target one value per dim. */
  DsNode *dn = make_node(g, "_contrib_dynamic_resize", 3, "use_sizes", "1", NULL);
  g_assert_true((dn->op->traits & DS_OP_TRAIT_DYNAMIC_SHAPE) != 0);
  DsShape di[3] = {shp("(1, 2, 3)"), shp("(0,)"), shp("(?,)")}, dq[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(dn, di, dq));
  assert_shape(&di[2], "(3,)");
  g_assert_cmpint(dq[0].ndim, ==, 3);
}

static void test_resize_kernel(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  double iota[16];
  for (int i = 0; i < 16; i++)
    iota[i] = i + 1;
  /* ONNX's own expected outputs. */
  static const struct {
    const char *shape, *scales, *mode, *coord, *extra_key, *extra_value, *out_shape;
    double want[16];
  } cases[] = {
      {"(1, 1, 2, 2)", "(1, 1, 2, 2)", "linear", "half_pixel", NULL, NULL, "(1, 1, 4, 4)",
       {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4}},
      {"(1, 1, 2, 4)", "(1, 1, 0.600000024, 0.600000024)", "linear", "align_corners", NULL, NULL,
       "(1, 1, 1, 2)", {1, 3.14286}},
      {"(1, 1, 4, 4)", "(1, 1, 0.800000012, 0.800000012)", "cubic", "half_pixel", NULL, NULL,
       "(1, 1, 3, 3)",
       {1.47119, 2.78125, 4.08252, 6.71143, 8.02148, 9.32275, 11.9165, 13.2266, 14.5278}},
      {"(1, 1, 2, 2)", "(1, 1, 2, 3)", "nearest", "half_pixel", NULL, NULL, "(1, 1, 4, 6)",
       {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2}},
      {"(1, 1, 4, 4)", "(1, 1, 2, 2)", "nearest", "half_pixel", "nearest_mode", "ceil",
       "(1, 1, 8, 8)", {1, 2, 2, 3, 3, 4, 4, 4, 5, 6, 6, 7, 7, 8, 8, 8}},
  };
  for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
    DsNode *n = cases[c].extra_key != NULL
                    ? make_node(g, "_contrib_resize", 1, "scales", cases[c].scales, "mode",
                                cases[c].mode, "coordinate_transformation_mode", cases[c].coord,
                                cases[c].extra_key, cases[c].extra_value, NULL)
                    : make_node(g, "_contrib_resize", 1, "scales", cases[c].scales, "mode",
                                cases[c].mode, "coordinate_transformation_mode", cases[c].coord,
                                NULL);
    DsTensor x = values_f32(cases[c].shape, iota);
    DsTensor out = ftensor(cases[c].out_shape);
    DsShape si[1] = {shp(cases[c].shape)}, so[1] = {DS_SHAPE_UNKNOWN};
    g_assert_null(infer(n, si, so));
    g_autofree char *inferred = ds_shape_to_string(&so[0]);
    g_assert_cmpstr(inferred, ==, cases[c].out_shape);
    run_ok(DS_OP_RESIZE, n->param, &x, 1, &out, 1);
    /* Only the first rows are listed for the larger outputs. */
    for (int64_t i = 0; i < 16 && i < ds_tensor_numel(&out); i++)
      if (cases[c].want[i] != 0 && fabs(get(&out, i) - cases[c].want[i]) > 1e-4)
        g_error("case %u element %" G_GINT64_FORMAT ": got %.6f, want %.6f", c, i, get(&out, i),
                cases[c].want[i]);
    tensor_free(&x);
    tensor_free(&out);
  }
  /* Cubic with a = -0.5 excluding outside neighbours, first row of ONNX's output. */
  {
    DsNode *n = make_node(g, "_contrib_resize", 1, "scales", "(1, 1, 2, 2)", "mode", "cubic",
                          "cubic_coeff_a", "-0.5", "exclude_outside", "1", NULL);
    DsTensor x = values_f32("(1, 1, 4, 4)", iota);
    DsTensor out = ftensor("(1, 1, 8, 8)");
    run_ok(DS_OP_RESIZE, n->param, &x, 1, &out, 1);
    double row0[8] = {0.55882, 0.81494, 1.35698, 1.89706, 2.39706, 2.93714, 3.47918, 3.73529};
    for (int i = 0; i < 8; i++)
      g_assert_cmpfloat_with_epsilon(get(&out, i), row0[i], 1e-4);
    tensor_free(&x);
    tensor_free(&out);
  }
  /* The dynamic form: tf_crop_and_resize with its roi and sizes read from tensors. */
  {
    DsNode *n = make_node(g, "_contrib_dynamic_resize", 3, "mode", "linear",
                          "coordinate_transformation_mode", "tf_crop_and_resize",
                          "extrapolation_value", "10", "use_sizes", "1", NULL);
    double roi[8] = {0, 0, 0.4, 0.6, 1, 1, 1.2, 1.7}, sizes[4] = {1, 1, 3, 3};
    DsTensor in[3] = {values_f32("(1, 1, 4, 4)", iota), values_f32("(8,)", roi),
                      tensor_new(DS_DTYPE_INT64, "(4,)")};
    for (int i = 0; i < 4; i++)
      set(&in[2], i, sizes[i]);
    g_autoptr(GPtrArray) buffers = g_ptr_array_new_with_free_func(g_free);
    DsTensor out[1];
    g_assert_cmpint(run_dynamic(DS_OP_DYNAMIC_RESIZE, n->param, in, 3, out, buffers), ==,
                    DS_STATUS_OK);
    g_assert_cmpint(out[0].ndim, ==, 4);
    g_assert_cmpint(out[0].shape[2], ==, 3);
    double want[9] = {7.6, 10, 10, 12.4, 10, 10, 10, 10, 10};
    assert_close(&out[0], want, 1e-4);
    /* Scales instead: floor(4 * 1.5) = 6. */
    DsNode *sc = make_node(g, "_contrib_dynamic_resize", 3, "mode", "nearest", NULL);
    tensor_free(&in[1]);
    tensor_free(&in[2]);
    in[1] = ftensor("(0,)");
    double scales[4] = {1, 1, 1.5, 0.5};
    in[2] = values_f32("(4,)", scales);
    g_assert_cmpint(run_dynamic(DS_OP_DYNAMIC_RESIZE, sc->param, in, 3, out, buffers), ==,
                    DS_STATUS_OK);
    g_assert_cmpint(out[0].shape[2], ==, 6);
    g_assert_cmpint(out[0].shape[3], ==, 2);
    set(&in[2], 0, 0);
    g_assert_cmpint(run_dynamic(DS_OP_DYNAMIC_RESIZE, sc->param, in, 3, out, buffers), ==,
                    DS_STATUS_INVALID_ARGUMENT);
    tensors_free(in, 3);
  }
}

static void test_nms(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "_contrib_non_max_suppression", 5, NULL);
  DsShape in[5] = {shp("(2, 6, 4)"), shp("(2, 3, 6)"), shp("(1,)"), shp("()"), shp("()")},
          out[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(n, in, out));
  assert_shape(&out[0], "(?, 3)");
  in[1] = shp("(2, 3, 5)");
  g_autofree char *e1 = infer(n, in, out);
  g_assert_nonnull(e1);

  /* ONNX's suppress_by_IOU case, corners and centres, then with a score threshold. */
  static const double corners[24] = {0, 0, 1, 1,  0, 0.1, 1, 1.1,   0, -0.1, 1, 0.9,
                                     0, 10, 1, 11, 0, 10.1, 1, 11.1, 0, 100, 1, 101};
  static const double centres[24] = {0.5, 0.5,  1, 1, 0.5, 0.6,  1, 1, 0.5, 0.4,   1, 1,
                                     0.5, 10.5, 1, 1, 0.5, 10.6, 1, 1, 0.5, 100.5, 1, 1};
  static const double scores[6] = {0.9, 0.75, 0.6, 0.95, 0.5, 0.3};
  static const struct {
    const double *boxes;
    const char *center;
    double max_out, score_threshold;
    int n;
    double want[9];
  } cases[] = {
      {corners, "0", 3, 0, 3, {0, 0, 3, 0, 0, 0, 0, 0, 5}},
      {centres, "1", 3, 0, 3, {0, 0, 3, 0, 0, 0, 0, 0, 5}},
      {corners, "0", 3, 0.4, 2, {0, 0, 3, 0, 0, 0}},
      {corners, "0", 2, -INFINITY, 2, {0, 0, 3, 0, 0, 0}},
      {corners, "0", 0, 0, 0, {0}},
  };
  for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
    DsNode *node = make_node(g, "_contrib_non_max_suppression", 5, "center_point_box",
                             cases[c].center, NULL);
    DsTensor t[5] = {values_f32("(1, 6, 4)", cases[c].boxes), values_f32("(1, 1, 6)", scores),
                     tensor_new(DS_DTYPE_INT64, "(1,)"), ftensor("(1,)"), ftensor("()")};
    set(&t[2], 0, cases[c].max_out);
    set(&t[3], 0, 0.5);
    set(&t[4], 0, cases[c].score_threshold);
    g_autoptr(GPtrArray) buffers = g_ptr_array_new_with_free_func(g_free);
    DsTensor o[1];
    g_assert_cmpint(run_dynamic(DS_OP_NON_MAX_SUPPRESSION, node->param, t, 5, o, buffers), ==,
                    DS_STATUS_OK);
    g_assert_cmpint(o[0].dtype, ==, DS_DTYPE_INT64);
    g_assert_cmpint(o[0].shape[0], ==, cases[c].n);
    g_assert_cmpint(o[0].shape[1], ==, 3);
    assert_close(&o[0], cases[c].want, 0);
    tensors_free(t, 5);
  }
  /* Two batches and two classes: rows in batch, class, then score order. */
  {
    double boxes2[48], scores2[24];
    for (int i = 0; i < 48; i++)
      boxes2[i] = corners[i % 24];
    for (int i = 0; i < 24; i++)
      scores2[i] = scores[i % 6];
    DsTensor t[5] = {values_f32("(2, 6, 4)", boxes2), values_f32("(2, 2, 6)", scores2),
                     tensor_new(DS_DTYPE_INT64, "()"), ftensor("()"), ftensor("()")};
    set(&t[2], 0, 2);
    set(&t[3], 0, 0.5);
    set(&t[4], 0, 0);
    g_autoptr(GPtrArray) buffers = g_ptr_array_new_with_free_func(g_free);
    DsTensor o[1];
    g_assert_cmpint(run_dynamic(DS_OP_NON_MAX_SUPPRESSION, n->param, t, 5, o, buffers), ==,
                    DS_STATUS_OK);
    g_assert_cmpint(o[0].shape[0], ==, 8);
    double want[24] = {0, 0, 3, 0, 0, 0, 0, 1, 3, 0, 1, 0, 1, 0, 3, 1, 0, 0, 1, 1, 3, 1, 1, 0};
    assert_close(&o[0], want, 0);
    tensors_free(t, 5);
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  ds_test_ops_init(20240927);
  g_test_add_func("/ops/vision/registry", test_registry);
  g_test_add_func("/ops/vision/model-attrs", test_model_attrs);
  g_test_add_func("/ops/vision/box-nms/shape", test_box_nms_shape);
  g_test_add_func("/ops/vision/box-nms/errors", test_box_nms_errors);
  g_test_add_func("/ops/vision/box-nms/kernel", test_box_nms_kernel);
  g_test_add_func("/ops/vision/roi-align/shape", test_roi_align_shape);
  g_test_add_func("/ops/vision/roi-align/kernel", test_roi_align_kernel);
  g_test_add_func("/ops/vision/adaptive-avg-pool/shape", test_adaptive_avg_pool_shape);
  g_test_add_func("/ops/vision/adaptive-avg-pool/kernel", test_adaptive_avg_pool_kernel);
  g_test_add_func("/ops/vision/grid-sample/shape", test_grid_sample_shape);
  g_test_add_func("/ops/vision/grid-sample/kernel", test_grid_sample_kernel);
  g_test_add_func("/ops/vision/deconvolution/shape", test_deconvolution_shape);
  g_test_add_func("/ops/vision/deconvolution/kernel", test_deconvolution_kernel);
  g_test_add_func("/ops/vision/resize/shape", test_resize_shape);
  g_test_add_func("/ops/vision/resize/kernel", test_resize_kernel);
  g_test_add_func("/ops/vision/non-max-suppression", test_nms);
  int rc = g_test_run();
  ds_thread_pool_free(pool);
  g_rand_free(rng);
  return rc;
}
