/*
 * Loading a built reader plugin the way the host does (dlopen, then its
 * entry symbol), for the tests that drive a reader through the fake host.
 */
#pragma once

#include <tracemerge/plugin.h>

/* The descriptor of the reader whose path the environment variable
 * `variable` names, or NULL after printing why (variable unset, dlopen or
 * the entry symbol failed). The descriptor lives while the module is
 * open: *handle receives it for dlclose (NULL on failure). */
const tm_reader_descriptor *reader_load_from_env(const char *variable, void **handle);
