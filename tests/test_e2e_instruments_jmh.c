/*
 * End-to-end: the CLI on the three openjdk/jmh xctrace exports. They are
 * GPL-2.0 with the Classpath Exception, so the repository does not carry
 * them (tests/data/real/README.md); they are read from
 * $TRACEMERGE_SHARED_DATA/instruments, and this whole program exits 77
 * (meson: SKIP) when they are not there. What they exercise is also
 * covered by the hand-written exports of tests/data/instruments.
 */
#include <glib.h>

#include "corpus.h"
#include "e2e_support.h"

/* Expected counts were computed with python3's xml.etree from each file,
 * resolving id/ref per element tag: samples = rows with a backtrace or
 * tagged-backtrace; processes = distinct pid of those rows; threads =
 * distinct tid of those rows plus each process's main thread (tid == pid),
 * which trace_processor's row parser creates with the process
 * (UpdateThread, docs/sql-surface.md §10); callsites = distinct outermost-first
 * paths of (frame name, binary, addr - load-addr (-1 unless leaf)); frames =
 * distinct such triples; text-addresses give frames named by hex address (0
 * skipped). */
static void test_jmh_exports_import(void) {
  static const struct {
    const char *file;
    const char *expected;
  } cases[] = {
      {"jmh-cpu-profile.xcode26.4.1.xml", "322,2,1,19,19,2"},
      {"jmh-time-profile.xcode12.5.xml", "98,2,1,52,50,0"},
      {"jmh-time-profile.xcode26.4.1.xml", "85,2,1,49,14,2"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *path = corpus_shared_path_or_skip("instruments", cases[i].file);
    e2e_assert_file_row(path,
                        "SELECT (SELECT count(*) FROM instruments_sample), "
                        "(SELECT count(*) FROM thread WHERE tid != 0), "
                        "(SELECT count(*) FROM process WHERE pid != 0), "
                        "(SELECT count(*) FROM stack_profile_callsite), "
                        "(SELECT count(*) FROM stack_profile_frame), "
                        "(SELECT count(*) FROM stack_profile_mapping)",
                        cases[i].expected);
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/e2e/instruments/jmh/exports-import", test_jmh_exports_import);
  return g_test_run();
}
