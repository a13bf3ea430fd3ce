/* app.h: the explorer's model (no curses): the what-if session (dp/session.h: the graph, its
 * partition and features, the catalog and setting list, the inspectors and caches), the current
 * what-if setting, its prediction and the simulator's estimate beside it, the compare rows, the
 * UI state, and a background transfer job. The what-if logic is the session's; this is the UI's
 * state around it. */
#ifndef DRIPLE_APP_H
#define DRIPLE_APP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "dp/coarsen.h"
#include "dp/graph.h"
#include "dp/grouped.h"
#include "dp/inspector.h"
#include "dp/metrics.h"
#include "dp/model.h"
#include "dp/session.h"
#include "dp/settings.h"
#include "dp/status.h"

/* The derived figures (dp/metrics.h) the predict tab lists, in its order. */
#define APP_N_DERIVED_ROWS 7
extern const enum dp_derived app_derived_rows[APP_N_DERIVED_ROWS];

/* Everything known about one setting at the current batch size. */
struct app_pred {
    struct dp_prediction p;           /* the inspector's (p.ok; p.pending: file not loaded yet) */
    struct dp_simulation sim;         /* the simulator's (sim.ok), labelled "simulated" */
    bool                 sim_pending; /* not simulated yet (defer_sims): app_fill_pending will */
    /* The per-setting inspector that made p (dp_session_inspector index; -1: none, or the
     * setting-aware inspector, which the Importance tab explains through for the current
     * setting). Set for the current setting only (app_predict). */
    int                  explain;
};

/* The what-if setting. */
struct app_what {
    int               gpu;       /* index in the catalog */
    enum dp_sync      sync;
    int               ps;        /* remembered under all-reduce (which has none) */
    int               workers;
    enum dp_placement placement; /* homo under all-reduce */
    enum dp_network   network;
    int               machines;  /* 0: dp_setting_default_machines */
    enum dp_precision precision;
    enum dp_framework framework;
};

/* The tabs; what differs between them is in the tab table (tabs.h). */
enum app_tab { APP_TAB_PREDICT, APP_TAB_COMPARE, APP_TAB_GROUPS, APP_TAB_IMPORTANCE,
               APP_TAB_SCALING, APP_TAB_COUNT };

/* Panes of the predict tab that Tab cycles through. */
enum app_pane { APP_PANE_TABLE, APP_PANE_DERIVED, APP_PANE_STRIPS, APP_PANE_COUNT };

enum app_sort { APP_SORT_THRU, APP_SORT_ITER, APP_SORT_COST, APP_SORT_UTIL, APP_SORT_COUNT };
extern const char *const app_sort_names[APP_SORT_COUNT];

/* Compare: every GPU of the catalog at the what-if cluster, every setting of the list, or the
 * what-if GPU and workers under every sync, framework and network. */
enum app_cmp_mode { APP_CMP_GPUS, APP_CMP_SETTINGS, APP_CMP_OPTIONS, APP_CMP_COUNT };

struct app_row {
    char            label[DP_NAME_MAX];
    int             gpu;      /* catalog index */
    int             setting;  /* list index (settings mode) or -1 */
    bool            current;  /* the what-if setting */
    struct dp_setting s;
    struct app_pred p;
};

/* The scaling tab: the what-if setting swept over worker counts and over batch sizes on its
 * GPU. Every point is simulated (in idle frames); the worker sweep is also predicted where an
 * inspector serves the point without extrapolating (the batch sweep would need the graph's
 * features at every batch: predicted at the current batch only). The largest batch that fits
 * in the GPU's memory is found by bisection between the last power of two that fits and the
 * first that does not. */
