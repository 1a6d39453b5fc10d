/*
 * CREATE PERFETTO FUNCTION at run time (see perfetto_sql_function.h).
 */
#include "sql/perfetto_sql_function.h"

#include <sqlite3.h>
#include <string.h>

#include "sql/sql_output.h"

typedef struct psql_function {
  sqlite3 *db;
  char *name;
  psql_column *args;
  size_t n_args;
  char *return_type;
  psql_column *columns; /* NULL for a scalar function */
  size_t n_columns;
  char *body;
  GPtrArray *idle; /* prepared bodies not in use */
} psql_function;

static void finalize_stmt(gpointer stmt) {
  sqlite3_finalize(stmt);
}

static void psql_columns_free(psql_column *columns, size_t n) {
  for (size_t i = 0; i < n; i++) {
    g_free(columns[i].name);
    g_free(columns[i].type);
  }
  g_free(columns);
}

static psql_column *psql_columns_copy(const psql_column *columns, size_t n) {
  psql_column *copy = g_new0(psql_column, n ? n : 1);
  for (size_t i = 0; i < n; i++) {
    copy[i].name = g_strdup(columns[i].name);
    copy[i].type = g_strdup(columns[i].type);
  }
  return copy;
}

static void psql_function_free(gpointer p) {
  psql_function *f = p;
  g_ptr_array_free(f->idle, TRUE);
  g_free(f->name);
  psql_columns_free(f->args, f->n_args);
  psql_columns_free(f->columns, f->n_columns);
  g_free(f->return_type);
  g_free(f->body);
  g_free(f);
}

GHashTable *perfetto_sql_function_registry_new(void) {
  return g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
                               psql_function_free);
}

bool perfetto_sql_type_is_known(const char *type) {
  static const char *const names[] = {
      "INT", "INTEGER", "LONG", "UINT", "BOOL", "DOUBLE", "FLOAT", "REAL",
      "STRING", "TEXT", "BYTES", "BLOB", "PROTO", "TIMESTAMP", "DURATION",
      "ID", "JOINID", "ARGSETID", "ANY",
  };
  size_t len = strcspn(type, "( ");
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
    if (strlen(names[i]) == len && g_ascii_strncasecmp(type, names[i], len) == 0)
      return true;
  return false;
}

/* A prepared body, from the idle pool or new; NULL with `*message` set. */
static sqlite3_stmt *take_stmt(psql_function *f, char **message) {
  if (f->idle->len)
    return g_ptr_array_steal_index(f->idle, f->idle->len - 1);
  sqlite3_stmt *stmt = NULL;
  if (sqlite3_prepare_v2(f->db, f->body, -1, &stmt, NULL) != SQLITE_OK) {
    *message = g_strdup_printf("%s: %s", f->name, sqlite3_errmsg(f->db));
    sqlite3_finalize(stmt);
    return NULL;
  }
  if (!stmt) {
    *message = g_strdup_printf("%s: the body has no statement", f->name);
    return NULL;
  }
  return stmt;
}

static void give_back(psql_function *f, sqlite3_stmt *stmt) {
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  g_ptr_array_add(f->idle, stmt);
}

/* Binds the call's arguments to `$name` (or `:name`, `@name`). */
static void bind_args(psql_function *f, sqlite3_stmt *stmt,
                      sqlite3_value **argv) {
  for (size_t i = 0; i < f->n_args; i++) {
    static const char prefixes[] = "$:@";
    for (const char *p = prefixes; *p; p++) {
      char *param = g_strdup_printf("%c%s", *p, f->args[i].name);
      int index = sqlite3_bind_parameter_index(stmt, param);
      g_free(param);
      if (index > 0)
        sqlite3_bind_value(stmt, index, argv[i]);
    }
  }
}

/* ---- scalar functions ---- */

static void scalar_call(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  psql_function *f = sqlite3_user_data(ctx);
  (void)argc;
  char *message = NULL;
  sqlite3_stmt *stmt = take_stmt(f, &message);
  if (!stmt) {
    sqlite3_result_error(ctx, message, -1);
    g_free(message);
    return;
  }
  bind_args(f, stmt, argv);
  int rc = sqlite3_step(stmt);
  if (rc == SQLITE_ROW) {
    if (sqlite3_column_count(stmt) < 1)
      sqlite3_result_null(ctx);
    else
      sqlite3_result_value(ctx, sqlite3_column_value(stmt, 0));
  } else if (rc != SQLITE_DONE) {
    message = g_strdup_printf("%s: %s", f->name, sqlite3_errmsg(f->db));
    sqlite3_result_error(ctx, message, -1);
    g_free(message);
  }
  give_back(f, stmt);
}

/* ---- table functions ---- */

typedef struct fn_vtab {
  sqlite3_vtab base;
  psql_function *f;
} fn_vtab;

typedef struct fn_cursor {
  sqlite3_vtab_cursor base;
  sqlite3_stmt *stmt;
  int *column_map; /* output column -> statement column */
  bool eof;
  sqlite3_int64 row;
  sqlite3_value **arg_values; /* copies, for the hidden columns */
} fn_cursor;

