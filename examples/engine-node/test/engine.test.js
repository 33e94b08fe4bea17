// The engine against a stand-in server (test/fakeserver.js): every frame it
// sends must validate against the protocol's JSON Schema, and it must behave
// as docs/engine-protocol.md says.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { Backoff } from '../lib/backoff.js';
import { Client } from '../lib/client.js';
import { Network } from '../lib/network.js';
import { FakeServer } from './fakeserver.js';
import { loadSchema } from './schema.js';

const quiet = { info() {}, warn() {}, error() {} };

describe('engine', () => {
  let schema;
  let server;
  let network;
  let client;
  let run;

  before(async () => {
    schema = await loadSchema();
    server = new FakeServer();
    network = new Network({ phone: '+15550009999', stepMs: 10 });
    client = new Client({
      server: await server.url(),
      token: 'sb_engine_test',
      phone: '+15550009999',
      engine: network,
      log: quiet,
      backoff: new Backoff({ firstMs: 20, maxMs: 100 }),
    });
    run = client.run();
    await server.until((f) => f.frame.type === 'state', 'the state after the welcome');
  });

  after(async () => {
    client.stop();
    await run;
    network.stop();
    await server.stop();
    // Every frame the engine sent, whatever the test that caused it.
    const bad = server.frames.filter(({ frame }) => !schema.frame(frame));
    assert.deepEqual(bad.map((b) => b.frame), [], 'frames that do not validate against protocol.json');
  });

  /** valid asserts that a reply's result validates against result.<method>. */
  const valid = (method, reply) => {
    assert.equal(reply.error, undefined, JSON.stringify(reply.error));
    const check = schema.def(`result.${method}`);
    assert.ok(check(reply.result), JSON.stringify(check.errors));
  };

  it('says hello with its capabilities, versions and phone', () => {
    const hello = server.frames[0].frame;
    assert.deepEqual(hello, { type: 'hello', kind: 'regular', capabilities: ['send', 'send_batch', 'groups', 'check_numbers'], versions: [1], phone: '+15550009999' });
    assert.ok(schema.frame(hello));
  });

  it('reports its state and the existing group after the welcome', async () => {
    const state = server.frames.find((f) => f.frame.type === 'state').frame;
    assert.deepEqual(state.state, { status: 'connected', hasSynced: true });
    await server.eventUntil((e) => e.type === 'chat' && e.chat.id === '120363000000000001@g.us', 'the lobby chat');
  });

  it('heartbeats every heartbeatMs', async () => {
    const seen = server.frames.filter((f) => f.frame.type === 'heartbeat').length;
    await server.until((f) => f.frame.type === 'heartbeat' && server.frames.filter((g) => g.frame.type === 'heartbeat').length > seen + 1, 'two more heartbeats');
  });

  it('sends a text: key by wireId, acks 1 2 3, then an echo', async () => {
    const out = { wireId: '3EB0AAA', to: '15550002222@c.us', type: 'text', text: 'hi' };
    const reply = await server.command('Send', [out]);
    valid('Send', reply);
    assert.deepEqual(reply.result, [{ fromMe: true, remote: '15550002222@c.us', id: '3EB0AAA' }]);
    await server.eventUntil((e) => e.type === 'message' && e.message.text === 'echo: hi', 'the echo');
    const acks = server.events().filter((e) => e.type === 'ack' && e.key.id === '3EB0AAA').map((e) => e.ack);
    assert.deepEqual(acks, [1, 2, 3]);
    const again = await server.command('Send', [out]);
    assert.deepEqual(again.result, reply.result, 'the same wireId answers the same key');
  });

  it('never delivers one wireId twice', async () => {
    const out = { wireId: '3EB0TWICE', to: '15550002223@c.us', type: 'text', text: 'once' };
    await server.command('Send', [out]);
    await server.command('Send', [out]);
    await server.eventUntil((e) => e.type === 'message' && e.message.text === 'echo: once', 'the echo');
    const more = await server.command('Send', [{ wireId: '3EB0AFTER', to: '15550002223@c.us', type: 'text', text: 'after' }]);
    valid('Send', more);
    await server.eventUntil((e) => e.type === 'message' && e.message.text === 'echo: after', 'the next echo');
    assert.equal(server.events().filter((e) => e.type === 'message' && e.message.text === 'echo: once').length, 1);
  });

  const errors = [
    { name: 'not on WhatsApp', method: 'Send', params: [{ wireId: 'w1', to: '15550010000@c.us', type: 'text', text: 'x' }], code: 'rejected' },
    { name: 'a type it cannot send', method: 'Send', params: [{ wireId: 'w2', to: '15550002222@c.us', type: 'media', mediaUrl: 'https://x/a.jpg' }], code: 'rejected' },
    { name: 'params not an array', method: 'Send', params: { wireId: 'w3' }, code: 'rejected' },
    { name: 'a param of the wrong type', method: 'Send', params: ['not an object'], code: 'rejected' },
    { name: 'no params at all', method: 'CreateGroup', params: [], code: 'rejected' },
    { name: 'an unknown method', method: 'Frobnicate', params: [], code: 'unsupported' },
    { name: 'a method of a capability not announced', method: 'MarkRead', params: ['15550002222@c.us'], code: 'unsupported' },
    { name: 'an inherited name', method: 'constructor', params: [], code: 'unsupported' },
    { name: 'an unknown group', method: 'LeaveGroup', params: ['999999@g.us'], code: 'not_found' },
  ];
  for (const tc of errors) {
    it(`answers ${tc.name} with ${tc.code}`, async () => {
      const reply = await server.command(tc.method, tc.params);
      assert.equal(reply.error?.code, tc.code, JSON.stringify(reply));
      assert.equal(reply.result, undefined);
    });
  }

  it('sends a batch: one {key, error?} per message, in order', async () => {
    const reply = await server.command('SendBatch', [[
      { wireId: 'b1', to: '15550003333@c.us', type: 'text', text: 'one' },
      { wireId: 'b2', to: '15550030000@c.us', type: 'text', text: 'two' },
      { wireId: 'b3', to: '15550003333@c.us', type: 'poll', pollQuestion: 'Tea?', pollOptions: ['yes', 'no'] },
    ]]);
    valid('SendBatch', reply);
    assert.deepEqual(reply.result[0].map((s) => [s.key.id, s.error?.code]), [['b1', undefined], ['b2', 'rejected'], ['b3', undefined]]);
  });

  it('checks numbers: on the network unless they end in 0000', async () => {
    const reply = await server.command('CheckNumbers', [['15550002222', '15550020000', 'nonsense']]);
    valid('CheckNumbers', reply);
    assert.deepEqual(reply.result[0], [
      { phone: '15550002222', onNetwork: true, chatId: '15550002222@c.us' },
      { phone: '15550020000', onNetwork: false },
      { phone: 'nonsense', onNetwork: false },
    ]);
  });

  it('serves commands concurrently and ignores unknown fields and frame types', async () => {
    server.send({ type: 'from_a_later_version', id: 'x1', surprise: true });
    server.send('not json');
    const [a, b] = await Promise.all([
      server.command('Send', [{ wireId: 'c1', to: '15550004444@c.us', type: 'text', text: 'a', futureField: 1 }], { futureField: 2 }),
      server.command('Send', [{ wireId: 'c2', to: '15550004444@c.us', type: 'location', location: { latitude: 1, longitude: 2 } }]),
    ]);
    valid('Send', a);
    valid('Send', b);
  });

  it('runs a group: create, add, admin, update, picture, remove, leave', async () => {
    const created = await server.command('CreateGroup', ['Team', ['15550005555@c.us', '15550050000@c.us']]);
    valid('CreateGroup', created);
    const [gid, added] = created.result;
    assert.deepEqual(added.map((a) => [a.participant, a.added, a.code]), [['15550005555@c.us', true, undefined], ['15550050000@c.us', false, 'not_on_network']]);
    await server.eventUntil((e) => e.type === 'group' && e.group.action === 'created' && e.group.chat?.id === gid, 'created');
    const steps = [
      ['AddParticipants', [gid, ['15550006666@c.us']], 'added'],
      ['SetAdmin', [gid, '15550006666@c.us', true], 'admin_changed'],
      ['UpdateGroup', [gid, { name: 'Team 2' }], 'name_changed'],
      ['UpdateGroup', [gid, { announce: true }], 'settings_changed'],
      ['SetGroupPicture', [gid, { data: 'aGVsbG8=', mimeType: 'image/jpeg' }], null],
      ['RemoveParticipant', [gid, '15550005555@c.us'], 'kicked'],
      ['LeaveGroup', [gid], 'left'],
    ];
    for (const [method, params, action] of steps) {
      const reply = await server.command(method, params);
      valid(method, reply);
      if (action) await server.eventUntil((e) => e.type === 'group' && e.group.groupId === gid && e.group.action === action, action);
    }
    const gone = await server.command('AddParticipants', [gid, ['15550007777@c.us']]);
    assert.equal(gone.error?.code, 'group_rule');
    assert.equal(gone.error?.rule, 'not_a_member');
    valid('LeaveGroup', await server.command('LeaveGroup', [gid])); // left already: nothing to do
  });

  it('answers a group command only once the server acked its events', async () => {
    let held = null;
    server.ackWith = (frame) => {
      if (held || !frame.events.some((e) => e.type === 'group' && e.group.action === 'created')) return undefined;
      held = frame;
      return false; // not acked yet
    };
    const creating = server.command('CreateGroup', ['Held', ['15550002003@c.us']]);
    await server.until(() => held, 'the created event');
    // A command sent after it is answered meanwhile; CreateGroup is not.
    valid('Send', await server.command('Send', [{ wireId: 'h1', to: '15550002003@c.us', type: 'text', text: 'h' }]));
    const id = `cmd_${server.commands - 1}`;
    assert.equal(server.frames.some((f) => f.frame.type === 'reply' && f.frame.id === id), false, 'CreateGroup answered before its event was acked');
    server.ackWith = null;
    server.send({ type: 'events_ack', id: held.id });
    valid('CreateGroup', await creating);
  });

  const rules = [
    { name: 'a participant not in the group', method: 'RemoveParticipant', params: (g) => [g, '15550001111@c.us'], rule: 'not_a_participant' },
    { name: 'the account itself', method: 'RemoveParticipant', params: (g) => [g, '15550009999@c.us'], rule: 'self' },
    { name: 'a member made admin twice', method: 'SetAdmin', params: (g) => [g, '15550002001@c.us', true], rule: 'already_an_admin', first: true },
    { name: 'a demoted member not an admin', method: 'SetAdmin', params: (g) => [g, '15550002002@c.us', false], rule: 'participant_not_an_admin' },
  ];
  for (const tc of rules) {
    it(`answers group_rule ${tc.rule} for ${tc.name}`, async () => {
      const created = await server.command('CreateGroup', ['Rules', ['15550002001@c.us', '15550002002@c.us']]);
      const gid = created.result[0];
      if (tc.first) valid(tc.method, await server.command(tc.method, tc.params(gid)));
      const reply = await server.command(tc.method, tc.params(gid));
      assert.deepEqual([reply.error?.code, reply.error?.rule], ['group_rule', tc.rule]);
    });
  }

  it('resends an events frame acked with an error, with the same ids', async () => {
    let refused = null;
    server.ackWith = (frame) => {
      if (!refused && frame.events.some((e) => e.type === 'ack' && e.key.id === 'r1')) {
        refused = frame;
        return { error: { code: 'engine_error', message: 'storage failed' } };
      }
      return undefined;
    };
    await server.command('Send', [{ wireId: 'r1', to: '15550008888@c.us', type: 'text', text: 'r' }]);
    await server.until((f) => f.frame.type === 'events' && refused && f.frame.id !== refused.id && f.frame.events.some((e) => e.id === refused.events[0].id), 'the resent event');
    server.ackWith = null;
  });

  it('does not report a refused event again', async () => {
    server.ackWith = (frame) => {
      const i = frame.events.findIndex((e) => e.type === 'ack' && e.key.id === 'x1' && e.ack === 1);
      return i < 0 ? undefined : { rejected: [{ index: i, id: frame.events[i].id, reason: 'refused' }] };
    };
    await server.command('Send', [{ wireId: 'x1', to: '15550009998@c.us', type: 'text', text: 'x' }]);
    await server.eventUntil((e) => e.type === 'message' && e.message.text === 'echo: x', 'the echo');
    await client.outbox.drained();
    assert.equal(server.events().filter((e) => e.id === 'ack-x1-1').length, 1);
    server.ackWith = null;
  });

  it('resends unacked events after a reconnect, and reconnects after 4003', async () => {
    server.ackWith = (frame) => (frame.events.some((e) => e.key?.id === 'u1') ? false : undefined);
    await server.command('Send', [{ wireId: 'u1', to: '15550001234@c.us', type: 'text', text: 'u' }]);
    await server.eventUntil((e) => e.key?.id === 'u1', 'the unacked event');
    server.ackWith = null;
    const before = server.connections;
    server.close(4003, 'no heartbeat');
    await server.until((f) => f.conn > before && f.frame.type === 'hello', 'a new hello');
    await server.until((f) => f.conn > before && f.frame.type === 'events' && f.frame.events.some((e) => e.key?.id === 'u1'), 'the event sent again');
  });
});

