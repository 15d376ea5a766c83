/* ds-expr.c: symbolic dim expressions: interning, canonical forms, bounds and evaluation.
 *
 * Every builder resolves its operands, converts them to a polynomial (a constant plus sorted
 * (coefficient, monomial) terms), combines them there, and interns the result, so equal
 * expressions are one node. Floor division, modulo, max and min become atoms of the
 * polynomial once their own rules (ds-expr.h) have run. The module's files call one way:
 * ds-expr-print.c (text out) < this file < ds-expr-facts.c (ranges, merges) <
 * ds-expr-parse.c (text in, assumptions).
 */
#include "ds-expr-private.h"

#include <stdlib.h>
#include <string.h>

#define INF             DS_EXPR_INF
#define NEG_INF         (-DS_EXPR_INF)
#define ARENA_CHUNK     ((gsize)64 << 10)
#define SMALL_CONST_MIN (-64)
#define SMALL_CONST_MAX 1023

/* ---- integer arithmetic ---- */

gboolean ds_expr_py_floordiv(int64_t a, int64_t b, int64_t *out)
{
  if (b == 0 || (a == G_MININT64 && b == -1))
    return FALSE;
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0)))
    q--;
  *out = q;
  return TRUE;
}

gboolean ds_expr_py_mod(int64_t a, int64_t b, int64_t *out)
{
  if (b == 0)
    return FALSE;
  if (b == -1) { /* a % -1 traps for G_MININT64 in C; the answer is always 0 */
    *out = 0;
    return TRUE;
  }
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  *out = r;
  return TRUE;
}

static gboolean is_inf(int64_t v)
{
  return v >= INF || v <= NEG_INF;
}

/* G_MININT64 lies below -DS_EXPR_INF: it stands for minus infinity too. */
static int64_t clamp_inf(int64_t v)
{
  return v < NEG_INF ? NEG_INF : v;
}

int64_t ds_expr_sat_add(int64_t a, int64_t b, gboolean round_down)
{
  /* DS_EXPR_INF is also the value G_MAXINT64: in a lower bound it is that value, still a sound
   * bound, and only -DS_EXPR_INF is infinite; in an upper bound the other way round. */
  if (round_down ? (a <= NEG_INF || b <= NEG_INF) : (a >= INF || b >= INF))
    return round_down ? NEG_INF : INF;
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return a > 0 ? INF : NEG_INF;
  return clamp_inf(r);
}

static int64_t sat_mul(int64_t a, int64_t b)
{
  if (a == 0 || b == 0)
    return 0;
  gboolean neg = (a < 0) != (b < 0);
  int64_t r;
  if (is_inf(a) || is_inf(b) || __builtin_mul_overflow(a, b, &r))
    return neg ? NEG_INF : INF;
  return clamp_inf(r);
}

static void interval_mul(int64_t al, int64_t ah, int64_t bl, int64_t bh, int64_t *lo, int64_t *hi)
{
  int64_t c[4] = {sat_mul(al, bl), sat_mul(al, bh), sat_mul(ah, bl), sat_mul(ah, bh)};
  *lo = *hi = c[0];
  for (int i = 1; i < 4; i++) {
    *lo = MIN(*lo, c[i]);
    *hi = MAX(*hi, c[i]);
  }
}

static void interval_scale(int64_t k, int64_t *lo, int64_t *hi)
{
  int64_t a = sat_mul(k, *lo), b = sat_mul(k, *hi);
  *lo = MIN(a, b);
  *hi = MAX(a, b);
}

/* floor(a / b) for a lower (`upper` FALSE) or upper bound `a` and a bound b >= 1. An infinite
 * `a` stays infinite; an infinite `b` divides as G_MAXINT64, which no int64 exceeds. */
static int64_t bound_floordiv(int64_t a, int64_t b, gboolean upper)
{
  if (upper ? a >= INF : a <= NEG_INF)
    return a;
  int64_t q = 0;
  ds_expr_py_floordiv(a, b, &q);
  return q;
}

static void interval_floordiv(int64_t al, int64_t ah, int64_t bl, int64_t bh, int64_t *lo,
                              int64_t *hi)
{
  if (bl < 1) {
    *lo = NEG_INF;
    *hi = INF;
    return;
  }
  *lo = bound_floordiv(al, al >= 0 ? bh : bl, FALSE);
  *hi = bound_floordiv(ah, ah >= 0 ? bl : bh, TRUE);
}

static void interval_mod(int64_t al, int64_t ah, int64_t bl, int64_t bh, int64_t *lo, int64_t *hi)
{
  if (bl < 1) {
    *lo = NEG_INF;
    *hi = INF;
    return;
  }
  int64_t top = bh >= INF ? INF : bh - 1;
  if (al >= 0 && ah < bl) {
    *lo = al;
    *hi = ah;
  } else {
    *lo = 0;
    *hi = al >= 0 ? MIN(ah, top) : top;
  }
}

/* ---- interning ---- */

static void *arena_alloc(DsExprCtx *ctx, gsize size)
{
  size = (size + 7) & ~(gsize)7;
  if (size > ctx->arena_left) {
    gsize chunk = MAX(size, ARENA_CHUNK);
    ctx->arena_ptr = g_malloc(chunk);
    g_ptr_array_add(ctx->chunks, ctx->arena_ptr);
    ctx->arena_left = chunk;
  }
  void *p = ctx->arena_ptr;
  ctx->arena_ptr += size;
  ctx->arena_left -= size;
  return p;
}

static inline guint64 hash_step(guint64 h, guint64 v)
{
  h = ((h << 27) | (h >> 37)) ^ v;
  return h * 0x9E3779B97F4A7C15ull;
}

/* Murmur3's finaliser: every input bit reaches the low bits the table indexes by. */
static inline guint32 hash_finish(guint64 h)
{
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 33;
  return (guint32)h;
}

static guint32 node_hash(DsExprKind kind, int64_t value, guint n, const DsExpr *const *ops,
                         const int64_t *coefs)
{
  guint64 h = hash_step(0x243F6A8885A308D3ull, (guint64)kind);
  h = hash_step(h, (guint64)value);
  for (guint i = 0; i < n; i++) {
    h = hash_step(h, ops[i]->serial);
    if (coefs != NULL)
      h = hash_step(h, (guint64)coefs[i]);
  }
  return hash_finish(h);
}

static gboolean node_equal(const DsExpr *a, const DsExpr *b)
{
  if (a->hash != b->hash || a->kind != b->kind || a->value != b->value || a->n_ops != b->n_ops)
    return FALSE;
  if (a->n_ops > 0 && memcmp(a->ops, b->ops, a->n_ops * sizeof(DsExpr *)) != 0)
    return FALSE;
  if ((a->coefs == NULL) != (b->coefs == NULL))
    return FALSE;
  return a->coefs == NULL || memcmp(a->coefs, b->coefs, a->n_ops * sizeof(int64_t)) == 0;
}

/* The interned node equal to `key`, or NULL and in *free_slot the slot to put it in. */
static DsExpr *table_find(DsExprCtx *ctx, const DsExpr *key, gsize *free_slot)
{
  gsize i = key->hash & ctx->slot_mask;
  for (;; i = (i + 1) & ctx->slot_mask) {
    DsExprSlot *slot = &ctx->slots[i];
    if (slot->node == NULL) {
      *free_slot = i;
      return NULL;
    }
    if (slot->hash == key->hash && node_equal(slot->node, key))
      return slot->node;
  }
}

static void table_grow(DsExprCtx *ctx)
{
  gsize old_size = ctx->slot_mask + 1, size = old_size * 2;
  DsExprSlot *old = ctx->slots;
  ctx->slots = g_new0(DsExprSlot, size);
  ctx->slot_mask = size - 1;
  for (gsize j = 0; j < old_size; j++) {
    if (old[j].node == NULL)
      continue;
    gsize i = old[j].hash & ctx->slot_mask;
    while (ctx->slots[i].node != NULL)
      i = (i + 1) & ctx->slot_mask;
    ctx->slots[i] = old[j];
  }
  g_free(old);
}

