// Package e2e holds hubprobe's end-to-end tests: the built daemon, scraped by
// real Prometheus instances (one storing classic histograms, one native
// histograms, one both) that evaluate the shipped rules and every dashboard
// query. The tests need the prometheus binary on PATH; scripts/test.sh
// installs it.
package e2e
