/* Unit tests of the deflated members of a root ZIP that container.c
 * inflates itself (ISA-L, core/input/deflate_stream) from offsets it reads
 * in the central directory (core/input/zip_directory): the bytes arrive as
 * they went in, and each error of that path (bad CRC, deflate data cut
 * short, sizes that disagree with the directory, a local header that
 * disagrees with it) ends the member truncated after the bytes inflated
 * before it, naming the file, while the next member is read. Members
 * whose sizes are in zip64 extra fields (APPNOTE 4.5.3) are read through
 * them; a zip64 field too short for the sizes is damage named with the
 * record's byte offset, and the members before it are kept.
 *
 * The ZIPs are built here byte by byte (APPNOTE 4.3) around zlib's raw
 * deflate, so that a test can change one field of one record. */
#include <fcntl.h>
#include <glib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "container_fixture.h"
#include "input/zip_directory.h"
#include "session_query.h"

/* How a member's sizes are written (zip64 ones: 0xffffffff in the record,
 * the sizes in a zip64 extra field). */
enum {
  SIZES_PLAIN = 0,
  SIZES_ZIP64 = 1,
  /* zip64, but the local header's zip64 field holds the uncompressed size
   * alone, 8 bytes short */
  SIZES_ZIP64_LOCAL_SHORT = 3,
  /* zip64, but the central directory record's zip64 field is short */
  SIZES_ZIP64_CENTRAL_SHORT = 5,
  /* Or'ed into any of the above: the member is stored, not deflated
   * (libarchive reads it, not our inflate) */
  SIZES_STORED = 8,
};

typedef struct built_zip {
  GByteArray *bytes;
  size_t local_extra_at[4]; /* each zip64 member's local zip64 field */
  size_t local_at[4];   /* each member's local header */
  size_t central_at[4]; /* each member's central directory record */
  size_t data_len[4];   /* its compressed bytes */
} built_zip;

