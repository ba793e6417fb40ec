// Drives hubprobe's Web PubSub emulation through Microsoft's official SDKs:
// @azure/web-pubsub-client as the client (both JSON subprotocols),
// @azure/web-pubsub as the server (client tokens and the REST API) and
// @azure/web-pubsub-express as the event handler the hub calls.
//
// Protocol with the Go test: the script serves the event handler on
// 127.0.0.1 and prints one line {"handler": "<URL template>"}; the test
// starts the hub with that handler and writes one line
// {"connectionString": "...", "hub": "..."}; the script then prints one
// JSON object with a result per run and exits 1 on any failed check, 2 on
// a crash or timeout.
import express from "express";
import { createInterface } from "node:readline";
import { WebPubSubServiceClient } from "@azure/web-pubsub";
import { WebPubSubEventHandler } from "@azure/web-pubsub-express";
import {
  WebPubSubClient,
  WebPubSubJsonProtocol,
  WebPubSubJsonReliableProtocol,
} from "@azure/web-pubsub-client";
import { withTimeout } from "./timeout.mjs";

function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

// inbox turns a client's events into awaitable queues.
function inbox(client, events) {
  const queues = {};
  const waiters = {};
  for (const event of events) {
    queues[event] = [];
    waiters[event] = [];
    client.on(event, (e) => {
      const waiter = waiters[event].shift();
      if (waiter) waiter(e);
      else queues[event].push(e);
    });
  }
  return (event) =>
    withTimeout(
      queues[event].length > 0
        ? Promise.resolve(queues[event].shift())
        : new Promise((resolve) => waiters[event].push(resolve)),
      event,
    );
}

async function startHandler(app) {
  const server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const port = server.address().port;
  console.log(JSON.stringify({ handler: `http://127.0.0.1:${port}/api/webpubsub/hubs/{hub}/{event}` }));
  return server;
}

function readSettings() {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin });
    rl.once("line", (line) => {
      rl.close();
      resolve(JSON.parse(line));
    });
  });
}

// serviceClient is the server SDK for hub; the hub is served over plain
// HTTP on 127.0.0.1, which the SDK wants allowed explicitly.
function serviceClient(settings, hub) {
  return new WebPubSubServiceClient(settings.connectionString, hub, { allowInsecureConnection: true });
}

// run connects one client with protocol and goes through every check.
async function run(name, protocol, settings, result) {
  const check = (what, ok, detail) => result.checks.push({ name: what, ok: !!ok, detail });
  const service = serviceClient(settings, settings.hub);
  const userId = `user-${name}`;
  const group = `group-${name}`;
  const { url } = await service.getClientAccessToken({
    userId,
    roles: ["webpubsub.joinLeaveGroup", "webpubsub.sendToGroup"],
  });
  const client = new WebPubSubClient(url, { protocol, autoReconnect: false });
  const next = inbox(client, ["connected", "group-message", "server-message", "disconnected", "stopped"]);
  await withTimeout(client.start(), "start");
  const connected = await next("connected");
  check("connected with an id and the user", connected.connectionId && connected.userId === userId, connected);

  await withTimeout(client.joinGroup(group), "joinGroup");
  const sent = await withTimeout(client.sendToGroup(group, "hello group", "text"), "sendToGroup");
  const own = (await next("group-message")).message;
  check("sendToGroup reaches the sender in the group",
    own.group === group && own.data === "hello group" && own.dataType === "text" && own.fromUserId === userId,
    { own, sent });
  await withTimeout(client.sendToGroup(group, { n: 1 }, "json"), "sendToGroup json");
  const json = (await next("group-message")).message;
  check("sendToGroup carries JSON", same(json.data, { n: 1 }) && json.dataType === "json", json);

  await service.sendToAll("to all", { contentType: "text/plain" });
  const all = (await next("server-message")).message;
  check("REST sendToAll reaches the client", all.data === "to all" && all.dataType === "text", all);
  await service.sendToUser(userId, { to: "user" });
  const user = (await next("server-message")).message;
  check("REST sendToUser reaches the client", same(user.data, { to: "user" }) && user.dataType === "json", user);
  await service.group(group).sendToAll("to group", { contentType: "text/plain" });
  const grp = (await next("server-message")).message;
  check("REST group sendToAll reaches the client", grp.data === "to group", grp);
  await service.sendToConnection(connected.connectionId, "to connection", { contentType: "text/plain" });
  const conn = (await next("server-message")).message;
  check("REST sendToConnection reaches the client", conn.data === "to connection", conn);

  const exists = await Promise.all([
    service.connectionExists(connected.connectionId),
    service.userExists(userId),
    service.groupExists(group),
    service.groupExists("no-such-group"),
  ]);
  check("REST exists answers", same(exists, [true, true, true, false]), exists);

  await withTimeout(client.sendEvent("echo", "upstream text", "text"), "sendEvent text");
  const echoText = (await next("server-message")).message;
  check("event comes back as the handler's text answer", echoText.data === "upstream text" && echoText.dataType === "text", echoText);
  await withTimeout(client.sendEvent("echo", { up: [1, 2] }, "json"), "sendEvent json");
  const echoJSON = (await next("server-message")).message;
  check("event comes back as the handler's JSON answer", same(echoJSON.data, { up: [1, 2] }) && echoJSON.dataType === "json", echoJSON);
  await withTimeout(client.sendEvent("echo", new Uint8Array([0, 1, 255]).buffer, "binary"), "sendEvent binary");
  const echoBin = (await next("server-message")).message;
  check("event comes back as the handler's binary answer",
    echoBin.dataType === "binary" && same([...new Uint8Array(echoBin.data)], [0, 1, 255]), echoBin);

  await service.closeConnection(connected.connectionId, { reason: `closed-${name}` });
  const disconnected = await next("disconnected");
  check("REST closeConnection disconnects with the reason", disconnected.message?.message === `closed-${name}`, disconnected);
  await next("stopped");
}

