package metrics

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServerDropsIdleConnections (issue item 8): a connection that sends no
// request, or idles after one, is closed by the server; the read below
// returns EOF when that happens (its own deadline only guards the test).
func TestServerDropsIdleConnections(t *testing.T) {
	srv, err := serve("127.0.0.1:0", http.NotFoundHandler(), limits{header: 50 * time.Millisecond, idle: 50 * time.Millisecond, conns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	for _, sendRequest := range []bool{false, true} {
		c, err := net.Dial("tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(30 * time.Second))
		r := bufio.NewReader(c)
		if sendRequest {
			io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if _, err := r.ReadByte(); err != io.EOF {
			t.Errorf("request sent %v: read %v, want EOF (closed by the server)", sendRequest, err)
		}
		c.Close()
	}
}

// TestServerCapsConnections (issue item 8): with the cap's worth of idle
// connections held open, a further client waits (in the kernel's accept
// queue) rather than costing the process a descriptor; it is served as soon
// as one is released.
func TestServerCapsConnections(t *testing.T) {
	const cap = 3
	srv, err := serve("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }),
		limits{header: time.Minute, idle: time.Minute, conns: cap})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	var idle []net.Conn
	for range cap {
		c, err := net.Dial("tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	extra, err := net.Dial("tcp", srv.Addr()) // completes in the kernel's backlog
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	io.WriteString(extra, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
	extra.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := extra.Read(make([]byte, 1)); err == nil {
		t.Fatal("a connection beyond the cap was served while the cap was held")
	}
	idle[0].Close()
	extra.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(extra), nil)
	if err != nil {
		t.Fatalf("after a slot was freed: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "ok" {
		t.Fatalf("body %q", b)
	}
}

// TestServerLoopback: the address kinds warnExposed tells apart.
func TestServerLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:0": true, "[::1]:0": true, "0.0.0.0:0": false, ":0": false} {
		srv, err := Serve(addr, http.NotFoundHandler())
		if err != nil {
			if strings.Contains(addr, "::1") {
				continue // no IPv6 here
			}
			t.Fatal(err)
		}
		if got := srv.Loopback(); got != want {
			t.Errorf("%s: Loopback %v, want %v", addr, got, want)
		}
		srv.Shutdown(context.Background())
	}
}

// TestClippedMetric: the clipped count is exported.
func TestClippedMetric(t *testing.T) {
	m := New("cpu")
	m.SetClipped(42)
	srv, err := Serve("127.0.0.1:0", m.Handler())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	if got := scrape(t, srv.Addr())["sigproc_clipped_values_total"]; got != 42 {
		t.Fatalf("sigproc_clipped_values_total = %v, want 42", got)
	}
}

// TestShutdownCutsOffStuckClients (issue 27 item 5): a client whose
// request is stuck in the handler, one that never finishes its header,
// one that sent half its body and one that does not read its answer
// delay a shutdown by at most its deadline, and are no error.
func TestShutdownCutsOffStuckClients(t *testing.T) {
	stuck := make(chan struct{})
	defer close(stuck)
	srv, err := serve("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stuck":
			<-stuck
		case "/body":
			io.Copy(io.Discard, r.Body)
		case "/big":
			w.Write(make([]byte, 64<<20)) // more than the socket buffers hold
		}
	}), limits{header: time.Minute, idle: time.Minute, conns: 8})
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []string{
		"GET /stuck HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ",
		"POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nhalf",
		"GET /big HTTP/1.1\r\nHost: x\r\n\r\n",
	} {
		c, err := net.Dial("tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, req)
	}
	time.Sleep(100 * time.Millisecond) // the requests reach their handlers
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with stuck clients: %v, want nil", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("shutdown took %v with a 200 ms deadline", d)
	}
}

// TestServerHeaderLimit (issue 27 item 5): a request header past
// MaxHeaderBytes is refused with 431 without being read whole.
func TestServerHeaderLimit(t *testing.T) {
	srv, err := ServeAll("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	for _, tt := range []struct {
		size int
		want int
	}{{1 << 10, 200}, {MaxHeaderBytes / 2, 200}, {4 * MaxHeaderBytes, 431}} {
		req, _ := http.NewRequest("GET", "http://"+srv.Addr()+"/", nil)
		req.Header.Set("X-Big", strings.Repeat("a", tt.size))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%d-byte header: %v", tt.size, err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%d-byte header: %d, want %d", tt.size, resp.StatusCode, tt.want)
		}
	}
}
