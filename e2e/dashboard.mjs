// Drives the dashboard as a person would, in headless Chromium: sign in with the
// bootstrap key, see the sandbox engine, send a message and watch it reach read,
// browse the chat (newest first, older on demand), preview and start a campaign,
// manage keys, open every page at desktop and phone (390 px) widths, use the
// GraphQL console, revoke the key it is signed in with, then sign in as the
// operator and open the queue monitor. Any page error or console error fails it.
// Screenshots go to SCREENSHOTS: desktop-<page>.png and phone-<page>.png for
// every page, and the numbered ones docs/dashboard.md shows.
//
//   BASE_URL=http://127.0.0.1:8080 KEY=sb_live_… OPERATOR_TOKEN=… SCREENSHOTS=dir node dashboard.mjs
import { chromium } from "playwright-core";
import assert from "node:assert/strict";
import path from "node:path";

const base = process.env.BASE_URL;
const key = process.env.KEY;
const operatorToken = process.env.OPERATOR_TOKEN;
const shots = process.env.SCREENSHOTS;
assert.ok(base && key && operatorToken && shots, "BASE_URL, KEY, OPERATOR_TOKEN and SCREENSHOTS are required");

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
const page = await context.newPage();
const problems = [];
page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
page.on("console", (msg) => {
  // a failed request is the page's to show (an error box, checked below); a 401 of
  // GET /dashboard/session is how the page learns it is signed out
  if (msg.type() === "error" && !msg.text().startsWith("Failed to load resource")) problems.push(`console: ${msg.text()}`);
});

