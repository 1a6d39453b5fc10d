/*
 * libFuzzer target for the TraceConfig parsers (core/config): the input as
 * protobuf text format, then as binary; a config that parses is printed
 * back as text and that text parsed again (which must succeed).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/trace_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  GError *error = NULL;
  tm_trace_config *config =
      tm_trace_config_parse_text((const char *)data, size, "fuzz.pbtx", NULL, &error);
  g_clear_error(&error);
  if (config != NULL) {
    char *text = tm_trace_config_to_text(config);
    tm_trace_config *again =
        tm_trace_config_parse_text(text, strlen(text), "again.pbtx", NULL, &error);
    if (again == NULL) {
      fprintf(stderr, "printed config does not parse: %s\n%s\n", error->message, text);
      abort();
    }
    tm_trace_config_free(again);
    g_free(text);
    tm_trace_config_free(config);
  }
  config = tm_trace_config_parse_binary(data, size, "fuzz.pb", &error);
  g_clear_error(&error);
  if (config != NULL) {
    char *text = tm_trace_config_to_text(config);
    g_free(text);
    tm_trace_config_free(config);
  }
  return 0;
}
