/*
 * tracemerge pack: trace files and how their machines and clocks relate,
 * written as one archive with a generated perfetto_manifest, so nobody
 * writes manifest JSON by hand (tm_pack_manifest, tm_pack_write in
 * <tracemerge/tracemerge.h>).
 *
 * The manifest (docs/clock-model.md §9):
 * - each file is an entry named after its member; a file given with a
 *   machine gets `"machine": {"name": ...}`;
 * - the first machine is the reference: every other machine with an
 *   offset or a clock relates each of its files to the reference's first
 *   file: `"clocks": {"clock": <its clock, if any>, "sync_to": {"file":
 *   <reference file>, "clock": <the reference's clock, if any>},
 *   "offset_ns": <offset>}` (RELATE with a clock, PIN without);
 * - `trace_time` and `attributes` as asked.
 * It is then parsed and resolved by core/input/manifest.c against the
 * member names, exactly as an import will, so a pack that would not import
 * fails here with the import's message.
 *
 * Members: the manifest first (an import needs it before any trace), then
 * each file under its base name, streamed (never held whole). A compressed
 * file (gzip, zstd, xz, bzip2) whose content is a trace is stored
 * decompressed, without its compression suffix: a manifest can describe a
 * trace, not an archive (an override on an archive fails the import), and
 * the archive compresses it anyway. A file that is itself an archive is
 * stored as it is, and refused if it was given a machine or a clock
 * relation, with the import's message for that.
 *
 * Budgets (tm_pack_options.budgets, as an import's: budget.h): a file
 * stored decompressed whose content passes max(its size times
 * max_inflate_ratio, the 64 MiB floor), or a trace file (decompressed or
 * not) longer than max_member_bytes, is stored cut at that byte; the
 * other files are packed whole and the archive is written, then the call
 * fails (TM_ERROR_DAMAGED) with the import's message for the first cut,
 * naming the file, the offset and the budget, and the stat an import
 * counts it under. A file stored as it is (an archive) is the import's to
 * bound. The budgets on depth, file count and records do not apply: pack
 * opens no archive and reads no trace.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracemerge/tracemerge.h>

#include "base/json_string.h"
#include "input/budget.h"
#include "input/container.h"
#include "input/manifest.h"
#include "export/pack.h"

#define MANIFEST_MEMBER "perfetto_manifest.json"
#define COPY_CHUNK (64u << 10)

typedef struct pack_member {
  const char *path;
  char *name;
  bool decompress; /* stored decompressed */
  bool container;  /* the content is an archive */
  int64_t size;    /* bytes stored */
  char *cut;       /* why a budget cut the file at `size` (NULL: whole) */
} pack_member;

static void members_free(pack_member *members, size_t n) {
  for (size_t i = 0; members && i < n; i++) {
    g_free(members[i].name);
    g_free(members[i].cut);
  }
  g_free(members);
}

static struct archive *open_raw(const char *path, GError **error) {
  struct archive *a = archive_read_new();
  archive_read_support_filter_all(a);
  archive_read_support_format_raw(a);
  struct archive_entry *entry;
  if (archive_read_open_filename(a, path, COPY_CHUNK) != ARCHIVE_OK ||
      archive_read_next_header(a, &entry) != ARCHIVE_OK) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_INPUT, "cannot read %s: %s", path,
                archive_error_string(a) ? archive_error_string(a) : g_strerror(errno));
    archive_read_free(a);
    return NULL;
  }
  return a;
}

static bool is_archive(const uint8_t *head, size_t len) {
  if (len >= 4 && memcmp(head, "PK\003\004", 4) == 0)
    return true;
  return len >= 262 && memcmp(head + 257, "ustar", 5) == 0;
}

/* The byte a budget would cut `m` at (an import's budgets, budget.h),
 * given the size of the file on disk; *by_inflate says which budget it is
 * (the inflate ratio, or the member size). */
static uint64_t budget_limit(const pack_member *m, uint64_t file_size, const tm_budgets *b,
                             bool *by_inflate) {
  uint64_t limit = b->max_member_bytes;
  *by_inflate = false;
  if (m->decompress) {
    /* As the container layer judges it: what the file yields per byte of
     * it, once past the floor. */
    uint64_t inflate;
    if (__builtin_mul_overflow(file_size, b->max_inflate_ratio, &inflate))
      inflate = UINT64_MAX;
    inflate = MAX(inflate, TM_BUDGET_INFLATE_FLOOR);
    if (inflate < limit) {
      limit = inflate;
      *by_inflate = true;
    }
  }
  return limit;
}

