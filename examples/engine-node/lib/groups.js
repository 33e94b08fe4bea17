// Groups on the simulated network (capability `groups`): CreateGroup,
// AddParticipants, RemoveParticipant, SetAdmin, UpdateGroup, SetGroupPicture
// and LeaveGroup. Every change is reported as a `group` event (a GroupChange),
// as the network would tell it, with the account as `by`, and each command
// answers once the server acked its events: the API reads the group back once
// it has the reply. The account starts in one existing group, reported at
// start as a `chat` event.

import { groupRule, notFound, rejected } from './errors.js';
import { derive, isContact, isGroup, now, offNetwork } from './ids.js';

/** Groups is the account's groups. */
export class Groups {
  /** me: the account's chat id; report(...events). */
  constructor({ me, report }) {
    this.me = me;
    this.report = report;
    this.groups = new Map(); // id -> { id, name, description, announce, restrict, members: Map<jid, admin> }
    this.created = 0;
    this.changes = 0;
  }

  /** seed adds the group the account is in when the engine starts and
   * reports it as a chat. */
  seed() {
    const id = '120363000000000001@g.us';
    const members = new Map([
      [this.me, true],
      ['15550001001@c.us', false],
      ['15550001002@c.us', false],
    ]);
    const g = { id, name: 'Node engine lobby', description: 'The simulated network\'s group', owner: this.me, announce: false, restrict: false, members };
    this.groups.set(id, g);
    this.report({ id: `chat-${id}`, type: 'chat', at: now(), chat: this.chat(g) });
  }

  /** chat is a group's ChatState. */
  chat(g) {
    return {
      id: g.id,
      kind: 'group',
      name: g.name,
      description: g.description,
      participants: [...g.members].map(([id, admin]) => ({ id, isAdmin: admin, isSuperAdmin: id === g.owner })),
      owner: g.owner,
      announce: g.announce,
      restrict: g.restrict,
    };
  }

  /** known is a group of the network, whether the account is in it or not. */
  known(groupId) {
    if (!isGroup(groupId)) throw rejected(`${JSON.stringify(groupId)} is not a group id`);
    const g = this.groups.get(groupId);
    if (!g) throw notFound(`no group ${groupId}`);
    return g;
  }

  /** get is a group the account is in. */
  get(groupId) {
    const g = this.known(groupId);
    if (!g.members.has(this.me)) throw groupRule('not_a_member', '', 'the account is not in this group');
    return g;
  }

  /** admin is a group the account is an admin of. */
  admin(groupId) {
    const g = this.get(groupId);
    if (!g.members.get(this.me)) throw groupRule('not_an_admin', '', 'the account is not an admin of this group');
    return g;
  }

  /** other is a participant the account acts on: in the group, not the
   * account itself (it leaves with LeaveGroup), not the creator. */
  other(g, participant) {
    if (participant === this.me) throw groupRule('self', participant, 'the account acts on itself through LeaveGroup');
    if (!g.members.has(participant)) throw groupRule('not_a_participant', participant, `${participant} is not in the group`);
    if (participant === g.owner) throw groupRule('group_creator', participant, 'the creator cannot be removed or demoted');
  }

  /** replier is the member who answers a message sent to the group. */
  replier(groupId) {
    const g = this.get(groupId);
    return [...g.members.keys()].find((m) => m !== this.me) ?? this.me;
  }

  /** change reports a group event: action and its fields (GroupChange); it
   * resolves once the server acked it. */
  change(g, action, fields = {}) {
    return this.report({
      id: `grp-${derive('', `${g.id}/${++this.changes}/${Date.now()}`)}`,
      type: 'group',
      at: now(),
      group: { groupId: g.id, action, by: this.me, me: this.me, ...fields },
    });
  }

