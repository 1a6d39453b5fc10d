/*
 * The systrace reader's parts without the host: the ftrace line grammar,
 * the wrapper state machine, and the reader's streaming (chunks of any
 * size, lines cut anywhere) through the fake host of tests/support.
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include <tracemerge/plugin.h>

#include "corpus.h"
#include "fake_host.h"
#include "systrace_line.h"
#include "systrace_wrapper.h"

const tm_reader_descriptor *tracemerge_reader_entry(void);

/* --- the line grammar ------------------------------------------------------ */

static systrace_line parse_ok(const char *text) {
  systrace_line l;
  g_assert_true(systrace_line_parse(text, strlen(text), &l));
  return l;
}

static void assert_text(systrace_text t, const char *expected) {
  g_assert_cmpmem(t.p, t.len, expected, strlen(expected));
}

static void test_line_with_tgid_and_flags(void) {
  systrace_line l = parse_ok(
      "  surfaceflinger-601   ( 601) [002] d..2  1234.567890: sched_switch: prev_comm=a  ");
  assert_text(l.task, "surfaceflinger");
  g_assert_cmpint(l.pid, ==, 601);
  g_assert_cmpint(l.tgid, ==, 601);
  g_assert_cmpuint(l.cpu, ==, 2);
  g_assert_cmpint(l.ts_ns, ==, 1234567890000);
  assert_text(l.event, "sched_switch");
  assert_text(l.payload, "prev_comm=a");
}

static void test_line_with_unknown_tgid(void) {
  systrace_line l = parse_ok("<...>-19161 (-----) [001] ...1 683201.354908: tracing_mark_write: E");
  assert_text(l.task, "<...>");
  g_assert_cmpint(l.pid, ==, 19161);
  g_assert_cmpint(l.tgid, ==, SYSTRACE_NO_TGID);
  g_assert_cmpint(l.ts_ns, ==, 683201354908000);
}

static void test_line_without_flags_or_tgid(void) {
  systrace_line l = parse_ok("          <idle>-0     [002]    76.211513: sched_wakeup:          comm=sh");
  assert_text(l.task, "<idle>");
  g_assert_cmpint(l.pid, ==, 0);
  g_assert_cmpint(l.tgid, ==, SYSTRACE_NO_TGID);
  assert_text(l.payload, "comm=sh");
}

static void test_task_may_hold_dashes_and_spaces(void) {
  systrace_line l = parse_ok("Binder-a 2-x-77 [000] 0.000001: 0: C|1|n|2");
  assert_text(l.task, "Binder-a 2-x");
  g_assert_cmpint(l.pid, ==, 77);
  assert_text(l.event, "0");
  g_assert_cmpint(l.ts_ns, ==, 1000);
}

static void test_fraction_digits_beyond_ns_are_truncated(void) {
  systrace_line l = parse_ok("a-1 [000] 1.1234567899: e: x");
  g_assert_cmpint(l.ts_ns, ==, 1123456789);
}

static void test_lines_off_the_grammar_fail(void) {
  static const char *const bad[] = {
      "",
      "no pid here [000] 1.0: e: x",
      "a-1 [000] 1.0 e: x",          /* no ':' after the timestamp */
      "a-1 [000] 1: e: x",           /* no fraction */
      "a-1 [x] 1.0: e: x",           /* cpu not a number */
      "a-1 (12 [000] 1.0: e: x",     /* unclosed tgid */
      "a-1 [000] 1.0: e x",          /* event without ':' */
      "a-1 [000] 99999999999.0: e: x", /* seconds overflow int64 ns */
      "a-99999999999999999999 [000] 1.0: e: x",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    systrace_line l;
    if (systrace_line_parse(bad[i], strlen(bad[i]), &l))
      g_error("parsed although off the grammar: \"%s\"", bad[i]);
  }
}

/* The line's fields are read eight bytes at a time where they are long
 * enough (systrace_line.c): every padding of the task and the tgid column
 * and every length of pid, tgid and fraction must give the fields the
 * text spells. The expected numbers are the digit strings read back by
 * g_ascii_strtoll; the fraction is padded or cut to nine digits first. */
