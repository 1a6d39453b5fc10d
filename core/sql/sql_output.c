/*
 * SQL result printers (formats described in sql_output.h).
 *
 * Each row is assembled in one reused GString and written with a single
 * fwrite, so printing costs no allocation per row. Numbers are formatted
 * with g_ascii_* so the process locale never changes the decimal point.
 */
#include "sql/sql_output.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "base/json_string.h"

G_DEFINE_QUARK(tm-sql-error-quark, tm_sql_error)

/* Large enough for "%f" of the largest double (309 digits + ".000000"). */
#define REAL_BUF_SIZE 400

void sql_output_format_real(double value, char *buf, size_t size) {
  for (int precision = 15; precision <= 17; precision++) {
    char format[8];
    g_snprintf(format, sizeof format, "%%.%dg", precision);
    g_ascii_formatd(buf, (gint)size, format, value);
    if (precision == 17 || g_ascii_strtod(buf, NULL) == value)
      return;
  }
}

/* Decimal digits by hand: printf dominates the cost of printing rows. */
static void append_int64(GString *line, int64_t value) {
  char buf[24];
  char *end = buf + sizeof buf, *p = end;
  uint64_t magnitude = value < 0 ? 0 - (uint64_t)value : (uint64_t)value;
  do {
    *--p = (char)('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude);
  if (value < 0)
    *--p = '-';
  g_string_append_len(line, p, end - p);
}

/* Shortest exact form, marked as real (".0") when it reads like an int. */
static void append_real_shortest(GString *line, double value) {
  char buf[REAL_BUF_SIZE];
  sql_output_format_real(value, buf, sizeof buf);
  g_string_append(line, buf);
  if (isfinite(value) && !strpbrk(buf, ".eE"))
    g_string_append(line, ".0");
}

/* ---- CSV, as trace_processor_shell, quoted per RFC 4180 ---------------- */

/* A quoted field: '"' doubled, everything else (',', CR, LF) as is. */
static void csv_append_quoted(GString *line, const char *text, size_t len) {
  g_string_append_c(line, '"');
  const char *end = text + len;
  for (const char *p = text; p < end;) {
    const char *quote = memchr(p, '"', (size_t)(end - p));
    if (!quote) {
      g_string_append_len(line, p, end - p);
      break;
    }
    g_string_append_len(line, p, quote - p + 1);
    g_string_append_c(line, '"');
    p = quote + 1;
  }
  g_string_append_c(line, '"');
}

static void csv_row(const sql_value *values, size_t n_columns, GString *line) {
  for (size_t c = 0; c < n_columns; c++) {
    const sql_value *v = &values[c];
    if (c > 0)
      g_string_append_c(line, ',');
    switch (v->type) {
    case SQL_VALUE_INTEGER:
      append_int64(line, v->integer);
      break;
    case SQL_VALUE_REAL: {
      char buf[REAL_BUF_SIZE];
      g_ascii_formatd(buf, sizeof buf, "%f", v->real);
      g_string_append(line, buf);
      break;
    }
    case SQL_VALUE_TEXT:
      csv_append_quoted(line, v->text, v->len);
      break;
    case SQL_VALUE_BLOB:
      g_string_append(line, "\"<raw bytes>\"");
      break;
    default:
      g_string_append(line, "\"[NULL]\"");
      break;
    }
  }
  g_string_append_c(line, '\n');
}

/* ---- TSV ---------------------------------------------------------------- */

static void tsv_append_text(GString *line, const char *text, size_t len) {
  for (size_t i = 0; i < len; i++) {
    char ch = text[i];
    switch (ch) {
    case '\\':
      g_string_append(line, "\\\\");
      break;
    case '\t':
      g_string_append(line, "\\t");
      break;
    case '\n':
      g_string_append(line, "\\n");
      break;
    case '\r':
      g_string_append(line, "\\r");
      break;
    default:
      g_string_append_c(line, ch);
      break;
    }
  }
}

static void tsv_row(const sql_value *values, size_t n_columns, GString *line) {
  for (size_t c = 0; c < n_columns; c++) {
    const sql_value *v = &values[c];
    if (c > 0)
      g_string_append_c(line, '\t');
    switch (v->type) {
    case SQL_VALUE_INTEGER:
      append_int64(line, v->integer);
      break;
    case SQL_VALUE_REAL:
      append_real_shortest(line, v->real);
      break;
    case SQL_VALUE_TEXT:
      tsv_append_text(line, v->text, v->len);
      break;
    case SQL_VALUE_BLOB:
      g_string_append(line, "<raw bytes>");
      break;
    default:
      break;
    }
  }
  g_string_append_c(line, '\n');
}

/* ---- JSON --------------------------------------------------------------- */

/* Text that is not UTF-8 is made so first (U+FFFD for each bad sequence),
 * as the other output modes show it, rather than escaped byte by byte. */
static void json_append_string(GString *line, const char *text, size_t len) {
  char *valid = NULL;
  if (!g_utf8_validate(text, (gssize)len, NULL)) {
    valid = g_utf8_make_valid(text, (gssize)len);
    text = valid;
    len = strlen(valid);
  }
  tm_json_append_string(line, text, len);
  g_free(valid);
}

/* ---- table, as trace_processor_shell's prompt ---------------------------- */

/* Rows between two repetitions of the header. */
#define TABLE_PAGE_ROWS 32

/* `text` cut to `width` characters (not bytes: a character is never
 * split), control characters shown as '?' (a value cannot move the cursor
 * or send escape sequences to the terminal), padded with spaces on the
 * right (`left`) or the left to `width` characters. */
static void table_append_text(GString *line, const char *text, size_t len,
                              unsigned width, bool left, bool cut) {
  char *valid = NULL;
  if (!g_utf8_validate(text, (gssize)len, NULL)) {
    valid = g_utf8_make_valid(text, (gssize)len);
    text = valid;
    len = strlen(valid);
  }
  GString *cell = g_string_sized_new(len);
  unsigned chars = 0;
  for (const char *p = text; p < text + len && (!cut || chars < width);
       p = g_utf8_next_char(p), chars++) {
    unsigned char ch = (unsigned char)*p;
    if (ch < 0x20 || ch == 0x7f)
      g_string_append_c(cell, '?');
    else
      g_string_append_len(cell, p, g_utf8_next_char(p) - p);
  }
  if (!left)
    for (unsigned i = chars; i < width; i++)
      g_string_append_c(line, ' ');
  g_string_append_len(line, cell->str, (gssize)cell->len);
  if (left)
    for (unsigned i = chars; i < width; i++)
      g_string_append_c(line, ' ');
  g_string_free(cell, TRUE);
  g_free(valid);
}

static void table_header(char *const *names, size_t n_columns, unsigned width,
                         GString *line) {
  for (size_t c = 0; c < n_columns; c++) {
    table_append_text(line, names[c], strlen(names[c]), width, true, true);
    g_string_append_c(line, ' ');
  }
  g_string_append_c(line, '\n');
  for (size_t c = 0; c < n_columns; c++) {
    for (unsigned i = 0; i < width; i++)
      g_string_append_c(line, '-');
    g_string_append_c(line, ' ');
  }
  g_string_append_c(line, '\n');
}

static void table_row(const sql_value *values, size_t n_columns,
                      unsigned width, GString *line) {
  for (size_t c = 0; c < n_columns; c++) {
    const sql_value *v = &values[c];
    switch (v->type) {
    case SQL_VALUE_INTEGER: {
      GString *number = g_string_new(NULL);
      append_int64(number, v->integer);
      table_append_text(line, number->str, number->len, width, false, false);
      g_string_free(number, TRUE);
      break;
    }
    case SQL_VALUE_REAL: {
      char buf[REAL_BUF_SIZE];
      g_ascii_formatd(buf, sizeof buf, "%f", v->real);
      table_append_text(line, buf, strlen(buf), width, false, false);
      break;
    }
    case SQL_VALUE_TEXT:
      table_append_text(line, v->text, v->len, width, true, true);
      break;
    case SQL_VALUE_BLOB:
      table_append_text(line, "<raw bytes>", 11, width, true, false);
      break;
    default:
      table_append_text(line, "[NULL]", 6, width, true, false);
      break;
    }
    g_string_append_c(line, ' ');
  }
  g_string_append_c(line, '\n');
}

/* ---- the writer ---------------------------------------------------------- */

struct sql_output_writer {
  tm_format format;
  unsigned width; /* table format */
  FILE *out;
  char **names; /* n_columns, owned */
  size_t n_columns;
  uint64_t n_rows;
  GString *line; /* reused for every row */
};

static void csv_header(const sql_output_writer *w, GString *line) {
  for (size_t c = 0; c < w->n_columns; c++) {
    if (c > 0)
      g_string_append_c(line, ',');
    csv_append_quoted(line, w->names[c], strlen(w->names[c]));
  }
  g_string_append_c(line, '\n');
}

static void tsv_header(const sql_output_writer *w, GString *line) {
  for (size_t c = 0; c < w->n_columns; c++) {
    if (c > 0)
      g_string_append_c(line, '\t');
    tsv_append_text(line, w->names[c], strlen(w->names[c]));
  }
  g_string_append_c(line, '\n');
}

static void json_row(const sql_output_writer *w, const sql_value *values,
                     GString *line) {
  g_string_append_c(line, '{');
  for (size_t c = 0; c < w->n_columns; c++) {
    const sql_value *v = &values[c];
    if (c > 0)
      g_string_append_c(line, ',');
    json_append_string(line, w->names[c], strlen(w->names[c]));
    g_string_append_c(line, ':');
    switch (v->type) {
    case SQL_VALUE_INTEGER:
      append_int64(line, v->integer);
      break;
    case SQL_VALUE_REAL:
      if (isfinite(v->real))
        append_real_shortest(line, v->real);
      else
        g_string_append(line, "null");
      break;
    case SQL_VALUE_TEXT:
      json_append_string(line, v->text, v->len);
      break;
    case SQL_VALUE_BLOB:
      g_string_append(line, "\"<raw bytes>\"");
      break;
    default:
      g_string_append(line, "null");
      break;
    }
  }
  g_string_append_c(line, '}');
}

static bool flush_line(GString *line, FILE *out, GError **error) {
  if (line->len > 0 && fwrite(line->str, 1, line->len, out) != line->len) {
    g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_OUTPUT,
                "writing the query result failed: %s", g_strerror(errno));
    return false;
  }
  g_string_truncate(line, 0);
  return true;
}

sql_output_writer *sql_output_writer_begin(tm_format format,
                                           unsigned column_width, FILE *out,
                                           const char *const *names,
                                           size_t n_columns, GError **error) {
  sql_output_writer *w = g_new0(sql_output_writer, 1);
  w->format = format;
  w->width = column_width ? column_width : SQL_OUTPUT_COLUMN_WIDTH;
  w->out = out;
  w->n_columns = n_columns;
  w->names = g_new0(char *, n_columns + 1);
  for (size_t c = 0; c < n_columns; c++)
    w->names[c] = g_strdup(names[c] ? names[c] : "");
  w->line = g_string_sized_new(256);
  if (n_columns > 0 && format == TM_FORMAT_CSV)
    csv_header(w, w->line);
  else if (n_columns > 0 && format == TM_FORMAT_TSV)
    tsv_header(w, w->line);
  if (!flush_line(w->line, out, error)) {
    sql_output_writer_free(w);
    return NULL;
  }
  return w;
}

bool sql_output_writer_row(sql_output_writer *w, const sql_value *values,
                           GError **error) {
  if (w->n_columns == 0)
    return true;
  switch (w->format) {
  case TM_FORMAT_TSV:
    tsv_row(values, w->n_columns, w->line);
    break;
  case TM_FORMAT_JSON:
    g_string_append(w->line, w->n_rows == 0 ? "[\n" : ",\n");
    json_row(w, values, w->line);
    break;
  case TM_FORMAT_TABLE:
    if (w->n_rows % TABLE_PAGE_ROWS == 0)
      table_header(w->names, w->n_columns, w->width, w->line);
    table_row(values, w->n_columns, w->width, w->line);
    break;
  case TM_FORMAT_CSV:
  default:
    csv_row(values, w->n_columns, w->line);
    break;
  }
  w->n_rows++;
  return flush_line(w->line, w->out, error);
}

uint64_t sql_output_writer_rows(const sql_output_writer *w) {
  return w->n_rows;
}

bool sql_output_writer_end(sql_output_writer *w, GError **error) {
  if (w->format == TM_FORMAT_JSON)
    g_string_append(w->line, w->n_rows == 0 ? "[]\n" : "\n]\n");
  if (!flush_line(w->line, w->out, error))
    return false;
  if (fflush(w->out) != 0 || ferror(w->out)) {
    g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_OUTPUT,
                "writing the query result failed: %s", g_strerror(errno));
    return false;
  }
  return true;
}

