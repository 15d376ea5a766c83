/* ds-cli-ops.c: --list-ops: every registered op, its aliases and traits, and which of this
 * build's backends have a kernel for it (as MXNet's mx.operator lists its registry). */
#include "ds-cli.h"

#include <cjson/cJSON.h>
#include <stdio.h>

#include "ds-backend.h"
#include "ds-op.h"

static const struct {
  guint trait;
  const char *name;
} trait_names[] = {
    {DS_OP_TRAIT_ELEMWISE, "elemwise"},
    {DS_OP_TRAIT_BROADCAST, "broadcast"},
    {DS_OP_TRAIT_DYNAMIC_SHAPE, "dynamic-shape"},
    {DS_OP_TRAIT_CONTROL_FLOW, "control-flow"},
    {DS_OP_TRAIT_MUTATES_INPUT, "mutates-input"},
    {DS_OP_TRAIT_SHAPE_INPUT, "shape-input"},
    {DS_OP_TRAIT_VIEW, "view"},
    {DS_OP_TRAIT_SOURCE, "source"},
};

/* The backends with a kernel for `op`, whether or not their device is usable here. */
static GPtrArray *kernel_backends(const DsOpDef *op)
{
  GPtrArray *names = g_ptr_array_new();
  for (const char *const *name = ds_backend_names(); *name != NULL; name++)
    if (ds_backend_find(*name)->get_kernel(op->id) != NULL)
      g_ptr_array_add(names, (gpointer)*name);
  return names;
}

static cJSON *op_json(const DsOpDef *op)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", op->name);
  cJSON *aliases = cJSON_AddArrayToObject(o, "aliases");
  for (const char *const *a = op->aliases; a != NULL && *a != NULL; a++)
    cJSON_AddItemToArray(aliases, cJSON_CreateString(*a));
  cJSON *traits = cJSON_AddArrayToObject(o, "traits");
  for (gsize t = 0; t < G_N_ELEMENTS(trait_names); t++)
    if (op->traits & trait_names[t].trait)
      cJSON_AddItemToArray(traits, cJSON_CreateString(trait_names[t].name));
  cJSON *kernels = cJSON_AddArrayToObject(o, "kernels");
  g_autoptr(GPtrArray) backends = kernel_backends(op);
  for (guint b = 0; b < backends->len; b++)
    cJSON_AddItemToArray(kernels, cJSON_CreateString(backends->pdata[b]));
  return o;
}

static void print_text(const DsOpDef *op)
{
  g_autoptr(GString) line = g_string_new(NULL);
  g_string_append_printf(line, "%-36s", op->name);
  g_autoptr(GPtrArray) backends = kernel_backends(op);
  g_string_append(line, " kernels:");
  for (guint b = 0; b < backends->len; b++)
    g_string_append_printf(line, "%s%s", b == 0 ? " " : ",", (char *)backends->pdata[b]);
  if (backends->len == 0)
    g_string_append(line, " none (run by the executor)");
  for (gsize t = 0; t < G_N_ELEMENTS(trait_names); t++)
    if (op->traits & trait_names[t].trait)
      g_string_append_printf(line, " [%s]", trait_names[t].name);
  if (op->aliases != NULL && op->aliases[0] != NULL) {
    g_autofree char *aliases = g_strjoinv(", ", (char **)op->aliases);
    g_string_append_printf(line, " (also %s)", aliases);
  }
  printf("%s\n", line->str);
}

int ds_cli_list_ops(const DsCliOptions *options)
{
  if (options->json) {
    cJSON *root = cJSON_CreateObject();
    cJSON *ops = cJSON_AddArrayToObject(root, "ops");
    for (int i = 0; i < DS_OP_COUNT; i++)
      cJSON_AddItemToArray(ops, op_json(ds_op_get((DsOpId)i)));
    char *text = cJSON_PrintUnformatted(root);
    printf("%s\n", text);
    cJSON_free(text);
    cJSON_Delete(root);
    return 0;
  }
  for (int i = 0; i < DS_OP_COUNT; i++)
    print_text(ds_op_get((DsOpId)i));
  printf("%d ops\n", DS_OP_COUNT);
  return 0;
}
