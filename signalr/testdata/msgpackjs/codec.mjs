// Runs the official @microsoft/signalr-protocol-msgpack codec for hubprobe's
// MessagePack tests.
//
//   node codec.mjs encode   writes {"<case>": "<hex of the framed message>", ...}
//   node codec.mjs decode   reads {"<case>": "<hex>", ...} on stdin and writes
//                           {"<case>": [<parsed messages>], ...}, or
//                           {"<case>": {"error": "..."}} when parsing throws
import { MessagePackHubProtocol } from "@microsoft/signalr-protocol-msgpack";
import { MessageType, NullLogger } from "@microsoft/signalr";

const protocol = new MessagePackHubProtocol();

const payload = {
  "payload.Run": "r1",
  "payload.MessageBlob": "x".repeat(2048),
  "payload.Timestamp": 1234567,
};

// Messages a client writes. Invocations carry streamIds so that they have
// the six elements hubprobe always writes.
const outgoing = {
  invocation: { type: MessageType.Invocation, headers: {}, invocationId: "1", target: "Echo", arguments: ["conn", payload], streamIds: [] },
  nonBlocking: { type: MessageType.Invocation, target: "Send", arguments: [42, -7, 1.5, true, false, null], streamIds: [] },
  headers: { type: MessageType.Invocation, headers: { k: "v" }, invocationId: "2", target: "H", arguments: [], streamIds: ["3", "4"] },
  values: {
    type: MessageType.Invocation, invocationId: "5", target: "Values", streamIds: [],
    arguments: [
      { nested: { deeper: [1, [2, [3]], {}] }, empty: [] },
      "héllo ☃ 😀 \"quoted\" \\ \n\t\u0001",
      -1, -32, -33, -128, -129, -32768, -32769, -2147483648, -2147483649,
      127, 128, 255, 256, 65535, 65536, 4294967295, 4294967296, 9007199254740991,
      0.1, -2.5e-10, 1e300, "é".repeat(40), "",
    ],
  },
  streamInvocation: { type: MessageType.StreamInvocation, invocationId: "6", target: "Count", arguments: [3], streamIds: [] },
  streamItem: { type: MessageType.StreamItem, invocationId: "6", item: { v: [1, 2] } },
  completionResult: { type: MessageType.Completion, invocationId: "1", result: "ok" },
  completionError: { type: MessageType.Completion, invocationId: "1", error: "boom" },
  completionVoid: { type: MessageType.Completion, invocationId: "1" },
  cancel: { type: MessageType.CancelInvocation, invocationId: "6" },
  ping: { type: MessageType.Ping },
  close: { type: MessageType.Close },
  ack: { type: MessageType.Ack, sequenceId: 300 },
  sequence: { type: MessageType.Sequence, sequenceId: 70000 },
  // These have no JSON twin in MessagePack: they become strings in hubprobe.
  binary: { type: MessageType.StreamItem, invocationId: "7", item: new Uint8Array([0, 1, 2, 253, 254, 255]) },
  date: { type: MessageType.StreamItem, invocationId: "8", item: new Date(Date.UTC(2024, 4, 1, 12, 0, 0, 500)) },
};

function encode() {
  const out = {};
  for (const [name, message] of Object.entries(outgoing)) {
    out[name] = Buffer.from(protocol.writeMessage(message)).toString("hex");
  }
  return out;
}

async function decode() {
  const chunks = [];
  for await (const chunk of process.stdin) {
    chunks.push(chunk);
  }
  const out = {};
  for (const [name, hex] of Object.entries(JSON.parse(Buffer.concat(chunks).toString("utf8")))) {
    const bytes = Buffer.from(hex, "hex");
    const input = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    try {
      out[name] = protocol.parseMessages(input, NullLogger.instance);
    } catch (e) {
      out[name] = { error: String(e && e.message ? e.message : e) };
    }
  }
  return out;
}

const mode = process.argv[2];
if (mode === "encode") {
  process.stdout.write(JSON.stringify({ version: protocol.version, messages: encode() }));
} else if (mode === "decode") {
  process.stdout.write(JSON.stringify(await decode()));
} else {
  process.stderr.write("usage: node codec.mjs encode|decode\n");
  process.exit(2);
}
