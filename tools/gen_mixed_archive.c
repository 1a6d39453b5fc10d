/*
 * A mixed 3-machine archive, as `tracemerge pack` writes one (a ZIP,
 * members deflated, the perfetto_manifest first):
 *
 *   phone_atrace.txt   machine "phone" (the reference): systrace text of
 *                      8 cpus (gen_systrace_text.c), 40% of the events
 *   browser.json       machine "workstation", +1.5 ms: realistic Chrome
 *                      JSON (gen_chrome_json_realistic.c), 30%
 *   server.pftrace     machine "server", -250 us (its BOOTTIME against
 *                      the phone's MONOTONIC): realistic TrackEvent
 *                      proto (gen_proto_trace_realistic.c), 30%
 *
 * The members are generated in the work directory, packed through the
 * library's own tm_pack_manifest / tm_pack_write (so the manifest is what
 * the import checks against), then removed.
 */
#include "gen_mixed_archive.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>

#include <tracemerge/tracemerge.h>

#include "gen_chrome_json.h"
#include "gen_proto_trace.h"
#include "gen_systrace_text.h"

typedef enum member_kind { MEMBER_SYSTRACE, MEMBER_JSON, MEMBER_PROTO } member_kind;

static bool write_member(const char *path, member_kind kind, uint64_t events, uint32_t seed,
                         GError **error) {
  FILE *out = fopen(path, "wb");
  if (!out) {
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot write %s: %s",
                path, g_strerror(errno));
    return false;
  }
  setvbuf(out, NULL, _IOFBF, 1 << 20);
  bool ok;
  if (kind == MEMBER_SYSTRACE) {
    ok = gen_systrace_text_write(out, events, 8, seed, NULL);
  } else if (kind == MEMBER_JSON) {
    gen_chrome_json_options options;
    gen_chrome_json_options_init(&options);
    options.events = events;
    options.seed = seed;
    ok = gen_chrome_json_write_realistic(out, &options, error);
  } else {
    ok = gen_proto_trace_write_realistic(out, events, 16, seed, NULL);
  }
  ok = fclose(out) == 0 && ok;
  if (!ok && error && !*error)
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_IO, "writing %s failed", path);
  return ok;
}

bool gen_mixed_archive_write(const char *path, const char *workdir, uint64_t events,
                             uint32_t seed, GError **error) {
  static const char *const names[] = {"phone_atrace.txt", "browser.json", "server.pftrace"};
  static const member_kind kinds[] = {MEMBER_SYSTRACE, MEMBER_JSON, MEMBER_PROTO};
  const uint64_t share[] = {events * 4 / 10, events * 3 / 10,
                            events - events * 4 / 10 - events * 3 / 10};
  static const char *const machine_of[] = {"phone", "workstation", "server"};
  char *paths[3] = {NULL, NULL, NULL};
  bool ok = true;
  for (int i = 0; i < 3 && ok; i++) {
    paths[i] = g_build_filename(workdir, names[i], NULL);
    ok = write_member(paths[i], kinds[i], share[i] ? share[i] : 1, seed + (uint32_t)i, error);
  }
  if (ok) {
    tm_pack_file files[3];
    for (int i = 0; i < 3; i++)
      files[i] = (tm_pack_file){paths[i], machine_of[i]};
    tm_pack_machine machines[] = {
        /* systrace text is on MONOTONIC; the proto trace snapshots
         * BOOTTIME and MONOTONIC, so its relation names one; the JSON
         * file's own timeline needs none. */
        {.name = "phone", .clock = "MONOTONIC"},
        {.name = "workstation", .has_offset = true, .offset_ns = 1500000},
        {.name = "server", .has_offset = true, .offset_ns = -250000, .clock = "BOOTTIME"},
    };
    tm_pack_options options = {.files = files, .n_files = 3, .machines = machines,
                               .n_machines = 3};
    char *manifest = tm_pack_manifest(&options, error);
    ok = manifest && tm_pack_write(&options, manifest, path, error);
    g_free(manifest);
  }
  for (int i = 0; i < 3; i++) {
    if (paths[i])
      g_remove(paths[i]);
    g_free(paths[i]);
  }
  return ok;
}
