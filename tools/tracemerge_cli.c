/*
 * tracemerge: the command-line front-end.
 *
 * Thin by design: it parses arguments (GOptionContext, one per
 * subcommand), calls the library API of <tracemerge/tracemerge.h> and maps
 * the outcome to an exit status. Every failure is one line on stderr,
 * "tracemerge: <message>".
 *
 * Exit status: 0 success; 1 the import, the query or writing the output
 * failed; 2 the command line was wrong. A failed import still leaves what
 * was read before the error (docs/architecture.md, Errors; after a manifest error,
 * which fails the whole import, that is no event at all): its message goes
 * to stderr, the command goes on over the partial trace (`query` prints,
 * `import` saves, `info` summarises) and the exit status is 1 whatever
 * follows, so a script never mistakes a partial result for a whole one.
 * (`import` saves a partial result only under a new name: it never
 * replaces an existing file, --force or not; with --to it loads one only
 * under a run id not loaded yet.)
 */
#include <errno.h>
#include <glib.h>
#include <locale.h>
#include <math.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <tracemerge/tracemerge.h>

#include "sigint_guard.h"
#include "tracemerge_shell.h"

#ifndef TM_VERSION
#define TM_VERSION "0.1.0"
#endif

enum {
  EXIT_OK = 0,
  EXIT_FAILED = 1,
  EXIT_USAGE = 2,
};

typedef struct command {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);
} command;

/* `query`'s SQL safety options (see sql_safety_entries). */
static gboolean allow_attach = FALSE;
static double timeout_seconds = 0;

/* Options every subcommand that loads plugins accepts. */
static char **plugin_dirs = NULL;
static char **preferred_plugins = NULL;
/* query's --add-sql-package DIR[@NAME] (repeatable). */
static char **sql_packages = NULL;
static char **reader_config_args = NULL; /* "READER=FILE" */
/* --config FILE and --txt: the merge config (a TraceConfig). */
static char *config_path = NULL;
static gboolean config_is_text = FALSE;

static const GOptionEntry plugin_entries[] = {
    {"plugin-dir", 'P', 0, G_OPTION_ARG_FILENAME_ARRAY, &plugin_dirs,
     "Also look for reader plugins in DIR (repeatable)", "DIR"},
    {"prefer-plugin", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &preferred_plugins,
     "Use the reader plugin FILE over any other of the same name (repeatable; "
     "also TRACEMERGE_PLUGIN_PREFER=FILE:...)", "FILE"},
    {"reader-config", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &reader_config_args,
     "Hand the bytes of FILE to READER as its configuration (repeatable)",
     "READER=FILE"},
    {"config", 'c', 0, G_OPTION_ARG_FILENAME, &config_path,
     "Merge as the TraceConfig FILE says: which readers read which files, "
     "with their own config blocks; memory buffers; the window of the "
     "timeline to keep (text if FILE ends in .pbtx, .pbtxt, .txtpb, "
     ".textproto or .txt, else binary; see config/ for examples)",
     "FILE"},
    {"txt", 0, 0, G_OPTION_ARG_NONE, &config_is_text,
     "Read the --config FILE as protobuf text, whatever its name", NULL},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* Budgets of the commands that import (0: the library's default). */
static tm_budgets budgets;

/* A count or a size: digits, optionally followed by K, M, G or T (powers of
 * 1024) for sizes. */
static bool parse_amount(const char *text, bool size, uint64_t *out,
                         GError **error) {
  char *end = NULL;
  errno = 0;
  guint64 value = g_ascii_strtoull(text, &end, 10);
  unsigned shift = 0;
  if (size && end != NULL && *end != '\0' && end[1] == '\0') {
    const char *units = "KMGT";
    const char *unit = strchr(units, g_ascii_toupper(*end));
    if (unit != NULL) {
      shift = 10u * (unsigned)(unit - units + 1);
      end++;
    }
  }
  if (end == text || *end != '\0' || errno != 0 || value == 0 ||
      (shift > 0 && value > (UINT64_MAX >> shift))) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "'%s' is not a positive %s", text,
                size ? "size (bytes, or with K, M, G or T)" : "integer");
    return false;
  }
  *out = (uint64_t)value << shift;
  return true;
}

static gboolean on_budget(const gchar *name, const gchar *value, gpointer data,
                          GError **error) {
  (void)data;
  uint64_t amount;
  bool size = strcmp(name, "--max-member-size") == 0 ||
              strcmp(name, "--max-record-size") == 0;
  if (!parse_amount(value, size, &amount, error)) {
    g_prefix_error(error, "%s: ", name);
    return FALSE;
  }
  if (strcmp(name, "--max-inflate-ratio") == 0)
    budgets.max_inflate_ratio = amount;
  else if (strcmp(name, "--max-member-size") == 0)
    budgets.max_member_bytes = amount;
  else if (strcmp(name, "--max-depth") == 0 && amount <= UINT32_MAX)
    budgets.max_depth = (uint32_t)amount;
  else if (strcmp(name, "--max-files") == 0)
    budgets.max_files = amount;
  else if (strcmp(name, "--max-record-size") == 0)
    budgets.max_record_bytes = amount;
  else {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "%s: '%s' is too large", name, value);
    return FALSE;
  }
  return TRUE;
}

/* --threads of the commands that import (0: the library's default, one per
 * processor). */
static unsigned import_threads = 0;

static gboolean on_threads(const gchar *name, const gchar *value, gpointer data,
                           GError **error) {
  (void)data;
  uint64_t amount;
  if (!parse_amount(value, false, &amount, error) || amount > 1024) {
    g_clear_error(error);
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "%s: '%s' is not a number of threads from 1 to 1024", name, value);
    return FALSE;
  }
  import_threads = (unsigned)amount;
  return TRUE;
}

