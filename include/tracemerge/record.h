/*
 * tracemerge record: write Perfetto traces from C code, under a TraceConfig.
 *
 * The producer side of tracemerge. A program configures a *session* with a
 * TraceConfig (the perfetto.protos.TraceConfig of the perfetto command
 * line, in text `.pbtx` or binary), starts it, and writes TrackEvents —
 * slices, instants, counters, flows, debug annotations, callstacks — from
 * any thread. The session writes a Perfetto protobuf trace for
 * tracemerge, trace_processor and the Perfetto UI (checked with protoc
 * and tracemerge's reader; not run through trace_processor: README,
 * "Produce traces from your code").
 *
 *   static tmr_category cat_io = TMR_CATEGORY("io", NULL);
 *
 *   tmr_config *config = tmr_config_load("trace.pbtx", TMR_CONFIG_AUTO, &error);
 *   tmr_session_options options = {.output_path = "out.pftrace"};
 *   tmr_session *session = tmr_session_new(config, &options, &error);
 *   tmr_session_start(session, &error);
 *   ...
 *   tmr_writer *w = tmr_this_thread();          // NULL when nothing records
 *   tmr_slice_begin(w, TMR_THREAD_TRACK, &cat_io, "read", TMR_NOW);
 *   tmr_slice_end(w, TMR_THREAD_TRACK, &cat_io, TMR_NOW);
 *   ...
 *   tmr_session_stop(session, &error);          // writes what is left
 *   tmr_session_free(session);
 *   tmr_config_free(config);
 *
 * What a session does with its config (fields of TraceConfig):
 * - `buffers { size_kb fill_policy }`: the memory events are kept in.
 *   RING_BUFFER overwrites the oldest chunks when full, DISCARD drops new
 *   ones; both are counted in the trace_stats packet (chunks_overwritten,
 *   chunks_discarded, ...) that trace_processor shows as `traced_buf_*`
 *   stats. A writer's chunk is committed to its buffer when full (16 KiB,
 *   less for small buffers) and at every flush.
 * - `data_sources { config { name target_buffer ... } producer_name_filter
 *   producer_name_regex_filter }`: "track_event" is built in (its
 *   track_event_config filters categories and tags); other names start the
 *   data sources registered with tmr_register_data_source, each given the
 *   raw bytes of its DataSourceConfig. A data source starts only if the
 *   filters are empty or one matches this process' producer name.
 * - `duration_ms`, `trigger_config` (START_TRACING, STOP_TRACING,
 *   stop_delay_ms, trigger_timeout_ms), `write_into_file`,
 *   `file_write_period_ms`, `max_file_size_bytes`, `flush_period_ms`,
 *   `incremental_state_config.clear_period_ms`, `unique_session_name`,
 *   `builtin_data_sources` (disable_trace_config,
 *   disable_clock_snapshotting, primary_trace_clock). Other known fields
 *   are ignored with a note (tmr_config_borrow_note).
 *
 * What the trace holds: the trace_config packet; a clock_snapshot
 * (BOOTTIME, REALTIME, MONOTONIC...) at the start and at every flush, so
 * the trace merges with others by REALTIME (snapshots wait in memory for
 * the next write: without write_into_file, that is the stop, and only the
 * first and the 15 latest are kept); one trusted packet sequence
 * per writer, with its track descriptors, interned data
 * (SEQ_INCREMENTAL_STATE_CLEARED / SEQ_NEEDS_INCREMENTAL_STATE,
 * TracePacketDefaults) and events; `trigger` packets; trace_stats.
 * A writer's sequence is a series of incremental-state generations, each
 * in this order: the packet that clears the state (defaults, the
 * thread's descriptor), the process' descriptor, a clock_snapshot per
 * custom clock (tmr_writer_use_clock), then events, each after what it
 * needs (track descriptors, interned data, the TSC clock's snapshot). The
 * packets the writer adds itself are on BOOTTIME whenever the event they
 * come with is on a sequence-scoped clock, so a packet on such a clock
 * always follows a snapshot of it in its own generation: a reader that
 * converts timestamps with the snapshots read so far (trace_processor)
 * places every packet, also in a ring buffer whose older chunks are gone.
 *
 * Writers and threads
 * -------------------
 * A tmr_writer belongs to one thread and one session: its own trusted
 * packet sequence, its own chunk and interning tables. Events on it take
 * no lock and do no atomic read-modify-write; only committing a full chunk
 * (every 16 KiB) takes its buffer's lock. Never share a writer between
 * threads. tmr_this_thread() returns the calling thread's track_event
 * writer of the session that records track_event now (at most one per
 * process), creating it on first use; NULL when none records, and every
 * event function accepts NULL (and does nothing), so call sites need no
 * test. After warm-up (each distinct name, track and category seen once
 * per writer) an event allocates nothing.
 *
 * Cost (tools/bench_record, release build, thread CPU time, medians of 3
 * in three sets on the project's shared 2-core VM at load average 5-11,
 * 26 Nov; single runs vary by up to 1.5x there): an interned slice
 * begin/end pair costs 50-70 ns with TMR_NOW on the TSC (two rdtsc ~25 ns
 * of it; 97 ns the worst of nine runs), 82-123 ns with TMR_NOW on
 * clock_gettime (two vDSO reads ~60 ns of it), 35-66 ns with explicit
 * timestamps (main's code before the TSC change: 33-48 ns in the same
 * sets, with as many instructions); an instant with two debug annotations 110-149 ns; a
 * pair in a disabled category 9-15 ns (two calls and two atomic loads). No heap allocation in the
 * measured loops. Committing a full chunk (every 16 KiB) copies it under
 * the buffer's lock. docs/performance.md has the runs.
 *
 * Ownership and lifetimes
 * -----------------------
 * - Strings passed to event functions are copied before they return.
 * - tmr_category and tmr_source_location objects are registered by address
 *   on first use and must live until the process ends (declare them
 *   `static`).
 * - Tracks (tmr_track_create) and interned callstacks live until the
 *   process ends; create them for long-lived things, not per request.
 * - A tmr_writer lives as long as its session: never use one after
 *   tmr_session_free(), and free a session only once no thread can be
 *   writing to it (stop, then join your threads, then free).
 * - A config is copied by tmr_session_new(); free yours when you like.
 *
 * Errors are GErrors in libtracemerge's one domain, TRACEMERGE_ERROR
 * (<tracemerge/error.h>): TM_ERROR_USAGE for a call the library does not
 * take, TM_ERROR_CONFIG for a config it refuses, TM_ERROR_OUTPUT when the
 * trace cannot be written, TM_ERROR_SYSTEM when the system refuses memory,
 * a thread or a socket. The message says what to change; config errors
 * name the file, line and column.
 */
