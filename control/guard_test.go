package control

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sigproc/sigproc/backend/cpu"
	"github.com/sigproc/sigproc/stage"
)

// testControl is a control over a CPU shift and decimating fir at 48 kS/s.
func testControl(t *testing.T, o Options) *Control {
	t.Helper()
	c := stage.Chain{SampleRate: 48000, Stages: []stage.Stage{
		{Kind: stage.KindShift, FrequencyHz: 1000},
		{Kind: stage.KindFIR, Taps: []float32{0.25, 0.5, 0.25}, Decimate: 2},
	}}
	be, err := cpu.New(c, 256)
	if err != nil {
		t.Fatal(err)
	}
	o.Backend, o.Chain, o.BlockSize, o.Slots, o.Watch = be, c, 256, 4, true
	return New(o)
}

// do sends one request to h as a client at host would, with headers.
func do(h http.Handler, method, target, host, body string, headers map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.Host = host
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

const (
	shiftBody = `{"shift": {"frequency_hz": 2000}}`
	self      = "127.0.0.1:8080"
	json_     = "application/json"
)

// TestAccess (issue 27 item 1): which requests the control server serves,
// by Host, Origin, Referer, Content-Type and token, as trusted local web
// tools (Jupyter, Syncthing) do.
func TestAccess(t *testing.T) {
	const tok = "0123456789abcdef0123"
	tests := []struct {
		name           string
		token          string
		method, target string
		host           string
		headers        map[string]string
		want           int
	}{
		// Host: IP literals, localhost, allowed names; anything else is
		// what DNS rebinding would send.
		{"ipv4 literal", "", "GET", "/api/status", self, nil, 200},
		{"ipv4 without port", "", "GET", "/api/status", "127.0.0.1", nil, 200},
		{"ipv6 literal", "", "GET", "/api/status", "[::1]:8080", nil, 200},
		{"lan address", "", "GET", "/api/status", "192.168.1.20:8080", nil, 200},
		{"localhost", "", "GET", "/api/status", "localhost:8080", nil, 200},
		{"LOCALHOST.", "", "GET", "/api/status", "LOCALHOST.:8080", nil, 200},
		{"allowed name", "", "GET", "/api/status", "sdr.example:8080", nil, 200},
		{"no host (HTTP/1.0)", "", "GET", "/api/status", "", nil, 200},
		{"rebound name", "", "GET", "/api/status", "evil.example:8080", nil, 421},
		{"rebound name, page", "", "GET", "/", "evil.example:8080", nil, 421},
		{"rebound name, metrics", "", "GET", "/metrics", "evil.example:8080", nil, 421},
		{"rebound name, write", "", "POST", "/api/stages/0", "evil.example:8080", map[string]string{"Content-Type": json_, "Origin": "http://evil.example:8080"}, 421},
		{"name like an address", "", "GET", "/api/status", "127.0.0.1.evil.example:8080", nil, 421},
		{"decimal address", "", "GET", "/api/status", "2130706433:8080", nil, 421},
		{"sub-localhost", "", "GET", "/api/status", "evil.localhost:8080", nil, 421},
		// Writes: JSON only, from this origin or none.
		{"json, no origin (curl)", "", "POST", "/api/stages/0", self, map[string]string{"Content-Type": json_}, 200},
		{"json with charset", "", "POST", "/api/stages/0", self, map[string]string{"Content-Type": "application/json; charset=utf-8"}, 200},
		{"text/plain", "", "POST", "/api/stages/0", self, map[string]string{"Content-Type": "text/plain"}, 415},
		{"form", "", "POST", "/api/stages/0", self, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415},
		{"no content type", "", "POST", "/api/stages/0", self, nil, 415},
		{"own origin", "", "POST", "/api/stages/0", self, map[string]string{"Content-Type": json_, "Origin": "http://127.0.0.1:8080"}, 200},
		{"own origin, default port", "", "POST", "/api/stages/0", "127.0.0.1", map[string]string{"Content-Type": json_, "Origin": "http://127.0.0.1"}, 200},
		{"own origin, case", "", "POST", "/api/stages/0", "localhost:8080", map[string]string{"Content-Type": json_, "Origin": "http://LocalHost:8080"}, 200},
		{"other origin", "", "POST", "/api/stages/0", self, map[string]string{"Content-Type": json_, "Origin": "http://evil.example"}, 403},
		{"other port", "", "POST", "/api/stages/0", self, map[string]string{"Content-Type": json_, "Origin": "http://127.0.0.1:9999"}, 403},
		{"other scheme", "", "POST", "/api/stages/0", self, map[string]string{"Content-Type": json_, "Origin": "https://127.0.0.1:8080"}, 403},
		{"null origin", "", "POST", "/api/stages/0", self, map[string]string{"Content-Type": json_, "Origin": "null"}, 403},
		{"other origin, text/plain", "", "POST", "/api/stages/0", self, map[string]string{"Content-Type": "text/plain", "Origin": "http://evil.example"}, 403},
		{"own referer", "", "POST", "/api/stages/0", self, map[string]string{"Content-Type": json_, "Referer": "http://127.0.0.1:8080/"}, 200},
		{"other referer", "", "POST", "/api/stages/0", self, map[string]string{"Content-Type": json_, "Referer": "http://evil.example/page"}, 403},
		{"origin wins over referer", "", "POST", "/api/stages/0", self, map[string]string{"Content-Type": json_, "Origin": "http://evil.example", "Referer": "http://127.0.0.1:8080/"}, 403},
		// Remote access: writes need the token; reads do not.
		{"token missing", tok, "POST", "/api/stages/0", self, map[string]string{"Content-Type": json_}, 401},
		{"token wrong", tok, "POST", "/api/stages/0", self, map[string]string{"Content-Type": json_, "Authorization": "Bearer nope"}, 401},
		{"token bearer", tok, "POST", "/api/stages/0", self, map[string]string{"Content-Type": json_, "Authorization": "Bearer " + tok}, 200},
		{"token cookie", tok, "POST", "/api/stages/0", self, map[string]string{"Content-Type": json_, "Cookie": TokenCookie + "=" + tok}, 200},
		{"token cookie wrong", tok, "POST", "/api/stages/0", self, map[string]string{"Content-Type": json_, "Cookie": TokenCookie + "=x"}, 401},
		{"token, other origin", tok, "POST", "/api/stages/0", self, map[string]string{"Content-Type": json_, "Cookie": TokenCookie + "=" + tok, "Origin": "http://evil.example"}, 403},
		{"token, reads open", tok, "GET", "/api/status", self, nil, 200},
		{"token in page url", tok, "GET", "/?token=" + tok, self, nil, 303},
		{"wrong token in page url", tok, "GET", "/?token=nope", self, nil, 401},
		{"page url token ignored without one", "", "GET", "/?token=x", self, nil, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testControl(t, Options{AllowedHosts: []string{"sdr.example"}, Token: tt.token})
			body := ""
			if tt.method == "POST" {
				body = shiftBody
			}
			w := do(c.Handler(http.NotFoundHandler()), tt.method, tt.target, tt.host, body, tt.headers)
			if w.Code != tt.want {
				t.Fatalf("%d %s, want %d", w.Code, w.Body, tt.want)
			}
			retuned := c.Status().Retunes > 0
			if retuned != (tt.method == "POST" && tt.want == 200) {
				t.Errorf("answered %d but retuned %v", w.Code, retuned)
			}
			switch tt.want {
			case 303:
				ck := w.Result().Cookies()
				if len(ck) != 1 || ck[0].Name != TokenCookie || ck[0].Value != tt.token || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode || w.Header().Get("Location") != "/" {
					t.Errorf("cookie %v, location %q", ck, w.Header().Get("Location"))
				}
			case 401:
				if tt.method == "POST" && !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("no WWW-Authenticate")
				}
			}
			if tt.want >= 400 && !json.Valid(w.Body.Bytes()) {
				t.Errorf("error body %q is not JSON", w.Body)
			}
		})
	}
}

