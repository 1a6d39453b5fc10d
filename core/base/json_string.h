/*
 * JSON string literals: the one escaper of everything tracemerge writes as
 * JSON (the Chrome JSON export, the query output's JSON, args as JSON,
 * pack's manifest, and the JSON reader's text of a nested metadata value).
 *
 * What a literal holds: the bytes as they are, except
 *   "  \   as \" and \\
 *   backspace, form feed, newline, return, tab   as \b \f \n \r \t
 *   every other byte below 0x20                  as \u00XX
 *   U+2028, U+2029                               as \u2028, \u2029 (valid
 *                                                JSON, but not JavaScript
 *                                                before ES2019: viewers
 *                                                that eval JSON break)
 *   a byte that does not start valid UTF-8       as \u00XX, the code point
 *                                                of the same value (Latin-1)
 * so the literal is valid JSON (and UTF-8) whatever the bytes; valid UTF-8
 * (no overlongs, no surrogates, at most U+10FFFF) round-trips exactly.
 *
 * Depends on GLib alone (GString), so readers link it too
 * (plugins/meson.build). Output is appended; nothing is allocated besides
 * the GString's growth.
 */
#ifndef TM_JSON_STRING_H
#define TM_JSON_STRING_H

#include <glib.h>
#include <stddef.h>

/* The longest escape tm_json_plain_prefix() writes, with its NUL. */
#define TM_JSON_ESCAPE_MAX 8

/* The scanner the appenders are built on, for a writer with its own
 * buffer type: returns how many leading bytes of s[0, len) go out as they
 * are. If that is less than len, `escape` holds (NUL-terminated) what the
 * bytes after them become and *consumed how many input bytes it stands
 * for (1, or 3 for U+2028/U+2029). */
size_t tm_json_plain_prefix(const char *s, size_t len, char escape[TM_JSON_ESCAPE_MAX],
                            size_t *consumed);

/* Appends the literal of s[0, len), quotes included. */
void tm_json_append_string(GString *out, const char *s, size_t len);

/* The same for a NUL-terminated string; NULL is written as "". */
void tm_json_append_cstring(GString *out, const char *s);

#endif /* TM_JSON_STRING_H */
