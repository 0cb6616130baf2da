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
type Decimator struct {
	taps    []float32
	m       int
	complex bool
	max     int
	hist    int       // history samples kept: len(taps)-1 plus the kernel's padding
	skip    int       // index in the next block of the next kept output, 0..M-1
	buf     []float32 // [history | block] in the caller's layout
	pp      *strided
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
	ch := d.pp.ch
	cnt := 0
	if n > d.skip {
		cnt = (n - d.skip + d.m - 1) / d.m
	}
	if len(dst) < ch*cnt {
		return 0, fmt.Errorf("%w: dst holds %d values, need %d", ErrBlockLength, len(dst), ch*cnt)
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
	clear(d.buf[:d.pp.ch*d.hist])
	d.skip = 0
}

// Complex reports whether the filter takes interleaved I/Q input.
func (d *Decimator) Complex() bool { return d.complex }

// Kernel names the inner loop: "avx512", "avx2" or "generic".
func (d *Decimator) Kernel() string { return d.pp.kern.String() }

// setKernel forces a kernel (tests).
func (d *Decimator) setKernel(k kernelKind) { d.pp.kern = k }
