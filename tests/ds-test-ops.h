/* ds-test-ops.h: helpers shared by the op test programs (test-ops-nn, -elemwise, -tensor,
 * -index, -vision, -dynamic).
 *
 * - Globals: `pool` (a 2-thread pool) and `rng` (a seeded GRand), set up by ds_test_ops_init(),
 *   which each program calls from main right after g_test_init().
 * - Nodes: make_node()/make_node_v()/parse_error() build a node "node0" with an explicit input
 *   count; node_new()/node_v()/parse_fails() build a node "layer0" whose input count comes from
 *   the op. Attributes are key, value string pairs ending in NULL; the param is parsed.
 * - Shapes: shp() parses "(2, ?, 3)", sym_shp() parses symbolic dims, assert_shape() compares
 *   text; infer()/infer_in() run a shape rule and return the error message (or NULL);
 *   infer_err()/infer_ok()/infer_fails() are the GError-style runners; Sym is a symbolic
 *   context with its expression engine, sym_dim() a named symbol, infer_symbolic() the
 *   symbolic runner.
 * - Tensors: tensor_new()/tensor_dims()/ftensor()/rtensor() allocate (zeroed or random),
 *   get()/set() access elements of any numeric dtype as double, fill_random() fills, bits()
 *   reads an element's bytes; tensor_free()/tensors_free() free the data.
 * - Kernels: run_kernel() runs an op's CPU kernel on `pool`; run_kernel_on()/run_ok() also
 *   poison outputs and workspace first and run both single-threaded and on the pool;
 *   run_kernel_dynamic() runs a kernel that shapes its own outputs.
 * - Comparison: close_to() compares floats against double references; dalloc() allocates
 *   reference buffers.
 * - Coverage: the shape runners and the kernel runners note the op they test (ds_test_cover),
 *   so the registry's coverage test (tests/test_op_coverage.py) knows which ops have a shape
 *   rule test and a CPU case. */
#ifndef DS_TEST_OPS_H
#define DS_TEST_OPS_H

#include <glib.h>
#include <stdarg.h>
#include <stdint.h>

#include "ds-cpu.h"
#include "ds-error.h"
#include "ds-expr.h"
#include "ds-op.h"
#include "ds-test-cover.h"

/* The thread pool kernels run on and the random source of the fillers (ds_test_ops_init). */
extern DsThreadPool *pool;
extern GRand *rng;

/* Creates `pool` (2 threads) and `rng` (seeded with `seed`); call once from main. */
void ds_test_ops_init(guint32 seed);



/* ---- nodes ---- */

/* Node "node0" of `op_name` with `n_inputs` inputs and the attributes in `args`; NULL with
 * `error` set when the op's parse rejects them. */
DsNode *make_node_v(DsGraph *g, const char *op_name, int n_inputs, GError **error, va_list args);
/* As make_node_v with the attributes as key, value pairs (NULL-terminated); must parse. */
DsNode *make_node(DsGraph *g, const char *op_name, int n_inputs, ...);
/* The parse error of a node expected to be rejected (caller frees); it names 'node0'. */
char *parse_error(const char *op_name, int n_inputs, ...);

/* Node "layer0" of `op_name`, inputs counted by the op; NULL with `error` on a parse error. */
DsNode *node_v(DsGraph *g, const char *op_name, GError **error, va_list args);
/* As node_v with attributes as key, value pairs ending in NULL; must parse. */
DsNode *node_new(DsGraph *g, const char *op_name, ...);
/* Asserts that parsing fails with `code` and a message naming the node and containing
 * `needle`. */
void parse_fails(int code, const char *needle, const char *op_name, ...);

/* ---- shapes ---- */

/* "(2, ?, 3)" -> shape; "?" is an unknown rank. */
DsShape shp(const char *text);
/* "(s0, 3, 2*s1)" -> shape with symbolic dims parsed by `exprs`; "?" dims are unknown. */
DsShape sym_shp(DsExprCtx *exprs, const char *text);
/* Asserts the shape prints as `want`. */
void assert_shape(const DsShape *s, const char *want);

/* Runs the node's shape rule in `ctx` (a concrete one when NULL); the error message (a shape
 * error naming "node 'node0' ("), or NULL. `out` has as many slots as the node has outputs. */
