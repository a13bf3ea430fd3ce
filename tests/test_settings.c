/* test_settings.c: the GPU catalog and setting lists: the shipped files load, unknown figures
 * stay unknown (and a GPU the simulator cannot run is named), ids format like the paper's, bad
 * files fail naming file and place, the nearest-setting helper prefers the same GPU and
 * interconnect, and the inspector search path (the user directory: where it is, the file names,
 * where a transfer is saved, and that dp_settings_load finds saved files). */
#include <limits.h>
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dp/settings.h"
#include "dp/shipped.h"
#include "test.h"

/* Whether two paths name the same file (by their resolved paths; by text when either does not
 * exist): a list saved into an absolute build directory writes absolute paths. */
static bool same_file(const char *a, const char *b) {
    char ra[PATH_MAX], rb[PATH_MAX];
    if (realpath(a, ra) && realpath(b, rb)) return !strcmp(ra, rb);
    return !strcmp(a, b);
}

static void test_catalog(void) {
    struct dp_gpu_catalog *c = NULL;
    struct dp_error err = {0};
    CHECK(dp_gpu_catalog_load("assets/gpus.json", &c, &err) == DP_OK);
    if (!c) return;
    CHECK(c->n_gpus >= 15);
    const struct dp_gpu *k80 = dp_gpu_find(c, "K80");
    CHECK(k80 && !strcmp(k80->name, "K80"));
    CHECK(k80 && isnan(k80->fp16_tflops)); /* no tensor cores: blank in the CSV */
    CHECK(k80 && k80->sm_count == 0);
    CHECK(k80 && k80->fp32_tflops == 8.74 && k80->fp32_base_tflops == 5.6); /* boost and base */
    const struct dp_gpu *v = dp_gpu_find(c, "V100");
    CHECK(v && !strncmp(v->name, "V100", 4));
    const struct dp_gpu *t = dp_gpu_find(c, "2080Ti");
    CHECK(t && !strcmp(t->name, "RTX2080Ti"));
    const struct dp_gpu *h = dp_gpu_find(c, "h200");
    CHECK(h && h->memory_gb == 141 && h->bandwidth_gbps == 4800 && h->tdp_w == 700 &&
          h->year == 2023); /* blanks the CSV filled since */
    CHECK(h && strstr(h->source, "stas00") != NULL);
    const struct dp_gpu *a = dp_gpu_find(c, "A100-40GB-SXM");
    CHECK(a && a->fp32_tflops == 19.5 && a->fp16_tflops == 312 && a->sm_count == 108);
    CHECK(a && isnan(a->fp32_base_tflops)); /* no base figure read */
    CHECK(dp_gpu_find(c, "NoSuchGPU") == NULL);
    /* prices per GPU-hour with their source and date (tools/gpu_prices.tsv); none is invented:
     * a GPU without a line has none */
    CHECK(k80 && k80->price_per_gpu_hour == 0.9 && strstr(k80->price_source, "p2.xlarge") &&
          !strcmp(k80->price_date, "2023-11"));
    CHECK(h && isnan(h->price_per_gpu_hour) && !strcmp(h->price_source, "no price read") &&
          !h->price_date[0]);
    const struct dp_gpu *h100 = dp_gpu_find(c, "H100-SXM");
    CHECK(h100 && h100->price_per_gpu_hour == 6.88 && k80 &&
          h100->price_per_gpu_hour != k80->price_per_gpu_hour);
    dp_gpu_catalog_free(c);

    /* Bad catalogs. */
    const char *p = write_tmp("bad_gpus.json",
                              "{\"format\":\"driple-gpus/1\",\"gpus\":[{\"name\":\"X\","
                              "\"fp32_tflops\":-3}]}");
    CHECK(dp_gpu_catalog_load(p, &c, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "$.gpus[0].fp32_tflops");
    p = write_tmp("bad_gpus_base.json", "{\"format\":\"driple-gpus/1\",\"gpus\":[{\"name\":"
                                        "\"X\",\"fp32_base_tflops\":\"5.6\"}]}");
    CHECK(dp_gpu_catalog_load(p, &c, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "bad_gpus_base.json:$.gpus[0].fp32_base_tflops");
    /* A figure no GPU has (a unit slip) used to reach the simulator and give all-zero labels. */
    p = write_tmp("bad_gpus3.json", "{\"format\":\"driple-gpus/1\",\"gpus\":[{\"name\":\"X\","
                                    "\"fp32_tflops\":14,\"bandwidth_gbps\":1e300}]}");
    CHECK(dp_gpu_catalog_load(p, &c, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "bad_gpus3.json:$.gpus[0].bandwidth_gbps: 1e+300 is not in");
    p = write_tmp("bad_gpus2.json", "{\"format\":\"driple-gpus/1\",\"gpus\":[{\"name\":\"X\"},"
                                    "{\"name\":\"X\"}]}");
    CHECK(dp_gpu_catalog_load(p, &c, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "appears twice");
    CHECK(dp_gpu_catalog_load(test_path("none.json"), &c, &err) == DP_ERR_IO);
    /* A name that does not fit its field fails rather than being cut; one that just fits loads. */
    char text[256], name[DP_NAME_MAX + 1];
    memset(name, 'N', DP_NAME_MAX);
    name[DP_NAME_MAX] = '\0';
    snprintf(text, sizeof text, "{\"format\":\"driple-gpus/1\",\"gpus\":[{\"name\":\"%s\"}]}",
             name);
    p = write_tmp("bad_gpus4.json", text);
    CHECK(dp_gpu_catalog_load(p, &c, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "bad_gpus4.json:$.gpus[0].name: longer than 63 characters");
    name[DP_NAME_MAX - 1] = '\0';
    snprintf(text, sizeof text, "{\"format\":\"driple-gpus/1\",\"gpus\":[{\"name\":\"%s\"}]}",
             name);
    p = write_tmp("ok_gpus_long.json", text);
    c = NULL;
    CHECK(dp_gpu_catalog_load(p, &c, &err) == DP_OK);
    CHECK(c && c->n_gpus == 1 && strlen(c->gpus[0].name) == DP_NAME_MAX - 1);
    dp_gpu_catalog_free(c);

    /* A GPU the simulator cannot run is named with the catalog file and its index. */
    p = write_tmp("nospec_gpus.json", "{\"format\":\"driple-gpus/1\",\"gpus\":[{\"name\":\"A\","
                                      "\"fp32_tflops\":10,\"bandwidth_gbps\":500},{\"name\":"
                                      "\"B\",\"fp32_tflops\":null,\"bandwidth_gbps\":500}]}");
    CHECK(dp_gpu_catalog_load(p, &c, &err) == DP_OK);
    if (!c) return;
    CHECK(c->path && !strcmp(c->path, p));
    CHECK(dp_gpu_check_sim(c, dp_gpu_find(c, "A"), &err) == DP_OK);
    CHECK(dp_gpu_check_sim(c, dp_gpu_find(c, "B"), &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "nospec_gpus.json:$.gpus[1]: B has no known fp32_tflops");
    dp_gpu_catalog_free(c);
}

/* id with its "-M<m>[x<g>]" suffix cut out, in a static buffer (one of two). */
static const char *without_machines(const char *id) {
    static char bufs[2][DP_ID_MAX];
    static int k;
    char *b = bufs[k++ % 2];
    snprintf(b, DP_ID_MAX, "%s", id);
    for (char *m = strstr(b, "-M"); m; m = strstr(m + 1, "-M"))
        if (isdigit((unsigned char)m[2])) {
            char *e = m + 2;
            while (isdigit((unsigned char)*e) || *e == 'x') e++;
            memmove(m, e, strlen(e) + 1);
            break;
        }
    return b;
}

static void test_ids(void) {
    struct dp_setting s;
    struct dp_error err = {0};
    CHECK(dp_setting_make("V100-PCIe-16GB", 2, 1, DP_NET_PCIE, 0, DP_PLACE_HOMO, DP_PREC_FP32,
                          &s, &err) == DP_OK);
    CHECK(!strcmp(s.id, "V100-P1w2ho-PCIe"));
    CHECK(s.machines == 1);
    CHECK(dp_setting_make("RTX2080Ti", 4, 2, DP_NET_40GBE, 0, DP_PLACE_HETERO, DP_PREC_MIXED, &s,
                          &err) == DP_OK);
    CHECK(!strcmp(s.id, "2080Ti-P2w4he-40GbE-M6x1-mixed")); /* -M on every network between machines */
    CHECK(s.machines == 6);
    /* Hetero inside one machine is refused, so are zero workers. */
    CHECK(dp_setting_make("V100", 2, 1, DP_NET_PCIE, 0, DP_PLACE_HETERO, DP_PREC_FP32, &s,
                          &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "hetero");
    CHECK(dp_setting_make("V100", 0, 1, DP_NET_1GBE, 0, DP_PLACE_HOMO, DP_PREC_FP32, &s, &err) ==
          DP_ERR_INVALID);
    CHECK(dp_setting_make("V100", 2, 1, DP_NET_NVLINK, 3, DP_PLACE_HOMO, DP_PREC_FP32, &s,
                          &err) == DP_ERR_INVALID);

    enum dp_network n;
    CHECK(dp_network_parse("ib-hdr", &n) && n == DP_NET_IB_HDR);
    CHECK(dp_network_parse("1GbE", &n) && n == DP_NET_1GBE);
    CHECK(!dp_network_parse("2GbE", &n));
    CHECK_NEAR(dp_network_bandwidth_gbps(DP_NET_10GBE), 1.25, 1e-12);
    CHECK(dp_network_intra(DP_NET_NVLINK) && !dp_network_intra(DP_NET_100GBE));
    char buf[DP_NAME_MAX];
    dp_gpu_short_name("RTX4090", buf, sizeof buf);
    CHECK(!strcmp(buf, "4090"));
    dp_gpu_short_name("TitanRTX", buf, sizeof buf);
    CHECK(!strcmp(buf, "TitanRTX"));
}

static void test_default_list(void) {
    struct dp_gpu_catalog *c = NULL;
    struct dp_settings *s = NULL;
    struct dp_error err = {0};
    CHECK(dp_gpu_catalog_load("assets/gpus.json", &c, &err) == DP_OK);
    CHECK(dp_settings_load("assets/settings/default.json", c, &s, &err) == DP_OK);
    if (!s || !c) {
        fprintf(stderr, "%s\n", err.msg);
        dp_gpu_catalog_free(c);
        return;
    }
    CHECK(s->n_settings == 52);
    int paper = 0, mixed = 0, ib = 0, ar = 0, ar_nvlink8 = 0, ar_multi = 0, ar_pt = 0, ar_tf = 0;
    int ar_fp32 = 0;
    for (int i = 0; i < s->n_settings; i++) {
        const struct dp_setting *x = &s->settings[i];
        char id[DP_ID_MAX];
        dp_setting_format_id(x, id, sizeof id);
        /* ids follow the scheme: the shipped ids were written before -M<m>x<g> was printed for
         * every network between machines, and mean what they meant */
        if (dp_network_intra(x->network)) CHECK(!strcmp(id, x->id));
        else CHECK(!strcmp(without_machines(id), without_machines(x->id)) && strstr(id, "-M"));
        /* and name the same setting through --setting */
        struct dp_setting back;
        CHECK(dp_setting_parse_id(x->id, c, &back, &err) == DP_OK && !strcmp(back.gpu, x->gpu) &&
              back.sync == x->sync && back.ps == x->ps && back.workers == x->workers &&
              back.network == x->network && back.machines == x->machines &&
              back.placement == x->placement && back.precision == x->precision &&
              back.framework == x->framework);
        if (x->sync == DP_SYNC_ALLREDUCE) {
            ar++;
            ar_nvlink8 += x->network == DP_NET_NVLINK && x->workers == 8 && x->machines == 1;
            ar_multi += x->workers >= 16 && x->workers <= 64 && x->machines == x->workers / 8 &&
                        (x->network == DP_NET_100GBE || x->network == DP_NET_IB_HDR);
            ar_pt += x->framework == DP_FW_PYTORCH;
            ar_tf += x->framework == DP_FW_TENSORFLOW;
            ar_fp32 += x->precision == DP_PREC_FP32;
        }
        const struct dp_gpu *g = dp_gpu_find(c, x->gpu);
        CHECK(g && !isnan(g->fp32_tflops) && !isnan(g->bandwidth_gbps)); /* simulable */
        if (!strncmp(x->gpu, "V100", 4) || !strcmp(x->gpu, "RTX2080Ti") ||
            !strcmp(x->gpu, "TitanRTX"))
            paper++;
        mixed += x->precision == DP_PREC_MIXED;
        ib += x->network == DP_NET_IB_EDR || x->network == DP_NET_IB_HDR;
        CHECK(strstr(x->inspector, "assets/inspectors/") != NULL);
    }
    CHECK(paper == 14);
    CHECK(mixed > 0 && ib > 0);
    /* The all-reduce clusters on current GPUs (issue 12): 8 GPUs in one machine over NVLink,
     * 16-64 over 100GbE or InfiniBand at 8 per machine, PyTorch and TensorFlow, fp32 and mixed. */
    CHECK(ar == 10 && ar_nvlink8 == 4 && ar_multi == 5 && ar_pt == 8 && ar_tf == 2 && ar_fp32 == 2);
    const struct dp_setting *v = dp_settings_find(s, "v100-p1w2ho-pcie");
    CHECK(v && v->workers == 2 && v->ps == 1 && v->network == DP_NET_PCIE);

    /* Nearest: same GPU and interconnect class first. */
    struct dp_setting q;
    CHECK(dp_setting_make("V100-PCIe-16GB", 3, 1, DP_NET_PCIE, 0, DP_PLACE_HOMO, DP_PREC_FP32,
                          &q, &err) == DP_OK);
    const struct dp_setting *near = dp_settings_nearest(s, &q, false);
    CHECK(near && !strncmp(near->id, "V100-", 5) && near->network == DP_NET_PCIE);
    CHECK(dp_setting_make("H100-SXM", 8, 2, DP_NET_IB_HDR, 0, DP_PLACE_HETERO, DP_PREC_MIXED, &q,
                          &err) == DP_OK);
    near = dp_settings_nearest(s, &q, false);
    CHECK(near && !strcmp(near->id, "H100-P2w8he-IB-HDR-mixed"));
    /* With inspector files required, the answer (if any) has a file that exists. */
    const struct dp_setting *with = dp_settings_nearest(s, &q, true);
    if (with) {
        FILE *f = fopen(with->inspector, "r");
        CHECK(f != NULL);
        if (f) fclose(f);
    }

    /* Save and reload. */
    CHECK(dp_settings_save(s, test_path("settings_roundtrip.json"), &err) == DP_OK);
    struct dp_settings *r = NULL;
    CHECK(dp_settings_load(test_path("settings_roundtrip.json"), NULL, &r, &err) == DP_OK);
    CHECK(r && r->n_settings == s->n_settings);
    if (r) CHECK(!strcmp(r->settings[5].id, s->settings[5].id));
    /* Relative inspector paths are rewritten for the new directory: the same files again. */
    if (r) CHECK(same_file(r->settings[5].inspector, s->settings[5].inspector));
    dp_settings_free(r);
    CHECK(dp_settings_save(s, test_path("./rt2.json"), &err) == DP_OK);
    CHECK(dp_settings_load(test_path("rt2.json"), NULL, &r, &err) == DP_OK);
    if (r) { /* "." in the directory: written absolute */
        const char *a = r->settings[5].inspector, *rel = s->settings[5].inspector;
        size_t na = strlen(a), nr = strlen(rel);
        CHECK(a[0] == '/' && na > nr && !strcmp(a + na - nr, rel) && a[na - nr - 1] == '/');
    }
    dp_settings_free(r);
    dp_settings_free(s);
    dp_gpu_catalog_free(c);
}

static void test_bad_lists(void) {
    struct dp_settings *s = NULL;
    struct dp_error err = {0};
    const char *p = write_tmp("bad_set1.json",
                              "{\"format\":\"driple-settings/1\",\"settings\":[{\"gpu\":\"V100\","
                              "\"ps\":1,\"workers\":2,\"network\":\"3GbE\"}]}");
    CHECK(dp_settings_load(p, NULL, &s, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "$.settings[0].network");
    p = write_tmp("bad_set2.json",
                  "{\"format\":\"driple-settings/1\",\"settings\":[{\"gpu\":\"V100\",\"ps\":0,"
                  "\"workers\":2,\"network\":\"PCIe\"}]}");
    CHECK(dp_settings_load(p, NULL, &s, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "$.settings[0].ps");
    p = write_tmp("bad_set3.json",
                  "{\"format\":\"driple-settings/1\",\"settings\":[{\"gpu\":\"V100\",\"ps\":1,"
                  "\"workers\":2,\"network\":\"PCIe\"},{\"gpu\":\"V100\",\"ps\":1,"
                  "\"workers\":2,\"network\":\"PCIe\"}]}");
    CHECK(dp_settings_load(p, NULL, &s, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "appears twice");
    p = write_tmp("bad_set4.json", "{\"format\":\"driple-settings/1\",\"settings\":[{\"gpu\":"
                                   "\"V100\",\"ps\":1,\"workers\":2,\"network\":\"PCIe\","
                                   "\"placement\":\"hetero\"}]}");
    CHECK(dp_settings_load(p, NULL, &s, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "bad_set4.json:$.settings[0]");
    p = write_tmp("bad_set5.json", "{\"format\":\"driple-settings/1\",\"settings\":[{\"gpu\":"
                                   "\"V100\",\"ps\":1,\"workers\":2,");
    CHECK(dp_settings_load(p, NULL, &s, &err) == DP_ERR_PARSE);
    /* Ids differing only in case collide (--setting and dataset file names ignore case), and
     * an id must stay one file name. */
    p = write_tmp("bad_set7.json",
                  "{\"format\":\"driple-settings/1\",\"settings\":[{\"id\":\"a\",\"gpu\":\"V100\","
                  "\"ps\":1,\"workers\":2,\"network\":\"PCIe\"},{\"id\":\"A\",\"gpu\":\"V100\","
                  "\"ps\":1,\"workers\":4,\"network\":\"PCIe\"}]}");
    CHECK(dp_settings_load(p, NULL, &s, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "bad_set7.json:$.settings[1].id: \"A\" appears twice");
    p = write_tmp("bad_set8.json",
                  "{\"format\":\"driple-settings/1\",\"settings\":[{\"id\":\"../up\",\"gpu\":"
                  "\"V100\",\"ps\":1,\"workers\":2,\"network\":\"PCIe\"}]}");
    CHECK(dp_settings_load(p, NULL, &s, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "bad_set8.json:$.settings[0].id");
    struct dp_gpu_catalog *c = NULL;
    CHECK(dp_gpu_catalog_load("assets/gpus.json", &c, &err) == DP_OK);
    p = write_tmp("bad_set6.json", "{\"format\":\"driple-settings/1\",\"settings\":[{\"gpu\":"
                                   "\"Voodoo2\",\"ps\":1,\"workers\":2,\"network\":\"PCIe\"}]}");
    CHECK(dp_settings_load(p, c, &s, &err) == DP_ERR_NOT_FOUND);
    CHECK_CONTAINS(err.msg, "Voodoo2");
    /* Relative inspector paths resolve against the list's directory. */
    p = write_tmp("ok_set.json", "{\"format\":\"driple-settings/1\",\"settings\":[{\"gpu\":"
                                 "\"V100\",\"ps\":1,\"workers\":2,\"network\":\"1GbE\","
                                 "\"inspector\":\"x.json\"}]}");
    CHECK(dp_settings_load(p, c, &s, &err) == DP_OK);
    if (s) {
        CHECK(!strcmp(s->settings[0].inspector, test_path("x.json")));
        CHECK(!strcmp(s->settings[0].id, "V100-P1w2ho-1GbE-M2x1"));
        CHECK(s->settings[0].machines == 2);
        CHECK(!strcmp(s->settings[0].gpu, "V100-PCIe-16GB"));
    }
    dp_settings_free(s);
    dp_gpu_catalog_free(c);
}

static void test_defaults(void) {
    char buf[4096];
    struct dp_error err = {0};
    CHECK(dp_shipped_path("assets/gpus.json", NULL, buf, sizeof buf, &err) == DP_OK);
    CHECK_CONTAINS(buf, "gpus.json");
    CHECK(dp_shipped_path("assets/no/such/asset.json", "--x", buf, sizeof buf, &err) ==
          DP_ERR_NOT_FOUND);
    CHECK_CONTAINS(err.msg, "assets/no/such/asset.json: not found (tried ");
    CHECK_CONTAINS(err.msg, "or pass --x)");
    /* the order: $DRIPLE_ASSETS (assets/ only), then $DRIPLE_HOME, then the working directory */
    CHECK(write_tmp("gpus.json", "{}") != NULL);
    setenv("DRIPLE_ASSETS", test_dir(), 1);
    CHECK(dp_shipped_path("assets/gpus.json", NULL, buf, sizeof buf, &err) == DP_OK);
    CHECK(!strcmp(buf, test_path("gpus.json")));
    unsetenv("DRIPLE_ASSETS");
    setenv("DRIPLE_HOME", test_dir(), 1);
    CHECK(dp_shipped_path("gpus.json", NULL, buf, sizeof buf, &err) == DP_OK);
    CHECK(!strcmp(buf, test_path("gpus.json")));
    CHECK(dp_shipped_path("assets/gpus.json", NULL, buf, sizeof buf, &err) == DP_OK);
    CHECK(!strcmp(buf, "assets/gpus.json"));
    unsetenv("DRIPLE_HOME");
    struct dp_gpu_catalog *c = NULL;
    struct dp_settings *s = NULL;
    CHECK(dp_gpu_catalog_load_default(NULL, &c, &err) == DP_OK);
    CHECK(dp_settings_load_default(NULL, c, &s, &err) == DP_OK);
    CHECK(s && s->n_settings >= 40);
    dp_settings_free(s);
    dp_gpu_catalog_free(c);
}

/* A relative inspector path is joined to the list's directory with "dir/../" collapsed. */
static void test_inspector_path(void) {
    FILE *f = fopen(test_path("settings_rel.json"), "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs("{\"format\": \"driple-settings/1\", \"settings\": [{\"gpu\": \"V100-PCIe-16GB\", "
          "\"ps\": 1, \"workers\": 2, \"placement\": \"homo\", \"network\": \"PCIe\", "
          "\"inspector\": \"../inspectors/x.json\"}]}", f);
    fclose(f);
    struct dp_settings *s = NULL;
    struct dp_error err = {0};
    CHECK(dp_settings_load(test_path("settings_rel.json"), NULL, &s, &err) == DP_OK);
    char want[600];
    snprintf(want, sizeof want, "%s/inspectors/x.json", getenv("BUILD") ? getenv("BUILD") : "build");
    if (s) CHECK(!strcmp(s->settings[0].inspector, want));
    dp_settings_free(s);
}

static bool mkdir_ok(const char *path) { return mkdir(path, 0777) == 0; }

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* The user inspector directory: DRIPLE_INSPECTORS, then XDG_DATA_HOME (absolute only), then
 * HOME; file names carry the full GPU name; a transfer is saved where the list names a missing
 * file, else in the user directory; dp_settings_load finds what was saved there. */
static void test_user_inspectors(void) {
    char buf[1024], tmp[] = "/tmp/driple_test_settings_XXXXXX";
    struct dp_error err = {0};
    CHECK(mkdtemp(tmp) != NULL);
    setenv("DRIPLE_INSPECTORS", "/x/insp", 1);
    setenv("XDG_DATA_HOME", "/xdg", 1);
    setenv("HOME", "/home/u", 1);
    CHECK(dp_user_inspector_dir(buf, sizeof buf) && !strcmp(buf, "/x/insp"));
    setenv("DRIPLE_INSPECTORS", "", 1); /* empty counts as unset */
    CHECK(dp_user_inspector_dir(buf, sizeof buf) && !strcmp(buf, "/xdg/driple/inspectors"));
    setenv("XDG_DATA_HOME", "relative", 1); /* invalid under the XDG spec: ignored */
    CHECK(dp_user_inspector_dir(buf, sizeof buf) &&
          !strcmp(buf, "/home/u/.local/share/driple/inspectors"));
    unsetenv("XDG_DATA_HOME");
    unsetenv("HOME");
    unsetenv("DRIPLE_INSPECTORS");
    CHECK(!dp_user_inspector_dir(buf, sizeof buf) && buf[0] == '\0');
    struct dp_setting s;
    CHECK(dp_setting_make("V100-PCIe-16GB", 3, 1, DP_NET_PCIE, 0, DP_PLACE_HOMO, DP_PREC_FP32, &s,
                          &err) == DP_OK);
    CHECK(!dp_user_inspector_path(&s, buf, sizeof buf));
    setenv("DRIPLE_INSPECTORS", "/x/insp", 1);
    CHECK(dp_user_inspector_dir(buf, 4) == false); /* does not fit */
    CHECK(dp_user_inspector_path(&s, buf, sizeof buf));
    CHECK(!strcmp(buf, "/x/insp/V100-PCIe-16GB-P1w3ho-PCIe.json"));
    /* the GPU's full name tells V100-PCIe from V100-SXM2 (their ids differ too since issue 16:
     * only V100-PCIe-16GB is "V100") */
    struct dp_setting t;
    CHECK(dp_setting_make("V100-SXM2-16GB", 3, 1, DP_NET_PCIE, 0, DP_PLACE_HOMO, DP_PREC_FP32, &t,
                          &err) == DP_OK);
    CHECK(!strcmp(s.id, "V100-P1w3ho-PCIe") && !strcmp(t.id, "V100-SXM2-16GB-P1w3ho-PCIe"));
    dp_setting_file_name(&t, buf, sizeof buf);
    CHECK(!strcmp(buf, "V100-SXM2-16GB-P1w3ho-PCIe.json"));
    CHECK(dp_setting_make("RTX2080Ti", 8, 2, DP_NET_25GBE, 0, DP_PLACE_HETERO, DP_PREC_MIXED, &t,
                          &err) == DP_OK);
    dp_setting_file_name(&t, buf, sizeof buf);
    CHECK(!strcmp(buf, "RTX2080Ti-P2w8he-25GbE-M10x1-mixed.json"));
    CHECK(dp_setting_make("../odd/gpu", 1, 1, DP_NET_PCIE, 0, DP_PLACE_HOMO, DP_PREC_FP32, &t,
                          &err) == DP_OK);
    dp_setting_file_name(&t, buf, sizeof buf);
    CHECK(!strchr(buf, '/') && buf[0] != '.');

    /* a list: V100 w3 names a file that does not exist, V100 w4 one that does, A100 none */
    char list[128], user[128], ins[256], have[128];
    snprintf(list, sizeof list, "%s/list.json", tmp);
    snprintf(user, sizeof user, "%s/user", tmp);
    snprintf(have, sizeof have, "%s/have.json", tmp);
    write_file(have, "{}");
    write_file(list, "{\"format\": \"driple-settings/1\", \"settings\": ["
                     "{\"gpu\": \"V100-PCIe-16GB\", \"ps\": 1, \"workers\": 3, \"network\": \"PCIe\","
                     " \"inspector\": \"missing.json\"},"
                     "{\"gpu\": \"V100-PCIe-16GB\", \"ps\": 1, \"workers\": 4, \"network\": \"PCIe\","
                     " \"inspector\": \"have.json\"},"
                     "{\"gpu\": \"A100-40GB-SXM\", \"ps\": 1, \"workers\": 2, \"network\": \"NVLink\"}]}");
    setenv("DRIPLE_INSPECTORS", user, 1);
    struct dp_settings *l = NULL;
    CHECK(dp_settings_load(list, NULL, &l, &err) == DP_OK);
    if (!l) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    snprintf(ins, sizeof ins, "%s/missing.json", tmp);
    CHECK(!strcmp(l->settings[0].inspector, ins)); /* nothing saved yet: as the list says */
    CHECK(l->settings[2].inspector[0] == '\0');
    /* where transfers are saved: the list's missing file; else the user directory */
    CHECK(dp_inspector_save_path(l, &l->settings[0], buf, sizeof buf) && !strcmp(buf, ins));
    CHECK(dp_inspector_save_path(l, &l->settings[1], buf, sizeof buf));
    snprintf(ins, sizeof ins, "%s/V100-PCIe-16GB-P1w4ho-PCIe.json", user);
    CHECK(!strcmp(buf, ins));
    CHECK(dp_inspector_save_path(l, &l->settings[2], buf, sizeof buf));
    snprintf(ins, sizeof ins, "%s/A100-40GB-SXM-P1w2ho-NVLink.json", user);
    CHECK(!strcmp(buf, ins));
    CHECK(dp_inspector_save_path(NULL, &s, buf, sizeof buf));
    snprintf(ins, sizeof ins, "%s/V100-PCIe-16GB-P1w3ho-PCIe.json", user);
    CHECK(!strcmp(buf, ins));
    dp_settings_free(l);
    /* files saved in the user directory are found on the next load; a file the list names and
     * that exists wins */
    CHECK(mkdir_ok(user));
    char f0[256], f1[256], f2[256];
    snprintf(f0, sizeof f0, "%s/V100-PCIe-16GB-P1w3ho-PCIe.json", user);
    snprintf(f1, sizeof f1, "%s/V100-PCIe-16GB-P1w4ho-PCIe.json", user);
    snprintf(f2, sizeof f2, "%s/A100-40GB-SXM-P1w2ho-NVLink.json", user);
    write_file(f0, "{}");
    write_file(f1, "{}");
    write_file(f2, "{}");
    l = NULL;
    CHECK(dp_settings_load(list, NULL, &l, &err) == DP_OK);
    if (l) {
        CHECK(!strcmp(l->settings[0].inspector, f0));
        CHECK(!strcmp(l->settings[1].inspector, have));
        CHECK(!strcmp(l->settings[2].inspector, f2));
        /* nearest with an inspector file now counts the saved one */
        CHECK(dp_settings_nearest(l, &l->settings[2], true) == &l->settings[2]);
    }
    dp_settings_free(l);
    unsetenv("DRIPLE_INSPECTORS");
    snprintf(buf, sizeof buf, "rm -rf '%s'", tmp);
    CHECK(system(buf) == 0);
}


/* Every GPU of gpu_specs.csv, found by its catalog name, nvidia-smi's name and the calibration
 * tables' names; the new columns load; a catalog whose names overlap is refused. */
static void test_aliases(void) {
    struct dp_gpu_catalog *c = NULL;
    struct dp_error err = {0};
    CHECK(dp_gpu_catalog_load("assets/gpus.json", &c, &err) == DP_OK);
    if (!c) return;
    CHECK(c->n_gpus == 35);
    static const struct {
        const char *query, *name;
    } q[] = {
        {"NVIDIA A100-SXM4-40GB", "A100-40GB-SXM"}, {"Tesla V100-SXM2-16GB", "V100-SXM2-16GB"},
        {"Tesla V100-PCIE-16GB", "V100-PCIe-16GB"}, {"NVIDIA GeForce RTX 2080 Ti", "RTX2080Ti"},
        {"GeForce RTX 2080 Ti", "RTX2080Ti"},       {"NVIDIA H100 80GB HBM3", "H100-SXM"},
        {"NVIDIA H100 PCIe", "H100-PCIe"},          {"NVIDIA A100 80GB PCIe", "A100-PCIe-80GB"},
        {"Tesla K80", "K80"},                       {"NVIDIA TITAN RTX", "TitanRTX"},
        {"Quadro RTX 6000", "QuadroRTX6000"},       {"NVIDIA RTX 6000 Ada Generation", "RTX6000Ada"},
        /* the names ../shared/calibration/throughput_*.csv use */
        {"K80 (AWS p2.8xlarge)", "K80"},            {"K80 (GCE n1-standard-32-k80x8)", "K80"},
        {"P100-SXM2 (DGX-1)", "P100-SXM2"},         {"H100-PCIe-80GB", "H100-PCIe"},
        {"V100-32GB", "V100-PCIe-32GB"},            {"V100-SXM2-16GB (AWS p3.8xlarge)", "V100-SXM2-16GB"},
        {"RTX6000Ada", "RTX6000Ada"},               {"GTX1080Ti", "GTX1080Ti"},
        /* paper-style short ids (setting ids' abbreviations) */
        {"V100", "V100-PCIe-16GB"},                 {"A100", "A100-40GB-SXM"},
        {"4090", "RTX4090"},
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        const struct dp_gpu *g = dp_gpu_find(c, q[i].query);
        if (!g || strcmp(g->name, q[i].name))
            fprintf(stderr, "  %s -> %s (want %s)\n", q[i].query, g ? g->name : "NULL", q[i].name);
        CHECK(g && !strcmp(g->name, q[i].name));
    }
    CHECK(dp_gpu_find(c, "RTX30") == NULL); /* no prefix guesses (issue 30) */
    CHECK(dp_gpu_find(c, "GH2") == NULL);
    /* every name and alias finds its own GPU */
    for (int i = 0; i < c->n_gpus; i++) {
        const struct dp_gpu *g = &c->gpus[i];
        CHECK(dp_gpu_find(c, g->name) == g);
        for (int a = 0; a < g->n_aliases; a++) CHECK(dp_gpu_find(c, g->aliases[a]) == g);
        CHECK(g->devices >= 1 && g->form_factor != DP_FORM_UNKNOWN && g->source[0]);
        CHECK(dp_gpu_generation(g) != DP_GEN_UNKNOWN);
    }
    const struct dp_gpu *k = dp_gpu_find(c, "K80"), *a = dp_gpu_find(c, "A100-PCIe-40GB");
    CHECK(k && k->devices == 2 && isnan(k->nvlink_gbps) && k->pcie_gen == 0 &&
          dp_gpu_generation(k) == DP_GEN_KEPLER);
    CHECK(a && a->nvlink_gbps == 600 && a->pcie_gen == 4 && a->form_factor == DP_FORM_PCIE &&
          dp_gpu_generation(a) == DP_GEN_AMPERE);
    const struct dp_gpu *v = dp_gpu_find(c, "V100-SXM2-16GB");
    CHECK(v && v->form_factor == DP_FORM_SXM && v->bandwidth_gbps == 900);
    dp_gpu_catalog_free(c);

    /* an alias that names another GPU, and a GPU named like another's short id, are refused */
    const char *p = write_tmp("alias_clash.json",
                              "{\"format\":\"driple-gpus/1\",\"gpus\":[{\"name\":\"A-1\"},"
                              "{\"name\":\"B\",\"aliases\":[\"NVIDIA A 1\"]}]}");
    CHECK(dp_gpu_catalog_load(p, &c, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "alias_clash.json:$.gpus[1]: \"NVIDIA A 1\" also names A-1");
    p = write_tmp("short_clash.json",
                  "{\"format\":\"driple-gpus/1\",\"gpus\":[{\"name\":\"V100-PCIe-16GB\"},"
                  "{\"name\":\"v100\"}]}");
    CHECK(dp_gpu_catalog_load(p, &c, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "$.gpus[1]: \"v100\" also names V100-PCIe-16GB");
    p = write_tmp("bad_ff.json", "{\"format\":\"driple-gpus/1\",\"gpus\":[{\"name\":\"X\","
                                 "\"form_factor\":\"OAM\"}]}");
    CHECK(dp_gpu_catalog_load(p, &c, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "$.gpus[0].form_factor: \"OAM\" is not SXM or PCIe");
}

/* One id grammar: every id printed for a catalog GPU parses back to the same setting; the
 * paper's ids keep their meaning; ids that used to name two GPUs name one. */
static void test_id_roundtrip(void) {
    struct dp_gpu_catalog *c = NULL;
    struct dp_error err = {0};
    CHECK(dp_gpu_catalog_load("assets/gpus.json", &c, &err) == DP_OK);
    if (!c) return;
    struct dp_setting s, back;
    static const struct {
        enum dp_sync sync;
        int ps, workers, machines;
        enum dp_placement pl;
        enum dp_network net;
        enum dp_precision prec;
        enum dp_framework fw;
    } k[] = {
        {DP_SYNC_PS, 1, 2, 0, DP_PLACE_HOMO, DP_NET_PCIE, DP_PREC_FP32, DP_FW_TENSORFLOW},
        {DP_SYNC_PS, 4, 8, 0, DP_PLACE_HETERO, DP_NET_IB_HDR, DP_PREC_MIXED, DP_FW_TENSORFLOW},
        {DP_SYNC_PS, 2, 8, 4, DP_PLACE_HOMO, DP_NET_10GBE, DP_PREC_FP32, DP_FW_PYTORCH},
        {DP_SYNC_ALLREDUCE, 0, 8, 0, DP_PLACE_HOMO, DP_NET_NVLINK, DP_PREC_MIXED, DP_FW_PYTORCH},
        {DP_SYNC_ALLREDUCE, 0, 64, 0, DP_PLACE_HOMO, DP_NET_IB_EDR, DP_PREC_FP32, DP_FW_TENSORFLOW},
        {DP_SYNC_ALLREDUCE, 0, 16, 4, DP_PLACE_HOMO, DP_NET_100GBE, DP_PREC_MIXED, DP_FW_PYTORCH},
    };
    int n_ids = 0;
    char seen[35 * 6][DP_NAME_MAX];
    for (int g = 0; g < c->n_gpus; g++)
        for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
            memset(&s, 0, sizeof s);
            snprintf(s.gpu, sizeof s.gpu, "%s", c->gpus[g].name);
            s.sync = k[i].sync, s.ps = k[i].ps, s.workers = k[i].workers;
            s.machines = k[i].machines, s.placement = k[i].pl, s.network = k[i].net;
            s.precision = k[i].prec, s.framework = k[i].fw;
            CHECK(dp_setting_finish(&s, &err) == DP_OK);
            memset(&back, 0, sizeof back);
            bool ok = dp_setting_parse_id(s.id, c, &back, &err) == DP_OK &&
                      dp_setting_same_cluster(&s, &back) && !strcmp(s.id, back.id);
            if (!ok) fprintf(stderr, "  %s: %s\n", s.id, err.msg);
            CHECK(ok);
            /* and no other setting prints the same id */
            int same = 0;
            for (int j = 0; j < n_ids; j++) same += !strcasecmp(seen[j], s.id);
            CHECK(same == 0);
            if (n_ids < (int)(sizeof seen / sizeof seen[0])) memcpy(seen[n_ids++], s.id, DP_NAME_MAX);
        }
    /* the paper's ids mean what they meant */
    CHECK(dp_setting_parse_id("V100-P1w2ho-PCIe", c, &s, &err) == DP_OK);
    CHECK(!strcmp(s.gpu, "V100-PCIe-16GB") && s.sync == DP_SYNC_PS && s.ps == 1 &&
          s.workers == 2 && s.placement == DP_PLACE_HOMO && s.network == DP_NET_PCIE &&
          s.machines == 1 && s.precision == DP_PREC_FP32 && s.framework == DP_FW_TENSORFLOW);
    CHECK(dp_setting_parse_id("2080Ti-P2w4he-40GbE-mixed", c, &s, &err) == DP_OK);
    CHECK(!strcmp(s.gpu, "RTX2080Ti") && s.machines == 6 && s.precision == DP_PREC_MIXED);
    /* issue 16: A100-80GB's and V100-SXM2's ids no longer read as another GPU's */
    CHECK(dp_setting_make("A100-PCIe-80GB", 2, 1, DP_NET_PCIE, 0, DP_PLACE_HOMO, DP_PREC_FP32, &s,
                          &err) == DP_OK);
    CHECK(!strcmp(s.id, "A100-PCIe-80GB-P1w2ho-PCIe"));
    CHECK(dp_setting_parse_id(s.id, c, &back, &err) == DP_OK && !strcmp(back.gpu, "A100-PCIe-80GB"));
    /* all-reduce ids, suffixes in any case, aliases for the GPU */
    CHECK(dp_setting_parse_id("A100-AR8-NVLink", c, &s, &err) == DP_OK);
    CHECK(s.sync == DP_SYNC_ALLREDUCE && s.ps == 0 && s.workers == 8 && s.machines == 1 &&
          !strcmp(s.gpu, "A100-40GB-SXM"));
    CHECK(dp_setting_parse_id("h100-ar32-ib-hdr-PyTorch-MIXED", c, &s, &err) == DP_OK);
    CHECK(s.machines == 4 && s.framework == DP_FW_PYTORCH && s.precision == DP_PREC_MIXED &&
          !strcmp(s.id, "H100-AR32-IB-HDR-M4x8-pytorch-mixed"));
    CHECK(dp_setting_parse_id("A100-80GB-SXM-AR16-100GbE-M4", c, &s, &err) == DP_OK);
    CHECK(s.machines == 4 && !strcmp(s.id, "A100-80GB-SXM-AR16-100GbE-M4x4"));
    CHECK(dp_setting_parse_id("NVIDIA A100-SXM4-80GB-AR2-NVLink", c, &s, &err) == DP_OK);
    CHECK(!strcmp(s.gpu, "A100-80GB-SXM") && !strcmp(s.id, "A100-80GB-SXM-AR2-NVLink"));
    /* bad ids say why */
    CHECK(dp_setting_parse_id("V100-X1-PCIe", c, &s, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "is not a setting id");
    CHECK(dp_setting_parse_id("V100-P1w2ho-3GbE", c, &s, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "network 3GbE: unknown network; did you mean 1GbE");
    CHECK(dp_setting_parse_id("Z999-AR2-NVLink", c, &s, &err) == DP_ERR_NOT_FOUND);
    CHECK_CONTAINS(err.msg, "no GPU 'Z999'");
    CHECK(dp_setting_parse_id("V100-AR32-PCIe", c, &s, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "32 GPUs in one machine; a machine holds at most 16");
    dp_gpu_catalog_free(c);
}

/* Sync and framework: defaults, checks, the GPU-per-machine limit, and the settings JSON. */
static void test_sync_framework(void) {
    struct dp_setting s;
    struct dp_error err = {0};
    enum dp_sync sy;
    enum dp_framework fw;
    CHECK(dp_sync_parse("replicated", &sy) && sy == DP_SYNC_ALLREDUCE);
    CHECK(dp_sync_parse("PS", &sy) && sy == DP_SYNC_PS && !dp_sync_parse("ring", &sy));
    CHECK(dp_framework_parse("torch", &fw) && fw == DP_FW_PYTORCH && !dp_framework_parse("jax", &fw));
    CHECK(!strcmp(dp_sync_name(DP_SYNC_ALLREDUCE), "allreduce"));
    CHECK(!strcmp(dp_framework_name(DP_FW_PYTORCH), "pytorch"));
    /* today 64 workers fit "1 machine": no longer */
    CHECK(dp_setting_make("V100-PCIe-16GB", 64, 1, DP_NET_PCIE, 0, DP_PLACE_HOMO, DP_PREC_FP32, &s,
                          &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "64 workers on 1 machine(s) put 64 GPUs in one machine");
    CHECK(dp_setting_make("V100-PCIe-16GB", 16, 1, DP_NET_PCIE, 0, DP_PLACE_HOMO, DP_PREC_FP32, &s,
                          &err) == DP_OK);
    CHECK(dp_setting_make("V100-PCIe-16GB", 34, 1, DP_NET_10GBE, 2, DP_PLACE_HOMO, DP_PREC_FP32,
                          &s, &err) == DP_ERR_INVALID);
    /* hetero: the PS machine holds no worker */
    CHECK(dp_setting_make("V100-PCIe-16GB", 32, 1, DP_NET_10GBE, 3, DP_PLACE_HETERO, DP_PREC_FP32,
                          &s, &err) == DP_OK);
    CHECK(dp_setting_gpus_per_machine(&s) == 16);
    CHECK(dp_setting_make("V100-PCIe-16GB", 33, 1, DP_NET_10GBE, 3, DP_PLACE_HETERO, DP_PREC_FP32,
                          &s, &err) == DP_ERR_INVALID);
    /* all-reduce: no PS, 8 GPUs per machine by default */
    memset(&s, 0, sizeof s);
    strcpy(s.gpu, "H100-SXM");
    s.sync = DP_SYNC_ALLREDUCE;
    s.workers = 64;
    s.network = DP_NET_IB_HDR;
    s.ps = 3;                       /* dropped */
    s.placement = DP_PLACE_HETERO;  /* dropped */
    CHECK(dp_setting_finish(&s, &err) == DP_OK);
    CHECK(s.ps == 0 && s.placement == DP_PLACE_HOMO && s.machines == 8 &&
          !strcmp(s.id, "H100-AR64-IB-HDR-M8x8"));
    s.ps = 1;
    CHECK(dp_setting_check(&s, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "all-reduce has no parameter servers");
    CHECK(dp_setting_default_machines(DP_SYNC_ALLREDUCE, 4, 0, DP_NET_25GBE, DP_PLACE_HOMO) == 2);
    CHECK(dp_setting_default_machines(DP_SYNC_ALLREDUCE, 8, 0, DP_NET_NVLINK, DP_PLACE_HOMO) == 1);

    /* the JSON: optional fields, old files unchanged, saved and read back */
    struct dp_settings *l = NULL;
    const char *p = write_tmp("sync_set.json",
                              "{\"format\":\"driple-settings/1\",\"settings\":["
                              "{\"gpu\":\"V100\",\"ps\":1,\"workers\":2,\"network\":\"PCIe\"},"
                              "{\"gpu\":\"A100\",\"sync\":\"allreduce\",\"workers\":16,"
                              "\"network\":\"IB-HDR\",\"framework\":\"pytorch\"}]}");
    CHECK(dp_settings_load(p, NULL, &l, &err) == DP_OK);
    if (l) {
        CHECK(l->settings[0].sync == DP_SYNC_PS && l->settings[0].framework == DP_FW_TENSORFLOW);
        CHECK(!strcmp(l->settings[0].id, "V100-P1w2ho-PCIe"));
        CHECK(l->settings[1].sync == DP_SYNC_ALLREDUCE && l->settings[1].ps == 0 &&
              l->settings[1].machines == 2 && !strcmp(l->settings[1].id, "A100-AR16-IB-HDR-M2x8-pytorch"));
        CHECK(dp_settings_save(l, test_path("sync_rt.json"), &err) == DP_OK);
        struct dp_settings *r = NULL;
        CHECK(dp_settings_load(test_path("sync_rt.json"), NULL, &r, &err) == DP_OK);
        CHECK(r && r->n_settings == 2 && dp_setting_same_cluster(&r->settings[1], &l->settings[1]));
        dp_settings_free(r);
    }
    dp_settings_free(l);
    p = write_tmp("sync_bad1.json", "{\"format\":\"driple-settings/1\",\"settings\":[{\"gpu\":"
                                    "\"A100\",\"sync\":\"allreduce\",\"ps\":2,\"workers\":4,"
                                    "\"network\":\"NVLink\"}]}");
    CHECK(dp_settings_load(p, NULL, &l, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "sync_bad1.json:$.settings[0].ps");
    p = write_tmp("sync_bad2.json", "{\"format\":\"driple-settings/1\",\"settings\":[{\"gpu\":"
                                    "\"A100\",\"sync\":\"ring\",\"workers\":4,\"network\":"
                                    "\"NVLink\"}]}");
    CHECK(dp_settings_load(p, NULL, &l, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "$.settings[0].sync: \"ring\" is not ps or allreduce");
    p = write_tmp("sync_bad3.json", "{\"format\":\"driple-settings/1\",\"settings\":[{\"gpu\":"
                                    "\"A100\",\"ps\":1,\"workers\":4,\"network\":\"NVLink\","
                                    "\"framework\":\"jax\"}]}");
    CHECK(dp_settings_load(p, NULL, &l, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "$.settings[0].framework jax: unknown framework");
}

int main(void) {
    /* an empty user inspector directory: a real one must not change what the tests see */
    setenv("DRIPLE_INSPECTORS", "/nonexistent/driple-inspectors", 1);
    test_user_inspectors();
    setenv("DRIPLE_INSPECTORS", "/nonexistent/driple-inspectors", 1);
    test_inspector_path();
    test_defaults();
    test_catalog();
    test_ids();
    test_aliases();
    test_id_roundtrip();
    test_sync_framework();
    test_default_list();
    test_bad_lists();
    TEST_MAIN_END();
}
