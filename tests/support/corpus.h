/*
 * Where the tests find the real-world traces.
 *
 * The repository carries the permissively licensed ones in tests/data/real
 * (provenance and licences in its README.md); meson passes that folder as
 * $TRACEMERGE_REAL_DATA. Three copyleft xctrace exports (openjdk/jmh,
 * GPL-2.0 with Classpath Exception) are not in the repository: they are
 * read from $TRACEMERGE_SHARED_DATA (../shared/data beside the source tree)
 * when it is there, and the tests that need them are skipped when not.
 */
#ifndef TM_TEST_CORPUS_H
#define TM_TEST_CORPUS_H

#include <glib.h>

/* The exit status meson reads as "skipped". */
#define CORPUS_EXIT_SKIP 77

/* $TRACEMERGE_REAL_DATA/SUBDIR/FILE; asserts the variable is set and the
 * file exists (a missing repository file is a failure, never a skip).
 * Free with g_free. */
char *corpus_real_path(const char *subdir, const char *file);

/* The bytes of corpus_real_path(SUBDIR, FILE); *len gets their count.
 * Free with g_free. */
char *corpus_real_read(const char *subdir, const char *file, gsize *len);

/* $TRACEMERGE_SHARED_DATA/SUBDIR/FILE. When that file does not exist, the
 * whole test program ends at once with CORPUS_EXIT_SKIP, so call it only
 * from a program (or a `-p` selection of one, see tests/meson.build) whose
 * every test needs the shared corpus: meson then reports it as SKIP and
 * every other test still runs in its own program. Free with g_free. */
char *corpus_shared_path_or_skip(const char *subdir, const char *file);

#endif /* TM_TEST_CORPUS_H */
