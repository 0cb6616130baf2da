package cuda

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/stage"
)

// What the CUDA backend runs is decided here, without a GPU: CheckChain
// (chain.go) refuses the rest before anything is opened, and SupportTable
// writes the README's table of supported combinations from the same rules,
// so the two cannot drift apart (TestREADMESupportTable), and
// scripts/gpu-check.sh checks every cell of it against the GPU.

// ErrMethod is returned for a convolution method the transport or the
// chain's kernels do not run on cuda.
var ErrMethod = errors.New("method not supported on cuda")

// plainMethod is the method a plain FIR runs with: the options' unless
// auto, else the fir stage's (a config's filter.method).
func plainMethod(c stage.Chain, o Options) (filter.Method, error) {
	if o.Method != filter.MethodAuto {
		return o.Method, nil
	}
	m, err := filter.ParseMethod(c.Stages[0].Method)
	if err != nil {
		return 0, fmt.Errorf("gpu: %w", err)
	}
	return m, nil
}

// checkMethod refuses a method that the transport or kernels would not
// honour: the zero-copy kernel and the chain kernels convolve directly,
// the batch kernel takes at most BatchMaxTaps taps, and overlap-save takes
// at most two values per frame (one channel, real or complex, or two real
// channels). Method auto never fails here unless the taps leave no method.
func checkMethod(c stage.Chain, o Options) error {
	taps, plain := c.PlainFIR()
	if !plain {
		for i, s := range c.Stages {
			if m, err := filter.ParseMethod(s.Method); err != nil {
				return fmt.Errorf("gpu: stage %d: %w", i, err)
			} else if s.Def().Params()&stage.ParamMethod != 0 && m == filter.MethodFFT {
				return fmt.Errorf("%w: stage %d (%s): method fft: the chain kernels convolve directly, computing only the kept outputs; use method: direct or auto, or backend: cpu", ErrMethod, i, c)
			}
		}
		return nil
	}
	m, err := plainMethod(c, o)
	if err != nil {
		return err
	}
	lanes := c.ChannelCount() * channels(c.Complex)
	switch {
	case o.Transport == TransportZeroCopy && m == filter.MethodFFT:
		return fmt.Errorf("%w: method fft runs on the explicit transports, the zero-copy kernel convolves directly; use method: direct or auto, or transport: explicit", ErrMethod)
	case o.Transport == TransportZeroCopy:
		return nil
	case m == filter.MethodDirect && len(taps) > BatchMaxTaps:
		return fmt.Errorf("%w: method direct takes at most %d taps on cuda, the filter has %d; use method: fft or auto", ErrMethod, BatchMaxTaps, len(taps))
	case ResolveMethod(m, len(taps)) == filter.MethodFFT && lanes > 2 && (m == filter.MethodFFT || len(taps) > BatchMaxTaps):
		return fmt.Errorf("%w: method fft takes one channel (real or complex) or two real channels on cuda, the stream has %d values per frame (%d channels, complex %v); use method: direct (up to %d taps), or backend: cpu",
			ErrMethod, lanes, c.ChannelCount(), c.Complex, BatchMaxTaps)
	}
	return nil
}

// supportTransports are the table's transports, in column order.
var supportTransports = []Transport{TransportZeroCopy, TransportExplicit, TransportExplicitPageable}

// supportChannels are the table's channel counts, in column order.
var supportChannels = []int{1, 4}

// supportRow is one row of the support table: a kind of chain and the
// method of its fir (empty when it has none to choose).
type supportRow struct {
	chain  string
	method string
	build  func(method string) []stage.Stage
}

func supportRows() []supportRow {
	taps := make([]float32, 129)
	for i := range taps {
		taps[i] = 1.0 / 129
	}
	fir := func(m string) stage.Stage {
		s := stage.NewFIR(taps, 1)
		s.Method = m
		return s
	}
	firDec := func(m string) stage.Stage { s := fir(m); s.Decimate = 8; return s }
	shift := stage.NewShift(-1e5)
	resample := stage.NewResample(taps, 3, 2)
	var rows []supportRow
	for _, m := range []string{"auto", "direct", "fft"} {
		rows = append(rows, supportRow{"fir", m, func(m string) []stage.Stage { return []stage.Stage{fir(m)} }})
	}
	for _, m := range []string{"auto", "direct", "fft"} {
		rows = append(rows, supportRow{"fir ÷8", m, func(m string) []stage.Stage { return []stage.Stage{firDec(m)} }})
	}
	rows = append(rows,
		supportRow{"shift", "", func(string) []stage.Stage { return []stage.Stage{shift} }},
		supportRow{"resample 3/2", "", func(string) []stage.Stage { return []stage.Stage{resample} }})
	for _, m := range []string{"auto", "direct", "fft"} {
		rows = append(rows, supportRow{"shift → fir ÷8", m, func(m string) []stage.Stage { return []stage.Stage{shift, firDec(m)} }})
	}
	rows = append(rows, supportRow{"fir → resample 3/2", "auto", func(m string) []stage.Stage { return []stage.Stage{fir(m), resample} }})
	bank := stage.NewChannelize(make([]float32, 16*16), 16, 8)
	rows = append(rows,
		supportRow{"channelize 16 ÷8", "", func(string) []stage.Stage { return []stage.Stage{bank} }},
		supportRow{"shift → channelize 16 ÷8 → select", "", func(string) []stage.Stage {
			return []stage.Stage{shift, bank, stage.NewSelect(3, 12, 0)}
		}},
		supportRow{"channelize 16 ÷8 → select → fir ÷2", "auto", func(m string) []stage.Stage {
			f := fir(m)
			f.Decimate = 2
			return []stage.Stage{bank, stage.NewSelect(3, 12, 0), f}
		}})
	return rows
}

// supportCell says where the row runs on transport t with n channels:
// "yes" for real and complex input, "no" for neither, else the one it
// runs on; "n/a" where no backend runs it (a channelizer takes one
// channel).
func supportCell(r supportRow, t Transport, n int) string {
	var ok [2]bool
	for i, cplx := range []bool{false, true} {
		c := stage.Chain{SampleRate: 1e6, Complex: cplx, Channels: n, Stages: r.build(r.method)}
		if c.Validate() != nil {
			return "n/a"
		}
		ok[i] = CheckChain(c, Options{Transport: t}) == nil
	}
	switch {
	case ok[0] && ok[1]:
		return "yes"
	case ok[0]:
		return "real"
	case ok[1]:
		return "complex"
	}
	return "no"
}

// SupportTable is the markdown table of what the CUDA backend runs: each
// kind of chain and fir method against each transport with 1 and 4
// channels, as CheckChain decides. It is README.md's (between the
// support-table markers) and what scripts/gpu-check.sh checks on a GPU.
func SupportTable() string {
	var b strings.Builder
	b.WriteString("| chain | method |")
	for _, t := range supportTransports {
		for _, n := range supportChannels {
			fmt.Fprintf(&b, " %s %d ch |", t, n)
		}
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(supportTransports)*len(supportChannels)) + "\n")
	for _, r := range supportRows() {
		m := r.method
		if m == "" {
			m = "—"
		}
		fmt.Fprintf(&b, "| %s | %s |", r.chain, m)
		for _, t := range supportTransports {
			for _, n := range supportChannels {
				fmt.Fprintf(&b, " %s |", supportCell(r, t, n))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}
