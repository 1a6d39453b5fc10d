/*
 * The PerfettoSQL preprocessor (see perfetto_sql.h).
 *
 * A script is cut into statements with the tokenizer (a ';' at bracket
 * depth 0 ends one; a trigger ends at the ';' after its END). A statement
 * whose first words are INCLUDE PERFETTO or CREATE [OR REPLACE] PERFETTO
 * is parsed and run here; any other has its macros expanded and goes to
 * sqlite3_prepare_v2.
 */
#include "sql/perfetto_sql.h"

#include <sqlite3.h>
#include <stdarg.h>
#include <string.h>

#include "sql/perfetto_sql_function.h"
#include "sql/sql_output.h"
#include "sql/sql_stdlib.h"
#include "sql/sql_tokenizer.h"

/* Macro expansion stops after this many nested invocations. */
#define MAX_MACRO_DEPTH 64

typedef struct psql_macro {
  char *name;
  GPtrArray *params; /* char*, without the '$' */
  char *body;
} psql_macro;

struct tm_perfetto_sql {
  sqlite3 *db;
  GHashTable *modules;  /* name -> SQL text (both owned) */
  GHashTable *included; /* module names run on this connection */
  GHashTable *macros;   /* lower-case name -> psql_macro */
  GHashTable *functions;
};

static void macro_free(gpointer p) {
  psql_macro *m = p;
  g_free(m->name);
  g_ptr_array_free(m->params, TRUE);
  g_free(m->body);
  g_free(m);
}

/* ---- errors --------------------------------------------------------------- */

static void set_error_at(GError **error, const perfetto_sql_script *script,
                         const char *at, const char *format, ...)
    G_GNUC_PRINTF(4, 5);
static void set_error_at(GError **error, const perfetto_sql_script *script,
                         const char *at, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  char *message = g_strdup_vprintf(format, ap);
  va_end(ap);
  int line, column;
  sql_text_position(script->text, at, &line, &column);
  g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_QUERY, "%s:%d:%d: %s",
              script->source, line, column, message);
  g_free(message);
}

/* ---- statements ----------------------------------------------------------- */

void perfetto_sql_script_init(perfetto_sql_script *script, const char *text,
                              const char *source) {
  script->text = text;
  script->pos = text;
  script->source = source;
  script->perfetto_statements = 0;
}

static const char *text_end(const char *p) {
  return p + strlen(p);
}

/* Skips space, comments and empty statements. */
static const char *skip_to_statement(const char *p) {
  const char *end = text_end(p);
  for (;;) {
    sql_token t = sql_token_at(p, end);
    if (t.kind == SQL_TOKEN_SPACE || t.kind == SQL_TOKEN_COMMENT ||
        sql_token_is_punct(&t, ";"))
      p = t.start + t.len;
    else
      return p;
  }
}

bool perfetto_sql_script_at_end(const perfetto_sql_script *script) {
  return *skip_to_statement(script->pos) == '\0';
}

/* The end of the statement starting at `p`: just past its ';', or the end
 * of the text. Sets *unterminated to the first token left open. */
static const char *statement_end(const char *p, const char **unterminated) {
  const char *end = text_end(p);
  int depth = 0;
  int words = 0;
  bool trigger = false;
  int begin_depth = 0, case_depth = 0;
  *unterminated = NULL;
  for (;;) {
    sql_token t = sql_token_at(p, end);
    if (t.kind == SQL_TOKEN_END)
      return p;
    if (t.unterminated && !*unterminated)
      *unterminated = t.start;
    p = t.start + t.len;
    if (t.kind == SQL_TOKEN_WORD) {
      words++;
      if (words <= 4 && sql_token_is_word(&t, "TRIGGER"))
        trigger = true;
      if (trigger) {
        if (sql_token_is_word(&t, "BEGIN"))
          begin_depth++;
        else if (sql_token_is_word(&t, "CASE"))
          case_depth++;
        else if (sql_token_is_word(&t, "END")) {
          if (case_depth)
            case_depth--;
          else if (begin_depth)
            begin_depth--;
        }
      }
    } else if (sql_token_is_punct(&t, "(")) {
      depth++;
    } else if (sql_token_is_punct(&t, ")")) {
      if (depth)
        depth--;
    } else if (sql_token_is_punct(&t, ";") && depth == 0 && begin_depth == 0) {
      return p;
    }
  }
}

