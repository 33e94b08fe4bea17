// The events queue alone: frames within maxBatch and maxFrame, resends with
// the same ids, refused and oversized events not sent again.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { Outbox } from '../lib/outbox.js';

const ev = (id, text = '') => ({ id, type: 'message', message: { key: { remote: '1@c.us', id }, from: '1@c.us', type: 'text', text } });

/** open is an outbox open on a recorder of the frames it sends; sentN(n)
 * resolves once n frames were sent. */
function open(limits) {
  const sent = [];
  const waiters = [];
  const box = new Outbox();
  box.open((f) => {
    sent.push(f);
    for (const w of waiters.filter((x) => sent.length >= x.n)) w.resolve();
    return true;
  }, limits);
  const sentN = (n) => (sent.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve })));
  return { box, sent, sentN };
}

describe('outbox', () => {
  const cases = [
    { name: 'maxBatch', limits: { maxBatch: 2, maxFrame: 1 << 20 }, events: ['a', 'b', 'c'].map((id) => ev(id)), frames: [['a', 'b'], ['c']] },
    { name: 'maxFrame', limits: { maxBatch: 100, maxFrame: 1024 + 64 + 300 }, events: ['a', 'b', 'c'].map((id) => ev(id, 'x'.repeat(150))), frames: [['a'], ['b'], ['c']] },
    { name: 'an event larger than maxFrame', limits: { maxBatch: 100, maxFrame: 1300 }, events: [ev('big', 'x'.repeat(500)), ev('s')], frames: [['s']] },
  ];
  for (const tc of cases) {
    it(`splits frames by ${tc.name}`, () => {
      const { box, sent } = open(tc.limits);
      box.push(...tc.events);
      assert.deepEqual(sent.map((f) => f.events.map((e) => e.id)), tc.frames);
    });
  }

  it('resends a frame acked with an error, with the same ids, in smaller frames after payload_too_large', async () => {
    const { box, sent, sentN } = open({ maxBatch: 4, maxFrame: 1 << 20 });
    const acked = box.push(ev('a'), ev('b'), ev('c'), ev('d'));
    box.ack({ id: sent[0].id, error: { code: 'payload_too_large', message: 'too many' } });
    await sentN(3);
    assert.deepEqual(sent.map((f) => f.events.map((e) => e.id)), [['a', 'b', 'c', 'd'], ['a', 'b'], ['c', 'd']]);
    box.ack({ id: sent[1].id });
    box.ack({ id: sent[2].id, rejected: [{ index: 0, id: 'c', reason: 'refused' }] });
    await acked;
    await box.drained();
  });

  it('requeues what was not acked when the connection ends, in order', () => {
    const { box, sent } = open({ maxBatch: 1, maxFrame: 1 << 20 });
    box.push(ev('a'), ev('b'));
    box.ack({ id: sent[0].id });
    box.close();
    const again = [];
    box.open((f) => again.push(f) > 0, { maxBatch: 10, maxFrame: 1 << 20 });
    assert.deepEqual(again.map((f) => f.events.map((e) => e.id)), [['b']]);
  });
});
