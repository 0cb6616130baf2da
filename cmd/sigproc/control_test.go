//go:build unix

package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/cmplx"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sigproc/sigproc/control"
	"github.com/sigproc/sigproc/internal/sigmftest"
)

// controlRun is a `sigproc run` child with its control server.
type controlRun struct {
	*child
	addr, cfg, out string
}

// controlYAML is a paced 48 kS/s tone at 3 kHz plus noise through
// stages, into a raw float32 file; overrun: block, so nothing is dropped
// and the output depends only on the stages.
func controlYAML(stages, out, extra string) string {
	return fmt.Sprintf(`source:
  type: synthetic
  sample_rate: 48000
  paced: true
  signal: sum
  components:
    - {signal: tone, frequency_hz: 3000, amplitude: 0.5}
    - {signal: noise, noise_std: 0.05, seed: 7}
block_size: 256
overrun: block
stages:
%s
sink: {type: file, path: %q, format: rf32_le}
%s`, stages, out, extra)
}

// startControlRun starts the binary on a paced config with the control
// server on a free loopback port and waits until it serves.
func startControlRun(t *testing.T, bin, stages, extra string) *controlRun {
	t.Helper()
	return startControlConfig(t, bin, func(out, control string) string { return controlYAML(stages, out, control+extra) })
}

// startControlConfig is startControlRun on the config yaml returns for
// the output path and the control section.
func startControlConfig(t *testing.T, bin string, yaml func(out, control string) string) *controlRun {
	t.Helper()
	dir := t.TempDir()
	r := &controlRun{addr: freeLoopbackAddr(t), out: filepath.Join(dir, "out.f32")}
	r.cfg = filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(r.cfg, []byte(yaml(r.out, fmt.Sprintf("control:\n  listen: %q\n", r.addr))), 0o644); err != nil {
		t.Fatal(err)
	}
	r.child = startChild(t, bin, nil, "run", "-c", r.cfg)
	waitFor(t, "the control server", func() bool {
		select {
		case <-r.done:
			t.Fatalf("run ended: %v\n%s", r.err, r.stderrText())
		default:
		}
		return strings.Contains(r.stderrText(), "serving the control page")
	})
	return r
}

// rewrite replaces the run's config with other stages (and extra).
// stopIfRunning sends the run SIGTERM unless it has ended: a test that
// fails midway leaves no process behind.
func (r *controlRun) stopIfRunning() {
	select {
	case <-r.done:
	default:
		r.signal(syscall.SIGTERM)
	}
}

func (r *controlRun) rewrite(t *testing.T, stages, extra string) {
	t.Helper()
	body := controlYAML(stages, r.out, fmt.Sprintf("control:\n  listen: %q\n%s", r.addr, extra))
	if err := os.WriteFile(r.cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// api does one request and decodes the JSON answer into v (if not nil).
func api(t *testing.T, method, url, body string, v any) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if method == "POST" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if v != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s %s: %v\n%s", method, url, err, b)
		}
	}
	return resp.StatusCode
}

func (r *controlRun) status(t *testing.T) control.Status {
	t.Helper()
	var st control.Status
	for {
		code := api(t, "GET", "http://"+r.addr+"/api/status", "", &st)
		switch code {
		case http.StatusOK:
			return st
		case http.StatusTooManyRequests: // past the read limit: wait
			time.Sleep(100 * time.Millisecond)
		default:
			t.Fatalf("status: %d", code)
		}
	}
}

