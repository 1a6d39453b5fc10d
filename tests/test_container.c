/* Unit tests of inputs and containers: fixture archives are built at test
 * time with libarchive's writer in a temporary directory; a recording sink
 * checks the trace_file rows, the exact bytes and chunks every leaf
 * receives, the sink protocol, and the damage and error messages. */
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input/container.h"
#include "model/model.h"

/* ---- fixture archives ---- */

typedef struct fixture_member {
  const char *name;
  GBytes *data; /* borrowed; NULL: a directory entry */
} fixture_member;

static la_ssize_t append_written(struct archive *a, void *client,
                                 const void *buf, size_t len) {
  (void)a;
  g_byte_array_append(client, buf, (guint)len);
  return (la_ssize_t)len;
}

static GBytes *build_archive(int format, int filter, const char *options,
                             const fixture_member *members, size_t n) {
  GByteArray *out = g_byte_array_new();
  struct archive *a = archive_write_new();
  g_assert_cmpint(archive_write_set_format(a, format), ==, ARCHIVE_OK);
  if (filter != ARCHIVE_FILTER_NONE)
    g_assert_cmpint(archive_write_add_filter(a, filter), ==, ARCHIVE_OK);
  if (options != NULL)
    g_assert_cmpint(archive_write_set_options(a, options), ==, ARCHIVE_OK);
  /* Tar keeps libarchive's 10240-byte records (zero padding to read past);
   * other formats end where their data ends, as real files do. */
  if ((format & ARCHIVE_FORMAT_BASE_MASK) != ARCHIVE_FORMAT_TAR)
    archive_write_set_bytes_in_last_block(a, 1);
  g_assert_cmpint(archive_write_open(a, out, NULL, append_written, NULL), ==,
                  ARCHIVE_OK);
  for (size_t i = 0; i < n; i++) {
    struct archive_entry *entry = archive_entry_new();
    archive_entry_set_pathname(entry, members[i].name);
    size_t len = 0;
    const void *data = NULL;
    if (members[i].data == NULL) {
      archive_entry_set_filetype(entry, AE_IFDIR);
      archive_entry_set_perm(entry, 0755);
    } else {
      data = g_bytes_get_data(members[i].data, &len);
      archive_entry_set_filetype(entry, AE_IFREG);
      archive_entry_set_perm(entry, 0644);
      archive_entry_set_size(entry, (la_int64_t)len);
    }
    g_assert_cmpint(archive_write_header(a, entry), ==, ARCHIVE_OK);
    if (len > 0)
      g_assert_cmpint(archive_write_data(a, data, len), ==, (la_ssize_t)len);
    archive_entry_free(entry);
  }
  g_assert_cmpint(archive_write_close(a), ==, ARCHIVE_OK);
  archive_write_free(a);
  return g_byte_array_free_to_bytes(out);
}

#define N_MEMBERS(m) (sizeof(m) / sizeof((m)[0]))

static GBytes *zip_of(const fixture_member *m, size_t n) {
  return build_archive(ARCHIVE_FORMAT_ZIP, ARCHIVE_FILTER_NONE, NULL, m, n);
}

static GBytes *stored_zip_of(const fixture_member *m, size_t n) {
  return build_archive(ARCHIVE_FORMAT_ZIP, ARCHIVE_FILTER_NONE,
                       "zip:compression=store", m, n);
}

static GBytes *tar_of(const fixture_member *m, size_t n) {
  return build_archive(ARCHIVE_FORMAT_TAR_USTAR, ARCHIVE_FILTER_NONE, NULL, m,
                       n);
}

static GBytes *compressed(int filter, GBytes *payload) {
  fixture_member m[] = {{"data", payload}};
  return build_archive(ARCHIVE_FORMAT_RAW, filter, NULL, m, 1);
}

static GBytes *gzip_of(GBytes *payload) {
  return compressed(ARCHIVE_FILTER_GZIP, payload);
}

static GBytes *text(const char *s) { return g_bytes_new(s, strlen(s)); }

/* A JSON-looking blob of `len` bytes that deflate cannot shrink much. */
static GBytes *noisy_json(size_t len, guint32 seed) {
  GRand *rand = g_rand_new_with_seed(seed);
  uint8_t *data = g_malloc(len);
  data[0] = '[';
  for (size_t i = 1; i < len; i++)
    data[i] = (uint8_t)g_rand_int_range(rand, 32, 127);
  g_rand_free(rand);
  return g_bytes_new_take(data, len);
}

static GBytes *concat(GBytes *a, GBytes *b) {
  GByteArray *out = g_byte_array_new();
  g_byte_array_append(out, g_bytes_get_data(a, NULL),
                      (guint)g_bytes_get_size(a));
  g_byte_array_append(out, g_bytes_get_data(b, NULL),
                      (guint)g_bytes_get_size(b));
  return g_byte_array_free_to_bytes(out);
}

static GBytes *prefix(GBytes *bytes, size_t len) {
  g_assert_cmpuint(len, <=, g_bytes_get_size(bytes));
  return g_bytes_new_from_bytes(bytes, 0, len);
}

/* Offset of the first occurrence of `needle` in `bytes`. */
static size_t find(GBytes *bytes, const char *needle) {
  size_t len;
  const char *data = g_bytes_get_data(bytes, &len);
  const char *hit = memmem(data, len, needle, strlen(needle));
  g_assert_nonnull(hit);
  return (size_t)(hit - data);
}

static int64_t size_of(GBytes *bytes) {
  return (int64_t)g_bytes_get_size(bytes);
}

/* ---- the recording sink ---- */

typedef struct recorded_file {
  uint32_t id;
  char *trace_type;
  char *name; /* as detect() saw it */
  GByteArray *bytes;
  size_t n_chunks;
  size_t first_chunk;
  size_t largest_chunk;
  bool ended;
  bool truncated;
  char *damage;
} recorded_file;

typedef struct recorder {
  GPtrArray *files;             /* recorded_file, in begin order */
  GPtrArray *container_damages; /* "<id>: <message>" */
  GPtrArray *detected_names;    /* names detect() was asked about */
  recorded_file *open;
  uint32_t refuse_begin_of; /* TM_NULL_ID: accept every file */
  bool refuse_chunks;
  bool refuse_end_silently; /* returns false without an error */
  bool refuse_container_damage;
  const tm_model *model;
  size_t rows_at_first_begin;
} recorder;

static void recorded_file_free(gpointer p) {
  recorded_file *f = p;
  g_free(f->trace_type);
  g_free(f->name);
  g_byte_array_unref(f->bytes);
  g_free(f->damage);
  g_free(f);
}

static const char *fake_detect(void *ctx, const uint8_t *head, size_t len,
                               const char *name) {
  recorder *rec = ctx;
  g_ptr_array_add(rec->detected_names,
                  g_strdup(name != NULL ? name : "(null)"));
  static const char manifest[] = "{\"perfetto_manifest\"";
  if (len >= sizeof manifest - 1 &&
      memcmp(head, manifest, sizeof manifest - 1) == 0)
    return "perfetto_manifest";
  if (len >= 1 && (head[0] == '{' || head[0] == '['))
    return "json";
  if (len >= 1 && head[0] == 0x0a)
    return "proto";
  if (len >= 7 && memcmp(head, "SYMBOLS", 7) == 0)
    return "symbols";
  return NULL;
}

/* The fake types' processing priorities, as their readers declare them:
 * protos before archives, symbols after every other type. */
static int32_t fake_priority(void *ctx, const char *trace_type) {
  (void)ctx;
  if (strcmp(trace_type, "proto") == 0)
    return -1;
  if (strcmp(trace_type, "symbols") == 0)
    return 1;
  return 0;
}

static bool fake_begin(void *ctx, uint32_t file_id, const char *trace_type,
                       GError **error) {
  recorder *rec = ctx;
  g_assert_null(rec->open);
  if (file_id == rec->refuse_begin_of) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "begin refused %u",
                file_id);
    return false;
  }
  if (rec->files->len == 0)
    rec->rows_at_first_begin = rec->model->trace_files.len;
  recorded_file *f = g_new0(recorded_file, 1);
  f->id = file_id;
  f->trace_type = g_strdup(trace_type);
  f->bytes = g_byte_array_new();
  g_ptr_array_add(rec->files, f);
  rec->open = f;
  return true;
}