#define APP_SCALE_WORKERS 7  /* 1, 2, 4, ... 64 */
#define APP_SCALE_BATCHES 16 /* 1, 2, 4, ... up to one past the first out of memory */
struct app_scale_point {
    int64_t  x;                  /* workers, or batch size */
    bool     valid;              /* the setting exists (else note says why) */
    bool     sim_pending, pred_pending; /* waiting for an idle frame */
    struct dp_simulation sim;
    bool     pred_ok;            /* a prediction by an inspector for this very point */
    double   pred_iter, pred_thru;
    char     note[120];
};
struct app_scaling {
    struct dp_setting base;       /* what it sweeps around, at ... */
    int64_t batch;                /* ... this batch size (the worker sweep's) */
    struct app_scale_point workers[APP_SCALE_WORKERS];
    struct app_scale_point batches[APP_SCALE_BATCHES];
    int     n_batches;
    int64_t fits, oom;            /* bisection: the largest batch known to fit, the smallest known
                                     not to (0: none yet); fits + 1 == oom: done */
    bool    fit_known;            /* the bisection is over (or cannot run: note why) */
    char    fit_note[160];
};

/* A line the user is typing (batch size, search, dataset size, price). */
enum app_prompt { APP_PROMPT_NONE, APP_PROMPT_BATCH, APP_PROMPT_SEARCH, APP_PROMPT_DATASET,
                  APP_PROMPT_PRICE, APP_PROMPT_EXPORT,
                  APP_PROMPT_QUIT,      /* y/n: save unsaved transfers before quitting */
                  APP_PROMPT_OVERWRITE  /* y/n: the export's file exists (its name in input) */ };

/* Background transfer of an inspector to the current setting. */
enum app_job_state { APP_JOB_IDLE, APP_JOB_RUNNING, APP_JOB_DONE, APP_JOB_FAILED,
                     APP_JOB_CANCELLED };
struct app_job {
    pthread_mutex_t    mu;
    pthread_t          thread;
    bool               started;   /* a thread exists that needs joining */
    atomic_int         cancel;    /* set by the UI, polled by the worker (dp_train_opts) */
    enum app_job_state state;
    double             progress;  /* 0..1 */
    char               phase[64];
    char               target[DP_NAME_MAX];
    char               msg[256];
    struct dp_inspector *result;  /* owned until picked up by app_tick */
    struct dp_transfer_plan plan; /* the worker's input (app_transfer_start) */
};

struct app {
    /* the what-if session: workload, catalog, setting list, inspectors, caches */
    struct dp_session *ss;
    char               graph_path[512];

    struct app_what  what;
    struct dp_setting cur;              /* made from `what` */
    struct app_pred  pred;

    /* compare */
    enum app_cmp_mode cmp_mode;
    struct app_row   *rows;
    int               n_rows;
    bool              rows_stale;       /* rows predate the last change (built when shown) */
    enum app_sort     sort;
    bool              sort_sim;         /* sort on the simulated figures, not the predicted */
    bool             *marked;           /* per catalog GPU */
    bool              only_marked;      /* every-GPU mode only: the other modes show every row */
    bool              hide_oom;         /* rows out of GPU memory (simulated) are left out */

    /* economics */
    double dataset_size;                /* samples per epoch */
    double price_hour;                  /* $ per GPU-hour for every GPU; NaN: each GPU's catalog
                                           price (dp_session_price) */

    /* scaling tab */
    struct app_scaling scale;

    /* groups tab */
    int          *group_of_node;        /* per graph node: its group, or -1 (not kept) */
    char        (*group_top)[48];       /* per group: its most frequent op types */
    int          *group_ops;            /* per group: op count */

    bool            defer_sims;         /* the UI: uncached simulations (and compare rows' inspector
                                           loads) wait for app_fill_pending, which also preloads
                                           the list's inspector files while idle */

    /* UI */
    enum app_tab  tab;
    enum app_pane pane;
    int           sel[APP_TAB_COUNT];    /* selected row per list tab (compare, groups) */
    int           scroll[APP_TAB_COUNT]; /* first visible row per list */
    int           hscroll[APP_TAB_COUNT]; /* columns a list's long text is scrolled left by */
    int           pane_sel[APP_PANE_COUNT]; /* predict tab: selected row per pane */
    int           page;                 /* visible rows of the current list (set by the loop) */
    int           metric;               /* selected metric for importance (0..12, explain.h) */
    int           imp_select;           /* a group to select in the importance pane, or -1 */
    bool          help;
    int           help_scroll;
    int           help_w, help_h;       /* the help overlay's text area (set by the loop) */
    bool          color, utf8;
    char          search[64];
    int          *hits;                 /* graph node indices of the kept ops matching the search */
    int           n_hits;
    enum app_prompt prompt;
    char          input[256];
    bool          export_csv;           /* the export prompt writes the compare rows as CSV */
    char          status[256];
    bool          status_err;
    void         *imp;                  /* the importance pane's state (view_imp.c; imp_free) */
    void        (*imp_release)(struct app *a); /* frees imp (set with it): app_free calls it
                                                  first, so its thread ends before the
                                                  inspectors it reads are freed */
    bool          dirty;                /* the prediction must be recomputed */