/* ---- macros --------------------------------------------------------------- */

static bool expand_into(tm_perfetto_sql *engine, const char *text, size_t len,
                        GString *out, int depth,
                        const perfetto_sql_script *script, const char *origin,
                        GError **error);

/* Parses the arguments of an invocation whose '(' is at `open`; returns the
 * position after ')' or NULL. Arguments are trimmed text. */
static const char *macro_args(const char *open, const char *end, GPtrArray *args) {
  int depth = 0;
  const char *arg_start = open + 1;
  const char *p = open;
  for (;;) {
    sql_token t = sql_token_at(p, end);
    if (t.kind == SQL_TOKEN_END)
      return NULL;
    p = t.start + t.len;
    if (sql_token_is_punct(&t, "(")) {
      depth++;
    } else if (sql_token_is_punct(&t, ")")) {
      if (--depth == 0) {
        char *arg = g_strstrip(g_strndup(arg_start, (size_t)(t.start - arg_start)));
        if (*arg || args->len)
          g_ptr_array_add(args, arg);
        else
          g_free(arg);
        return p;
      }
    } else if (sql_token_is_punct(&t, ",") && depth == 1) {
      g_ptr_array_add(args, g_strstrip(g_strndup(arg_start,
                                                 (size_t)(t.start - arg_start))));
      arg_start = p;
    }
  }
}

/* Appends `text[0..len)` to `out` with every macro invocation replaced by
 * its expansion. `origin` is where in the script the text came from, for
 * errors. */
static bool expand_into(tm_perfetto_sql *engine, const char *text, size_t len,
                        GString *out, int depth,
                        const perfetto_sql_script *script, const char *origin,
                        GError **error) {
  const char *end = text + len;
  const char *p = text;
  while (p < end) {
    sql_token t = sql_token_at(p, end);
    if (t.kind == SQL_TOKEN_END)
      break;
    const char *after = t.start + t.len;
    if (t.kind == SQL_TOKEN_WORD) {
      sql_token bang = sql_token_next_significant(after, end);
      sql_token open = sql_token_is_punct(&bang, "!")
                           ? sql_token_next_significant(bang.start + bang.len, end)
                           : bang;
      if (sql_token_is_punct(&bang, "!") && sql_token_is_punct(&open, "(")) {
        const char *at = depth == 0 ? t.start - text + origin : origin;
        char *name = g_ascii_strdown(t.start, (gssize)t.len);
        psql_macro *m = g_hash_table_lookup(engine->macros, name);
        g_free(name);
        if (!m) {
          set_error_at(error, script, at, "unknown macro %.*s!", (int)t.len,
                       t.start);
          return false;
        }
        if (depth >= MAX_MACRO_DEPTH) {
          set_error_at(error, script, at,
                       "macro %s! expands more than %d levels deep", m->name,
                       MAX_MACRO_DEPTH);
          return false;
        }
        GPtrArray *args = g_ptr_array_new_with_free_func(g_free);
        const char *close = macro_args(open.start, end, args);
        if (!close) {
          set_error_at(error, script, at, "macro %s!: unclosed '('", m->name);
          g_ptr_array_free(args, TRUE);
          return false;
        }
        if (args->len != m->params->len) {
          set_error_at(error, script, at,
                       "macro %s! takes %u arguments, %u given", m->name,
                       m->params->len, args->len);
          g_ptr_array_free(args, TRUE);
          return false;
        }
        /* Substitute $params in the body, then expand the result. */
        GString *body = g_string_new(NULL);
        const char *b = m->body, *bend = text_end(m->body);
        while (b < bend) {
          sql_token bt = sql_token_at(b, bend);
          if (bt.kind == SQL_TOKEN_END)
            break;
          bool replaced = false;
          if (bt.kind == SQL_TOKEN_VARIABLE && bt.start[0] == '$')
            for (guint i = 0; i < m->params->len; i++) {
              const char *param = g_ptr_array_index(m->params, i);
              if (strlen(param) == bt.len - 1 &&
                  g_ascii_strncasecmp(param, bt.start + 1, bt.len - 1) == 0) {
                g_string_append(body, g_ptr_array_index(args, i));
                replaced = true;
                break;
              }
            }
          if (!replaced)
            g_string_append_len(body, bt.start, (gssize)bt.len);
          b = bt.start + bt.len;
        }
        g_ptr_array_free(args, TRUE);
        g_string_append_c(out, ' ');
        bool ok = expand_into(engine, body->str, body->len, out, depth + 1,
                              script, at, error);
        g_string_append_c(out, ' ');
        g_string_free(body, TRUE);
        if (!ok)
          return false;
        p = close;
        continue;
      }
    }
    g_string_append_len(out, t.start, (gssize)t.len);
    p = after;
  }
  return true;
}

