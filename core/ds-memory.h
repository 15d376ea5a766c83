/* ds-memory.h: the process-wide budget for tensor memory.
 *
 * Every buffer that holds tensor data is accounted here before it is allocated: fed arrays,
 * weights, executors' arenas and workspaces, and the forms kernels derive from weights (packed
 * matrices). The budget lives at the bottom layer so kernels can respect it too; the engine's
 * ds_memory_reserve() (ds-ndarray.h) adds the error message.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The most bytes one process may hold in tensors at once (default: 75% of physical memory).
 * The command line's --max-memory sets it. */
size_t ds_memory_get_limit_bytes(void);
void ds_memory_set_limit_bytes(size_t bytes);

/* Accounts `bytes` against the limit; false (and nothing accounted) if they do not fit.
 * Thread-safe. */
bool ds_memory_try_reserve(size_t bytes);
void ds_memory_release(size_t bytes);
size_t ds_memory_get_used_bytes(void);
/* The most bytes held at once since the last ds_memory_reset_peak() (which starts it at what
 * is held now): a run's peak, forward and backward together, whatever executor ran it. */
size_t ds_memory_get_peak_bytes(void);
void ds_memory_reset_peak(void);
