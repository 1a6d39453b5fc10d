/*
 * TraceConfig loading (core/config/trace_config.c): text and binary, the
 * checks every user of a TraceConfig relies on, unknown fields kept or
 * reported, and each data source's raw config sliced without re-encoding.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "config/protowire.h"
#include "config/trace_config.h"

static tm_trace_config *text_config(const char *text, GError **error) {
  return tm_trace_config_parse_text(text, strlen(text), "c.pbtx", NULL, error);
}

/* Asserts that `text` is refused with `message`; with `prefix_only`, the
 * message must start with it (the rest is GRegex's own wording). */
static void assert_refused_with(const char *text, const char *message, bool prefix_only) {
  g_autoptr(GError) error = NULL;
  tm_trace_config *config = text_config(text, &error);
  g_assert_null(config);
  g_assert_nonnull(error);
  bool same = prefix_only ? g_str_has_prefix(error->message, message)
                          : strcmp(error->message, message) == 0;
  if (!same)
    g_error("for %s\nexpected: %s\nactual:   %s", text, message, error->message);
}

static void assert_text_refused(const char *text, const char *message) {
  assert_refused_with(text, message, false);
}

/* The example of Perfetto's trace configuration documentation
 * (perfetto.dev, "Trace configuration"), as written for the perfetto
 * command line: ftrace_config is not in our
 * schema, so it is skipped and noted, and the rest is read. */
static void test_the_documented_example_parses(void) {
  const char *text =
      "duration_ms: 10000\n"
      "buffers { size_kb: 65536 fill_policy: RING_BUFFER }\n"
      "data_sources {\n"
      "  config {\n"
      "    name: \"linux.ftrace\"\n"
      "    target_buffer: 0\n"
      "    ftrace_config { ftrace_events: \"sched_switch\" ftrace_events: \"sched_wakeup\" }\n"
      "  }\n"
      "}\n";
  g_autoptr(GError) error = NULL;
  tm_trace_config *config = text_config(text, &error);
  g_assert_no_error(error);
  const Perfetto__Protos__TraceConfig *m = config->message;
  g_assert_cmpuint(m->duration_ms, ==, 10000);
  g_assert_cmpuint(m->buffers[0]->size_kb, ==, 65536);
  g_assert_cmpint(m->buffers[0]->fill_policy, ==,
                  PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__FILL_POLICY__RING_BUFFER);
  g_assert_cmpuint(config->n_data_sources, ==, 1);
  g_assert_cmpstr(config->data_sources[0].name, ==, "linux.ftrace");
  g_assert_cmpuint(config->notes->len, ==, 1);
  g_assert_cmpstr(config->notes->pdata[0], ==,
                  "c.pbtx:7:5: data_sources[0].config: unknown field 'ftrace_config' is not in "
                  "this build's schema; skipped (write it by field number to pass it on): "
                  "ftrace_config { ftrace_events: \"sched_switch\" ftrace_events: "
                  "\"sched_wakeup\" }");
  tm_trace_config_free(config);
}

/* A binary config with a field our DataSourceConfig does not know (100,
 * ftrace_config upstream) and one TraceConfig does not know (48): both
 * kept, noted, and the data source's raw bytes are the input's own. */
