// End to end against a running server (npm run live): the engine connects
// with SWITCHBOARD_ENGINE_TOKEN, every frame it sends is checked against the
// schema the server serves, and, through the API (SWITCHBOARD_API_KEY), a
// message is sent and read back until it is read (ack 3) and its echo is in
// the chat, and a group is created. Exits 0 when all of it held.

import { Client } from '../lib/client.js';
import { Network } from '../lib/network.js';
import { loadSchema } from './schema.js';

const server = process.env.SWITCHBOARD_SERVER;
const token = process.env.SWITCHBOARD_ENGINE_TOKEN;
const key = process.env.SWITCHBOARD_API_KEY;
const phone = process.env.SWITCHBOARD_ENGINE_PHONE || undefined;
if (!server || !token || !key) {
  console.error('set SWITCHBOARD_SERVER, SWITCHBOARD_ENGINE_TOKEN and SWITCHBOARD_API_KEY');
  process.exit(2);
}
const schema = await loadSchema(); // the server's, since SWITCHBOARD_SERVER is set
const invalid = [];
let sent = 0;
let welcomed;
const ready = new Promise((resolve) => (welcomed = resolve));
const quiet = { info() {}, warn: (m, a) => console.error('warn', m, a ?? ''), error: (m, a) => console.error('error', m, a ?? '') };
const client = new Client({
  server, token, phone, engine: new Network({ phone }), log: quiet,
  onFrame: (dir, frame) => {
    if (dir === 'in' && frame.type === 'welcome') welcomed();
    if (dir !== 'out') return;
    sent++;
    if (!schema.frame(frame)) invalid.push({ frame, errors: schema.frame.errors });
  },
});
const run = client.run();
await ready;

const api = async (method, path, body) => {
  const res = await fetch(new URL(`/v1${path}`, server), {
    method, headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: body && JSON.stringify(body),
  });
  return res.json();
};
/** until polls the API (the server's recorded state) until check holds, for 10 s at most. */
const until = async (what, get, check) => {
  for (const end = Date.now() + 10000; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    const got = await get();
    if (check(got)) return got;
  }
  throw new Error(`timed out: ${what}`);
};

const to = `1555${String(Date.now()).slice(-7)}`;
const msg = await api('POST', `/messages/+${to}`, { type: 'text', text: 'hello from live.js' });
console.log('sent', msg.data?.id, msg.data?.status);
const chat = `/messages?chatId=${to}@c.us`;
await until('ack 3', () => api('GET', chat), (r) => r.data?.some((m) => m.fromMe && m.ack === 3));
await until('the echo', () => api('GET', chat), (r) => r.data?.some((m) => !m.fromMe && m.text === 'echo: hello from live.js'));
console.log('read (ack 3), and the echo is in the chat');
const group = await api('POST', '/groups', { name: 'live.js group', participants: [`+${to}`] });
console.log('group', group.data?.id ?? JSON.stringify(group.error), 'participants', group.data?.participantCount);
client.stop();
await run;
console.log(`${sent} frames sent, ${invalid.length} not valid against protocol.json`);
for (const i of invalid) console.log(JSON.stringify(i));
process.exit(invalid.length === 0 && group.success ? 0 : 1);
