/*
 * The protobuf text format driven by protobuf-c descriptors
 * (core/config/textproto.c, textproto_print.c, protowire.c). Expected
 * encodings come from `protoc --encode` of the same text (built next to
 * this test as tests/data/config/NAME.pb): the reference implementation is
 * the oracle, compared after a protobuf-c unpack/pack round, which puts
 * fields in number order and packs packed fields on both sides.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "config/protowire.h"
#include "config/protowire_check.h"
#include "config/textproto.h"
#include "textproto_test.pb-c.h"

static const ProtobufCMessageDescriptor *all_types = &tmtest__all_types__descriptor;

static char *fixture_text(const char *name) {
  g_autofree char *file = g_strdup_printf("%s.textproto", name);
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "config", file, NULL);
  char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  return text;
}

static GBytes *fixture_encoded(const char *name) {
  g_autofree char *file = g_strdup_printf("%s.pb", name);
  g_autofree char *path = g_test_build_filename(G_TEST_BUILT, "data", "config", file, NULL);
  char *data = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(path, &data, &len, NULL));
  g_assert_cmpuint(len, >, 0);
  return g_bytes_new_take(data, len);
}

/* Unpack and pack again: the canonical encoding of the known fields. */
static GBytes *canonical(const uint8_t *data, size_t len) {
  ProtobufCMessage *m = protobuf_c_message_unpack(all_types, NULL, len, data);
  g_assert_nonnull(m);
  size_t n = protobuf_c_message_get_packed_size(m);
  uint8_t *out = g_malloc(n ? n : 1);
  protobuf_c_message_pack(m, out);
  protobuf_c_message_free_unpacked(m, NULL);
  return g_bytes_new_take(out, n);
}

static bool parse(const char *text, tm_textproto_result *out, GError **error) {
  tm_textproto_options options = {"t.pbtx", NULL, NULL};
  return tm_textproto_parse(all_types, text, strlen(text), &options, out, error);
}

static Tmtest__AllTypes *parse_unpacked(const char *text) {
  tm_textproto_result r;
  g_autoptr(GError) error = NULL;
  g_assert_true(parse(text, &r, &error));
  g_assert_no_error(error);
  Tmtest__AllTypes *m = tmtest__all_types__unpack(NULL, r.bytes->len, r.bytes->data);
  g_assert_nonnull(m);
  tm_textproto_result_clear(&r);
  return m;
}

/* Parses `text` and asserts it fails with exactly `message`. */
static void assert_refused(const char *text, const char *message) {
  tm_textproto_result r;
  g_autoptr(GError) error = NULL;
  g_assert_false(parse(text, &r, &error));
  g_assert_nonnull(error);
  g_assert_true(error->domain == TM_CONFIG_ERROR);
  if (strcmp(error->message, message) != 0)
    g_error("for %s\nexpected: %s\nactual:   %s", text, message, error->message);
  g_assert_null(r.bytes);
}

/* --- parsing ----------------------------------------------------------------- */

static void test_every_scalar_type_agrees_with_protoc(void) {
  g_autofree char *text = fixture_text("all_types");
  g_autoptr(GBytes) expected = fixture_encoded("all_types");
  tm_textproto_result r;
  g_autoptr(GError) error = NULL;
  g_assert_true(parse(text, &r, &error));
  g_assert_no_error(error);
  g_assert_cmpuint(r.unknown->len, ==, 0);
  gsize elen;
  const uint8_t *edata = g_bytes_get_data(expected, &elen);
  g_autoptr(GBytes) ours = canonical(r.bytes->data, r.bytes->len);
  g_autoptr(GBytes) theirs = canonical(edata, elen);
  g_assert_true(g_bytes_equal(ours, theirs));

  /* And the values, read back, are the ones the comments promise. */
  Tmtest__AllTypes *m = tmtest__all_types__unpack(NULL, r.bytes->len, r.bytes->data);
  g_assert_cmpint(m->i32, ==, INT32_MIN);
  g_assert_cmpint(m->i64, ==, INT64_MIN);
  g_assert_cmpuint(m->u32, ==, UINT32_MAX);
  g_assert_cmpuint(m->u64, ==, UINT64_MAX);
  g_assert_cmpint(m->s32, ==, -5);
  g_assert_cmpint(m->s64, ==, 15); /* 017 is octal */
  g_assert_cmpuint(m->f64, ==, 16);
  g_assert_cmpfloat(m->fl, ==, 1.5f);
  g_assert_cmpfloat(m->db, ==, -2.5e-3);
  g_assert_true(m->b);
  g_assert_cmpstr(m->s, ==, "tab\there and \"quoted\"\xc3\xa9" "AA\n");
  g_assert_cmpuint(m->by.len, ==, 3);
  g_assert_cmpmem(m->by.data, 3, "\0\377\\", 3);
  g_assert_cmpint(m->color, ==, TMTEST__ALL_TYPES__COLOR__BLUE);
  g_assert_cmpstr(m->child->child->s, ==, "grandchild");
  g_assert_cmpuint(m->n_ri, ==, 4);
  g_assert_cmpint(m->ri[1], ==, -2);
  g_assert_cmpuint(m->n_children, ==, 4);
  g_assert_cmpuint(m->children[3]->u32, ==, 4);
  g_assert_cmpstr(m->rs[1], ==, "bc");
  g_assert_cmpint(m->choice_case, ==, TMTEST__ALL_TYPES__CHOICE_ONE_B);
  g_assert_true(isinf(m->rd[0]) && m->rd[0] > 0 && isinf(m->rd[1]) && m->rd[1] < 0);
  tmtest__all_types__free_unpacked(m, NULL);
  tm_textproto_result_clear(&r);
}

