/*
 * What the recording library's modules share: the session, its data
 * source instances and writers.
 *
 * Data flow: a writer (one thread, one instance) encodes packets into its
 * private chunk; a full chunk is committed to the instance's target buffer
 * (trace_buffer.c); the session's service thread flushes (commits partial
 * chunks), drains buffers into the output file and writes the service's
 * own packets (trace_config, clock snapshots, triggers, trace_stats).
 *
 * Locking: the session lock guards the session's state, its service
 * packets and its list of instances; an instance's lock guards its list
 * of writers; a buffer's lock guards the buffer and every writer's
 * `scraped` offset of writers targeting it. Order: session → instance →
 * buffer. Writers take only their buffer's lock, and only to commit.
 */
#ifndef TMR_SESSION_INTERNAL_H
#define TMR_SESSION_INTERNAL_H

#include <glib.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config/trace_config.h"
#include "record/intern_table.h"
#include "record/trace_buffer.h"
#include "tracemerge/record.h"

#define TMR_SERVICE_SEQUENCE_ID 1u
#define TMR_MAX_CHUNK (16u << 10)
#define TMR_MAX_PACKET (1u << 20)
#define TMR_MAX_CUSTOM_CLOCKS 8
/* Clock snapshots waiting for the next write: the oldest and the latest
 * ones, at most this many (a session that writes only when it stops,
 * with flush_period_ms, takes one per flush). */
#define TMR_MAX_PENDING_SNAPSHOTS 16
/* Trigger packets a session records: the deciding one and later ones up
 * to this many in all (later ones decide nothing; a process of the same
 * user sending triggers in a loop must not grow the session's memory). */
#define TMR_MAX_RECORDED_TRIGGERS 256

/* --- configs ------------------------------------------------------------- */

struct tmr_config {
  tm_trace_config *tc;
};

/* --- data source instances ------------------------------------------------ */

struct tmr_data_source_instance {
  tmr_session *session;
  char *name;
  bool is_track_event;
  tmr_data_source_desc desc;         /* user data sources */
  const uint8_t *raw_config;         /* borrowed from the session's config */
  size_t raw_config_len;
  tmr_trace_buffer *buffer;
  bool ring;                         /* the buffer is a RING_BUFFER */
  size_t chunk_size;
  _Atomic bool running;
  pthread_mutex_t lock;
  GPtrArray *writers;                /* tmr_writer *, owned */
  uint64_t serial;                   /* unique among instances of the process */
  /* track_event only: its category filter. */
  Perfetto__Protos__DataSourceConfig *track_event_config;
};

/* --- writers ---------------------------------------------------------------- */

enum {
  TMR_PENDING_RESET = 1u,  /* start a new incremental-state generation */
  TMR_PENDING_LOST = 2u,   /* packets were lost: mark the next one */
  TMR_PENDING_ANCHOR = 4u, /* a flush: re-anchor the TSC clock at the next TMR_NOW */
};

typedef struct tmr_custom_clock {
  uint32_t id;
  uint64_t unit_ns;
  int64_t boottime_ns; /* a reading of BOOTTIME ... */
  int64_t value;       /* ... and of the clock, at the same instant */
} tmr_custom_clock;

/* A writer's TSC clock (TMR_TSC_CLOCK_ID) is piecewise linear in the
 * TSC: from anchor k on it reads value + (tsc - tsc_at) × mult >> 32.
 * Each anchor starts where the previous segment had got to, so the clock
 * never jumps or runs backwards on one writer; `boottime_ns` is BOOTTIME
 * read with `tsc_at`, and the pair is the anchor's clock snapshot. */
typedef struct tmr_tsc_anchor {
  uint64_t tsc_at;
  uint64_t limit;      /* re-anchor once tsc - tsc_at >= limit (0: at once) */
  uint64_t mult;       /* ns per tick × 2^32; 0: not anchored yet */
  int64_t value;
  int64_t boottime_ns;
} tmr_tsc_anchor;