char *infer_in(DsShapeCtx *ctx, DsNode *n, DsShape *in, DsShape *out);
/* infer_in in a fresh concrete context. */
char *infer(DsNode *n, DsShape *in, DsShape *out);

/* Runs the node's shape rule in a fresh concrete context; whether it succeeded. */
gboolean infer_err(DsNode *n, DsShape *in, DsShape *out, GError **error);
/* Infers with the inputs' shapes given as text (outputs start unknown); must succeed. */
void infer_ok(DsNode *n, const char *const *ins, DsShape *in, DsShape *out);
/* Asserts inference fails with a shape error naming 'layer0' and containing `needle`. */
void infer_fails(DsNode *n, const char *const *ins, const char *needle);

/* A symbolic inference context with its expression engine. */
typedef struct {
  DsExprCtx *exprs;
  DsShapeCtx *ctx;
} Sym;

Sym sym_new(void);
void sym_free(Sym *s);
/* A symbolic dim named `name` of `exprs`. */
DsDim sym_dim(DsExprCtx *exprs, const char *name);
/* Runs the node's shape rule under a symbolic context of `exprs`; it must succeed. Returns the
 * number of guards it recorded (each logged as a test message). */
guint infer_symbolic(DsNode *n, DsExprCtx *exprs, DsShape *in, DsShape *out);

/* ---- tensors ---- */

/* A zeroed tensor of dtype t with the given dims (data never NULL). */
DsTensor tensor_dims(DsDType t, int ndim, const int64_t *dims);
/* A zeroed tensor of dtype t with a concrete shape given as text, "(2, 3)". */
DsTensor tensor_new(DsDType t, const char *shape);
/* A zeroed float32 tensor. */
DsTensor ftensor(const char *shape);
/* A float32 tensor of uniform values in [lo, hi). */
DsTensor rtensor(const char *shape, double lo, double hi);
void tensor_free(DsTensor *x);
/* Frees the data of `n` tensors. */
void tensors_free(DsTensor *t, int n);

/* Element i as a double (float32/64, int8/32/64, uint8, bool). */
double get(const DsTensor *x, int64_t i);
/* Sets element i from a double (same dtypes as get). */
void set(DsTensor *x, int64_t i, double v);
/* Random contents: any bit pattern for float16 (moved, never computed), small integers for
 * integer dtypes, and for floats values from [lo, hi). */
void fill_random(DsTensor *x, double lo, double hi);
/* Element i's bytes, so data movement can be checked exactly for every dtype. */
uint64_t bits(const DsTensor *x, int64_t i);

/* ---- kernels, comparison ---- */

/* Runs the op's CPU kernel on `pool` with the workspace it asks for. */
DsStatus run_kernel(DsOpId op, const void *param, DsTensor *in, int n_in, DsTensor *out, int n_out);
/* Runs op `id`'s CPU kernel on `threads` (NULL: single-threaded), with the workspace it asks
 * for; workspace and outputs are filled with garbage first so leaks into results show. */
DsStatus run_kernel_on(DsOpId id, const void *param, DsTensor *in, int n_in, DsTensor *out,
                       int n_out, DsThreadPool *threads);
/* run_kernel_on single-threaded and on `pool`; both must succeed. */
void run_ok(DsOpId id, const void *param, DsTensor *in, int n_in, DsTensor *out, int n_out);
/* Runs a dynamic-shape kernel as the executor does: outputs of unknown shape (reset here), a
 * workspace sized from the inputs alone, and `alloc` (with `alloc_data`) to give the outputs
 * their buffers. */
DsStatus run_kernel_dynamic(DsOpId op, const void *param, DsTensor *in, int n_in, DsTensor *out,
                            int n_out, DsOutputAllocFn alloc, void *alloc_data);

/* got ~ want within atol + rtol * |want|; NaN must match NaN. Marks the test failed (naming
 * `what` and the element) and returns FALSE otherwise. */
gboolean close_to(const float *got, const double *want, int64_t n, double atol, double rtol,
                  const char *what);
/* `n` zeroed doubles (at least one). */
double *dalloc(int64_t n);

#endif
