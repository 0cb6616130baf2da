package capture_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/sink"
)

// BenchmarkZMQHop streams complex float32 blocks sigproc push -> sigproc
// pull on loopback (tcp) and ipc: serialisation plus the socket, no filter.
// Its MB/s over 8 bytes per sample is the hop's MS/s.
func BenchmarkZMQHop(b *testing.B) {
	for _, tr := range []string{"tcp", "ipc"} {
		for _, n := range []int{256, 4096, 65536} {
			b.Run(fmt.Sprintf("%s/%d", tr, n), func(b *testing.B) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				ep := "tcp://127.0.0.1:*"
				if tr == "ipc" {
					ep = "ipc://" + filepath.Join(b.TempDir(), "h")
				}
				z, err := sink.ListenZMQ(ctx, sink.ZMQConfig{Endpoint: ep, Pattern: "push", Format: "cf32_le"})
				if err != nil {
					b.Fatal(err)
				}
				defer z.Close()
				src, err := capture.OpenZMQ(capture.ZMQConfig{Endpoint: z.Endpoint(), Pattern: "pull", Format: "cf32_le", SampleRate: 1})
				if err != nil {
					b.Fatal(err)
				}
				defer src.Close()
				x := make([]float32, 2*n)
				done := make(chan error, 1)
				go func() {
					z.WaitPeers(ctx, 1)
					for range b.N {
						if err := z.Write(x); err != nil {
							done <- err
							return
						}
					}
					done <- nil
				}()
				dst := make([]float32, 2*n)
				b.SetBytes(int64(8 * n))
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if _, err := src.Read(ctx, dst); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MS/s")
			})
		}
	}
}

// BenchmarkZMQHopLatency sends one 256-sample complex message at a time,
// push -> pull on loopback tcp, and reports the one-way latency from the
// sink's Write to the source's Read returning (same process, same clock).
func BenchmarkZMQHopLatency(b *testing.B) {
	for _, tr := range []string{"tcp", "ipc"} {
		b.Run(tr, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ep := "tcp://127.0.0.1:*"
			if tr == "ipc" {
				ep = "ipc://" + filepath.Join(b.TempDir(), "l")
			}
			z, err := sink.ListenZMQ(ctx, sink.ZMQConfig{Endpoint: ep, Pattern: "push", Format: "cf32_le"})
			if err != nil {
				b.Fatal(err)
			}
			defer z.Close()
			src, err := capture.OpenZMQ(capture.ZMQConfig{Endpoint: z.Endpoint(), Pattern: "pull", Format: "cf32_le", SampleRate: 1})
			if err != nil {
				b.Fatal(err)
			}
			defer src.Close()
			x, dst := make([]float32, 512), make([]float32, 512)
			sent := make(chan time.Time, 1)
			next := make(chan struct{}, 1)
			go func() {
				z.WaitPeers(ctx, 1)
				for {
					select {
					case <-next:
					case <-ctx.Done():
						return
					}
					t := time.Now()
					if z.Write(x) != nil {
						return
					}
					sent <- t
				}
			}()
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				next <- struct{}{}
				if _, err := src.Read(ctx, dst); err != nil {
					b.Fatal(err)
				}
				got := time.Now()
				lat = append(lat, got.Sub(<-sent))
			}
			b.StopTimer()
			slices.Sort(lat)
			us := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))]) / 1e3 }
			b.ReportMetric(us(0.5), "p50-µs")
			b.ReportMetric(us(0.99), "p99-µs")
			b.ReportMetric(0, "ns/op")
		})
	}
}
