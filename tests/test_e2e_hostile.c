/*
 * End-to-end: the hostile inputs of issue 11 through the CLI. Each case
 * is built at test time (bombs are generated, never committed) and checks
 * that the import neither crashes nor runs away, that what was read before
 * the damage is kept, and that the damage is a stat plus one stderr line
 * naming the file.
 */
#include <archive.h>
#include <archive_entry.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "e2e_support.h"
#include "proto_wire_encode.h"

/* ---- arithmetic ---------------------------------------------------------- */

/* A JSON X event at 9e15 µs lasting 9e15 µs: ts and dur each fit in int64
 * ns (9e18 < 2^63 - 1 ~ 9.22e18), their sum does not. The event is dropped
 * and counted; the slice before it stays, and trace_bounds ends where that
 * slice ends (1 µs + 2 µs = 3000 ns) instead of wrapping negative. */
static void test_slice_end_overflow_is_dropped_and_counted(void) {
  g_autofree char *dir = e2e_tmpdir();
  g_autofree char *path = e2e_write_file(
      dir, "ovf.json",
      "[{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1,\"name\":\"ok\"},\n"
      "{\"ph\":\"X\",\"ts\":9000000000000000,\"dur\":9000000000000000,"
      "\"pid\":1,\"tid\":1,\"name\":\"big\"}]\n",
      0);
  const char *inputs[] = {"ovf.json", NULL};
  e2e_result r = e2e_run_query(dir, inputs, NULL,
                            "SELECT (SELECT group_concat(name) FROM slice) AS slices, "
                            "start_ts, end_ts, (SELECT value FROM stats WHERE name = "
                            "'slice_timestamp_overflow') AS dropped FROM trace_bounds");
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.out, "\"slices\",\"start_ts\",\"end_ts\",\"dropped\"\n"
                         "\"ok\",1000,3000,1\n");
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

/* ---- bombs, built at test time ------------------------------------------- */

/* One member of a generated archive: `head`, then `fill_len` copies of
 * `fill`, then `tail`; or, with `bytes` set, exactly those bytes. Written
 * as it is compressed, so a bomb of GiBs costs only its compressed size. */
typedef struct bomb_member {
  const char *name;
  const char *head;
  char fill;
  uint64_t fill_len;
  const char *tail;
  GBytes *bytes;
} bomb_member;

static la_ssize_t append_to(struct archive *a, void *client, const void *buf,
                            size_t len) {
  (void)a;
  g_byte_array_append(client, buf, (guint)len);
  return (la_ssize_t)len;
}

/* An archive (`format`: ARCHIVE_FORMAT_ZIP, _TAR_USTAR or _RAW, the last
 * with a gzip filter) of `members`, in memory. */
static GBytes *bomb_archive(int format, const bomb_member *members, size_t n) {
  GByteArray *out = g_byte_array_new();
  struct archive *a = archive_write_new();
  g_assert_cmpint(archive_write_set_format(a, format), ==, ARCHIVE_OK);
  if (format == ARCHIVE_FORMAT_RAW)
    archive_write_add_filter_gzip(a);
  archive_write_set_bytes_in_last_block(a, 1);
  g_assert_cmpint(archive_write_open(a, out, NULL, append_to, NULL), ==, ARCHIVE_OK);
  for (size_t i = 0; i < n; i++) {
    const bomb_member *m = &members[i];
    size_t bytes_len = 0;
    const void *bytes = m->bytes ? g_bytes_get_data(m->bytes, &bytes_len) : NULL;
    size_t head = m->head ? strlen(m->head) : 0, tail = m->tail ? strlen(m->tail) : 0;
    struct archive_entry *entry = archive_entry_new();
    archive_entry_set_pathname(entry, m->name);
    archive_entry_set_filetype(entry, AE_IFREG);
    archive_entry_set_perm(entry, 0644);
    archive_entry_set_size(entry, (la_int64_t)(m->bytes ? bytes_len
                                                        : head + m->fill_len + tail));
    g_assert_cmpint(archive_write_header(a, entry), ==, ARCHIVE_OK);
    if (m->bytes) {
      g_assert_cmpint(archive_write_data(a, bytes, bytes_len), ==, (la_ssize_t)bytes_len);
    } else {
      if (head)
        g_assert_cmpint(archive_write_data(a, m->head, head), ==, (la_ssize_t)head);
      char block[64 * 1024];
      memset(block, m->fill, sizeof block);
      for (uint64_t done = 0; done < m->fill_len;) {
        size_t k = (size_t)MIN(m->fill_len - done, sizeof block);
        g_assert_cmpint(archive_write_data(a, block, k), ==, (la_ssize_t)k);
        done += k;
      }
      if (tail)
        g_assert_cmpint(archive_write_data(a, m->tail, tail), ==, (la_ssize_t)tail);
    }
    archive_entry_free(entry);
  }
  g_assert_cmpint(archive_write_close(a), ==, ARCHIVE_OK);
  archive_write_free(a);
  return g_byte_array_free_to_bytes(out);
}

