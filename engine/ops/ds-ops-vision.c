/* ds-ops-vision.c: (being written) */
#include "ds-op.h"

void ds_ops_vision_register(const DsOpDef **table) { (void)table; }
