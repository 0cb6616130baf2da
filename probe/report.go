package probe

import (
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"os"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Report is what `sigproc probe` writes as JSON.
type Report struct {
	Device  string   `json:"device,omitempty"`
	Results []Result `json:"results"`
	// Ratios maps "explicit/zero-copy" style names to p50 ratios.
	Ratios map[string]float64 `json:"p50_ratios,omitempty"`
}

// NewReport builds a report and the p50 ratio of every path against the
// first zero-copy one.
func NewReport(device string, rs []Result) Report {
	r := Report{Device: device, Results: rs, Ratios: map[string]float64{}}
	var base *Result
	for i := range rs {
		if rs[i].Path == "zero-copy" {
			base = &rs[i]
			break
		}
	}
	if base != nil && base.P50 > 0 {
		for _, x := range rs {
			if x.Path != base.Path {
				r.Ratios[x.Path+"/"+base.Path] = x.P50 / base.P50
			}
		}
	}
	return r
}

// WriteJSON writes the report to path.
func (r Report) WriteJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteTable prints one line per result and the ratios.
func (r Report) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "%-18s %6s %5s %7s %8s %8s %8s %8s %8s %8s %7s %8s %8s\n",
		"path", "block", "taps", "blocks", "p50 µs", "p90 µs", "p99 µs", "p99.9 µs", "max µs", "mean µs", "drops", "verified", "MS/s")
	for _, x := range r.Results {
		fmt.Fprintf(w, "%-18s %6d %5d %7d %8.2f %8.2f %8.2f %8.2f %8.1f %8.2f %7d %8d %8.2f",
			x.Path, x.BlockSize, x.Taps, x.Blocks, x.P50, x.P90, x.P99, x.P999, x.Max, x.Mean, x.Dropped, x.Verified, x.MSps)
		if x.ComputeP50 > 0 {
			fmt.Fprintf(w, "  gpu compute p50 %.2f p99 %.2f µs", x.ComputeP50, x.ComputeP99)
		}
		fmt.Fprintln(w)
	}
	keys := make([]string, 0, len(r.Ratios))
	for k := range r.Ratios {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "p50 ratio %s = %.2fx\n", k, r.Ratios[k])
	}
}

// WriteHistogram draws the latency distribution of every result into a PNG.
func WriteHistogram(path, title string, rs []Result) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "end-to-end latency per block (µs)"
	p.Y.Label.Text = "blocks"
	hi := 0.0
	for _, r := range rs {
		hi = max(hi, r.P999*1.2)
	}
	colors := []color.RGBA{{R: 31, G: 119, B: 180, A: 160}, {R: 214, G: 39, B: 40, A: 160}, {R: 44, G: 160, B: 44, A: 160}, {R: 148, G: 103, B: 189, A: 160}}
	for i, r := range rs {
		var vals plotter.Values
		for _, v := range r.Latencies {
			if v <= hi {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			continue
		}
		h, err := plotter.NewHist(vals, 100)
		if err != nil {
			return fmt.Errorf("histogram %s: %w", r.Path, err)
		}
		h.FillColor = colors[i%len(colors)]
		h.LineStyle.Width = 0
		p.Add(h)
		p.Legend.Add(fmt.Sprintf("%s p50 %.1f µs p99 %.1f µs", r.Path, r.P50, r.P99), h)
	}
	p.Legend.Top = true
	if err := p.Save(8*vg.Inch, 4.5*vg.Inch, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
