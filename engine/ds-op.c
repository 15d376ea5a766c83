/* ds-op.c: the op table, filled by each family and checked for completeness once. */
#include "ds-op.h"

#include <string.h>

#define DS_OP_NAME_ENTRY(id, name, ...) [DS_OP_##id] = name,
static const char *const op_names[DS_OP_COUNT] = {DS_OP_LIST(DS_OP_NAME_ENTRY)};
#undef DS_OP_NAME_ENTRY

static const DsOpDef *op_table[DS_OP_COUNT];
static GHashTable *op_by_name; /* name or alias -> DsOpDef* */

static gpointer build_registry(gpointer unused)
{
  (void)unused;
  ds_ops_nn_register(op_table);
  ds_ops_elemwise_register(op_table);
  ds_ops_tensor_register(op_table);
  ds_ops_index_register(op_table);
  ds_ops_vision_register(op_table);
  ds_ops_subgraph_register(op_table);
  ds_ops_dynamic_register(op_table);
  ds_ops_control_register(op_table);
  ds_ops_signal_register(op_table);
  ds_ops_linalg_register(op_table);

  op_by_name = g_hash_table_new(g_str_hash, g_str_equal);
  for (int i = 0; i < DS_OP_COUNT; i++) {
    const DsOpDef *def = op_table[i];
    /* Every listed op has a definition (DS_OP_TABLE_ENTRY does not compile without one);
     * what it says of itself must match the list. */
    g_assert(def != NULL);
    g_assert(def->id == (DsOpId)i && strcmp(def->name, op_names[i]) == 0);
    g_assert(def->num_inputs != NULL && def->num_outputs != NULL && def->infer_shape != NULL);
    g_hash_table_insert(op_by_name, (gpointer)def->name, (gpointer)def);
    for (const char *const *alias = def->aliases; alias != NULL && *alias != NULL; alias++)
      g_hash_table_insert(op_by_name, (gpointer)*alias, (gpointer)def);
  }
  return NULL;
}

static void ensure_registry(void)
{
  static GOnce once = G_ONCE_INIT;
  g_once(&once, build_registry, NULL);
}

const DsOpDef *ds_op_lookup(const char *name)
{
  ensure_registry();
  return name != NULL ? g_hash_table_lookup(op_by_name, name) : NULL;
}

const DsOpDef *ds_op_get(DsOpId id)
{
  g_return_val_if_fail(id < DS_OP_COUNT, NULL);
  ensure_registry();
  return op_table[id];
}

const char *ds_op_id_name(DsOpId id)
{
  g_return_val_if_fail(id < DS_OP_COUNT, NULL);
  return op_names[id];
}
