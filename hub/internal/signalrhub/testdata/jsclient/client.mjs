// Drives every benchmark hub method through the official SignalR client,
// once per transport and hub protocol combination.
// Usage: node client.mjs '<JSON array of {name, url, transport, protocol}>'
// where transport is WebSockets, ServerSentEvents or LongPolling and
// protocol json or messagepack. Prints one JSON object with a result per
// run; exits 1 on any mismatch, 2 on a crash or timeout.
import * as signalR from "@microsoft/signalr";
import { MessagePackHubProtocol } from "@microsoft/signalr-protocol-msgpack";

const runs = JSON.parse(process.argv[2]);
const stepTimeoutMs = 5000;

function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

function withTimeout(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), stepTimeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// inbox turns callbacks into awaitable queues, one per method name.
function inbox(connection, methods) {
  const queues = {};
  const waiters = {};
  for (const method of methods) {
    queues[method] = [];
    waiters[method] = [];
    connection.on(method, (...args) => {
      const waiter = waiters[method].shift();
      if (waiter) waiter(args);
      else queues[method].push(args);
    });
  }
  return (method) =>
    withTimeout(
      queues[method].length > 0
        ? Promise.resolve(queues[method].shift())
        : new Promise((resolve) => waiters[method].push(resolve)),
      method,
    );
}

async function open(run, result, name) {
  let builder = new signalR.HubConnectionBuilder()
    .withUrl(run.url, { transport: signalR.HttpTransportType[run.transport] })
    .configureLogging(signalR.LogLevel.Warning);
  if (run.protocol === "messagepack") builder = builder.withHubProtocol(new MessagePackHubProtocol());
  const connection = builder.build();
  const next = inbox(connection, ["OnConnected", "RecordLatency", "JoinGroup", "LeaveGroup", "ConnectionId"]);
  await withTimeout(connection.start(), `${name} to start`);
  const [id] = await next("OnConnected");
  result.ids[name] = id;
  return { connection, next, id };
}

// nextIsOwnEcho proves a connection received nothing else: the next
// RecordLatency it gets is the echo it asks for now.
async function nextIsOwnEcho(c, marker) {
  const payload = { "payload.Marker": marker };
  await c.connection.invoke("Echo", payload);
  const [got] = await c.next("RecordLatency");
  return same(got, payload);
}

async function exercise(run, result) {
  const check = (name, ok, detail) => result.checks.push(ok ? { name, ok } : { name, ok, detail });
  const a = await open(run, result, "a");
  const b = await open(run, result, "b");
  const transportClass = { WebSockets: "WebSocketTransport", ServerSentEvents: "ServerSentEventsTransport", LongPolling: "LongPollingTransport" };
  const transportName = a.connection.connection.transport.constructor.name;
  check("connected with the requested transport",
    a.connection.state === signalR.HubConnectionState.Connected && transportName === transportClass[run.transport], transportName);

  const fromInvoke = await a.connection.invoke("GetConnectionId");
  check("GetConnectionId equals OnConnected id", fromInvoke === a.id, { fromInvoke, onConnected: a.id });
  result.ids.getConnectionId = fromInvoke;

  await a.connection.send("ConnectionId");
  const [callbackId] = await a.next("ConnectionId");
  check("ConnectionId callback", callbackId === a.id, { callbackId });

  const echoPayload = { "payload.Timestamp": Date.now(), "payload.MessageBlob": "héllo \"quoted\"\nline", n: [1, { x: null }], f: 0.5 };
  await a.connection.invoke("Echo", echoPayload);
  const [echoed] = await a.next("RecordLatency");
  check("Echo returns the payload unchanged", same(echoed, echoPayload), { echoed });

  const broadcastPayload = { "payload.Timestamp": 42, kind: "broadcast" };
  await a.connection.invoke("Broadcast", broadcastPayload);
  const [toA] = await a.next("RecordLatency");
  const [toB] = await b.next("RecordLatency");
  check("Broadcast reaches both connections", same(toA, broadcastPayload) && same(toB, broadcastPayload), { toA, toB });

  const directPayload = { "information.ConnectionId": b.id, "payload.Timestamp": 7 };
  await a.connection.invoke("SendToClient", directPayload);
  const [direct] = await b.next("RecordLatency");
  check("SendToClient reaches the addressed connection", same(direct, directPayload), { direct });
  check("SendToClient does not reach the sender", await nextIsOwnEcho(a, "after-direct"));

  await a.connection.invoke("JoinGroup", "bench_0");
  await a.next("JoinGroup");
  check("JoinGroup callback", true);
  const groupPayload = { "information.GroupName": "bench_0", "payload.Timestamp": 9 };
  await b.connection.invoke("SendToGroup", groupPayload);
  const [grouped] = await a.next("RecordLatency");
  check("SendToGroup reaches the member", same(grouped, groupPayload), { grouped });
  check("SendToGroup skips the non-member", await nextIsOwnEcho(b, "after-group"));
  await a.connection.invoke("LeaveGroup", "bench_0");
  await a.next("LeaveGroup");
  check("LeaveGroup callback", true);
  await b.connection.invoke("SendToGroup", groupPayload);
  check("SendToGroup skips a connection that left", await nextIsOwnEcho(a, "after-leave"));

  const items = [{ "payload.Timestamp": 1 }, { "payload.Timestamp": 2 }, { "payload.Timestamp": 3 }];
  const subject = new signalR.Subject();
  const streamed = [];
  const done = new Promise((resolve, reject) => {
    a.connection.stream("StreamingEcho", subject, 0).subscribe({
      next: (item) => streamed.push(item),
      complete: resolve,
      error: reject,
    });
  });
  for (const item of items) subject.next(item);
  subject.complete();
  await withTimeout(done, "StreamingEcho to complete");
  check("StreamingEcho echoes every item in order", same(streamed, items), { streamed });

  try {
    await a.connection.invoke("NoSuchMethod");
    check("unknown method is rejected", false, "invoke resolved");
  } catch (err) {
    check("unknown method is rejected", String(err.message).includes("Unknown hub method 'NoSuchMethod'"), String(err.message));
  }

  await withTimeout(a.connection.stop(), "a to stop");
  await withTimeout(b.connection.stop(), "b to stop");
  check("stopped cleanly", a.connection.state === signalR.HubConnectionState.Disconnected);
}

const results = [];
const deadline = setTimeout(() => {
  console.log(JSON.stringify({ ok: false, runs: results, error: "overall timeout" }));
  process.exit(2);
}, 60000);

let crashed = false;
for (const run of runs) {
  const result = { name: run.name, ids: {}, checks: [] };
  results.push(result);
  try {
    await exercise(run, result);
    result.ok = result.checks.every((c) => c.ok);
  } catch (err) {
    result.ok = false;
    result.error = String(err && err.stack ? err.stack : err);
    crashed = true;
  }
}
clearTimeout(deadline);
const ok = results.every((r) => r.ok);
console.log(JSON.stringify({ ok, runs: results }));
process.exit(ok ? 0 : crashed ? 2 : 1);
