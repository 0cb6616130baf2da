package capture

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// decodeCases are decodeLE's vector loops beside the Go ones they stand
// for, with the bytes each value takes.
var decodeCases = []struct {
	name          string
	fast, generic func(dst []float32, src []byte)
	size          int
}{
	{"int8", decodeI8, decodeI8Generic, 1},
	{"uint8-half", decodeU8Half, decodeU8HalfGeneric, 1},
	{"uint8-sdr", decodeU8SDR, decodeU8SDRGeneric, 1},
	{"int16", decodeI16, decodeI16Generic, 2},
}

// TestDecodeMatchesGo: the widening decodes give the Go loops' bits for
// every value, at every length up to 80 (the vector loops' 32s and 8s and
// the Go tail) and every alignment of src and dst.
func TestDecodeMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 29))
	for _, tc := range decodeCases {
		t.Run(tc.name, func(t *testing.T) {
			// Every value, in one call.
			all := make([]byte, 65536*tc.size)
			for i := range all {
				all[i] = byte(i >> (8 * (i % tc.size)))
			}
			if tc.size == 1 {
				all = all[:256]
			} else {
				for v := range 65536 {
					all[2*v], all[2*v+1] = byte(v), byte(v>>8)
				}
			}
			checkDecode(t, tc.fast, tc.generic, all, tc.size, 0)
			for n := range 81 {
				for off := range 4 {
					src := make([]byte, (n+off)*tc.size)
					for i := range src {
						src[i] = byte(r.Uint32())
					}
					checkDecode(t, tc.fast, tc.generic, src[off*tc.size:], tc.size, off)
				}
			}
		})
	}
}

func checkDecode(t *testing.T, fast, generic func([]float32, []byte), src []byte, size, off int) {
	t.Helper()
	n := len(src) / size
	got := make([]float32, n+off+1)[off : off+n]
	want := make([]float32, n)
	fast(got, src)
	generic(want, src)
	if past := got[:n+1][n]; past != 0 {
		t.Fatalf("n %d, offset %d: %v written past the end", n, off, past)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("n %d, offset %d, value %d (bytes % x): %v, want %v", n, off, i, src[i*size:(i+1)*size], got[i], want[i])
		}
	}
}

// BenchmarkDecode is each widening decode on 64 Ki values, vector and Go.
func BenchmarkDecode(b *testing.B) {
	const n = 1 << 16
	for _, tc := range decodeCases {
		for _, v := range []struct {
			name string
			f    func([]float32, []byte)
		}{{"fast", tc.fast}, {"go", tc.generic}} {
			b.Run(fmt.Sprintf("%s/%s", tc.name, v.name), func(b *testing.B) {
				src := make([]byte, n*tc.size)
				dst := make([]float32, n)
				b.SetBytes(int64(len(src)))
				b.ReportAllocs()
				for b.Loop() {
					v.f(dst, src)
				}
			})
		}
	}
}