#ifndef TRACEMERGE_RECORD_H
#define TRACEMERGE_RECORD_H

#include <glib.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tracemerge/error.h>
#include <tracemerge/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "Read the writer's clock now" as an event timestamp. */
#define TMR_NOW INT64_MIN

/* The sequence-scoped clock (Perfetto ids 64..127) TMR_NOW timestamps are
 * written on when the session reads the TSC (tmr_now_clock). */
#define TMR_TSC_CLOCK_ID 127

/* --- configs ------------------------------------------------------------- */

typedef struct tmr_config tmr_config;

typedef enum tmr_config_format {
  TMR_CONFIG_AUTO = 0, /* text if the name ends in .pbtx (.pbtxt, .txtpb, .textproto, .txt) */
  TMR_CONFIG_TEXT = 1,
  TMR_CONFIG_BINARY = 2,
} tmr_config_format;

/* Loads and checks a TraceConfig. Refused (NULL, error set): text that is
 * not the text format, a value its field cannot take (an unknown enum
 * value...), no buffer, a buffer of 0 KiB, a target_buffer out of range,
 * duration_ms with a START_TRACING trigger, an incomplete trigger_config,
 * CLONE_SNAPSHOT. Unknown fields are kept (binary) or
 * skipped (text) and listed in the notes, never refused. */
TM_API tmr_config *tmr_config_load(const char *path, tmr_config_format format, GError **error);
TM_API tmr_config *tmr_config_parse_text(const char *text, size_t len, const char *name,
                                         GError **error);