static void test_empty_text_is_an_empty_message(void) {
  tm_textproto_result r;
  g_assert_true(parse("  # only a comment\n", &r, NULL));
  g_assert_cmpuint(r.bytes->len, ==, 0);
  tm_textproto_result_clear(&r);
}

static void test_text_need_not_end_with_nul(void) {
  /* "i32: 12" cut after "i32: 1": the parser stops at len. */
  const char text[] = {'i', '3', '2', ':', ' ', '1', '2'};
  tm_textproto_result r;
  g_assert_true(tm_textproto_parse(all_types, text, 6, NULL, &r, NULL));
  Tmtest__AllTypes *m = tmtest__all_types__unpack(NULL, r.bytes->len, r.bytes->data);
  g_assert_cmpint(m->i32, ==, 1);
  tmtest__all_types__free_unpacked(m, NULL);
  tm_textproto_result_clear(&r);
}

static void test_nan_and_float_spellings(void) {
  Tmtest__AllTypes *m = parse_unpacked("db: nan fl: -Infinity rd: [.5, 5., 1E2, 7f]");
  g_assert_true(isnan(m->db));
  g_assert_true(isinf(m->fl) && m->fl < 0);
  g_assert_cmpfloat(m->rd[0], ==, 0.5);
  g_assert_cmpfloat(m->rd[1], ==, 5.0);
  g_assert_cmpfloat(m->rd[2], ==, 100.0);
  g_assert_cmpfloat(m->rd[3], ==, 7.0);
  tmtest__all_types__free_unpacked(m, NULL);
}

static void test_positions_name_line_and_column(void) {
  tm_textproto_result r;
  g_assert_true(parse("i32: 1\n  children {\n    u32: 2 }\nchildren { child { s: \"x\" } }", &r,
                      NULL));
  const char *expected[][3] = {{"i32", "1", "1"},
                               {"children[0]", "2", "3"},
                               {"children[0].u32", "3", "5"},
                               {"children[1]", "4", "1"},
                               {"children[1].child", "4", "12"},
                               {"children[1].child.s", "4", "20"}};
  g_assert_cmpuint(r.positions->len, ==, G_N_ELEMENTS(expected));
  for (size_t i = 0; i < G_N_ELEMENTS(expected); i++) {
    const tm_textproto_position *pos = r.positions->pdata[i];
    g_assert_cmpstr(pos->path, ==, expected[i][0]);
    g_assert_cmpuint(pos->line, ==, (guint)atoi(expected[i][1]));
    g_assert_cmpuint(pos->column, ==, (guint)atoi(expected[i][2]));
  }
  /* An absent field is found at its nearest enclosing one. */
  const tm_textproto_position *near = tm_textproto_find_position(&r, "children[1].child.u64");
  g_assert_cmpstr(near->path, ==, "children[1].child");
  g_assert_null(tm_textproto_find_position(&r, "u64"));
  tm_textproto_result_clear(&r);
}

/* --- unknown fields ------------------------------------------------------------ */