static void test_fields_parse_at_every_length_and_padding(void) {
  static const char digits[] = "918273645546372819";
  for (int pad = 0; pad <= 17; pad++) {
    for (int n = 1; n <= 18; n++) {
      for (int frac_len = 1; frac_len <= 12; frac_len++) {
        g_autofree char *number = g_strndup(digits, (gsize)n);
        g_autofree char *frac = g_strndup("123456789012", (gsize)frac_len);
        g_autofree char *text = g_strdup_printf(
            "%*st-a-sk-%s (%*s%s) [%s] d..2 %*s%s.%s: event_%d: %*sk=v%*s", pad, "", number,
            pad % 9, "", number, number + (n > 5 ? n - 5 : 0), pad % 3, "", number + (n > 6 ? n - 6 : 0),
            frac, n, pad, "", pad % 4, "");
        systrace_line l = parse_ok(text);
        int64_t want = g_ascii_strtoll(number, NULL, 10);
        int64_t want_cpu = g_ascii_strtoll(number + (n > 5 ? n - 5 : 0), NULL, 10);
        int64_t want_secs = g_ascii_strtoll(number + (n > 6 ? n - 6 : 0), NULL, 10);
        char ns[10] = "000000000";
        memcpy(ns, frac, (size_t)MIN(frac_len, 9));
        assert_text(l.task, "t-a-sk");
        g_assert_cmpint(l.pid, ==, want);
        g_assert_cmpint(l.tgid, ==, want);
        g_assert_cmpuint(l.cpu, ==, (uint64_t)want_cpu);
        g_assert_cmpint(l.ts_ns, ==, want_secs * 1000000000 + g_ascii_strtoll(ns, NULL, 10));
        g_autofree char *event = g_strdup_printf("event_%d", n);
        assert_text(l.event, event);
        assert_text(l.payload, "k=v");
      }
    }
  }
  /* Eighteen digits always read (no overflow check for them); twenty
   * overflow int64 and the line fails. */
  g_assert_cmpint(parse_ok("a-999999999999999999 [000] 1.5: e: x").pid, ==, 999999999999999999);
  systrace_line l;
  g_assert_false(systrace_line_parse("a-99999999999999999999 [000] 1.5: e: x", 38, &l));
}

/* systrace_line_parse_memo reads `text` as systrace_line_parse does, the
 * task borrowed from `text` itself. */
static void assert_memo_reads_alike(const char *text, size_t len, systrace_line_memo *memo) {
  systrace_line want, got;
  bool ok = systrace_line_parse(text, len, &want);
  if (systrace_line_parse_memo(text, len, &got, memo) != ok)
    g_error("memo %s \"%.*s\"", ok ? "failed" : "parsed", (int)len, text);
  if (!ok)
    return;
  g_assert_true(got.task.p == want.task.p && got.task.len == want.task.len);
  g_assert_true(got.event.p == want.event.p && got.event.len == want.event.len);
  g_assert_true(got.payload.p == want.payload.p && got.payload.len == want.payload.len);
  g_assert_cmpint(got.pid, ==, want.pid);
  g_assert_cmpint(got.tgid, ==, want.tgid);
  g_assert_cmpuint(got.cpu, ==, want.cpu);
  g_assert_cmpint(got.ts_ns, ==, want.ts_ns);
}

/* A line read after another through the memo of the line before reads as
 * without it: for every ordered pair of lines that share heads (through
 * the cpu's ']'), differ in them, fail after them, or match only from a
 * later dash, and for the real systrace texts line after line. */
static void test_memo_reads_every_line_as_without(void) {
  static const char *const lines[] = {
      "a-1 [000] 1.0: e: x",
      "a-1 [000] x-2 [001] 2.0: f: y", /* first dash fails, the second matches */
      "a-1 [000] 1.0: ev-2[001] 2.0: f: y", /* the same, with the first ... */
      "a-1 [000] 1.0: ev-2[001]: y",        /* ... matching in a line of that head */
      "a-1 [000] 2.5: e: y z",
      "a-1 [000]",
      "a-1 [000] 1.0 e: x",
      "a-1 [000]1.0: e: x",
      "a-1 [000] d..2 1.0: e: x",
      "a-1 [001] 1.0: e: x",
      "b-1 [000] 1.0: e: x",
      "  surfaceflinger-601   ( 601) [002] d..2  1234.567890: sched_switch: prev_comm=a  ",
      "  surfaceflinger-601   ( 601) [002] d..2  1234.567891: tracing_mark_write: E|601",
      "  surfaceflinger-601   ( 601) [002]",
      "<...>-19161 (-----) [001] ...1 683201.354908: tracing_mark_write: E",
      "<...>-19161 (-----) [001] ...1 683201.354909: tracing_mark_write: B|1|x",
      "Binder-a 2-x-77 [000] 0.000001: 0: C|1|n|2",
      "Binder-a 2-x-77 [000] 0.000002: 0: C|1|n|3",
      "                                                                      t-1 [000] 1.0: e: x",
      "                                                                      t-1 [000] 2.0: f: y",
  };
  for (size_t a = 0; a < G_N_ELEMENTS(lines); a++) {
    for (size_t b = 0; b < G_N_ELEMENTS(lines); b++) {
      systrace_line_memo memo = {0};
      assert_memo_reads_alike(lines[a], strlen(lines[a]), &memo);
      /* b at the start of a buffer of its own: heads compared, not pointers */
      g_autofree char *copy = g_strdup(lines[b]);
      assert_memo_reads_alike(copy, strlen(copy), &memo);
      assert_memo_reads_alike(lines[a], strlen(lines[a]), &memo);
    }
  }
  static const char *const files[] = {"catapult-atrace_data.txt", "lisa-trace-cmd-report.txt",
                                      "catapult-decompressed_atrace_data.txt"};
  for (size_t f = 0; f < G_N_ELEMENTS(files); f++) {
    gsize len;
    g_autofree char *data = corpus_real_read("systrace", files[f], &len);
    systrace_line_memo memo = {0};
    size_t lines_read = 0, memo_kept = 0;
    for (char *line = data; line < data + len;) {
      char *nl = memchr(line, '\n', (size_t)(data + len - line));
      size_t n = nl ? (size_t)(nl - line) : (size_t)(data + len - line);
      assert_memo_reads_alike(line, n, &memo);
      lines_read++;
      memo_kept += memo.head_len != 0;
      line += n + 1;
    }
    /* all but the comment lines before the first data line */
    g_assert_cmpuint(memo_kept + 20, >, lines_read);
  }
}

