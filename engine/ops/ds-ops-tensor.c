/* ds-ops-tensor.c: (in progress) */
#include "ds-op.h"

void ds_ops_tensor_register(const DsOpDef **table) { (void)table; }
