package zmq

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zeromq/zmq4"
)

// Pattern is a ZeroMQ messaging pattern, named by the socket's own type.
type Pattern string

// Patterns: a sender binds push or pub; a receiver connects pull or sub.
const (
	Push Pattern = "push"
	Pub  Pattern = "pub"
	Pull Pattern = "pull"
	Sub  Pattern = "sub"
)

func (p Pattern) socketType() zmq4.SocketType {
	switch p {
	case Push:
		return zmq4.Push
	case Pub:
		return zmq4.Pub
	case Pull:
		return zmq4.Pull
	case Sub:
		return zmq4.Sub
	}
	return ""
}

// ErrNoPeer means a push sender gave up waiting for a consumer.
var ErrNoPeer = errors.New("zmq: no consumer connected")

// DefaultQueue is a pub subscriber's queue in messages, sigproc's
// counterpart of libzmq's send high-water mark.
const DefaultQueue = 64

// Sender is the bound end of a push or pub socket, as gr-zeromq's sinks are.
//
// push gives each message to one consumer, in turn, and waits (the
// back-pressure push/pull is for) while none is connected or the one whose
// turn it is does not read. pub copies each message to every subscriber
// whose subscription matches it, through a queue per subscriber; a
// message for a full queue, or sent while nobody is subscribed, is dropped
// and counted, as libzmq drops it silently.
type Sender struct {
	pattern Pattern
	ep      Endpoint
	l       net.Listener
	queue   int
	linger  time.Duration // Close's wait for consumers to finish reading
	// ctx ends at Close: it cuts short the handshakes in progress.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	peers   []*peer
	next    int           // push: whose turn
	changed chan struct{} // closed and replaced when peers change
	closed  bool
	wg      sync.WaitGroup

	connects, disconnects atomic.Uint64
	dropNoSub, dropFull   atomic.Uint64 // pub
}

// peer is one connected consumer.
type peer struct {
	c      *conn
	gone   chan struct{} // closed when the connection ends
	once   sync.Once
	topics [][]byte // pub: subscriptions, under Sender.mu

	// pub: a ring of message slots; free and full hold their indices.
	slots      [][]byte
	free, full chan int
}

func (p *peer) end() { p.once.Do(func() { close(p.gone); p.c.close() }) }

// DefaultLinger bounds how long Close waits for consumers to read what was
// sent, libzmq's usual ZMQ_LINGER in gr-zeromq (1 s).
const DefaultLinger = time.Second

// Bind binds endpoint for a push or pub sender and starts accepting
// consumers. queue is pub's per-subscriber queue in messages (0 =
// DefaultQueue); linger bounds Close's wait for consumers to finish
// reading (0 = DefaultLinger).
func Bind(endpoint string, pattern Pattern, queue int, linger time.Duration) (*Sender, error) {
	if pattern != Push && pattern != Pub {
		return nil, fmt.Errorf("zmq: a sender is push or pub, not %q", pattern)
	}
	ep, err := ParseEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	if queue <= 0 {
		queue = DefaultQueue
	}
	if linger <= 0 {
		linger = DefaultLinger
	}
	l, err := ep.listen()
	if err != nil {
		return nil, err
	}
	if ep.Network == "tcp" {
		ep.Address = l.Addr().String()
		if host, port, _ := net.SplitHostPort(ep.Address); host == "::" || host == "0.0.0.0" {
			ep.Address = net.JoinHostPort("", port)
		}
	}
	s := &Sender{pattern: pattern, ep: ep, l: l, queue: queue, linger: linger, changed: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Endpoint is the bound endpoint, with an ephemeral port resolved.
func (s *Sender) Endpoint() string { return s.ep.String() }

func (s *Sender) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // a transient accept error (EMFILE): try again
		}
		s.wg.Add(1)
		go s.serve(nc)
	}
}