typedef struct tmr_gen_array {
  uint32_t *gen; /* indexed by registry index: generation last emitted in */
  uint32_t cap;
} tmr_gen_array;

/* One emission mark to take back if the packet that made it is not
 * written: a generation array slot, or an intern entry's. */
typedef struct tmr_undo {
  tmr_gen_array *array; /* NULL: `entry_slot` */
  uint32_t index;
  uint32_t *entry_slot;
  uint32_t old;
} tmr_undo;

#define TMR_NAME_CACHE 64

typedef struct tmr_name_cache {
  const char *text;        /* the caller's pointer */
  tmr_intern_entry *entry; /* its entry (entries never move) */
} tmr_name_cache;

struct tmr_writer {
  tmr_data_source_instance *instance;
  uint32_t sequence_id;
  uint32_t generation;
  bool needs_clear;
  bool first_packet;
  bool dropped;
  _Atomic uint32_t pending; /* TMR_PENDING_*, set by other threads */

  /* What every TrackEvent packet of the fast path repeats after its
   * timestamp: trusted_packet_sequence_id, sequence_flags
   * SEQ_NEEDS_INCREMENTAL_STATE, and track_event's tag with a byte for
   * its length; encoded once (event_header_len bytes used). */
  uint8_t event_header[16];
  uint32_t event_header_len;

  uint32_t thread_track; /* registry index of the writer's thread */
  uint64_t thread_uuid;
  uint32_t thread_track_version;
  /* Clocks: explicit timestamps are on `explicit_clock` (BOOTTIME or a
   * custom clock of tmr_writer_use_clock), TMR_NOW ones on BOOTTIME, or
   * on the TSC clock (TMR_TSC_CLOCK_ID) when `use_tsc`; `default_clock` is the
   * generation's TracePacketDefaults.timestamp_clock_id: the custom
   * clock if one is chosen, else the clock of the event that started the
   * generation, so packets on it carry no clock id. */
  uint32_t default_clock;
  uint32_t explicit_clock;
  bool use_tsc;
  uint32_t tsc_snapshot_generation; /* generation the anchor's snapshot is in; 0: none */
  tmr_tsc_anchor anchor;
  tmr_custom_clock clocks[TMR_MAX_CUSTOM_CLOCKS];
  uint32_t n_clocks;

  /* The private chunk: [0, used) written, [0, committed) published for
   * flushes, [0, scraped) already taken by one (buffer lock). */
  uint8_t *chunk;
  size_t chunk_cap;
  size_t used;
  _Atomic size_t committed;
  size_t scraped;
  uint64_t chunk_epoch;

  /* Scratch for one packet and its interned data; frame room in front. */
  uint8_t *scratch;
  size_t scratch_cap;
  uint8_t *interned;
  size_t interned_cap;
  tmr_undo *undo;
  size_t n_undo, undo_cap;

  tmr_intern_table strings;
  tmr_name_cache name_cache[TMR_NAME_CACHE];
  tmr_gen_array categories, tracks, track_versions, srclocs, callstacks, frames, mappings;

  GHashTable *open_slices; /* debug builds: track uuid → slice stack */
  bool retired;            /* its thread exited; freed at the next flush */
};

tmr_writer *tmr_writer_new(tmr_data_source_instance *instance);
void tmr_writer_free(tmr_writer *w);
/* Commits the published part of the writer's chunk not yet taken (any
 * thread; takes the buffer lock). */
void tmr_writer_scrape(tmr_writer *w);
/* Asks the writer to start a new generation at its next packet. */
void tmr_writer_request_reset(tmr_writer *w);
/* On the writer's own thread: commit what it holds (thread exit). */
void tmr_writer_release(tmr_writer *w);

/* --- sessions ----------------------------------------------------------------- */

typedef enum tmr_session_state {
  TMR_SESSION_CREATED,
  TMR_SESSION_WAITING_TRIGGER,
  TMR_SESSION_RUNNING,
  TMR_SESSION_STOPPING,
  TMR_SESSION_STOPPED,
} tmr_session_state;

