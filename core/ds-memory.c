/* ds-memory.c: the tensor memory budget, one atomic counter against a limit. */
#include "ds-memory.h"

#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

static atomic_size_t limit_bytes;
static atomic_size_t used_bytes;
static atomic_size_t peak_bytes; /* the most used at once since the last reset */

size_t ds_memory_get_limit_bytes(void)
{
  size_t limit = atomic_load(&limit_bytes);
  if (limit == 0) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t total = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : (uint64_t)8 << 30;
    limit = (size_t)(total / 4 * 3);
    atomic_store(&limit_bytes, limit);
  }
  return limit;
}

void ds_memory_set_limit_bytes(size_t bytes) { atomic_store(&limit_bytes, bytes); }

bool ds_memory_try_reserve(size_t bytes)
{
  size_t limit = ds_memory_get_limit_bytes();
  size_t used = atomic_load(&used_bytes);
  do {
    if (bytes > limit || used > limit - bytes)
      return false;
  } while (!atomic_compare_exchange_weak(&used_bytes, &used, used + bytes));
  size_t peak = atomic_load(&peak_bytes);
  while (used + bytes > peak && !atomic_compare_exchange_weak(&peak_bytes, &peak, used + bytes))
    ;
  return true;
}

void ds_memory_release(size_t bytes) { atomic_fetch_sub(&used_bytes, bytes); }

size_t ds_memory_get_used_bytes(void) { return atomic_load(&used_bytes); }

size_t ds_memory_get_peak_bytes(void) { return atomic_load(&peak_bytes); }

void ds_memory_reset_peak(void) { atomic_store(&peak_bytes, atomic_load(&used_bytes)); }
