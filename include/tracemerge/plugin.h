/*
 * tracemerge reader plugin ABI, version 2.
 *
 * A reader is a shared object that understands exactly one trace format. It
 * exports one symbol, TM_READER_ENTRY_SYMBOL, a function returning a pointer
 * to a static tm_reader_descriptor. The host (libtracemerge) finds readers
 * with dlopen, asks each one's probe() about the first bytes of every input
 * file, and streams the chosen file to the winner with open/feed/finish/close.
 *
 * A reader never converts timestamps, never sees another file and never
 * writes a table: it tells the host "on this clock, at this raw time, this
 * happened" through the host services table below. The host owns clocks,
 * machines, threads, tracks, sorting and the SQL surface.
 *
 * The plugin has no link-time dependency on the host: every host function it
 * may call is reached through the tm_host_services table passed to open().
 * This header is the whole contract; it includes only standard C headers.
 * docs/plugin-guide.md explains how to write, version, configure and ship a
 * reader.
 *
 * Versioning
 * ----------
 * TM_READER_ABI_VERSION is bumped on an incompatible change. A descriptor
 * declares the range of versions it works with, [abi_min, abi_version];
 * the host loads it if that range meets the versions the host speaks
 * (this header's hosts speak 1 and 2) and then speaks the highest version
 * both know. Version 1 descriptors (which began with `abi_version == 1`
 * and had no struct_size) keep loading.
 *
 * Every struct that crosses the boundary, in either direction, starts with
 * `uint32_t struct_size`, set by whoever fills it to sizeof the struct as it
 * was compiled. The reader of a struct uses only the fields that both its
 * own definition and `struct_size` cover; fields the other side lacks take
 * their documented defaults. So a compatible addition is a field appended
 * at the end of a struct, without a version bump:
 * - tm_host_services: the host fills it; a reader checks
 *   TM_HOST_HAS(services, field) before using a service added after
 *   version 2. Every service inside `struct_size` is non-NULL.
 * - tm_reader_descriptor, tm_reader_stat, tm_track_desc, tm_slice_fields,
 *   tm_import_log_arg: the reader fills them (set struct_size with sizeof,
 *   or with the TM_*_INIT macros below); the host reads as far as both
 *   sizes cover. A struct smaller than its version-2 layout is invalid.
 * - Arrays of such structs (descriptor stats, import-log args) have every
 *   element's struct_size equal; the host steps through them by it.
 * Exempt: small value types passed by value (tm_arg_value, the id
 * typedefs). A by-value argument is copied into the callee as the caller
 * compiled it, with a layout the calling convention fixes from the
 * callee's own definition, so the callee could never read past a size
 * field to a longer version: such a type cannot grow compatibly whatever
 * it carries. Their layout is therefore frozen as version 1 had it
 * (tm_arg_value: the tm_arg_type, then an 8-byte union at offset 8, 16
 * bytes in all), and a new kind of value needs a new service.
 * tests/test_reader_abi.c checks the layout and that a version-1 reader's
 * values arrive intact.
 *
 * Ownership and lifetimes
 * -----------------------
 * - Strings passed to the host are borrowed for the duration of the call
 *   only; the host copies what it keeps (intern_string returns an id).
 * - Ids returned by the host (tm_str_id, tm_clock_ref, tm_machine_ref,
 *   tm_process_ref, tm_thread_ref, tm_track_ref, tm_args_ref) are plain
 *   integers valid for the whole import session; nothing needs freeing.
 * - The chunk passed to feed() is borrowed until feed() returns; a reader
 *   that needs bytes across chunk boundaries copies them.
 * - The tm_host pointer, the services table and the config bytes passed to
 *   open() are valid from open() until close() returns.
 * - The reader state returned by open() is owned by the reader and released
 *   by its close(), which the host calls exactly once per successful open(),
 *   also after an error.
 * - The descriptor and everything it points to (names, stats) must stay
 *   valid while the object is loaded: make them static.
 *
 * - Ids are opaque. Equal strings get equal ids within a file and a ref
 *   names one row, but the numbers themselves differ between imports of
 *   the same file (they depend on the files read before, and on the
 *   thread the reader runs on): derive nothing that reaches the output
 *   (a flow id, a cookie, an arg) from an id's value; hash the bytes.
 *
 * Threading: the host calls a reader from one thread at a time, but not
 * always the same one: with more than one import thread its callbacks may
 * run on a worker thread (keep no thread-local state across callbacks);
 * the services must only be called from inside a callback of that
 * reader, on the thread that runs it.
 */
#ifndef TRACEMERGE_PLUGIN_H
#define TRACEMERGE_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TM_READER_ABI_VERSION 2u
#define TM_READER_ENTRY_SYMBOL "tracemerge_reader_entry"

#if defined(__GNUC__)
#define TM_READER_EXPORT __attribute__((visibility("default")))
#else
#define TM_READER_EXPORT
#endif