static void test_int64_parse(void) {
  int64_t v = 0;
  g_assert_true(systrace_parse_int64((systrace_text){"-42", 3}, &v));
  g_assert_cmpint(v, ==, -42);
  g_assert_false(systrace_parse_int64((systrace_text){"2.5", 3}, &v));
  g_assert_false(systrace_parse_int64((systrace_text){"", 0}, &v));
  g_assert_false(systrace_parse_int64((systrace_text){"-", 1}, &v));
}

/* --- the wrapper --------------------------------------------------------------- */

/* Runs the lines of `text` through a wrapper; returns the data lines,
 * each followed by "\n". */
static char *data_lines(const char *text) {
  systrace_wrapper w = {0};
  GString *out = g_string_new(NULL);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (size_t i = 0; lines[i]; i++) {
    size_t len = strlen(lines[i]);
    if (systrace_wrapper_line(&w, lines[i], &len) == LINE_DATA) {
      g_string_append_len(out, lines[i], (gssize)len);
      g_string_append_c(out, '\n');
    }
  }
  return g_string_free(out, FALSE);
}

static void test_wrapper_plain_headers_are_skipped(void) {
  g_autofree char *out = data_lines(
      "\nversion = 6\ncpus=6\n# tracer: nop\nA\n\n#x\ncpus=6\nB");
  /* A header-looking line after data is data (and will fail to parse). */
  g_assert_cmpstr(out, ==, "A\ncpus=6\nB\n");
}

static void test_wrapper_html_blocks(void) {
  g_autofree char *out = data_lines(
      "<html>\n<script class=\"trace-data\" type=\"application/text\">\n"
      "PROCESS DUMP\nx\n</script>\n"
      "<script class=\"trace-data\" type=\"application/text\">\n"
      "# TASK-PID\nA\nB  </script>\nC\n"
      "<script class=\"trace-data\">\n# TASK-PID\nD\n</script>\n"
      "<script class=\"trace-data\">\n{\"json\": 1}\n</script>\n"
      "<script class=\"trace-data\">\n# tracer: nop\nE\n</script>");
  /* Every ftrace block is read (issue 11), also one without the TASK-PID
   * legend after '#' header lines (E); a JSON block is not; C lies between
   * blocks. */
  g_assert_cmpstr(out, ==, "A\nB  \nD\nE\n");
}

static void test_wrapper_legacy_string_unescapes(void) {
  g_autofree char *out = data_lines(
      "<!DOCTYPE html>\nvar linuxPerfData = \"\\\n# tracer\\n\\\n"
      "A \\\"q\\\"\\n\\\nB\\n\";\nC");
  g_assert_cmpstr(out, ==, "A \"q\"\nB\n");
}

/* --- streaming through the shared fake host (tests/support) ---------------- */

static fake_host *run_reader(const char *data, size_t len, size_t chunk,
                             tm_status expected) {
  fake_host *fake = fake_host_new();
  g_assert_cmpint(fake_host_run(fake, tracemerge_reader_entry(),
                                (const uint8_t *)data, len, chunk),
                  ==, expected);
  return fake;
}

/* Events the reader emitted: transcript lines of these kinds. */
static size_t events(const fake_host *fake) {
  static const char *const kinds[] = {"sched_switch ", "sched_waking ",
                                      "counter ", "slice_begin ",
                                      "slice_end "};
  size_t n = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++)
    n += fake_host_count_lines(fake, kinds[i]);
  return n;
}

