/* test_files.c: the one bounded read and the one atomic write (dp/files.h). Reading: a file
 * within its limit, one over it (refused before any byte is read), a stream over it, a NUL in a
 * text format, a refused head, a directory, "-" as stdin; EVERY reader's own limit (a sparse file
 * one byte over it), and EVERY reader given /dev/zero and a FIFO that never ends: each stops
 * after a bounded read with a named error. Writing: a new
 * file, a replaced one (a hard link to the old file keeps the old content: renamed, not written
 * over), its permissions kept, a symbolic link planted at the old fixed temporary names
 * (OUT.tmp~, OUT.tmp) not followed, a device and a FIFO written in place, /dev/full failing
 * with the reason, a discarded write leaving the old file, nothing else left in the directory,
 * and a kill leaving nothing; the same where O_TMPFILE is missing (a seccomp filter imitates
 * such a filesystem), dp_out_remove_pending then taking the named temporary file away. */
#define _GNU_SOURCE /* F_SETPIPE_SZ */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dp/calibrate.h"
#include "dp/coarsen.h"
#include "dp/dataset.h"
#include "dp/files.h"
#include "dp/graph_io.h"
#include "dp/grouped.h"
#include "dp/inspector.h"
#include "dp/model.h"
#include "dp/onnx.h"
#include "dp/record.h"
#include "dp/settings.h"
#include "dp/torch.h"
#include "dp/trace.h"
#include "test.h"

static const char *read_text(const char *path, const struct dp_read_spec *spec,
                             enum dp_status *st, struct dp_error *err) {
    static char *buf;
    free(buf);
    buf = NULL;
    size_t len = 0;
    *st = dp_file_read(path, spec, &buf, &len, err);
    return buf;
}

static const char *no_x(const unsigned char *head, size_t n) {
    return n > 0 && head[0] == 'x' ? "starts with x" : NULL;
}

static void test_read(void) {
    struct dp_error err = {0};
    enum dp_status st;
    const struct dp_read_spec small = {"test file", 16, true, no_x, NULL};
    const char *p = write_tmp("files_ok.txt", "0123456789abcdef");
    const char *got = read_text(p, &small, &st, &err);
    CHECK(st == DP_OK && got && !strcmp(got, "0123456789abcdef"));
    /* one byte over: refused from the file's size, the limit and the format named */
    p = write_tmp("files_big.txt", "0123456789abcdefg");
    read_text(p, &small, &st, &err);
    CHECK(st == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "files_big.txt: 17 bytes: larger than any test file driple reads "
                            "(at most 16 bytes)");
    p = write_tmp("files_nul.txt", "abc");
    FILE *f = fopen(p, "ab");
    fputc('\0', f);
    fclose(f);
    read_text(p, &small, &st, &err);
    CHECK(st == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "files_nul.txt: byte 3 is NUL: not a test file");
    p = write_tmp("files_x.txt", "xyz");
    read_text(p, &small, &st, &err);
    CHECK(st == DP_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "files_x.txt: starts with x");
    read_text(test_dir(), &small, &st, &err);
    CHECK(st == DP_ERR_IO);
    CHECK_CONTAINS(err.msg, "is a directory");
    read_text("/dev/zero", &small, &st, &err);
    CHECK(st == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "/dev/zero: byte 0 is NUL");
    /* "-": standard input (a pipe here); a stream over the limit is refused as it passes it */
    int fd[2];
    CHECK(pipe(fd) == 0);
    int saved = dup(STDIN_FILENO);
    dup2(fd[0], STDIN_FILENO);
    close(fd[0]);
    CHECK(write(fd[1], "from stdin", 10) == 10);
    close(fd[1]);
    got = read_text("-", &small, &st, &err);
    CHECK(st == DP_OK && got && !strcmp(got, "from stdin"));
    CHECK(pipe(fd) == 0);
    dup2(fd[0], STDIN_FILENO);
    close(fd[0]);
    CHECK(write(fd[1], "0123456789abcdefgh", 18) == 18);
    close(fd[1]);
    read_text("-", &small, &st, &err);
    CHECK(st == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "stdin: more than 16 bytes and still going");
    dup2(saved, STDIN_FILENO);
    close(saved);
    CHECK(!strcmp(dp_file_name("-"), "stdin") && !strcmp(dp_file_name("a.json"), "a.json"));
}

