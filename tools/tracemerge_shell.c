/*
 * The interactive prompt (see tracemerge_shell.h).
 *
 * Thin like the CLI: every query, .tables and .schema included, goes
 * through the library's public API (tm_session_query_with_options); the
 * prompt only reads lines, keeps the mode and prints.
 */
#include "tracemerge_shell.h"

#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <editline/readline.h>

#include "sigint_guard.h"

#define HISTORY_LINES 1000

typedef struct shell {
  tm_session *session;
  tm_format format;
  unsigned column_width;
  char *history_path; /* NULL: no history kept (input is not a terminal) */
  bool output_failed;
} shell;

/* ---- modes ---- */

static const struct {
  const char *name;
  tm_format format;
} modes[] = {
    {"table", TM_FORMAT_TABLE},
    {"csv", TM_FORMAT_CSV},
    {"tsv", TM_FORMAT_TSV},
    {"json", TM_FORMAT_JSON},
};

static const char *mode_name(tm_format format) {
  for (size_t i = 0; i < G_N_ELEMENTS(modes); i++)
    if (modes[i].format == format)
      return modes[i].name;
  return "?";
}

/* ---- running SQL ---- */

static void check_output(shell *sh) {
  if (fflush(stdout) != 0 || ferror(stdout))
    sh->output_failed = true;
}

/* Runs `sql` in the current mode: a line (interactive) or a file read by
 * .read (a script, as -q runs it). */
static void run_sql(shell *sh, const char *sql, bool script) {
  tm_query_options options = {.format = sh->format,
                              .column_width = sh->column_width,
                              .interactive = !script};
  uint64_t rows = 0;
  GError *error = NULL;
  gint64 start = g_get_monotonic_time();
  bool ok = tm_session_query_with_options(sh->session, sql, &options, stdout,
                                          &rows, &error);
  double ms = (double)(g_get_monotonic_time() - start) / 1000.0;
  fflush(stdout);
  if (!ok) {
    fprintf(stderr, "%s\n", error->message);
    g_error_free(error);
  } else {
    printf("\n%" PRIu64 " %s in %.3f ms\n\n", rows, rows == 1 ? "row" : "rows",
           ms);
  }
  check_output(sh);
}

/* Runs `sql` (one statement returning text rows) and returns its first
 * column, one element per row; NULL after printing the error. */
static GPtrArray *query_column(shell *sh, const char *sql) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  tm_query_options options = {.format = TM_FORMAT_TSV, .interactive = true};
  GError *error = NULL;
  bool ok = tm_session_query_with_options(sh->session, sql, &options, out,
                                          NULL, &error);
  fclose(out);
  if (!ok) {
    fprintf(stderr, "%s\n", error->message);
    g_error_free(error);
    free(text);
    return NULL;
  }
  GPtrArray *values = g_ptr_array_new_with_free_func(g_free);
  char **lines = g_strsplit(text, "\n", -1);
  /* Line 0 is the header; names hold no tab or newline, so no TSV escape
   * is left in the first column but "\\". */
  for (size_t i = 1; lines[i] && lines[i][0]; i++) {
    char *tab = strchr(lines[i], '\t');
    if (tab)
      *tab = '\0';
    g_ptr_array_add(values, g_strcompress(lines[i]));
  }
  g_strfreev(lines);
  free(text);
  return values;
}

/* `name` as an SQL string literal. */
static char *sql_literal(const char *name) {
  GString *out = g_string_new("'");
  for (const char *p = name; *p; p++) {
    if (*p == '\'')
      g_string_append_c(out, '\'');
    g_string_append_c(out, *p);
  }
  g_string_append_c(out, '\'');
  return g_string_free(out, FALSE);
}

#define SCHEMA_OBJECTS                                                      \
  "(SELECT name, type FROM sqlite_schema UNION ALL "                        \
  "SELECT name, type FROM sqlite_temp_schema)"

/* The tables and views a user queries: not SQLite's own, not the
 * __intrinsic_ storage behind the public views. */
