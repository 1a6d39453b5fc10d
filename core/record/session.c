/*
 * The recording session: its life cycle (new, start, stop, free), the
 * service thread that runs its timers and triggers, and flushes.
 *
 * The service thread owns the decisions: it starts data sources when a
 * START_TRACING trigger comes, stops the session when duration_ms, a
 * trigger's stop_delay_ms, trigger_timeout_ms or max_file_size_bytes says
 * so (or tmr_session_stop asks), and writes buffers out every
 * file_write_period_ms. It sleeps in poll() on an eventfd (woken by
 * triggers from this process and by stop requests) and on the trigger
 * socket, until the next timer. Invariant: once the state is STOPPED the
 * output is closed and no writer's event reaches a buffer any more.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "record/registry.h"
#include "record/session_internal.h"
#include "record/tsc_clock.h"

G_DEFINE_QUARK(tmr-error-quark, tmr_error)

#define DEFAULT_FILE_WRITE_PERIOD_MS 5000
#define MIN_FILE_WRITE_PERIOD_MS 100

static _Atomic uint64_t next_session_serial = 1;

static void wake(tmr_session *s) {
  uint64_t one = 1;
  if (s->wake_fd >= 0 && write(s->wake_fd, &one, sizeof one) < 0) {
    /* The counter is saturated: the thread is awake anyway. */
  }
}

static const Perfetto__Protos__TraceConfig__TriggerConfig *trigger_config(const tmr_session *s) {
  return s->config.tc->message->trigger_config;
}

static bool start_mode(const tmr_session *s) {
  const Perfetto__Protos__TraceConfig__TriggerConfig *tc = trigger_config(s);
  return tc && tc->trigger_mode ==
                   PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__START_TRACING;
}

/* --- creation ------------------------------------------------------------------ */

tmr_session *tmr_session_new(const tmr_config *config, const tmr_session_options *options,
                             GError **error) {
  if (!config || !config->tc) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE, "a session needs a config");
    return NULL;
  }
  const Perfetto__Protos__TraceConfig *m = config->tc->message;
  const char *output = options && options->output_path ? options->output_path : m->output_path;
  if (!output || !*output) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_CONFIG,
                "%s: no output: set tmr_session_options.output_path, or output_path in the "
                "config",
                config->tc->source_name);
    return NULL;
  }
  gsize len;
  const uint8_t *bytes = g_bytes_get_data(config->tc->bytes, &len);
  tm_trace_config *copy = tm_trace_config_parse_binary(bytes, len, config->tc->source_name, error);
  if (!copy)
    return NULL;

  tmr_session *s = g_new0(tmr_session, 1);
  s->config.tc = copy;
  s->serial = atomic_fetch_add(&next_session_serial, 1);
  s->output_path = g_strdup(output);
  s->producer_name = g_strdup(options && options->producer_name ? options->producer_name
                                                                 : tmr_reg_process_name());
  pthread_mutex_init(&s->lock, NULL);
  pthread_mutex_init(&s->output_lock, NULL);
  pthread_mutex_init(&s->join_lock, NULL);
  pthread_condattr_t cond_attr;
  pthread_condattr_init(&cond_attr);
  pthread_condattr_setclock(&cond_attr, CLOCK_MONOTONIC);
  pthread_cond_init(&s->cond, &cond_attr);
  pthread_condattr_destroy(&cond_attr);
  g_queue_init(&s->triggers);
  s->service_packets = g_byte_array_new();
  g_queue_init(&s->pending_snapshots);
  s->instances = g_ptr_array_new();
  s->buffers = g_ptr_array_new_with_free_func((GDestroyNotify)tmr_trace_buffer_free);
  s->wake_fd = -1;
  s->trigger_fd = -1;
  s->unique_lock_fd = -1;
  atomic_store(&s->next_sequence_id, TMR_SERVICE_SEQUENCE_ID + 1);
  m = copy->message;
  for (size_t i = 0; i < m->n_buffers; i++) {
    const Perfetto__Protos__TraceConfig__BufferConfig *b = m->buffers[i];
    tmr_fill_policy policy =
        b->fill_policy == PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__FILL_POLICY__DISCARD
            ? TMR_FILL_DISCARD
            : TMR_FILL_RING_BUFFER;
    tmr_trace_buffer *buffer = tmr_trace_buffer_new((size_t)b->size_kb * 1024, policy);
    if (!buffer) {
      g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_SYSTEM, "buffers[%zu]: cannot allocate %u KiB", i, b->size_kb);
      tmr_session_free(s);
      return NULL;
    }
    g_ptr_array_add(s->buffers, buffer);
  }
  /* TMR_NOW's clock: the environment can only turn the TSC off (a
   * program that cannot be rebuilt), never force it where it is unsound. */
  const char *env_clock = g_getenv("TRACEMERGE_RECORD_CLOCK");
  bool boottime_asked = (options && options->now_clock == TMR_NOW_CLOCK_BOOTTIME) ||
                        (env_clock && g_ascii_strcasecmp(env_clock, "boottime") == 0);
  s->use_tsc = !boottime_asked && tmr_tsc_usable();
  s->write_into_file = m->write_into_file;
  if (m->has_max_file_size_bytes)
    s->max_file_size = m->max_file_size_bytes;
  s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s->wake_fd < 0) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_SYSTEM, "eventfd: %s", g_strerror(errno));
    tmr_session_free(s);
    return NULL;
  }
  return s;
}

