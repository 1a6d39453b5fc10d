/*
 * Inputs and containers (docs/formats.md §6).
 *
 * Every file, root input or archive member alike, is read the same way: its
 * first TM_CONTAINER_HEAD bytes are buffered; if they carry the magic of a
 * container (tar, zip, gzip, zstd, sniffed in the §6.1 priority order) the
 * file is opened with libarchive over read callbacks that replay the head
 * and then pull the rest from wherever the file's own bytes come from (the
 * root's fd, or the enclosing archive's current entry). A member of a
 * member is therefore decompressed on the fly and never extracted. Any
 * other file is a leaf: the sink names its type from the head, and its
 * bytes go to the sink in chunks of at most TM_CONTAINER_CHUNK (the head
 * first). At most one libarchive block per nesting level is held at once.
 *
 * Shapes, as trace_processor builds them: a gzip/zstd container has one
 * child, its payload, named "" (concatenated gzip members are one stream);
 * a .tar.gz is therefore gzip → payload "" (a tar container) → members.
 * Hidden members (a path component starting with '.', other than "." and
 * ".."), directories, links and special files get no row. Member names keep
 * their full path in the archive; a root's name is the path as given.
 *
 * Delivery order. A ZIP that is a root regular file is listed through its
 * central directory first: every member gets its row and is sniffed before
 * any is delivered (an unknown member fails the import before any parsing),
 * perfetto_manifest members are delivered first, then the rest in archive
 * order. Everything else is a stream read once (tar, gzip, zstd, a ZIP
 * inside another container, a ZIP from a pipe, a ZIP whose directory is
 * unreadable): members get their rows and are delivered as they come, in
 * archive order, a manifest included.
 *
 * Inflating. libarchive lists a root ZIP, but delivers only the members we
 * cannot inflate ourselves: a deflated, unencrypted member found in our
 * own reading of the central directory (input/zip_directory.h) is read
 * with pread() from the root's fd and inflated by ISA-L
 * (input/deflate_stream.h, 2.5x zlib's speed), its CRC-32 and size
 * checked against the directory. Stored, encrypted and other members, a
 * directory we do not understand, and every streamed container (tar,
 * gzip, zstd, a ZIP in another container or from a pipe) go through
 * libarchive and its zlib. The listing pass still sniffs each member's
 * head through libarchive.
 *
 * processing_order is what trace_processor would have assigned, whatever
 * the delivery order: once the inputs are read, each container's children
 * (the root inputs being the members of one virtual archive) are ordered by
 * (priority of their type, name byte-wise, position) and numbered depth
 * first from 0, containers included. Priority: perfetto_manifest first;
 * then readers whose descriptor declares a negative processing_priority;
 * then zip/tar/gzip/zstd; then the other readers by their priority (0 by
 * default); the sink's priority() gives a reader's. A row never
 * delivered (damaged before its type was known) keeps TM_NULL_INT64. The
 * session uses processing_order wherever trace_processor's order decides
 * (e.g. trace-time claims), not the delivery order.
 *
 * Damage: when libarchive cannot deliver a member completely (corrupt zip
 * data, bad CRC, truncated tar or gzip), the bytes already delivered stay
 * delivered and the member ends with sink->end(truncated = true, damage =
 * "<file>: damaged after N bytes: <innermost cause>"), the cause being
 * libarchive's error text, or ours for a member we inflate ("ZIP bad
 * CRC-32 ...", "Truncated ZIP file data ...", a size or a local header
 * that disagrees with the directory). Damage where no member is being streamed (a
 * header, a member cut before its type was known, the bytes after the last
 * member) goes to sink->container_damaged, or fails the import if that is
 * NULL. Reading then goes on with the next member if libarchive can, else
 * with the next input, and the call returns true if the sink accepted the
 * reports: the session decides how damage shows (stats). Errors that fail
 * the import: a root that cannot be opened, or whose first bytes cannot be
 * read; an unknown type ("<file>: Unknown trace type provided (ERR:fmt)");
 * more files than the max_files budget; any sink failure.
 * Our GErrors are in TRACEMERGE_ERROR (INPUT, or DAMAGED for damage the
 * sink passes on), and name the file as
 * "<root>/<member path>/..." (a payload is named like its container).
 *
 * Budgets (budget.h; tm_budgets in tracemerge.h), each reported to
 * sink->budget_exceeded with its stat, then as damage that names the file
 * and offset, so that what was read before stays:
 *  - inflate ratio: every byte any member yields, at any nesting level, is
 *    charged to its root; past TM_BUDGET_INFLATE_FLOOR, more than
 *    max_inflate_ratio times the root's size cuts the member being read
 *    (fatal for its archives: the rest of the root is not read);
 *  - member size: a leaf is cut after max_member_bytes (other files go on);
 *  - depth: a container nested deeper than max_depth is skipped;
 *  - files: the row past max_files is not added, and nothing more is read
 *    (for a root path, the import fails with that message).
 * A leaf whose sink no longer wants its bytes (sink->wants_more: its reader
 * failed) is not pulled further, so a bomb behind a broken header is never
 * inflated.
 */
#include "input/container.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/vec.h"
#include "input/deflate_stream.h"
#include "input/read_ahead.h"
#include "input/zip_directory.h"

/* clang-format off */
/* clang-format on */

/* libarchive returning empty blocks forever would hang us: give up after
 * this many in a row. */
#define MAX_EMPTY_BLOCKS 1024

typedef enum container_kind {
  KIND_NONE = 0,
  KIND_TAR,
  KIND_ZIP,
  KIND_GZIP,
  KIND_ZSTD,
} container_kind;

static const char *const kind_names[] = {NULL, "tar", "zip", "gzip", "zstd"};

typedef enum input_state {
  INPUT_OPEN = 0,
  INPUT_END,
  INPUT_DAMAGED,
} input_state;

/* One file being read, root or member. Invariant: bytes are handed on in
 * file order exactly once: the head (when replayed), then `rest`, then what
 * input_pull() returns. */
typedef struct tm_input {
  struct tm_walk *walk;
  char *display; /* owned: how messages name the file */
  /* A root reads `fd` into `fd_buf`; a member reads `archive`'s current
   * entry, whose container's own bytes come from `archive_source`. */
  int fd;
  uint8_t *fd_buf;
  bool seekable; /* a regular file: a ZIP can be listed */
  struct archive *archive;
  struct tm_input *archive_source;
  /* Set for a deflated member of a listed root ZIP: its bytes are
   * inflated here from the root's fd (ISA-L), not by `archive`, which
   * only listed it. Owned. */
  struct zip_inflate *zip_inflate;
  /* A block libarchive returned that was not yet handed on, and where it
   * belongs in the member: the holes of a sparse member (before a block,
   * or before the end) are handed on as zeros. */
  const uint8_t *block;
  size_t block_len;
  int64_t block_offset;
  int64_t next_offset;
  bool eof_seen;
  char *deferred_damage; /* owned: reported with the last block (CRC) */
  uint8_t head[TM_CONTAINER_HEAD];
  size_t head_len;
  bool head_replayed;
  const uint8_t *rest; /* the part of the last pulled block past the head */
  size_t rest_len;
  uint64_t pulled; /* bytes taken from the source so far */
  input_state state;
  bool damage_fatal; /* the container cannot go on to another member */
  bool budget_cut;   /* the damage is a budget that tripped */
  char *damage;      /* owned: the cause, once state == INPUT_DAMAGED */
  /* An offered member's (container_source): its pulls charge nothing to
   * the walk, which may be another thread's; the walk charges them at
   * take() (read_listed_zip() offers only what cannot trip the budget). */
  bool uncharged;
} tm_input;

typedef struct tm_walk {
  tm_model *model;
  const tm_container_sink *sink;
  tm_budgets budgets; /* every field set */
  uint32_t first_row;
  GByteArray *started; /* by row - first_row: 1 once opened or begun */
  bool zstd_readable;
  /* The root being read: what its members yielded so far, all levels. */
  const tm_input *root;
  uint32_t root_id;
  uint64_t root_size; /* on disk; 0 for a pipe (then: bytes read so far) */
  uint64_t root_inflated;
  bool root_cut; /* the inflate budget cut it: read no more of it */
  bool all_cut;  /* the file budget tripped: read nothing more at all */
  /* A leaf's blocks are pulled on a second thread (read_ahead.h) while
   * the sink reads the blocks before them. */
  bool read_ahead;
  /* The read-ahead pulling the current leaf, or NULL: while set, the walk
   * and the leaf's inputs are the worker's, and a budget that trips is
   * noted on the block being pulled instead of reaching the sink. */
  read_ahead *ahead;
} tm_walk;

