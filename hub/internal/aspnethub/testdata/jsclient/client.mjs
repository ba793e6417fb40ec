// Drives the reference hub's classic Signalrbench hub through two clients
// no one here wrote: the official ASP.NET SignalR 2.4.3 JavaScript client
// (jquery.signalR on jQuery, in a jsdom page; EventSource from the
// eventsource package, since jsdom has none) and node-signalr.
// Usage: node client.mjs '<JSON array of runs>', a run being
// {name, client: "jquery" | "node-signalr", url, transport, tokens, capture}:
// url is the app path (http://HOST:PORT/signalr), tokens adds the checks
// that the hub honours the connection and groups tokens, capture records
// the first connection's WebSocket frames.
// Prints one JSON object with a result per run; exits 1 on any failed
// check, 2 on a crash or timeout.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import EventSource from "eventsource";
import jqueryFactory from "jquery";
import { JSDOM } from "jsdom";
import { Client as NodeSignalRClient } from "node-signalr";

const require = createRequire(import.meta.url);
const signalRSource = readFileSync(require.resolve("signalr/jquery.signalR.js"), "utf8");
const runs = JSON.parse(process.argv[2]);
const stepTimeoutMs = 8000;
const hubName = "Signalrbench";

function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function withTimeout(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), stepTimeoutMs);
  });
  return Promise.race([Promise.resolve(promise), timeout]).finally(() => clearTimeout(timer));
}

// queue turns callbacks into an awaitable queue.
function queue(what) {
  const items = [];
  const waiters = [];
  return {
    push: (item) => {
      const waiter = waiters.shift();
      if (waiter) waiter(item);
      else items.push(item);
    },
    next: () => withTimeout(items.length > 0 ? Promise.resolve(items.shift()) : new Promise((resolve) => waiters.push(resolve)), what),
  };
}

