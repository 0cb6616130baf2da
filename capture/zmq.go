package capture

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/sigproc/sigproc/internal/zmq"
)

// ZMQ patterns a source connects with.
const (
	ZMQPull = "pull" // gr-zeromq push_sink's peer: lossless, back-pressured
	ZMQSub  = "sub"  // gr-zeromq pub_sink's peer: the publisher drops when we are slow
)

// ZMQConfig configures a ZeroMQ source.
type ZMQConfig struct {
	// Endpoint is tcp://host:port or ipc://path; the source connects to it,
	// as gr-zeromq's sources do, and the sender binds.
	Endpoint string
	// Pattern is pull or sub.
	Pattern string
	// Format is the item type on the wire: rf32_le (GNU Radio float),
	// cf32_le (gr_complex), ri16_le (short) or ci16_le (short, vlen 2).
	Format string
	// SampleRate is the stream's rate in samples per second (the wire
	// does not carry it).
	SampleRate float64
	// PassTags expects gr-zeromq's tag header in every message (the
	// sender's pass_tags=True): item offsets then reveal lost samples, and
	// its tags are kept for a sink to forward.
	PassTags bool
	// MaxMessage bounds a message in bytes; 0 = 64 MiB. Larger ones are
	// discarded and counted as malformed.
	MaxMessage int
	// Channels is the channels interleaved in each item (0 = 1): a frame
	// of Channels samples is one GNU Radio item of vlen Channels (itemsize
	// Channels × the sample's size), and tag offsets count frames.
	Channels int
}

// maxPendingTags bounds the tags kept for a sink that does not take them.
const maxPendingTags = 4096

// ZMQStats are a ZeroMQ source's counters.
type ZMQStats struct {
	Messages uint64 // messages received, malformed ones included
	// Malformed counts messages discarded whole: a length that is not a
	// whole number of samples, a bad tag header, several frames, or over
	// the size limit.
	Malformed uint64
	// Reconnects counts connections the sender ended (a restart) after
	// which the source connected again.
	Reconnects uint64
	// LostSamples counts samples the sender numbered but that never
	// arrived (pass_tags only: a gap in the header offsets).
	LostSamples uint64
	// Restarts counts header offsets that went backwards (pass_tags only):
	// the sender started its stream again.
	Restarts uint64
	// TagsDropped counts tags discarded because no sink took them.
	TagsDropped uint64
}

// ZMQ is a ZeroMQ pull or sub source, wire-compatible with gr-zeromq's
// push_sink and pub_sink. A stream has no end: Read returns only on a full
// buffer, an error or ctx's end, so bound the run with num_samples or
// duration_s, or stop it with Ctrl-C. Read, Close and Stats are for one
// goroutine; TakeTags may be called from another.
type ZMQ struct {
	firstStamp
	nonFinite // NaN and ±Inf values delivered (float formats)

	r        *zmq.Receiver
	dt       datatype
	info     Info
	passTags bool

	payload []byte // the current message's undelivered items
	closed  bool

	delivered  uint64 // samples returned by Read
	expect     uint64 // next header offset expected
	haveExpect bool
	scratch    []zmq.Tag

	st          ZMQStats
	onMalformed func(err error, total uint64)
	onReconnect func(total uint64)

	tmu         sync.Mutex
	tags        []zmq.Tag // pending, offsets in delivered samples
	tagsDropped uint64
}

// OpenZMQ returns a ZeroMQ source. It does not wait for the sender: Read
// connects, and keeps trying while the sender is not there.
func OpenZMQ(cfg ZMQConfig) (*ZMQ, error) {
	dt, err := lookupDatatype(cfg.Format)
	if err != nil {
		return nil, err
	}
	if err := checkRate(cfg.SampleRate); err != nil {
		return nil, err
	}
	if cfg.Channels < 0 || cfg.Channels > MaxChannels {
		return nil, fmt.Errorf("capture: zmq: %d channels: want 1..%d", cfg.Channels, MaxChannels)
	}
	var pattern zmq.Pattern
	switch cfg.Pattern {
	case ZMQPull:
		pattern = zmq.Pull
	case ZMQSub:
		pattern = zmq.Sub
	default:
		return nil, fmt.Errorf("capture: zmq pattern %q: want pull or sub", cfg.Pattern)
	}
	r, err := zmq.Connect(cfg.Endpoint, pattern, zmq.ReceiverOptions{MaxMessage: cfg.MaxMessage})
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	info := Info{SampleRate: cfg.SampleRate, Complex: dt.complex, NumChannels: max(1, cfg.Channels)}
	return &ZMQ{r: r, dt: dt, info: info, passTags: cfg.PassTags}, nil
}

// Info describes the stream.
func (z *ZMQ) Info() Info { return z.info }

// Endpoint is the endpoint the source connects to.
func (z *ZMQ) Endpoint() string { return z.r.Endpoint() }

// OnMalformed sets a function called with each discarded message's
// reason and the running count, from Read's goroutine.
func (z *ZMQ) OnMalformed(f func(err error, total uint64)) { z.onMalformed = f }

// OnReconnect sets a function called, from Read's goroutine, each time the
// source is connected again after the sender went away.
func (z *ZMQ) OnReconnect(f func(total uint64)) { z.onReconnect = f }

// PCMBits implements [PCMSource].
func (z *ZMQ) PCMBits() int { return z.dt.pcmBits() }

