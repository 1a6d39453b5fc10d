#include "container_fixture.h"

#include <archive_entry.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ---- fixture archives ---- */


la_ssize_t append_written(struct archive *a, void *client,
                                 const void *buf, size_t len) {
  (void)a;
  g_byte_array_append(client, buf, (guint)len);
  return (la_ssize_t)len;
}

GBytes *build_archive(int format, int filter, const char *options,
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


GBytes *zip_of(const fixture_member *m, size_t n) {
  return build_archive(ARCHIVE_FORMAT_ZIP, ARCHIVE_FILTER_NONE, NULL, m, n);
}

GBytes *stored_zip_of(const fixture_member *m, size_t n) {
  return build_archive(ARCHIVE_FORMAT_ZIP, ARCHIVE_FILTER_NONE,
                       "zip:compression=store", m, n);
}

GBytes *tar_of(const fixture_member *m, size_t n) {
  return build_archive(ARCHIVE_FORMAT_TAR_USTAR, ARCHIVE_FILTER_NONE, NULL, m,
                       n);
}

GBytes *compressed(int filter, GBytes *payload) {
  fixture_member m[] = {{"data", payload}};
  return build_archive(ARCHIVE_FORMAT_RAW, filter, NULL, m, 1);
}

GBytes *gzip_of(GBytes *payload) {
  return compressed(ARCHIVE_FILTER_GZIP, payload);
}

GBytes *gzip_nested(GBytes *payload, int levels) {
  GBytes *bytes = g_bytes_ref(payload);
  for (int i = 0; i < levels; i++) {
    GBytes *wrapped = gzip_of(bytes);
    g_bytes_unref(bytes);
    bytes = wrapped;
  }
  return bytes;
}

GBytes *text(const char *s) { return g_bytes_new(s, strlen(s)); }

/* A JSON-looking blob of `len` bytes that deflate cannot shrink much. */
GBytes *noisy_json(size_t len, guint32 seed) {
  GRand *rand = g_rand_new_with_seed(seed);
  uint8_t *data = g_malloc(len);
  data[0] = '[';
  for (size_t i = 1; i < len; i++)
    data[i] = (uint8_t)g_rand_int_range(rand, 32, 127);
  g_rand_free(rand);
  return g_bytes_new_take(data, len);
}

GBytes *concat(GBytes *a, GBytes *b) {
  GByteArray *out = g_byte_array_new();
  g_byte_array_append(out, g_bytes_get_data(a, NULL),
                      (guint)g_bytes_get_size(a));
  g_byte_array_append(out, g_bytes_get_data(b, NULL),
                      (guint)g_bytes_get_size(b));
  return g_byte_array_free_to_bytes(out);
}

GBytes *prefix(GBytes *bytes, size_t len) {
  g_assert_cmpuint(len, <=, g_bytes_get_size(bytes));
  return g_bytes_new_from_bytes(bytes, 0, len);
}

/* Offset of the first occurrence of `needle` in `bytes`. */
size_t find(GBytes *bytes, const char *needle) {
  size_t len;
  const char *data = g_bytes_get_data(bytes, &len);
  const char *hit = memmem(data, len, needle, strlen(needle));
  g_assert_nonnull(hit);
  return (size_t)(hit - data);
}

int64_t size_of(GBytes *bytes) {
  return (int64_t)g_bytes_get_size(bytes);
}

/* ---- the recording sink ---- */



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

static void fake_budget_exceeded(void *ctx, uint32_t file_id, const char *stat) {
  recorder *rec = ctx;
  g_ptr_array_add(rec->budgets, g_strdup_printf("%u: %s", file_id, stat));
}

static bool fake_wants_more(void *ctx, uint32_t file_id) {
  recorder *rec = ctx;
  g_assert_nonnull(rec->open);
  g_assert_cmpuint(rec->open->id, ==, file_id);
  return rec->unwanted_after == 0 || rec->open->bytes->len < rec->unwanted_after;
}

/* ---- the test fixture ---- */


void fixture_init(fixture *f) {
  GError *error = NULL;
  f->dir = g_dir_make_tmp("tm-container-XXXXXX", &error);
  g_assert_no_error(error);
  f->paths = g_ptr_array_new_with_free_func(g_free);
  f->model = model_new();
  f->rec = (recorder){
      .files = g_ptr_array_new_with_free_func(recorded_file_free),
      .container_damages = g_ptr_array_new_with_free_func(g_free),
      .budgets = g_ptr_array_new_with_free_func(g_free),
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
      .budget_exceeded = fake_budget_exceeded,
      .wants_more = fake_wants_more,
  };
  f->budgets = (tm_budgets){0};
}

void fixture_clear(fixture *f) {
  for (guint i = 0; i < f->paths->len; i++)
    g_assert_cmpint(g_unlink(f->paths->pdata[i]), ==, 0);
  g_assert_cmpint(g_rmdir(f->dir), ==, 0);
  g_ptr_array_unref(f->paths);
  g_free(f->dir);
  model_free(f->model);
  g_ptr_array_unref(f->rec.files);
  g_ptr_array_unref(f->rec.container_damages);
  g_ptr_array_unref(f->rec.budgets);
  g_ptr_array_unref(f->rec.detected_names);
}

/* Writes `bytes` (taken) as dir/name; returns the path (owned by f). */
const char *fixture_write(fixture *f, const char *name, GBytes *bytes) {
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

/* Meson runs every container test twice: as is, and with
 * TM_TEST_READ_AHEAD=1, where each leaf is pulled on a second thread
 * (container_read_inputs_ahead): the recorded chunks, damage and budget
 * reports must be the same either way. */
bool fixture_read(fixture *f, const char *const *paths, size_t n,
                         GError **error) {
  bool read_ahead = g_strcmp0(g_getenv("TM_TEST_READ_AHEAD"), "1") == 0;
  return container_read_inputs_ahead(f->model, paths, n, &f->sink, &f->budgets,
                                     read_ahead, error);
}

void fixture_read_ok(fixture *f, const char *const *paths, size_t n) {
  GError *error = NULL;
  bool ok = fixture_read(f, paths, n, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
  g_assert_null(f->rec.open);
}

/* ---- assertions ---- */

void assert_row(const fixture *f, uint32_t id, uint32_t parent_id,
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

void assert_row_count(const fixture *f, size_t n) {
  g_assert_cmpuint(f->model->trace_files.len, ==, n);
}

/* The index-th file the sink saw was row `id`, got exactly `expected` and
 * ended without damage. */
const recorded_file *assert_delivered(const fixture *f, guint index,
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
void assert_truncated(const fixture *f, guint index, uint32_t id,
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

void assert_error(GError *error, const char *message) {
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_INPUT);
  g_assert_cmpstr(error->message, ==, message);
}

GBytes *raw_deflate(GBytes *plain) {
  size_t len;
  const uint8_t *data = g_bytes_get_data(plain, &len);
  z_stream z = {0};
  g_assert_cmpint(deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY),
                  ==, Z_OK);
  size_t cap = deflateBound(&z, len);
  uint8_t *out = g_malloc(cap);
  z.next_in = (Bytef *)data;
  z.avail_in = (uInt)len;
  z.next_out = out;
  z.avail_out = (uInt)cap;
  g_assert_cmpint(deflate(&z, Z_FINISH), ==, Z_STREAM_END);
  size_t made = cap - z.avail_out;
  deflateEnd(&z);
  return g_bytes_new_take(out, made);
}

uint32_t zlib_crc32_of(GBytes *plain) {
  size_t len;
  const uint8_t *data = g_bytes_get_data(plain, &len);
  return (uint32_t)crc32(0, data, (uInt)len);
}