/* Expands `[start, end)` of the script; *changed tells whether any macro
 * was there (positions then no longer map one to one). */
static char *expand(tm_perfetto_sql *engine, const perfetto_sql_script *script,
                    const char *start, const char *end, bool *changed,
                    GError **error) {
  GString *out = g_string_sized_new((gsize)(end - start) + 1);
  if (!expand_into(engine, start, (size_t)(end - start), out, 0, script, start,
                   error)) {
    g_string_free(out, TRUE);
    return NULL;
  }
  *changed = out->len != (gsize)(end - start) ||
             memcmp(out->str, start, out->len) != 0;
  return g_string_free(out, FALSE);
}

/* ---- a cursor over one statement's tokens --------------------------------- */

typedef struct parser {
  const perfetto_sql_script *script;
  const char *p;
  const char *end;
  sql_token t; /* current significant token */
} parser;

static void parser_advance(parser *ps) {
  ps->t = sql_token_next_significant(ps->p, ps->end);
  ps->p = ps->t.start + ps->t.len;
}

static void parser_init(parser *ps, const perfetto_sql_script *script,
                        const char *start, const char *end) {
  ps->script = script;
  ps->p = start;
  ps->end = end;
  parser_advance(ps);
}

static bool accept_word(parser *ps, const char *word) {
  if (!sql_token_is_word(&ps->t, word))
    return false;
  parser_advance(ps);
  return true;
}

static bool accept_punct(parser *ps, const char *punct) {
  if (!sql_token_is_punct(&ps->t, punct))
    return false;
  parser_advance(ps);
  return true;
}

static const char *token_text_for_error(const sql_token *t) {
  return t->kind == SQL_TOKEN_END ? "end of statement" : NULL;
}

static bool expect_error(parser *ps, const char *what, GError **error) {
  const char *end_text = token_text_for_error(&ps->t);
  if (end_text)
    set_error_at(error, ps->script, ps->t.start, "expected %s, found %s", what,
                 end_text);
  else
    set_error_at(error, ps->script, ps->t.start, "expected %s, found '%.*s'",
                 what, (int)ps->t.len, ps->t.start);
  return false;
}

static bool expect_punct(parser *ps, const char *punct, GError **error) {
  if (accept_punct(ps, punct))
    return true;
  char *what = g_strdup_printf("'%s'", punct);
  expect_error(ps, what, error);
  g_free(what);
  return false;
}

static bool expect_word(parser *ps, const char *word, GError **error) {
  if (accept_word(ps, word))
    return true;
  return expect_error(ps, word, error);
}

/* An identifier (plain or quoted) into *name (unquoted, owned). */
static bool parse_name(parser *ps, const char *what, char **name,
                       GError **error) {
  if (ps->t.kind == SQL_TOKEN_WORD) {
    *name = g_strndup(ps->t.start, ps->t.len);
  } else if (ps->t.kind == SQL_TOKEN_QUOTED_ID && ps->t.len >= 2) {
    *name = g_strndup(ps->t.start + 1, ps->t.len - 2);
  } else {
    return expect_error(ps, what, error);
  }
  parser_advance(ps);
  return true;
}

/* A type: a word, optionally with a parenthesised reference
 * (JOINID(slice.id)). */
