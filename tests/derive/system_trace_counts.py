#!/usr/bin/env python3
"""Expected counts of the real system traces, derived from trace_processor's
rules applied to the files' bytes -- not from tracemerge's code.

Usage: system_trace_counts.py FILE...   (prints one line of counts per file)

The file is walked field by field (protobuf wire format, field numbers of
proto/trace.proto, proto/ftrace.proto, proto/system.proto). Every event is
put in trace_processor's order -- by timestamp, ties in file order -- and
the rules below, restated from trace_processor's importers, are applied:

  ftrace print (atrace, FtraceEvent 3): the event's pid is a thread; "B|tgid|name"
    begins a slice on that thread's track (the thread joins process tgid),
    "E" ends the innermost one, "S|tgid|name|cookie" / "F|..." an async slice
    on the (process, name) track set; "C|tgid|name|value" a process counter.
  other ftrace events (compact_sched aside) make the thread of their pid;
  softirq_entry/exit and irq_handler_entry/exit a slice on the cpu's
    "SoftIrq Cpu N" / "Irq Cpu N" track.
  compact_sched, per cpu: the first switch only records who runs next; every
    later one is a sched row, ends prev's Running thread_state and opens its
    prev_state, opens next's Running. A waking (after the cpu's first
    switch) opens a Runnable state unless the thread is Running or "R". The
    swapper (tid 0) has no thread_state rows.
  frame_timeline_event: each start is a slice named by its token on the
    (process, "Expected Timeline" / "Actual Timeline") track set, ended by
    the FrameEnd of its cookie; an expected surface frame repeating a
    (process, token) is skipped; an actual display frame gets a flow from
    every earlier actual surface frame naming its token. A process seen
    here gets its main thread (tid = pid).
  track sets: a begin takes the first track of the set with nothing open,
    else a new one; so a set has as many tracks as its peak concurrency.
  process_tree, track descriptors and perf samples name processes (each
    with its main thread) and threads.
  threads and processes also count the swapper (tid 0, pid 0).
  counters: one per "C|" print with a numeric value. Payloads that make
    other counters (the counter ftrace kinds, process_stats, sys_stats,
    battery, power rails) are not derived here: a file holding one is
    refused rather than miscounted.
  android_logs: one row per event of an android_log packet (its stats
    make none).
"""
import collections
import sys


def varint(b, i):
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i


def fields(b):
    i, n = 0, len(b)
    while i < n:
        t, i = varint(b, i)
        f, w = t >> 3, t & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 1:
            v = int.from_bytes(b[i:i + 8], 'little'); i += 8
        elif w == 5:
            v = int.from_bytes(b[i:i + 4], 'little'); i += 4
        elif w == 2:
            l, i = varint(b, i)
            v = b[i:i + l]; i += l
        else:
            raise ValueError('wire type %d' % w)
        yield f, w, v


def packed(v, w):
    if w == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def s32(x):
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >> 31 else x


def first(msg, num, default=None):
    for f, w, v in fields(msg):
        if f == num:
            return v
    return default


# Payloads whose counters this script does not derive (FtraceEvent and
# TracePacket field numbers): cpu_frequency, cpu_idle, clock_enable/
# disable/set_rate, rss_stat, ion_heap_shrink/grow, mm_event_record,
# gpu_frequency, ion_stat, dma_heap_stat; sys_stats, process_stats,
# battery, power_rails.
COUNTER_FTRACE = {11, 13, 14, 15, 16, 313, 314, 315, 328, 332, 335, 351}
COUNTER_PACKETS = {7, 9, 38, 40}


class Counts:
    def __init__(self):
        self.events = []  # (ts, order, kind, payload)
        self.threads = {0}
        self.processes = {0}
        self.order = 0
        self.android_logs = 0

    def add(self, ts, kind, *payload):
        self.events.append((ts, self.order, kind, payload))
        self.order += 1