static const GOptionEntry import_entries[] = {
    {"threads", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_threads,
     "Use up to N threads to import (1: all on one thread; default: one per "
     "processor; today at most 2: files are read and inflated on one, parsed "
     "on the other, with the same result)", "N"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static const GOptionEntry budget_entries[] = {
    {"max-inflate-ratio", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_budget,
     "Cut an input whose archive members yield more than N bytes per byte of "
     "it, past 64 MiB (default 1000)", "N"},
    {"max-member-size", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_budget,
     "Cut a trace file after SIZE bytes (default 64G)", "SIZE"},
    {"max-depth", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_budget,
     "Skip containers nested more than N deep (default 16)", "N"},
    {"max-files", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_budget,
     "Read at most N files in one import (default 100000)", "N"},
    {"max-record-size", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_budget,
     "Cut a file where a reader would hold more than SIZE bytes for one "
     "event, line, element or packet (default 512M)", "SIZE"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static int fail(const char *message) {
  fprintf(stderr, "tracemerge: %s\n", message);
  return EXIT_FAILED;
}

static int fail_error(GError *error) {
  int status = fail(error->message);
  g_error_free(error);
  return status;
}

static int usage_error(const char *command_name, const char *message) {
  fprintf(stderr, "tracemerge: %s\n", message);
  fprintf(stderr, "Try 'tracemerge %s%s--help'.\n",
          command_name ? command_name : "", command_name ? " " : "");
  return EXIT_USAGE;
}

/* Parses the options of `name`; on return argv[1..argc) are the operands.
 * Returns EXIT_OK, or the status to exit with. */
static int parse_options(const char *name, const char *parameters,
                         const char *summary, const GOptionEntry *entries,
                         const GOptionEntry *more_entries, bool with_plugins,
                         bool with_budgets, int *argc, char ***argv) {
  GOptionContext *context = g_option_context_new(parameters);
  g_option_context_set_summary(context, summary);
  g_option_context_set_description(
      context, "Exit status: 0 success; 1 an input, the SQL or the output "
               "failed (what was read is still used); 2 usage error.");
  g_option_context_add_main_entries(context, entries, NULL);
  if (more_entries)
    g_option_context_add_main_entries(context, more_entries, NULL);
  if (with_plugins)
    g_option_context_add_main_entries(context, plugin_entries, NULL);
  if (with_budgets)
    g_option_context_add_main_entries(context, import_entries, NULL);
  if (with_budgets) {
    GOptionGroup *group = g_option_group_new(
        "budgets", "Budgets: what one import may cost (a file is cut where one trips)",
        "Show the budget options", NULL, NULL);
    g_option_group_add_entries(group, budget_entries);
    g_option_context_add_group(context, group);
  }
  GError *error = NULL;
  bool ok = g_option_context_parse(context, argc, argv, &error);
  g_option_context_free(context);
  if (!ok) {
    int status = usage_error(name, error->message);
    g_error_free(error);
    return status;
  }
  return EXIT_OK;
}

/* Reads every --reader-config READER=FILE into `configs` (bytes owned by
 * `contents`). Returns EXIT_OK, or the status to exit with. */
static int read_reader_configs(const char *command_name, GArray *configs,
                               GPtrArray *contents) {
  for (char **arg = reader_config_args; arg && *arg; arg++) {
    const char *eq = strchr(*arg, '=');
    if (!eq || eq == *arg || !eq[1])
      return usage_error(command_name, "--reader-config wants READER=FILE");
    GError *error = NULL;
    char *bytes = NULL;
    gsize len = 0;
    if (!g_file_get_contents(eq + 1, &bytes, &len, &error)) {
      g_prefix_error(&error, "reading the configuration of %.*s: ",
                     (int)(eq - *arg), *arg);
      return fail_error(error);
    }
    g_ptr_array_add(contents, g_strndup(*arg, (gsize)(eq - *arg)));
    g_ptr_array_add(contents, bytes);
    tm_reader_config config = {contents->pdata[contents->len - 2], bytes, len};
    g_array_append_val(configs, config);
  }
  return EXIT_OK;
}

/* A session with the plugin and config options; NULL after reporting why
 * (*status). A merge config that cannot be used stops the command here,
 * before any input is read. */
static tm_session *session_new(const char *command_name, int *status) {
  GArray *configs = g_array_new(FALSE, FALSE, sizeof(tm_reader_config));
  GPtrArray *contents = g_ptr_array_new_with_free_func(g_free);
  tm_session *session = NULL;
  *status = read_reader_configs(command_name, configs, contents);
  if (*status == EXIT_OK && config_is_text && !config_path)
    *status = usage_error(command_name, "--txt applies to --config FILE, which is missing");
  if (*status == EXIT_OK) {
    tm_session_options options = {
        .plugin_dirs = (const char *const *)plugin_dirs,
        .n_plugin_dirs = plugin_dirs ? g_strv_length(plugin_dirs) : 0,
        .warnings = stderr,
        .preferred_plugins = (const char *const *)preferred_plugins,
        .n_preferred_plugins = preferred_plugins ? g_strv_length(preferred_plugins) : 0,
        .sql_packages = (const char *const *)sql_packages,
        .n_sql_packages = sql_packages ? g_strv_length(sql_packages) : 0,
        .reader_configs = (const tm_reader_config *)configs->data,
        .n_reader_configs = configs->len,
        .allow_attach = allow_attach,
        .query_timeout_seconds = timeout_seconds,
        .budgets = budgets,
        .threads = import_threads,
        .config_path = config_path,
        .config_syntax = config_is_text ? TM_CONFIG_SYNTAX_TEXT : TM_CONFIG_SYNTAX_AUTO,
    };
    session = tm_session_new(&options);
    GError *error = NULL;
    if (!tm_session_config_check(session, &error)) {
      *status = fail_error(error);
      tm_session_free(session);
      session = NULL;
    }
  }
  g_ptr_array_free(contents, TRUE);
  g_array_free(configs, TRUE);
  return session;
}

/* Imports `argv[1..argc)`; an error is reported and reflected in the
 * returned status, the session stays usable. */
static int import_inputs(tm_session *session, int argc, char **argv) {
  GError *error = NULL;
  if (tm_session_import(session, (const char *const *)argv + 1,
                        (size_t)argc - 1, &error))
    return EXIT_OK;
  return fail_error(error);
}

/* The worse of two exit statuses (a function: GLib's MAX evaluates its
 * arguments twice, which ran a check or the prompt twice). */
static int max_status(int a, int b) {
  return a > b ? a : b;
}

static int check_stdout(void) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    char *message = g_strdup_printf("writing to standard output failed: %s",
                                    g_strerror(errno));
    int status = fail(message);
    g_free(message);
    return status;
  }
  return EXIT_OK;
}

/* ---- query ---- */

static bool parse_format(const char *text, tm_format *format) {
  if (strcmp(text, "csv") == 0)
    *format = TM_FORMAT_CSV;
  else if (strcmp(text, "tsv") == 0)
    *format = TM_FORMAT_TSV;
  else if (strcmp(text, "json") == 0)
    *format = TM_FORMAT_JSON;
  else if (strcmp(text, "table") == 0)
    *format = TM_FORMAT_TABLE;
  else
    return false;
  return true;
}

/* The SQL of --query-file FILE ("-": standard input). */
static bool read_query_file(const char *path, char **sql, GError **error) {
  if (strcmp(path, "-") != 0) {
    if (g_file_get_contents(path, sql, NULL, error))
      return true;
    g_prefix_error(error, "reading the query file: ");
    return false;
  }
  GString *text = g_string_new(NULL);
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, stdin)) > 0)
    g_string_append_len(text, buf, (gssize)n);
  if (ferror(stdin)) {
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
                "reading the SQL from standard input: %s", g_strerror(errno));
    g_string_free(text, TRUE);
    return false;
  }
  *sql = g_string_free(text, FALSE);
  return true;
}