static bool parse_type(parser *ps, char **type, GError **error) {
  const char *start = ps->t.start;
  if (ps->t.kind != SQL_TOKEN_WORD)
    return expect_error(ps, "a type", error);
  char *word = g_strndup(ps->t.start, ps->t.len);
  bool known = perfetto_sql_type_is_known(word);
  g_free(word);
  if (!known) {
    set_error_at(error, ps->script, ps->t.start, "unknown type '%.*s'",
                 (int)ps->t.len, ps->t.start);
    return false;
  }
  const char *stop = ps->p;
  parser_advance(ps);
  if (sql_token_is_punct(&ps->t, "(")) {
    int depth = 0;
    do {
      if (sql_token_is_punct(&ps->t, "("))
        depth++;
      else if (sql_token_is_punct(&ps->t, ")"))
        depth--;
      else if (ps->t.kind == SQL_TOKEN_END)
        return expect_error(ps, "')'", error);
      stop = ps->p;
      parser_advance(ps);
    } while (depth > 0);
  }
  *type = g_strndup(start, (size_t)(stop - start));
  return true;
}

static void columns_free(GArray *columns) {
  for (guint i = 0; i < columns->len; i++) {
    psql_column *c = &g_array_index(columns, psql_column, i);
    g_free(c->name);
    g_free(c->type);
  }
  g_array_free(columns, TRUE);
}

/* "(name TYPE, ...)" — `(` already current. Empty lists are allowed. */
static bool parse_columns(parser *ps, GArray *columns, GError **error) {
  if (!expect_punct(ps, "(", error))
    return false;
  if (accept_punct(ps, ")"))
    return true;
  for (;;) {
    psql_column c = {NULL, NULL};
    if (!parse_name(ps, "a name", &c.name, error))
      return false;
    if (!parse_type(ps, &c.type, error)) {
      g_free(c.name);
      return false;
    }
    g_array_append_val(columns, c);
    if (accept_punct(ps, ")"))
      return true;
    if (!expect_punct(ps, ",", error))
      return false;
  }
}

/* The statement text after AS up to the statement's end, without the ';'
 * (a range of the script, so errors in it have a line and column). */
static const char *body_end(parser *ps, const char *stmt_end) {
  const char *end = stmt_end;
  if (end > ps->t.start && end[-1] == ';')
    end--;
  while (end > ps->t.start && g_ascii_isspace(end[-1]))
    end--;
  return end;
}

static char *body_text(parser *ps, const char *stmt_end) {
  return g_strndup(ps->t.start, (size_t)(body_end(ps, stmt_end) - ps->t.start));
}

/* ---- running statements ----------------------------------------------------- */

static bool run_plain(tm_perfetto_sql *engine, const perfetto_sql_script *script,
                      const char *at, const char *sql, GError **error) {
  char *message = NULL;
  if (sqlite3_exec(engine->db, sql, NULL, NULL, &message) != SQLITE_OK) {
    set_error_at(error, script, at, "%s",
                 message ? message : sqlite3_errmsg(engine->db));
    sqlite3_free(message);
    return false;
  }
  return true;
}

static bool include_module(tm_perfetto_sql *engine, const char *name,
                           const perfetto_sql_script *script, const char *at,
                           GError **error);

static bool run_include(tm_perfetto_sql *engine, parser *ps, GError **error) {
  const char *at = ps->t.start;
  GString *name = g_string_new(NULL);
  while (ps->t.kind == SQL_TOKEN_WORD || sql_token_is_punct(&ps->t, ".") ||
         sql_token_is_punct(&ps->t, "*") || ps->t.kind == SQL_TOKEN_NUMBER) {
    g_string_append_len(name, ps->t.start, (gssize)ps->t.len);
    parser_advance(ps);
  }
  bool ok = false;
  if (name->len == 0) {
    expect_error(ps, "a module name", error);
  } else if (ps->t.kind != SQL_TOKEN_END && !sql_token_is_punct(&ps->t, ";")) {
    expect_error(ps, "';'", error);
  } else if (name->str[name->len - 1] == '*') {
    /* a.b.* or *: every module under that prefix, in name order. */
    size_t prefix_len = name->len - 1;
    GList *names = g_list_sort(g_hash_table_get_keys(engine->modules),
                               (GCompareFunc)strcmp);
    ok = true;
    for (GList *l = names; ok && l; l = l->next)
      if (strncmp(l->data, name->str, prefix_len) == 0)
        ok = include_module(engine, l->data, ps->script, at, error);
    g_list_free(names);
  } else {
    ok = include_module(engine, name->str, ps->script, at, error);
  }
  g_string_free(name, TRUE);
  return ok;
}

