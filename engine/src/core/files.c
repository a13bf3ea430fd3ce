/* files.c: the one bounded read every reader uses and the one atomic write every writer uses
 * (dp/files.h), with the registry of named temporary files that a front end's signal handler
 * removes. */
#define _GNU_SOURCE /* O_TMPFILE */
#include "dp/files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK ((size_t)1 << 16)

const char *dp_file_name(const char *path) { return strcmp(path, "-") ? path : "stdin"; }

/* "256 MiB", "1.5 GiB", "4096 bytes". */
static void format_size(char *buf, size_t cap, size_t n) {
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    if (n < 1024) {
        snprintf(buf, cap, "%zu bytes", n);
        return;
    }
    double v = (double)n;
    int u = -1;
    while (v >= 1024 && u < 3) {
        v /= 1024;
        u++;
    }
    snprintf(buf, cap, v == (double)(long long)v ? "%.0f %s" : "%.1f %s", v, units[u]);
}

/* The limit: spec's, or DRIPLE_MAX_INPUT's when that is lower (*lowered set). */
static enum dp_status read_limit(const struct dp_read_spec *spec, size_t *max, bool *lowered,
                                 struct dp_error *err) {
    *max = spec->max_bytes;
    *lowered = false;
    const char *env = getenv("DRIPLE_MAX_INPUT");
    if (!env || !*env) return DP_OK;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(env, &end, 10);
    int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
    if (shift) end++;
    if (errno || end == env || *end || env[0] == '-' || v == 0 || v > (SIZE_MAX >> 31))
        return dp_error_set(err, DP_ERR_INVALID,
                            "DRIPLE_MAX_INPUT='%.40s': not a size in bytes (like 64M or 1G)", env);
    if ((size_t)v << shift < *max) {
        *max = (size_t)v << shift;
        *lowered = true;
    }
    return DP_OK;
}

static enum dp_status too_large(const char *name, const struct dp_read_spec *spec, size_t max,
                                bool lowered, bool stream, unsigned long long size,
                                struct dp_error *err) {
    char lim[32];
    format_size(lim, sizeof lim, max);
    const char *by = lowered ? ", as DRIPLE_MAX_INPUT says" : "";
    if (stream)
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: more than %s and still going: larger than any %s driple reads%s "
                            "(an endless stream?)", name, lim, spec->what, by);
    return dp_error_set(err, DP_ERR_INVALID,
                        "%s: %llu bytes: larger than any %s driple reads (at most %s%s)", name,
                        size, spec->what, lim, by);
}

/* "an" before a vowel ("an inspector"), "a" otherwise. */
static const char *article(const char *word) {
    return strchr("aeiouAEIOU", word[0]) && word[0] ? "an" : "a";
}

enum dp_status dp_file_read(const char *path, const struct dp_read_spec *spec, char **out,
                            size_t *len, struct dp_error *err) {
    const char *name = dp_file_name(path);
    size_t max;
    bool lowered;
    enum dp_status st = read_limit(spec, &max, &lowered, err);
    if (st) return st;
    bool is_stdin = !strcmp(path, "-");
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return dp_error_set(err, DP_ERR_IO, "%s: cannot open: %s", name, strerror(errno));
    char *buf = NULL;
    size_t n = 0, cap;
    bool head_checked = !spec->check_head;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        st = dp_error_set(err, DP_ERR_IO, "%s: cannot read: %s", name, strerror(errno));
        goto done;
    }
    if (S_ISDIR(sb.st_mode)) {
        st = dp_error_set(err, DP_ERR_IO, "%s: is a directory, not a file", name);
        goto done;
    }
    bool stream = !S_ISREG(sb.st_mode);
    if (!stream && (unsigned long long)sb.st_size > max) {
        st = too_large(name, spec, max, lowered, false, (unsigned long long)sb.st_size, err);
        goto done;
    }
    /* A regular file's size is known (one more byte sees a file that grew; /proc files say 0);
     * a stream's is not. */
    cap = stream || (size_t)sb.st_size < READ_CHUNK ? READ_CHUNK : (size_t)sb.st_size + 1;
    if (cap > max + 1) cap = max + 1;
    if (!(buf = malloc(cap + 1))) {
        st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
        goto done;
    }
    for (;;) {
        if (n == cap) {
            if (n > max) {
                st = too_large(name, spec, max, lowered, stream, n, err);
                goto done;
            }
            size_t nc = cap > (max + 1) / 2 ? max + 1 : 2 * cap;
            char *b = realloc(buf, nc + 1);
            if (!b) {
                st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
                goto done;
            }
            buf = b;
            cap = nc;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0) {
            if (errno == EINTR) continue;
            st = dp_error_set(err, DP_ERR_IO, "%s: read error: %s", name, strerror(errno));
            goto done;
        }
        const char *nul = spec->text && r > 0 ? memchr(buf + n, '\0', (size_t)r) : NULL;
        if (nul) {
            st = dp_error_set(err, DP_ERR_PARSE,
                              "%s: byte %zu is NUL: not %s %s (a text format; binary data?)", name,
                              (size_t)(nul - buf), article(spec->what), spec->what);
            goto done;
        }
        n += (size_t)r;
        if (!head_checked && n > 0 && (n >= DP_FILE_HEAD_BYTES || r == 0)) {
            head_checked = true;
            const char *why = spec->check_head((const unsigned char *)buf,
                                               n < DP_FILE_HEAD_BYTES ? n : DP_FILE_HEAD_BYTES);
            if (why) {
                st = dp_error_set(err, DP_ERR_UNSUPPORTED, "%s: %s", name, why);
                goto done;
            }
            size_t hm = spec->head_max ? spec->head_max((const unsigned char *)buf,
                                                        n < DP_FILE_HEAD_BYTES ? n
                                                                               : DP_FILE_HEAD_BYTES)
                                       : 0;
            if (hm && hm < max) max = hm;
            unsigned long long size = stream ? n : (unsigned long long)sb.st_size;
            if (size > max) {
                st = too_large(name, spec, max, lowered, stream, size, err);
                goto done;
            }
        }
        if (r == 0) break;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    buf = NULL;
done:
    free(buf);
    if (!is_stdin) close(fd);
    return st;
}