static void test_unknown_named_field_is_skipped_and_reported(void) {
  tm_textproto_result r;
  g_assert_true(parse("i32: 1\nchild {\n  ftrace_config { ftrace_events: \"sched\" x: [1, {y: 2}] }\n}\n"
                      "later: 'v' \"w\"\n[ext.name]: 3\nu32: 2",
                      &r, NULL));
  g_assert_cmpuint(r.unknown->len, ==, 3);
  const tm_textproto_unknown *u = r.unknown->pdata[0];
  g_assert_cmpstr(u->path, ==, "child");
  g_assert_cmpstr(u->name, ==, "ftrace_config");
  g_assert_cmpuint(u->line, ==, 3);
  g_assert_cmpuint(u->column, ==, 3);
  g_assert_cmpstr(u->text, ==, "ftrace_config { ftrace_events: \"sched\" x: [1, {y: 2}] }");
  u = r.unknown->pdata[1];
  g_assert_cmpstr(u->path, ==, "");
  g_assert_cmpstr(u->text, ==, "later: 'v' \"w\"");
  u = r.unknown->pdata[2];
  g_assert_cmpstr(u->name, ==, "[ext.name]");
  /* The known fields around them are all there. */
  Tmtest__AllTypes *m = tmtest__all_types__unpack(NULL, r.bytes->len, r.bytes->data);
  g_assert_cmpint(m->i32, ==, 1);
  g_assert_cmpuint(m->u32, ==, 2);
  g_assert_nonnull(m->child);
  tmtest__all_types__free_unpacked(m, NULL);
  tm_textproto_result_clear(&r);
}

static void test_numbered_field_is_encoded_by_its_shape(void) {
  /* 100 { 1: 7 2: "s" } is field 100, a message of a varint 7 and bytes
   * "s": 0xa2 0x06 (tag 100<<3|2), length 5, 0x08 0x07, 0x12 0x01 's';
   * 3: -1 is the ten-byte varint of 2^64 - 1; 14 names the known field s. */
  tm_textproto_result r;
  g_assert_true(parse("100 { 1: 7 2: \"s\" } 101: -1 14: \"known\" 102: [true, false]", &r, NULL));
  static const uint8_t expected[] = {
      0xa2, 0x06, 0x05, 0x08, 0x07, 0x12, 0x01, 's',
      0xa8, 0x06, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
      0x72, 0x05, 'k', 'n', 'o', 'w', 'n',
      0xb0, 0x06, 0x01, 0xb0, 0x06, 0x00};
  g_assert_cmpmem(r.bytes->data, r.bytes->len, expected, sizeof expected);
  tm_textproto_result_clear(&r);
}

static const ProtobufCFieldDescriptor *resolve_plugin_block(void *user,
                                                            const ProtobufCMessageDescriptor *m,
                                                            const char *name) {
  (void)m;
  /* The plugin says: my config is field 500, a message of type AllTypes. */
  static ProtobufCFieldDescriptor fd;
  fd = (ProtobufCFieldDescriptor){.name = "my_plugin_config", .id = 500,
                                  .label = PROTOBUF_C_LABEL_OPTIONAL,
                                  .type = PROTOBUF_C_TYPE_MESSAGE,
                                  .descriptor = &tmtest__all_types__descriptor};
  (*(int *)user)++;
  return strcmp(name, "my_plugin_config") == 0 ? &fd : NULL;
}

static void test_resolver_names_a_plugin_block(void) {
  int calls = 0;
  tm_textproto_options options = {"p.pbtx", resolve_plugin_block, &calls};
  const char *text = "my_plugin_config { u32: 3 color: GREEN } other { }";
  tm_textproto_result r;
  g_assert_true(tm_textproto_parse(all_types, text, strlen(text), &options, &r, NULL));
  g_assert_cmpint(calls, ==, 2);
  /* Field 500 (0xa2 0x1f), 4 bytes: u32 3 (0x18 0x03), color 1 (0x80 0x01 0x01). */
  static const uint8_t expected[] = {0xa2, 0x1f, 0x05, 0x18, 0x03, 0x80, 0x01, 0x01};
  g_assert_cmpmem(r.bytes->data, r.bytes->len, expected, sizeof expected);
  g_assert_cmpuint(r.unknown->len, ==, 1);
  tm_textproto_result_clear(&r);
}

/* --- errors ------------------------------------------------------------------ */