TM_API tmr_config *tmr_config_parse_binary(const void *data, size_t len, const char *name,
                                           GError **error);
/* One 4 MiB RING_BUFFER with the track_event data source. */
TM_API tmr_config *tmr_config_new_default(void);
TM_API void tmr_config_free(tmr_config *config);

/* Notes about the config: unknown fields (kept or skipped), known fields
 * this library ignores, values it adjusted. Borrowed from the config. */
TM_API size_t tmr_config_note_count(const tmr_config *config);
TM_API const char *tmr_config_borrow_note(const tmr_config *config, size_t index);
/* The config as normalised text format (g_free the result). */
TM_API char *tmr_config_to_text(const tmr_config *config);

/* --- sessions ------------------------------------------------------------ */

typedef struct tmr_session tmr_session;

/* What TMR_NOW reads.
 * - TMR_NOW_CLOCK_AUTO: the TSC where that is sound, else BOOTTIME.
 *   The TSC is used on x86-64 when the CPU's TSC is invariant (CPUID
 *   0x80000007 EDX bit 8) and the kernel's clocksource is "tsc", unless
 *   the environment variable TRACEMERGE_RECORD_CLOCK is "boottime". Each
 *   writer converts ticks to ns (calibrated against BOOTTIME once per
 *   process, in ~10 ms by the first tmr_session_new(), and refined by
 *   every writer as it runs) and writes them on its own clock
 *   TMR_TSC_CLOCK_ID, unit 1 ns, with a clock_snapshot relating that
 *   clock to BOOTTIME in every incremental-state generation and at every
 *   re-anchoring: every 100 ms of the writer's events, at every flush,
 *   and whenever the TSC went backwards. Readers (tracemerge,
 *   trace_processor) convert those timestamps to BOOTTIME, and through
 *   the session's snapshots to REALTIME. Precision: 1 ns steps (the TSC
 *   ticks every ~0.4 ns here). Error of the converted timestamps against
 *   clock_gettime(CLOCK_BOOTTIME), measured on the project's VM
 *   (bench_record --clock-error, 10 s; docs/performance.md, "The TSC
 *   clock"): within +-30 ns at the end of every 100 ms segment, where it
 *   is largest; the tests hold it to 20 us. Between two anchors a reader
 *   converts with the earlier one's offset, so on one writer a converted
 *   time can step back by that error at an anchor. After a suspend or a
 *   VM pause that stops the TSC, events up to the next re-anchoring
 *   (100 ms of TSC time, or a flush) are placed early by up to the
 *   pause's length.
 * - TMR_NOW_CLOCK_BOOTTIME: clock_gettime(CLOCK_BOOTTIME), the trace's
 *   default clock (~30 ns more per read on the project's VM). */
typedef enum tmr_now_clock {
  TMR_NOW_CLOCK_AUTO = 0,
  TMR_NOW_CLOCK_BOOTTIME = 1,
  TMR_NOW_CLOCK_TSC = 2, /* only as tmr_session_now_clock()'s answer */
} tmr_now_clock;

typedef struct tmr_session_options {
  /* Where the trace is written. NULL: the config's output_path. Created
   * (or truncated) by tmr_session_start(). */
  const char *output_path;
  /* This process' producer name, matched by producer_name_filter,
   * producer_name_regex_filter and trigger producer_name_regex.
   * NULL: the program's name. */
  const char *producer_name;
  /* What TMR_NOW reads (above); 0: TMR_NOW_CLOCK_AUTO. */
  tmr_now_clock now_clock;
} tmr_session_options;

/* Creates a session (nothing records yet). The config is copied. Refused:
 * no output path, or a session config that cannot work (e.g. a
 * write_into_file period with no file). */
TM_API tmr_session *tmr_session_new(const tmr_config *config, const tmr_session_options *options,
                                    GError **error);

/* Opens the output, writes the trace_config packet and starts the data
 * sources (or, with a START_TRACING trigger, waits for it). Refused: the
 * output cannot be created, another session of this process records
 * track_event, a session with the same unique_session_name runs (in any
 * process of this user). */
TM_API bool tmr_session_start(tmr_session *session, GError **error);

