// Command fastconvplot draws docs/img/issue20-cpu.png, throughput against
// tap count for sigproc, GNU Radio and scipy, from the JSON that
// bench/fastconv_vs_gnuradio.py writes.
//
//	go run ./bench/fastconvplot -in docs/data/issue20-cpu.json -out docs/img/issue20-cpu.png
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"image/color"
	"log"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

type result struct {
	Taps            int     `json:"taps"`
	Sigproc         float64 `json:"sigproc"`
	GRFir           float64 `json:"gr_fir"`
	GRFFT           float64 `json:"gr_fft"`
	ScipyOAConvolve float64 `json:"scipy_oaconvolve"`
	RunE2E          float64 `json:"run_e2e"`
	GRE2E           float64 `json:"gr_e2e"`
}

func main() {
	in := flag.String("in", "docs/data/issue20-cpu.json", "results JSON")
	out := flag.String("out", "docs/img/issue20-cpu.png", "PNG to write")
	flag.Parse()
	b, err := os.ReadFile(*in)
	if err != nil {
		log.Fatal(err)
	}
	var doc struct {
		Samples int      `json:"samples"`
		Results []result `json:"results"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		log.Fatalf("%s: %v", *in, err)
	}
	if err := draw(doc.Results, *out); err != nil {
		log.Fatal(err)
	}
}

func draw(rs []result, path string) error {
	p := plot.New()
	p.Title.Text = "FIR on one core (issue 20): throughput against taps"
	p.X.Label.Text = "taps"
	p.Y.Label.Text = "MS/s"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	var ticks []plot.Tick
	for _, r := range rs {
		ticks = append(ticks, plot.Tick{Value: float64(r.Taps), Label: fmt.Sprint(r.Taps)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	// Bottom left: sigproc's lines run along the top, GNU Radio's direct
	// filter falls away to the bottom right.
	p.Legend.Top, p.Legend.Left = false, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(10), vg.Points(10)
	series := []struct {
		name   string
		get    func(result) float64
		c      color.RGBA
		dashed bool
	}{
		{"sigproc bench cpu (auto)", func(r result) float64 { return r.Sigproc }, color.RGBA{R: 200, A: 255}, false},
		{"sigproc run, file->null", func(r result) float64 { return r.RunE2E }, color.RGBA{R: 200, A: 255}, true},
		{"GNU Radio fir_filter_fff", func(r result) float64 { return r.GRFir }, color.RGBA{B: 200, A: 255}, false},
		{"GNU Radio fft_filter_fff", func(r result) float64 { return r.GRFFT }, color.RGBA{G: 120, B: 200, A: 255}, false},
		{"GNU Radio flowgraph, file->null", func(r result) float64 { return r.GRE2E }, color.RGBA{G: 120, B: 200, A: 255}, true},
		{"scipy oaconvolve", func(r result) float64 { return r.ScipyOAConvolve }, color.RGBA{G: 150, A: 255}, false},
	}
	for _, s := range series {
		xy := make(plotter.XYs, 0, len(rs))
		for _, r := range rs {
			if v := s.get(r); v > 0 {
				xy = append(xy, plotter.XY{X: float64(r.Taps), Y: v})
			}
		}
		l, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			return err
		}
		l.Color, pts.Color = s.c, s.c
		if s.dashed {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l, pts)
		p.Legend.Add(s.name, l, pts)
	}
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}
