package metrics

import (
	"context"
	"fmt"
	"math"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Families are metric families by name, gathered from Registry or scraped
// from an endpoint: what `xbot bench` and the tests read figures from.
type Families map[string]*dto.MetricFamily

// Gather reads Registry.
func Gather() (Families, error) { return gather(Registry) }

// GatherLag reads xbot_projector_lag_records alone, as Gather would.
func GatherLag() (Families, error) { return gather(lagRegistry) }

func gather(g prometheus.Gatherer) (Families, error) {
	fams, err := g.Gather()
	if err != nil {
		return nil, fmt.Errorf("gather metrics: %w", err)
	}
	out := make(Families, len(fams))
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out, nil
}

// Scrape reads the endpoint at addr (host:port) in the text format.
func Scrape(ctx context.Context, addr string) (Families, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+Path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", addr, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape %s: status %d", addr, resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", addr, err)
	}
	return fams, nil
}

// Value sums the counter or gauge name over its series whose labels include
// match (label, value pairs).
func (f Families) Value(name string, match ...string) float64 {
	var v float64
	for _, m := range f.series(name, match) {
		v += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return v
}

// Histogram merges the histogram name's series whose labels include match.
func (f Families) Histogram(name string, match ...string) Histogram {
	var h Histogram
	for _, m := range f.series(name, match) {
		mh := m.GetHistogram()
		h.Count += mh.GetSampleCount()
		h.Sum += mh.GetSampleSum()
		if h.Buckets == nil {
			h.Buckets = make([]Bucket, len(mh.GetBucket()))
		}
		for i, b := range mh.GetBucket() {
			h.Buckets[i].UpperBound = b.GetUpperBound()
			h.Buckets[i].Count += b.GetCumulativeCount()
		}
	}
	return h
}

func (f Families) series(name string, match []string) []*dto.Metric {
	fam, ok := f[name]
	if !ok {
		return nil
	}
	var out []*dto.Metric
	for _, m := range fam.GetMetric() {
		if hasLabels(m, match) {
			out = append(out, m)
		}
	}
	return out
}

func hasLabels(m *dto.Metric, match []string) bool {
	for i := 0; i+1 < len(match); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			found = found || (l.GetName() == match[i] && l.GetValue() == match[i+1])
		}
		if !found {
			return false
		}
	}
	return true
}

// Histogram is a histogram's samples: cumulative bucket counts.
type Histogram struct {
	Count   uint64
	Sum     float64
	Buckets []Bucket
}

// Bucket counts the samples at or below UpperBound.
type Bucket struct {
	UpperBound float64
	Count      uint64
}

// Minus returns the samples of h taken after before was read (both of the
// same histogram).
func (h Histogram) Minus(before Histogram) Histogram {
	out := Histogram{Count: h.Count - before.Count, Sum: h.Sum - before.Sum, Buckets: make([]Bucket, len(h.Buckets))}
	for i, b := range h.Buckets {
		out.Buckets[i] = b
		if i < len(before.Buckets) {
			out.Buckets[i].Count -= before.Buckets[i].Count
		}
	}
	return out
}

// Mean is the samples' mean, 0 without samples.
func (h Histogram) Mean() float64 {
	if h.Count == 0 {
		return 0
	}
	return h.Sum / float64(h.Count)
}

// Quantile estimates the q-quantile (0 < q < 1) as Prometheus's
// histogram_quantile does: linearly within the bucket that holds it. It is
// only as precise as the buckets; beyond the last bound it is that bound.
func (h Histogram) Quantile(q float64) float64 {
	if h.Count == 0 {
		return math.NaN()
	}
	rank := q * float64(h.Count)
	lower, below := 0.0, uint64(0)
	for _, b := range h.Buckets {
		if float64(b.Count) >= rank {
			in := b.Count - below
			if in == 0 {
				return b.UpperBound
			}
			return lower + (b.UpperBound-lower)*(rank-float64(below))/float64(in)
		}
		lower, below = b.UpperBound, b.Count
	}
	return lower
}
