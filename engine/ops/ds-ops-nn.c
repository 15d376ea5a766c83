/* ds-ops-nn.c: (in progress) */
#include "ds-op.h"

void ds_ops_nn_register(const DsOpDef **table) { (void)table; }
