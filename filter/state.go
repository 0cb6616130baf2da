package filter

// SetHistory makes the filter continue a stream whose samples so far end
// with x (in the caller's layout; samples before x are zeros), as a
// filter that had been fed that stream would: the next output is
// Σ_k h[k]·x'[n−k] over x's last len(taps)−1 samples. It lets a stream
// switch filters between two blocks with no sample lost or repeated
// (see stage's retune semantics). It allocates nothing.
func (f *FIR) SetHistory(x []float32) {
	fillTail(f.buf[:f.channels()*(len(f.rev)-1)], x)
}

// SetHistory makes the decimator continue a stream of n samples so far
// that ends with x (in the caller's layout; earlier samples are zeros):
// its history and its decimation phase (the next kept output is the next
// input whose index is a multiple of M) are set as if it had been fed that
// stream. It allocates nothing.
func (d *Decimator) SetHistory(x []float32, n int64) {
	if d.fft != nil {
		d.fft.SetHistory(x)
	} else {
		fillTail(d.buf[:d.pp.ch*d.hist], x)
	}
	d.skip = int((int64(d.m) - n%int64(d.m)) % int64(d.m))
}

// fillTail copies the end of x into dst, zero-filling dst's start when x
// is shorter.
func fillTail(dst, x []float32) {
	if len(x) >= len(dst) {
		copy(dst, x[len(x)-len(dst):])
		return
	}
	clear(dst[:len(dst)-len(x)])
	copy(dst[len(dst)-len(x):], x)
}

// HistoryLen returns the input samples (IQ pairs when complex) the filter
// keeps between blocks: what SetHistory reads at most.
func (f *FIR) HistoryLen() int { return len(f.rev) - 1 }

// HistoryLen returns the input samples the decimator keeps between blocks
// (its taps' history plus the direct kernel's padding, or the fft
// method's filter's): what SetHistory reads at most.
func (d *Decimator) HistoryLen() int {
	if d.fft != nil {
		return d.fft.HistoryLen()
	}
	return d.hist
}
