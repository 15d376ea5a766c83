/* ds-test-cover.c: which ops a test program tests; see ds-test-cover.h. */
#include "ds-test-cover.h"

#include <stdio.h>

void ds_test_cover(const char *what, DsOpId id)
{
  static GHashTable *seen;
  const char *path = g_getenv("DS_OP_COVERAGE_FILE");
  if (path == NULL || *path == '\0')
    return;
  if (seen == NULL)
    seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  char *line = g_strdup_printf("%s %s\n", what, ds_op_id_name(id));
  if (!g_hash_table_add(seen, line))
    return;
  FILE *f = fopen(path, "a");
  g_assert_nonnull(f);
  fputs(line, f);
  fclose(f);
}
