/*
 * Printers for SQL results: one prepared statement's rows as CSV, TSV or
 * JSON.
 *
 * CSV is what trace_processor_shell prints, made safe to parse: every
 * header name in double quotes, strings in double quotes with a '"' inside
 * doubled (RFC 4180; trace_processor_shell leaves it bare, so a value could
 * end its field and add columns or rows), commas and line breaks kept
 * inside the quotes, integers bare, reals as printf "%f", NULL as "[NULL]"
 * (quotes included), blobs as "<raw bytes>". Lines end in LF.
 *
 * TSV: header of bare names; strings with backslash, tab, newline and
 * carriage return escaped as \\ \t \n \r; NULL is an empty field; integers
 * bare; reals in the shortest form that reads back to the same double,
 * with ".0" added when that form looks like an integer.
 *
 * JSON: one array of objects, one object per line, keys in column order;
 * NULL is null, numbers are numbers (non-finite reals become null),
 * strings are escaped and made valid UTF-8 (invalid bytes become U+FFFD).
 * Zero rows print "[]".
 *
 * Table (trace_processor_shell's prompt): every column `column_width`
 * characters wide (default SQL_OUTPUT_COLUMN_WIDTH) followed by a space;
 * a header of names cut to the width and a line of dashes, repeated every
 * 32 rows and not printed at all for zero rows; text and NULL ("[NULL]")
 * left-aligned, text cut to the width, numbers right-aligned (reals as
 * "%f"), blobs "<raw bytes>". Unlike trace_processor_shell, widths count
 * characters, not bytes, and control characters print as '?'.
 *
 * Rows are streamed as they are stepped: a runtime error in the middle of
 * a result leaves the rows printed so far on `out`.
 *
 * The printers read values, not statements: sql_output_writer prints rows
 * from any source (SQLite's statements here, ClickHouse's answers in
 * core/sink), so every source prints the same bytes for the same values.
 */
#ifndef TM_SQL_OUTPUT_H
#define TM_SQL_OUTPUT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <tracemerge/tracemerge.h>

typedef struct sqlite3_stmt sqlite3_stmt;

#define TM_SQL_ERROR (tm_sql_error_quark())
GQuark tm_sql_error_quark(void);

typedef enum tm_sql_error_code {
  TM_SQL_ERROR_QUERY,  /* SQLite rejected or failed a statement */
  TM_SQL_ERROR_OUTPUT, /* writing the result failed */
  TM_SQL_ERROR_SAVE,   /* the database file could not be written */
  TM_SQL_ERROR_INTERRUPTED, /* stopped by the timeout or an interrupt */
} tm_sql_error_code;

/* One value of a result row, typed as SQLite types values. `text` is
 * borrowed for the call that takes it and holds `len` bytes (not
 * necessarily NUL-terminated). */
typedef enum sql_value_type {
  SQL_VALUE_NULL = 0,
  SQL_VALUE_INTEGER,
  SQL_VALUE_REAL,
  SQL_VALUE_TEXT,
  SQL_VALUE_BLOB, /* printed as "<raw bytes>" */
} sql_value_type;

typedef struct sql_value {
  sql_value_type type;
  int64_t integer;
  double real;
  const char *text;
  size_t len;
} sql_value;

/* Prints one result: sql_output_writer_begin() with the column names
 * (prints the header), sql_output_writer_row() per row, then
 * sql_output_writer_end() (closes the JSON array, flushes `out`). Zero
 * columns print nothing (JSON: "[]") and take no rows. */
typedef struct sql_output_writer sql_output_writer;

/* `names` is copied; NULL entries print as "". `column_width`: the table
 * format's (0: SQL_OUTPUT_COLUMN_WIDTH). */
sql_output_writer *sql_output_writer_begin(tm_format format,
                                           unsigned column_width, FILE *out,
                                           const char *const *names,
                                           size_t n_columns, GError **error);
/* `values` has one entry per column. */
bool sql_output_writer_row(sql_output_writer *writer, const sql_value *values,
                           GError **error);
bool sql_output_writer_end(sql_output_writer *writer, GError **error);
/* Rows printed so far. */
uint64_t sql_output_writer_rows(const sql_output_writer *writer);
/* Frees the writer, whether it ended or not (NULL is fine). */
void sql_output_writer_free(sql_output_writer *writer);

/* Steps `stmt` to completion and prints its rows to `out` in `format`. A
 * statement without result columns prints nothing (JSON: "[]"). The caller
 * keeps ownership of `stmt`. */
bool sql_output_write_rows(sqlite3_stmt *stmt, tm_format format, FILE *out,
                           GError **error);

/* trace_processor_shell's column width (its -W doubles it). */
#define SQL_OUTPUT_COLUMN_WIDTH 20

/* As sql_output_write_rows, with the table format's `column_width` (0:
 * the default) and the number of rows printed in `*rows` (may be NULL). */
bool sql_output_write(sqlite3_stmt *stmt, tm_format format,
                      unsigned column_width, FILE *out, uint64_t *rows,
                      GError **error);

/* Formats `value` in the shortest text that reads back to it exactly
 * ("%.15g" .. "%.17g", C locale), into `buf` of at least 32 bytes. */
void sql_output_format_real(double value, char *buf, size_t size);

#endif /* TM_SQL_OUTPUT_H */
