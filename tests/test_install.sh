#!/bin/sh
# What an installation gives its users, from a temporary one (meson install
# --destdir): the headers and pkg-config files; a reader built against
# `pkg-config --cflags tracemerge-plugin` alone (plugins/example), and its
# plugindir where the installed readers are; a library
# client built with `pkg-config --cflags --libs tracemerge` that imports a
# file through that reader and the installed readers, queries it, and gets
# a TRACEMERGE_ERROR for an input that does not exist.
#
# usage: test_install.sh SOURCE_ROOT BUILD_ROOT CC [CC_ARGS...]
set -eu

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

[ $# -ge 3 ] || fail "usage: $0 SOURCE_ROOT BUILD_ROOT CC [CC_ARGS...]"
src=$1
build=$2
shift 2
command -v pkg-config >/dev/null 2>&1 || fail "pkg-config is needed"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tm-install-XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
dest=$tmp/dest

meson install -C "$build" --no-rebuild --quiet --destdir "$dest" \
  >"$tmp/install.log" 2>&1 || fail "meson install failed: $(cat "$tmp/install.log")"

pc=$(find "$dest" -name tracemerge.pc | head -n 1)
[ -n "$pc" ] || fail "no tracemerge.pc installed"
[ -f "$(dirname "$pc")/tracemerge-plugin.pc" ] || fail "no tracemerge-plugin.pc installed"
# The .pc files name the configured prefix: copies that name the one in
# $dest instead (neither a sysroot nor --define-variable, which would move
# glib's flags too).
mkdir -p "$tmp/pc"
for file in tracemerge.pc tracemerge-plugin.pc; do
  sed "s|^prefix=\(.*\)\$|prefix=$dest\1|" "$(dirname "$pc")/$file" >"$tmp/pc/$file"
done
export PKG_CONFIG_PATH="$tmp/pc"
# Where a packaged reader goes (plugins/README.md): the directory the
# installed library searches by default, where the built-in readers are.
plugindir=$(pkg-config --variable=plugindir tracemerge-plugin)
[ -f "$plugindir/tm-json.so" ] ||
  fail "pkg-config's plugindir ($plugindir) does not hold the installed readers"
for header in tracemerge/plugin.h tracemerge/tracemerge.h; do
  find "$dest" -path "*/include/$header" | grep -q . || fail "$header is not installed"
done

# A reader, from the header alone.
mkdir -p "$tmp/plugins"
"$@" -std=c17 -Wall -Wextra -Werror -O2 -fPIC -shared -fvisibility=hidden \
  $(pkg-config --cflags tracemerge-plugin) \
  -o "$tmp/plugins/tm-example.so" "$src/plugins/example/example_reader.c" \
  2>"$tmp/cc.log" || fail "the example reader does not build: $(cat "$tmp/cc.log")"

# A library client.
cat >"$tmp/client.c" <<'CLIENT'
#include <stdio.h>
#include <tracemerge/tracemerge.h>

/* client TRACE READER_DIR: prints the slices, then the error of a missing
 * input as "domain-ok code". */
int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  const char *dirs[] = {argv[2]};
  FILE *quiet = fopen("/dev/null", "w");
  tm_session_options options = {.plugin_dirs = dirs, .n_plugin_dirs = 1,
                                .warnings = quiet};
  tm_session *session = tm_session_new(&options);
  GError *error = NULL;
  const char *paths[] = {argv[1]};
  if (!tm_session_import(session, paths, 1, &error) ||
      !tm_session_query(session, "select name, ts from slice order by ts",
                        TM_FORMAT_TSV, stdout, &error)) {
    fprintf(stderr, "%s\n", error->message);
    return 1;
  }
  tm_session_free(session);
  session = tm_session_new(&options);
  const char *missing[] = {"/nonexistent/trace"};
  if (tm_session_import(session, missing, 1, &error))
    return 1;
  printf("%s %d\n", error->domain == TRACEMERGE_ERROR ? "domain-ok" : "domain-wrong",
         error->code);
  g_error_free(error);
  tm_session_free(session);
  fclose(quiet);
  return 0;
}
CLIENT
"$@" -std=c17 -Wall -Wextra -Werror -O2 -o "$tmp/client" "$tmp/client.c" \
  $(pkg-config --cflags --libs tracemerge) \
  2>"$tmp/cc.log" || fail "the library client does not build: $(cat "$tmp/cc.log")"

libdir=$(dirname "$(find "$dest" -name 'libtracemerge.so*' | head -n 1)")
printf '#tm-example\n2500 beta\n1000 alpha\n' >"$tmp/trace.example"
LD_LIBRARY_PATH="$libdir" "$tmp/client" "$tmp/trace.example" "$tmp/plugins" \
  >"$tmp/out.txt" 2>"$tmp/err.txt" ||
  fail "the client failed: $(cat "$tmp/err.txt")"
# TSV rows, then TM_ERROR_INPUT (4) for the missing input.
printf 'name\tts\nalpha\t1000\nbeta\t2500\ndomain-ok 4\n' >"$tmp/expected.txt"
cmp -s "$tmp/out.txt" "$tmp/expected.txt" ||
  fail "unexpected client output:
$(cat "$tmp/out.txt")
expected:
$(cat "$tmp/expected.txt")"
echo "ok: installed headers, pkg-config files, a reader and a client built against them"
