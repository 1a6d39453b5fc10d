/*
 * The central directory of a ZIP file on disk, read by us (APPNOTE 4.3.12,
 * 4.3.16, zip64 4.3.14/4.3.15/4.5.3), for the members whose compressed
 * bytes container.c inflates itself (deflate_stream.h) instead of through
 * libarchive: where each member's data starts, how it is stored, and its
 * CRC-32 and sizes.
 *
 * libarchive still lists the archive (names, types, hidden members): an
 * entry here is found by the name libarchive gives, in the order its
 * seekable ZIP reader walks the directory (by local header offset).
 * Anything this reader does not understand (a directory it cannot find or
 * parse, several disks, an entry count that does not match) gives no
 * directory, and every member is then read through libarchive as before.
 *
 * Memory: the directory's bytes (on disk, a few dozen bytes per member)
 * and one small record per member, owned by the zip_directory.
 */
#ifndef TM_ZIP_DIRECTORY_H
#define TM_ZIP_DIRECTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZIP_METHOD_STORED 0
#define ZIP_METHOD_DEFLATE 8
/* General purpose flags (APPNOTE 4.4.4). */
#define ZIP_FLAG_ENCRYPTED 0x0001u
#define ZIP_FLAG_DATA_DESCRIPTOR 0x0008u
#define ZIP_FLAG_STRONG_ENCRYPTION 0x0040u

typedef struct zip_entry {
  uint64_t local_header_offset;
  uint64_t compressed_size;
  uint64_t uncompressed_size;
  uint32_t crc32;
  uint16_t method;
  uint16_t flags;
  const char *name; /* not NUL-terminated: name_len bytes, borrowed */
  uint16_t name_len;
} zip_entry;

typedef struct zip_directory zip_directory;

/* The directory of the ZIP open as `fd` (`file_size` bytes), or NULL if
 * it cannot be read or is not understood (callers then use libarchive).
 * When it is NULL because a record is damaged (a zip64 extra field that
 * cannot hold the sizes its record says it holds), `*why` (owned) names
 * the record, its byte offset (also in `*why_at`) and the damage; else
 * neither is touched. */
zip_directory *zip_directory_read(int fd, uint64_t file_size, char **why,
                                  uint64_t *why_at);
void zip_directory_free(zip_directory *dir);

/* The entry at `cursor` in local header order (the one zip_directory_find
 * would look at first), or NULL past the last. */
const zip_entry *zip_directory_at(const zip_directory *dir, size_t cursor);

/* The entry named `name` at or after `*cursor` in local header order,
 * moving the cursor past it; NULL (cursor unchanged) if there is none. */
const zip_entry *zip_directory_find(const zip_directory *dir, size_t *cursor,
                                    const char *name);

/* Where `entry`'s compressed bytes start, from its local header, which must
 * agree with the directory (signature, method, name; and CRC-32 and sizes
 * unless a data descriptor carries them; zip64's from the local extra field,
 * which must hold them). False with `*why` (owned) set if it cannot be read
 * or disagrees. */
bool zip_entry_data_offset(int fd, const zip_entry *entry, uint64_t *offset,
                           char **why);

#endif /* TM_ZIP_DIRECTORY_H */