static bool fake_chunk(void *ctx, uint32_t file_id, const uint8_t *data,
                       size_t len, GError **error) {
  recorder *rec = ctx;
  g_assert_nonnull(rec->open);
  g_assert_cmpuint(rec->open->id, ==, file_id);
  g_assert_cmpuint(len, >, 0);
  g_assert_cmpuint(len, <=, TM_CONTAINER_CHUNK);
  if (rec->refuse_chunks) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "chunk refused %u",
                file_id);
    return false;
  }
  g_byte_array_append(rec->open->bytes, data, (guint)len);
  if (rec->open->n_chunks++ == 0)
    rec->open->first_chunk = len;
  rec->open->largest_chunk = MAX(rec->open->largest_chunk, len);
  return true;
}

static bool fake_end(void *ctx, uint32_t file_id, bool truncated,
                     const char *damage, GError **error) {
  (void)error;
  recorder *rec = ctx;
  g_assert_nonnull(rec->open);
  g_assert_cmpuint(rec->open->id, ==, file_id);
  rec->open->ended = true;
  rec->open->truncated = truncated;
  rec->open->damage = g_strdup(damage);
  rec->open = NULL;
  return !rec->refuse_end_silently;
}

static bool fake_container_damaged(void *ctx, uint32_t file_id,
                                   const char *damage, GError **error) {
  recorder *rec = ctx;
  g_assert_null(rec->open);
  if (rec->refuse_container_damage) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "damage refused");
    return false;
  }
  g_ptr_array_add(rec->container_damages,
                  g_strdup_printf("%u: %s", file_id, damage));
  return true;
}

/* ---- the test fixture ---- */

typedef struct fixture {
  char *dir;
  GPtrArray *paths; /* files written in dir */
  tm_model *model;
  recorder rec;
  tm_container_sink sink;
} fixture;

static void fixture_init(fixture *f) {
  GError *error = NULL;
  f->dir = g_dir_make_tmp("tm-container-XXXXXX", &error);
  g_assert_no_error(error);
  f->paths = g_ptr_array_new_with_free_func(g_free);
  f->model = model_new();
  f->rec = (recorder){
      .files = g_ptr_array_new_with_free_func(recorded_file_free),
      .container_damages = g_ptr_array_new_with_free_func(g_free),
      .detected_names = g_ptr_array_new_with_free_func(g_free),
      .refuse_begin_of = TM_NULL_ID,
      .model = f->model,
  };
  f->sink = (tm_container_sink){
      .ctx = &f->rec,
      .detect = fake_detect,
      .begin = fake_begin,
      .chunk = fake_chunk,
      .end = fake_end,
      .container_damaged = fake_container_damaged,
      .priority = fake_priority,
  };
}

static void fixture_clear(fixture *f) {
  for (guint i = 0; i < f->paths->len; i++)
    g_assert_cmpint(g_unlink(f->paths->pdata[i]), ==, 0);
  g_assert_cmpint(g_rmdir(f->dir), ==, 0);
  g_ptr_array_unref(f->paths);
  g_free(f->dir);
  model_free(f->model);
  g_ptr_array_unref(f->rec.files);
  g_ptr_array_unref(f->rec.container_damages);
  g_ptr_array_unref(f->rec.detected_names);
}

/* Writes `bytes` (taken) as dir/name; returns the path (owned by f). */
static const char *fixture_write(fixture *f, const char *name, GBytes *bytes) {
  char *path = g_build_filename(f->dir, name, NULL);
  GError *error = NULL;
  size_t len;
  const char *data = g_bytes_get_data(bytes, &len);
  g_file_set_contents(path, data != NULL ? data : "", (gssize)len, &error);
  g_assert_no_error(error);
  g_bytes_unref(bytes);
  g_ptr_array_add(f->paths, path);
  return path;
}

static bool fixture_read(fixture *f, const char *const *paths, size_t n,
                         GError **error) {
  return container_read_inputs(f->model, paths, n, &f->sink, error);
}

static void fixture_read_ok(fixture *f, const char *const *paths, size_t n) {
  GError *error = NULL;
  bool ok = fixture_read(f, paths, n, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
  g_assert_null(f->rec.open);
}

/* ---- assertions ---- */

static void assert_row(const fixture *f, uint32_t id, uint32_t parent_id,
                       const char *name, int64_t size, const char *type,
                       int64_t order, bool is_container) {
  g_assert_cmpuint(id, <, f->model->trace_files.len);
  const tm_trace_file_row *row = &f->model->trace_files.data[id];
  const tm_string_pool *strings = f->model->strings;
  g_assert_cmpuint(row->parent_id, ==, parent_id);
  g_assert_cmpstr(string_pool_borrow(strings, row->name), ==, name);
  g_assert_cmpint(row->size, ==, size);
  g_assert_cmpstr(string_pool_borrow(strings, row->trace_type), ==, type);
  g_assert_cmpint(row->processing_order, ==, order);
  g_assert_cmpint(row->is_container, ==, is_container);
}

static void assert_row_count(const fixture *f, size_t n) {
  g_assert_cmpuint(f->model->trace_files.len, ==, n);
}

/* The index-th file the sink saw was row `id`, got exactly `expected` and
 * ended without damage. */
static const recorded_file *assert_delivered(const fixture *f, guint index,
                                             uint32_t id, const char *type,
                                             GBytes *expected) {
  g_assert_cmpuint(index, <, f->rec.files->len);
  const recorded_file *file = f->rec.files->pdata[index];
  g_assert_cmpuint(file->id, ==, id);
  g_assert_cmpstr(file->trace_type, ==, type);
  g_assert_true(file->ended);
  g_assert_false(file->truncated);
  g_assert_null(file->damage);
  size_t len;
  const void *data = g_bytes_get_data(expected, &len);
  g_assert_cmpmem(file->bytes->data, file->bytes->len, data, len);
  g_assert_cmpuint(file->largest_chunk, <=, TM_CONTAINER_CHUNK);
  return file;
}

/* Ended truncated, with `expected` as the bytes delivered and a damage
 * message "<display>: damaged after <n> bytes: <cause>" whose cause
 * contains `cause_part`. */
static void assert_truncated(const fixture *f, guint index, uint32_t id,
                             GBytes *expected, const char *display,
                             const char *cause_part) {
  g_assert_cmpuint(index, <, f->rec.files->len);
  const recorded_file *file = f->rec.files->pdata[index];
  g_assert_cmpuint(file->id, ==, id);
  g_assert_true(file->ended);
  g_assert_true(file->truncated);
  size_t len;
  const void *data = g_bytes_get_data(expected, &len);
  g_assert_cmpmem(file->bytes->data, file->bytes->len, data, len);
  char *start = g_strdup_printf("%s: damaged after %zu bytes: ", display, len);
  g_assert_nonnull(file->damage);
  if (!g_str_has_prefix(file->damage, start))
    g_error("damage message '%s' does not start with '%s'", file->damage,
            start);
  g_assert_nonnull(strstr(file->damage + strlen(start), cause_part));
  g_free(start);
}

static void assert_error(GError *error, const char *message) {
  g_assert_error(error, TM_ERROR_DOMAIN, 0);
  g_assert_cmpstr(error->message, ==, message);
}

/* ---- plain files ---- */

static void test_plain_json_file_is_one_leaf_row(void) {
  fixture f;
  fixture_init(&f);
  GBytes *json = text("{\"traceEvents\": []}");
  const char *path = fixture_write(&f, "t.json", g_bytes_ref(json));
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 1);
  assert_row(&f, 0, TM_NULL_ID, path, size_of(json), "json", 0, false);
  g_assert_cmpuint(f.rec.files->len, ==, 1);
  const recorded_file *file = assert_delivered(&f, 0, 0, "json", json);
  g_assert_cmpuint(file->n_chunks, ==, 1);
  g_assert_cmpstr(f.rec.detected_names->pdata[0], ==, path);
  g_bytes_unref(json);
  fixture_clear(&f);
}

static void test_plain_large_file_arrives_in_bounded_chunks(void) {
  fixture f;
  fixture_init(&f);
  GBytes *json = noisy_json(2 * TM_CONTAINER_CHUNK + 1000, 1);
  const char *path = fixture_write(&f, "big.json", g_bytes_ref(json));
  fixture_read_ok(&f, &path, 1);
  assert_row(&f, 0, TM_NULL_ID, path, size_of(json), "json", 0, false);
  const recorded_file *file = assert_delivered(&f, 0, 0, "json", json);
  /* The head alone first, then the rest in chunks of at most the limit. */
  g_assert_cmpuint(file->n_chunks, >=, 4);
  g_assert_cmpuint(file->first_chunk, ==, TM_CONTAINER_HEAD);
  g_assert_cmpuint(file->largest_chunk, ==, TM_CONTAINER_CHUNK);
  g_bytes_unref(json);
  fixture_clear(&f);
}