async function shot(name) {
  await page.screenshot({ path: path.join(shots, name + ".png"), fullPage: true });
  console.log(`screenshot ${name}.png`);
}
async function step(name, fn) {
  const t0 = Date.now();
  await fn();
  console.log(`ok ${name} (${Date.now() - t0} ms)`);
}
async function nav(title) {
  await page.locator("nav").getByRole("link", { name: title, exact: true }).click();
  await page.waitForSelector("main h1");
}
// api calls the REST API with the bootstrap key.
async function api(method, p, body) {
  const res = await fetch(base + p, { method, headers: { Authorization: "Bearer " + key, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${p} = ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}
// visit opens a page by its address and waits until what it loads is shown.
async function visit(p, ready = "main [data-loaded]") {
  await page.goto(base + p);
  await page.waitForSelector("main h1");
  await page.waitForSelector(ready);
  await page.waitForLoadState("networkidle");
}
async function noErrorBox() {
  const errs = await page.locator("main .error").allTextContents();
  assert.deepEqual(errs, [], "error boxes on " + page.url());
}

try {
  await step("sign in with the API key", async () => {
    await page.goto(base + "/dashboard");
    await page.waitForSelector("#credential");
    await shot("01-sign-in");
    await page.fill("#credential", key);
    await page.click("button[type=submit]");
    await page.waitForSelector("nav >> text=Sign out");
    await page.waitForSelector("main >> text=Workspace");
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === "switchboard_session");
    assert.ok(session, "a session cookie");
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, "Strict");
    const stored = await page.evaluate(() => JSON.stringify([document.cookie, { ...localStorage }, { ...sessionStorage }]));
    assert.ok(!stored.includes("sb_live_") && !stored.includes("switchboard_session"), "the key or the session in browser storage: " + stored);
    assert.ok(!(await page.content()).includes(key), "the key is in the page");
  });

  await step("the sandbox engine is listed and connected", async () => {
    await nav("Engines");
    await page.waitForSelector("tr[data-engine] >> text=sandbox");
    await page.waitForSelector("tr[data-engine] .badge.live");
    await noErrorBox();
    await shot("02-engines");
  });

  await step("make the sandbox the default engine", async () => {
    const row = page.locator("tr[data-engine]", { hasText: "sandbox" });
    await row.locator("button", { hasText: "Make default" }).click();
    await row.locator(".badge.default").waitFor();
    await noErrorBox();
  });

  await step("send a message and watch it reach read", async () => {
    await nav("Messages");
    await page.fill("#send-form input[name=to]", "+15551230001");
    await page.fill("#send-form textarea[name=text]", "Hello from the dashboard");
    await page.click("#send-form button[type=submit]");
    const row = page.locator("tr[data-message]", { hasText: "Hello from the dashboard" });
    await row.waitFor();
    await row.locator("[data-status=read]").waitFor({ timeout: 30000 });
    await noErrorBox();
    await shot("03-messages-read");
  });

  await step("browse the chat", async () => {
    await nav("Chats");
    await page.locator("tr[data-chat] a", { hasText: "15551230001" }).first().click();
    await page.locator(".bubble.me", { hasText: "Hello from the dashboard" }).waitFor();
    await noErrorBox();
    await shot("04-chat");
  });

  const busy = "+15551230002";
  await step("a chat of 60 messages shows its newest, older ones on demand", async () => {
    for (let i = 1; i <= 60; i++) await api("POST", "/v1/scheduled-messages/" + encodeURIComponent(busy), { type: "text", text: "Busy message " + i });
    const deadline = Date.now() + 120000;
    for (;;) {
      const r = await api("GET", "/v1/messages?searchToken=Busy&limit=1");
      if (r.total >= 60) break;
      assert.ok(Date.now() < deadline, "60 messages were not stored in 2 minutes: " + r.total);
      await new Promise((ok) => setTimeout(ok, 1000));
    }
    // the chat is listed once the sandbox sent its messages (scheduled ones are stored first)
    const row = page.locator("tr[data-chat] a", { hasText: busy.slice(1) }).first();
    for (;;) {
      await visit("/dashboard/chats");
      if (await row.count() > 0) break;
      assert.ok(Date.now() < deadline, "the busy chat was not listed in 2 minutes");
      await new Promise((ok) => setTimeout(ok, 1000));
    }
    await row.click();
    await page.waitForSelector(".thread[data-loaded]");
    const text = (n) => page.locator(".bubble > div:first-child", { hasText: new RegExp("^Busy message " + n + "$") });
    await text(60).waitFor();
    assert.equal(await text(1).count(), 0, "the oldest message is shown at first");
    assert.equal(await page.locator(".bubble").count(), 50);
    await page.locator("main", { hasText: "The newest 50 of 60 messages" }).waitFor();
    await page.click("[data-older]");
    await text(1).waitFor();
    assert.equal(await page.locator(".bubble").count(), 60);
    assert.equal(await page.locator("[data-older]").count(), 0, "no more to load");
    await noErrorBox();
  });

  await step("the campaign form teaches {firstName} and previews the text for a contact", async () => {
    await api("POST", "/v1/audiences", { name: "Preview audience", contacts: [{ to: "+15551230003", variables: { firstName: "Ada" } }, { to: "+15551230004", variables: { firstName: "Bo" } }] });
    await visit("/dashboard/campaigns");
    const form = page.locator("#campaign-form");
    await form.locator("select[name=audienceId] option", { hasText: "Preview audience" }).waitFor({ state: "attached" });
    await form.locator("select[name=audienceId]").selectOption({ label: "Preview audience (2)" });
    assert.ok((await form.textContent()).includes("{firstName}"), "the form names the {firstName} syntax");
    assert.ok(!(await form.textContent()).includes("{{variables}}"), "the form teaches {{variables}}");
    await form.locator("input[name=name]").fill("Spring sale");
    await form.locator("textarea[name=text]").fill("Hi {firstName}, your number is {phone}. {plan}");
    await page.locator("[data-rendered]", { hasText: /^Hi (Ada, your number is \+15551230003|Bo, your number is \+15551230004)\. \{plan\}$/ }).waitFor();
    await page.locator(".preview .notice", { hasText: "{plan}" }).waitFor();
    await shot("06-campaign-preview");
    await form.locator("textarea[name=text]").fill("Hi {firstName}!");
    await page.locator("[data-rendered]", { hasText: /^Hi (Ada|Bo)!$/ }).waitFor();
    await form.locator("button[type=submit]").click();
    await page.locator("tr[data-campaign]", { hasText: "Spring sale" }).waitFor();
    await noErrorBox();
  });

  await step("create a key with chosen scopes, shown once, then revoke it", async () => {
    await nav("API keys");
    await page.fill("#key-form input[name=name]", "e2e reader");
    await page.locator("#key-form label", { hasText: /^messages:read$/ }).locator("input").check();
    await page.click("#key-form button[type=submit]");
    const value = await page.locator("[data-secret] input").inputValue();
    assert.match(value, /^sb_live_/);
    const row = page.locator("tr[data-key]", { hasText: "e2e reader" });
    await row.waitFor();
    assert.ok((await row.textContent()).includes("messages:read"));
    await shot("05-keys-created");
    await page.fill("input[type=search]", value.slice(0, 12));
    await page.waitForFunction(() => document.querySelectorAll("tr[data-key]").length === 1);
    page.once("dialog", (d) => d.accept());
    await row.getByRole("button", { name: "Revoke" }).click();
    await row.locator("[data-status=revoked]").waitFor();
    const res = await fetch(base + "/v1/scheduled-messages", { headers: { Authorization: "Bearer " + value } });
    assert.equal(res.status, 401, "the revoked key still works");
  });

  await step("the other pages render from the sidebar", async () => {
    for (const [title, name] of [["Groups", null], ["Newsletters", null], ["Contacts", null], ["Audiences", null], ["Campaigns", "07-campaigns"], ["Boards", null], ["Music", "08-music"], ["Webhooks", "09-webhooks"], ["Overview", null]]) {
      await nav(title);
      await page.waitForSelector("main [data-loaded]");
      await noErrorBox();
      if (name) await shot(name);
    }
  });

  // Something on every page: a board with an item, a webhook whose endpoint fails.
  const boardData = (await api("POST", "/v1/boards", { domain: "leads", agent_id: "bot:e2e" })).data;
  const board = { id: boardData.board_id || boardData.id };
  const itemData = (await api("POST", "/v1/boards/" + board.id + "/items", { text: "Call Ada back about the order" })).data;
  const item = { id: itemData.item_id || itemData.id };
  assert.ok(board.id && item.id, "a board and an item: " + JSON.stringify([boardData, itemData]));
  await visit("/dashboard/chats");
  const chatPath = await page.locator("tr[data-chat] a", { hasText: "15551230001" }).first().getAttribute("href");
  // (the server runs with SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE: nothing listens on port 9, so its deliveries fail)
  const hook = (await api("POST", "/v1/webhooks", { url: "http://127.0.0.1:9/switchboard-e2e", events: ["message.read"] })).data;
  // a group the account created (it administers it: the invite link and the requests show)
  const group = (await api("POST", "/v1/groups", { name: "E2E club", participants: ["+15551230001"] })).data;
  const pagesToVisit = [
    ["overview", "/dashboard/overview"], ["engines", "/dashboard/engines"], ["messages", "/dashboard/messages"],
    ["chats", "/dashboard/chats"], ["chat", chatPath, ".thread[data-loaded]"],
    ["groups", "/dashboard/groups"], ["group", "/dashboard/chats/" + encodeURIComponent(group.id), "[data-requests] [data-loaded]"],
    ["newsletters", "/dashboard/newsletters"], ["contacts", "/dashboard/contacts"], ["audiences", "/dashboard/audiences"],
    ["campaigns", "/dashboard/campaigns"], ["boards", "/dashboard/boards"], ["board", "/dashboard/boards/" + board.id],
    ["board-item", "/dashboard/boards/" + board.id + "/items/" + item.id, "tr.highlight"],
    ["music", "/dashboard/music"], ["webhooks", "/dashboard/webhooks"], ["webhook", "/dashboard/webhooks/" + hook.id],
    ["keys", "/dashboard/keys"]];

  await step("every page at desktop width", async () => {
    for (const [name, p, ready] of pagesToVisit) {
      await visit(p, ready);
      await noErrorBox();
      assert.equal(await page.locator("main .notice").count(), 0, "a notice on " + p);
      await shot("desktop-" + name);
    }
    await visit("/dashboard/overview");
    await page.locator("main [data-count=read]").waitFor();
    await page.locator(".tile", { hasText: "Failing webhooks" }).locator("[data-loaded]").waitFor();
    await shot("00-overview");
  });

  await step("every page at phone width (390 px), with the menu", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [name, p, ready] of pagesToVisit) {
      await visit(p, ready);
      await noErrorBox();
      const wide = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(wide <= 390, `${p} is ${wide} px wide at 390`);
      await shot("phone-" + name);
    }
    assert.equal(await page.getByRole("button", { name: "Sign out" }).isVisible(), false, "the menu starts closed");
    await page.getByRole("button", { name: "Menu" }).click();
    await shot("phone-menu");
    const signOut = page.getByRole("button", { name: "Sign out" });
    await signOut.scrollIntoViewIfNeeded();
    assert.ok(await signOut.isVisible(), "Sign out is reachable from the menu");
    const box = await signOut.boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 390, "Sign out is on screen");
    await page.locator("nav").getByRole("link", { name: "Webhooks", exact: true }).click();
    await page.waitForSelector("main h1:has-text('Webhooks')");
    assert.equal(await signOut.isVisible(), false, "the menu closes on a page change");
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  await step("GET / leads a browser to the dashboard", async () => {
    await page.goto(base + "/");
    await page.waitForSelector("main h1:has-text('Overview')");
    assert.equal(new URL(page.url()).pathname, "/dashboard");
  });

  await step("the GraphQL console runs as the session", async () => {
    await page.goto(base + "/graphql");
    await page.waitForSelector("#session:has-text('Signed in')");
    await page.click("#run");
    await page.waitForFunction(() => document.getElementById("result").textContent.includes("\"account\""));
    await shot("10-graphql-console");
  });

  await step("sign out while an answer is on its way", async () => {
    // The overview's query is answered while signed in but reaches the page only
    // after the sign-out: the page it was for is gone, and nothing may break.
    let answered, release;
    const fetched = new Promise((r) => (answered = r));
    const held = new Promise((r) => (release = r));
    await page.route("**/graphql", async (route) => {
      if (!(route.request().postData() || "").includes("whatsappConnections")) return route.continue();
      const response = await route.fetch();
      answered();
      await held;
      await route.fulfill({ response });
    });
    await page.goto(base + "/dashboard/overview");
    await fetched;
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForSelector("#credential");
    const late = page.waitForResponse((r) => r.url().endsWith("/graphql"));
    release();
    await late;
    await page.unroute("**/graphql");
    const res = await page.evaluate(async () => (await fetch("/graphql", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{\"query\":\"{ account { id } }\"}" })).status);
    assert.equal(res, 401, "GraphQL after sign-out");
  });

  await step("revoking the key you are signed in with warns, then says you are signed out", async () => {
    const made = await api("POST", "/graphql", { query: "mutation { createApiKey(input: { name: \"e2e self\", scopes: [\"keys:read\", \"keys:write\"] }) { key } }" });
    assert.ok(made.data && made.data.createApiKey, "createApiKey: " + JSON.stringify(made));
    await page.fill("#credential", made.data.createApiKey.key);
    await page.click("button[type=submit]");
    await page.waitForSelector("nav >> text=Sign out");
    await visit("/dashboard/keys");
    const row = page.locator("tr[data-key]", { hasText: "e2e self" });
    let warning = "";
    page.once("dialog", (d) => { warning = d.message(); d.accept(); });
    await row.getByRole("button", { name: "Revoke (your key)" }).click();
    await page.waitForSelector("#credential");
    assert.match(warning, /signed in with/, "the warning: " + warning);
    await page.locator(".notice", { hasText: "you are signed out" }).waitFor();
    await shot("12-own-key-revoked");
  });

  await step("sign in as the operator and open the queue monitor", async () => {
    await page.fill("#credential", operatorToken);
    await page.click("button[type=submit]");
    await page.waitForSelector("main >> text=queue monitor");
    await page.goto(base + "/monitoring/");
    await page.waitForSelector("text=Queues", { timeout: 20000 });
    await shot("11-monitor");
  });

  assert.deepEqual(problems, [], "the pages reported errors");
  console.log("dashboard: all steps passed");
} catch (err) {
  await page.screenshot({ path: path.join(shots, "failure.png"), fullPage: true }).catch(() => {});
  console.error(problems.join("\n"));
  throw err;
} finally {
  await browser.close();
}