/* The one node with this structure. Callers pass canonical operands resolved under the
 * current facts, so the node is its own resolved form now: the cache says so. NULL when the
 * node would be over DS_EXPR_MAX_SIZE. */
static const DsExpr *intern(DsExprCtx *ctx, DsExprKind kind, int64_t value, guint n,
                            const DsExpr *const *ops, const int64_t *coefs, const DsExpr *mono)
{
  DsExpr key;
  key.kind = kind;
  key.value = value;
  key.n_ops = n;
  key.ops = (const DsExpr **)ops;
  key.coefs = (int64_t *)coefs;
  key.hash = node_hash(kind, value, n, ops, coefs);
  gsize slot;
  DsExpr *e = table_find(ctx, &key, &slot);
  if (e == NULL) {
    guint64 size = 1, mask = 0;
    int64_t degree = kind == DS_EXPR_CONST ? 0 : 1;
    for (guint i = 0; i < n; i++) {
      guint64 times = kind == DS_EXPR_MUL ? (guint64)coefs[i] : 1;
      size += (guint64)ops[i]->size * times;
      mask |= ops[i]->symmask;
      if (kind == DS_EXPR_MUL)
        degree = i == 0 ? coefs[i] : degree + coefs[i];
      else if (kind == DS_EXPR_ADD)
        degree = MAX(degree, ops[i]->degree);
      size = MIN(size, (guint64)DS_EXPR_MAX_SIZE + 1);
    }
    if (size > DS_EXPR_MAX_SIZE) {
      ctx->fail = DS_EXPR_FAIL_TOO_LARGE;
      return NULL;
    }
    gsize bytes = sizeof(DsExpr) + n * sizeof(DsExpr *) + (coefs != NULL ? n * sizeof(int64_t) : 0);
    e = arena_alloc(ctx, bytes);
    memset(e, 0, sizeof(DsExpr));
    e->kind = kind;
    e->value = value;
    e->n_ops = n;
    e->hash = key.hash;
    e->serial = ctx->next_serial++;
    e->size = (guint32)size;
    e->degree = (int32_t)degree;
    e->symmask = mask;
    e->ops = (const DsExpr **)(e + 1);
    if (n > 0)
      memcpy(e->ops, ops, n * sizeof(DsExpr *));
    if (coefs != NULL) {
      e->coefs = (int64_t *)(e->ops + n);
      memcpy(e->coefs, coefs, n * sizeof(int64_t));
    }
    e->mono = mono;
    if (2 * (ctx->n_nodes + 1) > ctx->slot_mask + 1) {
      table_grow(ctx);
      table_find(ctx, e, &slot);
    }
    ctx->slots[slot] = (DsExprSlot){e->hash, e};
    ctx->n_nodes++;
  }
  e->resolved = e;
  e->resolved_gen = ctx->gen;
  return e;
}

const DsExpr *ds_expr_const(DsExprCtx *ctx, int64_t value)
{
  if (value >= SMALL_CONST_MIN && value <= SMALL_CONST_MAX) {
    const DsExpr **slot = &ctx->small_consts[value - SMALL_CONST_MIN];
    if (*slot == NULL)
      *slot = intern(ctx, DS_EXPR_CONST, value, 0, NULL, NULL, NULL);
    return *slot;
  }
  return intern(ctx, DS_EXPR_CONST, value, 0, NULL, NULL, NULL);
}

/* ---- the log of facts learned (ds-expr-facts.c adds most entries) ---- */

void ds_expr_log_free(gpointer p)
{
  DsExprLogEntry *entry = p;
  g_free(entry->text);
  g_free(entry->reason);
  g_free(entry);
}

void ds_expr_log_add(DsExprCtx *ctx, DsExprLogKind kind, guint index, char *text,
                     const char *reason)
{
  DsExprLogEntry *entry = g_new0(DsExprLogEntry, 1);
  entry->kind = kind;
  entry->index = index;
  entry->text = text;
  entry->reason = g_strdup(reason);
  g_ptr_array_add(ctx->log, entry);
}

/* ---- context and symbols ---- */

static void sym_free(gpointer p)
{
  DsExprSym *sym = p;
  g_free(sym->name);
  g_free(sym);
}

DsExprCtx *ds_expr_ctx_new(void)
{
  DsExprCtx *ctx = g_new0(DsExprCtx, 1);
  ctx->slot_mask = 255;
  ctx->slots = g_new0(DsExprSlot, ctx->slot_mask + 1);
  ctx->chunks = g_ptr_array_new_with_free_func(g_free);
  ctx->gen = 1;
  ctx->symbols = g_ptr_array_new_with_free_func(sym_free);
  ctx->states = g_array_new(FALSE, FALSE, sizeof(DsExprSymState));
  ctx->names = g_hash_table_new(g_str_hash, g_str_equal);
  ctx->prefix_next = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  ctx->ranges = g_array_new(FALSE, FALSE, sizeof(DsExprRange));
  ctx->range_index = g_hash_table_new(NULL, NULL);
  ctx->opaque = g_array_new(FALSE, FALSE, sizeof(DsExprOpaque));
  ctx->log = g_ptr_array_new_with_free_func(ds_expr_log_free);
  ctx->small_consts = g_new0(const DsExpr *, SMALL_CONST_MAX - SMALL_CONST_MIN + 1);
  return ctx;
}

void ds_expr_ctx_free(DsExprCtx *ctx)
{
  if (ctx == NULL)
    return;
  g_free(ctx->slots);
  g_ptr_array_unref(ctx->chunks);
  g_ptr_array_unref(ctx->symbols);
  g_array_unref(ctx->states);
  g_hash_table_destroy(ctx->names);
  g_hash_table_destroy(ctx->prefix_next);
  g_free(ctx->visiting);
  g_array_unref(ctx->ranges);
  g_hash_table_destroy(ctx->range_index);
  g_array_unref(ctx->opaque);
  g_ptr_array_unref(ctx->log);
  g_free(ctx->small_consts);
  g_free(ctx);
}

static const DsExpr *symbol_new(DsExprCtx *ctx, const char *name, gboolean unbacked,
                                const DsExpr *upper)
{
  DsExprSym *sym = g_new0(DsExprSym, 1);
  sym->name = g_strdup(name);
  sym->id = (int)ctx->symbols->len;
  sym->unbacked = unbacked;
  sym->upper = upper;
  DsExpr *e = arena_alloc(ctx, sizeof(DsExpr));
  memset(e, 0, sizeof(DsExpr));
  e->kind = DS_EXPR_SYMBOL;
  e->serial = ctx->next_serial++;
  e->hash = hash_finish(hash_step(0x13198A2E03707344ull, e->serial));
  e->size = 1;
  e->degree = 1;
  e->symmask = 1ull << (sym->id & 63);
  e->ops = (const DsExpr **)(e + 1);
  e->sym = sym;
  e->resolved = e;
  e->resolved_gen = ctx->gen;
  sym->node = e;
  g_ptr_array_add(ctx->symbols, sym);
  DsExprSymState st = {unbacked ? 0 : 1, INF, NULL, !unbacked};
  g_array_append_val(ctx->states, st);
  g_hash_table_insert(ctx->names, sym->name, sym);
  if (ctx->symbols->len > ctx->visiting_len) {
    guint len = MAX(16, ctx->visiting_len * 2);
    ctx->visiting = g_renew(gboolean, ctx->visiting, len);
    memset(ctx->visiting + ctx->visiting_len, 0, (len - ctx->visiting_len) * sizeof(gboolean));
    ctx->visiting_len = len;
  }
  return e;
}

