/*
 * Bounded printf()/format() (see sql_printf.h).
 *
 * The format is read with the grammar of SQLite's printf engine (flags
 * "-+ #!0,", a width of digits or '*', a precision of '.' and digits or
 * '*', 'l' or "ll", one conversion character); each literal run and each
 * conversion is then handed to sqlite3_str_appendf() with the argument
 * taken from the SQL arguments as the built-in takes them (integers as
 * 64-bit, reals as double, text as UTF-8; '*' as int). Where the engine
 * stops formatting (an unknown or internal-only conversion) we stop too.
 * Invariant: for every format the output equals the built-in's, except
 * that a %c repeated past the value limit, and any result past it, is an
 * error.
 */
#include "sql/sql_printf.h"

#include <sqlite3.h>
#include <string.h>

#include "sql/sql_output.h"

typedef struct sql_args {
  sqlite3_value **values;
  int count;
  int used;
} sql_args;

static sqlite3_int64 next_int(sql_args *args) {
  return args->used < args->count
             ? sqlite3_value_int64(args->values[args->used++])
             : 0;
}

static double next_double(sql_args *args) {
  return args->used < args->count
             ? sqlite3_value_double(args->values[args->used++])
             : 0.0;
}

static const char *next_text(sql_args *args) {
  return args->used < args->count
             ? (const char *)sqlite3_value_text(args->values[args->used++])
             : NULL;
}

typedef enum arg_kind {
  KIND_NONE,    /* %% */
  KIND_INT,     /* d i u x X o r p: a 64-bit integer */
  KIND_DOUBLE,  /* f e E g G */
  KIND_TEXT,    /* s z q Q w */
  KIND_CHAR,    /* c: a code point */
  KIND_SIZE,    /* n: prints nothing, consumes no SQL argument */
  KIND_STOP,    /* anything else: the engine stops formatting here */
} arg_kind;

static arg_kind conversion_kind(char c) {
  switch (c) {
  case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': case 'r':
  case 'p':
    return KIND_INT;
  case 'f': case 'e': case 'E': case 'g': case 'G':
    return KIND_DOUBLE;
  case 's': case 'z': case 'q': case 'Q': case 'w':
    return KIND_TEXT;
  case 'c':
    return KIND_CHAR;
  case 'n':
    return KIND_SIZE;
  case '%':
    return KIND_NONE;
  default: /* T and S are internal-only: the public engine stops too */
    return KIND_STOP;
  }
}

/* The code point %c prints for `text`: its first character; NUL for
 * NULL or ""; U+FFFD when it starts with invalid UTF-8. */
static unsigned int first_code_point(const char *text) {
  if (!text || !*text)
    return 0;
  gunichar ch = g_utf8_get_char_validated(text, -1);
  return ch == (gunichar)-1 || ch == (gunichar)-2 ? 0xFFFD : ch;
}

static int utf8_length(unsigned int ch) {
  return ch < 0x80 ? 1 : ch < 0x800 ? 2 : ch < 0x10000 ? 3 : 4;
}

typedef union arg_value {
  sqlite3_int64 i;
  double d;
  const char *s;
  unsigned int c;
  int *n;
} arg_value;

#define APPEND(out, spec, stars, n_stars, value)                            \
  do {                                                                      \
    if ((n_stars) == 0)                                                     \
      sqlite3_str_appendf(out, spec, value);                                \
    else if ((n_stars) == 1)                                                \
      sqlite3_str_appendf(out, spec, (stars)[0], value);                    \
    else                                                                    \
      sqlite3_str_appendf(out, spec, (stars)[0], (stars)[1], value);        \
  } while (0)

static void append_conversion(sqlite3_str *out, const char *spec,
                              const int *stars, int n_stars, arg_kind kind,
                              arg_value value) {
  switch (kind) {
  case KIND_INT:
    APPEND(out, spec, stars, n_stars, value.i);
    break;
  case KIND_DOUBLE:
    APPEND(out, spec, stars, n_stars, value.d);
    break;
  case KIND_TEXT:
    APPEND(out, spec, stars, n_stars, value.s);
    break;
  case KIND_CHAR:
    APPEND(out, spec, stars, n_stars, value.c);
    break;
  case KIND_SIZE:
    APPEND(out, spec, stars, n_stars, value.n);
    break;
  default:
    APPEND(out, spec, stars, n_stars, 0);
    break;
  }
}