static void put16(GByteArray *b, uint16_t v) {
  uint8_t p[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
  g_byte_array_append(b, p, 2);
}

static void put32(GByteArray *b, uint32_t v) {
  uint8_t p[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  g_byte_array_append(b, p, 4);
}

static void put64(GByteArray *b, uint64_t v) {
  put32(b, (uint32_t)v);
  put32(b, (uint32_t)(v >> 32));
}

/* A zip64 extended information field: the uncompressed size, then, unless
 * `short_field`, the compressed one. */
static void put_zip64_field(GByteArray *b, uint64_t usize, uint64_t csize, bool short_field) {
  put16(b, 0x0001);
  put16(b, short_field ? 8 : 16);
  put64(b, usize);
  if (!short_field)
    put64(b, csize);
}

static void patch32(built_zip *z, size_t at, uint32_t v) {
  for (int k = 0; k < 4; k++)
    z->bytes->data[at + k] = (uint8_t)(v >> (8 * k));
}

static uint32_t read32(const built_zip *z, size_t at) {
  const uint8_t *p = z->bytes->data + at;
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

/* Offsets of fields in a local header and a central directory record. */
#define LOCAL_CRC 14
#define LOCAL_CSIZE 18
#define CENTRAL_CRC 16
#define CENTRAL_CSIZE 20
#define CENTRAL_USIZE 24

/* Deflated members (stored where `sizes[k]` has SIZES_STORED); with
 * `descriptor` the local headers say 0 for CRC
 * and sizes and a data descriptor follows the data (as libarchive and
 * streaming zippers write), else the local headers carry them, written as
 * `sizes[k]` says (NULL: all plain; zip64 only without `descriptor`). */
static built_zip build_zip_sized(const fixture_member *m, size_t n, bool descriptor,
                                 const int *sizes) {
  g_assert_cmpuint(n, <=, 4);
  built_zip z = {.bytes = g_byte_array_new()};
  GByteArray *b = z.bytes;
  uint16_t flags = descriptor ? 0x0008 : 0;
  uint32_t crcs[4];
  for (size_t k = 0; k < n; k++) {
    int sized = sizes ? sizes[k] : SIZES_PLAIN;
    bool stored = (sized & SIZES_STORED) != 0;
    sized &= ~SIZES_STORED;
    GBytes *data = stored ? g_bytes_ref(m[k].data) : raw_deflate(m[k].data);
    crcs[k] = zlib_crc32_of(m[k].data);
    z.data_len[k] = g_bytes_get_size(data);
    uint32_t usize = (uint32_t)g_bytes_get_size(m[k].data);
    bool zip64 = (sized & SIZES_ZIP64) != 0;
    g_assert_true(!zip64 || !descriptor);
    z.local_at[k] = b->len;
    put32(b, 0x04034b50);
    put16(b, zip64 ? 45 : 20);
    put16(b, flags);
    put16(b, stored ? 0 : 8);
    put16(b, 0);
    put16(b, 0x21); /* 1980-01-01 */
    put32(b, descriptor ? 0 : crcs[k]);
    put32(b, descriptor ? 0 : zip64 ? 0xffffffffu : (uint32_t)z.data_len[k]);
    put32(b, descriptor ? 0 : zip64 ? 0xffffffffu : usize);
    put16(b, (uint16_t)strlen(m[k].name));
    put16(b, !zip64 ? 0 : sized == SIZES_ZIP64_LOCAL_SHORT ? 12 : 20);
    g_byte_array_append(b, (const uint8_t *)m[k].name, (guint)strlen(m[k].name));
    z.local_extra_at[k] = b->len;
    if (zip64)
      put_zip64_field(b, usize, z.data_len[k], sized == SIZES_ZIP64_LOCAL_SHORT);
    g_byte_array_append(b, g_bytes_get_data(data, NULL), (guint)z.data_len[k]);
    if (descriptor) {
      put32(b, 0x08074b50);
      put32(b, crcs[k]);
      put32(b, (uint32_t)z.data_len[k]);
      put32(b, usize);
    }
    g_bytes_unref(data);
  }
  size_t directory_at = b->len;
  for (size_t k = 0; k < n; k++) {
    int sized = sizes ? sizes[k] : SIZES_PLAIN;
    bool stored = (sized & SIZES_STORED) != 0;
    sized &= ~SIZES_STORED;
    bool zip64 = (sized & SIZES_ZIP64) != 0;
    uint32_t usize = (uint32_t)g_bytes_get_size(m[k].data);
    z.central_at[k] = b->len;
    put32(b, 0x02014b50);
    put16(b, 0x031e); /* made by Unix */
    put16(b, zip64 ? 45 : 20);
    put16(b, flags);
    put16(b, stored ? 0 : 8);
    put16(b, 0);
    put16(b, 0x21);
    put32(b, crcs[k]);
    put32(b, zip64 ? 0xffffffffu : (uint32_t)z.data_len[k]);
    put32(b, zip64 ? 0xffffffffu : usize);
    put16(b, (uint16_t)strlen(m[k].name));
    put16(b, !zip64 ? 0 : sized == SIZES_ZIP64_CENTRAL_SHORT ? 12 : 20);
    put16(b, 0);
    put16(b, 0);
    put16(b, 0);
    put32(b, 0100644u << 16);
    put32(b, (uint32_t)z.local_at[k]);
    g_byte_array_append(b, (const uint8_t *)m[k].name, (guint)strlen(m[k].name));
    if (zip64)
      put_zip64_field(b, usize, z.data_len[k], sized == SIZES_ZIP64_CENTRAL_SHORT);
  }
  size_t directory_len = b->len - directory_at;
  put32(b, 0x06054b50);
  put16(b, 0);
  put16(b, 0);
  put16(b, (uint16_t)n);
  put16(b, (uint16_t)n);
  put32(b, (uint32_t)directory_len);
  put32(b, (uint32_t)directory_at);
  put16(b, 0);
  return z;
}

static built_zip build_zip(const fixture_member *m, size_t n, bool descriptor) {
  return build_zip_sized(m, n, descriptor, NULL);
}

static const char *write_zip(fixture *f, const char *name, built_zip *z) {
  return fixture_write(f, name, g_byte_array_free_to_bytes(z->bytes));
}

/* a.json (several chunks, so the error comes after whole chunks went on)
 * and b.json, which must arrive whatever befell a.json. */
typedef struct two_members {
  GBytes *a, *b;
  fixture_member m[2];
} two_members;

static void two_members_init(two_members *t) {
  t->a = noisy_json(TM_CONTAINER_CHUNK * 2 + 5000, 21);
  t->b = text("[\"b is intact\"]");
  t->m[0] = (fixture_member){"a.json", t->a};
  t->m[1] = (fixture_member){"b.json", t->b};
}

static void two_members_clear(two_members *t) {
  g_bytes_unref(t->a);
  g_bytes_unref(t->b);
}

/* a.json ended truncated after `delivered` (a prefix of a), its cause
 * containing `cause_part`; b.json delivered whole. */
static void assert_a_cut_and_b_read(const fixture *f, const char *path,
                                    const two_members *t, size_t delivered,
                                    const char *cause_part) {
  assert_row_count(f, 3);
  g_assert_cmpuint(f->rec.files->len, ==, 2);
  GBytes *seen = prefix(t->a, delivered);
  char *display = g_strdup_printf("%s/a.json", path);
  assert_truncated(f, 0, 1, seen, display, cause_part);
  g_assert_cmpint(f->model->trace_files.data[1].size, ==, (int64_t)delivered);
  assert_delivered(f, 1, 2, "json", t->b);
  g_assert_cmpuint(f->rec.container_damages->len, ==, 0);
  g_free(display);
  g_bytes_unref(seen);
}

static void test_deflated_members_arrive_whole_in_bounded_chunks(void) {
  fixture f;
  fixture_init(&f);
  two_members t;
  two_members_init(&t);
  for (int descriptor = 0; descriptor < 2; descriptor++) {
    built_zip z = build_zip(t.m, 2, descriptor);
    const char *path = write_zip(&f, descriptor ? "dd.zip" : "plain.zip", &z);
    fixture_read_ok(&f, &path, 1);
    assert_row_count(&f, 3);
    assert_row(&f, 1, 0, "a.json", size_of(t.a), "json", 1, false);
    const recorded_file *a = assert_delivered(&f, 0, 1, "json", t.a);
    /* The head, then whole chunks: 2 chunks and the rest of a.json. */
    g_assert_cmpuint(a->n_chunks, >=, 3);
    assert_delivered(&f, 1, 2, "json", t.b);
    g_assert_cmpuint(f.rec.container_damages->len, ==, 0);
    fixture_clear(&f);
    fixture_init(&f);
  }
  two_members_clear(&t);
  fixture_clear(&f);
}

/* The directory's CRC-32 of a.json is off by one: every byte arrives,
 * then the damage. */
static void test_a_bad_crc_keeps_every_byte_and_names_both_crcs(void) {
  fixture f;
  fixture_init(&f);
  two_members t;
  two_members_init(&t);
  built_zip z = build_zip(t.m, 2, true);
  uint32_t right = read32(&z, z.central_at[0] + CENTRAL_CRC);
  patch32(&z, z.central_at[0] + CENTRAL_CRC, right + 1);
  const char *path = write_zip(&f, "crc.zip", &z);
  fixture_read_ok(&f, &path, 1);
  char *cause = g_strdup_printf("ZIP bad CRC-32: 0x%08x, the directory says 0x%08x",
                                right, right + 1);
  assert_a_cut_and_b_read(&f, path, &t, g_bytes_get_size(t.a), cause);
  g_free(cause);
  two_members_clear(&t);
  fixture_clear(&f);
}

/* The directory gives a.json half of its compressed bytes: the stream
 * runs out inside them. What was inflated from the first half arrives. */
static void test_deflate_data_cut_short_keeps_what_was_inflated(void) {
  fixture f;
  fixture_init(&f);
  two_members t;
  two_members_init(&t);
  built_zip z = build_zip(t.m, 2, true);
  uint32_t half = (uint32_t)(z.data_len[0] / 2);
  patch32(&z, z.central_at[0] + CENTRAL_CSIZE, half);
  const char *path = write_zip(&f, "short.zip", &z);
  fixture_read_ok(&f, &path, 1);
  g_assert_cmpuint(f.rec.files->len, ==, 2);
  const recorded_file *a = f.rec.files->pdata[0];
  g_assert_cmpuint(a->bytes->len, >, 0);
  g_assert_cmpuint(a->bytes->len, <, g_bytes_get_size(t.a));
  char *cause = g_strdup_printf("Truncated ZIP file data: the deflate stream goes "
                                "on past the %u compressed bytes of the member",
                                half);
  assert_a_cut_and_b_read(&f, path, &t, a->bytes->len, cause);
  g_free(cause);
  two_members_clear(&t);
  fixture_clear(&f);
}

/* The directory says a.json is 1000 bytes shorter than it inflates to:
 * exactly the directory's size arrives. */
static void test_a_member_longer_than_its_directory_entry_is_cut_at_that_size(void) {
  fixture f;
  fixture_init(&f);
  two_members t;
  two_members_init(&t);
  built_zip z = build_zip(t.m, 2, true);
  uint32_t said = (uint32_t)g_bytes_get_size(t.a) - 1000;
  patch32(&z, z.central_at[0] + CENTRAL_USIZE, said);
  const char *path = write_zip(&f, "long.zip", &z);
  fixture_read_ok(&f, &path, 1);
  char *cause = g_strdup_printf(
      "ZIP member inflates to more than the %u bytes of its directory entry", said);
  assert_a_cut_and_b_read(&f, path, &t, said, cause);
  g_free(cause);
  two_members_clear(&t);
  fixture_clear(&f);
}

/* The directory says a.json is 1000 bytes longer: all of it arrives, then
 * the damage names both sizes. */
static void test_a_member_shorter_than_its_directory_entry_is_damaged_at_its_end(void) {
  fixture f;
  fixture_init(&f);
  two_members t;
  two_members_init(&t);
  built_zip z = build_zip(t.m, 2, true);
  uint32_t size = (uint32_t)g_bytes_get_size(t.a);
  patch32(&z, z.central_at[0] + CENTRAL_USIZE, size + 1000);
  const char *path = write_zip(&f, "shortsize.zip", &z);
  fixture_read_ok(&f, &path, 1);
  char *cause = g_strdup_printf(
      "ZIP member inflates to %u bytes, not the %u of its directory entry", size,
      size + 1000);
  assert_a_cut_and_b_read(&f, path, &t, size, cause);
  g_free(cause);
  two_members_clear(&t);
  fixture_clear(&f);
}

/* Without a data descriptor the local header repeats the CRC-32; here it
 * says another one than the directory: nothing of a.json is inflated. */
static void test_a_local_header_that_disagrees_with_the_directory_loses_the_member(void) {
  fixture f;
  fixture_init(&f);
  two_members t;
  two_members_init(&t);
  built_zip z = build_zip(t.m, 2, false);
  uint32_t right = read32(&z, z.local_at[0] + LOCAL_CRC);
  patch32(&z, z.local_at[0] + LOCAL_CRC, right ^ 0x5a5a5a5au);
  const char *path = write_zip(&f, "local.zip", &z);
  fixture_read_ok(&f, &path, 1);
  char *cause = g_strdup_printf(
      "ZIP local header at byte 0 disagrees with the central directory: "
      "CRC-32 %u, not %u",
      right ^ 0x5a5a5a5au, right);
  assert_a_cut_and_b_read(&f, path, &t, 0, cause);
  g_free(cause);
  two_members_clear(&t);
  fixture_clear(&f);
}

/* Both members' sizes are only in zip64 extra fields (0xffffffff in the
 * local headers and the directory): the directory reads them from there,
 * and both members arrive whole through the inflate path. */
static void test_zip64_sizes_are_read_from_the_extra_fields(void) {
  fixture f;
  fixture_init(&f);
  two_members t;
  two_members_init(&t);
  static const int sizes[] = {SIZES_ZIP64, SIZES_ZIP64};
  built_zip z = build_zip_sized(t.m, 2, false, sizes);
  size_t data_len[2] = {z.data_len[0], z.data_len[1]};
  g_assert_cmpuint(read32(&z, z.central_at[0] + CENTRAL_CSIZE), ==, 0xffffffffu);
  g_assert_cmpuint(read32(&z, z.local_at[1] + LOCAL_CSIZE), ==, 0xffffffffu);
  const char *path = write_zip(&f, "zip64.zip", &z);
  int fd = open(path, O_RDONLY);
  g_assert_cmpint(fd, >=, 0);
  struct stat st;
  g_assert_cmpint(fstat(fd, &st), ==, 0);
  char *why = NULL;
  uint64_t why_at = 0;
  zip_directory *dir = zip_directory_read(fd, (uint64_t)st.st_size, &why, &why_at);
  g_assert_nonnull(dir);
  g_assert_null(why);
  for (size_t k = 0; k < 2; k++) {
    const zip_entry *e = zip_directory_at(dir, k);
    g_assert_cmpuint(e->compressed_size, ==, data_len[k]);
    g_assert_cmpuint(e->uncompressed_size, ==, g_bytes_get_size(t.m[k].data));
    uint64_t data_at;
    g_assert_true(zip_entry_data_offset(fd, e, &data_at, &why));
    /* Past the header, the name and the 20 bytes of the zip64 field. */
    g_assert_cmpuint(data_at, ==, e->local_header_offset + 30 + strlen(t.m[k].name) + 20);
  }
  zip_directory_free(dir);
  close(fd);
  fixture_read_ok(&f, &path, 1);
  assert_row_count(&f, 3);
  assert_delivered(&f, 0, 1, "json", t.a);
  assert_delivered(&f, 1, 2, "json", t.b);
  g_assert_cmpuint(f.rec.container_damages->len, ==, 0);
  two_members_clear(&t);
  fixture_clear(&f);
}

/* a.json's local zip64 field says one compressed byte more than the
 * directory's: nothing of a.json is inflated, b.json is read. */
static void test_a_local_zip64_size_that_disagrees_with_the_directory_loses_the_member(void) {
  fixture f;
  fixture_init(&f);
  two_members t;
  two_members_init(&t);
  static const int sizes[] = {SIZES_ZIP64, SIZES_ZIP64};
  built_zip z = build_zip_sized(t.m, 2, false, sizes);
  /* The field: id, size, the uncompressed size, then the compressed. */
  size_t csize_at = z.local_extra_at[0] + 4 + 8;
  uint32_t csize = read32(&z, csize_at);
  g_assert_cmpuint(csize, ==, z.data_len[0]);
  patch32(&z, csize_at, csize + 1);
  const char *path = write_zip(&f, "local64.zip", &z);
  fixture_read_ok(&f, &path, 1);
  char *cause = g_strdup_printf(
      "ZIP local header at byte 0 disagrees with the central directory: "
      "compressed size %u, not %u",
      csize + 1, csize);
  assert_a_cut_and_b_read(&f, path, &t, 0, cause);
  g_free(cause);
  two_members_clear(&t);
  fixture_clear(&f);
}

/* a.json is stored (libarchive reads it), its size in the local header
 * (plain, or in its zip64 field) one byte more than the directory's:
 * libarchive only warns and would read the local header's size; it is
 * damage before any byte of a.json, named with the local header's
 * offset, as for a deflated member, and b.json is read. Imported, the
 * damage is counted on a.json's row (container_member_truncated), b.json's
 * event is kept, and the import's error names a.json and the offset. */
static void test_a_stored_members_local_size_that_disagrees_with_the_directory_loses_it(void) {
  for (int zip64 = 0; zip64 < 2; zip64++) {
    fixture f;
    fixture_init(&f);
    two_members t;
    two_members_init(&t);
    g_bytes_unref(t.a);
    t.a = text("[{\"ph\":\"i\",\"ts\":1,\"pid\":1,\"tid\":1,\"name\":\"a_lost\"}]");
    t.m[0].data = t.a;
    g_bytes_unref(t.b);
    t.b = text("[{\"ph\":\"i\",\"ts\":1,\"pid\":1,\"tid\":1,\"name\":\"b_kept\"}]");
    t.m[1].data = t.b;
    int kind = (zip64 ? SIZES_ZIP64 : SIZES_PLAIN) | SIZES_STORED;
    const int sizes[] = {kind, kind};
    built_zip z = build_zip_sized(t.m, 2, false, sizes);
    /* The zip64 field: id, size, the uncompressed size, then the compressed. */
    size_t csize_at = zip64 ? z.local_extra_at[0] + 4 + 8 : z.local_at[0] + LOCAL_CSIZE;
    uint32_t csize = read32(&z, csize_at);
    g_assert_cmpuint(csize, ==, g_bytes_get_size(t.a));
    patch32(&z, csize_at, csize + 1);
    const char *path = write_zip(&f, zip64 ? "stored64.zip" : "stored.zip", &z);
    fixture_read_ok(&f, &path, 1);
    char *cause = g_strdup_printf(
        "ZIP local header at byte 0 disagrees with the central directory: "
        "compressed size %u, not %u",
        csize + 1, csize);
    assert_a_cut_and_b_read(&f, path, &t, 0, cause);
    tm_session *session = tm_session_new(NULL);
    GError *error = NULL;
    g_assert_false(tm_session_import(session, &path, 1, &error));
    g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_DAMAGED);
    g_autofree char *message =
        g_strdup_printf("%s/a.json: damaged after 0 bytes: %s", path, cause);
    g_assert_cmpstr(error->message, ==, message);
    g_clear_error(&error);
    g_autofree char *rows = session_query_csv(
        session, "SELECT (SELECT group_concat(name) FROM slice) AS kept, "
                 "(SELECT group_concat(substr(f.name, -6) || '=' || s.value) FROM stats s "
                 "JOIN trace_file f ON f.id = s.trace_id "
                 "WHERE s.name = 'container_member_truncated' AND s.value > 0) AS damaged");
    g_assert_cmpstr(rows, ==, "\"kept\",\"damaged\"\n\"b_kept\",\"a.json=1\"\n");
    tm_session_free(session);
    g_free(cause);
    two_members_clear(&t);
    fixture_clear(&f);
  }
}

/* b.json's local zip64 field holds its uncompressed size alone, 8 bytes
 * short of the two sizes its header says are there: the archive is
 * damaged at b.json's local header, named with its offset, and a.json,
 * before it, is kept whole. */
static void test_a_short_local_zip64_field_is_damage_after_the_members_before(void) {
  fixture f;
  fixture_init(&f);
  two_members t;
  two_members_init(&t);
  /* a.json a trace the JSON reader takes, for the import below. */
  g_bytes_unref(t.a);
  t.a = text("[{\"ph\":\"i\",\"ts\":1,\"pid\":1,\"tid\":1,\"name\":\"kept\"}]");
  t.m[0].data = t.a;
  static const int sizes[] = {SIZES_ZIP64, SIZES_ZIP64_LOCAL_SHORT};
  built_zip z = build_zip_sized(t.m, 2, false, sizes);
  size_t b_at = z.local_at[1];
  const char *path = write_zip(&f, "short-local64.zip", &z);
  fixture_read_ok(&f, &path, 1);
  g_assert_cmpuint(f.rec.files->len, ==, 1);
  assert_delivered(&f, 0, 1, "json", t.a);
  g_assert_cmpuint(f.rec.container_damages->len, ==, 1);
  char *want = g_strdup_printf("0: %s: damaged at byte %zu: ZIP local header at byte %zu: "
                               "its zip64 extra field holds 8 bytes, not the 16 its "
                               "0xffffffff fields need",
                               path, b_at, b_at);
  g_assert_cmpstr(f.rec.container_damages->pdata[0], ==, want);
  /* Imported: a.json's event is kept, the damage is counted in
   * container_member_truncated (on the archive's row) and is the
   * import's error, with the same message. */
  tm_session *session = tm_session_new(NULL);
  GError *error = NULL;
  g_assert_false(tm_session_import(session, &path, 1, &error));
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_DAMAGED);
  g_assert_cmpstr(error->message, ==, strchr(want, ' ') + 1);
  g_clear_error(&error);
  g_autofree char *rows = session_query_csv(
      session, "SELECT (SELECT group_concat(name) FROM slice) AS a, "
               "(SELECT group_concat(f.name || '=' || s.value) FROM stats s JOIN trace_file f "
               "ON f.id = s.trace_id WHERE s.name = 'container_member_truncated' "
               "AND s.value > 0) AS damaged");
  g_autofree char *expected = g_strdup_printf("\"a\",\"damaged\"\n\"kept\",\"%s=1\"\n", path);
  g_assert_cmpstr(rows, ==, expected);
  tm_session_free(session);
  g_free(want);
  two_members_clear(&t);
  fixture_clear(&f);
}

/* b.json's zip64 field in the central directory is 8 bytes short, so
 * neither we nor libarchive can read the directory (libarchive would
 * list no member): the damage is told once, on the archive, naming
 * b.json's record and its offset, and the members are read from their
 * local headers, which hold their sizes: the input before the archive,
 * a.json and b.json all arrive whole. Imported, the damage is counted on
 * the archive's row and is the import's error; every event is kept. */
static void test_a_short_central_zip64_field_is_damage_and_the_members_are_kept(void) {
  fixture f;
  fixture_init(&f);
  two_members t;
  two_members_init(&t);
  GBytes *before = text("[{\"ph\":\"i\",\"ts\":1,\"pid\":1,\"tid\":1,\"name\":\"before\"}]");
  g_bytes_unref(t.a);
  t.a = text("[{\"ph\":\"i\",\"ts\":2,\"pid\":1,\"tid\":1,\"name\":\"a\"}]");
  t.m[0].data = t.a;
  g_bytes_unref(t.b);
  t.b = text("[{\"ph\":\"i\",\"ts\":3,\"pid\":1,\"tid\":1,\"name\":\"b\"}]");
  t.m[1].data = t.b;
  static const int sizes[] = {SIZES_ZIP64, SIZES_ZIP64_CENTRAL_SHORT};
  built_zip z = build_zip_sized(t.m, 2, false, sizes);
  size_t b_record = z.central_at[1];
  const char *paths[2];
  paths[0] = fixture_write(&f, "before.json", g_bytes_ref(before));
  paths[1] = write_zip(&f, "short-central64.zip", &z);
  fixture_read_ok(&f, paths, 2);
  g_assert_cmpuint(f.rec.files->len, ==, 3);
  assert_delivered(&f, 0, 0, "json", before);
  assert_delivered(&f, 1, 2, "json", t.a);
  assert_delivered(&f, 2, 3, "json", t.b);
  g_assert_cmpuint(f.rec.container_damages->len, ==, 1);
  char *want = g_strdup_printf("1: %s: damaged at byte %zu: ZIP central directory record "
                               "at byte %zu (b.json): its zip64 extra field holds 8 bytes, "
                               "not the 16 its 0xffffffff fields need",
                               paths[1], b_record, b_record);
  g_assert_cmpstr(f.rec.container_damages->pdata[0], ==, want);
  tm_session *session = tm_session_new(NULL);
  GError *error = NULL;
  g_assert_false(tm_session_import(session, paths, 2, &error));
  g_assert_error(error, TRACEMERGE_ERROR, TM_ERROR_DAMAGED);
  g_assert_cmpstr(error->message, ==, strchr(want, ' ') + 1);
  g_clear_error(&error);
  g_autofree char *rows = session_query_csv(
      session, "SELECT (SELECT group_concat(name) FROM (SELECT name FROM slice ORDER BY ts)) "
               "AS kept, (SELECT group_concat(substr(f.name, -19) || '=' || s.value) FROM stats s "
               "JOIN trace_file f ON f.id = s.trace_id "
               "WHERE s.name = 'container_member_truncated' AND s.value > 0) AS damaged");
  g_assert_cmpstr(rows, ==,
                  "\"kept\",\"damaged\"\n\"before,a,b\",\"short-central64.zip=1\"\n");
  tm_session_free(session);
  g_free(want);
  g_bytes_unref(before);
  two_members_clear(&t);
  fixture_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/container/zip-inflate/deflated-members-arrive-whole-in-bounded-chunks",
                  test_deflated_members_arrive_whole_in_bounded_chunks);
  g_test_add_func("/container/zip-inflate/a-bad-crc-keeps-every-byte-and-names-both-crcs",
                  test_a_bad_crc_keeps_every_byte_and_names_both_crcs);
  g_test_add_func("/container/zip-inflate/deflate-data-cut-short-keeps-what-was-inflated",
                  test_deflate_data_cut_short_keeps_what_was_inflated);
  g_test_add_func(
      "/container/zip-inflate/a-member-longer-than-its-directory-entry-is-cut-at-that-size",
      test_a_member_longer_than_its_directory_entry_is_cut_at_that_size);
  g_test_add_func(
      "/container/zip-inflate/a-member-shorter-than-its-directory-entry-is-damaged-at-its-end",
      test_a_member_shorter_than_its_directory_entry_is_damaged_at_its_end);
  g_test_add_func(
      "/container/zip-inflate/a-local-header-that-disagrees-with-the-directory-loses-the-member",
      test_a_local_header_that_disagrees_with_the_directory_loses_the_member);
  g_test_add_func("/container/zip-inflate/zip64-sizes-are-read-from-the-extra-fields",
                  test_zip64_sizes_are_read_from_the_extra_fields);
  g_test_add_func(
      "/container/zip-inflate/a-local-zip64-size-that-disagrees-with-the-directory-loses-the-member",
      test_a_local_zip64_size_that_disagrees_with_the_directory_loses_the_member);
  g_test_add_func(
      "/container/zip-inflate/a-short-local-zip64-field-is-damage-after-the-members-before",
      test_a_short_local_zip64_field_is_damage_after_the_members_before);
  g_test_add_func(
      "/container/zip-inflate/a-short-central-zip64-field-is-damage-and-the-members-are-kept",
      test_a_short_central_zip64_field_is_damage_and_the_members_are_kept);
  g_test_add_func(
      "/container/zip-inflate/a-stored-members-local-size-that-disagrees-with-the-directory-loses-it",
      test_a_stored_members_local_size_that_disagrees_with_the_directory_loses_it);
  return g_test_run();
}