/* The import's message for a file cut at `limit` (container.c's words). */
static char *cut_message(const pack_member *m, uint64_t limit, uint64_t file_size,
                         const tm_budgets *b, bool by_inflate) {
  if (by_inflate)
    return g_strdup_printf("%s: cut after %" PRIu64 " bytes: %s yields more than %" PRIu64
                           " times its %" PRIu64 " bytes (budget --max-inflate-ratio; stat "
                           TM_STAT_INFLATE_RATIO_EXCEEDED ")",
                           m->path, limit, m->path, b->max_inflate_ratio, file_size);
  return g_strdup_printf("%s: cut after %" PRIu64 " bytes: larger than the %" PRIu64
                         " bytes of budget --max-member-size (stat "
                         TM_STAT_MEMBER_SIZE_EXCEEDED ")",
                         m->path, limit, b->max_member_bytes);
}

/* Looks at one file: compressed or not, an archive or not, the bytes to
 * store (up to where a budget cuts it: never inflated further). */
static bool inspect(pack_member *m, const tm_budgets *budgets, GError **error) {
  struct archive *a = open_raw(m->path, error);
  if (!a)
    return false;
  bool compressed = archive_filter_count(a) > 1;
  uint8_t head[512];
  la_ssize_t got = 0, n;
  while (got < (la_ssize_t)sizeof head &&
         (n = archive_read_data(a, head + got, sizeof head - (size_t)got)) > 0)
    got += n;
  m->container = is_archive(head, (size_t)got);
  m->decompress = compressed && !m->container;
  bool ok = true;
  struct stat st;
  if (stat(m->path, &st) != 0) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_INPUT, "cannot read %s: %s", m->path,
                g_strerror(errno));
    archive_read_free(a);
    return false;
  }
  uint64_t file_size = (uint64_t)st.st_size;
  bool by_inflate = false;
  uint64_t limit = budget_limit(m, file_size, budgets, &by_inflate);
  uint64_t size = 0;
  if (m->decompress) {
    size = (uint64_t)got;
    uint8_t *chunk = g_malloc(COPY_CHUNK);
    while (size <= limit && (n = archive_read_data(a, chunk, COPY_CHUNK)) > 0)
      size += (uint64_t)n;
    g_free(chunk);
    if (size <= limit && n < 0) {
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_INPUT, "cannot read %s: %s", m->path,
                  archive_error_string(a));
      ok = false;
    }
  } else {
    size = file_size;
  }
  /* An archive stored as it is: its members are the import's to bound. */
  if (ok && !m->container && size > limit) {
    m->cut = cut_message(m, limit, file_size, budgets, by_inflate);
    size = limit;
  }
  m->size = (int64_t)size;
  archive_read_free(a);
  m->name = g_path_get_basename(m->path);
  static const char *const suffixes[] = {".gz", ".zst", ".xz", ".bz2"};
  for (size_t i = 0; m->decompress && i < G_N_ELEMENTS(suffixes); i++)
    if (g_str_has_suffix(m->name, suffixes[i]) && strlen(m->name) > strlen(suffixes[i])) {
      m->name[strlen(m->name) - strlen(suffixes[i])] = '\0';
      break;
    }
  return ok;
}

static pack_member *inspect_all(const tm_pack_options *options, GError **error) {
  pack_member *members = g_new0(pack_member, options->n_files + 1);
  tm_budgets budgets = budgets_with_defaults(&options->budgets);
  for (size_t i = 0; i < options->n_files; i++) {
    members[i].path = options->files[i].path;
    if (!inspect(&members[i], &budgets, error)) {
      g_prefix_error(error, "pack: ");
      members_free(members, options->n_files);
      return NULL;
    }
    if (strcmp(members[i].name, MANIFEST_MEMBER) == 0) {
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE,
                  "pack: %s would be named %s, the name of the manifest pack writes",
                  members[i].path, MANIFEST_MEMBER);
      members_free(members, options->n_files);
      return NULL;
    }
    for (size_t j = 0; j < i; j++)
      if (strcmp(members[i].name, members[j].name) == 0) {
        g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE,
                    "pack: %s and %s would both be member %s; rename one", members[j].path,
                    members[i].path, members[i].name);
        members_free(members, options->n_files);
        return NULL;
      }
  }
  return members;
}

/* --- the manifest -------------------------------------------------------------- */

static const tm_pack_machine *find_machine(const tm_pack_options *options, const char *name,
                                           size_t *index) {
  for (size_t i = 0; name && i < options->n_machines; i++)
    if (strcmp(options->machines[i].name, name) == 0) {
      if (index)
        *index = i;
      return &options->machines[i];
    }
  return NULL;
}