/* --- starting -------------------------------------------------------------------- */

static gpointer service_main(gpointer data);

static void add_trace_config_packet(tmr_session *s) {
  const Perfetto__Protos__TraceConfig__BuiltinDataSource *b =
      s->config.tc->message->builtin_data_sources;
  if (b && b->disable_trace_config)
    return;
  gsize len;
  const uint8_t *bytes = g_bytes_get_data(s->config.tc->bytes, &len);
  GByteArray *packet = g_byte_array_new();
  static const uint8_t sequence[] = {0x50, TMR_SERVICE_SEQUENCE_ID}; /* field 10 */
  g_byte_array_append(packet, sequence, sizeof sequence);
  /* field 33 (trace_config): the config's bytes as given, unknown fields too */
  uint8_t tag[2] = {0x8a, 0x02};
  g_byte_array_append(packet, tag, 2);
  uint64_t v = len;
  while (v >= 0x80) {
    uint8_t b7 = (uint8_t)(v | 0x80);
    g_byte_array_append(packet, &b7, 1);
    v >>= 7;
  }
  uint8_t last = (uint8_t)v;
  g_byte_array_append(packet, &last, 1);
  g_byte_array_append(packet, bytes, (guint)len);
  tmr_session_add_service_packet(s, packet->data, packet->len);
  g_byte_array_unref(packet);
}

static void undo_start(tmr_session *s) {
  tmr_session_free_instances(s);
  tmr_session_release_track_event(s);
  tmr_trigger_unlisten(s);
  if (s->out) {
    fclose(s->out);
    s->out = NULL;
  }
  if (s->unique_lock_fd >= 0) {
    close(s->unique_lock_fd);
    s->unique_lock_fd = -1;
  }
}

