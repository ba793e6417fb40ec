package e2e

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"testing"
	"time"
)

// latencySeries selects the latency histogram in whichever form a
// Prometheus stores it: the native histogram, or the classic buckets,
// which carry the exemplars.
const latencySeries = `{__name__=~"hubprobe_message_latency_seconds(_bucket)?"}`

// exemplarLabels are the labels every exemplar of the latency histogram
// carries.
var exemplarLabels = []string{"run_id", "sender", "sequence"}

// checkExemplars waits until Prometheus returns exemplars of the latency
// histogram, each naming its message by exactly exemplarLabels, and one of
// them the run_id of a run whose page hubprobe serves.
func checkExemplars(ctx context.Context, t *testing.T, prom promAPI, hubprobeAddr string) {
	t.Helper()
	var pages []string
	err := eventually(ctx, dataLimit, func(ctx context.Context) error {
		series, err := prom.exemplars(ctx, latencySeries, 5*time.Minute)
		if err != nil {
			return err
		}
		runIDs, err := exemplarRunIDs(series)
		if err != nil {
			return err
		}
		pages, err = runPages(ctx, hubprobeAddr, runIDs)
		return err
	})
	if err != nil {
		t.Errorf("exemplars of %s: %v", latencySeries, err)
		return
	}
	t.Logf("exemplars name runs whose pages hubprobe serves: %v", pages)
}

// exemplarRunIDs returns the run_id of every exemplar, and an error if
// there is none or one is labelled otherwise.
func exemplarRunIDs(series []exemplarSeries) ([]string, error) {
	var ids []string
	for _, s := range series {
		for _, e := range s.Exemplars {
			if got := slices.Sorted(maps.Keys(e.Labels)); !slices.Equal(got, exemplarLabels) {
				return nil, fmt.Errorf("an exemplar of %v has labels %v, want %v", s.SeriesLabels, e.Labels, exemplarLabels)
			}
			ids = append(ids, e.Labels["run_id"])
		}
	}
	if len(ids) == 0 {
		return nil, errors.New("no exemplars yet")
	}
	return ids, nil
}

// runPages returns the pages of the runs hubprobe still keeps among runIDs,
// and an error if it keeps none.
func runPages(ctx context.Context, hubprobeAddr string, runIDs []string) ([]string, error) {
	var found []string
	for _, id := range slices.Compact(slices.Sorted(slices.Values(runIDs))) {
		url := "http://" + hubprobeAddr + "/runs/" + id
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			found = append(found, url)
		}
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("hubprobe has no page for any of the runs %v", runIDs)
	}
	return found, nil
}
