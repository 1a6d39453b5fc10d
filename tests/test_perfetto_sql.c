/* Unit tests of trace_processor's SQL on the surface: functions, slice and
 * flow table functions, SPAN_JOIN, and the PerfettoSQL preprocessor, over
 * a hand-built model whose rows the comments give. Expected values are
 * worked out by hand from those rows (the comment by each says how). */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "model/model.h"
#include "sql/sql_output.h"
#include "sql/sql_surface.h"

typedef struct fixture {
  tm_model *model;
  tm_sql_surface *surface;
} fixture;

static tm_str_id S(tm_model *m, const char *s) {
  return string_pool_intern_cstr(m->strings, s);
}

static void add_slice(tm_model *m, int64_t ts, int64_t dur, uint32_t track,
                      const char *name, uint32_t depth, uint32_t parent,
                      uint32_t arg_set) {
  model_add_slice(m, ts, dur, track, S(m, "cat"), S(m, name), depth, parent,
                  arg_set);
}

static void add_arg_value(tm_model *m, uint32_t set, const char *key,
                          tm_arg_value v) {
  uint32_t got = model_add_arg(m, set, S(m, key), v);
  g_assert_cmpuint(got, ==, set);
}

static void add_flow(tm_model *m, uint32_t out, uint32_t in) {
  tm_flow_row f = {.slice_out = out, .slice_in = in, .trace_id = TM_NULL_INT64};
  tm_vec_push(&m->flows, f);
}

static uint32_t add_arg(tm_model *m, uint32_t set, const char *key,
                        tm_arg_type type, int64_t i, const char *s) {
  tm_arg_value v = {.type = type};
  if (type == TM_ARG_STRING)
    v.u.str_id = S(m, s);
  else
    v.u.int_value = i;
  return model_add_arg(m, set, S(m, key), v);
}

/* Track 0 (a thread's): slices
 *   0 A [0, 100)   depth 0
 *   1 B [10, 50)   depth 1, parent 0
 *   2 C [20, 30)   depth 2, parent 1
 *   3 D [60, 90)   depth 1, parent 0
 *   4 E [200, 250) depth 0
 *   5 B [210, 220) depth 1, parent 4   (same name as 1, other parent)
 * Flows: 2 -> 4 (flow 0), 4 -> 3 (flow 1), 5 -> 0 (flow 2).
 * Args: set 1 = {debug.name: "x", args.list[0]: 7, args.list[1]: 8} on
 * slice 0. Set 2 (on no slice) has one arg of every type, nested keys and
 * lists, a repeated key (debug.apple) and text to escape; sets 3 and 4
 * have keys __intrinsic_arg_set_to_json refuses.
 * Clock snapshots: at trace time 0 REALTIME 1e12 and MONOTONIC 500; at 200
 * REALTIME 2e12 (the wall clock was set) and MONOTONIC 700. */
