// The floor under a fleet's start skew on one machine: N processes, no stormark, each sleeps
// until one common instant (CLOCK_REALTIME, absolute) and reads the clock; prints how late
// they woke (p50 / p99 / max). Optionally each then wakes a second thread of its own that was
// waiting (as a run's thread wakes its job's), with or without one sched_yield() between the
// clock reading and that wake-up: what docs/performance.md ("1,000 real agents") compares.
//
// Build and run:
//   cc -O2 -o /tmp/wake_floor bench/wake_floor/wake_floor.c -lpthread
//   /tmp/wake_floor 1000            # bare wake-ups
//   /tmp/wake_floor 1000 thread     # each wakes a second thread
//   /tmp/wake_floor 1000 thread yield
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long NowNanos(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int Compare(const void* a, const void* b) {
  const long long x = *(const long long*)a, y = *(const long long*)b;
  return x < y ? -1 : x > y;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int go = 0;

static void* Job(void* arg) {
  pthread_mutex_lock(&mu);
  while (!go) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  volatile long sum = 0;  // A little work, as a first I/O would be.
  for (long i = 0; i < 20000; i++) sum += i;
  return arg;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s N [thread] [yield]\n", argv[0]);
    return 2;
  }
  const int n = atoi(argv[1]);
  int thread = 0, yield = 0;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "thread") == 0) thread = 1;
    if (strcmp(argv[i], "yield") == 0) yield = 1;
  }
  long long* late = mmap(NULL, sizeof(long long) * n, PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (n <= 0 || late == MAP_FAILED) return 2;
  const long long instant = NowNanos() + 3000000000LL;
  for (int i = 0; i < n; i++) {
    if (fork() != 0) continue;
    pthread_t job;
    if (thread) pthread_create(&job, NULL, Job, NULL);
    const struct timespec ts = {instant / 1000000000LL, instant % 1000000000LL};
    clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL);
    late[i] = NowNanos() - instant;
    if (yield) sched_yield();
    if (thread) {
      pthread_mutex_lock(&mu);
      go = 1;
      pthread_cond_signal(&cv);
      pthread_mutex_unlock(&mu);
      pthread_join(job, NULL);
    }
    sleep(2);  // Not exiting yet: an exit would compete with the later wake-ups.
    _exit(0);
  }
  while (wait(NULL) > 0) {
  }
  qsort(late, n, sizeof(long long), Compare);
  printf("%d processes%s%s: woke late p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", n,
         thread ? ", each waking a thread" : "", yield ? ", after a yield" : "",
         late[n / 2] / 1e6, late[n * 99 / 100] / 1e6, late[n - 1] / 1e6);
  return 0;
}
