/*
 * Read-ahead: a second thread pulls the blocks of one file (inflating
 * archive members, reading the root's fd) while the calling thread hands
 * the blocks it already has to the readers. The readers, the host
 * services, the string pool, the model and the sorter stay on the calling
 * thread; only the pulling moves (docs/architecture.md, "Two threads").
 *
 * Invariants:
 * - the caller receives exactly the blocks, in order and with the same
 *   boundaries, that calling `pull` itself would have returned, ending
 *   with the first status other than READ_AHEAD_OPEN;
 * - while a read-ahead runs, `pull` and `may_run_ahead` run on the worker
 *   thread only, and the caller must not touch the state they touch;
 *   read_ahead_finish() joins the worker, so after it that state is the
 *   caller's again;
 * - the worker pulls a block before it was asked for only while
 *   `may_run_ahead` says so and at most READ_AHEAD_DEPTH blocks ahead;
 *   otherwise it pulls only what the caller waits for, so a pull whose
 *   side effects must match the serial run (a budget that trips) is one
 *   the serial run makes too;
 * - notes the worker attaches to a block (read_ahead_note(), e.g. a budget
 *   that tripped while pulling it) reach the caller with that block, never
 *   if the caller stops before taking it.
 */
#ifndef TM_READ_AHEAD_H
#define TM_READ_AHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Blocks pulled but not yet taken, at most. */
#define READ_AHEAD_DEPTH 4
/* Notes one block carries, at most (more are dropped: a pull trips one
 * budget at most). */
#define READ_AHEAD_NOTES 4

enum { READ_AHEAD_OPEN = 0 }; /* any other status ends the file */

/* Pulls the next block: READ_AHEAD_OPEN with `data`/`len` valid until the
 * next call, or an end status. Runs on the worker. */
typedef int (*read_ahead_pull)(void *ctx, const uint8_t **data, size_t *len);
/* Whether a pull the caller has not asked for yet is safe (its side
 * effects would happen in the serial run too). Runs on the worker. */
typedef bool (*read_ahead_may_run_ahead)(void *ctx);

typedef struct read_ahead_note {
  uint32_t file_id;
  const char *what; /* static */
} read_ahead_note;

typedef struct read_ahead read_ahead;

/* A read-ahead of `pull` (`may_run_ahead` NULL: always), not started yet:
 * the caller can hand it to what `pull` calls before the worker runs. */
read_ahead *read_ahead_new(read_ahead_pull pull,
                           read_ahead_may_run_ahead may_run_ahead, void *ctx);
/* Starts the worker; false if no thread could be made (then only
 * read_ahead_finish() may follow, and the caller pulls itself). */
bool read_ahead_start(read_ahead *ahead);

/* The next block, as `pull` returned it (copied: valid until the next
 * call). Its notes, if any, are in notes[0..*n_notes). */
int read_ahead_next(read_ahead *ahead, const uint8_t **data, size_t *len,
                    read_ahead_note *notes, size_t *n_notes);

/* From the worker's `pull`: attaches a note to the block being pulled. */
void read_ahead_note_add(read_ahead *ahead, uint32_t file_id, const char *what);

/* What the worker pulled that the caller never took. */
typedef struct read_ahead_leftover {
  uint64_t blocks;
  uint64_t bytes;  /* of the blocks with status READ_AHEAD_OPEN */
  bool ended;      /* an end status among them: the file looked ended or
                      damaged to the worker, not to the caller */
} read_ahead_leftover;

/* Stops and joins the worker, frees everything; `leftover` (may be NULL)
 * says what was pulled beyond the last block taken, for the caller to
 * take back what those pulls counted. */
void read_ahead_finish(read_ahead *ahead, read_ahead_leftover *leftover);

#endif /* TM_READ_AHEAD_H */
