/* ds-cpu-tensor.c: (in progress) */
#include "ds-cpu.h"

void ds_cpu_tensor_register(DsKernel *table) { (void)table; }
