/* ds-ops-index.c: (being written) */
#include "ds-op.h"

void ds_ops_index_register(const DsOpDef **table) { (void)table; }
