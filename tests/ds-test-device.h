/* ds-test-device.h: a device backend for testing placement without a GPU.
 *
 * "testdev" keeps its buffers in host memory it allocates itself but calls them device memory
 * (DS_MEMORY_DEVICE), so placement, region-edge copies and the device pool run here as they
 * do with CUDA. Its kernels are the CPU kernels of a few ops, each checking first that every
 * input and output is tagged as device memory inside a buffer of its own, and failing with
 * DS_STATUS_DEVICE_ERROR otherwise: a host tensor reaching a device kernel, or a device
 * tensor reaching host code through the copies, shows as an error. It supports float32 only,
 * so other dtypes stay on the host. */
#ifndef DS_TEST_DEVICE_H
#define DS_TEST_DEVICE_H

#include <glib.h>

#include "ds-backend.h"

const DsBackend *ds_test_device_get(void);

/* Whether `ptr` points into a live testdev buffer. */
gboolean ds_test_device_owns(const void *ptr);

typedef struct {
  guint64 n_to_device, n_to_host; /* copies */
  guint64 bytes_to_device, bytes_to_host;
  guint64 n_kernels;              /* kernel calls */
  guint n_live_buffers;
} DsTestDeviceStats;

void ds_test_device_get_stats(DsTestDeviceStats *stats);

#endif
