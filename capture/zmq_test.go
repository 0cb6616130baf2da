package capture_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/sink"
)

// bind returns a sink bound to an ipc endpoint in a temp dir.
func bind(t *testing.T, ctx context.Context, cfg sink.ZMQConfig) *sink.ZMQ {
	t.Helper()
	if cfg.Endpoint == "" {
		cfg.Endpoint = "ipc://" + filepath.Join(t.TempDir(), "s")
	}
	z, err := sink.ListenZMQ(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { z.Close() })
	return z
}

func open(t *testing.T, cfg capture.ZMQConfig) *capture.ZMQ {
	t.Helper()
	src, err := capture.OpenZMQ(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

func ramp(from, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(from + i)
	}
	return x
}

func TestZMQLoopback(t *testing.T) {
	for _, tt := range []struct{ push, pull string }{{"push", "pull"}, {"pub", "sub"}} {
		for _, tags := range []bool{false, true} {
			t.Run(tt.push+map[bool]string{true: "/tags"}[tags], func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				z := bind(t, ctx, sink.ZMQConfig{Pattern: tt.push, Format: "rf32_le", PassTags: tags, SampleRate: 48000})
				src := open(t, capture.ZMQConfig{Endpoint: z.Endpoint(), Pattern: tt.pull, Format: "rf32_le", SampleRate: 48000, PassTags: tags})
				// The first Read connects; the writer waits for it.
				done := make(chan error, 1)
				go func() {
					if err := z.WaitPeers(ctx, 1); err != nil {
						done <- err
						return
					}
					for i := range 10 {
						if err := z.Write(ramp(100*i, 100)); err != nil {
							done <- err
							return
						}
					}
					done <- nil
				}()
				dst := make([]float32, 1000) // spans messages
				n, err := src.Read(ctx, dst)
				if err != nil || n != 1000 {
					t.Fatalf("read %d, %v", n, err)
				}
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				for i, v := range dst {
					if v != float32(i) {
						t.Fatalf("sample %d = %g", i, v)
					}
				}
				if tags {
					got := src.TakeTags(1, nil)
					if len(got) != 1 || got[0].Key != "rx_rate" || got[0].Value.String() != "48000" || got[0].Offset != 0 {
						t.Errorf("tags %+v", got)
					}
				}
				if st := src.Stats(); st.Messages != 10 || st.Malformed != 0 || st.LostSamples != 0 {
					t.Errorf("stats %+v", st)
				}
			})
		}
	}
}

// A message that is not a whole number of samples is counted, reported and
// discarded whole; the stream goes on.
func TestZMQMalformed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// An ri16 sink sends 2-byte items; read as cf32 (8 bytes) a 3-sample
	// message is 6 bytes: not whole.
	z := bind(t, ctx, sink.ZMQConfig{Pattern: "push", Format: "ri16_le"})
	src := open(t, capture.ZMQConfig{Endpoint: z.Endpoint(), Pattern: "pull", Format: "cf32_le", SampleRate: 1})
	var reports []string
	src.OnMalformed(func(err error, total uint64) {
		if !errors.Is(err, capture.ErrTruncated) {
			t.Errorf("not ErrTruncated: %v", err)
		}
		reports = append(reports, err.Error())
	})
	go func() {
		z.WaitPeers(ctx, 1)
		z.Write(make([]float32, 3)) // 6 bytes: malformed
		z.Write(make([]float32, 8)) // 16 bytes: 2 complex samples
	}()
	dst := make([]float32, 4)
	if n, err := src.Read(ctx, dst); n != 4 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	if st := src.Stats(); st.Malformed != 1 || st.Messages != 2 {
		t.Errorf("stats %+v", st)
	}
	if len(reports) != 1 || !strings.Contains(reports[0], "6-byte message is not a whole number of 8-byte cf32_le samples (6 left over)") {
		t.Errorf("reports %q", reports)
	}
}

