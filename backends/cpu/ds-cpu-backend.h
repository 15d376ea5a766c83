/* ds-cpu-backend.h: the CPU backend, as the list of compiled-in backends sees it. Its files'
 * interface to each other is private/ds-cpu.h. */
#pragma once

#include "ds-backend.h"

const DsBackend *ds_cpu_backend_get(void);