describe('final closes', () => {
  for (const code of [4000, 4001, 4002, 4005]) {
    it(`stops after ${code}`, async () => {
      const server = new FakeServer();
      const client = new Client({ server: await server.url(), token: 'sb_engine_test', engine: new Network({ stepMs: 10 }), log: quiet, backoff: new Backoff({ firstMs: 10, maxMs: 20 }) });
      const run = client.run();
      await server.until((f) => f.frame.type === 'state', 'welcomed');
      server.close(code, 'final');
      const end = await run;
      assert.equal(end.code, code);
      assert.equal(end.final, true);
      assert.equal(server.connections, 1);
      await server.stop();
    });
  }

  it('stops on a token answered 401', async () => {
    const server = new FakeServer({ token: 'sb_engine_other' });
    const client = new Client({ server: await server.url(), token: 'sb_engine_test', engine: new Network(), log: quiet });
    const end = await client.run();
    assert.equal(end.code, 401);
    assert.equal(end.final, true);
    await server.stop();
  });
});

describe('backoff', () => {
  it('doubles from 1 s to 30 s with equal jitter', () => {
    const low = new Backoff({ random: () => 0 });
    const high = new Backoff({ random: () => 1 });
    const lows = Array.from({ length: 7 }, () => low.next());
    const highs = Array.from({ length: 7 }, () => high.next());
    assert.deepEqual(lows, [500, 1000, 2000, 4000, 8000, 15000, 15000]);
    assert.deepEqual(highs, [1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    low.reset();
    assert.equal(low.next(), 500);
    assert.deepEqual([low.patient(), high.patient()], [15000, 30000]);
  });
});