// The sender restarts: the source reconnects, counts it, and with
// pass_tags counts the samples the new sender skipped.
func TestZMQReconnect(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ep := "ipc://" + filepath.Join(t.TempDir(), "r")
	z := bind(t, ctx, sink.ZMQConfig{Endpoint: ep, Pattern: "push", Format: "rf32_le", PassTags: true})
	src := open(t, capture.ZMQConfig{Endpoint: ep, Pattern: "pull", Format: "rf32_le", SampleRate: 1, PassTags: true})
	go func() {
		z.WaitPeers(ctx, 1)
		z.Write(ramp(0, 10))
	}()
	dst := make([]float32, 10)
	if n, err := src.Read(ctx, dst); n != 10 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	z.Close()
	// A new sender on the same endpoint that starts at item 0 again, then
	// skips 5 items.
	z2 := bind(t, ctx, sink.ZMQConfig{Endpoint: ep, Pattern: "push", Format: "rf32_le", PassTags: true})
	go func() {
		z2.WaitPeers(ctx, 1)
		z2.Write(ramp(0, 10))
		z2.Write(ramp(10, 10))
	}()
	var reconnects uint64
	src.OnReconnect(func(n uint64) { reconnects = n })
	dst = make([]float32, 20)
	if n, err := src.Read(ctx, dst); n != 20 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	st := src.Stats()
	if st.Reconnects != 1 || reconnects != 1 || st.Restarts != 1 {
		t.Errorf("stats %+v (reported %d)", st, reconnects)
	}
}

// Ctrl-C: a Read waiting for a sender that never comes returns ctx's
// error; a push Write waiting for a consumer gives up after the linger.
func TestZMQCancel(t *testing.T) {
	src := open(t, capture.ZMQConfig{Endpoint: "ipc://" + filepath.Join(t.TempDir(), "nobody"), Pattern: "sub", Format: "rf32_le", SampleRate: 1})
	ctx, cancel := context.WithCancel(context.Background())
	go cancel()
	if _, err := src.Read(ctx, make([]float32, 4)); !errors.Is(err, context.Canceled) {
		t.Errorf("read: %v", err)
	}

	run, stop := context.WithCancel(context.Background())
	z := bind(t, run, sink.ZMQConfig{Pattern: "push", Format: "rf32_le", Linger: time.Millisecond})
	stop()
	err := z.Write(make([]float32, 5))
	if err == nil || !strings.Contains(err.Error(), "5 samples undelivered: no consumer took them") {
		t.Errorf("write: %v", err)
	}
	if st := z.Stats(); st.DroppedSamples != 5 {
		t.Errorf("stats %+v", st)
	}
}

// A pub sink with no subscriber drops and counts, as libzmq drops.
func TestZMQPubNoSubscriber(t *testing.T) {
	z := bind(t, context.Background(), sink.ZMQConfig{Pattern: "pub", Format: "cf32_le"})
	if err := z.Write(make([]float32, 8)); err != nil {
		t.Fatal(err)
	}
	if st := z.Stats(); st.DroppedMessages != 1 || st.DroppedSamples != 4 || z.Samples() != 4 {
		t.Errorf("stats %+v", st)
	}
}

// N channels: a frame of every channel is one item on the wire, so the tag
// header's offsets count frames, a message that splits a frame is
// malformed, and the values arrive interleaved as they were written.
func TestZMQChannels(t *testing.T) {
	for _, tt := range []struct {
		format   string
		channels int
		values   int // per frame
	}{
		{"rf32_le", 4, 4},
		{"cf32_le", 3, 6},
	} {
		t.Run(fmt.Sprintf("%s/%d", tt.format, tt.channels), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			z := bind(t, ctx, sink.ZMQConfig{Pattern: "push", Format: tt.format, PassTags: true, Channels: tt.channels})
			src := open(t, capture.ZMQConfig{Endpoint: z.Endpoint(), Pattern: "pull", Format: tt.format, SampleRate: 1, PassTags: true, Channels: tt.channels})
			if got := src.Info().Channels(); got != tt.values {
				t.Fatalf("Info().Channels() = %d, want %d", got, tt.values)
			}
			if err := z.Write(make([]float32, tt.values+1)); !errors.Is(err, sink.ErrOddLength) {
				t.Fatalf("a partial frame: %v, want ErrOddLength", err)
			}
			const frames = 50
			done := make(chan error, 1)
			go func() {
				if err := z.WaitPeers(ctx, 1); err != nil {
					done <- err
					return
				}
				for i := range 4 {
					if err := z.Write(ramp(i*frames*tt.values, frames*tt.values)); err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
			dst := make([]float32, 4*frames*tt.values)
			if n, err := src.Read(ctx, dst); err != nil || n != len(dst) {
				t.Fatalf("read %d, %v", n, err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			for i, v := range dst {
				if v != float32(i) {
					t.Fatalf("value %d = %g", i, v)
				}
			}
			if got := z.Samples(); got != 4*frames {
				t.Errorf("sink Samples() = %d frames, want %d", got, 4*frames)
			}
			// Offsets counted in frames: consecutive messages leave no gap.
			if st := src.Stats(); st.Messages != 4 || st.LostSamples != 0 || st.Restarts != 0 || st.Malformed != 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}