// serve handshakes, registers the peer and reads from it until it goes:
// subscriptions for pub, and for push only the end of the connection.
func (s *Sender) serve(nc net.Conn) {
	defer s.wg.Done()
	c, err := handshake(s.ctx, nc, s.pattern.socketType(), true)
	if err != nil {
		nc.Close()
		return
	}
	p := &peer{c: c, gone: make(chan struct{})}
	if s.pattern == Pub {
		p.slots = make([][]byte, s.queue)
		p.free, p.full = make(chan int, s.queue), make(chan int, s.queue)
		for i := range s.queue {
			p.free <- i
		}
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.close()
		return
	}
	s.peers = append(s.peers, p)
	s.notifyLocked()
	s.mu.Unlock()
	s.connects.Add(1)
	if s.pattern == Pub {
		s.wg.Add(1)
		go s.drain(p)
	}
	ctx := context.Background()
	var buf []byte
	for {
		// Subscriptions are short; a 4 KiB limit keeps a misbehaving peer
		// from making us buffer much.
		msg, err := c.readMessage(ctx, buf, 4096)
		buf = msg
		if err != nil && !errors.Is(err, ErrMultipart) && !errors.Is(err, ErrTooLarge) {
			break
		}
		if s.pattern == Pub && err == nil && len(msg) > 0 && (msg[0] == 0 || msg[0] == 1) {
			s.subscribe(p, msg[0] == 1, msg[1:])
		}
	}
	s.remove(p)
}

// subscribe adds or removes one subscription of p (ZMTP 3.0: a message
// whose first byte is 1 or 0, then the topic).
func (s *Sender) subscribe(p *peer, on bool, topic []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, t := range p.topics {
		if bytes.Equal(t, topic) {
			if !on {
				p.topics = append(p.topics[:i], p.topics[i+1:]...)
				s.notifyLocked()
			}
			return // libzmq counts duplicates; one is enough here
		}
	}
	if on {
		p.topics = append(p.topics, bytes.Clone(topic))
		s.notifyLocked()
	}
}

func (s *Sender) remove(p *peer) {
	p.end()
	s.mu.Lock()
	for i, q := range s.peers {
		if q == p {
			s.peers = append(s.peers[:i], s.peers[i+1:]...)
			s.disconnects.Add(1)
			s.notifyLocked()
			break
		}
	}
	s.mu.Unlock()
}

// notifyLocked wakes everyone waiting for a change of peers.
func (s *Sender) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// drain writes a pub subscriber's queue to it.
func (s *Sender) drain(p *peer) {
	defer s.wg.Done()
	for {
		select {
		case <-p.gone:
			return
		case i := <-p.full:
			if err := p.c.writeMessage(context.Background(), p.slots[i]); err != nil {
				s.remove(p)
				return
			}
			p.free <- i
		}
	}
}

// Send sends msg[HeadRoom:] as one message; msg[:HeadRoom] is scratch.
//
// push: it returns once the message is written to a consumer's
// connection, waiting while none is connected or the consumer is slow.
// When abort is done it stops waiting and returns ErrNoPeer (or the
// abort's error), the message undelivered. A consumer that disconnects
// while the message is being written loses nothing: the message goes to the
// next one. What a consumer had received into its socket buffers but not
// read when it died is lost, unseen, as with libzmq.
//
// pub: it never waits; it returns how many subscribers the message was
// queued for, and dropped counts those whose queue was full.
func (s *Sender) Send(abort context.Context, msg []byte) (queued, dropped int, err error) {
	if len(msg) < HeadRoom {
		return 0, 0, fmt.Errorf("zmq: message buffer shorter than HeadRoom")
	}
	if s.pattern == Pub {
		q, d := s.publish(msg)
		return q, d, nil
	}
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return 0, 0, net.ErrClosed
		}
		if len(s.peers) == 0 {
			wait := s.changed
			s.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-abort.Done():
				return 0, 0, fmt.Errorf("%w (%w)", ErrNoPeer, abort.Err())
			}
		}
		s.next %= len(s.peers)
		p := s.peers[s.next]
		s.next++
		s.mu.Unlock()
		err := p.c.writeMessage(abort, msg)
		if err == nil {
			return 1, 0, nil
		}
		s.remove(p) // the frame may be half written: the connection is done
		if aerr := abort.Err(); aerr != nil {
			return 0, 0, fmt.Errorf("%w (%w)", ErrNoPeer, aerr)
		}
	}
}

