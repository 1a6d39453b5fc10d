/*
 * Core knows no format: no string literal in core/ is the name of a reader
 * or of a stat a reader declares. What core once knew by name (a reader's
 * stats, its processing priority, its sample table) each reader now
 * declares in its descriptor, so a third-party reader can do the same.
 *
 * The names come from the readers the build tree holds (loaded as the
 * host loads them); the sources from $G_TEST_SRCDIR/../core. Comments may
 * mention formats; only literals are code. One exception, spelled out
 * below: "json" is also trace_processor's name of an arg value type
 * (args.value_type), which the SQL surface (core/sql/) prints and the
 * ClickHouse sink (core/sink/) loads.
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "input/plugin_loader.h"

typedef struct literal_use {
  const char *literal;
  const char *dir; /* files under core/<dir>/ may use it */
  const char *why;
} literal_use;

static const literal_use allowed[] = {
    {"json", "sql", "the args value type TM_ARG_JSON, printed as trace_processor does"},
    {"json", "sink", "the args value type TM_ARG_JSON, loaded into ClickHouse as the SQL surface prints it"},
};

static bool is_allowed(const char *literal, const char *relative_path) {
  for (size_t i = 0; i < G_N_ELEMENTS(allowed); i++) {
    g_autofree char *prefix = g_strconcat(allowed[i].dir, "/", NULL);
    if (strcmp(literal, allowed[i].literal) == 0 &&
        g_str_has_prefix(relative_path, prefix))
      return true;
  }
  return false;
}

/* Calls `found` for every string literal of C source `text` (comments and
 * character constants skipped; escapes kept as written). */
static void for_each_literal(const char *text,
                             void (*found)(const char *literal, size_t line,
                                           void *ctx),
                             void *ctx) {
  size_t line = 1;
  for (const char *p = text; *p;) {
    if (p[0] == '/' && p[1] == '*') {
      const char *end = strstr(p + 2, "*/");
      for (const char *q = p; q < (end ? end : p + strlen(p)); q++)
        line += *q == '\n';
      p = end ? end + 2 : p + strlen(p);
    } else if (p[0] == '/' && p[1] == '/') {
      p = strchr(p, '\n') ? strchr(p, '\n') : p + strlen(p);
    } else if (*p == '\'') {
      for (p++; *p && *p != '\''; p++)
        if (*p == '\\' && p[1])
          p++;
      if (*p)
        p++;
    } else if (*p == '"') {
      GString *literal = g_string_new(NULL);
      for (p++; *p && *p != '"'; p++) {
        if (*p == '\\' && p[1])
          g_string_append_c(literal, *p++);
        g_string_append_c(literal, *p);
      }
      if (*p)
        p++;
      found(literal->str, line, ctx);
      g_string_free(literal, TRUE);
    } else {
      line += *p++ == '\n';
    }
  }
}

typedef struct scan {
  GHashTable *forbidden; /* literal -> what it names (borrowed) */
  const char *relative_path;
  GString *report;
} scan;

static void check_literal(const char *literal, size_t line, void *ctx) {
  scan *s = ctx;
  const char *what = g_hash_table_lookup(s->forbidden, literal);
  if (what && !is_allowed(literal, s->relative_path))
    g_string_append_printf(s->report, "core/%s:%zu: \"%s\" is %s\n",
                           s->relative_path, line, literal, what);
}

static void scan_dir(scan *s, const char *root, const char *relative) {
  g_autofree char *dir_path = g_build_filename(root, relative, NULL);
  GDir *dir = g_dir_open(dir_path, 0, NULL);
  g_assert_nonnull(dir);
  for (const char *name; (name = g_dir_read_name(dir)) != NULL;) {
    g_autofree char *child =
        *relative ? g_build_filename(relative, name, NULL) : g_strdup(name);
    g_autofree char *path = g_build_filename(root, child, NULL);
    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
      scan_dir(s, root, child);
      continue;
    }
    if (!g_str_has_suffix(name, ".c") && !g_str_has_suffix(name, ".h"))
      continue;
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    s->relative_path = child;
    for_each_literal(text, check_literal, s);
  }
  g_dir_close(dir);
}

static void test_core_names_no_reader_and_no_reader_stat(void) {
  char *warnings_text = NULL;
  size_t warnings_len = 0;
  FILE *warnings = open_memstream(&warnings_text, &warnings_len);
  tm_plugin_set *set = plugin_set_load(NULL, 0, NULL, 0, warnings);
  fclose(warnings);
  GHashTable *forbidden =
      g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
  size_t n_stats = 0;
  for (size_t i = 0; i < plugin_set_count(set); i++) {
    const tm_reader *r = plugin_set_borrow(set, i, NULL);
    g_hash_table_insert(forbidden, (gpointer)r->descriptor.name,
                        g_strdup_printf("the reader \"%s\"", r->descriptor.name));
    for (size_t k = 0; k < r->n_stats; k++, n_stats++)
      g_hash_table_insert(
          forbidden, (gpointer)r->stats[k].name,
          g_strdup_printf("a stat of the reader \"%s\"", r->descriptor.name));
  }
  /* The build tree's readers: the five formats and the example, with the
   * stats each declares; an empty set would check nothing. */
  g_assert_cmpuint(plugin_set_count(set), >=, 6);
  g_assert_cmpuint(n_stats, >, 0);

  g_autofree char *core =
      g_build_filename(g_getenv("G_TEST_SRCDIR"), "..", "core", NULL);
  scan s = {.forbidden = forbidden, .report = g_string_new(NULL)};
  scan_dir(&s, core, "");
  if (s.report->len)
    g_error("core/ names formats:\n%s", s.report->str);
  g_string_free(s.report, TRUE);
  g_hash_table_destroy(forbidden);
  plugin_set_free(set);
  free(warnings_text);
}

/* The scanner itself: literals are found with their lines, comments and
 * character constants are not. */
static void collect(const char *literal, size_t line, void *ctx) {
  g_string_append_printf(ctx, "%zu:%s\n", line, literal);
}

static void test_the_scanner_finds_literals_outside_comments(void) {
  static const char source[] = "/* \"proto\" in a comment,\n"
                               " * over two lines */\n"
                               "// \"json\" too\n"
                               "x = strcmp(s, \"proto\"); c = '\"';\n"
                               "y = \"a\\\"b\";\n";
  GString *found = g_string_new(NULL);
  for_each_literal(source, collect, found);
  g_assert_cmpstr(found->str, ==, "4:proto\n5:a\\\"b\n");
  g_string_free(found, TRUE);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/core-formats/core-names-no-reader-and-no-reader-stat",
                  test_core_names_no_reader_and_no_reader_stat);
  g_test_add_func("/core-formats/the-scanner-finds-literals-outside-comments",
                  test_the_scanner_finds_literals_outside_comments);
  return g_test_run();
}
