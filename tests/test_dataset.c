/* test_dataset.c: driple-dataset/1 round trip (with and without the cost features), the
 * DriplePerf CSV round trip and reader, and clear errors on bad files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp/dataset.h"
#include "test.h"

static struct dp_grouped *tiny_graph(double scale) {
    struct dp_grouped *g = dp_grouped_init("tiny", 3, 2);
    for (int i = 0; i < 9; i++) g->x[i] = scale * (i + 1);
    g->edges[0] = 0; g->edges[1] = 1; g->edges[2] = 1; g->edges[3] = 2;
    g->seed = 42;
    g->batch = 32;
    return g;
}

static void fill(struct dp_dataset *ds) {
    struct dp_error err = {0};
    dp_dataset_init(ds, "V100-P1w2ho-PCIe");
    for (int k = 0; k < 3; k++) {
        struct dp_sample s;
        memset(&s, 0, sizeof s);
        s.graph = (char *)(k == 1 ? "vgg16_b64" : "resnet50_b32");
        s.model = (char *)(k == 1 ? "vgg16" : "resnet50");
        s.batch = k == 1 ? 64 : 32;
        snprintf(s.job.optimizer, sizeof s.job.optimizer, "%s", k == 2 ? "adam" : "sgd");
        snprintf(s.job.precision, sizeof s.job.precision, "fp32");
        snprintf(s.job.data_set, sizeof s.job.data_set, "ImageNet");
        snprintf(s.job.sync, sizeof s.job.sync, "sync");
        snprintf(s.job.job_name, sizeof s.job.job_name, "job,%d \"q\"", k);
        snprintf(s.job.gpu, sizeof s.job.gpu, "V100");
        s.grouped = tiny_graph(k + 1.0);
        for (int o = 0; o < DP_N_OUTPUTS; o++) s.labels[o] = 0.5 + o + 10 * k;
        if (k == 2) s.labels[7] = NAN;
        snprintf(s.source.kind, sizeof s.source.kind, "%s", k == 1 ? "measured" : "simulated");
        snprintf(s.source.where, sizeof s.source.where, "test");
        snprintf(s.source.when, sizeof s.source.when, "2026-11-30T07:40:00Z");
        CHECK(dp_dataset_add_sample(ds, &s, &err) == DP_OK);
        dp_grouped_free(s.grouped);
    }
}

static void test_json_roundtrip(void) {
    struct dp_dataset ds, back;
    struct dp_error err = {0};
    fill(&ds);
    CHECK(ds.n_samples == 3);
    CHECK(dp_dataset_n_trainable(&ds) == 2);
    CHECK(!strcmp(dp_dataset_data_kind(&ds), "mixed"));
    char path[64];
    snprintf(path, sizeof path, "/tmp/driple-ds-%d.json", (int)getpid());
    CHECK(dp_dataset_save_json(&ds, path, &err) == DP_OK);
    CHECK(dp_dataset_load_json(path, &back, &err) == DP_OK);
    CHECK(back.n_samples == 3);
    CHECK(!strcmp(back.setting, "V100-P1w2ho-PCIe"));
    for (int k = 0; k < 3 && k < back.n_samples; k++) {
        const struct dp_sample *a = &ds.samples[k], *b = &back.samples[k];
        CHECK(!strcmp(a->graph, b->graph) && !strcmp(a->model, b->model));
        CHECK(a->batch == b->batch);
        CHECK(!strcmp(a->job.optimizer, b->job.optimizer));
        CHECK(!strcmp(a->job.job_name, b->job.job_name));
        CHECK(!strcmp(a->source.kind, b->source.kind));
        CHECK(!strcmp(a->source.when, b->source.when));
        for (int o = 0; o < DP_N_OUTPUTS; o++)
            CHECK((isnan(a->labels[o]) && isnan(b->labels[o])) || a->labels[o] == b->labels[o]);
        CHECK(b->grouped && b->grouped->n_groups == 3 && b->grouped->n_edges == 2);
        if (b->grouped) {
            CHECK(b->grouped->x[8] == a->grouped->x[8]);
            CHECK(b->grouped->seed == 42 && b->grouped->batch == a->batch);
        }
    }
    /* Merging refuses another setting. */
    struct dp_dataset other;
    dp_dataset_init(&other, "A100-P1w1ho-PCIe");
    CHECK(dp_dataset_merge(&other, &ds, &err) == DP_ERR_INVALID);
    dp_dataset_free(&other);
    dp_dataset_init(&other, NULL);
    CHECK(dp_dataset_merge(&other, &ds, &err) == DP_OK && other.n_samples == 3);
    dp_dataset_free(&other);
    dp_dataset_free(&back);
    dp_dataset_free(&ds);
    unlink(path);
}