/* Interned string id. 0 is the NULL string. */
typedef uint32_t tm_str_id;
/* References to host objects. Each is an opaque id; 0 is never valid
 * except for tm_args_ref, where 0 means "no args". */
typedef uint32_t tm_clock_ref;
typedef uint32_t tm_machine_ref;
typedef uint32_t tm_process_ref;
typedef uint32_t tm_thread_ref;
typedef uint32_t tm_track_ref;
typedef uint32_t tm_args_ref;
typedef uint32_t tm_mapping_ref;  /* 0: no mapping */
typedef uint32_t tm_frame_ref;
typedef uint32_t tm_callsite_ref; /* 0: the root (no parent) */

#define TM_NO_ARGS ((tm_args_ref)0)

/* Builtin clock numbers, as in Perfetto's BuiltinClock. */
enum tm_builtin_clock {
  TM_CLOCK_REALTIME = 1,
  TM_CLOCK_REALTIME_COARSE = 2,
  TM_CLOCK_MONOTONIC = 3,
  TM_CLOCK_MONOTONIC_COARSE = 4,
  TM_CLOCK_MONOTONIC_RAW = 5,
  TM_CLOCK_BOOTTIME = 6,
  TM_CLOCK_TRACE_FILE = 11, /* a file's private timeline */
};

/* Descriptor flags. */
enum tm_reader_flags {
  /* The format has no absolute clock: its events sit on the file's private
   * timeline (clock_private()). The host claims trace time with it if no
   * one did before, else ties it to trace time by its own rules. */
  TM_READER_CLOCKLESS = 1u << 0,
  /* In this format pid 0 / tid 0 is the idle process ("swapper"), mapped
   * to the machine's placeholder rows instead of fresh ones. */
  TM_READER_PID0_IS_IDLE = 1u << 1,
};

typedef enum tm_status {
  TM_OK = 0,
  /* The file is damaged; the reader has called report_error() and wants no
   * more bytes. Everything emitted before stays in the timeline. */
  TM_ERROR = 1,
} tm_status;

/* Value types of an arg (as in trace_processor's args.value_type). */
typedef enum tm_arg_type {
  TM_ARG_INT = 0,
  TM_ARG_UINT = 1,
  TM_ARG_STRING = 2, /* value.str_id */
  TM_ARG_REAL = 3,
  TM_ARG_POINTER = 4,
  TM_ARG_BOOL = 5,
  TM_ARG_JSON = 6, /* value.str_id holds JSON text */
} tm_arg_type;

typedef struct tm_arg_value {
  tm_arg_type type;
  union {
    int64_t int_value; /* INT, UINT (bit pattern), POINTER, BOOL (0/1) */
    double real_value;
    tm_str_id str_id;
  } u;
} tm_arg_value;

/* One key/value pair of an import-log entry (the import_log service).
 * Unlike tm_arg_value, strings are passed as bytes, so the host interns
 * only the entries it keeps. */
typedef struct tm_import_log_arg {
  uint32_t struct_size; /* sizeof(tm_import_log_arg) */
  uint32_t type;        /* tm_arg_type */
  const char *key;      /* NUL-terminated, e.g. "line" */
  int64_t int_value;    /* INT, UINT (bit pattern), POINTER, BOOL (0/1) */
  double real_value;    /* REAL */
  const char *string;   /* STRING, JSON: `string_len` bytes, no NUL needed */
  size_t string_len;
} tm_import_log_arg;

#define TM_IMPORT_LOG_ARG_INIT .struct_size = sizeof(tm_import_log_arg)

/* How a flow attaches to a slice. */
typedef enum tm_flow_direction {
  TM_FLOW_OUT = 0,  /* a flow starts at the bound slice */
  TM_FLOW_STEP = 1, /* link from the flow's previous slice, continue from here */
  TM_FLOW_IN = 2,   /* the flow ends at the bound slice */
  /* Starts the flow at the bound slice if it is not in flight, else steps
   * (TrackEvent flow_ids). Unlike TM_FLOW_STEP, a first use is no error. */
  TM_FLOW_CONTINUE = 3,
  /* Like TM_FLOW_IN, but the flow stays in flight from the slice it came
   * from: a later end or step of the same id links from that slice again
   * (Chrome JSON flows, which trace_processor never closes: a flow_out
   * bound to one slice and flow_in bound to two make two flows). */
  TM_FLOW_IN_KEEP = 4,
} tm_flow_direction;

typedef enum tm_flow_binding {
  /* The innermost slice open on the track at the flow's timestamp (this is
   * the slice just begun when the flow is emitted right after its begin). */
  TM_FLOW_BIND_ENCLOSING = 0,
  /* The next slice that begins on the track at or after the timestamp. */
  TM_FLOW_BIND_NEXT_BEGIN = 1,
} tm_flow_binding;