bool tmr_session_start(tmr_session *s, GError **error) {
  pthread_mutex_lock(&s->lock);
  bool fresh = s->state == TMR_SESSION_CREATED && !s->service_thread;
  pthread_mutex_unlock(&s->lock);
  if (!fresh) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_USAGE, "this session was started already");
    return false;
  }
  const Perfetto__Protos__TraceConfig *m = s->config.tc->message;
  if (m->unique_session_name && *m->unique_session_name &&
      !tmr_unique_session_lock(s, m->unique_session_name, error))
    return false;
  tmr_session_create_instances(s);
  if (s->track_event && !tmr_session_claim_track_event(s, error)) {
    undo_start(s);
    return false;
  }
  s->out = fopen(s->output_path, "wb");
  if (!s->out) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_OUTPUT, "%s: %s", s->output_path, g_strerror(errno));
    undo_start(s);
    return false;
  }
  if (trigger_config(s) && !tmr_trigger_listen(s, error)) {
    undo_start(s);
    return false;
  }
  add_trace_config_packet(s);
  tmr_session_add_clock_snapshot(s);

  int64_t now = g_get_monotonic_time();
  s->start_us = now;
  const Perfetto__Protos__TraceConfig__TriggerConfig *tc = trigger_config(s);
  if (tc)
    s->trigger_deadline_us = now + (int64_t)tc->trigger_timeout_ms * 1000;
  if (m->write_into_file) {
    uint32_t period = m->file_write_period_ms ? m->file_write_period_ms
                                              : DEFAULT_FILE_WRITE_PERIOD_MS;
    s->file_period_us = (int64_t)MAX(period, (uint32_t)MIN_FILE_WRITE_PERIOD_MS) * 1000;
    s->next_file_write_us = now + s->file_period_us;
  }
  if (m->flush_period_ms) {
    s->flush_period_us = (int64_t)m->flush_period_ms * 1000;
    s->next_flush_us = now + s->flush_period_us;
  }
  if (m->incremental_state_config && m->incremental_state_config->clear_period_ms) {
    s->clear_period_us = (int64_t)m->incremental_state_config->clear_period_ms * 1000;
    s->next_clear_us = now + s->clear_period_us;
  }
  if (start_mode(s)) {
    s->state = TMR_SESSION_WAITING_TRIGGER;
  } else {
    if (m->duration_ms)
      s->stop_at_us = now + (int64_t)m->duration_ms * 1000;
    tmr_session_start_instances(s);
    s->state = TMR_SESSION_RUNNING;
  }
  tmr_sessions_register(s);
  g_autoptr(GError) thread_error = NULL;
  GThread *thread = g_thread_try_new("tmr-service", service_main, s, &thread_error);
  if (!thread) {
    g_set_error(error, TRACEMERGE_ERROR, TM_ERROR_SYSTEM, "cannot start the session's thread: %s",
                thread_error->message);
    tmr_sessions_unregister(s);
    tmr_session_stop_instances(s);
    undo_start(s);
    s->state = TMR_SESSION_STOPPED;
    return false;
  }
  pthread_mutex_lock(&s->join_lock);
  s->service_thread = thread;
  pthread_mutex_unlock(&s->join_lock);
  return true;
}

/* --- flushing ---------------------------------------------------------------------- */

static void flush(tmr_session *s, bool write) {
  pthread_mutex_lock(&s->lock);
  s->flushes_requested++;
  pthread_mutex_unlock(&s->lock);
  for (guint i = 0; i < s->instances->len; i++)
    tmr_instance_flush_writers(s->instances->pdata[i], true);
  tmr_session_add_clock_snapshot(s);
  if (write) {
    tmr_session_add_trace_stats(s);
    tmr_session_write_out(s, false);
  }
  pthread_mutex_lock(&s->lock);
  s->flushes_succeeded++;
  pthread_mutex_unlock(&s->lock);
}

void tmr_session_flush(tmr_session *s) {
  pthread_mutex_lock(&s->lock);
  bool live = s->state == TMR_SESSION_RUNNING || s->state == TMR_SESSION_WAITING_TRIGGER;
  pthread_mutex_unlock(&s->lock);
  if (live)
    flush(s, s->write_into_file);
  if (s->output_full)
    wake(s); /* max_file_size_bytes: the service thread stops the session */
}

/* --- triggers ------------------------------------------------------------------------ */

