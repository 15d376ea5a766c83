/* ds-test-cuda.c: the CPU against the CUDA kernel of one op. */
#include "ds-test-cuda.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ds-backend.h"

static const DsBackend *cuda(void)
{
  return ds_backend_find("cuda");
}

gboolean cuda_ready(void)
{
  const DsBackend *b = cuda();
  if (b == NULL) {
    g_test_skip("this build has no CUDA backend");
    return FALSE;
  }
  const char *why = b->unavailable();
  if (why != NULL) {
    g_test_skip(why);
    return FALSE;
  }
  return TRUE;
}

static void *upload(const DsBackend *b, const DsTensor *host)
{
  size_t bytes = ds_tensor_nbytes(host);
  void *dev = b->alloc_buffer(bytes);
  g_assert_nonnull(dev);
  if (bytes > 0)
    g_assert_true(b->copy_to_device(dev, host->data, bytes));
  return dev;
}

/* Dynamic outputs: device buffers, freed by the runner. */
typedef struct {
  const DsBackend *backend;
  void *buffers[8];
} DeviceOutputs;

static DsStatus alloc_device_output(void *data, int index, DsTensor *output)
{
  DeviceOutputs *d = data;
  if (index < 0 || index >= 8)
    return DS_STATUS_INVALID_ARGUMENT;
  d->backend->free_buffer(d->buffers[index]);
  d->buffers[index] = d->backend->alloc_buffer(ds_tensor_nbytes(output));
  output->data = d->buffers[index];
  output->memory = DS_MEMORY_DEVICE;
  return output->data != NULL ? DS_STATUS_OK : DS_STATUS_NO_MEMORY;
}

DsStatus run_cuda_kernel(DsOpId id, const void *param, const DsTensor *in, int n_in, DsTensor *out,
                         int n_out)
{
  const DsBackend *b = cuda();
  const DsKernel *k = b->get_kernel(id);
  g_assert_nonnull(k);
  g_assert_cmpint(n_out, <=, 8);
  DsTensor dev_in[16], dev_out[8];
  g_assert_cmpint(n_in, <=, 16);
  for (int i = 0; i < n_in; i++) {
    dev_in[i] = in[i];
    dev_in[i].data = upload(b, &in[i]);
    dev_in[i].memory = DS_MEMORY_DEVICE;
    dev_in[i].constant = NULL;
  }
  gboolean dynamic = FALSE;
  for (int i = 0; i < n_out; i++) {
    dev_out[i] = out[i];
    dev_out[i].constant = NULL;
    if (out[i].ndim < 0) {
      dynamic = TRUE;
      dev_out[i].data = NULL;
    } else {
      dev_out[i].data = b->alloc_buffer(ds_tensor_nbytes(&out[i]));
      dev_out[i].memory = DS_MEMORY_DEVICE;
    }
  }
  size_t ws_bytes =
      k->workspace_bytes != NULL ? k->workspace_bytes(param, dev_in, n_in, dev_out, n_out) : 0;
  void *ws = ws_bytes > 0 ? b->alloc_buffer(ws_bytes) : NULL;
  DeviceOutputs dyn = {.backend = b};
  DsKernelCtx ctx = {
      .param = param,
      .inputs = dev_in,
      .n_inputs = n_in,
      .outputs = dev_out,
      .n_outputs = n_out,
      .workspace = ws,
      .alloc_output = dynamic ? alloc_device_output : NULL,
      .alloc_data = &dyn,
  };
  DsStatus st = k->run(&ctx);
  if (st == DS_STATUS_OK && !b->synchronize())
    st = DS_STATUS_DEVICE_ERROR;
  for (int i = 0; i < n_out && st == DS_STATUS_OK; i++) {
    if (out[i].ndim < 0) {
      DsTensor host = dev_out[i];
      host.memory = DS_MEMORY_HOST;
      host.data = g_malloc0(MAX(ds_tensor_nbytes(&host), 1));
      out[i] = host;
    }
    size_t bytes = ds_tensor_nbytes(&out[i]);
    if (bytes > 0)
      g_assert_true(b->copy_to_host(out[i].data, dev_out[i].data, bytes));
  }
  for (int i = 0; i < n_in; i++)
    b->free_buffer(dev_in[i].data);
  for (int i = 0; i < n_out; i++)
    if (out[i].ndim >= 0 && !(dynamic && dev_out[i].data == dyn.buffers[i]))
      b->free_buffer(dev_out[i].data);
  for (int i = 0; i < 8; i++)
    b->free_buffer(dyn.buffers[i]);
  b->free_buffer(ws);
  return st;
}

