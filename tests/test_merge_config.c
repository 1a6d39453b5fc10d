/*
 * A merge session's config (core/config/merge_config.c): reader config
 * blocks sliced byte for byte, the checks against the readers loaded,
 * buffers, file selection by the data sources' filters, the window and
 * trigger fields, and the normalised text.
 *
 * The readers these configs are checked against: "json" (no config
 * block), "example" (block example_config), "test-abi" (abi_test_config).
 */
#include <glib.h>
#include <string.h>

#include "config/merge_config.h"
#include "config/protowire.h"

static const tm_merge_reader readers[] = {
    {"json", NULL},
    {"example", "example_config"},
    {"test-abi", "abi_test_config"},
};

static tm_merge_config *parse_text(const char *text, GError **error) {
  return merge_config_parse((const uint8_t *)text, strlen(text), true, "m.pbtx", readers,
                            G_N_ELEMENTS(readers), error);
}

static tm_merge_config *must_parse(const char *text) {
  g_autoptr(GError) error = NULL;
  tm_merge_config *config = parse_text(text, &error);
  g_assert_no_error(error);
  g_assert_nonnull(config);
  return config;
}

static void assert_refused(const char *text, const char *message) {
  g_autoptr(GError) error = NULL;
  g_assert_null(parse_text(text, &error));
  g_assert_nonnull(error);
  if (strcmp(error->message, message) != 0)
    g_error("for %s\nexpected: %s\nactual:   %s", text, message, error->message);
}

static void assert_block(const tm_merge_source *source, const uint8_t *expected, size_t len) {
  g_assert_true(source->has_reader_config);
  g_assert_cmpmem(source->reader_config, source->reader_config_len, expected, len);
}

/* Numbered fields encode as protobuf: 1: 1000 is tag 0x08 then varint
 * 1000 = 0xe8 0x07; 2: "x" is tag 0x12, length 1, 'x'; 3 { 4: 5 } is tag
 * 0x1a, length 2, then tag 0x20 and 5. */
static void test_a_block_of_numbered_fields_reaches_the_reader_byte_for_byte(void) {
  tm_merge_config *config = must_parse(
      "data_sources { config { name: \"example\" example_config { 1: 1000 2: \"x\" 3 { 4: 5 } } } }");
  static const uint8_t expected[] = {0x08, 0xe8, 0x07, 0x12, 0x01, 'x', 0x1a, 0x02, 0x20, 0x05};
  assert_block(&config->sources[0], expected, sizeof expected);
  g_assert_cmpuint(config->tc->notes->len, ==, 0);
  merge_config_free(config);
}

static void test_a_block_given_as_a_string_is_its_bytes(void) {
  tm_merge_config *config = must_parse(
      "data_sources { config { name: \"example\" example_config: \"1000\\000\\377\" } }");
  static const uint8_t expected[] = {'1', '0', '0', '0', 0x00, 0xff};
  assert_block(&config->sources[0], expected, sizeof expected);
  merge_config_free(config);
}

static void test_reader_config_names_any_readers_block(void) {
  tm_merge_config *config =
      must_parse("data_sources { config { name: \"test-abi\" reader_config: \"ab\" } }");
  assert_block(&config->sources[0], (const uint8_t *)"ab", 2);
  merge_config_free(config);
}

/* A binary config built field by field: the block (field 5000) holds a
 * field no schema here knows (15: 1, tag 0x78) and the DataSourceConfig
 * and the DataSource carry fields unknown to the host's schema (999 and
 * 77): the block arrives exactly as given, and only the two fields the
 * host's schema lacks are noted. */
static void test_a_binary_block_with_unknown_fields_arrives_as_given(void) {
  static const uint8_t block[] = {0x08, 0xe8, 0x07, 0x78, 0x01, 0xfa, 0x01, 0x00};
  g_autoptr(GByteArray) config_msg = g_byte_array_new();
  tm_wire_put_bytes(config_msg, 1, "example", 7);
  tm_wire_put_bytes(config_msg, MERGE_READER_CONFIG_FIELD, block, sizeof block);
  tm_wire_put_tag(config_msg, 999, TM_WIRE_VARINT);
  tm_wire_put_varint(config_msg, 7);
  g_autoptr(GByteArray) source = g_byte_array_new();
  tm_wire_put_bytes(source, 1, config_msg->data, config_msg->len);
  tm_wire_put_bytes(source, 77, "zz", 2);
  g_autoptr(GByteArray) trace_config = g_byte_array_new();
  tm_wire_put_bytes(trace_config, 2, source->data, source->len);
  g_autoptr(GError) error = NULL;
  tm_merge_config *config =
      merge_config_parse(trace_config->data, trace_config->len, false, "m.bin", readers,
                         G_N_ELEMENTS(readers), &error);
  g_assert_no_error(error);
  assert_block(&config->sources[0], block, sizeof block);
  g_assert_cmpuint(config->tc->notes->len, ==, 2);
  for (guint i = 0; i < config->tc->notes->len; i++)
    g_assert_null(strstr(config->tc->notes->pdata[i], "5000"));
  merge_config_free(config);
}