/* Description of a track to intern. Tracks are interned per (file, machine,
 * type, dimensions): the same description returns the same track. A
 * zeroed description (but for struct_size and type) is a slice track on
 * the file's machine with no dimension. */
typedef struct tm_track_desc {
  uint32_t struct_size;    /* sizeof(tm_track_desc) */
  uint32_t is_counter;     /* 1: counter track, 0: slice track */
  const char *type;        /* trace_processor track type, e.g. "json_counter" */
  tm_str_id name;          /* may be 0 */
  tm_thread_ref thread;    /* dimension utid, or 0 */
  tm_process_ref process;  /* dimension upid, or 0 */
  tm_str_id scope;         /* extra dimension (async scope/category), or 0 */
  uint64_t key;            /* extra dimension (e.g. cookie or uuid), or 0 */
  tm_str_id unit;          /* counter unit, or 0 */
  /* The machine of a track with neither thread nor process (0: the file's
   * machine); a reader of embedded machines (proto machine_id) places its
   * global and cpu tracks with it. A thread or process dimension puts the
   * track on that thread's or process's machine whatever this says. */
  tm_machine_ref machine;
  /* has_cpu != 0: a machine-wide track with a cpu dimension (e.g. {type
   * "cpu_frequency", is_counter 1, name "cpufreq"}), on `machine`; thread
   * and process are then ignored. Also creates the cpu row. A cpu above
   * 4095 gets a ref that names no track: every call on it does nothing
   * and is counted in sched_cpu_out_of_range (one per call, nothing for
   * track_intern itself), not in reader_call_refused. */
  uint32_t has_cpu;
  uint32_t cpu;
  /* Read by track_async only (appended after version 2; 0: none). */
  /* The track (or async slot) the set's tracks are children of: their
   * parent_id. A slot stands for its set's first track, made if needed
   * (trace_processor's TrackCompressor::DefaultTrack). */
  tm_track_ref parent;
  /* One more dimension of the set, e.g. the parent's TrackDescriptor uuid,
   * so siblings under different parents never share tracks. */
  uint64_t set_key;
  /* Merge by key instead of by name: sets are told apart by this string,
   * not by `name`, and each track of the set is named after the slot
   * (cookie) whose event made it (TrackDescriptor sibling_merge_key). */
  tm_str_id merge_key;
  /* Non-zero: the tracks this slot's events make have no name; `name`
   * (or `merge_key`) still says which set the slot is in. A TrackDescriptor
   * child track without a name merges by its first event's name, as
   * trace_processor's merge key does, but its name column stays NULL
   * (docs/formats.md §1.9). */
  uint32_t nameless;
} tm_track_desc;

#define TM_TRACK_DESC_INIT .struct_size = sizeof(tm_track_desc)

/* Common fields of a slice-like event. */
typedef struct tm_slice_fields {
  uint32_t struct_size; /* sizeof(tm_slice_fields) */
  tm_track_ref track;
  tm_clock_ref clock;
  tm_str_id name;       /* 0: no name */
  tm_str_id category;   /* 0: none */
  tm_args_ref args;     /* TM_NO_ARGS or a committed arg set (else refused) */
  int64_t ts;           /* raw time on `clock`, in ns of that clock */
  int64_t thread_ts;    /* thread CPU time in ns, or TM_UNKNOWN_TIME */
  int64_t thread_dur;   /* complete events: thread CPU duration, or TM_UNKNOWN_TIME */
} tm_slice_fields;

#define TM_UNKNOWN_TIME INT64_MIN

/* A slice with no thread time: set the other fields after this. */
#define TM_SLICE_FIELDS_INIT                                                \
  .struct_size = sizeof(tm_slice_fields), .thread_ts = TM_UNKNOWN_TIME,     \
  .thread_dur = TM_UNKNOWN_TIME

/* The columns of a frame timeline slice (expected_frame_timeline_slice,
 * actual_frame_timeline_slice): SurfaceFlinger's view of a display frame,
 * or of one app layer's surface frame. String columns are interned ids (0:
 * NULL); tokens and flags use INT64_MIN / -1 for NULL. */
typedef struct tm_frame_timeline_fields {
  uint32_t struct_size;         /* sizeof(tm_frame_timeline_fields) */
  uint32_t is_actual;           /* 0: expected, 1: actual */
  int64_t display_frame_token;
  int64_t surface_frame_token;  /* INT64_MIN for display frames */
  tm_process_ref process;       /* upid */
  tm_str_id layer_name;
  tm_str_id present_type, jank_type, jank_severity_type, prediction_type;
  tm_str_id jank_tag;
  int32_t on_time_finish;       /* -1: NULL */
  int32_t gpu_composition;      /* -1: NULL */
} tm_frame_timeline_fields;

typedef struct tm_host tm_host; /* opaque: one per file being read */