static void test_plain_empty_file_is_an_unknown_type(void) {
  fixture f;
  fixture_init(&f);
  const char *path = fixture_write(&f, "empty", g_bytes_new(NULL, 0));
  GError *error = NULL;
  g_assert_false(fixture_read(&f, &path, 1, &error));
  char *want =
      g_strdup_printf("%s: Unknown trace type provided (ERR:fmt)", path);
  assert_error(error, want);
  g_free(want);
  g_error_free(error);
  assert_row_count(&f, 1);
  assert_row(&f, 0, TM_NULL_ID, path, 0, "unknown", TM_NULL_INT64, false);
  g_assert_cmpuint(f.rec.files->len, ==, 0);
  fixture_clear(&f);
}

static void test_plain_unknown_type_fails_naming_the_file(void) {
  fixture f;
  fixture_init(&f);
  const char *path =
      fixture_write(&f, "mystery.bin", text("MZ\x90\x00 not a trace"));
  GError *error = NULL;
  g_assert_false(fixture_read(&f, &path, 1, &error));
  char *want =
      g_strdup_printf("%s: Unknown trace type provided (ERR:fmt)", path);
  assert_error(error, want);
  g_free(want);
  g_error_free(error);
  g_assert_cmpuint(f.rec.files->len, ==, 0);
  fixture_clear(&f);
}

static void test_plain_missing_file_fails_naming_it(void) {
  fixture f;
  fixture_init(&f);
  const char *good = fixture_write(&f, "good.json", text("[]"));
  char *missing = g_build_filename(f.dir, "no-such-file.json", NULL);
  const char *paths[] = {good, missing};
  GError *error = NULL;
  g_assert_false(fixture_read(&f, paths, 2, &error));
  char *want =
      g_strdup_printf("%s: cannot open: %s", missing, g_strerror(ENOENT));
  assert_error(error, want);
  g_free(want);
  g_error_free(error);
  /* The first input was read before the failure. */
  assert_row_count(&f, 1);
  g_assert_cmpuint(f.rec.files->len, ==, 1);
  g_free(missing);
  fixture_clear(&f);
}

static void test_plain_directory_fails_naming_it(void) {
  fixture f;
  fixture_init(&f);
  const char *path = f.dir;
  GError *error = NULL;
  g_assert_false(fixture_read(&f, &path, 1, &error));
  char *want = g_strdup_printf("%s: not a file", path);
  assert_error(error, want);
  g_free(want);
  g_error_free(error);
  assert_row_count(&f, 0);
  fixture_clear(&f);
}

/* ---- zip ---- */

static void test_zip_members_stream_in_archive_order_with_full_paths(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("{\"a\": 1}");
  GBytes *b = noisy_json(TM_CONTAINER_CHUNK + 5000, 2);
  GBytes *c = text("[{\"c\": 3}]");
  fixture_member m[] = {
      {"sub/", NULL}, {"sub/dir/", NULL}, {"sub/dir/a.json", a},
      {"b.json", b},  {"sub/c.json", c},
  };
  GBytes *zip = zip_of(m, N_MEMBERS(m));
  int64_t zip_size = size_of(zip);
  const char *path = fixture_write(&f, "run.zip", zip);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 4);
  assert_row(&f, 0, TM_NULL_ID, path, zip_size, "zip", 0, true);
  assert_row(&f, 1, 0, "sub/dir/a.json", size_of(a), "json", 3, false);
  assert_row(&f, 2, 0, "b.json", size_of(b), "json", 1, false);
  assert_row(&f, 3, 0, "sub/c.json", size_of(c), "json", 2, false);
  g_assert_cmpuint(f.rec.files->len, ==, 3);
  assert_delivered(&f, 0, 1, "json", a);
  const recorded_file *big = assert_delivered(&f, 1, 2, "json", b);
  g_assert_cmpuint(big->n_chunks, >=, 3);
  assert_delivered(&f, 2, 3, "json", c);
  g_assert_cmpstr(f.rec.detected_names->pdata[0], ==, "sub/dir/a.json");
  g_bytes_unref(a);
  g_bytes_unref(b);
  g_bytes_unref(c);
  fixture_clear(&f);
}

static void test_zip_hidden_members_get_no_row(void) {
  fixture f;
  fixture_init(&f);
  GBytes *junk = text("binary junk that no reader knows");
  GBytes *a = text("[1]");
  GBytes *b = text("[2]");
  fixture_member m[] = {
      {"__MACOSX/._a.json", junk},
      {".DS_Store", junk},
      {"a.json", a},
      {"sub/.hidden/x.json", junk},
      {"sub/._x.json", junk},
      {"./b..json", b},
      {"../x/.", b},
  };
  const char *path = fixture_write(&f, "mac.zip", zip_of(m, N_MEMBERS(m)));
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 4);
  assert_row(&f, 1, 0, "a.json", 3, "json", 3, false);
  assert_row(&f, 2, 0, "./b..json", 3, "json", 2, false);
  assert_row(&f, 3, 0, "../x/.", 3, "json", 1, false);
  g_assert_cmpuint(f.rec.files->len, ==, 3);
  assert_delivered(&f, 0, 1, "json", a);
  assert_delivered(&f, 1, 2, "json", b);
  assert_delivered(&f, 2, 3, "json", b);
  g_bytes_unref(junk);
  g_bytes_unref(a);
  g_bytes_unref(b);
  fixture_clear(&f);
}

static void test_zip_unknown_member_fails_naming_archive_and_member(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[1]");
  GBytes *junk = text("ELF? no");
  fixture_member m[] = {{"a.json", a}, {"dir/b.bin", junk}};
  const char *path = fixture_write(&f, "u.zip", zip_of(m, N_MEMBERS(m)));
  GError *error = NULL;
  g_assert_false(fixture_read(&f, &path, 1, &error));
  char *want = g_strdup_printf(
      "%s/dir/b.bin: Unknown trace type provided (ERR:fmt)", path);
  assert_error(error, want);
  g_free(want);
  g_error_free(error);
  /* Every member is sniffed before any is delivered. */
  g_assert_cmpuint(f.rec.files->len, ==, 0);
  assert_row_count(&f, 3);
  assert_row(&f, 2, 0, "dir/b.bin", 0, "unknown", TM_NULL_INT64, false);
  g_bytes_unref(a);
  g_bytes_unref(junk);
  fixture_clear(&f);
}

/* The reference's example, with our fake types: the manifest first, then
 * protos, containers (with their own members right after them), other
 * types, symbols; by name within a priority. */
static void test_zip_processing_order_follows_archive_priority(void) {
  fixture f;
  fixture_init(&f);
  GBytes *b = text("{\"b\": 1}");
  GBytes *symbols = text("SYMBOLS for a");
  GBytes *proto = g_bytes_new("\x0a\x02\x08\x01", 4);
  GBytes *manifest = text("{\"perfetto_manifest\": {}}");
  GBytes *d = text("[\"d\"]");
  GBytes *d_gz = gzip_of(d);
  GBytes *zero = text("[0]");
  fixture_member m[] = {
      {"b.json", b},           {"a.symbols", symbols}, {"c.trace", proto},
      {"meta.json", manifest}, {"d.json.gz", d_gz},    {"0.json", zero},
  };
  GBytes *zip = zip_of(m, N_MEMBERS(m));
  int64_t zip_size = size_of(zip);
  const char *path = fixture_write(&f, "order.zip", zip);
  fixture_read_ok(&f, &path, 1);
  /* Every member's row exists before any member is delivered; rows of a
   * nested container's members come when it is read. */
  g_assert_cmpuint(f.rec.rows_at_first_begin, ==, 7);
  assert_row_count(&f, 8);
  assert_row(&f, 0, TM_NULL_ID, path, zip_size, "zip", 0, true);
  assert_row(&f, 1, 0, "b.json", size_of(b), "json", 6, false);
  assert_row(&f, 2, 0, "a.symbols", size_of(symbols), "symbols", 7, false);
  assert_row(&f, 3, 0, "c.trace", 4, "proto", 2, false);
  assert_row(&f, 4, 0, "meta.json", size_of(manifest), "perfetto_manifest", 1,
             false);
  assert_row(&f, 5, 0, "d.json.gz", size_of(d_gz), "gzip", 3, true);
  assert_row(&f, 6, 0, "0.json", size_of(zero), "json", 5, false);
  assert_row(&f, 7, 5, "", size_of(d), "json", 4, false);
  /* The manifest first, then archive order. */
  g_assert_cmpuint(f.rec.files->len, ==, 6);
  assert_delivered(&f, 0, 4, "perfetto_manifest", manifest);
  assert_delivered(&f, 1, 1, "json", b);
  assert_delivered(&f, 2, 2, "symbols", symbols);
  assert_delivered(&f, 3, 3, "proto", proto);
  assert_delivered(&f, 4, 7, "json", d);
  assert_delivered(&f, 5, 6, "json", zero);
  g_bytes_unref(b);
  g_bytes_unref(symbols);
  g_bytes_unref(proto);
  g_bytes_unref(manifest);
  g_bytes_unref(d);
  g_bytes_unref(d_gz);
  g_bytes_unref(zero);
  fixture_clear(&f);
}

