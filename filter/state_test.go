package filter

import (
	"math/rand/v2"
	"testing"
)

// TestSetHistory: a FIR or decimator given a stream's past through
// SetHistory continues it exactly as one fed the whole stream.
func TestSetHistory(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	const n, k = 500, 203 // k, the switch point, is no multiple of the decimation
	for _, cplx := range []bool{false, true} {
		ch := channelsOf(cplx)
		taps := randSlice(r, 37)
		x := randSlice(r, ch*n)
		want := make([]float32, ch*n)
		got := make([]float32, ch*n)

		f, _ := NewFIR(taps, cplx, n)
		f.Process(want, x)
		g, _ := NewFIR(taps, cplx, n)
		g.SetHistory(x[:ch*k])
		g.Process(got[:ch*(n-k)], x[ch*k:])
		for i := range ch * (n - k) {
			if d := got[i] - want[ch*k+i]; d > 1e-5 || d < -1e-5 {
				t.Fatalf("fir complex=%v: value %d: %g, want %g", cplx, i, got[i], want[ch*k+i])
			}
		}

		const m = 3
		d, _ := NewDecimator(taps, m, cplx, n)
		nw, _ := d.Process(want, x)
		e, _ := NewDecimator(taps, m, cplx, n)
		e.SetHistory(x[:ch*k], k)
		ng, _ := e.Process(got, x[ch*k:])
		first := ch * ((k + m - 1) / m) // the outputs before k
		if ng != nw-first {
			t.Fatalf("decimator: %d values after K, want %d", ng, nw-first)
		}
		// The vector kernel groups outputs by eight from the block start, so
		// the last bits may differ from the whole-stream run.
		for i := range ng {
			if d := got[i] - want[first+i]; d > 1e-5 || d < -1e-5 {
				t.Fatalf("decimator complex=%v: value %d: %g, want %g", cplx, i, got[i], want[first+i])
			}
		}
	}
}
