package zmq

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// DefaultMaxMessage is the largest message a receiver accepts by default.
const DefaultMaxMessage = 64 << 20

// DefaultRetry is the wait between connection attempts, libzmq's
// ZMQ_RECONNECT_IVL default.
const DefaultRetry = 100 * time.Millisecond

// Receiver is the connecting end of a pull or sub socket, as gr-zeromq's
// sources are. It connects lazily, on the first Recv, keeps trying while
// the peer is not there, and reconnects when the connection ends.
// It is not safe for concurrent use.
type Receiver struct {
	pattern Pattern
	ep      Endpoint
	max     int
	retry   time.Duration
	dialer  net.Dialer

	c      *conn
	buf    []byte
	closed bool

	connects, disconnects uint64
}

// ReceiverOptions tune a receiver; zero values take the defaults.
type ReceiverOptions struct {
	MaxMessage int           // bytes; DefaultMaxMessage
	Retry      time.Duration // between connection attempts; DefaultRetry
}

// Connect returns a pull or sub receiver for endpoint. Like libzmq's
// connect, it does not wait for the peer: Recv does.
func Connect(endpoint string, pattern Pattern, o ReceiverOptions) (*Receiver, error) {
	if pattern != Pull && pattern != Sub {
		return nil, fmt.Errorf("zmq: a receiver is pull or sub, not %q", pattern)
	}
	ep, err := ParseEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	if ep.ephemeral() {
		return nil, fmt.Errorf("%w %q: connect needs a port", ErrEndpoint, endpoint)
	}
	if host, _, _ := net.SplitHostPort(ep.Address); ep.Network == "tcp" && host == "" {
		return nil, fmt.Errorf("%w %q: connect needs a host, not *", ErrEndpoint, endpoint)
	}
	if o.MaxMessage <= 0 {
		o.MaxMessage = DefaultMaxMessage
	}
	if o.Retry <= 0 {
		o.Retry = DefaultRetry
	}
	return &Receiver{pattern: pattern, ep: ep, max: o.MaxMessage, retry: o.Retry,
		dialer: net.Dialer{Timeout: handshakeTimeout}}, nil
}

// Endpoint is the endpoint connected to.
func (r *Receiver) Endpoint() string { return r.ep.String() }

// Connects counts completed handshakes; Connects-1 is the number of
// reconnections.
func (r *Receiver) Connects() uint64 { return r.connects }

// Disconnects counts connections the peer ended (or that failed).
func (r *Receiver) Disconnects() uint64 { return r.disconnects }

// Connected reports whether a connection is up.
func (r *Receiver) Connected() bool { return r.c != nil }

// dial connects, retrying every r.retry until ctx is done.
func (r *Receiver) dial(ctx context.Context) error {
	for {
		nc, err := r.dialer.DialContext(ctx, r.ep.Network, r.ep.Address)
		if err == nil {
			var c *conn
			if c, err = handshake(ctx, nc, r.pattern.socketType(), false); err == nil {
				if r.pattern == Sub {
					err = c.writeSmall(0, []byte{1}) // subscribe to everything
				}
				if err == nil {
					r.c = c
					r.connects++
					return nil
				}
				c.close()
			} else {
				nc.Close()
			}
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		t := time.NewTimer(r.retry)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Recv returns the next message's body, valid until the next Recv. It
// (re)connects as needed and blocks until a message arrives or ctx is done
// (then it returns ctx.Err()). A multipart or oversized message is
// discarded and reported with ErrMultipart or ErrTooLarge; the stream goes
// on. A lost connection is not an error: Recv reconnects; lost reports
// that the previous connection ended first, so that the caller can count
// the gap.
func (r *Receiver) Recv(ctx context.Context) (msg []byte, lost bool, err error) {
	if r.closed {
		return nil, false, net.ErrClosed
	}
	for {
		if r.c == nil {
			if err := r.dial(ctx); err != nil {
				return nil, lost, err
			}
		}
		msg, err := r.c.readMessage(ctx, r.buf, r.max)
		if cap(msg) > cap(r.buf) {
			r.buf = msg[:0]
		}
		switch {
		case err == nil:
			return msg, lost, nil
		case errors.Is(err, ErrMultipart), errors.Is(err, ErrTooLarge):
			return nil, lost, err
		case ctx.Err() != nil:
			// The read may have stopped inside a frame: the stream is
			// out of step, so start again on a new connection.
			r.drop(false)
			return nil, lost, ctx.Err()
		}
		r.drop(true)
		lost = true
	}
}

// drop closes the connection; lost says the peer went, rather than we.
func (r *Receiver) drop(lost bool) {
	if r.c != nil {
		r.c.close()
		r.c = nil
		if lost {
			r.disconnects++
		}
	}
}

// Close closes the connection; Recv afterwards returns net.ErrClosed.
func (r *Receiver) Close() error {
	if r.closed {
		return net.ErrClosed
	}
	r.closed = true
	r.drop(false)
	return nil
}