// TestMethods (issue 27 item 8): a known path with another method is 405
// with Allow, not 404.
func TestMethods(t *testing.T) {
	c := testControl(t, Options{})
	h := c.Handler(http.NotFoundHandler())
	tests := []struct {
		method, target string
		want           int
		allow          string
	}{
		{"PUT", "/api/stages/0", 405, "POST"},
		{"DELETE", "/api/stages/0", 405, "POST"},
		{"GET", "/api/stages/0", 405, "POST"},
		{"PATCH", "/api/stages/9", 405, "POST"},
		{"POST", "/api/status", 405, "GET, HEAD"},
		{"PUT", "/api/spectrum", 405, "GET, HEAD"},
		{"DELETE", "/api/response", 405, "GET, HEAD"},
		{"POST", "/", 405, "GET, HEAD"},
		{"POST", "/metrics", 405, "GET, HEAD"},
		{"HEAD", "/api/status", 200, ""},
		{"GET", "/api/nope", 404, ""},
		{"PUT", "/api/nope", 404, ""},
	}
	for _, tt := range tests {
		w := do(h, tt.method, tt.target, self, "", map[string]string{"Content-Type": json_})
		if w.Code != tt.want || w.Header().Get("Allow") != tt.allow {
			t.Errorf("%s %s: %d Allow %q, want %d Allow %q", tt.method, tt.target, w.Code, w.Header().Get("Allow"), tt.want, tt.allow)
		}
	}
}

