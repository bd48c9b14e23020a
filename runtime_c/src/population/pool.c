/* pool.c — a fixed team of threads that runs one function over k = 0..T-1 and waits for all.
 *
 * The population loop hands each thread a contiguous range of particle slots.  Every particle owns
 * its random stream (keyed by slot and epoch), frame, arena and weight slot, so the answer does not
 * depend on how many threads ran it.
 *
 * A filter step is four passes a resampling (resume, weigh, offspring, copy), each some tens of
 * microseconds at N = 10^4: a worker asleep on a condition variable took about as long to wake, and
 * two threads ran the walk four times slower than one (29.6 against 7.3 ns a particle-step; 7.2
 * against 7.9 at N = 10^5).  So between passes the workers, and the caller waiting for them, first
 * spin on the pass's counters for a while (some tens of microseconds, SPIN_TICKS), and only then
 * sleep on the condition variables: 4.9 ns at 10^4, 4.1 at 10^5.
 * The counters are read and written with acquire and release atomics; whoever sleeps does so under
 * the lock, after saying so, so a pass started or finished meanwhile always wakes it. */
#define _POSIX_C_SOURCE 200809L /* sysconf */
#include "population.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

/* A spin lasts about SPIN_TICKS of the time-stamp counter (some tens of microseconds at the 2-4 GHz
 * it counts), however long a pause takes (a few cycles on older CPUs, about 140 on Skylake and
 * later); elsewhere SPIN_ROUNDS rounds.  A team of more threads than the machine has processors
 * never spins: its spinning threads took the processors from those with work left (the walk at
 * N = 10^5 on 7 threads and 2 processors: 13.1 ns a particle-step spinning, 6.8 sleeping). */
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define SPIN_PAUSE() _mm_pause()
#define SPIN_CLOCK() __rdtsc()
enum { SPIN_TICKS = 1 << 17, SPIN_ROUNDS = 1 << 30 };
#else
#define SPIN_PAUSE() ((void)0)
#define SPIN_CLOCK() 0ull
enum { SPIN_TICKS = 1, SPIN_ROUNDS = 1 << 12 };
#endif

struct rt_pool {
  int threads;
  pthread_t *workers;
  pthread_mutex_t lock;
  pthread_cond_t start, done;
  uint64_t generation; /* bumped for every pass (atomic) */
  int pending;         /* workers still running the current pass (atomic) */
  int stopping;        /* (atomic) */
  int sleepers;        /* workers asleep on `start` (under the lock) */
  int caller_asleep;   /* the caller asleep on `done` (under the lock) */
  long spin_rounds;    /* SPIN_ROUNDS, or 0 for a team larger than the machine */
  void (*fn)(void *arg, int k, int threads);
  void *arg;
};

typedef struct worker_arg {
  rt_pool *pool;
  int k;
} worker_arg;

/* A pass after the one numbered `seen` started, or the pool is stopping: what a worker waits for. */
static int pass_started(const rt_pool *pool, uint64_t seen) {
  return __atomic_load_n(&pool->generation, __ATOMIC_ACQUIRE) != seen ||
         __atomic_load_n(&pool->stopping, __ATOMIC_ACQUIRE);
}

/* Every worker finished the current pass: what the caller waits for. */
static int workers_done(const rt_pool *pool, uint64_t unused) {
  (void)unused;
  return __atomic_load_n(&pool->pending, __ATOMIC_ACQUIRE) == 0;
}

/* Whether done(pool, arg) became true within a spin. */
static int spin_until(const rt_pool *pool, int (*done)(const rt_pool *, uint64_t), uint64_t arg) {
  unsigned long long start = SPIN_CLOCK();
  for (long rounds = 0; rounds < pool->spin_rounds; rounds++) {
    if (done(pool, arg)) return 1;
    SPIN_PAUSE();
    if ((rounds & 63) == 63 && SPIN_CLOCK() - start > SPIN_TICKS) break;
  }
  return done(pool, arg);
}

static void *worker_main(void *p) {
  worker_arg *w = p;
  rt_pool *pool = w->pool;
  int k = w->k;
  free(w);
  uint64_t seen = 0;
  for (;;) {
    if (!spin_until(pool, pass_started, seen)) {
      pthread_mutex_lock(&pool->lock);
      pool->sleepers++;
      while (!pass_started(pool, seen)) pthread_cond_wait(&pool->start, &pool->lock);
      pool->sleepers--;
      pthread_mutex_unlock(&pool->lock);
    }
    if (__atomic_load_n(&pool->stopping, __ATOMIC_ACQUIRE)) break;
    seen = __atomic_load_n(&pool->generation, __ATOMIC_ACQUIRE);
    pool->fn(pool->arg, k, pool->threads);
    if (__atomic_sub_fetch(&pool->pending, 1, __ATOMIC_ACQ_REL) == 0) {
      pthread_mutex_lock(&pool->lock);
      if (pool->caller_asleep) pthread_cond_signal(&pool->done);
      pthread_mutex_unlock(&pool->lock);
    }
  }
  return NULL;
}

rt_pool *rt_pool_new(int threads) {
  if (threads < 2) return NULL;
  rt_pool *pool = calloc(1, sizeof *pool);
  if (!pool) return NULL;
  pool->threads = threads;
  long processors = sysconf(_SC_NPROCESSORS_ONLN);
  pool->spin_rounds = processors > 0 && threads <= processors ? SPIN_ROUNDS : 0;
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
  pool->fn = fn;
  pool->arg = arg;
  __atomic_store_n(&pool->pending, pool->threads - 1, __ATOMIC_RELAXED);
  __atomic_add_fetch(&pool->generation, 1, __ATOMIC_RELEASE); /* publishes fn, arg and pending */
  pthread_mutex_lock(&pool->lock);
  if (pool->sleepers) pthread_cond_broadcast(&pool->start);
  pthread_mutex_unlock(&pool->lock);
  fn(arg, 0, pool->threads); /* the calling thread takes part */
  if (!spin_until(pool, workers_done, 0)) {
    pthread_mutex_lock(&pool->lock);
    pool->caller_asleep = 1;
    while (!workers_done(pool, 0)) pthread_cond_wait(&pool->done, &pool->lock);
    pool->caller_asleep = 0;
    pthread_mutex_unlock(&pool->lock);
  }
}

void rt_pool_free(rt_pool *pool) {
  if (!pool) return;
  pthread_mutex_lock(&pool->lock);
  __atomic_store_n(&pool->stopping, 1, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&pool->start);
  pthread_mutex_unlock(&pool->lock);
  for (int k = 1; k < pool->threads; k++) pthread_join(pool->workers[k], NULL);
  pthread_mutex_destroy(&pool->lock);
  pthread_cond_destroy(&pool->start);
  pthread_cond_destroy(&pool->done);
  free(pool->workers);
  free(pool);
}
