package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sigproc/sigproc/assemble"
	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/config"
	"github.com/sigproc/sigproc/filter"
)

// designOptions are the flags of "sigproc design".
type designOptions struct {
	config     string
	typ        string
	rate       float64
	cutoff     float64
	low, high  float64
	taps       int
	window     string
	beta       float64
	format     string
	transition float64
	atten      float64
	response   string
	overwrite  bool
	points     int
}

const designExample = `  # 129-tap Hamming lowpass at 100 kHz for 1 MS/s, one tap per line
  sigproc design --type lowpass --rate 1e6 --cutoff 1e5 --taps 129 > taps.txt

  # Use the file in a config:   filter: {taps_file: taps.txt}

  # Kaiser bandpass as a Go slice, plus its response for plotting
  sigproc design --type bandpass --rate 48000 --low 300 --high 3400 --taps 255 \
      --window kaiser --beta 8 --format go --response response.csv

  # The filter a config designs (flags override its filter.design)
  sigproc design -c configs/synthetic-cpu.yaml --taps 255

  # By specification: 70 dB outside 75-125 kHz, Kaiser length and beta as
  # scipy's kaiserord picks them, measured outside that same band
  sigproc design --rate 2e6 --cutoff 1e5 --transition 5e4 --attenuation 70

  # A config with stages: its first designed fir or resample stage
  sigproc design -c configs/channelize.yaml

  # A channelizer's default prototype (taps_per_channel × channels taps)
  sigproc design -c configs/filterbank.yaml`