static void fixture_set_up(fixture *f, gconstpointer data) {
  (void)data;
  tm_model *m = model_new();
  tm_track_row t = {.name = S(m, "t"), .type = S(m, "thread"),
                    .parent_id = TM_NULL_ID, .track_group_id = TM_NULL_ID,
                    .utid = TM_NULL_ID, .upid = TM_NULL_ID};
  tm_vec_push(&m->tracks, t);
  uint32_t set = add_arg(m, 0, "debug.name", TM_ARG_STRING, 0, "x");
  add_arg(m, set, "args.list[0]", TM_ARG_INT, 7, NULL);
  add_arg(m, set, "args.list[1]", TM_ARG_INT, 8, NULL);
  tm_arg_value zebra = {.type = TM_ARG_STRING, .u.str_id = S(m, "z\"q\x01")};
  uint32_t set2 = model_add_arg(m, 0, S(m, "debug.zebra"), zebra);
  g_assert_cmpuint(set2, ==, 2);
  add_arg_value(m, 2, "debug.apple", (tm_arg_value){TM_ARG_INT, {.int_value = -123}});
  add_arg_value(m, 2, "debug.nested.inner",
                (tm_arg_value){TM_ARG_UINT, {.int_value = -1}});
  add_arg_value(m, 2, "debug.nested.flag", (tm_arg_value){TM_ARG_BOOL, {.int_value = 1}});
  add_arg_value(m, 2, "debug.ptr", (tm_arg_value){TM_ARG_POINTER, {.int_value = 100}});
  add_arg_value(m, 2, "debug.real", (tm_arg_value){TM_ARG_REAL, {.real_value = 3.25}});
  add_arg_value(m, 2, "debug.grid[1][0]", (tm_arg_value){TM_ARG_INT, {.int_value = 5}});
  add_arg_value(m, 2, "debug.items[0].name",
                (tm_arg_value){TM_ARG_STRING, {.str_id = S(m, "a")}});
  add_arg_value(m, 2, "debug.json",
                (tm_arg_value){TM_ARG_JSON, {.str_id = S(m, "{\"k\":1}")}});
  add_arg_value(m, 2, "debug.apple", (tm_arg_value){TM_ARG_INT, {.int_value = 7}});
  uint32_t set3 = model_add_arg(m, 0, S(m, "a"), (tm_arg_value){TM_ARG_INT, {.int_value = 1}});
  add_arg_value(m, set3, "a.b", (tm_arg_value){TM_ARG_INT, {.int_value = 2}});
  model_add_arg(m, 0, S(m, "x[99999999]"), (tm_arg_value){TM_ARG_INT, {.int_value = 1}});
  add_slice(m, 0, 100, 0, "A", 0, TM_NULL_ID, set);
  add_slice(m, 10, 40, 0, "B", 1, 0, 0);
  add_slice(m, 20, 10, 0, "C", 2, 1, 0);
  add_slice(m, 60, 30, 0, "D", 1, 0, 0);
  add_slice(m, 200, 50, 0, "E", 0, TM_NULL_ID, 0);
  add_slice(m, 210, 10, 0, "B", 1, 4, 0);
  add_flow(m, 2, 4);
  add_flow(m, 4, 3);
  add_flow(m, 5, 0);
  const struct {
    int64_t ts;
    const char *name;
    int64_t value;
  } snapshots[] = {{0, "REALTIME", 1000000000000}, {0, "MONOTONIC", 500},
                   {200, "REALTIME", 2000000000000}, {200, "MONOTONIC", 700}};
  for (size_t i = 0; i < G_N_ELEMENTS(snapshots); i++) {
    tm_clock_snapshot_row c = {.ts = snapshots[i].ts,
                               .clock_id = strcmp(snapshots[i].name, "REALTIME") ? 3 : 1,
                               .clock_name = S(m, snapshots[i].name),
                               .clock_value = snapshots[i].value,
                               .snapshot_id = (int64_t)i / 2};
    tm_vec_push(&m->clock_snapshots, c);
  }
  model_finalize(m);
  GError *error = NULL;
  f->model = m;
  f->surface = sql_surface_new(m, NULL, &error);
  g_assert_no_error(error);
}

static void fixture_tear_down(fixture *f, gconstpointer data) {
  (void)data;
  sql_surface_free(f->surface);
  model_free(f->model);
}

static char *run(fixture *f, const char *sql, GError **error) {
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  bool ok = sql_surface_query(f->surface, sql, TM_FORMAT_TSV, out, error);
  fclose(out);
  if (!ok) {
    free(buf);
    return NULL;
  }
  char *copy = g_strdup(buf);
  free(buf);
  return copy;
}