/* Commits every writer's partial chunk to its buffer, adds a clock
 * snapshot and, with write_into_file, writes the buffers out. */
TM_API void tmr_session_flush(tmr_session *session);

/* Waits until the session stops by itself (duration_ms, a stop trigger
 * and its delay, trigger_timeout_ms, max_file_size_bytes), at most
 * `timeout_ms` (< 0: forever). True if it has stopped. */
TM_API bool tmr_session_wait(tmr_session *session, int64_t timeout_ms);

/* Stops the data sources, flushes, writes what the buffers hold and the
 * trace_stats, and closes the output. Safe to call again, and after the
 * session stopped by itself (then it reports that stop's error, if any). */
TM_API bool tmr_session_stop(tmr_session *session, GError **error);
TM_API void tmr_session_free(tmr_session *session);

/* Why the session stopped: "tmr_session_stop", "duration_ms",
 * "trigger:<name>", "trigger_timeout_ms", "max_file_size_bytes";
 * NULL while it runs. Borrowed. */
TM_API const char *tmr_session_borrow_stop_reason(const tmr_session *session);

/* The clock the session's writers read for TMR_NOW:
 * TMR_NOW_CLOCK_TSC or TMR_NOW_CLOCK_BOOTTIME. */
TM_API tmr_now_clock tmr_session_now_clock(const tmr_session *session);

/* Bytes written to the output so far. */
TM_API uint64_t tmr_session_bytes_written(const tmr_session *session);

/* A buffer's statistics, as written in trace_stats. */
typedef struct tmr_buffer_stats {
  uint64_t buffer_size;
  uint64_t bytes_written;
  uint64_t bytes_overwritten;
  uint64_t bytes_read;
  uint64_t padding_bytes_written;
  uint64_t padding_bytes_cleared;
  uint64_t chunks_written;
  uint64_t chunks_overwritten;
  uint64_t chunks_discarded;
  uint64_t chunks_read;
  uint64_t write_wrap_count;
  uint64_t trace_writer_packet_loss;
} tmr_buffer_stats;
TM_API bool tmr_session_buffer_stats(tmr_session *session, size_t buffer, tmr_buffer_stats *out);

/* --- triggers ------------------------------------------------------------- */

/* Fires trigger `name` in every session of this process whose
 * trigger_config names it. Recorded as a `trigger` packet (a session
 * records at most 256; only the first matching one decides). */
TM_API void tmr_trigger(const char *name);

/* Fires trigger `name` in every session with a trigger_config of this
 * user, in any process (sessions listen on a Unix socket in
 * $TRACEMERGE_TRIGGER_DIR, else $XDG_RUNTIME_DIR/tracemerge-triggers,
 * else /tmp/tracemerge-triggers-<uid>). Returns the number of sessions
 * reached, -1 on error. `producer_name` NULL: the program's name. */
TM_API int tmr_trigger_send(const char *name, const char *producer_name, GError **error);

/* --- categories ----------------------------------------------------------- */

/* A category of events, enabled or not by the track_event data source's
 * config. Declare one static object per category: */
typedef struct tmr_category {
  const char *name;
  const char *tags; /* comma-separated (e.g. "slow,debug"), or NULL */
  _Atomic uint32_t state_; /* internal: 0 unknown, 1 disabled, 2 enabled */
  uint32_t index_;         /* internal */
  struct tmr_category *next_;
} tmr_category;

#define TMR_CATEGORY(name, tags) {(name), (tags), 0, 0, NULL}

TM_API bool tmr_category_enabled_slow_(tmr_category *category);

/* Whether events of `category` are recorded now (NULL: the track_event
 * data source runs). One atomic load (a plain load on x86 and ARM64)
 * once the category is known. */
static inline bool tmr_category_enabled(tmr_category *category) {
  if (category) {
    uint32_t state = atomic_load_explicit(&category->state_, memory_order_acquire);
    if (state != 0)
      return state == 2;
  }
  return tmr_category_enabled_slow_(category);
}

/* --- tracks --------------------------------------------------------------- */

typedef struct tmr_track {
  uint64_t uuid;
  uint32_t index_; /* internal; 0 with uuid 0: the writer's thread track */
} tmr_track;

