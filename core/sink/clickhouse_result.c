/*
 * TabSeparatedWithNamesAndTypes answers into the local printers
 * (clickhouse_result.h).
 *
 * Invariant: `pending` holds the last complete line not yet handled, so
 * the answer's last line is judged (row or error report) knowing that it
 * is the last. `partial` holds the bytes of a line still arriving.
 */
#include "sink/clickhouse_result.h"

#include <errno.h>
#include <string.h>

#include "sql/sql_output.h"

typedef enum column_class {
  CLASS_INTEGER,
  CLASS_UINT64,
  CLASS_REAL,
  CLASS_TEXT,
  CLASS_NULL,
} column_class;

struct ch_result_reader {
  tm_format format;
  unsigned column_width;
  FILE *out;
  GString *partial;
  GString *pending;
  bool has_pending;
  char **names; /* NULL until the names line */
  size_t n_columns;
  column_class *classes; /* NULL until the types line */
  sql_output_writer *writer;
  sql_value *values;
  GPtrArray *fields;  /* char*: the unescaped fields of the current line */
  uint64_t rows;
  bool failed;
};

ch_result_reader *ch_result_reader_new(tm_format format, unsigned column_width,
                                       FILE *out) {
  ch_result_reader *r = g_new0(ch_result_reader, 1);
  r->format = format;
  r->column_width = column_width;
  r->out = out;
  r->partial = g_string_new(NULL);
  r->pending = g_string_new(NULL);
  r->fields = g_ptr_array_new_with_free_func(g_free);
  return r;
}

void ch_result_reader_free(ch_result_reader *r) {
  if (!r)
    return;
  g_string_free(r->partial, TRUE);
  g_string_free(r->pending, TRUE);
  g_strfreev(r->names);
  g_free(r->classes);
  g_free(r->values);
  g_ptr_array_free(r->fields, TRUE);
  sql_output_writer_free(r->writer);
  g_free(r);
}

bool ch_result_is_error_report(const char *line, size_t len) {
  /* "Code: 395, e.displayText() = ..." (18.x) or "Code: 395. DB::..." */
  if (len < 8 || strncmp(line, "Code: ", 6) != 0)
    return false;
  size_t i = 6;
  while (i < len && g_ascii_isdigit(line[i]))
    i++;
  return i > 6 && i + 1 < len && (line[i] == ',' || line[i] == '.') &&
         line[i + 1] == ' ';
}

/* ---- fields -------------------------------------------------------------- */

/* One field of TabSeparated text, its escapes undone (ClickHouse writes
 * \b \f \n \r \t \0 \' \\ and reads \xHH too). */
char *ch_tsv_unescape(const char *text, size_t len, size_t *out_len) {
  char *out = g_malloc(len + 1);
  size_t n = 0;
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    if (c != '\\' || i + 1 == len) {
      out[n++] = c;
      continue;
    }
    char e = text[++i];
    switch (e) {
    case 'b': out[n++] = '\b'; break;
    case 'f': out[n++] = '\f'; break;
    case 'n': out[n++] = '\n'; break;
    case 'r': out[n++] = '\r'; break;
    case 't': out[n++] = '\t'; break;
    case '0': out[n++] = '\0'; break;
    case 'x':
      if (i + 2 < len && g_ascii_isxdigit(text[i + 1]) &&
          g_ascii_isxdigit(text[i + 2])) {
        out[n++] = (char)(g_ascii_xdigit_value(text[i + 1]) * 16 +
                          g_ascii_xdigit_value(text[i + 2]));
        i += 2;
      } else {
        out[n++] = e;
      }
      break;
    default: out[n++] = e; break; /* \\ \' and anything else: itself */
    }
  }
  out[n] = '\0';
  *out_len = n;
  return out;
}

/* Splits `line` at tabs into r->fields (raw, still escaped). */
static void split_fields(ch_result_reader *r, const char *line, size_t len) {
  g_ptr_array_set_size(r->fields, 0);
  size_t start = 0;
  for (size_t i = 0; i <= len; i++) {
    if (i == len || line[i] == '\t') {
      g_ptr_array_add(r->fields, g_strndup(line + start, i - start));
      start = i + 1;
    }
  }
}

/* ---- types --------------------------------------------------------------- */