static void assert_rows(fixture *f, const char *sql, const char *expected) {
  GError *error = NULL;
  char *got = run(f, sql, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(got, ==, expected);
  g_free(got);
}

static void assert_fails(fixture *f, const char *sql, const char *message) {
  GError *error = NULL;
  char *got = run(f, sql, &error);
  g_assert_null(got);
  g_assert_error(error, TM_SQL_ERROR, TM_SQL_ERROR_QUERY);
  g_assert_cmpstr(error->message, ==, message);
  g_error_free(error);
}

static void test_extract_arg_reads_keys_with_indexes(fixture *f,
                                                     gconstpointer d) {
  (void)d;
  assert_rows(f,
              "SELECT extract_arg(arg_set_id, 'debug.name') AS a, "
              "extract_arg(arg_set_id, 'args.list[1]') AS b, "
              "extract_arg(arg_set_id, 'args.list') AS c, "
              "extract_arg(NULL, 'debug.name') AS d FROM slice WHERE id = 0",
              "a\tb\tc\td\nx\t8\t\t\n");
  assert_fails(f, "SELECT extract_arg('x', 'debug.name')",
               "EXTRACT_ARG: 1st argument should be arg set id");
}

/* Set 1 is slice 0's: debug.name, then args.list[0..1]. Set 2's text is
 * worked out from its args by arg_set_json.h's rules: members in the order
 * first named (debug.apple keeps its place, its second value wins), lists
 * padded with null (grid[0]), uint as the unsigned value of -1's bits,
 * pointer 100 as "0x64", real as "%f", json as a string; the quote and
 * the control byte 1 of debug.zebra escaped. */
static const char arg_set_2_json[] =
    "{\"debug\":{\"zebra\":\"z\\\"q\\u0001\",\"apple\":7,"
    "\"nested\":{\"inner\":18446744073709551615,\"flag\":true},"
    "\"ptr\":\"0x64\",\"real\":3.250000,\"grid\":[null,[5]],"
    "\"items\":[{\"name\":\"a\"}],\"json\":\"{\\\"k\\\":1}\"}}";

static void test_arg_set_to_json_nests_keys_and_lists(fixture *f,
                                                       gconstpointer d) {
  (void)d;
  assert_rows(f,
              "SELECT __intrinsic_arg_set_to_json(arg_set_id) AS j FROM slice "
              "WHERE id = 0",
              "j\n{\"debug\":{\"name\":\"x\"},\"args\":{\"list\":[7,8]}}\n");
  /* Compared inside SQL: TSV output would escape the backslashes. The
   * text is JSON that SQLite's own parser reads back. */
  char *sql = g_strdup_printf(
      "SELECT j = '%s' AS same, json_valid(j) AS valid, "
      "json_extract(j, '$.debug.grid[1][0]') AS grid, "
      "json_extract(j, '$.debug.zebra') = 'z\"q' || char(1) AS zebra "
      "FROM (SELECT __intrinsic_arg_set_to_json(2) AS j)",
      arg_set_2_json);
  assert_rows(f, sql, "same\tvalid\tgrid\tzebra\n1\t1\t5\t1\n");
  g_free(sql);
  /* A NULL id is NULL (trace_processor's docs COALESCE it to '{}'); an id
   * without args is the empty object. */
  assert_rows(f,
              "SELECT __intrinsic_arg_set_to_json(NULL) IS NULL AS n, "
              "__intrinsic_arg_set_to_json(999) AS e",
              "n\te\n1\t{}\n");
  assert_fails(f, "SELECT __intrinsic_arg_set_to_json('x')",
               "__intrinsic_arg_set_to_json: the argument should be an arg "
               "set id");
  assert_fails(f, "SELECT __intrinsic_arg_set_to_json(3)",
               "__intrinsic_arg_set_to_json: arg set 3: key 'a.b': puts a "
               "member inside something that is not an object");
  assert_fails(f, "SELECT __intrinsic_arg_set_to_json(4)",
               "__intrinsic_arg_set_to_json: arg set 4: key 'x[99999999]': "
               "array index above 65535");
}

static void test_scalar_functions_match_their_definitions(fixture *f,
                                                          gconstpointer d) {
  (void)d;
  /* FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c; of the empty input, the offset
   * basis 0xcbf29ce484222325; both as signed 64-bit. */
  assert_rows(f, "SELECT hash('a') AS h, hash() AS e",
              "h\te\n-5808556873153909620\t-3750763034362895579\n");
  assert_rows(f,
              "SELECT str_split('a,b,,c', ',', 1) AS b, "
              "str_split('a,b,,c', ',', 2) AS empty, "
              "str_split('a,b', ',', 5) AS none",
              "b\tempty\tnone\nb\t\t\n");
  assert_rows(f, "SELECT unhex(' 0x1F ') AS a, unhex('ff') AS b",
              "a\tb\n31\t255\n");
  assert_fails(f, "SELECT unhex('xyz')",
               "UNHEX: invalid or out of range hex string");
  assert_rows(f,
              "SELECT 'frame_17' REGEXP '^frame_[0-9]+$' AS m, "
              "regexp_extract('id=42;', 'id=([0-9]+)') AS g, "
              "regexp_replace_simple('a1b22c', '[0-9]+', '#') AS r",
              "m\tg\tr\n1\t42\ta#b#c\n");
  assert_rows(f, "SELECT demangle('_ZN3foo3barEi') AS d, demangle('main') AS n",
              "d\tn\nfoo::bar(int)\t\n");
  assert_rows(f, "SELECT reverse('abc') AS r", "r\ncba\n");
  /* trace bounds: min ts 0, max end 250 (slice 4). */
  assert_rows(f, "SELECT trace_start() AS s, trace_end() AS e, trace_dur() AS d",
              "s\te\td\n0\t250\t250\n");
}

static void test_clock_and_codec_functions_match_their_definitions(
    fixture *f, gconstpointer d) {
  (void)d;
  /* The reading of the last snapshot at or before ts, plus the distance:
   * 100 -> 1e12 + 100; 250 -> 2e12 + 50 (the snapshot at 200); -10 is
   * before every snapshot: the first, 1e12 - 10. MONOTONIC at 250:
   * 700 + 50. */
  assert_rows(f,
              "SELECT to_realtime(100) AS a, to_realtime(250) AS b, "
              "to_realtime(-10) AS c, to_monotonic(250) AS m, "
              "to_realtime(NULL) AS n",
              "a\tb\tc\tm\tn\n1000000000100\t2000000000050\t999999999990\t750\t\n");
  assert_fails(f, "SELECT to_monotonic('x')",
               "TO_MONOTONIC: first argument should be timestamp");
  /* 1 h 2 min 3 s 4 ms 5 us 6 ns = 3723004005006 ns. */
  assert_rows(f, "SELECT to_timecode(3723004005006) AS t, to_timecode(0) AS z",
              "t\tz\n01:02:03 004 005 006\t00:00:00 000 000 000\n");
  /* Bytes 00 ff 10 = bits 000000 001111 111100 010000 = "AP8Q"; one byte
   * 'a' (011000 01....) = "YQ==". */
  assert_rows(f,
              "SELECT base64_encode(x'00ff10') AS e, hex(base64_decode('AP8Q')) AS d, "
              "CAST(base64_decode('YQ==') AS TEXT) AS a, "
              "length(base64_decode('')) AS z, base64_decode(NULL) AS n",
              "e\td\ta\tz\tn\nAP8Q\t00FF10\ta\t0\t\n");
  assert_fails(f, "SELECT base64_decode('A*==')",
               "BASE64_DECODE: argument should be base64 text");
  assert_fails(f, "SELECT base64_decode('YQ=')",
               "BASE64_DECODE: argument should be base64 text");
  assert_fails(f, "SELECT base64_encode('text')",
               "BASE64_ENCODE: argument should be bytes");
  /* The prelude's slice_is_ancestor: A (0) holds C (2, two levels down);
   * not the reverse; A does not hold E (4, after it); E holds B (5); a
   * missing slice gives NULL. */
  assert_rows(f,
              "SELECT slice_is_ancestor(0, 2) AS a, slice_is_ancestor(2, 0) AS b, "
              "slice_is_ancestor(0, 4) AS c, slice_is_ancestor(4, 5) AS d, "
              "slice_is_ancestor(0, 99) AS n",
              "a\tb\tc\td\tn\n1\t0\t0\t1\t\n");
}

static void test_aggregates_match_their_definitions(fixture *f,
                                                    gconstpointer d) {
  (void)d;
  /* The slices' durs 100 40 10 30 50 10, sorted: 10 10 30 40 50 100.
   * percentile 50: index 2.5 -> (30 + 40) / 2 = 35; 90: index 4.5 -> 75;
   * percentile_disc 0.5: ceil(3) - 1 = index 2 -> 30. */
  assert_rows(f,
              "SELECT percentile(dur, 50) AS p50, percentile(dur, 90) AS p90, "
              "median(dur) AS m, percentile_cont(dur, 0.5) AS c, "
              "percentile_disc(dur, 0.5) AS q FROM slice",
              "p50\tp90\tm\tc\tq\n35.0\t75.0\t35.0\t35.0\t30.0\n");
  assert_rows(f,
              "SELECT string_agg(name, '') AS s FROM (SELECT name FROM slice "
              "ORDER BY id)",
              "s\nABCDEB\n");
  assert_fails(f, "SELECT percentile(dur, 101) FROM slice",
               "the fraction argument to percentile() is not "
               "between 0.0 and 100.0");
}

static void test_slice_table_functions_walk_the_tree(fixture *f,
                                                     gconstpointer d) {
  (void)d;
  assert_rows(f, "SELECT id, name, depth FROM ancestor_slice(2)",
              "id\tname\tdepth\n0\tA\t0\n1\tB\t1\n");
  assert_rows(f, "SELECT group_concat(id) AS ids FROM descendant_slice(0)",
              "ids\n1,2,3\n");
  assert_rows(f, "SELECT count(*) AS n FROM descendant_slice(99)", "n\n0\n");
  /* Joined per row: each slice's root (itself at depth 0). */
  assert_rows(f,
              "SELECT s.id, coalesce(a.id, s.id) AS root FROM slice s "
              "LEFT JOIN ancestor_slice(s.id) a ON a.depth = 0 ORDER BY s.id",
              "id\troot\n0\t0\n1\t0\n2\t0\n3\t0\n4\t4\n5\t4\n");
}

static void test_stack_functions_group_slices_by_their_name_path(
    fixture *f, gconstpointer d) {
  (void)d;
  /* Slices 1 (A > B) and 5 (E > B) share a name but not a stack. The
   * stack id is the slices.stack module's formula, checked against the
   * SQL form of it for slice 2 (A > B > C). */
  assert_rows(f,
              "INCLUDE PERFETTO MODULE slices.stack;"
              "SELECT (SELECT stack_id FROM slice_with_stack_id WHERE id = 2) "
              "= hash(hash('cat|A') || '|' || hash('cat|B') || '|' || "
              "hash('cat|C')) AS same",
              "same\n1\n");
  assert_rows(f,
              "INCLUDE PERFETTO MODULE slices.stack;"
              "SELECT group_concat(id) AS ids FROM ancestor_slice_by_stack("
              "(SELECT stack_id FROM slice_with_stack_id WHERE id = 2))",
              "ids\n0,1,2\n");
  assert_rows(f,
              "INCLUDE PERFETTO MODULE slices.stack;"
              "SELECT group_concat(id) AS ids FROM descendant_slice_by_stack("
              "(SELECT stack_id FROM slice_with_stack_id WHERE id = 1))",
              "ids\n1,2\n");
}

static void test_flow_functions_follow_flows_and_nesting(fixture *f,
                                                         gconstpointer d) {
  (void)d;
  /* following_flow(0): 0's descendants include 2; 2 -> 4 (flow 0); 4 -> 3
   * (flow 1); 4's child 5 -> 0 (flow 2); 0 was seen. */
  assert_rows(f, "SELECT group_concat(id) AS ids FROM following_flow(0)",
              "ids\n0,1,2\n");
  /* following_flow(3): 3 has no outgoing flow nor children. */
  assert_rows(f, "SELECT count(*) AS n FROM following_flow(3)", "n\n0\n");
  /* preceding_flow(3): 4 -> 3 (flow 1); 4 came from 2 (flow 0); up from
   * 3 to its parent 0, which 5 -> 0 (flow 2) reaches. */
  assert_rows(f, "SELECT group_concat(id) AS ids FROM preceding_flow(3)",
              "ids\n0,1,2\n");
  /* directly_connected_flow(4): flows touching 4 (0, 1), then their other
   * ends 2 and 3, which have no other flows. */
  assert_rows(f,
              "SELECT group_concat(id) AS ids, group_concat(slice_out) AS o "
              "FROM directly_connected_flow(4)",
              "ids\to\n0,1\t2,4\n");
}

static void test_span_join_intersects_partitions(fixture *f, gconstpointer d) {
  (void)d;
  const char *setup =
      "CREATE TEMP TABLE a(ts, dur, cpu, x);"
      "INSERT INTO a VALUES (0, 10, 1, 'a1'), (20, 10, 1, 'a2'),"
      " (0, 100, 2, 'a3');"
      "CREATE TEMP TABLE b(ts, dur, cpu, y);"
      "INSERT INTO b VALUES (5, 20, 1, 'b1'), (50, 10, 2, 'b2'),"
      " (0, 5, 3, 'b3');";
  char *sql;
  /* cpu 1: a1 [0,10) & b1 [5,25) -> [5,10); a2 [20,30) & b1 -> [20,25).
   * cpu 2: a3 [0,100) & b2 [50,60) -> [50,60). cpu 3: b only. */
  sql = g_strconcat(setup,
                    "CREATE VIRTUAL TABLE temp.j USING SPAN_JOIN("
                    "a PARTITIONED cpu, b PARTITIONED cpu);"
                    "SELECT * FROM j", NULL);
  assert_rows(f, sql,
              "ts\tdur\tcpu\tx\ty\n5\t5\t1\ta1\tb1\n20\t5\t1\ta2\tb1\n"
              "50\t10\t2\ta3\tb2\n");
  g_free(sql);
  /* Left: all of a; pieces without b have y NULL. */
  assert_rows(f,
              "CREATE VIRTUAL TABLE temp.l USING SPAN_LEFT_JOIN("
              "a PARTITIONED cpu, b PARTITIONED cpu);"
              "SELECT * FROM l",
              "ts\tdur\tcpu\tx\ty\n0\t5\t1\ta1\t\n5\t5\t1\ta1\tb1\n"
              "20\t5\t1\ta2\tb1\n25\t5\t1\ta2\t\n0\t50\t2\ta3\t\n"
              "50\t10\t2\ta3\tb2\n60\t40\t2\ta3\t\n");
  /* Outer: b's [10,20) on cpu 1 and cpu 3 appear too; the partition is
   * passed down. */
  assert_rows(f,
              "CREATE VIRTUAL TABLE temp.o USING SPAN_OUTER_JOIN("
              "a PARTITIONED cpu, b PARTITIONED cpu);"
              "SELECT ts, dur, x, y FROM o WHERE cpu = 1",
              "ts\tdur\tx\ty\n0\t5\ta1\t\n5\t5\ta1\tb1\n10\t10\t\tb1\n"
              "20\t5\ta2\tb1\n25\t5\ta2\t\n");
  assert_rows(f, "SELECT count(*) AS n FROM o WHERE cpu = 3", "n\n1\n");
  /* Unpartitioned b applies to every partition of a. */
  assert_rows(f,
              "CREATE TEMP TABLE w(ts, dur, tag);"
              "INSERT INTO w VALUES (0, 6, 'w');"
              "CREATE VIRTUAL TABLE temp.u USING SPAN_JOIN(a PARTITIONED cpu, w);"
              "SELECT ts, dur, cpu, x, tag FROM u",
              "ts\tdur\tcpu\tx\ttag\n0\t6\t1\ta1\tw\n0\t6\t2\ta3\tw\n");
  assert_fails(f,
               "CREATE VIRTUAL TABLE temp.bad USING SPAN_JOIN(a PARTITIONED "
               "cpu, b PARTITIONED y)",
               "SPAN_JOIN: both tables must be partitioned by the "
               "same column (cpu, y)");
}

/* The inputs come in any order and with any value types: c and e are
 * inserted out of ts order, one partition is 10^12 (a sparse range, sorted
 * one way) and the small ones alone (views c_small, e_small) are sorted
 * another; NULL, real and blob values come through. Expected rows as in
 * the test above: part 1: c [0,10) & e1 [5,25) -> [5,10); c [20,30) & e1
 * -> [20,25); part 10^12: [0,100) & e2 [50,60) -> [50,60). */
static void test_span_join_reads_inputs_in_any_order(fixture *f,
                                                     gconstpointer d) {
  (void)d;
  const char *setup =
      "CREATE TEMP TABLE c(ts, dur, part, v);"
      "INSERT INTO c VALUES (20, 10, 1, 2.5), (0, 100, 1000000000000, "
      "x'0102'), (0, 10, 1, NULL);"
      "CREATE TEMP TABLE e(ts, dur, part, t);"
      "INSERT INTO e VALUES (50, 10, 1000000000000, 'e2'), (5, 20, 1, 'e1');"
      "CREATE TEMP VIEW c_small AS SELECT * FROM c WHERE part < 1000;"
      "CREATE TEMP VIEW e_small AS SELECT * FROM e WHERE part < 1000;";
  char *sql = g_strconcat(setup,
                          "CREATE VIRTUAL TABLE temp.j USING SPAN_JOIN("
                          "c PARTITIONED part, e PARTITIONED part);"
                          "CREATE VIRTUAL TABLE temp.js USING SPAN_JOIN("
                          "c_small PARTITIONED part, e_small PARTITIONED part);"
                          "SELECT ts, dur, part, typeof(v) AS type, quote(v) "
                          "AS v, t FROM j",
                          NULL);
  assert_rows(f, sql,
              "ts\tdur\tpart\ttype\tv\tt\n5\t5\t1\tnull\tNULL\te1\n"
              "20\t5\t1\treal\t2.5\te1\n"
              "50\t10\t1000000000000\tblob\tX'0102'\te2\n");
  g_free(sql);
  assert_rows(f, "SELECT ts, dur, part, quote(v) AS v, t FROM js",
              "ts\tdur\tpart\tv\tt\n5\t5\t1\tNULL\te1\n"
              "20\t5\t1\t2.5\te1\n");
  /* Spans of one side that overlap break the documented restriction; the
   * sweep still answers: each piece goes to the earliest span still open
   * (o1 [0,10) and o2 [5,15) against [0,20): [0,10) o1, [10,15) o2). */
  assert_rows(f,
              "CREATE TEMP TABLE ov(ts, dur, n);"
              "INSERT INTO ov VALUES (5, 10, 'o2'), (0, 10, 'o1');"
              "CREATE TEMP TABLE whole(ts, dur, w);"
              "INSERT INTO whole VALUES (0, 20, 'w');"
              "CREATE VIRTUAL TABLE temp.jo USING SPAN_JOIN(ov, whole);"
              "SELECT ts, dur, n, w FROM jo",
              "ts\tdur\tn\tw\n0\t10\to1\tw\n10\t5\to2\tw\n");
}

static void test_perfetto_functions_tables_views_and_macros(fixture *f,
                                                            gconstpointer d) {
  (void)d;
  assert_rows(f,
              "CREATE PERFETTO FUNCTION add_ints(x INT, y INT) RETURNS INT AS "
              "SELECT $x + $y;"
              "CREATE PERFETTO FUNCTION depth_of(d INT) RETURNS TABLE(id LONG, "
              "name STRING) AS SELECT id, name FROM slice WHERE depth = $d;"
              "CREATE PERFETTO MACRO twice(x Expr) RETURNS Expr AS ($x) * 2;"
              "CREATE PERFETTO TABLE roots(id LONG, name STRING) AS "
              "SELECT id, name FROM depth_of(0);"
              "CREATE PERFETTO VIEW names AS SELECT group_concat(name, '') AS n "
              "FROM roots;"
              "SELECT add_ints(1, 2) AS a, twice!(add_ints(2, 3)) AS b, n FROM names",
              "a\tb\tn\n3\t10\tAE\n");
  /* A ';' inside a string, a comment and a macro body's brackets does not
   * end the statement. */
  assert_rows(f,
              "CREATE PERFETTO MACRO semi() RETURNS TableOrSubquery AS "
              "(SELECT 'a;b' AS s /* ; */);"
              "SELECT s FROM semi!()",
              "s\na;b\n");
  assert_rows(f,
              "CREATE OR REPLACE PERFETTO FUNCTION add_ints(x INT, y INT) RETURNS "
              "INT AS SELECT $x * $y; SELECT add_ints(3, 4) AS a",
              "a\n12\n");
  assert_rows(f, "SELECT cast_int!('7') + 1 AS p", "p\n8\n");
  /* Views may use them (the connection's schema is untrusted: only
   * INNOCUOUS functions and tables are allowed there). */
  assert_rows(f,
              "CREATE VIEW uses AS SELECT add_ints(1, 1) AS a, "
              "extract_arg(arg_set_id, 'debug.name') AS b, (SELECT count(*) "
              "FROM depth_of(1)) AS c, (SELECT count(*) FROM "
              "ancestor_slice(2)) AS d FROM slice WHERE id = 0;"
              "SELECT * FROM uses",
              /* add_ints multiplies since its replacement above. */
              "a\tb\tc\td\n1\tx\t3\t2\n");
}

static void test_perfetto_errors_name_line_and_column(fixture *f,
                                                      gconstpointer d) {
  (void)d;
  assert_fails(f, "SELECT 1;\n  INCLUDE PERFETTO MODULE no.such;",
               "query:2:27: unknown module no.such");
  assert_fails(f, "SELECT nope!(1)", "query:1:8: unknown macro nope!");
  assert_fails(f, "CREATE PERFETTO FUNCTION f(x WIDGET) RETURNS INT AS SELECT 1",
               "query:1:30: unknown type 'WIDGET'");
  assert_fails(f, "CREATE PERFETTO TABLE t(a INT) AS SELECT 1 AS b",
               "query:1:23: t: column 'a' is in the schema but not in the "
               "result");
  assert_fails(f, "SELECT 1;\nSELECT * FROM\n  slice WHERE nope = 1",
               "query:3:15: no such column: nope");
  assert_fails(f, "SELECT 'open", "query:1:8: unterminated string, "
                                  "identifier or comment");
  assert_fails(f, "CREATE PERFETTO WIDGET x",
               "query:1:17: expected TABLE, VIEW, FUNCTION, MACRO or INDEX, "
               "found 'WIDGET'");
}

static void test_sql_packages_add_modules(fixture *f, gconstpointer d) {
  (void)d;
  char *dir = g_dir_make_tmp("tm-pkg-XXXXXX", NULL);
  char *sub = g_build_filename(dir, "inner", NULL);
  g_mkdir(sub, 0700);
  char *file = g_build_filename(sub, "m.sql", NULL);
  g_assert_true(g_file_set_contents(
      file, "CREATE PERFETTO FUNCTION pkg_answer() RETURNS INT AS SELECT 42;",
      -1, NULL));
  GError *error = NULL;
  g_assert_true(sql_surface_add_sql_package(f->surface, dir, "mine", &error));
  g_assert_no_error(error);
  assert_rows(f, "INCLUDE PERFETTO MODULE mine.inner.m; SELECT pkg_answer() AS a",
              "a\n42\n");
  /* Including twice runs the module once (a second CREATE would fail). */
  assert_rows(f, "INCLUDE PERFETTO MODULE mine.*; SELECT 1 AS one", "one\n1\n");
  g_assert_false(sql_surface_add_sql_package(f->surface, "/no/such/dir", NULL,
                                             &error));
  g_assert_error(error, TM_SQL_ERROR, TM_SQL_ERROR_QUERY);
  g_assert_cmpstr(error->message, ==,
                  "SQL package dir: /no/such/dir is not a directory");
  g_error_free(error);
  g_unlink(file);
  g_rmdir(sub);
  g_rmdir(dir);
  g_free(file);
  g_free(sub);
  g_free(dir);
}

/* A saved database opened by plain SQLite with the loadable extension
 * answers the scalar functions as the surface does (the values: slice
 * 0's args and the bounds of the fixture). */
static void test_saved_database_gets_functions_from_the_extension(
    fixture *f, gconstpointer d) {
  (void)d;
  const char *extension = g_getenv("TM_SQLITE_EXTENSION");
  g_assert_nonnull(extension);
  char *dir = g_dir_make_tmp("tm-ext-XXXXXX", NULL);
  char *path = g_build_filename(dir, "saved.sqlite", NULL);
  GError *error = NULL;
  g_assert_true(sql_surface_save(f->surface, path, false, &error));
  g_assert_no_error(error);
  sqlite3 *db = NULL;
  g_assert_cmpint(sqlite3_open(path, &db), ==, SQLITE_OK);
  g_assert_cmpint(sqlite3_enable_load_extension(db, 1), ==, SQLITE_OK);
  char *message = NULL;
  int rc = sqlite3_load_extension(db, extension, NULL, &message);
  if (rc != SQLITE_OK)
    g_error("loading %s: %s", extension, message);
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint(
      sqlite3_prepare_v2(db,
                         "SELECT extract_arg(arg_set_id, 'debug.name'), "
                         "extract_arg(arg_set_id, 'args.list[1]'), "
                         "trace_dur(), hash('a'), to_realtime(250) "
                         "FROM slice WHERE id = 0",
                         -1, &stmt, NULL),
      ==, SQLITE_OK);
  g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_ROW);
  g_assert_cmpstr((const char *)sqlite3_column_text(stmt, 0), ==, "x");
  g_assert_cmpint(sqlite3_column_int64(stmt, 1), ==, 8);
  g_assert_cmpint(sqlite3_column_int64(stmt, 2), ==, 250);
  g_assert_cmpint(sqlite3_column_int64(stmt, 3), ==, -5808556873153909620LL);
  /* From the saved clock_snapshot: REALTIME 2e12 at 200, plus 50. */
  g_assert_cmpint(sqlite3_column_int64(stmt, 4), ==, 2000000000050LL);
  sqlite3_finalize(stmt);
  /* __intrinsic_arg_set_to_json reads the saved args table to the same
   * text as the model's (sets 1 and 2; the conflict of set 3). */
  g_assert_cmpint(sqlite3_prepare_v2(db,
                                     "SELECT __intrinsic_arg_set_to_json(1), "
                                     "__intrinsic_arg_set_to_json(2), "
                                     "__intrinsic_arg_set_to_json(999)",
                                     -1, &stmt, NULL),
                  ==, SQLITE_OK);
  g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_ROW);
  g_assert_cmpstr((const char *)sqlite3_column_text(stmt, 0), ==,
                  "{\"debug\":{\"name\":\"x\"},\"args\":{\"list\":[7,8]}}");
  g_assert_cmpstr((const char *)sqlite3_column_text(stmt, 1), ==,
                  arg_set_2_json);
  g_assert_cmpstr((const char *)sqlite3_column_text(stmt, 2), ==, "{}");
  sqlite3_finalize(stmt);
  g_assert_cmpint(sqlite3_prepare_v2(db, "SELECT __intrinsic_arg_set_to_json(3)",
                                     -1, &stmt, NULL),
                  ==, SQLITE_OK);
  g_assert_cmpint(sqlite3_step(stmt), ==, SQLITE_ERROR);
  g_assert_cmpstr(sqlite3_errmsg(db), ==,
                  "__intrinsic_arg_set_to_json: arg set 3: key 'a.b': puts a "
                  "member inside something that is not an object");
  sqlite3_finalize(stmt);
  /* Nothing is left open: a plain close succeeds. */
  g_assert_cmpint(sqlite3_close(db), ==, SQLITE_OK);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
