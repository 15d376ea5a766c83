/* ds-cpu.h: the CPU backend's private interface between its files. */
#pragma once

#include "ds-backend.h"

const DsBackend *ds_cpu_backend_get(void);

/* Family registration: each fills its ops' slots of the kernel table. */
void ds_cpu_nn_register(DsKernel *table);
void ds_cpu_elemwise_register(DsKernel *table);
void ds_cpu_tensor_register(DsKernel *table);
void ds_cpu_index_register(DsKernel *table);
void ds_cpu_vision_register(DsKernel *table);

/* Kernels below this many elements run single-threaded: waking a worker costs a few µs. */
#define DS_CPU_PARALLEL_GRAIN 32768
