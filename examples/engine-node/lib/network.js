// The simulated network the engine serves: the account, its sends and its
// groups, as the protocol's capabilities and commands (docs/engine-protocol.md,
// "Commands"). Only the capabilities whose every command is implemented here
// are announced; the client answers any other method `unsupported`.

import { Groups } from './groups.js';
import { offNetwork } from './ids.js';
import { Messages } from './messages.js';
import { Params } from './params.js';

/** defaultPhone is the account's number when SWITCHBOARD_ENGINE_PHONE is not set. */
export const defaultPhone = '+15550009999';

/** Network is one simulated account. */
export class Network {
  /** phone: the account's own number, E.164; stepMs: time between acks. */
  constructor({ phone = defaultPhone, stepMs = 200 } = {}) {
    this.me = `${phone.replace(/^\+/, '')}@c.us`;
    this.queue = []; // events reported before the client attached
    this.report = (...events) => {
      this.queue.push(...events);
      return Promise.resolve();
    };
    const report = (...events) => this.report(...events);
    this.groups = new Groups({ me: this.me, report });
    this.messages = new Messages({ me: this.me, groups: this.groups, report, stepMs });
    this.groups.seed();

    /** capabilities are what the hello announces. */
    this.capabilities = ['send', 'send_batch', 'groups', 'check_numbers'];

    /** methods are the commands served, by name: each takes the params array
     * and answers the result array. */
    this.methods = {
      Send: (p) => {
        const ps = new Params('Send', p);
        return [this.messages.send(ps.object(0, 'message'))];
      },
      SendBatch: (p) => {
        const ps = new Params('SendBatch', p);
        return [this.messages.sendBatch(ps.objects(0, 'messages'))];
      },
      CreateGroup: (p) => {
        const ps = new Params('CreateGroup', p);
        return this.groups.create(ps.string(0, 'name'), ps.strings(1, 'participants'));
      },
      AddParticipants: (p) => {
        const ps = new Params('AddParticipants', p);
        return this.groups.addParticipants(ps.string(0, 'groupId'), ps.strings(1, 'participants'));
      },
      RemoveParticipant: (p) => {
        const ps = new Params('RemoveParticipant', p);
        return this.groups.removeParticipant(ps.string(0, 'groupId'), ps.string(1, 'participant'));
      },
      SetAdmin: (p) => {
        const ps = new Params('SetAdmin', p);
        return this.groups.setAdmin(ps.string(0, 'groupId'), ps.string(1, 'participant'), ps.bool(2, 'admin'));
      },
      LeaveGroup: (p) => {
        const ps = new Params('LeaveGroup', p);
        return this.groups.leave(ps.string(0, 'groupId'));
      },
      UpdateGroup: (p) => {
        const ps = new Params('UpdateGroup', p);
        return this.groups.update(ps.string(0, 'groupId'), ps.object(1, 'update'));
      },
      CheckNumbers: (p) => {
        const ps = new Params('CheckNumbers', p);
        return [ps.strings(0, 'phones').map((phone) => checkNumber(phone))];
      },
      SetGroupPicture: (p) => {
        const ps = new Params('SetGroupPicture', p);
        return this.groups.setPicture(ps.string(0, 'groupId'), ps.object(1, 'picture'));
      },
    };
  }

  /** attach starts reporting events through report(...events), the ones
   * observed so far first; report answers a promise of their acks. */
  attach(report) {
    this.report = report;
    const queued = this.queue.splice(0);
    if (queued.length > 0) report(...queued);
  }

  /** state is the session the `state` frame reports: always connected, and
   * the (empty) history is synced. */
  state() {
    return { status: 'connected', hasSynced: true };
  }

  /** stop cancels the reports still to come. */
  stop() {
    this.messages.stop();
  }
}

/** checkNumber is a NumberStatus: a number (E.164 digits, no "+") is on the
 * network unless it ends in 0000. */
function checkNumber(phone) {
  const digits = phone.replace(/^\+/, '');
  if (!/^[1-9][0-9]{6,14}$/.test(digits) || offNetwork(`${digits}@c.us`)) return { phone, onNetwork: false };
  return { phone, onNetwork: true, chatId: `${digits}@c.us` };
}
