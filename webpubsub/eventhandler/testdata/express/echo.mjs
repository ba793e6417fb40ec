// An echo event handler built with the official express middleware, as a
// Web PubSub user would write one: every user event is answered with its
// own data. hubprobe's tests send it the same requests as hubprobe's
// handler and compare the answers.
//
// Usage: node echo.mjs <hub> <path>. It prints {"port": n} once listening
// on 127.0.0.1 and exits when its stdin closes.
import express from "express";
import { WebPubSubEventHandler } from "@azure/web-pubsub-express";

const [hub, path] = process.argv.slice(2);
const handler = new WebPubSubEventHandler(hub, {
  path,
  handleUserEvent(req, res) {
    const data = req.dataType === "json" ? JSON.stringify(req.data) : req.data;
    res.success(data, req.dataType);
  },
});

const app = express();
app.use(handler.getMiddleware());
const server = app.listen(0, "127.0.0.1", () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + "\n");
});
process.stdin.on("end", () => server.close(() => process.exit(0)));
process.stdin.resume();
