// A stand-in for the Switchboard server's side of the engine protocol, for
// the tests: it checks the token, welcomes the hello, records every frame
// the engine sends, acks events frames (or not, as a test asks) and sends
// commands, and lets a test wait until what it recorded holds.

import { WebSocketServer } from 'ws';

/** FakeServer listens on a random local port. */
export class FakeServer {
  constructor({ token = 'sb_engine_test', welcome = {} } = {}) {
    this.token = token;
    this.welcome = { type: 'welcome', engineId: 'eng_test', workspaceId: 'ws_test', version: 1, versions: [1], heartbeatMs: 50, ttlMs: 150, maxFrame: 1 << 20, maxBatch: 1000, ...welcome };
    this.frames = []; // { conn, frame } the engine sent, in order
    this.connections = 0;
    this.waiters = [];
    this.ackWith = null; // (frame) => ack fields, or undefined for a plain ack; null acks plainly
    this.commands = 0;
    this.wss = new WebSocketServer({
      port: 0,
      host: '127.0.0.1',
      path: '/v1/engines/connect',
      verifyClient: (info, cb) => {
        if (info.req.headers.authorization === `Bearer ${this.token}`) cb(true);
        else cb(false, 401, 'Unauthorized');
      },
    });
    this.wss.on('connection', (ws) => this.serve(ws));
  }

  /** url is the server's base URL (http). */
  async url() {
    if (!this.wss.address()) await new Promise((resolve) => this.wss.once('listening', resolve));
    return `http://127.0.0.1:${this.wss.address().port}`;
  }

  serve(ws) {
    const conn = ++this.connections;
    this.ws = ws;
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString('utf8'));
      this.frames.push({ conn, frame });
      if (frame.type === 'hello') ws.send(JSON.stringify(this.welcome));
      if (frame.type === 'events') {
        const extra = this.ackWith ? this.ackWith(frame) : undefined;
        if (extra !== false) ws.send(JSON.stringify({ type: 'events_ack', id: frame.id, ...(extra ?? {}) }));
      }
      if (frame.type === 'state') ws.send(JSON.stringify({ type: 'state_ack', id: frame.id, extraField: 'ignored' }));
      for (const w of [...this.waiters]) w();
    });
  }

  /** send sends a raw frame (an object, or a string as is) to the engine. */
  send(frame) {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** command sends a command and answers its reply frame. */
  async command(method, params, extra = {}) {
    const id = `cmd_${++this.commands}`;
    this.send({ type: 'command', id, method, params, deadline: new Date(Date.now() + 5000).toISOString(), ...extra });
    const { frame } = await this.until((f) => f.frame.type === 'reply' && f.frame.id === id);
    return frame;
  }

  /** until resolves with the first recorded frame that matches, once there is one. */
  until(match, what = 'a frame') {
    return new Promise((resolve, reject) => {
      const check = () => {
        const hit = this.frames.find(match);
        if (!hit) return false;
        this.waiters = this.waiters.filter((w) => w !== check);
        clearTimeout(timer);
        resolve(hit);
        return true;
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== check);
        reject(new Error(`timed out waiting for ${what}`));
      }, 5000);
      if (!check()) this.waiters.push(check);
    });
  }

  /** events are every event the engine reported, in order. */
  events() {
    return this.frames.filter((f) => f.frame.type === 'events').flatMap((f) => f.frame.events);
  }

  /** eventUntil resolves once an event that matches was reported. */
  eventUntil(match, what = 'an event') {
    return this.until((f) => f.frame.type === 'events' && f.frame.events.some(match), what);
  }

  /** close closes the engine's socket with a code. */
  close(code, reason = '') {
    this.ws.close(code, reason);
  }

  stop() {
    for (const c of this.wss.clients) c.terminate();
    return new Promise((resolve) => this.wss.close(resolve));
  }
}
