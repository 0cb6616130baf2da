package control

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/backend/cpu"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// TestSpectrumOfChannels: a channelizer's output point answers with its
// channels' power strip, loudest where the tone is, and the spectrum of
// the channel asked for; a channel out of range is refused.
func TestSpectrumOfChannels(t *testing.T) {
	const rate, m, tone = 64000, 16, 3 // the tone at channel 3's centre, 12 kHz
	proto, err := filter.BankPrototype(m, 8)
	if err != nil {
		t.Fatal(err)
	}
	c := stage.Chain{SampleRate: rate, Complex: true, Stages: []stage.Stage{stage.NewChannelize(proto, m, m/2)}}
	be, err := cpu.New(c, 1024)
	if err != nil {
		t.Fatal(err)
	}
	ctl := New(Options{Backend: be, Chain: c, BlockSize: 1024, Slots: 4, Watch: true})
	srv := httptest.NewServer(ctl.Handler(nil))
	defer srv.Close()
	x := make([]float32, 2*1024*64)
	for i := range len(x) / 2 {
		// The tone, 100 Hz above the channel's centre so that its
		// spectrum's peak is not at 0.
		s, co := math.Sincos(2 * math.Pi * (tone*rate/m + 100) * float64(i) / rate)
		x[2*i], x[2*i+1] = float32(co), float32(s)
	}
	_, err = pipeline.Run(context.Background(), &sliceSource{x: x}, be, discard{}, pipeline.Config{BlockSize: 1024, Complex: true, OutChannels: m, Slots: 4}, ctl.Instrument(pipeline.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	get := func(q string) (int, spectrumAnswer) { return getSpectrum(t, srv.URL, q) }
	code, a := get("point=output")
	if code != http.StatusOK || a.Channels != m || len(a.ChannelPowerDB) != m || a.RateHz != rate/(m/2) {
		t.Fatalf("output: %d, %d channels, %d powers, rate %g", code, a.Channels, len(a.ChannelPowerDB), a.RateHz)
	}
	if k := slices.Index(a.ChannelPowerDB, slices.Max(a.ChannelPowerDB)); k != tone || a.ChannelPowerDB[tone] < -1 || a.ChannelPowerDB[tone+5] > -60 {
		t.Errorf("strip %v: want channel %d loudest at 0 dB, the far ones below -60 dB", a.ChannelPowerDB, tone)
	}
	if code, a = get("point=output&channel=3&nfft=256"); code != http.StatusOK || a.Channel != 3 || math.Abs(a.PeakHz-100) > 20 {
		t.Errorf("channel 3: %d, channel %d, peak %g Hz; want 100 Hz", code, a.Channel, a.PeakHz)
	}
	if code, a = get("point=input"); code != http.StatusOK || a.Channels != 1 || a.ChannelPowerDB != nil {
		t.Errorf("input: %d, %d channels, strip %v", code, a.Channels, a.ChannelPowerDB)
	}
	if code, _ = get("point=output&channel=16"); code != http.StatusBadRequest {
		t.Errorf("channel 16 of 16: %d, want 400", code)
	}
}

// getSpectrum asks the server at url for /api/spectrum?q.
func getSpectrum(t *testing.T, url, q string) (int, spectrumAnswer) {
	t.Helper()
	resp, err := http.Get(url + "/api/spectrum?" + q)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a spectrumAnswer
	json.NewDecoder(resp.Body).Decode(&a)
	return resp.StatusCode, a
}

// TestChannelAnswersBounded: the cache keeps at most maxChannelAnswers
// answers of channels other than 0, however many channels are asked for.
func TestChannelAnswersBounded(t *testing.T) {
	c := New(Options{Chain: stage.FIR(1000, false, []float32{1})})
	c.entry(renderKey{kind: "spectrum", name: "output"})
	for ch := 1; ch <= 4095; ch++ {
		c.entry(renderKey{kind: "spectrum", name: "output", b: 1024, c: ch})
		if n := len(c.cache); n > maxChannelAnswers+1 {
			t.Fatalf("after channel %d: %d answers cached", ch, n)
		}
	}
	if _, ok := c.cache[renderKey{kind: "spectrum", name: "output"}]; !ok {
		t.Error("channel 0's answer was dropped")
	}
}

// TestPointsOfChannels: a stage that runs on each of several channels
// apart (after a channelizer's selection) is a spectrum point like any
// other, of the channels it outputs.
func TestPointsOfChannels(t *testing.T) {
	c := stage.Chain{SampleRate: 64000, Complex: true, Stages: []stage.Stage{
		stage.NewShift(10), stage.NewChannelize([]float32{1}, 8, 8), stage.NewSelect(1, 2), stage.NewShift(5), stage.NewFIR([]float32{1}, 1)}}
	be, err := cpu.New(c, 512)
	if err != nil {
		t.Fatal(err)
	}
	ctl := New(Options{Backend: be, Chain: c, BlockSize: 512, Slots: 4, Watch: true})
	if got := fmt.Sprint(ctl.points()); got != "[input stage-0 stage-1 stage-2 stage-3 stage-4 output]" {
		t.Errorf("points %s", got)
	}
	srv := httptest.NewServer(ctl.Handler(nil))
	defer srv.Close()
	x := make([]float32, 2*512*32)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)))
	}
	if _, err := pipeline.Run(context.Background(), &sliceSource{x: x}, be, discard{}, pipeline.Config{BlockSize: 512, Complex: true, OutChannels: 2, Slots: 4}, ctl.Instrument(pipeline.Options{})); err != nil {
		t.Fatal(err)
	}
	for point, chans := range map[string]int{"input": 1, "stage-1": 8, "stage-2": 2, "stage-3": 2, "output": 2} {
		if code, a := getSpectrum(t, srv.URL, fmt.Sprintf("nfft=64&channel=%d&point=%s", chans-1, point)); code != http.StatusOK || a.Channel != chans-1 || a.Channels != chans || (chans > 1 && len(a.ChannelPowerDB) != chans) {
			t.Errorf("%s: %d, %d channels (%d powers), want %d", point, code, a.Channels, len(a.ChannelPowerDB), chans)
		}
	}
}

