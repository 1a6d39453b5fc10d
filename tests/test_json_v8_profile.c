/*
 * The JSON reader's legacy V8 CPU profiles (`ph: "P"`, plugins/json/
 * json_v8_profile.c): chunks become samples, frames and callsites, read
 * through the fake host of tests/support/json_host.h.
 */
#include <glib.h>
#include <inttypes.h>
#include <string.h>

#include <tracemerge/plugin.h>

#include "json_host.h"

/* --- V8 CPU profiles (ph P) ---------------------------------------------------- */

/* The log's sample lines only. */
static char *sample_lines(json_host *h) {
  GString *out = g_string_new(NULL);
  g_auto(GStrv) lines = g_strsplit(h->log->str, "\n", -1);
  for (char **line = lines; *line; line++)
    if (g_str_has_prefix(*line, "sample "))
      g_string_append_printf(out, "%s\n", *line);
  return g_string_free(out, FALSE);
}

/* One profile over five chunks: a child listed before its parent, a node
 * used by a later chunk, an empty function name, a sample naming no node,
 * a chunk whose lengths differ, a chunk of a profile never opened, and the
 * same id in another process (a separate profile). Times: startTime 1000
 * µs plus the running sum of deltas, which the dropped chunks do not
 * advance. */
static const char v8_profile_input[] =
    "[{\"ph\":\"P\",\"name\":\"Profile\",\"pid\":1,\"tid\":2,\"ts\":5,"
    "\"id\":\"0x1\",\"args\":{\"data\":{\"startTime\":1000}}},\n"
    "{\"ph\":\"P\",\"name\":\"Profile\",\"pid\":7,\"tid\":7,\"ts\":5,"
    "\"id\":\"0x1\",\"args\":{\"data\":{\"startTime\":3}}},\n"
    "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":2,\"ts\":6,"
    "\"id\":\"0x1\",\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
    "{\"id\":2,\"parent\":1,\"callFrame\":{\"functionName\":\"leaf\","
    "\"url\":\"a.js\",\"scriptId\":3,\"lineNumber\":4}},"
    "{\"id\":1,\"callFrame\":{\"functionName\":\"(root)\",\"url\":\"\"}}],"
    "\"samples\":[2,1]},\"timeDeltas\":[10,5]}}},\n"
    "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":2,\"ts\":7,"
    "\"id\":\"0x1\",\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
    "{\"id\":3,\"parent\":2,\"callFrame\":{\"functionName\":\"\","
    "\"url\":\"a.js\"}}],\"samples\":[3,9]},\"timeDeltas\":[1,2]}}},\n"
    "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":2,\"ts\":8,"
    "\"id\":\"0x1\",\"args\":{\"data\":{\"cpuProfile\":{\"samples\":[3]},"
    "\"timeDeltas\":[1,2]}}},\n"
    "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":2,\"ts\":9,"
    "\"id\":\"0x2\",\"args\":{\"data\":{\"cpuProfile\":{\"samples\":[3]},"
    "\"timeDeltas\":[1]}}},\n"
    "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":7,\"tid\":7,\"ts\":9,"
    "\"id\":\"0x1\",\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
    "{\"id\":3,\"callFrame\":{\"functionName\":\"main\"}}],"
    "\"samples\":[3]},\"timeDeltas\":[-1]}}},\n"
    "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":2,\"ts\":9,"
    "\"id\":\"0x1\",\"args\":{\"data\":{\"cpuProfile\":{\"samples\":[3]},"
    "\"timeDeltas\":[4]}}}]\n";

static const char v8_profile_samples[] =
    "sample ts=1010000 thread=1/2 cpu=-1 "
    "stack=(root)@(null)>leaf@a.js\n"
    "sample ts=1015000 thread=1/2 cpu=-1 stack=(root)@(null)\n"
    "sample ts=1016000 thread=1/2 cpu=-1 "
    "stack=(root)@(null)>leaf@a.js>(anonymous)@a.js\n"
    "sample ts=2000 thread=7/7 cpu=-1 stack=main@(null)\n"
    "sample ts=1022000 thread=1/2 cpu=-1 "
    "stack=(root)@(null)>leaf@a.js>(anonymous)@a.js\n";

