/*
 * clockshim: an LD_PRELOAD library that shifts a process's wall clock.
 *
 * lockbench preloads it into redis-server to inject server clock jumps:
 * Redis 7 expires keys by the wall clock, so moving it forward past a key's
 * TTL removes the key at once. Only the realtime clocks move:
 * clock_gettime(CLOCK_REALTIME / CLOCK_REALTIME_COARSE), gettimeofday and
 * time. CLOCK_MONOTONIC and every other clock pass through untouched (faking
 * the monotonic clock freezes Redis timers after a backward jump).
 *
 * The offset, in nanoseconds as decimal text (e.g. "20000000000\n"), is read
 * from the file named by LOCKBENCH_CLOCK_OFFSET_FILE. The harness replaces
 * that file atomically (write + rename); the shim re-reads it at most once
 * per millisecond of CLOCK_MONOTONIC time (not the coarse clock: it ticks
 * only every few ms) and keeps the last value it parsed when the file is
 * missing or malformed. Without the variable the offset is 0.
 *
 * The shim also says which offset the process really used: when a read of
 * a realtime clock picks up a new offset from the file, it writes that
 * offset (same format) to the file's name plus ".seen" (write + rename).
 * lockbench reads it back as evidence that a step reached the process's
 * own view of the time (an adapter that never reads its wall clock, or
 * reads it without libc, never writes it). The constructor's first read
 * writes nothing.
 *
 * Why not libfaketime: on Debian's redis-server (linked with jemalloc)
 * libfaketime recurses: its hooks call dlsym, dlsym may allocate, jemalloc's
 * initialisation reads the clock, which enters the hook again. This shim
 * never allocates and never calls dlsym from a hook: the real clock_gettime
 * is resolved once in a constructor, and until then (and if it cannot be
 * resolved) the hooks use the raw syscall. File access uses raw syscalls
 * only. State shared between threads is accessed with atomics.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define ENV_NAME "LOCKBENCH_CLOCK_OFFSET_FILE"
#define REREAD_NS 1000000LL /* re-read the offset file at most every 1 ms */

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

static clock_gettime_fn real_clock_gettime; /* set once by the constructor */
static char offset_path[4096];              /* "" = no offset file */
static int64_t offset_ns;                   /* atomic: current offset */
static int64_t next_read_ns;                /* atomic: monotonic time of the next re-read */
static char seen_path[4096];                /* offset_path + ".seen" */
static char seen_tmp[4096];                 /* offset_path + ".seen.tmp" */
static int64_t seen_ns;                     /* atomic: the offset last written to seen_path */

/* raw_clock_gettime reads a clock without the hook. */
static int raw_clock_gettime(clockid_t clk, struct timespec *ts) {
    clock_gettime_fn f = __atomic_load_n(&real_clock_gettime, __ATOMIC_ACQUIRE);
    if (f)
        return f(clk, ts);
    return (int)syscall(SYS_clock_gettime, clk, ts);
}

/* parse_ns parses an optionally signed decimal integer; returns 0 on success. */
static int parse_ns(const char *s, int64_t *out) {
    int neg = 0, digits = 0;
    int64_t v = 0;
    while (*s == ' ' || *s == '\t') s++;
    if (*s == '-' || *s == '+') neg = (*s++ == '-');
    for (; *s >= '0' && *s <= '9'; s++, digits++) {
        if (v > (INT64_MAX - 9) / 10) return -1;
        v = v * 10 + (*s - '0');
    }
    if (!digits) return -1;
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') s++;
    if (*s) return -1;
    *out = neg ? -v : v;
    return 0;
}

/* format_ns writes v as decimal text and a newline into buf (at least 24
 * bytes); returns the length. */
static int format_ns(int64_t v, char *buf) {
    char tmp[24];
    int n = 0, len = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do { tmp[n++] = (char)('0' + u % 10); u /= 10; } while (u);
    if (v < 0) buf[len++] = '-';
    while (n) buf[len++] = tmp[--n];
    buf[len++] = '\n';
    return len;
}