/* The first file of machine `name`, or -1. */
static ssize_t first_file_of(const tm_pack_options *options, const char *name) {
  for (size_t i = 0; i < options->n_files; i++)
    if (options->files[i].machine && strcmp(options->files[i].machine, name) == 0)
      return (ssize_t)i;
  return -1;
}

static bool related(const tm_pack_options *options, const tm_pack_machine *m) {
  return m != &options->machines[0] && (m->has_offset || m->clock);
}

static bool check_options(const tm_pack_options *options, GError **error) {
  if (options->n_files == 0) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE, "pack: no files to pack");
    return false;
  }
  for (size_t i = 0; i < options->n_machines; i++) {
    const tm_pack_machine *m = &options->machines[i];
    if (first_file_of(options, m->name) < 0) {
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE, "pack: machine '%s' has no file", m->name);
      return false;
    }
    if (i == 0 && m->has_offset) {
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE,
                  "pack: '%s' is the reference machine (the first one): its clock is what "
                  "the others' offsets are measured from, so it takes no --offset",
                  m->name);
      return false;
    }
  }
  /* Clock names as the manifest reader takes them (§10.1 #2), also where
   * the manifest would not use them. */
  for (size_t i = 0; i <= options->n_machines; i++) {
    const char *clock =
        i < options->n_machines ? options->machines[i].clock : options->trace_time_clock;
    bool known = !clock;
    for (uint32_t id = 1; clock && id <= 6 && !known; id++)
      known = strcmp(clock, manifest_clock_name(id)) == 0;
    if (!known) {
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE,
                  "pack: unknown clock name: %s. Use one of REALTIME, REALTIME_COARSE, "
                  "MONOTONIC, MONOTONIC_COARSE, MONOTONIC_RAW, BOOTTIME.",
                  clock);
      return false;
    }
  }
  for (size_t i = 0; i < options->n_files; i++)
    if (options->files[i].machine && !find_machine(options, options->files[i].machine, NULL)) {
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE, "pack: unknown machine '%s'",
                  options->files[i].machine);
      return false;
    }
  if (options->trace_time_machine &&
      !find_machine(options, options->trace_time_machine, NULL)) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE, "pack: --trace-time names unknown machine '%s'",
                options->trace_time_machine);
    return false;
  }
  return true;
}

static void put_attribute(GString *b, const char *text) {
  const char *eq = strchr(text, '=');
  char *key = g_strndup(text, eq ? (size_t)(eq - text) : strlen(text));
  const char *value = eq ? eq + 1 : "";
  tm_json_append_cstring(b, key);
  g_string_append_c(b, ':');
  char *end = NULL;
  errno = 0;
  gint64 number = g_ascii_strtoll(value, &end, 10);
  if (*value && end && *end == '\0' && errno == 0 && (g_ascii_isdigit(*value) || *value == '-'))
    g_string_append_printf(b, "%" G_GINT64_FORMAT, number);
  else
    tm_json_append_cstring(b, value);
  g_free(key);
}

static char *manifest_text(const tm_pack_options *options, const pack_member *members) {
  GString *b = g_string_new("{\"perfetto_manifest\": {\n  \"version\": 1,\n");
  if (options->trace_time_clock) {
    g_string_append(b, "  \"trace_time\": {\"clock\": ");
    tm_json_append_cstring(b, options->trace_time_clock);
    if (options->trace_time_machine) {
      g_string_append(b, ", \"file\": ");
      tm_json_append_cstring(b, members[first_file_of(options, options->trace_time_machine)].name);
    }
    g_string_append(b, "},\n");
  }
  g_string_append(b, "  \"files\": [");
  const tm_pack_machine *reference = options->n_machines ? &options->machines[0] : NULL;
  const char *reference_file =
      reference ? members[first_file_of(options, reference->name)].name : NULL;
  for (size_t i = 0; i < options->n_files; i++) {
    g_string_append(b, i ? ",\n    {\"path\": " : "\n    {\"path\": ");
    tm_json_append_cstring(b, members[i].name);
    const tm_pack_machine *m = find_machine(options, options->files[i].machine, NULL);
    if (m) {
      g_string_append(b, ", \"machine\": {\"name\": ");
      tm_json_append_cstring(b, m->name);
      g_string_append(b, "}");
    }
    if (m && related(options, m)) {
      g_string_append(b, ",\n     \"clocks\": {");
      if (m->clock) {
        g_string_append(b, "\"clock\": ");
        tm_json_append_cstring(b, m->clock);
        g_string_append(b, ", ");
      }
      g_string_append(b, "\"sync_to\": {\"file\": ");
      tm_json_append_cstring(b, reference_file);
      if (reference->clock) {
        g_string_append(b, ", \"clock\": ");
        tm_json_append_cstring(b, reference->clock);
      }
      g_string_append_printf(b, "}, \"offset_ns\": %" PRId64 "}",
                             m->has_offset ? m->offset_ns : 0);
    }
    g_string_append(b, "}");
  }
  g_string_append(b, "\n  ]");
  if (options->n_attributes) {
    g_string_append(b, ",\n  \"attributes\": {");
    for (size_t i = 0; i < options->n_attributes; i++) {
      if (i)
        g_string_append(b, ", ");
      put_attribute(b, options->attributes[i]);
    }
    g_string_append(b, "}");
  }
  g_string_append(b, "\n}}\n");
  return g_string_free(b, FALSE);
}

