// Package e2e holds hubprobe's end-to-end tests: the built daemon, scraped by
// a real Prometheus that evaluates the shipped rules and every dashboard
// query. The tests need the prometheus binary on PATH; scripts/test.sh
// installs it.
package e2e
