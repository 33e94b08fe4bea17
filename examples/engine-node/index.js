// A Switchboard engine in Node, written from docs/engine-protocol.md: it
// serves a small simulated network (see README.md) over the engine protocol.
//
// Configuration, as for the Go engines:
//   SWITCHBOARD_SERVER        the server's base URL (http://localhost:8080)
//   SWITCHBOARD_ENGINE_TOKEN  the remote engine's token (sb_engine_…)
//   SWITCHBOARD_ENGINE_PHONE  optional: the account's own number, E.164

import { Client } from './lib/client.js';
import { defaultPhone, Network } from './lib/network.js';
import { logger } from './lib/log.js';

const log = logger();
const server = process.env.SWITCHBOARD_SERVER;
const token = process.env.SWITCHBOARD_ENGINE_TOKEN;
const phone = process.env.SWITCHBOARD_ENGINE_PHONE || undefined;

if (!server || !token) {
  log.error('SWITCHBOARD_SERVER and SWITCHBOARD_ENGINE_TOKEN must be set');
  process.exit(2);
}
if (phone !== undefined && !/^\+[1-9][0-9]{6,14}$/.test(phone)) {
  log.error('SWITCHBOARD_ENGINE_PHONE must be an E.164 number such as +15550001111');
  process.exit(2);
}

const network = new Network({ phone: phone ?? defaultPhone });
const client = new Client({ server, token, phone, engine: network, log });
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => client.stop());
}
const end = await client.run();
network.stop();
// Logged out or deleted through the API is an ordinary end; a token or a
// protocol version the server refuses is not.
process.exit(end.code === 1000 || end.code === 4000 || end.code === 4002 ? 0 : 1);