static bool include_module(tm_perfetto_sql *engine, const char *name,
                           const perfetto_sql_script *script, const char *at,
                           GError **error) {
  const char *text = NULL;
  const char *key = NULL;
  if (!g_hash_table_lookup_extended(engine->modules, name, (gpointer *)&key,
                                    (gpointer *)&text)) {
    set_error_at(error, script, at, "unknown module %s", name);
    return false;
  }
  if (g_hash_table_contains(engine->included, key))
    return true;
  char *source = g_strdup(key);
  g_hash_table_add(engine->included, g_strdup(key));
  GError *inner = NULL;
  bool ok = perfetto_sql_exec(engine, text, source, &inner);
  g_free(source);
  if (!ok) {
    set_error_at(error, script, at, "including %s: %s", name, inner->message);
    g_error_free(inner);
    return false;
  }
  return true;
}

static bool check_schema(tm_perfetto_sql *engine, parser *ps, const char *at,
                         const char *name, GArray *schema, GError **error) {
  if (!schema->len)
    return true;
  char *sql = g_strdup_printf("SELECT * FROM \"%s\" LIMIT 0", name);
  sqlite3_stmt *stmt = NULL;
  int rc = sqlite3_prepare_v2(engine->db, sql, -1, &stmt, NULL);
  g_free(sql);
  if (rc != SQLITE_OK) {
    set_error_at(error, ps->script, at, "%s", sqlite3_errmsg(engine->db));
    sqlite3_finalize(stmt);
    return false;
  }
  bool ok = true;
  int n = sqlite3_column_count(stmt);
  for (guint i = 0; ok && i < schema->len; i++) {
    const char *want = g_array_index(schema, psql_column, i).name;
    bool found = false;
    for (int c = 0; c < n && !found; c++)
      found = g_ascii_strcasecmp(sqlite3_column_name(stmt, c), want) == 0;
    if (!found) {
      set_error_at(error, ps->script, at,
                   "%s: column '%s' is in the schema but not in the result",
                   name, want);
      ok = false;
    }
  }
  for (int c = 0; ok && c < n; c++) {
    bool found = false;
    for (guint i = 0; i < schema->len && !found; i++)
      found = g_ascii_strcasecmp(sqlite3_column_name(stmt, c),
                                 g_array_index(schema, psql_column, i).name) == 0;
    if (!found) {
      set_error_at(error, ps->script, at,
                   "%s: column '%s' is in the result but not in the schema",
                   name, sqlite3_column_name(stmt, c));
      ok = false;
    }
  }
  sqlite3_finalize(stmt);
  return ok;
}

/* CREATE PERFETTO TABLE / VIEW. */
static bool run_create_relation(tm_perfetto_sql *engine, parser *ps,
                                bool replace, bool table, const char *stmt_end,
                                GError **error) {
  const char *at = ps->t.start;
  char *name = NULL;
  GArray *schema = g_array_new(FALSE, TRUE, sizeof(psql_column));
  char *body = NULL, *expanded = NULL, *sql = NULL;
  bool ok = false, changed;
  if (!parse_name(ps, table ? "a table name" : "a view name", &name, error))
    goto out;
  if (sql_token_is_punct(&ps->t, "(") && !parse_columns(ps, schema, error))
    goto out;
  if (!expect_word(ps, "AS", error))
    goto out;
  expanded = expand(engine, ps->script, ps->t.start, body_end(ps, stmt_end),
                    &changed, error);
  if (!expanded)
    goto out;
  if (replace) {
    sql = g_strdup_printf("DROP %s IF EXISTS \"%s\"", table ? "TABLE" : "VIEW",
                          name);
    if (!run_plain(engine, ps->script, at, sql, error))
      goto out;
    g_clear_pointer(&sql, g_free);
  }
  sql = g_strdup_printf("CREATE %s \"%s\" AS %s", table ? "TABLE" : "VIEW",
                        name, expanded);
  if (!run_plain(engine, ps->script, at, sql, error))
    goto out;
  ok = check_schema(engine, ps, at, name, schema, error);
  if (!ok) {
    g_free(sql);
    sql = g_strdup_printf("DROP %s IF EXISTS \"%s\"", table ? "TABLE" : "VIEW",
                          name);
    sqlite3_exec(engine->db, sql, NULL, NULL, NULL);
  }
out:
  g_free(sql);
  g_free(expanded);
  g_free(body);
  g_free(name);
  columns_free(schema);
  return ok;
}

