/* ds-ops-index.h: (being written) ids and parsed attributes. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ds-dtype.h"
#include "ds-tensor.h"

#define DS_OPS_INDEX(X)