func newDesignCmd() *cobra.Command {
	var o designOptions
	cmd := &cobra.Command{
		Use:   "design",
		Short: "Design windowed-sinc FIR taps and measure their response",
		Long: `Design prints the taps of a windowed-sinc FIR filter on stdout, then on
stderr its measured passband ripple and stopband attenuation.

The filter comes from the flags, or from a config's filter.design with -c
(the config's sample rate is used; flags that are given override it). For a
config with stages, the first fir or resample stage with a design is taken,
at its own input rate (times up for a resampler); a resampler's taps are
printed with the gain of up that the stage applies to them. A channelize
stage without taps counts as designed: its default prototype is printed.

Design by specification: --attenuation DB with --transition HZ picks a Kaiser
window's length and beta as scipy.signal.kaiserord does (no --taps), and the
attenuation is then measured outside exactly that transition band.

Output formats (--format):
  lines  one tap per line, exact float32 values; usable as filter.taps_file
  csv    all taps on one line, comma-separated; also readable as a taps file
  json   a JSON array; paste it into a config as filter.taps
  go     a Go []float32 literal

The measurement ignores a --transition Hz wide region centred on every band
edge (default 4*rate/taps, or the window's own transition width where that is
wider, as for blackman and kaiser; narrowed so every band keeps a tenth of its
width). --response FILE
writes freq_hz,magnitude_db from DC to Nyquist for plotting.`,
		Example: designExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDesign(cmd, &o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", "", "take the design (and sample rate) from this config's filter.design")
	f.StringVar(&o.typ, "type", filter.Lowpass, "lowpass, highpass, bandpass or bandstop")
	f.Float64Var(&o.rate, "rate", 0, "sample rate in S/s (required without -c)")
	f.Float64Var(&o.cutoff, "cutoff", 0, "cutoff in Hz (lowpass, highpass)")
	f.Float64Var(&o.low, "low", 0, "lower band edge in Hz (bandpass, bandstop)")
	f.Float64Var(&o.high, "high", 0, "upper band edge in Hz (bandpass, bandstop)")
	f.IntVar(&o.taps, "taps", 0, "number of taps (required without -c; odd for highpass and bandstop)")
	f.StringVar(&o.window, "window", filter.WindowHamming, "hamming, hann, blackman, kaiser or rectangular")
	f.Float64Var(&o.beta, "beta", 0, "Kaiser window beta (default 8.6, about 80 dB stopband)")
	f.StringVar(&o.format, "format", "lines", "output format: lines, csv, json or go")
	f.Float64Var(&o.transition, "transition", 0, "transition width in Hz: ignored around band edges when measuring (default 4*rate/taps or the window's), and with --attenuation the design's")
	f.Float64Var(&o.atten, "attenuation", 0, "design by specification: stopband attenuation in dB over --transition (Kaiser, as scipy's kaiserord)")
	f.StringVar(&o.response, "response", "", "write the magnitude response as CSV (freq_hz,magnitude_db) to this file")
	f.IntVar(&o.points, "points", 1024, "number of frequencies in --response")
	f.BoolVar(&o.overwrite, "overwrite", false, "replace an existing --response file (default: refuse it)")
	return cmd
}

func runDesign(cmd *cobra.Command, o *designOptions) error {
	spec, inputs, gain, err := designSpec(cmd, o)
	if err != nil {
		return err
	}
	if err := checkOutputs(inputs, outputFlag{"--response", o.response}); err != nil {
		return err
	}
	switch o.format {
	case "lines", "csv", "json", "go":
	default:
		return fmt.Errorf("--format: unknown value %q (allowed: lines, csv, json, go)", o.format)
	}
	if o.response != "" && (o.points < 2 || o.points > maxPoints) {
		return fmt.Errorf("--points: must be in 2..%d, got %d", maxPoints, o.points)
	}
	taps, err := filter.Design(spec)
	if err != nil {
		return fmt.Errorf("design: %w", err)
	}
	transition := o.transition
	if spec.BySpec() {
		transition = spec.TransitionHz // the band the attenuation was asked outside of
	} else if !cmd.Flags().Changed("transition") {
		transition = defaultTransition(spec)
	}
	if spec, err = spec.Resolve(); err != nil {
		return fmt.Errorf("design: %w", err)
	}
	resp, err := filter.Measure(taps, spec, transition)
	if err != nil {
		return fmt.Errorf("measure: %w (try a smaller --transition)", err)
	}
	// A resampler's designed taps run with a gain of up, which keeps the
	// signal's amplitude: print (and plot) the taps it applies.
	for i := range taps {
		taps[i] *= float32(gain)
	}

	w := bufio.NewWriter(cmd.OutOrStdout())
	if err := writeTaps(w, taps, spec, o.format); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write taps: %w", err)
	}
	if o.response != "" {
		if err := writeResponse(o.response, o.overwrite, taps, spec.SampleRate, o.points); err != nil {
			return err
		}
	}
	if gain != 1 {
		fmt.Fprintf(cmd.ErrOrStderr(), "resample stage: the taps are printed with the gain of ×%g (up) the stage applies to designed taps (passband %+.1f dB)\n",
			gain, 20*math.Log10(gain))
	}
	_, err = fmt.Fprintf(cmd.ErrOrStderr(), "%s: passband ripple %.3f dB, stopband attenuation %.1f dB (%s Hz transition bands excluded)\n",
		describeSpec(spec), resp.PassbandRippleDB, resp.StopbandAttenDB, fmtHz(math.Round(transition*10)/10))
	return err
}

// designSpec builds the spec from -c and/or the flags, lists the files it
// read (with -c: the config and the files it names), and returns the gain
// the config's stage applies to the designed taps (a resampler's up; 1
// otherwise).
func designSpec(cmd *cobra.Command, o *designOptions) (spec filter.Spec, inputs []string, gain float64, err error) {
	changed := cmd.Flags().Changed
	gain = 1
	if o.config != "" {
		cfg, err := config.Load(o.config)
		if err != nil {
			return spec, nil, 1, err
		}
		inputs = assemble.ConfigInputs(cfg, o.config)
		d, scale, g := cfg.FirstDesign()
		gain = g
		proto, pscale, isProto := cfg.FirstPrototype()
		if d == nil && isProto {
			d, scale = &config.Design{}, pscale // the rate is found as for a design
		}
		if d == nil {
			what := "filter has no design (it uses taps or taps_file)"
			if len(cfg.Stages) > 0 {
				what = "no stage has a design (they use taps or taps_file)"
			}
			return spec, nil, 1, fmt.Errorf("%s: %s; give the design as flags instead", o.config, what)
		}
		rate := cfg.Source.SampleRate
		if rate == 0 && cfg.Source.Type == config.SourceFile && !changed("rate") {
			// wav and sigmf carry the rate in the file.
			src, err := capture.OpenFile(cfg.Source.Path, cfg.Source.Format, 0)
			if err != nil {
				return spec, nil, 1, cfg.Wrap("source.path", fmt.Errorf("%w (or give --rate)", err))
			}
			rate = src.Info().SampleRate
			if f, ok := src.(interface{ Files() []string }); ok {
				inputs = append(inputs, f.Files()...)
			}
			src.Close()
		}
		spec = d.Spec(rate * scale)
		if isProto {
			// The prototype's design, at the stage's rate.
			at := rate * scale
			spec = proto
			if at > 0 {
				spec.CutoffHz, spec.SampleRate = proto.CutoffHz*at/proto.SampleRate, at
			}
		}
	} else {
		var missing []string
		if !changed("rate") {
			missing = append(missing, "--rate")
		}
		if !changed("taps") && !changed("attenuation") {
			missing = append(missing, "--taps")
		}
		if len(missing) > 0 {
			return spec, nil, 1, fmt.Errorf("%s required (or --transition and --attenuation for --taps, or take the design from a config with -c)", strings.Join(missing, " and "))
		}
		spec = filter.Spec{Type: o.typ, Window: o.window}
	}
	if changed("taps") && changed("attenuation") {
		return spec, nil, 1, errors.New("--taps and --attenuation are exclusive: --attenuation with --transition picks the Kaiser length itself (drop --taps), or --taps fixes the length (drop --attenuation)")
	}
	if changed("type") {
		spec.Type = o.typ
	}
	if changed("rate") {
		spec.SampleRate = o.rate
	}
	if changed("cutoff") {
		spec.CutoffHz = o.cutoff
	}
	if changed("low") {
		spec.LowHz = o.low
	}
	if changed("high") {
		spec.HighHz = o.high
	}
	if changed("taps") {
		spec.NumTaps = o.taps
		spec.TransitionHz, spec.AttenuationDB = 0, 0
	}
	if changed("attenuation") {
		if !changed("transition") && spec.TransitionHz == 0 {
			return spec, nil, 1, errors.New("--attenuation needs --transition (the band it is promised outside of)")
		}
		spec.AttenuationDB = o.atten
		if changed("transition") {
			spec.TransitionHz = o.transition
		}
		spec.NumTaps, spec.KaiserBeta, spec.Window = 0, 0, ""
	}
	if changed("window") {
		spec.Window = o.window
		if o.window != filter.WindowKaiser {
			spec.KaiserBeta = 0
		}
	}
	if changed("beta") {
		spec.KaiserBeta = o.beta
	}
	if spec.Window == filter.WindowKaiser && spec.KaiserBeta == 0 && !spec.BySpec() {
		spec.KaiserBeta = filter.DefaultKaiserBeta
	}
	if err := spec.Validate(); err != nil {
		return spec, nil, 1, err
	}
	return spec, inputs, gain, nil
}

// defaultTransition is 4*rate/taps (about the main-lobe width of the usual
// windows), narrowed where needed so that every band keeps at least a tenth
// of its width: Measure ignores transition/2 on each side of an edge, so a
// band with one edge (at DC or Nyquist) loses transition/2 and a band with
// two edges loses the whole transition.
func defaultTransition(s filter.Spec) float64 {
	// A Kaiser window of beta 8.6 has a transition about 5.4·rate/taps
	// wide: measuring at 4·rate/taps reported its ~86 dB as 39 dB.
	t := math.Max(4*s.SampleRate/float64(s.NumTaps), s.NominalTransitionHz())
	nyq := s.SampleRate / 2
	type band struct{ width, edges float64 }
	var bands []band
	switch s.Type {
	case filter.Lowpass, filter.Highpass:
		bands = []band{{s.CutoffHz, 1}, {nyq - s.CutoffHz, 1}}
	default:
		bands = []band{{s.LowHz, 1}, {s.HighHz - s.LowHz, 2}, {nyq - s.HighHz, 1}}
	}
	for _, b := range bands {
		t = math.Min(t, 0.9*b.width*2/b.edges)
	}
	return t
}

func writeTaps(w io.Writer, taps []float32, spec filter.Spec, format string) error {
	ftoa := func(v float32) string { return strconv.FormatFloat(float64(v), 'g', -1, 32) }
	var err error
	switch format {
	case "lines":
		for _, t := range taps {
			if _, err = fmt.Fprintln(w, ftoa(t)); err != nil {
				break
			}
		}
	case "csv":
		parts := make([]string, len(taps))
		for i, t := range taps {
			parts[i] = ftoa(t)
		}
		_, err = fmt.Fprintln(w, strings.Join(parts, ","))
	case "json":
		var b []byte
		if b, err = json.Marshal(taps); err == nil {
			_, err = fmt.Fprintf(w, "%s\n", b)
		}
	case "go":
		var sb strings.Builder
		fmt.Fprintf(&sb, "// %s (sigproc design)\nvar taps = []float32{\n", describeSpec(spec))
		for i, t := range taps {
			if i%6 == 0 {
				sb.WriteString("\t")
			}
			sb.WriteString(ftoa(t))
			sb.WriteString(",")
			if i%6 == 5 || i == len(taps)-1 {
				sb.WriteString("\n")
			} else {
				sb.WriteString(" ")
			}
		}
		sb.WriteString("}\n")
		_, err = io.WriteString(w, sb.String())
	}
	if err != nil {
		return fmt.Errorf("write taps: %w", err)
	}
	return nil
}

// maxPoints bounds --points: a response of a million frequencies is finer
// than any plot, and far more would only exhaust memory.
const maxPoints = 1 << 20

// writeResponse writes |H| in dB at points frequencies from DC to Nyquist.
func writeResponse(path string, overwrite bool, taps []float32, rate float64, points int) (err error) {
	f, err := createOutput("--response", path, overwrite)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("--response: close %s: %w", path, cerr)
		}
	}()
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "freq_hz,magnitude_db")
	mag := filter.FrequencyResponse(taps, points)
	for k, m := range mag {
		freq := float64(k) * rate / 2 / float64(points-1)
		db := -300.0 // floor for exact zeros, so the CSV has no -Inf
		if m > 0 {
			db = math.Max(20*math.Log10(m), db)
		}
		fmt.Fprintf(w, "%s,%.4f\n", strconv.FormatFloat(freq, 'f', 3, 64), db)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("--response: write %s: %w", path, err)
	}
	return nil
}

func describeSpec(s filter.Spec) string {
	var edges string
	switch s.Type {
	case filter.Bandpass, filter.Bandstop:
		edges = fmtHz(s.LowHz) + "-" + fmtHz(s.HighHz) + " Hz"
	default:
		edges = fmtHz(s.CutoffHz) + " Hz"
	}
	win := s.Window
	if win == "" {
		win = filter.WindowHamming
	}
	if win == filter.WindowKaiser {
		win += " beta " + strconv.FormatFloat(s.KaiserBeta, 'g', -1, 64)
	}
	return fmt.Sprintf("%s %s, %d taps, %s window, %s S/s", s.Type, edges, s.NumTaps, win, fmtHz(s.SampleRate))
}

func fmtHz(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
