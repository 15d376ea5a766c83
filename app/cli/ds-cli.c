/* ds-cli.c: option parsing and dispatch. */
#include "ds-cli.h"

#include <glib/gi18n.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ds-config.h"
#include "ds-error.h"
#include "ds-memory.h"

/* --device NAME: a compiled-in backend that can run here. The host backend is "cpu"; any
 * other is a device the model's supported regions are placed on. */
static gboolean check_device(const char *name)
{
  if (name == NULL || strcmp(name, "cpu") == 0)
    return TRUE;
  const DsBackend *backend = ds_backend_find(name);
  if (backend == NULL) {
    g_autofree char *names = g_strjoinv(", ", (char **)ds_backend_names());
    g_printerr(_("dynscope: --device %s: this build has no such backend (available: %s)\n"), name,
               names);
    return FALSE;
  }
  const char *why = backend->unavailable != NULL ? backend->unavailable() : NULL;
  if (why != NULL) {
    g_printerr(_("dynscope: --device %s: %s\n"), name, why);
    return FALSE;
  }
  return TRUE;
}

/* The version, then one line per compiled-in backend saying what it finds on this machine. */
static void print_version(void)
{
  printf("dynscope %s\n", DS_VERSION);
  for (const char *const *name = ds_backend_names(); *name != NULL; name++) {
    char line[256];
    ds_backend_find(*name)->describe(line, sizeof line);
    printf("%s\n", line);
  }
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

/* Whether an option of this kind may be given more than once: the arrays (--input, --bind,
 * --assume, --input-shape, --break, --max-node-ms...) collect every value. */
static gboolean takes_many(GOptionArg arg)
{
  return arg == G_OPTION_ARG_STRING_ARRAY || arg == G_OPTION_ARG_FILENAME_ARRAY;
}

/* An option that takes one value, given twice, is a usage error naming the option: GOption
 * keeps the last value without a word, and a script that says --save-outputs twice meant one
 * of them. `args` is the command line as given (parsing rewrites argv); `entries` says which
 * options take a value. Flags without a value may repeat harmlessly. FALSE once the line is
 * printed. */
static gboolean check_repeated_options(const GOptionEntry *entries, char **args)
{
  g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
  for (int i = 1; args[i] != NULL; i++) {
    const char *arg = args[i];
    if (strcmp(arg, "--") == 0)
      break;
    if (!g_str_has_prefix(arg, "--"))
      continue;
    const char *eq = strchr(arg, '=');
    g_autofree char *name =
        eq != NULL ? g_strndup(arg + 2, (gsize)(eq - arg - 2)) : g_strdup(arg + 2);
    const GOptionEntry *entry = NULL;
    for (const GOptionEntry *e = entries; e->long_name != NULL && entry == NULL; e++)
      if (strcmp(e->long_name, name) == 0)
        entry = e;
    if (entry == NULL || entry->arg == G_OPTION_ARG_NONE)
      continue;
    /* Without "=", the value is the next argument: it is no option, even if it looks like one. */
    if (eq == NULL && args[i + 1] != NULL)
      i++;
    if (takes_many(entry->arg))
      continue;
    if (g_hash_table_contains(seen, entry->long_name)) {
      g_printerr(_("dynscope: --%s is given twice, but takes one value\n"), entry->long_name);
      return FALSE;
    }
    g_hash_table_add(seen, (gpointer)entry->long_name);
  }
  return TRUE;
}

/* Translated where --help prints it (g_option_context_set_translation_domain). */
static const char *summary_text =
    /* xgettext:no-c-format */
    N_("Modes:\n"
       "  --run MODEL       run a model headless and print a per-node table\n"
       "  --info MODEL      print nodes, ops, inputs, outputs and parameter count\n"
       "  --shapes MODEL    print every tensor's shape as an expression, and the facts\n"
       "  --render MODEL    draw the graph (--svg/--png/--dot OUT), regions and loops as\n"
       "                    clusters, shapes on edges, a profile's overlay (--report, --overlay)\n"
       "  --partition MODEL print the regions a subgraph property makes (--property NAME,\n"
       "                    static-dynamic by default; elementwise) and --save them\n"
       "  --save OUT MODEL  write MODEL as MXNet JSON (an ONNX model with its weights in\n"
       "                    the .params file beside OUT)\n"
       "  --summary REPORT  print a profile report (--report FILE.json): runs, memory, top ops\n"
       "                    and nodes, regions, bodies and loop iterations\n"
       "  --compare A B     compare two profile reports node by node (B against baseline A);\n"
       "                    --fail-if-slower PCT exits 1 when B is more than PCT% slower\n"
       "  (none)            open the desktop app\n"
       "\n"
       "Exit status: 0 ok, 1 run-time failure, 2 bad input or usage.");

int ds_cli_main(int argc, char **argv, gboolean *wants_gui, char **gui_model)
{
  DsCliOptions options = {.repeat = 1, .threads = 0, .seed = 0, .fail_if_slower = -1};
  char *fail_if_slower = NULL; /* parsed below: GOption's doubles take "-5" or "nan" */
  GOptionEntry entries[] = {
    {"run", 0, 0, G_OPTION_ARG_FILENAME, &options.run_model, N_("Run MODEL headless"),
     N_("MODEL")},
    {"info", 0, 0, G_OPTION_ARG_FILENAME, &options.info_model, N_("Describe MODEL"), N_("MODEL")},
    {"shapes", 0, 0, G_OPTION_ARG_FILENAME, &options.shapes_model,
     N_("Print every node's output shapes as symbolic expressions, and the facts learned"),
     N_("MODEL")},
    {"partition", 0, 0, G_OPTION_ARG_FILENAME, &options.partition_model,
     N_("Partition MODEL into regions and print them (with --save OUT: write the partitioned "
        "graph)"),
     N_("MODEL")},
    {"property", 0, 0, G_OPTION_ARG_STRING, &options.property,
     N_("Subgraph property for --partition: static-dynamic (default) or elementwise"),
     N_("NAME")},
    {"executor", 0, 0, G_OPTION_ARG_STRING, &options.executor,
     N_("With --run: auto (default: dynamic when an op decides shapes from data), static or "
        "dynamic"),
     N_("KIND")},
    {"assume", 0, 0, G_OPTION_ARG_STRING_ARRAY, &options.assumes,
     N_("Add a fact about symbols: 's1>=8', 's1 in [1, 4096]' (repeatable)"), N_("FACT")},
    {"bind", 0, 0, G_OPTION_ARG_STRING_ARRAY, &options.binds,
     N_("Give a symbol a value (repeatable)"), N_("SYM=INT")},
    {"sweep", 0, 0, G_OPTION_ARG_STRING, &options.sweep,
     N_("With --run: bind once, then run every size of SYM in one process"),
     N_("SYM=START:STOP[:STEP]")},
    {"save", 0, 0, G_OPTION_ARG_FILENAME, &options.save_path,
     N_("Write the model given after the options to OUT as MXNet JSON"), N_("OUT")},
    {"input", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &options.inputs,
     N_("Feed variable NAME from a .npy file (repeatable)"), N_("NAME=FILE")},
    {"backward", 0, 0, G_OPTION_ARG_NONE, &options.backward,
     N_("Also run the backward pass: the gradient of every input and weight"), NULL},
    {"head-grad", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &options.head_grads,
     N_("With --backward: the gradient of output NAME from a .npy file instead of ones "
        "(repeatable)"),
     N_("NAME=FILE")},
    {"recompute", 0, 0, G_OPTION_ARG_STRING, &options.recompute,
     N_("With --backward: what the forward pass keeps for the backward pass: every value it "
        "reads (save, the default), all but what elementwise ops make again cheaply (auto), "
        "that and, in loops, only the state each iteration starts from (recompute) or every "
        "K-th state (checkpoint:K)"),
     N_("POLICY")},
    {"what-if-recompute", 0, 0, G_OPTION_ARG_NONE, &options.what_if_recompute,
     N_("With --run: run the backward pass under save, auto, recompute and checkpoint:16 (or "
        "the --recompute checkpoint:K given) and compare peak memory, time and gradients"),
     NULL},
    {"params", 0, 0, G_OPTION_ARG_FILENAME, &options.params,
     N_("Feed weights from an MXNet .params file"), N_("FILE")},
    {"input-shape", 0, 0, G_OPTION_ARG_STRING_ARRAY, &options.input_shapes,
     N_("Declare a variable's shape (repeatable)"), N_("NAME=(D0,D1,...)")},
    {"random-inputs", 0, 0, G_OPTION_ARG_NONE, &options.random_inputs,
     N_("Fill every unfed variable with random data of its inferred shape"), NULL},
    {"seed", 0, 0, G_OPTION_ARG_INT64, &options.seed, N_("Seed for --random-inputs (default 0)"),
     N_("N")},
    {"save-outputs", 0, 0, G_OPTION_ARG_FILENAME, &options.save_outputs,
     N_("Write each output as .npy plus outputs.json into DIR"), N_("DIR")},
    {"repeat", 0, 0, G_OPTION_ARG_INT, &options.repeat, N_("Run N times; times are averaged"),
     N_("N")},
    {"threads", 0, 0, G_OPTION_ARG_INT, &options.threads,
     N_("Threads for kernels and BLAS (default: all cores)"), N_("N")},
    {"device", 0, 0, G_OPTION_ARG_STRING, &options.device, N_("cpu (default) or cuda"),
     N_("DEVICE")},
    {"json", 0, 0, G_OPTION_ARG_NONE, &options.json, N_("Print --info or --list-ops as JSON"),
     NULL},
    {"list-ops", 0, 0, G_OPTION_ARG_NONE, &options.list_ops,
     N_("List every op this build knows: aliases, traits, and the backends with a kernel"), NULL},
    {"max-memory", 0, 0, G_OPTION_ARG_STRING, &options.max_memory,
     /* xgettext:no-c-format */
     N_("Refuse plans and tensors over this many bytes (default: 75% of RAM)"), N_("BYTES")},
    {"timeout", 0, 0, G_OPTION_ARG_DOUBLE, &options.timeout_s,
     N_("Stop a run that takes longer than this many seconds"), N_("SECONDS")},
    {"trace-steps", 0, 0, G_OPTION_ARG_NONE, &options.trace_steps,
     N_("With --run: print every executed node (frame path, op, output shape), into loops, "
        "branches and regions"),
     NULL},
    {"break", 0, 0, G_OPTION_ARG_STRING_ARRAY, &options.breaks,
     N_("With --run: stop at SPEC, print the node's inputs and outputs, continue (repeatable; "
        "SPEC is NODE|OP|* [if COND && ...], COND like iter==3, s1>512, nan>0)"),
     N_("SPEC")},
    {"summary", 0, 0, G_OPTION_ARG_FILENAME, &options.summary_path,
     N_("Print a profile report written by --report: runs, memory and the top ops and nodes"),
     N_("FILE.json")},
    {"compare", 0, 0, G_OPTION_ARG_FILENAME, &options.compare_path,
     N_("Compare profile report A (the baseline) with B, given after the options: per-op and "
        "per-node time deltas matched by node key, grouped by output shapes"),
     N_("A.json")},
    {"fail-if-slower", 0, 0, G_OPTION_ARG_STRING, &fail_if_slower,
     N_("With --compare: exit 1 when B's total time per run is more than PCT percent over A's"),
     N_("PCT")},
    {"report", 0, 0, G_OPTION_ARG_FILENAME, &options.report_path,
     N_("With --run: write the profile as JSON (docs/profile-report.md)"), N_("FILE.json")},
    {"trace", 0, 0, G_OPTION_ARG_FILENAME, &options.trace_path,
     N_("With --run: write a Chrome trace (open it in Perfetto)"), N_("FILE.json")},
    {"html", 0, 0, G_OPTION_ARG_FILENAME, &options.html_path,
     N_("With --run: write a self-contained HTML report"), N_("FILE.html")},
    {"csv", 0, 0, G_OPTION_ARG_FILENAME, &options.csv_path,
     N_("With --run: write one CSV row per executed node"), N_("FILE.csv")},
    {"max-ms", 0, 0, G_OPTION_ARG_DOUBLE, &options.max_ms,
     N_("With --run: exit 1 if the median run takes longer"), N_("MS")},
    {"max-peak-bytes", 0, 0, G_OPTION_ARG_STRING, &options.max_peak_bytes,
     N_("With --run: exit 1 if the peak live memory is larger"), N_("BYTES")},
    {"max-node-ms", 0, 0, G_OPTION_ARG_STRING_ARRAY, &options.max_node_ms,
     N_("With --run: exit 1 if NODE (a name or path key) takes longer per run (repeatable)"),
     N_("NODE=MS")},
    {"render", 0, 0, G_OPTION_ARG_FILENAME, &options.render_model,
     N_("Draw MODEL (with --svg, --png or --dot; --partition PROPERTY draws its regions)"),
     N_("MODEL")},
    {"svg", 0, 0, G_OPTION_ARG_FILENAME, &options.svg_path, N_("With --render: write SVG"),
     N_("OUT.svg")},
    {"png", 0, 0, G_OPTION_ARG_FILENAME, &options.png_path, N_("With --render: write PNG"),
     N_("OUT.png")},
    {"dot", 0, 0, G_OPTION_ARG_FILENAME, &options.dot_path,
     N_("With --render: write the laid-out graph in Graphviz's dot language"), N_("OUT.dot")},
    {"overlay", 0, 0, G_OPTION_ARG_STRING, &options.overlay,
     N_("With --render and --report: colour nodes by time, memory or dynamic output sizes"),
     N_("time|memory|dynamic")},
    {"collapse", 0, 0, G_OPTION_ARG_STRING_ARRAY, &options.collapse,
     N_("With --render: draw regions and loops as one box: all, none, or an id (repeatable)"),
     N_("all|none|ID")},
    {"weights", 0, 0, G_OPTION_ARG_STRING, &options.weights,
     N_("With --render: show or hide weights (default: hidden over 200 op nodes)"),
     N_("show|hide")},
    {"version", 0, 0, G_OPTION_ARG_NONE, &options.version, N_("Print the version"), NULL},
    {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &options.remaining, NULL,
     N_("[MODEL]")},
    {NULL},
  };
  g_autoptr(GOptionContext) context =
      g_option_context_new(N_("- debug and profile dynamic graphs"));
  /* Descriptions, placeholders, the summary and the parameter string above are all looked up
   * in our catalogue when --help prints them. */
  g_option_context_set_translation_domain(context, GETTEXT_PACKAGE);
  g_option_context_add_main_entries(context, entries, NULL);
  g_option_context_set_summary(context, summary_text);

  GError *error = NULL;
  int status = 0;
  guint64 max_memory = 0;
  *wants_gui = FALSE;
  *gui_model = NULL;
  g_auto(GStrv) args = g_strdupv(argv);
  if (!g_option_context_parse(context, &argc, &argv, &error)) {
    g_printerr(_("dynscope: %s (see --help)\n"), error->message);
    g_error_free(error);
    status = 2;
  } else if (!check_repeated_options(entries, args)) {
    status = 2;
  } else if (options.version) {
    print_version();
  } else if (options.max_memory != NULL && !ds_cli_parse_bytes(options.max_memory, &max_memory)) {
    g_printerr("dynscope: --max-memory %s: expected a byte count like 1073741824, 512M or 2G\n",
               options.max_memory);
    status = 2;
  } else if (options.timeout_s < 0 || options.timeout_s > 1e7) {
    g_printerr("dynscope: --timeout %g: expected a number of seconds > 0\n", options.timeout_s);
    status = 2;
  } else if (options.repeat < 1 || options.threads < 0 || options.threads > 256) {
    g_printerr(_("dynscope: --repeat must be >= 1 and --threads between 0 and 256\n"));
    status = 2;
  } else if (!check_device(options.device)) {
    status = 2;
  } else if (fail_if_slower != NULL && !parse_percent(fail_if_slower, &options.fail_if_slower)) {
    g_printerr("dynscope: --fail-if-slower %s: expected a percentage >= 0, like 5 or 2.5\n",
               fail_if_slower);
    status = 2;
  } else if (fail_if_slower != NULL && options.compare_path == NULL) {
    g_printerr("dynscope: --fail-if-slower needs --compare A.json B.json\n");
    status = 2;
  } else if (options.summary_path != NULL && options.compare_path != NULL) {
    g_printerr(_("dynscope: --summary and --compare are separate modes; give one\n"));
    status = 2;
  } else if (options.list_ops) {
    status = ds_cli_list_ops(&options);
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
  g_strfreev(options.head_grads);
  g_free(options.recompute);
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