/* The host's functions, passed to open(). Every field within struct_size is
 * set: no service is NULL. A call the host cannot take (a NULL or short
 * struct, a ref that names no row where one is needed, no key or name)
 * is refused: it does nothing, answers 0 or false if it answers, and is
 * counted in the stat "reader_call_refused" with an import log row naming
 * the call and why (docs/plugin-guide.md, "Calls the host refuses"). */
typedef struct tm_host_services {
  /* sizeof(tm_host_services) as the host was built; fields past it absent. */
  uint32_t struct_size;
  /* The ABI version the host speaks with this reader (2 for this header). */
  uint32_t abi_version;

  /* --- strings --------------------------------------------------------- */
  /* Interns `len` bytes of `s` (need not be NUL-terminated); returns its id.
   * Interning an empty string returns a valid id distinct from 0. A NUL
   * byte among the `len` is kept as U+FFFD, so a string is never cut. */
  tm_str_id (*intern_string)(tm_host *host, const char *s, size_t len);

  /* --- clocks ---------------------------------------------------------- */
  /* The file's private timeline (TRACE_FILE), on the file's base machine. */
  tm_clock_ref (*clock_private)(tm_host *host);
  /* A builtin or global clock (1..63, >=128) of a machine. */
  tm_clock_ref (*clock_builtin)(tm_host *host, tm_machine_ref machine,
                                uint32_t clock_id);
  /* A sequence-scoped clock (64..127) of one packet sequence. */
  tm_clock_ref (*clock_sequence)(tm_host *host, tm_machine_ref machine,
                                 uint32_t sequence_id, uint32_t clock_id);
  /* Asks to make `clock` the trace-time clock. The first claimer wins;
   * later claims by other files are ignored. Returns true if `clock` is
   * now trace time. Clockless readers need not call this. */
  bool (*claim_trace_time)(tm_host *host, tm_clock_ref clock);
  /* Adds a snapshot: readings of several clocks at one instant, in ns.
   * Returns false (and counts invalid_clock_snapshots) if rejected. */
  bool (*add_clock_snapshot)(tm_host *host, const tm_clock_ref *clocks,
                             const int64_t *values_ns, size_t count);
  /* Announces a remote clock sync (Perfetto's RemoteClockSync: readings
   * that relate a client machine's clocks to the host's), whichever
   * machine it carries, before adding any of its readings. False: the host
   * refuses it, because the manifest pins the file to a single clock and
   * machine, which fails the import; add nothing of it then. */
  bool (*remote_clock_sync)(tm_host *host);

  /* --- machines, processes, threads ------------------------------------ */
  /* The machine the file is attributed to (the host machine by default). */
  tm_machine_ref (*machine_default)(tm_host *host);
  /* An embedded machine of this file (proto machine_id); 0 = default. */
  tm_machine_ref (*machine_embedded)(tm_host *host, uint32_t raw_id);
  /* Sets one column of a machine row from what the trace says about the
   * system: TM_ARG_STRING for "name", "sysname", "release", "version",
   * "arch", "android_build_fingerprint", "android_device_manufacturer";
   * TM_ARG_INT for "num_cpus", "android_sdk_version", "system_ram_bytes"
   * (which also sets system_ram_gb). Other columns or types are ignored. */
  void (*machine_set_info)(tm_host *host, tm_machine_ref machine,
                           const char *column, tm_arg_value value);
  /* The process `pid` on `machine`, created on first use. Processes are
   * shared by every file attributed to the same machine. */
  tm_process_ref (*process)(tm_host *host, tm_machine_ref machine,
                            int64_t pid);
  /* Thread `tid` of process `pid` on `machine`, created on first use.
   * pid < 0: the process is unknown; the thread keeps the process it has,
   * or none, until a later call names it. */
  tm_thread_ref (*thread)(tm_host *host, tm_machine_ref machine, int64_t pid,
                          int64_t tid);
  void (*process_set_name)(tm_host *host, tm_process_ref process,
                           tm_str_id name);
  void (*thread_set_name)(tm_host *host, tm_thread_ref thread, tm_str_id name);
  /* Adds one arg to the process' / thread's arg set (e.g. sort hints). */
  void (*process_add_arg)(tm_host *host, tm_process_ref process, tm_str_id key,
                          tm_arg_value value);
  void (*thread_add_arg)(tm_host *host, tm_thread_ref thread, tm_str_id key,
                         tm_arg_value value);
  /* process.cmdline (the full command line, interned), process.parent_upid
   * and process.uid. */
  void (*process_set_cmdline)(tm_host *host, tm_process_ref process,
                              tm_str_id cmdline);
  void (*process_set_parent)(tm_host *host, tm_process_ref process,
                             tm_process_ref parent);
  void (*process_set_uid)(tm_host *host, tm_process_ref process, int64_t uid);

  /* --- tracks ------------------------------------------------------------ */
  /* The thread's main slice track in this file ("thread_execution"). */
  tm_track_ref (*track_thread)(tm_host *host, tm_thread_ref thread);
  /* Any other track, interned by description (see tm_track_desc); 0 for a
   * description without a type or smaller than its version-2 layout. */
  tm_track_ref (*track_intern)(tm_host *host, const tm_track_desc *desc);
  /* Sets track.parent_id (a nesting hierarchy, e.g. TrackDescriptor
   * parent_uuid). Both tracks must belong to this file. Either may be an
   * async slot (track_async): a slot `track` sets its set's parent; a slot
   * `parent` stands for its set's first track, made if needed. */
  void (*track_set_parent)(tm_host *host, tm_track_ref track,
                           tm_track_ref parent);
  /* Adds one arg to the track's source arg set (track.source_arg_set_id),
   * e.g. "description"; `key` and string values are interned ids. On an
   * async slot, the args go to every track the slot's events make. */
  void (*track_add_source_arg)(tm_host *host, tm_track_ref track, tm_str_id key,
                               tm_arg_value value);

  /* --- args -------------------------------------------------------------- */
  /* Builds one arg set: add pairs, then commit. One set is under
   * construction per host at a time; commit returns TM_NO_ARGS if empty.
   * `key` is the full key (e.g. "args.list[2].x"); the host derives the
   * flat key by removing array indexes. */
  void (*args_add)(tm_host *host, tm_str_id key, tm_arg_value value);
  tm_args_ref (*args_commit)(tm_host *host);

  /* --- events -------------------------------------------------------------- */
  void (*slice_begin)(tm_host *host, const tm_slice_fields *f);
  /* Ends the innermost open slice on the track. If `f->name` or
   * `f->category` is non-zero, the innermost open slice with that name /
   * category is ended instead (Chrome JSON "E" rules); none matching: the
   * end is ignored and counted. `f->args` are merged into the slice. */
  void (*slice_end)(tm_host *host, const tm_slice_fields *f);
  /* A slice with known duration (dur 0 = instant). */
  void (*slice_complete)(tm_host *host, const tm_slice_fields *f,
                         int64_t dur_ns);
  void (*counter)(tm_host *host, tm_track_ref track, tm_clock_ref clock,
                  int64_t ts, double value, tm_args_ref args);
  /* Binds flow `flow_id` (scoped to this file) to a slice on `track` as
   * described by `binding`; `args` describe the flow (may be TM_NO_ARGS). */
  void (*flow)(tm_host *host, tm_track_ref track, tm_clock_ref clock,
               int64_t ts, uint64_t flow_id, tm_flow_direction direction,
               tm_flow_binding binding, tm_args_ref args);

  /* --- scheduling -------------------------------------------------------- */
  /* A context switch on `cpu` of `machine`: `prev` stops running, leaving
   * in `prev_state` (the kernel's letters, e.g. "S", "R+", "D"; 0 unknown),
   * and `next` starts with priority `next_prio`. The host turns the ordered
   * switches of each cpu into sched and thread_state rows. */
  void (*sched_switch)(tm_host *host, tm_clock_ref clock, int64_t ts,
                       tm_machine_ref machine, uint32_t cpu,
                       tm_thread_ref prev, tm_str_id prev_state,
                       tm_thread_ref next, int32_t next_prio);
  /* `thread` becomes runnable on `target_cpu` (sched_waking/sched_wakeup),
   * woken by `waker` (0 if unknown). */
  void (*sched_waking)(tm_host *host, tm_clock_ref clock, int64_t ts,
                       tm_machine_ref machine, uint32_t target_cpu,
                       tm_thread_ref thread, tm_thread_ref waker);

  /* --- profiling --------------------------------------------------------- */
  /* A binary mapping (stack_profile_mapping), interned by all its fields. */
  tm_mapping_ref (*mapping)(tm_host *host, tm_str_id name, tm_str_id build_id,
                            uint64_t start, uint64_t end, uint64_t exact_offset,
                            uint64_t load_bias);
  /* A frame (stack_profile_frame), interned per (name, mapping, rel_pc). */
  tm_frame_ref (*frame)(tm_host *host, tm_str_id function_name,
                        tm_mapping_ref mapping, uint64_t rel_pc);
  /* The callsite `frame` called from `parent` (0: outermost), interned per
   * (parent, frame); depth 0 is the outermost frame. The ref minus one is
   * the callsite's `stack_profile_callsite.id` when the host gave it; a
   * reader records it in an arg (e.g. a slice's "callsite_id") with
   * args_add_callsite when the host has it. */
  tm_callsite_ref (*callsite)(tm_host *host, tm_callsite_ref parent,
                              tm_frame_ref frame);
  /* A profiler sample of `thread` at `callsite` (its innermost frame), in
   * the sample table the descriptor names (sample_table). `cpu` is -1 when
   * unknown; a known cpu is also a cpu row of the thread's machine. Samples
   * are placed on the timeline like slices: `ts` is raw time on `clock`. */
  void (*sample)(tm_host *host, tm_clock_ref clock, int64_t ts,
                 tm_thread_ref thread, tm_callsite_ref callsite, int32_t cpu);

  /* --- metadata, stats, errors ------------------------------------------ */
  /* A metadata row scoped to this file and its machine (e.g.
   * "json_metadata.<key>"). Setting a name twice keeps the last value. */
  void (*metadata_set_int)(tm_host *host, const char *name, int64_t value);
  void (*metadata_set_string)(tm_host *host, const char *name, tm_str_id value);
  /* Adds `delta` to the stat `name` for this file and its machine. A stat
   * the descriptor declares (or one of the host's own) keeps its declared
   * severity, source and description; any other name is created with
   * severity "error", source "trace" and no description. */
  void (*stat_add)(tm_host *host, const char *name, int64_t delta);
  /* Counts one occurrence of stat `name` for this file and its machine,
   * exactly as stat_add(host, name, 1), and records its details as a row
   * of _trace_import_logs: `byte_offset` in the file (-1 if unknown) and
   * the `n_args` pairs of `args` (NULL if 0) as the row's arg set. The
   * host keeps rows for the first few occurrences of each stat per file
   * and machine only (16 today); later calls just count, so a reader may
   * call this for every occurrence. `name`, `args` and every string they
   * point to are borrowed for the call only; the host copies what it
   * keeps. */
  void (*import_log)(tm_host *host, const char *name, int64_t byte_offset,
                     const tm_import_log_arg *args, size_t n_args);
  /* Reports damage at `byte_offset` of the file (-1 if unknown). The first
   * report of a file is the one shown to the user; the reader then returns
   * TM_ERROR from feed()/finish(). */
  void (*report_error)(tm_host *host, int64_t byte_offset, const char *message);

  /* Services added after version 2 go here, each checked with
   * TM_HOST_HAS() by readers that use it. */

  /* A slot for the async slices of `cookie` in the set of tracks `set`
   * describes (type, name, process or thread, scope, machine, and when the
   * description is that long `parent`, `set_key` and `merge_key`; `key`,
   * `unit` and the cpu are ignored). Slices begun, ended or completed on the
   * returned ref, and flows bound to it, land on one of the set's tracks,
   * chosen in trace-time order as trace_processor's TrackCompressor
   * chooses: the track holding the cookie, else the first track with no
   * slice open (it takes the cookie), else a new track. So non-overlapping
   * async slices share a track; the set's tracks share a track_group_id.
   * A new track takes the name given with the slot whose event made it
   * (the set's name, unless the set merges by `merge_key`; none when the
   * slot's description says `nameless`).
   * `flags`: TM_ASYNC_UNNESTABLE. */
  tm_track_ref (*track_async)(tm_host *host, const tm_track_desc *set,
                              uint64_t cookie, uint32_t flags);

  /* --- system traces (after version 2: check with TM_HOST_HAS) ---- */
  /* Begins a frame timeline slice with its columns, as slice_begin on
   * f->track (a slot from track_async: expected and actual frames are
   * async slices of their process). Actual surface frames are joined by
   * flows to the actual display frame whose token they name, when that
   * frame begins after them. */
  void (*frame_timeline_begin)(tm_host *host, const tm_slice_fields *f,
                               const tm_frame_timeline_fields *frame);
  /* A row of ftrace_event (trace_processor's `raw`): a kernel event of
   * `thread` on `cpu` of `machine`, named `name`, its fields as `args`. */
  void (*ftrace_event)(tm_host *host, tm_clock_ref clock, int64_t ts,
                       tm_machine_ref machine, uint32_t cpu,
                       tm_thread_ref thread, tm_str_id name, tm_args_ref args);
  /* A row of android_logs: logcat message `msg` of `thread` with priority
   * `prio` (2 verbose .. 7 fatal, 0 unknown) and tag `tag`. */
  void (*android_log)(tm_host *host, tm_clock_ref clock, int64_t ts,
                      tm_thread_ref thread, uint32_t prio, tm_str_id tag,
                      tm_str_id msg, tm_args_ref args);
  /* A row of package_list (debuggable, profileable: 0/1, -1 unknown). */
  void (*package)(tm_host *host, tm_machine_ref machine, tm_str_id name,
                  int64_t uid, int32_t debuggable, int32_t profileable,
                  int64_t version_code);
  /* The thread began (is_end 0: thread.start_ts) or ended (1: end_ts) at
   * ts; set in timeline order, the last call wins. */
  void (*thread_lifetime)(tm_host *host, tm_clock_ref clock, int64_t ts,
                          tm_thread_ref thread, uint32_t is_end);
  /* Sets (not adds) the value of the stat `name`[idx] (idx < 0: the
   * single-value stat `name`) for this file and its machine: counters a
   * trace reports about itself (per cpu ftrace buffer stats, per buffer
   * traced stats), which are totals, not occurrences. */
  void (*stat_set_indexed)(tm_host *host, const char *name, int64_t idx,
                           int64_t value);
  /* Why `thread` last blocked: io_wait (0/1, -1 unknown) and the kernel
   * function it blocked in (0 unknown), set on its latest sleeping
   * thread_state row before ts. */
  void (*sched_blocked_reason)(tm_host *host, tm_clock_ref clock, int64_t ts,
                               tm_thread_ref thread, int32_t io_wait,
                               tm_str_id blocked_function);

  /* --- budgets (after version 2) ---------------------------------------- */
  /* The budget `which` (tm_budget) for this file, or -1 if the host sets
   * none (the reader then keeps its own default). A reader applies it to
   * what it buffers; when its buffering would pass it, the reader stops
   * the file there: it counts the stat "reader_record_size_exceeded"
   * (stat_add or import_log), calls report_error with the offset and a
   * message naming the budget (e.g. "... longer than 536870912 bytes
   * (budget --max-record-size)"), and returns TM_ERROR; everything it
   * emitted before stays. */
  int64_t (*budget)(tm_host *host, uint32_t which);

  /* --- per machine (after version 2) ----------------------------------- */
  /* As stat_set_indexed, metadata_set_int and metadata_set_string, but for
   * `machine` (machine_default() or a machine_embedded() of this file)
   * instead of the file's own: what a trace holding several machines says
   * about each one (a Perfetto trace's TraceStats or TraceConfig on
   * packets naming a machine_id). */
  void (*machine_stat_set_indexed)(tm_host *host, tm_machine_ref machine, const char *name,
                                   int64_t idx, int64_t value);
  void (*machine_metadata_set_int)(tm_host *host, tm_machine_ref machine, const char *name,
                                   int64_t value);
  void (*machine_metadata_set_string)(tm_host *host, tm_machine_ref machine,
                                      const char *name, tm_str_id value);

  /* --- args without interning (after version 2) ------------------------ */
  /* As args_add with a string value (`type` TM_ARG_STRING or TM_ARG_JSON;
   * any other is taken as TM_ARG_STRING) of `len` bytes of `s`, which need
   * not be NUL-terminated (a NUL is kept as U+FFFD, as by intern_string;
   * s NULL: ""). For values that may occur once (URLs, ids, long text):
   * the host keeps them beside its string pool instead of interning them,
   * and reads them back the same. Check with TM_HOST_HAS. */
  void (*args_add_string)(tm_host *host, tm_str_id key, tm_arg_type type,
                          const char *s, size_t len);

  /* --- callsites as args (after version 2) ------------------------------ */
  /* As args_add(key, an int of the callsite's stack_profile_callsite.id),
   * the id of `callsite` (0: no arg). A reader records a callsite's id
   * with this, not from the ref's value: a reader parsing on the host's
   * worker thread (core/input/reader_worker.h) holds refs of its own,
   * which the host maps to its rows when it replays the calls. */
  void (*args_add_callsite)(tm_host *host, tm_str_id key, tm_callsite_ref callsite);
} tm_host_services;