static char *write_bytes(const char *dir, const char *name, GBytes *bytes) {
  size_t len;
  const char *data = g_bytes_get_data(bytes, &len);
  char *path = e2e_write_file(dir, name, data, len);
  g_bytes_unref(bytes);
  return path;
}

/* The value of stat `name` summed over its rows, as the query prints it. */
#define STAT(name) "(SELECT sum(value) FROM stats WHERE name = '" name "')"

static const char json_event[] =
    "[{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1,\"name\":\"before\"}]\n";
/* A JSON trace whose two events are apart by a bomb's worth of spaces. */
#define SPACED_HEAD "[{\"ph\":\"X\",\"ts\":5,\"dur\":1,\"pid\":1,\"tid\":1,\"name\":\"inner\"},"
#define SPACED_TAIL "{\"ph\":\"X\",\"ts\":9,\"dur\":1,\"pid\":1,\"tid\":1,\"name\":\"after\"}]"

/* An event in a.json, then in the same ZIP a gzip member of a JSON whose
 * two events are apart by 256 MiB of spaces (the 10 GiB, scaled
 * down: the budget trips at the 64 MiB floor whatever the size). The ZIP
 * deflates the gzip once more, so 256 MiB of output come from a few
 * hundred bytes: the member is cut, the stat charged, the events before
 * the cut kept ("before", and "inner" ahead of the spaces), and stderr
 * names the member and where it was cut. */
