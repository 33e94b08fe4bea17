// The protocol client (docs/engine-protocol.md): one WebSocket to
// <server>/v1/engines/connect at a time, authenticated by the engine token in
// the Authorization header. It says hello, waits for the welcome, heartbeats,
// answers commands (concurrently, each once, by id), reports events through
// the Outbox and its session in `state` frames, ignores frames and fields it
// does not know, and reconnects with backoff after any close but the final
// ones.

import WebSocket from 'ws';

import { Backoff } from './backoff.js';
import { unsupported, wireError } from './errors.js';
import { Outbox } from './outbox.js';

/** finalCodes are the close codes after which an engine must not reconnect:
 * logged out, bad token, deleted, no protocol version in common. */
export const finalCodes = new Map([
  [4000, 'logged out through the API'],
  [4001, 'missing, malformed or unknown token'],
  [4002, 'engine deleted through the API'],
  [4005, 'no protocol version in common'],
]);

/** connectURL is the WebSocket URL of an http(s) server base URL. */
export function connectURL(server) {
  const u = new URL(server);
  if (u.protocol === 'http:') u.protocol = 'ws:';
  else if (u.protocol === 'https:') u.protocol = 'wss:';
  else if (u.protocol !== 'ws:' && u.protocol !== 'wss:') throw new Error(`SWITCHBOARD_SERVER: unknown scheme ${u.protocol}`);
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/v1/engines/connect`;
  return u.toString();
}

/** Client serves an engine (the simulated network) over the protocol.
 *
 * engine: { capabilities: string[], methods: { [method]: (params) => Promise<any[]> },
 *           attach(report): report(...events) queues events }. */
export class Client {
  constructor({ server, token, phone, engine, kind = 'regular', log = console, backoff = new Backoff(), onFrame = () => {} }) {
    this.url = connectURL(server);
    this.token = token;
    this.phone = phone;
    this.engine = engine;
    this.kind = kind;
    this.log = log;
    this.backoff = backoff;
    this.onFrame = onFrame; // sees every frame sent and received (tests)
    this.outbox = new Outbox({ log: (msg, attrs) => log.warn(msg, attrs) });
    this.ws = null;
    this.welcome = null;
    this.stopped = false;
    this.states = 0;
    engine.attach((...events) => this.outbox.push(...events));
  }

  /** run connects and serves until a final close or stop(); it resolves with
   * the reason of the end. */
  async run() {
    while (!this.stopped) {
      const end = await this.connectOnce();
      if (this.stopped) return { code: 1000, reason: 'stopped' };
      if (end.final) {
        this.log.error('engine stopped: the server will not take it again', end);
        return end;
      }
      // 4004: the same engine connected again; the newer connection wins, and
      // taking it back at once would only start a fight.
      const wait = end.code === 4004 ? this.backoff.patient() : this.backoff.next();
      this.log.warn('disconnected; reconnecting', { ...end, inMs: wait });
      await new Promise((resolve) => {
        this.wake = resolve;
        this.sleep = setTimeout(resolve, wait);
      });
    }
    return { code: 1000, reason: 'stopped' };
  }

  /** stop closes the connection and ends run. */
  stop() {
    this.stopped = true;
    clearTimeout(this.sleep);
    this.wake?.();
    this.ws?.close(1000, 'engine stopping');
  }

  /** connectOnce runs one connection until it closes. */
  connectOnce() {
    return new Promise((resolve) => {
      const ws = new WebSocket(this.url, {
        headers: { Authorization: `Bearer ${this.token}` },
        handshakeTimeout: 10000,
      });
      this.ws = ws;
      let heartbeat = null;
      let settled = false;
      const finish = (end) => {
        if (settled) return;
        settled = true;
        clearInterval(heartbeat);
        this.outbox.close();
        this.welcome = null;
        this.ws = null;
        resolve(end);
      };
      ws.on('unexpected-response', (_req, res) => {
        // A bad token is answered 401 before the upgrade: as final as 4001.
        const end = { code: res.statusCode, reason: `HTTP ${res.statusCode} before the upgrade`, final: res.statusCode === 401 };
        res.resume();
        ws.terminate();
        finish(end);
      });
      ws.on('error', (err) => finish({ code: 1006, reason: err.message, final: false }));
      ws.on('open', () => {
        const hello = { type: 'hello', kind: this.kind, capabilities: this.engine.capabilities, versions: [1] };
        if (this.phone) hello.phone = this.phone;
        this.write(ws, hello);
      });
      ws.on('message', (data, isBinary) => {
        if (isBinary) return; // the protocol is text frames only
        let frame;
        try {
          frame = JSON.parse(data.toString('utf8'));
        } catch {
          this.log.warn('server frame is not JSON; ignored');
          return;
        }
        if (frame === null || typeof frame !== 'object' || Array.isArray(frame)) return;
        this.onFrame('in', frame);
        switch (frame.type) {
          case 'welcome':
            this.welcome = frame;
            this.backoff.reset();
            this.log.info('welcomed', { engineId: frame.engineId, version: frame.version, heartbeatMs: frame.heartbeatMs });
            if (frame.deprecated) this.log.warn('the server will stop serving this protocol version', { version: frame.version });
            heartbeat = setInterval(() => this.write(ws, { type: 'heartbeat' }), Math.max(frame.heartbeatMs || 10000, 100));
            // The session is up: say so, then report what waits.
            this.write(ws, { type: 'state', id: `st_${++this.states}`, state: this.engine.state() });
            this.outbox.open((f) => this.write(ws, f), frame);
            break;
          case 'command':
            this.serve(ws, frame);
            break;
          case 'events_ack':
            this.outbox.ack(frame);
            break;
          case 'state_ack':
            if (frame.error) this.log.warn('state not applied', frame.error);
            break;
          case 'unsupported':
            this.log.warn('the server does not know a frame type of ours', { frameType: frame.frameType });
            break;
          default:
            // A later version's frame: ignored.
            break;
        }
      });
      ws.on('close', (code, reason) => {
        const why = reason.toString('utf8');
        finish({ code, reason: finalCodes.get(code) ?? why, detail: why, final: finalCodes.has(code) });
      });
    });
  }

  /** write sends a frame if the socket is open; it reports whether it could. */
  write(ws, frame) {
    if (ws.readyState !== WebSocket.OPEN) return false;
    this.onFrame('out', frame);
    ws.send(JSON.stringify(frame));
    return true;
  }

  /** serve answers one command, concurrently with the others. */
  async serve(ws, frame) {
    const { id, method } = frame;
    if (typeof id !== 'string') return; // nothing to answer it with
    let reply;
    try {
      const handler = typeof method === 'string' && Object.hasOwn(this.engine.methods, method) ? this.engine.methods[method] : null;
      if (!handler) throw unsupported(String(method));
      const result = await handler(frame.params ?? []);
      reply = { type: 'reply', id, result: result ?? [] };
    } catch (err) {
      if (!err?.code) this.log.error('command failed', { method, err: String(err?.stack ?? err) });
      reply = { type: 'reply', id, error: wireError(err) };
    }
    // After the deadline the server has given up: the reply would be dropped.
    const deadline = Date.parse(frame.deadline ?? '');
    if (!Number.isNaN(deadline) && Date.now() > deadline) return;
    this.write(ws, reply);
  }
}
