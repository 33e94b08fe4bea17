// Reply errors (docs/engine-protocol.md, "Errors"): a command handler throws a
// WireError and the client answers the command with its wire form.

/** WireError is an error a command is answered with: code, message and, for a
 * group_rule error, rule and participant. */
export class WireError extends Error {
  constructor(code, message, extra = {}) {
    super(message);
    this.code = code;
    this.extra = extra;
  }

  /** toWire is the reply's `error` object. */
  toWire() {
    return { code: this.code, message: this.message, ...this.extra };
  }
}

/** rejected: retrying cannot help (not on the network, a malformed param). */
export const rejected = (message) => new WireError('rejected', message);

/** notFound: no such group or message. */
export const notFound = (message) => new WireError('not_found', message);

/** unsupported: this engine does not serve the method. */
export const unsupported = (method) => new WireError('unsupported', `this engine does not serve ${method}`);

/** groupRule: a group rule forbids it (rule: not_a_member, not_an_admin, …). */
export const groupRule = (rule, participant, message) =>
  new WireError('group_rule', message, participant ? { rule, participant } : { rule });

/** wireError is the wire form of anything a handler threw: a WireError as it
 * is, anything else as the transient engine_error. */
export function wireError(err) {
  if (err instanceof WireError) return err.toWire();
  return { code: 'engine_error', message: String(err?.message ?? err) };
}
