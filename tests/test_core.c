/* test_core.c: the engine core's vocabulary and output helpers: the output table and the
 * derived figures (dp/metrics.h), and JSON output (dp/json_out.h): the one number format, the
 * document text, and the shapes every front end writes. */
#include <locale.h>
#include <math.h>
#include <stdio.h>

#include "dp/json_out.h"
#include "dp/metrics.h"
#include "test.h"

static void test_outputs(void) {
    CHECK(DP_N_OUTPUTS == DP_N_RESOURCES * DP_N_STATS);
    for (int o = 0; o < DP_N_OUTPUTS; o++) {
        char name[64];
        snprintf(name, sizeof name, "%s.%s", dp_outputs[o].resource, dp_outputs[o].stat);
        CHECK(!strcmp(name, dp_outputs[o].name));
        CHECK(dp_output_find(name) == o);
        CHECK(!strcmp(dp_outputs[o].resource, dp_resource_name((enum dp_resource)(o / 3))));
    }
    CHECK(DP_OUT_GPU_UTIL_ACTIVE == DP_OUTPUT(DP_RES_GPU_UTIL, DP_STAT_ACTIVE));
    CHECK(!strcmp(dp_outputs[DP_OUT_GPU_UTIL_ACTIVE].name, "gpu_util.active"));
    CHECK(!strcmp(dp_outputs[DP_OUT_NET_TX_PEAK].unit, "MB/s"));
    CHECK(!strcmp(dp_resource_unit(DP_RES_GPU_MEM_UTIL), "%"));
    CHECK(dp_output_find("nope") == -1 && dp_output_find(NULL) == -1);
    CHECK(!strcmp(dp_resource_name((enum dp_resource)9), "?"));
}

static void test_derive(void) {
    /* gpu_mem_util 10/30/50, gpu_util 40/60/90 ms/%, network 0 */
    double m[DP_N_OUTPUTS] = {10, 30, 50, 40, 60, 90, 0, 0, 0, 0, 0, 0}, d[DP_N_DERIVED];
    struct dp_derive_in in;
    dp_derive_in_init(&in);
    dp_derive(m, &in, d);
    CHECK_NEAR(d[DP_D_ITERATION_MS], 100, 1e-12);
    CHECK(isnan(d[DP_D_THROUGHPUT]) && isnan(d[DP_D_EPOCH_S]) && isnan(d[DP_D_EPOCH_COST]));
    CHECK(isnan(d[DP_D_MEMORY_GB]) && isnan(d[DP_D_NET_MB_PER_ITER]));
    CHECK_NEAR(d[DP_D_MEAN_GPU_UTIL], 90 * 60 / 100.0, 1e-12);
    CHECK_NEAR(d[DP_D_MEAN_GPU_MEM_UTIL], 50 * 30 / 40.0, 1e-12);
    in.batch = 32;
    in.workers = 4;
    in.params = 1e6;
    in.epoch_samples = 12800;
    in.price_per_gpu_hour = 3;
    dp_derive(m, &in, d);
    CHECK_NEAR(d[DP_D_THROUGHPUT], 32 * 4 * 1000 / 100.0, 1e-9);
    CHECK_NEAR(d[DP_D_NET_MB_PER_ITER], 8, 1e-12);
    CHECK_NEAR(d[DP_D_EPOCH_S], 10, 1e-12);
    CHECK_NEAR(d[DP_D_EPOCH_COST], 10 / 3600.0 * 4 * 3, 1e-12);
    /* unknown workers: per worker */
    in.workers = 0;
    dp_derive(m, &in, d);
    CHECK_NEAR(d[DP_D_THROUGHPUT], 320, 1e-9);
    /* utilisation never above 100 */
    m[DP_OUT_GPU_UTIL_PEAK] = 300;
    m[DP_OUT_GPU_UTIL_IDLE] = 0;
    dp_derive(m, &in, d);
    CHECK(d[DP_D_MEAN_GPU_UTIL] == 100);
    /* a direct figure replaces the formula, and what follows from it follows */
    in.workers = 4;
    in.direct[DP_D_ITERATION_MS] = 200;
    in.direct[DP_D_MEMORY_GB] = 5.5;
    dp_derive(m, &in, d);
    CHECK(d[DP_D_ITERATION_MS] == 200 && d[DP_D_MEMORY_GB] == 5.5);
    CHECK_NEAR(d[DP_D_THROUGHPUT], 32 * 4 * 1000 / 200.0, 1e-9);
    CHECK_NEAR(d[DP_D_EPOCH_S], 20, 1e-12);
    /* no outputs: only direct figures and what follows */
    dp_derive(NULL, &in, d);
    CHECK(d[DP_D_ITERATION_MS] == 200 && isnan(d[DP_D_MEAN_GPU_UTIL]));
    CHECK_NEAR(d[DP_D_THROUGHPUT], 640, 1e-9);
    for (int k = 0; k < DP_N_DERIVED; k++)
        CHECK(dp_derived_figures[k].key && dp_derived_figures[k].formula &&
              dp_derived_figures[k].unit && dp_derived_figures[k].label);
    CHECK(!strcmp(dp_derived_figures[DP_D_ITERATION_MS].formula,
                  "(gpu_util.idle + gpu_util.active) / bursts.iterations_per_burst_cycle"));
}