#define ADD(path, fn)                                                       \
  g_test_add("/perfetto-sql/" path, fixture, NULL, fixture_set_up, fn,      \
             fixture_tear_down)
  ADD("extract-arg-reads-keys-with-indexes",
      test_extract_arg_reads_keys_with_indexes);
  ADD("arg-set-to-json-nests-keys-and-lists",
      test_arg_set_to_json_nests_keys_and_lists);
  ADD("scalar-functions-match-their-definitions",
      test_scalar_functions_match_their_definitions);
  ADD("clock-and-codec-functions-match-their-definitions",
      test_clock_and_codec_functions_match_their_definitions);
  ADD("aggregates-match-their-definitions",
      test_aggregates_match_their_definitions);
  ADD("slice-table-functions-walk-the-tree",
      test_slice_table_functions_walk_the_tree);
  ADD("stack-functions-group-slices-by-their-name-path",
      test_stack_functions_group_slices_by_their_name_path);
  ADD("flow-functions-follow-flows-and-nesting",
      test_flow_functions_follow_flows_and_nesting);
  ADD("span-join-intersects-partitions", test_span_join_intersects_partitions);
  ADD("span-join-reads-inputs-in-any-order",
      test_span_join_reads_inputs_in_any_order);
  ADD("perfetto-functions-tables-views-and-macros",
      test_perfetto_functions_tables_views_and_macros);
  ADD("perfetto-errors-name-line-and-column",
      test_perfetto_errors_name_line_and_column);
  ADD("sql-packages-add-modules", test_sql_packages_add_modules);
  ADD("saved-database-gets-functions-from-the-extension",
      test_saved_database_gets_functions_from_the_extension);
  return g_test_run();
}
