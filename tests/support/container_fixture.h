/*
 * The container unit tests' fixture (test_container*.c): archives built at
 * test time with libarchive's writer, a recording sink that keeps the
 * trace_file rows, the exact bytes and chunks every leaf receives and the
 * damage reports, and the assertions on what it recorded.
 */
#ifndef TM_TEST_CONTAINER_FIXTURE_H
#define TM_TEST_CONTAINER_FIXTURE_H

#include <archive.h>
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "input/container.h"
#include "model/model.h"

typedef struct fixture_member {
  const char *name;
  GBytes *data; /* borrowed; NULL: a directory entry */
} fixture_member;

#define N_MEMBERS(m) (sizeof(m) / sizeof((m)[0]))

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
  GPtrArray *budgets;           /* "<id>: <stat>", budget_exceeded() */
  recorded_file *open;
  uint32_t refuse_begin_of; /* TM_NULL_ID: accept every file */
  uint64_t unwanted_after;  /* wants_more() false past this many bytes */
  bool refuse_chunks;
  bool refuse_end_silently; /* returns false without an error */
  bool refuse_container_damage;
  const tm_model *model;
  size_t rows_at_first_begin;
} recorder;

typedef struct fixture {
  char *dir;
  GPtrArray *paths; /* files written in dir */
  tm_model *model;
  recorder rec;
  tm_container_sink sink;
  tm_budgets budgets; /* zeros: the defaults */
} fixture;

la_ssize_t append_written(struct archive *a, void *client,
                                 const void *buf, size_t len);
GBytes *build_archive(int format, int filter, const char *options,
                             const fixture_member *members, size_t n);
GBytes *zip_of(const fixture_member *m, size_t n);
GBytes *stored_zip_of(const fixture_member *m, size_t n);
GBytes *tar_of(const fixture_member *m, size_t n);
GBytes *compressed(int filter, GBytes *payload);
GBytes *gzip_of(GBytes *payload);
/* `payload` wrapped in `levels` gzip streams. */
GBytes *gzip_nested(GBytes *payload, int levels);
GBytes *text(const char *s);
GBytes *noisy_json(size_t len, guint32 seed);
/* zlib's raw deflate (no wrapper) of `plain`, and zlib's CRC-32 of it:
 * the reference the ISA-L path is checked against. */
GBytes *raw_deflate(GBytes *plain);
uint32_t zlib_crc32_of(GBytes *plain);
GBytes *concat(GBytes *a, GBytes *b);
GBytes *prefix(GBytes *bytes, size_t len);
size_t find(GBytes *bytes, const char *needle);
int64_t size_of(GBytes *bytes);
void fixture_init(fixture *f);
void fixture_clear(fixture *f);
const char *fixture_write(fixture *f, const char *name, GBytes *bytes);
bool fixture_read(fixture *f, const char *const *paths, size_t n,
                         GError **error);
void fixture_read_ok(fixture *f, const char *const *paths, size_t n);
void assert_row(const fixture *f, uint32_t id, uint32_t parent_id,
                       const char *name, int64_t size, const char *type,
                       int64_t order, bool is_container);
void assert_row_count(const fixture *f, size_t n);
const recorded_file *assert_delivered(const fixture *f, guint index,
                                             uint32_t id, const char *type,
                                             GBytes *expected);
void assert_truncated(const fixture *f, guint index, uint32_t id,
                             GBytes *expected, const char *display,
                             const char *cause_part);
void assert_error(GError *error, const char *message);

#endif /* TM_TEST_CONTAINER_FIXTURE_H */
