/*
 * End-to-end: descriptor tracks of Perfetto protobuf traces through the
 * CLI: unnamed process child tracks, siblings merged by name or key (or
 * not, with SIBLING_MERGE_BEHAVIOR_NONE), a descriptor that changes the
 * merge refused, and the real traces making no merged track. Fixtures are
 * tests/data/proto/'s text protobuf files, encoded at build time. Beside
 * it: test_e2e_proto.c and test_e2e_proto_legacy.c.
 */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "corpus.h"
#include "e2e_support.h"

/* Process children without a name (unnamed_child_track.textproto,
 * docs/formats.md §1.9): issue 10 §3 says a process's child track without
 * a name has a NULL name, which is what trace_processor's track table
 * stores for it (a viewer may show a label taken from its slices). The
 * process's own track (uuid 1, made with its first child, no event, no
 * name) is made as the file is read; the merged children after, in event
 * order. At 1000 "work" needs uuid 2: its track holds the slice, its name
 * stays NULL. At 3000 "step" needs uuid 4 "leaf", whose parent uuid 3 is
 * first needed as a parent (no event, NULL, no slice) and is made before
 * it; leaf's parent_id is uuid 3's track. A process parent scopes a child
 * without being its parent_id. */
static void test_unnamed_process_child_tracks_have_a_null_name(void) {
  g_autofree char *tracks = e2e_query_proto_fixture("unnamed_child_track",
      "SELECT t.id, t.type, t.name, p.pid, t.parent_id, (SELECT count(*) FROM slice s "
      "WHERE s.track_id = t.id) AS slices FROM process_track t JOIN process p USING (upid) "
      "ORDER BY t.id");
  e2e_assert_text(tracks, "\"id\",\"type\",\"name\",\"pid\",\"parent_id\",\"slices\"\n"
                          "0,\"process_track_event\",\"[NULL]\",10,\"[NULL]\",0\n"
                          "1,\"process_merged_track_event\",\"[NULL]\",10,\"[NULL]\",1\n"
                          "2,\"process_merged_track_event\",\"[NULL]\",10,\"[NULL]\",0\n"
                          "3,\"process_merged_track_event\",\"leaf\",10,2,1\n");
}

/* Unnamed siblings (unnamed_siblings.textproto works out every row): the
 * rule we follow is trace_processor's merge key with issue 10 §3's name.
 * An unnamed child merges by the name of the event that first needs it,
 * with unnamed and named siblings alike, so the sets and their tracks are
 * the ones the reference makes; a track an unnamed uuid made has a NULL
 * name, one a named uuid made its name. Made as the file is read: the
 * process's own track (0), the thread's (1), the NONE child (2); then the
 * merged ones in event order: "job" 1000 (3, later 3's slice too), "other"
 * 1500 (4), "job" 3500 (5), "named" 3600 on the named uuid (6, "job"),
 * the thread's child at 5000 (7), the global "Group" made as the parent
 * of "g" (8) before it (9, parent_id 8), the parentless "top" (10, named
 * after its event), the key set "k" (11 by the unnamed uuid, 12 "Keyed"). */
static void test_unnamed_siblings_merge_by_their_first_event_with_null_names(void) {
  g_autofree char *tracks = e2e_query_proto_fixture("unnamed_siblings",
      "SELECT t.id, t.type, t.name, t.parent_id, t.track_group_id, (SELECT group_concat(name) "
      "FROM (SELECT name FROM slice s WHERE s.track_id = t.id ORDER BY ts)) AS slices "
      "FROM track t ORDER BY t.id");
  e2e_assert_text(tracks,
      "\"id\",\"type\",\"name\",\"parent_id\",\"track_group_id\",\"slices\"\n"
      "0,\"process_track_event\",\"[NULL]\",\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
      "1,\"thread_execution\",\"[NULL]\",\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
      "2,\"process_track_event\",\"[NULL]\",\"[NULL]\",\"[NULL]\",\"solo\"\n"
      "3,\"process_merged_track_event\",\"[NULL]\",\"[NULL]\",0,\"job,job\"\n"
      "4,\"process_merged_track_event\",\"[NULL]\",\"[NULL]\",1,\"other\"\n"
      "5,\"process_merged_track_event\",\"[NULL]\",\"[NULL]\",0,\"job\"\n"
      "6,\"process_merged_track_event\",\"job\",\"[NULL]\",0,\"named\"\n"
      "7,\"thread_merged_track_event\",\"[NULL]\",\"[NULL]\",2,\"t\"\n"
      "8,\"global_merged_track_event\",\"Group\",\"[NULL]\",3,\"[NULL]\"\n"
      "9,\"global_merged_track_event\",\"[NULL]\",8,4,\"g\"\n"
      "10,\"global_merged_track_event\",\"top\",\"[NULL]\",5,\"top\"\n"
      "11,\"process_merged_track_event\",\"[NULL]\",\"[NULL]\",6,\"kk\"\n"
      "12,\"process_merged_track_event\",\"Keyed\",\"[NULL]\",6,\"kn\"\n");
}

