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

static void csv_header(sqlite3_stmt *stmt, int n_columns, GString *line) {
  for (int c = 0; c < n_columns; c++) {
    const char *name = sqlite3_column_name(stmt, c);
    if (c > 0)
      g_string_append_c(line, ',');
    csv_append_quoted(line, name ? name : "", name ? strlen(name) : 0);
  }
  g_string_append_c(line, '\n');
}

static void csv_row(sqlite3_stmt *stmt, int n_columns, GString *line) {
  for (int c = 0; c < n_columns; c++) {
    if (c > 0)
      g_string_append_c(line, ',');
    switch (sqlite3_column_type(stmt, c)) {
    case SQLITE_INTEGER:
      append_int64(line, sqlite3_column_int64(stmt, c));
      break;
    case SQLITE_FLOAT: {
      char buf[REAL_BUF_SIZE];
      g_ascii_formatd(buf, sizeof buf, "%f", sqlite3_column_double(stmt, c));
      g_string_append(line, buf);
      break;
    }
    case SQLITE_TEXT: {
      const unsigned char *text = sqlite3_column_text(stmt, c);
      csv_append_quoted(line, (const char *)text,
                        (size_t)sqlite3_column_bytes(stmt, c));
      break;
    }
    case SQLITE_BLOB:
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

static void tsv_header(sqlite3_stmt *stmt, int n_columns, GString *line) {
  for (int c = 0; c < n_columns; c++) {
    const char *name = sqlite3_column_name(stmt, c);
    if (c > 0)
      g_string_append_c(line, '\t');
    if (name)
      tsv_append_text(line, name, strlen(name));
  }
  g_string_append_c(line, '\n');
}

static void tsv_row(sqlite3_stmt *stmt, int n_columns, GString *line) {
  for (int c = 0; c < n_columns; c++) {
    if (c > 0)
      g_string_append_c(line, '\t');
    switch (sqlite3_column_type(stmt, c)) {
    case SQLITE_INTEGER:
      append_int64(line, sqlite3_column_int64(stmt, c));
      break;
    case SQLITE_FLOAT:
      append_real_shortest(line, sqlite3_column_double(stmt, c));
      break;
    case SQLITE_TEXT: {
      const unsigned char *text = sqlite3_column_text(stmt, c);
      tsv_append_text(line, (const char *)text,
                      (size_t)sqlite3_column_bytes(stmt, c));
      break;
    }
    case SQLITE_BLOB:
      g_string_append(line, "<raw bytes>");
      break;
    default:
      break;
    }
  }
  g_string_append_c(line, '\n');
}

/* ---- JSON --------------------------------------------------------------- */

static void json_append_string(GString *line, const char *text, size_t len) {
  char *valid = NULL;
  if (!g_utf8_validate(text, (gssize)len, NULL)) {
    valid = g_utf8_make_valid(text, (gssize)len);
    text = valid;
    len = strlen(valid);
  }
  g_string_append_c(line, '"');
  for (size_t i = 0; i < len; i++) {
    unsigned char ch = (unsigned char)text[i];
    switch (ch) {
    case '"':
      g_string_append(line, "\\\"");
      break;
    case '\\':
      g_string_append(line, "\\\\");
      break;
    case '\n':
      g_string_append(line, "\\n");
      break;
    case '\r':
      g_string_append(line, "\\r");
      break;
    case '\t':
      g_string_append(line, "\\t");
      break;
    case '\b':
      g_string_append(line, "\\b");
      break;
    case '\f':
      g_string_append(line, "\\f");
      break;
    default:
      if (ch < 0x20)
        g_string_append_printf(line, "\\u%04x", ch);
      else
        g_string_append_c(line, (char)ch);
      break;
    }
  }
  g_string_append_c(line, '"');
  g_free(valid);
}

static void json_row(sqlite3_stmt *stmt, int n_columns, GString *line) {
  g_string_append_c(line, '{');
  for (int c = 0; c < n_columns; c++) {
    const char *name = sqlite3_column_name(stmt, c);
    if (c > 0)
      g_string_append_c(line, ',');
    json_append_string(line, name ? name : "", name ? strlen(name) : 0);
    g_string_append_c(line, ':');
    switch (sqlite3_column_type(stmt, c)) {
    case SQLITE_INTEGER:
      append_int64(line, sqlite3_column_int64(stmt, c));
      break;
    case SQLITE_FLOAT: {
      double value = sqlite3_column_double(stmt, c);
      if (isfinite(value))
        append_real_shortest(line, value);
      else
        g_string_append(line, "null");
      break;
    }
    case SQLITE_TEXT: {
      const unsigned char *text = sqlite3_column_text(stmt, c);
      json_append_string(line, (const char *)text,
                         (size_t)sqlite3_column_bytes(stmt, c));
      break;
    }
    case SQLITE_BLOB:
      g_string_append(line, "\"<raw bytes>\"");
      break;
    default:
      g_string_append(line, "null");
      break;
    }
  }
  g_string_append_c(line, '}');
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

static void table_header(sqlite3_stmt *stmt, int n_columns, unsigned width,
                         GString *line) {
  for (int c = 0; c < n_columns; c++) {
    const char *name = sqlite3_column_name(stmt, c);
    table_append_text(line, name ? name : "", name ? strlen(name) : 0, width,
                      true, true);
    g_string_append_c(line, ' ');
  }
  g_string_append_c(line, '\n');
  for (int c = 0; c < n_columns; c++) {
    for (unsigned i = 0; i < width; i++)
      g_string_append_c(line, '-');
    g_string_append_c(line, ' ');
  }
  g_string_append_c(line, '\n');
}

static void table_row(sqlite3_stmt *stmt, int n_columns, unsigned width,
                      GString *line) {
  for (int c = 0; c < n_columns; c++) {
    switch (sqlite3_column_type(stmt, c)) {
    case SQLITE_INTEGER: {
      GString *number = g_string_new(NULL);
      append_int64(number, sqlite3_column_int64(stmt, c));
      table_append_text(line, number->str, number->len, width, false, false);
      g_string_free(number, TRUE);
      break;
    }
    case SQLITE_FLOAT: {
      char buf[REAL_BUF_SIZE];
      g_ascii_formatd(buf, sizeof buf, "%f", sqlite3_column_double(stmt, c));
      table_append_text(line, buf, strlen(buf), width, false, false);
      break;
    }
    case SQLITE_TEXT:
      table_append_text(line, (const char *)sqlite3_column_text(stmt, c),
                        (size_t)sqlite3_column_bytes(stmt, c), width, true,
                        true);
      break;
    case SQLITE_BLOB:
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

/* ---- driver ------------------------------------------------------------- */

static bool flush_line(GString *line, FILE *out, GError **error) {
  if (line->len > 0 && fwrite(line->str, 1, line->len, out) != line->len) {
    g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_OUTPUT,
                "writing the query result failed: %s", g_strerror(errno));
    return false;
  }
  g_string_truncate(line, 0);
  return true;
}

bool sql_output_write_rows(sqlite3_stmt *stmt, tm_format format, FILE *out,
                           GError **error) {
  return sql_output_write(stmt, format, 0, out, NULL, error);
}

bool sql_output_write(sqlite3_stmt *stmt, tm_format format,
                      unsigned column_width, FILE *out, uint64_t *rows,
                      GError **error) {
  bool ok = false;
  GString *line = g_string_sized_new(256);
  int n_columns = sqlite3_column_count(stmt);
  unsigned width = column_width ? column_width : SQL_OUTPUT_COLUMN_WIDTH;
  uint64_t n_rows = 0;
  int rc;

  if (n_columns > 0 && format == TM_FORMAT_CSV)
    csv_header(stmt, n_columns, line);
  else if (n_columns > 0 && format == TM_FORMAT_TSV)
    tsv_header(stmt, n_columns, line);
  if (!flush_line(line, out, error))
    goto out;

  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    if (n_columns == 0)
      continue;
    switch (format) {
    case TM_FORMAT_TSV:
      tsv_row(stmt, n_columns, line);
      break;
    case TM_FORMAT_JSON:
      g_string_append(line, n_rows == 0 ? "[\n" : ",\n");
      json_row(stmt, n_columns, line);
      break;
    case TM_FORMAT_TABLE:
      if (n_rows % TABLE_PAGE_ROWS == 0)
        table_header(stmt, n_columns, width, line);
      table_row(stmt, n_columns, width, line);
      break;
    case TM_FORMAT_CSV:
    default:
      csv_row(stmt, n_columns, line);
      break;
    }
    n_rows++;
    if (!flush_line(line, out, error))
      goto out;
  }
  if (rc != SQLITE_DONE) {
    g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_QUERY, "%s",
                sqlite3_errmsg(sqlite3_db_handle(stmt)));
    goto out;
  }
  if (format == TM_FORMAT_JSON)
    g_string_append(line, n_rows == 0 ? "[]\n" : "\n]\n");
  if (!flush_line(line, out, error))
    goto out;
  if (fflush(out) != 0 || ferror(out)) {
    g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_OUTPUT,
                "writing the query result failed: %s", g_strerror(errno));
    goto out;
  }
  ok = true;
out:
  if (rows)
    *rows = n_rows;
  g_string_free(line, TRUE);
  return ok;
}
