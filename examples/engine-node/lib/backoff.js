// Reconnect delays (docs/engine-protocol.md, "Ordering, idempotency and
// reconnecting"): a ceiling that starts at 1 s and doubles per failed attempt
// up to 30 s, with "equal jitter" (a random delay between half of the ceiling
// and the whole of it), so that engines a server restart disconnected together
// do not reconnect in step.

/** Backoff hands out reconnect delays in milliseconds. */
export class Backoff {
  constructor({ firstMs = 1000, maxMs = 30000, random = Math.random } = {}) {
    this.firstMs = firstMs;
    this.maxMs = maxMs;
    this.random = random;
    this.ceiling = firstMs;
  }

  /** next is the delay before the next attempt; it doubles the ceiling. */
  next() {
    const c = this.ceiling;
    this.ceiling = Math.min(this.ceiling * 2, this.maxMs);
    return Math.round(c / 2 + this.random() * (c / 2));
  }

  /** patient is a delay at the ceiling's maximum, with the same jitter: after
   * a close 4004 (the same engine connected again elsewhere), so that two
   * copies of one engine do not take the connection from each other in turns. */
  patient() {
    return Math.round(this.maxMs / 2 + this.random() * (this.maxMs / 2));
  }

  /** reset starts again from the first delay (after a welcome). */
  reset() {
    this.ceiling = this.firstMs;
  }
}
