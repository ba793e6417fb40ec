// Package azure is how hubprobe speaks to Azure SignalR Service and Azure
// Web PubSub as a service's own SDKs do: connection strings (an access key,
// or a Microsoft Entra ID AuthType: azure, azure.msi, azure.app), the
// azidentity credentials those sign in with, the JWTs minted with an access
// key and their verification, client tokens (minted, or asked of the
// service's :generateToken), and the REST clients of both data planes with
// Retry-After and a jittered backoff.
//
// A connection string prints with its access key or client secret redacted
// under every fmt verb, and its parse errors name keys, never values: no
// secret leaves this package as text.
package azure
