package probe

import (
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
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
		if f := x.FromFirstSample; f != nil {
			fmt.Fprintf(w, "  from first sample p50 %.2f p99 %.2f µs (fill %.2f µs)", f.P50, f.P99, x.FillUs)
		}
		if x.ComputeP50 > 0 {
			fmt.Fprintf(w, "  gpu compute p50 %.2f p99 %.2f µs", x.ComputeP50, x.ComputeP99)
		}
		if x.Late > 0 {
			fmt.Fprintf(w, "  %d blocks late (started over a period behind their time; the source's pace: one block per %.2f µs, asked %.2f)", x.Late, x.PaceUs, x.PeriodUs)
		}
		if x.Retunes > 0 {
			fmt.Fprintf(w, "  retunes %d, call to first retuned block p50 %.1f max %.1f µs (the call itself p50 %.1f; the retuned block p50 %.1f blocks after the one the consumer was at, its own latency p50 %.1f)",
				x.Retunes, x.RetuneApplyP50, x.RetuneApplyMax, x.RetuneCallP50, x.RetuneLeadP50, x.RetuneBlockP50)
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

// WriteHistogram draws one latency histogram per result, stacked, each on
// its own axis up to 1.2 × its p99.9 (the paths differ by orders of
// magnitude), into a PNG.
func WriteHistogram(path, title string, rs []Result) error {
	if len(rs) == 0 {
		return fmt.Errorf("write %s: no results", path)
	}
	colors := []color.NRGBA{{R: 31, G: 119, B: 180, A: 255}, {R: 214, G: 39, B: 40, A: 255}, {R: 44, G: 160, B: 44, A: 255}, {R: 148, G: 103, B: 189, A: 255}}
	plots := make([][]*plot.Plot, len(rs))
	for i, r := range rs {
		p := plot.New()
		if i == 0 {
			p.Title.Text = title
		}
		p.X.Label.Text = fmt.Sprintf("%s: end-to-end latency per block (µs)", r.Path)
		p.Y.Label.Text = "blocks"
		hi := r.P999 * 1.2
		var vals plotter.Values
		for _, v := range r.Latencies {
			if v <= hi {
				vals = append(vals, v)
			}
		}
		if len(vals) > 0 {
			h, err := plotter.NewHist(vals, 80)
			if err != nil {
				return fmt.Errorf("histogram %s: %w", r.Path, err)
			}
			h.FillColor = colors[i%len(colors)]
			h.LineStyle.Width = 0
			p.Add(h)
			p.Legend.Add(fmt.Sprintf("p50 %.2f  p99 %.2f  p99.9 %.2f  max %.1f µs, %d blocks, %d dropped",
				r.P50, r.P99, r.P999, r.Max, r.Blocks, r.Dropped), h)
			p.Legend.Top = true
		}
		plots[i] = []*plot.Plot{p}
	}
	const w, rowH = 8 * vg.Inch, 3 * vg.Inch
	img := vgimg.New(w, rowH*vg.Length(len(rs)))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(rs), Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteIntervalHeader prints the column names of WriteInterval's lines.
func WriteIntervalHeader(w io.Writer) {
	fmt.Fprintf(w, "%-12s %5s %13s %10s %7s %6s %10s %6s %11s %8s %8s %8s %8s %8s\n",
		"path", "int", "t s", "blocks", "drops", "gaps", "verified", "mism", "max relerr", "p50 µs", "p90 µs", "p99 µs", "p99.9 µs", "max µs")
}

// WriteInterval prints one soak interval as a line, flagged when it had
// drops, gaps or mismatches.
func WriteInterval(w io.Writer, path string, iv Interval) {
	fmt.Fprintf(w, "%-12s %5d %13s %10d %7d %6d %10d %6d %11.3g %8.2f %8.2f %8.2f %8.2f %8.1f",
		path, iv.Index, fmt.Sprintf("%g-%g", iv.StartS, iv.EndS), iv.Blocks, iv.Dropped, iv.Gaps, iv.Verified, iv.Mismatches, iv.MaxRelErr,
		iv.P50, iv.P90, iv.P99, iv.P999, iv.Max)
	if iv.Slow > 0 {
		fmt.Fprintf(w, "  %d over %.0f µs", iv.Slow, float64(SlowLatency)/1e3)
	}
	if iv.OverRange > 0 {
		fmt.Fprintf(w, "  %d over %.0f µs", iv.OverRange, float64(HistRange)/1e3)
	}
	if iv.Unverified > 0 {
		fmt.Fprintf(w, "  %d unverified", iv.Unverified)
	}
	if !iv.OK() {
		fmt.Fprint(w, "  FAIL")
	}
	fmt.Fprintln(w)
}

// WriteSoakSummary prints, for each soak result, the verdict and how flat
// the percentiles stayed across its intervals.
func WriteSoakSummary(w io.Writer, rs []Result) {
	for _, r := range rs {
		s := r.Soak
		if s == nil {
			continue
		}
		verdict := "PASS"
		switch {
		case s.Interrupted:
			verdict = "INTERRUPTED"
		case !s.Passed:
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "soak %s: %s: %d intervals of %gs, %d blocks scheduled, %d seen, %d dropped, %d gaps, %d verified (1 in %d), %d mismatches, max rel err %.3g",
			r.Path, verdict, len(s.Intervals), s.IntervalS, s.Scheduled, r.Blocks, s.Dropped, s.Gaps, r.Verified, s.VerifyEvery, r.Mismatches, r.MaxRelErr)
		if s.Unverified > 0 {
			fmt.Fprintf(w, ", %d unverified (their input was overwritten before the check reached them)", s.Unverified)
		}
		if r.Dropped > s.Dropped {
			fmt.Fprintf(w, " (+%d dropped in the warmup)", r.Dropped-s.Dropped)
		}
		if r.Late > 0 {
			fmt.Fprintf(w, "; %d blocks late: the source fell behind its schedule (one block per %.2f µs, not %.2f), so the soak ran longer than its duration", r.Late, r.PaceUs, r.PeriodUs)
		}
		fmt.Fprintln(w)
		if len(s.Intervals) == 0 {
			continue
		}
		span := func(get func(Interval) float64) (lo, hi float64) {
			lo, hi = math.Inf(1), math.Inf(-1)
			for _, iv := range s.Intervals {
				if iv.Blocks > 0 {
					lo, hi = math.Min(lo, get(iv)), math.Max(hi, get(iv))
				}
			}
			return lo, hi
		}
		l50, h50 := span(func(iv Interval) float64 { return iv.P50 })
		l99, h99 := span(func(iv Interval) float64 { return iv.P99 })
		l999, h999 := span(func(iv Interval) float64 { return iv.P999 })
		slow := 0.0
		if r.Blocks > 0 {
			slow = 1e6 * float64(s.Slow) / float64(r.Blocks)
		}
		fmt.Fprintf(w, "soak %s: per-interval p50 %.2f-%.2f µs, p99 %.2f-%.2f µs, p99.9 %.2f-%.2f µs; overall p50 %.2f p99 %.2f p99.9 %.2f max %.1f µs; %d blocks over %.0f µs (%.2f per million)\n",
			r.Path, l50, h50, l99, h99, l999, h999, r.P50, r.P99, r.P999, r.Max, s.Slow, float64(SlowLatency)/1e3, slow)
	}
}