// publish queues a copy of msg for every matching subscriber.
func (s *Sender) publish(msg []byte) (queued, dropped int) {
	body := msg[HeadRoom:]
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.peers {
		if !matches(p.topics, body) {
			continue
		}
		select {
		case i := <-p.free:
			p.slots[i] = append(p.slots[i][:0], msg...)
			p.full <- i
			queued++
		default:
			dropped++
		}
	}
	if queued+dropped == 0 {
		s.dropNoSub.Add(1)
	}
	s.dropFull.Add(uint64(dropped))
	return queued, dropped
}

// matches reports whether body starts with one of the topics.
func matches(topics [][]byte, body []byte) bool {
	for _, t := range topics {
		if bytes.HasPrefix(body, t) {
			return true
		}
	}
	return false
}

// SenderStats are a sender's counters.
type SenderStats struct {
	Peers       int    // consumers connected now
	Subscribers int    // pub: connected consumers with a subscription
	Connects    uint64 // consumers that completed a handshake
	Disconnects uint64 // consumers that went away
	// NoSubscriber counts pub messages sent while no subscriber matched.
	NoSubscriber uint64
	// QueueFull counts pub (message, subscriber) pairs dropped because that
	// subscriber's queue was full.
	QueueFull uint64
}

// Stats returns the counters.
func (s *Sender) Stats() SenderStats {
	s.mu.Lock()
	st := SenderStats{Peers: len(s.peers)}
	for _, p := range s.peers {
		if len(p.topics) > 0 {
			st.Subscribers++
		}
	}
	s.mu.Unlock()
	st.Connects, st.Disconnects = s.connects.Load(), s.disconnects.Load()
	st.NoSubscriber, st.QueueFull = s.dropNoSub.Load(), s.dropFull.Load()
	return st
}

// WaitPeers waits until at least n consumers are connected (push) or
// subscribed (pub), or ctx is done.
func (s *Sender) WaitPeers(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		have := len(s.peers)
		if s.pattern == Pub {
			have = 0
			for _, p := range s.peers {
				if len(p.topics) > 0 {
					have++
				}
			}
		}
		wait := s.changed
		s.mu.Unlock()
		if have >= n {
			return nil
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Flush waits until every pub subscriber's queue is written out, or ctx
// is done. push writes synchronously and has nothing to flush.
func (s *Sender) Flush(ctx context.Context) error {
	for {
		s.mu.Lock()
		pending := false
		for _, p := range s.peers {
			if len(p.free) < cap(p.free) {
				pending = true
			}
		}
		wait := s.changed
		s.mu.Unlock()
		if !pending {
			return nil
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		case <-tick():
		}
	}
}

// Close stops accepting, closes every connection and waits for the
// goroutines. An ipc socket file is removed.
func (s *Sender) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return net.ErrClosed
	}
	s.closed = true
	peers := append([]*peer(nil), s.peers...)
	s.notifyLocked()
	s.mu.Unlock()
	err := s.l.Close()
	s.cancel() // handshakes in progress give up now, not after handshakeTimeout
	// Half-close and wait (bounded) for each consumer to close its end: it
	// does so after reading everything before our FIN. Closing at once can
	// cost the messages still in flight: libzmq drops them when the
	// connection is reset under it.
	// One linger for all of them: consumers that stall after the
	// handshake hold Close for the linger once, not once each.
	linger, cancel := context.WithTimeout(context.Background(), s.linger)
	defer cancel()
	for _, p := range peers {
		if cw, ok := p.c.nc.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
			select {
			case <-p.gone:
			case <-linger.Done():
			}
		}
		p.end()
	}
	s.wg.Wait()
	return err
}

// tick paces Flush's polling.
func tick() <-chan time.Time { return time.After(pollInterval) }
