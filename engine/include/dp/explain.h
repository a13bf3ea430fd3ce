/* explain.h: which groups drive a prediction. For one metric (any of the 12 outputs, or the
 * iteration time) each group gets a signed attribution, either gradient x input of every feature
 * the inspector reads (the published three, and the optional cost features) back-propagated
 * through the whole inspector, or occlusion (the change when all the group's features are
 * zeroed); importances are |attribution| normalised to sum 1 and ranked. A drill-down
 * spreads each group's importance over its member ops and aggregates it by op type. */
#ifndef DP_EXPLAIN_H
#define DP_EXPLAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "dp/coarsen.h"
#include "dp/graph.h"
#include "dp/grouped.h"
#include "dp/inspector.h"
#include "dp/model.h"
#include "dp/profile.h"
#include "dp/sa.h"
#include "dp/settings.h"
#include "dp/status.h"

/* Metrics: 0..11 are the model outputs (dp_outputs, Driple order); DP_METRIC_ITERATION is
 * the iteration time in ms, defined as gpu_util.idle + gpu_util.active (scaled): in the PS
 * training model one GPU burst plus the idle gap before the next is one iteration. */
#define DP_METRIC_ITERATION DP_N_OUTPUTS
#define DP_N_METRICS        (DP_N_OUTPUTS + 1)

/* "gpu_util.active", ..., "iteration_time"; NULL when out of range. */
const char *dp_metric_name(int metric);
/* Unit of a metric ("ms", "%", "MB/s"); "" when out of range. */
const char *dp_metric_unit(int metric);
/* Index of a metric name (the 12 output names; "iteration_time", "iteration" or "iteration_ms",
 * the name `driple predict` uses for the same figure), or -1. */
int dp_metric_find(const char *name);
/* The metric as a weighted sum of raw outputs: metric = sum_o w[o] * raw[o]. scale (may be NULL
 * = all 1) holds the inspector's label scales so that the metric is in its unit. */
void dp_metric_weights(int metric, const double *scale, float w[DP_N_OUTPUTS]);

enum dp_explain_method { DP_EXPLAIN_GRAD, DP_EXPLAIN_OCCLUSION, DP_EXPLAIN_METHOD_COUNT };
const char *dp_explain_method_name(enum dp_explain_method m); /* "grad", "occlusion" */
bool        dp_explain_method_parse(const char *s, enum dp_explain_method *out);

/* Importance aggregated over one op type. */
struct dp_explain_type {
    const char *op;         /* op type ("Conv2DBackpropFilter"); owned by the dp_explain */
    int         n_ops;      /* ops of this type (in the group, or in the whole graph) */
    double      importance; /* share of the metric's importance carried by these ops */
};

struct dp_explain_group {
    double attribution;              /* signed, in the metric's unit: grad: sum_f grad_f x_f;
                                        occlusion: f(x) - f(x with this group's features zeroed) */
    double feat_attr[DP_N_FEATURES_MAX]; /* grad: grad_f x_f per feature the inspector reads
                                            (the published three, then any cost features; the
                                            rest 0); occlusion: 0 */
    double importance;               /* |attribution| / sum over groups of |attribution| */
    int    rank;                     /* 0 = most important; ties broken by group index */
    /* Drill-down, filled by dp_explain_drill (n_ops = 0 before): member ops as graph node
     * indices (bookkeeping ops folded into the op they feed), most important first, each op's share of the group's importance (sum 1), and
     * the group's op types by importance (importance = group importance x their share). */
    int                     n_ops;
    int                    *ops;
    double                 *op_share;
    int                     n_types;
    struct dp_explain_type *types;
};

struct dp_explain {
    int                      metric;
    enum dp_explain_method   method;
    double                   value;  /* the predicted metric, in its unit */
    int                      n_groups;
    struct dp_explain_group *groups; /* n_groups, in group order */
    int                     *order;  /* n_groups: group indices, most important first */
    /* After dp_explain_drill: every op type of the graph's grouped ops by importance (sum 1 when
     * every group has members), ties by name. */
    int                      n_types;
    struct dp_explain_type  *types;
    /* private: interned op-type strings */
    int                      n_names;
    char                   **names;
};