/* Sibling merging (sibling_merge.textproto works out every row): the
 * process's own track and the NONE track "Req" are made as the file is
 * read; the merged ones in event order. The three "Req" siblings merged by
 * name need two tracks (3 overlaps 2; 4 takes 2's once both ended); the
 * global "Req", the key-merged "Req" and the process's name-merged "Req"
 * stay apart; siblings of one key (string or int) share a track named
 * after the one whose event made it. Each set has its own group id. */
static void test_siblings_merge_by_name_or_key_unless_none(void) {
  g_autofree char *tracks = e2e_query_proto_fixture("sibling_merge",
      "SELECT t.id, t.type, t.name, t.track_group_id, (SELECT group_concat(name) FROM "
      "(SELECT name FROM slice s WHERE s.track_id = t.id ORDER BY ts)) AS slices "
      "FROM track t ORDER BY t.id");
  e2e_assert_text(tracks,
      "\"id\",\"type\",\"name\",\"track_group_id\",\"slices\"\n"
      "0,\"process_track_event\",\"[NULL]\",\"[NULL]\",\"[NULL]\"\n"
      "1,\"process_track_event\",\"Req\",\"[NULL]\",\"r5\"\n"
      "2,\"process_merged_track_event\",\"Req\",0,\"r2,r4\"\n"
      "3,\"global_merged_track_event\",\"Req\",1,\"g9\"\n"
      "4,\"process_merged_track_event\",\"Req\",0,\"r3\"\n"
      "5,\"process_merged_track_event\",\"GET /a\",2,\"get,post\"\n"
      "6,\"process_merged_track_event\",\"Req\",3,\"k8\"\n"
      "7,\"process_merged_track_event\",\"A\",4,\"a,b\"\n");
  /* Nothing dropped or counted: 10 slices, no stat. */
  g_autofree char *stats = e2e_query_proto_fixture("sibling_merge",
      "SELECT (SELECT count(*) FROM slice) AS slices, (SELECT count(*) FROM stats "
      "WHERE value > 0) AS stats");
  e2e_assert_text(stats, "\"slices\",\"stats\"\n10,0\n");
}

/* A later descriptor of a uuid that merges otherwise than the first is
 * refused and counted, as trace_processor's IsForSameTrack refuses it
 * (merge_conflict.textproto): uuid 2 keeps NONE, its own track. */
static void test_descriptor_changing_the_merge_is_refused(void) {
  g_autofree char *out = e2e_query_proto_fixture("merge_conflict",
      "SELECT (SELECT type FROM track t JOIN slice s ON s.track_id = t.id) AS type, "
      "(SELECT value FROM stats WHERE name = 'track_descriptor_conflicting_reservation') "
      "AS refused");
  e2e_assert_text(out, "\"type\",\"refused\"\n\"process_track_event\",1\n");
}

/* The real traces with TrackDescriptors have no track that merges: in
 * tokio's (protoc --decode) every TrackEvent names one of the 9 thread
 * descriptors, whose tracks are the threads' own (227 begins and 8
 * instants: 235 slices, all on thread tracks); systing's 219 descriptors
 * have no TrackEvent at all. So neither makes a merged track. */
static void test_real_traces_with_descriptors_make_no_merged_track(void) {
  static const char sql[] =
      "SELECT (SELECT count(*) FROM track WHERE type GLOB '*merged_track_event') AS merged, "
      "(SELECT count(*) FROM slice s JOIN thread_track t ON s.track_id = t.id) AS on_threads, "
      "(SELECT count(*) FROM slice) AS slices";
  g_autofree char *tokio_path = corpus_real_path("proto", "tokio-flight-recorder.pftrace");
  const char *tokio_inputs[] = {tokio_path, NULL};
  g_autofree char *tokio = e2e_query(tokio_inputs, sql);
  e2e_assert_text(tokio, "\"merged\",\"on_threads\",\"slices\"\n0,235,235\n");
  g_autofree char *systing_path = corpus_real_path("proto", "systing-trace.pb");
  const char *systing_inputs[] = {systing_path, NULL};
  g_autofree char *systing = e2e_query(systing_inputs,
      "SELECT count(*) FROM track WHERE type GLOB '*track_event'");
  e2e_assert_text(systing, "\"count(*)\"\n0\n");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/e2e/proto/track-events/unnamed-process-child-tracks-have-a-null-name",
                  test_unnamed_process_child_tracks_have_a_null_name);
  g_test_add_func("/e2e/proto/track-events/unnamed-siblings-merge-by-their-first-event-with-null-names",
                  test_unnamed_siblings_merge_by_their_first_event_with_null_names);
  g_test_add_func("/e2e/proto/track-events/siblings-merge-by-name-or-key-unless-none",
                  test_siblings_merge_by_name_or_key_unless_none);
  g_test_add_func("/e2e/proto/track-events/descriptor-changing-the-merge-is-refused",
                  test_descriptor_changing_the_merge_is_refused);
  g_test_add_func("/e2e/proto/real-traces/descriptors-make-no-merged-track",
                  test_real_traces_with_descriptors_make_no_merged_track);
  return g_test_run();
}
