/*
 * A tokenizer for SQLite's SQL text, just precise enough for the
 * PerfettoSQL preprocessor (core/sql/perfetto_sql.h): it finds where a
 * statement ends, what its first keywords are, macro invocations and
 * `$name` parameters, without understanding the grammar.
 *
 * Tokens point into the caller's text (never copied). Strings, quoted
 * identifiers and comments are whole tokens, so a ';' or a '!' inside them
 * is never mistaken for syntax. An unterminated string or comment runs to
 * the end of the text and is flagged, so the caller can report it.
 */
#ifndef TM_SQL_TOKENIZER_H
#define TM_SQL_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>

typedef enum sql_token_kind {
  SQL_TOKEN_END = 0,   /* no more text */
  SQL_TOKEN_SPACE,     /* whitespace */
  SQL_TOKEN_COMMENT,   /* -- to end of line, or a C comment */
  SQL_TOKEN_STRING,    /* '...' or x'...' */
  SQL_TOKEN_QUOTED_ID, /* "...", `...` or [...] */
  SQL_TOKEN_WORD,      /* identifier or keyword */
  SQL_TOKEN_NUMBER,
  SQL_TOKEN_VARIABLE,  /* $name, :name, @name, ?, ?NNN */
  SQL_TOKEN_PUNCT,     /* an operator or punctuation, 1-3 characters */
} sql_token_kind;

typedef struct sql_token {
  sql_token_kind kind;
  const char *start;
  size_t len;
  bool unterminated; /* a string, quoted identifier or comment left open */
} sql_token;

/* The token that starts at `p` (kind SQL_TOKEN_END at '\0' or `end`). */
sql_token sql_token_at(const char *p, const char *end);

/* The next token at or after `p` that is neither space nor comment. */
sql_token sql_token_next_significant(const char *p, const char *end);

/* True if `t` is the word `word` (ASCII, case-insensitive). */
bool sql_token_is_word(const sql_token *t, const char *word);

/* True if `t` is the punctuation `punct` exactly. */
bool sql_token_is_punct(const sql_token *t, const char *punct);

/* 1-based line and column of `p` in `text` (column in bytes). */
void sql_text_position(const char *text, const char *p, int *line,
                       int *column);

#endif /* TM_SQL_TOKENIZER_H */
