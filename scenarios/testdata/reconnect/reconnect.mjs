// Connects one official client with its automatic reconnect, as an app
// would, and reports when it is connected and when it is connected again
// after a drop, as Unix milliseconds.
// Usage: node reconnect.mjs '{"client": "signalr"|"webpubsub", "url": "..."}'
// Prints one line per event: "connected <ms>", "reconnected <ms>"; exits
// 0 after the reconnect, 2 on a crash or after 90 s.
import * as signalR from "@microsoft/signalr";
import { WebPubSubClient, WebPubSubJsonProtocol } from "@azure/web-pubsub-client";

const { client, url } = JSON.parse(process.argv[2]);
const say = (what) => console.log(`${what} ${Date.now()}`);
setTimeout(() => { console.error("timed out"); process.exit(2); }, 90_000);

async function signalr() {
  const connection = new signalR.HubConnectionBuilder()
    .withUrl(url, { transport: signalR.HttpTransportType.WebSockets })
    .withAutomaticReconnect()
    .configureLogging(signalR.LogLevel.None)
    .build();
  connection.onreconnected(() => { say("reconnected"); process.exit(0); });
  await connection.start();
  say("connected");
}

async function webpubsub() {
  const c = new WebPubSubClient(url, { protocol: WebPubSubJsonProtocol() });
  let connects = 0;
  c.on("connected", () => {
    connects++;
    if (connects === 1) say("connected");
    else { say("reconnected"); process.exit(0); }
  });
  await c.start();
}

(client === "signalr" ? signalr() : webpubsub()).catch((err) => {
  console.error(String(err));
  process.exit(2);
});