/* write_seen records v as the offset the process used (see the header). */
static void write_seen(int64_t v) {
    char buf[32];
    int n = format_ns(v, buf);
    long fd = syscall(SYS_openat, AT_FDCWD, seen_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return;
    long w = syscall(SYS_write, fd, buf, n);
    syscall(SYS_close, fd);
    if (w == n)
        syscall(SYS_renameat, AT_FDCWD, seen_tmp, AT_FDCWD, seen_path);
}

/* read_offset re-reads the offset file; keeps the old value on any
 * failure. With ack set (a realtime clock read is about to use it), a new
 * value is also written to the ".seen" file. */
static void read_offset(int ack) {
    char buf[64];
    long fd = syscall(SYS_openat, AT_FDCWD, offset_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    long n = syscall(SYS_read, fd, buf, sizeof buf - 1);
    syscall(SYS_close, fd);
    if (n <= 0) return;
    buf[n] = 0;
    int64_t v;
    if (parse_ns(buf, &v) != 0) return;
    __atomic_store_n(&offset_ns, v, __ATOMIC_RELAXED);
    if (!ack) {
        __atomic_store_n(&seen_ns, v, __ATOMIC_RELAXED);
        return;
    }
    if (seen_path[0] && __atomic_exchange_n(&seen_ns, v, __ATOMIC_RELAXED) != v)
        write_seen(v);
}

/* current_offset returns the offset, re-reading the file when due. */
static int64_t current_offset(void) {
    if (!offset_path[0]) return 0;
    struct timespec m;
    if (raw_clock_gettime(CLOCK_MONOTONIC, &m) == 0) {
        int64_t now = (int64_t)m.tv_sec * 1000000000LL + m.tv_nsec;
        int64_t due = __atomic_load_n(&next_read_ns, __ATOMIC_RELAXED);
        if (now >= due &&
            __atomic_compare_exchange_n(&next_read_ns, &due, now + REREAD_NS, 0,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            read_offset(1);
    }
    return __atomic_load_n(&offset_ns, __ATOMIC_RELAXED);
}

/* shift adds off nanoseconds to ts, keeping tv_nsec in [0, 1e9). */
static void shift(struct timespec *ts, int64_t off) {
    int64_t ns = (int64_t)ts->tv_nsec + off % 1000000000LL;
    ts->tv_sec += off / 1000000000LL;
    if (ns < 0) { ns += 1000000000LL; ts->tv_sec--; }
    if (ns >= 1000000000LL) { ns -= 1000000000LL; ts->tv_sec++; }
    ts->tv_nsec = ns;
}

__attribute__((constructor)) static void clockshim_init(void) {
    const char *p = getenv(ENV_NAME); /* getenv does not allocate */
    size_t n = p ? strlen(p) : 0;
    if (p && n < sizeof offset_path) {
        memcpy(offset_path, p, n + 1);
        if (n + sizeof ".seen.tmp" <= sizeof seen_tmp) {
            memcpy(seen_path, p, n);
            memcpy(seen_path + n, ".seen", sizeof ".seen");
            memcpy(seen_tmp, p, n);
            memcpy(seen_tmp + n, ".seen.tmp", sizeof ".seen.tmp");
        }
        read_offset(0);
    }
    /* dlsym may allocate, and the allocator may read the clock: until the
     * store below, hooks take the syscall path, so there is no recursion. */
    clock_gettime_fn f = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
    if (f && f != (clock_gettime_fn)clock_gettime)
        __atomic_store_n(&real_clock_gettime, f, __ATOMIC_RELEASE);
}

int clock_gettime(clockid_t clk, struct timespec *ts) {
    int r = raw_clock_gettime(clk, ts);
    if (r == 0 && (clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE))
        shift(ts, current_offset());
    return r;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    struct timespec ts;
    int r = raw_clock_gettime(CLOCK_REALTIME, &ts);
    if (r != 0) return r;
    shift(&ts, current_offset());
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = ts.tv_nsec / 1000;
    if (tz) memset(tz, 0, sizeof(struct timezone));
    return 0;
}

time_t time(time_t *tloc) {
    struct timespec ts;
    if (raw_clock_gettime(CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
    shift(&ts, current_offset());
    if (tloc) *tloc = ts.tv_sec;
    return ts.tv_sec;
}