const DsExpr *ds_expr_symbol(DsExprCtx *ctx, const char *name)
{
  if (name == NULL || !ds_expr_is_valid_name(name))
    return NULL;
  DsExprSym *sym = g_hash_table_lookup(ctx->names, name);
  return sym != NULL ? sym->node : symbol_new(ctx, name, FALSE, NULL);
}

/* `<prefix><n>` for the lowest n whose name is free. Names are never released, so the lowest
 * free n only grows and a per-prefix counter finds it. */
static char *next_free_name(DsExprCtx *ctx, const char *prefix)
{
  guint n = GPOINTER_TO_UINT(g_hash_table_lookup(ctx->prefix_next, prefix));
  char *name;
  for (;; n++) {
    name = g_strdup_printf("%s%u", prefix, n);
    if (g_hash_table_lookup(ctx->names, name) == NULL)
      break;
    g_free(name);
  }
  g_hash_table_replace(ctx->prefix_next, g_strdup(prefix), GUINT_TO_POINTER(n + 1));
  return name;
}

const DsExpr *ds_expr_fresh_symbol(DsExprCtx *ctx, const char *prefix)
{
  if (prefix == NULL || !ds_expr_is_valid_name(prefix))
    return NULL;
  g_autofree char *name = next_free_name(ctx, prefix);
  return symbol_new(ctx, name, FALSE, NULL);
}

const DsExpr *ds_expr_unbacked(DsExprCtx *ctx, const DsExpr *upper)
{
  if (upper != NULL && (upper = ds_expr_resolve(ctx, upper)) == NULL)
    return NULL;
  g_autofree char *name = next_free_name(ctx, "u");
  const DsExpr *e = symbol_new(ctx, name, TRUE, upper);
  ds_expr_log_add(ctx, DS_EXPR_LOG_SYMBOL_RANGE, (guint)e->sym->id, NULL, NULL);
  return e;
}

DsExprSymState *ds_expr_state(DsExprCtx *ctx, const DsExprSym *sym)
{
  return &g_array_index(ctx->states, DsExprSymState, sym->id);
}

/* ---- order ---- */

/* Rank of each kind in the expression order: symbols first, constants last. */
static int kind_rank(DsExprKind kind)
{
  switch (kind) {
  case DS_EXPR_SYMBOL:
    return 0;
  case DS_EXPR_MUL:
    return 1;
  case DS_EXPR_ADD:
    return 2;
  case DS_EXPR_FLOORDIV:
    return 3;
  case DS_EXPR_MOD:
    return 4;
  case DS_EXPR_MAX:
    return 5;
  case DS_EXPR_MIN:
    return 6;
  case DS_EXPR_CONST:
    break;
  }
  return 7;
}

static int cmp_i64(int64_t a, int64_t b)
{
  return (a > b) - (a < b);
}

static const int64_t one_exponent = 1;

/* The factors of a monomial or MUL node, through `storage` for a lone atom. */
static guint factors_of(const DsExpr *const *storage, const DsExpr *const **atoms,
                        const int64_t **exps)
{
  const DsExpr *m = *storage;
  if (m->kind == DS_EXPR_MUL) {
    *atoms = m->ops;
    *exps = m->coefs;
    return m->n_ops;
  }
  *atoms = storage;
  *exps = &one_exponent;
  return 1;
}

static int expr_cmp(const DsExpr *a, const DsExpr *b);

/* Monomial order, coefficients aside: higher degree first, then factors in atom order, a
 * higher power of the same atom first. */
static int factors_cmp(const DsExpr *a, const DsExpr *b)
{
  if (a->degree != b->degree)
    return a->degree > b->degree ? -1 : 1;
  const DsExpr *const *fa, *const *fb;
  const int64_t *ea, *eb;
  guint na = factors_of(&a, &fa, &ea), nb = factors_of(&b, &fb, &eb);
  for (guint i = 0; i < na && i < nb; i++) {
    int c = expr_cmp(fa[i], fb[i]);
    if (c != 0)
      return c;
    if (ea[i] != eb[i])
      return ea[i] > eb[i] ? -1 : 1;
  }
  return cmp_i64(na, nb);
}

static int mono_cmp(const DsExpr *a, const DsExpr *b)
{
  return a == b ? 0 : factors_cmp(a, b);
}

/* A total order on nodes that depends on structure and symbol ids only, so printing is the
 * same whatever order expressions were built in. Zero only for the same node. */
static int expr_cmp(const DsExpr *a, const DsExpr *b)
{
  if (a == b)
    return 0;
  int c = kind_rank(a->kind) - kind_rank(b->kind);
  if (c != 0)
    return c;
  switch (a->kind) {
  case DS_EXPR_CONST:
    return cmp_i64(a->value, b->value);
  case DS_EXPR_SYMBOL:
    return cmp_i64(a->sym->id, b->sym->id);
  case DS_EXPR_MUL:
    c = factors_cmp(a, b);
    return c != 0 ? c : cmp_i64(a->value, b->value);
  default:
    break;
  }
  for (guint i = 0; i < a->n_ops && i < b->n_ops; i++) {
    if (a->kind == DS_EXPR_ADD) {
      c = mono_cmp(a->ops[i], b->ops[i]);
      if (c == 0)
        c = cmp_i64(a->coefs[i], b->coefs[i]);
    } else {
      c = expr_cmp(a->ops[i], b->ops[i]);
    }
    if (c != 0)
      return c;
  }
  c = cmp_i64(a->n_ops, b->n_ops);
  return c != 0 ? c : cmp_i64(a->value, b->value);
}

/* ---- polynomials ---- */

typedef struct {
  int64_t coef;
  const DsExpr *mono;
} Term;

#define POLY_INLINE 8

/* A sum `c + Σ t[i].coef * t[i].mono` under construction, terms in monomial order with
 * nonzero coefficients. Small ones live on the stack. Never copy one by value. */
typedef struct {
  int64_t c;
  guint n, cap;
  Term *t;
  Term buf[POLY_INLINE];
} Poly;

static void poly_init(Poly *p)
{
  p->c = 0;
  p->n = 0;
  p->cap = POLY_INLINE;
  p->t = p->buf;
}

static void poly_free(Poly *p)
{
  if (p->t != p->buf)
    g_free(p->t);
  poly_init(p);
}

static void poly_reserve(Poly *p, guint n)
{
  if (n <= p->cap)
    return;
  guint cap = MAX(n, p->cap * 2);
  Term *t = g_new(Term, cap);
  memcpy(t, p->t, p->n * sizeof(Term));
  if (p->t != p->buf)
    g_free(p->t);
  p->t = t;
  p->cap = cap;
}

static void poly_push(Poly *p, int64_t coef, const DsExpr *mono)
{
  poly_reserve(p, p->n + 1);
  p->t[p->n++] = (Term){coef, mono};
}

/* Moves `src` into `dst`, leaving `src` empty. */
static void poly_take(Poly *dst, Poly *src)
{
  poly_free(dst);
  dst->c = src->c;
  dst->n = src->n;
  if (src->t == src->buf) {
    memcpy(dst->buf, src->buf, src->n * sizeof(Term));
  } else {
    dst->t = src->t;
    dst->cap = src->cap;
  }
  poly_init(src);
}

static void poly_of(const DsExpr *e, Poly *p)
{
  poly_init(p);
  switch (e->kind) {
  case DS_EXPR_CONST:
    p->c = e->value;
    break;
  case DS_EXPR_ADD:
    poly_reserve(p, e->n_ops);
    for (guint i = 0; i < e->n_ops; i++)
      p->t[i] = (Term){e->coefs[i], e->ops[i]};
    p->n = e->n_ops;
    p->c = e->value;
    break;
  case DS_EXPR_MUL:
    poly_push(p, e->value, e->value == 1 ? e : e->mono);
    break;
  default:
    poly_push(p, 1, e);
    break;
  }
}

