/*
 * Inputs and containers: turns the paths a user gives into a tree of
 * trace_file rows and streams the bytes of every leaf (non-container) file
 * to the session, chunk by chunk.
 *
 * Several root paths behave exactly as if they were members of one archive.
 * ZIP, TAR (plain or compressed) and gzip (also concatenated members, one
 * continuous stream) are opened with libarchive, recursively (a gzip inside
 * a zip, a zip inside a tar, ...); the deflated members of a ZIP that is a
 * root file are inflated with ISA-L instead (container.c). Members whose path has a component
 * starting with '.' are hidden and skipped (no row). Directories are
 * skipped.
 *
 * Invariants: no file is ever held whole in memory: a leaf is streamed in
 * chunks of at most TM_CONTAINER_CHUNK bytes, after its first bytes (up to
 * TM_CONTAINER_HEAD) were buffered for detection. Every discovered file gets
 * a row in model->trace_files before its bytes are streamed; all members of
 * an archive get their rows before any member is parsed only where the
 * archive can be listed without reading it twice (see container.c).
 * Budgets (budget.h) bound what inputs may cost: bytes inflated per byte
 * of a root, bytes per leaf, nesting depth and the number of files.
 */
#ifndef TM_CONTAINER_H
#define TM_CONTAINER_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include <tracemerge/tracemerge.h>

#include "input/budget.h"
#include "model/model.h"

#define TM_CONTAINER_HEAD 512
#define TM_CONTAINER_CHUNK (256 * 1024)

/* An offered member's bytes (tm_container_sink.offer). */
typedef struct container_source container_source;

typedef struct tm_container_sink {
  void *ctx;
  /* Names the trace_type of a non-container file from its first bytes and
   * its name (may be NULL): a reader name, "perfetto_manifest", or NULL if
   * unknown. The returned string must live as long as the session. */
  const char *(*detect)(void *ctx, const uint8_t *head, size_t len,
                        const char *name);
  /* A leaf file starts: row `file_id` of model->trace_files, type from
   * detect(). Returning false stops everything with `error` set. */
  bool (*begin)(void *ctx, uint32_t file_id, const char *trace_type,
                GError **error);
  /* The next bytes of the file (the head included, in order). */
  bool (*chunk)(void *ctx, uint32_t file_id, const uint8_t *data, size_t len,
                GError **error);
  /* End of the file. `truncated` is set when the container could not
   * deliver the whole member (corrupt archive): the bytes delivered before
   * are kept, and the damage is reported through `damage` (may be NULL). */
  bool (*end)(void *ctx, uint32_t file_id, bool truncated, const char *damage,
              GError **error);
  /* Optional. Container `file_id` is damaged where no member was being
   * streamed (a header cut short, a member damaged before its type could be
   * detected, a bad stream after the last member): members delivered before
   * are kept, later ones are lost. NULL: such damage fails the import with
   * `damage` as the error message. */
  bool (*container_damaged)(void *ctx, uint32_t file_id, const char *damage,
                            GError **error);
  /* Optional. The processing priority of a leaf of `trace_type` (a name
   * detect() gave): lower comes first among siblings, negative before
   * archives, 0 (also when NULL) after them. */
  int32_t (*priority)(void *ctx, const char *trace_type);
  /* Optional. A budget tripped on file `file_id` (a leaf, a container or a
   * root): `stat` names which (budget.h). The cut itself is reported as
   * damage, through end() or container_damaged(), right after. */
  void (*budget_exceeded)(void *ctx, uint32_t file_id, const char *stat);
  /* Optional. False once the sink needs no more bytes of leaf `file_id`
   * (its reader failed): the container stops pulling it, so the rest of a
   * compressed member is never inflated, and ends it (not truncated). */
  bool (*wants_more)(void *ctx, uint32_t file_id);
  /* Optional, all three or none: members the sink may parse ahead of
   * their turn, on a thread of its own (the session's prefetch worker).
   * offer() hands over, before any of them begins, the members of a
   * listed root ZIP that the container can read independently of each
   * other and whose bytes cannot trip a budget (container.c says when),
   * but the first of them, which is streamed as usual in its turn, next;
   * `source` stays the container's, readable by one thread at a time
   * through container_source_stream() until offers_end(). When an offered
   * member's turn comes, begin() is called as for any file, then take():
   * 1 if the sink read the member itself (the container then ends it as
   * container_source_stream() left it, as if it had streamed it), 0 to
   * have it streamed through chunk() as usual, -1 (error set) to stop.
   * offers_end() comes once every offered member had its turn or the
   * walk stopped: the sink must be done with every source when it
   * returns. */
  void (*offer)(void *ctx, uint32_t file_id, const char *trace_type,
                container_source *source);
  int (*take)(void *ctx, uint32_t file_id, GError **error);
  void (*offers_end)(void *ctx);
} tm_container_sink;

/* The member's bytes from its start, as stream_leaf() would hand them to
 * chunk(): `chunk` gets at most TM_CONTAINER_CHUNK bytes at a time, and
 * after each, `wants_more` decides whether another follows. Runs on the
 * calling thread of the sink's choice; at most once per source. */
void container_source_stream(container_source *source,
                             void (*chunk)(void *ctx, const uint8_t *data, size_t len),
                             bool (*wants_more)(void *ctx), void *ctx);

/* Reads `n_paths` inputs in order. Rows are added to `model->trace_files`.
 * Fails with a message naming the file (and member) on unreadable inputs,
 * unknown member types ("Unknown trace type provided") or a sink failure.
 * `budgets` (NULL: the defaults) bound what the inputs may cost; a budget
 * that trips cuts a file, it never fails the call. */
bool container_read_inputs(tm_model *model, const char *const *paths,
                           size_t n_paths, const tm_container_sink *sink,
                           const tm_budgets *budgets, GError **error);

/* The same, with `read_ahead`: each leaf's blocks are pulled (inflated,
 * read from disk) on a second thread while the sink reads the blocks
 * before them. The sink's calls are made on the calling thread, in the
 * same order with the same chunks and the same outcome as without
 * (container.c says what is left of the worker's pulls past a reader that
 * failed); the sink must not touch `model->trace_files` from elsewhere. */
bool container_read_inputs_ahead(tm_model *model, const char *const *paths,
                                 size_t n_paths, const tm_container_sink *sink,
                                 const tm_budgets *budgets, bool read_ahead,
                                 GError **error);


#endif /* TM_CONTAINER_H */