static void test_binary_keeps_unknown_fields_and_slices_raw_configs(void) {
  GByteArray *dsc = g_byte_array_new();
  tm_wire_put_bytes(dsc, 1, "linux.ftrace", 12);
  tm_wire_put_bytes(dsc, 100, "\x0a\x0csched_switch", 14);
  tm_wire_put_tag(dsc, 2, TM_WIRE_VARINT);
  tm_wire_put_varint(dsc, 1);
  GByteArray *ds = g_byte_array_new();
  tm_wire_put_bytes(ds, 1, dsc->data, dsc->len);
  tm_wire_put_bytes(ds, 2, "probes", 6);
  GByteArray *buffer = g_byte_array_new();
  tm_wire_put_tag(buffer, 1, TM_WIRE_VARINT);
  tm_wire_put_varint(buffer, 64);
  GByteArray *cfg = g_byte_array_new();
  tm_wire_put_bytes(cfg, 1, buffer->data, buffer->len);
  tm_wire_put_bytes(cfg, 1, buffer->data, buffer->len);
  tm_wire_put_bytes(cfg, 2, ds->data, ds->len);
  tm_wire_put_tag(cfg, 48, TM_WIRE_VARINT);
  tm_wire_put_varint(cfg, 5);

  g_autoptr(GError) error = NULL;
  tm_trace_config *config = tm_trace_config_parse_binary(cfg->data, cfg->len, "c.bin", &error);
  g_assert_no_error(error);
  g_assert_cmpuint(config->n_data_sources, ==, 1);
  g_assert_cmpmem(config->data_sources[0].raw_config, config->data_sources[0].raw_config_len,
                  dsc->data, dsc->len);
  g_assert_cmpstr(config->data_sources[0].entry->producer_name_filter[0], ==, "probes");
  g_assert_cmpuint(config->notes->len, ==, 2);
  g_assert_cmpstr(config->notes->pdata[0], ==,
                  "c.bin: data_sources[0].config: field 100 is not in this build's schema; "
                  "kept as given (a data source receives it in its raw config)");
  g_assert_cmpstr(config->notes->pdata[1], ==,
                  "c.bin: field 48 is not in this build's schema; kept as given (a data source "
                  "receives it in its raw config)");
  /* Printed back, the unknown fields show by number. */
  g_autofree char *text = tm_trace_config_to_text(config);
  g_assert_cmpstr(text, ==,
                  "buffers {\n  size_kb: 64\n}\nbuffers {\n  size_kb: 64\n}\n"
                  "data_sources {\n  config {\n    name: \"linux.ftrace\"\n"
                  "    100: \"\\n\\014sched_switch\"\n    target_buffer: 1\n  }\n"
                  "  producer_name_filter: \"probes\"\n}\n48: 5\n");
  tm_trace_config_free(config);
  g_byte_array_unref(dsc);
  g_byte_array_unref(ds);
  g_byte_array_unref(buffer);
  g_byte_array_unref(cfg);
}

/* A field written by number in text reaches the data source's raw bytes. */
static void test_text_numbered_field_reaches_the_raw_config(void) {
  g_autoptr(GError) error = NULL;
  tm_trace_config *config = text_config(
      "buffers { size_kb: 4 }\ndata_sources { config { name: \"gpu\" 1234 { 1: 9 } } }", &error);
  g_assert_no_error(error);
  /* name (0x0a 0x03 "gpu"), then field 1234 (0x92 0x4d) of 2 bytes 0x08 0x09. */
  static const uint8_t expected[] = {0x0a, 0x03, 'g', 'p', 'u', 0x92, 0x4d, 0x02, 0x08, 0x09};
  g_assert_cmpmem(config->data_sources[0].raw_config, config->data_sources[0].raw_config_len,
                  expected, sizeof expected);
  g_assert_cmpuint(config->notes->len, ==, 1);
  g_assert_cmpstr(config->notes->pdata[0], ==,
                  "c.pbtx:2:37: data_sources[0].config: field 1234 is not in this build's "
                  "schema; kept as given (a data source receives it in its raw config)");
  tm_trace_config_free(config);
}

