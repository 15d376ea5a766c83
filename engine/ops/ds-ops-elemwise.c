/* ds-ops-elemwise.c: (in progress) */
#include "ds-op.h"

void ds_ops_elemwise_register(const DsOpDef **table) { (void)table; }
