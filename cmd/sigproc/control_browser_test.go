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

// browserContext starts the headless browser with flags beside the usual ones
// and returns a context to drive it for at most 90 s; the cleanups stop it.
func browserContext(t *testing.T, browser string, flags ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser),
		chromedp.NoSandbox, // CI runs as root
		chromedp.DisableGPU,
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), append(opts, flags...)...)
	t.Cleanup(cancelA)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancelT)
	return ctx
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
	ctx := browserContext(t, browser, chromedp.WindowSize(1400, 1100))

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

// TestControlPageChannelStrip: a channelizer's output shows on the page
// as a strip of its channels' power, and clicking a channel there shows
// that channel's spectrum: the tone at channel 5's centre plus 1 kHz
// peaks at 1 kHz in channel 5.
func TestControlPageChannelStrip(t *testing.T) {
	browser := chromium(t)
	bin := buildBinary(t)
	r := startControlConfig(t, bin, func(out, control string) string {
		return fmt.Sprintf(`source:
  type: synthetic
  sample_rate: 64000
  complex: true
  paced: true
  signal: sum
  components:
    - {signal: tone, frequency_hz: 21000, amplitude: 0.5}
    - {signal: noise, noise_std: 0.01, seed: 7}
block_size: 512
stages:
  - channelize: {channels: 16, decimate: 8, taps_per_channel: 8}
sink: {type: file, path: %q, format: cf32_le}
%s`, out, control)
	})
	defer r.stopIfRunning()
	ctx := browserContext(t, browser, chromedp.WindowSize(1400, 1100))
	// Panel b shows the output: 16 channels, a strip above the spectrum.
	if err := chromedp.Do(ctx, chromedp.Navigate("http://"+r.addr+"/"), chromedp.WaitVisible(`#strip-b[data-channels="16"]`)); err != nil {
		t.Fatalf("no channel strip: %v\n%s", err, r.stderrText())
	}
	// Channel 5 of 16 is the sixth sixteenth of the strip.
	xy, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => { const b = document.getElementById("strip-b").getBoundingClientRect(); return [b.left + b.width * 5.5 / 16, b.top + b.height / 2]; })()`))
	if err != nil || len(xy) != 2 {
		t.Fatalf("the strip's place: %v %v", xy, err)
	}
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(xy[0], xy[1]), chromedp.WaitVisible(`#peak-b[data-channel="5"]`)); err != nil {
		t.Fatalf("click channel 5: %v", err)
	}
	peak, err := chromedp.Run(ctx, chromedp.AttributeValue(`#peak-b`, "data-peak-hz"))
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := strconv.ParseFloat(peak.Value, 64); math.Abs(f-1000) > 8000.0/256 {
		t.Errorf("channel 5's spectrum peaks at %s Hz, want 1000", peak.Value)
	}
}