/* ---- the registry of named temporary files ------------------------------------------------- */

/* A slot is claimed (BUSY) while its name is being made; LIVE while a file of that name exists
 * and should go if the process is stopped; FREE again after the rename or removal. The states
 * are lock-free atomics, so a signal handler may read them. */
enum { SLOT_FREE, SLOT_BUSY, SLOT_LIVE };
#define N_SLOTS 32
static struct {
    atomic_int state;
    char       path[PATH_MAX];
} pending[N_SLOTS];

static int slot_claim(void) {
    for (int i = 0; i < N_SLOTS; i++) {
        int expect = SLOT_FREE;
        if (atomic_compare_exchange_strong(&pending[i].state, &expect, SLOT_BUSY)) return i;
    }
    return -1;
}

static void slot_set(int i, int state) {
    if (i >= 0) atomic_store(&pending[i].state, state);
}

void dp_out_remove_pending(void) {
    for (int i = 0; i < N_SLOTS; i++)
        if (atomic_load(&pending[i].state) == SLOT_LIVE) unlink(pending[i].path);
}

/* Writes "<dir>/.<base>.XXXXXXXX~" for target into slot i's path (random letters). */
static bool temp_name(int i, const char *target) {
    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    int dir_len = slash ? (int)(slash - target) : 1;
    const char *dir = slash ? target : ".";
    if (slash == target) dir_len = 0; /* "/x": the root */
    unsigned char rnd[8];
    if (getrandom(rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t x = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)getpid() << 40;
        for (int k = 0; k < 8; k++) rnd[k] = (unsigned char)(x >> (8 * k));
    }
    static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    char suffix[9];
    for (int k = 0; k < 8; k++) suffix[k] = abc[rnd[k] % (sizeof abc - 1)];
    suffix[8] = '\0';
    /* A long name is cut so that the temporary name stays within NAME_MAX. */
    int n = snprintf(pending[i].path, sizeof pending[i].path, "%.*s/.%.200s.%s~", dir_len, dir,
                     base, suffix);
    return n > 0 && (size_t)n < sizeof pending[i].path;
}

/* ---- writing ------------------------------------------------------------------------------- */

enum out_kind { OUT_STDOUT, OUT_IN_PLACE, OUT_TMPFILE, OUT_NAMED };

struct dp_out {
    enum out_kind kind;
    FILE         *f;
    int           slot;        /* OUT_NAMED: the registry slot of the temporary name */
    char         *target;      /* the file to replace (a link's target resolved) */
    char         *shown;       /* the path as given, for messages */
    bool          keep_mode;   /* replacing a file: give the new one its permissions */
    mode_t        mode;
};

static void out_free(struct dp_out *o) {
    free(o->target);
    free(o->shown);
    free(o);
}

