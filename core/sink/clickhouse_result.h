/*
 * Reading a ClickHouse answer in TabSeparatedWithNamesAndTypes (a line of
 * names, a line of types, then one line per row) and printing it with the
 * local query printers (core/sql/sql_output.h), so `query --from
 * clickhouse://...` prints what a local query would for the same values.
 *
 * Types map to SQLite's as a local query would type the same values:
 * Int8..Int64 and UInt8..UInt32 are integers, UInt64 an integer when it
 * fits in int64 and a real above (as SQLite reads such a number), Float32,
 * Float64 and Decimal reals, Nothing (a bare NULL) NULL, anything else
 * (String, dates, arrays, ...) text as ClickHouse writes it; Nullable() and
 * LowCardinality() are looked through, and "\N" is NULL.
 *
 * Rows are printed as they arrive, one line behind: ClickHouse reports an
 * error that happens after the first bytes went out by appending
 * "Code: N, ..." as a last line of a 200 answer, so a line is printed only
 * once the next one shows it was not that report.
 */
#ifndef TM_CLICKHOUSE_RESULT_H
#define TM_CLICKHOUSE_RESULT_H

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

#include <tracemerge/tracemerge.h>

typedef struct ch_result_reader ch_result_reader;

/* `column_width`: the table format's (0: the default). */
ch_result_reader *ch_result_reader_new(tm_format format, unsigned column_width,
                                       FILE *out);
void ch_result_reader_free(ch_result_reader *reader);

/* Takes the next bytes of the answer; false with the reason (a server
 * error report, an answer in another format, or an output error). */
bool ch_result_reader_feed(ch_result_reader *reader, const char *data,
                           size_t len, GError **error);

/* The answer is complete: prints what is held and ends the output. An
 * empty answer (a statement without a result) prints as zero columns. */
bool ch_result_reader_finish(ch_result_reader *reader, GError **error);

/* One TabSeparated field with its escapes undone (\b \f \n \r \t \0
 * \' \\ \xHH); NUL-terminated, `*out_len` bytes before the NUL. Free
 * with g_free. */
char *ch_tsv_unescape(const char *text, size_t len, size_t *out_len);

/* True if `line` is how ClickHouse reports an error in an answer body. */
bool ch_result_is_error_report(const char *line, size_t len);

#endif /* TM_CLICKHOUSE_RESULT_H */