static void test_errors_name_line_and_column(void) {
  assert_refused("i32: 1\ncolor: PURPLE",
                 "t.pbtx:2:8: unknown value 'PURPLE' for color (enum tmtest.AllTypes.Color; "
                 "expected one of BLUE, RED, GREEN)");
  assert_refused("color: 5",
                 "t.pbtx:1:8: unknown value 5 for color (enum tmtest.AllTypes.Color; expected "
                 "one of BLUE, RED, GREEN)");
  assert_refused("u32: 4294967296", "t.pbtx:1:6: 4294967296 is out of range for u32 (uint32)");
  assert_refused("u32: -1", "t.pbtx:1:6: -1 is out of range for u32 (uint32)");
  assert_refused("i32: -2147483649", "t.pbtx:1:6: -2147483649 is out of range for i32 (int32)");
  assert_refused("u64: 18446744073709551616",
                 "t.pbtx:1:6: 18446744073709551616 is out of range for u64 (uint64)");
  assert_refused("i32: \"7\"", "t.pbtx:1:6: i32 wants an integer, found a string");
  assert_refused("i32: 1.5", "t.pbtx:1:6: i32 wants an integer, found number 1.5");
  assert_refused("i32: 08", "t.pbtx:1:6: i32 wants an integer, found number 08");
  assert_refused("b: yes", "t.pbtx:1:4: b wants true or false, found 'yes'");
  assert_refused("db: \"x\"", "t.pbtx:1:5: db wants a number, found a string");
  assert_refused("db: 0x1p3", "t.pbtx:1:5: db wants a number, found number 0x1p3");
  assert_refused("s: 5", "t.pbtx:1:4: s wants a string, found number 5");
  assert_refused("s: \"\\xff\"", "t.pbtx:1:4: s wants UTF-8 text");
  assert_refused("color: \"RED\"", "t.pbtx:1:8: color wants an enum value, found a string");
  assert_refused("i32: 1 i32: 2",
                 "t.pbtx:1:8: i32 is set twice (first at line 1, column 1); it is not repeated");
  assert_refused("one_a: \"x\"\none_b: 1",
                 "t.pbtx:2:1: one_b and one_a (line 1) are alternatives (a oneof): set only one");
  assert_refused("i32: [1]", "t.pbtx:1:6: i32 is not repeated: it takes one value, not a list");
  assert_refused("i32 1", "t.pbtx:1:5: expected ':' after i32, found number 1");
  assert_refused("child: 3", "t.pbtx:1:8: expected '{' after child, found number 3");
  assert_refused("child { i32: 1", "t.pbtx:1:7: this block is not closed: expected '}' before "
                                   "the end of the input");
  assert_refused("child < i32: 1 }", "t.pbtx:1:16: expected '>' to close the block, found '}'");
  assert_refused("}", "t.pbtx:1:1: expected a field name, found '}'");
  assert_refused("ri: [1 2]", "t.pbtx:1:8: expected ',' or ']' in a list, found number 2");
  assert_refused("ri: [1,", "t.pbtx:1:5: this list is not closed with ']'");
  assert_refused("s: \"abc\ndef\"", "t.pbtx:1:4: a string is not closed on its line");
  assert_refused("s: \"\\q\"", "t.pbtx:1:5: unknown escape '\\q'");
  assert_refused("s: \"\\x\"", "t.pbtx:1:5: '\\x' without hex digits");
  assert_refused("s: \"\\u12\"", "t.pbtx:1:5: '\\u' needs 4 hex digits");
  assert_refused("s: \"\\ud800\"", "t.pbtx:1:5: '\\u' names no Unicode character");
  assert_refused("s: \"\\777\"", "t.pbtx:1:5: octal escape larger than \\377");
  assert_refused("i32: 1 @", "t.pbtx:1:8: unexpected character '@'");
  assert_refused("i32: 1 \x01", "t.pbtx:1:8: unexpected byte 0x01");
  assert_refused("0: 1", "t.pbtx:1:1: a field number must be a decimal integer from 1 to "
                         "536870911");
  assert_refused("100: 1.5", "t.pbtx:1:6: field 100 is not in the schema: its value must be "
                             "an integer, a string or a block, found number 1.5");
  assert_refused("[ext: 1", "t.pbtx:1:5: expected an extension name and ']'");
  assert_refused("unknown: }", "t.pbtx:1:10: expected a value, found '}'");
}

