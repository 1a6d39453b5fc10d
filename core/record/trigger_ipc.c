/*
 * Triggers across processes, unique session names, and the list of live
 * sessions (for triggers fired in this process).
 *
 * A session with a trigger_config listens on a Unix datagram socket
 * `<pid>-<serial>.sock` in the trigger directory; tmr_trigger_send()
 * sends one datagram ("TMRTRIG1\0<name>\0<producer>\0") to every socket
 * there. The receiving session learns the sender's uid from the kernel
 * (SO_PASSCRED), which becomes the trigger packet's trusted_producer_uid.
 * The directory must be private to the user (a directory, not a link,
 * owned by us, no group or other permissions): anyone who can write there
 * could end a trace. A session named by unique_session_name holds an
 * flock on `unique-<name>.lock` in the same directory while it runs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <pthread.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "record/registry.h"
#include "record/session_internal.h"

#define TRIGGER_MAGIC "TMRTRIG1"
#define MAX_TRIGGER_NAME 1024

/* --- the directory ------------------------------------------------------------- */

static char *trigger_dir(bool create, GError **error) {
  const char *env = g_getenv("TRACEMERGE_TRIGGER_DIR");
  g_autofree char *dir = NULL;
  if (env && *env)
    dir = g_strdup(env);
  else if (g_getenv("XDG_RUNTIME_DIR") && *g_getenv("XDG_RUNTIME_DIR"))
    dir = g_build_filename(g_getenv("XDG_RUNTIME_DIR"), "tracemerge-triggers", NULL);
  else
    dir = g_strdup_printf("/tmp/tracemerge-triggers-%u", (unsigned)getuid());
  if (create && mkdir(dir, 0700) != 0 && errno != EEXIST) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_SYSTEM, "trigger directory %s: %s", dir, g_strerror(errno));
    return NULL;
  }
  struct stat st;
  if (lstat(dir, &st) != 0) {
    if (!create && errno == ENOENT)
      return g_steal_pointer(&dir); /* nobody listens yet */
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_SYSTEM, "trigger directory %s: %s", dir, g_strerror(errno));
    return NULL;
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_SYSTEM,
                "refusing trigger directory %s: it must be a directory of this user with no "
                "group or other permissions (chmod 700)",
                dir);
    return NULL;
  }
  return g_steal_pointer(&dir);
}

/* --- listening ------------------------------------------------------------------------ */

bool tmr_trigger_listen(tmr_session *s, GError **error) {
  g_autofree char *dir = trigger_dir(true, error);
  if (!dir)
    return false;
  g_autofree char *path =
      g_strdup_printf("%s/%" G_GINT64_FORMAT "-%" G_GUINT64_FORMAT ".sock", dir, tmr_reg_pid(),
                      s->serial);
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof addr.sun_path) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_SYSTEM,
                "trigger socket path %s is too long; set TRACEMERGE_TRIGGER_DIR to a shorter "
                "directory",
                path);
    return false;
  }
  strcpy(addr.sun_path, path);
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int on = 1;
  if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_SYSTEM, "trigger socket: %s", g_strerror(errno));
    if (fd >= 0)
      close(fd);
    return false;
  }
  unlink(path); /* a stale socket of an earlier process with our pid */
  if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_SYSTEM, "trigger socket %s: %s", path, g_strerror(errno));
    close(fd);
    return false;
  }
  s->trigger_fd = fd;
  s->trigger_socket_path = g_steal_pointer(&path);
  return true;
}

void tmr_trigger_unlisten(tmr_session *s) {
  if (s->trigger_fd >= 0) {
    close(s->trigger_fd);
    s->trigger_fd = -1;
  }
  if (s->trigger_socket_path) {
    unlink(s->trigger_socket_path);
    g_clear_pointer(&s->trigger_socket_path, g_free);
  }
}

void tmr_trigger_receive(tmr_session *s) {
  if (s->trigger_fd < 0)
    return;
  for (;;) {
    char data[2 * MAX_TRIGGER_NAME + 32];
    union {
      struct cmsghdr align;
      char buf[CMSG_SPACE(sizeof(struct ucred))];
    } control;
    struct iovec iov = {data, sizeof data - 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof control.buf};
    ssize_t n = recvmsg(s->trigger_fd, &msg, MSG_DONTWAIT);
    if (n < 0)
      return;
    int32_t uid = -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
        struct ucred cred;
        memcpy(&cred, CMSG_DATA(c), sizeof cred);
        uid = (int32_t)cred.uid;
      }
    /* "TMRTRIG1\0name\0producer\0"; anything else is ignored. */
    size_t magic = sizeof TRIGGER_MAGIC; /* with its NUL */
    if ((size_t)n <= magic || memcmp(data, TRIGGER_MAGIC, magic) != 0)
      continue;
    data[n] = '\0';
    const char *name = data + magic;
    size_t name_len = strlen(name);
    if (!name_len || magic + name_len + 1 >= (size_t)n ||
        !g_utf8_validate(name, (gssize)name_len, NULL))
      continue;
    const char *producer = name + name_len + 1;
    if (!g_utf8_validate(producer, -1, NULL))
      continue;
    tmr_pending_trigger *t = g_new0(tmr_pending_trigger, 1);
    t->name = g_strdup(name);
    t->producer_name = g_strdup(producer);
    t->uid = uid;
    t->boottime_ns = tmr_boottime_ns();
    pthread_mutex_lock(&s->lock);
    g_queue_push_tail(&s->triggers, t);
    pthread_mutex_unlock(&s->lock);
  }
}