// serveChain serves a Control of c on the CPU backend, 256-sample blocks,
// until the test ends.
func serveChain(t *testing.T, c stage.Chain) (*Control, *httptest.Server) {
	t.Helper()
	be, err := cpu.New(c, 256)
	if err != nil {
		t.Fatal(err)
	}
	ctl := New(Options{Backend: be, Chain: c, BlockSize: 256, Slots: 4})
	srv := httptest.NewServer(ctl.Handler(nil))
	t.Cleanup(srv.Close)
	return ctl, srv
}

// TestRetuneChannelizer: new taps for a channelizer go through the API
// (its channels restated or left out, its decimation kept); other
// channels or another decimation are a change of structure (409).
func TestRetuneChannelizer(t *testing.T) {
	ctl, srv := serveChain(t, stage.Chain{SampleRate: 64000, Complex: true, Stages: []stage.Stage{stage.NewChannelize([]float32{1, 1}, 16, 8)}})
	code, v := post(t, srv.URL+"/api/stages/0", `{"channelize": {"channels": 16, "taps": [0.5, 1, 0.5]}}`)
	if st := ctl.Chain().Stages[0]; code != http.StatusOK || len(st.Taps) != 3 || st.Decimate != 8 || st.Bank != 16 {
		t.Errorf("new taps: %d %v; stage now %+v", code, v, st)
	}
	// Channels left out: the running stage's, and its default prototype
	// (taps_per_channel × channels taps) is designed for them.
	code, v = post(t, srv.URL+"/api/stages/0", `{"channelize": {"taps_per_channel": 4}}`)
	if st := ctl.Chain().Stages[0]; code != http.StatusOK || len(st.Taps) != 4*16 || st.Decimate != 8 || st.Bank != 16 {
		t.Errorf("default prototype, channels left out: %d %v; stage now %d taps, %+v", code, v, len(st.Taps), st.Bank)
	}
	for _, body := range []string{`{"channelize": {"channels": 32, "taps": [1]}}`, `{"channelize": {"channels": 16, "decimate": 16, "taps": [1]}}`} {
		if code, v := post(t, srv.URL+"/api/stages/0", body); code != http.StatusConflict {
			t.Errorf("%s: %d %v, want 409", body, code, v)
		}
	}
}

// TestRetuneSelect: a select's channels are read from a body as in a
// file and checked against the stream it selects from; they cannot
// change during a run (409), and a channel the stream lacks is a bad
// request (400).
func TestRetuneSelect(t *testing.T) {
	_, srv := serveChain(t, stage.Chain{SampleRate: 64000, Complex: true, Stages: []stage.Stage{stage.NewChannelize([]float32{1, 1}, 16, 8), stage.NewSelect(3, 12, 0)}})
	for _, tt := range []struct {
		body string
		code int
		frag string
	}{
		{`{"select": {"channels": [3, 12, 1]}}`, http.StatusConflict, "keeps channels [3 12 0]; a retune cannot change them"},
		{`{"select": {"channels": [3, 56, 0]}}`, http.StatusBadRequest, "channel 56 is not one of the stream's 16 channels (0..15)"},
		{`{"select": {"channels": [3.5]}}`, http.StatusBadRequest, "select.channels[0]: must be an integer, got 3.5"},
	} {
		code, v := post(t, srv.URL+"/api/stages/1", tt.body)
		if code != tt.code || !strings.Contains(fmt.Sprint(v["error"]), tt.frag) {
			t.Errorf("%s: %d %v, want %d %q", tt.body, code, v, tt.code, tt.frag)
		}
	}
}