static void test_any_chunking_reads_the_same_events(void) {
  /* lisa's trace-cmd report: grep -c ' sched_switch: ' = 1856,
   * ' sched_wakeup: ' = 1068, ' print: ' = 14 (none an atrace payload). */
  gsize len = 0;
  g_autofree char *data = corpus_real_read("systrace", "lisa-trace-cmd-report.txt", &len);
  static const size_t chunks[] = {1, 7, 4096, 1 << 30};
  for (size_t i = 0; i < G_N_ELEMENTS(chunks); i++) {
    fake_host *fake = run_reader(data, len, chunks[i], TM_OK);
    g_assert_cmpuint(fake_host_count_lines(fake, "sched_switch "), ==, 1856);
    g_assert_cmpuint(fake_host_count_lines(fake, "sched_waking "), ==, 1068);
    g_assert_cmpint(fake_host_stat(fake, "systrace_parse_failure"), ==, 14);
    g_assert_null(fake_host_borrow_error(fake, NULL));
    fake_host_free(fake);
  }
}

/* Whole lines of plain text are read where they lie in the chunk, lines
 * cut by a chunk's end through the reader's buffer: both give the same
 * calls, in the same order. */
static void test_lines_in_place_or_copied_make_the_same_calls(void) {
  gsize len = 0;
  g_autofree char *data = corpus_real_read("systrace", "lisa-trace-cmd-report.txt", &len);
  fake_host *copied = run_reader(data, len, 1, TM_OK);
  static const size_t chunks[] = {100, 4096, 1 << 30};
  for (size_t i = 0; i < G_N_ELEMENTS(chunks); i++) {
    fake_host *fake = run_reader(data, len, chunks[i], TM_OK);
    g_assert_cmpstr(fake_host_borrow_transcript(fake), ==,
                    fake_host_borrow_transcript(copied));
    fake_host_free(fake);
  }
  fake_host_free(copied);
}

/* A line longer than the reader's limit is skipped and counted also when
 * it lies whole in one chunk; the lines around it are read. */
static void test_overlong_line_in_one_chunk_is_counted(void) {
  GString *data = g_string_new("# tracer: nop\na-1 [000] 1.0: tracing_mark_write: B|1|");
  for (size_t i = 0; i < 70000; i++)
    g_string_append_c(data, 'x');
  g_string_append(data, "\na-1 [000] 1.0: tracing_mark_write: B|1|ok\n"
                        "a-1 [000] 2.0: tracing_mark_write: E|1\n");
  fake_host *fake = run_reader(data->str, data->len, data->len, TM_OK);
  g_assert_cmpint(fake_host_stat(fake, "systrace_line_too_long"), ==, 1);
  g_assert_cmpuint(fake_host_count_lines(fake, "slice_begin "), ==, 1);
  g_assert_cmpuint(fake_host_count_lines(fake, "slice_end "), ==, 1);
  fake_host_free(fake);
  g_string_free(data, TRUE);
}

/* A kernel event's payload is read token by token: keys in any order,
 * runs of blanks, a longer key that ends like a wanted one ("xpid"), a
 * value holding '=' and a comm holding blanks up to the next "key=". */
static void test_kernel_event_keys_in_any_order(void) {
  static const char data[] =
      "# tracer: nop\n"
      "a-1 [000] 1.0: sched_waking:   xpid=9  target_cpu=003 comm=Signal Catcher  pid=7 prio=1=2\n"
      "a-1 [000] 2.0: sched_waking: comm=c=d pid=8 target_cpu=1\n";
  fake_host *fake = run_reader(data, sizeof data - 1, sizeof data - 1, TM_OK);
  g_assert_cmpint(fake_host_stat(fake, "systrace_parse_failure"), ==, 0);
  fake_host_assert_lines(fake, "thread_name t7 = Signal Catcher\n"
                               "sched_waking MONOTONIC@host ts=1000000000 cpu=3 t7 by t1\n"
                               "thread_name t8 = c=d\n"
                               "sched_waking MONOTONIC@host ts=2000000000 cpu=1 t8 by t1\n");
  fake_host_free(fake);
}

/* sched_switch and sched_waking in the kernel's own layout are read field
 * by field, anything else by the key search (systrace_emitter.c): a
 * payload in that layout and the same payload with a field appended must
 * make the same calls, comms with blanks (and blanks after them) too. */