/* A burst cycle (a burst and the idle period after it) against the iteration: gpu_util idle 10
 * and active 30 ms make a 40 ms cycle, so a 20 ms iteration is half a cycle (bursts span 2
 * iterations), a 40 ms one a cycle, an 80 ms one two cycles. */
static void test_bursts(void) {
    double m[DP_N_OUTPUTS] = {0};
    m[DP_OUT_GPU_UTIL_IDLE] = 10;
    m[DP_OUT_GPU_UTIL_ACTIVE] = 30;
    struct dp_bursts_info b = dp_bursts_info(m, 20);
    CHECK(b.iterations_per_cycle == 2.0 && b.span_iterations);
    b = dp_bursts_info(m, 40);
    CHECK(b.iterations_per_cycle == 1.0 && !b.span_iterations);
    b = dp_bursts_info(m, 80);
    CHECK(b.iterations_per_cycle == 0.5 && !b.span_iterations);
    b = dp_bursts_info(m, NAN);
    CHECK(isnan(b.iterations_per_cycle) && !b.span_iterations);
    m[DP_OUT_GPU_UTIL_IDLE] = m[DP_OUT_GPU_UTIL_ACTIVE] = 0;
    b = dp_bursts_info(m, 20);
    CHECK(isnan(b.iterations_per_cycle) && !b.span_iterations);
}

/* Amounts as people type them and the explorer prints them. */
static void test_amounts(void) {
    double x = -1;
    CHECK(dp_amount_parse("1281167", &x) && x == 1281167);
    CHECK(dp_amount_parse("1.28M", &x) && x == 1.28e6);
    CHECK(dp_amount_parse(" 1.2M ", &x) && x == 1.2e6);
    CHECK(dp_amount_parse("50k", &x) && x == 5e4);
    CHECK(dp_amount_parse("2G", &x) && x == 2e9);
    CHECK(dp_amount_parse("3.06", &x) && x == 3.06);
    x = 7;
    CHECK(!dp_amount_parse("", &x) && !dp_amount_parse("M", &x) && !dp_amount_parse("1.2MB", &x));
    CHECK(!dp_amount_parse("1.2 M", &x) && !dp_amount_parse("nan", &x) &&
          !dp_amount_parse("inf", &x) && !dp_amount_parse("1e999", &x) &&
          !dp_amount_parse(NULL, &x) && !dp_amount_parse("12x", &x));
    CHECK(x == 7); /* untouched on failure */
}

static void num_is(double v, const char *want) {
    char buf[32];
    dp_json_num_text(v, buf, sizeof buf);
    if (strcmp(buf, want)) fprintf(stderr, "number %.17g: '%s', want '%s'\n", v, buf, want);
    CHECK(!strcmp(buf, want));
}

static void test_numbers(void) {
    num_is(80, "80");
    num_is(0.1, "0.1");
    num_is(-3, "-3");
    num_is(0, "0");
    num_is(1281167, "1281167");
    num_is(204.881216, "204.881216");
    num_is(57.666666666666664, "57.666666666666664");
    num_is(1e6, "1000000");
    num_is(1.5e-3, "0.0015");
    num_is(1e21, "1e+21");
    num_is(2.5e-9, "2.5e-09");
    num_is(NAN, "null");
    num_is(INFINITY, "null");
    num_is(-INFINITY, "null");
    /* every text reads back as the same double */
    double vals[] = {1.0 / 3, 2.0 / 3, 1e-300, 6.02214076e23, 123456789.123, -0.000123456789};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        char buf[32];
        dp_json_num_text(vals[i], buf, sizeof buf);
        CHECK(strtod(buf, NULL) == vals[i]);
    }
    /* "." whatever the locale says */
    if (setlocale(LC_NUMERIC, "de_DE.UTF-8") || setlocale(LC_NUMERIC, "fr_FR.UTF-8")) {
        num_is(0.25, "0.25");
        num_is(2.5e-9, "2.5e-09");
        setlocale(LC_NUMERIC, "C");
    }
}