/* ---- tar ---- */

static void check_tar_format(int format, const char *magic) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[{\"ph\": \"X\"}]");
  GBytes *b = noisy_json(TM_CONTAINER_CHUNK * 2, 3);
  fixture_member m[] = {{"traces/", NULL},
                        {"traces/a.json", a},
                        {"traces/._a.json", a},
                        {"b.json", b}};
  GBytes *tar =
      build_archive(format, ARCHIVE_FILTER_NONE, NULL, m, N_MEMBERS(m));
  g_assert_cmpmem((const char *)g_bytes_get_data(tar, NULL) + 257,
                  strlen(magic) + 1, magic, strlen(magic) + 1);
  int64_t tar_size = size_of(tar);
  const char *path = fixture_write(&f, "t.tar", tar);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 3);
  assert_row(&f, 0, TM_NULL_ID, path, tar_size, "tar", 0, true);
  assert_row(&f, 1, 0, "traces/a.json", size_of(a), "json", 2, false);
  assert_row(&f, 2, 0, "b.json", size_of(b), "json", 1, false);
  assert_delivered(&f, 0, 1, "json", a);
  const recorded_file *big = assert_delivered(&f, 1, 2, "json", b);
  g_assert_cmpuint(big->n_chunks, >=, 3);
  g_bytes_unref(a);
  g_bytes_unref(b);
  fixture_clear(&f);
}

static void test_tar_ustar_members(void) {
  check_tar_format(ARCHIVE_FORMAT_TAR_USTAR, "ustar");
}

static void test_tar_gnu_members(void) {
  check_tar_format(ARCHIVE_FORMAT_TAR_GNUTAR, "ustar  ");
}

static void test_tar_gz_is_a_gzip_whose_payload_is_a_tar(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[\"a\"]");
  GBytes *b = text("{\"b\": 2}");
  fixture_member m[] = {{"a.json", a}, {"x/b.json", b}};
  GBytes *tar = tar_of(m, N_MEMBERS(m));
  GBytes *tgz = gzip_of(tar);
  int64_t tgz_size = size_of(tgz);
  const char *path = fixture_write(&f, "t.tar.gz", tgz);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 4);
  assert_row(&f, 0, TM_NULL_ID, path, tgz_size, "gzip", 0, true);
  assert_row(&f, 1, 0, "", size_of(tar), "tar", 1, true);
  assert_row(&f, 2, 1, "a.json", size_of(a), "json", 2, false);
  assert_row(&f, 3, 1, "x/b.json", size_of(b), "json", 3, false);
  assert_delivered(&f, 0, 2, "json", a);
  assert_delivered(&f, 1, 3, "json", b);
  g_bytes_unref(a);
  g_bytes_unref(b);
  g_bytes_unref(tar);
  fixture_clear(&f);
}

static void test_tar_sparse_member_holes_arrive_as_zeros(void) {
  fixture f;
  fixture_init(&f);
  GByteArray *out = g_byte_array_new();
  struct archive *a = archive_write_new();
  g_assert_cmpint(archive_write_set_format_pax(a), ==, ARCHIVE_OK);
  g_assert_cmpint(archive_write_open(a, out, NULL, append_written, NULL), ==,
                  ARCHIVE_OK);
  struct archive_entry *entry = archive_entry_new();
  archive_entry_set_pathname(entry, "sparse.json");
  archive_entry_set_filetype(entry, AE_IFREG);
  archive_entry_set_perm(entry, 0644);
  archive_entry_set_size(entry, 200000);
  archive_entry_sparse_add_entry(entry, 0, 1000);
  archive_entry_sparse_add_entry(entry, 150000, 1000);
  g_assert_cmpint(archive_write_header(a, entry), ==, ARCHIVE_OK);
  /* The writer takes the logical contents and stores only the regions. */
  uint8_t *whole = g_malloc0(200000);
  memset(whole, 'x', 1000);
  whole[0] = '[';
  memset(whole + 150000, 'y', 1000);
  g_assert_cmpint(archive_write_data(a, whole, 200000), ==, 200000);
  archive_entry_free(entry);
  g_assert_cmpint(archive_write_close(a), ==, ARCHIVE_OK);
  archive_write_free(a);
  GBytes *expected = g_bytes_new_take(whole, 200000);
  GBytes *tar = g_byte_array_free_to_bytes(out);
  /* Stored sparse: far smaller than the member. */
  g_assert_cmpuint(g_bytes_get_size(tar), <, 20000);
  const char *path = fixture_write(&f, "sparse.tar", tar);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 2);
  assert_row(&f, 1, 0, "sparse.json", 200000, "json", 1, false);
  assert_delivered(&f, 0, 1, "json", expected);
  g_bytes_unref(expected);
  fixture_clear(&f);
}

/* Streamed archives are delivered in archive order; processing_order is
 * still trace_processor's. */
static void test_tar_processing_order_puts_the_manifest_first(void) {
  fixture f;
  fixture_init(&f);
  GBytes *json = text("[\"j\"]");
  GBytes *manifest = text("{\"perfetto_manifest\": {\"version\": 1}}");
  GBytes *proto = g_bytes_new("\x0a\x01\x00", 3);
  fixture_member m[] = {
      {"z.json", json}, {"b.pb", proto}, {"a.pb", proto}, {"m.json", manifest}};
  const char *path = fixture_write(&f, "m.tar", tar_of(m, N_MEMBERS(m)));
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 5);
  assert_row(&f, 1, 0, "z.json", size_of(json), "json", 4, false);
  assert_row(&f, 2, 0, "b.pb", 3, "proto", 3, false);
  assert_row(&f, 3, 0, "a.pb", 3, "proto", 2, false);
  assert_row(&f, 4, 0, "m.json", size_of(manifest), "perfetto_manifest", 1,
             false);
  assert_delivered(&f, 0, 1, "json", json);
  assert_delivered(&f, 3, 4, "perfetto_manifest", manifest);
  g_bytes_unref(json);
  g_bytes_unref(manifest);
  g_bytes_unref(proto);
  fixture_clear(&f);
}

typedef struct pipe_writer {
  char *path;
  GBytes *bytes;
} pipe_writer;

static gpointer write_into_pipe(gpointer data) {
  pipe_writer *pw = data;
  int fd = g_open(pw->path, O_WRONLY, 0);
  g_assert_cmpint(fd, >=, 0);
  size_t len;
  const uint8_t *p = g_bytes_get_data(pw->bytes, &len);
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    g_assert_cmpint(n, >, 0);
    p += n;
    len -= (size_t)n;
  }
  close(fd);
  return NULL;
}

/* A ZIP that cannot be seeked is streamed: rows come as members are met
 * (a nested container's members before the next member), delivery is in
 * archive order, the manifest included. */