/* Field 5000 as a varint (tag 5000 << 3 = 40000 = c0 b8 02, then 01) is
 * no block: refused, naming the data source. */
static void test_a_block_that_is_not_bytes_is_refused(void) {
  g_autoptr(GByteArray) config_msg = g_byte_array_new();
  tm_wire_put_bytes(config_msg, 1, "example", 7);
  tm_wire_put_tag(config_msg, MERGE_READER_CONFIG_FIELD, TM_WIRE_VARINT);
  tm_wire_put_varint(config_msg, 1);
  g_autoptr(GByteArray) source = g_byte_array_new();
  tm_wire_put_bytes(source, 1, config_msg->data, config_msg->len);
  g_autoptr(GByteArray) trace_config = g_byte_array_new();
  tm_wire_put_bytes(trace_config, 2, source->data, source->len);
  g_autoptr(GError) error = NULL;
  g_assert_null(merge_config_parse(trace_config->data, trace_config->len, false, "m.bin",
                                   readers, G_N_ELEMENTS(readers), &error));
  g_assert_cmpstr(error->message, ==,
                  "m.bin: data_sources[0].config: field 5000 (the reader's config block) must "
                  "be length-delimited bytes");
}

static void test_a_reader_that_is_not_loaded_is_refused(void) {
  assert_refused("data_sources { config { name: \"jsn\" } }",
                 "m.pbtx:1:25: data_sources[0].config.name: no reader named 'jsn' is loaded "
                 "(readers: example, json, test-abi; `tracemerge plugins` lists them)");
}

static void test_a_block_under_another_readers_name_is_refused(void) {
  assert_refused("data_sources { config { name: \"test-abi\" example_config { 1: 2 } } }",
                 "m.pbtx:1:42: data_sources[0].config.example_config: example_config is the "
                 "config block of reader 'example', not of 'test-abi' (write abi_test_config "
                 "{ ... } or reader_config { ... })");
}

static void test_a_block_for_a_reader_without_one_is_refused(void) {
  assert_refused("data_sources { config { name: \"json\" reader_config: \"x\" } }",
                 "m.pbtx:1:38: data_sources[0].config.reader_config: reader 'json' takes no "
                 "config block (its descriptor declares no config_name)");
}

static void test_a_block_given_twice_is_refused(void) {
  assert_refused("data_sources { config { name: \"example\" example_config: \"1\"\n"
                 "  reader_config: \"2\" } }",
                 "m.pbtx:1:16: data_sources[0].config: reader 'example' is given its config "
                 "block twice; give one");
}

static void test_a_target_buffer_out_of_range_is_refused(void) {
  assert_refused("buffers { size_kb: 4 }\n"
                 "data_sources { config { name: \"json\" target_buffer: 1 } }",
                 "m.pbtx:2:38: data_sources[0].config.target_buffer: target_buffer 1 of data "
                 "source \"json\" is out of range: the config has 1 buffer (0..0)");
  assert_refused("data_sources { config { name: \"json\" target_buffer: 0 } }",
                 "m.pbtx:1:38: data_sources[0].config.target_buffer: target_buffer 0 of data "
                 "source \"json\" is out of range: the config has no buffers (add buffers { "
                 "size_kb: ... } or remove target_buffer)");
}

static void test_without_buffers_sources_are_unbounded(void) {
  tm_merge_config *config = must_parse("data_sources { config { name: \"json\" } }");
  g_assert_cmpuint(config->n_buffers, ==, 0);
  g_assert_cmpuint(config->sources[0].buffer, ==, MERGE_NO_BUFFER);
  g_assert_false(config->sources[0].has_reader_config);
  merge_config_free(config);
}