static const uint8_t zeros[64 * 1024];

static tm_trace_file_row *walk_row(tm_walk *w, uint32_t id) {
  return &w->model->trace_files.data[id];
}

static void walk_mark_started(tm_walk *w, uint32_t id) {
  guint index = id - w->first_row;
  if (w->started->len <= index)
    g_byte_array_set_size(w->started, index + 1);
  w->started->data[index] = 1;
}

static void zip_inflate_free(struct zip_inflate *z);

static void input_clear(tm_input *in) {
  zip_inflate_free(in->zip_inflate);
  g_free(in->display);
  g_free(in->fd_buf);
  g_free(in->deferred_damage);
  g_free(in->damage);
  memset(in, 0, sizeof *in);
  in->fd = -1;
}

static void input_set_damaged(tm_input *in, char *cause_take, bool fatal) {
  g_strchomp(cause_take);
  in->state = INPUT_DAMAGED;
  in->damage = cause_take;
  in->damage_fatal = fatal;
}

static void walk_budget_exceeded(tm_walk *w, uint32_t file_id, const char *stat) {
  if (w->ahead != NULL)
    read_ahead_note_add(w->ahead, file_id, stat);
  else if (w->sink->budget_exceeded != NULL)
    w->sink->budget_exceeded(w->sink->ctx, file_id, stat);
}

/* The root's size, or what was pulled of it if more: what
 * --max-inflate-ratio multiplies. */
static inline uint64_t root_inflate_base(const tm_walk *w) {
  return MAX(w->root_size, w->root->pulled);
}

/* How many bytes the root's members may yield in all, never under the
 * floor every root is allowed. */
static inline uint64_t root_inflate_limit(const tm_walk *w) {
  uint64_t limit;
  if (__builtin_mul_overflow(root_inflate_base(w), w->budgets.max_inflate_ratio, &limit))
    limit = UINT64_MAX;
  return MAX(limit, TM_BUDGET_INFLATE_FLOOR);
}

/* Charges `len` bytes a member yields to its root; false (the member
 * damaged, the root cut) once they pass the inflate budget. */
static bool charge_inflated(tm_input *in, size_t len) {
  if (in->uncharged)
    return true;
  tm_walk *w = in->walk;
  w->root_inflated += len;
  if (w->root_inflated <= TM_BUDGET_INFLATE_FLOOR)
    return true;
  if (w->root_inflated <= root_inflate_limit(w))
    return true;
  input_set_damaged(in,
                    g_strdup_printf("%s yields more than %" PRIu64
                                    " times its %" PRIu64
                                    " bytes (budget --max-inflate-ratio)",
                                    w->root->display, w->budgets.max_inflate_ratio,
                                    root_inflate_base(w)),
                    true);
  in->budget_cut = true;
  w->root_cut = true;
  walk_budget_exceeded(w, w->root_id, TM_STAT_INFLATE_RATIO_EXCEEDED);
  return false;
}

/* Why the member's container failed: the innermost cause, i.e. the
 * container's own source when that is what broke, else libarchive's text. */
static char *member_damage_cause(tm_input *member) {
  const tm_input *source = member->archive_source;
  if (source->state == INPUT_DAMAGED) {
    member->budget_cut = member->budget_cut || source->budget_cut;
    return g_strdup(source->damage);
  }
  const char *text = archive_error_string(member->archive);
  return g_strdup(text != NULL ? text : "unknown libarchive error");
}

static input_state pull_fd(tm_input *in, const uint8_t **data, size_t *len) {
  ssize_t n;
  do {
    n = read(in->fd, in->fd_buf, TM_CONTAINER_CHUNK);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    input_set_damaged(in, g_strdup_printf("read error: %s", g_strerror(errno)),
                      true);
    return in->state;
  }
  if (n == 0) {
    in->state = INPUT_END;
    return in->state;
  }
  *data = in->fd_buf;
  *len = (size_t)n;
  in->pulled += (uint64_t)n;
  return INPUT_OPEN;
}

static input_state pull_member(tm_input *in, const uint8_t **data,
                               size_t *len) {
  unsigned empty_blocks = 0;
  for (;;) {
    if (in->block_offset > in->next_offset) {
      uint64_t gap = (uint64_t)(in->block_offset - in->next_offset);
      *len = gap < sizeof zeros ? (size_t)gap : sizeof zeros;
      *data = zeros;
      in->next_offset += (int64_t)*len;
      in->pulled += *len;
      return charge_inflated(in, *len) ? INPUT_OPEN : in->state;
    }
    if (in->block_len > 0) {
      *data = in->block;
      *len = in->block_len;
      in->block_len = 0;
      in->next_offset += (int64_t)*len;
      in->pulled += *len;
      return charge_inflated(in, *len) ? INPUT_OPEN : in->state;
    }
    if (in->eof_seen) {
      in->state = INPUT_END;
      return in->state;
    }
    if (in->deferred_damage != NULL) {
      input_set_damaged(in, in->deferred_damage, false);
      in->deferred_damage = NULL;
      return in->state;
    }
    const void *buf = NULL;
    size_t size = 0;
    la_int64_t offset = 0;
    int r = archive_read_data_block(in->archive, &buf, &size, &offset);
    if (r == ARCHIVE_EOF) {
      /* A sparse member may end in a hole: EOF comes at its full size. */
      in->eof_seen = true;
      in->block_offset = MAX((int64_t)offset, in->next_offset);
      continue;
    }
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
      input_set_damaged(in, member_damage_cause(in), r == ARCHIVE_FATAL);
      return in->state;
    }
    /* A warning comes with the entry's last block (e.g. "ZIP bad CRC"):
     * hand the block on, then report the damage. */
    if (r == ARCHIVE_WARN)
      in->deferred_damage = member_damage_cause(in);
    if (size == 0) {
      if (r == ARCHIVE_OK && ++empty_blocks > MAX_EMPTY_BLOCKS) {
        input_set_damaged(in, g_strdup("libarchive makes no progress"), true);
        return in->state;
      }
      continue;
    }
    if (buf == NULL || offset < in->next_offset) {
      input_set_damaged(in, g_strdup("member data out of order"), true);
      return in->state;
    }
    in->block = buf;
    in->block_len = size;
    in->block_offset = offset;
  }
}

/* ---- a deflated member of a listed root ZIP, inflated by ISA-L ----
 *
 * The compressed bytes are read with pread() from the root's fd at the
 * offset the member's local header gives (zip_directory.h), so neither
 * libarchive's position in the file nor a read-ahead thread's pulls
 * disturb each other. Blocks are TM_CONTAINER_CHUNK bytes of output,
 * charged to the root like libarchive's. Damage is told after the bytes
 * inflated before it, as libarchive's data errors are, and is never fatal
 * for the archive: the next member is found through the directory.
 * Causes start with "ZIP " as libarchive's do. */

/* Compressed bytes read per pread(). */
#define ZIP_INFLATE_READ (64 * 1024)

typedef struct zip_inflate {
  int fd;
  uint64_t next_in;         /* file offset of the next compressed byte */
  uint64_t compressed_size; /* the directory's */
  uint64_t compressed_left;
  uint64_t want_size;
  uint32_t want_crc;
  deflate_stream *stream;
  uint8_t *in_buf;
  const uint8_t *in_pos;
  size_t in_len;
  uint8_t *out_buf;
  char *pending_damage; /* owned: told once the bytes before it are */
  /* The last inflate stopped for want of input, not of room: ISA-L may
   * hold output back when the room runs out, to give without input. */
  bool needs_input;
  bool done;
} zip_inflate;

static zip_inflate *zip_inflate_new(int fd, const zip_entry *entry) {
  zip_inflate *z = g_new0(zip_inflate, 1);
  z->fd = fd;
  z->compressed_size = entry->compressed_size;
  z->compressed_left = entry->compressed_size;
  z->want_size = entry->uncompressed_size;
  z->want_crc = entry->crc32;
  if (!zip_entry_data_offset(fd, entry, &z->next_in, &z->pending_damage))
    return z;
  z->stream = deflate_stream_new();
  z->in_buf = g_malloc(ZIP_INFLATE_READ);
  z->out_buf = g_malloc(TM_CONTAINER_CHUNK);
  z->needs_input = true;
  return z;
}

