package cataloguetest

import (
	"reflect"
	"testing"
)

func TestOneFormOnly(t *testing.T) {
	rows := map[string]Row{
		"h":         {Name: "h", Type: "histogram"},
		"g":         {Name: "g", Type: "histogram"},
		"s":         {Name: "s", Type: "summary"},
		"c_total":   {Name: "c_total", Type: "counter"},
		"gauge_now": {Name: "gauge_now", Type: "gauge"},
	}
	cases := []struct {
		names []string
		want  []string
	}{
		{[]string{"h", "h_bucket", "h_count"}, nil},
		{[]string{"h", "h_count", "g", "g_bucket"}, nil},
		{[]string{"h_bucket", "h_count"}, []string{"h"}},
		{[]string{"h"}, []string{"h"}},
		{[]string{"h_sum", "g", "g_bucket"}, []string{"h"}},
		{[]string{"h", "h_bucket", "g_count"}, []string{"g"}},
		{[]string{"s_count", "s_sum", "c_total", "gauge_now"}, nil},
		{[]string{"unknown_bucket"}, nil},
	}
	for _, c := range cases {
		if got := OneFormOnly(rows, c.names); !reflect.DeepEqual(got, c.want) {
			t.Errorf("OneFormOnly(%v) = %v, want %v", c.names, got, c.want)
		}
	}
}