static void test_buffers_have_their_size_and_policy(void) {
  tm_merge_config *config = must_parse(
      "buffers { size_kb: 1024 fill_policy: RING_BUFFER }\n"
      "buffers { size_kb: 2 fill_policy: DISCARD }\n"
      "buffers { size_kb: 3 }\n"
      "data_sources { config { name: \"json\" target_buffer: 1 } }");
  g_assert_cmpuint(config->n_buffers, ==, 3);
  g_assert_cmpuint(config->buffers[0].size_bytes, ==, 1024 * 1024);
  g_assert_false(config->buffers[0].discard);
  g_assert_cmpuint(config->buffers[1].size_bytes, ==, 2048);
  g_assert_true(config->buffers[1].discard);
  g_assert_false(config->buffers[2].discard); /* UNSPECIFIED is RING_BUFFER */
  g_assert_cmpuint(config->sources[0].buffer, ==, 1);
  merge_config_free(config);
}

static const tm_merge_source *select_file(const tm_merge_config *config, const char *reader,
                                          const char *path, const char *machine) {
  g_autofree char *base = g_path_get_basename(path);
  const char *names[] = {path, base};
  return merge_config_select(config, reader, names, 2, machine);
}

static void test_filters_select_files_and_machines(void) {
  tm_merge_config *config = must_parse(
      "data_sources { config { name: \"json\" } producer_name_filter: \"phone.json\" }\n"
      "data_sources { config { name: \"json\" } producer_name_regex_filter: \"server-[0-9]+\" }\n"
      "data_sources { config { name: \"json\" } machine_name_filter: \"edge\" }\n"
      "data_sources { config { name: \"example\" } }");
  /* The base name of a member path matches an exact filter. */
  g_assert_true(select_file(config, "json", "run/phone.json", NULL) == &config->sources[0]);
  /* A regex matches whole names only: "server-12" yes, "my-server-12.json" no. */
  g_assert_true(select_file(config, "json", "x.json", "server-12") == &config->sources[1]);
  g_assert_null(select_file(config, "json", "my-server-12.json", NULL));
  /* machine_name_filter: the machine's name, never the file's. */
  g_assert_true(select_file(config, "json", "a.json", "edge") == &config->sources[2]);
  g_assert_null(select_file(config, "json", "edge", NULL));
  /* No filter: every file of the reader; another reader: no entry. */
  g_assert_true(select_file(config, "example", "a.txt", NULL) == &config->sources[3]);
  g_assert_null(select_file(config, "test-abi", "a.txt", NULL));
  merge_config_free(config);
}

static void test_the_first_entry_that_selects_a_file_wins(void) {
  tm_merge_config *config = must_parse(
      "buffers { size_kb: 4 } buffers { size_kb: 8 }\n"
      "data_sources { config { name: \"example\" target_buffer: 1 example_config: \"7\" }\n"
      "  producer_name_filter: \"slow.txt\" }\n"
      "data_sources { config { name: \"example\" example_config: \"1\" } }");
  const tm_merge_source *slow = select_file(config, "example", "slow.txt", NULL);
  const tm_merge_source *other = select_file(config, "example", "fast.txt", NULL);
  g_assert_cmpuint(slow->buffer, ==, 1);
  assert_block(slow, (const uint8_t *)"7", 1);
  g_assert_cmpuint(other->buffer, ==, 0);
  assert_block(other, (const uint8_t *)"1", 1);
  merge_config_free(config);
}

static void test_window_and_trigger_fields_are_read(void) {
  tm_merge_config *config = must_parse(
      "start_offset_ms: 1500 duration_ms: 250\n"
      "trigger_config { trigger_mode: STOP_TRACING trigger_timeout_ms: 60000\n"
      "  triggers { name: \"jank\" stop_delay_ms: 100 producer_name_regex: \"phone.*\" }\n"
      "  triggers { name: \"crash\" } }");
  g_assert_cmpint(config->start_offset_ns, ==, 1500000000);
  g_assert_cmpint(config->duration_ns, ==, 250000000);
  g_assert_cmpint(config->trigger_mode, ==, MERGE_TRIGGER_STOP);
  g_assert_cmpint(config->trigger_timeout_ns, ==, INT64_C(60000000000));
  g_assert_cmpuint(config->n_triggers, ==, 2);
  g_assert_cmpstr(config->triggers[0].name, ==, "jank");
  g_assert_cmpint(config->triggers[0].stop_delay_ns, ==, 100000000);
  g_assert_true(g_regex_match(config->triggers[0].producer_regex, "phone-1", 0, NULL));
  g_assert_false(g_regex_match(config->triggers[0].producer_regex, "my-phone", 0, NULL));
  g_assert_null(config->triggers[1].producer_regex);
  g_assert_cmpint(config->max_stop_delay_ns, ==, 100000000);
  merge_config_free(config);
}