static void test_document(void) {
    struct dp_jw *w = dp_jw_new();
    CHECK(w != NULL);
    dp_jw_str(w, "s", "a\"b\\c\n\x01");
    dp_jw_int(w, "i", -7);
    dp_jw_num(w, "n", NAN);
    dp_jw_float(w, "f", 0.1f);
    dp_jw_bool(w, "t", true);
    dp_jw_str(w, "none", NULL);
    dp_jw_array(w, "a");
    dp_jw_num(w, NULL, 1.5);
    dp_jw_object(w, NULL);
    dp_jw_null(w, "x");
    dp_jw_end(w);
    dp_jw_array(w, NULL);
    dp_jw_end(w);
    dp_jw_end(w);
    dp_jw_object(w, "empty");
    dp_jw_end(w);
    dp_jw_fixed(w, "ms", 2.6639764001592994, 3);
    dp_jw_fixed(w, "nan", NAN, 3);
    const char *path = test_path("jw.json");
    struct dp_error err = {0};
    CHECK(dp_jw_save(w, path, &err) == DP_OK);
    dp_jw_free(w);
    char text[512] = "";
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (f) {
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = '\0';
        fclose(f);
    }
    CHECK(!strcmp(text, "{\"s\": \"a\\\"b\\\\c\\n\\u0001\", \"i\": -7, \"n\": null, \"f\": 0.1, "
                        "\"t\": true, \"none\": null, \"a\": [1.5, {\"x\": null}, []], "
                        "\"empty\": {}, \"ms\": 2.664, \"nan\": null}\n"));
    CHECK(dp_jw_save(w = dp_jw_new(), "no/such/dir/x.json", &err) == DP_ERR_IO);
    CHECK_CONTAINS(err.msg, "no/such/dir/x.json");
    dp_jw_free(w);
    CHECK(dp_jw_print(NULL, stdout, "stdout", &err) == DP_ERR_NOMEM);

    /* a stream writes each root element as it is complete */
    f = fopen(path, "w+");
    CHECK(f != NULL);
    if (f) {
        w = dp_jw_new_stream(f, path);
        dp_jw_object(w, NULL);
        dp_jw_int(w, "i", 1);
        dp_jw_end(w);
        fflush(f);
        CHECK(ftell(f) == (long)strlen("[{\"i\": 1}"));
        dp_jw_num(w, NULL, 2.5);
        dp_jw_array(w, NULL);
        dp_jw_end(w);
        CHECK(dp_jw_print(w, f, path, &err) == DP_OK);
        dp_jw_free(w);
        rewind(f);
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = '\0';
        fclose(f);
        CHECK(!strcmp(text, "[{\"i\": 1}, 2.5, []]\n"));
    }

    /* the shapes of outputs and derived figures */
    double m[DP_N_OUTPUTS], d[DP_N_DERIVED];
    for (int o = 0; o < DP_N_OUTPUTS; o++) m[o] = o;
    struct dp_derive_in in;
    dp_derive_in_init(&in);
    in.params = 100;
    dp_derive(m, &in, d);
    w = dp_jw_new();
    dp_jw_outputs(w, "metrics", m);
    dp_jw_derived(w, "derived", d, &in);
    dp_jw_formulas(w, "formulas");
    CHECK(dp_jw_save(w, path, &err) == DP_OK);
    dp_jw_free(w);
    f = fopen(path, "r");
    char big[4096] = "";
    if (f) {
        size_t n = fread(big, 1, sizeof big - 1, f);
        big[n] = '\0';
        fclose(f);
    }
    CHECK_CONTAINS(big, "{\"metrics\": {\"gpu_mem_util\": {\"idle\": 0, \"active\": 1, \"peak\": 2}, "
                        "\"gpu_util\": {\"idle\": 3, \"active\": 4, \"peak\": 5}");
    CHECK_CONTAINS(big, "\"derived\": {\"iteration_ms\": 7, \"throughput\": null, \"workers\": null");
    CHECK_CONTAINS(big, "\"parameters\": 100, \"net_mb_per_iter\": 0.0008,");
    CHECK_CONTAINS(big, "\"formulas\": {\"iteration_ms\": \"(gpu_util.idle + gpu_util.active) / "
                        "bursts.iterations_per_burst_cycle\"");
}

int main(void) {
    test_amounts();
    test_outputs();
    test_derive();
    test_bursts();
    test_numbers();
    test_document();
    TEST_MAIN_END();
}
