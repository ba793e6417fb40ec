package specs

import (
	"bytes"
	"strings"
	"testing"

	openslov1 "github.com/OpenSLO/oslo/pkg/manifest/v1"
	"github.com/OpenSLO/oslo/pkg/validate"
	"gopkg.in/yaml.v3"
)

// decodeOpenSLO decodes one openslo/v1 document strictly into the OpenSLO
// project's own Go types (oslo, its reference tool), by kind.
func decodeOpenSLO(doc string) (any, error) {
	var head struct {
		Kind string `yaml:"kind"`
	}
	if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.KnownFields(true)
	switch head.Kind {
	case openslov1.KindService:
		var s openslov1.Service
		err := dec.Decode(&s)
		return s, err
	case openslov1.KindSLO:
		var s openslov1.SLO
		err := dec.Decode(&s)
		return s, err
	}
	return nil, nil
}

// oslo's validate (the checks of `oslo validate`) accepts the file, and
// every document decodes strictly into oslo's openslo/v1 types with the
// objective, window and indicator of its scenario.
func TestOpenSLOValidatesWithOslo(t *testing.T) {
	data := written(t, FormatOpenSLO)
	if err := validate.Files([]string{writeFile(t, "openslo.yaml", string(data))}); err != nil {
		t.Fatalf("oslo validate: %v\n%s", err, data)
	}
	docs := documents(data)
	if len(docs) != 4 {
		t.Fatalf("%d documents, want the service and one SLO per run scenario", len(docs))
	}
	wantTargets := []float64{0.99, 0.995, 0.99}
	wantWindows := []string{"30d", "28d", "30d"}
	for i, doc := range docs {
		v, err := decodeOpenSLO(doc)
		if err != nil || v == nil {
			t.Fatalf("document %d does not decode strictly as a Service or SLO: %v\n%s", i, err, doc)
		}
		if i == 0 {
			if s, ok := v.(openslov1.Service); !ok || s.Metadata.Name != Service || s.APIVersion != openslov1.APIVersion {
				t.Errorf("document 0 is %+v, want the openslo/v1 Service %s", v, Service)
			}
			continue
		}
		s, ok := v.(openslov1.SLO)
		if !ok {
			t.Fatalf("document %d is not an SLO", i)
		}
		ratio := s.Spec.Indicator.Spec.RatioMetric
		if s.Spec.Service != Service || s.Spec.BudgetingMethod != "Occurrences" || len(s.Spec.Objectives) != 1 ||
			s.Spec.Objectives[0].Target != wantTargets[i-1] || s.Spec.TimeWindow[0].Duration != wantWindows[i-1] ||
			!s.Spec.TimeWindow[0].IsRolling || ratio == nil || !ratio.Counter || ratio.Bad == nil ||
			!strings.Contains(ratio.Bad.MetricSource.MetricSourceSpec["query"], `outcome=~"over_1s|lost"`) {
			t.Errorf("SLO %d is %+v", i, s.Spec)
		}
	}
}

// oslo's checks, and the strict decoding, refuse what they should: so a
// pass above means something.
func TestOpenSLOChecksRefuseBrokenDocuments(t *testing.T) {
	data := string(written(t, FormatOpenSLO))
	broken := strings.Replace(data, "target: 0.99\n", "target: 1.5\n", 1)
	if err := validate.Files([]string{writeFile(t, "target.yaml", broken)}); err == nil {
		t.Error("oslo validate accepted an objective of 1.5")
	}
	broken = strings.Replace(data, "budgetingMethod: Occurrences", "budgetingMethod: Sometimes", 1)
	if err := validate.Files([]string{writeFile(t, "budgeting.yaml", broken)}); err == nil {
		t.Error("oslo validate accepted budgetingMethod: Sometimes")
	}
	doc := documents([]byte(data))[1]
	if _, err := decodeOpenSLO(strings.Replace(doc, "budgetingMethod:", "budgetMethod:", 1)); err == nil {
		t.Error("strict decoding accepted budgetMethod, a key openslo/v1 does not have")
	}
}