static void test_switch_and_waking_read_alike_in_any_layout(void) {
  static const char *const payloads[][2] = {
      {"sched_switch: prev_comm=Signal Catcher  prev_pid=5 prev_prio=120 prev_state=R+ ==> "
       "next_comm=Jit thread pool next_pid=6 next_prio=98",
       "sched_switch: prev_comm=Signal Catcher  prev_pid=5 prev_prio=120 prev_state=R+ ==> "
       "next_comm=Jit thread pool next_pid=6 next_prio=98 extra=1"},
      {"sched_waking: comm=Jit thread pool pid=6 prio=120 target_cpu=003",
       "sched_waking: comm=Jit thread pool pid=6 prio=120 success=1 target_cpu=003"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(payloads); i++) {
    char *transcripts[2];
    for (size_t k = 0; k < 2; k++) {
      g_autofree char *data =
          g_strdup_printf("# tracer: nop\na-1 [001] 1.0: %s\n", payloads[i][k]);
      fake_host *fake = run_reader(data, strlen(data), strlen(data), TM_OK);
      g_assert_cmpint(fake_host_stat(fake, "systrace_parse_failure"), ==, 0);
      transcripts[k] = g_strdup(fake_host_borrow_transcript(fake));
      fake_host_free(fake);
    }
    g_assert_cmpstr(transcripts[0], ==, transcripts[1]);
    g_assert_nonnull(strstr(transcripts[0], "= Jit thread pool\n"));
    g_free(transcripts[0]);
    g_free(transcripts[1]);
  }
}

static void test_binary_input_reports_the_first_bad_offset(void) {
  static const char data[] = "# tracer: nop\n\x01\x02\x03\n\xff\xfe\n";
  fake_host *fake = run_reader(data, sizeof data - 1, 5, TM_ERROR);
  int64_t offset = -1;
  g_assert_nonnull(fake_host_borrow_error(fake, &offset));
  g_assert_cmpint(offset, ==, 14);
  g_assert_cmpint(fake_host_stat(fake, "systrace_parse_failure"), ==, 2);
  fake_host_free(fake);
}

static void test_malformed_kernel_events_are_counted(void) {
  /* Each line parses, but its payload lacks what its event needs. */
  static const char data[] =
      "# tracer: nop\n"
      "a-1 [000] 1.0: sched_switch: prev_comm=a prev_pid=1 prev_state=S next_comm=b\n"
      "a-1 [5000] 1.0: sched_switch: prev_comm=a prev_pid=1 prev_prio=1 prev_state=S next_comm=b next_pid=2 next_prio=1\n"
      "a-1 [000] 1.0: sched_waking: comm=b pid=2 prio=120 target_cpu=99999\n"
      "a-1 [000] 1.0: sched_wakeup: comm=b prio=120 target_cpu=0\n"
      "a-1 [000] 1.0: cpu_idle: state=1\n"
      "a-1 [000] 1.0: cpu_frequency: state=x cpu_id=0\n"
      "a-1 [000] 1.0: tracing_mark_write: B|x|name\n"
      "a-1 [000] 1.0: tracing_mark_write: S|1|name\n"
      "a-1 [000] 1.0: tracing_mark_write: E|y\n"
      "a-1 [000] 1.0: tracing_mark_write: Bfoo\n"
      "a-1 [000] 1.0: some_other_event: ignored=1\n";
  fake_host *fake = run_reader(data, sizeof data - 1, 64, TM_OK);
  g_assert_cmpint(fake_host_stat(fake, "systrace_parse_failure"), ==, 10);
  g_assert_cmpuint(events(fake), ==, 0);
  fake_host_free(fake);
}

static size_t occurrences(const char *text, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
    n++;
  return n;
}

/* B and E marks of the common shapes are read by a shortcut in the
 * emitter and all others by the general split on '|': both give what
 * docs/formats.md §3.4 says. Expected counts, line by line: begins are
 * B|1|name, B|1 and B|1| (the last two "[empty slice name]"), B|-5|neg
 * (a sign: general path) and the 19-digit pid (general path): 5; ends
 * are E, E|, E||x (no pid), E|7 and E|7|rest: 5; failures are B (no
 * pid field), B| (empty pid), B|12a|x and E|y (not numbers): 4. */
static void test_begin_end_marks_of_every_shape(void) {
  static const char data[] =
      "# tracer: nop\n"
      "a-1 [000] 1.0: tracing_mark_write: B|1|name\n"
      "a-1 [000] 1.0: tracing_mark_write: B|1\n"
      "a-1 [000] 1.0: tracing_mark_write: B|1|\n"
      "a-1 [000] 1.0: tracing_mark_write: B|-5|neg\n"
      "a-1 [000] 1.0: tracing_mark_write: B|1234567890123456789|long\n"
      "a-1 [000] 1.0: tracing_mark_write: E\n"
      "a-1 [000] 1.0: tracing_mark_write: E|\n"
      "a-1 [000] 1.0: tracing_mark_write: E||x\n"
      "a-1 [000] 1.0: tracing_mark_write: E|7\n"
      "a-1 [000] 1.0: tracing_mark_write: E|7|rest\n"
      "a-1 [000] 1.0: tracing_mark_write: B\n"
      "a-1 [000] 1.0: tracing_mark_write: B|\n"
      "a-1 [000] 1.0: tracing_mark_write: B|12a|x\n"
      "a-1 [000] 1.0: tracing_mark_write: E|y\n";
  fake_host *fake = run_reader(data, sizeof data - 1, 64, TM_OK);
  g_assert_cmpuint(fake_host_count_lines(fake, "slice_begin "), ==, 5);
  g_assert_cmpuint(fake_host_count_lines(fake, "slice_end "), ==, 5);
  g_assert_cmpint(fake_host_stat(fake, "systrace_parse_failure"), ==, 4);
  const char *transcript = fake_host_borrow_transcript(fake);
  g_assert_cmpuint(occurrences(transcript, " name=[empty slice name]\n"), ==, 2);
  g_assert_cmpuint(occurrences(transcript, " name=name\n"), ==, 1);
  g_assert_cmpuint(occurrences(transcript, " name=neg\n"), ==, 1);
  g_assert_cmpuint(occurrences(transcript, " name=long\n"), ==, 1);
  fake_host_free(fake);
}

/* A thread's name is compared with the one it was last given without
 * memcmp (systrace_emitter.c, cached_name_is): a name that differs from
 * it in any one byte, at every length the comparison reads by words or by
 * bytes and beyond the cache, names the thread again, and the old name
 * once more renames it back. */
static void test_thread_renamed_by_one_byte_at_any_length(void) {
  for (size_t len = 1; len <= 30; len++) {
    for (size_t k = 0; k < len; k++) {
      char name[31], other[31];
      for (size_t i = 0; i < len; i++)
        name[i] = (char)('a' + i % 26);
      name[len] = '\0';
      memcpy(other, name, len + 1);
      other[k] = 'Z';
      g_autofree char *data = g_strdup_printf("# tracer: nop\n"
                                              "%s-5 [000] 1.0: cpu_idle: state=1 cpu_id=0\n"
                                              "%s-5 [000] 2.0: cpu_idle: state=1 cpu_id=0\n"
                                              "%s-5 [000] 3.0: cpu_idle: state=1 cpu_id=0\n"
                                              "%s-5 [000] 4.0: cpu_idle: state=1 cpu_id=0\n",
                                              name, name, other, name);
      fake_host *fake = run_reader(data, strlen(data), strlen(data), TM_OK);
      g_assert_cmpuint(fake_host_count_lines(fake, "thread_name "), ==, 3);
      fake_host_free(fake);
    }
  }
}

/* The counter track of a C mark is asked of the host once per (pid,
 * name) and then found in the emitter's cache: with more names per
 * process than the cache has slots (so some share a slot), in two passes,
 * every counter still lands on the track described with its own name and
 * process. */
static void test_counter_marks_land_on_their_own_tracks(void) {
  enum { PAIRS = 600 };
  GString *data = g_string_new("# tracer: nop\n");
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < PAIRS; i++)
      g_string_append_printf(data, "a-1 [000] %d.0: tracing_mark_write: C|%d|n%d|%d\n",
                             1 + pass, 100 + i % 2, i, i);
  fake_host *fake = run_reader(data->str, data->len, data->len, TM_OK);
  g_assert_cmpint(fake_host_stat(fake, "systrace_parse_failure"), ==, 0);
  g_auto(GStrv) lines = g_strsplit(fake_host_borrow_transcript(fake), "\n", -1);
  GHashTable *descs = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  size_t counters = 0;
  for (char **l = lines; *l; l++) {
    unsigned track;
    int value, offset = 0;
    if (sscanf(*l, "track T%u = %n", &track, &offset) == 1 && offset > 0) {
      g_hash_table_insert(descs, GUINT_TO_POINTER(track), g_strdup(*l + offset));
    } else if (sscanf(*l, "counter T%u MONOTONIC@host ts=%*d value=%d", &track, &value) == 2) {
      const char *desc = g_hash_table_lookup(descs, GUINT_TO_POINTER(track));
      g_assert_nonnull(desc);
      g_autofree char *name = g_strdup_printf(" name=\"n%d\" ", value);
      g_autofree char *on = g_strdup_printf(" p%d ", 100 + value % 2);
      g_assert_nonnull(strstr(desc, name));
      g_assert_nonnull(strstr(desc, on));
      counters++;
    }
  }
  g_assert_cmpuint(counters, ==, 2 * PAIRS);
  g_assert_cmpuint(fake_host_count_lines(fake, "track "), ==, PAIRS);
  g_hash_table_destroy(descs);
  g_string_free(data, TRUE);
  fake_host_free(fake);
}