static void zip_inflate_free(zip_inflate *z) {
  if (z == NULL)
    return;
  if (z->stream != NULL)
    deflate_stream_free(z->stream);
  g_free(z->in_buf);
  g_free(z->out_buf);
  g_free(z->pending_damage);
  g_free(z);
}

/* Reads the next compressed bytes; a damage cause (owned) if it cannot. */
static char *zip_inflate_refill(zip_inflate *z) {
  if (z->compressed_left == 0)
    return g_strdup_printf("Truncated ZIP file data: the deflate stream goes on "
                           "past the %" PRIu64 " compressed bytes of the member",
                           z->compressed_size);
  size_t want = (size_t)MIN(z->compressed_left, (uint64_t)ZIP_INFLATE_READ);
  ssize_t n;
  do {
    n = pread(z->fd, z->in_buf, want, (off_t)z->next_in);
  } while (n < 0 && errno == EINTR);
  if (n < 0)
    return g_strdup_printf("read error: %s", g_strerror(errno));
  if (n == 0)
    return g_strdup_printf("Truncated ZIP file data: the file ends at byte %" PRIu64
                           ", inside the member",
                           z->next_in);
  z->in_pos = z->in_buf;
  z->in_len = (size_t)n;
  z->next_in += (uint64_t)n;
  z->compressed_left -= (uint64_t)n;
  return NULL;
}

/* What the stream's end says against the directory, or NULL. */
static char *zip_inflate_check_end(const zip_inflate *z) {
  uint64_t got = deflate_stream_total_out(z->stream);
  if (got != z->want_size)
    return g_strdup_printf("ZIP member inflates to %" PRIu64
                           " bytes, not the %" PRIu64 " of its directory entry",
                           got, z->want_size);
  uint32_t crc = deflate_stream_crc32(z->stream);
  if (crc != z->want_crc)
    return g_strdup_printf("ZIP bad CRC-32: 0x%08" PRIx32
                           ", the directory says 0x%08" PRIx32,
                           crc, z->want_crc);
  return NULL;
}

static input_state pull_zip_inflate(tm_input *in, const uint8_t **data,
                                    size_t *len) {
  zip_inflate *z = in->zip_inflate;
  if (z->pending_damage != NULL) {
    input_set_damaged(in, z->pending_damage, false);
    z->pending_damage = NULL;
    return in->state;
  }
  if (z->done) {
    in->state = INPUT_END;
    return in->state;
  }
  size_t filled = 0;
  char *damage = NULL;
  while (filled < TM_CONTAINER_CHUNK && damage == NULL && !z->done) {
    if (z->in_len == 0 && z->needs_input &&
        (damage = zip_inflate_refill(z)) != NULL)
      break;
    size_t in_before = z->in_len, room = TM_CONTAINER_CHUNK - filled, made = 0;
    deflate_stream_status status = deflate_stream_inflate(
        z->stream, &z->in_pos, &z->in_len, z->out_buf + filled, room, &made);
    filled += made;
    z->needs_input = made < room;
    uint64_t total = deflate_stream_total_out(z->stream);
    if (total > z->want_size) {
      /* Only the directory's size is handed on: a member that lies
       * about it inflates no further. */
      filled -= (size_t)(total - z->want_size) < filled
                    ? (size_t)(total - z->want_size)
                    : filled;
      damage = g_strdup_printf("ZIP member inflates to more than the %" PRIu64
                               " bytes of its directory entry",
                               z->want_size);
    } else if (status == DEFLATE_STREAM_ERROR) {
      damage = g_strdup_printf("ZIP deflate data damaged: %s",
                               deflate_stream_error(z->stream));
    } else if (status == DEFLATE_STREAM_END) {
      z->done = true;
      damage = zip_inflate_check_end(z);
    } else if (made == 0 && in_before > 0 && z->in_len == in_before) {
      damage = g_strdup("ZIP inflate makes no progress");
    }
  }
  if (filled == 0) {
    if (damage != NULL) {
      input_set_damaged(in, damage, false);
      return in->state;
    }
    in->state = INPUT_END;
    return in->state;
  }
  z->pending_damage = damage;
  *data = z->out_buf;
  *len = filled;
  in->pulled += filled;
  return charge_inflated(in, filled) ? INPUT_OPEN : in->state;
}

/* The next bytes taken from the source; INPUT_END / INPUT_DAMAGED stick. */
static input_state input_pull(tm_input *in, const uint8_t **data, size_t *len) {
  if (in->state != INPUT_OPEN)
    return in->state;
  if (in->zip_inflate != NULL)
    return pull_zip_inflate(in, data, len);
  return in->archive == NULL ? pull_fd(in, data, len)
                             : pull_member(in, data, len);
}

/* Buffers up to TM_CONTAINER_HEAD bytes; stops early at the end or at
 * damage (in->state tells). */
static void input_read_head(tm_input *in) {
  while (in->head_len < TM_CONTAINER_HEAD) {
    const uint8_t *data;
    size_t len;
    if (input_pull(in, &data, &len) != INPUT_OPEN)
      return;
    size_t take = MIN(len, TM_CONTAINER_HEAD - in->head_len);
    memcpy(in->head + in->head_len, data, take);
    in->head_len += take;
    if (take < len) {
      in->rest = data + take;
      in->rest_len = len - take;
    }
  }
}

/* The file's bytes in order, the buffered head first. */
static input_state input_next(tm_input *in, const uint8_t **data, size_t *len) {
  if (!in->head_replayed) {
    in->head_replayed = true;
    if (in->head_len > 0) {
      *data = in->head;
      *len = in->head_len;
      return INPUT_OPEN;
    }
  }
  if (in->rest_len > 0) {
    *data = in->rest;
    *len = in->rest_len;
    in->rest_len = 0;
    return INPUT_OPEN;
  }
  return input_pull(in, data, len);
}

static la_ssize_t input_archive_read(struct archive *a, void *client,
                                     const void **buf) {
  tm_input *in = client;
  const uint8_t *data = NULL;
  size_t len = 0;
  switch (input_next(in, &data, &len)) {
  case INPUT_OPEN:
    *buf = data;
    return (la_ssize_t)len;
  case INPUT_END:
    return 0;
  case INPUT_DAMAGED:
    break;
  }
  archive_set_error(a, EIO, "%s", in->damage);
  return ARCHIVE_FATAL;
}

static container_kind sniff_container(const tm_walk *w, const uint8_t *head,
                                      size_t len) {
  if (len >= 263 && memcmp(head + 257, "ustar\0", 6) == 0)
    return KIND_TAR;
  if (len >= 265 && memcmp(head + 257, "ustar  \0", 8) == 0)
    return KIND_TAR;
  if (len >= 4 && memcmp(head, "PK\x03\x04", 4) == 0)
    return KIND_ZIP;
  if (len >= 2 && head[0] == 0x1f && head[1] == 0x8b)
    return KIND_GZIP;
  if (w->zstd_readable && len >= 4 && memcmp(head, "\x28\xb5\x2f\xfd", 4) == 0)
    return KIND_ZSTD;
  return KIND_NONE;
}

static bool libarchive_reads_zstd(void) {
  struct archive *a = archive_read_new();
  bool readable = archive_read_support_filter_zstd(a) == ARCHIVE_OK;
  archive_read_free(a);
  return readable;
}

static bool path_is_hidden(const char *path) {
  const char *component = path;
  for (;;) {
    const char *slash = strchr(component, '/');
    size_t len =
        slash != NULL ? (size_t)(slash - component) : strlen(component);
    bool dot_or_dotdot = len == 1 || (len == 2 && component[1] == '.');
    if (len > 0 && component[0] == '.' && !dot_or_dotdot)
      return true;
    if (slash == NULL)
      return false;
    component = slash + 1;
  }
}

/* Regular files only: directories, links and special files carry no trace
 * (a hard link's data is its target's). */
static bool entry_is_regular_file(struct archive_entry *entry) {
  mode_t type = archive_entry_filetype(entry);
  if (type != AE_IFREG && type != 0)
    return false;
  return archive_entry_hardlink(entry) == NULL;
}

