/*
 * printf() and format() for queries, bounded.
 *
 * SQLite 3.40's printf() repeats a %c once per unit of precision in a loop
 * that ignores the value limit: printf('%.*c', 2000000000, 'x') spins for
 * tens of seconds (hours with several %c), out of reach of the progress
 * handler. These replace the built-ins on every connection: the format is
 * cut into one conversion at a time, a %c whose repetition would exceed
 * the value limit fails at once, and every conversion is then formatted
 * by SQLite's own engine (sqlite3_str_appendf), so the output is the
 * built-in's. Two differences: a result over the value limit is an error
 * ("string or blob too big") where the built-in silently returns NULL, and
 * a %c of a string that starts with invalid UTF-8 prints U+FFFD.
 */
#ifndef TM_SQL_PRINTF_H
#define TM_SQL_PRINTF_H

#include <glib.h>
#include <stdbool.h>

typedef struct sqlite3 sqlite3;

/* Registers printf() and format() on `db`. */
bool sql_printf_register(sqlite3 *db, GError **error);

#endif /* TM_SQL_PRINTF_H */
