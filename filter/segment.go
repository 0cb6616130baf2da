package filter

// directAlign is where a segment of the direct method may start: a
// multiple of every kernel's widest group of outputs, so that each output
// is summed by the same instructions as in one call on the whole block.
const directAlign = 256

// Cut splits a block of n samples into at most k segments, each to be
// processed by a filter of its own built like f (same taps, method and
// max block) and given the input before it by SetHistory, with outputs
// bit-identical to one Process call on the whole block. It appends the
// segments' starts (0 first) to starts and returns it; every segment is
// at least minSeg samples long, and a start is a multiple of align. One
// start (0) means the block runs whole. It allocates nothing when starts
// has room for k values, beyond the first call's copy that the fft
// method keeps for the next call with the same arguments.
//
// The direct method sums every output alike wherever its group of
// outputs starts. The fft method covers a block greedily (pickSize, by
// the samples left): a segment must start where the whole block's cover
// puts a transform, and its own cover, with fewer samples left, must make
// the same choices up to its end.
func (f *FIR) Cut(n, k, minSeg, align int, starts []int) []int {
	if f.fc == nil {
		return EvenCuts(n, k, minSeg, lcm(directAlign, max(align, 1)), starts)
	}
	m := &f.cut
	if m.starts != nil && m.n == n && m.k == k && m.minSeg == minSeg && m.align == align {
		return append(starts, m.starts...)
	}
	from := len(starts)
	starts = append(starts, 0)
	c, per := f.fc, 2
	if f.complex {
		per = 1
	}
	// Each cut is the nearest qualifying start of the last before j·n/k,
	// one at it, and the first after them that qualifies: taking the
	// first at or past j·n/k made every segment up to a transform longer
	// than n/k and left the remainder to the last. Starts further before
	// j·n/k are not tried (sameCover walks the cover from the previous
	// cut).
	prev, j, best := 0, 1, -1
	for pos := 0; j < k; {
		t := j * n / k
		if best >= 0 && (pos >= n || pos-t >= t-best) { // nothing later is nearer t
			starts, prev, best = append(starts, best), best, -1
			for j++; j < k && j*n/k <= prev; j++ {
			}
			continue
		}
		if pos >= n {
			break
		}
		step := c.piece(n-pos, per)
		if pos+step >= t && pos%max(align, 1) == 0 && pos-prev >= minSeg && n-pos >= minSeg &&
			(best < 0 || abs(pos-t) < abs(best-t)) && c.sameCover(prev, pos, n, per) {
			best = pos
		}
		pos += step
	}
	*m = cutMemo{n, k, minSeg, align, append(m.starts[:0], starts[from:]...)}
	return starts
}

// piece returns the outputs the cover's next transform does when r are
// left.
func (c *fastConv) piece(r, per int) int {
	return min(r, per*c.segs[pickSize(c.cost, c.segs, r, per)])
}

// sameCover reports whether a cover of [a, b) alone (b−a left at a) makes
// the choices of the cover of the whole block of n samples there.
func (c *fastConv) sameCover(a, b, n, per int) bool {
	for p := a; p < b; {
		iw, is := pickSize(c.cost, c.segs, n-p, per), pickSize(c.cost, c.segs, b-p, per)
		lw, ls := min(n-p, per*c.segs[iw]), min(b-p, per*c.segs[is])
		if iw != is || lw != ls {
			return false
		}
		p += lw
	}
	return true
}

// Cut is FIR.Cut for the decimator: segments also start at multiples of
// M, so that each segment's first kept output is one of the whole
// block's (SetHistory sets the phase from the stream index), and at
// multiples of the direct kernel's groups of outputs.
func (d *Decimator) Cut(n, k, minSeg int, starts []int) []int {
	if d.fft != nil {
		return d.fft.Cut(n, k, minSeg, d.m, starts)
	}
	return EvenCuts(n, k, minSeg, directAlign*d.m, starts)
}

// EvenCuts appends to starts (0 first) the starts of at most k segments
// of n samples, about equal, at multiples of align, each at least minSeg
// long.
func EvenCuts(n, k, minSeg, align int, starts []int) []int {
	starts = append(starts, 0)
	prev := 0
	for j := 1; j < k; j++ {
		s := (j*n/k + align - 1) / align * align
		if s-prev >= minSeg && n-s >= minSeg {
			starts, prev = append(starts, s), s
		}
	}
	return starts
}

func lcm(a, b int) int {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}

// SetHistory makes the resampler continue a stream of n samples so far
// that ends with x (in the caller's layout; earlier samples are zeros):
// its history, its input count and so the outputs it has made
// (ceil(n·L/M)) are set as if it had been fed that stream. It allocates
// nothing.
func (r *Resampler) SetHistory(x []float32, n int64) {
	fillTail(r.buf[:channelsOf(r.complex)*r.hist], x)
	r.t, r.next = n, r.count(n)
}

// HistoryLen returns the input samples the resampler keeps between
// blocks: what SetHistory reads at most.
func (r *Resampler) HistoryLen() int { return r.hist }

// Cut is FIR.Cut for the resampler: segments start at multiples of
// 256·M input samples, so that each of the L/gcd(L, M) output classes
// starts a segment at a multiple of the kernel's groups of outputs, as
// in one call on the whole block.
func (r *Resampler) Cut(n, k, minSeg int, starts []int) []int {
	return EvenCuts(n, k, minSeg, directAlign*r.m, starts)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