// until polls cond every 20 ms.
async function until(cond, what) {
  const deadline = Date.now() + stepTimeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

// A page: a jsdom window at the hub's origin (so its XHR is same-origin)
// with jQuery and jquery.signalR loaded as a browser loads them.
function openPage(run, capture) {
  const dom = new JSDOM("<!doctype html><html><head></head><body></body></html>", {
    url: new URL(run.url).origin + "/",
    runScripts: "outside-only",
  });
  const { window } = dom;
  window.EventSource = EventSource;
  if (run.capture) recordFirstWebSocket(window, capture);
  const $ = jqueryFactory(window);
  window.jQuery = window.$ = $;
  window.eval(signalRSource);
  // Reconnect sooner than the defaults, to keep the runs short.
  $.signalR.transports.serverSentEvents.timeOut = 1000;
  $.signalR.transports.longPolling.reconnectDelay = 200;
  return { window, $ };
}

// recordFirstWebSocket keeps what the first WebSocket of the page sends
// ("> ") and receives ("< "), and the connectionData of its URL.
function recordFirstWebSocket(window, capture) {
  const Base = window.WebSocket;
  window.WebSocket = class extends Base {
    constructor(url, protocols) {
      super(url, protocols);
      if (capture.url) return;
      capture.url = url;
      capture.connectionData = new URL(url).searchParams.get("connectionData");
      this.addEventListener("message", (e) => capture.frames.push("< " + e.data));
      this.send = (data) => {
        capture.frames.push("> " + data);
        return Base.prototype.send.call(this, data);
      };
    }
  };
}

// openJQuery starts one connection of the official client.
async function openJQuery(page, run, name, result) {
  const connection = page.$.hubConnection(run.url, { useDefaultPath: false });
  connection.reconnectDelay = 200;
  const proxy = connection.createHubProxy(hubName);
  const measures = queue(`Measure on ${name}`);
  const reconnected = queue(`${name} to reconnect`);
  proxy.on("Measure", (...args) => measures.push(args));
  connection.reconnected(() => reconnected.push(true));
  await withTimeout(connection.start({ transport: run.transport, waitForPageLoad: false }), `${name} to start`);
  result.ids[name] = connection.id;
  return {
    connection,
    invoke: (method, ...args) => withTimeout(proxy.invoke(method, ...args), method),
    next: measures.next,
    reconnected,
  };
}

// jqueryChecks names every check a run of the official client makes, in order.
function jqueryChecks(run) {
  const checks = [
    "connected with the requested transport",
    "Echo resolves with its result",
    "Echo calls Measure back with its arguments",
    "Broadcast reaches both connections",
    "SendToConnection reaches the addressed connection",
    "SendToConnection does not reach the sender",
    "JoinGroup resolves",
    "the groups token arrives",
    "GroupBroadcast reaches the member",
    "GroupBroadcast skips the non-member",
  ];
  if (run.tokens) {
    checks.push(
      "a reconnect with a tampered groups token is refused",
      "a reconnect with the groups token succeeds",
      "a reconnect with a tampered connection token is refused",
      "a reconnect with the connection token succeeds",
      "GroupBroadcast reaches the member after its reconnects",
    );
  }
  checks.push(
    "LeaveGroup resolves",
    "GroupBroadcast skips a connection that left",
    "an unknown method is refused with the hub's error",
    "stopped cleanly",
  );
  return checks;
}

// refusedThenMended tampers with one of b's tokens, drops its transport,
// and checks it cannot reconnect until the token is restored; then a sends
// b a message, which a long poll needs before it counts as reconnected.
async function refusedThenMended(page, a, b, field, label, n, check) {
  const genuine = b.connection[field];
  b.connection[field] = genuine.slice(0, -4) + (genuine.endsWith("AAAA") ? "BBBB" : "AAAA");
  b.connection.transport.lostConnection(b.connection);
  await sleep(1500);
  const { reconnecting, connected } = page.$.signalR.connectionState;
  check(`a reconnect with a tampered ${label} is refused`, b.connection.state === reconnecting, b.connection.state);
  b.connection[field] = genuine;
  await a.invoke("SendToConnection", b.connection.id, n, "mended");
  await b.reconnected.next();
  const got = await b.next();
  check(`a reconnect with the ${label} succeeds`, b.connection.state === connected && same(got, [n, "mended"]), got);
}

async function jqueryRun(run, result, check) {
  const capture = { frames: [] };
  const page = openPage(run, capture);
  try {
    const a = await openJQuery(page, run, "a", result);
    const b = await openJQuery(page, run, "b", result);
    check("connected with the requested transport", a.connection.transport.name === run.transport && b.connection.transport.name === run.transport, a.connection.transport.name);
    result.redirected = { url: a.connection.url, accessToken: Boolean(a.connection.accessToken) };
    check("Echo resolves with its result", (await a.invoke("Echo", 1, "echo")) === undefined);
    check("Echo calls Measure back with its arguments", same(await a.next(), [1, "echo"]));
    await a.invoke("Broadcast", 2, "all");
    check("Broadcast reaches both connections", same(await a.next(), [2, "all"]) && same(await b.next(), [2, "all"]));
    await a.invoke("SendToConnection", b.connection.id, 3, "to-b");
    check("SendToConnection reaches the addressed connection", same(await b.next(), [3, "to-b"]));
    await a.invoke("Echo", 4, "mark");
    check("SendToConnection does not reach the sender", same(await a.next(), [4, "mark"]));
    check("JoinGroup resolves", (await b.invoke("JoinGroup", "g")) === undefined);
    await until(() => typeof b.connection.groupsToken === "string" && b.connection.groupsToken.length > 0, "the groups token");
    check("the groups token arrives", true);
    await a.invoke("GroupBroadcast", "g", 5, "group");
    check("GroupBroadcast reaches the member", same(await b.next(), [5, "group"]));
    await a.invoke("Echo", 6, "mark");
    check("GroupBroadcast skips the non-member", same(await a.next(), [6, "mark"]));
    if (run.tokens) {
      await refusedThenMended(page, a, b, "groupsToken", "groups token", 10, check);
      await refusedThenMended(page, a, b, "token", "connection token", 11, check);
      await a.invoke("GroupBroadcast", "g", 7, "group");
      check("GroupBroadcast reaches the member after its reconnects", same(await b.next(), [7, "group"]));
    }
    check("LeaveGroup resolves", (await b.invoke("LeaveGroup", "g")) === undefined);
    await a.invoke("GroupBroadcast", "g", 8, "group");
    await b.invoke("Echo", 9, "mark");
    check("GroupBroadcast skips a connection that left", same(await b.next(), [9, "mark"]));
    const refusal = await a.invoke("Nope").then(() => "resolved", (e) => e.message);
    check("an unknown method is refused with the hub's error", refusal === "'Nope' method could not be resolved.", refusal);
    a.connection.stop();
    b.connection.stop();
    const disconnected = page.$.signalR.connectionState.disconnected;
    check("stopped cleanly", a.connection.state === disconnected && b.connection.state === disconnected);
    await sleep(200); // the abort requests go out
    if (run.capture) result.capture = capture;
  } finally {
    page.window.close();
  }
}

// openNodeSignalR starts one node-signalr client.
async function openNodeSignalR(run, name, result) {
  const client = new NodeSignalRClient(run.url, [hubName]);
  client.reconnectDelayTime = 60000; // a drop fails the run instead
  const measures = queue(`Measure on ${name}`);
  client.connection.hub.on(hubName, "Measure", (...args) => measures.push(args));
  const connected = new Promise((resolve, reject) => {
    client.on("connected", resolve);
    client.on("error", (e) => reject(new Error(`${e.code}: ${e.message}`)));
  });
  client.start();
  await withTimeout(connected, `${name} to connect`);
  result.ids[name] = client.connection.id;
  return {
    client,
    invoke: (method, ...args) => withTimeout(client.connection.hub.call(hubName, method, ...args), method),
    next: measures.next,
  };
}

const nodeSignalRChecks = [
  "connected",
  "Echo resolves with its result",
  "Echo calls Measure back with its arguments",
  "Broadcast reaches both connections",
  "SendToConnection reaches the addressed connection",
  "JoinGroup resolves",
  "GroupBroadcast reaches the member",
  "GroupBroadcast skips the non-member",
  "an unknown method is refused with the hub's error",
  "stopped",
];

async function nodeSignalRRun(run, result, check) {
  const clients = [];
  try {
    const a = await openNodeSignalR(run, "a", result);
    clients.push(a.client);
    const b = await openNodeSignalR(run, "b", result);
    clients.push(b.client);
    check("connected", a.client.connection.state === "Connected" && b.client.connection.state === "Connected");
    check("Echo resolves with its result", (await a.invoke("Echo", 1, "echo")) === undefined);
    check("Echo calls Measure back with its arguments", same(await a.next(), [1, "echo"]));
    await a.invoke("Broadcast", 2, "all");
    check("Broadcast reaches both connections", same(await a.next(), [2, "all"]) && same(await b.next(), [2, "all"]));
    await a.invoke("SendToConnection", b.client.connection.id, 3, "to-b");
    check("SendToConnection reaches the addressed connection", same(await b.next(), [3, "to-b"]));
    check("JoinGroup resolves", (await b.invoke("JoinGroup", "g")) === undefined);
    await a.invoke("GroupBroadcast", "g", 5, "group");
    check("GroupBroadcast reaches the member", same(await b.next(), [5, "group"]));
    await a.invoke("Echo", 6, "mark");
    check("GroupBroadcast skips the non-member", same(await a.next(), [6, "mark"]));
    const refusal = await a.invoke("Nope").then(() => "resolved", (e) => String(e));
    check("an unknown method is refused with the hub's error", refusal === "'Nope' method could not be resolved.", refusal);
  } finally {
    for (const c of clients) c.end();
  }
  await sleep(200); // the abort requests go out
  check("stopped", clients.length === 2 && clients.every((c) => c.websocket === undefined));
}

async function runOne(run) {
  const result = { name: run.name, ok: true, ids: {}, checks: [], expected: [] };
  const check = (name, ok, detail) => {
    result.checks.push({ name, ok: Boolean(ok), detail });
    if (!ok) result.ok = false;
  };
  try {
    if (run.client === "node-signalr") {
      result.expected = nodeSignalRChecks;
      await nodeSignalRRun(run, result, check);
    } else {
      result.expected = jqueryChecks(run);
      await jqueryRun(run, result, check);
    }
  } catch (e) {
    result.ok = false;
    result.error = String(e && e.stack ? e.stack : e);
  }
  return result;
}

const overall = setTimeout(() => {
  process.stdout.write(JSON.stringify({ ok: false, error: "the client script timed out", runs: [] }));
  process.exit(2);
}, 80000);

try {
  const out = { ok: true, runs: [] };
  for (const run of runs) {
    const r = await runOne(run);
    out.runs.push(r);
    if (!r.ok) out.ok = false;
  }
  clearTimeout(overall);
  process.stdout.write(JSON.stringify(out));
  process.exit(out.ok ? 0 : 1);
} catch (e) {
  process.stdout.write(JSON.stringify({ ok: false, error: String(e), runs: [] }));
  process.exit(2);
}