// otherHub tries a token minted for another hub on this hub's URL.
async function otherHub(settings, result) {
  const check = (what, ok, detail) => result.checks.push({ name: what, ok: !!ok, detail });
  const other = serviceClient(settings, "otherhub");
  const { token } = await other.getClientAccessToken();
  const service = serviceClient(settings, settings.hub);
  const { baseUrl } = await service.getClientAccessToken();
  const client = new WebPubSubClient(`${baseUrl}?access_token=${token}`, { autoReconnect: false });
  let error;
  try {
    await withTimeout(client.start(), "start with another hub's token");
  } catch (e) {
    error = String(e);
  }
  client.stop();
  check("a token for another hub is refused", error && error.includes("401"), error);
}

async function main() {
  const app = express();
  const server = await startHandler(app);
  const settings = await readSettings();
  const endpoint = /Endpoint=([^;]+)/.exec(settings.connectionString)[1];
  const handler = new WebPubSubEventHandler(settings.hub, {
    allowedEndpoints: [endpoint],
    // The answer is the event's own data: an echo, as the upstream echo
    // scenario's handler is. JSON arrives parsed and goes back as text.
    handleUserEvent: (req, res) =>
      res.success(req.dataType === "json" ? JSON.stringify(req.data) : req.data, req.dataType),
  });
  app.use(handler.getMiddleware());
  const out = { ok: true, runs: [] };
  for (const [name, protocol] of [
    ["reliable", WebPubSubJsonReliableProtocol()],
    ["json", WebPubSubJsonProtocol()],
  ]) {
    const result = { name, checks: [] };
    out.runs.push(result);
    try {
      await run(name, protocol, settings, result);
    } catch (e) {
      result.error = String(e && e.stack ? e.stack : e);
    }
  }
  const result = { name: "other hub", checks: [] };
  out.runs.push(result);
  try {
    await otherHub(settings, result);
  } catch (e) {
    result.error = String(e);
  }
  out.ok = out.runs.every((r) => !r.error && r.checks.every((c) => c.ok));
  server.close();
  console.log(JSON.stringify(out));
  process.exit(out.ok ? 0 : 1);
}

const deadline = setTimeout(() => {
  console.log(JSON.stringify({ ok: false, error: "timed out" }));
  process.exit(2);
}, 60000);
deadline.unref();
main().catch((e) => {
  console.log(JSON.stringify({ ok: false, error: String(e && e.stack ? e.stack : e) }));
  process.exit(2);
});
