//go:build unix

package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium returns Debian's chromium (or another Chrome) to drive
// headless. Without one the test skips, except in CI (CI=true), where it
// fails: make ci installs it (make chromium-deps).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI: no chromium for the control page's browser test (make chromium-deps installs Debian's chromium)")
	}
	t.Skip("no chromium (apt-get install chromium); CI=true makes this a failure")
	return ""
}

// TestControlPageInBrowser drives the control page in headless chromium
// against a running `sigproc run`: the input spectrum peaks at the
// source's tone, the form applies new taps and /api/status shows them.
// The screenshot goes to docs/img/control-page.png under CI (the README
// shows it), else to a temporary directory.
func TestControlPageInBrowser(t *testing.T) {
	browser := chromium(t)
	bin := buildBinary(t)
	r := startControlRun(t, bin, "  - fir: {design: {type: lowpass, cutoff_hz: 6000, num_taps: 65}, decimate: 2}", "")
	defer r.stopIfRunning()

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser),
		chromedp.NoSandbox, // CI runs as root
		chromedp.DisableGPU,
		chromedp.WindowSize(1400, 1100),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	defer cancelT()

	err := chromedp.Do(ctx,
		chromedp.Navigate("http://"+r.addr+"/"),
		// The first spectrum panel shows the input once it has samples.
		chromedp.WaitVisible(`#peak-a[data-peak-hz]`),
	)
	if err != nil {
		t.Fatalf("load the page: %v\n%s", err, r.stderrText())
	}
	peakAttr, err := chromedp.Run(ctx, chromedp.AttributeValue(`#peak-a`, "data-peak-hz"))
	if err != nil {
		t.Fatal(err)
	}
	pointAttr, err := chromedp.Run(ctx, chromedp.AttributeValue(`#peak-a`, "data-point"))
	if err != nil {
		t.Fatal(err)
	}
	peak, point := peakAttr.Value, pointAttr.Value
	f, _ := strconv.ParseFloat(peak, 64)
	if point != "input" || math.Abs(f-3000) > 48000.0/1024 {
		t.Fatalf("page shows the %s spectrum peaking at %s Hz, want the input at 3000 Hz", point, peak)
	}

	// Edit stage 0's taps in the form and apply them.
	err = chromedp.Do(ctx,
		chromedp.WaitVisible(`#fields-fir`),
		chromedp.SetValue(`#stage-index`, "0"),
		chromedp.SetValue(`#taps`, "0.125, 0.25, 0.25, 0.25, 0.125"),
		chromedp.Click(`#apply`),
		chromedp.WaitVisible(`#result[data-applied-at]`),
	)
	if err != nil {
		t.Fatalf("apply through the form: %v", err)
	}
	result, err := chromedp.Run(ctx, chromedp.Text(`#result`))
	if err != nil {
		t.Fatal(err)
	}
	st := r.status(t)
	if got := fmt.Sprint(st.Stages[0].Taps); got != "[0.125 0.25 0.25 0.25 0.125]" || st.Retunes != 1 {
		t.Fatalf("after the form: /api/status taps %s, retunes %d (page said %q)", got, st.Retunes, result)
	}
	// Let a few more frames fill the waterfall and the latency plot,
	// then keep a picture of the page.
	if err := chromedp.Do(ctx, chromedp.Sleep(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dir := t.TempDir()
	if os.Getenv("CI") == "true" || os.Getenv("SIGPROC_SCREENSHOT") != "" {
		dir = filepath.Join("..", "..", "docs", "img")
	}
	shot := filepath.Join(dir, "control-page.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("input peak %s Hz; form: %s; screenshot %s (%d bytes)", peak, result, shot, len(png))
}