/* --- sending ------------------------------------------------------------------------------ */

int tmr_trigger_send(const char *name, const char *producer_name, GError **error) {
  if (!name || !*name || strlen(name) >= MAX_TRIGGER_NAME ||
      !g_utf8_validate(name, -1, NULL)) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE, "a trigger name must be 1 to %d bytes of UTF-8",
                MAX_TRIGGER_NAME - 1);
    return -1;
  }
  const char *producer = producer_name ? producer_name : tmr_reg_process_name();
  if (strlen(producer) >= MAX_TRIGGER_NAME) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE, "a producer name must be shorter than %d bytes",
                MAX_TRIGGER_NAME);
    return -1;
  }
  g_autofree char *dir = trigger_dir(false, error);
  if (!dir)
    return -1;
  DIR *d = opendir(dir);
  if (!d)
    return 0; /* no directory: no session listens */
  GByteArray *msg = g_byte_array_new();
  g_byte_array_append(msg, (const guint8 *)TRIGGER_MAGIC, sizeof TRIGGER_MAGIC);
  g_byte_array_append(msg, (const guint8 *)name, (guint)strlen(name) + 1);
  g_byte_array_append(msg, (const guint8 *)producer, (guint)strlen(producer) + 1);
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  int reached = 0;
  struct dirent *entry;
  while (fd >= 0 && (entry = readdir(d))) {
    if (!g_str_has_suffix(entry->d_name, ".sock"))
      continue;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    g_autofree char *path = g_build_filename(dir, entry->d_name, NULL);
    if (strlen(path) >= sizeof addr.sun_path)
      continue;
    strcpy(addr.sun_path, path);
    if (sendto(fd, msg->data, msg->len, MSG_DONTWAIT, (struct sockaddr *)&addr, sizeof addr) ==
        (ssize_t)msg->len)
      reached++;
    else if (errno == ECONNREFUSED)
      unlink(path); /* its session is gone */
  }
  if (fd >= 0)
    close(fd);
  closedir(d);
  g_byte_array_unref(msg);
  return reached;
}

/* --- unique session names -------------------------------------------------------------------- */

bool tmr_unique_session_lock(tmr_session *s, const char *name, GError **error) {
  g_autofree char *dir = trigger_dir(true, error);
  if (!dir)
    return false;
  g_autofree char *safe = g_strdup(name);
  for (char *c = safe; *c; c++)
    if (!g_ascii_isalnum(*c) && *c != '.' && *c != '_' && *c != '-')
      *c = '_';
  g_autofree char *path = g_strdup_printf("%s/unique-%s.lock", dir, safe);
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_SYSTEM, "%s: %s", path, g_strerror(errno));
    return false;
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char holder[32] = "";
    ssize_t n = pread(fd, holder, sizeof holder - 1, 0);
    holder[n > 0 ? n : 0] = '\0';
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE,
                "a session with unique_session_name \"%s\" is already running (pid %s)", name,
                holder[0] ? g_strstrip(holder) : "unknown");
    close(fd);
    return false;
  }
  char pid[32];
  int len = g_snprintf(pid, sizeof pid, "%" G_GINT64_FORMAT "\n", tmr_reg_pid());
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)len, 0) != len) {
    /* The lock holds without the pid; only the message loses it. */
  }
  s->unique_lock_fd = fd;
  return true;
}

/* --- live sessions ---------------------------------------------------------------------------- */

static pthread_mutex_t sessions_lock = PTHREAD_MUTEX_INITIALIZER;
static GPtrArray *live_sessions;

void tmr_sessions_register(tmr_session *s) {
  pthread_mutex_lock(&sessions_lock);
  if (!live_sessions)
    live_sessions = g_ptr_array_new();
  g_ptr_array_add(live_sessions, s);
  pthread_mutex_unlock(&sessions_lock);
}

void tmr_sessions_unregister(tmr_session *s) {
  pthread_mutex_lock(&sessions_lock);
  if (live_sessions)
    g_ptr_array_remove(live_sessions, s);
  pthread_mutex_unlock(&sessions_lock);
}

void tmr_sessions_foreach(void (*fn)(tmr_session *s, void *user), void *user) {
  pthread_mutex_lock(&sessions_lock);
  for (guint i = 0; live_sessions && i < live_sessions->len; i++)
    fn(live_sessions->pdata[i], user);
  pthread_mutex_unlock(&sessions_lock);
}

size_t tmr_sessions_count(void) {
  pthread_mutex_lock(&sessions_lock);
  size_t n = live_sessions ? live_sessions->len : 0;
  pthread_mutex_unlock(&sessions_lock);
  return n;
}
