/*
 * A ZIP's central directory, read from disk (zip_directory.h).
 *
 * Only what container.c needs to inflate a member itself is read; the
 * rest of each record (times, attributes, comments) is libarchive's. The
 * directory is accepted only where libarchive would find the same one
 * without adjusting offsets: one disk, the directory right before its end
 * record (or the zip64 end record), every entry count agreeing.
 */
#include "input/zip_directory.h"

#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EOCD_SIZE 22
#define EOCD_MAX_COMMENT 65535
#define ZIP64_LOCATOR_SIZE 20
#define ZIP64_EOCD_SIZE 56
#define CENTRAL_HEADER_SIZE 46
#define LOCAL_HEADER_SIZE 30
/* A name libarchive gives is looked for this many entries past the last
 * one found, at most: entries libarchive skips are few, and a directory
 * whose names never match (another charset) stays linear. */
#define FIND_WINDOW 64

typedef struct ordered_entry {
  zip_entry entry;
  size_t index; /* in the directory: ties of offset keep this order */
} ordered_entry;

struct zip_directory {
  uint8_t *bytes; /* the central directory as on disk */
  ordered_entry *entries;
  size_t n_entries;
};

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p) {
  return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static bool pread_all(int fd, void *buf, size_t len, uint64_t offset) {
  uint8_t *to = buf;
  while (len > 0) {
    ssize_t n = pread(fd, to, len, (off_t)offset);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    to += n;
    len -= (size_t)n;
    offset += (uint64_t)n;
  }
  return true;
}

typedef struct directory_place {
  uint64_t entries;
  uint64_t size;
  uint64_t offset;
  uint64_t end; /* where the directory must end: its end record */
} directory_place;

/* The zip64 end record the locator before `eocd_at` points to. */
static bool read_zip64_place(int fd, uint64_t eocd_at, directory_place *place) {
  uint8_t locator[ZIP64_LOCATOR_SIZE];
  if (eocd_at < ZIP64_LOCATOR_SIZE ||
      !pread_all(fd, locator, sizeof locator, eocd_at - ZIP64_LOCATOR_SIZE) ||
      le32(locator) != 0x07064b50u || le32(locator + 4) != 0 ||
      le32(locator + 16) > 1)
    return false;
  uint64_t record_at = le64(locator + 8);
  uint8_t record[ZIP64_EOCD_SIZE];
  if (record_at > eocd_at - ZIP64_LOCATOR_SIZE ||
      !pread_all(fd, record, sizeof record, record_at) ||
      le32(record) != 0x06064b50u || le32(record + 16) != 0 ||
      le32(record + 20) != 0 || le64(record + 24) != le64(record + 32))
    return false;
  place->entries = le64(record + 32);
  place->size = le64(record + 40);
  place->offset = le64(record + 48);
  place->end = record_at;
  return true;
}

/* Finds the end record (the last one whose comment fits the file). */
static bool find_directory(int fd, uint64_t file_size, directory_place *place) {
  if (file_size < EOCD_SIZE)
    return false;
  size_t tail_len = (size_t)MIN(file_size, (uint64_t)EOCD_SIZE + EOCD_MAX_COMMENT);
  uint64_t tail_at = file_size - tail_len;
  uint8_t *tail = g_malloc(tail_len);
  bool found = false;
  if (pread_all(fd, tail, tail_len, tail_at)) {
    for (size_t at = tail_len - EOCD_SIZE + 1; at-- > 0;) {
      const uint8_t *p = tail + at;
      if (le32(p) != 0x06054b50u || at + EOCD_SIZE + le16(p + 20) > tail_len)
        continue;
      uint16_t disk = le16(p + 4), directory_disk = le16(p + 6);
      uint16_t on_disk = le16(p + 8), entries = le16(p + 10);
      uint32_t size = le32(p + 12), offset = le32(p + 16);
      uint64_t eocd_at = tail_at + at;
      /* A zip64 end record, where there is one, is the directory's end
       * (some writers add one whether or not a field overflows). */
      if (read_zip64_place(fd, eocd_at, place)) {
        found = true;
      } else if (entries == 0xffff || size == 0xffffffffu || offset == 0xffffffffu) {
        found = false;
      } else if (disk == 0 && directory_disk == 0 && on_disk == entries) {
        *place = (directory_place){
            .entries = entries, .size = size, .offset = offset, .end = eocd_at};
        found = true;
      }
      break;
    }
  }
  g_free(tail);
  return found && place->offset <= place->end &&
         place->end - place->offset == place->size;
}

/* A zip64 extended information field (APPNOTE 4.5.3) replaces the fields
 * that read 0xffffffff, in this order (usize, csize, offset: each NULL
 * where it does not). NULL, or why the extra fields cannot (owned): a
 * field that runs past their end, no zip64 field, or one too short. */
static char *apply_zip64_extra(const uint8_t *extra, size_t len, uint64_t *usize,
                               uint64_t *csize, uint64_t *offset) {
  uint64_t *fields[] = {usize, csize, offset};
  size_t need = 0;
  for (size_t k = 0; k < G_N_ELEMENTS(fields); k++)
    need += fields[k] != NULL ? 8 : 0;
  while (len >= 4) {
    uint16_t id = le16(extra), size = le16(extra + 2);
    if ((size_t)size + 4 > len)
      return g_strdup_printf("an extra field of %u bytes runs past the %zu left of them",
                             size, len - 4);
    if (id == 0x0001) {
      if (size < need)
        return g_strdup_printf("its zip64 extra field holds %u bytes, not the %zu "
                               "its 0xffffffff fields need",
                               size, need);
      const uint8_t *p = extra + 4;
      for (size_t k = 0; k < G_N_ELEMENTS(fields); k++) {
        if (fields[k] == NULL)
          continue;
        *fields[k] = le64(p);
        p += 8;
      }
      return NULL;
    }
    extra += 4 + size;
    len -= 4 + (size_t)size;
  }
  return need == 0 ? NULL : g_strdup("it has no zip64 extra field for its 0xffffffff fields");
}

static int ordered_entry_compare(const void *pa, const void *pb) {
  const ordered_entry *a = pa, *b = pb;
  if (a->entry.local_header_offset != b->entry.local_header_offset)
    return a->entry.local_header_offset < b->entry.local_header_offset ? -1 : 1;
  return a->index < b->index ? -1 : (a->index > b->index);
}

zip_directory *zip_directory_read(int fd, uint64_t file_size, char **why,
                                  uint64_t *why_at) {
  directory_place place;
  if (!find_directory(fd, file_size, &place) || place.size > file_size ||
      place.entries > place.size / CENTRAL_HEADER_SIZE)
    return NULL;
  zip_directory *dir = g_new0(zip_directory, 1);
  dir->bytes = g_malloc(place.size > 0 ? (size_t)place.size : 1);
  dir->entries = g_new0(ordered_entry, place.entries > 0 ? place.entries : 1);
  if (!pread_all(fd, dir->bytes, (size_t)place.size, place.offset))
    goto fail;
  const uint8_t *p = dir->bytes;
  size_t left = (size_t)place.size;
  for (uint64_t k = 0; k < place.entries; k++) {
    if (left < CENTRAL_HEADER_SIZE || le32(p) != 0x02014b50u)
      goto fail;
    uint16_t name_len = le16(p + 28), extra_len = le16(p + 30),
             comment_len = le16(p + 32);
    size_t record = (size_t)CENTRAL_HEADER_SIZE + name_len + extra_len + comment_len;
    if (record > left || le16(p + 34) != 0)
      goto fail;
    zip_entry *e = &dir->entries[k].entry;
    dir->entries[k].index = (size_t)k;
    *e = (zip_entry){
        .flags = le16(p + 8),
        .method = le16(p + 10),
        .crc32 = le32(p + 16),
        .compressed_size = le32(p + 20),
        .uncompressed_size = le32(p + 24),
        .local_header_offset = le32(p + 42),
        .name = (const char *)p + CENTRAL_HEADER_SIZE,
        .name_len = name_len,
    };
    char *bad = apply_zip64_extra(
        p + CENTRAL_HEADER_SIZE + name_len, extra_len,
        e->uncompressed_size == 0xffffffffu ? &e->uncompressed_size : NULL,
        e->compressed_size == 0xffffffffu ? &e->compressed_size : NULL,
        e->local_header_offset == 0xffffffffu ? &e->local_header_offset : NULL);
    if (bad != NULL) {
      *why_at = place.offset + (uint64_t)(p - dir->bytes);
      *why = g_strdup_printf("ZIP central directory record at byte %" PRIu64
                             " (%.*s): %s",
                             *why_at, (int)name_len, (const char *)p + CENTRAL_HEADER_SIZE,
                             bad);
      g_free(bad);
      goto fail;
    }
    p += record;
    left -= record;
  }
  dir->n_entries = (size_t)place.entries;
  qsort(dir->entries, dir->n_entries, sizeof *dir->entries,
        ordered_entry_compare);
  return dir;

fail:
  zip_directory_free(dir);
  return NULL;
}

void zip_directory_free(zip_directory *dir) {
  if (dir == NULL)
    return;
  g_free(dir->bytes);
  g_free(dir->entries);
  g_free(dir);
}

const zip_entry *zip_directory_at(const zip_directory *dir, size_t cursor) {
  return cursor < dir->n_entries ? &dir->entries[cursor].entry : NULL;
}

const zip_entry *zip_directory_find(const zip_directory *dir, size_t *cursor,
                                    const char *name) {
  size_t name_len = strlen(name);
  size_t stop = MIN(dir->n_entries, *cursor + FIND_WINDOW);
  for (size_t k = *cursor; k < stop; k++) {
    const zip_entry *e = &dir->entries[k].entry;
    if (e->name_len == name_len && memcmp(e->name, name, name_len) == 0) {
      *cursor = k + 1;
      return e;
    }
  }
  return NULL;
}

bool zip_entry_data_offset(int fd, const zip_entry *entry, uint64_t *offset,
                           char **why) {
  uint8_t header[LOCAL_HEADER_SIZE];
  uint64_t at = entry->local_header_offset;
  if (!pread_all(fd, header, sizeof header, at)) {
    *why = g_strdup_printf("ZIP local header at byte %" PRIu64 " cannot be read", at);
    return false;
  }
  if (le32(header) != 0x04034b50u) {
    *why = g_strdup_printf("ZIP local header at byte %" PRIu64 " has no signature", at);
    return false;
  }
  uint16_t flags = le16(header + 6), method = le16(header + 8);
  uint32_t crc = le32(header + 14), csize = le32(header + 18),
           usize = le32(header + 22);
  uint16_t name_len = le16(header + 26), extra_len = le16(header + 28);
  const char *field = NULL;
  uint64_t local_value = 0, directory_value = 0;
  /* zip64's 0xffffffff: the sizes are in the local extra field, which
   * must hold them and agree with the directory too. */
  uint64_t local_csize = csize, local_usize = usize;
  if (!(flags & ZIP_FLAG_DATA_DESCRIPTOR) && method == entry->method &&
      name_len == entry->name_len && (csize == 0xffffffffu || usize == 0xffffffffu)) {
    uint8_t *extra = g_malloc(extra_len > 0 ? extra_len : 1);
    char *bad = pread_all(fd, extra, extra_len, at + LOCAL_HEADER_SIZE + name_len)
                    ? apply_zip64_extra(extra, extra_len,
                                        usize == 0xffffffffu ? &local_usize : NULL,
                                        csize == 0xffffffffu ? &local_csize : NULL, NULL)
                    : g_strdup("its extra fields cannot be read");
    g_free(extra);
    if (bad != NULL) {
      *why = g_strdup_printf("ZIP local header at byte %" PRIu64 ": %s", at, bad);
      g_free(bad);
      return false;
    }
  }
  if (method != entry->method) {
    field = "method";
    local_value = method;
    directory_value = entry->method;
  } else if (name_len != entry->name_len) {
    field = "name length";
    local_value = name_len;
    directory_value = entry->name_len;
  } else if (!(flags & ZIP_FLAG_DATA_DESCRIPTOR)) {
    /* As libarchive, zeros are taken for "not given here" (some writers
     * leave them); zip64's 0xffffffff were replaced by the extra field's. */
    if (crc != 0 && crc != entry->crc32) {
      field = "CRC-32";
      local_value = crc;
      directory_value = entry->crc32;
    } else if (local_csize != 0 && local_csize != entry->compressed_size) {
      field = "compressed size";
      local_value = local_csize;
      directory_value = entry->compressed_size;
    } else if (local_usize != 0 && local_usize != entry->uncompressed_size) {
      field = "uncompressed size";
      local_value = local_usize;
      directory_value = entry->uncompressed_size;
    }
  }
  if (field == NULL && name_len > 0) {
    char *name = g_malloc(name_len);
    bool same = pread_all(fd, name, name_len, at + LOCAL_HEADER_SIZE) &&
                memcmp(name, entry->name, name_len) == 0;
    g_free(name);
    if (!same) {
      *why = g_strdup_printf("ZIP local header at byte %" PRIu64
                             " names another file than the central directory",
                             at);
      return false;
    }
  }
  if (field != NULL) {
    *why = g_strdup_printf("ZIP local header at byte %" PRIu64
                           " disagrees with the central directory: %s %" PRIu64
                           ", not %" PRIu64,
                           at, field, local_value, directory_value);
    return false;
  }
  *offset = at + LOCAL_HEADER_SIZE + name_len + extra_len;
  return true;
}
