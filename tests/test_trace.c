/* test_trace.c: the burst extractor on hand-made traces with known bursts, the nvidia-smi CSV
 * syntax (units in the header, % and MiB suffixes, several GPUs, [N/A]), network counters to
 * rates, the simulator's own CSV round trip, and malformed files (one sample, NaN or huge
 * times and counters, a directory) failing with file:line; hostile ones (issue 17): a cut last
 * row, a year-0000 clock, several GPUs with and without an index column, every worker read
 * once. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dp/trace.h"
#include "test.h"

static void test_bursts(void) {
    /* 100 ms samples: idle 3, burst of 2 (peak 80), idle 4, burst of 3 (peak 60), idle 2. */
    const double v[] = {0, 0, 0, 50, 80, 0, 0, 0, 0, 40, 60, 30, 0, 0};
    struct dp_trace *t = dp_trace_init("measured");
    struct dp_error err = {0};
    for (int i = 0; i < (int)(sizeof v / sizeof v[0]); i++)
        CHECK(dp_trace_push(t, DP_SERIES_GPU_UTIL, i * 100.0, v[i], &err) == DP_OK);
    struct dp_bursts b;
    dp_series_bursts(&t->s[DP_SERIES_GPU_UTIL], 0.10, &b);
    CHECK(b.n_bursts == 2);
    CHECK(b.n_gaps == 1);
    CHECK_NEAR(b.active_ms, (200 + 300) / 2.0, 1e-9);
    CHECK_NEAR(b.idle_ms, 400, 1e-9);
    CHECK_NEAR(b.peak, (80 + 60) / 2.0, 1e-9);
    CHECK_NEAR(b.threshold, 8, 1e-12);

    /* A threshold of 60% of the max (48) splits differently: bursts {50,80} and {60}. */
    dp_series_bursts(&t->s[DP_SERIES_GPU_UTIL], 0.60, &b);
    CHECK(b.n_bursts == 2);
    CHECK_NEAR(b.active_ms, 150, 1e-9);
    CHECK_NEAR(b.idle_ms, 500, 1e-9);
    CHECK_NEAR(b.peak, 70, 1e-9);

    /* Labels: Driple order, missing resources flagged and zero. */
    double labels[DP_N_OUTPUTS];
    unsigned missing = 0;
    dp_trace_labels(t, 0, labels, &missing);
    CHECK(missing == ((1u << DP_SERIES_GPU_MEM_UTIL) | (1u << DP_SERIES_NET_RX) |
                      (1u << DP_SERIES_NET_TX)));
    CHECK_NEAR(labels[3], 400, 1e-9);
    CHECK_NEAR(labels[4], 250, 1e-9);
    CHECK_NEAR(labels[5], 70, 1e-9);
    CHECK(labels[0] == 0 && labels[11] == 0);
    CHECK(!strcmp(dp_outputs[4].name, "gpu_util.active"));
    CHECK(!strcmp(dp_outputs[8].unit, "MB/s"));
    CHECK(!strcmp(dp_outputs[6].unit, "ms"));

    /* Going back in time is refused. */
    CHECK(dp_trace_push(t, DP_SERIES_GPU_UTIL, 50.0, 1, &err) == DP_ERR_INVALID);
    dp_trace_free(t);

    /* One burst: idle is the mean of the leading and trailing idle runs; constant load: one
     * burst as long as the trace, no idle; all zero: all zero. */
    t = dp_trace_init("measured");
    const double w[] = {0, 0, 9, 9, 9, 0, 0, 0, 0};
    for (int i = 0; i < 9; i++) dp_trace_push(t, DP_SERIES_NET_RX, i * 10.0, w[i], &err);
    for (int i = 0; i < 9; i++) dp_trace_push(t, DP_SERIES_NET_TX, i * 10.0, 5, &err);
    for (int i = 0; i < 9; i++) dp_trace_push(t, DP_SERIES_GPU_MEM_UTIL, i * 10.0, 0, &err);
    dp_series_bursts(&t->s[DP_SERIES_NET_RX], 0.1, &b);
    CHECK(b.n_bursts == 1 && b.n_gaps == 0);
    CHECK_NEAR(b.active_ms, 30, 1e-9);
    CHECK_NEAR(b.idle_ms, (20 + 40) / 2.0, 1e-9);
    dp_series_bursts(&t->s[DP_SERIES_NET_TX], 0.1, &b);
    CHECK(b.n_bursts == 1);
    CHECK_NEAR(b.active_ms, 90, 1e-9);
    CHECK_NEAR(b.idle_ms, 0, 1e-9);
    CHECK_NEAR(b.peak, 5, 1e-9);
    dp_series_bursts(&t->s[DP_SERIES_GPU_MEM_UTIL], 0.1, &b);
    CHECK(b.n_bursts == 0 && b.peak == 0 && b.idle_ms == 0);
    dp_trace_free(t);
}

