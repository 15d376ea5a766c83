/* ds-cpu-index.c: (being written) */
#include "ds-cpu.h"

void ds_cpu_index_register(DsKernel *table) { (void)table; }