/* Strips one wrapper `name(...)` from *type if it has it. */
static bool strip_wrapper(const char **type, size_t *len, const char *name) {
  size_t n = strlen(name);
  if (*len > n + 2 && strncmp(*type, name, n) == 0 && (*type)[n] == '(' &&
      (*type)[*len - 1] == ')') {
    *type += n + 1;
    *len -= n + 2;
    return true;
  }
  return false;
}

static bool is_type_name(const char *type, size_t len, const char *name) {
  return len == strlen(name) && strncmp(type, name, len) == 0;
}

/* A type name as ClickHouse writes one: an identifier, maybe followed by
 * parenthesised arguments. */
static bool looks_like_type(const char *type) {
  size_t len = strlen(type);
  if (len == 0 || !g_ascii_isalpha(type[0]))
    return false;
  size_t i = 1;
  while (i < len && (g_ascii_isalnum(type[i]) || type[i] == '_'))
    i++;
  return i == len || (type[i] == '(' && type[len - 1] == ')');
}

static column_class classify(const char *type) {
  size_t len = strlen(type);
  while (strip_wrapper(&type, &len, "Nullable") ||
         strip_wrapper(&type, &len, "LowCardinality")) {
  }
  static const char *const integers[] = {"Int8",  "Int16",  "Int32", "Int64",
                                         "UInt8", "UInt16", "UInt32"};
  for (size_t i = 0; i < G_N_ELEMENTS(integers); i++)
    if (is_type_name(type, len, integers[i]))
      return CLASS_INTEGER;
  if (is_type_name(type, len, "UInt64"))
    return CLASS_UINT64;
  if (is_type_name(type, len, "Float32") || is_type_name(type, len, "Float64") ||
      (len >= 7 && strncmp(type, "Decimal", 7) == 0))
    return CLASS_REAL;
  if (is_type_name(type, len, "Nothing"))
    return CLASS_NULL;
  return CLASS_TEXT;
}

/* ---- lines --------------------------------------------------------------- */

static bool not_this_format(GError **error) {
  g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_CLICKHOUSE_RESULT,
              "the answer is not in TabSeparatedWithNamesAndTypes: does the "
              "SQL end in its own FORMAT clause? (tracemerge picks the "
              "format: use --format)");
  return false;
}

static bool take_names(ch_result_reader *r, const char *line, size_t len) {
  split_fields(r, line, len);
  r->n_columns = r->fields->len;
  r->names = g_new0(char *, r->n_columns + 1);
  for (size_t c = 0; c < r->n_columns; c++) {
    const char *raw = r->fields->pdata[c];
    size_t n;
    r->names[c] = ch_tsv_unescape(raw, strlen(raw), &n);
  }
  return true;
}

static bool take_types(ch_result_reader *r, const char *line, size_t len,
                       GError **error) {
  split_fields(r, line, len);
  if (r->fields->len != r->n_columns)
    return not_this_format(error);
  r->classes = g_new0(column_class, r->n_columns + 1);
  for (size_t c = 0; c < r->n_columns; c++) {
    if (!looks_like_type(r->fields->pdata[c]))
      return not_this_format(error);
    r->classes[c] = classify(r->fields->pdata[c]);
  }
  r->values = g_new0(sql_value, r->n_columns + 1);
  r->writer = sql_output_writer_begin(r->format, r->column_width, r->out,
                                      (const char *const *)r->names,
                                      r->n_columns, error);
  return r->writer != NULL;
}

/* The value of one field of class `cls` (a number that does not parse is
 * kept as text rather than lost). */
static void field_value(column_class cls, char *raw, GPtrArray *keep,
                        sql_value *v) {
  size_t raw_len = strlen(raw);
  if (cls == CLASS_NULL || strcmp(raw, "\\N") == 0) {
    v->type = SQL_VALUE_NULL;
    return;
  }
  char *end = NULL;
  errno = 0;
  switch (cls) {
  case CLASS_INTEGER:
  case CLASS_UINT64: {
    gint64 i = g_ascii_strtoll(raw, &end, 10);
    if (raw_len > 0 && *end == '\0' && errno == 0) {
      v->type = SQL_VALUE_INTEGER;
      v->integer = i;
      return;
    }
    if (cls == CLASS_UINT64 && raw_len > 0 && errno == ERANGE) {
      v->type = SQL_VALUE_REAL; /* above int64: a real, as SQLite reads it */
      v->real = g_ascii_strtod(raw, NULL);
      return;
    }
    break;
  }
  case CLASS_REAL: {
    double d = g_ascii_strtod(raw, &end);
    if (raw_len > 0 && *end == '\0') {
      v->type = SQL_VALUE_REAL;
      v->real = d;
      return;
    }
    break;
  }
  default:
    break;
  }
  size_t len;
  char *text = ch_tsv_unescape(raw, raw_len, &len);
  g_ptr_array_add(keep, text);
  v->type = SQL_VALUE_TEXT;
  v->text = text;
  v->len = len;
}