/* Budgets a reader asks the host for (tm_host_services.budget). */
typedef enum tm_budget {
  /* The most bytes a reader may hold for one unit of its format: an event
   * or token (JSON), a line (text), an element or text node (XML), a
   * packet (protobuf), one table or stack (profiles). */
  TM_BUDGET_RECORD_BYTES = 1,
  /* Bytes a reader may inflate from compressed data inside its file (e.g.
   * Perfetto's compressed_packets) per byte of the file read so far, once
   * past 64 MiB; past it, the reader cuts the file and counts the stat
   * "container_inflate_ratio_exceeded", as the host does for archives. */
  TM_BUDGET_INFLATE_RATIO = 2,
} tm_budget;


/* track_async flags. */
enum tm_async_flags {
  /* A begin on a cookie already open does not nest (Android's legacy
   * async slices, systrace S/F, saturate at one). */
  TM_ASYNC_UNNESTABLE = 1u << 0,
};

#define TM_HOST_HAS(services, field)                                       \
  ((services)->struct_size >=                                              \
   offsetof(tm_host_services, field) + sizeof((services)->field))

/* The highest probe score the host takes (see tm_reader_descriptor). */
#define TM_PROBE_SCORE_MAX 1000

/* Severity of a stat, as trace_processor's stats.severity. */
typedef enum tm_stat_severity {
  TM_STAT_INFO = 0,      /* "info" */
  TM_STAT_NOTICE = 1,    /* "notice" */
  TM_STAT_DATA_LOSS = 2, /* "data_loss" */
  TM_STAT_ERROR = 3,     /* "error" */
} tm_stat_severity;