static gboolean too_many_terms(DsExprCtx *ctx, const Poly *p)
{
  if (p->n <= DS_EXPR_MAX_TERMS)
    return FALSE;
  ctx->fail = DS_EXPR_FAIL_TOO_LARGE;
  return TRUE;
}

/* dst += k * src. FALSE (ctx->fail set) on overflow or too many terms. */
static gboolean poly_add_scaled(DsExprCtx *ctx, Poly *dst, const Poly *src, int64_t k)
{
  Poly out;
  poly_init(&out);
  poly_reserve(&out, dst->n + src->n);
  guint i = 0, j = 0;
  while (i < dst->n || j < src->n) {
    int c = i == dst->n ? 1 : j == src->n ? -1 : mono_cmp(dst->t[i].mono, src->t[j].mono);
    int64_t coef;
    const DsExpr *mono;
    if (c < 0) {
      coef = dst->t[i].coef;
      mono = dst->t[i++].mono;
    } else {
      int64_t s;
      if (__builtin_mul_overflow(src->t[j].coef, k, &s))
        goto overflow;
      if (c == 0 && __builtin_add_overflow(dst->t[i++].coef, s, &s))
        goto overflow;
      coef = s;
      mono = src->t[j++].mono;
    }
    if (coef != 0)
      out.t[out.n++] = (Term){coef, mono};
  }
  int64_t s;
  if (__builtin_mul_overflow(src->c, k, &s) || __builtin_add_overflow(dst->c, s, &out.c))
    goto overflow;
  if (too_many_terms(ctx, &out)) {
    poly_free(&out);
    return FALSE;
  }
  poly_take(dst, &out);
  return TRUE;
overflow:
  ctx->fail = DS_EXPR_FAIL_OVERFLOW;
  poly_free(&out);
  return FALSE;
}

static gboolean poly_scale(DsExprCtx *ctx, Poly *p, int64_t k)
{
  if (k == 0) {
    poly_free(p);
    return TRUE;
  }
  for (guint i = 0; i < p->n; i++)
    if (__builtin_mul_overflow(p->t[i].coef, k, &p->t[i].coef))
      goto overflow;
  if (!__builtin_mul_overflow(p->c, k, &p->c))
    return TRUE;
overflow:
  ctx->fail = DS_EXPR_FAIL_OVERFLOW;
  return FALSE;
}

static int term_cmp_qsort(const void *pa, const void *pb)
{
  return mono_cmp(((const Term *)pa)->mono, ((const Term *)pb)->mono);
}

/* Sorts terms and adds up those with the same monomial, dropping zeros. */
static gboolean poly_normalise(DsExprCtx *ctx, Poly *p)
{
  if (p->n > 1)
    qsort(p->t, p->n, sizeof(Term), term_cmp_qsort);
  guint w = 0;
  for (guint r = 0; r < p->n; r++) {
    if (w > 0 && p->t[w - 1].mono == p->t[r].mono) {
      if (__builtin_add_overflow(p->t[w - 1].coef, p->t[r].coef, &p->t[w - 1].coef)) {
        ctx->fail = DS_EXPR_FAIL_OVERFLOW;
        return FALSE;
      }
    } else {
      p->t[w++] = p->t[r];
    }
  }
  guint n = 0;
  for (guint r = 0; r < w; r++)
    if (p->t[r].coef != 0)
      p->t[n++] = p->t[r];
  p->n = n;
  return !too_many_terms(ctx, p);
}

/* The product of two monomials, interned. */
static const DsExpr *mono_mul(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b)
{
  if ((int64_t)a->degree + b->degree > DS_EXPR_MAX_DEGREE) {
    ctx->fail = DS_EXPR_FAIL_TOO_LARGE;
    return NULL;
  }
  const DsExpr *const *fa, *const *fb;
  const int64_t *ea, *eb;
  guint na = factors_of(&a, &fa, &ea), nb = factors_of(&b, &fb, &eb);
  const DsExpr *atoms[2 * DS_EXPR_MAX_DEGREE];
  int64_t exps[2 * DS_EXPR_MAX_DEGREE];
  guint n = 0, i = 0, j = 0;
  while (i < na || j < nb) {
    int c = i == na ? 1 : j == nb ? -1 : expr_cmp(fa[i], fb[j]);
    if (c < 0) {
      atoms[n] = fa[i];
      exps[n++] = ea[i++];
    } else if (c > 0) {
      atoms[n] = fb[j];
      exps[n++] = eb[j++];
    } else {
      atoms[n] = fa[i];
      exps[n++] = ea[i++] + eb[j++];
    }
  }
  return intern(ctx, DS_EXPR_MUL, 1, n, atoms, exps, NULL);
}

/* The monomial m / d when d divides m: *quotient is NULL for 1. */
static gboolean mono_div(DsExprCtx *ctx, const DsExpr *m, const DsExpr *d, const DsExpr **quotient)
{
  const DsExpr *const *fm, *const *fd;
  const int64_t *em, *ed;
  guint nm = factors_of(&m, &fm, &em), nd = factors_of(&d, &fd, &ed);
  const DsExpr *atoms[DS_EXPR_MAX_DEGREE];
  int64_t exps[DS_EXPR_MAX_DEGREE];
  guint n = 0, j = 0;
  for (guint i = 0; i < nm; i++) {
    int64_t e = em[i];
    if (j < nd && fd[j] == fm[i]) {
      e -= ed[j++];
      if (e < 0)
        return FALSE;
    }
    if (e > 0) {
      atoms[n] = fm[i];
      exps[n++] = e;
    }
  }
  if (j < nd)
    return FALSE;
  if (n == 0)
    *quotient = NULL;
  else if (n == 1 && exps[0] == 1)
    *quotient = atoms[0];
  else if ((*quotient = intern(ctx, DS_EXPR_MUL, 1, n, atoms, exps, NULL)) == NULL)
    return FALSE;
  return TRUE;
}

/* out = a * b. */
static gboolean poly_mul(DsExprCtx *ctx, const Poly *a, const Poly *b, Poly *out)
{
  poly_init(out);
  if ((guint64)a->n * b->n > DS_EXPR_MAX_PRODUCT) {
    ctx->fail = DS_EXPR_FAIL_TOO_LARGE;
    return FALSE;
  }
  poly_reserve(out, a->n * b->n + a->n + b->n);
  int64_t coef;
  for (guint i = 0; i < a->n; i++) {
    for (guint j = 0; j < b->n; j++) {
      const DsExpr *mono = mono_mul(ctx, a->t[i].mono, b->t[j].mono);
      if (mono == NULL)
        return FALSE;
      if (__builtin_mul_overflow(a->t[i].coef, b->t[j].coef, &coef))
        goto overflow;
      out->t[out->n++] = (Term){coef, mono};
    }
  }
  for (guint i = 0; i < a->n && b->c != 0; i++) {
    if (__builtin_mul_overflow(a->t[i].coef, b->c, &coef))
      goto overflow;
    out->t[out->n++] = (Term){coef, a->t[i].mono};
  }
  for (guint j = 0; j < b->n && a->c != 0; j++) {
    if (__builtin_mul_overflow(b->t[j].coef, a->c, &coef))
      goto overflow;
    out->t[out->n++] = (Term){coef, b->t[j].mono};
  }
  if (__builtin_mul_overflow(a->c, b->c, &out->c))
    goto overflow;
  return poly_normalise(ctx, out);
overflow:
  ctx->fail = DS_EXPR_FAIL_OVERFLOW;
  return FALSE;
}

/* The canonical node for a polynomial: a constant, a lone monomial, a MUL for one term with a
 * coefficient, or an ADD. */