/* The thread track of the writer an event is written with. */
#define TMR_THREAD_TRACK ((tmr_track){0, 0})

/* This process' track (its TrackDescriptor names the process). */
TM_API tmr_track tmr_process_track(void);

/* The calling thread's track: the one TMR_THREAD_TRACK means for this
 * thread's writers, e.g. as the parent of custom tracks. */
TM_API tmr_track tmr_this_thread_track(void);

typedef enum tmr_child_ordering {
  TMR_CHILD_ORDERING_UNSPECIFIED = 0,
  TMR_CHILD_ORDERING_LEXICOGRAPHIC = 1,
  TMR_CHILD_ORDERING_CHRONOLOGICAL = 2,
  TMR_CHILD_ORDERING_EXPLICIT = 3,
} tmr_child_ordering;

typedef enum tmr_merge_behavior {
  TMR_MERGE_UNSPECIFIED = 0,
  TMR_MERGE_BY_TRACK_NAME = 1,
  TMR_MERGE_NONE = 2,
  TMR_MERGE_BY_SIBLING_MERGE_KEY = 3,
} tmr_merge_behavior;

typedef enum tmr_counter_unit {
  TMR_UNIT_UNSPECIFIED = 0,
  TMR_UNIT_TIME_NS = 1,
  TMR_UNIT_COUNT = 2,
  TMR_UNIT_SIZE_BYTES = 3,
} tmr_counter_unit;

/* A TrackDescriptor. Zero-initialise and set what you need. */
typedef struct tmr_track_desc {
  const char *name;
  const char *description;
  tmr_track parent;           /* a process, thread or custom track, or none (uuid 0) */
  uint64_t uuid;              /* 0: chosen for you */
  /* A thread's track (tid != 0): the UI shows it under the thread. */
  int64_t pid, tid;
  const char *thread_name;
  tmr_child_ordering child_ordering;
  bool has_sibling_order_rank;
  int32_t sibling_order_rank;
  tmr_merge_behavior merge_behavior;
  const char *sibling_merge_key;
  /* A counter track. */
  bool is_counter;
  tmr_counter_unit unit;
  const char *unit_name;        /* e.g. "connections" */
  int64_t unit_multiplier;      /* 0: 1 */
  bool is_incremental;          /* values are deltas to add up */
  const char *y_axis_share_key; /* counters with the same key share a y axis */
} tmr_track_desc;

/* Registers a track; its descriptor is written by every writer that uses
 * it (once per incremental-state generation). Returns uuid 0 if the
 * description is invalid (a parent that was not created here). */
TM_API tmr_track tmr_track_create(const tmr_track_desc *desc);

/* --- events --------------------------------------------------------------- */

typedef struct tmr_writer tmr_writer;

/* The calling thread's track_event writer of the session recording now,
 * or NULL. */
TM_API tmr_writer *tmr_this_thread(void);

/* Debug annotations (TrackEvent.debug_annotations). */
typedef enum tmr_arg_type {
  TMR_ARG_BOOL,
  TMR_ARG_UINT,
  TMR_ARG_INT,
  TMR_ARG_DOUBLE,
  TMR_ARG_POINTER,
  TMR_ARG_STRING,
  TMR_ARG_JSON, /* legacy_json_value: JSON text shown as a value */
  TMR_ARG_DICT, /* nested: `items` named entries */
  TMR_ARG_ARRAY /* nested: `items` unnamed values */
} tmr_arg_type;

typedef struct tmr_arg {
  const char *name; /* ignored inside arrays */
  tmr_arg_type type;
  union {
    bool b;
    uint64_t u;
    int64_t i;
    double d;
    const void *pointer;
    const char *string;
    struct {
      const struct tmr_arg *items;
      size_t count;
    } nested;
  } value;
} tmr_arg;