/* Dynamic outputs of the CPU kernel: host buffers the caller frees with tensors_free. */
static DsStatus alloc_host_output(void *data, int index, DsTensor *output)
{
  (void)data;
  (void)index;
  output->data = g_malloc0(MAX(ds_tensor_nbytes(output), 1));
  output->memory = DS_MEMORY_HOST;
  return DS_STATUS_OK;
}

/* run_kernel(), with an allocator for the outputs a dynamic-shape kernel sizes itself. */
static DsStatus run_cpu_kernel(DsOpId id, const void *param, DsTensor *in, int n_in, DsTensor *out,
                               int n_out)
{
  gboolean dynamic = FALSE;
  for (int i = 0; i < n_out; i++)
    dynamic |= out[i].ndim < 0;
  if (!dynamic)
    return run_kernel(id, param, in, n_in, out, n_out);
  const DsKernel *k = ds_backend_find("cpu")->get_kernel(id);
  size_t ws_bytes =
      k->workspace_bytes != NULL ? k->workspace_bytes(param, in, n_in, out, n_out) : 0;
  void *ws = ws_bytes > 0 ? aligned_alloc(64, (ws_bytes + 63) & ~(size_t)63) : NULL;
  DsKernelCtx ctx = {
      .param = param,
      .inputs = in,
      .n_inputs = n_in,
      .outputs = out,
      .n_outputs = n_out,
      .workspace = ws,
      .pool = pool,
      .alloc_output = alloc_host_output,
  };
  DsStatus st = k->run(&ctx);
  free(ws);
  return st;
}

static gboolean is_float(DsDType t)
{
  return t == DS_DTYPE_FLOAT32 || t == DS_DTYPE_FLOAT64 || t == DS_DTYPE_FLOAT16;
}

void compare_backends(const char *what, DsOpId id, const void *param, const DsTensor *in, int n_in,
                      const DsTensor *out_like, int n_out, double atol, double rtol)
{
  DsTensor cpu_out[8], gpu_out[8];
  g_assert_cmpint(n_out, <=, 8);
  DsTensor cpu_in[16];
  g_assert_cmpint(n_in, <=, 16);
  for (int i = 0; i < n_in; i++)
    cpu_in[i] = in[i];
  for (int i = 0; i < n_out; i++) {
    if (out_like[i].ndim < 0) {
      cpu_out[i] = (DsTensor){.dtype = out_like[i].dtype, .ndim = -1};
      gpu_out[i] = cpu_out[i];
    } else {
      cpu_out[i] = tensor_dims(out_like[i].dtype, out_like[i].ndim, out_like[i].shape);
      gpu_out[i] = tensor_dims(out_like[i].dtype, out_like[i].ndim, out_like[i].shape);
    }
  }
  DsStatus st = run_cpu_kernel(id, param, cpu_in, n_in, cpu_out, n_out);
  if (st != DS_STATUS_OK) {
    g_test_message("%s: the CPU kernel failed: %s", what, ds_status_message(st));
    g_test_fail();
    return;
  }
  st = run_cuda_kernel(id, param, in, n_in, gpu_out, n_out);
  if (st != DS_STATUS_OK) {
    g_test_message("%s: the CUDA kernel failed: %s", what, ds_status_message(st));
    g_test_fail();
    tensors_free(cpu_out, n_out);
    return;
  }
  for (int o = 0; o < n_out; o++) {
    if (cpu_out[o].ndim != gpu_out[o].ndim ||
        memcmp(cpu_out[o].shape, gpu_out[o].shape, sizeof(int64_t) * (size_t)cpu_out[o].ndim)) {
      g_test_message("%s: output %d: the shapes differ", what, o);
      g_test_fail();
      break;
    }
    int64_t n = ds_tensor_numel(&cpu_out[o]);
    for (int64_t i = 0; i < n; i++) {
      double want = get(&cpu_out[o], i), got = get(&gpu_out[o], i);
      gboolean ok;
      if (isnan(want))
        ok = isnan(got);
      else if (got == want) /* also equal infinities, where the difference is NaN */
        ok = TRUE;
      else if (is_float(cpu_out[o].dtype))
        ok = fabs(got - want) <= atol + rtol * fabs(want);
      else
        ok = got == want;
      if (!ok) {
        g_test_message("%s: output %d element %" G_GINT64_FORMAT ": cuda %.9g, cpu %.9g", what, o,
                       i, got, want);
        g_test_fail();
        break;
      }
    }
  }
  tensors_free(cpu_out, n_out);
  tensors_free(gpu_out, n_out);
}
