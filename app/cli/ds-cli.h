/* ds-cli.h: the headless command line (--run, --info, --save ...). */
#pragma once

#include <glib.h>

#include "ds-profiler.h"
#include "ds-session.h"

typedef struct {
  char *run_model;
  char *info_model;
  char *shapes_model;
  char *partition_model;
  char *property;      /* --property for --partition */
  char *executor;      /* auto, static or dynamic */
  char **assumes;      /* facts: "s1>=8" */
  char **binds;        /* SYM=INT */
  char *sweep;         /* SYM=START:STOP[:STEP] */
  char *save_path;
  char **inputs;       /* NAME=FILE.npy */
  gboolean backward;   /* run the backward pass too */
  char **head_grads;   /* with --backward: OUTPUT=FILE.npy, an output's gradient */
  char *recompute;     /* with --backward: what loops keep for it, save or recompute */
  gboolean what_if_recompute; /* --run: the backward pass under each loop policy, compared */
  char **input_shapes; /* NAME=(d0, d1, ...) */
  char *params;
  char *save_outputs;
  char *device;
  int repeat;
  int threads;
  gboolean random_inputs;
  gint64 seed;
  gboolean json;
  char *max_memory;    /* bytes, with an optional K/M/G/T suffix (powers of 1024) */
  double timeout_s;
  gboolean trace_steps; /* --run: print one line per executed node */
  char **breaks;        /* --run: breakpoint specs */
  char *report_path;    /* --run: the profile as JSON (docs/profile-report.md) */
  char *trace_path;     /* --run: Chrome trace event format */
  char *html_path;      /* --run: a self-contained HTML report */
  char *csv_path;       /* --run: one row per executed node */
  double max_ms;        /* --run budget: median run time; <= 0 off */
  char *max_peak_bytes; /* --run budget: peak live bytes (512M, 2G...) */
  char **max_node_ms;   /* --run budgets: NODE=MS, per-run mean time of a node */
  char *render_model;   /* --render MODEL */
  char *svg_path, *png_path, *dot_path;
  char *overlay;        /* --render: time, memory, dynamic (with --report) */
  char **collapse;      /* --render: all, none, or region/loop ids */
  char *weights;        /* --render: show or hide (default: hidden over 200 op nodes) */
  gboolean version;
  gboolean list_ops;     /* --list-ops: the op registry */
  char *summary_path;    /* --summary FILE.json: a profile report */
  char *compare_path;    /* --compare A.json (B.json is the one positional argument) */
  double fail_if_slower; /* --compare: exit 1 when B is this many percent slower; < 0 off */
  char **remaining;    /* positional arguments */
} DsCliOptions;

/* Runs the command line. Returns the exit status: 0 ok, 1 run-time failure, 2 bad input or
 * usage. Sets *wants_gui when no headless mode was asked for (the caller opens the window),
 * and *gui_model (caller frees) to the model named on the command line, if any. */
int ds_cli_main(int argc, char **argv, gboolean *wants_gui, char **gui_model);

/* Modes, each returning an exit status. */
int ds_cli_run(const DsCliOptions *options);
int ds_cli_info(const DsCliOptions *options);
int ds_cli_save(const DsCliOptions *options);
int ds_cli_shapes(const DsCliOptions *options);
int ds_cli_partition(const DsCliOptions *options);
int ds_cli_render(const DsCliOptions *options);
int ds_cli_summary(const DsCliOptions *options);
int ds_cli_compare(const DsCliOptions *options);
int ds_cli_list_ops(const DsCliOptions *options);
/* --run's profiling: whether an option asks for it, writing the reports it asks for, the
 * budgets' syntax (checked before running), and the budgets (0 within, 1 over, 2 bad). */
gboolean ds_cli_profiling_wanted(const DsCliOptions *options);
gboolean ds_cli_write_reports(const DsCliOptions *options, DsProfiler *profiler, int threads,
                              GError **error);
gboolean ds_cli_check_budget_options(const DsCliOptions *options, GError **error);
int ds_cli_check_budgets(const DsCliOptions *options, DsProfiler *profiler, guint64 median_ns,
                         int repeat);
/* --run with --trace-steps or --break: runs the prepared session on the debug cursor. */
int ds_cli_debug_run(const DsCliOptions *options, DsSession *session);

/* Prints "dynscope: <message>" on stderr and returns the error's exit status. */
int ds_cli_fail(GError *error);

/* Parses "1073741824", "512M", "2G", "1.5GiB"; FALSE on anything else. */
gboolean ds_cli_parse_bytes(const char *text, guint64 *bytes);

/* Opens a model and applies --input, --params and --input-shape. */
DsSession *ds_cli_open_session(const char *model, const DsCliOptions *options, GError **error);