static GPtrArray *public_tables(shell *sh) {
  return query_column(sh,
                      "SELECT name FROM " SCHEMA_OBJECTS
                      " WHERE type IN ('table', 'view') "
                      "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
                      "AND name NOT LIKE '\\_\\_%' ESCAPE '\\' "
                      "ORDER BY name");
}

static void command_tables(shell *sh) {
  GPtrArray *names = public_tables(sh);
  if (!names)
    return;
  for (guint i = 0; i < names->len; i++)
    printf("%s\n", (const char *)names->pdata[i]);
  g_ptr_array_free(names, TRUE);
  check_output(sh);
}

/* Prints `name`'s columns as a CREATE statement; false if no table or
 * view has that name. */
static bool print_schema(shell *sh, const char *name) {
  char *literal = sql_literal(name);
  char *sql = g_strdup_printf("SELECT type FROM " SCHEMA_OBJECTS
                              " WHERE name = %s COLLATE NOCASE "
                              "AND type IN ('table', 'view')",
                              literal);
  GPtrArray *kind = query_column(sh, sql);
  g_free(sql);
  bool found = kind && kind->len > 0;
  if (found) {
    sql = g_strdup_printf("SELECT name || iif(type = '', '', ' ' || type) "
                          "FROM pragma_table_info(%s)",
                          literal);
    GPtrArray *columns = query_column(sh, sql);
    g_free(sql);
    printf("CREATE %s %s (\n", strcmp(kind->pdata[0], "view") == 0 ? "VIEW"
                                                                   : "TABLE",
           name);
    for (guint i = 0; columns && i < columns->len; i++)
      printf("  %s%s\n", (const char *)columns->pdata[i],
             i + 1 < columns->len ? "," : "");
    printf(");\n");
    if (columns)
      g_ptr_array_free(columns, TRUE);
  }
  if (kind)
    g_ptr_array_free(kind, TRUE);
  g_free(literal);
  return found;
}

static void command_schema(shell *sh, const char *name) {
  if (name) {
    if (!print_schema(sh, name))
      fprintf(stderr, "no table or view named %s\n", name);
  } else {
    GPtrArray *names = public_tables(sh);
    for (guint i = 0; names && i < names->len; i++)
      print_schema(sh, names->pdata[i]);
    if (names)
      g_ptr_array_free(names, TRUE);
  }
  check_output(sh);
}

static void command_mode(shell *sh, const char *arg) {
  if (!arg) {
    printf("%s\n", mode_name(sh->format));
    check_output(sh);
    return;
  }
  for (size_t i = 0; i < G_N_ELEMENTS(modes); i++) {
    if (strcmp(arg, modes[i].name) == 0) {
      sh->format = modes[i].format;
      return;
    }
  }
  fprintf(stderr, ".mode takes table, csv, tsv or json\n");
}

static void command_width(shell *sh, const char *arg) {
  char *end = NULL;
  guint64 width = arg ? g_ascii_strtoull(arg, &end, 10) : 0;
  if (!arg || !*arg || *end || width < 1 || width > 1000) {
    fprintf(stderr, ".width takes a number of characters from 1 to 1000\n");
    return;
  }
  sh->column_width = (unsigned)width;
}

static void command_read(shell *sh, const char *path) {
  char *sql = NULL;
  GError *error = NULL;
  if (!path || !g_file_get_contents(path, &sql, NULL, &error)) {
    fprintf(stderr, "%s\n",
            error ? error->message : ".read takes the path of an SQL file");
    g_clear_error(&error);
    return;
  }
  run_sql(sh, sql, true);
  g_free(sql);
}

static void command_dump(shell *sh, const char *path) {
  GError *error = NULL;
  if (!path) {
    fprintf(stderr, ".dump takes the path of the SQLite file to write\n");
    return;
  }
  if (!tm_session_save_sqlite(sh->session, path, 0, &error)) {
    fprintf(stderr, "%s\n", error->message);
    g_error_free(error);
  }
}

