/* ds-onnx-versions.c: which version of an ONNX operator a model's opset imports, for the
 * operators that changed after opset 17.
 *
 * A model imports an opset N; each operator then has the form of its newest version at or
 * below N (ReduceMax at opset 19 is ReduceMax-18, at opset 20 ReduceMax-20). The translators
 * were written against the forms through opset 17 and say, each, the newest version they
 * handle; the importer compares the two, so a model of a newer opset loads whenever its ops
 * have forms the translators know, and a node whose form is newer becomes an opaque node that
 * names its version. The list is ONNX's changelog for opsets 18 to 21.
 */
#include "ds-onnx-translate.h"

#include <string.h>

typedef struct {
  const char *op_type;
  int versions[4]; /* the opsets after 17 with a new version of the op, ascending, 0-ended */
} OpVersions;

static const OpVersions changed_after_17[] = {
    {"AffineGrid", {20}},
    {"AveragePool", {19}},
    {"BitwiseAnd", {18}},
    {"BitwiseNot", {18}},
    {"BitwiseOr", {18}},
    {"BitwiseXor", {18}},
    {"Cast", {19, 21}},
    {"CastLike", {19, 21}},
    {"CenterCropPad", {18}},
    {"Col2Im", {18}},
    {"Constant", {19, 21}},
    {"ConstantOfShape", {20, 21}},
    {"DFT", {20}},
    {"DeformConv", {19}},
    {"DequantizeLinear", {19, 21}},
    {"Equal", {19}},
    {"Flatten", {21}},
    {"Gelu", {20}},
    {"GridSample", {20}},
    {"GroupNormalization", {18, 21}},
    {"Identity", {19, 21}},
    {"If", {19, 21}},
    {"ImageDecoder", {20}},
    {"IsInf", {20}},
    {"IsNaN", {20}},
    {"Loop", {19, 21}},
    {"LpPool", {18}},
    {"Mish", {18}},
    {"OptionalGetElement", {18}},
    {"OptionalHasElement", {18}},
    {"Pad", {18, 19, 21}},
    {"QLinearMatMul", {21}},
    {"QuantizeLinear", {19, 21}},
    {"ReduceL1", {18}},
    {"ReduceL2", {18}},
    {"ReduceLogSum", {18}},
    {"ReduceLogSumExp", {18}},
    {"ReduceMax", {18, 20}},
    {"ReduceMean", {18}},
    {"ReduceMin", {18, 20}},
    {"ReduceProd", {18}},
    {"ReduceSumSquare", {18}},
    {"RegexFullMatch", {20}},
    {"Reshape", {19, 21}},
    {"Resize", {18, 19}},
    {"Scan", {19, 21}},
    {"ScatterElements", {18}},
    {"ScatterND", {18}},
    {"Shape", {19, 21}},
    {"Size", {19, 21}},
    {"Split", {18}},
    {"Squeeze", {21}},
    {"StringConcat", {20}},
    {"StringSplit", {20}},
    {"Transpose", {21}},
    {"Unsqueeze", {21}},
};

int ds_onnx_op_version_after_17(const char *op_type, gint64 opset)
{
  for (gsize i = 0; i < G_N_ELEMENTS(changed_after_17); i++) {
    if (strcmp(changed_after_17[i].op_type, op_type) != 0)
      continue;
    int version = 0;
    for (const int *v = changed_after_17[i].versions; *v != 0 && *v <= opset; v++)
      version = *v;
    return version;
  }
  return 0;
}
