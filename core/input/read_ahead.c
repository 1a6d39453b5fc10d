/*
 * Read-ahead (read_ahead.h): a ring of READ_AHEAD_DEPTH block buffers
 * between one worker thread, which fills them by calling `pull`, and the
 * caller, which takes them in order.
 *
 * The ring: slots head .. head + count - 1 are filled and not yet taken;
 * the slot before head is the caller's while `holding` (the block it took
 * last stays valid until its next call); the rest are free. The worker
 * fills slot head + count, outside the lock: no other thread touches a
 * free slot. Blocks are copied because `pull`'s block is valid only until
 * its next call, which the worker makes long before the caller is done.
 * POSIX threads rather than GLib's: GLib's mutexes are futexes that
 * ThreadSanitizer cannot see, and a race check that cannot see the locks
 * reports every access they order.
 */
#include "input/read_ahead.h"

#include <glib.h>
#include <pthread.h>
#include <string.h>

typedef struct read_ahead_slot {
  uint8_t *buf;
  size_t cap;
  size_t len;
  int status;
  read_ahead_note notes[READ_AHEAD_NOTES];
  size_t n_notes;
} read_ahead_slot;

struct read_ahead {
  read_ahead_pull pull;
  read_ahead_may_run_ahead may_run_ahead;
  void *ctx;
  pthread_t worker;
  bool started;
  pthread_mutex_t lock;
  pthread_cond_t worker_wakes; /* a slot was freed, the caller waits, or stop */
  pthread_cond_t caller_wakes; /* a slot was filled */
  read_ahead_slot slots[READ_AHEAD_DEPTH];
  /* Under `lock`. */
  size_t head;
  size_t count;
  bool holding;
  bool waiting; /* the caller waits for a block: the worker pulls it */
  bool stop;
  /* The worker's own. */
  read_ahead_slot *filling;
};

static size_t free_slots(const read_ahead *ahead) {
  return READ_AHEAD_DEPTH - ahead->count - (ahead->holding ? 1 : 0);
}

static void *worker_main(void *data) {
  read_ahead *ahead = data;
  for (;;) {
    /* Only this thread changes what may_run_ahead reads. */
    bool ahead_ok = ahead->may_run_ahead == NULL || ahead->may_run_ahead(ahead->ctx);
    pthread_mutex_lock(&ahead->lock);
    while (!ahead->stop &&
           (free_slots(ahead) == 0 ||
            (!ahead_ok && !(ahead->waiting && ahead->count == 0))))
      pthread_cond_wait(&ahead->worker_wakes, &ahead->lock);
    if (ahead->stop) {
      pthread_mutex_unlock(&ahead->lock);
      break;
    }
    read_ahead_slot *slot = &ahead->slots[(ahead->head + ahead->count) % READ_AHEAD_DEPTH];
    pthread_mutex_unlock(&ahead->lock);

    ahead->filling = slot;
    slot->n_notes = 0;
    const uint8_t *block = NULL;
    size_t len = 0;
    int status = ahead->pull(ahead->ctx, &block, &len);
    if (status != READ_AHEAD_OPEN)
      len = 0;
    if (len > slot->cap) {
      g_free(slot->buf);
      slot->cap = MAX(len, slot->cap * 2);
      slot->buf = g_malloc(slot->cap);
    }
    if (len > 0)
      memcpy(slot->buf, block, len);
    slot->len = len;
    slot->status = status;
    ahead->filling = NULL;

    pthread_mutex_lock(&ahead->lock);
    ahead->count++;
    pthread_cond_signal(&ahead->caller_wakes);
    pthread_mutex_unlock(&ahead->lock);
    if (status != READ_AHEAD_OPEN)
      break; /* an end status is the file's last block */
  }
  return NULL;
}

read_ahead *read_ahead_new(read_ahead_pull pull,
                           read_ahead_may_run_ahead may_run_ahead, void *ctx) {
  read_ahead *ahead = g_new0(read_ahead, 1);
  ahead->pull = pull;
  ahead->may_run_ahead = may_run_ahead;
  ahead->ctx = ctx;
  pthread_mutex_init(&ahead->lock, NULL);
  pthread_cond_init(&ahead->worker_wakes, NULL);
  pthread_cond_init(&ahead->caller_wakes, NULL);
  return ahead;
}

bool read_ahead_start(read_ahead *ahead) {
  ahead->started = pthread_create(&ahead->worker, NULL, worker_main, ahead) == 0;
  if (ahead->started)
    pthread_setname_np(ahead->worker, "tm-read-ahead");
  return ahead->started;
}

int read_ahead_next(read_ahead *ahead, const uint8_t **data, size_t *len,
                    read_ahead_note *notes, size_t *n_notes) {
  pthread_mutex_lock(&ahead->lock);
  ahead->holding = false;
  pthread_cond_signal(&ahead->worker_wakes);
  while (ahead->count == 0) {
    ahead->waiting = true;
    pthread_cond_signal(&ahead->worker_wakes);
    pthread_cond_wait(&ahead->caller_wakes, &ahead->lock);
  }
  ahead->waiting = false;
  read_ahead_slot *slot = &ahead->slots[ahead->head];
  ahead->head = (ahead->head + 1) % READ_AHEAD_DEPTH;
  ahead->count--;
  ahead->holding = true;
  pthread_mutex_unlock(&ahead->lock);
  /* The slot is the caller's until its next call: read without the lock. */
  *data = slot->buf;
  *len = slot->len;
  memcpy(notes, slot->notes, slot->n_notes * sizeof *notes);
  *n_notes = slot->n_notes;
  return slot->status;
}

void read_ahead_note_add(read_ahead *ahead, uint32_t file_id, const char *what) {
  read_ahead_slot *slot = ahead->filling;
  if (slot != NULL && slot->n_notes < READ_AHEAD_NOTES)
    slot->notes[slot->n_notes++] = (read_ahead_note){file_id, what};
}

void read_ahead_finish(read_ahead *ahead, read_ahead_leftover *leftover) {
  if (ahead->started) {
    pthread_mutex_lock(&ahead->lock);
    ahead->stop = true;
    pthread_cond_signal(&ahead->worker_wakes);
    pthread_mutex_unlock(&ahead->lock);
    pthread_join(ahead->worker, NULL);
  }
  if (leftover != NULL) {
    *leftover = (read_ahead_leftover){.blocks = ahead->count};
    for (size_t k = 0; k < ahead->count; k++) {
      const read_ahead_slot *slot = &ahead->slots[(ahead->head + k) % READ_AHEAD_DEPTH];
      if (slot->status == READ_AHEAD_OPEN)
        leftover->bytes += slot->len;
      else
        leftover->ended = true;
    }
  }
  for (size_t k = 0; k < READ_AHEAD_DEPTH; k++)
    g_free(ahead->slots[k].buf);
  pthread_cond_destroy(&ahead->caller_wakes);
  pthread_cond_destroy(&ahead->worker_wakes);
  pthread_mutex_destroy(&ahead->lock);
  g_free(ahead);
}