/* ---- every reader and an endless stream ---- */

/* Starts a child that writes prefix, then `fill` bytes forever, into the FIFO at path (until
 * the reader goes: EPIPE). */
static pid_t endless_writer(const char *path, const char *prefix, size_t n_prefix, char fill) {
    pid_t pid = fork();
    if (pid != 0) return pid;
    signal(SIGPIPE, SIG_IGN);
    int fd = open(path, O_WRONLY);
    if (fd < 0) _exit(1);
    fcntl(fd, F_SETPIPE_SZ, 1 << 20);
    static char buf[1 << 20];
    memset(buf, fill, sizeof buf);
    if (write(fd, prefix, n_prefix) != (ssize_t)n_prefix) _exit(0);
    while (write(fd, buf, sizeof buf) > 0) {
    }
    _exit(0);
}

enum reader {
    R_GRAPH, R_GRAPH_JSON, R_PBTXT, R_ONNX, R_GROUPED, R_INSPECTOR, R_WEIGHTS_JSON, R_DATASET,
    R_CSV, R_SETTINGS, R_CATALOG, R_OP_WEIGHTS, R_TORCH, R_TRACE, R_NETDEV, R_TABLE, N_READERS
};

/* Runs reader r on path; its status, message in err. */
static enum dp_status run_reader(enum reader r, const char *path, struct dp_error *err) {
    enum dp_status st = DP_OK;
    switch (r) {
    case R_GRAPH: {
        struct dp_graph *g = NULL;
        st = dp_graph_load(path, NULL, &g, err);
        dp_graph_free(g);
        break;
    }
    case R_GRAPH_JSON: {
        struct dp_graph *g = NULL;
        st = dp_graph_load_json(path, &g, NULL, err);
        dp_graph_free(g);
        break;
    }
    case R_PBTXT: {
        struct dp_graph *g = NULL;
        st = dp_graph_import_pbtxt(path, NULL, &g, err);
        dp_graph_free(g);
        break;
    }
    case R_ONNX: {
        struct dp_graph *g = NULL;
        st = dp_graph_import_onnx(path, NULL, &g, err);
        dp_graph_free(g);
        break;
    }
    case R_GROUPED: {
        struct dp_grouped *g = NULL;
        st = dp_grouped_load_json(path, &g, err);
        dp_grouped_free(g);
        break;
    }
    case R_INSPECTOR: {
        struct dp_inspector *i = NULL;
        st = dp_inspector_load(path, &i, err);
        dp_inspector_free(i);
        break;
    }
    case R_WEIGHTS_JSON: {
        struct dp_model *m = NULL;
        st = dp_model_load_torch_json_new(path, &m, err);
        dp_model_free(m);
        break;
    }
    case R_DATASET: {
        struct dp_dataset ds;
        st = dp_dataset_load_json(path, &ds, err);
        if (!st) dp_dataset_free(&ds);
        break;
    }
    case R_CSV: {
        struct dp_dataset ds;
        st = dp_dataset_load_csv(path, NULL, &ds, err);
        dp_dataset_free(&ds);
        break;
    }
    case R_SETTINGS: {
        struct dp_settings *s = NULL;
        st = dp_settings_load(path, NULL, &s, err);
        dp_settings_free(s);
        break;
    }
    case R_CATALOG: {
        struct dp_gpu_catalog *c = NULL;
        st = dp_gpu_catalog_load(path, &c, err);
        dp_gpu_catalog_free(c);
        break;
    }
    case R_OP_WEIGHTS: {
        struct dp_op_weights *w = NULL;
        st = dp_op_weights_load(path, &w, err);
        dp_op_weights_free(w);
        break;
    }
    case R_TORCH: {
        struct dp_torch_state s = {0, NULL};
        st = dp_torch_load(path, &s, err);
        dp_torch_state_free(&s);
        break;
    }
    case R_TRACE: {
        struct dp_trace *t = dp_trace_init("measured");
        st = dp_trace_read_any(path, t, err);
        dp_trace_free(t);
        break;
    }
    case R_NETDEV: {
        struct dp_net_counters c;
        st = dp_netdev_read(path, "lo", &c, err);
        break;
    }
    case R_TABLE: { /* no catalog: every read here fails before a row needs one */
        struct dp_calib *c = NULL;
        st = dp_calib_load(&path, 1, NULL, &c, err);
        dp_calib_free(c);
        break;
    }
    default: break;
    }
    return st;
}