static void test_nesting_is_bounded(void) {
  /* 65 nested blocks: one more than TM_TEXTPROTO_MAX_DEPTH. */
  GString *deep = g_string_new(NULL);
  for (int i = 0; i <= TM_TEXTPROTO_MAX_DEPTH; i++)
    g_string_append(deep, "child { ");
  g_autofree char *column = g_strdup_printf("t.pbtx:1:%d: blocks nest deeper than %d",
                                            TM_TEXTPROTO_MAX_DEPTH * 8 + 7, TM_TEXTPROTO_MAX_DEPTH);
  assert_refused(deep->str, column);
  g_string_free(deep, TRUE);
  /* Unknown values too: lists of lists of an unknown field. */
  GString *lists = g_string_new("x: ");
  for (int i = 0; i <= TM_TEXTPROTO_MAX_DEPTH; i++)
    g_string_append_c(lists, '[');
  g_autofree char *lcolumn = g_strdup_printf("t.pbtx:1:%d: lists nest deeper than %d",
                                             TM_TEXTPROTO_MAX_DEPTH + 4, TM_TEXTPROTO_MAX_DEPTH);
  assert_refused(lists->str, lcolumn);
  g_string_free(lists, TRUE);
}

/* --- printing --------------------------------------------------------------------- */

static void test_print_parses_back_to_the_same_encoding(void) {
  g_autofree char *text = fixture_text("all_types");
  tm_textproto_result first;
  g_assert_true(parse(text, &first, NULL));
  /* Add unknown fields by number: a varint and a length-delimited one. */
  tm_wire_put_tag(first.bytes, 300, TM_WIRE_VARINT);
  tm_wire_put_varint(first.bytes, 42);
  tm_wire_put_bytes(first.bytes, 301, "raw\n", 4);
  g_autofree char *printed = tm_textproto_print(all_types, first.bytes->data, first.bytes->len);
  g_assert_nonnull(strstr(printed, "300: 42\n301: \"raw\\n\"\n"));
  g_assert_nonnull(strstr(printed, "child {\n  i32: 7\n  child {\n    s: \"grandchild\"\n  }\n}\n"));
  tm_textproto_result second;
  g_autoptr(GError) error = NULL;
  g_assert_true(parse(printed, &second, &error));
  g_assert_no_error(error);
  /* The packed run comes back unpacked; everything else byte for byte. */
  g_autoptr(GBytes) a = canonical(first.bytes->data, first.bytes->len);
  g_autoptr(GBytes) b = canonical(second.bytes->data, second.bytes->len);
  g_assert_true(g_bytes_equal(a, b));
  g_assert_cmpmem(first.bytes->data + first.bytes->len - 10, 10,
                  second.bytes->data + second.bytes->len - 10, 10);
  tm_textproto_result_clear(&first);
  tm_textproto_result_clear(&second);
}

static void test_print_reads_packed_runs(void) {
  g_autoptr(GBytes) encoded = fixture_encoded("all_types"); /* protoc packs packed_i */
  gsize len;
  const uint8_t *data = g_bytes_get_data(encoded, &len);
  g_autofree char *printed = tm_textproto_print(all_types, data, len);
  g_assert_nonnull(strstr(printed, "packed_i: 5\npacked_i: 6\n"));
  g_assert_nonnull(strstr(printed, "colors: RED\ncolors: GREEN\ncolors: BLUE\n"));
  g_assert_nonnull(strstr(printed, "rd: inf\nrd: -inf\nrd: 0\nrd: 1e+300\n"));
}

/* --- binary checks ------------------------------------------------------------------ */

static void assert_wire_refused(const uint8_t *data, size_t len, const char *message) {
  g_autoptr(GError) error = NULL;
  g_assert_false(tm_protowire_check(all_types, data, len, "c.bin", NULL, &error));
  g_assert_nonnull(error);
  if (strcmp(error->message, message) != 0)
    g_error("expected: %s\nactual:   %s", message, error->message);
}