  /** add adds contacts to a group and answers one Added each. */
  add(g, participants) {
    const added = [];
    const joined = [];
    for (const p of participants) {
      if (!isContact(p) || offNetwork(p)) {
        added.push({ participant: p, added: false, code: 'not_on_network', message: 'not on WhatsApp' });
      } else if (g.members.has(p)) {
        added.push({ participant: p, added: false, code: 'already_a_member', message: 'already a member' });
      } else {
        g.members.set(p, false);
        joined.push(p);
        added.push({ participant: p, added: true });
      }
    }
    return { added, joined };
  }

  /** create is CreateGroup: [groupId, Added[]]. */
  async create(name, participants) {
    if (name.trim() === '') throw rejected('a group needs a name');
    const id = `1203630${String(Date.now()).slice(-9)}${String(++this.created).padStart(3, '0')}@g.us`;
    const g = { id, name, description: '', owner: this.me, announce: false, restrict: false, members: new Map([[this.me, true]]) };
    this.groups.set(id, g);
    const { added } = this.add(g, participants);
    await this.change(g, 'created', { chat: this.chat(g), participants: [...g.members.keys()] });
    return [id, added];
  }

  /** addParticipants is AddParticipants: [Added[]]. */
  async addParticipants(groupId, participants) {
    const g = this.admin(groupId);
    const { added, joined } = this.add(g, participants);
    if (joined.length > 0) await this.change(g, 'added', { participants: joined });
    return [added];
  }

  /** removeParticipant is RemoveParticipant: []. */
  async removeParticipant(groupId, participant) {
    const g = this.admin(groupId);
    this.other(g, participant);
    g.members.delete(participant);
    await this.change(g, 'kicked', { participants: [participant] });
    return [];
  }

  /** setAdmin is SetAdmin: []. */
  async setAdmin(groupId, participant, admin) {
    const g = this.admin(groupId);
    this.other(g, participant);
    if (admin && g.members.get(participant)) throw groupRule('already_an_admin', participant, `${participant} is an admin already`);
    if (!admin && !g.members.get(participant)) throw groupRule('participant_not_an_admin', participant, `${participant} is not an admin`);
    g.members.set(participant, admin);
    await this.change(g, 'admin_changed', { participants: [participant], value: admin ? 'promoted' : 'demoted' });
    return [];
  }

  /** leave is LeaveGroup: []. Leaving a group the account left already does
   * nothing. */
  async leave(groupId) {
    const g = this.known(groupId);
    if (!g.members.has(this.me)) return [];
    g.members.delete(this.me);
    await this.change(g, 'left', { participants: [this.me] });
    return [];
  }

  /** update is UpdateGroup: []. u: a GroupUpdate (absent fields unchanged). */
  async update(groupId, u) {
    const g = this.admin(groupId);
    if (typeof u.name === 'string' && u.name.trim() === '') throw rejected('a group needs a name');
    const changes = [];
    if (typeof u.name === 'string' && u.name !== g.name) {
      g.name = u.name;
      changes.push(['name_changed', { value: u.name }]);
    }
    if (typeof u.description === 'string' && u.description !== g.description) {
      g.description = u.description;
      changes.push(['description_changed', { value: u.description }]);
    }
    const settings = {};
    if (typeof u.announce === 'boolean' && u.announce !== g.announce) settings.announce = g.announce = u.announce;
    if (typeof u.restrict === 'boolean' && u.restrict !== g.restrict) settings.restrict = g.restrict = u.restrict;
    if (Object.keys(settings).length > 0) changes.push(['settings_changed', settings]);
    await Promise.all(changes.map(([action, fields]) => this.change(g, action, fields)));
    return [];
  }

  /** setPicture is SetGroupPicture: []. picture: a Media (no data removes it). */
  setPicture(groupId, picture) {
    const g = this.admin(groupId);
    if (picture.data !== undefined && typeof picture.data !== 'string') throw rejected('picture.data must be base64');
    g.picture = picture.data ? derive('PIC', picture.data) : '';
    return [];
  }
}
