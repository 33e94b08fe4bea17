// Sending on the simulated network (capabilities `send` and `send_batch`).
// A message to a contact <digits>@c.us, or to a group the account is in, is
// "delivered": its key carries the Outgoing's wireId as id, and then the
// network reports it, ~200 ms apart, as acked by the server (1), the device
// (2) and read (3), followed by a reply from the recipient, "echo: <text>".
// Sending a wireId again answers the same key and delivers nothing. A number
// ending in 0000 is not on the network: `rejected`.

import { rejected } from './errors.js';
import { derive, isContact, isGroup, now, offNetwork } from './ids.js';

/** sendable are the Outgoing types this network sends (media and contact
 * cards are answered `rejected`, as the protocol asks of an engine that
 * cannot send a type). */
const sendable = new Set(['text', 'poll', 'location']);

/** maxId is the protocol's bound on identifiers, in bytes. */
const maxId = 256;

/** Messages is the account's sending side. */
export class Messages {
  /** me: the account's chat id; groups: the Groups; report(...events);
   * stepMs: the time between an ack and the next. */
  constructor({ me, groups, report, stepMs = 200 }) {
    this.me = me;
    this.groups = groups;
    this.report = report;
    this.stepMs = stepMs;
    this.sent = new Map(); // wireId -> key
    this.timers = new Set();
  }

  /** send sends one Outgoing and answers its Key. */
  send(out) {
    if (out === null || typeof out !== 'object' || Array.isArray(out)) throw rejected('the message must be an object');
    const { wireId, to, type } = out;
    if (typeof wireId !== 'string' || wireId === '' || Buffer.byteLength(wireId) > maxId) {
      throw rejected('wireId must be a string of 1 to 256 bytes');
    }
    const done = this.sent.get(wireId);
    if (done) return done; // sent before: the same key, no second delivery
    if (typeof to !== 'string') throw rejected('to must be a chat id');
    if (!sendable.has(type)) throw rejected(`this engine cannot send messages of type ${JSON.stringify(type)}`);
    let from = to; // who replies
    if (isGroup(to)) {
      from = this.groups.replier(to); // throws when the account is not in it
    } else if (!isContact(to)) {
      throw rejected(`${to} is not a contact or group chat id of this network`);
    } else if (offNetwork(to)) {
      throw rejected(`${to.split('@')[0]} is not on WhatsApp`);
    }
    const key = { fromMe: true, remote: to, id: wireId };
    this.sent.set(wireId, key);
    this.deliver(key, from, summary(out));
    return key;
  }

  /** sendBatch sends each Outgoing, in order, and answers one {key, error?}
   * per message. */
  sendBatch(list) {
    return list.map((out) => {
      try {
        return { key: this.send(out) };
      } catch (err) {
        const key = { fromMe: true, remote: typeof out?.to === 'string' ? out.to : '', id: typeof out?.wireId === 'string' ? out.wireId : '' };
        return { key, error: err.toWire ? err.toWire() : { code: 'engine_error', message: String(err) } };
      }
    });
  }

  /** deliver reports the acks of a sent message and the recipient's reply. */
  deliver(key, from, text) {
    const tag = key.id.length <= 200 ? key.id : derive('', key.id);
    for (const ack of [1, 2, 3]) {
      this.later(ack * this.stepMs, () => this.report({ id: `ack-${tag}-${ack}`, type: 'ack', at: now(), key, ack }));
    }
    this.later(4 * this.stepMs, () => {
      const reply = { fromMe: false, remote: key.remote, id: derive('ECHO', key.id) };
      if (from !== key.remote) reply.participant = from; // a group's member
      this.report({
        id: `echo-${tag}`,
        type: 'message',
        at: now(),
        key: reply,
        message: { key: reply, from, chat: key.remote, type: 'text', text: `echo: ${text}`, senderName: `Contact ${from.split("@")[0].slice(-4)}` },
      });
    });
  }

  later(ms, fn) {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  /** stop cancels what is still to be reported. */
  stop() {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}

/** summary is what the echo repeats of a message. */
function summary(out) {
  switch (out.type) {
    case 'poll':
      return `poll ${out.pollQuestion ?? ''}`.trim();
    case 'location':
      return `location ${out.location?.latitude},${out.location?.longitude}`;
    default:
      return out.text ?? '';
  }
}