func readRawF32(t *testing.T, path string) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// referenceRun runs the same config unpaced, without the control server,
// for n samples, and returns its output.
func referenceRun(t *testing.T, bin, stages string, n int) []float32 {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "ref.f32")
	cfg := filepath.Join(dir, "ref.yaml")
	if err := os.WriteFile(cfg, []byte(controlYAML(stages, out, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command(bin, "run", "-c", cfg, "--no-paced", "--num-samples", strconv.Itoa(n)).CombinedOutput(); err != nil {
		t.Fatalf("reference run: %v\n%s", err, b)
	}
	return readRawF32(t, out)
}

// TestControlRetuneAtExactSample retunes a running fir through the API
// and checks the output file: the old taps (here identity) before the
// reported sample K, the new ones from K on over the same history, and
// nothing lost.
func TestControlRetuneAtExactSample(t *testing.T) {
	bin := buildBinary(t)
	const stages = "  - fir: {taps: [1]}"
	r := startControlRun(t, bin, stages, "")
	waitFor(t, "some output", func() bool { return r.status(t).SamplesOut > 10000 })
	var res control.RetuneResult
	if code := api(t, "POST", "http://"+r.addr+"/api/stages/0", `{"fir": {"taps": [0.5, 0, 0.5]}}`, &res); code != http.StatusOK {
		t.Fatalf("POST: %d", code)
	}
	k := res.AppliedAtSample
	if k <= 0 || k%256 != 0 || res.Stage.NumTaps != 3 {
		t.Fatalf("retune %+v: want K at a block boundary", res)
	}
	st := r.status(t)
	if got := fmt.Sprint(st.Stages[0].Taps); got != "[0.5 0 0.5]" || st.Retunes != 1 {
		t.Fatalf("status after the retune: taps %s, retunes %d", got, st.Retunes)
	}
	waitFor(t, "output after K", func() bool { return r.status(t).SamplesOut > uint64(k)+5000 })
	r.signal(syscall.SIGTERM)
	y := readRawF32(t, r.out)
	x := referenceRun(t, bin, stages, len(y))
	if len(x) != len(y) || int64(len(y)) <= k {
		t.Fatalf("output %d samples, reference %d, K %d", len(y), len(x), k)
	}
	for n := range y {
		want := float64(x[n])
		if int64(n) >= k {
			want = 0.5*float64(x[n]) + 0.5*float64(x[n-2])
		}
		if math.Abs(float64(y[n])-want) > 1e-6 {
			t.Fatalf("sample %d (K %d): %g, want %g", n, k, y[n], want)
		}
	}
}

// TestControlRetuneShiftRecorded: a shift retuned through the API starts
// a capture segment of the SigMF recording at the first output sample the
// new shift applies to (the chain input sample the API reports, through
// the ÷2), with core:frequency moved by it; and the data agrees: the
// tone at +3000 Hz, at DC under the old shift, turns at 1000 Hz from
// that sample on.
func TestControlRetuneShiftRecorded(t *testing.T) {
	bin := buildBinary(t)
	var base string
	r := startControlConfig(t, bin, func(out, control string) string {
		base = strings.TrimSuffix(out, ".f32")
		return fmt.Sprintf(`source:
  type: synthetic
  sample_rate: 48000
  complex: true
  paced: true
  signal: tone
  frequency_hz: 3000
  amplitude: 0.5
block_size: 256
overrun: block
stages:
  - shift: {frequency_hz: -3000}
  - fir: {taps: [1], decimate: 2}
sink: {type: sigmf, path: %q}
%s`, base, control)
	})
	defer r.stopIfRunning()
	waitFor(t, "some output", func() bool { return r.status(t).SamplesOut > 5000 })
	var res control.RetuneResult
	if code := api(t, "POST", "http://"+r.addr+"/api/stages/0", `{"shift": {"frequency_hz": -2000}}`, &res); code != http.StatusOK {
		t.Fatalf("POST: %d", code)
	}
	k := res.ChainInputSample
	waitFor(t, "output after K", func() bool { return r.status(t).SamplesOut > uint64(k/2)+5000 })
	r.signal(syscall.SIGTERM)

	b, err := os.ReadFile(base + ".sigmf-meta")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Captures []map[string]any `json:"captures"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	start := (k + 1) / 2 // the first output at or after chain input K
	if len(m.Captures) != 2 || m.Captures[0]["core:frequency"] != 3000.0 ||
		m.Captures[1]["core:sample_start"] != float64(start) || m.Captures[1]["core:frequency"] != 2000.0 {
		t.Fatalf("captures %v; want a second at output sample %d (chain input %d) at 2000 Hz", m.Captures, start, k)
	}
	y := readRawF32(t, base+".sigmf-data")
	// The phase step between outputs n-1 and n, in cycles.
	step := func(n int64) float64 {
		a, b := complex(float64(y[2*n-2]), float64(y[2*n-1])), complex(float64(y[2*n]), float64(y[2*n+1]))
		return cmplx.Phase(b*cmplx.Conj(a)) / (2 * math.Pi)
	}
	const turn = 1000.0 / 24000 // the new tone's cycles per output sample
	for _, c := range []struct {
		n    int64
		want float64
	}{{start - 1, 0}, {start - 10, 0}, {start + 1, turn}, {start + 10, turn}} {
		if got := step(c.n); math.Abs(got-c.want) > 1e-4 {
			t.Errorf("phase step into output %d (segment at %d): %.5f cycles, want %.5f", c.n, start, got, c.want)
		}
	}
	sigmftest.ValidateFile(t, base+".sigmf-meta")
}

// TestControlRequestsChangeNothing sends 2000 API requests, good and bad,
// on loopback during a run: the output equals a run without them, byte
// for byte, and its live heap and goroutines stay flat.
func TestControlRequestsChangeNothing(t *testing.T) {
	bin := buildBinary(t)
	const stages = "  - fir: {design: {type: lowpass, cutoff_hz: 6000, num_taps: 65}}"
	r := startControlRun(t, bin, stages, "")
	base := "http://" + r.addr
	type req struct {
		method, path, body string
		code               int
	}
	reqs := []req{
		{"GET", "/api/status", "", 200},
		{"GET", "/api/spectrum?point=input", "", 200},
		{"GET", "/api/spectrum?point=output&nfft=256", "", 200},
		{"GET", "/api/spectrum?point=stage-0&nfft=4096", "", 200},
		{"GET", "/api/response?stage=0", "", 200},
		{"GET", "/metrics", "", 200},
		{"GET", "/", "", 200},
		{"GET", "/app.js", "", 200},
		{"GET", "/api/spectrum?point=stage-9", "", 400},
		{"GET", "/api/spectrum?point=output&nfft=1000", "", 400},
		{"GET", "/api/response?stage=x", "", 400},
		{"GET", "/api/nope", "", 404},
		{"POST", "/api/stages/0", `{"fir": {"taps": [1], "decimate": 2}}`, 409},
		{"POST", "/api/stages/3", `{"fir": {"taps": [1]}}`, 409},
		{"POST", "/api/stages/0", `{"shift": {"frequency_hz": 1}}`, 409},
		{"POST", "/api/stages/0", `{"fir": {"taps": [1, "x"]}}`, 400},
		{"POST", "/api/stages/0", `{"fir": {"taps": []}}`, 400},
		{"POST", "/api/stages/0", `{"fir": {"taps_file": "/etc/passwd"}}`, 400},
		{"POST", "/api/stages/0", `{not json`, 400},
		{"POST", "/api/stages/0", `{"fir": {"taps": [1]}}` + strings.Repeat(" ", 2<<20), 413},
		{"POST", "/api/stages/0", `{"fir": {"taps": [1], "decimate": 0}}`, 400},
		{"POST", "/", "", 405},
		{"DELETE", "/api/stages/0", "", 405},
		{"PUT", "/api/stages/0", `{"fir": {"taps": [1]}}`, 405},
	}
	// Warm up (first spectra, the GC's steady state), then measure.
	do := func(i int) error {
		q := reqs[i%len(reqs)]
		req, _ := http.NewRequest(q.method, base+q.path, strings.NewReader(q.body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		// A spectrum may have too few samples yet (409), and reads past
		// the API's rate limit are 429.
		if resp.StatusCode != q.code && !(resp.StatusCode == 409 && strings.Contains(q.path, "spectrum")) &&
			!(resp.StatusCode == 429 && q.method == "GET" && strings.HasPrefix(q.path, "/api/")) {
			return fmt.Errorf("%s %s: %d, want %d", q.method, q.path, resp.StatusCode, q.code)
		}
		return nil
	}
	waitFor(t, "some output", func() bool { return r.status(t).SamplesOut > 20000 })
	for i := range 200 {
		if err := do(i); err != nil {
			t.Fatal(err)
		}
	}
	// 2000 requests from 4 clients at once; the run's memory read after
	// each 500.
	mem := []memSample{readMem(t, base)}
	for chunk := range 4 {
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := chunk*500 + w; i < (chunk+1)*500; i += 4 {
					if err := do(i); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		mem = append(mem, readMem(t, base))
	}
	st := r.status(t)
	r.signal(syscall.SIGTERM)
	t.Logf("after 200 warm-up requests, then after each 500 more: %+v", mem)
	// Flat: what a GC with one request in flight found live, and the
	// goroutines, do not grow with the requests (a leak of 2 KiB or one
	// goroutine per request would add 4 MiB or 2000). RSS follows GC timing
	// (±4 MiB on a 2-core box), so it only has a loose bound.
	first, last := mem[0], mem[len(mem)-1]
	if last.liveHeap-first.liveHeap > 2<<20 || last.goroutines-first.goroutines > 16 || last.rssKiB-first.rssKiB > 32<<10 {
		t.Errorf("memory grew over 2000 requests: %+v", mem)
	}
	if st.Retunes != 0 || st.Drops.CaptureBlocks != 0 {
		t.Errorf("status %+v: a refused request retuned or the run dropped", st)
	}
	y := readRawF32(t, r.out)
	x := referenceRun(t, bin, stages, len(y))
	yb, _ := os.ReadFile(r.out)
	if len(x) != len(y) || !bytes.Equal(yb, float32Bytes(x)) {
		t.Fatalf("output (%d samples) differs from the run without requests (%d)", len(y), len(x))
	}
}

func float32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// memSample is a run's memory as its /metrics and /proc report it.
type memSample struct {
	liveHeap   float64 // go_gc_heap_live_bytes: live at the last GC
	goroutines float64 // go_goroutines
	gcs        float64 // go_gc_duration_seconds_count
	rssKiB     float64 // VmRSS of the whole process
}

// readMem reads a quiet run's memory from its control server's /metrics
// and /proc. Quiet: it first waits out net/http's half-second linger on
// connections closed after an error reply, then sends one request at a
// time until a GC has run, so the live heap holds no other request's
// garbage.
func readMem(t *testing.T, base string) memSample {
	t.Helper()
	time.Sleep(600 * time.Millisecond)
	m := scrapeMem(t, base)
	for i := 0; ; i++ {
		resp, err := http.Get(base + "/api/spectrum?point=output&nfft=4096")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if i%16 == 15 {
			if n := scrapeMem(t, base); n.gcs > m.gcs {
				return n
			}
		}
		if i == 20000 {
			t.Fatal("no GC after 20000 spectrum requests: cannot read the live heap")
		}
	}
}

// scrapeMem reads a run's memory from its control server's /metrics and its
// process's RSS from there too.
func scrapeMem(t *testing.T, base string) memSample {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var m memSample
	for name, v := range map[string]*float64{
		"go_gc_heap_live_bytes":         &m.liveHeap,
		"go_goroutines":                 &m.goroutines,
		"go_gc_duration_seconds_count":  &m.gcs,
		"process_resident_memory_bytes": &m.rssKiB,
	} {
		re := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`)
		f := re.FindSubmatch(body)
		if f == nil {
			t.Fatalf("no %s in /metrics", name)
		}
		if *v, err = strconv.ParseFloat(string(f[1]), 64); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	m.rssKiB /= 1024
	return m
}

// TestControlReload changes the config file under a run with
// watch_config: new taps are applied, a structural change and an invalid
// file are refused with their reason (file:line for the latter) while the
// run goes on, and SIGHUP reloads too.
func TestControlReload(t *testing.T) {
	bin := buildBinary(t)
	r := startControlRun(t, bin, "  - fir: {taps: [1]}", "  watch_config: true\n")
	const watch = "  watch_config: true\n"
	taps := func() string { return fmt.Sprint(r.status(t).Stages[0].Taps) }
	r.rewrite(t, "  - fir: {taps: [0.25, 0.5, 0.25]}", watch)
	waitFor(t, "the watched file's taps", func() bool { return taps() == "[0.25 0.5 0.25]" })

	r.rewrite(t, "  - fir: {taps: [1], decimate: 2}", watch)
	waitFor(t, "the structural change refused", func() bool {
		return strings.Contains(r.stderrText(), "reload refused") && strings.Contains(r.stderrText(), "decimates by 1")
	})
	r.rewrite(t, "  - fir: {taps: [1], tapz: 3}", watch)
	lineRE := regexp.MustCompile(regexp.QuoteMeta(r.cfg) + `:\d+: stages\[0\]\.fir\.tapz`)
	waitFor(t, "the invalid config refused with file:line", func() bool { return lineRE.MatchString(r.stderrText()) })
	if got := taps(); got != "[0.25 0.5 0.25]" {
		t.Fatalf("refused reloads changed the taps to %s", got)
	}

	// SIGHUP reloads the same way (the watcher may beat it to it).
	r.rewrite(t, "  - fir: {taps: [0.5, 0.5]}", watch)
	if err := r.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "SIGHUP's taps", func() bool { return taps() == "[0.5 0.5]" })
	select {
	case <-r.done:
		t.Fatalf("the run ended\n%s", r.stderrText())
	default:
	}
	r.signal(syscall.SIGTERM)
	if r.cmd.ProcessState.ExitCode() != 143 {
		t.Fatalf("exit %d\n%s", r.cmd.ProcessState.ExitCode(), r.stderrText())
	}
}