def read(path):
    c = Counts()
    data = open(path, 'rb').read()
    for f, w, packet in fields(data):
        if f != 1:
            continue
        pf = collections.defaultdict(list)
        for n, pw, v in fields(packet):
            pf[n].append(v)
        ts = pf[8][0] if pf[8] else None
        refused = COUNTER_PACKETS.intersection(n for n in pf if pf[n])
        if refused:
            raise NotImplementedError('%s: counters of packet field %s not derived'
                                      % (path, sorted(refused)))
        if pf[39]:  # android_log: {events 1, stats 2}
            c.android_logs += sum(1 for n, _, _ in fields(pf[39][0]) if n == 1)
        if pf[2]:  # process_tree
            for n, _, v in fields(pf[2][0]):
                if n == 1:
                    pid = first(v, 1)
                    c.processes.add(pid); c.threads.add(pid)
                elif n == 2:
                    c.threads.add(first(v, 1))
        if pf[60]:  # track descriptor
            for n, _, v in fields(pf[60][0]):
                if n == 3 and first(v, 1) is not None:
                    pid = first(v, 1)
                    c.processes.add(pid); c.threads.add(pid)
                elif n == 4:
                    pid, tid = first(v, 1), first(v, 2)
                    c.processes.add(pid); c.threads.add(pid); c.threads.add(tid)
        if pf[66]:  # perf sample
            pid, tid = first(pf[66][0], 2), first(pf[66][0], 3)
            if tid is not None:
                c.threads.add(tid)
            if pid is not None:
                c.processes.add(pid); c.threads.add(pid)
        if pf[1]:
            read_bundle(c, pf[1][0])
        if pf[76] and ts is not None:
            read_frame(c, ts, pf[76][0])
    return c


def read_bundle(c, bundle):
    cpu = first(bundle, 1)
    for n, w, v in fields(bundle):
        if n == 2:
            ev = dict((k, (ww, vv)) for k, ww, vv in fields(v))
            ts, pid = ev[1][1], ev[2][1]
            for k, (ww, vv) in ev.items():
                if k in (1, 2, 5):
                    continue
                if k in COUNTER_FTRACE:
                    raise NotImplementedError('counters of ftrace event %d not derived' % k)
                if k != 4:
                    c.threads.add(pid)
                if k == 3:
                    c.add(ts, 'print', pid, first(vv, 2, b'').decode('utf-8', 'replace'))
                elif k in (24, 36):
                    c.add(ts, 'irq_begin', cpu, k, first(vv, 2 if k == 36 else 1))
                elif k in (25, 37):
                    c.add(ts, 'irq_end', cpu, k)
        elif n == 4:
            arrays = collections.defaultdict(list)
            comms = []
            for k, ww, vv in fields(v):
                if k == 5:
                    comms.append(vv)
                else:
                    arrays[k] += packed(vv, ww)
            at = 0
            for i in range(min(len(arrays[a]) for a in (1, 2, 3, 4, 6))):
                at += arrays[1][i]
                c.add(at, 'switch', cpu, arrays[2][i], s32(arrays[3][i]))
            at = 0
            for i in range(min(len(arrays[a]) for a in (7, 8, 9, 10, 11))):
                at += arrays[7][i]
                c.add(at, 'waking', cpu, s32(arrays[8][i]), s32(arrays[9][i]))


def read_frame(c, ts, frame):
    for k, w, v in fields(frame):
        d = dict((n, vv) for n, ww, vv in fields(v))
        if k in (1, 2):
            c.add(ts, 'frame_begin', 'display', k == 2, d[1], d[2], s32(d[3]), None)
        elif k in (3, 4):
            c.add(ts, 'frame_begin', 'surface', k == 4, d[1], d[2], s32(d[4]), d[3])
        elif k == 5:
            c.add(ts, 'frame_end', d.get(1))


def task_state(raw):
    if raw > 2048:
        return None
    letters = ''.join(ch for b, ch in enumerate('SDTtXZxKWPN') if raw & (1 << b))
    return (letters or 'R') + ('+' if raw & 2048 else '')