static bool sink_refused(GError **error, const char *display) {
  if (error != NULL && *error == NULL)
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_INPUT,
                "%s: the session refused the file",
                display);
  return false;
}

/* Damage where no member is being streamed. A root has no container to
 * blame: its damage fails the import. */
static bool report_container_damage(tm_walk *w, uint32_t container_id,
                                    const char *damage, GError **error) {
  const tm_container_sink *sink = w->sink;
  if (container_id == TM_NULL_ID || sink->container_damaged == NULL) {
    g_set_error_literal(error, TRACEMERGE_ERROR, TM_ERROR_DAMAGED, damage);
    return false;
  }
  return sink->container_damaged(sink->ctx, container_id, damage, error);
}

/* ---- a leaf pulled on a second thread (w->read_ahead) ----
 *
 * The worker calls input_next() as stream_leaf() would; the caller hands
 * the blocks on in the same order and cut into the same chunks, so the
 * sink sees what it sees without read-ahead. What the worker may do
 * beyond the serial run is bounded so that it can be taken back:
 * - it pulls ahead only while the leaf is within its size budget (the
 *   serial run pulls no block after the one that crosses it) and while
 *   the root is far enough below its inflate budget that no pull can trip
 *   it (LEAF_AHEAD_HEADROOM_PER_LEVEL per nesting level, a block per
 *   level); otherwise it pulls only the blocks the caller waits for, so a
 *   budget trips on the pull the serial run trips it on;
 * - when the sink stops wanting the leaf (its reader failed) or refuses,
 *   the blocks pulled but not handed on are given back: their bytes leave
 *   the leaf's `pulled` and the root's inflate count, and an end or damage
 *   the worker met there is forgotten, as the serial run never met it.
 * Left as it is: libarchive's own position in the member (the next header
 * skips the rest of it either way), and, if the worker met damage in the
 * member after the block where the reader failed, libarchive's state (a
 * fatal data error then shows at the next header, as damage of the
 * container, where the serial run would have skipped the damaged data). */

/* Bytes one pull may charge per nesting level, at most, as a bound:
 * libarchive's blocks are far smaller (its zip and gzip readers hand out
 * 64-256 KiB, ours TM_CONTAINER_CHUNK). */
#define LEAF_AHEAD_HEADROOM_PER_LEVEL ((uint64_t)1 << 20)

typedef struct leaf_pull {
  tm_walk *w;
  tm_input *in;
  uint64_t produced; /* bytes of the blocks pulled */
  GArray *pulled;    /* per block pulled: how much in->pulled grew (uint64_t) */
  bool root_cut_before;
} leaf_pull;

G_STATIC_ASSERT((int)INPUT_OPEN == (int)READ_AHEAD_OPEN);

static int leaf_pull_next(void *ctx, const uint8_t **data, size_t *len) {
  leaf_pull *lp = ctx;
  uint64_t before = lp->in->pulled;
  input_state state = input_next(lp->in, data, len);
  uint64_t grew = lp->in->pulled - before;
  g_array_append_val(lp->pulled, grew);
  if (state == INPUT_OPEN)
    lp->produced += *len;
  return (int)state;
}

static bool leaf_may_run_ahead(void *ctx) {
  leaf_pull *lp = ctx;
  tm_walk *w = lp->w;
  if (lp->produced > w->budgets.max_member_bytes)
    return false;
  if (lp->in == w->root)
    return true; /* a root file: nothing is charged */
  uint64_t limit = root_inflate_limit(w);
  uint64_t headroom = ((uint64_t)w->budgets.max_depth + 1) * LEAF_AHEAD_HEADROOM_PER_LEVEL;
  return w->root_inflated <= limit && limit - w->root_inflated >= headroom;
}

/* The next block of the leaf, from the worker if there is one. */
static input_state leaf_next(tm_walk *w, tm_input *in, read_ahead *ahead,
                             const uint8_t **data, size_t *len) {
  if (ahead == NULL)
    return input_next(in, data, len);
  read_ahead_note notes[READ_AHEAD_NOTES];
  size_t n_notes = 0;
  input_state state = (input_state)read_ahead_next(ahead, data, len, notes, &n_notes);
  /* Budgets that tripped while the worker pulled this block, told now:
   * where the serial run tells them. */
  for (size_t k = 0; k < n_notes && w->sink->budget_exceeded != NULL; k++)
    w->sink->budget_exceeded(w->sink->ctx, notes[k].file_id, notes[k].what);
  return state;
}

/* Joins the worker and gives back what it pulled beyond the blocks taken. */
static void leaf_finish_ahead(tm_walk *w, read_ahead *ahead, leaf_pull *lp) {
  read_ahead_leftover left;
  read_ahead_finish(ahead, &left);
  w->ahead = NULL;
  tm_input *in = lp->in;
  uint64_t given_back = 0;
  for (guint k = lp->pulled->len - (guint)left.blocks; k < lp->pulled->len; k++)
    given_back += g_array_index(lp->pulled, uint64_t, k);
  in->pulled -= given_back;
  if (in->archive != NULL)
    w->root_inflated -= given_back; /* what pull_member charged */
  if (left.ended) {
    if (in->budget_cut)
      w->root_cut = lp->root_cut_before;
    g_clear_pointer(&in->damage, g_free);
    in->state = INPUT_OPEN;
    in->damage_fatal = false;
    in->budget_cut = false;
  }
  g_array_free(lp->pulled, TRUE);
}

static bool end_leaf(tm_walk *w, tm_input *in, uint32_t id, uint64_t delivered,
                     bool too_big, bool unwanted, input_state state, GError **error);

/* Streams a leaf whose begin() the sink accepted. */
static bool stream_begun_leaf(tm_walk *w, tm_input *in, uint32_t id, GError **error);

static bool stream_leaf(tm_walk *w, tm_input *in, uint32_t id,
                        const char *trace_type, GError **error) {
  const tm_container_sink *sink = w->sink;
  walk_mark_started(w, id);
  if (!sink->begin(sink->ctx, id, trace_type, error))
    return sink_refused(error, in->display);
  return stream_begun_leaf(w, in, id, error);
}

/* How a leaf's stream ended (stream_chunks). */
typedef struct leaf_streamed {
  uint64_t delivered;
  input_state state;
  bool too_big, unwanted, refused;
} leaf_streamed;

/* The one loop of stream_begun_leaf() and container_source_stream(): the
 * leaf's bytes from `ahead` (NULL: from `in` here), at most
 * TM_CONTAINER_CHUNK at a time and `max_bytes` in all, to `chunk` (false:
 * refused, nothing more), and after each, unless it was the last,
 * `wants_more` (false: nothing more). */
static leaf_streamed stream_chunks(tm_walk *w, tm_input *in, read_ahead *ahead,
                                   uint64_t max_bytes,
                                   bool (*chunk)(void *ctx, const uint8_t *data, size_t len),
                                   bool (*wants_more)(void *ctx), void *ctx) {
  leaf_streamed out = {.state = INPUT_OPEN};
  const uint8_t *data = NULL;
  size_t len = 0;
  while (!out.too_big && !out.unwanted && !out.refused &&
         (out.state = leaf_next(w, in, ahead, &data, &len)) == INPUT_OPEN) {
    while (len > 0) {
      size_t n = MIN(len, (size_t)TM_CONTAINER_CHUNK);
      if (n > max_bytes - out.delivered) {
        n = (size_t)(max_bytes - out.delivered);
        out.too_big = true;
      }
      if (n > 0 && !chunk(ctx, data, n)) {
        out.refused = true;
        break;
      }
      data += n;
      len -= n;
      out.delivered += n;
      if (out.too_big)
        break;
      /* A reader that failed wants no more: do not inflate the rest. */
      if (!wants_more(ctx)) {
        out.unwanted = true;
        break;
      }
    }
  }
  return out;
}

/* stream_chunks() to the sink. */
typedef struct sink_leaf {
  const tm_container_sink *sink;
  uint32_t id;
  GError **error;
} sink_leaf;

static bool sink_leaf_chunk(void *ctx, const uint8_t *data, size_t len) {
  sink_leaf *leaf = ctx;
  return leaf->sink->chunk(leaf->sink->ctx, leaf->id, data, len, leaf->error);
}

