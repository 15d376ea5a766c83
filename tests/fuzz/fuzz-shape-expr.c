/* fuzz-shape-expr.c: libFuzzer target for symbolic dim expressions.
 *
 * The input is text: `;`-separated assumptions ("s0 >= 3; s1 == 2*s0") and then an
 * expression. Every assumption and the expression must succeed or fail with a DS_ERROR. An
 * expression that parses must print to text that parses back to the same node, and must
 * evaluate without crashing for fixed symbol values; without assumptions, values in the
 * symbols' default range [1, inf) must evaluate inside the bounds the engine computes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ds-error.h"
#include "ds-expr.h"

#define FUZZ_MAX_INPUT 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(GError *error)
{
  if (error == NULL || error->domain != DS_ERROR)
    abort();
  g_error_free(error);
}

/* Evaluates `e` with symbol values from base to base + 8, with and without resolving: both
 * must agree, and with `in_range` the value must lie in the computed bounds. */
static void check_eval(DsExprCtx *ctx, const DsExpr *e, int64_t base, gboolean in_range)
{
  guint n = ds_expr_ctx_get_n_symbols(ctx);
  int64_t *values = g_new(int64_t, n + 1);
  for (guint i = 0; i < n; i++)
    values[i] = base + (int64_t)((i * 7 + 3) % 9);
  int64_t a = 0, b = 0, lo, hi;
  gboolean ok_a = ds_expr_eval(ctx, e, values, NULL, &a);
  gboolean ok_b = ds_expr_eval(NULL, e, values, NULL, &b);
  if (ok_a != ok_b || a != b)
    abort();
  ds_expr_bounds(ctx, e, &lo, &hi);
  if (ok_a && in_range && (a < lo || a > hi))
    abort();
  g_free(values);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *text = g_strndup((const char *)data, MIN(size, (size_t)FUZZ_MAX_INPUT));
  char **parts = g_strsplit(text, ";", -1);
  guint n_parts = g_strv_length(parts);
  DsExprCtx *ctx = ds_expr_ctx_new();
  GError *error = NULL;
  for (guint i = 0; i + 1 < n_parts; i++)
    if (!ds_expr_ctx_assume(ctx, parts[i], &error))
      check_error(g_steal_pointer(&error));

  const DsExpr *e = n_parts > 0 ? ds_expr_parse(ctx, parts[n_parts - 1], &error) : NULL;
  if (e == NULL) {
    if (n_parts > 0)
      check_error(error);
  } else {
    char *printed = ds_expr_to_string(e);
    const DsExpr *again = ds_expr_parse(ctx, printed, &error);
    /* The one failure allowed: canonical forms can need more parentheses than the input
     * had, past the parser's nesting limit. */
    if (again == NULL && strstr(error->message, "nested too deeply") == NULL)
      abort();
    if (again != NULL && again != e)
      abort();
    g_clear_error(&error);
    g_free(printed);
    if (ds_expr_resolve(ctx, e) != e)
      abort();
    /* Values in [1, inf) are inside every symbol's range only when nothing was assumed. */
    check_eval(ctx, e, 1, n_parts == 1);
    check_eval(ctx, e, -4, FALSE);
  }
  ds_expr_ctx_free(ctx);
  g_strfreev(parts);
  g_free(text);
  return 0;
}
