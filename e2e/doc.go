// Package e2e holds hubprobe's end-to-end tests: the built daemon, scraped by
// real Prometheus instances, Debian's 2.x and a Prometheus 3 built from its
// Go module (one instance per way of storing histograms: classic, native,
// both, and on 3.x native histograms with custom buckets converted from the
// classic ones), that evaluate the shipped rules and every dashboard query,
// and pass their alerts to Debian's Alertmanager. The tests need
// prometheus, prometheus-alertmanager and Prometheus 3 installed, as
// scripts/test.sh does.
package e2e