/* Printed back, the block comes under its reader's name as the string of
 * its bytes, and the text parses to the same bytes. */
static void test_the_normalised_text_parses_back_to_the_same_bytes(void) {
  tm_merge_config *config = must_parse(
      "buffers { size_kb: 4 }\n"
      "data_sources { config { name: \"example\" example_config { 1: 1000 } }\n"
      "  producer_name_filter: \"a\" }\n"
      "data_sources { config { name: \"json\" } }\n"
      "start_offset_ms: 10\n");
  g_autofree char *text = merge_config_to_text(config, readers, G_N_ELEMENTS(readers));
  g_assert_nonnull(strstr(text, "    example_config: \"\\010\\350\\007\"\n"));
  tm_merge_config *again = must_parse(text);
  gsize len1, len2;
  const void *b1 = g_bytes_get_data(config->tc->bytes, &len1);
  const void *b2 = g_bytes_get_data(again->tc->bytes, &len2);
  g_assert_cmpmem(b1, len1, b2, len2);
  merge_config_free(again);
  merge_config_free(config);
}

static void test_fields_a_merge_ignores_are_noted(void) {
  tm_merge_config *config = must_parse("write_into_file: true flush_period_ms: 100\n"
                                       "data_sources { config { name: \"json\" } }");
  g_assert_cmpuint(config->tc->notes->len, ==, 2);
  g_assert_cmpstr(config->tc->notes->pdata[0], ==,
                  "m.pbtx:1:1: write_into_file: ignored by a merge session (the output is "
                  "the command's: query, import -o, export)");
  g_assert_cmpstr(config->tc->notes->pdata[1], ==,
                  "m.pbtx:1:23: flush_period_ms: ignored by a merge session (files are read, "
                  "not recorded)");
  merge_config_free(config);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/merge-config/reader-block/numbered-fields-reach-the-reader-byte-for-byte",
                  test_a_block_of_numbered_fields_reaches_the_reader_byte_for_byte);
  g_test_add_func("/merge-config/reader-block/a-string-is-its-bytes",
                  test_a_block_given_as_a_string_is_its_bytes);
  g_test_add_func("/merge-config/reader-block/reader-config-names-any-readers-block",
                  test_reader_config_names_any_readers_block);
  g_test_add_func("/merge-config/reader-block/binary-with-unknown-fields-arrives-as-given",
                  test_a_binary_block_with_unknown_fields_arrives_as_given);
  g_test_add_func("/merge-config/errors/a-reader-not-loaded", test_a_reader_that_is_not_loaded_is_refused);
  g_test_add_func("/merge-config/errors/a-block-that-is-not-bytes",
                  test_a_block_that_is_not_bytes_is_refused);
  g_test_add_func("/merge-config/errors/a-block-under-another-readers-name",
                  test_a_block_under_another_readers_name_is_refused);
  g_test_add_func("/merge-config/errors/a-block-for-a-reader-without-one",
                  test_a_block_for_a_reader_without_one_is_refused);
  g_test_add_func("/merge-config/errors/a-block-given-twice", test_a_block_given_twice_is_refused);
  g_test_add_func("/merge-config/errors/a-target-buffer-out-of-range",
                  test_a_target_buffer_out_of_range_is_refused);
  g_test_add_func("/merge-config/buffers/none-leaves-sources-unbounded",
                  test_without_buffers_sources_are_unbounded);
  g_test_add_func("/merge-config/buffers/sizes-and-policies", test_buffers_have_their_size_and_policy);
  g_test_add_func("/merge-config/select/filters-select-files-and-machines",
                  test_filters_select_files_and_machines);
  g_test_add_func("/merge-config/select/the-first-entry-that-selects-a-file-wins",
                  test_the_first_entry_that_selects_a_file_wins);
  g_test_add_func("/merge-config/window/fields-are-read", test_window_and_trigger_fields_are_read);
  g_test_add_func("/merge-config/text/normalised-text-parses-back-to-the-same-bytes",
                  test_the_normalised_text_parses_back_to_the_same_bytes);
  g_test_add_func("/merge-config/notes/fields-a-merge-ignores", test_fields_a_merge_ignores_are_noted);
  return g_test_run();
}
