// The events queue (docs/engine-protocol.md, "Events" and "Ordering,
// idempotency and reconnecting"). Events are reported in `events` frames of
// at most maxBatch events and maxFrame bytes; each frame waits for its
// `events_ack`:
//
//   - acked without error: done; the events listed in `rejected` are refused
//     for good and are not reported again (they are logged);
//   - acked with `error`: nothing of the frame was stored, its events go back
//     to the queue (in smaller frames after payload_too_large, after 200 ms
//     after rate_limited, after a second otherwise);
//   - not acked when the connection ends: its events go back to the queue and
//     are sent again, with the same ids, after the next welcome.
//
// push answers a promise that resolves once its events were acked (stored, or
// refused for good): a command whose events the server reads back once it has
// the reply (a created group) answers only then.

/** maxInFlight bounds the frames sent and not acked yet (the server queues 4). */
const maxInFlight = 4;

/** Outbox holds the events not acked yet, in the order they were observed. */
export class Outbox {
  /** send(frame) writes a frame and reports whether it could; log logs. */
  constructor({ log = () => {} } = {}) {
    this.log = log;
    this.pending = []; // { seq, event } not sent on this connection yet
    this.inFlight = new Map(); // frame id -> [{ seq, event }]
    this.seq = 0;
    this.frames = 0;
    this.send = null; // set while welcomed
    this.maxBatch = 1000;
    this.maxFrame = 16 << 20;
    this.split = 1; // divisor of maxBatch after payload_too_large
    this.timer = null;
    this.idle = []; // resolvers of drained()
  }

  /** push queues events (each with its own stable id) and sends what fits; it
   * resolves once every one of them was acked. */
  push(...events) {
    const acked = events.map((event) => new Promise((done) => this.pending.push({ seq: this.seq++, event, done })));
    this.flush();
    return Promise.all(acked).then(() => undefined);
  }

  /** open starts sending on a welcomed connection, with the welcome's limits. */
  open(send, { maxBatch, maxFrame }) {
    this.send = send;
    if (maxBatch > 0) this.maxBatch = maxBatch;
    if (maxFrame > 0) this.maxFrame = maxFrame;
    this.flush();
  }

  /** close stops sending: every frame not acked goes back to the queue. */
  close() {
    this.send = null;
    clearTimeout(this.timer);
    this.timer = null;
    for (const items of this.inFlight.values()) this.pending.push(...items);
    this.inFlight.clear();
    this.pending.sort((a, b) => a.seq - b.seq);
  }

  /** ack applies an events_ack frame. */
  ack(frame) {
    const items = this.inFlight.get(frame.id);
    if (!items) return; // a frame of an earlier connection, already requeued
    this.inFlight.delete(frame.id);
    if (frame.error) {
      const code = frame.error.code;
      this.log('events frame not stored', { id: frame.id, code, message: frame.error.message });
      if (code === 'payload_too_large') this.split *= 2;
      this.pending.unshift(...items);
      this.pending.sort((a, b) => a.seq - b.seq);
      this.later(code === 'rate_limited' || code === 'payload_too_large' ? 200 : 1000);
      return;
    }
    for (const r of frame.rejected ?? []) {
      this.log('event refused for good, not reported again', { frame: frame.id, index: r.index, id: r.id, reason: r.reason });
    }
    for (const item of items) item.done();
    this.flush();
    if (this.pending.length === 0 && this.inFlight.size === 0) {
      for (const resolve of this.idle.splice(0)) resolve();
    }
  }

  /** drained resolves once every event pushed so far was acked. */
  drained() {
    if (this.pending.length === 0 && this.inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  later(ms) {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush();
    }, ms);
  }

  /** flush sends queued events in frames while the connection takes them. */
  flush() {
    if (this.timer) return; // waiting to resend after an error
    while (this.send && this.pending.length > 0 && this.inFlight.size < maxInFlight) {
      const items = this.take();
      if (items.length === 0) continue; // only oversized events, dropped
      const id = `evb_${Date.now().toString(36)}_${(this.frames++).toString(36)}`;
      if (!this.send({ type: 'events', id, events: items.map((i) => i.event) })) {
        this.pending.unshift(...items);
        return;
      }
      this.inFlight.set(id, items);
    }
  }

  /** take removes the next frame's events: at most maxBatch (divided after
   * payload_too_large) and, as JSON, within maxFrame with room to spare. An
   * event too large for any frame is dropped (the server would close the
   * connection over it, again at every resend). */
  take() {
    const most = Math.max(1, Math.floor(this.maxBatch / this.split));
    const budget = this.maxFrame - 1024;
    let bytes = 64;
    let n = 0;
    while (n < this.pending.length && n < most) {
      const size = Buffer.byteLength(JSON.stringify(this.pending[n].event)) + 1;
      if (bytes + size > budget) {
        if (n > 0) break;
        const [item] = this.pending.splice(0, 1);
        this.log('event larger than the server\'s maxFrame dropped', { id: item.event.id, type: item.event.type, bytes: size });
        item.done();
        continue;
      }
      bytes += size;
      n++;
    }
    return this.pending.splice(0, n);
  }
}
