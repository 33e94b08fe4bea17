// The protocol's JSON Schema, for checking what the engine sends: the one a
// running server serves (SWITCHBOARD_SERVER set) or else the copy in
// test/protocol.json (refresh it with `npm run schema`).

import { readFile } from 'node:fs/promises';

import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/** loadSchema answers {frame, def(name)}: validators of a whole frame and of
 * one of $defs (Event, result.Send, …). */
export async function loadSchema() {
  const server = process.env.SWITCHBOARD_SERVER;
  let doc;
  if (server) {
    const res = await fetch(new URL('/v1/engines/protocol.json', server));
    if (!res.ok) throw new Error(`GET protocol.json: ${res.status}`);
    doc = await res.json();
  } else {
    doc = JSON.parse(await readFile(new URL('./protocol.json', import.meta.url), 'utf8'));
  }
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  const id = doc.$id ?? 'protocol';
  ajv.addSchema(doc, doc.$id ? undefined : id);
  const frame = ajv.compile({ $ref: id });
  const def = (name) => ajv.compile({ $ref: `${id}#/$defs/${name}` });
  return { frame, def, doc };
}