static void test_wire_check_refuses_damage(void) {
  /* i32 (field 1) as a length-delimited value. */
  assert_wire_refused((const uint8_t *)"\x0a\x00", 2,
                      "c.bin: byte 0: i32: wire type 2 where a scalar field has wire type 0");
  /* child (17) as a varint. */
  assert_wire_refused((const uint8_t *)"\x88\x01\x05", 3,
                      "c.bin: byte 0: child: wire type 0 where a message field has wire type 2");
  /* color (16) = 7, not a value of Color. */
  assert_wire_refused((const uint8_t *)"\x80\x01\x07", 3,
                      "c.bin: byte 0: color: unknown value 7 for enum tmtest.AllTypes.Color");
  /* children[1].color = 7: the path names the element. */
  assert_wire_refused((const uint8_t *)"\x9a\x01\x00\x9a\x01\x03\x80\x01\x07", 9,
                      "c.bin: byte 6: children[1].color: unknown value 7 for enum "
                      "tmtest.AllTypes.Color");
  /* A length past the end; a cut varint; field number 0; a group. */
  assert_wire_refused((const uint8_t *)"\x72\x05" "ab", 4,
                      "c.bin: byte 0: a length-delimited field reaches past the end of its "
                      "message");
  assert_wire_refused((const uint8_t *)"\x08\x80", 2,
                      "c.bin: byte 0: a varint is cut short or longer than 10 bytes");
  assert_wire_refused((const uint8_t *)"\x00\x01", 2,
                      "c.bin: byte 0: a field number is 0 or larger than 2^29 - 1");
  assert_wire_refused((const uint8_t *)"\x0b", 1,
                      "c.bin: byte 0: a field has wire type 3, 4, 6 or 7 (groups are not "
                      "supported)");
  /* A packed enum run with an unknown value; a packed double run cut short. */
  assert_wire_refused((const uint8_t *)"\xc2\x01\x02\x01\x09", 5,
                      "c.bin: byte 0: colors[0]: unknown value 9 for enum tmtest.AllTypes.Color");
  assert_wire_refused((const uint8_t *)"\xca\x01\x03\x00\x00\x00", 6,
                      "c.bin: byte 0: rd[0]: a packed run's length is not a multiple of 8");
}

static void test_wire_check_bounds_nesting(void) {
  /* 66 nested `child` messages, built inside out. */
  GByteArray *msg = g_byte_array_new();
  for (int i = 0; i <= TM_TEXTPROTO_MAX_DEPTH + 1; i++) {
    GByteArray *outer = g_byte_array_new();
    tm_wire_put_bytes(outer, 17, msg->data, msg->len);
    g_byte_array_unref(msg);
    msg = outer;
  }
  g_autoptr(GError) error = NULL;
  g_assert_false(tm_protowire_check(all_types, msg->data, msg->len, "c.bin", NULL, &error));
  g_assert_nonnull(strstr(error->message, "messages nest deeper than 64"));
  g_byte_array_unref(msg);
}

static void test_wire_check_lists_unknown_fields(void) {
  /* child { 900: 1 } 901: "x" */
  GByteArray *inner = g_byte_array_new();
  tm_wire_put_tag(inner, 900, TM_WIRE_VARINT);
  tm_wire_put_varint(inner, 1);
  GByteArray *msg = g_byte_array_new();
  tm_wire_put_bytes(msg, 17, inner->data, inner->len);
  tm_wire_put_bytes(msg, 901, "x", 1);
  g_autoptr(GPtrArray) unknown = g_ptr_array_new_with_free_func(tm_textproto_unknown_free);
  g_assert_true(tm_protowire_check(all_types, msg->data, msg->len, "c.bin", unknown, NULL));
  g_assert_cmpuint(unknown->len, ==, 2);
  const tm_textproto_unknown *u = unknown->pdata[0];
  g_assert_cmpstr(u->path, ==, "child");
  g_assert_cmpstr(u->name, ==, "900");
  u = unknown->pdata[1];
  g_assert_cmpstr(u->path, ==, "");
  g_assert_cmpstr(u->name, ==, "901");
  g_byte_array_unref(inner);
  g_byte_array_unref(msg);
}

/* --- hostile inputs ------------------------------------------------------------------ */

/* Random edits of a valid text (bytes replaced, dropped, duplicated,
 * spans repeated), and random bytes, through the parser, the binary check
 * and the printer: each input parses or fails with one located error;
 * nothing reads out of bounds (ASan in CI) or loops. The seed is g_test's,
 * fixed by the test run's --seed when given. */