/* The directory part of path ("." when none). */
static char *dir_of(const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    if (slash == path) return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* Opens an unnamed file in dir (O_TMPFILE), or -1 when the filesystem or /proc cannot give one
 * a name later. */
static int open_unnamed(const char *dir) {
#ifdef O_TMPFILE
    int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    if (fd < 0) return -1;
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    if (access(proc, F_OK) == 0) return fd;
    close(fd);
#else
    (void)dir;
#endif
    return -1;
}

/* Creates o's temporary file under a random name in its target's directory (O_EXCL |
 * O_NOFOLLOW: a file or link planted there is never opened) and registers the name for
 * dp_out_remove_pending. Returns the descriptor, or -1 with errno set. */
static int open_named(struct dp_out *o) {
    if ((o->slot = slot_claim()) < 0) {
        errno = EMFILE; /* more than N_SLOTS files being written at once */
        return -1;
    }
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        if (!temp_name(o->slot, o->target)) {
            errno = ENAMETOOLONG;
            break;
        }
        fd = open(pending[o->slot].path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd >= 0) slot_set(o->slot, SLOT_LIVE);
    return fd;
}

enum dp_status dp_out_open(const char *path, struct dp_out **out, struct dp_error *err) {
    struct dp_out *o = calloc(1, sizeof *o);
    if (!o || !(o->shown = strdup(path))) {
        free(o);
        return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", path);
    }
    o->slot = -1;
    if (!strcmp(path, "-")) {
        o->kind = OUT_STDOUT;
        o->f = stdout;
        *out = o;
        return DP_OK;
    }
    enum dp_status st = DP_OK;
    int fd = -1;
    char *dir = NULL;
    struct stat sb;
    if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
        /* The user's link: write to the file it names, as opening it would. */
        if (stat(path, &sb) != 0) {
            st = dp_error_set(err, DP_ERR_IO, "%s: cannot write: a symbolic link to %s",
                              path, errno == ENOENT ? "nothing (dangling)" : strerror(errno));
            goto fail;
        }
        if (!(o->target = realpath(path, NULL))) {
            st = dp_error_set(err, DP_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
            goto fail;
        }
    }
    if (!o->target && !(o->target = strdup(path))) {
        st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    errno = 0;
    if (stat(o->target, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) {
            st = dp_error_set(err, DP_ERR_IO, "%s: cannot write: is a directory", path);
            goto fail;
        }
        if (S_ISREG(sb.st_mode)) {
            o->keep_mode = true;
            o->mode = sb.st_mode & 07777;
        } else { /* a device, FIFO or socket: renaming would replace it */
            o->kind = OUT_IN_PLACE;
            if ((fd = open(o->target, O_WRONLY | O_NOCTTY | O_CLOEXEC)) < 0) {
                st = dp_error_set(err, DP_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
                goto fail;
            }
        }
    } else if (errno != ENOENT) {
        st = dp_error_set(err, DP_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
        goto fail;
    }
    if (o->kind != OUT_IN_PLACE) {
        if (!(dir = dir_of(o->target))) {
            st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", path);
            goto fail;
        }
        o->kind = (fd = open_unnamed(dir)) >= 0 ? OUT_TMPFILE : OUT_NAMED;
        if (fd < 0 && (fd = open_named(o)) < 0) {
            st = dp_error_set(err, DP_ERR_IO, "%s: cannot write: cannot create a file in %s: %s",
                              path, dir, strerror(errno));
            goto fail;
        }
    }
    if (!(o->f = fdopen(fd, "wb"))) {
        st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    free(dir);
    *out = o;
    return DP_OK;
fail:
    if (fd >= 0) close(fd);
    if (o->slot >= 0) {
        if (atomic_load(&pending[o->slot].state) == SLOT_LIVE) unlink(pending[o->slot].path);
        slot_set(o->slot, SLOT_FREE);
    }
    free(dir);
    out_free(o);
    return st;
}

FILE *dp_out_stream(struct dp_out *o) { return o->f; }

/* Flushes o's stream; false (errno set) when any write to it failed. */
static bool flush_ok(FILE *f) {
    errno = 0;
    bool bad = ferror(f) != 0;
    int saved = errno;
    if (fflush(f) != 0) return false;
    if (bad) {
        errno = saved ? saved : EIO;
        return false;
    }
    return true;
}

/* Gives the unnamed file of o a temporary name in its target's directory (slot claimed). */
static bool link_unnamed(struct dp_out *o) {
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fileno(o->f));
    if ((o->slot = slot_claim()) < 0) {
        errno = EMFILE;
        return false;
    }
    for (int tries = 0; tries < 100; tries++) {
        if (!temp_name(o->slot, o->target)) {
            errno = ENAMETOOLONG;
            break;
        }
        /* linkat never replaces: a file or link planted at the name gives EEXIST */
        if (linkat(AT_FDCWD, proc, AT_FDCWD, pending[o->slot].path, AT_SYMLINK_FOLLOW) == 0) {
            slot_set(o->slot, SLOT_LIVE);
            return true;
        }
        if (errno != EEXIST) break;
    }
    int saved = errno;
    slot_set(o->slot, SLOT_FREE);
    o->slot = -1;
    errno = saved;
    return false;
}

enum dp_status dp_out_commit(struct dp_out *o, struct dp_error *err) {
    enum dp_status st = DP_OK;
    const char *name = o->kind == OUT_STDOUT ? "stdout" : o->shown;
    if (!flush_ok(o->f)) {
        st = dp_error_set(err, DP_ERR_IO, "%s: write failed: %s", name, strerror(errno));
        goto done;
    }
    if (o->kind == OUT_STDOUT) goto done;
    if (o->keep_mode && fchmod(fileno(o->f), o->mode) != 0) {
        st = dp_error_set(err, DP_ERR_IO, "%s: cannot set permissions: %s", name, strerror(errno));
        goto done;
    }
    if (o->kind == OUT_TMPFILE && !o->keep_mode) {
        /* Nothing to replace: the file takes its name in one step, never named otherwise
         * (EEXIST: a file appeared there meanwhile; then it is replaced as below). */
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fileno(o->f));
        if (linkat(AT_FDCWD, proc, AT_FDCWD, o->target, AT_SYMLINK_FOLLOW) == 0) {
            FILE *f = o->f;
            o->f = NULL;
            if (fclose(f) != 0)
                st = dp_error_set(err, DP_ERR_IO, "%s: write failed: %s", name, strerror(errno));
            goto done;
        }
        if (errno != EEXIST) {
            st = dp_error_set(err, DP_ERR_IO, "%s: cannot create: %s", name, strerror(errno));
            goto done;
        }
    }
    if (o->kind == OUT_TMPFILE && !link_unnamed(o)) {
        st = dp_error_set(err, DP_ERR_IO, "%s: cannot name the temporary file: %s", name,
                          strerror(errno));
        goto done;
    }
    FILE *f = o->f;
    o->f = NULL;
    if (fclose(f) != 0) {
        st = dp_error_set(err, DP_ERR_IO, "%s: write failed: %s", name, strerror(errno));
        goto done;
    }
    if (o->kind == OUT_IN_PLACE) goto done;
    /* Only a regular file (or nothing) is replaced: a target turned into a directory, device
     * or link meanwhile is left alone. */
    struct stat sb;
    if (lstat(o->target, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        st = dp_error_set(err, DP_ERR_IO, "%s: no longer a regular file: not replaced", name);
        goto done;
    }
    if (rename(pending[o->slot].path, o->target) != 0) {
        st = dp_error_set(err, DP_ERR_IO, "%s: cannot replace: %s", name, strerror(errno));
        goto done;
    }
    slot_set(o->slot, SLOT_FREE);
    o->slot = -1;
done:
    dp_out_discard(o);
    return st;
}

void dp_out_discard(struct dp_out *o) {
    if (!o) return;
    if (o->f && o->kind != OUT_STDOUT) fclose(o->f);
    if (o->slot >= 0) {
        if (atomic_load(&pending[o->slot].state) == SLOT_LIVE) unlink(pending[o->slot].path);
        slot_set(o->slot, SLOT_FREE);
    }
    out_free(o);
}

enum dp_status dp_out_write_all(const char *path, const void *data, size_t len,
                                struct dp_error *err) {
    struct dp_out *o = NULL;
    enum dp_status st = dp_out_open(path, &o, err);
    if (st) return st;
    if (len && fwrite(data, 1, len, o->f) != len) {
        int saved = errno;
        const char *name = o->kind == OUT_STDOUT ? "stdout" : path;
        st = dp_error_set(err, DP_ERR_IO, "%s: write failed: %s", name, strerror(saved));
        dp_out_discard(o);
        return st;
    }
    return dp_out_commit(o, err);
}

enum dp_status dp_mkdir_p(const char *dir, struct dp_error *err) {
    char buf[PATH_MAX];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof buf)
        return dp_error_set(err, DP_ERR_IO, "%s: cannot create directory: %s", dir,
                            strerror(n ? ENAMETOOLONG : ENOENT));
    memcpy(buf, dir, n + 1);
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char c = *p;
        *p = '\0';
        struct stat st; /* EEXIST also covers a file of that name */
        if (mkdir(buf, 0777) != 0 && (errno != EEXIST || stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)))
            return dp_error_set(err, DP_ERR_IO, "%s: cannot create directory: %s", buf,
                                strerror(errno == EEXIST ? ENOTDIR : errno));
        *p = c;
        if (!c) return DP_OK;
    }
}