/* Each reader: its name, its limit (README "Reliability"), and what its endless FIFO starts with:
 * enough to pass the format's head check, so that only the limit stops it (the filler is a
 * space, or a zero byte after a binary head). */
static const struct {
    enum reader r;
    const char *name, *what;
    size_t      limit;
    const char *prefix;
    size_t      n_prefix;
    char        fill;
} cases[] = {
    {R_GRAPH, "graph", "graph", (size_t)2 << 30, "{", 1, ' '},
    {R_GRAPH_JSON, "graph JSON", "driple-graph JSON", (size_t)2 << 30, "{", 1, ' '},
    {R_PBTXT, "pbtxt", "TensorFlow GraphDef text", (size_t)2 << 30, "node {", 6, ' '},
    {R_ONNX, "ONNX", "ONNX model", (size_t)2 << 30, "\x08\x07", 2, 0},
    {R_GROUPED, "grouped", "grouped graph", (size_t)256 << 20, "{", 1, ' '},
    {R_INSPECTOR, "inspector", "inspector", (size_t)256 << 20, "{", 1, ' '},
    {R_WEIGHTS_JSON, "weights JSON", "weights JSON", (size_t)256 << 20, "{", 1, ' '},
    {R_DATASET, "dataset JSON", "dataset", (size_t)1 << 30, "{", 1, ' '},
    {R_CSV, "dataset CSV", "DriplePerf CSV", (size_t)256 << 20, "GPU,Model\n", 10, ' '},
    {R_SETTINGS, "settings", "setting list", (size_t)64 << 20, "{", 1, ' '},
    {R_CATALOG, "GPU catalog", "GPU catalog", (size_t)64 << 20, "{", 1, ' '},
    {R_OP_WEIGHTS, "op weights", "op-type weights file", (size_t)64 << 20, "{", 1, ' '},
    {R_TORCH, "torch", "PyTorch checkpoint", (size_t)256 << 20, "PK\x03\x04", 4, 0},
    {R_TRACE, "trace", "trace CSV", (size_t)1 << 30, "t_ms,gpu_util\n", 14, ' '},
    {R_NETDEV, "netdev", "/proc/net/dev listing", (size_t)1 << 20, "Inter-|\n face |\n", 16, ' '},
    {R_TABLE, "throughput table", "throughput table", (size_t)64 << 20, "model,gpu\n", 10, ' '},
};
_Static_assert(sizeof cases / sizeof cases[0] == N_READERS, "a case per reader");

/* Each reader's own limit, on a sparse regular file one byte over it: refused from its size,
 * before a byte is read or allocated. */