/* ---- SQL safety options and Ctrl-C ---- */

static const GOptionEntry sql_safety_entries[] = {
    {"allow-attach", 0, 0, G_OPTION_ARG_NONE, &allow_attach,
     "Let the SQL ATTACH and DETACH database files (refused by default: "
     "a query cannot open or write files)",
     NULL},
    {"timeout", 0, 0, G_OPTION_ARG_DOUBLE, &timeout_seconds,
     "Stop the SQL once it has run SECONDS (exit status 1)", "SECONDS"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static bool check_timeout(const char *command_name, int *status) {
  if (isfinite(timeout_seconds) && timeout_seconds >= 0)
    return true;
  *status = usage_error(command_name, "--timeout takes a number of seconds");
  return false;
}

/* ---- ClickHouse (docs/clickhouse.md) ---- */

/* A connection to the database of `url`; NULL after reporting why. */
static tm_clickhouse *clickhouse_open(const char *command_name,
                                      const char *url, int *status) {
  GError *error = NULL;
  tm_clickhouse *ch = tm_clickhouse_open(url, &error);
  if (!ch) {
    *status = usage_error(command_name, error->message);
    g_error_free(error);
  }
  return ch;
}

/* `query --from URL`: the SQL runs on the ClickHouse server. */
static int query_clickhouse(const char *url, const char *sql,
                            const tm_query_options *options) {
  int status = EXIT_OK;
  tm_clickhouse *ch = clickhouse_open("query", url, &status);
  if (!ch)
    return status;
  GError *error = NULL;
  if (!tm_clickhouse_query(ch, sql, options, stdout, timeout_seconds, &error))
    status = fail_error(error);
  else
    status = check_stdout();
  tm_clickhouse_free(ch);
  return status;
}

/* `import --to URL --run ID`: the merged inputs loaded as one run. A
 * failed import is loaded only where nothing is replaced (as `-o` saves a
 * partial result only under a new name). */
static int import_clickhouse(int argc, char **argv, const char *url,
                             const char *run_id, bool create_schema,
                             bool replace) {
  int status = EXIT_OK;
  GError *error = NULL;
  tm_session *session = NULL;
  tm_clickhouse_load_mode mode =
      replace ? TM_CLICKHOUSE_REPLACE : TM_CLICKHOUSE_REFUSE_EXISTING;
  tm_clickhouse *ch = clickhouse_open("import", url, &status);
  if (!ch)
    return status;
  /* Whatever would stop the load fails before the import's work. */
  if ((create_schema && !tm_clickhouse_create_schema(ch, &error)) ||
      !tm_clickhouse_check(ch, &run_id, 1, mode, &error)) {
    status = fail_error(error);
    goto out;
  }
  session = session_new("import", &status);
  if (!session)
    goto out;
  status = import_inputs(session, argc, argv);
  if (status != EXIT_OK && mode == TM_CLICKHOUSE_REPLACE) {
    mode = TM_CLICKHOUSE_REFUSE_EXISTING;
    if (!tm_clickhouse_check(ch, &run_id, 1, mode, &error)) {
      g_clear_error(&error);
      char *message = g_strdup_printf(
          "run '%s' left as it was: a failed import does not replace it",
          run_id);
      fail(message);
      g_free(message);
      goto out;
    }
  }
  tm_clickhouse_run run = {run_id, session};
  if (!tm_clickhouse_load(ch, &run, 1, mode, &error))
    status = fail_error(error);
out:
  tm_session_free(session);
  tm_clickhouse_free(ch);
  return status;
}

static int run_query(int argc, char **argv) {
  char *sql = NULL, *query_file = NULL, *format_name = NULL;
  char *from = NULL;
  char *file_sql = NULL;
  tm_session *session = NULL;
  GError *error = NULL;
  gboolean interactive = FALSE, wide = FALSE;
  tm_format format = TM_FORMAT_CSV;
  const GOptionEntry entries[] = {
      {"sql", 'Q', 0, G_OPTION_ARG_STRING, &sql,
       "Run the SQL statements SQL; the last one's rows are printed", "SQL"},
      {"query-file", 'q', 0, G_OPTION_ARG_FILENAME, &query_file,
       "Read the SQL statements from FILE (- for standard input)", "FILE"},
      {"interactive", 'i', 0, G_OPTION_ARG_NONE, &interactive,
       "Open the prompt (also after --sql or --query-file); without SQL it "
       "opens by itself on a terminal",
       NULL},
      {"format", 'f', 0, G_OPTION_ARG_STRING, &format_name,
       "Output format: csv (default for SQL given, as "
       "trace_processor_shell), tsv, json, or table (the prompt's default)",
       "FORMAT"},
      {"wide", 'W', 0, G_OPTION_ARG_NONE, &wide,
       "Table columns 40 characters wide instead of 20", NULL},
      {"from", 0, 0, G_OPTION_ARG_STRING, &from,
       "Run the SQL on the ClickHouse database URL (no INPUT; the SQL is "
       "ClickHouse's; no prompt)", "clickhouse://HOST:PORT/DB"},
      {"add-sql-package", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &sql_packages,
       "Make the *.sql files under DIR PerfettoSQL modules of package NAME "
       "(default: DIR's base name) for INCLUDE PERFETTO MODULE (repeatable)",
       "DIR[@NAME]"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  int status = parse_options("query", "INPUT... | --from URL",
                             "Import the inputs as one merged trace and run "
                             "SQL over it: given with --sql or --query-file, "
                             "or typed at a prompt. With --from, run SQL on "
                             "the runs loaded in a ClickHouse database.",
                             entries, sql_safety_entries, true, true, &argc,
                             &argv);
  if (status != EXIT_OK || !check_timeout("query", &status))
    goto out;
  if (sql && query_file) {
    status = usage_error("query", "give at most one of --sql and --query-file");
    goto out;
  }
  if (from && (interactive || (!sql && !query_file))) {
    status = usage_error("query", "--from needs --sql or --query-file (no "
                                  "prompt)");
    goto out;
  }
  if (from && argc > 1) {
    status = usage_error("query", "--from takes no input files");
    goto out;
  }
  if (from && (sql_packages || allow_attach)) {
    status = usage_error("query", "--add-sql-package and --allow-attach are "
                                  "for local queries, not --from");
    goto out;
  }
  /* No SQL: the prompt, which needs a terminal unless asked for. */
  bool prompt = interactive || (!sql && !query_file);
  if (prompt && !interactive && !isatty(STDIN_FILENO)) {
    status = usage_error("query",
                         "no SQL: give --sql or --query-file (- reads "
                         "standard input), or -i for the prompt");
    goto out;
  }
  if (prompt && query_file && strcmp(query_file, "-") == 0) {
    status = usage_error("query", "-q - and the prompt both read standard "
                                  "input");
    goto out;
  }
  if (format_name && !parse_format(format_name, &format)) {
    status = usage_error("query",
                         "--format must be csv, tsv, json or table");
    goto out;
  }
  if (!from && argc < 2) {
    status = usage_error("query", "no input files");
    goto out;
  }
  if (query_file) {
    if (!read_query_file(query_file, &file_sql, &error)) {
      status = fail_error(error);
      goto out;
    }
    sql = g_steal_pointer(&file_sql);
  }
  if (from) {
    tm_query_options options = {.format = format,
                                .column_width = wide ? 40 : 0};
    status = query_clickhouse(from, sql, &options);
    goto out;
  }

  session = session_new("query", &status);
  if (!session)
    goto out;
  status = import_inputs(session, argc, argv);
  unsigned column_width = wide ? 40 : 0;
  if (sql) {
    /* Ctrl-C stops the query (it fails with "query interrupted", exit
     * status 1); a second one kills as usual. */
    sigint_guard sigint;
    sigint_guard_begin(&sigint, session, true);
    tm_query_options options = {.format = format,
                                .column_width = column_width};
    bool query_ok = tm_session_query_with_options(session, sql, &options,
                                                  stdout, NULL, &error);
    sigint_guard_end(&sigint);
    if (!query_ok) {
      status = fail_error(error);
      goto out;
    }
    status = max_status(status, check_stdout());
  }
  if (prompt) {
    shell_options options = {
        .format = format_name ? format : TM_FORMAT_TABLE,
        .column_width = column_width,
    };
    int shell_status = shell_run(session, &options);
    status = max_status(status, shell_status);
  }
out:
  tm_session_free(session);
  g_free(file_sql);
  g_free(sql);
  g_free(query_file);
  g_free(format_name);
  g_free(from);
  return status;
}

/* ---- import ---- */

static int run_import(int argc, char **argv) {
  char *output = NULL;
  gboolean force = FALSE;
  char *to = NULL, *run_id = NULL;
  gboolean create_schema = FALSE, replace = FALSE, refuse_existing = FALSE;
  tm_session *session = NULL;
  GError *error = NULL;
  const GOptionEntry entries[] = {
      {"output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
       "Write the SQLite database to FILE (written beside it under a "
       "temporary name, renamed to FILE once complete)",
       "FILE"},
      {"force", 0, 0, G_OPTION_ARG_NONE, &force,
       "Replace FILE if it exists", NULL},
      {"to", 0, 0, G_OPTION_ARG_STRING, &to,
       "Load the merged trace into the ClickHouse database URL instead "
       "(docs/clickhouse.md)", "clickhouse://HOST:PORT/DB"},
      {"run", 0, 0, G_OPTION_ARG_STRING, &run_id,
       "With --to: the run id the rows are loaded under", "RUN_ID"},
      {"create-schema", 0, 0, G_OPTION_ARG_NONE, &create_schema,
       "With --to: create the database and its tables if missing", NULL},
      {"replace", 0, 0, G_OPTION_ARG_NONE, &replace,
       "With --to: replace the run if it is already loaded", NULL},
      {"refuse-existing", 0, 0, G_OPTION_ARG_NONE, &refuse_existing,
       "With --to: fail if the run is already loaded (the default)", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  int status = parse_options("import",
                             "INPUT... (-o OUT.sqlite | --to URL --run ID)",
                             "Import the inputs as one merged trace and save "
                             "every table into a standalone SQLite file, or "
                             "load it as one run into a ClickHouse database.",
                             entries, NULL, true, true, &argc, &argv);
  if (status != EXIT_OK)
    goto out;
  if (!to && (run_id || create_schema || replace || refuse_existing)) {
    status = usage_error("import", "--run, --create-schema, --replace and "
                                   "--refuse-existing go with --to");
    goto out;
  }
  if (to && (output || force)) {
    status = usage_error("import", "give one of -o and --to");
    goto out;
  }
  if (to && !run_id) {
    status = usage_error("import", "--to needs --run RUN_ID");
    goto out;
  }
  if (replace && refuse_existing) {
    status = usage_error("import",
                         "give one of --replace and --refuse-existing");
    goto out;
  }
  if (!output && !to) {
    status = usage_error("import", "missing -o OUT.sqlite");
    goto out;
  }
  if (argc < 2) {
    status = usage_error("import", "no input files");
    goto out;
  }
  if (to) {
    status = import_clickhouse(argc, argv, to, run_id, create_schema, replace);
    goto out;
  }
  unsigned save_flags = force ? TM_SAVE_REPLACE : 0;
  /* A name that cannot be written fails before the import's work. */
  if (!tm_save_path_check(output, save_flags, &error)) {
    status = fail_error(error);
    goto out;
  }
  session = session_new("import", &status);
  if (!session)
    goto out;
  status = import_inputs(session, argc, argv);
  if (status != EXIT_OK) {
    /* A partial result is saved, but never over an existing file. */
    save_flags &= ~(unsigned)TM_SAVE_REPLACE;
    if (g_file_test(output, G_FILE_TEST_EXISTS) ||
        g_file_test(output, G_FILE_TEST_IS_SYMLINK)) {
      char *message = g_strdup_printf(
          "%s left as it was: a failed import does not replace it", output);
      fail(message);
      g_free(message);
      goto out;
    }
  }
  if (!tm_session_save_sqlite(session, output, save_flags, &error))
    status = fail_error(error);
out:
  tm_session_free(session);
  g_free(output);
  g_free(to);
  g_free(run_id);
  return status;
}

/* ---- info ---- */

static int run_info(int argc, char **argv) {
  char *clock_graph = NULL;
  const GOptionEntry entries[] = {
      {"clock-graph", 0, 0, G_OPTION_ARG_STRING, &clock_graph,
       "Print the clock graph instead, in FORMAT (only \"dot\": Graphviz)", "FORMAT"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  int status = parse_options("info", "INPUT...",
                             "Import the inputs and summarise them: files, "
                             "formats, machines, clocks, stats.",
                             entries, NULL, true, true, &argc, &argv);
  if (status != EXIT_OK)
    goto out;
  if (clock_graph && strcmp(clock_graph, "dot") != 0) {
    status = usage_error("info", "--clock-graph takes only 'dot'");
    goto out;
  }
  if (argc < 2) {
    status = usage_error("info", "no input files");
    goto out;
  }
  tm_session *session = session_new("info", &status);
  if (!session)
    goto out;
  status = import_inputs(session, argc, argv);
  if (clock_graph)
    tm_session_print_clock_graph_dot(session, stdout);
  else
    tm_session_print_info(session, stdout);
  status = max_status(status, check_stdout());
  tm_session_free(session);
out:
  g_free(clock_graph);
  return status;
}

/* ---- export ---- */

/* Where an export goes: standard output for "-", else a temporary file
 * beside OUT renamed over it once complete (a failed export leaves OUT
 * as it was). */
typedef struct export_target {
  const char *path;
  char *tmp_path;
  FILE *file;
} export_target;

static bool export_target_open(export_target *t, const char *path, GError **error) {
  t->path = path;
  t->tmp_path = NULL;
  if (strcmp(path, "-") == 0) {
    t->file = stdout;
    return true;
  }
  char *dir = g_path_get_dirname(path);
  char *base = g_path_get_basename(path);
  char *templ = g_strdup_printf("%s/.%s.XXXXXX", dir, base);
  g_free(dir);
  g_free(base);
  int fd = g_mkstemp(templ);
  if (fd < 0) {
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
                "cannot create %s: %s", path, g_strerror(errno));
    g_free(templ);
    return false;
  }
  /* mkstemp's file is private (0600); the result gets the mode any new
   * file of the user gets. */
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  t->file = fdopen(fd, "wb");
  t->tmp_path = templ;
  return t->file != NULL;
}

/* Closes the target: renames the temporary file into place if `keep`,
 * else removes it. False (error set) only if keeping it failed. */
static bool export_target_close(export_target *t, bool keep, GError **error) {
  if (!t->tmp_path)
    return true;
  bool ok = true;
  if (fclose(t->file) != 0 && keep) {
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
                "writing %s failed: %s", t->path, g_strerror(errno));
    ok = false;
  }
  if (ok && keep && rename(t->tmp_path, t->path) != 0) {
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
                "cannot write %s: %s", t->path, g_strerror(errno));
    ok = false;
  }
  if (!ok || !keep)
    unlink(t->tmp_path);
  g_clear_pointer(&t->tmp_path, g_free);
  return ok;
}

static int run_export(int argc, char **argv) {
  char *output = NULL, *format_name = NULL, *time_range = NULL, *slice_sql = NULL;
  char **machines = NULL;
  tm_session *session = NULL;
  GError *error = NULL;
  const GOptionEntry entries[] = {
      {"output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
       "Write the trace to FILE (- for standard output); FILE is replaced "
       "once the export is complete",
       "FILE"},
      {"format", 'f', 0, G_OPTION_ARG_STRING, &format_name,
       "perfetto (a Perfetto protobuf trace, for ui.perfetto.dev; the "
       "default, unless FILE ends in .json) or json (Chrome JSON, for "
       "chrome://tracing)",
       "FORMAT"},
      {"machine", 0, 0, G_OPTION_ARG_STRING_ARRAY, &machines,
       "Export only the machine NAME (repeatable)", "NAME"},
      {"time", 0, 0, G_OPTION_ARG_STRING, &time_range,
       "Export only what overlaps START,END of trace time (ns, or with a "
       "unit: ns, us, ms, s; either may be empty)",
       "START,END"},
      {"sql", 0, 0, G_OPTION_ARG_STRING, &slice_sql,
       "Export only the slices whose ids SQL selects, with their ancestors, "
       "e.g. \"SELECT id FROM slice WHERE name GLOB 'net*'\"",
       "SQL"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  int status = parse_options("export", "INPUT... -o OUT",
                             "Import the inputs as one merged trace and write "
                             "it as one file that viewers open: every machine, "
                             "already on one timeline.",
                             entries, NULL, true, true, &argc, &argv);
  tm_export_options options = {.format = TM_EXPORT_PERFETTO};
  export_target target = {0};
  if (status != EXIT_OK)
    goto out;
  if (!output) {
    status = usage_error("export", "missing -o OUT (- for standard output)");
    goto out;
  }
  if (argc < 2) {
    status = usage_error("export", "no input files");
    goto out;
  }
  if (format_name && strcmp(format_name, "perfetto") == 0) {
    options.format = TM_EXPORT_PERFETTO;
  } else if (format_name && strcmp(format_name, "json") == 0) {
    options.format = TM_EXPORT_JSON;
  } else if (format_name) {
    status = usage_error("export", "--format must be perfetto or json");
    goto out;
  } else if (g_str_has_suffix(output, ".json")) {
    options.format = TM_EXPORT_JSON;
  }
  if (time_range) {
    if (!tm_parse_time_range(time_range, &options.start_ns, &options.end_ns, &error)) {
      status = usage_error("export", error->message);
      g_clear_error(&error);
      goto out;
    }
    options.has_time_range = true;
  }
  options.machines = (const char *const *)machines;
  options.n_machines = machines ? g_strv_length(machines) : 0;
  options.slice_sql = slice_sql;

  session = session_new("export", &status);
  if (!session)
    goto out;
  status = import_inputs(session, argc, argv);
  if (!export_target_open(&target, output, &error)) {
    status = fail_error(error);
    goto out;
  }
  bool to_stdout = !target.tmp_path;
  bool ok = tm_session_export(session, &options, target.file, &error);
  if (!ok) {
    status = fail_error(error);
    error = NULL;
  }
  if (!export_target_close(&target, ok, &error))
    status = fail_error(error);
  else if (ok && to_stdout)
    status = max_status(status, check_stdout());
out:
  tm_session_free(session);
  g_free(output);
  g_free(format_name);
  g_free(time_range);
  g_free(slice_sql);
  g_strfreev(machines);
  return status;
}

/* ---- pack ---- */

static const char pack_help[] =
    "Usage:\n"
    "  tracemerge pack -o ARCHIVE [--machine NAME FILE...]... [OPTION...]\n"
    "\n"
    "Write trace files into one archive (.zip, .tar.gz, .tgz or .tar) with a\n"
    "perfetto_manifest saying which machine each file is from and how their\n"
    "clocks relate, checked as an import will read it.\n"
    "\n"
    "  -o, --output ARCHIVE      The archive to write (replaced once complete)\n"
    "  --machine NAME            The files that follow are from machine NAME\n"
    "                            (files before any --machine: no machine);\n"
    "                            the first machine is the reference\n"
    "  --offset NAME=OFFSET      NAME's files read T when the reference's first\n"
    "                            file reads T + OFFSET (ns, or with a unit: ns,\n"
    "                            us, ms, s; a sign is allowed: +100us, -2ms)\n"
    "  --sync NAME:CLOCK         The clock of NAME's files the relation uses\n"
    "                            (REALTIME, REALTIME_COARSE, MONOTONIC,\n"
    "                            MONOTONIC_COARSE, MONOTONIC_RAW, BOOTTIME);\n"
    "                            without it, a file's own timeline (what a\n"
    "                            clockless file such as JSON has). On a machine\n"
    "                            other than the reference it relates the\n"
    "                            machine even without --offset (offset 0)\n"
    "  --trace-time NAME:CLOCK   Trace time is CLOCK of NAME's first file\n"
    "  --attribute KEY=VALUE     A manifest attribute (repeatable)\n"
    "  --max-inflate-ratio N     Store a compressed file cut where it yields more\n"
    "                            than N bytes per byte of it, past 64 MiB\n"
    "                            (default 1000, as import)\n"
    "  --max-member-size SIZE    Store a trace file cut after SIZE bytes (K, M,\n"
    "                            G or T; default 64G, as import)\n"
    "  --dry-run                 Print the manifest, write nothing\n"
    "  -h, --help                Show this help\n"
    "\n"
    "Example:\n"
    "  tracemerge pack -o run.zip --machine phone phone.pftrace \\\n"
    "    --machine server server.json --offset server=+100us --sync phone:BOOTTIME\n"
    "\n"
    "Exit status: 0 success; 1 a file or the manifest failed, or a budget cut\n"
    "a file (the archive is then written with what was read of it); 2 usage\n"
    "error.\n";

typedef struct pack_args {
  GArray *files;    /* tm_pack_file */
  GArray *machines; /* tm_pack_machine */
  GPtrArray *attributes;
  GPtrArray *strings; /* owned copies */
  char *output;
  const char *trace_time_machine, *trace_time_clock;
  bool dry_run;
} pack_args;

static tm_pack_machine *pack_machine(pack_args *p, const char *name) {
  for (guint i = 0; i < p->machines->len; i++) {
    tm_pack_machine *m = &g_array_index(p->machines, tm_pack_machine, i);
    if (strcmp(m->name, name) == 0)
      return m;
  }
  tm_pack_machine fresh = {.name = name};
  g_array_append_val(p->machines, fresh);
  return &g_array_index(p->machines, tm_pack_machine, p->machines->len - 1);
}

/* "NAME<sep>REST": splits at the first `sep` into owned strings. */
static bool split_arg(pack_args *p, const char *text, char sep, const char **name,
                      const char **rest) {
  const char *at = strchr(text, sep);
  if (!at || at == text || !at[1])
    return false;
  char *n = g_strndup(text, (gsize)(at - text));
  char *r = g_strdup(at + 1);
  g_ptr_array_add(p->strings, n);
  g_ptr_array_add(p->strings, r);
  *name = n;
  *rest = r;
  return true;
}

/* Parses pack's command line by hand: --machine applies to the files
 * after it, which GOption's parsing (options apart from operands) loses. */
static int parse_pack_args(int argc, char **argv, pack_args *p) {
  const char *machine = NULL;
  bool operands_only = false;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    const char *value = NULL;
    const char *eq = g_str_has_prefix(arg, "--") ? strchr(arg, '=') : NULL;
    char *option = eq ? g_strndup(arg, (gsize)(eq - arg)) : g_strdup(arg);
    g_ptr_array_add(p->strings, option);
    bool takes_value = !operands_only &&
                       (strcmp(option, "-o") == 0 || strcmp(option, "--output") == 0 ||
                        strcmp(option, "--machine") == 0 || strcmp(option, "--offset") == 0 ||
                        strcmp(option, "--sync") == 0 || strcmp(option, "--trace-time") == 0 ||
                        strcmp(option, "--attribute") == 0 ||
                        strcmp(option, "--max-inflate-ratio") == 0 ||
                        strcmp(option, "--max-member-size") == 0);
    if (takes_value) {
      if (eq)
        value = eq + 1;
      else if (i + 1 < argc)
        value = argv[++i];
      else {
        char *message = g_strdup_printf("%s needs a value", option);
        int status = usage_error("pack", message);
        g_free(message);
        return status;
      }
    }
    if (operands_only || arg[0] != '-' || strcmp(arg, "-") == 0) {
      tm_pack_file f = {.path = arg, .machine = machine};
      g_array_append_val(p->files, f);
    } else if (strcmp(arg, "--") == 0) {
      operands_only = true;
    } else if (strcmp(option, "-h") == 0 || strcmp(option, "--help") == 0) {
      fputs(pack_help, stdout);
      return -1;
    } else if (strcmp(option, "--dry-run") == 0) {
      p->dry_run = true;
    } else if (strcmp(option, "-o") == 0 || strcmp(option, "--output") == 0) {
      g_free(p->output);
      p->output = g_strdup(value);
    } else if (strcmp(option, "--machine") == 0) {
      if (!*value)
        return usage_error("pack", "--machine needs a name");
      machine = pack_machine(p, value)->name;
    } else if (strcmp(option, "--offset") == 0) {
      const char *name, *offset;
      if (!split_arg(p, value, '=', &name, &offset))
        return usage_error("pack", "--offset wants NAME=OFFSET, e.g. server=+100us");
      GError *error = NULL;
      tm_pack_machine *m = pack_machine(p, name);
      if (!tm_parse_duration("--offset", offset, &m->offset_ns, &error)) {
        int status = usage_error("pack", error->message);
        g_error_free(error);
        return status;
      }
      m->has_offset = true;
    } else if (strcmp(option, "--sync") == 0) {
      const char *name, *clock;
      if (!split_arg(p, value, ':', &name, &clock))
        return usage_error("pack", "--sync wants NAME:CLOCK, e.g. phone:BOOTTIME");
      pack_machine(p, name)->clock = clock;
    } else if (strcmp(option, "--trace-time") == 0) {
      if (!split_arg(p, value, ':', &p->trace_time_machine, &p->trace_time_clock))
        return usage_error("pack", "--trace-time wants NAME:CLOCK, e.g. phone:BOOTTIME");
    } else if (strcmp(option, "--attribute") == 0) {
      if (!strchr(value, '=') || value[0] == '=')
        return usage_error("pack", "--attribute wants KEY=VALUE");
      g_ptr_array_add(p->attributes, (gpointer)value);
    } else if (strcmp(option, "--max-inflate-ratio") == 0 ||
               strcmp(option, "--max-member-size") == 0) {
      /* The import's budget options, into the same `budgets`. */
      GError *error = NULL;
      if (!on_budget(option, value, NULL, &error)) {
        int status = usage_error("pack", error->message);
        g_error_free(error);
        return status;
      }
    } else {
      char *message = g_strdup_printf("unknown option %s", arg);
      int status = usage_error("pack", message);
      g_free(message);
      return status;
    }
  }
  return EXIT_OK;
}

static int run_pack(int argc, char **argv) {
  pack_args p = {
      .files = g_array_new(FALSE, FALSE, sizeof(tm_pack_file)),
      .machines = g_array_new(FALSE, FALSE, sizeof(tm_pack_machine)),
      .attributes = g_ptr_array_new(),
      .strings = g_ptr_array_new_with_free_func(g_free),
  };
  char *manifest = NULL;
  GError *error = NULL;
  int status = parse_pack_args(argc, argv, &p);
  if (status == -1) {
    status = check_stdout();
    goto out;
  }
  if (status != EXIT_OK)
    goto out;
  if (!p.output && !p.dry_run) {
    status = usage_error("pack", "missing -o ARCHIVE (or --dry-run)");
    goto out;
  }
  if (p.files->len == 0) {
    status = usage_error("pack", "no files to pack");
    goto out;
  }
  tm_pack_options options = {
      .files = (const tm_pack_file *)p.files->data,
      .n_files = p.files->len,
      .machines = (const tm_pack_machine *)p.machines->data,
      .n_machines = p.machines->len,
      .trace_time_machine = p.trace_time_machine,
      .trace_time_clock = p.trace_time_clock,
      .attributes = (const char *const *)p.attributes->pdata,
      .n_attributes = p.attributes->len,
      .budgets = budgets,
  };
  manifest = tm_pack_manifest(&options, &error);
  if (!manifest) {
    status = fail_error(error);
    goto out;
  }
  if (p.dry_run) {
    fputs(manifest, stdout);
    status = check_stdout();
    goto out;
  }
  if (!tm_pack_write(&options, manifest, p.output, &error))
    status = fail_error(error);
out:
  g_free(manifest);
  g_free(p.output);
  g_array_free(p.files, TRUE);
  g_array_free(p.machines, TRUE);
  g_ptr_array_free(p.attributes, TRUE);
  g_ptr_array_free(p.strings, TRUE);
  return status;
}

/* ---- plugins ---- */

static int run_plugins(int argc, char **argv) {
  const GOptionEntry entries[] = {{NULL, 0, 0, 0, NULL, NULL, NULL}};
  int status = parse_options("plugins", "",
                             "List the reader plugins found, in search "
                             "order: name, ABI version, whether the format "
                             "is clockless, the name of its config block, "
                             "and the file it was loaded from; for a format "
                             "several plugins provide, which one won and "
                             "which it overrode.",
                             entries, NULL, true, false, &argc, &argv);
  if (status != EXIT_OK)
    return status;
  if (argc > 1)
    return usage_error("plugins", "plugins takes no operands");

  tm_session *session = session_new("plugins", &status);
  if (!session)
    return status;
  size_t n = tm_session_reader_count(session);
  int name_width = 4, config_width = 1;
  for (size_t i = 0; i < n; i++) {
    const tm_reader_descriptor *reader =
        tm_session_borrow_reader(session, i, NULL);
    name_width = MAX(name_width, reader->name ? (int)strlen(reader->name) : 0);
    config_width = MAX(config_width, reader->config_name
                                         ? (int)strlen(reader->config_name)
                                         : 1);
  }
  for (size_t i = 0; i < n; i++) {
    const char *path = NULL;
    const tm_reader_descriptor *reader =
        tm_session_borrow_reader(session, i, &path);
    printf("%-*s  abi %-3u  clockless %-3s  config %-*s  %s\n", name_width,
           reader->name ? reader->name : "", reader->abi_version,
           reader->flags & TM_READER_CLOCKLESS ? "yes" : "no", config_width,
           reader->config_name ? reader->config_name : "-", path ? path : "");
    const char *const *overridden = tm_session_borrow_overridden(session, i);
    for (size_t k = 0; overridden && overridden[k]; k++)
      printf("%-*s  overrides %s (preferred)\n", name_width, "", overridden[k]);
  }
  GError *error = NULL;
  bool usable = tm_session_plugins_check(session, &error);
  tm_session_free(session);
  status = check_stdout();
  if (!usable)
    return fail_error(error);
  if (n == 0)
    return fail("no reader plugins found (set TRACEMERGE_PLUGIN_PATH or "
                "use --plugin-dir)");
  return status;
}

/* ---- config-check ---- */

static int run_config_check(int argc, char **argv) {
  const GOptionEntry entries[] = {{NULL, 0, 0, 0, NULL, NULL, NULL}};
  int status = parse_options("config-check", "FILE",
                             "Check a merge config (a TraceConfig, as --config takes it) "
                             "against the reader plugins found, and print it back "
                             "normalised: every field it holds in protobuf text, a "
                             "reader's block as the string of its bytes. Notes on "
                             "fields it does not use go to standard error.",
                             entries, NULL, true, false, &argc, &argv);
  if (status != EXIT_OK)
    return status;
  if (config_path)
    return usage_error("config-check", "config-check takes the config as its operand, "
                                       "not --config");
  if (argc != 2)
    return usage_error("config-check", "config-check takes one FILE");
  config_path = g_strdup(argv[1]);
  tm_session *session = session_new("config-check", &status);
  if (!session)
    return status;
  char *text = tm_session_config_to_text(session);
  fputs(text ? text : "", stdout);
  g_free(text);
  tm_session_free(session);
  return check_stdout();
}

/* ---- main ---- */

static const command commands[] = {
    {"query", "Run SQL over the merged inputs and print the result",
     run_query},
    {"import", "Save the merged inputs as a SQLite database, or load them "
     "into ClickHouse", run_import},
    {"info", "Summarise the inputs: files, formats, machines, clocks, stats",
     run_info},
    {"export", "Write the merged inputs as one Perfetto or Chrome JSON trace",
     run_export},
    {"pack", "Write trace files and a generated perfetto_manifest into one archive",
     run_pack},
    {"plugins", "List the reader plugins found", run_plugins},
    {"config-check", "Check a merge config and print it back normalised",
     run_config_check},
};

static void print_usage(FILE *out) {
  fprintf(out,
          "Usage: tracemerge COMMAND [OPTION...] [INPUT...]\n"
          "\n"
          "Merge trace files from many devices onto one timeline and query "
          "them with SQL.\n"
          "\n"
          "Commands:\n");
  for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
    fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
  fprintf(out,
          "\n"
          "Options:\n"
          "  -h, --help     Show this help\n"
          "  -V, --version  Show the version\n"
          "\n"
          "Run 'tracemerge COMMAND --help' for the options of a command.\n");
}

int main(int argc, char **argv) {
  /* Only the character set, so GLib's help text keeps its UTF-8; numbers
   * keep the C locale's format. */
  setlocale(LC_CTYPE, "");
  if (argc < 2) {
    print_usage(stderr);
    return EXIT_USAGE;
  }
  const char *first = argv[1];
  if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0 ||
      strcmp(first, "help") == 0) {
    print_usage(stdout);
    return check_stdout();
  }
  if (strcmp(first, "--version") == 0 || strcmp(first, "-V") == 0) {
    printf("tracemerge %s\n", TM_VERSION);
    return check_stdout();
  }
  for (size_t i = 0; i < G_N_ELEMENTS(commands); i++) {
    if (strcmp(first, commands[i].name) != 0)
      continue;
    /* The subcommand sees "tracemerge NAME" as its program name, so its
     * --help reads "Usage: tracemerge NAME [OPTION...] ...". */
    char *prgname = g_strdup_printf("tracemerge %s", commands[i].name);
    g_set_prgname(prgname);
    char **sub_argv = g_new0(char *, (size_t)argc);
    sub_argv[0] = prgname;
    for (int a = 2; a < argc; a++)
      sub_argv[a - 1] = argv[a];
    int status = commands[i].run(argc - 1, sub_argv);
    g_free(sub_argv);
    g_free(prgname);
    g_strfreev(plugin_dirs);
    g_strfreev(preferred_plugins);
    g_strfreev(sql_packages);
    g_strfreev(reader_config_args);
    g_free(config_path);
    return status;
  }
  char *message = g_strdup_printf("unknown command '%s'", first);
  int status = usage_error(NULL, message);
  g_free(message);
  return status;
}
