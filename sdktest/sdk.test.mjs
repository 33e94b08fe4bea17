// Drives a running Switchboard with the official SDK (npm blueticks 4.0.0), one test
// per SDK call whose operation Switchboard serves. sdk_test.go starts the server and
// runs `node --test` here with BLUETICKS_BASE_URL and BLUETICKS_API_KEY set.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Blueticks, AuthenticationError, NotFoundError } from "blueticks";

const client = new Blueticks({ maxRetries: 0 });
const phone = "+15550009876"; // sent as %2B15550009876: the SDK encodes path segments

async function eventually(what, fn) {
  const deadline = Date.now() + 10000;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error("timed out waiting for " + what);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("ping", async () => {
  const p = await client.ping();
  assert.equal(p.api, "ok");
  assert.ok(p.accountId);
});

test("account.retrieve", async () => {
  const a = await client.account.retrieve();
  assert.equal(a.name, "default");
});

test("a wrong key is an AuthenticationError", async () => {
  const bad = new Blueticks({ apiKey: "sb_live_wrong", maxRetries: 0 });
  await assert.rejects(bad.account.retrieve(), (e) => e instanceof AuthenticationError && e.code === "authentication_required");
});

test("scheduledMessages: create, retrieve, list, update, delete", async () => {
  const sendAt = new Date(Date.now() + 3600e3).toISOString();
  const m = await client.scheduledMessages.create(phone, { type: "text", text: "from the SDK", sendAt }, { idempotencyKey: "sdk-1" });
  assert.equal(m.to, "15550009876@c.us");
  assert.equal(m.status, "pending");

  const again = await client.scheduledMessages.retrieve(m.id);
  assert.equal(again.text, "from the SDK");

  const page = await client.scheduledMessages.list({ chatId: "15550009876@c.us", limit: 10 });
  assert.ok(page.data.some((x) => x.id === m.id));

  const edited = await client.scheduledMessages.update(m.id, { text: "edited by the SDK" });
  assert.equal(edited.text, "edited by the SDK");

  const gone = await client.scheduledMessages.delete(m.id);
  assert.deepEqual(gone, { id: m.id, deleted: true });
  await assert.rejects(client.scheduledMessages.delete(m.id), (e) => e.statusCode === 404 || e.statusCode === 409);
});

test("messages.send and messages.get with an encoded key", async () => {
  const sent = await client.messages.send(phone, { type: "text", text: "direct from the SDK" });
  assert.ok(sent.waMessageKey, "a direct send answers with the network key");
  const key = sent.waMessageKey._serialized; // holds "@c.us": sent as %40c.us
  const got = await eventually("the message in the store", async () => {
    try {
      return await client.messages.get(key);
    } catch (e) {
      if (e instanceof NotFoundError) return null;
      throw e;
    }
  });
  assert.equal(got.waMessageKey._serialized, key);
  assert.equal(got.fromMe, true);
});

test("messages.get of an unknown key is a NotFoundError", async () => {
  await assert.rejects(client.messages.get("true_15550000000@c.us_NOPE"), (e) => e instanceof NotFoundError && e.code === "not_found");
});

test("webhooks: create, get, list, update, delete", async () => {
  const h = await client.webhooks.create({ url: "https://hooks.example.test/sb?token=t", events: ["message.read"] });
  assert.equal(h.status, "enabled");
  assert.equal((await client.webhooks.get(h.id)).url, "https://hooks.example.test/sb?token=t");
  const page = await client.webhooks.list({ limit: 10 });
  assert.ok(page.data.some((x) => x.id === h.id));
  const upd = await client.webhooks.update(h.id, { events: ["message.read", "message.failed"], description: "sdk" });
  assert.deepEqual(upd.events, ["message.read", "message.failed"]);
  assert.deepEqual(await client.webhooks.delete(h.id), { id: h.id, deleted: true });
});

test("chats: list, get, markRead, archive; contacts and messages from the store", async () => {
  const chats = await client.chats.list({ limit: 5 });
  assert.equal(chats.data.length, 5);
  assert.ok(chats.total >= chats.data.length);
  const first = chats.data[0];
  const one = await client.chats.get(first.chatId);
  assert.equal(one.chatId, first.chatId);
  const direct = chats.data.find((c) => c.chatId.endsWith("@c.us"));
  if (direct) {
    await client.chats.markRead(direct.chatId);
    await client.chats.archive(direct.chatId);
  }
  const contacts = await client.contacts.list({ limit: 3 });
  assert.equal(contacts.data.length, 3);
  const msgs = await client.messages.list({ chatId: first.chatId, limit: 3 });
  assert.ok(msgs.total >= msgs.data.length);
});

test("newsletters: list, create, retrieve", async () => {
  const list = await client.newsletters.list({ limit: 2 });
  assert.ok(list.total >= list.data.length);
  const created = await client.newsletters.create({ name: "SDK news" });
  assert.match(created.newsletterId, /@newsletter$/);
  const got = await client.newsletters.retrieve(created.newsletterId);
  assert.equal(got.newsletterId, created.newsletterId);
  assert.equal(got.name, "SDK news");
});

test("messages.getMedia parses the media envelope", async () => {
  const page = await client.messages.list({ messageTypes: ["image"], limit: 1 });
  const key = page.data[0].waMessageKey._serialized;
  const media = await client.messages.getMedia(key, { maxAttempts: 1 });
  assert.match(media.url, /\/media\//);
  assert.equal(media.mimetype, "image/png");
  assert.equal(media.mediaUnavailable ?? null, null);
  const bytes = await fetch(media.url);
  assert.equal(bytes.status, 200);
  assert.equal(bytes.headers.get("content-type"), "image/png");
  const text = await client.messages.list({ messageTypes: ["chat"], limit: 1 });
  const none = await client.messages.getMedia(text.data[0].waMessageKey._serialized);
  assert.equal(none.mediaUnavailable, "no_media");
});

test("campaigns.create with name and audienceId only", async () => {
  const aud = await client.audiences.create({ name: "SDK bare", contacts: [{ to: "+15550009877" }] });
  const c = await client.campaigns.create({ name: "SDK bare", audienceId: aud.id });
  assert.equal(c.status, "pending");
  assert.equal(c.totalCount, 1);
});

test("messages.send with withTyping, newsletters with a description", async () => {
  const sent = await client.messages.send(phone, { type: "text", text: "typed by the SDK", withTyping: true, typingSeconds: 1 });
  assert.ok(sent.waMessageKey);
  const n = await client.newsletters.create({ name: "SDK described", description: "What the SDK says" });
  assert.equal(n.description, "What the SDK says");
  assert.equal((await client.newsletters.retrieve(n.newsletterId)).description, "What the SDK says");
});
