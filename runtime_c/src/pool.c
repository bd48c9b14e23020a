/* pool.c — a fixed team of threads that runs one function over k = 0..T-1 and waits for all.
 *
 * The population loop hands each thread a contiguous range of particle slots.  Every particle owns
 * its random stream (keyed by slot and epoch), frame, arena and weight slot, so the answer does not
 * depend on how many threads ran it; the workers sleep on a condition variable between passes. */
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>

struct rt_pool {
  int threads;
  pthread_t *workers;
  pthread_mutex_t lock;
  pthread_cond_t start, done;
  uint64_t generation; /* bumped for every pass */
  int pending;         /* workers still running the current pass */
  int stopping;
  void (*fn)(void *arg, int k, int threads);
  void *arg;
};

typedef struct worker_arg {
  rt_pool *pool;
  int k;
} worker_arg;

static void *worker_main(void *p) {
  worker_arg *w = p;
  rt_pool *pool = w->pool;
  int k = w->k;
  free(w);
  uint64_t seen = 0;
  pthread_mutex_lock(&pool->lock);
  for (;;) {
    while (!pool->stopping && pool->generation == seen) pthread_cond_wait(&pool->start, &pool->lock);
    if (pool->stopping) break;
    seen = pool->generation;
    pthread_mutex_unlock(&pool->lock);
    pool->fn(pool->arg, k, pool->threads);
    pthread_mutex_lock(&pool->lock);
    if (--pool->pending == 0) pthread_cond_signal(&pool->done);
  }
  pthread_mutex_unlock(&pool->lock);
  return NULL;
}

rt_pool *rt_pool_new(int threads) {
  if (threads < 2) return NULL;
  rt_pool *pool = calloc(1, sizeof *pool);
  if (!pool) return NULL;
  pool->threads = threads;
  pool->workers = calloc((size_t)threads, sizeof(pthread_t));
  if (!pool->workers) {
    free(pool);
    return NULL;
  }
  pthread_mutex_init(&pool->lock, NULL);
  pthread_cond_init(&pool->start, NULL);
  pthread_cond_init(&pool->done, NULL);
  for (int k = 1; k < threads; k++) {
    worker_arg *w = malloc(sizeof *w);
    if (w) *w = (worker_arg){pool, k};
    if (!w || pthread_create(&pool->workers[k], NULL, worker_main, w) != 0) {
      free(w);
      pool->threads = k; /* the workers started so far are stopped by rt_pool_free */
      rt_pool_free(pool);
      return NULL;
    }
  }
  return pool;
}

void rt_pool_run(rt_pool *pool, void (*fn)(void *arg, int k, int threads), void *arg) {
  pthread_mutex_lock(&pool->lock);
  pool->fn = fn;
  pool->arg = arg;
  pool->pending = pool->threads - 1;
  pool->generation++;
  pthread_cond_broadcast(&pool->start);
  pthread_mutex_unlock(&pool->lock);
  fn(arg, 0, pool->threads); /* the calling thread takes part */
  pthread_mutex_lock(&pool->lock);
  while (pool->pending > 0) pthread_cond_wait(&pool->done, &pool->lock);
  pthread_mutex_unlock(&pool->lock);
}

void rt_pool_free(rt_pool *pool) {
  if (!pool) return;
  pthread_mutex_lock(&pool->lock);
  pool->stopping = 1;
  pthread_cond_broadcast(&pool->start);
  pthread_mutex_unlock(&pool->lock);
  for (int k = 1; k < pool->threads; k++) pthread_join(pool->workers[k], NULL);
  pthread_mutex_destroy(&pool->lock);
  pthread_cond_destroy(&pool->start);
  pthread_cond_destroy(&pool->done);
  free(pool->workers);
  free(pool);
}