static void test_refusals_say_where_and_why(void) {
  assert_text_refused("duration_ms: 5",
                      "c.pbtx: buffers: a config needs at least one buffer, e.g. buffers { "
                      "size_kb: 4096 fill_policy: RING_BUFFER }");
  assert_text_refused("buffers { size_kb: 4 }\nbuffers { fill_policy: DISCARD }",
                      "c.pbtx:2:1: buffers[1].size_kb: buffer 1 has 0 bytes; give it size_kb > 0");
  assert_text_refused("buffers {\n  size_kb: 0\n}",
                      "c.pbtx:2:3: buffers[0].size_kb: buffer 0 has 0 bytes; give it size_kb > 0");
  assert_text_refused("buffers { size_kb: 4 fill_policy: RING }",
                      "c.pbtx:1:35: unknown value 'RING' for fill_policy (enum "
                      "perfetto.protos.TraceConfig.BufferConfig.FillPolicy; expected one of "
                      "UNSPECIFIED, RING_BUFFER, DISCARD)");
  assert_text_refused("buffers { size_kb: 4 }\nbuffers { size_kb: 4 }\n"
                      "data_sources { config { name: \"track_event\"\n  target_buffer: 2 } }",
                      "c.pbtx:4:3: data_sources[0].config.target_buffer: target_buffer 2 of "
                      "data source \"track_event\" is out of range: the config has 2 buffers "
                      "(0..1)");
  assert_text_refused("buffers { size_kb: 4 }\ndata_sources { config { target_buffer: 0 } }",
                      "c.pbtx:2:1: data_sources[0]: a data source needs config { name: \"...\" }");
  assert_text_refused("buffers { size_kb: 4 }\nduration_ms: 1000\ntrigger_config {\n"
                      "  trigger_mode: START_TRACING\n  triggers { name: \"t\" }\n"
                      "  trigger_timeout_ms: 100\n}",
                      "c.pbtx:2:1: duration_ms: duration_ms and a START_TRACING trigger cannot be "
                      "used together: the trace lasts stop_delay_ms after its trigger (give each "
                      "trigger a stop_delay_ms instead)");
  assert_text_refused("buffers { size_kb: 4 }\ntrigger_config { triggers { name: \"t\" } "
                      "trigger_timeout_ms: 1 }",
                      "c.pbtx:2:1: trigger_config.trigger_mode: a trigger_config needs "
                      "trigger_mode: START_TRACING or STOP_TRACING");
  assert_text_refused("buffers { size_kb: 4 }\ntrigger_config { trigger_mode: CLONE_SNAPSHOT }",
                      "c.pbtx:2:18: trigger_config.trigger_mode: CLONE_SNAPSHOT is not "
                      "supported; use STOP_TRACING");
  assert_text_refused("buffers { size_kb: 4 }\ntrigger_config { trigger_mode: STOP_TRACING "
                      "trigger_timeout_ms: 5 }",
                      "c.pbtx:2:1: trigger_config: a trigger_config needs at least one triggers "
                      "{ name: ... }");
  assert_text_refused("buffers { size_kb: 4 }\ntrigger_config { trigger_mode: STOP_TRACING "
                      "triggers { stop_delay_ms: 1 } trigger_timeout_ms: 5 }",
                      "c.pbtx:2:45: trigger_config.triggers[0]: a trigger needs a name");
  assert_text_refused("buffers { size_kb: 4 }\ntrigger_config { trigger_mode: STOP_TRACING "
                      "triggers { name: \"x\" } }",
                      "c.pbtx:2:1: trigger_config.trigger_timeout_ms: a trigger_config needs "
                      "trigger_timeout_ms > 0 (how long to wait for a trigger)");
  assert_refused_with("buffers { size_kb: 4 }\ndata_sources { config { name: \"a\" }\n"
                      "  producer_name_regex_filter: \"(\" }",
                      "c.pbtx:3:3: data_sources[0].producer_name_regex_filter[0]: '(' is not a "
                      "regular expression: ", true);
  assert_refused_with("buffers { size_kb: 4 }\ntrigger_config { trigger_mode: STOP_TRACING "
                      "triggers { name: \"x\" producer_name_regex: \"[\" } trigger_timeout_ms: 5 }",
                      "c.pbtx:2:66: trigger_config.triggers[0].producer_name_regex: '[' is not a "
                      "regular expression: ", true);
}

static void test_binary_refusals(void) {
  /* buffers { size_kb: 4 fill_policy: 9 }: 9 is no FillPolicy. */
  static const uint8_t bad_enum[] = {0x0a, 0x04, 0x08, 0x04, 0x20, 0x09};
  g_autoptr(GError) error = NULL;
  g_assert_null(tm_trace_config_parse_binary(bad_enum, sizeof bad_enum, "c.bin", &error));
  g_assert_cmpstr(error->message, ==,
                  "c.bin: byte 4: buffers[0].fill_policy: unknown value 9 for enum "
                  "perfetto.protos.TraceConfig.BufferConfig.FillPolicy");
  g_clear_error(&error);
  /* buffers { size_kb: 0 }: the same check as text, without a line. */
  static const uint8_t empty_buffer[] = {0x0a, 0x02, 0x08, 0x00};
  g_assert_null(tm_trace_config_parse_binary(empty_buffer, sizeof empty_buffer, "c.bin", &error));
  g_assert_cmpstr(error->message, ==,
                  "c.bin: buffers[0].size_kb: buffer 0 has 0 bytes; give it size_kb > 0");
  g_clear_error(&error);
  /* Damage: a buffer message that runs past the end. */
  static const uint8_t cut[] = {0x0a, 0x09, 0x08};
  g_assert_null(tm_trace_config_parse_binary(cut, sizeof cut, "c.bin", &error));
  g_assert_cmpstr(error->message, ==,
                  "c.bin: byte 0: a length-delimited field reaches past the end of its message");
}