static bool run_create_function(tm_perfetto_sql *engine, parser *ps,
                                bool replace, const char *stmt_end,
                                GError **error) {
  const char *at = ps->t.start;
  char *name = NULL, *return_type = NULL, *body = NULL, *expanded = NULL;
  GArray *args = g_array_new(FALSE, TRUE, sizeof(psql_column));
  GArray *columns = g_array_new(FALSE, TRUE, sizeof(psql_column));
  bool ok = false, is_table = false, changed;
  if (!parse_name(ps, "a function name", &name, error))
    goto out;
  if (!parse_columns(ps, args, error))
    goto out;
  if (!expect_word(ps, "RETURNS", error))
    goto out;
  if (accept_word(ps, "TABLE")) {
    is_table = true;
    if (!parse_columns(ps, columns, error))
      goto out;
    if (columns->len == 0) {
      set_error_at(error, ps->script, ps->t.start,
                   "a table function returns at least one column");
      goto out;
    }
  } else if (!parse_type(ps, &return_type, error)) {
    goto out;
  }
  if (!expect_word(ps, "AS", error))
    goto out;
  expanded = expand(engine, ps->script, ps->t.start, body_end(ps, stmt_end),
                    &changed, error);
  if (!expanded)
    goto out;
  GError *inner = NULL;
  ok = perfetto_sql_function_create(
      engine->db, engine->functions, name, (psql_column *)(void *)args->data,
      args->len, return_type, is_table ? (psql_column *)(void *)columns->data : NULL,
      columns->len, expanded, replace, &inner);
  if (!ok) {
    set_error_at(error, ps->script, at, "%s", inner->message);
    g_error_free(inner);
  }
out:
  g_free(name);
  g_free(return_type);
  g_free(body);
  g_free(expanded);
  columns_free(args);
  columns_free(columns);
  return ok;
}

static bool run_create_macro(tm_perfetto_sql *engine, parser *ps, bool replace,
                             const char *stmt_end, GError **error) {
  static const char *const macro_types[] = {
      "Expr", "TableOrSubquery", "ColumnName", "ColumnNameList",
      "_ProjectionFragment", "_TableNameList", "_ColumnNameList", "_SqlFragment"};
  const char *at = ps->t.start;
  char *name = NULL;
  GPtrArray *params = g_ptr_array_new_with_free_func(g_free);
  bool ok = false;
  if (!parse_name(ps, "a macro name", &name, error))
    goto out;
  if (!expect_punct(ps, "(", error))
    goto out;
  if (!accept_punct(ps, ")")) {
    for (;;) {
      char *param = NULL;
      if (!parse_name(ps, "an argument name", &param, error))
        goto out;
      g_ptr_array_add(params, param);
      bool known = false;
      for (size_t i = 0; i < G_N_ELEMENTS(macro_types) && !known; i++)
        known = sql_token_is_word(&ps->t, macro_types[i]);
      if (!known) {
        set_error_at(error, ps->script, ps->t.start,
                     "unknown macro argument type '%.*s' (Expr, "
                     "TableOrSubquery, ColumnName or ColumnNameList)",
                     (int)ps->t.len, ps->t.start);
        goto out;
      }
      parser_advance(ps);
      if (accept_punct(ps, ")"))
        break;
      if (!expect_punct(ps, ",", error))
        goto out;
    }
  }
  if (!expect_word(ps, "RETURNS", error))
    goto out;
  bool known = false;
  for (size_t i = 0; i < G_N_ELEMENTS(macro_types) && !known; i++)
    known = sql_token_is_word(&ps->t, macro_types[i]);
  if (!known) {
    expect_error(ps, "a macro return type", error);
    goto out;
  }
  parser_advance(ps);
  if (!expect_word(ps, "AS", error))
    goto out;
  char *key = g_ascii_strdown(name, -1);
  if (!replace && g_hash_table_contains(engine->macros, key)) {
    set_error_at(error, ps->script, at,
                 "macro %s already exists (use CREATE OR REPLACE PERFETTO "
                 "MACRO)",
                 name);
    g_free(key);
    goto out;
  }
  psql_macro *m = g_new0(psql_macro, 1);
  m->name = key;
  m->params = g_steal_pointer(&params);
  m->body = body_text(ps, stmt_end);
  g_hash_table_replace(engine->macros, m->name, m);
  ok = true;
out:
  g_free(name);
  if (params)
    g_ptr_array_free(params, TRUE);
  return ok;
}