static void test_zip_through_a_pipe_is_streamed(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[\"a\"]");
  GBytes *payload = noisy_json(TM_CONTAINER_CHUNK + 10, 13);
  GBytes *gz = gzip_of(payload);
  GBytes *manifest = text("{\"perfetto_manifest\": {}}");
  fixture_member m[] = {
      {"a.json", a}, {"in.json.gz", gz}, {"m.json", manifest}};
  GBytes *zip = zip_of(m, N_MEMBERS(m));
  char *fifo = g_build_filename(f.dir, "pipe.zip", NULL);
  g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
  g_ptr_array_add(f.paths, fifo);
  pipe_writer pw = {.path = fifo, .bytes = zip};
  GThread *writer = g_thread_new("pipe-writer", write_into_pipe, &pw);
  const char *path = fifo;
  fixture_read_ok(&f, &path, 1);
  g_thread_join(writer);
  assert_row_count(&f, 5);
  assert_row(&f, 0, TM_NULL_ID, path, size_of(zip), "zip", 0, true);
  assert_row(&f, 1, 0, "a.json", size_of(a), "json", 4, false);
  assert_row(&f, 2, 0, "in.json.gz", size_of(gz), "gzip", 2, true);
  assert_row(&f, 3, 2, "", size_of(payload), "json", 3, false);
  assert_row(&f, 4, 0, "m.json", size_of(manifest), "perfetto_manifest", 1,
             false);
  assert_delivered(&f, 0, 1, "json", a);
  assert_delivered(&f, 1, 3, "json", payload);
  assert_delivered(&f, 2, 4, "perfetto_manifest", manifest);
  g_bytes_unref(a);
  g_bytes_unref(payload);
  g_bytes_unref(gz);
  g_bytes_unref(manifest);
  g_bytes_unref(zip);
  fixture_clear(&f);
}

/* ---- gzip and zstd ---- */

static void test_gzip_payload_is_one_row_with_an_empty_name(void) {
  fixture f;
  fixture_init(&f);
  GBytes *json = noisy_json(TM_CONTAINER_CHUNK * 3 + 7, 4);
  GBytes *gz = gzip_of(json);
  int64_t gz_size = size_of(gz);
  const char *path = fixture_write(&f, "t.json.gz", gz);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 2);
  assert_row(&f, 0, TM_NULL_ID, path, gz_size, "gzip", 0, true);
  assert_row(&f, 1, 0, "", size_of(json), "json", 1, false);
  const recorded_file *file = assert_delivered(&f, 0, 1, "json", json);
  g_assert_cmpuint(file->n_chunks, >=, 4);
  /* A payload has no name of its own to detect by. */
  g_assert_cmpstr(f.rec.detected_names->pdata[0], ==, "(null)");
  g_bytes_unref(json);
  fixture_clear(&f);
}

static void test_gzip_concatenated_members_are_one_stream(void) {
  fixture f;
  fixture_init(&f);
  GBytes *first = text("[{\"name\": \"first\"},");
  GBytes *second = text("{\"name\": \"second\"}]");
  GBytes *gz1 = gzip_of(first);
  GBytes *gz2 = gzip_of(second);
  GBytes *both = concat(gz1, gz2);
  GBytes *whole = concat(first, second);
  int64_t both_size = size_of(both);
  const char *path = fixture_write(&f, "cat.json.gz", both);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 2);
  assert_row(&f, 0, TM_NULL_ID, path, both_size, "gzip", 0, true);
  assert_row(&f, 1, 0, "", size_of(whole), "json", 1, false);
  assert_delivered(&f, 0, 1, "json", whole);
  g_bytes_unref(first);
  g_bytes_unref(second);
  g_bytes_unref(gz1);
  g_bytes_unref(gz2);
  g_bytes_unref(whole);
  fixture_clear(&f);
}

static void test_gzip_with_a_bad_header_is_damage(void) {
  fixture f;
  fixture_init(&f);
  /* The magic, then a compression method gzip does not define. */
  const char *path = fixture_write(
      &f, "bad.gz", g_bytes_new("\x1f\x8b\x63\x00junk junk junk junk", 22));
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 1);
  assert_row(&f, 0, TM_NULL_ID, path, 22, "gzip", 0, true);
  g_assert_cmpuint(f.rec.files->len, ==, 0);
  g_assert_cmpuint(f.rec.container_damages->len, ==, 1);
  /* libarchive's own words follow. */
  char *want = g_strdup_printf("0: %s: cannot be opened as gzip: ", path);
  const char *got = f.rec.container_damages->pdata[0];
  g_assert_true(g_str_has_prefix(got, want));
  g_assert_cmpuint(strlen(got), >, strlen(want));
  g_free(want);
  fixture_clear(&f);
}

static void test_zstd_payload_is_one_row_with_an_empty_name(void) {
  fixture f;
  fixture_init(&f);
  GBytes *json = noisy_json(TM_CONTAINER_CHUNK + 99, 5);
  GBytes *zst = compressed(ARCHIVE_FILTER_ZSTD, json);
  int64_t zst_size = size_of(zst);
  const char *path = fixture_write(&f, "t.json.zst", zst);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 2);
  assert_row(&f, 0, TM_NULL_ID, path, zst_size, "zstd", 0, true);
  assert_row(&f, 1, 0, "", size_of(json), "json", 1, false);
  assert_delivered(&f, 0, 1, "json", json);
  g_bytes_unref(json);
  fixture_clear(&f);
}

/* ---- nesting ---- */

static void test_nested_gzip_inside_zip(void) {
  fixture f;
  fixture_init(&f);
  GBytes *inner = noisy_json(TM_CONTAINER_CHUNK + 1234, 6);
  GBytes *inner_gz = gzip_of(inner);
  GBytes *after = text("[\"after\"]");
  fixture_member m[] = {{"logs/inner.json.gz", inner_gz},
                        {"after.json", after}};
  GBytes *zip = zip_of(m, N_MEMBERS(m));
  int64_t zip_size = size_of(zip);
  const char *path = fixture_write(&f, "outer.zip", zip);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 4);
  assert_row(&f, 0, TM_NULL_ID, path, zip_size, "zip", 0, true);
  assert_row(&f, 1, 0, "logs/inner.json.gz", size_of(inner_gz), "gzip", 1,
             true);
  assert_row(&f, 2, 0, "after.json", size_of(after), "json", 3, false);
  assert_row(&f, 3, 1, "", size_of(inner), "json", 2, false);
  assert_delivered(&f, 0, 3, "json", inner);
  assert_delivered(&f, 1, 2, "json", after);
  g_bytes_unref(inner);
  g_bytes_unref(inner_gz);
  g_bytes_unref(after);
  fixture_clear(&f);
}

static void test_nested_zip_inside_tar(void) {
  fixture f;
  fixture_init(&f);
  GBytes *x = text("{\"x\": true}");
  GBytes *y = noisy_json(TM_CONTAINER_CHUNK + 77, 7);
  fixture_member inner_m[] = {{"deep/", NULL},
                              {"x.json", x},
                              {"__MACOSX/._x.json", x},
                              {"deep/y.json", y},
                              {"deep/.DS_Store", x}};
  GBytes *inner_zip = zip_of(inner_m, N_MEMBERS(inner_m));
  GBytes *z = text("[\"z\"]");
  fixture_member m[] = {{"z.json", z}, {"bundle/inner.zip", inner_zip}};
  GBytes *tar = tar_of(m, N_MEMBERS(m));
  int64_t tar_size = size_of(tar);
  const char *path = fixture_write(&f, "outer.tar", tar);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 5);
  assert_row(&f, 0, TM_NULL_ID, path, tar_size, "tar", 0, true);
  assert_row(&f, 1, 0, "z.json", size_of(z), "json", 4, false);
  assert_row(&f, 2, 0, "bundle/inner.zip", size_of(inner_zip), "zip", 1, true);
  assert_row(&f, 3, 2, "x.json", size_of(x), "json", 3, false);
  assert_row(&f, 4, 2, "deep/y.json", size_of(y), "json", 2, false);
  assert_delivered(&f, 0, 1, "json", z);
  assert_delivered(&f, 1, 3, "json", x);
  assert_delivered(&f, 2, 4, "json", y);
  g_bytes_unref(x);
  g_bytes_unref(y);
  g_bytes_unref(z);
  g_bytes_unref(inner_zip);
  fixture_clear(&f);
}

static GBytes *gzip_nested(GBytes *payload, int levels) {
  GBytes *bytes = g_bytes_ref(payload);
  for (int i = 0; i < levels; i++) {
    GBytes *wrapped = gzip_of(bytes);
    g_bytes_unref(bytes);
    bytes = wrapped;
  }
  return bytes;
}

static void test_nested_sixteen_levels_are_read(void) {
  fixture f;
  fixture_init(&f);
  GBytes *json = text("[\"deep\"]");
  const char *path = fixture_write(&f, "deep.gz", gzip_nested(json, 16));
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 17);
  for (uint32_t i = 0; i < 16; i++)
    g_assert_true(f.model->trace_files.data[i].is_container);
  assert_row(&f, 16, 15, "", size_of(json), "json", 16, false);
  assert_delivered(&f, 0, 16, "json", json);
  g_bytes_unref(json);
  fixture_clear(&f);
}