void sql_output_writer_free(sql_output_writer *w) {
  if (!w)
    return;
  g_strfreev(w->names);
  g_string_free(w->line, TRUE);
  g_free(w);
}

/* ---- SQLite statements --------------------------------------------------- */

static void statement_values(sqlite3_stmt *stmt, sql_value *values,
                             size_t n_columns) {
  for (size_t c = 0; c < n_columns; c++) {
    sql_value *v = &values[c];
    int i = (int)c;
    switch (sqlite3_column_type(stmt, i)) {
    case SQLITE_INTEGER:
      v->type = SQL_VALUE_INTEGER;
      v->integer = sqlite3_column_int64(stmt, i);
      break;
    case SQLITE_FLOAT:
      v->type = SQL_VALUE_REAL;
      v->real = sqlite3_column_double(stmt, i);
      break;
    case SQLITE_TEXT:
      v->type = SQL_VALUE_TEXT;
      v->text = (const char *)sqlite3_column_text(stmt, i);
      v->len = (size_t)sqlite3_column_bytes(stmt, i);
      break;
    case SQLITE_BLOB:
      v->type = SQL_VALUE_BLOB;
      break;
    default:
      v->type = SQL_VALUE_NULL;
      break;
    }
  }
}

bool sql_output_write_rows(sqlite3_stmt *stmt, tm_format format, FILE *out,
                           GError **error) {
  return sql_output_write(stmt, format, 0, out, NULL, error);
}

bool sql_output_write(sqlite3_stmt *stmt, tm_format format,
                      unsigned column_width, FILE *out, uint64_t *rows,
                      GError **error) {
  bool ok = false;
  size_t n_columns = (size_t)sqlite3_column_count(stmt);
  const char **names = g_new0(const char *, n_columns + 1);
  sql_value *values = g_new0(sql_value, n_columns + 1);
  for (size_t c = 0; c < n_columns; c++)
    names[c] = sqlite3_column_name(stmt, (int)c);
  sql_output_writer *w = sql_output_writer_begin(format, column_width, out,
                                                 names, n_columns, error);
  int rc;
  if (!w)
    goto out;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    if (n_columns == 0)
      continue;
    statement_values(stmt, values, n_columns);
    if (!sql_output_writer_row(w, values, error))
      goto out;
  }
  if (rc != SQLITE_DONE) {
    g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_QUERY, "%s",
                sqlite3_errmsg(sqlite3_db_handle(stmt)));
    goto out;
  }
  ok = sql_output_writer_end(w, error);
out:
  if (rows)
    *rows = w ? sql_output_writer_rows(w) : 0;
  sql_output_writer_free(w);
  g_free(values);
  g_free(names);
  return ok;
}