/* Where a stat's problem lies, as trace_processor's stats.source. */
typedef enum tm_stat_source {
  TM_STAT_SOURCE_TRACE = 0,    /* "trace": the data says so */
  TM_STAT_SOURCE_ANALYSIS = 1, /* "analysis": the reader could not use it */
} tm_stat_source;

/* Flags of a declared stat (tm_reader_stat.flags). */
enum tm_reader_stat_flags {
  /* The stat is a family of values told apart by an index (a cpu, a
   * buffer), set with stat_set_indexed: the `stats` table has a row per
   * index the reader set and no zero row, as trace_processor shows its
   * indexed stats. */
  TM_READER_STAT_INDEXED = 1u << 0,
};

/* A stat the reader bumps (stat_add, import_log, stat_set_indexed),
 * declared so that the `stats` table shows its severity, source and
 * description, and (unless it is indexed) a zero row for every file and
 * machine before anything is counted. Reader stats are counted per file
 * and machine. */
typedef struct tm_reader_stat {
  uint32_t struct_size; /* sizeof(tm_reader_stat) */
  uint32_t severity;    /* tm_stat_severity */
  uint32_t source;      /* tm_stat_source */
  const char *name;     /* e.g. "json_parser_failure" */
  const char *description;
  /* --- after version 2's first release: read only when struct_size
   * covers it (an older declaration has no flags) ------------------- */
  uint32_t flags; /* tm_reader_stat_flags */
} tm_reader_stat;

