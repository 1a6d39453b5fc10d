/*
 * A reader on a second thread: the worker thread runs one file's reader
 * (open, feed, finish, close) against a recording of the host services,
 * and the calling thread replays the recorded calls, in order, on the real
 * services (host_services.c), while the worker parses the next chunk.
 * So parsing overlaps with everything the host does for the parsed events
 * (the string pool's new strings, identity rows, args, the runs), and
 * every row, id, stat and error is the serial run's: the host sees the
 * same calls in the same order, on one thread (docs/architecture.md,
 * "Two threads").
 *
 * What the reader gets back without waiting:
 * - intern_string: an id of a string pool private to the file, which
 *   interns the same bytes (NUL as U+FFFD) and so gives equal ids exactly
 *   to equal strings, as the session's pool does; the replay interns each
 *   new string once, in the order the reader first named it, and maps the
 *   private id to the session's in every call that carries it;
 * - args_commit: a private id per non-empty set (TM_NO_ARGS for an empty
 *   one, as the host answers), mapped likewise;
 * - machine_default: the file's machine, fixed when the file begins;
 * - process, thread, track_thread, track_intern, track_async, mapping,
 *   frame, callsite: a ref of the recording's own, the same for equal
 *   calls (as the host interns them), or 0 where the host's checks
 *   answer 0 (no thread, a description without a type, no frame); the
 *   record carries it, and its replay maps it to the host's answer, so
 *   every later call naming it is replayed with the host's ref. A cpu
 *   track (refused for its cpu) is asked whether it was. A callsite's
 *   id goes into an arg through args_add_callsite, which maps it too.
 * Every other service that answers (clocks, claims, snapshots, embedded
 * machines, budgets) is asked of the calling thread: the worker waits
 * until the replay has reached the call, which then runs on the real
 * service, and the reader gets the real answer. Those answers depend on
 * the state the files before built (a claim, a clock), so only the
 * serial order gives them; a file asks a handful.
 *
 * Threads: the reader, its state and the recording's private pool are
 * touched by the worker only while a job runs; the host, the session and
 * the model by the calling thread only. A job ends with the worker's
 * return; reader_recording_feed() returns then, with the reader's status,
 * while the calls of that chunk may still wait to be replayed:
 * reader_recording_drain() replays them (the feed's end is a record too,
 * whose replay calls `fed`, so what the session does after a feed happens
 * after that feed's calls, as in the serial run).
 *
 * Not recorded: version-1 readers (they keep the serial path), and a
 * file whose events go to a merge config's buffer (its args refs are
 * staged per feed).
 */
#ifndef TM_READER_WORKER_H
#define TM_READER_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tracemerge/plugin.h>
#include <tracemerge/tracemerge.h>

typedef struct tm_host tm_host;
typedef struct tm_reader tm_reader;

/* The worker thread, one per import. */
typedef struct reader_worker reader_worker;
/* One file read on the worker. */
typedef struct reader_recording reader_recording;

/* Starts the worker; NULL if no thread could be made (read serially). */
reader_worker *reader_worker_new(void);
/* Stops and joins it; every recording must have ended its last job. */
void reader_worker_free(reader_worker *worker);

/* Replayed at the end of each feed, on the calling thread, after the
 * feed's calls: what the session does when a reader returns from feed(). */
typedef void (*reader_fed_fn)(void *ctx, tm_host *host, tm_status status, size_t len);

/* A recording for `host` (whose reader speaks version 2), read on
 * `worker`. `fed` is called with `ctx`. */
reader_recording *reader_recording_new(reader_worker *worker, tm_host *host,
                                       reader_fed_fn fed, void *ctx);
/* The reader's open() on the worker, with the recording services; every
 * call replayed before it returns. The state, or NULL. */
void *reader_recording_open(reader_recording *rec, const uint8_t *config,
                            size_t config_len);
/* feed() of `len` bytes on the worker, the calls recorded before it
 * replayed meanwhile; returns feed()'s status once the worker returned
 * (`data` is borrowed until then). */
tm_status reader_recording_feed(reader_recording *rec, const uint8_t *data, size_t len);
/* Replays every recorded call. */
void reader_recording_drain(reader_recording *rec);
/* finish() and close() on the worker, every call replayed before each
 * returns. */