static void test_v8_profile_chunks_become_samples(void) {
  size_t len = strlen(v8_profile_input);
  json_host *whole = read_bytes(v8_profile_input, len, len);
  json_host *bytewise = read_bytes(v8_profile_input, len, 1);
  json_host *yajl = read_bytes_with(reader, "yajl-only", v8_profile_input,
                                    len, 1);
  active_services = &services;
  g_assert_cmpstr(bytewise->log->str, ==, whole->log->str);
  g_assert_cmpstr(yajl->log->str, ==, whole->log->str);
  g_assert_true(g_str_has_suffix(whole->log->str, "status=ok\n"));
  g_autofree char *samples = sample_lines(whole);
  g_assert_cmpstr(samples, ==, v8_profile_samples);
  g_assert_cmpint(stat_total(whole, "json_v8_profile_unknown_node"), ==, 1);
  g_assert_cmpint(stat_total(whole, "json_v8_profile_invalid_chunk"), ==, 1);
  g_assert_cmpint(stat_total(whole, "json_v8_profile_unknown_profile"), ==,
                  1);
  json_host_free(whole);
  json_host_free(bytewise);
  json_host_free(yajl);
}

/* A parent chain that loops, and a parent that is never listed: the
 * samples are dropped (counted), nothing loops forever. */
static void test_v8_profile_broken_chains_are_counted(void) {
  static const char input[] =
      "[{\"ph\":\"P\",\"name\":\"Profile\",\"pid\":1,\"tid\":1,\"ts\":0,"
      "\"id\":1,\"args\":{\"data\":{\"startTime\":0}}},"
      "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":1,\"ts\":0,"
      "\"id\":1,\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
      "{\"id\":1,\"parent\":2,\"callFrame\":{\"functionName\":\"a\"}},"
      "{\"id\":2,\"parent\":1,\"callFrame\":{\"functionName\":\"b\"}},"
      "{\"id\":3,\"parent\":4,\"callFrame\":{\"functionName\":\"c\"}},"
      "{\"id\":5,\"callFrame\":{\"functionName\":\"d\"}}],"
      "\"samples\":[1,2,3,5]},\"timeDeltas\":[1,1,1,1]}}},"
      /* "samples" beside "cpuProfile", not in it: deltas without samples. */
      "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":1,\"ts\":0,"
      "\"id\":1,\"args\":{\"data\":{\"samples\":[5],\"timeDeltas\":[1]}}},"
      /* A sample that is not an integer. */
      "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":1,\"ts\":0,"
      "\"id\":1,\"args\":{\"data\":{\"cpuProfile\":{\"samples\":[\"5\"]},"
      "\"timeDeltas\":[1]}}},"
      "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":1,\"ts\":0,"
      "\"id\":1,\"args\":{\"data\":{\"cpuProfile\":{\"samples\":[5]},"
      "\"timeDeltas\":[6]}}}]";
  json_host *h = read_all_chunkings(input, strlen(input));
  active_services = &services;
  g_autofree char *samples = sample_lines(h);
  g_assert_cmpstr(samples, ==,
                  "sample ts=4000 thread=1/1 cpu=-1 "
                  "stack=d@(null)\n"
                  "sample ts=10000 thread=1/1 cpu=-1 "
                  "stack=d@(null)\n");
  g_assert_cmpint(stat_total(h, "json_v8_profile_unknown_node"), ==, 3);
  g_assert_cmpint(stat_total(h, "json_v8_profile_invalid_chunk"), ==, 2);
  json_host_free(h);
}

/* DevTools' node form lists "children" instead of "parent"; a child may
 * come first, and an explicit "parent" wins over a children list. */