#define TM_READER_STAT(name, severity, source, description)                 \
  { sizeof(tm_reader_stat), (severity), (source), (name), (description), 0 }
/* A stat set per index (TM_READER_STAT_INDEXED). */
#define TM_READER_INDEXED_STAT(name, severity, source, description)         \
  { sizeof(tm_reader_stat), (severity), (source), (name), (description),    \
    TM_READER_STAT_INDEXED }

/* The reader: its identity, its callbacks and what it declares. */
typedef struct tm_reader_descriptor {
  uint32_t struct_size; /* sizeof(tm_reader_descriptor); never 1 */
  /* The newest ABI version the reader speaks (TM_READER_ABI_VERSION of the
   * header it was built with) and the oldest it works with. */
  uint32_t abi_version;
  uint32_t abi_min;
  uint32_t flags;       /* tm_reader_flags */
  const char *name;     /* trace_type reported in trace_file, e.g. "json" */
  const char *description;

  /* Scores the first `len` bytes of a file (at most 512) and its name
   * (may be NULL). 0: not this format; higher wins, up to
   * TM_PROBE_SCORE_MAX (the host clamps anything above it, and negative
   * scores to 0, and warns once about such a reader); ties go to the
   * reader that sorts first by name. The built-in readers score 800-900.
   * Must not keep the pointers. */
  int (*probe)(const uint8_t *head, size_t len, const char *file_name);

  /* Starts reading one file. `config` holds the raw bytes of this reader's
   * config block in the session's configuration (see config_name), never
   * decoded by the host; NULL and 0 when the session has none. Returns the
   * reader state, or NULL after report_error(). */
  void *(*open)(const tm_host_services *services, tm_host *host,
                const uint8_t *config, size_t config_len);
  /* Receives the next chunk of the file. */
  tm_status (*feed)(void *state, const uint8_t *data, size_t len);
  /* End of file: flush partial state. */
  tm_status (*finish)(void *state);
  /* Releases the state. Called once after a successful open(). */
  void (*close)(void *state);

  /* --- declarations (all optional: zero means none / the default) ----- */
  /* The stats this reader bumps (n_stats entries, each struct_size equal). */
  const tm_reader_stat *stats;
  size_t n_stats;
  /* Where files of this format come in trace_file.processing_order among
   * the members of one archive (which decides, e.g., who claims trace time
   * first): lower first, equal ones by name. 0, the default, puts them
   * after nested archives; a negative value before them (Perfetto protobuf
   * traces use -1, as trace_processor parses them first). */
  int32_t processing_priority;
  /* The table the reader's samples go to: "cpu_profile_stack_sample"
   * (NULL means this one), "instruments_sample" or "perf_sample" (samples
   * of a perf-event profiler). A name the host does not know makes it
   * skip the reader. */
  const char *sample_table;
  /* The name of this reader's config block in a session configuration
   * (e.g. "example_config"); NULL if it takes no configuration. The host
   * hands the block's bytes to open() as they are. */
  const char *config_name;
} tm_reader_descriptor;

/* The first fields of a descriptor of this header's version. */
#define TM_READER_DESCRIPTOR_INIT                                           \
  .struct_size = sizeof(tm_reader_descriptor),                              \
  .abi_version = TM_READER_ABI_VERSION, .abi_min = TM_READER_ABI_VERSION

/* The type of the exported entry symbol. */
typedef const tm_reader_descriptor *(*tm_reader_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* TRACEMERGE_PLUGIN_H */
