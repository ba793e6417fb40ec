package hub

import "testing"

func TestConnectionQuotaOptions(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want int
	}{{Options{}, 0}, {Options{Units: 2}, 2000}, {Options{Units: 100, ConnectionQuota: 3}, 3}} {
		if got := tc.opts.connectionQuota(); got != tc.want {
			t.Errorf("%+v: quota %d, want %d", tc.opts, got, tc.want)
		}
	}
	for _, bad := range []Options{
		{RedirectNegotiate: true},
		{AccessKey: "k", Path: "/my-hub"},
		{AccessKey: "k", Path: "/client"},
		{AccessKey: "k", Path: "/aspnetclient"},
		{Path: "/signalr"},
		{Path: "/signalr/hubs"},
		{Units: -1},
		{MessageRateLimit: -1},
	} {
		if _, err := New(bad, nil); err == nil {
			t.Errorf("New(%+v) accepted", bad)
		}
	}
}
