/*
 * The layout of core/ keeps its data flow one way (docs/architecture.md):
 *
 * - the session's private state (core/session/session_internal.h) is
 *   included by core/session only: the rest of core receives the import
 *   state (core/input/import_state.h) or its parts as parameters;
 * - no two folders of core/ include each other, directly or through
 *   others: following the folders' #include "folder/..." lines never
 *   leads back to where it started;
 * - no two modules (a file pair x.c/x.h) of core/ or plugins/proto/
 *   include each other, directly or through others: the proto reader's
 *   modules receive its context and never reach back into what calls
 *   them, and within a core folder the same holds; nor do two modules of
 *   the other readers and plugins/common.
 *
 * Read from the sources under $G_TEST_SRCDIR/.. (core/, plugins/, tools/,
 * tests/); only #include lines count, so comments may name any header.
 */
#include <glib.h>
#include <string.h>

/* The folder `include_line` includes a header of, as in
 * `#include "session/session_internal.h"` -> "session", or NULL when the
 * line is no quoted #include of a path with a folder. `header`, if not
 * NULL, gets the whole path. */
static char *included_folder(const char *include_line, char **header) {
  const char *p = include_line;
  while (*p == ' ' || *p == '\t')
    p++;
  if (*p++ != '#')
    return NULL;
  while (*p == ' ' || *p == '\t')
    p++;
  if (strncmp(p, "include", 7) != 0)
    return NULL;
  p += 7;
  while (*p == ' ' || *p == '\t')
    p++;
  if (*p++ != '"')
    return NULL;
  const char *end = strchr(p, '"');
  const char *slash = strchr(p, '/');
  if (!end || !slash || slash > end)
    return NULL;
  if (header)
    *header = g_strndup(p, (size_t)(end - p));
  return g_strndup(p, (size_t)(slash - p));
}

/* Calls `found` with every source file (.c, .h) under root/relative. */
static void for_each_source(const char *root, const char *relative,
                            void (*found)(const char *relative_path,
                                          const char *text, void *ctx),
                            void *ctx) {
  g_autofree char *dir_path = g_build_filename(root, relative, NULL);
  GDir *dir = g_dir_open(dir_path, 0, NULL);
  g_assert_nonnull(dir);
  for (const char *name; (name = g_dir_read_name(dir)) != NULL;) {
    g_autofree char *child = g_build_filename(relative, name, NULL);
    g_autofree char *path = g_build_filename(root, child, NULL);
    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
      for_each_source(root, child, found, ctx);
      continue;
    }
    if (!g_str_has_suffix(name, ".c") && !g_str_has_suffix(name, ".h"))
      continue;
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    found(child, text, ctx);
  }
  g_dir_close(dir);
}

static char *source_root(void) {
  return g_build_filename(g_getenv("G_TEST_SRCDIR"), "..", NULL);
}

/* --- who includes session_internal.h ----------------------------------- */

typedef struct internal_scan {
  GString *report;
  size_t files;
} internal_scan;

static void check_internal_include(const char *path, const char *text,
                                   void *ctx) {
  internal_scan *s = ctx;
  s->files++;
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (size_t i = 0; lines[i]; i++) {
    g_autofree char *header = NULL;
    g_autofree char *folder = included_folder(lines[i], &header);
    if (folder && strcmp(header, "session/session_internal.h") == 0 &&
        !g_str_has_prefix(path, "core/session/"))
      g_string_append_printf(s->report, "%s:%zu: %s\n", path, i + 1, lines[i]);
  }
}

static void test_only_the_session_includes_its_private_state(void) {
  g_autofree char *root = source_root();
  internal_scan s = {.report = g_string_new(NULL)};
  const char *const trees[] = {"core", "plugins", "tools", "tests"};
  for (size_t i = 0; i < G_N_ELEMENTS(trees); i++)
    for_each_source(root, trees[i], check_internal_include, &s);
  /* Every tree was read (an empty walk would check nothing). */
  g_assert_cmpuint(s.files, >, 100);
  if (s.report->len)
    g_error("outside core/session, session_internal.h is included by:\n%s",
            s.report->str);
  g_string_free(s.report, TRUE);
}

/* --- the folders' include graph ---------------------------------------- */

typedef struct folder_graph {
  GPtrArray *folders;   /* char* (owned), the folders of core/ */
  GHashTable *edges;    /* "from>to" (owned) -> first "path:line" (owned) */
  const char *label;    /* how a report names a node ("core/%s/") */
} folder_graph;