static void test_smi(void) {
    struct dp_error err = {0};
    /* What nvidia-smi --query-gpu=timestamp,utilization.gpu,utilization.memory,memory.used
     * --format=csv -lms 100 prints, two GPUs interleaved (index column added). */
    const char *p = write_tmp(
        "smi.csv",
        "timestamp, index, utilization.gpu [%], utilization.memory [%], memory.used [MiB]\n"
        "2024/01/31 23:59:59.900, 0, 0 %, 0 %, 1000 MiB\n"
        "2024/01/31 23:59:59.900, 1, 77 %, 7 %, 5 MiB\n"
        "2024/02/01 00:00:00.000, 0, 90 %, 40 %, 3000 MiB\n"
        "2024/02/01 00:00:00.000, 1, 77 %, 7 %, 5 MiB\n"
        "2024/02/01 00:00:00.100, 0, 95 %, 45 %, 3000 MiB\r\n"
        "2024/02/01 00:00:00.100, 1, 77 %, 7 %, 5 MiB\n"
        "\n"
        "2024/02/01 00:00:00.200, 0, 0 %, [N/A], 1000 MiB\n"
        "2024/02/01 00:00:00.300, 0, 0 %, 0 %, 1000 MiB\n");
    struct dp_trace *t = dp_trace_init("measured");
    CHECK(dp_trace_read_any(p, t, &err) == DP_OK);
    CHECK(t->s[DP_SERIES_GPU_UTIL].n == 5);
    CHECK(t->s[DP_SERIES_GPU_MEM_UTIL].n == 4); /* [N/A] skipped */
    CHECK(t->s[DP_SERIES_MEM_USED].n == 5);
    /* Crossing midnight and a month: 100 ms steps. */
    CHECK_NEAR(t->s[DP_SERIES_GPU_UTIL].t_ms[1] - t->s[DP_SERIES_GPU_UTIL].t_ms[0], 100, 1e-6);
    double labels[DP_N_OUTPUTS];
    dp_trace_labels(t, 0, labels, NULL);
    CHECK_NEAR(labels[4], 200, 1e-6); /* gpu_util active: two samples */
    CHECK_NEAR(labels[5], 95, 1e-9);
    CHECK_NEAR(labels[3], (100 + 200) / 2.0, 1e-6);
    dp_trace_free(t);

    /* --format=csv,nounits. */
    p = write_tmp("smi_nounits.csv",
                  "timestamp, utilization.gpu [%], utilization.memory [%], memory.used [MiB]\n"
                  "2024/01/31 12:00:00.000, 10, 5, 100\n2024/01/31 12:00:00.100, 20, 6, 100\n");
    t = dp_trace_init("measured");
    CHECK(dp_trace_read_smi(p, t, &err) == DP_OK);
    CHECK(t->s[DP_SERIES_GPU_UTIL].n == 2 && t->s[DP_SERIES_GPU_UTIL].v[1] == 20);
    dp_trace_free(t);

    /* Malformed lines name file and line. */
    const struct { const char *name, *text, *needle; } bad[] = {
        {"smi_bad1.csv",
         "timestamp, utilization.gpu [%]\n2024/01/31 12:00:00.000, 10 %\n2024/01/31 12:00:00.1, "
         "abc %\n",
         "smi_bad1.csv:3: bad utilization.gpu"},
        {"smi_bad2.csv", "timestamp, utilization.gpu [%]\nyesterday, 10 %\n",
         "smi_bad2.csv:2: bad timestamp"},
        {"smi_bad3.csv", "timestamp, utilization.gpu [%]\n2024/01/31 12:00:00.000, 10 %, 3\n",
         "smi_bad3.csv:2: 3 columns"},
        {"smi_bad4.csv", "timestamp, utilization.gpu [%]\n2024/01/31 12:00:01.000, 10 %\n"
                         "2024/01/31 12:00:00.000, 10 %\n",
         "smi_bad4.csv:3"},
        {"smi_bad5.csv", "timestamp, utilization.gpu [%]\n2024/01/31 12:00:00.000, 140 %\n",
         "smi_bad5.csv:2"},
        {"smi_bad6.csv", "timestamp, utilization.gpu [%]\n", "no samples"},
        {"smi_bad7.csv", "a,b,c\n1,2,3\n", "smi_bad7.csv:1: unknown trace header"},
        {"smi_bad8.csv", "", "smi_bad8.csv:1: empty"},
        /* One sample has no duration: its labels would silently read 0 ms. */
        {"smi_bad9.csv", "timestamp, utilization.gpu [%]\n2024/01/31 12:00:00.000, 50 %\n",
         "smi_bad9.csv:2: only one sample"},
        /* A NaN seconds field is a bad timestamp, not a bad sample. */
        {"smi_bad10.csv", "timestamp, utilization.gpu [%]\n2024/01/31 12:00:nan, 50 %\n",
         "smi_bad10.csv:2: bad timestamp"},
        /* A year too long for an int used to overflow sscanf. */
        {"smi_bad11.csv", "timestamp, utilization.gpu [%]\n99999999999/01/31 12:00:00, 5 %\n",
         "smi_bad11.csv:2: bad timestamp"},
        {"sim_bad1.csv", "t_ms,gpu_util\n0,50\n", "sim_bad1.csv:2: only one sample"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        p = write_tmp(bad[i].name, bad[i].text);
        t = dp_trace_init("measured");
        CHECK(dp_trace_read_any(p, t, &err) != DP_OK);
        CHECK_CONTAINS(err.msg, bad[i].needle);
        dp_trace_free(t);
    }
    t = dp_trace_init("measured");
    CHECK(dp_trace_read_any(test_path("does_not_exist.csv"), t, &err) == DP_ERR_IO);
    /* err is optional: the readers must not read a status back out of it. */
    CHECK(dp_trace_read_any(test_path("smi_bad8.csv"), t, NULL) == DP_ERR_PARSE);
    CHECK(dp_trace_read_smi(test_dir(), t, NULL) == DP_ERR_IO);
    CHECK(dp_trace_read_net(test_dir(), t, NULL) == DP_ERR_IO);
    CHECK(dp_trace_read_sim(test_dir(), t, NULL) == DP_ERR_IO);
    dp_trace_free(t);
}

static void test_net(void) {
    struct dp_error err = {0};
    const char *p = write_tmp("net.csv", "timestamp,rx_bytes,tx_bytes\n"
                                         "1706702400.0,1000000,0\n"
                                         "1706702400.1,1000000,0\n"
                                         "1706702400.2,6000000,2000000\n"
                                         "1706702400.3,6000000,2000000\n");
    struct dp_trace *t = dp_trace_init("measured");
    CHECK(dp_trace_read_any(p, t, &err) == DP_OK);
    CHECK(t->s[DP_SERIES_NET_RX].n == 3);
    CHECK_NEAR(t->s[DP_SERIES_NET_RX].v[1], 50, 1e-6); /* 5 MB in 0.1 s */
    CHECK_NEAR(t->s[DP_SERIES_NET_TX].v[1], 20, 1e-6);
    CHECK_NEAR(t->s[DP_SERIES_NET_RX].v[0], 0, 1e-9);
    dp_trace_free(t);
    p = write_tmp("net_bad.csv", "timestamp,rx_bytes,tx_bytes\n1.0,100,100\n1.1,50,100\n");
    t = dp_trace_init("measured");
    CHECK(dp_trace_read_net(p, t, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "net_bad.csv:3: byte counter went backwards");
    dp_trace_free(t);
    p = write_tmp("net_bad2.csv", "timestamp,rx_bytes,tx_bytes\n1.0,100,100\n1.0,150,100\n");
    t = dp_trace_init("measured");
    CHECK(dp_trace_read_net(p, t, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "net_bad2.csv:3: timestamp does not advance");
    dp_trace_free(t);
    /* Values no counter or clock can hold used to pass as absurd rates. */
    p = write_tmp("net_bad3.csv", "timestamp,rx_bytes,tx_bytes\n1,0,0\n2,1e308,1e308\n");
    t = dp_trace_init("measured");
    CHECK(dp_trace_read_net(p, t, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "net_bad3.csv:3: bad byte counter");
    dp_trace_free(t);
    p = write_tmp("net_bad4.csv", "timestamp,rx_bytes,tx_bytes\n1e305,0,0\n1.5e305,5,5\n");
    t = dp_trace_init("measured");
    CHECK(dp_trace_read_net(p, t, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "net_bad4.csv:2: bad timestamp");
    dp_trace_free(t);
    /* Two counter rows make one rate sample: no duration to measure. */
    p = write_tmp("net_bad5.csv", "timestamp,rx_bytes,tx_bytes\n1,0,0\n2,5,5\n");
    t = dp_trace_init("measured");
    CHECK(dp_trace_read_net(p, t, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "net_bad5.csv:3: need at least three counter samples");
    dp_trace_free(t);
}

static void test_sim_csv(void) {
    struct dp_error err = {0};
    struct dp_trace *a = dp_trace_init("simulated"), *b = dp_trace_init("simulated");
    for (int i = 0; i < 10; i++) {
        double on = (i / 3) % 2 ? 90 : 0;
        dp_trace_push(a, DP_SERIES_GPU_UTIL, i * 100.0, on, &err);
        dp_trace_push(a, DP_SERIES_GPU_MEM_UTIL, i * 100.0, on / 2, &err);
        dp_trace_push(a, DP_SERIES_MEM_USED, i * 100.0, 1234.5, &err);
        dp_trace_push(a, DP_SERIES_NET_RX, i * 100.0, 100 - on, &err);
        dp_trace_push(a, DP_SERIES_NET_TX, i * 100.0, on > 0 ? 3 : 0, &err);
        dp_trace_push(b, DP_SERIES_GPU_UTIL, i * 100.0, 5, &err);
    }
    const struct dp_trace *both[2] = {a, b};
    /* A line break in the comment (a graph's name) must not split the comment line. */
    CHECK(dp_trace_write_sim(both, 2, "simulated by test_trace\ngraph x",
                             test_path("simtrace.csv"), &err) == DP_OK);
    struct dp_trace *r = dp_trace_init("simulated");
    CHECK(dp_trace_read_any(test_path("simtrace.csv"), r, &err) == DP_OK);
    double la[DP_N_OUTPUTS], lr[DP_N_OUTPUTS];
    dp_trace_labels(a, 0, la, NULL);
    dp_trace_labels(r, 0, lr, NULL);
    for (int i = 0; i < DP_N_OUTPUTS; i++) CHECK_NEAR(la[i], lr[i], 1e-6);
    CHECK(r->s[DP_SERIES_GPU_UTIL].n == 10); /* worker 0 only */
    CHECK_NEAR(r->s[DP_SERIES_MEM_USED].v[3], 1234.5, 1e-9);
    dp_trace_free(a);
    dp_trace_free(b);
    dp_trace_free(r);
}

/* Hostile or broken traces that used to be read with exit 0 (issue 17). */
static void test_hostile(void) {
    struct dp_error err = {0};
    /* cut inside its last row: '989.596' was read as 9 */
    const char *p = write_tmp("cut.csv", "t_ms,gpu_util\n0,50\n100,989.596\n200,9");
    struct dp_trace *t = dp_trace_init("measured");
    CHECK(dp_trace_read_any(p, t, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "cut.csv:4: the file ends inside this row (no line end: cut short?)");
    dp_trace_free(t);
    /* a year-0000 clock: idle and active were 6.4e13 ms */
    p = write_tmp("year0.csv", "timestamp, utilization.gpu [%]\n0000/01/01 00:00:00.000, 5 %\n"
                               "2024/02/01 00:00:00.100, 90 %\n");
    t = dp_trace_init("measured");
    CHECK(dp_trace_read_any(p, t, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "year0.csv:2: bad timestamp \"0000/01/01 00:00:00.000\"");
    CHECK_CONTAINS(err.msg, "in 1970 or later");
    dp_trace_free(t);
    /* two GPUs: the first kept and named, --gpu-index's choice, a GPU the file lacks */
    const char *two =
        "timestamp, index, utilization.gpu [%], memory.used [MiB]\n"
        "2024/02/01 00:00:00.000, 0, 5 %, 1 MiB\n2024/02/01 00:00:00.000, 1, 70 %, 2 MiB\n"
        "2024/02/01 00:00:00.100, 0, 90 %, 1 MiB\n2024/02/01 00:00:00.100, 1, 80 %, 2 MiB\n"
        "2024/02/01 00:00:00.200, 0, 5 %, 1 MiB\n2024/02/01 00:00:00.200, 1, 75 %, 2 MiB\n";
    p = write_tmp("two_gpus.csv", two);
    struct dp_trace_file tf;
    CHECK(dp_trace_file_read(p, NULL, &tf, &err) == DP_OK);
    CHECK(tf.n_traces == 1 && !strcmp(tf.gpu, "0") && tf.n_gpus == 2);
    CHECK(tf.traces[0]->s[DP_SERIES_GPU_UTIL].n == 3 && tf.traces[0]->s[DP_SERIES_GPU_UTIL].v[1] == 90);
    dp_trace_file_free(&tf);
    CHECK(dp_trace_file_read(p, "1", &tf, &err) == DP_OK);
    CHECK(!strcmp(tf.gpu, "1") && tf.traces[0]->s[DP_SERIES_GPU_UTIL].v[1] == 80);
    dp_trace_file_free(&tf);
    CHECK(dp_trace_file_read(p, "7", &tf, &err) == DP_ERR_NOT_FOUND);
    CHECK_CONTAINS(err.msg, "two_gpus.csv: no rows of GPU 7 (the file has GPUs 0 and 1)");
    CHECK(tf.n_traces == 0 && !tf.traces);
    /* the same rows without the index column: merged before, refused now */
    p = write_tmp("two_gpus_noindex.csv",
                  "timestamp, utilization.gpu [%]\n"
                  "2024/02/01 00:00:00.000, 5 %\n2024/02/01 00:00:00.000, 70 %\n"
                  "2024/02/01 00:00:00.100, 90 %\n2024/02/01 00:00:00.100, 80 %\n");
    t = dp_trace_init("measured");
    CHECK(dp_trace_read_any(p, t, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "2 of 4 rows repeat the time of the row before: rows of several GPUs?");
    dp_trace_free(t);
    /* one repeated millisecond is one GPU sampled fast, not two GPUs */
    p = write_tmp("one_repeat.csv", "timestamp, utilization.gpu [%]\n"
                                    "2024/02/01 00:00:00.000, 5 %\n2024/02/01 00:00:00.100, 70 %\n"
                                    "2024/02/01 00:00:00.100, 90 %\n2024/02/01 00:00:00.200, 8 %\n");
    t = dp_trace_init("measured");
    CHECK(dp_trace_read_any(p, t, &err) == DP_OK);
    dp_trace_free(t);
    /* a GPU to pick in a file that is not nvidia-smi's */
    p = write_tmp("sim_pick.csv", "t_ms,gpu_util\n0,5\n100,50\n");
    CHECK(dp_trace_file_read(p, "1", &tf, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "not an nvidia-smi CSV: no GPU 1 to pick");
    /* a simulator trace read once: every worker, in order; a worker number out of range */
    p = write_tmp("workers.csv", "worker,t_ms,gpu_util\n0,0,10\n0,100,90\n1,0,20\n1,100,80\n"
                                 "2,0,30\n2,100,70\n");
    CHECK(dp_trace_file_read(p, NULL, &tf, &err) == DP_OK);
    CHECK(tf.n_traces == 3 && tf.traces[2]->s[DP_SERIES_GPU_UTIL].v[1] == 70);
    CHECK(!strcmp(tf.traces[1]->source, "simulated"));
    dp_trace_file_free(&tf);
    p = write_tmp("worker_bad.csv", "worker,t_ms,gpu_util\n0,0,10\n0,100,90\n1024,0,20\n");
    CHECK(dp_trace_file_read(p, NULL, &tf, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "worker_bad.csv:4: bad worker \"1024\" (0 .. 1023)");
}

int main(void) {
    test_bursts();
    test_smi();
    test_net();
    test_sim_csv();
    test_hostile();
    TEST_MAIN_END();
}
