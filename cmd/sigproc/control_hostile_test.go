//go:build unix

package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// hostilePage tries every way a page of another origin has to send a
// retune (issue 27 item 1) to the API at each base URL in turn:
// a CORS-safelisted fetch (text/plain, no preflight), a no-cors fetch that
// asks for application/json (the browser drops the header), a CORS fetch
// with application/json (preflighted), sendBeacon, and a text/plain form
// posted into a frame whose fields spell out a JSON body.
const hostilePage = `<!doctype html><html><body>
<iframe name="sink" id="sink"></iframe>
<script>
const body = JSON.stringify({fir: {taps: [0]}});
async function attack(base) {
  const url = base + "/api/stages/0", r = {};
  try { r.textPlain = (await fetch(url, {method: "POST", headers: {"Content-Type": "text/plain"}, body})).status; } catch (e) { r.textPlain = String(e); }
  try { await fetch(url, {method: "POST", mode: "no-cors", headers: {"Content-Type": "application/json"}, body}); r.noCors = "sent"; } catch (e) { r.noCors = String(e); }
  try { r.cors = (await fetch(url, {method: "POST", headers: {"Content-Type": "application/json"}, body})).status; } catch (e) { r.cors = String(e); }
  r.beacon = navigator.sendBeacon(url, new Blob([body], {type: "text/plain"}));
  r.form = await new Promise((resolve) => {
    const f = document.createElement("form");
    f.method = "POST"; f.enctype = "text/plain"; f.action = url; f.target = "sink";
    const i = document.createElement("input");
    i.name = '{"fir": {"taps": [0], "pad": "'; i.value = '"}}';
    f.appendChild(i); document.body.appendChild(f);
    const frame = document.getElementById("sink");
    frame.onload = () => resolve("submitted");
    f.submit();
  });
  return r;
}
(async () => {
  const out = {};
  for (const [name, base] of [["canary", %q], ["target", %q]]) out[name] = await attack(base);
  window.results = JSON.stringify(out);
})();
</script></body></html>`

// TestControlHostilePageInBrowser (issue 27 item 1): in headless chromium,
// a page served from another origin (a second server on another port)
// sends its retunes both to a canary, an API with no protection, which
// shows that the browser does deliver them, and to a running `sigproc
// run`, which changes nothing. A page reaching the server under a name that
// resolves to 127.0.0.1 (DNS rebinding, emulated with chromium's host
// resolver rules) is refused too. The control page itself still retunes.
func TestControlHostilePageInBrowser(t *testing.T) {
	browser := chromium(t)
	bin := buildBinary(t)
	r := startControlRun(t, bin, "  - fir: {taps: [1]}", "")
	defer r.stopIfRunning()
	_, controlPort, _ := net.SplitHostPort(r.addr)

	var mu sync.Mutex
	var canary []string // what reached the unprotected API
	canarySrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == "POST" {
			mu.Lock()
			canary = append(canary, req.Header.Get("Content-Type")+" from "+req.Header.Get("Origin"))
			mu.Unlock()
		}
		fmt.Fprint(w, "{}")
	}))
	defer canarySrv.Close()
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, hostilePage, canarySrv.URL, "http://"+r.addr)
	}))
	defer hostile.Close()

	ctx := browserContext(t, browser, chromedp.Flag("host-resolver-rules", "MAP rebound.test 127.0.0.1"))

	if err := chromedp.Do(ctx, chromedp.Navigate(hostile.URL)); err != nil {
		t.Fatal(err)
	}
	results, err := chromedp.Run(ctx, chromedp.Poll[string](`window.results`))
	if err != nil {
		t.Fatalf("the hostile page did not finish: %v", err)
	}
	// The beacon is sent in the background: give it time to land.
	waitFor(t, "the canary's beacon", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(canary) >= 4
	})
	time.Sleep(500 * time.Millisecond) // and the target's, which lands no sooner
	mu.Lock()
	t.Logf("page's view: %s\nthe canary received %d POSTs: %q", results, len(canary), canary)
	mu.Unlock()
	if st := r.status(t); st.Retunes != 0 || fmt.Sprint(st.Stages[0].Taps) != "[1]" {
		t.Fatalf("a page of another origin retuned the run: retunes %d, taps %v", st.Retunes, st.Stages[0].Taps)
	}

	// DNS rebinding: the page's origin is rebound.test:PORT, which now
	// resolves to this machine; its requests are same-origin, and the
	// Host header names rebound.test.
	rebound := "http://rebound.test:" + controlPort
	if err := chromedp.Do(ctx, chromedp.Navigate(rebound+"/")); err != nil {
		t.Fatal(err)
	}
	codes, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`Promise.all([
		fetch("/api/stages/0", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({fir: {taps: [0]}})}).then(r => r.status),
		fetch("/api/status").then(r => r.status)])`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(codes) != "[421 421]" {
		t.Fatalf("rebound page: POST and GET answered %v, want [421 421]", codes)
	}
	if st := r.status(t); st.Retunes != 0 {
		t.Fatalf("a rebound page retuned the run: %d", st.Retunes)
	}

	// The control page itself still retunes, through its form.
	err = chromedp.Do(ctx,
		chromedp.Navigate("http://"+r.addr+"/"),
		chromedp.WaitVisible(`#fields-fir`),
		chromedp.SetValue(`#stage-index`, "0"),
		chromedp.SetValue(`#taps`, "0.5, 0.5"),
		chromedp.Click(`#apply`),
		chromedp.WaitVisible(`#result[data-applied-at]`),
	)
	if err != nil {
		t.Fatalf("the control page's form: %v\n%s", err, r.stderrText())
	}
	if st := r.status(t); st.Retunes != 1 || fmt.Sprint(st.Stages[0].Taps) != "[0.5 0.5]" {
		t.Fatalf("after the page's own form: retunes %d, taps %v", st.Retunes, st.Stages[0].Taps)
	}
	if !strings.Contains(r.stderrText(), "stage retuned") {
		t.Errorf("no retune logged")
	}
}