static const DsExpr *poly_intern(DsExprCtx *ctx, const Poly *p)
{
  if (p->n == 0)
    return ds_expr_const(ctx, p->c);
  if (p->n == 1 && p->c == 0) {
    const DsExpr *mono = p->t[0].mono;
    if (p->t[0].coef == 1)
      return mono;
    const DsExpr *const *atoms;
    const int64_t *exps;
    guint n = factors_of(&mono, &atoms, &exps);
    return intern(ctx, DS_EXPR_MUL, p->t[0].coef, n, atoms, exps, mono);
  }
  const DsExpr *stack_ops[16];
  int64_t stack_coefs[16];
  const DsExpr **ops = p->n <= 16 ? stack_ops : g_new(const DsExpr *, p->n);
  int64_t *coefs = p->n <= 16 ? stack_coefs : g_new(int64_t, p->n);
  for (guint i = 0; i < p->n; i++) {
    ops[i] = p->t[i].mono;
    coefs[i] = p->t[i].coef;
  }
  const DsExpr *e = intern(ctx, DS_EXPR_ADD, p->c, p->n, ops, coefs, NULL);
  if (ops != stack_ops) {
    g_free(ops);
    g_free(coefs);
  }
  return e;
}

/* ---- bounds ---- */

void ds_expr_symbol_range(DsExprCtx *ctx, const DsExprSym *sym, int64_t *lo, int64_t *hi)
{
  const DsExprSymState *st = ds_expr_state(ctx, sym);
  int64_t l = st->lo, h = st->hi, bl, bh;
  const DsExpr *binding = st->binding;
  /* An unbacked bound may come back to the symbol through merges: cut the cycle there. */
  if (sym->upper != NULL && !ctx->visiting[sym->id]) {
    ctx->visiting[sym->id] = TRUE;
    const DsExpr *upper = ds_expr_resolve(ctx, sym->upper);
    if (upper != NULL) {
      ds_expr_bounds_raw(ctx, upper, &bl, &bh);
      h = MIN(h, bh);
    }
    ctx->visiting[sym->id] = FALSE;
  }
  if (binding != NULL) {
    const DsExpr *r = ds_expr_resolve(ctx, sym->node);
    if (r != NULL) {
      ds_expr_bounds_raw(ctx, r, &bl, &bh);
      l = MAX(l, bl);
      h = MIN(h, bh);
    }
  }
  *lo = l;
  *hi = h;
}

static void term_bounds(DsExprCtx *ctx, int64_t coef, const DsExpr *mono, int64_t *lo, int64_t *hi)
{
  ds_expr_bounds_raw(ctx, mono, lo, hi);
  interval_scale(coef, lo, hi);
}

static void poly_bounds(DsExprCtx *ctx, const Poly *p, int64_t *lo, int64_t *hi)
{
  int64_t l = p->c, h = p->c, tl, th;
  for (guint i = 0; i < p->n; i++) {
    term_bounds(ctx, p->t[i].coef, p->t[i].mono, &tl, &th);
    l = ds_expr_sat_add(l, tl, TRUE);
    h = ds_expr_sat_add(h, th, FALSE);
  }
  *lo = l;
  *hi = h;
}

void ds_expr_bounds_raw(DsExprCtx *ctx, const DsExpr *e, int64_t *lo, int64_t *hi)
{
  if (e->kind == DS_EXPR_CONST) {
    *lo = *hi = e->value;
    return;
  }
  DsExpr *m = (DsExpr *)e;
  if (m->bounds_gen == ctx->gen) {
    *lo = m->lo;
    *hi = m->hi;
    return;
  }
  int64_t l = NEG_INF, h = INF, al, ah, bl, bh;
  switch (e->kind) {
  case DS_EXPR_SYMBOL:
    ds_expr_symbol_range(ctx, e->sym, &l, &h);
    break;
  case DS_EXPR_ADD:
    l = h = e->value;
    for (guint i = 0; i < e->n_ops; i++) {
      term_bounds(ctx, e->coefs[i], e->ops[i], &al, &ah);
      l = ds_expr_sat_add(l, al, TRUE);
      h = ds_expr_sat_add(h, ah, FALSE);
    }
    break;
  case DS_EXPR_MUL:
    l = h = e->value;
    for (guint i = 0; i < e->n_ops; i++) {
      ds_expr_bounds_raw(ctx, e->ops[i], &al, &ah);
      for (int64_t k = 0; k < e->coefs[i]; k++)
        interval_mul(l, h, al, ah, &l, &h);
    }
    break;
  case DS_EXPR_FLOORDIV:
  case DS_EXPR_MOD:
    ds_expr_bounds_raw(ctx, e->ops[0], &al, &ah);
    ds_expr_bounds_raw(ctx, e->ops[1], &bl, &bh);
    if (e->kind == DS_EXPR_FLOORDIV)
      interval_floordiv(al, ah, bl, bh, &l, &h);
    else
      interval_mod(al, ah, bl, bh, &l, &h);
    break;
  case DS_EXPR_MAX:
  case DS_EXPR_MIN:
    for (guint i = 0; i < e->n_ops; i++) {
      ds_expr_bounds_raw(ctx, e->ops[i], &al, &ah);
      if (i == 0) {
        l = al;
        h = ah;
      } else if (e->kind == DS_EXPR_MAX) {
        l = MAX(l, al);
        h = MAX(h, ah);
      } else {
        l = MIN(l, al);
        h = MIN(h, ah);
      }
    }
    break;
  case DS_EXPR_CONST:
    break;
  }
  if (ctx->ranges->len > 0 && e->kind != DS_EXPR_SYMBOL) {
    guint idx = GPOINTER_TO_UINT(g_hash_table_lookup(ctx->range_index, e));
    if (idx > 0) {
      const DsExprRange *r = &g_array_index(ctx->ranges, DsExprRange, idx - 1);
      l = MAX(l, r->lo);
      h = MIN(h, r->hi);
    }
  }
  m->lo = l;
  m->hi = h;
  m->bounds_gen = ctx->gen;
  *lo = l;
  *hi = h;
}

void ds_expr_bounds(DsExprCtx *ctx, const DsExpr *e, int64_t *lo, int64_t *hi)
{
  const DsExpr *r = ds_expr_resolve(ctx, e);
  if (r == NULL) {
    *lo = NEG_INF;
    *hi = INF;
    return;
  }
  ds_expr_bounds_raw(ctx, r, lo, hi);
}

/* ---- sums and products ---- */

static const DsExpr *add_scaled(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b, int64_t k)
{
  a = ds_expr_resolve(ctx, a);
  b = ds_expr_resolve(ctx, b);
  if (a == NULL || b == NULL)
    return NULL;
  if (a->kind == DS_EXPR_CONST && b->kind == DS_EXPR_CONST) {
    int64_t s;
    if (__builtin_mul_overflow(b->value, k, &s) || __builtin_add_overflow(a->value, s, &s)) {
      ctx->fail = DS_EXPR_FAIL_OVERFLOW;
      return NULL;
    }
    return ds_expr_const(ctx, s);
  }
  Poly pa, pb;
  poly_of(a, &pa);
  poly_of(b, &pb);
  const DsExpr *r = poly_add_scaled(ctx, &pa, &pb, k) ? poly_intern(ctx, &pa) : NULL;
  poly_free(&pa);
  poly_free(&pb);
  return r;
}

const DsExpr *ds_expr_add(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b)
{
  return add_scaled(ctx, a, b, 1);
}

const DsExpr *ds_expr_sub(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b)
{
  return add_scaled(ctx, a, b, -1);
}

const DsExpr *ds_expr_mul(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b)
{
  a = ds_expr_resolve(ctx, a);
  b = ds_expr_resolve(ctx, b);
  if (a == NULL || b == NULL)
    return NULL;
  if (a->kind == DS_EXPR_CONST) {
    const DsExpr *t = a;
    a = b;
    b = t;
  }
  Poly pa, pb, out;
  const DsExpr *r = NULL;
  poly_of(a, &pa);
  if (b->kind == DS_EXPR_CONST) {
    if (poly_scale(ctx, &pa, b->value))
      r = poly_intern(ctx, &pa);
  } else {
    poly_of(b, &pb);
    if (poly_mul(ctx, &pa, &pb, &out))
      r = poly_intern(ctx, &out);
    poly_free(&out);
    poly_free(&pb);
  }
  poly_free(&pa);
  return r;
}