/* Computes group importances of `metric` for grouped graph g under model m. scale (may be NULL =
 * all 1) holds the label scales (dp_inspector_output(...)->scale). Occlusion predicts once per
 * group, on up to n_threads threads (0 = the number of online CPUs, at most 8, or 1 while each
 * prediction itself runs on several: dp_threads, dp/compute.h); grad is one backward pass. A graph with
 * all-zero attributions gives importance 0 everywhere (ranked by index). Returns a new result
 * owned by the caller (dp_explain_free); DP_ERR_INVALID on a bad metric or method, model errors
 * as they come. */
enum dp_status dp_explain_compute(const struct dp_model *m, const double *scale,
                                  const struct dp_grouped *g, int metric,
                                  enum dp_explain_method method, int n_threads,
                                  struct dp_explain **out, struct dp_error *err);
void dp_explain_free(struct dp_explain *e); /* NULL-safe */
/* dp_explain_compute for an inspector, in the metric's own unit whatever the output transform:
 * the per-output weights are d metric / d raw at g's prediction (dp_inspector_metric_slope; for a
 * log-target inspector a linearisation around the prediction, which ranks groups exactly for
 * grad and to first order for occlusion), and e->value is the predicted metric itself. */
enum dp_status dp_explain_compute_inspector(const struct dp_inspector *insp,
                                            const struct dp_grouped *g, int metric,
                                            enum dp_explain_method method, int n_threads,
                                            struct dp_explain **out, struct dp_error *err);

/* What an explanation through the setting-aware inspector reads: the inspector (borrowed, read
 * only: several threads may share it), the workload's profile at the grouped graph's batch, the
 * setting and its catalog GPU (copies). dp_session_explain_sa fills one for a session. */
struct dp_explain_sa {
    const struct dp_sa_inspector *sa;
    struct dp_profile             profile;
    struct dp_setting             setting;
    struct dp_gpu                 gpu;
};
/* Group importances of `metric` as the setting-aware inspector predicts it for in's setting,
 * by occlusion (that inspector gives no gradients): each group's attribution is the predicted
 * metric minus its prediction with the group's features zeroed (published and cost features),
 * through the body and the head; the profile and the setting stay. e->value is the metric as
 * dp_session_predict gives it (iteration_time: the head's own iteration time) and e->method
 * DP_EXPLAIN_OCCLUSION. One prediction per group, on the calling thread. A new result owned by
 * the caller; DP_ERR_INVALID on a bad metric or an empty graph, the head's errors as they come. */
enum dp_status dp_explain_compute_sa(const struct dp_explain_sa *in, const struct dp_grouped *g,
                                     int metric, struct dp_explain **out, struct dp_error *err);

/* Drill-down: maps g's member names to ops of `graph` and spreads each group's importance over
 * them. The rule: op j of group G has per-feature shares s_jf = x_jf / X_Gf, where x_j = [tensor
 * size at g->batch (or the graph's batch), 1, op-type weight from w] and X_G = sum over the
 * group's ops (features with X_Gf = 0 are skipped). Its share of the group is
 * sum_f |a_Gf| s_jf / sum_f |a_Gf| with a_Gf the group's per-feature grad x input (grad method);
 * for occlusion, or when all a_Gf are 0, the plain mean of s_jf over the features used. Grad x
 * input is linear in each feature, so for the grad method this is the exact decomposition of the
 * per-feature attributions (of the published three: an inspector's cost-feature attributions are
 * spread in the same proportions). Ops nobody tunes (the registry's class none: constants,
 * variables, Identity, NoOp, shape bookkeeping; and variable updates) are folded into the op
 * they feed (dp_op_class; through other such ops; an optimizer update only when they feed
 * nothing else), which may lie in another group; one that feeds no such op (a NoOp) into its
 * group's leading op. Their share is that op's, so the ops and
 * types listed are layers a user can change. An op type's importance is the sum of group
 * importance x op share over its ops. w may be NULL (the type-weight feature is then skipped). Fails with
 * DP_ERR_INVALID when g has no members or a member names no op of graph (naming it). */
enum dp_status dp_explain_drill(struct dp_explain *e, const struct dp_grouped *g,
                                const struct dp_graph *graph, const struct dp_op_weights *w,
                                struct dp_error *err);

#endif