static bool sink_leaf_wants_more(void *ctx) {
  sink_leaf *leaf = ctx;
  return leaf->sink->wants_more == NULL || leaf->sink->wants_more(leaf->sink->ctx, leaf->id);
}

static bool stream_begun_leaf(tm_walk *w, tm_input *in, uint32_t id, GError **error) {
  leaf_pull lp = {.w = w, .in = in, .root_cut_before = w->root_cut};
  read_ahead *ahead = NULL;
  /* Only a leaf that is decoded (an archive member, a compressed file) is
   * pulled on the second thread. A plain file's pull is one read() that
   * the kernel's own read-ahead keeps fed; on the worker it cost more CPU
   * than it saved in wall time (a copy of every block into the ring, the
   * hand-over, the blocks crossing to the other core's cache): the 1M
   * realistic JSON file imported with 5% less CPU and no more wall time
   * at --threads 1 (docs/performance.md, "Threads"). */
  if (w->read_ahead && (in->archive != NULL || in->zip_inflate != NULL)) {
    lp.pulled = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    ahead = read_ahead_new(leaf_pull_next, leaf_may_run_ahead, &lp);
    w->ahead = ahead; /* before the worker runs: it reads it */
    if (!read_ahead_start(ahead)) {
      read_ahead_finish(ahead, NULL);
      w->ahead = ahead = NULL;
      g_array_free(lp.pulled, TRUE);
    }
  }
  sink_leaf leaf = {w->sink, id, error};
  leaf_streamed out = stream_chunks(w, in, ahead, w->budgets.max_member_bytes, sink_leaf_chunk,
                                    sink_leaf_wants_more, &leaf);
  if (ahead != NULL)
    leaf_finish_ahead(w, ahead, &lp);
  if (out.refused)
    return sink_refused(error, in->display);
  return end_leaf(w, in, id, out.delivered, out.too_big, out.unwanted, out.state, error);
}

/* The end of a leaf streamed up to `delivered` bytes: its size, and how
 * it ended told to the sink. */
static bool end_leaf(tm_walk *w, tm_input *in, uint32_t id, uint64_t delivered,
                     bool too_big, bool unwanted, input_state state, GError **error) {
  const tm_container_sink *sink = w->sink;
  uint64_t max_bytes = w->budgets.max_member_bytes;
  walk_row(w, id)->size = (int64_t)delivered;
  bool ok;
  if (too_big) {
    walk_budget_exceeded(w, id, TM_STAT_MEMBER_SIZE_EXCEEDED);
    char *damage = g_strdup_printf(
        "%s: cut after %" PRIu64 " bytes: larger than the %" PRIu64
        " bytes of budget --max-member-size",
        in->display, delivered, max_bytes);
    ok = sink->end(sink->ctx, id, true, damage, error);
    g_free(damage);
  } else if (!unwanted && state == INPUT_DAMAGED) {
    char *damage = g_strdup_printf("%s: %s after %" PRIu64 " bytes: %s", in->display,
                                   in->budget_cut ? "cut" : "damaged", delivered,
                                   in->damage);
    ok = sink->end(sink->ctx, id, true, damage, error);
    g_free(damage);
  } else {
    ok = sink->end(sink->ctx, id, false, NULL, error);
  }
  return ok ? true : sink_refused(error, in->display);
}

/* --- members offered to the sink (tm_container_sink.offer) --------------- */

static tm_input listed_member_input(struct archive *a, tm_input *zip,
                                    const char *name, const zip_entry *entry);

struct container_source {
  tm_input in; /* uncharged: a deflated member of the root ZIP, own inflate */
  uint32_t file_id;
  uint64_t max_bytes;
  /* Written by container_source_stream(); read by the walk only after
   * take() said the sink read it (which orders the two threads). */
  bool streamed;
  leaf_streamed out;
};

/* stream_chunks() to container_source_stream()'s callbacks. */
typedef struct source_leaf {
  void (*chunk)(void *ctx, const uint8_t *data, size_t len);
  bool (*wants_more)(void *ctx);
  void *ctx;
} source_leaf;

static bool source_leaf_chunk(void *ctx, const uint8_t *data, size_t len) {
  source_leaf *leaf = ctx;
  leaf->chunk(leaf->ctx, data, len);
  return true;
}

static bool source_leaf_wants_more(void *ctx) {
  source_leaf *leaf = ctx;
  return leaf->wants_more(leaf->ctx);
}

void container_source_stream(container_source *src,
                             void (*chunk)(void *ctx, const uint8_t *data, size_t len),
                             bool (*wants_more)(void *ctx), void *ctx) {
  /* stream_begun_leaf()'s loop, with the sink's answers from the
   * callbacks, read here (no read-ahead: this runs on the sink's thread,
   * and the walk is not touched). */
  input_read_head(&src->in);
  source_leaf leaf = {chunk, wants_more, ctx};
  src->out = stream_chunks(NULL, &src->in, NULL, src->max_bytes, source_leaf_chunk,
                           source_leaf_wants_more, &leaf);
  src->streamed = true;
}

static void container_source_free(container_source *src) {
  if (src == NULL)
    return;
  input_clear(&src->in);
  g_free(src);
}

/* An offered member's turn: begin(), then the sink reads it itself
 * (take() = 1: it is ended as its source was streamed) or has it streamed
 * from `a`'s current entry as any other member. */
static bool deliver_offered(tm_walk *w, struct archive *a, tm_input *zip, const char *name,
                            const zip_entry *entry, container_source *src,
                            const char *trace_type, GError **error) {
  const tm_container_sink *sink = w->sink;
  uint32_t id = src->file_id;
  walk_mark_started(w, id);
  if (!sink->begin(sink->ctx, id, trace_type, error))
    return sink_refused(error, src->in.display);
  int taken = sink->take(sink->ctx, id, error);
  if (taken < 0)
    return sink_refused(error, src->in.display);
  if (taken > 0 && src->streamed) {
    /* What the serial stream charges, charged in its place in the walk. */
    w->root_inflated += src->in.pulled;
    return end_leaf(w, &src->in, id, src->out.delivered, src->out.too_big, src->out.unwanted,
                    src->out.state, error);
  }
  tm_input member = listed_member_input(a, zip, name, entry);
  input_read_head(&member);
  bool ok = stream_begun_leaf(w, &member, id, error);
  input_clear(&member);
  return ok;
}

/* What a file is, from its head. */
typedef struct file_kind {
  container_kind container; /* KIND_NONE for a leaf */
  const char *trace_type;   /* a leaf's type, named by sink->detect() */
} file_kind;

typedef enum sniff_outcome {
  SNIFF_READY = 0,
  SNIFF_LOST,   /* damaged before its type was known; reported */
  SNIFF_FAILED, /* the import fails; error set */
} sniff_outcome;

static bool deliver_file(tm_walk *w, tm_input *in, uint32_t id, file_kind kind,
                         unsigned depth, GError **error);

/* Adds the file's row and finds out from its head what it is. */
static sniff_outcome add_and_sniff(tm_walk *w, tm_input *in, uint32_t parent_id,
                                   const char *name, uint32_t *id_out,
                                   file_kind *kind, GError **error) {
  tm_string_pool *strings = w->model->strings;
  if (w->all_cut)
    return SNIFF_LOST;
  if (w->model->trace_files.len - w->first_row >= w->budgets.max_files) {
    w->all_cut = true;
    walk_budget_exceeded(w, parent_id, TM_STAT_FILE_COUNT_EXCEEDED);
    char *damage = g_strdup_printf(
        "%s: more than %" PRIu64 " files in one import (budget --max-files): "
        "it and everything after it are not read",
        in->display, w->budgets.max_files);
    bool reported = report_container_damage(w, parent_id, damage, error);
    g_free(damage);
    return reported ? SNIFF_LOST : SNIFF_FAILED;
  }
  uint32_t id = model_add_trace_file(w->model, parent_id, name, false);
  *id_out = id;
  input_read_head(in);
  kind->container = sniff_container(w, in->head, in->head_len);
  kind->trace_type = NULL;
  if (kind->container != KIND_NONE) {
    tm_trace_file_row *row = walk_row(w, id);
    row->is_container = true;
    row->trace_type =
        string_pool_intern_cstr(strings, kind_names[kind->container]);
    return SNIFF_READY;
  }
  if (in->head_len > 0 || in->state != INPUT_DAMAGED)
    kind->trace_type = w->sink->detect(w->sink->ctx, in->head, in->head_len,
                                       name[0] != '\0' ? name : NULL);
  if (kind->trace_type == NULL && in->state == INPUT_DAMAGED) {
    char *damage = g_strdup_printf(
        "%s: damaged after %zu bytes, before its type was known: %s",
        in->display, in->head_len, in->damage);
    bool reported = report_container_damage(w, parent_id, damage, error);
    g_free(damage);
    return reported ? SNIFF_LOST : SNIFF_FAILED;
  }
  if (kind->trace_type == NULL) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_INPUT,
                "%s: Unknown trace type provided (ERR:fmt)", in->display);
    return SNIFF_FAILED;
  }
  walk_row(w, id)->trace_type =
      string_pool_intern_cstr(strings, kind->trace_type);
  return SNIFF_READY;
}