static void test_limits(void) {
    const char *p = test_path("files_sparse");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        CHECK(fd >= 0 && ftruncate(fd, (off_t)cases[i].limit + 1) == 0);
        close(fd);
        struct dp_error err = {0};
        CHECK(run_reader(cases[i].r, p, &err) == DP_ERR_INVALID);
        char want[160];
        snprintf(want, sizeof want, "files_sparse: %zu bytes: larger than any %s driple reads",
                 cases[i].limit + 1, cases[i].what);
        CHECK_CONTAINS(err.msg, want);
    }
    unlink(p);
    /* DRIPLE_MAX_INPUT lowers every limit; a malformed one is refused */
    const char *q = write_tmp("files_small.json", "{\"format\": \"driple-settings/1\", \"settings\": []}");
    struct dp_error err = {0};
    setenv("DRIPLE_MAX_INPUT", "16", 1);
    CHECK(run_reader(R_SETTINGS, q, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "bytes: larger than any setting list driple reads (at most 16 bytes, "
                            "as DRIPLE_MAX_INPUT says)");
    setenv("DRIPLE_MAX_INPUT", "lots", 1);
    CHECK(run_reader(R_SETTINGS, q, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "DRIPLE_MAX_INPUT='lots': not a size in bytes");
    unsetenv("DRIPLE_MAX_INPUT");
    CHECK(run_reader(R_SETTINGS, q, &err) == DP_OK);
}

/* /dev/zero and a FIFO that never ends, for every reader. The FIFOs run under DRIPLE_MAX_INPUT
 * = 512 KiB (the limits themselves are test_limits'): a stream of 2 GiB costs a minute here. */
static void test_endless(void) {
    setenv("DRIPLE_MAX_INPUT", "512K", 1);
    const char *fifo = test_path("files_fifo");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct dp_error err = {0};
        /* /dev/zero: a text reader stops at the first NUL, a binary one at its head */
        enum dp_status st = run_reader(cases[i].r, "/dev/zero", &err);
        if (st == DP_OK || (!strstr(err.msg, "/dev/zero: byte 0 is NUL") &&
                            !strstr(err.msg, "/dev/zero: not ") &&
                            !strstr(err.msg, "/dev/zero: more than"))) {
            fprintf(stderr, "%s on /dev/zero: status %d, '%s'\n", cases[i].name, (int)st,
                    err.msg);
            CHECK(0);
        } else {
            CHECK(1);
        }
        /* a FIFO that never ends: the reader stops at its limit and says so */
        unlink(fifo);
        CHECK(mkfifo(fifo, 0600) == 0);
        pid_t w = endless_writer(fifo, cases[i].prefix, cases[i].n_prefix, cases[i].fill);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        memset(&err, 0, sizeof err);
        st = run_reader(cases[i].r, fifo, &err);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        kill(w, SIGKILL);
        waitpid(w, NULL, 0);
        char want[160];
        snprintf(want, sizeof want, "files_fifo: more than 512 KiB and still going: larger than "
                 "any %s driple reads, as DRIPLE_MAX_INPUT says", cases[i].what);
        if (st != DP_ERR_INVALID || !strstr(err.msg, want)) {
            fprintf(stderr, "%s on an endless FIFO: status %d, '%s'\n", cases[i].name, (int)st,
                    err.msg);
            CHECK(0);
        } else {
            CHECK(1);
        }
        double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        CHECK(s < 60);
    }
    unlink(fifo);
    unsetenv("DRIPLE_MAX_INPUT");
}

/* ---- writing ---- */

