/*
 * SQL tokenizer (see sql_tokenizer.h). Follows SQLite's lexical rules for
 * what matters here: quoting ('' and "" doubled inside), [..] identifiers,
 * comments, and which characters continue an identifier (ASCII letters,
 * digits, '_', '$' and any byte >= 0x80).
 */
#include "sql/sql_tokenizer.h"

#include <glib.h>
#include <string.h>

static bool is_id_start(unsigned char c) {
  return g_ascii_isalpha(c) || c == '_' || c >= 0x80;
}

static bool is_id_char(unsigned char c) {
  return is_id_start(c) || g_ascii_isdigit(c) || c == '$';
}

static const char *quoted_end(const char *p, const char *end, char close,
                              bool doubled, bool *unterminated) {
  for (p++; p < end && *p; p++) {
    if (*p != close)
      continue;
    if (doubled && p + 1 < end && p[1] == close) {
      p++;
      continue;
    }
    return p + 1;
  }
  *unterminated = true;
  return p;
}

sql_token sql_token_at(const char *p, const char *end) {
  sql_token t = {SQL_TOKEN_END, p, 0, false};
  if (p >= end || !*p)
    return t;
  unsigned char c = (unsigned char)*p;
  const char *q = p + 1;
  if (g_ascii_isspace(c)) {
    while (q < end && *q && g_ascii_isspace(*q))
      q++;
    t.kind = SQL_TOKEN_SPACE;
  } else if (c == '-' && q < end && *q == '-') {
    while (q < end && *q && *q != '\n')
      q++;
    t.kind = SQL_TOKEN_COMMENT;
  } else if (c == '/' && q < end && *q == '*') {
    const char *close = NULL;
    for (const char *s = q + 1; s + 1 < end && *s; s++)
      if (s[0] == '*' && s[1] == '/') {
        close = s + 2;
        break;
      }
    if (close) {
      q = close;
    } else {
      q = p + strnlen(p, (size_t)(end - p));
      t.unterminated = true;
    }
    t.kind = SQL_TOKEN_COMMENT;
  } else if (c == '\'') {
    q = quoted_end(p, end, '\'', true, &t.unterminated);
    t.kind = SQL_TOKEN_STRING;
  } else if ((c == 'x' || c == 'X') && q < end && *q == '\'') {
    q = quoted_end(q, end, '\'', true, &t.unterminated);
    t.kind = SQL_TOKEN_STRING;
  } else if (c == '"' || c == '`') {
    q = quoted_end(p, end, (char)c, true, &t.unterminated);
    t.kind = SQL_TOKEN_QUOTED_ID;
  } else if (c == '[') {
    q = quoted_end(p, end, ']', false, &t.unterminated);
    t.kind = SQL_TOKEN_QUOTED_ID;
  } else if (is_id_start(c)) {
    while (q < end && *q && is_id_char((unsigned char)*q))
      q++;
    t.kind = SQL_TOKEN_WORD;
  } else if (g_ascii_isdigit(c) || (c == '.' && q < end && g_ascii_isdigit(*q))) {
    while (q < end && *q &&
           (g_ascii_isalnum(*q) || *q == '.' || *q == '_' ||
            ((*q == '+' || *q == '-') && (q[-1] == 'e' || q[-1] == 'E') &&
             !(p[0] == '0' && (p[1] == 'x' || p[1] == 'X')))))
      q++;
    t.kind = SQL_TOKEN_NUMBER;
  } else if (c == '$' || c == ':' || c == '@' || c == '#') {
    while (q < end && *q && is_id_char((unsigned char)*q))
      q++;
    t.kind = q > p + 1 ? SQL_TOKEN_VARIABLE : SQL_TOKEN_PUNCT;
  } else if (c == '?') {
    while (q < end && *q && g_ascii_isdigit(*q))
      q++;
    t.kind = SQL_TOKEN_VARIABLE;
  } else {
    static const char *const multi[] = {"->>", "->", "!=", "<=", ">=", "==",
                                        "<>", "||", "<<", ">>"};
    t.kind = SQL_TOKEN_PUNCT;
    for (size_t i = 0; i < G_N_ELEMENTS(multi); i++) {
      size_t n = strlen(multi[i]);
      if ((size_t)(end - p) >= n && strncmp(p, multi[i], n) == 0) {
        q = p + n;
        break;
      }
    }
  }
  t.len = (size_t)(q - p);
  return t;
}

sql_token sql_token_next_significant(const char *p, const char *end) {
  for (;;) {
    sql_token t = sql_token_at(p, end);
    if (t.kind != SQL_TOKEN_SPACE && t.kind != SQL_TOKEN_COMMENT)
      return t;
    p = t.start + t.len;
  }
}

bool sql_token_is_word(const sql_token *t, const char *word) {
  return t->kind == SQL_TOKEN_WORD && strlen(word) == t->len &&
         g_ascii_strncasecmp(t->start, word, t->len) == 0;
}

bool sql_token_is_punct(const sql_token *t, const char *punct) {
  return t->kind == SQL_TOKEN_PUNCT && strlen(punct) == t->len &&
         strncmp(t->start, punct, t->len) == 0;
}

void sql_text_position(const char *text, const char *p, int *line,
                       int *column) {
  int l = 1;
  const char *line_start = text;
  for (const char *s = text; s < p && *s; s++)
    if (*s == '\n') {
      l++;
      line_start = s + 1;
    }
  *line = l;
  *column = (int)(p - line_start) + 1;
}