static const Perfetto__Protos__TraceConfig__TriggerConfig__Trigger *
matching_trigger(const tmr_session *s, const tmr_pending_trigger *t) {
  const Perfetto__Protos__TraceConfig__TriggerConfig *tc = trigger_config(s);
  for (size_t i = 0; tc && i < tc->n_triggers; i++) {
    const Perfetto__Protos__TraceConfig__TriggerConfig__Trigger *rule = tc->triggers[i];
    if (strcmp(rule->name, t->name) != 0)
      continue;
    if (rule->producer_name_regex && *rule->producer_name_regex) {
      g_autofree char *anchored = g_strdup_printf("\\A(?:%s)\\z", rule->producer_name_regex);
      g_autoptr(GRegex) re = g_regex_new(anchored, 0, 0, NULL);
      if (!re || !g_regex_match(re, t->producer_name ? t->producer_name : "", 0, NULL))
        continue;
    }
    return rule;
  }
  return NULL;
}

static void pending_trigger_free(gpointer data) {
  tmr_pending_trigger *t = data;
  g_free(t->name);
  g_free(t->producer_name);
  g_free(t);
}

/* Acts on the triggers received since the last call. */
static void process_triggers(tmr_session *s, int64_t now) {
  GQueue taken = G_QUEUE_INIT;
  pthread_mutex_lock(&s->lock);
  taken = s->triggers;
  g_queue_init(&s->triggers);
  pthread_mutex_unlock(&s->lock);
  for (GList *l = taken.head; l; l = l->next) {
    tmr_pending_trigger *t = l->data;
    const Perfetto__Protos__TraceConfig__TriggerConfig__Trigger *rule = matching_trigger(s, t);
    if (!rule)
      continue;
    if (s->triggers_recorded >= TMR_MAX_RECORDED_TRIGGERS)
      continue; /* only ever after the deciding one: see the constant */
    s->triggers_recorded++;
    tmr_session_add_trigger_packet(s, t);
    if (s->triggered)
      continue; /* the first trigger decided; later ones are recorded only */
    s->triggered = true;
    g_free(s->triggered_by);
    s->triggered_by = g_strdup_printf("trigger:%s", t->name);
    s->trigger_deadline_us = 0;
    int64_t stop_at = now + (int64_t)rule->stop_delay_ms * 1000;
    if (s->state == TMR_SESSION_WAITING_TRIGGER) {
      tmr_session_start_instances(s);
      pthread_mutex_lock(&s->lock);
      s->state = TMR_SESSION_RUNNING;
      pthread_mutex_unlock(&s->lock);
    }
    if (!s->stop_at_us || stop_at < s->stop_at_us) {
      s->stop_at_us = stop_at;
      s->stop_at_is_trigger = true;
    }
  }
  g_queue_clear_full(&taken, pending_trigger_free);
}

typedef struct local_trigger {
  const char *name;
  int64_t boottime_ns;
} local_trigger;

static void push_local_trigger(tmr_session *s, void *user) {
  const local_trigger *lt = user;
  if (!trigger_config(s))
    return;
  tmr_pending_trigger *t = g_new0(tmr_pending_trigger, 1);
  t->name = g_strdup(lt->name);
  t->producer_name = g_strdup(s->producer_name);
  t->uid = (int32_t)getuid();
  t->boottime_ns = lt->boottime_ns;
  pthread_mutex_lock(&s->lock);
  g_queue_push_tail(&s->triggers, t);
  pthread_mutex_unlock(&s->lock);
  wake(s);
}

void tmr_trigger(const char *name) {
  if (!name || !*name)
    return;
  local_trigger lt = {name, tmr_boottime_ns()};
  tmr_sessions_foreach(push_local_trigger, &lt);
}

/* --- stopping ------------------------------------------------------------------------------ */

static void do_stop(tmr_session *s, const char *reason) {
  pthread_mutex_lock(&s->lock);
  s->state = TMR_SESSION_STOPPING;
  s->stop_reason = g_strdup(reason);
  pthread_mutex_unlock(&s->lock);
  tmr_session_stop_instances(s);
  flush(s, false);
  tmr_session_write_out(s, s->discard_data);
  tmr_session_add_trace_stats(s);
  tmr_session_write_out(s, true);
  tmr_sessions_unregister(s);
  pthread_mutex_lock(&s->output_lock);
  if (s->out && fclose(s->out) != 0 && !s->stop_error)
    g_set_error(&s->stop_error, TRACEMERGE_ERROR, TM_ERROR_OUTPUT, "%s: %s", s->output_path, g_strerror(errno));
  s->out = NULL;
  pthread_mutex_unlock(&s->output_lock);
  tmr_trigger_unlisten(s);
  if (s->unique_lock_fd >= 0) {
    close(s->unique_lock_fd);
    s->unique_lock_fd = -1;
  }
  tmr_session_release_track_event(s);
  pthread_mutex_lock(&s->lock);
  s->state = TMR_SESSION_STOPPED;
  pthread_cond_broadcast(&s->cond);
  pthread_mutex_unlock(&s->lock);
}

