package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
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
// port in use is reported here, before the run starts.
func Serve(addr string, h http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	s := &Server{
		ln:   ln,
		srv:  &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		done: make(chan struct{}),
	}
	go func() {
		s.serveErr = s.srv.Serve(ln)
		close(s.done)
	}()
	return s, nil
}

// Addr returns the address the server listens on, with the real port when
// port 0 was asked for.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Shutdown stops accepting scrapes and waits for those in flight to finish
// or ctx to end. Calling it again is harmless.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	<-s.done
	if !errors.Is(s.serveErr, http.ErrServerClosed) {
		err = errors.Join(err, s.serveErr)
	}
	if err != nil {
		return fmt.Errorf("metrics: shut down %s: %w", s.Addr(), err)
	}
	return nil
}
