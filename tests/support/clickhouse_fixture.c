#include "clickhouse_fixture.h"

#include <arpa/inet.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tracemerge/tracemerge.h>

#include "e2e_support.h"

/* How long a (re)start may take on a loaded machine. */
#define START_SECONDS 60

/* A port the kernel hands out now; free again once the socket closes. */
int ch_fixture_unused_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  g_assert_cmpint(fd, >=, 0);
  struct sockaddr_in addr = {.sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  g_assert_cmpint(bind(fd, (struct sockaddr *)&addr, sizeof addr), ==, 0);
  socklen_t len = sizeof addr;
  g_assert_cmpint(getsockname(fd, (struct sockaddr *)&addr, &len), ==, 0);
  close(fd);
  return ntohs(addr.sin_port);
}

static void die_with_parent(gpointer data) {
  (void)data;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
}

static char *script_path(void) {
  const char *srcdir = g_getenv("G_TEST_SRCDIR");
  return g_build_filename(srcdir ? srcdir : ".", "clickhouse_server.sh", NULL);
}

/* The server's own words, for a failure message. */
static char *server_log(const ch_fixture *f) {
  g_autofree char *path = g_build_filename(f->dir, "server.err.log", NULL);
  g_autofree char *console = g_build_filename(f->dir, "console.log", NULL);
  char *log = NULL, *text = NULL;
  g_file_get_contents(path, &log, NULL, NULL);
  g_file_get_contents(console, &text, NULL, NULL);
  char *both = g_strdup_printf("%s%s", log ? log : "", text ? text : "");
  g_free(log);
  g_free(text);
  return both;
}

static bool answers(const ch_fixture *f) {
  g_autofree char *url = ch_fixture_url(f, "default");
  tm_clickhouse *ch = tm_clickhouse_open(url, NULL);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  bool ok = tm_clickhouse_query(ch, "SELECT 1", NULL, out, 0, NULL);
  fclose(out);
  free(text);
  tm_clickhouse_free(ch);
  return ok;
}

/* Spawns the script; returns its exit status if it ended before the
 * server answered (77: no server binary), else -1 once it answers. */
static int spawn(ch_fixture *f) {
  g_autofree char *script = script_path();
  g_autofree char *http = g_strdup_printf("%d", f->http_port);
  g_autofree char *tcp = g_strdup_printf("%d", f->tcp_port);
  g_autofree char *console = g_build_filename(f->dir, "console.log", NULL);
  char *argv[] = {"/bin/sh", "-c", "exec \"$0\" \"$1\" \"$2\" \"$3\" >>\"$4\" 2>&1",
                  script, f->dir, http, tcp, console, NULL};
  GError *error = NULL;
  g_assert_true(g_spawn_async(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                              die_with_parent, NULL, &f->pid, &error));
  g_assert_no_error(error);
  for (int i = 0; i < START_SECONDS * 10; i++) {
    int status;
    pid_t done = waitpid(f->pid, &status, WNOHANG);
    if (done == f->pid) {
      f->pid = 0;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (answers(f))
      return -1;
    g_usleep(100 * 1000);
  }
  g_autofree char *log = server_log(f);
  g_error("clickhouse-server did not answer on port %d within %d s:\n%s",
          f->http_port, START_SECONDS, log);
  return 0;
}

/* Directories of earlier test programs that died without stopping their
 * server (a failed assertion aborts): "tracemerge-ch-<pid>-..." under
 * `parent` whose pid is gone. In /dev/shm they would hold memory. */
static void remove_stale_dirs(const char *parent) {
  GDir *dir = g_dir_open(parent, 0, NULL);
  if (!dir)
    return;
  const char *name;
  while ((name = g_dir_read_name(dir)) != NULL) {
    if (!g_str_has_prefix(name, "tracemerge-ch-"))
      continue;
    char *end = NULL;
    long pid = strtol(name + strlen("tracemerge-ch-"), &end, 10);
    if (pid <= 0 || *end != '-' || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
      continue;
    g_autofree char *path = g_build_filename(parent, name, NULL);
    e2e_cleanup(path);
  }
  g_dir_close(dir);
}

/* The server's directory: in memory (/dev/shm) where there is one. Every
 * load makes, hard-links and removes a few dozen files per table
 * (docs/clickhouse.md); on a shared machine's disk that costs more than
 * the test, and the data is thrown away anyway. */
static char *server_dir(void) {
  const char *parent = g_getenv("TRACEMERGE_CLICKHOUSE_TMPDIR");
  if (!parent && g_file_test("/dev/shm", G_FILE_TEST_IS_DIR) &&
      access("/dev/shm", W_OK) == 0)
    parent = "/dev/shm";
  if (!parent)
    return e2e_tmpdir();
  remove_stale_dirs(parent);
  g_autofree char *base = g_strdup_printf("tracemerge-ch-%ld-XXXXXX",
                                          (long)getpid());
  g_autofree char *template = g_build_filename(parent, base, NULL);
  char *dir = g_mkdtemp(g_strdup(template));
  g_assert_nonnull(dir);
  return dir;
}

bool ch_fixture_start(ch_fixture *f, char **skip_reason) {
  *f = (ch_fixture){0};
  f->dir = server_dir();
  f->http_port = ch_fixture_unused_port();
  do
    f->tcp_port = ch_fixture_unused_port();
  while (f->tcp_port == f->http_port);
  int status = spawn(f);
  if (status == 77) {
    *skip_reason = server_log(f);
    g_strstrip(*skip_reason);
    e2e_cleanup(f->dir);
    g_clear_pointer(&f->dir, g_free);
    return false;
  }
  if (status >= 0) {
    g_autofree char *log = server_log(f);
    e2e_cleanup(f->dir); /* g_error does not return */
    g_error("clickhouse-server exited with status %d:\n%s", status, log);
  }
  return true;
}

static void wait_for_exit(ch_fixture *f, int signal_number, int seconds) {
  kill(f->pid, signal_number);
  for (int i = 0; i < seconds * 10; i++) {
    if (waitpid(f->pid, NULL, WNOHANG) == f->pid) {
      f->pid = 0;
      return;
    }
    g_usleep(100 * 1000);
  }
  kill(f->pid, SIGKILL);
  waitpid(f->pid, NULL, 0);
  f->pid = 0;
}

void ch_fixture_kill(ch_fixture *f) {
  if (f->pid)
    wait_for_exit(f, SIGKILL, 60);
}

void ch_fixture_restart(ch_fixture *f) {
  g_assert_cmpint(f->pid, ==, 0);
  int status = spawn(f);
  if (status >= 0) {
    g_autofree char *log = server_log(f);
    g_error("clickhouse-server did not restart (status %d):\n%s", status, log);
  }
}

void ch_fixture_stop(ch_fixture *f) {
  if (f->pid)
    wait_for_exit(f, SIGTERM, 20);
  if (f->dir)
    e2e_cleanup(f->dir);
  g_clear_pointer(&f->dir, g_free);
}

char *ch_fixture_url(const ch_fixture *f, const char *database) {
  return g_strdup_printf("clickhouse://127.0.0.1:%d/%s", f->http_port,
                         database);
}