/* Parses and resolves `text` as the import will, against the members. */
static bool validate(const char *text, const pack_member *members, size_t n,
                     const tm_pack_options *options, GError **error) {
  tm_manifest *manifest = manifest_parse((const uint8_t *)text, strlen(text), error);
  if (!manifest) {
    g_prefix_error(error, "pack: the manifest would not import: ");
    return false;
  }
  const char **paths = g_new0(const char *, n + 2);
  paths[0] = MANIFEST_MEMBER;
  for (size_t i = 0; i < n; i++)
    paths[i + 1] = members[i].name;
  bool ok = manifest_resolve(manifest, paths, n + 1, error);
  if (!ok)
    g_prefix_error(error, "pack: the manifest would not import: ");
  /* An archive member cannot take a machine or clocks (§10.2): the import
   * would fail once it reached the member; say so now. */
  for (size_t i = 0; ok && i < n; i++) {
    const tm_manifest_file *entry = manifest_borrow_file(manifest, members[i].name);
    if (members[i].container && entry && manifest_file_has_override(entry)) {
      GError *apply = manifest_error_override_on_container(members[i].name);
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_INPUT,
                  "pack: %s is an archive, not a trace: %s (unpack it and pack its traces)",
                  options->files[i].path, apply->message);
      g_error_free(apply);
      ok = false;
    }
  }
  g_free(paths);
  manifest_free(manifest);
  return ok;
}

char *pack_manifest(const tm_pack_options *options, GError **error) {
  if (!check_options(options, error))
    return NULL;
  pack_member *members = inspect_all(options, error);
  if (!members)
    return NULL;
  char *text = manifest_text(options, members);
  if (!validate(text, members, options->n_files, options, error))
    g_clear_pointer(&text, g_free);
  members_free(members, options->n_files);
  return text;
}

/* --- the archive ------------------------------------------------------------------ */

static bool write_entry_header(struct archive *w, const char *name, int64_t size,
                               GError **error) {
  struct archive_entry *entry = archive_entry_new();
  archive_entry_set_pathname(entry, name);
  archive_entry_set_size(entry, size);
  archive_entry_set_filetype(entry, AE_IFREG);
  archive_entry_set_perm(entry, 0644);
  archive_entry_set_mtime(entry, (time_t)(g_get_real_time() / G_USEC_PER_SEC), 0);
  bool ok = archive_write_header(w, entry) == ARCHIVE_OK;
  if (!ok)
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_OUTPUT, "pack: writing member %s: %s", name,
                archive_error_string(w));
  archive_entry_free(entry);
  return ok;
}

static bool write_data(struct archive *w, const void *data, size_t len, GError **error) {
  if (len && archive_write_data(w, data, len) != (la_ssize_t)len) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_OUTPUT, "pack: writing the archive: %s",
                archive_error_string(w));
    return false;
  }
  return true;
}

/* How much the next read of `m` may take: a chunk, or for a member a
 * budget cut, no more than what is left before the cut (never inflated
 * past it). A whole member is read to its end, so a file that grew since
 * inspect() is noticed. */
static size_t next_read(const pack_member *m, int64_t written) {
  if (m->cut == NULL)
    return COPY_CHUNK;
  return (size_t)MIN((int64_t)COPY_CHUNK, m->size - written);
}

/* Streams one member's bytes: decompressed through libarchive, or as
 * they are. The bytes must be the `size` inspect() counted. */
