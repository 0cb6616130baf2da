package sink

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sigproc/sigproc/internal/zmq"
)

// ZMQ patterns a sink binds with.
const (
	ZMQPush = "push" // lossless: waits for the consumer (gr-zeromq pull_source)
	ZMQPub  = "pub"  // fan-out: a slow or absent subscriber loses messages
)

// DefaultLinger is how long, after the run is stopped, a push sink still
// waits for a consumer to take what is left: gr-zeromq's own LINGER.
const DefaultLinger = time.Second

// ZMQConfig configures a ZeroMQ sink.
type ZMQConfig struct {
	// Endpoint is tcp://host:port or ipc://path; the sink binds it, as
	// gr-zeromq's sinks do. tcp://127.0.0.1:* picks a free port (see
	// ZMQ.Endpoint).
	Endpoint string
	// Pattern is push or pub.
	Pattern string
	// Format is rf32_le, cf32_le, ri16_le or ci16_le, as for file sinks.
	Format string
	// PassTags writes gr-zeromq's tag header in front of every message
	// (the receiver's pass_tags=True), numbering the items from 0 and
	// carrying tags: those of a TagSource (see ForwardTags), else rx_rate
	// at item 0.
	PassTags bool
	// SampleRate is sent as the rx_rate tag (PassTags without a TagSource).
	SampleRate float64
	// Linger bounds how long Write still waits for a push consumer once
	// the context given to ListenZMQ is done; 0 = DefaultLinger.
	Linger time.Duration
	// Queue is pub's queue per subscriber, in messages; 0 = 64.
	Queue int
	// Channels is the channels interleaved in each frame (0 = 1). A frame
	// goes out as one GNU Radio item of vlen Channels (itemsize Channels ×
	// the sample's size), and tag offsets count frames.
	Channels int
}

// TagSource hands over stream tags to forward; capture.ZMQ is one. Offsets
// count samples from the start of the run.
type TagSource interface {
	TakeTags(end uint64, dst []zmq.Tag) []zmq.Tag
}

// ZMQStats are a ZeroMQ sink's counters.
type ZMQStats struct {
	Messages uint64 // messages sent (push) or published (pub)
	// DroppedMessages and DroppedSamples count what sigproc itself could
	// not deliver: pub messages no subscriber was there for, and push
	// messages left when the linger ran out after the run was stopped.
	DroppedMessages, DroppedSamples uint64
	// QueueFull counts pub (message, subscriber) pairs dropped because the
	// subscriber was too slow; the message still reached the others.
	QueueFull uint64
	Peers     int    // consumers connected now
	Connects  uint64 // consumers that connected
	// Disconnects counts consumers that went away. What a consumer had
	// received into its socket buffer but not read when it died is lost
	// out of sigproc's sight: with pass_tags the receiver sees it as a
	// gap in the item offsets.
	Disconnects uint64
}

// ZMQ is a ZeroMQ push or pub sink, wire-compatible with gr-zeromq's
// pull_source and sub_source: one message per Write, holding the samples
// as raw items. It is not safe for concurrent use.
type ZMQ struct {
	s        *zmq.Sender
	f        format
	passTags bool
	rate     float64
	abort    context.Context
	cancel   context.CancelFunc
	stop     func() bool
	linger   time.Duration

	buf     []byte
	values  uint64 // float32 values accepted
	clipped uint64
	st      ZMQStats
	tagSrc  TagSource
	tags    []zmq.Tag
	closed  bool
}

// ListenZMQ binds the endpoint and returns the sink; consumers may
// connect from then on. When ctx is done (Ctrl-C), a push Write waits at
// most cfg.Linger more for a consumer, then fails with the samples it
// could not deliver counted.
func ListenZMQ(ctx context.Context, cfg ZMQConfig) (*ZMQ, error) {
	f, err := lookupFormat(cfg.Format)
	if err != nil {
		return nil, fmt.Errorf("sink: zmq %s: %w", cfg.Endpoint, err)
	}
	if cfg.Channels < 0 || cfg.Channels > MaxChannels {
		return nil, fmt.Errorf("sink: zmq %s: %d channels: want 1..%d", cfg.Endpoint, cfg.Channels, MaxChannels)
	}
	f.channels = max(1, cfg.Channels)
	var pattern zmq.Pattern
	switch cfg.Pattern {
	case ZMQPush:
		pattern = zmq.Push
	case ZMQPub:
		pattern = zmq.Pub
	default:
		return nil, fmt.Errorf("sink: zmq pattern %q: want push or pub", cfg.Pattern)
	}
	if cfg.Linger <= 0 {
		cfg.Linger = DefaultLinger
	}
	s, err := zmq.Bind(cfg.Endpoint, pattern, cfg.Queue, cfg.Linger)
	if err != nil {
		return nil, fmt.Errorf("sink: %w", err)
	}
	z := &ZMQ{s: s, f: f, passTags: cfg.PassTags, rate: cfg.SampleRate, linger: cfg.Linger,
		buf: make([]byte, zmq.HeadRoom, zmq.HeadRoom+bufSize)}
	z.abort, z.cancel = context.WithCancel(context.WithoutCancel(ctx))
	z.stop = context.AfterFunc(ctx, func() { time.AfterFunc(cfg.Linger, z.cancel) })
	return z, nil
}