/* ---- floor division and modulo ---- */

/* a // k and a % k for a constant k >= 2. Terms whose coefficients k divides, and the
 * constant when k divides it, leave the division (floordiv) or vanish (mod); what stays is
 * folded when it is constant or its range decides the quotient. */
static const DsExpr *divmod_const(DsExprCtx *ctx, const DsExpr *a, int64_t k, gboolean is_mod)
{
  Poly p, q, r;
  poly_of(a, &p);
  poly_init(&q);
  poly_init(&r);
  const DsExpr *result = NULL;
  for (guint i = 0; i < p.n; i++) {
    if (p.t[i].coef % k == 0)
      poly_push(&q, p.t[i].coef / k, p.t[i].mono);
    else
      poly_push(&r, p.t[i].coef, p.t[i].mono);
  }
  int64_t cq = 0, cm = 0, rl, rh;
  ds_expr_py_floordiv(p.c, k, &cq);
  ds_expr_py_mod(p.c, k, &cm);
  if (r.n == 0) {
    if (is_mod)
      result = ds_expr_const(ctx, cm);
    else {
      q.c = cq;
      result = poly_intern(ctx, &q);
    }
    goto done;
  }
  if (cm == 0)
    q.c = cq;
  else
    r.c = p.c;
  poly_bounds(ctx, &r, &rl, &rh);
  if (!is_inf(rl) && !is_inf(rh) && bound_floordiv(rl, k, FALSE) == bound_floordiv(rh, k, TRUE)) {
    int64_t m = bound_floordiv(rl, k, FALSE), shift;
    if (is_mod) {
      if (__builtin_mul_overflow(m, k, &shift) || __builtin_sub_overflow(r.c, shift, &r.c))
        ctx->fail = DS_EXPR_FAIL_OVERFLOW;
      else
        result = poly_intern(ctx, &r);
    } else if (__builtin_add_overflow(q.c, m, &q.c)) {
      ctx->fail = DS_EXPR_FAIL_OVERFLOW;
    } else {
      result = poly_intern(ctx, &q);
    }
    goto done;
  }
  const DsExpr *rest = poly_intern(ctx, &r);
  if (rest == NULL)
    goto done;
  const DsExpr *atom;
  int64_t inner = 0, mk;
  gboolean nested = rest->kind == (is_mod ? DS_EXPR_MOD : DS_EXPR_FLOORDIV) &&
                    ds_expr_get_const(rest->ops[1], &inner);
  if (nested && !is_mod && !__builtin_mul_overflow(inner, k, &mk)) {
    /* floor(floor(x / m) / k) == floor(x / (m*k)) for positive m and k. */
    atom = divmod_const(ctx, rest->ops[0], mk, FALSE);
  } else if (nested && is_mod && inner % k == 0) {
    /* (x % m) % k == x % k when k divides m. */
    result = divmod_const(ctx, rest->ops[0], k, TRUE);
    goto done;
  } else {
    const DsExpr *ops[2] = {rest, ds_expr_const(ctx, k)};
    atom = intern(ctx, is_mod ? DS_EXPR_MOD : DS_EXPR_FLOORDIV, 0, 2, ops, NULL, NULL);
  }
  if (atom == NULL || is_mod) {
    result = atom;
    goto done;
  }
  Poly pa;
  poly_of(atom, &pa);
  if (poly_add_scaled(ctx, &q, &pa, 1))
    result = poly_intern(ctx, &q);
  poly_free(&pa);
done:
  poly_free(&p);
  poly_free(&q);
  poly_free(&r);
  return result;
}

/* coef / d when d divides it exactly. */
static gboolean coef_div(int64_t coef, int64_t d, int64_t *out)
{
  if (d == -1)
    return !__builtin_mul_overflow(coef, -1, out);
  if (coef % d != 0)
    return FALSE;
  *out = coef / d;
  return TRUE;
}

/* TRUE and *k if a == k * b term by term (b not constant). */
static gboolean poly_multiple(const Poly *a, const Poly *b, int64_t *k)
{
  if (a->n != b->n || b->n == 0 || !coef_div(a->t[0].coef, b->t[0].coef, k))
    return FALSE;
  int64_t v;
  for (guint i = 0; i < a->n; i++)
    if (a->t[i].mono != b->t[i].mono || __builtin_mul_overflow(b->t[i].coef, *k, &v) ||
        v != a->t[i].coef)
      return FALSE;
  return !__builtin_mul_overflow(b->c, *k, &v) && v == a->c;
}

/* a // b and a % b for a divisor b that is not constant and is at least 1. When b is one
 * term, the terms of a it divides exactly leave the division; a multiple of b divides
 * exactly; the range of what stays may decide it. */
static const DsExpr *divmod_sym(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b, gboolean is_mod)
{
  if (a == b)
    return ds_expr_const(ctx, is_mod ? 0 : 1);
  Poly pa, pb, q, r;
  poly_of(a, &pa);
  poly_of(b, &pb);
  poly_init(&q);
  poly_init(&r);
  const DsExpr *result = NULL;
  int64_t k;
  if (pb.n == 1 && pb.c == 0) {
    for (guint i = 0; i < pa.n; i++) {
      const DsExpr *qm;
      if (coef_div(pa.t[i].coef, pb.t[0].coef, &k) &&
          mono_div(ctx, pa.t[i].mono, pb.t[0].mono, &qm)) {
        if (qm != NULL)
          poly_push(&q, k, qm);
        else if (__builtin_add_overflow(q.c, k, &q.c))
          goto overflow;
      } else {
        poly_push(&r, pa.t[i].coef, pa.t[i].mono);
      }
    }
    r.c = pa.c;
    if (!poly_normalise(ctx, &q))
      goto done;
  } else if (poly_multiple(&pa, &pb, &k)) {
    q.c = k;
  } else {
    for (guint i = 0; i < pa.n; i++)
      poly_push(&r, pa.t[i].coef, pa.t[i].mono);
    r.c = pa.c;
  }
  if (r.n == 0 && r.c == 0) {
    result = is_mod ? ds_expr_const(ctx, 0) : poly_intern(ctx, &q);
    goto done;
  }
  int64_t rl, rh, bl, bh, ql, qh;
  poly_bounds(ctx, &r, &rl, &rh);
  ds_expr_bounds_raw(ctx, b, &bl, &bh);
  if (is_mod && rl >= 0 && rh < bl) {
    result = poly_intern(ctx, &r);
    goto done;
  }
  interval_floordiv(rl, rh, bl, bh, &ql, &qh);
  if (!is_mod && ql == qh && !is_inf(ql)) {
    if (__builtin_add_overflow(q.c, ql, &q.c))
      goto overflow;
    result = poly_intern(ctx, &q);
    goto done;
  }
  const DsExpr *ops[2] = {poly_intern(ctx, &r), b};
  if (ops[0] == NULL)
    goto done;
  const DsExpr *atom = intern(ctx, is_mod ? DS_EXPR_MOD : DS_EXPR_FLOORDIV, 0, 2, ops, NULL, NULL);
  if (atom == NULL || is_mod) {
    result = atom;
    goto done;
  }
  Poly pt;
  poly_of(atom, &pt);
  if (poly_add_scaled(ctx, &q, &pt, 1))
    result = poly_intern(ctx, &q);
  poly_free(&pt);
  goto done;
overflow:
  ctx->fail = DS_EXPR_FAIL_OVERFLOW;
done:
  poly_free(&pa);
  poly_free(&pb);
  poly_free(&q);
  poly_free(&r);
  return result;
}