/* S and F marks of many cookies at once (the emitter keeps the open ones
 * in a table that grows and from which an F removes its cookie): every
 * F ends the slice on the track its S began, whatever order the cookies
 * close in; a repeated S of an open cookie begins nothing; an F without
 * an open S still ends on its cookie's track; every cookie reopened after
 * its F begins again. */
static void test_async_cookies_close_in_any_order(void) {
  enum { COOKIES = 700, PIDS = 3 };
  GString *data = g_string_new("# tracer: nop\n");
  GString *expected = g_string_new(NULL); /* "b<cookie>" / "e<cookie>" */
  int sec = 1;
#define MARK(kind, c)                                                                      \
  g_string_append_printf(data, "a-1 [000] %d.0: tracing_mark_write: %c|%d|set%d|%d\n", sec++, \
                         (kind), 100 + (c) % PIDS, (c) % 2, (c))
  for (int c = 0; c < COOKIES; c++) {
    MARK('S', c);
    g_string_append_printf(expected, "b%d\n", c);
    if (c % 5 == 0)
      MARK('S', c); /* open already: begins nothing */
  }
  /* 3 and COOKIES are coprime: every cookie once, far from its order. */
  for (int i = 0; i < COOKIES; i++) {
    int c = (i * 3) % COOKIES;
    MARK('F', c);
    g_string_append_printf(expected, "e%d\n", c);
  }
  for (int c = 0; c < COOKIES; c += 50) {
    MARK('F', c); /* not open */
    g_string_append_printf(expected, "e%d\n", c);
  }
  for (int c = 0; c < COOKIES; c++) {
    MARK('S', c); /* open again */
    g_string_append_printf(expected, "b%d\n", c);
  }
  for (int i = 0; i < COOKIES; i++) {
    int c = (i * 11) % COOKIES;
    MARK('F', c);
    g_string_append_printf(expected, "e%d\n", c);
  }
#undef MARK
  fake_host *fake = run_reader(data->str, data->len, data->len, TM_OK);
  g_assert_cmpint(fake_host_stat(fake, "systrace_parse_failure"), ==, 0);
  g_auto(GStrv) lines = g_strsplit(fake_host_borrow_transcript(fake), "\n", -1);
  GHashTable *cookie_of = g_hash_table_new(g_direct_hash, g_direct_equal);
  GString *seen = g_string_new(NULL);
  for (char **l = lines; *l; l++) {
    unsigned track, cookie, pid, set;
    if (sscanf(*l, "slot T%u = atrace_async_slice name=\"set%u\" p%u cookie=%u", &track, &set,
               &pid, &cookie) == 4) {
      g_assert_cmpuint(pid, ==, 100 + cookie % PIDS);
      g_assert_cmpuint(set, ==, cookie % 2);
      g_hash_table_insert(cookie_of, GUINT_TO_POINTER(track), GUINT_TO_POINTER(cookie + 1));
    } else if (sscanf(*l, "slice_begin T%u", &track) == 1 ||
               sscanf(*l, "slice_end T%u", &track) == 1) {
      unsigned c = GPOINTER_TO_UINT(g_hash_table_lookup(cookie_of, GUINT_TO_POINTER(track)));
      g_assert_cmpuint(c, >, 0);
      g_string_append_printf(seen, "%c%u\n", (*l)[6] == 'b' ? 'b' : 'e', c - 1);
    }
  }
  g_assert_cmpuint(g_hash_table_size(cookie_of), ==, COOKIES);
  g_assert_cmpstr(seen->str, ==, expected->str);
  g_hash_table_destroy(cookie_of);
  g_string_free(seen, TRUE);
  g_string_free(expected, TRUE);
  g_string_free(data, TRUE);
  fake_host_free(fake);
}