static bool write_member(struct archive *w, const pack_member *m, GError **error) {
  if (!write_entry_header(w, m->name, m->size, error))
    return false;
  uint8_t *chunk = g_malloc(COPY_CHUNK);
  int64_t written = 0;
  bool ok = true;
  if (m->decompress) {
    struct archive *r = open_raw(m->path, error);
    if (!r) {
      g_prefix_error(error, "pack: ");
      g_free(chunk);
      return false;
    }
    la_ssize_t n = 0;
    size_t want;
    while (ok && (want = next_read(m, written)) > 0 &&
           (n = archive_read_data(r, chunk, want)) > 0) {
      ok = write_data(w, chunk, (size_t)n, error);
      written += n;
    }
    if (ok && n < 0) {
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_INPUT, "pack: cannot read %s: %s", m->path,
                  archive_error_string(r));
      ok = false;
    }
    archive_read_free(r);
  } else {
    FILE *f = fopen(m->path, "rb");
    if (!f) {
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_INPUT, "pack: cannot read %s: %s", m->path,
                  g_strerror(errno));
      g_free(chunk);
      return false;
    }
    size_t n, want;
    while (ok && (want = next_read(m, written)) > 0 && (n = fread(chunk, 1, want, f)) > 0) {
      ok = write_data(w, chunk, n, error);
      written += (int64_t)n;
    }
    if (ok && ferror(f)) {
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_INPUT, "pack: cannot read %s: %s", m->path,
                  g_strerror(errno));
      ok = false;
    }
    fclose(f);
  }
  g_free(chunk);
  if (ok && written != m->size) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_INPUT, "pack: %s changed while it was packed", m->path);
    ok = false;
  }
  return ok;
}

static bool set_format(struct archive *w, const char *path, GError **error) {
  if (g_str_has_suffix(path, ".zip")) {
    archive_write_set_format_zip(w);
  } else if (g_str_has_suffix(path, ".tar.gz") || g_str_has_suffix(path, ".tgz")) {
    archive_write_set_format_pax_restricted(w);
    archive_write_add_filter_gzip(w);
  } else if (g_str_has_suffix(path, ".tar")) {
    archive_write_set_format_pax_restricted(w);
  } else {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE,
                "pack: %s: the archive's name must end in .zip, .tar.gz, .tgz or .tar", path);
    return false;
  }
  return true;
}

bool pack_write(const tm_pack_options *options, const char *manifest,
                const char *path, GError **error) {
  struct archive *w = archive_write_new();
  if (!set_format(w, path, error)) {
    archive_write_free(w);
    return false;
  }
  pack_member *members = inspect_all(options, error);
  if (!members) {
    archive_write_free(w);
    return false;
  }
  char *dir = g_path_get_dirname(path);
  char *base = g_path_get_basename(path);
  char *tmp = g_strdup_printf("%s/.%s.XXXXXX", dir, base);
  g_free(dir);
  g_free(base);
  bool ok = false;
  bool renamed = false; /* the archive is in place, also when a budget cut a file */
  int fd = g_mkstemp(tmp);
  if (fd < 0) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_OUTPUT, "pack: cannot create %s: %s", path,
                g_strerror(errno));
    goto out;
  }
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  if (archive_write_open_fd(w, fd) != ARCHIVE_OK) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_OUTPUT, "pack: cannot write %s: %s", path,
                archive_error_string(w));
    goto out;
  }
  ok = write_entry_header(w, MANIFEST_MEMBER, (int64_t)strlen(manifest), error) &&
       write_data(w, manifest, strlen(manifest), error);
  for (size_t i = 0; ok && i < options->n_files; i++)
    ok = write_member(w, &members[i], error);
  if (archive_write_close(w) != ARCHIVE_OK && ok) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_OUTPUT, "pack: writing %s: %s", path,
                archive_error_string(w));
    ok = false;
  }
  if (ok && fsync(fd) != 0) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_OUTPUT, "pack: writing %s: %s", path, g_strerror(errno));
    ok = false;
  }
  if (ok && rename(tmp, path) != 0) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_OUTPUT, "pack: cannot write %s: %s", path,
                g_strerror(errno));
    ok = false;
  }
  renamed = ok;
  /* A budget cut a file: the archive holds what was read of it (and every
   * other file), and the call fails with the first cut's reason, as an
   * import fails with its first damage. */
  for (size_t i = 0; ok && i < options->n_files; i++)
    if (members[i].cut) {
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_DAMAGED, "pack: %s", members[i].cut);
      ok = false;
    }
out:
  archive_write_free(w);
  if (fd >= 0)
    close(fd);
  if (!renamed && fd >= 0)
    unlink(tmp);
  g_free(tmp);
  members_free(members, options->n_files);
  return ok;
}
