/* ds-status.h: status codes returned by kernels and the plain-C layer.
 *
 * Kernels never print and never abort: they return one of these and the executor turns it into
 * a GError that names the node.
 */
#pragma once

typedef enum {
  DS_STATUS_OK = 0,
  DS_STATUS_INVALID_ARGUMENT, /* shapes or attributes the kernel cannot handle */
  DS_STATUS_OUT_OF_RANGE,     /* an index in the data is outside its table (Embedding, take) */
  DS_STATUS_NO_MEMORY,
  DS_STATUS_UNSUPPORTED,      /* a dtype or mode with no kernel */
  DS_STATUS_CANCELLED,
  DS_STATUS_DEVICE_ERROR,     /* the accelerator failed a launch, copy or library call */
} DsStatus;

/* A short English phrase for messages ("index out of range"). */
const char *ds_status_message(DsStatus status);