/* A line that is not read is logged with the offset of its first byte
 * and its text, however the chunks cut it; lines that parse are not. */
static void test_bad_lines_are_logged_with_offset_and_text(void) {
  static const char data[] =
      "# tracer: nop\n"                                              /* 0 */
      "a-1 [000] 1.0: tracing_mark_write: B|1|ok\n"                  /* 14 */
      "a-1 [000] 1.0: cpu_idle: state=1\n"                           /* 56 */
      "not an ftrace line\n"                                         /* 89 */
      "a-1 [000] 1.0: tracing_mark_write: E|1\n";                    /* 108 */
  static const size_t chunks[] = {1, 5, 1 << 20};
  for (size_t i = 0; i < G_N_ELEMENTS(chunks); i++) {
    fake_host *fake = run_reader(data, sizeof data - 1, chunks[i], TM_OK);
    g_assert_cmpstr(fake_host_borrow_import_log_values(fake), ==,
                    "systrace_parse_failure at=56 line=a-1 [000] 1.0: cpu_idle: state=1\n"
                    "systrace_parse_failure at=89 line=not an ftrace line\n");
    g_assert_cmpint(fake_host_stat(fake, "systrace_parse_failure"), ==, 2);
    g_assert_cmpuint(fake_host_count_lines(fake, "slice_begin ") +
                         fake_host_count_lines(fake, "slice_end "),
                     ==, 2);
    fake_host_free(fake);
  }
}

