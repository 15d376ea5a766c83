/* ds-error.h: the engine's GError domain.
 *
 * Codes decide the command line's exit status: DS_ERROR_RUNTIME and DS_ERROR_CANCELLED stop
 * a run (exit 1); every other code is bad input or usage (exit 2). Messages are one line and
 * name the file, node, op or argument involved.
 */
#pragma once

#include <glib.h>

#define DS_ERROR (ds_error_quark())
GQuark ds_error_quark(void);

typedef enum {
  DS_ERROR_IO,          /* a file cannot be opened, read or written */
  DS_ERROR_PARSE,       /* a file is malformed (JSON, .npy, .params) */
  DS_ERROR_INVALID,     /* a well-formed graph that breaks a rule (cycle, dangling input) */
  DS_ERROR_UNSUPPORTED, /* an op, dtype or attribute value we do not implement */
  DS_ERROR_SHAPE,       /* inconsistent or missing shapes and dtypes */
  DS_ERROR_INPUT,       /* a missing or mismatched input tensor */
  DS_ERROR_LIMIT,       /* a size over a limit (overflow, --max-memory) */
  DS_ERROR_RUNTIME,     /* a kernel failed while running */
  DS_ERROR_CANCELLED,   /* a run stopped by its caller (Cancel, a debugger letting go) */
} DsErrorCode;

/* The process exit status for an error: 1 for DS_ERROR_RUNTIME, 2 otherwise. */
int ds_error_exit_status(const GError *error);
