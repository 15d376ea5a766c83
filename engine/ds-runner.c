/* ds-runner.c: the runner interface (ds-runner.h) and its two implementations, each a table
 * of functions over one executor. The only file above the executors that names them. */
#include "ds-runner.h"

#include "ds-dynamic-executor.h"

typedef struct {
  gboolean learns_sizes;
  void (*free)(gpointer exec);
  gboolean (*bind)(gpointer exec, const DsNode *variable, const DsTensor *value, GError **error);
  gboolean (*resize)(gpointer exec, const DsGraphShapes *shapes, GError **error);
  gboolean (*run)(gpointer exec, GError **error);
  void (*set_hooks)(gpointer exec, const DsExecutorHooks *hooks, gpointer data);
  void (*set_deadline)(gpointer exec, gint64 deadline_us);
  const DsTensor *(*get_output)(gconstpointer exec, guint i);
  const DsTensor *(*get_entry)(gconstpointer exec, guint entry);
  const DsGraphShapes *(*get_shapes)(gconstpointer exec);
  gboolean (*get_symbol)(gconstpointer exec, guint id, int64_t *value);
  void (*get_stats)(gconstpointer exec, DsRunnerStats *stats);
} RunnerClass;

struct _DsRunner {
  const RunnerClass *klass;
  gpointer exec;
};

/* ---- the static executor ---- */

static void static_free(gpointer exec) { ds_executor_free(exec); }

static gboolean static_bind(gpointer exec, const DsNode *variable, const DsTensor *value,
                            GError **error)
{
  return ds_executor_bind(exec, variable, value, error);
}

static gboolean static_resize(gpointer exec, const DsGraphShapes *shapes, GError **error)
{
  return ds_executor_reshape(exec, shapes, error);
}

static gboolean static_run(gpointer exec, GError **error) { return ds_executor_run(exec, error); }

static void static_set_hooks(gpointer exec, const DsExecutorHooks *hooks, gpointer data)
{
  ds_executor_set_hooks(exec, hooks, data);
}

static void static_set_deadline(gpointer exec, gint64 deadline_us)
{
  ds_executor_set_deadline(exec, deadline_us);
}

static const DsTensor *static_get_output(gconstpointer exec, guint i)
{
  return ds_executor_get_output(exec, i);
}

static const DsTensor *static_get_entry(gconstpointer exec, guint entry)
{
  return ds_executor_get_entry(exec, entry);
}

static const DsGraphShapes *static_get_shapes(gconstpointer exec)
{
  return ds_executor_get_shapes(exec);
}

/* The static executor is bound for concrete sizes: it has no symbols of its own. */
static gboolean static_get_symbol(gconstpointer exec, guint id, int64_t *value)
{
  (void)exec, (void)id, (void)value;
  return FALSE;
}

static void static_get_stats(gconstpointer exec, DsRunnerStats *stats)
{
  const DsPlan *plan = ds_executor_get_plan(exec);
  *stats = (DsRunnerStats){
      .kind = "static",
      .plan = plan,
      .workspace_bytes = ds_executor_get_workspace_bytes(exec),
      .n_regions = 1,
      .n_allocations = ds_executor_get_n_allocations(exec),
      .memory_bytes = plan->arena_bytes,
  };
}

static const RunnerClass static_class = {
    .learns_sizes = FALSE,
    .free = static_free,
    .bind = static_bind,
    .resize = static_resize,
    .run = static_run,
    .set_hooks = static_set_hooks,
    .set_deadline = static_set_deadline,
    .get_output = static_get_output,
    .get_entry = static_get_entry,
    .get_shapes = static_get_shapes,
    .get_symbol = static_get_symbol,
    .get_stats = static_get_stats,
};

/* ---- the dynamic executor ---- */

static void dynamic_free(gpointer exec) { ds_dynamic_executor_free(exec); }

static gboolean dynamic_bind(gpointer exec, const DsNode *variable, const DsTensor *value,
                             GError **error)
{
  return ds_dynamic_executor_bind(exec, variable, value, error);
}

/* It re-plans a region itself when the sizes reaching it change, learning them as it runs. */
static gboolean dynamic_resize(gpointer exec, const DsGraphShapes *shapes, GError **error)
{
  (void)exec, (void)shapes, (void)error;
  return TRUE;
}

static gboolean dynamic_run(gpointer exec, GError **error)
{
  return ds_dynamic_executor_run(exec, error);
}

static void dynamic_set_hooks(gpointer exec, const DsExecutorHooks *hooks, gpointer data)
{
  ds_dynamic_executor_set_hooks(exec, hooks, data);
}

static void dynamic_set_deadline(gpointer exec, gint64 deadline_us)
{
  ds_dynamic_executor_set_deadline(exec, deadline_us);
}

