package filter

import "fmt"

// Decimator is a streaming decimating FIR: out[m] = Σ_k h[k]·x[m·M − k]
// with x[n<0] = 0, which is scipy.signal.lfilter(h, 1, x)[::M]. It computes
// only the kept outputs (polyphase, see polyphase), and keeps the
// decimation phase across calls, so any split of a stream into blocks —
// sizes M does not divide included — gives the same outputs as one call:
// ceil(n/M) of them after n inputs. Complex streams (interleaved I/Q) are
// filtered per component with the same real taps. Not safe for
// concurrent use.
//
// With MethodFFT (NewDecimatorMethod) it filters at the full rate by
// overlap-save and keeps every M-th output instead: for long filters and
// small M that costs less than the ntaps/M products per input of the
// polyphase sum.
type Decimator struct {
	taps    []float32
	m       int
	complex bool
	max     int
	hist    int       // history samples kept: len(taps)-1 plus the kernel's padding
	skip    int       // index in the next block of the next kept output, 0..M-1
	buf     []float32 // [history | block] in the caller's layout
	pp      *strided  // the polyphase kernel (method direct)
	fft     *FIR      // the full-rate filter (method fft)
	full    []float32 // its output for one block
}

// NewDecimator returns a decimate-by-m filter with the given taps for
// blocks of at most maxBlock samples (IQ pairs when complex). Process
// allocates nothing.
func NewDecimator(taps []float32, m int, complex bool, maxBlock int) (*Decimator, error) {
	if err := checkStreamArgs(taps, complex, maxBlock); err != nil {
		return nil, err
	}
	if m < 1 {
		return nil, fmt.Errorf("filter: decimation %d must be >= 1", m)
	}
	ch := channelsOf(complex)
	d := &Decimator{taps: append([]float32(nil), taps...), m: m, complex: complex, max: maxBlock}
	d.pp = newStrided(bestKernel, ch, m, reversed(taps), (maxBlock+m-1)/m)
	d.hist = len(taps) - 1 + d.pp.pad
	d.buf = make([]float32, ch*(d.hist+maxBlock))
	return d, nil
}

// NewDecimatorMethod is NewDecimator with the method chosen: direct (the
// polyphase sum), fft (full-rate overlap-save, every M-th output kept) or
// auto, which picks the cheaper by the same cost model as a plain FIR's
// auto, with the direct side's work divided by M.
func NewDecimatorMethod(taps []float32, m int, complex bool, maxBlock int, method Method) (*Decimator, error) {
	if method < MethodAuto || method > MethodFFT {
		return nil, fmt.Errorf("%w %v", ErrMethod, method)
	}
	if err := checkStreamArgs(taps, complex, maxBlock); err != nil {
		return nil, err
	}
	if m < 1 {
		return nil, fmt.Errorf("filter: decimation %d must be >= 1", m)
	}
	if chooseDecimMethod(method, bestKernel, len(taps), m, maxBlock, complex) == MethodDirect {
		return NewDecimator(taps, m, complex, maxBlock)
	}
	f, err := NewFIRMethod(taps, complex, maxBlock, MethodFFT)
	if err != nil {
		return nil, err
	}
	return &Decimator{taps: append([]float32(nil), taps...), m: m, complex: complex, max: maxBlock,
		fft: f, full: make([]float32, channelsOf(complex)*maxBlock)}, nil
}

// chooseDecimMethod resolves MethodAuto for a decimate-by-m filter: the
// polyphase sum computes len(taps) products for each kept output only,
// overlap-save every output of the full rate.
func chooseDecimMethod(method Method, k kernelKind, ntaps, m, maxBlock int, complex bool) Method {
	if method != MethodAuto {
		return method
	}
	kept := (maxBlock + m - 1) / m
	_, _, fft := convSizes(ntaps, maxBlock, complex)
	if fft+float64(kept*channelsOf(complex))*convCopyNs < directNs(k, ntaps, kept, complex) {
		return MethodFFT
	}
	return MethodDirect
}