// LostSamples returns the samples (frames) the sender numbered that never
// arrived (pass_tags only), so far; it is read on Read's goroutine
// (pipeline.LossySource).
func (z *ZMQ) LostSamples() uint64 { return z.st.LostSamples }

// Stats returns the counters.
func (z *ZMQ) Stats() ZMQStats {
	st := z.st
	z.tmu.Lock()
	st.TagsDropped = z.tagsDropped
	z.tmu.Unlock()
	return st
}

// Read fills dst with samples from as many messages as it takes, keeping
// the rest of a message for the next call.
func (z *ZMQ) Read(ctx context.Context, dst []float32) (int, error) {
	if z.closed {
		return 0, ErrClosed
	}
	ch := z.info.Channels()
	if err := checkDst(dst, ch); err != nil {
		return 0, err
	}
	frame := z.frameBytes()
	filled := 0
	for filled < len(dst) {
		if len(z.payload) > 0 {
			k := min((len(dst)-filled)/ch, len(z.payload)/frame)
			decodeLE(z.dt, dst[filled:filled+k*ch], z.payload)
			if z.dt.enc == encF32 {
				z.scan(dst[filled : filled+k*ch])
			}
			z.payload = z.payload[k*frame:]
			filled += k * ch
			z.delivered += uint64(k)
			continue
		}
		msg, lost, err := z.r.Recv(ctx)
		if lost {
			z.st.Reconnects++
			if z.onReconnect != nil {
				z.onReconnect(z.st.Reconnects)
			}
		}
		if err != nil {
			if errors.Is(err, zmq.ErrMultipart) || errors.Is(err, zmq.ErrTooLarge) {
				z.st.Messages++
				z.malformed(err)
				continue
			}
			if ctx.Err() != nil {
				return filled, ctx.Err()
			}
			return filled, fmt.Errorf("capture: zmq %s: %w", z.r.Endpoint(), err)
		}
		z.st.Messages++
		z.accept(msg)
	}
	z.note(filled/ch, z.info.SampleRate)
	return filled, nil
}

// frameBytes is the size of one item on the wire: a frame of every channel.
func (z *ZMQ) frameBytes() int { return z.dt.frame() * z.info.ChannelCount() }

// accept checks one message and makes its items the current payload, or
// counts it as malformed. A message is used whole or not at all.
func (z *ZMQ) accept(msg []byte) {
	frame := z.frameBytes()
	var (
		offset uint64
		n      int
		err    error
	)
	if z.passTags {
		offset, z.scratch, n, err = zmq.ParseTagHeader(msg, z.scratch[:0])
		if err != nil {
			z.malformed(err)
			return
		}
	}
	body := msg[n:]
	if len(body)%frame != 0 {
		what := z.dt.name + " samples"
		if n := z.info.ChannelCount(); n > 1 {
			what = fmt.Sprintf("frames of %d %s channels", n, z.dt.name)
		}
		z.malformed(inputErr(ErrTruncated, "%d-byte message is not a whole number of %d-byte %s (%d left over)",
			len(body), frame, what, len(body)%frame))
		return
	}
	items := uint64(len(body) / frame)
	if z.passTags {
		switch {
		case !z.haveExpect:
		case offset > z.expect:
			z.st.LostSamples += offset - z.expect
		case offset < z.expect:
			z.st.Restarts++
		}
		z.expect, z.haveExpect = offset+items, true
		z.keepTags(offset, items)
	}
	z.payload = body
}

// keepTags queues the message's tags with offsets in delivered samples.
// Tags outside the message (gr-zeromq only sends those inside) are kept
// at its nearest end.
func (z *ZMQ) keepTags(offset, items uint64) {
	if len(z.scratch) == 0 {
		return
	}
	z.tmu.Lock()
	defer z.tmu.Unlock()
	for _, t := range z.scratch {
		rel := uint64(0)
		if t.Offset > offset {
			rel = min(t.Offset-offset, max(items, 1)-1)
		}
		t.Offset = z.delivered + rel
		t.Value = append(zmq.PMT(nil), t.Value...)
		t.Src = append(zmq.PMT(nil), t.Src...)
		if len(z.tags) == maxPendingTags {
			z.tags = z.tags[1:]
			z.tagsDropped++
		}
		z.tags = append(z.tags, t)
	}
}

// TakeTags appends to dst, and forgets, the received tags whose offset (in
// samples returned by Read) is below end. Safe to call from another
// goroutine than Read's.
func (z *ZMQ) TakeTags(end uint64, dst []zmq.Tag) []zmq.Tag {
	z.tmu.Lock()
	defer z.tmu.Unlock()
	i := 0
	for i < len(z.tags) && z.tags[i].Offset < end {
		i++
	}
	if i == 0 {
		return dst
	}
	dst = append(dst, z.tags[:i]...)
	z.tags = append(z.tags[:0], z.tags[i:]...)
	return dst
}

func (z *ZMQ) malformed(err error) {
	z.st.Malformed++
	if z.onMalformed != nil {
		z.onMalformed(err, z.st.Malformed)
	}
}

// Close disconnects; Read afterwards returns ErrClosed.
func (z *ZMQ) Close() error {
	if z.closed {
		return ErrClosed
	}
	z.closed = true
	z.payload = nil
	return z.r.Close()
}
