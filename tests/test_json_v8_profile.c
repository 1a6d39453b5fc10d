/*
 * The JSON reader's legacy V8 CPU profiles (`ph: "P"`, plugins/json/
 * json_v8_profile.c): chunks become samples, frames and callsites, read
 * through the fake host (tests/support/json_run.h).
 */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <tracemerge/plugin.h>

#include "json_run.h"

/* --- V8 CPU profiles (ph P) ---------------------------------------------------- */

/* The log's sample lines only, each as
 * "sample t2 of p1 private ts=N cpu=C stack=(root)@->leaf@a.js": its
 * thread with its process, and its callsite as the frames root first,
 * each "function@mapping" ("-": no name). The JSON reader gives a mapping
 * only its url and a frame no pc: the rows must say so. */
static char *sample_lines(json_run *h) {
  g_autoptr(GHashTable) rows = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GHashTable) threads = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  GString *out = g_string_new(NULL);
  g_auto(GStrv) lines = g_strsplit(h->log->str, "\n", -1);
  for (char **line = lines; *line; line++) {
    char ref[32], name[256], parent[32], frame[32], thread[64], process[64];
    unsigned long long rel_pc;
    int n = 0;
    if (sscanf(*line, "mapping %31s name=%255s build_id=- start=0 end=0 exact_offset=0 "
                      "load_bias=0%n", ref, name, &n) == 2 && (*line)[n] == '\0') {
      g_hash_table_insert(rows, g_strdup(ref), g_strdup(name));
    } else if (g_str_has_prefix(*line, "mapping ")) {
      g_error("a mapping with more than a url: %s", *line);
    } else if (g_str_has_prefix(*line, "frame ")) {
      /* "frame S2 name=<function, may hold spaces> mapping=S1 rel_pc=0" */
      const char *fields = strstr(*line, " mapping=");
      g_assert_nonnull(fields);
      g_assert_cmpint(sscanf(fields, " mapping=%31s rel_pc=%llu", parent, &rel_pc), ==, 2);
      g_assert_cmpuint(rel_pc, ==, 0);
      g_assert_cmpint(sscanf(*line, "frame %31s name=", ref), ==, 1);
      const char *function = strstr(*line, " name=") + 6;
      const char *mapping = g_hash_table_lookup(rows, parent);
      g_assert_nonnull(mapping);
      g_hash_table_insert(rows, g_strdup(ref),
                          g_strdup_printf("%.*s@%s", (int)(fields - function), function,
                                          mapping));
    } else if (sscanf(*line, "callsite %31s parent=%31s frame=%31s", ref, parent, frame) == 3) {
      const char *up = g_hash_table_lookup(rows, parent);
      const char *f = g_hash_table_lookup(rows, frame);
      g_assert_nonnull(f);
      g_assert_true(up || g_str_equal(parent, "S0"));
      g_hash_table_insert(rows, g_strdup(ref),
                          up ? g_strdup_printf("%s>%s", up, f) : g_strdup(f));
    } else if (sscanf(*line, "thread %63s of %63s", thread, process) == 2) {
      g_hash_table_insert(threads, g_strdup(thread), g_strdup(process));
    } else if (g_str_has_prefix(*line, "sample ")) {
      char clock[64], callsite[32];
      long long ts;
      int cpu;
      g_assert_cmpint(sscanf(*line, "sample %63s %63s ts=%lld callsite=%31s cpu=%d%n", thread,
                             clock, &ts, callsite, &cpu, &n), ==, 5);
      g_assert_cmpint((*line)[n], ==, '\0');
      const char *of = g_hash_table_lookup(threads, thread);
      const char *stack = g_hash_table_lookup(rows, callsite);
      g_assert_nonnull(of);
      g_assert_nonnull(stack);
      g_string_append_printf(out, "sample %s of %s %s ts=%lld cpu=%d stack=%s\n", thread, of,
                             clock, ts, cpu, stack);
    }
  }
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
    "sample t2 of p1 private ts=1010000 cpu=-1 stack=(root)@->leaf@a.js\n"
    "sample t2 of p1 private ts=1015000 cpu=-1 stack=(root)@-\n"
    "sample t2 of p1 private ts=1016000 cpu=-1 stack=(root)@->leaf@a.js>(anonymous)@a.js\n"
    "sample t7 of p7 private ts=2000 cpu=-1 stack=main@-\n"
    "sample t2 of p1 private ts=1022000 cpu=-1 stack=(root)@->leaf@a.js>(anonymous)@a.js\n";

