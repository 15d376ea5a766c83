/* ds-cli.c: option parsing and dispatch. */
#include "ds-cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ds-attr.h"
#include "ds-config.h"
#include "ds-error.h"
#include "ds-ndarray.h"

int ds_cli_fail(GError *error)
{
  int status = ds_error_exit_status(error);
  g_printerr("dynscope: %s\n", error->message);
  g_error_free(error);
  return status;
}

static gboolean split_assignment(const char *arg, const char *option, char **name, char **value,
                                 GError **error)
{
  const char *eq = strchr(arg, '=');
  if (eq == NULL || eq == arg || eq[1] == '\0') {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "%s '%s': expected NAME=VALUE", option, arg);
    return FALSE;
  }
  *name = g_strndup(arg, (gsize)(eq - arg));
  *value = g_strdup(eq + 1);
  return TRUE;
}

DsSession *ds_cli_open_session(const char *model, const DsCliOptions *options, GError **error)
{
  g_autoptr(DsSession) session = ds_session_new(model, error);
  if (session == NULL)
    return NULL;
  if (options->executor != NULL) {
    static const char *const names[] = {"auto", "static", "dynamic", NULL};
    guint i = 0;
    while (names[i] != NULL && strcmp(names[i], options->executor) != 0)
      i++;
    if (names[i] == NULL) {
      g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                  "--executor %s: expected auto, static or dynamic", options->executor);
      return NULL;
    }
    ds_session_set_executor_choice(session, (DsExecutorChoice)i);
  }
  for (char **s = options->input_shapes; s != NULL && *s != NULL; s++) {
    g_autofree char *name = NULL, *text = NULL;
    DsShape shape;
    if (!split_assignment(*s, "--input-shape", &name, &text, error))
      return NULL;
    if (!ds_session_parse_shape(session, text, &shape, error)) {
      g_prefix_error(error, "--input-shape %s: ", name);
      return NULL;
    }
    if (!ds_session_declare_shape(session, name, &shape, error))
      return NULL;
  }
  for (char **s = options->assumes; s != NULL && *s != NULL; s++)
    if (!ds_session_assume(session, *s, error))
      return NULL;
  for (char **s = options->binds; s != NULL && *s != NULL; s++) {
    g_autofree char *name = NULL, *text = NULL;
    int64_t value;
    if (!split_assignment(*s, "--bind", &name, &text, error))
      return NULL;
    if (!ds_attr_parse_int(text, &value) || value < 0) {
      g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "--bind %s: '%s' is not a size", name, text);
      return NULL;
    }
    if (!ds_session_bind_symbol(session, name, value, error))
      return NULL;
  }
  if (options->params != NULL && !ds_session_feed_params(session, options->params, error))
    return NULL;
  for (char **s = options->inputs; s != NULL && *s != NULL; s++) {
    g_autofree char *name = NULL, *path = NULL;
    if (!split_assignment(*s, "--input", &name, &path, error) ||
        !ds_session_feed_npy(session, name, path, error))
      return NULL;
  }
  return g_steal_pointer(&session);
}

gboolean ds_cli_parse_bytes(const char *text, guint64 *bytes)
{
  char *end;
  double value = g_ascii_strtod(text, &end);
  if (end == text || value < 0)
    return FALSE;
  static const char *const units = "KMGT";
  double scale = 1;
  if (*end != '\0') {
    const char *unit = strchr(units, g_ascii_toupper(*end));
    if (unit == NULL)
      return FALSE;
    for (const char *u = units; u <= unit; u++)
      scale *= 1024;
    end++;
    if (g_ascii_strcasecmp(end, "iB") == 0 || g_ascii_strcasecmp(end, "B") == 0)
      end += strlen(end);
  }
  if (*end != '\0' || value * scale > 1.8e19 || value * scale < 1)
    return FALSE;
  *bytes = (guint64)(value * scale);
  return TRUE;
}

/* "5", "2.5" or "5%": a finite percentage >= 0. */
static gboolean parse_percent(const char *text, double *percent)
{
  char *end;
  double value = g_ascii_strtod(text, &end);
  if (end == text || !isfinite(value) || value < 0)
    return FALSE;
  if (*end == '%')
    end++;
  if (*end != '\0')
    return FALSE;
  *percent = value;
  return TRUE;
}