    struct app_job job;
};

/* The importance tab is drawn by tui/views/view_importance.c through the glue in tui/imp.c,
 * which keeps the pane in step with the session's features (dp_session_features_gen),
 * app_inspector(a) and a->metric (dp/explain.h numbering: 0..11 outputs, 12 iteration time). */

struct app_opts {
    const char *graph;          /* NULL: the sample graph */
    const char *settings;       /* NULL: assets/settings/default.json */
    const char *gpus;           /* NULL: assets/gpus.json */
    const char *weights;        /* NULL: assets/op_weights.json */
    int64_t     batch;          /* 0: the graph's exported batch */
    int64_t     exported_batch; /* the batch GRAPH was exported with (--exported-batch); 0: detect */
    const char *setting;        /* the setting to open at: an id (the list's, or any the setting-id
                                   grammar names); NULL: the list's first */
    const char *sa;             /* the setting-aware inspector (dp/sa.h); NULL: the shipped
                                   one, "": none (the list's per-setting inspectors) */
};

/* Loads everything and computes the first prediction. On failure err names the file and place
 * and a is left freeable by app_free. */
enum dp_status app_init(struct app *a, const struct app_opts *o, struct dp_error *err);
/* Stops a running job (the importance pane's included, through imp_release), frees
 * everything; NULL-safe. */
void app_free(struct app *a);

/* ---- what-if changes (each recomputes the prediction; false + status when out of range) ---- */
bool app_gpu_step(struct app *a, int dir);
bool app_workers_step(struct app *a, int dir);
bool app_ps_step(struct app *a, int dir);
bool app_network_step(struct app *a, int dir);
bool app_placement_toggle(struct app *a);
bool app_precision_toggle(struct app *a);
bool app_sync_toggle(struct app *a);       /* parameter servers <-> all-reduce */
bool app_framework_toggle(struct app *a);  /* TensorFlow <-> PyTorch */
/* The setting w names with GPU `gpu` of the catalog (what-if changes, compare rows); false with
 * err set when the combination is invalid. */
bool app_setting_of(const struct app *a, const struct app_what *w, int gpu, struct dp_setting *out,
                    struct dp_error *err);
bool app_batch_step(struct app *a, int dir);       /* doubles / halves */
bool app_batch_set(struct app *a, int64_t batch);  /* recomputes features (not the partition) */
bool app_dataset_set(struct app *a, double samples);
bool app_price_set(struct app *a, double dollars); /* NaN: back to the catalog's prices */

/* Recomputes the prediction and the compare rows if anything changed. */
void app_refresh(struct app *a);
/* Predicts for setting s at the current batch (cached embeddings). */
void app_predict(struct app *a, const struct dp_setting *s, struct app_pred *out);

/* ---- compare ---- */
/* Rebuilds the compare rows if the setting, batch or economics changed since (lazy: the rows are
 * built only while the compare tab shows, or for an export). */
void app_compare_ensure(struct app *a);
void app_compare_mode(struct app *a, enum app_cmp_mode m);
void app_sort_next(struct app *a);
void app_sort_source_toggle(struct app *a); /* predicted <-> simulated figures */
void app_mark_toggle(struct app *a);     /* marks the selected row's GPU */
void app_only_marked_toggle(struct app *a);
void app_hide_oom_toggle(struct app *a);
/* Writes the compare rows (brought up to date) as CSV: a header, then one line per row. */
enum dp_status app_export_csv(struct app *a, const char *path, struct dp_error *err);
/* Makes the selected compare row the what-if setting. */
void app_compare_apply(struct app *a);