static int64_t earliest(int64_t a, int64_t b) {
  if (!a)
    return b;
  if (!b)
    return a;
  return MIN(a, b);
}

static gpointer service_main(gpointer data) {
  tmr_session *s = data;
  for (;;) {
    int64_t now = g_get_monotonic_time();
    /* The stop request is read before the triggers are taken: a trigger
     * fired before tmr_session_stop() is then always in the queue taken
     * below, not left behind by a stop seen one step later. */
    const char *reason = NULL;
    pthread_mutex_lock(&s->lock);
    if (s->stop_requested)
      reason = "tmr_session_stop";
    pthread_mutex_unlock(&s->lock);
    process_triggers(s, now);
    if (!reason && s->stop_at_us && now >= s->stop_at_us)
      reason = s->stop_at_is_trigger ? s->triggered_by : "duration_ms";
    if (!reason && s->trigger_deadline_us && !s->triggered && now >= s->trigger_deadline_us) {
      reason = "trigger_timeout_ms";
      /* STOP_TRACING without its trigger: "no data will be returned". */
      s->discard_data = !start_mode(s);
    }
    if (!reason && s->output_full)
      reason = "max_file_size_bytes";
    if (reason) {
      do_stop(s, reason);
      return NULL;
    }
    if (s->next_clear_us && now >= s->next_clear_us) {
      for (guint i = 0; i < s->instances->len; i++) {
        tmr_data_source_instance *instance = s->instances->pdata[i];
        pthread_mutex_lock(&instance->lock);
        for (guint k = 0; k < instance->writers->len; k++)
          tmr_writer_request_reset(instance->writers->pdata[k]);
        pthread_mutex_unlock(&instance->lock);
      }
      s->next_clear_us = now + s->clear_period_us;
    }
    if (s->next_flush_us && now >= s->next_flush_us) {
      flush(s, false);
      s->next_flush_us = now + s->flush_period_us;
    }
    if (s->next_file_write_us && now >= s->next_file_write_us) {
      flush(s, true);
      s->next_file_write_us = now + s->file_period_us;
      if (s->output_full)
        continue; /* stop at once */
    }
    int64_t next = earliest(earliest(s->stop_at_us, s->triggered ? 0 : s->trigger_deadline_us),
                            earliest(earliest(s->next_clear_us, s->next_flush_us),
                                     s->next_file_write_us));
    int timeout_ms = -1;
    if (next) {
      int64_t wait_us = next - g_get_monotonic_time();
      timeout_ms = wait_us <= 0 ? 0 : (int)MIN((wait_us + 999) / 1000, (int64_t)G_MAXINT);
    }
    struct pollfd fds[2] = {{s->wake_fd, POLLIN, 0}, {s->trigger_fd, POLLIN, 0}};
    int n = poll(fds, s->trigger_fd >= 0 ? 2 : 1, timeout_ms);
    if (n > 0 && (fds[0].revents & POLLIN)) {
      uint64_t count;
      if (read(s->wake_fd, &count, sizeof count) < 0) {
        /* EAGAIN: another wake-up got there first. */
      }
    }
    if (n > 0 && s->trigger_fd >= 0 && (fds[1].revents & POLLIN))
      tmr_trigger_receive(s);
  }
}

