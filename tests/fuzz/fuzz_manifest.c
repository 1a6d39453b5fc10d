/*
 * libFuzzer target for the perfetto_manifest parser (core/input/manifest):
 * detection, the streaming parse in two chunks (split where the first
 * byte says), then resolution against a fixed list of member paths that
 * the seeds' manifests name. Errors are expected outcomes.
 */
#include <stddef.h>
#include <stdint.h>

#include "input/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const members[] = {
    "a.json", "b.json", "c.json", "a.pb", "b.pb", "phone.pb", "relay.pb",
    "server.json", "client.json", "app.json", "t.tsv", NULL,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  (void)manifest_detect(data, size < 512 ? size : 512);
  size_t split = size > 0 ? data[0] % (size + 1) : 0;
  GError *error = NULL;
  tm_manifest_parser *parser = manifest_parser_new();
  tm_manifest *m = NULL;
  if (manifest_parser_feed(parser, data, split, &error) &&
      manifest_parser_feed(parser, data + split, size - split, &error))
    m = manifest_parser_finish(parser, &error);
  manifest_parser_free(parser);
  g_clear_error(&error);
  if (m != NULL) {
    (void)manifest_resolve(m, members, G_N_ELEMENTS(members), &error);
    g_clear_error(&error);
    for (size_t i = 0; i + 1 < G_N_ELEMENTS(members); i++)
      (void)manifest_borrow_file(m, members[i]);
    manifest_free(m);
  }
  return 0;
}
