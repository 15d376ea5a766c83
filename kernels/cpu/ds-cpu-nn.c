/* ds-cpu-nn.c: (in progress) */
#include "ds-cpu.h"

void ds_cpu_nn_register(DsKernel *table) { (void)table; }