// Endpoint is the bound endpoint, with an ephemeral port resolved.
func (z *ZMQ) Endpoint() string { return z.s.Endpoint() }

// ForwardTags makes the sink send the tags src received, at the same
// sample offsets (exact while the pipeline drops nothing).
func (z *ZMQ) ForwardTags(src TagSource) { z.tagSrc = src }

// WaitPeers waits until n consumers are connected (push) or subscribed
// (pub), or ctx is done: a pub sink drops what it sends before then.
func (z *ZMQ) WaitPeers(ctx context.Context, n int) error { return z.s.WaitPeers(ctx, n) }

// Write sends samples as one message. push waits for a consumer (see
// ListenZMQ for how long once the run is stopped); pub never waits.
func (z *ZMQ) Write(samples []float32) error {
	if z.closed {
		return ErrClosed
	}
	if err := z.f.checkFrames(len(samples)); err != nil {
		return err
	}
	if len(samples) == 0 {
		return nil
	}
	ch := uint64(z.f.frameValues())
	offset := z.values / ch
	n := uint64(len(samples)) / ch
	b := z.buf[:zmq.HeadRoom]
	if z.passTags {
		z.tags = z.tags[:0]
		switch {
		case z.tagSrc != nil:
			z.tags = z.tagSrc.TakeTags(offset+n, z.tags)
		case offset == 0 && z.rate > 0:
			z.tags = append(z.tags, zmq.Tag{Key: "rx_rate", Value: zmq.Double(z.rate), Src: zmq.Symbol("sigproc")})
		}
		for i := range z.tags {
			z.tags[i].Offset = max(z.tags[i].Offset, offset) // late tags go on the first sample
		}
		b = zmq.AppendTagHeader(b, offset, z.tags)
	}
	size := len(samples) * z.f.size()
	b = slices.Grow(b, size)[:len(b)+size]
	z.clipped += encodeLE(z.f, b[len(b)-size:], samples)
	z.buf = b[:0]
	queued, _, err := z.s.Send(z.abort, b)
	st := z.s.Stats()
	z.st.QueueFull = st.QueueFull
	if err != nil {
		z.st.DroppedMessages++
		z.st.DroppedSamples += n
		if errors.Is(err, zmq.ErrNoPeer) {
			return fmt.Errorf("zmq %s: %d samples undelivered: no consumer took them within the %v linger after the stop", z.s.Endpoint(), n, z.linger)
		}
		return fmt.Errorf("zmq %s: %w", z.s.Endpoint(), err) // the pipeline says "write sink"
	}
	z.st.Messages++
	if queued == 0 {
		z.st.DroppedMessages++
		z.st.DroppedSamples += n
	}
	z.values += uint64(len(samples))
	return nil
}

// Stats returns the counters.
func (z *ZMQ) Stats() ZMQStats {
	st := z.s.Stats()
	out := z.st
	out.Peers, out.Connects, out.Disconnects, out.QueueFull = st.Peers, st.Connects, st.Disconnects, st.QueueFull
	return out
}

// Samples returns the frames accepted by Write (a frame holds a sample,
// complex for complex formats, of every channel), whether or not a pub
// subscriber was there.
func (z *ZMQ) Samples() uint64 { return z.values / uint64(z.f.frameValues()) }

// Clipped returns how many values were clipped to the int16 range.
func (z *ZMQ) Clipped() uint64 { return z.clipped }

// Close lets pub subscribers' queues drain (within the linger), then
// closes every connection and the listening socket.
func (z *ZMQ) Close() error {
	if z.closed {
		return ErrClosed
	}
	z.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), z.linger)
	z.s.Flush(ctx)
	cancel()
	z.stop()
	z.cancel()
	if err := z.s.Close(); err != nil {
		return fmt.Errorf("zmq %s: %w", z.s.Endpoint(), err)
	}
	return nil
}
