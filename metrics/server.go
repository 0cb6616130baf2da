package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Limits of the metrics server: a scrape is one small GET, so a client that
// holds a connection without using it is dropped, and the number of open
// connections is capped so that idle or hostile clients cannot exhaust the
// process's file descriptors or memory.
const (
	ReadHeaderTimeout = 5 * time.Second
	ReadTimeout       = 10 * time.Second
	WriteTimeout      = 30 * time.Second
	IdleTimeout       = 30 * time.Second
	MaxHeaderBytes    = 16 << 10
	// MaxConns is the most connections served at once; more wait in the
	// kernel's accept queue.
	MaxConns = 64
)

// Server serves a metrics handler over HTTP on /metrics.
type Server struct {
	ln       net.Listener
	srv      *http.Server
	done     chan struct{} // closed when Serve has returned
	serveErr error         // Serve's result, valid once done is closed
}

// Serve binds addr (host:port; port 0 picks a free one) and serves h on
// /metrics in the background. Binding happens before Serve returns, so a
// port in use is reported here, before the run starts. At most MaxConns
// connections are served at once, each with the timeouts above.
func Serve(addr string, h http.Handler) (*Server, error) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	return serve(addr, mux, limits{ReadHeaderTimeout, IdleTimeout, MaxConns})
}

// ServeAll is Serve for a handler that routes every path itself (the
// control server: its page, API and /metrics on one port), with the same
// limits.
func ServeAll(addr string, h http.Handler) (*Server, error) {
	return serve(addr, h, limits{ReadHeaderTimeout, IdleTimeout, MaxConns})
}

// limits are the server's timeouts and connection cap.
type limits struct {
	header, idle time.Duration
	conns        int
}

func serve(addr string, h http.Handler, lim limits) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	s := &Server{
		ln: ln,
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: lim.header,
			ReadTimeout:       ReadTimeout,
			WriteTimeout:      WriteTimeout,
			IdleTimeout:       lim.idle,
			MaxHeaderBytes:    MaxHeaderBytes,
		},
		done: make(chan struct{}),
	}
	go func() {
		s.serveErr = s.srv.Serve(newLimitListener(ln, lim.conns))
		close(s.done)
	}()
	return s, nil
}

// Addr returns the address the server listens on, with the real port when
// port 0 was asked for.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Loopback reports whether the server is reachable only from this machine.
func (s *Server) Loopback() bool {
	a, ok := s.ln.Addr().(*net.TCPAddr)
	return ok && a.IP.IsLoopback()
}

// Shutdown stops accepting requests and waits for those in flight to
// finish until ctx ends; then it closes the connections still open. A
// client too slow or stuck to finish in time is cut off, which is not an
// error: only the server's own failure is. Calling it again is harmless.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		err = s.srv.Close()
	}
	<-s.done
	if !errors.Is(s.serveErr, http.ErrServerClosed) {
		err = errors.Join(err, s.serveErr)
	}
	if err != nil {
		return fmt.Errorf("metrics: shut down %s: %w", s.Addr(), err)
	}
	return nil
}

// limitListener accepts at most n connections at a time: Accept waits for
// a slot before taking the next connection from the kernel.
type limitListener struct {
	net.Listener
	sem  chan struct{}
	done chan struct{}
	once sync.Once
}

func newLimitListener(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, sem: make(chan struct{}, n), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn frees its listener slot once, when closed.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
