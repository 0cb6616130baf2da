package zmq

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/security/null"
)

// HeadRoom is the number of bytes a message buffer passed to a sender must
// reserve in front of its body, for the ZMTP frame header: the message goes
// out in one write, with no copy.
const HeadRoom = 9

// ZMTP frame flags (RFC 23).
const (
	flagMore    = 0x01
	flagLong    = 0x02
	flagCommand = 0x04
)

// Errors a receiver returns for one message; the stream goes on.
var (
	// ErrMultipart means a message had more than one frame (a gr-zeromq
	// sink with a key, or another application); it was discarded.
	ErrMultipart = errors.New("zmq: multipart message")
	// ErrTooLarge means a frame was larger than the receiver's limit; it
	// was read and discarded without being buffered.
	ErrTooLarge = errors.New("zmq: message too large")
)

// pollInterval bounds how long a blocked read or write goes without
// looking at its context.
const pollInterval = 50 * time.Millisecond

// handshakeTimeout bounds the ZMTP greeting and READY exchange.
const handshakeTimeout = 5 * time.Second

// conn is one ZMTP connection after its handshake.
type conn struct {
	nc  net.Conn
	hdr [HeadRoom]byte
	wmu sync.Mutex // one message at a time on the wire
}

// handshake runs the ZMTP 3.0 NULL handshake as socket type typ over nc.
// go-zeromq checks that the peer's Socket-Type is compatible. It gives up
// after handshakeTimeout, or at once when ctx ends: a peer stalled in the
// greeting must not hold up a stop or a Close.
func handshake(ctx context.Context, nc net.Conn, typ zmq4.SocketType, server bool) (*conn, error) {
	nc.SetDeadline(time.Now().Add(handshakeTimeout))
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
	_, err := zmq4.Open(nc, null.Security(), typ, nil, server, nil)
	if !stop() && err == nil {
		err = ctx.Err() // the deadline may have been cut under a finished handshake
	}
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			err = cerr
		}
		return nil, fmt.Errorf("zmq: handshake with %s: %w", nc.RemoteAddr(), err)
	}
	nc.SetDeadline(time.Time{})
	return &conn{nc: nc}, nil
}

// timeout reports whether err is a deadline expiry.
func timeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// readFull fills p, looking at ctx every pollInterval while blocked. Bytes
// read before an error are kept in p; the error is ctx's or the
// connection's.
func (c *conn) readFull(ctx context.Context, p []byte) error {
	for got := 0; got < len(p); {
		if ctx.Done() != nil {
			c.nc.SetReadDeadline(time.Now().Add(pollInterval))
		}
		n, err := c.nc.Read(p[got:])
		got += n
		if err != nil && got < len(p) {
			if timeout(err) {
				if cerr := ctx.Err(); cerr != nil {
					return cerr
				}
				continue
			}
			return err
		}
	}
	return nil
}

// readFrame reads one frame header and returns its flags and body size.
func (c *conn) readFrameHeader(ctx context.Context) (flags byte, size uint64, err error) {
	h := c.hdr[:2]
	if err := c.readFull(ctx, h); err != nil {
		return 0, 0, err
	}
	flags, size = h[0], uint64(h[1])
	if flags&flagLong != 0 {
		l := c.hdr[1:9]
		if err := c.readFull(ctx, l[1:]); err != nil {
			return 0, 0, err
		}
		l[0] = h[1]
		size = binary.BigEndian.Uint64(l)
	}
	return flags, size, nil
}

// discard reads and drops n bytes.
func (c *conn) discard(ctx context.Context, n uint64, scratch []byte) error {
	if len(scratch) == 0 {
		scratch = make([]byte, 64<<10)
	}
	for n > 0 {
		k := uint64(len(scratch))
		if n < k {
			k = n
		}
		if err := c.readFull(ctx, scratch[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// readMessage reads the next message, skipping commands. The body is read
// into buf, grown up to limit bytes; a larger frame is discarded
// (ErrTooLarge) and a multipart message too (ErrMultipart). Both leave the
// connection usable. Any other error means the connection is finished.
func (c *conn) readMessage(ctx context.Context, buf []byte, limit int) ([]byte, error) {
	var bad error
	for {
		flags, size, err := c.readFrameHeader(ctx)
		if err != nil {
			return buf[:0], err
		}
		switch {
		case size > uint64(limit):
			if err := c.discard(ctx, size, buf[:cap(buf)]); err != nil {
				return buf[:0], err
			}
			if bad == nil && flags&flagCommand == 0 {
				bad = fmt.Errorf("%w: a %d-byte frame, limit %d", ErrTooLarge, size, limit)
			}
			buf = buf[:0]
		default:
			if uint64(cap(buf)) < size {
				buf = make([]byte, size, min(limit, max(int(size), 2*cap(buf))))
			}
			buf = buf[:size]
			if err := c.readFull(ctx, buf); err != nil {
				return buf[:0], err
			}
		}
		switch {
		case flags&flagCommand != 0:
			continue // PING, SUBSCRIBE and the like: not data
		case flags&flagMore != 0:
			if bad == nil {
				bad = ErrMultipart
			}
			continue
		case bad != nil:
			return buf[:0], bad
		}
		return buf, nil
	}
}

// writeMessage sends msg[HeadRoom:] as a one-frame message in a single
// write, using msg[:HeadRoom] for the frame header. While blocked it looks
// at abort every pollInterval; if abort is done, it gives up and the
// connection must be closed (it may hold part of a frame).
func (c *conn) writeMessage(abort context.Context, msg []byte) error {
	body := len(msg) - HeadRoom
	var b []byte
	if body <= 255 {
		msg[HeadRoom-2], msg[HeadRoom-1] = 0, byte(body)
		b = msg[HeadRoom-2:]
	} else {
		msg[0] = flagLong
		binary.BigEndian.PutUint64(msg[1:HeadRoom], uint64(body))
		b = msg
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for len(b) > 0 {
		if abort.Done() != nil {
			c.nc.SetWriteDeadline(time.Now().Add(pollInterval))
		}
		n, err := c.nc.Write(b)
		b = b[n:]
		if err != nil {
			if timeout(err) {
				if cerr := abort.Err(); cerr != nil {
					return cerr
				}
				continue
			}
			return err
		}
	}
	return nil
}

// writeSmall sends a short frame with the given flags (subscriptions).
func (c *conn) writeSmall(flags byte, body []byte) error {
	if len(body) > 255 {
		return fmt.Errorf("zmq: frame of %d bytes is not small", len(body))
	}
	b := append([]byte{flags, byte(len(body))}, body...)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.nc.SetWriteDeadline(time.Now().Add(handshakeTimeout))
	_, err := c.nc.Write(b)
	c.nc.SetWriteDeadline(time.Time{})
	return err
}

// close closes the connection.
func (c *conn) close() error { return c.nc.Close() }