static void print_help(shell *sh) {
  printf(".help             this list\n"
         ".quit, .q         leave (Ctrl-D too)\n"
         ".tables           the tables and views\n"
         ".schema [TABLE]   the columns of TABLE (of every table without one)\n"
         ".mode [MODE]      print results as table, csv, tsv or json (now: "
         "%s)\n"
         ".width N          the table mode's column width (now: %u)\n"
         ".read FILE        run the SQL script in FILE, as -q does\n"
         ".dump FILE        save the trace as an SQLite database in FILE\n"
         "Any other line is SQL, run on the merged trace; Ctrl-C stops it.\n",
         mode_name(sh->format), sh->column_width);
  check_output(sh);
}

/* Runs a '.' line; false for .quit. */
static bool run_command(shell *sh, const char *line) {
  char **words = g_strsplit_set(line + 1, " \t", 2);
  const char *command = words[0] ? words[0] : "";
  char *arg = words[0] && words[1] ? g_strstrip(words[1]) : NULL;
  if (arg && !*arg)
    arg = NULL;
  bool go_on = true;
  if (strcmp(command, "quit") == 0 || strcmp(command, "q") == 0)
    go_on = false;
  else if (strcmp(command, "help") == 0)
    print_help(sh);
  else if (strcmp(command, "tables") == 0)
    command_tables(sh);
  else if (strcmp(command, "schema") == 0)
    command_schema(sh, arg);
  else if (strcmp(command, "mode") == 0)
    command_mode(sh, arg);
  else if (strcmp(command, "width") == 0)
    command_width(sh, arg);
  else if (strcmp(command, "read") == 0)
    command_read(sh, arg);
  else if (strcmp(command, "dump") == 0)
    command_dump(sh, arg);
  else {
    fprintf(stderr, "unknown command .%s\n", command);
    print_help(sh);
  }
  g_strfreev(words);
  return go_on;
}

/* ---- the loop ---- */

static char *default_history_path(void) {
  char *dir = g_build_filename(g_get_user_config_dir(), "tracemerge", NULL);
  char *path = NULL;
  if (g_mkdir_with_parents(dir, 0700) == 0)
    path = g_build_filename(dir, "history", NULL);
  g_free(dir);
  return path;
}

int shell_run(tm_session *session, const shell_options *options) {
  shell sh = {
      .session = session,
      .format = options->format,
      .column_width = options->column_width ? options->column_width : 20,
  };
  bool terminal = isatty(STDIN_FILENO);
  rl_readline_name = "tracemerge";
  using_history();
  stifle_history(HISTORY_LINES);
  if (terminal) {
    sh.history_path = default_history_path();
    if (sh.history_path)
      read_history(sh.history_path);
  }

  /* Ctrl-C stops the running query; at the prompt it gives a fresh one. */
  sigint_guard sigint;
  sigint_guard_begin(&sigint, session, false);

  for (;;) {
    sigint_guard_take();
    char *line = readline("> ");
    if (!line && sigint_guard_take()) {
      printf("\n");
      continue;
    }
    if (!line) {
      if (terminal)
        printf("\n");
      break;
    }
    char *text = g_strstrip(g_strdup(line));
    free(line);
    bool go_on = true;
    if (!*text) {
      printf("(.help lists the commands; .quit or Ctrl-D leaves)\n");
      check_output(&sh);
    } else {
      add_history(text);
      if (sh.history_path)
        write_history(sh.history_path);
      if (text[0] == '.')
        go_on = run_command(&sh, text);
      else
        run_sql(&sh, text, false);
    }
    g_free(text);
    if (!go_on || sh.output_failed)
      break;
  }

  sigint_guard_end(&sigint);
  g_free(sh.history_path);
  if (sh.output_failed) {
    fprintf(stderr, "tracemerge: writing to standard output failed: %s\n",
            g_strerror(errno));
    return 1;
  }
  return 0;
}
