// Drives the dashboard as a person would, in headless Chromium: sign in with the
// bootstrap key, see the sandbox engine, send a message and watch it reach read,
// browse the chat, manage keys, use the GraphQL console, then sign in as the
// operator and open the queue monitor. Screenshots go to SCREENSHOTS.
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
  await page.getByRole("link", { name: title, exact: true }).click();
  await page.waitForSelector("main h1");
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

  await step("the other pages render", async () => {
    for (const [title, name] of [["Groups", "06-groups"], ["Audiences", null], ["Campaigns", "07-campaigns"], ["Boards", null], ["Music", "08-music"], ["Webhooks", "09-webhooks"], ["Overview", null]]) {
      await nav(title);
      await page.waitForSelector("main [data-loaded]");
      await noErrorBox();
      if (name) await shot(name);
    }
  });

  await step("the GraphQL console runs as the session", async () => {
    await page.goto(base + "/graphql");
    await page.waitForSelector("#session:has-text('Signed in')");
    await page.click("#run");
    await page.waitForFunction(() => document.getElementById("result").textContent.includes("\"account\""));
    await shot("10-graphql-console");
  });

  await step("sign out, sign in as the operator and open the queue monitor", async () => {
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
