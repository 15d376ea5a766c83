/* ds-op-def.c: what every op definition shares: fixed input and output counts, and the names
 * of inputs in messages. Below the registry (ds-op.c) and the families it lists, which all
 * use it. */
#include "ds-op.h"

#include "ds-error.h"

int ds_op_count_1(const void *param) { (void)param; return 1; }
int ds_op_count_2(const void *param) { (void)param; return 2; }
int ds_op_count_3(const void *param) { (void)param; return 3; }

const char *ds_op_input_name(const DsOpDef *op, int n_inputs, int i, char buf[16])
{
  if (op != NULL && op->input_names != NULL) {
    int n_names = 0;
    while (op->input_names[n_names] != NULL)
      n_names++;
    if (i < n_names)
      return op->input_names[i];
    if (n_names == 1) { /* a repeated argument: Concat's arg0, arg1... */
      g_snprintf(buf, 16, "arg%d", i);
      return buf;
    }
  }
  if (n_inputs == 1)
    return "data";
  g_snprintf(buf, 16, "arg%d", i);
  return buf;
}

gboolean ds_op_check_node_args(const DsNode *node, GError **error)
{
  const DsOpDef *op = node->op;
  if (op->param_size > 0 && node->param == NULL) {
    g_set_error(error, DS_ERROR, DS_ERROR_INVALID, "node '%s' (%s): its attributes were not read",
                node->name, node->op_name);
    return FALSE;
  }
  int n_in = op->num_inputs(node->param);
  if (n_in >= 0 && (guint)n_in != node->n_inputs) {
    g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                "node '%s' (%s): has %u inputs, but its attributes call for %d", node->name,
                node->op_name, node->n_inputs, n_in);
    return FALSE;
  }
  int n_out = op->num_outputs(node->param);
  if (n_out >= 0 && (guint)n_out > node->n_outputs) {
    g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                "node '%s' (%s): has %u outputs, but its attributes call for %d", node->name,
                node->op_name, node->n_outputs, n_out);
    return FALSE;
  }
  return TRUE;
}
