/* ds-status.c */
#include "ds-status.h"

const char *ds_status_message(DsStatus status)
{
  switch (status) {
  case DS_STATUS_OK: return "ok";
  case DS_STATUS_INVALID_ARGUMENT: return "invalid argument";
  case DS_STATUS_OUT_OF_RANGE: return "index out of range";
  case DS_STATUS_NO_MEMORY: return "out of memory";
  case DS_STATUS_UNSUPPORTED: return "unsupported dtype or mode";
  case DS_STATUS_CANCELLED: return "cancelled";
  case DS_STATUS_DEVICE_ERROR: return "device error";
  }
  return "unknown status";
}