/* Runs a PerfettoSQL statement if [start, end) is one; *handled says. */
static bool run_perfetto_statement(tm_perfetto_sql *engine,
                                   const perfetto_sql_script *script,
                                   const char *start, const char *end,
                                   bool *handled, GError **error) {
  parser ps;
  parser_init(&ps, script, start, end);
  *handled = false;
  if (accept_word(&ps, "INCLUDE")) {
    if (!accept_word(&ps, "PERFETTO"))
      return true; /* not ours: let SQLite report it */
    *handled = true;
    if (!expect_word(&ps, "MODULE", error))
      return false;
    return run_include(engine, &ps, error);
  }
  if (!accept_word(&ps, "CREATE"))
    return true;
  bool replace = false;
  if (accept_word(&ps, "OR")) {
    if (!accept_word(&ps, "REPLACE"))
      return true;
    replace = true;
  }
  if (!accept_word(&ps, "PERFETTO"))
    return true;
  *handled = true;
  if (accept_word(&ps, "TABLE"))
    return run_create_relation(engine, &ps, replace, true, end, error);
  if (accept_word(&ps, "VIEW"))
    return run_create_relation(engine, &ps, replace, false, end, error);
  if (accept_word(&ps, "FUNCTION"))
    return run_create_function(engine, &ps, replace, end, error);
  if (accept_word(&ps, "MACRO"))
    return run_create_macro(engine, &ps, replace, end, error);
  if (accept_word(&ps, "INDEX")) {
    char *body = body_text(&ps, end);
    char *sql = g_strdup_printf("CREATE INDEX %s", body);
    bool ok = run_plain(engine, script, start, sql, error);
    g_free(sql);
    g_free(body);
    return ok;
  }
  return expect_error(&ps, "TABLE, VIEW, FUNCTION, MACRO or INDEX", error);
}

bool perfetto_sql_next(tm_perfetto_sql *engine, perfetto_sql_script *script,
                       sqlite3_stmt **stmt, GError **error) {
  *stmt = NULL;
  for (;;) {
    const char *start = skip_to_statement(script->pos);
    if (!*start) {
      script->pos = start;
      return true;
    }
    const char *unterminated;
    const char *end = statement_end(start, &unterminated);
    script->pos = end;
    if (unterminated) {
      set_error_at(error, script, unterminated,
                   "unterminated string, identifier or comment");
      return false;
    }
    bool handled;
    if (!run_perfetto_statement(engine, script, start, end, &handled, error))
      return false;
    if (handled) {
      script->perfetto_statements++;
      continue;
    }
    bool changed = false;
    char *sql = expand(engine, script, start, end, &changed, error);
    if (!sql)
      return false;
    const char *tail = NULL;
    int rc = sqlite3_prepare_v2(engine->db, sql, -1, stmt, &tail);
    if (rc != SQLITE_OK) {
      int offset = sqlite3_error_offset(engine->db);
      const char *at = start;
      if (!changed && offset >= 0 && offset < (int)(end - start))
        at = start + offset;
      set_error_at(error, script, at, "%s", sqlite3_errmsg(engine->db));
      g_free(sql);
      sqlite3_finalize(*stmt);
      *stmt = NULL;
      return false;
    }
    g_free(sql);
    if (*stmt)
      return true;
    /* Only comments (SQLite compiled nothing): go on. */
  }
}