static gint folder_index(const folder_graph *g, const char *name) {
  for (guint i = 0; i < g->folders->len; i++)
    if (strcmp(g_ptr_array_index(g->folders, i), name) == 0)
      return (gint)i;
  return -1;
}

static void add_folder_edges(const char *path, const char *text, void *ctx) {
  folder_graph *g = ctx;
  /* path is core/<folder>/...; the file's own folder. */
  g_auto(GStrv) parts = g_strsplit(path, "/", 3);
  if (!parts[1] || !parts[2])
    return;
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (size_t i = 0; lines[i]; i++) {
    g_autofree char *to = included_folder(lines[i], NULL);
    if (!to || strcmp(to, parts[1]) == 0 || folder_index(g, to) < 0)
      continue;
    char *key = g_strdup_printf("%s>%s", parts[1], to);
    if (g_hash_table_contains(g->edges, key))
      g_free(key);
    else
      g_hash_table_insert(g->edges, key, g_strdup_printf("%s:%zu", path, i + 1));
  }
}

/* The folders of core/ whose includes lead back to them, each with the
 * includes of one way round, or an empty string. */
static char *folder_circles(const folder_graph *g) {
  guint n = g->folders->len;
  /* reach[a][b]: a includes b, directly or through other folders
   * (Warshall's closure of the include edges). */
  gboolean *reach = g_new0(gboolean, (gsize)n * n);
  for (guint a = 0; a < n; a++)
    for (guint b = 0; b < n; b++) {
      g_autofree char *key = g_strdup_printf(
          "%s>%s", (char *)g_ptr_array_index(g->folders, a),
          (char *)g_ptr_array_index(g->folders, b));
      reach[a * n + b] = g_hash_table_contains(g->edges, key);
    }
  for (guint k = 0; k < n; k++)
    for (guint a = 0; a < n; a++)
      for (guint b = 0; b < n; b++)
        if (reach[a * n + k] && reach[k * n + b])
          reach[a * n + b] = TRUE;
  GString *report = g_string_new(NULL);
  for (guint a = 0; a < n; a++) {
    if (!reach[a * n + a])
      continue;
    const char *name = g_ptr_array_index(g->folders, a);
    g_string_append_printf(report, g->label, name);
    g_string_append(report, " includes itself back through:");
    /* Its direct includes that lead back to it. */
    for (guint b = 0; b < n; b++) {
      g_autofree char *key = g_strdup_printf(
          "%s>%s", name, (char *)g_ptr_array_index(g->folders, b));
      const char *where = g_hash_table_lookup(g->edges, key);
      if (where && reach[b * n + a])
        g_string_append_printf(report, " %s (%s)",
                               (char *)g_ptr_array_index(g->folders, b), where);
    }
    g_string_append_c(report, '\n');
  }
  g_free(reach);
  return g_string_free(report, FALSE);
}

static void folder_graph_init(folder_graph *g) {
  g->label = "core/%s/";
  g->folders = g_ptr_array_new_with_free_func(g_free);
  g->edges = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
}

static void folder_graph_clear(folder_graph *g) {
  g_ptr_array_free(g->folders, TRUE);
  g_hash_table_destroy(g->edges);
}

static void test_no_two_core_folders_include_each_other(void) {
  g_autofree char *root = source_root();
  g_autofree char *core = g_build_filename(root, "core", NULL);
  folder_graph g;
  folder_graph_init(&g);
  GDir *dir = g_dir_open(core, 0, NULL);
  g_assert_nonnull(dir);
  for (const char *name; (name = g_dir_read_name(dir)) != NULL;) {
    g_autofree char *path = g_build_filename(core, name, NULL);
    if (g_file_test(path, G_FILE_TEST_IS_DIR))
      g_ptr_array_add(g.folders, g_strdup(name));
  }
  g_dir_close(dir);
  for_each_source(root, "core", add_folder_edges, &g);
  /* The stages of docs/architecture.md and the includes between them: a
   * graph without edges would have no circle to find. */
  g_assert_cmpint(folder_index(&g, "session"), >=, 0);
  g_assert_cmpint(folder_index(&g, "input"), >=, 0);
  g_assert_cmpuint(g_hash_table_size(g.edges), >, 10);
  g_autofree char *circles = folder_circles(&g);
  if (*circles)
    g_error("core/ folders include each other:\n%s", circles);
  folder_graph_clear(&g);
}

/* --- the modules' include graph ---------------------------------------- */

/* The module a source path (without .c/.h) belongs to: itself, but for a
 * header "x_impl" that holds module x's code for inlining (the JSON
 * reader's json_fast_impl.h), which is x. */
