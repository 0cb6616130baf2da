package tagged

import (
	"math"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestCopyTaggedAVX2 checks the vector copy against the words it read: it
// copies whole steps of eight until the first step holding a stale word.
func TestCopyTaggedAVX2(t *testing.T) {
	if !copyFast {
		t.Skip("no AVX2")
	}
	for _, n := range []int{8, 9, 16, 256, 263} {
		for _, stale := range []int{-1, 0, 5, 8, 100, 250} {
			src := make([]uint64, n)
			for i := range src {
				src[i] = Pack(float32(i)+0.25, 9)
			}
			if stale >= 0 && stale < n {
				src[stale] = Pack(1, 8)
			}
			dst := make([]float32, n)
			got := copyTagged(dst, src, 9)
			want := n &^ 7
			if stale >= 0 && stale < n {
				want = min(want, stale&^7)
			}
			if got != want {
				t.Fatalf("n=%d stale=%d: copied %d, want %d", n, stale, got, want)
			}
			for i := range got {
				if math.Float32bits(dst[i]) != uint32(src[i]) {
					t.Fatalf("n=%d word %d = %v", n, i, dst[i])
				}
			}
		}
	}
	if got := copyTagged(make([]float32, 7), make([]uint64, 7), 0); got != 0 {
		t.Fatalf("short block: copied %d", got)
	}
}

// TestReadScalarAndVector runs Read with and without the vector copy.
func TestReadScalarAndVector(t *testing.T) {
	defer func(v bool) { copyFast = v }(copyFast)
	for _, fast := range []bool{false, copyFast} {
		copyFast = fast
		src := make([]uint64, 37)
		for i := range src {
			src[i] = Pack(float32(-i), 3)
		}
		src[12] = Pack(0, 2) // stale until the second poll
		polls := 0
		dst := make([]float32, len(src))
		err := Read(dst, src, 3, func() error {
			if polls++; polls == 2 {
				src[12] = Pack(-12, 3)
			}
			return nil
		})
		if err != nil || polls != 2 {
			t.Fatalf("fast=%v: err %v after %d polls", fast, err, polls)
		}
		for i, v := range dst {
			if v != float32(-i) {
				t.Fatalf("fast=%v: dst[%d] = %v", fast, i, v)
			}
		}
	}
}

// BenchmarkRead256 times the consumer's copy of a ready 256-word block,
// scalar and (where the CPU has it) AVX2. In cache here, so it shows the
// instruction cost; on the GPU host the words are 32 fresh cache misses.
func BenchmarkRead256(b *testing.B) {
	defer func(v bool) { copyFast = v }(copyFast)
	for _, fast := range []bool{false, true} {
		name := "scalar"
		if fast {
			name = "avx2"
		}
		b.Run(name, func(b *testing.B) {
			if fast && !cpu.X86.HasAVX2 {
				b.Skip("no AVX2")
			}
			copyFast = fast
			src := make([]uint64, 256)
			dst := make([]float32, 256)
			Write(src, dst, 1)
			b.ReportAllocs()
			b.SetBytes(256 * 8)
			for b.Loop() {
				if err := Read(dst, src, 1, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