static const DsExpr *divmod(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b, gboolean is_mod)
{
  a = ds_expr_resolve(ctx, a);
  b = ds_expr_resolve(ctx, b);
  if (a == NULL || b == NULL)
    return NULL;
  int64_t k, v;
  if (ds_expr_get_const(b, &k)) {
    if (k <= 0) {
      ctx->fail = DS_EXPR_FAIL_DIVISOR;
      return NULL;
    }
    if (k == 1)
      return is_mod ? ds_expr_const(ctx, 0) : a;
    if (ds_expr_get_const(a, &v)) {
      if (is_mod)
        ds_expr_py_mod(v, k, &v);
      else
        ds_expr_py_floordiv(v, k, &v);
      return ds_expr_const(ctx, v);
    }
    return divmod_const(ctx, a, k, is_mod);
  }
  int64_t bl, bh;
  ds_expr_bounds_raw(ctx, b, &bl, &bh);
  if (bl < 1) {
    ctx->fail = DS_EXPR_FAIL_DIVISOR;
    return NULL;
  }
  return divmod_sym(ctx, a, b, is_mod);
}

const DsExpr *ds_expr_floordiv(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b)
{
  return divmod(ctx, a, b, FALSE);
}

const DsExpr *ds_expr_mod(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b)
{
  return divmod(ctx, a, b, TRUE);
}

/* ---- max and min ---- */

gboolean ds_expr_unbacked_below(DsExprCtx *ctx, const DsExpr *x, const DsExpr *y, gboolean strict)
{
  if (x->kind != DS_EXPR_SYMBOL || x->sym->upper == NULL)
    return FALSE;
  const DsExpr *upper = ds_expr_resolve(ctx, x->sym->upper);
  if (upper == NULL || upper == x)
    return FALSE;
  if (upper == y)
    return !strict;
  const DsExpr *d = ds_expr_sub(ctx, y, upper);
  int64_t lo, hi;
  if (d == NULL)
    return FALSE;
  ds_expr_bounds_raw(ctx, d, &lo, &hi);
  return strict ? lo >= 1 : lo >= 0;
}

/* TRUE if the facts prove x <= y (for max: x is never the answer) or, for min, x >= y. */
static gboolean dominated(DsExprCtx *ctx, DsExprKind kind, const DsExpr *x, const DsExpr *y)
{
  int64_t xl, xh, yl, yh, dl, dh;
  if (kind == DS_EXPR_MAX ? ds_expr_unbacked_below(ctx, x, y, FALSE)
                          : ds_expr_unbacked_below(ctx, y, x, FALSE))
    return TRUE;
  ds_expr_bounds_raw(ctx, x, &xl, &xh);
  ds_expr_bounds_raw(ctx, y, &yl, &yh);
  if (kind == DS_EXPR_MAX ? xh <= yl : xl >= yh)
    return TRUE;
  Poly px, py;
  poly_of(x, &px);
  poly_of(y, &py);
  gboolean ok = poly_add_scaled(ctx, &py, &px, -1);
  if (ok) {
    poly_bounds(ctx, &py, &dl, &dh);
    ok = kind == DS_EXPR_MAX ? dl >= 0 : dh <= 0;
  }
  poly_free(&px);
  poly_free(&py);
  return ok;
}

/* An operand of a max or min being built, with the operands it came from: bit 0 for the first
 * argument's, bit 1 for the second's. */
typedef struct {
  const DsExpr *e;
  guint group;
  gboolean alive;
} MinMaxOp;

static int minmax_op_cmp(const void *pa, const void *pb)
{
  return expr_cmp(((const MinMaxOp *)pa)->e, ((const MinMaxOp *)pb)->e);
}

static const DsExpr *minmax(DsExprCtx *ctx, DsExprKind kind, const DsExpr *a, const DsExpr *b)
{
  a = ds_expr_resolve(ctx, a);
  b = ds_expr_resolve(ctx, b);
  if (a == NULL || b == NULL)
    return NULL;
  if (a == b)
    return a;
  if (a->kind == DS_EXPR_CONST && b->kind == DS_EXPR_CONST)
    return (kind == DS_EXPR_MAX) == (a->value > b->value) ? a : b;
  guint na = a->kind == kind ? a->n_ops : 1, nb = b->kind == kind ? b->n_ops : 1;
  guint n = na + nb, w = 0;
  MinMaxOp stack[16];
  MinMaxOp *ops = n <= 16 ? stack : g_new(MinMaxOp, n);
  for (guint i = 0; i < na; i++)
    ops[i] = (MinMaxOp){a->kind == kind ? a->ops[i] : a, 1, TRUE};
  for (guint i = 0; i < nb; i++)
    ops[na + i] = (MinMaxOp){b->kind == kind ? b->ops[i] : b, 2, TRUE};
  qsort(ops, n, sizeof(MinMaxOp), minmax_op_cmp);
  /* Constants sort last and ascending: keep only the one that can win. */
  for (guint i = 0; i < n; i++) {
    if (w > 0 && ops[w - 1].e == ops[i].e) {
      ops[w - 1].group |= ops[i].group;
      continue;
    }
    if (w > 0 && ops[i].e->kind == DS_EXPR_CONST && ops[w - 1].e->kind == DS_EXPR_CONST) {
      if (kind == DS_EXPR_MAX)
        ops[w - 1] = ops[i];
      continue;
    }
    ops[w++] = ops[i];
  }
  n = w;
  /* An operand the facts prove never wins goes; each is checked against the survivors, so
   * equal operands keep the first and a second pass changes nothing. Operands of one
   * argument were checked against each other when it was built under the same facts (it is
   * resolved), so only pairs across the arguments are: folding n operands one at a time costs
   * O(n^2) checks, not O(n^3). */
  for (guint i = 0; i < n; i++)
    for (guint j = 0; j < n && ops[i].alive; j++)
      if ((ops[i].group & ops[j].group) == 0 && (j > i || ops[j].alive) &&
          dominated(ctx, kind, ops[i].e, ops[j].e))
        ops[i].alive = FALSE;
  const DsExpr *stack_out[16];
  const DsExpr **out = n <= 16 ? stack_out : g_new(const DsExpr *, n);
  w = 0;
  for (guint i = 0; i < n; i++)
    if (ops[i].alive)
      out[w++] = ops[i].e;
  const DsExpr *r = NULL;
  if (w == 1)
    r = out[0];
  else if (w > DS_EXPR_MAX_MINMAX)
    ctx->fail = DS_EXPR_FAIL_TOO_LARGE;
  else
    r = intern(ctx, kind, 0, w, out, NULL, NULL);
  if (ops != stack)
    g_free(ops);
  if (out != stack_out)
    g_free(out);
  return r;
}

const DsExpr *ds_expr_max(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b)
{
  return minmax(ctx, DS_EXPR_MAX, a, b);
}

const DsExpr *ds_expr_min(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b)
{
  return minmax(ctx, DS_EXPR_MIN, a, b);
}

/* ---- resolving ---- */