static void test_v8_profile_children_lists_give_parents(void) {
  static const char input[] =
      "[{\"ph\":\"P\",\"name\":\"Profile\",\"pid\":1,\"tid\":1,\"ts\":9,"
      "\"id\":1,\"args\":{\"data\":{}}},"
      "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":1,\"ts\":0,"
      "\"id\":1,\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
      "{\"id\":3,\"callFrame\":{\"functionName\":\"c\"}},"
      "{\"id\":4,\"parent\":1,\"callFrame\":{\"functionName\":\"d\"}},"
      "{\"callFrame\":{\"functionName\":\"b\"},\"children\":[3,4],\"id\":2},"
      "{\"id\":1,\"callFrame\":{\"functionName\":\"a\"},\"children\":[2]}],"
      "\"samples\":[3,4]},\"timeDeltas\":[1,1]}}}]";
  json_host *h = read_all_chunkings(input, strlen(input));
  active_services = &services;
  g_autofree char *samples = sample_lines(h);
  /* No startTime: the Profile event's ts (9 µs) starts the clock. */
  g_assert_cmpstr(samples, ==,
                  "sample ts=10000 thread=1/1 cpu=-1 "
                  "stack=a@(null)>b@(null)>c@(null)\n"
                  "sample ts=11000 thread=1/1 cpu=-1 "
                  "stack=a@(null)>d@(null)\n");
  json_host_free(h);
}

/* Chrome writes trace events out of order: two chunks come before their
 * Profile (with a slice between them), one after. trace_processor reads P
 * events in file order while tokenizing and drops a chunk whose Profile it
 * has not seen (docs/formats.md §2.3, P rows: the V8 profile tracker
 * of upstream's JSON tokenizer), so only the late chunk counts: its own
 * root node, its sample at startTime (500 µs, not the Profile's ts) + its
 * delta 1; the early chunks' deltas are not added. The early chunks'
 * thread (tid 7) is never made: a thread is made by a sample. */
static void test_v8_profile_chunks_before_their_profile_are_dropped(void) {
  static const char input[] =
      "[{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":7,\"ts\":1,"
      "\"id\":\"0x5\",\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
      "{\"id\":2,\"parent\":1,\"callFrame\":{\"functionName\":\"early\","
      "\"url\":\"e.js\"}},"
      "{\"id\":1,\"callFrame\":{\"functionName\":\"(root)\"}}],"
      "\"samples\":[2,1]},\"timeDeltas\":[10,5]}}},\n"
      "{\"ph\":\"X\",\"name\":\"between\",\"pid\":1,\"tid\":3,\"ts\":2,"
      "\"dur\":1,\"args\":{\"url\":\"zzzz.js\",\"functionName\":\"zzzzz\"}},\n"
      "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":7,\"ts\":3,"
      "\"id\":\"0x5\",\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
      "{\"id\":3,\"parent\":2,\"callFrame\":{\"functionName\":\"later\","
      "\"url\":\"l.js\"}}],\"samples\":[3]},\"timeDeltas\":[7]}}},\n"
      "{\"ph\":\"P\",\"name\":\"Profile\",\"pid\":1,\"tid\":4,\"ts\":900,"
      "\"id\":\"0x5\",\"args\":{\"data\":{\"startTime\":500}}},\n"
      "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":3,\"ts\":4,"
      "\"id\":\"0x5\",\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
      "{\"id\":1,\"callFrame\":{\"functionName\":\"(root)\"}}],"
      "\"samples\":[1]},\"timeDeltas\":[1]}}}]\n";
  size_t len = strlen(input);
  json_host *h = read_all_chunkings(input, len);
  json_host *yajl = read_bytes_with(reader, "yajl-only", input, len, 1);
  active_services = &services;
  g_assert_cmpstr(yajl->log->str, ==, h->log->str);
  g_assert_true(g_str_has_suffix(h->log->str, "status=ok\n"));
  g_autofree char *samples = sample_lines(h);
  g_assert_cmpstr(samples, ==,
                  "sample ts=501000 thread=1/3 cpu=-1 "
                  "stack=(root)@(null)\n");
  g_assert_null(strstr(h->log->str, "/7"));
  g_assert_cmpint(stat_total(h, "json_v8_profile_unknown_profile"), ==, 2);
  g_assert_cmpint(stat_total(h, "json_v8_profile_unknown_node"), ==, 0);
  g_assert_cmpint(stat_total(h, "json_v8_profile_invalid_chunk"), ==, 0);
  json_host_free(h);
  json_host_free(yajl);
}

