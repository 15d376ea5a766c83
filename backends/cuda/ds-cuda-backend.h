/* ds-cuda-backend.h: the CUDA backend, as the list of compiled-in backends sees it. Its files'
 * interface to each other is private/ds-cuda.h. */
#pragma once

#include "ds-backend.h"

const DsBackend *ds_cuda_backend_get(void);