def derive(path):
    c = read(path)
    slices, names, flows, sched, thread_state, counters = 0, set(), 0, 0, 0, 0
    thread_tracks, sets = set(), collections.defaultdict(list)  # set -> [open cookie or None]
    stacks = collections.defaultdict(int)
    irq_open = collections.defaultdict(int)
    running = {}          # cpu -> tid
    last_state = {}       # tid -> state of its open thread_state row
    cookie_set = {}
    expected_seen = set()
    waiting_surfaces = collections.defaultdict(int)
    async_slots = {}      # (set, cookie) -> slot

    def set_begin(key, cookie):
        slots = sets[key]
        for i, open_cookie in enumerate(slots):
            if open_cookie is None:
                slots[i] = cookie
                return
        slots.append(cookie)

    def set_end(key, cookie):
        slots = sets[key]
        for i, open_cookie in enumerate(slots):
            if open_cookie == cookie:
                slots[i] = None
                return

    def open_state(tid, state):
        nonlocal thread_state
        if tid != 0:
            thread_state += 1
            last_state[tid] = state

    for ts, _, kind, p in sorted(c.events):
        if kind == 'print':
            pid, buf = p
            buf = buf.rstrip('\n\0')
            parts = buf.split('|')
            if parts[0] in ('B', 'S', 'F', 'C', 'E') and len(parts) > 1 and parts[1]:
                c.processes.add(int(parts[1]))
            if parts[0] == 'B':
                slices += 1
                names.add(parts[2] if len(parts) > 2 and parts[2] else '[empty slice name]')
                thread_tracks.add(pid)
                stacks[pid] += 1
            elif parts[0] == 'E' and stacks[pid]:
                stacks[pid] -= 1
            elif parts[0] == 'S':
                slices += 1
                names.add(parts[2])
                set_begin(('atrace', int(parts[1]), parts[2]), parts[3])
            elif parts[0] == 'F':
                set_end(('atrace', int(parts[1]), parts[2]), parts[3])
            elif parts[0] == 'C' and len(parts) > 3:
                try:
                    float(parts[3])
                    counters += 1
                except ValueError:
                    pass
        elif kind == 'irq_begin':
            cpu, k, arg = p
            slices += 1
            softirq = ['HI', 'TIMER', 'NET_TX', 'NET_RX', 'BLOCK', 'IRQ_POLL', 'TASKLET',
                       'SCHED', 'HRTIMER', 'RCU']
            names.add(softirq[arg] if k == 24 else 'IRQ (%s)' % arg.decode())
            thread_tracks.add(('irq', cpu, k))
        elif kind == 'switch':
            cpu, prev_state, next_pid = p
            c.threads.add(next_pid)
            if cpu in running:
                sched += 1
                prev = running[cpu]
                open_state(prev, task_state(prev_state))
                open_state(next_pid, 'Running')
            running[cpu] = next_pid
        elif kind == 'waking':
            cpu, pid, target = p
            c.threads.add(pid)
            if cpu not in running:
                continue
            if last_state.get(pid) in ('Running', 'R'):
                continue
            open_state(pid, 'R')
        elif kind == 'frame_begin':
            what, actual, cookie, token, pid, display_token = p
            c.processes.add(pid); c.threads.add(pid)
            if what == 'surface' and not actual:
                if (pid, token) in expected_seen:
                    continue
                expected_seen.add((pid, token))
            key = ('frame', pid, actual)
            slices += 1
            names.add(str(token))
            cookie_set[cookie] = key
            set_begin(key, cookie)
            if actual and what == 'surface':
                waiting_surfaces[display_token] += 1
            elif actual:
                flows += waiting_surfaces.pop(token, 0)
        elif kind == 'frame_end':
            (cookie,) = p
            key = cookie_set.pop(cookie, None)
            if key:
                set_end(key, cookie)
    tracks = len(thread_tracks) + sum(len(v) for v in sets.values())
    return dict(slices=slices, names=len(names), threads=len(c.threads),
                processes=len(c.processes), tracks=tracks, flows=flows, sched=sched,
                thread_state=thread_state, counters=counters,
                android_logs=c.android_logs)


if __name__ == '__main__':
    for path in sys.argv[1:]:
        print(path, derive(path))