#define TMR_ARG_BOOL(n, v) ((tmr_arg){.name = (n), .type = TMR_ARG_BOOL, .value.b = (v)})
#define TMR_ARG_UINT(n, v) ((tmr_arg){.name = (n), .type = TMR_ARG_UINT, .value.u = (v)})
#define TMR_ARG_INT(n, v) ((tmr_arg){.name = (n), .type = TMR_ARG_INT, .value.i = (v)})
#define TMR_ARG_DOUBLE(n, v) ((tmr_arg){.name = (n), .type = TMR_ARG_DOUBLE, .value.d = (v)})
#define TMR_ARG_POINTER(n, v) ((tmr_arg){.name = (n), .type = TMR_ARG_POINTER, .value.pointer = (v)})
#define TMR_ARG_STRING(n, v) ((tmr_arg){.name = (n), .type = TMR_ARG_STRING, .value.string = (v)})
#define TMR_ARG_JSON(n, v) ((tmr_arg){.name = (n), .type = TMR_ARG_JSON, .value.string = (v)})
#define TMR_ARG_DICT(n, items_, count_) \
  ((tmr_arg){.name = (n), .type = TMR_ARG_DICT, .value.nested = {(items_), (count_)}})
#define TMR_ARG_ARRAY(n, items_, count_) \
  ((tmr_arg){.name = (n), .type = TMR_ARG_ARRAY, .value.nested = {(items_), (count_)}})

/* A value for another counter track, written on a slice event
 * (extra_counter_values / extra_double_counter_values). */
typedef struct tmr_counter_value {
  tmr_track track;
  bool is_double;
  int64_t int_value;
  double double_value;
} tmr_counter_value;

/* A binary mapping of interned callstack frames. 0: none. */
typedef uint32_t tmr_mapping;
TM_API tmr_mapping tmr_mapping_intern(const char *build_id, const char *path, uint64_t start,
                                      uint64_t end, uint64_t exact_offset, uint64_t load_bias);

/* One frame. Inline callstacks use function_name, source_file, line;
 * interned ones function_name, mapping, rel_pc. */
typedef struct tmr_frame {
  const char *function_name;
  const char *source_file;
  uint32_t line;
  tmr_mapping mapping;
  uint64_t rel_pc;
} tmr_frame;

/* An interned callstack, outermost frame first; 0: none (or too many). */
typedef uint32_t tmr_callstack;
TM_API tmr_callstack tmr_callstack_intern(const tmr_frame *frames, size_t n_frames);

/* A source location, interned by address: declare it static, e.g.
 *   static tmr_source_location here = TMR_SOURCE_LOCATION_HERE; */
typedef struct tmr_source_location {
  const char *file_name;
  const char *function_name;
  uint32_t line_number;
  _Atomic uint32_t id_; /* internal */
} tmr_source_location;

#define TMR_SOURCE_LOCATION_HERE {__FILE__, __func__, __LINE__, 0}

/* Everything an event may carry besides its name and track.
 * Zero-initialise and set what you need. */
typedef struct tmr_event_extras {
  const tmr_arg *args;
  size_t n_args;
  const uint64_t *flow_ids;             /* flows continuing through this event */
  size_t n_flow_ids;
  const uint64_t *terminating_flow_ids; /* flows ending at this event */
  size_t n_terminating_flow_ids;
  uint64_t correlation_id;              /* 0: none */
  const char *correlation_id_str;       /* NULL: none (interned) */
  const tmr_counter_value *extra_counters;
  size_t n_extra_counters;
  const tmr_frame *inline_frames;       /* an inline callstack, outermost first */
  size_t n_inline_frames;
  tmr_callstack callstack;              /* an interned callstack, 0: none */
  tmr_source_location *source_location; /* interned; NULL: none */
} tmr_event_extras;

typedef enum tmr_event_type {
  TMR_SLICE_BEGIN = 1,
  TMR_SLICE_END = 2,
  TMR_INSTANT = 3,
} tmr_event_type;

/* Every event function: `w` NULL does nothing; `category` NULL means "no
 * category" (recorded whenever track_event runs); a disabled category does
 * nothing; `ts` is ns on the writer's clock (BOOTTIME unless
 * tmr_writer_use_clock() chose another), or TMR_NOW to read the clock
 * (tmr_now_clock: the TSC or BOOTTIME, written on its own clock id). `name` and
 * strings in extras are copied (interned per writer). */