static const DsExpr *resolve_node(DsExprCtx *ctx, const DsExpr *e)
{
  const DsExpr *r;
  gboolean same = TRUE;
  switch (e->kind) {
  case DS_EXPR_SYMBOL: {
    const DsExpr *binding = ds_expr_state(ctx, e->sym)->binding;
    return binding != NULL ? ds_expr_resolve(ctx, binding) : e;
  }
  case DS_EXPR_ADD:
  case DS_EXPR_MUL:
    /* Sums and products do not depend on ranges: unchanged monomials, unchanged node. */
    for (guint i = 0; i < e->n_ops; i++) {
      r = ds_expr_resolve(ctx, e->ops[i]);
      if (r == NULL)
        return NULL;
      same = same && r == e->ops[i];
    }
    if (same)
      return e;
    r = ds_expr_const(ctx, e->value);
    if (e->kind == DS_EXPR_ADD) {
      for (guint i = 0; i < e->n_ops && r != NULL; i++)
        r = ds_expr_add(ctx, r, ds_expr_mul(ctx, ds_expr_const(ctx, e->coefs[i]), e->ops[i]));
    } else {
      for (guint i = 0; i < e->n_ops && r != NULL; i++)
        for (int64_t k = 0; k < e->coefs[i] && r != NULL; k++)
          r = ds_expr_mul(ctx, r, e->ops[i]);
    }
    return r;
  case DS_EXPR_FLOORDIV:
    return ds_expr_floordiv(ctx, e->ops[0], e->ops[1]);
  case DS_EXPR_MOD:
    return ds_expr_mod(ctx, e->ops[0], e->ops[1]);
  case DS_EXPR_MAX:
  case DS_EXPR_MIN:
    r = e->ops[0];
    for (guint i = 1; i < e->n_ops && r != NULL; i++)
      r = minmax(ctx, e->kind, r, e->ops[i]);
    return r;
  case DS_EXPR_CONST:
    break;
  }
  return e;
}

const DsExpr *ds_expr_resolve(DsExprCtx *ctx, const DsExpr *e)
{
  if (e == NULL || e->kind == DS_EXPR_CONST)
    return e;
  DsExpr *m = (DsExpr *)e;
  if (m->resolved_gen == ctx->gen)
    return m->resolved;
  const DsExpr *r = resolve_node(ctx, e);
  m->resolved = r;
  m->resolved_gen = ctx->gen;
  return r;
}

/* ---- inspecting ---- */

DsExprKind ds_expr_get_kind(const DsExpr *e)
{
  return e->kind;
}

gboolean ds_expr_get_const(const DsExpr *e, int64_t *value)
{
  if (e == NULL || e->kind != DS_EXPR_CONST)
    return FALSE;
  if (value != NULL)
    *value = e->value;
  return TRUE;
}

const char *ds_expr_get_symbol_name(const DsExpr *e)
{
  return e != NULL && e->kind == DS_EXPR_SYMBOL ? e->sym->name : NULL;
}

int ds_expr_get_symbol_id(const DsExpr *e)
{
  return e != NULL && e->kind == DS_EXPR_SYMBOL ? e->sym->id : -1;
}

gboolean ds_expr_is_unbacked(const DsExpr *e)
{
  return e != NULL && e->kind == DS_EXPR_SYMBOL && e->sym->unbacked;
}

guint ds_expr_ctx_get_n_symbols(const DsExprCtx *ctx)
{
  return ctx->symbols->len;
}

const DsExpr *ds_expr_ctx_get_symbol(const DsExprCtx *ctx, guint id)
{
  if (id >= ctx->symbols->len)
    return NULL;
  return ((const DsExprSym *)g_ptr_array_index(ctx->symbols, id))->node;
}

gboolean ds_expr_get_linear(const DsExpr *e, const DsExpr **t, int64_t *a, int64_t *b)
{
  if (e->kind == DS_EXPR_SYMBOL) {
    *t = e;
    *a = 1;
    *b = 0;
    return TRUE;
  }
  if (e->kind == DS_EXPR_MUL && e->n_ops == 1 && e->coefs[0] == 1 &&
      e->ops[0]->kind == DS_EXPR_SYMBOL) {
    *t = e->ops[0];
    *a = e->value;
    *b = 0;
    return TRUE;
  }
  if (e->kind == DS_EXPR_ADD && e->n_ops == 1 && e->ops[0]->kind == DS_EXPR_SYMBOL) {
    *t = e->ops[0];
    *a = e->coefs[0];
    *b = e->value;
    return TRUE;
  }
  return FALSE;
}

gboolean ds_expr_contains(const DsExpr *e, const DsExpr *t)
{
  if ((e->symmask & t->symmask) == 0)
    return FALSE;
  if (e == t)
    return TRUE;
  for (guint i = 0; i < e->n_ops; i++)
    if (ds_expr_contains(e->ops[i], t))
      return TRUE;
  return FALSE;
}

gboolean ds_expr_solve(DsExprCtx *ctx, const DsExpr *d, const DsExpr **sym, const DsExpr **value)
{
  Poly p;
  poly_of(d, &p);
  int best = -1;
  for (guint i = 0; i < p.n; i++) {
    const DsExpr *t = p.t[i].mono;
    int64_t k = p.t[i].coef, q;
    if (t->kind != DS_EXPR_SYMBOL || (best >= 0 && p.t[best].mono->sym->id > t->sym->id))
      continue;
    gboolean ok = coef_div(p.c, k, &q);
    for (guint j = 0; j < p.n && ok; j++)
      ok = j == i || (!ds_expr_contains(p.t[j].mono, t) && coef_div(p.t[j].coef, k, &q));
    if (ok)
      best = (int)i;
  }
  gboolean found = FALSE;
  if (best >= 0) {
    /* s = -rest / k */
    Poly v;
    poly_init(&v);
    int64_t k = p.t[best].coef, q;
    found = coef_div(p.c, k, &q) && !__builtin_mul_overflow(q, -1, &v.c);
    for (guint j = 0; j < p.n && found; j++) {
      if (j == (guint)best)
        continue;
      found = coef_div(p.t[j].coef, k, &q) && !__builtin_mul_overflow(q, -1, &q);
      poly_push(&v, q, p.t[j].mono);
    }
    if (found) {
      *sym = p.t[best].mono;
      *value = poly_intern(ctx, &v);
      found = *value != NULL;
    }
    poly_free(&v);
  }
  poly_free(&p);
  return found;
}

/* ---- evaluation ---- */

static gboolean eval_node(const DsExpr *e, const int64_t *values, const gboolean *bound,
                          int64_t *out)
{
  int64_t acc = e->value, v, w;
  switch (e->kind) {
  case DS_EXPR_CONST:
    break;
  case DS_EXPR_SYMBOL:
    if (bound != NULL && !bound[e->sym->id])
      return FALSE;
    acc = values[e->sym->id];
    break;
  case DS_EXPR_ADD:
    for (guint i = 0; i < e->n_ops; i++)
      if (!eval_node(e->ops[i], values, bound, &v) || __builtin_mul_overflow(v, e->coefs[i], &v) ||
          __builtin_add_overflow(acc, v, &acc))
        return FALSE;
    break;
  case DS_EXPR_MUL:
    for (guint i = 0; i < e->n_ops; i++) {
      if (!eval_node(e->ops[i], values, bound, &v))
        return FALSE;
      for (int64_t k = 0; k < e->coefs[i]; k++)
        if (__builtin_mul_overflow(acc, v, &acc))
          return FALSE;
    }
    break;
  case DS_EXPR_FLOORDIV:
  case DS_EXPR_MOD:
    if (!eval_node(e->ops[0], values, bound, &v) || !eval_node(e->ops[1], values, bound, &w))
      return FALSE;
    return e->kind == DS_EXPR_FLOORDIV ? ds_expr_py_floordiv(v, w, out) : ds_expr_py_mod(v, w, out);
  case DS_EXPR_MAX:
  case DS_EXPR_MIN:
    for (guint i = 0; i < e->n_ops; i++) {
      if (!eval_node(e->ops[i], values, bound, &v))
        return FALSE;
      if (i == 0 || (e->kind == DS_EXPR_MAX ? v > acc : v < acc))
        acc = v;
    }
    break;
  }
  *out = acc;
  return TRUE;
}

gboolean ds_expr_eval(DsExprCtx *ctx, const DsExpr *e, const int64_t *values, const gboolean *bound,
                      int64_t *out)
{
  if (ctx != NULL)
    e = ds_expr_resolve(ctx, e);
  if (e == NULL)
    return FALSE;
  return eval_node(e, values, bound, out);
}