static void test_nested_deeper_than_sixteen_levels_fails(void) {
  fixture f;
  fixture_init(&f);
  GBytes *json = text("[\"deeper\"]");
  const char *path = fixture_write(&f, "deeper.gz", gzip_nested(json, 17));
  GError *error = NULL;
  g_assert_false(fixture_read(&f, &path, 1, &error));
  char *want = g_strdup_printf("%s: containers nested more than 16 deep", path);
  assert_error(error, want);
  g_free(want);
  g_error_free(error);
  g_assert_cmpuint(f.rec.files->len, ==, 0);
  g_bytes_unref(json);
  fixture_clear(&f);
}

/* ---- several inputs ---- */

static void test_roots_are_members_of_one_virtual_archive(void) {
  fixture f;
  fixture_init(&f);
  GBytes *b = text("[\"b\"]");
  GBytes *proto = g_bytes_new("\x0a\x00", 2);
  GBytes *inner = text("{\"in zip\": 1}");
  fixture_member m[] = {{"inner.json", inner}};
  GBytes *zip = zip_of(m, 1);
  int64_t zip_size = size_of(zip);
  const char *b_path = fixture_write(&f, "b.json", g_bytes_ref(b));
  const char *zip_path = fixture_write(&f, "c.zip", zip);
  const char *proto_path = fixture_write(&f, "z.pb", g_bytes_ref(proto));
  const char *paths[] = {b_path, zip_path, proto_path};
  fixture_read_ok(&f, paths, 3);
  assert_row_count(&f, 4);
  assert_row(&f, 0, TM_NULL_ID, b_path, size_of(b), "json", 3, false);
  assert_row(&f, 1, TM_NULL_ID, zip_path, zip_size, "zip", 1, true);
  assert_row(&f, 2, 1, "inner.json", size_of(inner), "json", 2, false);
  assert_row(&f, 3, TM_NULL_ID, proto_path, size_of(proto), "proto", 0, false);
  assert_delivered(&f, 0, 0, "json", b);
  assert_delivered(&f, 1, 2, "json", inner);
  assert_delivered(&f, 2, 3, "proto", proto);
  g_bytes_unref(b);
  g_bytes_unref(proto);
  g_bytes_unref(inner);
  fixture_clear(&f);
}

/* ---- damage ---- */

static void test_damage_zip_bad_crc_keeps_the_bytes_and_goes_on(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("{\"a\": \"original contents of a\"}");
  GBytes *b = text("[\"b is intact\"]");
  fixture_member m[] = {{"a.json", a}, {"b.json", b}};
  GBytes *zip = stored_zip_of(m, N_MEMBERS(m));
  /* Stored, so the flipped byte reaches the sink and only the CRC tells. */
  GByteArray *bad = g_bytes_unref_to_array(zip);
  const uint8_t *hit = memmem(bad->data, bad->len, "original", 8);
  g_assert_nonnull(hit);
  bad->data[hit - bad->data] = 'O';
  GBytes *seen_a = text("{\"a\": \"Original contents of a\"}");
  int64_t zip_size = bad->len;
  const char *path =
      fixture_write(&f, "crc.zip", g_byte_array_free_to_bytes(bad));
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 3);
  assert_row(&f, 0, TM_NULL_ID, path, zip_size, "zip", 0, true);
  assert_row(&f, 1, 0, "a.json", size_of(a), "json", 1, false);
  assert_row(&f, 2, 0, "b.json", size_of(b), "json", 2, false);
  g_assert_cmpuint(f.rec.files->len, ==, 2);
  char *display = g_strdup_printf("%s/a.json", path);
  assert_truncated(&f, 0, 1, seen_a, display, "ZIP bad CRC");
  g_free(display);
  assert_delivered(&f, 1, 2, "json", b);
  g_assert_cmpuint(f.rec.container_damages->len, ==, 0);
  g_bytes_unref(a);
  g_bytes_unref(b);
  g_bytes_unref(seen_a);
  fixture_clear(&f);
}

/* Garbage in a deflate stream may inflate to wrong bytes before zlib or the
 * size/CRC check notices: the member ends truncated after what was
 * inflated, and the next member, found through the directory, is intact. */
static void test_damage_corrupt_zip_data_keeps_what_was_inflated(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = noisy_json(TM_CONTAINER_CHUNK * 2, 8);
  GBytes *b = text("[\"b\"]");
  fixture_member m[] = {{"a.json", a}, {"b.json", b}};
  GBytes *zip = zip_of(m, N_MEMBERS(m));
  GByteArray *bad = g_bytes_unref_to_array(zip);
  memset(bad->data + bad->len / 2, 0xff, 64);
  const char *path =
      fixture_write(&f, "corrupt.zip", g_byte_array_free_to_bytes(bad));
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 3);
  g_assert_cmpuint(f.rec.files->len, ==, 2);
  const recorded_file *file = f.rec.files->pdata[0];
  g_assert_cmpuint(file->id, ==, 1);
  g_assert_true(file->truncated);
  g_assert_cmpint(f.model->trace_files.data[1].size, ==, file->bytes->len);
  char *want = g_strdup_printf("%s/a.json: damaged after %u bytes: ZIP ", path,
                               file->bytes->len);
  g_assert_true(g_str_has_prefix(file->damage, want));
  g_free(want);
  /* The bytes before the garbage arrived as they were. */
  const uint8_t *original = g_bytes_get_data(a, NULL);
  size_t same = 0;
  while (same < file->bytes->len && original[same] == file->bytes->data[same])
    same++;
  g_assert_cmpuint(same, >=, 64 * 1024);
  g_assert_cmpuint(same, <, g_bytes_get_size(a));
  assert_delivered(&f, 1, 2, "json", b);
  g_bytes_unref(a);
  g_bytes_unref(b);
  fixture_clear(&f);
}

static void test_damage_truncated_zip_member(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[\"a\"]");
  GBytes *b = noisy_json(TM_CONTAINER_CHUNK, 9);
  fixture_member m[] = {{"a.json", a}, {"b.json", b}};
  GBytes *zip = stored_zip_of(m, N_MEMBERS(m));
  size_t cut = find(zip, "b.json") + 6 + 1000;
  GBytes *short_zip = prefix(zip, cut);
  g_bytes_unref(zip);
  const char *path = fixture_write(&f, "short.zip", short_zip);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 3);
  assert_row(&f, 0, TM_NULL_ID, path, (int64_t)cut, "zip", 0, true);
  assert_delivered(&f, 0, 1, "json", a);
  g_assert_cmpuint(f.rec.files->len, ==, 2);
  const recorded_file *file = f.rec.files->pdata[1];
  GBytes *delivered = prefix(b, file->bytes->len);
  char *display = g_strdup_printf("%s/b.json", path);
  assert_truncated(&f, 1, 2, delivered, display, "Truncated ZIP file data");
  g_assert_cmpint(f.model->trace_files.data[2].size, ==, file->bytes->len);
  g_free(display);
  g_bytes_unref(delivered);
  g_bytes_unref(a);
  g_bytes_unref(b);
  fixture_clear(&f);
}

static void test_damage_truncated_tar_member(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[\"a\"]");
  GBytes *b = noisy_json(3000, 10);
  fixture_member m[] = {{"a.json", a}, {"b.json", b}};
  GBytes *tar = tar_of(m, N_MEMBERS(m));
  /* Headers are 512 bytes: a 512 + 512 + b's header 512 + 1500 of b. */
  size_t cut = 512 * 3 + 1500;
  const char *path = fixture_write(&f, "short.tar", prefix(tar, cut));
  g_bytes_unref(tar);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 3);
  assert_row(&f, 0, TM_NULL_ID, path, (int64_t)cut, "tar", 0, true);
  assert_delivered(&f, 0, 1, "json", a);
  g_assert_cmpuint(f.rec.files->len, ==, 2);
  GBytes *delivered = prefix(b, 1500);
  char *display = g_strdup_printf("%s/b.json", path);
  assert_truncated(&f, 1, 2, delivered, display, "Truncated tar archive");
  assert_row(&f, 2, 0, "b.json", 1500, "json", 2, false);
  g_assert_cmpuint(f.rec.container_damages->len, ==, 0);
  g_free(display);
  g_bytes_unref(delivered);
  g_bytes_unref(a);
  g_bytes_unref(b);
  fixture_clear(&f);
}

