// Identifiers of the simulated network.

import { createHash } from 'node:crypto';

/** derive is a stable id made of seed: the same seed, the same id (so an event
 * or a message reported again carries the id it had). */
export function derive(prefix, seed, length = 20) {
  return prefix + createHash('sha256').update(seed).digest('hex').slice(0, length).toUpperCase();
}

/** isContact reports whether id is a contact chat id, <digits>@c.us. */
export const isContact = (id) => typeof id === 'string' && /^[0-9]{5,20}@c\.us$/.test(id);

/** isGroup reports whether id is a group chat id, <digits>@g.us. */
export const isGroup = (id) => typeof id === 'string' && /^[0-9]{5,30}@g\.us$/.test(id);

/** offNetwork reports whether a contact is "not on WhatsApp" in the
 * simulation: its number ends in 0000. */
export const offNetwork = (id) => /0000@c\.us$/.test(id);

/** now is the current time in RFC 3339. */
export const now = () => new Date().toISOString();
