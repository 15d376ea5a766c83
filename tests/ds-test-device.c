/* ds-test-device.c: the "testdev" backend (ds-test-device.h). */
#include "ds-test-device.h"

#include <stdlib.h>
#include <string.h>

/* Ops it runs; everything else stays on the host. boolean_mask makes the device size an
 * output at run time, as CUDA's compaction does. */
#define TESTDEV_OPS(X)                                                                             \
  X(FULLY_CONNECTED)                                                                               \
  X(ACTIVATION) X(RELU) X(ELEMWISE_ADD) X(BROADCAST_ADD) X(BROADCAST_MUL) X(MUL_SCALAR)            \
      X(PLUS_SCALAR) X(SOFTMAX) X(BOOLEAN_MASK) X(RESHAPE) X(SUM)

static GHashTable *buffers; /* ptr -> size */
static GMutex lock;
static DsTestDeviceStats stats;

gboolean ds_test_device_owns(const void *ptr)
{
  g_mutex_lock(&lock);
  gboolean found = FALSE;
  if (buffers != NULL) {
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, buffers);
    while (!found && g_hash_table_iter_next(&it, &key, &value))
      found = (const char *)ptr >= (const char *)key &&
              (const char *)ptr < (const char *)key + GPOINTER_TO_SIZE(value);
  }
  g_mutex_unlock(&lock);
  return found;
}

static gboolean on_device(const DsTensor *t)
{
  return t->memory == DS_MEMORY_DEVICE && (t->data == NULL || ds_test_device_owns(t->data));
}

static DsStatus checked_run(DsOpId op, const DsKernelCtx *ctx)
{
  for (int i = 0; i < ctx->n_inputs; i++)
    if (!on_device(&ctx->inputs[i]))
      return DS_STATUS_DEVICE_ERROR;
  for (int i = 0; i < ctx->n_outputs; i++)
    if (ctx->outputs[i].ndim >= 0 && !on_device(&ctx->outputs[i]))
      return DS_STATUS_DEVICE_ERROR;
  stats.n_kernels++; /* nodes run one at a time */
  DsStatus st = ds_backend_find("cpu")->get_kernel(op)->run(ctx);
  for (int i = 0; st == DS_STATUS_OK && i < ctx->n_outputs; i++)
    if (!on_device(&ctx->outputs[i]))
      return DS_STATUS_DEVICE_ERROR;
  return st;
}

#define TESTDEV_WRAP(id)                                                                           \
  static DsStatus run_##id(const DsKernelCtx *ctx)                                                 \
  {                                                                                                \
    return checked_run(DS_OP_##id, ctx);                                                           \
  }
TESTDEV_OPS(TESTDEV_WRAP)
#undef TESTDEV_WRAP

static DsKernel table[DS_OP_COUNT];

static void *build_table(void *unused)
{
  (void)unused;
  const DsBackend *cpu = ds_backend_find("cpu");
#define TESTDEV_ENTRY(id)                                                                          \
  table[DS_OP_##id] = (DsKernel){run_##id, cpu->get_kernel(DS_OP_##id)->workspace_bytes};
  TESTDEV_OPS(TESTDEV_ENTRY)
#undef TESTDEV_ENTRY
  return NULL;
}

static const DsKernel *testdev_get_kernel(DsOpId op)
{
  static GOnce once = G_ONCE_INIT;
  g_once(&once, build_table, NULL);
  return op < DS_OP_COUNT && table[op].run != NULL ? &table[op] : NULL;
}

static void *testdev_alloc(size_t bytes)
{
  size_t rounded = ((bytes + 255) & ~(size_t)255) + 256;
  void *p = aligned_alloc(256, rounded);
  g_mutex_lock(&lock);
  if (buffers == NULL)
    buffers = g_hash_table_new(g_direct_hash, g_direct_equal);
  g_hash_table_insert(buffers, p, GSIZE_TO_POINTER(rounded));
  stats.n_live_buffers++;
  g_mutex_unlock(&lock);
  return p;
}

static void testdev_free(void *p)
{
  if (p == NULL)
    return;
  g_mutex_lock(&lock);
  g_assert_true(g_hash_table_remove(buffers, p));
  stats.n_live_buffers--;
  g_mutex_unlock(&lock);
  free(p);
}

static void testdev_set_n_threads(int n)
{
  (void)n;
}

static const char *testdev_unavailable(void)
{
  return NULL;
}

static bool testdev_copy_to_device(void *dst, const void *src, size_t bytes)
{
  if (!ds_test_device_owns(dst) || ds_test_device_owns(src))
    return false;
  memcpy(dst, src, bytes);
  stats.n_to_device++;
  stats.bytes_to_device += bytes;
  return true;
}

static bool testdev_copy_to_host(void *dst, const void *src, size_t bytes)
{
  if (ds_test_device_owns(dst) || !ds_test_device_owns(src))
    return false;
  memcpy(dst, src, bytes);
  stats.n_to_host++;
  stats.bytes_to_host += bytes;
  return true;
}

static bool testdev_synchronize(void)
{
  return true;
}

static bool testdev_supports(DsOpId op, const void *param, const DsDType *in, int n_in,
                             const DsDType *out, int n_out)
{
  (void)op;
  (void)param;
  for (int i = 0; i < n_in; i++)
    if (in[i] != DS_DTYPE_FLOAT32 && !(op == DS_OP_BOOLEAN_MASK && i == 1))
      return false;
  for (int i = 0; i < n_out; i++)
    if (out[i] != DS_DTYPE_FLOAT32)
      return false;
  return true;
}

static const DsBackend testdev = {
    .name = "testdev",
    .memory = DS_MEMORY_DEVICE,
    .get_kernel = testdev_get_kernel,
    .alloc_buffer = testdev_alloc,
    .free_buffer = testdev_free,
    .set_n_threads = testdev_set_n_threads,
    .unavailable = testdev_unavailable,
    .copy_to_device = testdev_copy_to_device,
    .copy_to_host = testdev_copy_to_host,
    .synchronize = testdev_synchronize,
    .supports = testdev_supports,
};

const DsBackend *ds_test_device_get(void)
{
  ds_tensor_set_device_reader(testdev_copy_to_host);
  return &testdev;
}

void ds_test_device_get_stats(DsTestDeviceStats *out)
{
  g_mutex_lock(&lock);
  *out = stats;
  g_mutex_unlock(&lock);
}
