package capture_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/sigproc/sigproc/capture"
)

func TestMemoryReadsEveryValueOnce(t *testing.T) {
	capture.SetParallelReads(4)
	defer capture.SetParallelReads(0)
	x := make([]float32, 2*(1<<20)+6) // large enough to be copied in parts
	for i := range x {
		x[i] = float32(i)
	}
	for _, block := range []int{1, 3, 1000, 1 << 18, 1 << 21} {
		src, err := capture.NewMemory(x, capture.Info{SampleRate: 1, Complex: true})
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAll(src, block)
		if err != io.EOF || !equal(got, x) {
			t.Fatalf("block %d: %d values, %v; want all %d and io.EOF", block, len(got), err, len(x))
		}
		src.Close()
		if _, err := src.Read(context.Background(), make([]float32, 2)); !errors.Is(err, capture.ErrClosed) {
			t.Fatalf("Read after Close: %v", err)
		}
	}
}

func TestMemoryRejects(t *testing.T) {
	for _, tc := range []struct {
		x    []float32
		info capture.Info
	}{
		{make([]float32, 3), capture.Info{SampleRate: 1, Complex: true}},
		{make([]float32, 4), capture.Info{SampleRate: 0}},
	} {
		if _, err := capture.NewMemory(tc.x, tc.info); err == nil {
			t.Errorf("NewMemory(%d values, %+v) accepted", len(tc.x), tc.info)
		}
	}
}

func TestMemoryReadAllocs(t *testing.T) {
	src, err := capture.NewMemory(make([]float32, 1<<26), capture.Info{SampleRate: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	buf := make([]float32, 1<<20)
	src.Read(context.Background(), buf)
	if a := testing.AllocsPerRun(20, func() { src.Read(context.Background(), buf) }); a != 0 {
		t.Fatalf("%v allocs per Read, want 0", a)
	}
}

func ExampleNewMemory() {
	src, _ := capture.NewMemory([]float32{1, 2, 3, 4, 5}, capture.Info{SampleRate: 48000})
	defer src.Close()
	buf := make([]float32, 4)
	for {
		n, err := src.Read(context.Background(), buf)
		fmt.Println(buf[:n], err)
		if err != nil {
			break
		}
	}
	// Output:
	// [1 2 3 4] <nil>
	// [5] EOF
}