static bool server_error(const char *line, size_t len, GError **error) {
  g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_CLICKHOUSE_SERVER,
              "failed after its first rows were sent: %.*s", (int)MIN(len, 4096),
              line);
  return false;
}

static bool take_row(ch_result_reader *r, const char *line, size_t len,
                     GError **error) {
  split_fields(r, line, len);
  if (r->fields->len != r->n_columns) {
    if (ch_result_is_error_report(line, len))
      return server_error(line, len, error);
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_CLICKHOUSE_RESULT,
                "row %" G_GUINT64_FORMAT " of the answer has %u fields, "
                "expected %zu",
                r->rows + 1, r->fields->len, r->n_columns);
    return false;
  }
  GPtrArray *keep = g_ptr_array_new_with_free_func(g_free);
  for (size_t c = 0; c < r->n_columns; c++)
    field_value(r->classes[c], r->fields->pdata[c], keep, &r->values[c]);
  bool ok = sql_output_writer_row(r->writer, r->values, error);
  g_ptr_array_free(keep, TRUE);
  r->rows++;
  return ok;
}

static bool take_line(ch_result_reader *r, const char *line, size_t len,
                      GError **error) {
  if (!r->names) {
    if (ch_result_is_error_report(line, len))
      return server_error(line, len, error);
    return take_names(r, line, len);
  }
  if (!r->classes)
    return take_types(r, line, len, error);
  return take_row(r, line, len, error);
}

/* Handles the held line (it was not the last) and holds `line` instead. */
static bool hold_line(ch_result_reader *r, const char *line, size_t len,
                      GError **error) {
  if (r->has_pending &&
      !take_line(r, r->pending->str, r->pending->len, error))
    return false;
  g_string_assign(r->pending, "");
  g_string_append_len(r->pending, line, (gssize)len);
  r->has_pending = true;
  return true;
}

bool ch_result_reader_feed(ch_result_reader *r, const char *data, size_t len,
                           GError **error) {
  if (r->failed)
    return false;
  const char *end = data + len;
  while (data < end) {
    const char *nl = memchr(data, '\n', (size_t)(end - data));
    if (!nl) {
      g_string_append_len(r->partial, data, end - data);
      break;
    }
    bool ok;
    if (r->partial->len > 0) {
      g_string_append_len(r->partial, data, nl - data);
      GString *line = r->partial;
      r->partial = g_string_new(NULL);
      ok = hold_line(r, line->str, line->len, error);
      g_string_free(line, TRUE);
    } else {
      ok = hold_line(r, data, (size_t)(nl - data), error);
    }
    if (!ok) {
      r->failed = true;
      return false;
    }
    data = nl + 1;
  }
  return true;
}

bool ch_result_reader_finish(ch_result_reader *r, GError **error) {
  if (r->failed)
    return false;
  if (r->partial->len > 0) {
    /* An answer ends in '\n'; a last line without one is an error report
     * or a cut answer. */
    if (ch_result_is_error_report(r->partial->str, r->partial->len))
      return server_error(r->partial->str, r->partial->len, error);
    if (!hold_line(r, r->partial->str, r->partial->len, error))
      return false;
    g_string_truncate(r->partial, 0);
  }
  if (r->has_pending) {
    if (r->classes && ch_result_is_error_report(r->pending->str,
                                                r->pending->len))
      return server_error(r->pending->str, r->pending->len, error);
    if (!take_line(r, r->pending->str, r->pending->len, error))
      return false;
    r->has_pending = false;
  }
  if (r->names && !r->classes)
    return not_this_format(error);
  if (!r->writer) {
    /* No answer at all: a statement without a result. */
    r->writer = sql_output_writer_begin(r->format, r->column_width, r->out, NULL, 0, error);
    if (!r->writer)
      return false;
  }
  return sql_output_writer_end(r->writer, error);
}