static char *slurp(const char *path) {
    static char buf[4096];
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* How many entries dir holds (for "nothing else left behind"). */
static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void test_write(void) {
    struct dp_error err = {0};
    char dir[600];
    snprintf(dir, sizeof dir, "%s/files_out", test_dir());
    char cmd[1300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    CHECK(system(cmd) == 0);
    char out[700], old_link[700], decoy[700];
    snprintf(out, sizeof out, "%s/out.json", dir);
    snprintf(old_link, sizeof old_link, "%s/old-link", dir);
    snprintf(decoy, sizeof decoy, "%s/decoy", dir);

    /* a new file */
    CHECK(dp_out_write_all(out, "first\n", 6, &err) == DP_OK);
    CHECK(!strcmp(slurp(out), "first\n"));
    CHECK(count_entries(dir) == 1);
    /* replaced, not written over: a hard link to the old file keeps the old content; the
     * permissions stay */
    CHECK(chmod(out, 0640) == 0);
    CHECK(link(out, old_link) == 0);
    CHECK(dp_out_write_all(out, "second\n", 7, &err) == DP_OK);
    CHECK(!strcmp(slurp(out), "second\n"));
    CHECK(!strcmp(slurp(old_link), "first\n"));
    struct stat sb;
    CHECK(stat(out, &sb) == 0 && (sb.st_mode & 07777) == 0640);
    CHECK(count_entries(dir) == 2);
    /* links planted at the fixed names the writers used (OUT.tmp~, OUT.tmp) are not followed */
    char tmp1[720], tmp2[720];
    snprintf(tmp1, sizeof tmp1, "%s.tmp~", out);
    snprintf(tmp2, sizeof tmp2, "%s.tmp", out);
    CHECK(write_tmp("files_out/decoy", "decoy\n") != NULL);
    CHECK(symlink(decoy, tmp1) == 0 && symlink(decoy, tmp2) == 0);
    CHECK(dp_out_write_all(out, "third\n", 6, &err) == DP_OK);
    CHECK(!strcmp(slurp(decoy), "decoy\n"));
    CHECK(lstat(out, &sb) == 0 && S_ISREG(sb.st_mode));
    CHECK(!strcmp(slurp(out), "third\n"));
    CHECK(count_entries(dir) == 5); /* out, old-link, decoy, the two planted links */
    /* a discarded write leaves the old file and nothing else */
    struct dp_out *o = NULL;
    CHECK(dp_out_open(out, &o, &err) == DP_OK);
    fputs("never seen", dp_out_stream(o));
    dp_out_discard(o);
    CHECK(!strcmp(slurp(out), "third\n"));
    CHECK(count_entries(dir) == 5);
    /* a symbolic link at the target is followed: the file it names is replaced */
    char target[720], via[720];
    snprintf(target, sizeof target, "%s/real.json", dir);
    snprintf(via, sizeof via, "%s/via.json", dir);
    CHECK(write_tmp("files_out/real.json", "old\n") != NULL);
    CHECK(symlink("real.json", via) == 0);
    CHECK(dp_out_write_all(via, "new\n", 4, &err) == DP_OK);
    CHECK(lstat(via, &sb) == 0 && S_ISLNK(sb.st_mode));
    CHECK(!strcmp(slurp(target), "new\n"));
    /* a directory and a dangling link are refused */
    CHECK(dp_out_write_all(dir, "x", 1, &err) == DP_ERR_IO);
    CHECK_CONTAINS(err.msg, "is a directory");
    char dangling[720];
    snprintf(dangling, sizeof dangling, "%s/dangling", dir);
    CHECK(symlink("nowhere/x", dangling) == 0);
    CHECK(dp_out_write_all(dangling, "x", 1, &err) == DP_ERR_IO);
    CHECK_CONTAINS(err.msg, "dangling");
    /* devices are written in place: /dev/null stays a device; /dev/full says why it fails */
    CHECK(dp_out_write_all("/dev/null", "x", 1, &err) == DP_OK);
    CHECK(stat("/dev/null", &sb) == 0 && S_ISCHR(sb.st_mode));
    CHECK(dp_out_write_all("/dev/full", "x", 1, &err) == DP_ERR_IO);
    CHECK_CONTAINS(err.msg, "/dev/full: write failed: No space left on device");
    /* a FIFO is written through, and stays a FIFO */
    char fifo[720];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    CHECK(mkfifo(fifo, 0600) == 0);
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        int in = open(fifo, O_RDONLY);
        char buf[64];
        ssize_t n = read(in, buf, sizeof buf);
        if (n > 0 && write(fds[1], buf, (size_t)n) != n) _exit(1);
        _exit(0);
    }
    close(fds[1]);
    CHECK(dp_out_write_all(fifo, "through", 7, &err) == DP_OK);
    char back[64] = "";
    ssize_t n = read(fds[0], back, sizeof back - 1);
    back[n > 0 ? n : 0] = '\0';
    close(fds[0]);
    waitpid(pid, NULL, 0);
    CHECK(!strcmp(back, "through"));
    CHECK(lstat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode));
    /* an uncreatable file names the reason */
    char missing[720];
    snprintf(missing, sizeof missing, "%s/no/such/dir/x.json", dir);
    CHECK(dp_out_write_all(missing, "x", 1, &err) == DP_ERR_IO);
    CHECK_CONTAINS(err.msg, "x.json: cannot write: cannot create");
}