// TestAPIValues (issue 27 item 8): bad values are 400 with the config
// validator's message; an explicit decimate: 0 is refused while an
// absent one keeps the running stage's; bodies past 1 MiB are 413 whether
// declared or streamed.
func TestAPIValues(t *testing.T) {
	tests := []struct {
		name, target, body string
		chunked            bool
		want               int
		msg                string
	}{
		{"absent decimate keeps the stage's", "/api/stages/1", `{"fir": {"taps": [1, 1]}}`, false, 200, ""},
		{"same decimate", "/api/stages/1", `{"fir": {"taps": [1, 1], "decimate": 2}}`, false, 200, ""},
		{"explicit decimate 0", "/api/stages/1", `{"fir": {"taps": [1], "decimate": 0}}`, false, 400, "fir.decimate: must be in 1..65536, got 0"},
		{"negative decimate", "/api/stages/1", `{"fir": {"taps": [1], "decimate": -2}}`, false, 400, "fir.decimate: must be in 1..65536, got -2"},
		{"fractional decimate", "/api/stages/1", `{"fir": {"taps": [1], "decimate": 2.5}}`, false, 400, "must be an integer"},
		{"another decimate", "/api/stages/1", `{"fir": {"taps": [1], "decimate": 3}}`, false, 409, "decimates by 2"},
		{"empty method", "/api/stages/1", `{"fir": {"taps": [1], "method": ""}}`, false, 400, "fir.method: must not be zero or empty"},
		{"unknown method", "/api/stages/1", `{"fir": {"taps": [1], "method": "quick"}}`, false, 400, "fir.method: unknown value"},
		{"no frequency", "/api/stages/0", `{"shift": {}}`, false, 400, "shift.frequency_hz: required"},
		{"string frequency", "/api/stages/0", `{"shift": {"frequency_hz": "1k"}}`, false, 400, "wrong type"},
		{"above nyquist", "/api/stages/0", `{"shift": {"frequency_hz": 30000}}`, false, 400, "above Nyquist"},
		{"design past nyquist at the stage's rate", "/api/stages/1", `{"fir": {"design": {"type": "lowpass", "cutoff_hz": 30000, "num_taps": 65}}}`, false, 400, "Nyquist"},
		{"key of another design", "/api/stages/1", `{"fir": {"design": {"type": "lowpass", "cutoff_hz": 3000, "num_taps": 65, "high_hz": 5}}}`, false, 400, "fir.design.high_hz: not used by lowpass"},
		{"infinite tap", "/api/stages/1", `{"fir": {"taps": [1, 1e39]}}`, false, 400, "fir.taps[1]: must be a finite float32"},
		{"repeated key", "/api/stages/0", `{"shift": {"frequency_hz": 1, "frequency_hz": 2}}`, false, 400, "given twice"},
		{"yaml", "/api/stages/0", "shift: {frequency_hz: 1}", false, 400, "not valid JSON"},
		{"taps_file", "/api/stages/1", `{"fir": {"taps_file": "/etc/passwd"}}`, false, 400, "not accepted"},
		{"no such stage", "/api/stages/5", shiftBody, false, 409, "does not exist"},
		{"not a number", "/api/stages/x", shiftBody, false, 404, "want a stage number"},
		{"too large, declared", "/api/stages/1", `{"fir": {"taps": [1]}}` + strings.Repeat(" ", 1<<20), false, 413, "larger than 1048576"},
		{"too large, streamed", "/api/stages/1", `{"fir": {"taps": [1]}}` + strings.Repeat(" ", 1<<20), true, 413, "larger than 1048576"},
		{"too large inside the taps", "/api/stages/1", `{"fir": {"taps": [1` + strings.Repeat(",1", 1<<19) + `]}}`, true, 413, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testControl(t, Options{})
			r := httptest.NewRequest("POST", tt.target, strings.NewReader(tt.body))
			r.Host = self
			r.Header.Set("Content-Type", json_)
			if tt.chunked {
				r.ContentLength = -1
				r.Body = io.NopCloser(strings.NewReader(tt.body)) // no length known
			}
			w := httptest.NewRecorder()
			c.Handler(nil).ServeHTTP(w, r)
			var v map[string]any
			json.Unmarshal(w.Body.Bytes(), &v)
			if w.Code != tt.want || !strings.Contains(toString(v["error"]), tt.msg) {
				t.Fatalf("%d %v, want %d %q", w.Code, v, tt.want, tt.msg)
			}
			if st := c.Status(); tt.want == 200 && (st.Retunes != 1 || st.Stages[1].Decimate != 2) || tt.want != 200 && st.Retunes != 0 {
				t.Errorf("status after: retunes %d, stages %+v", st.Retunes, st.Stages)
			}
		})
	}
}