tm_status reader_recording_finish(reader_recording *rec);
void reader_recording_close(reader_recording *rec);
/* Whether the last feed() returned TM_ERROR (the reader wants no more). */
bool reader_recording_failed(const reader_recording *rec);
/* Replays every recorded call and leaves the worker: a call from now on
 * (a close() when an import stopped mid-file) is replayed when it is made,
 * on the calling thread. Also done by reader_recording_close(). */
void reader_recording_detach(reader_recording *rec);
/* Frees the recording; its reader is closed. */
void reader_recording_free(reader_recording *rec);

/* --- files parsed ahead of their turn ----------------------------------
 *
 * A prefetch worker runs whole files, each against a recording of its
 * own, in the order they are prepared, while the calling thread reads the
 * files before them: open, every feed, finish and close, the bytes pulled
 * by the worker itself (`stream`: an archive member's own inflate,
 * container_source_stream()). Nothing of the session is touched there:
 * strings, arg sets, processes, threads, tracks... get the recording's
 * private ids as above; clock_private() a placeholder mapped at replay
 * (the file's private clock is made when it begins); machine_default()
 * the machine the session predicted; budget() the import's budgets. A
 * question (clocks, claims, snapshots, embedded machines) waits until
 * the file's turn. When the file's turn comes, the calling thread claims
 * it (reader_recording_claim) and replays its log step by step: open,
 * feeds (reader_recording_replay_stream), finish, close; each step stops
 * at a mark the worker wrote, so the session's own work between the
 * steps (a truncated member's stat, finish only when the reader did not
 * fail) falls between them as in the serial run. A file whose turn comes
 * before the worker started it is cancelled and read serially. */

/* Hands the file's bytes to `chunk` while `wants_more` says so; runs on
 * the worker. */
typedef void (*reader_chunk_fn)(void *ctx, const uint8_t *data, size_t len);
typedef bool (*reader_wants_more_fn)(void *ctx);
typedef void (*reader_stream_fn)(void *source, reader_chunk_fn chunk,
                                 reader_wants_more_fn wants_more, void *ctx);
/* Asked after each replayed feed's end: true stops the replay (the
 * session refuses the file). */
typedef bool (*reader_halt_fn)(void *ctx);

/* A worker for prepared files; NULL if no thread could be made. Freed
 * with reader_worker_free() once every prepared recording is freed. The
 * logs it has written and the replay has not freed stay under
 * `ahead_limit` bytes (0: 64 MiB) besides the segment it writes: when
 * they reach it, the worker waits for the replay (whose turn comes
 * first, as the files are run in their order). With `max_files` (0:
 * all), it takes only the first that many files prepared: the turn of
 * each later one finds it not started (tests: the serial fallback). */
reader_worker *reader_prefetch_new(size_t ahead_limit, unsigned max_files);
/* Queues `reader` over the bytes of `stream(source, ...)` on `prefetch`;
 * `budgets` must outlive the recording. */
reader_recording *reader_recording_prepare(reader_worker *prefetch, const tm_reader *reader,
                                           tm_machine_ref machine, const tm_budgets *budgets,
                                           const uint8_t *config, size_t config_len,
                                           reader_stream_fn stream, void *source,
                                           reader_fed_fn fed, reader_halt_fn halt, void *ctx);
/* The file's turn, with its `host`: false if the worker had not started
 * it (it never will: free it, read the file serially); else its open()
 * is replayed and `*reader_state` is what open() returned. With `wait`,
 * a file not started yet is waited for (tests: the path taken whatever
 * the scheduler does). */
bool reader_recording_claim(reader_recording *rec, tm_host *host, bool wait,
                            void **reader_state);
/* Replays the feeds of a claimed recording; false if `halt` stopped it. */
bool reader_recording_replay_stream(reader_recording *rec);
bool reader_recording_is_prepared(const reader_recording *rec);
/* The machine a recording's reader is told is its file's (for a prepared
 * one, the machine predicted when it was offered). */
tm_machine_ref reader_recording_machine(const reader_recording *rec);
/* Stops the worker on a prepared recording as soon as it can and waits
 * for it; nothing more of its log is replayed. */
void reader_recording_cancel(reader_recording *rec);

/* The services a recorded reader is given (for a close() called after the
 * import, e.g. when a session is freed mid-file). */
const tm_host_services *reader_recording_services(void);

#endif /* TM_READER_WORKER_H */