static void test_files_text_by_suffix_binary_otherwise(void) {
  g_autofree char *dir = g_dir_make_tmp("tm-config-XXXXXX", NULL);
  g_autofree char *text_path = g_build_filename(dir, "c.pbtx", NULL);
  g_autofree char *bin_path = g_build_filename(dir, "c.cfg", NULL);
  g_assert_true(g_file_set_contents(text_path, "buffers { size_kb: 8 }", -1, NULL));
  static const uint8_t bin[] = {0x0a, 0x02, 0x08, 0x10}; /* buffers { size_kb: 16 } */
  g_assert_true(g_file_set_contents(bin_path, (const char *)bin, sizeof bin, NULL));
  g_autoptr(GError) error = NULL;
  tm_trace_config *t = tm_trace_config_load_file(text_path, TM_CONFIG_FORMAT_AUTO, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(t->message->buffers[0]->size_kb, ==, 8);
  g_assert_true(t->from_text);
  tm_trace_config *b = tm_trace_config_load_file(bin_path, TM_CONFIG_FORMAT_AUTO, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(b->message->buffers[0]->size_kb, ==, 16);
  /* Forced text on the binary file: 0x0a is a newline, 0x02 no text. */
  g_assert_null(tm_trace_config_load_file(bin_path, TM_CONFIG_FORMAT_TEXT, NULL, &error));
  g_assert_nonnull(strstr(error->message, "c.cfg:2:1: unexpected byte 0x02"));
  g_clear_error(&error);
  g_autofree char *missing = g_build_filename(dir, "missing.pbtx", NULL);
  g_assert_null(tm_trace_config_load_file(missing, TM_CONFIG_FORMAT_AUTO, NULL, &error));
  g_assert_true(g_error_matches(error, TM_CONFIG_ERROR, TM_CONFIG_ERROR_IO));
  g_assert_nonnull(strstr(error->message, "missing.pbtx: "));
  tm_trace_config_free(t);
  tm_trace_config_free(b);
  g_unlink(text_path);
  g_unlink(bin_path);
  g_rmdir(dir);
}

/* The known fields of a config, packed again by protobuf-c: in field
 * number order, whatever order the text or the bytes had. */
static GBytes *canonical_known_fields(const tm_trace_config *config) {
  const ProtobufCMessage *m = &config->message->base;
  size_t len = protobuf_c_message_get_packed_size(m);
  uint8_t *data = g_malloc(len ? len : 1);
  g_assert_cmpuint(protobuf_c_message_pack(m, data), ==, len);
  return g_bytes_new_take(data, len);
}

/* The shipped configs (the .pbtx files of config/, the examples') read as protobuf's
 * own text-format parser reads them: protoc encoded each file against
 * proto/trace_config.proto at build time (tests/data/config), and this
 * library's text parse of the file and its binary parse of protoc's bytes
 * hold the same message, with nothing unknown on either side. */
static void test_shipped_configs_read_as_protoc_reads_them(void) {
  const char *names[] = {"service", "flight_recorder"};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    g_autofree char *file = g_strdup_printf("%s.pbtx", names[i]);
    g_autofree char *text_path =
        g_test_build_filename(G_TEST_DIST, "..", "config", file, NULL);
    g_autofree char *pb_file = g_strdup_printf("%s.pbtx.pb", names[i]);
    g_autofree char *pb_path = g_test_build_filename(G_TEST_BUILT, "data", "config", pb_file, NULL);
    g_autoptr(GError) error = NULL;
    tm_trace_config *from_text =
        tm_trace_config_load_file(text_path, TM_CONFIG_FORMAT_AUTO, NULL, &error);
    g_assert_no_error(error);
    g_assert_true(from_text->from_text);
    tm_trace_config *from_protoc =
        tm_trace_config_load_file(pb_path, TM_CONFIG_FORMAT_BINARY, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(g_bytes_get_size(from_protoc->bytes), >, 0);
    g_autoptr(GBytes) ours = canonical_known_fields(from_text);
    g_autoptr(GBytes) theirs = canonical_known_fields(from_protoc);
    if (!g_bytes_equal(ours, theirs))
      g_error("%s: this library's text parse and protoc's encoding differ", text_path);
    /* Nothing unknown: every field of the file is one of the schema's. */
    g_assert_cmpuint(from_text->message->base.n_unknown_fields, ==, 0);
    g_assert_cmpuint(from_protoc->message->base.n_unknown_fields, ==, 0);
    tm_trace_config_free(from_text);
    tm_trace_config_free(from_protoc);
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/trace-config/text/the-documented-example-parses",
                  test_the_documented_example_parses);
  g_test_add_func("/trace-config/binary/keeps-unknown-fields-and-slices-raw-configs",
                  test_binary_keeps_unknown_fields_and_slices_raw_configs);
  g_test_add_func("/trace-config/text/numbered-field-reaches-the-raw-config",
                  test_text_numbered_field_reaches_the_raw_config);
  g_test_add_func("/trace-config/refusals/say-where-and-why", test_refusals_say_where_and_why);
  g_test_add_func("/trace-config/refusals/binary", test_binary_refusals);
  g_test_add_func("/trace-config/files/text-by-suffix-binary-otherwise",
                  test_files_text_by_suffix_binary_otherwise);
  g_test_add_func("/trace-config/files/shipped-configs-read-as-protoc-reads-them",
                  test_shipped_configs_read_as_protoc_reads_them);
  return g_test_run();
}
