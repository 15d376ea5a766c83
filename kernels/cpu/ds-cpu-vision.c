/* ds-cpu-vision.c: (being written) */
#include "ds-cpu.h"

void ds_cpu_vision_register(DsKernel *table) { (void)table; }
