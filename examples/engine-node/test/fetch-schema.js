// Refreshes test/protocol.json from a running server:
//   SWITCHBOARD_SERVER=http://localhost:8080 npm run schema

import { writeFile } from 'node:fs/promises';

const server = process.env.SWITCHBOARD_SERVER ?? 'http://localhost:8080';
const res = await fetch(new URL('/v1/engines/protocol.json', server));
if (!res.ok) throw new Error(`GET protocol.json: ${res.status}`);
await writeFile(new URL('./protocol.json', import.meta.url), `${JSON.stringify(await res.json(), null, 2)}\n`);