/* One file whose bytes come from `in`: a container is walked, a leaf is
 * streamed to the sink. */
static bool read_file(tm_walk *w, tm_input *in, uint32_t parent_id,
                      const char *name, unsigned depth, GError **error) {
  uint32_t id;
  file_kind kind;
  switch (add_and_sniff(w, in, parent_id, name, &id, &kind, error)) {
  case SNIFF_READY:
    return deliver_file(w, in, id, kind, depth, error);
  case SNIFF_LOST:
    return true;
  case SNIFF_FAILED:
    break;
  }
  return false;
}

static void archive_support(struct archive *a, container_kind kind) {
  switch (kind) {
  case KIND_TAR:
    archive_read_support_format_tar(a);
    break;
  case KIND_ZIP:
    archive_read_support_format_zip_streamable(a);
    break;
  /* One filter, set explicitly: with filter bidding libarchive would also
   * peel a gzip inside the gzip, and the raw format would pass non-gzip
   * bytes through unchanged. Each level of compression is a row. */
  case KIND_GZIP:
    archive_read_append_filter(a, ARCHIVE_FILTER_GZIP);
    archive_read_support_format_raw(a);
    break;
  case KIND_ZSTD:
    archive_read_append_filter(a, ARCHIVE_FILTER_ZSTD);
    archive_read_support_format_raw(a);
    break;
  case KIND_NONE:
    g_assert_not_reached();
  }
}

/* libarchive's error text, or the innermost cause when our own source broke
 * underneath it. */
static char *container_damage_cause(struct archive *a, const tm_input *in) {
  if (in->state == INPUT_DAMAGED)
    return g_strdup(in->damage);
  const char *text = archive_error_string(a);
  char *cause = g_strdup(text != NULL ? text : "unknown libarchive error");
  return g_strchomp(cause);
}

static char *header_damage(struct archive *a, const tm_input *in) {
  char *cause = container_damage_cause(a, in);
  char *damage =
      g_strdup_printf("%s: damaged at byte %" PRId64 ": %s", in->display,
                      (int64_t)archive_filter_bytes(a, 0), cause);
  g_free(cause);
  return damage;
}

typedef enum next_member {
  MEMBER_FOUND = 0,
  MEMBER_NONE,
  MEMBER_DAMAGED,
} next_member;

/* Moves to the next member that gets a row. `name` is borrowed from the
 * entry: valid until the next header. */
static next_member archive_next_member(struct archive *a, bool is_stream,
                                       const char **name) {
  for (;;) {
    struct archive_entry *entry = NULL;
    int r = archive_read_next_header(a, &entry);
    if (r == ARCHIVE_EOF)
      return MEMBER_NONE;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
      return MEMBER_DAMAGED;
    if (!entry_is_regular_file(entry))
      continue;
    if (is_stream) {
      *name = "";
      return MEMBER_FOUND;
    }
    *name = archive_entry_pathname(entry);
    if (*name == NULL)
      *name = archive_entry_pathname_utf8(entry);
    if (*name == NULL)
      *name = "";
    if (!path_is_hidden(*name))
      return MEMBER_FOUND;
  }
}

static tm_input member_input(struct archive *a, tm_input *container,
                             const char *name) {
  return (tm_input){
      .walk = container->walk,
      .display = name[0] == '\0'
                     ? g_strdup(container->display)
                     : g_strdup_printf("%s/%s", container->display, name),
      .fd = -1,
      .archive = a,
      .archive_source = container,
  };
}

/* Reads a streamed container's members in archive order, then takes the
 * rest of its bytes (so `size` counts them all and damage after the last
 * member is seen). */
static bool read_container(tm_walk *w, tm_input *in, uint32_t id,
                           container_kind kind, unsigned depth,
                           GError **error) {
  bool ok = false;
  bool damage_seen = false;
  char *damage = NULL;
  bool is_stream = kind == KIND_GZIP || kind == KIND_ZSTD;
  struct archive *a = archive_read_new();
  archive_support(a, kind);
  if (archive_read_open(a, in, NULL, input_archive_read, NULL) != ARCHIVE_OK) {
    char *cause = container_damage_cause(a, in);
    damage = g_strdup_printf("%s: cannot be opened as %s: %s", in->display,
                             kind_names[kind], cause);
    g_free(cause);
    goto damaged;
  }
  for (;;) {
    const char *name = NULL;
    next_member next = archive_next_member(a, is_stream, &name);
    if (next == MEMBER_NONE)
      break;
    if (next == MEMBER_DAMAGED) {
      damage = header_damage(a, in);
      goto damaged;
    }
    tm_input member = member_input(a, in, name);
    bool member_ok = read_file(w, &member, id, name, depth + 1, error);
    bool fatal = member.state == INPUT_DAMAGED && member.damage_fatal;
    input_clear(&member);
    if (!member_ok)
      goto out;
    if (w->root_cut || w->all_cut)
      goto cut;
    if (fatal) {
      /* Reported with the member; libarchive cannot go on. */
      damage_seen = true;
      break;
    }
  }
  goto drain;

damaged:
  damage_seen = true;
  if (!report_container_damage(w, id, damage, error))
    goto out;

drain:
  for (;;) {
    const uint8_t *data;
    size_t len;
    input_state state = input_next(in, &data, &len);
    if (state == INPUT_OPEN)
      continue;
    if (state == INPUT_DAMAGED && !damage_seen) {
      g_free(damage);
      damage = g_strdup_printf("%s: damaged after its last member: %s",
                               in->display, in->damage);
      if (!report_container_damage(w, id, damage, error))
        goto out;
    }
    break;
  }
  walk_row(w, id)->size = (int64_t)in->pulled;
  ok = true;
  goto out;

cut:
  /* A budget stopped the reading: what is left is not pulled. */
  walk_row(w, id)->size = (int64_t)in->pulled;
  ok = true;

out:
  archive_read_free(a);
  g_free(damage);
  return ok;
}

/* ---- a root ZIP file, listed through its central directory ----
 *
 * A ZIP on disk is read three times over the same central directory, never
 * twice from a pipe: the listing pass adds every member's row and sniffs
 * its head (so all rows exist before any member is delivered, as in
 * trace_processor, and an unknown member fails the import before any
 * parsing), then perfetto_manifest members are delivered, then the others
 * in archive order. Member sizes come from the directory, so a bad CRC in
 * a stored member does not lose the framing as in a streamed ZIP. A ZIP
 * whose directory cannot be read (e.g. cut short) is streamed instead. */

static const char manifest_type[] = "perfetto_manifest";

typedef struct planned_member {
  uint32_t id;
  file_kind kind;
  bool deliver;
  /* Its directory entry, or NULL. We inflate it ourselves when it is
   * deflated and not encrypted (entry_inflatable), else libarchive reads
   * it. Borrowed from the zip_directory. */
  const zip_entry *entry;
} planned_member;

typedef enum listing_result {
  LISTING_DONE = 0,
  LISTING_FAILED,
  LISTING_UNAVAILABLE, /* no readable central directory: stream instead */
} listing_result;

static struct archive *open_zip_directory(int fd) {
  if (lseek(fd, 0, SEEK_SET) != 0)
    return NULL;
  struct archive *a = archive_read_new();
  archive_read_support_format_zip_seekable(a);
  if (archive_read_open_fd(a, fd, 64 * 1024) != ARCHIVE_OK) {
    archive_read_free(a);
    return NULL;
  }
  return a;
}