static const DsTensor *dynamic_get_output(gconstpointer exec, guint i)
{
  return ds_dynamic_executor_get_output(exec, i);
}

static const DsTensor *dynamic_get_entry(gconstpointer exec, guint entry)
{
  return ds_dynamic_executor_get_entry(exec, entry);
}

static const DsGraphShapes *dynamic_get_shapes(gconstpointer exec)
{
  return ds_dynamic_executor_get_shapes(exec);
}

static gboolean dynamic_get_symbol(gconstpointer exec, guint id, int64_t *value)
{
  return ds_dynamic_executor_get_symbol(exec, id, value);
}

static void dynamic_get_stats(gconstpointer exec, DsRunnerStats *stats)
{
  DsDynamicExecutorStats st;
  ds_dynamic_executor_get_stats(exec, &st);
  *stats = (DsRunnerStats){
      .kind = "dynamic",
      .n_regions = st.n_regions,
      .n_dynamic_nodes = st.n_dynamic_nodes,
      .n_imperative_nodes = st.n_imperative_nodes,
      .n_replans = st.n_replans,
      .n_allocations = st.n_allocations,
      .memory_bytes = st.memory_bytes,
      .pool = st.pool,
      .n_device_regions = st.n_device_regions,
      .n_copies = st.n_copies,
      .copy_to_device_bytes = st.copy_to_device_bytes,
      .copy_to_host_bytes = st.copy_to_host_bytes,
  };
}

static const RunnerClass dynamic_class = {
    .learns_sizes = TRUE,
    .free = dynamic_free,
    .bind = dynamic_bind,
    .resize = dynamic_resize,
    .run = dynamic_run,
    .set_hooks = dynamic_set_hooks,
    .set_deadline = dynamic_set_deadline,
    .get_output = dynamic_get_output,
    .get_entry = dynamic_get_entry,
    .get_shapes = dynamic_get_shapes,
    .get_symbol = dynamic_get_symbol,
    .get_stats = dynamic_get_stats,
};

/* ---- the interface ---- */

DsRunner *ds_runner_new(DsRunnerKind kind, const DsBindSpec *spec, GError **error)
{
  gpointer exec = kind == DS_RUNNER_DYNAMIC
                      ? (gpointer)ds_dynamic_executor_new(spec, error)
                      : (gpointer)ds_executor_new(spec->graph, spec->shapes, spec->backend,
                                                  spec->n_threads, error);
  if (exec == NULL)
    return NULL;
  DsRunner *runner = g_new(DsRunner, 1);
  runner->klass = kind == DS_RUNNER_DYNAMIC ? &dynamic_class : &static_class;
  runner->exec = exec;
  return runner;
}

void ds_runner_free(DsRunner *runner)
{
  if (runner == NULL)
    return;
  runner->klass->free(runner->exec);
  g_free(runner);
}

gboolean ds_runner_learns_sizes(const DsRunner *runner)
{
  return runner->klass->learns_sizes;
}

gboolean ds_runner_bind(DsRunner *runner, const DsNode *variable, const DsTensor *value,
                        GError **error)
{
  return runner->klass->bind(runner->exec, variable, value, error);
}

gboolean ds_runner_resize(DsRunner *runner, const DsGraphShapes *shapes, GError **error)
{
  return runner->klass->resize(runner->exec, shapes, error);
}

gboolean ds_runner_run(DsRunner *runner, GError **error)
{
  return runner->klass->run(runner->exec, error);
}

void ds_runner_set_hooks(DsRunner *runner, const DsExecutorHooks *hooks, gpointer data)
{
  runner->klass->set_hooks(runner->exec, hooks, data);
}

void ds_runner_set_deadline(DsRunner *runner, gint64 deadline_us)
{
  runner->klass->set_deadline(runner->exec, deadline_us);
}

const DsTensor *ds_runner_get_output(const DsRunner *runner, guint i)
{
  return runner->klass->get_output(runner->exec, i);
}

const DsTensor *ds_runner_get_entry(const DsRunner *runner, guint entry)
{
  return runner->klass->get_entry(runner->exec, entry);
}

const DsGraphShapes *ds_runner_get_shapes(const DsRunner *runner)
{
  return runner->klass->get_shapes(runner->exec);
}

gboolean ds_runner_get_symbol(const DsRunner *runner, guint id, int64_t *value)
{
  return runner->klass->get_symbol(runner->exec, id, value);
}

void ds_runner_get_stats(const DsRunner *runner, DsRunnerStats *stats)
{
  runner->klass->get_stats(runner->exec, stats);
}

DsExecutor *ds_runner_get_static(DsRunner *runner)
{
  return runner->klass == &static_class ? runner->exec : NULL;
}

DsDynamicExecutor *ds_runner_get_dynamic(DsRunner *runner)
{
  return runner->klass == &dynamic_class ? runner->exec : NULL;
}