static void bounded_printf(sqlite3_context *ctx, int argc,
                           sqlite3_value **argv) {
  if (argc < 1)
    return;
  const char *p = (const char *)sqlite3_value_text(argv[0]);
  if (!p)
    return;
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  sqlite3_int64 limit = sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1);
  sql_args args = {argv + 1, argc - 1, 0};
  sqlite3_str *out = sqlite3_str_new(db);
  GString *spec = g_string_new(NULL);
  bool too_big = false;

  while (*p && !too_big) {
    const char *percent = strchr(p, '%');
    if (!percent) {
      sqlite3_str_appendall(out, p);
      break;
    }
    /* (Never an empty append: it would make an empty result "" where
     * the built-in's is NULL.) */
    if (percent > p)
      sqlite3_str_append(out, p, (int)(percent - p));
    const char *f = percent + 1;
    char c = *f;
    if (c == '\0') {
      sqlite3_str_append(out, "%", 1);
      break;
    }
    /* The engine's flag loop, building the spec without 'l's. */
    g_string_assign(spec, "%");
    int stars[2];
    int n_stars = 0;
    int precision = -1;
    bool done = false;
    do {
      switch (c) {
      case '-': case '+': case ' ': case '#': case '!': case '0': case ',':
        g_string_append_c(spec, c);
        break;
      default:
        done = true;
        break;
      case 'l':
        c = *++f;
        if (c == 'l')
          c = *++f;
        done = true;
        break;
      case '1': case '2': case '3': case '4': case '5':
      case '6': case '7': case '8': case '9':
        g_string_append_c(spec, c);
        while ((c = *++f) >= '0' && c <= '9')
          g_string_append_c(spec, c);
        if (c != '.' && c != 'l')
          done = true;
        else
          f--;
        break;
      case '*':
        stars[n_stars++] = (int)next_int(&args);
        g_string_append_c(spec, '*');
        if ((c = f[1]) != '.' && c != 'l') {
          c = *++f;
          done = true;
        }
        break;
      case '.':
        g_string_append_c(spec, '.');
        c = *++f;
        if (c == '*') {
          precision = (int)next_int(&args);
          stars[n_stars++] = precision;
          g_string_append_c(spec, '*');
          if (precision < 0)
            precision = precision >= -2147483647 ? -precision : -1;
          c = *++f;
        } else {
          unsigned px = 0;
          while (c >= '0' && c <= '9') {
            g_string_append_c(spec, c);
            px = px * 10 + (unsigned)(c - '0');
            c = *++f;
          }
          precision = (int)(px & 0x7fffffff);
        }
        if (c == 'l')
          --f;
        else
          done = true;
        break;
      }
    } while (!done && (c = *++f) != '\0');

    arg_kind kind = c ? conversion_kind(c) : KIND_STOP;
    if (kind == KIND_STOP)
      break;
    arg_value value = {0};
    int size_sink = 0;
    switch (kind) {
    case KIND_INT:
      value.i = next_int(&args);
      if (c != 'p')
        g_string_append(spec, "ll");
      g_string_append_c(spec, c);
      break;
    case KIND_DOUBLE:
      value.d = next_double(&args);
      g_string_append_c(spec, c);
      break;
    case KIND_TEXT:
      value.s = next_text(&args);
      /* %z would make the engine free our argument: as SQL, it is %s. */
      g_string_append_c(spec, c == 'z' ? 's' : c);
      break;
    case KIND_CHAR:
      value.c = first_code_point(next_text(&args));
      /* The engine repeats the character precision-1 times, one append
       * each, whatever the limit: refuse that before it starts. */
      if (precision > 1 &&
          (sqlite3_int64)(precision - 1) * utf8_length(value.c) > limit)
        too_big = true;
      g_string_append_c(spec, c);
      break;
    case KIND_SIZE:
      value.n = &size_sink;
      g_string_append_c(spec, c);
      break;
    default:
      g_string_append_c(spec, c);
      break;
    }
    if (!too_big)
      append_conversion(out, spec->str, stars, n_stars, kind, value);
    p = f + 1;
  }
  g_string_free(spec, TRUE);

  int errcode = sqlite3_str_errcode(out);
  int length = sqlite3_str_length(out);
  char *text = sqlite3_str_finish(out);
  if (too_big || errcode == SQLITE_TOOBIG) {
    sqlite3_free(text);
    sqlite3_result_error_toobig(ctx);
  } else if (errcode != SQLITE_OK) {
    sqlite3_free(text);
    sqlite3_result_error_nomem(ctx);
  } else if (text) {
    sqlite3_result_text(ctx, text, length, sqlite3_free);
  }
  /* else nothing was printed: NULL, as the built-in returns. */
}

bool sql_printf_register(sqlite3 *db, GError **error) {
  static const char *const names[] = {"printf", "format"};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    if (sqlite3_create_function_v2(
            db, names[i], -1,
            SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
            bounded_printf, NULL, NULL, NULL) != SQLITE_OK) {
      g_set_error(error, TM_SQL_ERROR, TM_SQL_ERROR_QUERY,
                  "cannot register %s(): %s", names[i], sqlite3_errmsg(db));
      return false;
    }
  }
  return true;
}