typedef struct tmr_pending_trigger {
  char *name;
  char *producer_name;
  int32_t uid;
  int64_t boottime_ns;
} tmr_pending_trigger;

struct tmr_session {
  uint64_t serial;
  tmr_config config; /* a copy, owned */
  char *output_path;
  char *producer_name;

  pthread_mutex_t lock;
  pthread_cond_t cond; /* on CLOCK_MONOTONIC */
  tmr_session_state state;
  char *stop_reason;
  GError *stop_error;
  bool stop_requested;
  bool discard_data; /* stopped without a trigger: no data is returned */

  GPtrArray *buffers;   /* tmr_trace_buffer * */
  GPtrArray *instances; /* tmr_data_source_instance * */
  tmr_data_source_instance *track_event;
  _Atomic uint32_t next_sequence_id;

  /* Output, guarded by output_lock (taken before `lock` when both are). */
  pthread_mutex_t output_lock;
  FILE *out;
  uint64_t bytes_written;
  uint64_t max_file_size;
  bool output_full;
  GByteArray *service_packets; /* framed, waiting for the next write (lock) */
  GQueue pending_snapshots;    /* GByteArray *, framed clock snapshots, oldest first (lock) */

  /* Timers, in g_get_monotonic_time() µs; 0: not set. */
  int64_t start_us, stop_at_us, trigger_deadline_us;
  int64_t file_period_us, next_file_write_us;
  int64_t flush_period_us, next_flush_us;
  int64_t clear_period_us, next_clear_us;
  bool write_into_file;
  bool triggered;
  char *triggered_by;
  uint32_t triggers_recorded; /* trigger packets written (service thread) */
  bool stop_at_is_trigger; /* stop_at_us was set by a trigger's stop_delay_ms */
  GQueue triggers; /* tmr_pending_trigger *, guarded by `lock` */

  pthread_mutex_t join_lock;
  GThread *service_thread;
  int wake_fd;
  int trigger_fd;
  char *trigger_socket_path;
  int unique_lock_fd;

  uint64_t flushes_requested, flushes_succeeded;
  bool use_tsc; /* writers' TMR_NOW reads the TSC (tsc_clock.h) */
};

/* session_output.c: the service packets and the output file. */
void tmr_session_add_service_packet(tmr_session *s, const uint8_t *packet, size_t len);
void tmr_session_add_clock_snapshot(tmr_session *s);
void tmr_session_add_trace_stats(tmr_session *s);
void tmr_session_add_trigger_packet(tmr_session *s, const tmr_pending_trigger *t);
/* Writes the pending service packets and, unless `discard`, every
 * buffer's chunks. False once max_file_size_bytes is reached. */
bool tmr_session_write_out(tmr_session *s, bool discard);
int64_t tmr_boottime_ns(void);

/* data_sources.c: instances, the built-in track_event, user sources. */
void tmr_session_create_instances(tmr_session *s);
void tmr_session_start_instances(tmr_session *s);
void tmr_session_stop_instances(tmr_session *s);
void tmr_session_free_instances(tmr_session *s);
void tmr_instance_flush_writers(tmr_data_source_instance *instance, bool free_retired);
/* At most one session of the process records track_event. */
bool tmr_session_claim_track_event(tmr_session *s, GError **error);
void tmr_session_release_track_event(tmr_session *s);
size_t tmr_registered_data_source_count(void);

/* trigger_ipc.c: triggers from other processes; unique session names. */
bool tmr_trigger_listen(tmr_session *s, GError **error);
void tmr_trigger_unlisten(tmr_session *s);
void tmr_trigger_receive(tmr_session *s); /* reads what the socket holds */
bool tmr_unique_session_lock(tmr_session *s, const char *name, GError **error);
/* Every live session, for in-process triggers. */
void tmr_sessions_register(tmr_session *s);
void tmr_sessions_unregister(tmr_session *s);
void tmr_sessions_foreach(void (*fn)(tmr_session *s, void *user), void *user);
size_t tmr_sessions_count(void);

#endif /* TMR_SESSION_INTERNAL_H */
