/* ds-cpu-backend.c: the CPU backend: kernel table, aligned buffers, thread count. */
#include "ds-cpu.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

static DsKernel kernel_table[DS_OP_COUNT];

static void *build_table(void *unused)
{
  (void)unused;
  ds_cpu_nn_register(kernel_table);
  ds_cpu_elemwise_register(kernel_table);
  ds_cpu_reduce_register(kernel_table);
  ds_cpu_tensor_register(kernel_table);
  ds_cpu_index_register(kernel_table);
  ds_cpu_vision_register(kernel_table);
  ds_cpu_dynamic_register(kernel_table);
  ds_cpu_signal_register(kernel_table);
  ds_cpu_linalg_register(kernel_table);
  return NULL;
}

static const DsKernel *cpu_get_kernel(DsOpId op)
{
  static GOnce once = G_ONCE_INIT;
  g_once(&once, build_table, NULL);
  if (op >= DS_OP_COUNT || kernel_table[op].run == NULL)
    return NULL;
  return &kernel_table[op];
}

static void *cpu_alloc_buffer(size_t bytes)
{
  /* 64-byte alignment suits AVX loads and cache lines; round up as aligned_alloc requires. */
  size_t rounded = (bytes + 63) & ~(size_t)63;
  return aligned_alloc(64, rounded == 0 ? 64 : rounded);
}

static void cpu_free_buffer(void *ptr) { free(ptr); }

static void cpu_set_n_threads(int n_threads)
{
  openblas_set_num_threads(n_threads < 1 ? 1 : n_threads);
}

/* The instruction set the kernels were compiled for, which the build chooses (meson.build's
 * kernel_c_args), and the widest the CPU offers, so a user sees what is left unused. */
static const char *kernel_isa(void)
{
#if defined(__AVX512F__)
  return "avx512";
#elif defined(__AVX2__) && defined(__FMA__)
  return "avx2+fma";
#elif defined(__AVX__)
  return "avx";
#elif defined(__aarch64__)
  return "neon";
#else
  return "portable";
#endif
}

static const char *cpu_isa(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return "avx512";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return "avx2+fma";
  if (__builtin_cpu_supports("avx"))
    return "avx";
#endif
  return kernel_isa();
}

static void cpu_describe(char *line, size_t size)
{
  const char *compiled = kernel_isa(), *offered = cpu_isa();
  g_autofree char *isa = strcmp(compiled, offered) == 0
                             ? g_strdup(compiled)
                             : g_strdup_printf("%s kernels on an %s CPU", compiled, offered);
  guint n = g_get_num_processors();
  g_snprintf(line, size, "cpu: %s, OpenBLAS %s, %u thread%s", isa, openblas_get_corename(), n,
             n == 1 ? "" : "s");
}

static const DsBackend cpu_backend = {
    .name = "cpu",
    .memory = DS_MEMORY_HOST,
    .get_kernel = cpu_get_kernel,
    .alloc_buffer = cpu_alloc_buffer,
    .free_buffer = cpu_free_buffer,
    .set_n_threads = cpu_set_n_threads,
    .describe = cpu_describe,
};

const DsBackend *ds_cpu_backend_get(void) { return &cpu_backend; }