/* True if we inflate the member of `e` ourselves: deflated, not encrypted. */
static bool entry_inflatable(const zip_entry *e) {
  return e != NULL && e->method == ZIP_METHOD_DEFLATE &&
         (e->flags & (ZIP_FLAG_ENCRYPTED | ZIP_FLAG_STRONG_ENCRYPTION)) == 0;
}

/* A member of the listed ZIP `zip` (`entry`: its directory entry, or
 * NULL), inflated from the ZIP's fd if entry_inflatable, else read through
 * `a`. libarchive only warns of a local header that disagrees with the
 * directory (a stored member's size, zip64's included) and reads the
 * local header's sizes: that is damage here, before any byte, as for a
 * member we inflate (zip_inflate_new). */
static tm_input listed_member_input(struct archive *a, tm_input *zip,
                                    const char *name, const zip_entry *entry) {
  tm_input member = member_input(a, zip, name);
  uint64_t data_at;
  char *why = NULL;
  if (entry_inflatable(entry))
    member.zip_inflate = zip_inflate_new(zip->fd, entry);
  else if (entry != NULL && !zip_entry_data_offset(zip->fd, entry, &data_at, &why))
    input_set_damaged(&member, why, false);
  return member;
}

/* The damage libarchive found at a header of the listed ZIP, in our words
 * where our reading of the directory explains it: a zip64 extra field
 * that cannot hold the sizes of the local header at `cursor` in the
 * directory (libarchive only says "Malformed 64-bit compressed size"). */
static char *listed_header_damage(struct archive *a, const tm_input *in,
                                  const zip_directory *dir, size_t cursor) {
  const zip_entry *next = dir != NULL ? zip_directory_at(dir, cursor) : NULL;
  uint64_t at = 0, data_offset;
  char *why = NULL;
  if (next != NULL && !zip_entry_data_offset(in->fd, next, &data_offset, &why))
    at = next->local_header_offset;
  if (why == NULL)
    return header_damage(a, in);
  char *damage = g_strdup_printf("%s: damaged at byte %" PRIu64 ": %s", in->display,
                                 at, why);
  g_free(why);
  return damage;
}

static bool is_manifest(const planned_member *p) {
  return p->kind.trace_type != NULL &&
         strcmp(p->kind.trace_type, manifest_type) == 0;
}

typedef TM_VEC(planned_member) planned_members;

/* The members of sweep 1 offered to the sink (by plan index; NULL: none):
 * those before the first that is not a leaf we inflate from the root's fd
 * (so each can be read on its own, by any thread) of at most
 * --max-member-size by its directory entry, and only as far as their
 * sizes together keep the root within its inflate budget. Delivered
 * first, they cannot trip a budget in the serial run either (an inflate
 * stops at the directory's size), so a member read ahead is read exactly
 * as it would be in its turn. The first of them is not offered: its turn
 * is next, so it is streamed here while the sink parses the others. */
static container_source **offer_members(tm_walk *w, tm_input *zip, const planned_members *plan) {
  const tm_container_sink *sink = w->sink;
  if (sink->offer == NULL || sink->take == NULL || sink->offers_end == NULL || w->root_cut ||
      w->all_cut || w->root != zip)
    return NULL;
  uint64_t limit = root_inflate_limit(w); /* w->root is zip */
  uint64_t total = w->root_inflated;
  size_t n_offered = 0, end = 0;
  for (; end < plan->len; end++) {
    const planned_member *p = &plan->data[end];
    if (!p->deliver || is_manifest(p))
      continue;
    const zip_entry *e = p->entry;
    uint64_t sum;
    if (p->kind.container != KIND_NONE || !entry_inflatable(e) || e->name_len == 0 ||
        e->uncompressed_size > w->budgets.max_member_bytes ||
        __builtin_add_overflow(total, e->uncompressed_size, &sum) || sum > limit)
      break; /* it and the members after it are streamed in their turn */
    total = sum;
    n_offered++;
  }
  if (n_offered < 2)
    return NULL; /* one member: nothing to read beside it */
  container_source **sources = g_new0(container_source *, plan->len);
  bool first = true;
  for (size_t k = 0; k < end; k++) {
    const planned_member *p = &plan->data[k];
    if (!p->deliver || is_manifest(p))
      continue;
    if (first) {
      first = false;
      continue;
    }
    const zip_entry *e = p->entry;
    container_source *src = g_new0(container_source, 1);
    src->in = (tm_input){
        .walk = w,
        .display = g_strdup_printf("%s/%.*s", zip->display, (int)e->name_len, e->name),
        .fd = -1,
        .uncharged = true,
        .zip_inflate = zip_inflate_new(zip->fd, e),
    };
    src->file_id = p->id;
    src->max_bytes = w->budgets.max_member_bytes;
    sources[k] = src;
  }
  for (size_t k = 0; k < plan->len; k++)
    if (sources[k] != NULL)
      sink->offer(sink->ctx, sources[k]->file_id, plan->data[k].kind.trace_type, sources[k]);
  return sources;
}

static listing_result read_listed_zip(tm_walk *w, tm_input *in, uint32_t id,
                                      unsigned depth, GError **error) {
  listing_result result = LISTING_FAILED;
  planned_members plan = {0};
  bool damage_seen = false;
  bool has_manifest = false;
  char *damage = NULL;
  zip_directory *directory = NULL;
  char *directory_why = NULL;
  uint64_t directory_why_at = 0;
  size_t directory_cursor = 0;
  container_source **sources = NULL; /* by plan index, when offered */
  struct archive *a = open_zip_directory(in->fd);
  if (a == NULL) {
    /* Streaming goes on from where the head left the file. */
    off_t resume = (off_t)in->pulled;
    if (lseek(in->fd, resume, SEEK_SET) != resume) {
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_INPUT, "%s: cannot seek: %s", in->display,
                  g_strerror(errno));
      return LISTING_FAILED;
    }
    return LISTING_UNAVAILABLE;
  }
  struct stat zip_stat;
  if (fstat(in->fd, &zip_stat) == 0)
    directory = zip_directory_read(in->fd, (uint64_t)zip_stat.st_size, &directory_why,
                                   &directory_why_at);
  if (directory_why != NULL) {
    /* A central directory record we cannot read (a zip64 field too short
     * for its sizes) is one of libarchive's too: it would list no member
     * at all. The damage is told once, on the archive, and the members
     * are streamed from their local headers, as a ZIP without a readable
     * directory is: every member whose local header can be read is kept,
     * the damaged record's too when its own header holds its sizes. */
    damage = g_strdup_printf("%s: damaged at byte %" PRIu64 ": %s", in->display,
                             directory_why_at, directory_why);
    off_t resume = (off_t)in->pulled;
    if (!report_container_damage(w, id, damage, error))
      goto out;
    if (lseek(in->fd, resume, SEEK_SET) != resume) {
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_INPUT, "%s: cannot seek: %s", in->display,
                  g_strerror(errno));
      goto out;
    }
    result = LISTING_UNAVAILABLE;
    goto out;
  }

  for (;;) {
    const char *name = NULL;
    next_member next = archive_next_member(a, false, &name);
    if (next == MEMBER_NONE)
      break;
    if (next == MEMBER_DAMAGED) {
      damage = listed_header_damage(a, in, directory, directory_cursor);
      damage_seen = true;
      if (!report_container_damage(w, id, damage, error))
        goto out;
      break;
    }
    tm_input member = member_input(a, in, name);
    planned_member p = {0};
    sniff_outcome sniffed =
        add_and_sniff(w, &member, id, name, &p.id, &p.kind, error);
    bool fatal = member.state == INPUT_DAMAGED && member.damage_fatal;
    input_clear(&member);
    if (sniffed == SNIFF_FAILED)
      goto out;
    p.deliver = sniffed == SNIFF_READY;
    p.entry = directory != NULL ? zip_directory_find(directory, &directory_cursor, name) : NULL;
    has_manifest = has_manifest || (p.deliver && is_manifest(&p));
    tm_vec_push(&plan, p);
    if (fatal || w->all_cut || w->root_cut)
      break; /* told when the member is delivered (or was lost) */
  }
  archive_read_free(a);
  a = NULL;

  /* Sweep 0 delivers the manifests, sweep 1 everything else. */
  for (int sweep = has_manifest ? 0 : 1; sweep < 2 && !w->root_cut; sweep++) {
    if (sweep == 1)
      sources = offer_members(w, in, &plan);
    a = open_zip_directory(in->fd);
    if (a == NULL) {
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_INPUT, "%s: cannot be read again",
                  in->display);
      goto out;
    }
    for (size_t k = 0; k < plan.len; k++) {
      const char *name = NULL;
      if (archive_next_member(a, false, &name) != MEMBER_FOUND) {
        /* The listing pass read these headers: the file changed. */
        if (!damage_seen) {
          g_free(damage);
          damage = header_damage(a, in);
          damage_seen = true;
          if (!report_container_damage(w, id, damage, error))
            goto out;
        }
        break;
      }
      const planned_member *p = &plan.data[k];
      if (!p->deliver || is_manifest(p) != (sweep == 0))
        continue;
      bool member_ok, fatal = false;
      if (sources != NULL && sources[k] != NULL) {
        member_ok = deliver_offered(w, a, in, name, p->entry, sources[k],
                                    p->kind.trace_type, error);
      } else {
        tm_input member = listed_member_input(a, in, name, p->entry);
        input_read_head(&member);
        member_ok = deliver_file(w, &member, p->id, p->kind, depth + 1, error);
        fatal = member.state == INPUT_DAMAGED && member.damage_fatal;
        input_clear(&member);
      }
      if (!member_ok)
        goto out;
      if (fatal || w->root_cut) {
        damage_seen = true;
        break;
      }
    }
    archive_read_free(a);
    a = NULL;
  }
  struct stat st;
  walk_row(w, id)->size =
      fstat(in->fd, &st) == 0 ? (int64_t)st.st_size : (int64_t)in->pulled;
  result = LISTING_DONE;

