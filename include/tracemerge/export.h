/*
 * TM_API marks the functions libtracemerge.so exports: those of
 * <tracemerge/tracemerge.h>, <tracemerge/record.h> and <tracemerge/error.h>,
 * and nothing else
 * (the library is built with hidden visibility; tests/
 * test_library_exports.sh compares its exports with these headers).
 */
#ifndef TRACEMERGE_EXPORT_H
#define TRACEMERGE_EXPORT_H

#if defined(__GNUC__)
#define TM_API __attribute__((visibility("default")))
#else
#define TM_API
#endif

#endif /* TRACEMERGE_EXPORT_H */
