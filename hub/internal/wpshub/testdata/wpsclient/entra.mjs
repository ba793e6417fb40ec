// Drives hubprobe's Web PubSub emulation with Microsoft Entra ID sign-in,
// through Microsoft's official SDKs: @azure/web-pubsub with a
// TokenCredential asks the hub's :generateToken for a client token and
// calls the REST API with bearer tokens, and @azure/web-pubsub-client
// connects with the URL it returns.
//
// The credential is the smallest TokenCredential there is: getToken does
// the client-credentials request itself against the loopback Entra tenant
// the Go test runs (the same form MSAL posts). Both the tenant and the hub
// are served over TLS on 127.0.0.1; NODE_EXTRA_CA_CERTS trusts them.
//
// Protocol with the Go test: settings come as one JSON argument
// {endpoint, hub, tokenEndpoint, clientId, clientSecret}; the script prints
// one JSON object {ok, checks, error} and exits 1 on a failed check.
import { WebPubSubServiceClient } from "@azure/web-pubsub";
import { WebPubSubClient, WebPubSubJsonProtocol } from "@azure/web-pubsub-client";
import { withTimeout } from "./timeout.mjs";

// entraCredential signs in with a client secret; scopes are what the SDK
// asks for (https://webpubsub.azure.com/.default).
function entraCredential(settings, calls) {
  return {
    async getToken(scopes) {
      const scope = Array.isArray(scopes) ? scopes.join(" ") : scopes;
      calls.push(scope);
      const body = new URLSearchParams({
        grant_type: "client_credentials",
        client_id: settings.clientId,
        client_secret: settings.clientSecret,
        scope,
      });
      const resp = await fetch(settings.tokenEndpoint, { method: "POST", body });
      const answer = await resp.json();
      if (!resp.ok) throw new Error(`token endpoint: ${resp.status} ${answer.error_description}`);
      return { token: answer.access_token, expiresOnTimestamp: Date.now() + answer.expires_in * 1000 };
    },
  };
}

function nextEvent(client, event) {
  return withTimeout(new Promise((resolve) => client.on(event, resolve)), event);
}

async function run(settings, checks) {
  const check = (name, ok, detail) => checks.push({ name, ok: !!ok, detail });
  const calls = [];
  const service = new WebPubSubServiceClient(settings.endpoint, entraCredential(settings, calls), settings.hub);
  const { url } = await service.getClientAccessToken({ userId: "entra-user", groups: ["entra-group"] });
  check("getClientAccessToken asks for the Web PubSub scope",
    calls.length > 0 && calls.every((s) => s === "https://webpubsub.azure.com/.default"), calls);
  check("getClientAccessToken answers the hub's wss URL", url.startsWith(`wss://${new URL(settings.endpoint).host}/client/hubs/${settings.hub}?access_token=`), url);

  const client = new WebPubSubClient(url, { protocol: WebPubSubJsonProtocol(), autoReconnect: false });
  const connectedEvent = nextEvent(client, "connected");
  await withTimeout(client.start(), "start");
  const connected = await connectedEvent;
  check("the client connects as the user of the generated token", connected.userId === "entra-user", connected);

  let message = nextEvent(client, "server-message");
  await service.group("entra-group").sendToAll("to the group joined on connect", { contentType: "text/plain" });
  const grp = (await message).message;
  check("REST group send with an Entra token reaches the client", grp.data === "to the group joined on connect", grp);
  message = nextEvent(client, "server-message");
  await service.sendToUser("entra-user", { via: "entra" });
  const user = (await message).message;
  check("REST sendToUser with an Entra token reaches the client", user.data?.via === "entra", user);
  client.stop();
}

async function main() {
  const settings = JSON.parse(process.argv[2]);
  const out = { ok: true, checks: [] };
  try {
    await run(settings, out.checks);
  } catch (e) {
    out.error = String(e && e.stack ? e.stack : e);
  }
  out.ok = !out.error && out.checks.every((c) => c.ok);
  console.log(JSON.stringify(out));
  process.exit(out.ok ? 0 : 1);
}

main();