static void test_damage_tar_cut_inside_a_header_reports_the_container(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[\"a\"]");
  GBytes *b = text("[\"b\"]");
  fixture_member m[] = {{"a.json", a}, {"b.json", b}};
  GBytes *tar = tar_of(m, N_MEMBERS(m));
  size_t cut = 512 * 2 + 100;
  const char *path = fixture_write(&f, "cut.tar", prefix(tar, cut));
  g_bytes_unref(tar);
  GBytes *json = text("[\"next input\"]");
  const char *next = fixture_write(&f, "next.json", g_bytes_ref(json));
  const char *paths[] = {path, next};
  fixture_read_ok(&f, paths, 2);
  assert_row_count(&f, 3);
  assert_row(&f, 0, TM_NULL_ID, path, (int64_t)cut, "tar", 0, true);
  assert_row(&f, 1, 0, "a.json", size_of(a), "json", 1, false);
  assert_row(&f, 2, TM_NULL_ID, next, size_of(json), "json", 2, false);
  assert_delivered(&f, 0, 1, "json", a);
  assert_delivered(&f, 1, 2, "json", json);
  g_assert_cmpuint(f.rec.container_damages->len, ==, 1);
  char *want = g_strdup_printf("0: %s: damaged at byte 1024: ", path);
  const char *got = f.rec.container_damages->pdata[0];
  g_assert_true(g_str_has_prefix(got, want));
  g_assert_nonnull(strstr(got, "Truncated tar archive"));
  g_free(want);
  g_bytes_unref(a);
  g_bytes_unref(b);
  g_bytes_unref(json);
  fixture_clear(&f);
}

static void test_damage_member_cut_before_its_type_is_known(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[\"a\"]");
  GBytes *x = g_bytes_new_take(memset(g_malloc(2000), 'Z', 2000), 2000);
  fixture_member m[] = {{"a.json", a}, {"x.bin", x}};
  GBytes *tar = tar_of(m, N_MEMBERS(m));
  const char *path = fixture_write(&f, "cut.tar", prefix(tar, 512 * 3 + 100));
  g_bytes_unref(tar);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 3);
  assert_row(&f, 1, 0, "a.json", size_of(a), "json", 1, false);
  assert_row(&f, 2, 0, "x.bin", 0, "unknown", TM_NULL_INT64, false);
  g_assert_cmpuint(f.rec.files->len, ==, 1);
  g_assert_cmpuint(f.rec.container_damages->len, ==, 1);
  char *want = g_strdup_printf("0: %s/x.bin: damaged after 100 bytes, before "
                               "its type was known: Truncated tar archive",
                               path);
  g_assert_cmpstr(f.rec.container_damages->pdata[0], ==, want);
  g_free(want);
  g_bytes_unref(a);
  g_bytes_unref(x);
  fixture_clear(&f);
}

/* The tar ends cleanly but the gzip around it breaks in what follows. */
static void test_damage_after_the_last_member_reports_the_container(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[\"a\"]");
  fixture_member m[] = {{"a.json", a}};
  GBytes *tar = tar_of(m, N_MEMBERS(m));
  GBytes *tail = noisy_json(300000, 14);
  GBytes *payload = concat(tar, tail);
  GBytes *tgz = gzip_of(payload);
  size_t cut = g_bytes_get_size(tgz) * 85 / 100;
  const char *path = fixture_write(&f, "tail.tgz", prefix(tgz, cut));
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 3);
  assert_row(&f, 0, TM_NULL_ID, path, (int64_t)cut, "gzip", 0, true);
  /* The payload's size is what the gzip could deliver. */
  const tm_trace_file_row *tar_row = &f.model->trace_files.data[1];
  g_assert_cmpint(tar_row->size, >, size_of(tar));
  g_assert_cmpint(tar_row->size, <, size_of(payload));
  assert_delivered(&f, 0, 2, "json", a);
  g_assert_cmpuint(f.rec.container_damages->len, ==, 1);
  char *want = g_strdup_printf("1: %s: damaged after its last member: "
                               "truncated gzip input",
                               path);
  g_assert_cmpstr(f.rec.container_damages->pdata[0], ==, want);
  g_free(want);
  g_bytes_unref(a);
  g_bytes_unref(tar);
  g_bytes_unref(tail);
  g_bytes_unref(payload);
  g_bytes_unref(tgz);
  fixture_clear(&f);
}

static void test_damage_zip_local_header_stops_the_listing(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[\"a\"]");
  GBytes *b = text("[\"b\"]");
  fixture_member m[] = {{"a.json", a}, {"b.json", b}, {"c.json", b}};
  GBytes *zip = stored_zip_of(m, N_MEMBERS(m));
  GByteArray *bad = g_bytes_unref_to_array(zip);
  const uint8_t *second = memmem(bad->data + 4, bad->len - 4, "PK\x03\x04", 4);
  g_assert_nonnull(second);
  bad->data[second - bad->data] = 'X';
  const char *path =
      fixture_write(&f, "hdr.zip", g_byte_array_free_to_bytes(bad));
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 2);
  assert_row(&f, 1, 0, "a.json", size_of(a), "json", 1, false);
  g_assert_cmpuint(f.rec.files->len, ==, 1);
  assert_delivered(&f, 0, 1, "json", a);
  g_assert_cmpuint(f.rec.container_damages->len, ==, 1);
  char *want = g_strdup_printf("0: %s: damaged at byte ", path);
  const char *got = f.rec.container_damages->pdata[0];
  g_assert_true(g_str_has_prefix(got, want));
  g_free(want);
  g_bytes_unref(a);
  g_bytes_unref(b);
  fixture_clear(&f);
}

static void test_damage_without_the_callback_fails_the_import(void) {
  fixture f;
  fixture_init(&f);
  f.sink.container_damaged = NULL;
  GBytes *a = text("[\"a\"]");
  fixture_member m[] = {{"a.json", a}, {"b.json", a}};
  GBytes *tar = tar_of(m, N_MEMBERS(m));
  const char *path = fixture_write(&f, "cut.tar", prefix(tar, 512 * 2 + 100));
  g_bytes_unref(tar);
  GError *error = NULL;
  g_assert_false(fixture_read(&f, &path, 1, &error));
  g_assert_error(error, TM_ERROR_DOMAIN, 0);
  char *want = g_strdup_printf("%s: damaged at byte 1024: ", path);
  g_assert_true(g_str_has_prefix(error->message, want));
  g_free(want);
  g_error_free(error);
  /* What came before the damage was delivered. */
  assert_delivered(&f, 0, 1, "json", a);
  g_bytes_unref(a);
  fixture_clear(&f);
}

static void test_damage_refused_by_the_sink_fails_the_import(void) {
  fixture f;
  fixture_init(&f);
  f.rec.refuse_container_damage = true;
  const char *path = fixture_write(
      &f, "bad.gz", g_bytes_new("\x1f\x8b\x63\x00junk junk junk junk", 22));
  GError *error = NULL;
  g_assert_false(fixture_read(&f, &path, 1, &error));
  g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED);
  g_assert_cmpstr(error->message, ==, "damage refused");
  g_error_free(error);
  fixture_clear(&f);
}

static void test_damage_truncated_gzip_keeps_the_payload_prefix(void) {
  fixture f;
  fixture_init(&f);
  GBytes *json = noisy_json(100000, 11);
  GBytes *gz = gzip_of(json);
  size_t cut = g_bytes_get_size(gz) - 5000;
  const char *path = fixture_write(&f, "short.json.gz", prefix(gz, cut));
  g_bytes_unref(gz);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 2);
  assert_row(&f, 0, TM_NULL_ID, path, (int64_t)cut, "gzip", 0, true);
  g_assert_cmpuint(f.rec.files->len, ==, 1);
  const recorded_file *file = f.rec.files->pdata[0];
  g_assert_cmpuint(file->bytes->len, >, 0);
  g_assert_cmpuint(file->bytes->len, <, g_bytes_get_size(json));
  GBytes *delivered = prefix(json, file->bytes->len);
  assert_truncated(&f, 0, 1, delivered, path, "truncated gzip input");
  assert_row(&f, 1, 0, "", (int64_t)file->bytes->len, "json", 1, false);
  g_bytes_unref(delivered);
  g_bytes_unref(json);
  fixture_clear(&f);
}

/* The gzip under a tar breaks: the tar member being streamed ends
 * truncated with the gzip's cause, reported once. */