func toString(v any) string {
	s, _ := v.(string)
	return s
}

// TestReadsCachedAndLimited (issue 27 item 4): a response is computed
// once per version of the chain and a spectrum at most once per
// spectrumTTL while samples arrive; reads beyond the rate are 429.
func TestReadsCachedAndLimited(t *testing.T) {
	c := testControl(t, Options{})
	h := c.Handler(nil)
	get := func(target string) int { return do(h, "GET", target, self, "", nil).Code }
	key := renderKey{kind: "response", a: 1}
	if code := get("/api/response?stage=1"); code != 200 {
		t.Fatalf("response: %d", code)
	}
	first := c.entry(key).at
	for range 20 {
		get("/api/response?stage=1")
	}
	if c.entry(key).at != first {
		t.Error("the response was computed again with no retune")
	}
	if code := do(h, "POST", "/api/stages/1", self, `{"fir": {"taps": [1, 2, 1]}}`, map[string]string{"Content-Type": json_}).Code; code != 200 {
		t.Fatalf("retune: %d", code)
	}
	get("/api/response?stage=1")
	if c.entry(key).at == first {
		t.Error("the response was not computed again after a retune")
	}

	// A spectrum with no new samples is served as it is; with new ones,
	// again within spectrumTTL, then anew.
	c.scopes[0].write(make([]float32, 4096))
	skey := renderKey{kind: "spectrum", name: "input", a: 0, b: 1024}
	if code := get("/api/spectrum?point=input"); code != 200 {
		t.Fatalf("spectrum: %d", code)
	}
	at := c.entry(skey).at
	c.scopes[0].write(make([]float32, 4096))
	get("/api/spectrum?point=input")
	if c.entry(skey).at != at && time.Since(at) < spectrumTTL {
		t.Error("recomputed within spectrumTTL")
	}
	time.Sleep(spectrumTTL)
	get("/api/spectrum?point=input")
	if c.entry(skey).at == at {
		t.Error("not recomputed after spectrumTTL with new samples")
	}

	// The limiter: a burst, then readRate a second.
	now := time.Unix(0, 0)
	c.reads = newLimiter(readRate, readBurst)
	c.reads.now = func() time.Time { return now }
	codes := map[int]int{}
	for range readBurst + 10 {
		codes[get("/api/status")]++
	}
	if codes[200] != readBurst || codes[429] != 10 {
		t.Errorf("burst: %v", codes)
	}
	now = now.Add(100 * time.Millisecond)
	codes = map[int]int{}
	for range readBurst {
		codes[get("/api/spectrum?point=input")]++
	}
	if codes[200] != readRate/10 {
		t.Errorf("after 100 ms: %v, want %d served", codes, readRate/10)
	}
	if w := do(h, "GET", "/api/status", self, "", nil); w.Code != 429 || w.Header().Get("Retry-After") != "1" {
		t.Errorf("limited: %d Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
}