// checkStreamArgs checks what every streaming filter needs.
func checkStreamArgs(taps []float32, complex bool, maxBlock int) error {
	if len(taps) == 0 {
		return ErrNoTaps
	}
	if len(taps) > MaxTaps {
		return fmt.Errorf("filter: %d taps exceeds the limit %d", len(taps), MaxTaps)
	}
	if err := checkFinite(taps); err != nil {
		return err
	}
	if maxBlock <= 0 {
		return fmt.Errorf("%w: must be > 0, got %d", ErrMaxBlock, maxBlock)
	}
	if maxBlock > maxBufferValues/channelsOf(complex)-len(taps) {
		return fmt.Errorf("%w: %d is too large for %d taps", ErrMaxBlock, maxBlock, len(taps))
	}
	return nil
}

func channelsOf(complex bool) int {
	if complex {
		return 2
	}
	return 1
}

func reversed(taps []float32) []float32 {
	r := make([]float32, len(taps))
	for i, v := range taps {
		r[len(taps)-1-i] = v
	}
	return r
}

// blockSamples checks a block's length and returns its sample count.
func blockSamples(n int, complex bool, maxBlock int) (int, error) {
	if complex {
		if n%2 != 0 {
			return 0, fmt.Errorf("%w: complex block has odd length %d (want interleaved I/Q pairs)", ErrBlockLength, n)
		}
		n /= 2
	}
	if n > maxBlock {
		return 0, fmt.Errorf("%w: %d samples exceeds maxBlock %d", ErrBlockLength, n, maxBlock)
	}
	return n, nil
}

// Process filters src and writes the kept outputs to dst, returning the
// number of float32 values written (a whole number of samples, at most
// MaxOut(len(src)) samples). dst must not overlap src.
func (d *Decimator) Process(dst, src []float32) (int, error) {
	n, err := blockSamples(len(src), d.complex, d.max)
	if err != nil {
		return 0, err
	}
	ch := channelsOf(d.complex)
	cnt := 0
	if n > d.skip {
		cnt = (n - d.skip + d.m - 1) / d.m
	}
	if len(dst) < ch*cnt {
		return 0, fmt.Errorf("%w: dst holds %d values, need %d", ErrBlockLength, len(dst), ch*cnt)
	}
	if d.fft != nil {
		full := d.full[:ch*n]
		if err := d.fft.Process(full, src); err != nil {
			return 0, err
		}
		for i, j := 0, d.skip; i < cnt; i, j = i+1, j+d.m {
			copy(dst[ch*i:ch*i+ch], full[ch*j:])
		}
		d.skip += cnt*d.m - n
		return ch * cnt, nil
	}
	buf := d.buf[:ch*(d.hist+n)]
	copy(buf[ch*d.hist:], src)
	// Output i is anchored at block sample skip+i·M, buffer sample
	// hist+skip+i·M; its window of len(taps) samples starts len(taps)-1
	// before that.
	d.pp.run(dst[:ch*cnt], buf, d.hist-(len(d.taps)-1)+d.skip)
	copy(buf, buf[ch*n:])
	d.skip += cnt*d.m - n
	return ch * cnt, nil
}

// MaxOut returns the most samples one call outputs for n input samples:
// ceil(n/M).
func (d *Decimator) MaxOut(n int) int { return (n + d.m - 1) / d.m }

// Reset clears the history and the phase, as if no input had been seen.
func (d *Decimator) Reset() {
	if d.fft != nil {
		d.fft.Reset()
	} else {
		clear(d.buf[:d.pp.ch*d.hist])
	}
	d.skip = 0
}

// Complex reports whether the filter takes interleaved I/Q input.
func (d *Decimator) Complex() bool { return d.complex }

// Kernel names the inner loop: "avx512", "avx2" or "generic"; "fft" for
// the fft method.
func (d *Decimator) Kernel() string {
	if d.fft != nil {
		return "fft"
	}
	return d.pp.kern.String()
}

// Method returns the method in use: MethodDirect or MethodFFT.
func (d *Decimator) Method() Method {
	if d.fft != nil {
		return MethodFFT
	}
	return MethodDirect
}

// setKernel forces the direct method's kernel (tests).
func (d *Decimator) setKernel(k kernelKind) {
	if d.pp != nil {
		d.pp.kern = k
	}
}