/* Chunks whose Profile did not come before them: each is counted when it
 * is read (a Profile of the same id in another process does not open
 * them) and no sample is made. A file damaged after such a chunk counts
 * it too. */
static void test_v8_profile_chunks_without_profile_are_counted(void) {
  static const char input[] =
      "[{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":3,\"ts\":1,"
      "\"id\":\"0x5\",\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
      "{\"id\":1,\"callFrame\":{\"functionName\":\"f\",\"url\":\"u.js\"}}],"
      "\"samples\":[1]},\"timeDeltas\":[10]}}},\n"
      "{\"ph\":\"P\",\"name\":\"Profile\",\"pid\":2,\"tid\":3,\"ts\":1,"
      "\"id\":\"0x5\",\"args\":{\"data\":{\"startTime\":5}}},\n"
      "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":3,\"ts\":2,"
      "\"id\":\"0x5\",\"args\":{\"data\":{\"cpuProfile\":{\"samples\":[1]},"
      "\"timeDeltas\":[1]}}},\n"
      "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":3,\"ts\":2,"
      "\"id\":\"0x6\",\"args\":{\"data\":{\"cpuProfile\":{\"samples\":[1,1]},"
      "\"timeDeltas\":[1]}}}]\n";
  size_t len = strlen(input);
  json_host *h = read_all_chunkings(input, len);
  /* The same chunks, then damage: the file fails in feed(). */
  g_autofree char *head = g_strndup(input, len - 2);
  g_autofree char *damaged = g_strconcat(head, ",}\n", NULL);
  json_host *broken = read_bytes(damaged, strlen(damaged), 1);
  active_services = &services;
  g_assert_true(g_str_has_suffix(h->log->str,
                                 "stat json_v8_profile_unknown_profile +1\n"
                                 "stat json_v8_profile_unknown_profile +1\n"
                                 "stat json_v8_profile_unknown_profile +1\n"
                                 "status=ok\n"));
  g_assert_cmpint(stat_total(h, "json_v8_profile_unknown_profile"), ==, 3);
  g_assert_cmpint(stat_total(h, "json_v8_profile_invalid_chunk"), ==, 0);
  g_assert_null(strstr(h->log->str, "sample "));
  g_assert_true(g_str_has_suffix(broken->log->str, "status=error\n"));
  g_assert_cmpint(stat_total(broken, "json_v8_profile_unknown_profile"), ==,
                  3);
  g_assert_null(strstr(broken->log->str, "sample "));
  json_host_free(h);
  json_host_free(broken);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  if (!json_host_load_readers(false))
    return 1;

  g_test_add_func("/json-reader/v8-profile/chunks-become-samples-on-one-timeline",
                  test_v8_profile_chunks_become_samples);
  g_test_add_func("/json-reader/v8-profile/children-lists-give-parents",
                  test_v8_profile_children_lists_give_parents);
  g_test_add_func("/json-reader/v8-profile/broken-parent-chains-are-counted",
                  test_v8_profile_broken_chains_are_counted);
  g_test_add_func("/json-reader/v8-profile/chunks-before-their-profile-are-dropped",
                  test_v8_profile_chunks_before_their_profile_are_dropped);
  g_test_add_func("/json-reader/v8-profile/chunks-without-profile-are-counted",
                  test_v8_profile_chunks_without_profile_are_counted);

  int result = g_test_run();
  json_host_unload_readers();
  return result;
}