TM_API void tmr_slice_begin(tmr_writer *w, tmr_track track, tmr_category *category, const char *name,
                            int64_t ts);
/* Ends the innermost slice open on `track`. Debug builds (NDEBUG unset)
 * abort on an end below a slice this writer began on the track or before
 * its begin's timestamp: strict nesting per track. */
TM_API void tmr_slice_end(tmr_writer *w, tmr_track track, tmr_category *category, int64_t ts);
TM_API void tmr_instant(tmr_writer *w, tmr_track track, tmr_category *category, const char *name,
                        int64_t ts);
/* A slice whose duration is known: written as a begin at ts and an end at
 * ts + dur_ns (dur_ns >= 0). */
TM_API void tmr_complete(tmr_writer *w, tmr_track track, tmr_category *category, const char *name,
                         int64_t ts, int64_t dur_ns, const tmr_event_extras *extras);
/* Any of the above with extras (flows, args, callstacks...). */
TM_API void tmr_event(tmr_writer *w, tmr_event_type type, tmr_track track, tmr_category *category,
                      const char *name, int64_t ts, const tmr_event_extras *extras);
/* A value on a counter track (tmr_track_desc.is_counter). */
TM_API void tmr_counter_int(tmr_writer *w, tmr_track track, tmr_category *category, int64_t ts,
                            int64_t value);
TM_API void tmr_counter_double(tmr_writer *w, tmr_track track, tmr_category *category, int64_t ts,
                               double value);

/* Renames the calling thread, whose writer `w` must be (its thread track
 * descriptor, written again in the writer's next generation). */
TM_API void tmr_writer_set_thread_name(tmr_writer *w, const char *name);

/* A sequence-scoped clock (ids 64..127): from now on, explicit event
 * timestamps of this writer are readings of clock `clock_id`, in units of
 * `unit_ns` ns, and at this instant the clock reads `now_value`. The
 * writer records that reading as a clock_snapshot of its sequence (and
 * again after every incremental-state reset, before the generation's
 * first event), so readers convert it to BOOTTIME; the packets the writer
 * adds for an event on it (a generation's first ones, track descriptors)
 * are written on BOOTTIME at the event's time, converted. TMR_NOW timestamps stay on the session's TMR_NOW clock
 * (tmr_now_clock). False for an id outside 64..126 (127 is
 * TMR_TSC_CLOCK_ID) or unit_ns 0. */
TM_API bool tmr_writer_use_clock(tmr_writer *w, uint32_t clock_id, uint64_t unit_ns, int64_t now_value);
/* Back to BOOTTIME for explicit timestamps. */
TM_API void tmr_writer_use_boottime(tmr_writer *w);

/* --- data sources --------------------------------------------------------- */

typedef struct tmr_data_source_instance tmr_data_source_instance;

typedef struct tmr_data_source_desc {
  const char *name; /* matched against DataSourceConfig.name */
  /* Called when a session starts the data source: `config` is the raw
   * DataSourceConfig exactly as in the TraceConfig, fields this library
   * does not know included; borrowed for the call. Runs on the thread of
   * tmr_session_start(), or with a START_TRACING trigger on the session's
   * own thread; on_stop runs on the session's thread. Keep both short. */
  void (*on_start)(void *user, tmr_data_source_instance *instance, const uint8_t *config,
                   size_t config_len);
  /* Called when the session stops; write final packets here. */
  void (*on_stop)(void *user, tmr_data_source_instance *instance);
  void *user;
} tmr_data_source_desc;

/* Registers a data source for every later session. False if the name is
 * empty, "track_event", or taken. */
TM_API bool tmr_register_data_source(const tmr_data_source_desc *desc, GError **error);

/* The calling thread's writer for a running data source instance (its own
 * sequence, on the instance's target_buffer). */
TM_API tmr_writer *tmr_data_source_writer(tmr_data_source_instance *instance);

/* Writes one TracePacket made of `fields` (encoded TracePacket fields,
 * e.g. a payload of your own) plus timestamp and sequence id. */
TM_API void tmr_write_packet(tmr_writer *w, int64_t ts, const uint8_t *fields, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* TRACEMERGE_RECORD_H */