static void test_add_rejects(void) {
    struct dp_dataset ds;
    struct dp_error err = {0};
    struct dp_sample s;
    memset(&s, 0, sizeof s);
    dp_dataset_init(&ds, "x");
    snprintf(s.source.kind, sizeof s.source.kind, "guessed");
    CHECK(dp_dataset_add_sample(&ds, &s, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "guessed");
    snprintf(s.source.kind, sizeof s.source.kind, "simulated");
    s.labels[3] = INFINITY;
    CHECK(dp_dataset_add_sample(&ds, &s, &err) == DP_ERR_INVALID);
    CHECK(ds.n_samples == 0);
    dp_dataset_free(&ds);
}

static void bad_json(const char *text, const char *needle) {
    struct dp_dataset ds;
    struct dp_error err = {0};
    CHECK(dp_dataset_parse_json(text, strlen(text), "bad.json", &ds, &err) != DP_OK);
    CHECK_CONTAINS(err.msg, needle);
    CHECK(ds.n_samples == 0 && ds.samples == NULL);
}

#define OUTS                                                                                     \
    "\"outputs\":[\"gpu_mem_util.idle\",\"gpu_mem_util.active\",\"gpu_mem_util.peak\","          \
    "\"gpu_util.idle\",\"gpu_util.active\",\"gpu_util.peak\",\"net_rx.idle\",\"net_rx.active\"," \
    "\"net_rx.peak\",\"net_tx.idle\",\"net_tx.active\",\"net_tx.peak\"]"
#define LABELS "\"labels\":[1,2,3,4,5,6,7,8,9,10,11,12]"
#define SRC "\"source\":{\"kind\":\"simulated\"}"

static void test_json_errors(void) {
    bad_json("{\"format\":\"driple-dataset/2\"}", "bad.json:$.format");
    bad_json("{\"format\":\"driple-dataset/1\",\"samples\":[]", "bad.json:1:");
    bad_json("{\"format\":\"driple-dataset/1\",\"outputs\":[\"a\"],\"samples\":[]}",
             "bad.json:$.outputs");
    bad_json("{\"format\":\"driple-dataset/1\"," OUTS ",\"samples\":[{\"labels\":[1,2]," SRC "}]}",
             "bad.json:$.samples[0].labels");
    bad_json("{\"format\":\"driple-dataset/1\"," OUTS ",\"samples\":[{" LABELS
             ",\"source\":{\"kind\":\"made-up\"}}]}",
             "bad.json:$.samples[0].source.kind");
    bad_json("{\"format\":\"driple-dataset/1\"," OUTS ",\"samples\":[{" LABELS "," SRC "},{" LABELS
             "," SRC ",\"grouped\":{\"groups\":[[1,2,3]],\"edges\":[[0,1]]}}]}",
             "bad.json:$.samples[1].grouped.edges[0]");
    bad_json("{\"format\":\"driple-dataset/1\"," OUTS ",\"samples\":[{" LABELS "," SRC
             ",\"grouped\":{\"groups\":[[1,-2,3]],\"edges\":[]}}]}",
             "bad.json:$.samples[0].grouped.groups[0][1]");
    /* Cost features: every group of a graph has six numbers or none has. */
    bad_json("{\"format\":\"driple-dataset/1\"," OUTS ",\"samples\":[{" LABELS "," SRC
             ",\"grouped\":{\"groups\":[[1,2,3,4,5,6],[1,2,3]],\"edges\":[]}}]}",
             "bad.json:$.samples[0].grouped.groups[1]: expected [tensor_size, ops, type_weight, flops");
    bad_json("{\"format\":\"driple-dataset/1\"," OUTS ",\"samples\":[{" LABELS "," SRC
             ",\"grouped\":{\"groups\":[[1,2,3,4,-5,6]],\"edges\":[]}}]}",
             "bad.json:$.samples[0].grouped.groups[0][4]: bytes");
    bad_json("{\"format\":\"driple-dataset/1\"," OUTS ",\"samples\":[{\"labels\":[1,2,3,4,5,6,7,8,9,10,11,\"x\"]," SRC "}]}",
             "bad.json:$.samples[0].labels[11]");
    /* Null labels are allowed (missing), and a good minimal file loads. */
    const char *good = "{\"format\":\"driple-dataset/1\"," OUTS ",\"samples\":[{\"labels\":[1,2,3,4,5,6,7,8,9,10,11,null]," SRC "}]}";
    struct dp_dataset ds;
    struct dp_error err = {0};
    CHECK(dp_dataset_parse_json(good, strlen(good), "good.json", &ds, &err) == DP_OK);
    CHECK(ds.n_samples == 1 && isnan(ds.samples[0].labels[11]));
    CHECK(dp_dataset_n_trainable(&ds) == 0);
    dp_dataset_free(&ds);
    CHECK(dp_dataset_load_json("/nonexistent/does-not-exist.json", &ds, &err) == DP_ERR_IO);
    CHECK_CONTAINS(err.msg, "does-not-exist.json");
}

static void test_csv(void) {
    struct dp_dataset ds, back;
    struct dp_error err = {0};
    fill(&ds);
    char path[64];
    snprintf(path, sizeof path, "/tmp/driple-ds-%d.csv", (int)getpid());
    CHECK(dp_dataset_save_csv(&ds, path, &err) == DP_OK);
    CHECK(dp_dataset_load_csv(path, "simulated", &back, &err) == DP_OK);
    CHECK(back.n_samples == 3);
    for (int k = 0; k < 3 && k < back.n_samples; k++) {
        const struct dp_sample *a = &ds.samples[k], *b = &back.samples[k];
        CHECK(!strcmp(a->model, b->model));
        CHECK(b->batch == a->batch);
        CHECK(!strcmp(a->job.job_name, b->job.job_name));
        CHECK(b->grouped == NULL);
        for (int o = 0; o < DP_N_OUTPUTS; o++)
            CHECK((isnan(a->labels[o]) && isnan(b->labels[o])) || fabs(a->labels[o] - b->labels[o]) < 1e-6);
    }
    dp_dataset_free(&back);
    dp_dataset_free(&ds);
    unlink(path);

    const char *text =
        "\xEF\xBB\xBFGPU, Model, Data Set, Sync/Async, Hyper-Parameter, Job Name, Resource, avg Idle time, avg Active time, avg Peak consumption\r\n"
        "V100,resnet50,ImageNet,Sync,batch size 64,r50,GPU Util,12.5,80,97\r\n"
        "V100,resnet50,ImageNet,Sync,batch size 64,r50,Network Tx,100,20,\r\n"
        "\n"
        "V100,vgg16,ImageNet,Sync,32,v16,GPU Mem Util,1,2,3\n";
    CHECK(dp_dataset_parse_csv(text, strlen(text), "pub.csv", "measured", &ds, &err) == DP_OK);
    CHECK(ds.n_samples == 2);
    if (ds.n_samples == 2) {
        CHECK(ds.samples[0].batch == 64 && ds.samples[1].batch == 32);
        CHECK(ds.samples[0].labels[3] == 12.5 && ds.samples[0].labels[5] == 97);
        CHECK(ds.samples[0].labels[9] == 100 && isnan(ds.samples[0].labels[11]));
        CHECK(isnan(ds.samples[0].labels[0]));
        CHECK(ds.samples[1].labels[2] == 3);
        CHECK(!strcmp(ds.samples[1].source.kind, "measured"));
        CHECK(!strcmp(ds.samples[1].source.where, "pub.csv"));
    }
    dp_dataset_free(&ds);

    struct {
        const char *text, *needle;
    } bad[] = {
        {"GPU,Model\n", "bad.csv:1: header has 2 columns"},
        {"GPU,Model,Data Set,Sync/Async,Hyper-Parameter,Job Name,Resourze,avg Idle time,avg Active time,avg Peak consumption\n",
         "bad.csv:1: column 7"},
        {"GPU,Model,Data Set,Sync/Async,Hyper-Parameter,Job Name,Resource,avg Idle time,avg Active time,avg Peak consumption\n"
         "V100,m,d,s,h,j,GPU Util,1,2,x\n",
         "bad.csv:2: avg Peak consumption 'x'"},
        {"GPU,Model,Data Set,Sync/Async,Hyper-Parameter,Job Name,Resource,avg Idle time,avg Active time,avg Peak consumption\n"
         "V100,m,d,s,h,j,GPU Util,1,2,3\nV100,m,d,s,h,j,Disk,1,2,3\n",
         "bad.csv:3: Resource 'Disk'"},
        {"GPU,Model,Data Set,Sync/Async,Hyper-Parameter,Job Name,Resource,avg Idle time,avg Active time,avg Peak consumption\n"
         "V100,m,d,s,h,j,GPU Util,1,2,3\nV100,m,d,s,h,j,GPU Util,1,2,3\n",
         "bad.csv:3: a second"},
        {"GPU,Model,Data Set,Sync/Async,Hyper-Parameter,Job Name,Resource,avg Idle time,avg Active time,avg Peak consumption\n"
         "V100,\"m,d,s,h,j,GPU Util,1,2,3\n",
         "bad.csv:2: unterminated quote"},
        {"GPU,Model,Data Set,Sync/Async,Hyper-Parameter,Job Name,Resource,avg Idle time,avg Active time,avg Peak consumption\n"
         "V100,m,d,s,h,j,GPU Util,1,2\n",
         "bad.csv:2: 9 fields"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(dp_dataset_parse_csv(bad[i].text, strlen(bad[i].text), "bad.csv", "measured", &ds, &err) != DP_OK);
        CHECK_CONTAINS(err.msg, bad[i].needle);
        CHECK(ds.n_samples == 0);
    }
    CHECK(dp_dataset_parse_csv(text, strlen(text), "pub.csv", "guess", &ds, &err) == DP_ERR_INVALID);
    CHECK(!strcmp(dp_dataset_resource_name(1), "GPU Utilization"));
}

/* dp_grouped_clone (what add_sample and the explorer's importance pane copy with): a deep copy,
 * member names only when asked for (datasets never store them). */
/* A sample with cost features keeps them through save and load (groups of six numbers), one
 * without stays without; a graph mixing the two group lengths fails naming the group. */
static void test_json_cost(void) {
    struct dp_dataset ds, back;
    struct dp_error err = {0};
    fill(&ds);
    struct dp_grouped *g = ds.samples[0].grouped;
    CHECK(dp_grouped_add_cost(g));
    for (int i = 0; i < 3 * DP_N_COST_FEATURES; i++) g->cost[i] = 1e9 + i;
    char path[64];
    snprintf(path, sizeof path, "/tmp/driple-dsc-%d.json", (int)getpid());
    CHECK(dp_dataset_save_json(&ds, path, &err) == DP_OK);
    CHECK(dp_dataset_load_json(path, &back, &err) == DP_OK);
    CHECK(back.n_samples == 3);
    if (back.n_samples == 3) {
        const struct dp_grouped *a = back.samples[0].grouped, *b = back.samples[1].grouped;
        CHECK(a && a->cost && !memcmp(a->cost, g->cost, 3 * DP_N_COST_FEATURES * sizeof *a->cost));
        CHECK(a && !memcmp(a->x, g->x, 9 * sizeof *a->x));
        CHECK(b && !b->cost && b->x[8] == ds.samples[1].grouped->x[8]);
    }
    dp_dataset_free(&back);
    dp_dataset_free(&ds);
    unlink(path);
}

static void test_grouped_clone(void) {
    struct dp_grouped *g = tiny_graph(1.0);
    const char *names[4] = {"conv", "relu", "pool", "fc"};
    g->member_start = calloc(4, sizeof *g->member_start);
    g->members = calloc(5, sizeof *g->members);
    CHECK(g->member_start && g->members);
    if (!g->member_start || !g->members) {
        dp_grouped_free(g);
        return;
    }
    int starts[4] = {0, 2, 3, 4};
    memcpy(g->member_start, starts, sizeof starts);
    for (int i = 0; i < 4; i++) g->members[i] = strdup(names[i]);
    struct dp_grouped *with = dp_grouped_clone(g, true), *without = dp_grouped_clone(g, false);
    CHECK(with && without);
    if (with && without) {
        CHECK(with->n_groups == 3 && with->n_edges == 2 && with->batch == 32 && with->seed == 42);
        CHECK(!memcmp(with->x, g->x, 9 * sizeof *g->x) && with->x != g->x);
        CHECK(!memcmp(with->edges, g->edges, 4 * sizeof *g->edges));
        CHECK(with->member_start && !memcmp(with->member_start, starts, sizeof starts));
        CHECK(with->members && !strcmp(with->members[3], "fc") && with->members[3] != g->members[3]);
        CHECK(!without->member_start && !without->members && without->x[8] == g->x[8]);
    }
    dp_grouped_free(g);
    dp_grouped_free(with);
    dp_grouped_free(without);
}

int main(void) {
    test_grouped_clone();
    test_json_roundtrip();
    test_json_cost();
    test_add_rejects();
    test_json_errors();
    test_csv();
    TEST_MAIN_END();
}
