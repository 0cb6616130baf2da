package control

import (
	"crypto/subtle"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
)

// TokenCookie is the cookie the page keeps the token in, once opened
// through the URL the log prints (/?token=...), as Jupyter does.
const TokenCookie = "sigproc_control_token"

// hostAllowed reports whether a request's Host may be served: an IP
// literal, localhost, or one of allowed. A name is what DNS rebinding
// needs (a page of evil.example whose name now resolves to 127.0.0.1), and
// IP literals keep Prometheus's scrapes by address working. An empty Host
// (HTTP/1.0 without one) names nothing to rebind and passes.
func hostAllowed(hostport string, allowed []string) bool {
	if hostport == "" {
		return true
	}
	h, _ := splitHostPort(hostport)
	h = strings.TrimSuffix(h, ".")
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	for _, a := range allowed {
		if strings.EqualFold(h, strings.TrimSuffix(a, ".")) {
			return true
		}
	}
	return false
}

// splitHostPort splits a Host header or URL host into host and port, the
// port 80 (plain HTTP's) when absent and the brackets of an IPv6 literal
// removed.
func splitHostPort(hostport string) (host, port string) {
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		return h, p
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), "80"
}

// sameOrigin reports whether the Origin or Referer u names this server as
// the request reached it (http://Host).
func sameOrigin(u, host string) bool {
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "http" || p.Host == "" || p.User != nil {
		return false // "null" (a sandboxed frame, a file), https, or garbage
	}
	uh, up := splitHostPort(p.Host)
	hh, hp := splitHostPort(host)
	return strings.EqualFold(uh, hh) && up == hp
}

// guard answers 421 to a request whose Host is not allowed, before any
// handler sees it.
func (c *Control) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, c.o.AllowedHosts) {
			fail(w, http.StatusMisdirectedRequest, "host %q is not served here: use an IP address or localhost, or list the name in control.allowed_hosts", r.Host)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// write guards a handler that changes the run. In order: the method
// (405), the request's Origin, or without one its Referer, when given,
// must be this server (403; a request with neither, from curl or a
// script, passes); the token when there is one (401); and the body must be
// declared JSON (415), which no cross-origin form or no-cors fetch can
// send without a preflight that this server never grants.
func (c *Control) write(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !allow(w, r, http.MethodPost) {
			return
		}
		from, what := r.Header.Get("Origin"), "Origin"
		if from == "" {
			from, what = r.Header.Get("Referer"), "Referer"
		}
		if from != "" && !sameOrigin(from, r.Host) {
			fail(w, http.StatusForbidden, "%s %q is not this server (http://%s): a page of another site cannot retune the run", what, from, r.Host)
			return
		}
		if !c.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="sigproc control"`)
			fail(w, http.StatusUnauthorized, "this server needs its token for writes: Authorization: Bearer TOKEN, or open the page through the URL the log printed")
			return
		}
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			fail(w, http.StatusUnsupportedMediaType, "send the body as Content-Type: application/json (got %q)", r.Header.Get("Content-Type"))
			return
		}
		h(w, r)
	}
}

// authorized reports whether r carries the token, when there is one.
func (c *Control) authorized(r *http.Request) bool {
	if c.o.Token == "" {
		return true
	}
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && c.isToken(tok) {
		return true
	}
	ck, err := r.Cookie(TokenCookie)
	return err == nil && c.isToken(ck.Value)
}

func (c *Control) isToken(s string) bool {
	return subtle.ConstantTimeCompare([]byte(s), []byte(c.o.Token)) == 1
}

// login handles the page's URL with ?token=: the right token is kept in a
// cookie (only ever sent back to this server, never by another site's
// requests) and the page reloaded without it in the address.
func (c *Control) login(w http.ResponseWriter, r *http.Request) bool {
	q := r.URL.Query()
	if !q.Has("token") || c.o.Token == "" {
		return false
	}
	if !c.isToken(q.Get("token")) {
		fail(w, http.StatusUnauthorized, "wrong token")
		return true
	}
	http.SetCookie(w, &http.Cookie{Name: TokenCookie, Value: c.o.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
	return true
}

// allow answers 405, with the Allow header, to a method not in methods
// (HEAD goes with GET).
func allow(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	for _, m := range methods {
		if r.Method == m || m == http.MethodGet && r.Method == http.MethodHead {
			return true
		}
	}
	list := strings.Join(methods, ", ")
	if strings.Contains(list, http.MethodGet) {
		list += ", HEAD"
	}
	w.Header().Set("Allow", list)
	fail(w, http.StatusMethodNotAllowed, "%s %s: allowed: %s", r.Method, r.URL.Path, list)
	return false
}

// limiter is a token bucket: rate requests a second, up to burst at once.
type limiter struct {
	mu          sync.Mutex
	rate, burst float64
	tokens      float64
	last        time.Time
	now         func() time.Time
}

func newLimiter(rate, burst float64) *limiter {
	return &limiter{rate: rate, burst: burst, tokens: burst, now: time.Now}
}

// allow takes a token if there is one.
func (l *limiter) allow() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if !l.last.IsZero() {
		l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	}
	l.last = now
	if l.tokens < 1 {
		return false
	}
	l.tokens--
	return true
}

// limited answers 429 when the API's reads come faster than the limiter
// lets through.
func (c *Control) limited(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !allow(w, r, http.MethodGet) {
			return
		}
		if !c.reads.allow() {
			w.Header().Set("Retry-After", "1")
			fail(w, http.StatusTooManyRequests, "more than %g API reads a second: try again in a second", c.reads.rate)
			return
		}
		h(w, r)
	}
}