static const char *summary_text =
  "Modes:\n"
  "  --run MODEL       run a model headless and print a per-node table\n"
  "  --info MODEL      print nodes, ops, inputs, outputs and parameter count\n"
  "  --shapes MODEL    print every tensor's shape as an expression, and the facts\n"
  "  --render MODEL    draw the graph (--svg/--png/--dot OUT), regions and loops as\n"
  "                    clusters, shapes on edges, a profile's overlay (--report, --overlay)\n"
  "  --partition MODEL print the regions a subgraph property makes (--property NAME,\n"
  "                    static-dynamic by default; elementwise) and --save them\n"
  "  --save OUT MODEL  load MODEL and write it back as MXNet JSON\n"
  "  --summary REPORT  print a profile report (--report FILE.json): runs, memory, top ops\n"
  "                    and nodes, regions, bodies and loop iterations\n"
  "  --compare A B     compare two profile reports node by node (B against baseline A);\n"
  "                    --fail-if-slower PCT exits 1 when B is more than PCT% slower\n"
  "  (none)            open the desktop app\n"
  "\n"
  "Exit status: 0 ok, 1 run-time failure, 2 bad input or usage.";

int ds_cli_main(int argc, char **argv, gboolean *wants_gui, char **gui_model)
{
  DsCliOptions options = {.repeat = 1, .threads = 0, .seed = 0, .fail_if_slower = -1};
  char *fail_if_slower = NULL; /* parsed below: GOption's doubles take "-5" or "nan" */
  GOptionEntry entries[] = {
    {"run", 0, 0, G_OPTION_ARG_FILENAME, &options.run_model, "Run MODEL headless", "MODEL"},
    {"info", 0, 0, G_OPTION_ARG_FILENAME, &options.info_model, "Describe MODEL", "MODEL"},
    {"shapes", 0, 0, G_OPTION_ARG_FILENAME, &options.shapes_model,
     "Print every node's output shapes as symbolic expressions, and the facts learned", "MODEL"},
    {"partition", 0, 0, G_OPTION_ARG_FILENAME, &options.partition_model,
     "Partition MODEL into regions and print them (with --save OUT: write the partitioned "
     "graph)", "MODEL"},
    {"property", 0, 0, G_OPTION_ARG_STRING, &options.property,
     "Subgraph property for --partition: static-dynamic (default) or elementwise", "NAME"},
    {"executor", 0, 0, G_OPTION_ARG_STRING, &options.executor,
     "With --run: auto (default: dynamic when an op decides shapes from data), static or "
     "dynamic", "KIND"},
    {"assume", 0, 0, G_OPTION_ARG_STRING_ARRAY, &options.assumes,
     "Add a fact about symbols: 's1>=8', 's1 in [1, 4096]' (repeatable)", "FACT"},
    {"bind", 0, 0, G_OPTION_ARG_STRING_ARRAY, &options.binds,
     "Give a symbol a value (repeatable)", "SYM=INT"},
    {"sweep", 0, 0, G_OPTION_ARG_STRING, &options.sweep,
     "With --run: bind once, then run every size of SYM in one process", "SYM=START:STOP[:STEP]"},
    {"save", 0, 0, G_OPTION_ARG_FILENAME, &options.save_path,
     "Write the model given after the options to OUT as MXNet JSON", "OUT"},
    {"input", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &options.inputs,
     "Feed variable NAME from a .npy file (repeatable)", "NAME=FILE"},
    {"params", 0, 0, G_OPTION_ARG_FILENAME, &options.params, "Feed weights from an MXNet .params file",
     "FILE"},
    {"input-shape", 0, 0, G_OPTION_ARG_STRING_ARRAY, &options.input_shapes,
     "Declare a variable's shape (repeatable)", "NAME=(D0,D1,...)"},
    {"random-inputs", 0, 0, G_OPTION_ARG_NONE, &options.random_inputs,
     "Fill every unfed variable with random data of its inferred shape", NULL},
    {"seed", 0, 0, G_OPTION_ARG_INT64, &options.seed, "Seed for --random-inputs (default 0)", "N"},
    {"save-outputs", 0, 0, G_OPTION_ARG_FILENAME, &options.save_outputs,
     "Write each output as .npy plus outputs.json into DIR", "DIR"},
    {"repeat", 0, 0, G_OPTION_ARG_INT, &options.repeat, "Run N times; times are averaged", "N"},
    {"threads", 0, 0, G_OPTION_ARG_INT, &options.threads,
     "Threads for kernels and BLAS (default: all cores)", "N"},
    {"device", 0, 0, G_OPTION_ARG_STRING, &options.device, "cpu (default) or cuda", "DEVICE"},
    {"json", 0, 0, G_OPTION_ARG_NONE, &options.json, "Print --info as JSON", NULL},
    {"max-memory", 0, 0, G_OPTION_ARG_STRING, &options.max_memory,
     "Refuse plans and tensors over this many bytes (default: 75% of RAM)", "BYTES"},
    {"timeout", 0, 0, G_OPTION_ARG_DOUBLE, &options.timeout_s,
     "Stop a run that takes longer than this many seconds", "SECONDS"},
    {"trace-steps", 0, 0, G_OPTION_ARG_NONE, &options.trace_steps,
     "With --run: print every executed node (frame path, op, output shape), into loops, "
     "branches and regions", NULL},
    {"break", 0, 0, G_OPTION_ARG_STRING_ARRAY, &options.breaks,
     "With --run: stop at SPEC, print the node's inputs and outputs, continue (repeatable; "
     "SPEC is NODE|OP|* [if COND && ...], COND like iter==3, s1>512, nan>0)", "SPEC"},
    {"summary", 0, 0, G_OPTION_ARG_FILENAME, &options.summary_path,
     "Print a profile report written by --report: runs, memory and the top ops and nodes",
     "FILE.json"},
    {"compare", 0, 0, G_OPTION_ARG_FILENAME, &options.compare_path,
     "Compare profile report A (the baseline) with B, given after the options: per-op and "
     "per-node time deltas matched by node key, grouped by output shapes",
     "A.json"},
    {"fail-if-slower", 0, 0, G_OPTION_ARG_STRING, &fail_if_slower,
     "With --compare: exit 1 when B's total time per run is more than PCT percent over A's",
     "PCT"},
    {"report", 0, 0, G_OPTION_ARG_FILENAME, &options.report_path,
     "With --run: write the profile as JSON (docs/profile-report.md)", "FILE.json"},
    {"trace", 0, 0, G_OPTION_ARG_FILENAME, &options.trace_path,
     "With --run: write a Chrome trace (open it in Perfetto)", "FILE.json"},
    {"html", 0, 0, G_OPTION_ARG_FILENAME, &options.html_path,
     "With --run: write a self-contained HTML report", "FILE.html"},
    {"csv", 0, 0, G_OPTION_ARG_FILENAME, &options.csv_path,
     "With --run: write one CSV row per executed node", "FILE.csv"},
    {"max-ms", 0, 0, G_OPTION_ARG_DOUBLE, &options.max_ms,
     "With --run: exit 1 if the median run takes longer", "MS"},
    {"max-peak-bytes", 0, 0, G_OPTION_ARG_STRING, &options.max_peak_bytes,
     "With --run: exit 1 if the peak live memory is larger", "BYTES"},
    {"max-node-ms", 0, 0, G_OPTION_ARG_STRING_ARRAY, &options.max_node_ms,
     "With --run: exit 1 if NODE (a name or path key) takes longer per run (repeatable)",
     "NODE=MS"},
    {"render", 0, 0, G_OPTION_ARG_FILENAME, &options.render_model,
     "Draw MODEL (with --svg, --png or --dot; --partition PROPERTY draws its regions)", "MODEL"},
    {"svg", 0, 0, G_OPTION_ARG_FILENAME, &options.svg_path, "With --render: write SVG", "OUT.svg"},
    {"png", 0, 0, G_OPTION_ARG_FILENAME, &options.png_path, "With --render: write PNG", "OUT.png"},
    {"dot", 0, 0, G_OPTION_ARG_FILENAME, &options.dot_path,
     "With --render: write the laid-out graph in Graphviz's dot language", "OUT.dot"},
    {"overlay", 0, 0, G_OPTION_ARG_STRING, &options.overlay,
     "With --render and --report: colour nodes by time, memory or dynamic output sizes",
     "time|memory|dynamic"},
    {"collapse", 0, 0, G_OPTION_ARG_STRING_ARRAY, &options.collapse,
     "With --render: draw regions and loops as one box: all, none, or an id (repeatable)",
     "all|none|ID"},
    {"weights", 0, 0, G_OPTION_ARG_STRING, &options.weights,
     "With --render: show or hide weights (default: hidden over 200 op nodes)", "show|hide"},
    {"version", 0, 0, G_OPTION_ARG_NONE, &options.version, "Print the version", NULL},
    {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &options.remaining, NULL, "[MODEL]"},
    {NULL},
  };
  g_autoptr(GOptionContext) context = g_option_context_new("- debug and profile dynamic graphs");
  g_option_context_add_main_entries(context, entries, NULL);
  g_option_context_set_summary(context, summary_text);

  GError *error = NULL;
  int status = 0;
  guint64 max_memory = 0;
  *wants_gui = FALSE;
  *gui_model = NULL;
  if (!g_option_context_parse(context, &argc, &argv, &error)) {
    g_printerr("dynscope: %s (see --help)\n", error->message);
    g_error_free(error);
    status = 2;
  } else if (options.version) {
    printf("dynscope %s\n", DS_VERSION);
  } else if (options.max_memory != NULL && !ds_cli_parse_bytes(options.max_memory, &max_memory)) {
    g_printerr("dynscope: --max-memory %s: expected a byte count like 1073741824, 512M or 2G\n",
               options.max_memory);
    status = 2;
  } else if (options.timeout_s < 0 || options.timeout_s > 1e7) {
    g_printerr("dynscope: --timeout %g: expected a number of seconds > 0\n", options.timeout_s);
    status = 2;
  } else if (options.repeat < 1 || options.threads < 0 || options.threads > 256) {
    g_printerr("dynscope: --repeat must be >= 1 and --threads between 0 and 256\n");
    status = 2;
  } else if (options.device != NULL && strcmp(options.device, "cpu") != 0) {
    g_printerr("dynscope: --device %s: this build has no such backend (available: cpu)\n",
               options.device);
    status = 2;
  } else if (fail_if_slower != NULL && !parse_percent(fail_if_slower, &options.fail_if_slower)) {
    g_printerr("dynscope: --fail-if-slower %s: expected a percentage >= 0, like 5 or 2.5\n",
               fail_if_slower);
    status = 2;
  } else if (fail_if_slower != NULL && options.compare_path == NULL) {
    g_printerr("dynscope: --fail-if-slower needs --compare A.json B.json\n");
    status = 2;
  } else if (options.summary_path != NULL && options.compare_path != NULL) {
    g_printerr("dynscope: --summary and --compare are separate modes; give one\n");
    status = 2;
  } else if (options.summary_path != NULL) {
    status = ds_cli_summary(&options);
  } else if (options.compare_path != NULL) {
    status = ds_cli_compare(&options);
  } else if (options.run_model != NULL) {
    if (max_memory > 0)
      ds_memory_set_limit_bytes((gsize)max_memory);
    status = ds_cli_run(&options);
  } else if (options.render_model != NULL) {
    status = ds_cli_render(&options);
  } else if (options.partition_model != NULL) {
    status = ds_cli_partition(&options);
  } else if (options.shapes_model != NULL) {
    status = ds_cli_shapes(&options);
  } else if (options.info_model != NULL) {
    if (max_memory > 0)
      ds_memory_set_limit_bytes((gsize)max_memory);
    status = ds_cli_info(&options);
  } else if (options.save_path != NULL) {
    status = ds_cli_save(&options);
  } else {
    *wants_gui = TRUE;
    if (options.remaining != NULL && options.remaining[0] != NULL)
      *gui_model = g_strdup(options.remaining[0]);
  }

  g_free(options.run_model);
  g_free(options.info_model);
  g_free(options.shapes_model);
  g_free(options.partition_model);
  g_free(options.property);
  g_free(options.executor);
  g_strfreev(options.assumes);
  g_strfreev(options.binds);
  g_free(options.sweep);
  g_free(options.save_path);
  g_strfreev(options.inputs);
  g_strfreev(options.input_shapes);
  g_free(options.params);
  g_free(options.save_outputs);
  g_free(options.device);
  g_free(options.max_memory);
  g_strfreev(options.remaining);
  g_free(options.summary_path);
  g_free(options.compare_path);
  g_free(fail_if_slower);
  g_strfreev(options.breaks);
  g_free(options.report_path);
  g_free(options.render_model);
  g_free(options.svg_path);
  g_free(options.png_path);
  g_free(options.dot_path);
  g_free(options.overlay);
  g_strfreev(options.collapse);
  g_free(options.weights);
  g_free(options.trace_path);
  g_free(options.html_path);
  g_free(options.csv_path);
  g_free(options.max_peak_bytes);
  g_strfreev(options.max_node_ms);
  return status;
}