bool tmr_session_wait(tmr_session *s, int64_t timeout_ms) {
  struct timespec end;
  clock_gettime(CLOCK_MONOTONIC, &end);
  if (timeout_ms > 0) {
    end.tv_sec += timeout_ms / 1000;
    end.tv_nsec += (timeout_ms % 1000) * 1000000;
    if (end.tv_nsec >= 1000000000) {
      end.tv_sec++;
      end.tv_nsec -= 1000000000;
    }
  }
  pthread_mutex_lock(&s->lock);
  while (s->state != TMR_SESSION_STOPPED && s->state != TMR_SESSION_CREATED) {
    if (timeout_ms < 0)
      pthread_cond_wait(&s->cond, &s->lock);
    else if (pthread_cond_timedwait(&s->cond, &s->lock, &end) == ETIMEDOUT)
      break;
  }
  bool stopped = s->state == TMR_SESSION_STOPPED;
  pthread_mutex_unlock(&s->lock);
  return stopped;
}

bool tmr_session_stop(tmr_session *s, GError **error) {
  if (!s)
    return true;
  pthread_mutex_lock(&s->lock);
  if (s->state == TMR_SESSION_CREATED) {
    s->state = TMR_SESSION_STOPPED;
    s->stop_reason = g_strdup("tmr_session_stop");
  }
  s->stop_requested = true;
  pthread_mutex_unlock(&s->lock);
  wake(s);
  pthread_mutex_lock(&s->join_lock);
  if (s->service_thread) {
    g_thread_join(s->service_thread);
    s->service_thread = NULL;
  }
  pthread_mutex_unlock(&s->join_lock);
  pthread_mutex_lock(&s->lock);
  bool ok = s->stop_error == NULL;
  if (!ok)
    g_propagate_error(error, g_error_copy(s->stop_error));
  pthread_mutex_unlock(&s->lock);
  return ok;
}

void tmr_session_free(tmr_session *s) {
  if (!s)
    return;
  tmr_session_stop(s, NULL);
  tmr_sessions_unregister(s);
  tmr_session_free_instances(s);
  tmr_session_release_track_event(s);
  undo_start(s);
  g_ptr_array_unref(s->instances);
  g_ptr_array_unref(s->buffers);
  g_byte_array_unref(s->service_packets);
  g_queue_clear_full(&s->pending_snapshots, (GDestroyNotify)g_byte_array_unref);
  g_queue_clear_full(&s->triggers, pending_trigger_free);
  if (s->wake_fd >= 0)
    close(s->wake_fd);
  tm_trace_config_free(s->config.tc);
  g_clear_error(&s->stop_error);
  g_free(s->stop_reason);
  g_free(s->triggered_by);
  g_free(s->output_path);
  g_free(s->producer_name);
  pthread_mutex_destroy(&s->lock);
  pthread_mutex_destroy(&s->output_lock);
  pthread_mutex_destroy(&s->join_lock);
  pthread_cond_destroy(&s->cond);
  g_free(s);
}

const char *tmr_session_borrow_stop_reason(const tmr_session *s) {
  if (!s)
    return NULL;
  /* Set once, under the lock, by the thread that stops the session. */
  pthread_mutex_lock((pthread_mutex_t *)&s->lock);
  const char *reason = s->stop_reason;
  pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
  return reason;
}

tmr_now_clock tmr_session_now_clock(const tmr_session *s) {
  return s && s->use_tsc ? TMR_NOW_CLOCK_TSC : TMR_NOW_CLOCK_BOOTTIME;
}

uint64_t tmr_session_bytes_written(const tmr_session *s) {
  if (!s)
    return 0;
  pthread_mutex_lock((pthread_mutex_t *)&s->output_lock);
  uint64_t n = s->bytes_written;
  pthread_mutex_unlock((pthread_mutex_t *)&s->output_lock);
  return n;
}

bool tmr_session_buffer_stats(tmr_session *s, size_t buffer, tmr_buffer_stats *out) {
  if (!s || buffer >= s->buffers->len)
    return false;
  tmr_trace_buffer_get_stats(s->buffers->pdata[buffer], out);
  return true;
}