out:
  if (sources != NULL) {
    w->sink->offers_end(w->sink->ctx);
    for (size_t k = 0; k < plan.len; k++)
      container_source_free(sources[k]);
    g_free(sources);
  }
  if (a != NULL)
    archive_read_free(a);
  zip_directory_free(directory);
  g_free(directory_why);
  tm_vec_free(&plan);
  g_free(damage);
  return result;
}

static bool deliver_file(tm_walk *w, tm_input *in, uint32_t id, file_kind kind,
                         unsigned depth, GError **error) {
  if (kind.container == KIND_NONE)
    return stream_leaf(w, in, id, kind.trace_type, error);
  walk_mark_started(w, id);
  if (depth >= w->budgets.max_depth) {
    walk_budget_exceeded(w, id, TM_STAT_DEPTH_EXCEEDED);
    char *damage = g_strdup_printf(
        "%s: containers nested more than %u deep (budget --max-depth): not read",
        in->display, w->budgets.max_depth);
    bool reported = report_container_damage(w, id, damage, error);
    g_free(damage);
    return reported;
  }
  if (kind.container == KIND_ZIP && in->seekable) {
    switch (read_listed_zip(w, in, id, depth, error)) {
    case LISTING_DONE:
      return true;
    case LISTING_FAILED:
      return false;
    case LISTING_UNAVAILABLE:
      break;
    }
  }
  return read_container(w, in, id, kind.container, depth, error);
}

static bool read_root(tm_walk *w, const char *path, GError **error) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_INPUT, "%s: cannot open: %s", path,
                g_strerror(errno));
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_INPUT, "%s: not a file", path);
    close(fd);
    return false;
  }
  tm_input in = {
      .walk = w,
      .display = g_strdup(path),
      .fd = fd,
      .fd_buf = g_malloc(TM_CONTAINER_CHUNK),
      .seekable = S_ISREG(st.st_mode),
  };
  w->root = &in;
  w->root_id = (uint32_t)w->model->trace_files.len;
  w->root_size = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
  w->root_inflated = 0;
  w->root_cut = false;
  bool ok = read_file(w, &in, TM_NULL_ID, path, 0, error);
  w->root = NULL;
  input_clear(&in);
  close(fd);
  return ok;
}

/* ---- processing_order ---- */

typedef struct order_key {
  uint32_t parent_id;
  int64_t priority;
  const char *name;
  uint32_t id;
} order_key;

/* The sort rank of a child of `trace_type`: twice a reader's priority,
 * so that the archives' rank, -1, falls between the readers that come
 * before archives (negative priority) and the others. */
static int64_t order_rank(const tm_walk *w, const char *trace_type) {
  static const char *const archives[] = {"zip", "tar", "gzip", "zstd"};
  if (g_strcmp0(trace_type, manifest_type) == 0)
    return INT64_MIN;
  for (size_t i = 0; i < G_N_ELEMENTS(archives); i++)
    if (g_strcmp0(trace_type, archives[i]) == 0)
      return -1;
  int32_t priority = trace_type && w->sink->priority
                         ? w->sink->priority(w->sink->ctx, trace_type)
                         : 0;
  return 2 * (int64_t)priority;
}

static int order_key_compare(const void *pa, const void *pb) {
  const order_key *a = pa, *b = pb;
  if (a->parent_id != b->parent_id)
    return a->parent_id < b->parent_id ? -1 : 1;
  if (a->priority != b->priority)
    return a->priority < b->priority ? -1 : 1;
  int by_name = strcmp(a->name, b->name);
  if (by_name != 0)
    return by_name;
  return a->id < b->id ? -1 : (a->id > b->id);
}

typedef struct order_walk {
  tm_model *model;
  const order_key *keys;
  size_t n_keys;
} order_walk;

/* Numbers the children of `parent_id` (a sorted run of keys) depth first. */
static int64_t number_children(const order_walk *ow, uint32_t parent_id,
                               int64_t next) {
  /* First key of the run: keys are sorted by parent first. */
  size_t lo = 0, hi = ow->n_keys;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (ow->keys[mid].parent_id < parent_id)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (size_t k = lo; k < ow->n_keys && ow->keys[k].parent_id == parent_id;
       k++) {
    tm_trace_file_row *row = &ow->model->trace_files.data[ow->keys[k].id];
    row->processing_order = next++;
    if (row->is_container)
      next = number_children(ow, ow->keys[k].id, next);
  }
  return next;
}

static void assign_processing_order(tm_walk *w) {
  tm_model *model = w->model;
  size_t n_rows = model->trace_files.len - w->first_row;
  order_key *keys = g_new(order_key, n_rows > 0 ? n_rows : 1);
  size_t n_keys = 0;
  for (size_t i = 0; i < n_rows && i < w->started->len; i++) {
    if (!w->started->data[i])
      continue;
    uint32_t id = w->first_row + (uint32_t)i;
    const tm_trace_file_row *row = &model->trace_files.data[id];
    const char *name = string_pool_borrow(model->strings, row->name);
    keys[n_keys++] = (order_key){
        .parent_id = row->parent_id,
        .priority = order_rank(w, string_pool_borrow(model->strings, row->trace_type)),
        .name = name != NULL ? name : "",
        .id = id,
    };
  }
  qsort(keys, n_keys, sizeof *keys, order_key_compare);
  order_walk ow = {.model = model, .keys = keys, .n_keys = n_keys};
  number_children(&ow, TM_NULL_ID, 0);
  g_free(keys);
}

bool container_read_inputs(tm_model *model, const char *const *paths,
                           size_t n_paths, const tm_container_sink *sink,
                           const tm_budgets *budgets, GError **error) {
  return container_read_inputs_ahead(model, paths, n_paths, sink, budgets, false,
                                     error);
}

bool container_read_inputs_ahead(tm_model *model, const char *const *paths,
                                 size_t n_paths, const tm_container_sink *sink,
                                 const tm_budgets *budgets, bool read_ahead,
                                 GError **error) {
  tm_walk w = {
      .read_ahead = read_ahead,
      .model = model,
      .sink = sink,
      .budgets = budgets_with_defaults(budgets),
      .first_row = (uint32_t)model->trace_files.len,
      .started = g_byte_array_new(),
      .zstd_readable = libarchive_reads_zstd(),
  };
  bool ok = true;
  for (size_t i = 0; i < n_paths && ok && !w.all_cut; i++)
    ok = read_root(&w, paths[i], error);
  assign_processing_order(&w);
  g_byte_array_unref(w.started);
  return ok;
}
