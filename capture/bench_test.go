package capture_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sigproc/sigproc/capture"
)

const benchBlock = 8192 // samples per Read

func benchSource(b *testing.B, src capture.Source) {
	buf := make([]float32, benchBlock*src.Info().Channels())
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(4 * len(buf)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := src.Read(ctx, buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*benchBlock/b.Elapsed().Seconds()/1e6, "MS/s")
}

func BenchmarkRawDecodeInt16(b *testing.B) {
	for _, format := range []string{"ri16_le", "ci16_le"} {
		b.Run(format, func(b *testing.B) {
			complexFmt := format[0] == 'c'
			src, err := capture.NewRaw(&repeatReader{data: le16(make([]int16, 1<<16)...)}, format, capture.Info{SampleRate: 1, Complex: complexFmt})
			if err != nil {
				b.Fatal(err)
			}
			benchSource(b, src)
		})
	}
}

func BenchmarkRawDecodeFloat32(b *testing.B) {
	src, err := capture.NewRaw(&repeatReader{data: le32f(make([]float32, 1<<15)...)}, "cf32_le", capture.Info{SampleRate: 1, Complex: true})
	if err != nil {
		b.Fatal(err)
	}
	benchSource(b, src)
}

func BenchmarkSynthetic(b *testing.B) {
	cfgs := []struct {
		name string
		cfg  capture.SyntheticConfig
	}{
		{"tone_real", capture.SyntheticConfig{Signal: "tone", FrequencyHz: 1234, Amplitude: 1}},
		{"tone_complex", capture.SyntheticConfig{Signal: "tone", FrequencyHz: 1234, Amplitude: 1, Complex: true}},
		{"chirp_complex", capture.SyntheticConfig{Signal: "chirp", FrequencyHz: -20000, ChirpEndHz: 20000, ChirpPeriodS: 0.1, Amplitude: 1, Complex: true}},
		{"noise_complex", capture.SyntheticConfig{Signal: "noise", NoiseStdDev: 1, Complex: true}},
	}
	for _, c := range cfgs {
		b.Run(c.name, func(b *testing.B) {
			c.cfg.SampleRate = 48000
			src, err := capture.NewSynthetic(c.cfg)
			if err != nil {
				b.Fatal(err)
			}
			benchSource(b, src)
		})
	}
}

// BenchmarkRawFileRead reads a 256 MiB cf32 file in the page cache in
// blocks of 4 MiB: the path from a recording into a pipeline's ring, next
// to the decoder reading the same file as a stream.
func BenchmarkRawFileRead(b *testing.B) {
	path := filepath.Join(b.TempDir(), "x.cf32")
	if err := os.WriteFile(path, make([]byte, 256<<20), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"file", "stream"} {
		b.Run(mode, func(b *testing.B) {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			var src capture.Source
			if mode == "file" {
				src, err = capture.OpenFile(path, "cf32_le", 1)
			} else {
				src, err = capture.NewRaw(struct{ io.Reader }{f}, "cf32_le", capture.Info{SampleRate: 1, Complex: true})
			}
			if err != nil {
				b.Fatal(err)
			}
			defer src.Close()
			buf := make([]float32, 1<<20)
			b.SetBytes(4 << 20)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := src.Read(context.Background(), buf); err == io.EOF {
					if mode == "file" {
						src.Close()
						src, _ = capture.OpenFile(path, "cf32_le", 1)
					} else {
						f.Seek(0, io.SeekStart)
						src, _ = capture.NewRaw(struct{ io.Reader }{f}, "cf32_le", capture.Info{SampleRate: 1, Complex: true})
					}
				} else if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRawView takes 4 MiB views of a 256 MiB float32 file in the
// page cache: the fstat and the NaN/Inf scan in parts on the reader's
// goroutines that each view costs (a GPU then copies the view itself).
// "first touch" maps the pages as the scan reads them; "faulted in" has
// them mapped already, as pinning the region for the GPU does.
func BenchmarkRawView(b *testing.B) {
	path := filepath.Join(b.TempDir(), "x.f32")
	if err := os.WriteFile(path, make([]byte, 256<<20), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"first touch", "faulted in"} {
		b.Run(mode, func(b *testing.B) {
			open := func() *capture.Raw {
				src, err := capture.OpenFile(path, "rf32_le", 1)
				if err != nil {
					b.Fatal(err)
				}
				r := src.(*capture.Raw)
				m, err := r.Region()
				if err != nil {
					b.Skip(err)
				}
				if mode == "faulted in" {
					b.StopTimer()
					sum := byte(0)
					for i := 0; i < len(m); i += 4096 {
						sum += m[i]
					}
					_ = sum
					b.StartTimer()
				}
				return r
			}
			r := open()
			b.SetBytes(4 << 20)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.View(context.Background(), 1<<20); err == io.EOF {
					r.Close()
					r = open()
				} else if err != nil {
					b.Fatal(err)
				}
			}
			r.Close()
		})
	}
}

// BenchmarkReadCS8File reads a 64 MiB cs8 file in the page cache 8 MiB at
// a time (4 Mi complex samples a Read, decoded to float32), on as many
// goroutines as GOMAXPROCS (-cpu): the path from an SDR recording into a
// pipeline's ring. Bytes are the file's. Give -cpu one value a run: the
// first of a list runs at the last one's GOMAXPROCS (golang/go#49980),
// with b.Loop the whole benchmark.
func BenchmarkReadCS8File(b *testing.B) {
	capture.SetParallelReads(runtime.GOMAXPROCS(0))
	defer capture.SetParallelReads(0)
	path := filepath.Join(b.TempDir(), "x.cs8")
	data := make([]byte, 64<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	open := func() capture.Source {
		src, err := capture.OpenFile(path, "cs8", 1)
		if err != nil {
			b.Fatal(err)
		}
		return src
	}
	src := open()
	buf := make([]float32, 8<<20) // 8 MiB of the file
	ctx := context.Background()
	src.Read(ctx, buf) // the first Read makes the reader's buffer
	b.SetBytes(8 << 20)
	b.ReportAllocs()
	for b.Loop() {
		n, err := src.Read(ctx, buf)
		if n == 0 && err == io.EOF { // reopened outside the timing and allocation counts
			b.StopTimer()
			src.Close()
			src = open()
			src.Read(ctx, buf) // the first Read makes the reader's buffer
			b.StartTimer()
			n, err = src.Read(ctx, buf)
		}
		if n != len(buf) || err != nil {
			b.Fatalf("read %d values of %d: %v", n, len(buf), err)
		}
	}
	src.Close()
	b.ReportMetric(float64(b.N)*(4<<20)/b.Elapsed().Seconds()/1e9, "GS/s")
}

// BenchmarkRawFileBlocks reads a 1 GiB cf32 file in the page cache in
// 16 MiB blocks into a ring of 32 buffers, as a pipeline fills its slots:
// "split" reads each block in parts on all the reader's goroutines (Read),
// "whole" reads GOMAXPROCS-2 blocks at once, each on a goroutine of its own
// (Reserve, ReadReserved). Bytes are the file's.
func BenchmarkRawFileBlocks(b *testing.B) {
	const size, block, slots = 1 << 30, 16 << 20, 32
	path := filepath.Join(b.TempDir(), "x.cf32")
	if err := os.WriteFile(path, make([]byte, size), 0o644); err != nil {
		b.Fatal(err)
	}
	ring := make([][]float32, slots)
	for i := range ring {
		ring[i] = make([]float32, block/4)
	}
	readers := max(1, runtime.GOMAXPROCS(0)-2)
	for _, mode := range []string{"split", "whole"} {
		b.Run(mode, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				src, err := capture.OpenFile(path, "cf32_le", 1)
				if err != nil {
					b.Fatal(err)
				}
				r := src.(*capture.Raw)
				if mode == "split" {
					for i := 0; ; i++ {
						if _, err := r.Read(context.Background(), ring[i%slots]); err == io.EOF {
							break
						} else if err != nil {
							b.Fatal(err)
						}
					}
				} else {
					readWhole(b, r, ring, readers)
				}
				r.Close()
			}
		})
	}
}

// readWhole reads r to its end, readers blocks at once into ring's
// buffers in turn.
func readWhole(b *testing.B, r *capture.Raw, ring [][]float32, readers int) {
	type job struct {
		at  int64
		dst []float32
	}
	jobs := make(chan job, readers)
	errs := make(chan error, len(ring))
	for range readers {
		go func() {
			for j := range jobs {
				_, err := r.ReadReserved(j.dst, j.at)
				errs <- err
			}
		}()
	}
	issued, done := 0, 0
	for end := false; !end; issued++ {
		for issued-done >= readers {
			if err := <-errs; err != nil && err != io.EOF {
				b.Fatal(err)
			}
			done++
		}
		dst := ring[issued%len(ring)]
		at, n, ok := r.Reserve(len(dst))
		if !ok {
			b.Fatal("not reservable")
		}
		end = n < len(dst)
		jobs <- job{at, dst[:n]}
	}
	close(jobs)
	for ; done < issued; done++ {
		if err := <-errs; err != nil && err != io.EOF {
			b.Fatal(err)
		}
	}
}
