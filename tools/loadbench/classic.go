package main

import "path/filepath"

// classicPair is hubprobePair's echo on classic ASP.NET SignalR over
// WebSockets: `hubprobe hub` serves the benchmark's Signalrbench hub at
// /signalr, probed by `hubprobe run` with an aspnet_signalr target.
func classicPair(o options, binary, dir string) pairSpec {
	return hubRunPair(binary, pairClassic, "/signalr", filepath.Join(dir, "loadbench-classic.yml"),
		func(url string) string { return classicConfig(o, url) })
}

// classicConfig is hubprobeConfig's echo on a classic target.
func classicConfig(o options, url string) string {
	return echoConfig(o, "service: aspnet_signalr\n    url: "+url)
}
