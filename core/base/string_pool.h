/*
 * The string pool: every string the host keeps is interned once and carried
 * as a 32-bit id (tm_str_id).
 *
 * Invariants: id 0 is the NULL string and has no bytes; every other id maps
 * to one NUL-terminated byte string that lives, at a fixed address, until
 * the pool is freed (strings are stored in large blocks that never move), so
 * string_pool_borrow() pointers may be handed to SQLite as static text.
 * Equal byte strings get equal ids. Strings may contain any bytes except
 * NUL; an embedded NUL ends the interned string.
 */
#ifndef TM_STRING_POOL_H
#define TM_STRING_POOL_H

#include <stddef.h>
#include <stdint.h>

#include <tracemerge/plugin.h>

typedef struct tm_string_pool tm_string_pool;

tm_string_pool *string_pool_new(void);
void string_pool_free(tm_string_pool *pool);

/* Interns `len` bytes of `s`; returns a non-zero id. */
tm_str_id string_pool_intern(tm_string_pool *pool, const char *s, size_t len);
tm_str_id string_pool_intern_cstr(tm_string_pool *pool, const char *s);

/* The bytes of `id`, NUL-terminated, owned by the pool; NULL for id 0. */
const char *string_pool_borrow(const tm_string_pool *pool, tm_str_id id);
size_t string_pool_length(const tm_string_pool *pool, tm_str_id id);

/* The pool's hash of `len` bytes of `s`, for tables that keep strings
 * beside the pool (core/model/arg_text.h). */
uint32_t string_pool_hash(const char *s, size_t len);

/* Number of ids handed out (including 0) and bytes held, for the benchmark. */
size_t string_pool_count(const tm_string_pool *pool);
size_t string_pool_memory(const tm_string_pool *pool);

#endif /* TM_STRING_POOL_H */