static char *module_of(const char *path, size_t len) {
  if (len > 5 && strncmp(path + len - 5, "_impl", 5) == 0)
    len -= 5;
  return g_strndup(path, len);
}

/* The module (path without .c/.h) that `include_line` of the file `path`
 * names, if it is one of `g`'s: a header beside the file, or one under
 * core/ (core's includes name "folder/header.h"). NULL otherwise. */
static char *included_module(const folder_graph *g, const char *path,
                             const char *include_line) {
  const char *p = include_line;
  while (*p == ' ' || *p == '\t')
    p++;
  if (*p++ != '#')
    return NULL;
  while (*p == ' ' || *p == '\t')
    p++;
  if (strncmp(p, "include", 7) != 0)
    return NULL;
  p += 7;
  while (*p == ' ' || *p == '\t')
    p++;
  if (*p++ != '"')
    return NULL;
  const char *end = strchr(p, '"');
  if (!end || end - p < 2 || strncmp(end - 2, ".h", 2) != 0)
    return NULL;
  g_autofree char *header = module_of(p, (size_t)(end - 2 - p));
  g_autofree char *dir = g_path_get_dirname(path);
  char *beside = g_build_filename(dir, header, NULL);
  if (folder_index(g, beside) >= 0)
    return beside;
  g_free(beside);
  char *in_core = g_build_filename("core", header, NULL);
  if (folder_index(g, in_core) >= 0)
    return in_core;
  g_free(in_core);
  return NULL;
}

static void add_module(const char *path, const char *text, void *ctx) {
  (void)text;
  folder_graph *g = ctx;
  g_autofree char *module = module_of(path, strlen(path) - 2);
  if (folder_index(g, module) < 0)
    g_ptr_array_add(g->folders, g_steal_pointer(&module));
}

static void add_module_edges(const char *path, const char *text, void *ctx) {
  folder_graph *g = ctx;
  g_autofree char *from = module_of(path, strlen(path) - 2);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (size_t i = 0; lines[i]; i++) {
    g_autofree char *to = included_module(g, path, lines[i]);
    if (!to || strcmp(to, from) == 0)
      continue;
    char *key = g_strdup_printf("%s>%s", from, to);
    if (g_hash_table_contains(g->edges, key))
      g_free(key);
    else
      g_hash_table_insert(g->edges, key, g_strdup_printf("%s:%zu", path, i + 1));
  }
}

static void test_no_two_modules_of_core_or_the_proto_reader_include_each_other(void) {
  g_autofree char *root = source_root();
  folder_graph g;
  folder_graph_init(&g);
  g.label = "%s";
  const char *const trees[] = {"core", "plugins/proto"};
  for (size_t i = 0; i < G_N_ELEMENTS(trees); i++)
    for_each_source(root, trees[i], add_module, &g);
  for (size_t i = 0; i < G_N_ELEMENTS(trees); i++)
    for_each_source(root, trees[i], add_module_edges, &g);
  /* Both trees were read and their includes resolved (a graph without
   * edges would have no circle to find): the dispatcher includes the
   * context, and the model's builders include the model. */
  g_assert_true(g_hash_table_contains(
      g.edges, "plugins/proto/proto_reader>plugins/proto/proto_context"));
  g_assert_true(g_hash_table_contains(
      g.edges, "core/model/profile_builder>core/model/model"));
  g_autofree char *circles = folder_circles(&g);
  if (*circles)
    g_error("modules include each other:\n%s", circles);
  folder_graph_clear(&g);
}

/* The other readers and their shared code (plugins/common) keep the same
 * rule: no two modules of one include each other, so what one module
 * needs of another flows one way (the JSON reader's event buffer is read
 * by the emitter and the V8 profiles, which include it; neither includes
 * the other back). */
static void test_no_two_modules_of_the_other_readers_include_each_other(void) {
  g_autofree char *root = source_root();
  folder_graph g;
  folder_graph_init(&g);
  g.label = "%s";
  const char *const trees[] = {"plugins/json",        "plugins/systrace",
                               "plugins/gecko",       "plugins/instruments",
                               "plugins/common",      "plugins/example"};
  for (size_t i = 0; i < G_N_ELEMENTS(trees); i++)
    for_each_source(root, trees[i], add_module, &g);
  for (size_t i = 0; i < G_N_ELEMENTS(trees); i++)
    for_each_source(root, trees[i], add_module_edges, &g);
  /* The trees were read and their includes resolved: the JSON reader
   * includes its emitter, and the emitter the event buffer. */
  g_assert_true(g_hash_table_contains(
      g.edges, "plugins/json/json_reader>plugins/json/json_event"));
  g_assert_true(g_hash_table_contains(
      g.edges, "plugins/json/json_event>plugins/json/json_event_buf"));
  g_autofree char *circles = folder_circles(&g);
  if (*circles)
    g_error("modules include each other:\n%s", circles);
  folder_graph_clear(&g);
}