static void test_bomb_after_an_event_in_one_zip_keeps_the_event(void) {
  g_autofree char *dir = e2e_tmpdir();
  const bomb_member inner[] = {{.name = "x.json", .head = SPACED_HEAD, .fill = ' ',
                                .fill_len = (uint64_t)256 << 20, .tail = SPACED_TAIL}};
  GBytes *gz = bomb_archive(ARCHIVE_FORMAT_RAW, inner, 1);
  const bomb_member outer[] = {
      {.name = "a.json", .head = json_event},
      {.name = "bomb.json.gz", .bytes = gz},
  };
  g_autofree char *zip = write_bytes(dir, "run.zip", bomb_archive(ARCHIVE_FORMAT_ZIP, outer, 2));
  g_bytes_unref(gz);
  const char *inputs[] = {"run.zip", NULL};
  e2e_result r = e2e_run_query(dir, inputs, NULL,
                            "SELECT (SELECT group_concat(name) FROM slice) AS slices, "
                            STAT("container_inflate_ratio_exceeded") " AS ratio");
  g_assert_cmpint(r.exit_code, ==, 1);
  e2e_assert_text(r.out, "\"slices\",\"ratio\"\n\"before,inner\",1\n");
  g_assert_true(g_str_has_prefix(r.err, "tracemerge: run.zip/bomb.json.gz: cut after "));
  g_assert_nonnull(strstr(r.err, "run.zip yields more than 1000 times its "));
  g_assert_nonnull(strstr(r.err, "(budget --max-inflate-ratio)\n"));
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

/* 16 nested ZIPs, each holding one gzip of 64 MiB of whitespace and the
 * next ZIP (the ZIP of 16 nested bombs), after an event: the
 * first bomb already passes the floor, so the input is cut there, in
 * well under a second of inflating, and the event stays. */
static void test_nested_zip_bombs_are_cut_and_the_event_kept(void) {
  g_autofree char *dir = e2e_tmpdir();
  const bomb_member payload[] = {{.name = "x.json", .head = SPACED_HEAD, .fill = ' ',
                                  .fill_len = (uint64_t)64 << 20, .tail = SPACED_TAIL}};
  GBytes *gz = bomb_archive(ARCHIVE_FORMAT_RAW, payload, 1);
  GBytes *level = NULL;
  for (int i = 0; i < 16; i++) {
    bomb_member m[2] = {{.name = "bomb.json.gz", .bytes = gz}};
    size_t n = 1;
    if (level)
      m[n++] = (bomb_member){.name = "next.zip", .bytes = level};
    GBytes *next = bomb_archive(ARCHIVE_FORMAT_ZIP, m, n);
    if (level)
      g_bytes_unref(level);
    level = next;
  }
  const bomb_member top[] = {{.name = "a.json", .head = json_event},
                             {.name = "nest.zip", .bytes = level}};
  g_autofree char *zip = write_bytes(dir, "run.zip", bomb_archive(ARCHIVE_FORMAT_ZIP, top, 2));
  g_bytes_unref(level);
  g_bytes_unref(gz);
  const char *inputs[] = {"run.zip", NULL};
  gint64 start = g_get_monotonic_time();
  e2e_result r = e2e_run_query(dir, inputs, NULL,
                            "SELECT (SELECT group_concat(name) FROM slice) AS slices, "
                            STAT("container_inflate_ratio_exceeded") " AS ratio");
  double seconds = (double)(g_get_monotonic_time() - start) / G_USEC_PER_SEC;
  g_assert_cmpint(r.exit_code, ==, 1);
  e2e_assert_text(r.out, "\"slices\",\"ratio\"\n\"before,inner\",1\n");
  g_assert_nonnull(strstr(r.err, "(budget --max-inflate-ratio)"));
  e2e_result_clear(&r);
  /* A generous bound for a loaded machine under ASan: uncut, the 16
   * levels inflate 1 GiB. */
  g_assert_cmpfloat(seconds, <, 60.0);
  e2e_cleanup(dir);
}

/* A gzip whose JSON is broken at its first bytes, followed by 256 MiB of
 * zeros: the reader fails at once, and the rest of the member is never
 * inflated (the payload's row counts the bytes read: less than the
 * container's chunk, not 256 MiB). */
static void test_member_is_not_inflated_after_its_reader_failed(void) {
  g_autofree char *dir = e2e_tmpdir();
  const bomb_member payload[] = {
      {.name = "x.json", .head = "[{\"ph\":}", .fill = ' ', .fill_len = (uint64_t)256 << 20}};
  g_autofree char *gz = write_bytes(dir, "bad.json.gz", bomb_archive(ARCHIVE_FORMAT_RAW, payload, 1));
  const char *inputs[] = {"bad.json.gz", NULL};
  const char *opts[] = {"--max-inflate-ratio", "1000000000", NULL};
  e2e_result r = e2e_run_query(dir, inputs, opts,
                            "SELECT size < 1048576 FROM trace_file WHERE parent_id IS NOT NULL");
  g_assert_cmpint(r.exit_code, ==, 1);
  e2e_assert_text(r.out, "\"size < 1048576\"\n1\n");
  g_assert_true(g_str_has_prefix(r.err, "tracemerge: bad.json.gz: "));
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

/* --max-record-size 1M: an event whose name is a 2 MiB string, after an
 * event that fits, cuts the file at the string: the offset is where the
 * bytes held for it begin, right after the key "name"'s closing quote
 * (the colon, one byte before the string's opening quote). The first
 * event stays. */
static void test_record_budget_cuts_a_long_json_token(void) {
  g_autofree char *dir = e2e_tmpdir();
  GString *json = g_string_new("[{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1,"
                               "\"name\":\"ok\"},\n{\"ph\":\"X\",\"name\":\"");
  size_t quote = json->len - 1;
  for (int i = 0; i < (2 << 20); i++)
    g_string_append_c(json, 'n');
  g_string_append(json, "\",\"ts\":5,\"dur\":1,\"pid\":1,\"tid\":1}]\n");
  g_autofree char *path = e2e_write_file(dir, "long.json", json->str, json->len);
  g_string_free(json, TRUE);
  const char *inputs[] = {"long.json", NULL};
  const char *opts[] = {"--max-record-size", "1M", NULL};
  e2e_result r = e2e_run_query(dir, inputs, opts,
                            "SELECT (SELECT group_concat(name) FROM slice) AS slices, "
                            STAT("reader_record_size_exceeded") " AS cut");
  g_assert_cmpint(r.exit_code, ==, 1);
  e2e_assert_text(r.out, "\"slices\",\"cut\"\n\"ok\",1\n");
  g_autofree char *want = g_strdup_printf(
      "tracemerge: long.json: at byte %zu: a JSON token longer than 1048576 bytes "
      "(budget --max-record-size)\n",
      quote - 1);
  e2e_assert_text(r.err, want);
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

/* --max-files 3 on a TAR of five one-event JSON files: the TAR and two
 * members are read (two events), the third is named in the message. */
static void test_file_budget_from_the_command_line(void) {
  g_autofree char *dir = e2e_tmpdir();
  bomb_member m[5];
  char names[5][16];
  for (int i = 0; i < 5; i++) {
    g_snprintf(names[i], sizeof names[i], "%d.json", i + 1);
    m[i] = (bomb_member){.name = names[i], .head = json_event};
  }
  g_autofree char *tar = write_bytes(dir, "five.tar", bomb_archive(ARCHIVE_FORMAT_TAR_USTAR, m, 5));
  const char *inputs[] = {"five.tar", NULL};
  const char *opts[] = {"--max-files", "3", NULL};
  e2e_result r = e2e_run_query(dir, inputs, opts,
                            "SELECT (SELECT count(*) FROM slice) AS slices, "
                            STAT("container_file_count_exceeded") " AS files");
  g_assert_cmpint(r.exit_code, ==, 1);
  e2e_assert_text(r.out, "\"slices\",\"files\"\n2,1\n");
  e2e_assert_text(r.err, "tracemerge: five.tar/3.json: more than 3 files in one import "
                         "(budget --max-files): it and everything after it are not read\n");
  e2e_result_clear(&r);
  /* A budget must be a positive number. */
  const char *bad[] = {"--max-files", "0", NULL};
  r = e2e_run_query(dir, inputs, bad, "SELECT 1");
  g_assert_cmpint(r.exit_code, ==, 2);
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

/* An Instruments export whose one <text-addresses> list of 1000 addresses
 * is referenced 5000 times in one backtrace: 44 bytes of XML append 1000
 * frames each (the 3 MB that reached 3 GB). With
 * --max-record-size 1M, the 131072 frame pointers it may hold (8 bytes
 * each) are passed at the 132nd ref: the file is cut there with the stat,
 * and the sample row before the bomb stays. */
static void test_instruments_ref_bomb_is_cut(void) {
  g_autofree char *dir = e2e_tmpdir();
  GString *xml = g_string_new(
      "<?xml version=\"1.0\"?>\n<trace-query-result>\n<node><schema name=\"time-profile\"/>\n"
      "<row><sample-time id=\"1\">1000</sample-time>"
      "<thread id=\"2\" fmt=\"main\"><tid id=\"3\">7</tid>"
      "<process id=\"4\" fmt=\"app\"><pid id=\"5\">7</pid></process></thread>"
      "<backtrace id=\"6\"><frame id=\"7\" name=\"leaf\" addr=\"0x10\"/></backtrace></row>\n"
      "<row><sample-time id=\"8\">2000</sample-time><thread ref=\"2\"/>"
      "<backtrace id=\"9\"><text-addresses id=\"10\">");
  for (int i = 1; i <= 1000; i++)
    g_string_append_printf(xml, "%d ", 0x1000 + i);
  g_string_append(xml, "</text-addresses>");
  for (int i = 0; i < 5000; i++)
    g_string_append(xml, "<text-addresses ref=\"10\"/>");
  g_string_append(xml, "</backtrace></row>\n</node>\n</trace-query-result>\n");
  g_autofree char *path = e2e_write_file(dir, "bomb.xml", xml->str, xml->len);
  g_string_free(xml, TRUE);
  const char *inputs[] = {"bomb.xml", NULL};
  const char *opts[] = {"--max-record-size", "1M", NULL};
  e2e_result r = e2e_run_query(dir, inputs, opts,
                               "SELECT (SELECT count(*) FROM instruments_sample) AS samples, "
                               STAT("reader_record_size_exceeded") " AS cut");
  g_assert_cmpint(r.exit_code, ==, 1);
  e2e_assert_text(r.out, "\"samples\",\"cut\"\n1,1\n");
  g_assert_true(g_str_has_prefix(r.err, "tracemerge: bomb.xml: at byte "));
  g_assert_nonnull(strstr(r.err, ": the backtraces' frames: more than 1048576 bytes held "
                                 "(budget --max-record-size)\n"));
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

/* A Perfetto trace of one TracePacket whose compressed_packets (field 50)
 * is a zlib stream of 96 MiB of empty packets ("0a 00" over and over): a
 * ~100 KiB file. With --max-inflate-ratio 10, the reader's inflate budget
 * trips as it passes the 64 MiB floor: the file is cut with the ratio's
 * stat and a message at the wrapper packet's offset (byte 4, after the
 * trace's tag and length; the reader counts packets from 1). */
static void test_proto_compressed_packets_bomb_is_cut(void) {
  g_autofree char *dir = e2e_tmpdir();
  GByteArray *deflated = g_byte_array_new();
  z_stream z = {0};
  g_assert_cmpint(deflateInit(&z, 9), ==, Z_OK);
  static uint8_t empties[64 * 1024];
  for (size_t i = 0; i < sizeof empties; i += 2) {
    empties[i] = 0x0a;
    empties[i + 1] = 0x00;
  }
  uint8_t out[64 * 1024];
  size_t blocks = ((size_t)96 << 20) / sizeof empties;
  for (size_t b = 0; b <= blocks; b++) {
    z.next_in = empties;
    z.avail_in = b < blocks ? (uInt)sizeof empties : 0;
    int flush = b < blocks ? Z_NO_FLUSH : Z_FINISH;
    do {
      z.next_out = out;
      z.avail_out = sizeof out;
      deflate(&z, flush);
      g_byte_array_append(deflated, out, (guint)(sizeof out - z.avail_out));
    } while (z.avail_out == 0);
  }
  deflateEnd(&z);
  GByteArray *packet = g_byte_array_new();
  wire_put_varint(packet, (50 << 3) | 2);
  wire_put_varint(packet, deflated->len);
  g_byte_array_append(packet, deflated->data, deflated->len);
  GByteArray *trace = g_byte_array_new();
  wire_put_varint(trace, (1 << 3) | 2);
  wire_put_varint(trace, packet->len);
  g_byte_array_append(trace, packet->data, packet->len);
  g_autofree char *path = e2e_write_file(dir, "bomb.pftrace", (const char *)trace->data,
                                         trace->len);
  g_byte_array_free(deflated, TRUE);
  g_byte_array_free(packet, TRUE);
  g_byte_array_free(trace, TRUE);
  const char *inputs[] = {"bomb.pftrace", NULL};
  const char *opts[] = {"--max-inflate-ratio", "10", NULL};
  e2e_result r = e2e_run_query(dir, inputs, opts,
                               "SELECT " STAT("container_inflate_ratio_exceeded") " AS cut");
  g_assert_cmpint(r.exit_code, ==, 1);
  e2e_assert_text(r.out, "\"cut\"\n1\n");
  g_assert_true(g_str_has_prefix(r.err, "tracemerge: bomb.pftrace: at byte 4: packet 1: "
                                        "compressed_packets: inflates to more than 10 times "));
  g_assert_true(g_str_has_suffix(r.err, "(budget --max-inflate-ratio)\n"));
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

/* A Gecko profile whose one thread holds a 2 MiB string: with
 * --max-record-size 1M the thread's object passes the budget, and the file
 * is cut at the thread's first byte with the stat. */
static void test_gecko_thread_past_the_record_budget_is_cut(void) {
  g_autofree char *dir = e2e_tmpdir();
  GString *json = g_string_new("{\"meta\":{\"version\":24,\"categories\":[]},\"threads\":[");
  size_t thread_at = json->len;
  g_string_append(json, "{\"name\":\"main\",\"tid\":1,\"pid\":1,\"stringArray\":[\"");
  for (int i = 0; i < (2 << 20); i++)
    g_string_append_c(json, 's');
  g_string_append(json, "\"]}]}\n");
  g_autofree char *path = e2e_write_file(dir, "big.json", json->str, json->len);
  g_string_free(json, TRUE);
  const char *inputs[] = {"big.json", NULL};
  const char *opts[] = {"--max-record-size", "1M", NULL};
  e2e_result r = e2e_run_query(dir, inputs, opts,
                               "SELECT " STAT("reader_record_size_exceeded") " AS cut");
  g_assert_cmpint(r.exit_code, ==, 1);
  e2e_assert_text(r.out, "\"cut\"\n1\n");
  g_autofree char *want = g_strdup_printf(
      "tracemerge: big.json: at byte %zu: a Gecko thread longer than 1048576 bytes "
      "(budget --max-record-size)\n",
      thread_at);
  e2e_assert_text(r.err, want);
  e2e_result_clear(&r);
  e2e_cleanup(dir);
}

/* ---- plugins -------------------------------------------------------------- */

/* A copy of the built-in JSON reader on TRACEMERGE_PLUGIN_PATH is a second
 * reader named "json": every import fails naming both files, until the
 * user prefers one; `plugins` then shows which one won and what it
 * overrode. */
static void test_plugin_named_like_a_built_in_clashes_until_preferred(void) {
  g_autofree char *dir = e2e_tmpdir();
  const char *built = g_getenv("TM_JSON_PLUGIN");
  g_assert_nonnull(built);
  g_autofree char *bytes = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(built, &bytes, &len, NULL));
  g_autofree char *copy = e2e_write_file(dir, "evil-json.so", bytes, len);
  g_autofree char *slice = e2e_json_slice("s", 1, 1, 5);
  g_autofree char *trace = e2e_write_file(dir, "t.json", slice, 0);
  g_autofree char *built_real = realpath(built, NULL);
  g_assert_true(g_setenv("TRACEMERGE_PLUGIN_PATH", dir, TRUE));

  const char *inputs[] = {"t.json", NULL};
  e2e_result r = e2e_run_query(dir, inputs, NULL, "SELECT count(*) FROM slice");
  g_assert_cmpint(r.exit_code, ==, 1);
  /* Search order: TRACEMERGE_PLUGIN_PATH before the build tree. */
  g_autofree char *expected = g_strdup_printf(
      "two reader plugins are named \"json\": %s and %s; name the one to use "
      "with --prefer-plugin FILE (or TRACEMERGE_PLUGIN_PREFER=FILE), or remove one",
      copy, built_real);
  g_assert_nonnull(strstr(r.err, expected));
  e2e_result_clear(&r);

  const char *prefer[] = {"--prefer-plugin", copy, NULL};
  r = e2e_run_query(dir, inputs, prefer, "SELECT count(*) FROM slice");
  g_assert_cmpint(r.exit_code, ==, 0);
  e2e_assert_text(r.out, "\"count(*)\"\n1\n");
  e2e_result_clear(&r);

  const char *plugins[] = {"plugins", "--prefer-plugin", copy, NULL};
  r = e2e_run_in(dir, plugins);
  g_assert_cmpint(r.exit_code, ==, 0);
  g_autofree char *overrides = g_strdup_printf("overrides %s (preferred)\n", built_real);
  g_assert_nonnull(strstr(r.out, overrides));
  g_assert_nonnull(strstr(r.out, copy));
  e2e_result_clear(&r);

  const char *plain[] = {"plugins", NULL};
  r = e2e_run_in(dir, plain);
  g_assert_cmpint(r.exit_code, ==, 1);
  g_assert_nonnull(strstr(r.err, expected));
  e2e_result_clear(&r);
  g_unsetenv("TRACEMERGE_PLUGIN_PATH");
  e2e_cleanup(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/e2e/hostile/arithmetic/slice-end-overflow-is-dropped-and-counted",
                  test_slice_end_overflow_is_dropped_and_counted);
  g_test_add_func("/e2e/hostile/budgets/bomb-after-an-event-in-one-zip-keeps-the-event",
                  test_bomb_after_an_event_in_one_zip_keeps_the_event);
  g_test_add_func("/e2e/hostile/budgets/nested-zip-bombs-are-cut-and-the-event-kept",
                  test_nested_zip_bombs_are_cut_and_the_event_kept);
  g_test_add_func("/e2e/hostile/budgets/member-is-not-inflated-after-its-reader-failed",
                  test_member_is_not_inflated_after_its_reader_failed);
  g_test_add_func("/e2e/hostile/budgets/record-budget-cuts-a-long-json-token",
                  test_record_budget_cuts_a_long_json_token);
  g_test_add_func("/e2e/hostile/budgets/file-budget-from-the-command-line",
                  test_file_budget_from_the_command_line);
  g_test_add_func("/e2e/hostile/budgets/instruments-ref-bomb-is-cut",
                  test_instruments_ref_bomb_is_cut);
  g_test_add_func("/e2e/hostile/budgets/proto-compressed-packets-bomb-is-cut",
                  test_proto_compressed_packets_bomb_is_cut);
  g_test_add_func("/e2e/hostile/budgets/gecko-thread-past-the-record-budget-is-cut",
                  test_gecko_thread_past_the_record_budget_is_cut);
  g_test_add_func("/e2e/hostile/plugins/named-like-a-built-in-clashes-until-preferred",
                  test_plugin_named_like_a_built_in_clashes_until_preferred);
  return g_test_run();
}