static void test_v8_profile_chunks_become_samples(void) {
  size_t len = strlen(v8_profile_input);
  json_run *whole = read_bytes(v8_profile_input, len, len);
  json_run *bytewise = read_bytes(v8_profile_input, len, 1);
  json_run *yajl = read_bytes_with(reader, "yajl-only", v8_profile_input,
                                    len, 1);
  g_assert_cmpstr(bytewise->log->str, ==, whole->log->str);
  g_assert_cmpstr(yajl->log->str, ==, whole->log->str);
  g_assert_true(g_str_has_suffix(whole->log->str, "status=ok\n"));
  g_autofree char *samples = sample_lines(whole);
  g_assert_cmpstr(samples, ==, v8_profile_samples);
  g_assert_cmpint(stat_total(whole, "json_v8_profile_unknown_node"), ==, 1);
  g_assert_cmpint(stat_total(whole, "json_v8_profile_invalid_chunk"), ==, 1);
  g_assert_cmpint(stat_total(whole, "json_v8_profile_unknown_profile"), ==,
                  1);
  json_run_free(whole);
  json_run_free(bytewise);
  json_run_free(yajl);
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
  json_run *h = read_all_chunkings(input, strlen(input));
  g_autofree char *samples = sample_lines(h);
  g_assert_cmpstr(samples, ==,
                  "sample t1 of p1 private ts=4000 cpu=-1 stack=d@-\n"
                  "sample t1 of p1 private ts=10000 cpu=-1 stack=d@-\n");
  g_assert_cmpint(stat_total(h, "json_v8_profile_unknown_node"), ==, 3);
  g_assert_cmpint(stat_total(h, "json_v8_profile_invalid_chunk"), ==, 2);
  json_run_free(h);
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
  json_run *h = read_all_chunkings(input, strlen(input));
  g_autofree char *samples = sample_lines(h);
  /* No startTime: the Profile event's ts (9 µs) starts the clock. */
  g_assert_cmpstr(samples, ==,
                  "sample t1 of p1 private ts=10000 cpu=-1 stack=a@->b@->c@-\n"
                  "sample t1 of p1 private ts=11000 cpu=-1 stack=a@->d@-\n");
  json_run_free(h);
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
  json_run *h = read_all_chunkings(input, len);
  json_run *yajl = read_bytes_with(reader, "yajl-only", input, len, 1);
  g_assert_cmpstr(yajl->log->str, ==, h->log->str);
  g_assert_true(g_str_has_suffix(h->log->str, "status=ok\n"));
  g_autofree char *samples = sample_lines(h);
  g_assert_cmpstr(samples, ==,
                  "sample t3 of p1 private ts=501000 cpu=-1 stack=(root)@-\n");
  /* No thread line for tid 7, so nothing on it either. */
  g_assert_null(strstr(h->log->str, "thread t7 of "));
  g_assert_cmpint(stat_total(h, "json_v8_profile_unknown_profile"), ==, 2);
  g_assert_cmpint(stat_total(h, "json_v8_profile_unknown_node"), ==, 0);
  g_assert_cmpint(stat_total(h, "json_v8_profile_invalid_chunk"), ==, 0);
  json_run_free(h);
  json_run_free(yajl);
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
  json_run *h = read_all_chunkings(input, len);
  /* The same chunks, then damage: the file fails in feed(). */
  g_autofree char *head = g_strndup(input, len - 2);
  g_autofree char *damaged = g_strconcat(head, ",}\n", NULL);
  json_run *broken = read_bytes(damaged, strlen(damaged), 1);
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
  json_run_free(h);
  json_run_free(broken);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  if (!json_run_load_readers(false))
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
  json_run_unload_readers();
  return result;
}