/* The checks themselves: an include line is read as a folder, and a
 * circle of three folders is found while a chain is not. */
static void test_an_include_line_names_its_folder(void) {
  g_autofree char *header = NULL;
  g_autofree char *folder =
      included_folder("  #  include \"session/session_internal.h\" /* x */", &header);
  g_assert_cmpstr(folder, ==, "session");
  g_assert_cmpstr(header, ==, "session/session_internal.h");
  g_assert_null(included_folder("#include <glib/gstdio.h>", NULL));
  g_assert_null(included_folder("#include \"vec.h\"", NULL));
  g_assert_null(included_folder(" * see \"session/session.c\"", NULL));
}

static void test_a_circle_of_folders_is_found_and_a_chain_is_not(void) {
  folder_graph g;
  folder_graph_init(&g);
  const char *const names[] = {"a", "b", "c"};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
    g_ptr_array_add(g.folders, g_strdup(names[i]));
  add_folder_edges("core/a/x.c", "#include \"b/y.h\"\n", &g);
  add_folder_edges("core/b/y.h", "#include \"c/z.h\"\n#include \"b/w.h\"\n", &g);
  g_autofree char *chain = folder_circles(&g);
  g_assert_cmpstr(chain, ==, "");
  add_folder_edges("core/c/z.c", "\n#include \"a/x.h\"\n", &g);
  g_autofree char *circle = folder_circles(&g);
  g_assert_cmpstr(circle, ==,
                  "core/a/ includes itself back through: b (core/a/x.c:1)\n"
                  "core/b/ includes itself back through: c (core/b/y.h:1)\n"
                  "core/c/ includes itself back through: a (core/c/z.c:2)\n");
  folder_graph_clear(&g);
}

static void test_a_circle_of_modules_is_found_through_a_header_beside_it(void) {
  folder_graph g;
  folder_graph_init(&g);
  g.label = "%s";
  add_module("plugins/p/a.c", "", &g);
  add_module("plugins/p/a.h", "", &g);
  add_module("plugins/p/b.h", "", &g);
  add_module("core/m/c.h", "", &g);
  g_assert_cmpuint(g.folders->len, ==, 3);
  add_module_edges("plugins/p/a.c", "#include \"a.h\"\n#include \"b.h\"\n", &g);
  add_module_edges("plugins/p/b.h", "#include <glib.h>\n#include \"m/c.h\"\n", &g);
  g_autofree char *chain = folder_circles(&g);
  g_assert_cmpstr(chain, ==, "");
  add_module_edges("plugins/p/a.h", "#include \"b.h\"\n", &g);
  add_module_edges("plugins/p/b.h", "\n#include \"a.h\"\n", &g);
  g_autofree char *circle = folder_circles(&g);
  g_assert_cmpstr(circle, ==,
                  "plugins/p/a includes itself back through: plugins/p/b (plugins/p/a.c:2)\n"
                  "plugins/p/b includes itself back through: plugins/p/a (plugins/p/b.h:2)\n");
  folder_graph_clear(&g);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/core-layout/only-the-session-includes-its-private-state",
                  test_only_the_session_includes_its_private_state);
  g_test_add_func("/core-layout/no-two-core-folders-include-each-other",
                  test_no_two_core_folders_include_each_other);
  g_test_add_func("/core-layout/no-two-modules-of-core-or-the-proto-reader-include-each-other",
                  test_no_two_modules_of_core_or_the_proto_reader_include_each_other);
  g_test_add_func("/core-layout/no-two-modules-of-the-other-readers-include-each-other",
                  test_no_two_modules_of_the_other_readers_include_each_other);
  g_test_add_func("/core-layout/a-circle-of-modules-is-found-through-a-header-beside-it",
                  test_a_circle_of_modules_is_found_through_a_header_beside_it);
  g_test_add_func("/core-layout/an-include-line-names-its-folder",
                  test_an_include_line_names_its_folder);
  g_test_add_func("/core-layout/a-circle-of-folders-is-found-and-a-chain-is-not",
                  test_a_circle_of_folders_is_found_and_a_chain_is_not);
  return g_test_run();
}