/* A child killed by a signal while an output is open leaves nothing: SIGKILL (the unnamed
 * O_TMPFILE has no name to leave), and SIGTERM through a handler that calls
 * dp_out_remove_pending, as the front ends do. */
static void on_term(int sig) {
    dp_out_remove_pending();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void test_kill(void) {
    char dir[600], out[700];
    snprintf(dir, sizeof dir, "%s/files_kill", test_dir());
    char cmd[1300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    CHECK(system(cmd) == 0);
    snprintf(out, sizeof out, "%s/out.json", dir);
    CHECK(write_tmp("files_kill/out.json", "old\n") != NULL);
    const int sigs[] = {SIGKILL, SIGTERM};
    for (int i = 0; i < 2; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            signal(SIGTERM, on_term);
            struct dp_out *o = NULL;
            struct dp_error err;
            if (dp_out_open(out, &o, &err)) _exit(1);
            fputs("half", dp_out_stream(o));
            fflush(dp_out_stream(o));
            raise(sigs[i]);
            _exit(2);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == sigs[i]);
        CHECK(!strcmp(slurp(out), "old\n"));
        CHECK(count_entries(dir) == 1);
    }
}

/* A filesystem without O_TMPFILE, imitated: a seccomp filter makes every open with O_TMPFILE
 * fail with EOPNOTSUPP (in a child: the filter cannot be lifted). False when the kernel refuses
 * the filter. */
static bool forbid_tmpfile(void) {
#if defined(__x86_64__)
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 020000000 /* __O_TMPFILE */, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EOPNOTSUPP),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof f[0]), f};
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
           prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
#else
    return false;
#endif
}

/* Where O_TMPFILE is missing the file is made under a random name (O_EXCL | O_NOFOLLOW): a
 * write still replaces its target whole, a link planted at the old names is not followed, and
 * SIGTERM through dp_out_remove_pending leaves nothing; SIGKILL leaves the named file (README
 * says so). Each case in a child under forbid_tmpfile; exit status 0 = as expected. */
static void test_named(void) {
    char dir[600], out[700], cmd[1300];
    snprintf(dir, sizeof dir, "%s/files_named", test_dir());
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    CHECK(system(cmd) == 0);
    snprintf(out, sizeof out, "%s/out.json", dir);
    CHECK(write_tmp("files_named/out.json", "old\n") != NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (!forbid_tmpfile()) _exit(3);
        struct dp_error err;
        if (open(dir, O_TMPFILE | O_WRONLY, 0600) >= 0 || errno != EOPNOTSUPP) _exit(4);
        if (dp_out_write_all(out, "new\n", 4, &err) != DP_OK) _exit(5);
        _exit(strcmp(slurp(out), "new\n") || count_entries(dir) != 1 ? 6 : 0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
        printf("  (no seccomp here: the named fallback is not tested)\n");
        return;
    }
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    const int sigs[] = {SIGTERM, SIGKILL};
    for (int i = 0; i < 2; i++) {
        pid = fork();
        if (pid == 0) {
            if (!forbid_tmpfile()) _exit(3);
            signal(SIGTERM, on_term);
            struct dp_out *o = NULL;
            struct dp_error err;
            if (dp_out_open(out, &o, &err)) _exit(1);
            if (count_entries(dir) != 2) _exit(2); /* out.json and the named temporary file */
            fputs("half", dp_out_stream(o));
            fflush(dp_out_stream(o));
            raise(sigs[i]);
            _exit(2);
        }
        waitpid(pid, &status, 0);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == sigs[i]);
        CHECK(!strcmp(slurp(out), "new\n"));
        CHECK(count_entries(dir) == (sigs[i] == SIGKILL ? 2 : 1));
    }
}

int main(void) {
    alarm(600); /* a reader that never ends fails the test instead of hanging it */
    test_read();
    test_limits();
    test_write();
    test_kill();
    test_named();
    test_endless();
    TEST_MAIN_END();
}