/* ---- scaling ---- */
/* Rebuilds the sweeps when the what-if setting or batch changed (their simulations then wait
 * for idle frames, app_fill_pending); cheap otherwise (before each frame of the tab). */
void app_scaling_ensure(struct app *a);
/* True while a sweep has simulations to run. */
bool app_scaling_pending(const struct app *a);
/* Runs pending sweep simulations and bisection steps for about budget_ms; true when one ran. */
bool app_scaling_fill(struct app *a, double budget_ms);

/* ---- UI state ---- */
/* Makes t the current tab; the last tab's message leaves the status line for t's hint. */
void app_tab_set(struct app *a, enum app_tab t);
/* The open prompt's label ("batch size: "); "" when none is open. */
const char *app_prompt_label(const struct app *a);
/* True when the open prompt takes one key (y / n / Esc) rather than a line. */
bool app_prompt_one_key(const struct app *a);
/* What the status line shows: the open prompt (its label, the line typed so far and the keys
 * that end it) or the last message; written into buf (n bytes). */
void app_status_text(const struct app *a, char *buf, size_t n);
void app_select(struct app *a, int row);  /* clamps to the current list */
void app_move(struct app *a, int delta);
int  app_list_len(const struct app *a);   /* rows of the list in the current tab */
void app_search_set(struct app *a, const char *s);
void app_status(struct app *a, bool err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- export ---- */
/* Writes the current prediction (and compare rows) as JSON. */
enum dp_status app_export_json(const struct app *a, const char *path, struct dp_error *err);

/* ---- background transfer ---- */
/* Starts transferring the nearest inspector to the current setting (simulated data), unless a
 * job is running or this setting has its own inspector. */
bool app_transfer_start(struct app *a);
void app_transfer_cancel(struct app *a);
/* Saves the inspector transferred in this session to the current setting, whole and atomically
 * (dp_inspector_save), where dp_inspector_save_path puts it: the path the setting list names
 * when that file does not exist yet, else the user inspector directory (created when missing),
 * where the next start (and `driple predict --setting`) finds it. Its provenance keeps "transfer"
 * and data "simulated". The status line says where, or why not (no transfer, no directory, a
 * write error); true when written (or written already). */
bool app_transfer_save(struct app *a);
/* Saves every unsaved session transfer (the quit prompt's "y"); stops at the first error (in
 * the status line) and returns false then. */
bool app_transfer_save_all(struct app *a);
/* How many session transfers are not saved yet. */
int app_unsaved(const struct app *a);
/* Whether the current prediction's inspector is a session transfer not saved yet. */
bool app_pred_unsaved(const struct app *a);
/* True when simulations, inspector loads or preloads are pending (defer_sims). */
bool app_pending(const struct app *a);
/* Runs pending simulations (the current setting's first, then compare rows) for about budget_ms;
 * re-sorts the rows keeping the selection. True when something changed. */
bool app_fill_pending(struct app *a, double budget_ms);
/* Picks up a finished job (adds the inspector, repredicts); true when the screen must redraw. */
bool app_tick(struct app *a);
/* Copies the job's progress for drawing. */
void app_job_snapshot(const struct app *a, enum app_job_state *st, double *progress,
                      char *phase, size_t n);

/* Groups tab: the group of graph node i (-1 when not kept). */
int app_group_of_op(const struct app *a, int op_index);

/* The per-setting inspector behind the current prediction (NULL when there is none, or the
 * setting-aware inspector made it: the importance view then explains through that one). */
const struct dp_inspector *app_inspector(const struct app *a);
/* ---- the tabs' model: their columns of the tab table (tabs.c) ---- */
int  app_predict_list_len(const struct app *a);     /* the selected pane's rows */
void app_predict_selected(struct app *a, int row);  /* the importance metric, a formula */
int  app_compare_list_len(const struct app *a);
int  app_groups_list_len(const struct app *a);      /* groups, or the ops the search found */

/* Keeps scroll[tab] so that sel[tab] is visible in `page` rows. */
void app_scroll_fit(struct app *a, int page);

#endif