static int fn_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                      sqlite3_vtab **out, char **err) {
  (void)argc, (void)argv, (void)err;
  psql_function *f = aux;
  GString *schema = g_string_new("CREATE TABLE x(");
  for (size_t i = 0; i < f->n_columns; i++)
    g_string_append_printf(schema, "%s\"%s\"", i ? ", " : "",
                           f->columns[i].name);
  for (size_t i = 0; i < f->n_args; i++)
    g_string_append_printf(schema, "%s\"__arg_%s\" HIDDEN",
                           f->n_columns || i ? ", " : "", f->args[i].name);
  g_string_append_c(schema, ')');
  int rc = sqlite3_declare_vtab(db, schema->str);
  g_string_free(schema, TRUE);
  if (rc != SQLITE_OK)
    return rc;
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  fn_vtab *vtab = g_new0(fn_vtab, 1);
  vtab->f = f;
  *out = &vtab->base;
  return SQLITE_OK;
}

static int fn_disconnect(sqlite3_vtab *base) {
  g_free(base);
  return SQLITE_OK;
}

static int fn_best_index(sqlite3_vtab *base, sqlite3_index_info *info) {
  psql_function *f = ((fn_vtab *)base)->f;
  int bound = 0;
  for (size_t a = 0; a < f->n_args; a++) {
    int column = (int)(f->n_columns + a);
    bool found = false;
    for (int i = 0; i < info->nConstraint; i++) {
      const struct sqlite3_index_constraint *c = &info->aConstraint[i];
      if (c->iColumn != column || !c->usable ||
          c->op != SQLITE_INDEX_CONSTRAINT_EQ)
        continue;
      info->aConstraintUsage[i].argvIndex = (int)a + 1;
      info->aConstraintUsage[i].omit = 1;
      found = true;
      break;
    }
    if (!found)
      return SQLITE_CONSTRAINT;
    bound++;
  }
  info->estimatedCost = 1000;
  info->estimatedRows = 1000;
  return SQLITE_OK;
}

static int fn_open(sqlite3_vtab *base, sqlite3_vtab_cursor **out) {
  psql_function *f = ((fn_vtab *)base)->f;
  fn_cursor *cur = g_new0(fn_cursor, 1);
  cur->column_map = g_new0(int, f->n_columns ? f->n_columns : 1);
  cur->arg_values = g_new0(sqlite3_value *, f->n_args ? f->n_args : 1);
  *out = &cur->base;
  return SQLITE_OK;
}

static void cursor_release(fn_cursor *cur, psql_function *f) {
  if (cur->stmt)
    give_back(f, cur->stmt);
  cur->stmt = NULL;
  for (size_t i = 0; i < f->n_args; i++)
    g_clear_pointer(&cur->arg_values[i], sqlite3_value_free);
}

static int fn_close(sqlite3_vtab_cursor *base) {
  fn_cursor *cur = (fn_cursor *)base;
  psql_function *f = ((fn_vtab *)base->pVtab)->f;
  cursor_release(cur, f);
  g_free(cur->column_map);
  g_free(cur->arg_values);
  g_free(cur);
  return SQLITE_OK;
}

static int cursor_step(fn_cursor *cur, fn_vtab *vtab) {
  int rc = sqlite3_step(cur->stmt);
  if (rc == SQLITE_ROW) {
    cur->eof = false;
    return SQLITE_OK;
  }
  cur->eof = true;
  if (rc == SQLITE_DONE)
    return SQLITE_OK;
  sqlite3_free(vtab->base.zErrMsg);
  vtab->base.zErrMsg = sqlite3_mprintf("%s: %s", vtab->f->name,
                                       sqlite3_errmsg(vtab->f->db));
  return SQLITE_ERROR;
}

static int fn_filter(sqlite3_vtab_cursor *base, int idx_num,
                     const char *idx_str, int argc, sqlite3_value **argv) {
  (void)idx_num, (void)idx_str;
  fn_cursor *cur = (fn_cursor *)base;
  fn_vtab *vtab = (fn_vtab *)base->pVtab;
  psql_function *f = vtab->f;
  cursor_release(cur, f);
  char *message = NULL;
  cur->stmt = take_stmt(f, &message);
  if (!cur->stmt) {
    sqlite3_free(vtab->base.zErrMsg);
    vtab->base.zErrMsg = sqlite3_mprintf("%s", message);
    g_free(message);
    return SQLITE_ERROR;
  }
  for (size_t c = 0; c < f->n_columns; c++) {
    cur->column_map[c] = -1;
    for (int s = 0; s < sqlite3_column_count(cur->stmt); s++)
      if (g_ascii_strcasecmp(sqlite3_column_name(cur->stmt, s),
                             f->columns[c].name) == 0) {
        cur->column_map[c] = s;
        break;
      }
    if (cur->column_map[c] < 0) {
      sqlite3_free(vtab->base.zErrMsg);
      vtab->base.zErrMsg = sqlite3_mprintf(
          "%s: column '%s' is in the function's RETURNS TABLE but not in its "
          "body's result",
          f->name, f->columns[c].name);
      return SQLITE_ERROR;
    }
  }
  for (int i = 0; i < argc && (size_t)i < f->n_args; i++)
    cur->arg_values[i] = sqlite3_value_dup(argv[i]);
  bind_args(f, cur->stmt, argv);
  cur->row = 0;
  return cursor_step(cur, vtab);
}

