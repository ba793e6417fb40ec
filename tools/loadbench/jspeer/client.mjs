// loadbench's peer client: the official @microsoft/signalr client (Node,
// WebSockets, JSON, permessage-deflate off) running the same open-loop
// echo as hubprobe's probe and the floor client, against a hub at url.
// Usage: node client.mjs URL CONNECTIONS WINDOW_MS INTERVAL_MS SIZE CONCURRENCY LOSS_TIMEOUT_MS
// Prints one JSON report with the keys of `hubprobe run --output json`.
import * as signalR from "@microsoft/signalr";
import WebSocket from "ws";
import { performance } from "node:perf_hooks";

const [url, n, windowMs, intervalMs, size, concurrency, lossTimeoutMs] = process.argv.slice(2);
const cfg = {
  url, n: +n, windowMs: +windowMs, intervalMs: +intervalMs, size: +size,
  concurrency: +concurrency, lossTimeoutMs: +lossTimeoutMs,
};

// NoDeflate is ws without permessage-deflate, which costs both ends CPU and
// distorts latency; hubprobe's probe and the floor client never ask for it.
class NoDeflate extends WebSocket {
  constructor(address, protocols, options) {
    super(address, protocols, { ...options, perMessageDeflate: false });
  }
}

const latencies = [];
const seen = new Set();
let sent = 0;
let maxLagMs = 0;
const pending = [];

async function open() {
  const connection = new signalR.HubConnectionBuilder()
    .withUrl(cfg.url, { transport: signalR.HttpTransportType.WebSockets, skipNegotiation: false, WebSocket: NoDeflate })
    .configureLogging(signalR.LogLevel.None)
    .build();
  connection.on("OnConnected", () => {});
  connection.on("RecordLatency", (p) => {
    const seq = p["payload.Seq"];
    if (seen.has(seq)) return;
    seen.add(seq);
    latencies.push(performance.now() - p["payload.Timestamp"]);
  });
  await connection.start();
  return connection;
}

async function openAll() {
  const conns = new Array(cfg.n);
  let next = 0;
  const worker = async () => {
    while (next < cfg.n) {
      const i = next++;
      conns[i] = await open();
    }
  };
  await Promise.all(Array.from({ length: Math.min(cfg.concurrency, cfg.n) }, worker));
  return conns;
}

// pace sends open-loop, as hubprobe's pacer does: send i is due at
// start + i×interval/n, connections take turns, and a late send goes out
// at once with its lateness recorded rather than being skipped.
function pace(conns) {
  const total = Math.ceil((cfg.windowMs * cfg.n) / cfg.intervalMs);
  const blob = "x".repeat(cfg.size);
  const start = performance.now();
  let i = 0;
  return new Promise((resolve) => {
    const tick = () => {
      let now = performance.now() - start;
      for (; i < total && (i * cfg.intervalMs) / cfg.n <= now; i++, now = performance.now() - start) {
        maxLagMs = Math.max(maxLagMs, now - (i * cfg.intervalMs) / cfg.n);
        const payload = { "payload.Timestamp": performance.now(), "payload.MessageBlob": blob, "payload.Seq": i };
        pending.push(conns[i % cfg.n].send("Echo", payload).then(() => sent++, () => {}));
      }
      if (i >= total) return resolve();
      setTimeout(tick, Math.max(0, (i * cfg.intervalMs) / cfg.n - now));
    };
    tick();
  });
}

function quantile(sorted, q) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

const conns = await openAll();
await pace(conns);
await Promise.all(pending); // every send counted before the wait for replies
const deadline = performance.now() + cfg.lossTimeoutMs;
while (seen.size < sent && performance.now() < deadline) {
  await new Promise((r) => setTimeout(r, 50));
}
await Promise.all(conns.map((c) => c.stop()));
const sorted = Float64Array.from(latencies).sort();
const s = (ms) => ms / 1000;
console.log(JSON.stringify({
  connections: conns.length,
  sent,
  received: seen.size,
  lost: sent - seen.size,
  latency_seconds: { p50: s(quantile(sorted, 0.5)), p90: s(quantile(sorted, 0.9)), p99: s(quantile(sorted, 0.99)), max: s(quantile(sorted, 1)) },
  max_send_lag_seconds: s(maxLagMs),
}, null, 2));
process.exit(0);