bool perfetto_sql_exec(tm_perfetto_sql *engine, const char *text,
                       const char *source, GError **error) {
  perfetto_sql_script script;
  perfetto_sql_script_init(&script, text, source);
  for (;;) {
    sqlite3_stmt *stmt = NULL;
    const char *stmt_start = skip_to_statement(script.pos);
    if (!perfetto_sql_next(engine, &script, &stmt, error))
      return false;
    if (!stmt)
      return true;
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
      ;
    if (rc != SQLITE_DONE) {
      set_error_at(error, &script, stmt_start, "%s",
                   sqlite3_errmsg(engine->db));
      sqlite3_finalize(stmt);
      return false;
    }
    sqlite3_finalize(stmt);
  }
}

/* ---- the engine --------------------------------------------------------------- */

tm_perfetto_sql *perfetto_sql_new(sqlite3 *db, GError **error) {
  tm_perfetto_sql *engine = g_new0(tm_perfetto_sql, 1);
  engine->db = db;
  engine->modules = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                          g_free);
  engine->included = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                           NULL);
  engine->macros = g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
                                         macro_free);
  engine->functions = perfetto_sql_function_registry_new();
  for (size_t i = 0; i < tm_stdlib_module_count; i++)
    g_hash_table_insert(engine->modules, g_strdup(tm_stdlib_modules[i].name),
                        g_strdup(tm_stdlib_modules[i].sql));
  perfetto_sql_script script;
  perfetto_sql_script_init(&script, "INCLUDE PERFETTO MODULE prelude;",
                           "startup");
  if (!include_module(engine, "prelude", &script, script.text, error)) {
    perfetto_sql_free(engine);
    return NULL;
  }
  return engine;
}

void perfetto_sql_free(tm_perfetto_sql *engine) {
  if (!engine)
    return;
  g_hash_table_destroy(engine->included);
  g_hash_table_destroy(engine->modules);
  g_hash_table_destroy(engine->macros);
  g_hash_table_destroy(engine->functions);
  g_free(engine);
}

/* Adds the modules under `dir` (relative module path `rel`). */
static bool add_dir(tm_perfetto_sql *engine, const char *dir, const char *rel,
                    const char *package, GError **error) {
  GDir *d = g_dir_open(dir, 0, error);
  if (!d) {
    g_prefix_error(error, "SQL package %s: ", package);
    return false;
  }
  bool ok = true;
  const char *entry;
  while (ok && (entry = g_dir_read_name(d))) {
    char *path = g_build_filename(dir, entry, NULL);
    char *sub = *rel ? g_strdup_printf("%s.%s", rel, entry) : g_strdup(entry);
    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
      ok = add_dir(engine, path, sub, package, error);
    } else if (g_str_has_suffix(entry, ".sql")) {
      char *text = NULL;
      if (g_file_get_contents(path, &text, NULL, error)) {
        sub[strlen(sub) - 4] = '\0';
        g_hash_table_replace(engine->modules,
                             g_strdup_printf("%s.%s", package, sub), text);
      } else {
        g_prefix_error(error, "SQL package %s: ", package);
        ok = false;
      }
    }
    g_free(sub);
    g_free(path);
  }
  g_dir_close(d);
  return ok;
}

bool perfetto_sql_add_package(tm_perfetto_sql *engine, const char *dir,
                              const char *package, GError **error) {
  char *base = package && *package ? g_strdup(package) : g_path_get_basename(dir);
  if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
    g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_QUERY,
                "SQL package %s: %s is not a directory", base, dir);
    g_free(base);
    return false;
  }
  /* Replace the package: drop its old modules first. */
  GHashTableIter it;
  gpointer key;
  size_t len = strlen(base);
  g_hash_table_iter_init(&it, engine->modules);
  while (g_hash_table_iter_next(&it, &key, NULL)) {
    const char *name = key;
    if (strncmp(name, base, len) == 0 && (name[len] == '.' || !name[len]))
      g_hash_table_iter_remove(&it);
  }
  bool ok = add_dir(engine, dir, "", base, error);
  g_free(base);
  return ok;
}