static int fn_next(sqlite3_vtab_cursor *base) {
  fn_cursor *cur = (fn_cursor *)base;
  cur->row++;
  return cursor_step(cur, (fn_vtab *)base->pVtab);
}

static int fn_eof(sqlite3_vtab_cursor *base) {
  return ((fn_cursor *)base)->eof;
}

static int fn_column(sqlite3_vtab_cursor *base, sqlite3_context *ctx,
                     int column) {
  fn_cursor *cur = (fn_cursor *)base;
  psql_function *f = ((fn_vtab *)base->pVtab)->f;
  if ((size_t)column < f->n_columns) {
    sqlite3_result_value(ctx,
                         sqlite3_column_value(cur->stmt, cur->column_map[column]));
  } else {
    sqlite3_value *v = cur->arg_values[(size_t)column - f->n_columns];
    if (v)
      sqlite3_result_value(ctx, v);
  }
  return SQLITE_OK;
}

static int fn_rowid(sqlite3_vtab_cursor *base, sqlite3_int64 *rowid) {
  *rowid = ((fn_cursor *)base)->row;
  return SQLITE_OK;
}

static const sqlite3_module table_function_module = {
    .iVersion = 0,
    .xCreate = NULL,
    .xConnect = fn_connect,
    .xBestIndex = fn_best_index,
    .xDisconnect = fn_disconnect,
    .xDestroy = fn_disconnect,
    .xOpen = fn_open,
    .xClose = fn_close,
    .xFilter = fn_filter,
    .xNext = fn_next,
    .xEof = fn_eof,
    .xColumn = fn_column,
    .xRowid = fn_rowid,
};

static bool same_columns(const psql_function *f, const psql_column *columns,
                         size_t n_columns, const psql_column *args,
                         size_t n_args) {
  if (f->n_columns != n_columns || f->n_args != n_args)
    return false;
  for (size_t i = 0; i < n_columns; i++)
    if (g_ascii_strcasecmp(f->columns[i].name, columns[i].name) != 0)
      return false;
  for (size_t i = 0; i < n_args; i++)
    if (g_ascii_strcasecmp(f->args[i].name, args[i].name) != 0)
      return false;
  return true;
}

bool perfetto_sql_function_create(sqlite3 *db, GHashTable *registry,
                                  const char *name, const psql_column *args,
                                  size_t n_args, const char *return_type,
                                  const psql_column *columns,
                                  size_t n_columns, const char *body,
                                  bool replace, GError **error) {
  char *key = g_ascii_strdown(name, -1);
  psql_function *old = g_hash_table_lookup(registry, key);
  if (old && !replace) {
    g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_QUERY,
                "function %s already exists (use CREATE OR REPLACE PERFETTO "
                "FUNCTION)",
                name);
    g_free(key);
    return false;
  }
  if (old && old->columns) {
    /* An eponymous table keeps the schema it was connected with: a new
     * body is fine, a new shape is not. */
    if (!columns || !same_columns(old, columns, n_columns, args, n_args)) {
      g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_QUERY,
                  "table function %s cannot be replaced by one with other "
                  "columns or arguments",
                  name);
      g_free(key);
      return false;
    }
    g_free(old->body);
    old->body = g_strdup(body);
    g_ptr_array_set_size(old->idle, 0);
    g_free(key);
    return true;
  }
  psql_function *f = g_new0(psql_function, 1);
  f->db = db;
  f->name = key;
  f->args = psql_columns_copy(args, n_args);
  f->n_args = n_args;
  f->return_type = g_strdup(return_type);
  f->columns = columns ? psql_columns_copy(columns, n_columns) : NULL;
  f->n_columns = columns ? n_columns : 0;
  f->body = g_strdup(body);
  f->idle = g_ptr_array_new_with_free_func(finalize_stmt);
  int rc;
  if (columns)
    rc = sqlite3_create_module_v2(db, f->name, &table_function_module, f, NULL);
  else
    /* INNOCUOUS: views may call it under the untrusted schema; its body
     * runs under the same authorizer as any query. */
    rc = sqlite3_create_function_v2(db, f->name, (int)n_args,
                                    SQLITE_UTF8 | SQLITE_INNOCUOUS, f,
                                    scalar_call, NULL, NULL, NULL);
  if (rc != SQLITE_OK) {
    g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_QUERY,
                "cannot create function %s: %s", name, sqlite3_errmsg(db));
    psql_function_free(f);
    return false;
  }
  /* A replaced scalar function's old object stays alive: statements
   * prepared before may still point at it. Keep it under another key. */
  if (old) {
    g_hash_table_steal(registry, old->name);
    char *retired = g_strdup_printf("%s#%p", old->name, (void *)old);
    g_free(old->name);
    old->name = retired;
    g_hash_table_insert(registry, old->name, old);
  }
  g_hash_table_insert(registry, f->name, f);
  return true;
}
