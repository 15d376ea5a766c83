/* ds-constant.c: immutable buffers and their derived forms (a short list under a lock: a weight
 * has one or two forms, looked up once per kernel call). */
#include "ds-constant.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ds-memory.h"

typedef struct Derived {
  DsDerivedKey key;
  void *form;
  size_t nbytes;
  struct Derived *next;
} Derived;

struct _DsConstant {
  const char *data;
  size_t nbytes;
  pthread_mutex_t lock;
  Derived *derived;
  size_t derived_bytes;
};

DsConstant *ds_constant_new(const void *data, size_t nbytes)
{
  DsConstant *constant = calloc(1, sizeof *constant);
  if (constant == NULL)
    return NULL; /* the buffer is then simply not known as constant */
  constant->data = data;
  constant->nbytes = nbytes;
  pthread_mutex_init(&constant->lock, NULL);
  return constant;
}

void ds_constant_free(DsConstant *constant)
{
  if (constant == NULL)
    return;
  for (Derived *d = constant->derived, *next; d != NULL; d = next) {
    next = d->next;
    free(d->form);
    free(d);
  }
  ds_memory_release(constant->derived_bytes);
  pthread_mutex_destroy(&constant->lock);
  free(constant);
}

size_t ds_constant_get_derived_bytes(DsConstant *constant)
{
  pthread_mutex_lock(&constant->lock);
  size_t bytes = constant->derived_bytes;
  pthread_mutex_unlock(&constant->lock);
  return bytes;
}

DsConstant *ds_tensor_get_constant(const DsTensor *t)
{
  DsConstant *c = t->constant;
  if (c == NULL || t->data == NULL)
    return NULL;
  const char *p = t->data;
  size_t bytes = ds_tensor_nbytes(t);
  if (p < c->data || (size_t)(p - c->data) > c->nbytes || bytes > c->nbytes - (size_t)(p - c->data))
    return NULL;
  return c;
}

static bool same_key(const DsDerivedKey *a, const DsDerivedKey *b)
{
  return strcmp(a->kind, b->kind) == 0 && a->offset == b->offset &&
         memcmp(a->params, b->params, sizeof a->params) == 0;
}

const void *ds_tensor_get_derived(const DsTensor *source, DsDerivedKey *key, size_t nbytes,
                                  DsDeriveFn derive)
{
  DsConstant *c = ds_tensor_get_constant(source);
  if (c == NULL)
    return NULL;
  key->offset = (size_t)((const char *)source->data - c->data);
  pthread_mutex_lock(&c->lock);
  Derived *d = c->derived;
  while (d != NULL && !same_key(&d->key, key))
    d = d->next;
  if (d == NULL && nbytes > 0 && nbytes < SIZE_MAX - 64 && ds_memory_try_reserve(nbytes)) {
    void *form = aligned_alloc(64, (nbytes + 63) & ~(size_t)63);
    if (form == NULL) {
      ds_memory_release(nbytes);
    } else if ((d = malloc(sizeof *d)) == NULL) {
      free(form);
      ds_memory_release(nbytes);
    } else {
      derive(source, key, form);
      *d = (Derived){*key, form, nbytes, c->derived};
      c->derived = d;
      c->derived_bytes += nbytes;
    }
  }
  pthread_mutex_unlock(&c->lock);
  return d != NULL ? d->form : NULL;
}