static void test_random_edits_parse_or_fail_cleanly(void) {
  g_autofree char *text = fixture_text("all_types");
  size_t len = strlen(text);
  static const char alphabet[] = "{}<>[]:;,\"'\\#-.0123456789xeEabcz_ \n\t\x01\x80\xff";
  for (int round = 0; round < 3000; round++) {
    GString *edited = g_string_new_len(text, (gssize)len);
    int edits = g_test_rand_int_range(1, 8);
    for (int k = 0; k < edits && edited->len > 0; k++) {
      gsize at = (gsize)g_test_rand_int_range(0, (gint32)edited->len);
      switch (g_test_rand_int_range(0, 4)) {
      case 0:
        edited->str[at] = alphabet[g_test_rand_int_range(0, sizeof alphabet - 1)];
        break;
      case 1:
        g_string_erase(edited, (gssize)at, 1);
        break;
      case 2:
        g_string_insert_c(edited, (gssize)at, alphabet[g_test_rand_int_range(0, sizeof alphabet - 1)]);
        break;
      default: {
        gsize span = MIN((gsize)g_test_rand_int_range(1, 40), edited->len - at);
        g_autofree char *copy = g_strndup(edited->str + at, span);
        g_string_insert_len(edited, (gssize)at, copy, (gssize)span);
        break;
      }
      }
    }
    tm_textproto_result r;
    g_autoptr(GError) error = NULL;
    tm_textproto_options options = {"h.pbtx", NULL, NULL};
    if (tm_textproto_parse(all_types, edited->str, edited->len, &options, &r, &error)) {
      g_assert_no_error(error);
      /* What parses is a valid encoding that prints and parses again. */
      g_assert_true(tm_protowire_check(all_types, r.bytes->data, r.bytes->len, "h", NULL, NULL));
      g_autofree char *printed = tm_textproto_print(all_types, r.bytes->data, r.bytes->len);
      tm_textproto_result again;
      g_assert_true(tm_textproto_parse(all_types, printed, strlen(printed), &options, &again, NULL));
      tm_textproto_result_clear(&again);
      tm_textproto_result_clear(&r);
    } else {
      g_assert_nonnull(error);
      g_assert_true(g_str_has_prefix(error->message, "h.pbtx:"));
    }
    g_string_free(edited, TRUE);
  }
  /* Random bytes as binary: checked (maybe refused) and printed, never
   * read past their end. */
  for (int round = 0; round < 3000; round++) {
    size_t n = (size_t)g_test_rand_int_range(0, 64);
    uint8_t *bytes = g_malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++)
      bytes[i] = (uint8_t)g_test_rand_int_range(0, 256);
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) unknown = g_ptr_array_new_with_free_func(tm_textproto_unknown_free);
    if (!tm_protowire_check(all_types, bytes, n, "b", unknown, &error))
      g_assert_true(g_str_has_prefix(error->message, "b: byte "));
    g_free(tm_textproto_print(all_types, bytes, n));
    g_free(bytes);
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/textproto/parse/every-scalar-type-agrees-with-protoc",
                  test_every_scalar_type_agrees_with_protoc);
  g_test_add_func("/textproto/parse/empty-text-is-an-empty-message", test_empty_text_is_an_empty_message);
  g_test_add_func("/textproto/parse/text-need-not-end-with-nul", test_text_need_not_end_with_nul);
  g_test_add_func("/textproto/parse/nan-and-float-spellings", test_nan_and_float_spellings);
  g_test_add_func("/textproto/parse/positions-name-line-and-column",
                  test_positions_name_line_and_column);
  g_test_add_func("/textproto/unknown/named-field-is-skipped-and-reported",
                  test_unknown_named_field_is_skipped_and_reported);
  g_test_add_func("/textproto/unknown/numbered-field-is-encoded-by-its-shape",
                  test_numbered_field_is_encoded_by_its_shape);
  g_test_add_func("/textproto/unknown/resolver-names-a-plugin-block",
                  test_resolver_names_a_plugin_block);
  g_test_add_func("/textproto/errors/name-line-and-column", test_errors_name_line_and_column);
  g_test_add_func("/textproto/errors/nesting-is-bounded", test_nesting_is_bounded);
  g_test_add_func("/textproto/print/parses-back-to-the-same-encoding",
                  test_print_parses_back_to_the_same_encoding);
  g_test_add_func("/textproto/print/reads-packed-runs", test_print_reads_packed_runs);
  g_test_add_func("/protowire/check/refuses-damage-with-offset-and-path",
                  test_wire_check_refuses_damage);
  g_test_add_func("/protowire/check/bounds-nesting", test_wire_check_bounds_nesting);
  g_test_add_func("/protowire/check/lists-unknown-fields", test_wire_check_lists_unknown_fields);
  g_test_add_func("/textproto/hostile/random-edits-parse-or-fail-cleanly",
                  test_random_edits_parse_or_fail_cleanly);
  return g_test_run();
}