static void test_damage_truncated_tar_gz_reports_the_innermost_cause(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[\"a\"]");
  GBytes *b = noisy_json(200000, 12);
  fixture_member m[] = {{"a.json", a}, {"b.json", b}};
  GBytes *tar = tar_of(m, N_MEMBERS(m));
  GBytes *tgz = gzip_of(tar);
  size_t cut = g_bytes_get_size(tgz) / 2;
  const char *path = fixture_write(&f, "short.tgz", prefix(tgz, cut));
  g_bytes_unref(tgz);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 4);
  assert_row(&f, 0, TM_NULL_ID, path, (int64_t)cut, "gzip", 0, true);
  assert_delivered(&f, 0, 2, "json", a);
  g_assert_cmpuint(f.rec.files->len, ==, 2);
  const recorded_file *file = f.rec.files->pdata[1];
  GBytes *delivered = prefix(b, file->bytes->len);
  char *display = g_strdup_printf("%s/b.json", path);
  assert_truncated(&f, 1, 3, delivered, display, "truncated gzip input");
  g_assert_cmpuint(f.rec.container_damages->len, ==, 0);
  g_free(display);
  g_bytes_unref(delivered);
  g_bytes_unref(a);
  g_bytes_unref(b);
  g_bytes_unref(tar);
  fixture_clear(&f);
}

/* ---- sink refusals ---- */

static void test_sink_refusing_a_file_stops_everything(void) {
  fixture f;
  fixture_init(&f);
  GBytes *a = text("[\"a\"]");
  fixture_member m[] = {{"a.json", a}, {"b.json", a}, {"c.json", a}};
  const char *path = fixture_write(&f, "r.zip", zip_of(m, N_MEMBERS(m)));
  f.rec.refuse_begin_of = 2;
  GError *error = NULL;
  g_assert_false(fixture_read(&f, &path, 1, &error));
  g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED);
  g_assert_cmpstr(error->message, ==, "begin refused 2");
  g_error_free(error);
  assert_row_count(&f, 4);
  g_assert_cmpuint(f.rec.files->len, ==, 1);
  g_bytes_unref(a);
  fixture_clear(&f);
}

static void test_sink_refusing_a_chunk_stops_everything(void) {
  fixture f;
  fixture_init(&f);
  GBytes *json = text("[\"a\"]");
  const char *paths[] = {fixture_write(&f, "a.json", g_bytes_ref(json)),
                         fixture_write(&f, "b.json", g_bytes_ref(json))};
  f.rec.refuse_chunks = true;
  GError *error = NULL;
  g_assert_false(fixture_read(&f, paths, 2, &error));
  g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED);
  g_assert_cmpstr(error->message, ==, "chunk refused 0");
  g_error_free(error);
  assert_row_count(&f, 1);
  g_bytes_unref(json);
  fixture_clear(&f);
}

static void test_sink_refusing_without_an_error_names_the_file(void) {
  fixture f;
  fixture_init(&f);
  const char *path = fixture_write(&f, "a.json", text("[]"));
  f.rec.refuse_end_silently = true;
  GError *error = NULL;
  g_assert_false(fixture_read(&f, &path, 1, &error));
  char *want = g_strdup_printf("%s: the session refused the file", path);
  assert_error(error, want);
  g_free(want);
  g_error_free(error);
  fixture_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/container/plain/json-file-is-one-leaf-row",
                  test_plain_json_file_is_one_leaf_row);
  g_test_add_func("/container/plain/large-file-arrives-in-bounded-chunks",
                  test_plain_large_file_arrives_in_bounded_chunks);
  g_test_add_func("/container/plain/empty-file-is-an-unknown-type",
                  test_plain_empty_file_is_an_unknown_type);
  g_test_add_func("/container/plain/unknown-type-fails-naming-the-file",
                  test_plain_unknown_type_fails_naming_the_file);
  g_test_add_func("/container/plain/missing-file-fails-naming-it",
                  test_plain_missing_file_fails_naming_it);
  g_test_add_func("/container/plain/directory-fails-naming-it",
                  test_plain_directory_fails_naming_it);
  g_test_add_func(
      "/container/zip/members-stream-in-archive-order-with-full-paths",
      test_zip_members_stream_in_archive_order_with_full_paths);
  g_test_add_func("/container/zip/hidden-members-get-no-row",
                  test_zip_hidden_members_get_no_row);
  g_test_add_func(
      "/container/zip/unknown-member-fails-naming-archive-and-member",
      test_zip_unknown_member_fails_naming_archive_and_member);
  g_test_add_func("/container/zip/processing-order-follows-archive-priority",
                  test_zip_processing_order_follows_archive_priority);
  g_test_add_func("/container/tar/ustar-members", test_tar_ustar_members);
  g_test_add_func("/container/tar/gnu-members", test_tar_gnu_members);
  g_test_add_func("/container/tar/sparse-member-holes-arrive-as-zeros",
                  test_tar_sparse_member_holes_arrive_as_zeros);
  g_test_add_func("/container/tar/processing-order-puts-the-manifest-first",
                  test_tar_processing_order_puts_the_manifest_first);
  g_test_add_func("/container/zip/through-a-pipe-is-streamed",
                  test_zip_through_a_pipe_is_streamed);
  g_test_add_func("/container/tar/gz-is-a-gzip-whose-payload-is-a-tar",
                  test_tar_gz_is_a_gzip_whose_payload_is_a_tar);
  g_test_add_func("/container/gzip/payload-is-one-row-with-an-empty-name",
                  test_gzip_payload_is_one_row_with_an_empty_name);
  g_test_add_func("/container/gzip/concatenated-members-are-one-stream",
                  test_gzip_concatenated_members_are_one_stream);
  g_test_add_func("/container/gzip/bad-header-is-damage",
                  test_gzip_with_a_bad_header_is_damage);
  g_test_add_func("/container/zstd/payload-is-one-row-with-an-empty-name",
                  test_zstd_payload_is_one_row_with_an_empty_name);
  g_test_add_func("/container/nested/gzip-inside-zip",
                  test_nested_gzip_inside_zip);
  g_test_add_func("/container/nested/zip-inside-tar",
                  test_nested_zip_inside_tar);
  g_test_add_func("/container/nested/sixteen-levels-are-read",
                  test_nested_sixteen_levels_are_read);
  g_test_add_func("/container/nested/deeper-than-sixteen-levels-fails",
                  test_nested_deeper_than_sixteen_levels_fails);
  g_test_add_func("/container/roots/are-members-of-one-virtual-archive",
                  test_roots_are_members_of_one_virtual_archive);
  g_test_add_func("/container/damage/zip-bad-crc-keeps-the-bytes-and-goes-on",
                  test_damage_zip_bad_crc_keeps_the_bytes_and_goes_on);
  g_test_add_func("/container/damage/corrupt-zip-data-keeps-what-was-inflated",
                  test_damage_corrupt_zip_data_keeps_what_was_inflated);
  g_test_add_func("/container/damage/truncated-zip-member",
                  test_damage_truncated_zip_member);
  g_test_add_func("/container/damage/truncated-tar-member",
                  test_damage_truncated_tar_member);
  g_test_add_func(
      "/container/damage/tar-cut-inside-a-header-reports-the-container",
      test_damage_tar_cut_inside_a_header_reports_the_container);
  g_test_add_func("/container/damage/member-cut-before-its-type-is-known",
                  test_damage_member_cut_before_its_type_is_known);
  g_test_add_func(
      "/container/damage/after-the-last-member-reports-the-container",
      test_damage_after_the_last_member_reports_the_container);
  g_test_add_func("/container/damage/zip-local-header-stops-the-listing",
                  test_damage_zip_local_header_stops_the_listing);
  g_test_add_func("/container/damage/without-the-callback-fails-the-import",
                  test_damage_without_the_callback_fails_the_import);
  g_test_add_func("/container/damage/refused-by-the-sink-fails-the-import",
                  test_damage_refused_by_the_sink_fails_the_import);
  g_test_add_func("/container/damage/truncated-gzip-keeps-the-payload-prefix",
                  test_damage_truncated_gzip_keeps_the_payload_prefix);
  g_test_add_func(
      "/container/damage/truncated-tar-gz-reports-the-innermost-cause",
      test_damage_truncated_tar_gz_reports_the_innermost_cause);
  g_test_add_func("/container/sink/refusing-a-file-stops-everything",
                  test_sink_refusing_a_file_stops_everything);
  g_test_add_func("/container/sink/refusing-a-chunk-stops-everything",
                  test_sink_refusing_a_chunk_stops_everything);
  g_test_add_func("/container/sink/refusing-without-an-error-names-the-file",
                  test_sink_refusing_without_an_error_names_the_file);
  return g_test_run();
}