static void test_probe(void) {
  const tm_reader_descriptor *d = tracemerge_reader_entry();
  g_assert_true(d->flags & TM_READER_PID0_IS_IDLE);
  g_assert_false(d->flags & TM_READER_CLOCKLESS);
  static const char *const yes[] = {
      "# tracer: nop\n", "<!DOCTYPE html>\n<html>", "<html>", "TRACE:\n# tracer",
      "cpus=4\n", " app-1 [000] 1.0: e: x", "version = 6\ncpus=6\n",
  };
  static const char *const no[] = {
      "{\"traceEvents\": []}", "\x0a\x05", "version = 6\nfoo", "TRACE:\n\x78\x9c\x01",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(yes); i++)
    g_assert_cmpint(d->probe((const uint8_t *)yes[i], strlen(yes[i]), NULL), >, 0);
  for (size_t i = 0; i < G_N_ELEMENTS(no); i++)
    g_assert_cmpint(d->probe((const uint8_t *)no[i], strlen(no[i]), NULL), ==, 0);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/systrace/line/with-tgid-and-flags", test_line_with_tgid_and_flags);
  g_test_add_func("/systrace/line/with-unknown-tgid", test_line_with_unknown_tgid);
  g_test_add_func("/systrace/line/without-flags-or-tgid", test_line_without_flags_or_tgid);
  g_test_add_func("/systrace/line/task-may-hold-dashes-and-spaces",
                  test_task_may_hold_dashes_and_spaces);
  g_test_add_func("/systrace/line/fraction-digits-beyond-ns-are-truncated",
                  test_fraction_digits_beyond_ns_are_truncated);
  g_test_add_func("/systrace/line/lines-off-the-grammar-fail", test_lines_off_the_grammar_fail);
  g_test_add_func("/systrace/line/int64-parse", test_int64_parse);
  g_test_add_func("/systrace/line/memo-reads-every-line-as-without",
                  test_memo_reads_every_line_as_without);
  g_test_add_func("/systrace/line/fields-parse-at-every-length-and-padding",
                  test_fields_parse_at_every_length_and_padding);
  g_test_add_func("/systrace/wrapper/plain-headers-are-skipped",
                  test_wrapper_plain_headers_are_skipped);
  g_test_add_func("/systrace/wrapper/html-reads-the-first-ftrace-block",
                  test_wrapper_html_blocks);
  g_test_add_func("/systrace/wrapper/legacy-string-is-unescaped",
                  test_wrapper_legacy_string_unescapes);
  g_test_add_func("/systrace/reader/any-chunking-reads-the-same-events",
                  test_any_chunking_reads_the_same_events);
  g_test_add_func("/systrace/reader/lines-in-place-or-copied-make-the-same-calls",
                  test_lines_in_place_or_copied_make_the_same_calls);
  g_test_add_func("/systrace/reader/overlong-line-in-one-chunk-is-counted",
                  test_overlong_line_in_one_chunk_is_counted);
  g_test_add_func("/systrace/reader/kernel-event-keys-in-any-order",
                  test_kernel_event_keys_in_any_order);
  g_test_add_func("/systrace/reader/switch-and-waking-read-alike-in-any-layout",
                  test_switch_and_waking_read_alike_in_any_layout);
  g_test_add_func("/systrace/reader/binary-input-reports-the-first-bad-offset",
                  test_binary_input_reports_the_first_bad_offset);
  g_test_add_func("/systrace/reader/malformed-kernel-events-are-counted",
                  test_malformed_kernel_events_are_counted);
  g_test_add_func("/systrace/reader/begin-end-marks-of-every-shape",
                  test_begin_end_marks_of_every_shape);
  g_test_add_func("/systrace/reader/bad-lines-are-logged-with-offset-and-text",
                  test_bad_lines_are_logged_with_offset_and_text);
  g_test_add_func("/systrace/reader/thread-renamed-by-one-byte-at-any-length",
                  test_thread_renamed_by_one_byte_at_any_length);
  g_test_add_func("/systrace/reader/counter-marks-land-on-their-own-tracks",
                  test_counter_marks_land_on_their_own_tracks);
  g_test_add_func("/systrace/reader/async-cookies-close-in-any-order",
                  test_async_cookies_close_in_any_order);
  g_test_add_func("/systrace/reader/probe", test_probe);
  return g_test_run();
}
