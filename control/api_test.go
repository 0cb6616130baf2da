package control

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/backend/cpu"
	"github.com/sigproc/sigproc/backend/cuda"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// refuser is a backend that refuses every retune as a cuda backend does.
type refuser struct {
	pipeline.Backend
	chain stage.Chain
}

func (r *refuser) Chain() stage.Chain { return r.chain }
func (r *refuser) Retune(...stage.Retune) ([]stage.Retune, error) {
	return nil, cuda.ErrRetune
}
func (r *refuser) RetuneRefusal() error { return cuda.ErrRetune }

func post(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	b, _ := io.ReadAll(resp.Body)
	json.Unmarshal(b, &v)
	return resp.StatusCode, v
}

// TestAPIRefusedRetune: a backend that cannot retune answers 409 with its
// reason, and the status says so before anyone tries.
func TestAPIRefusedRetune(t *testing.T) {
	c := stage.FIR(48000, false, []float32{0.5, 0.5})
	be, err := cpu.New(c, 64)
	if err != nil {
		t.Fatal(err)
	}
	ctl := New(Options{Backend: &refuser{Backend: be, chain: c}, Chain: c, BlockSize: 64, Slots: 4, Watch: true})
	srv := httptest.NewServer(ctl.Handler(nil))
	defer srv.Close()
	code, v := post(t, srv.URL+"/api/stages/0", `{"fir": {"taps": [1]}}`)
	if code != http.StatusConflict || !strings.Contains(fmt.Sprint(v["error"]), "not yet supported on cuda") {
		t.Errorf("POST: %d %v, want 409 not yet supported on cuda", code, v)
	}
	st := ctl.Status()
	if st.Retunable || !strings.Contains(st.RetuneNote, "cuda") {
		t.Errorf("status retunable %v, note %q", st.Retunable, st.RetuneNote)
	}
	// Not a Watcher: only the output's spectrum.
	if got := fmt.Sprint(st.Points); got != "[output]" {
		t.Errorf("points %s", got)
	}
}

// TestAPIRetuneInProcess runs a CPU chain through the pipeline with the
// control's hooks, and retunes it through the handler.
func TestAPIRetuneInProcess(t *testing.T) {
	c := stage.Chain{SampleRate: 48000, Stages: []stage.Stage{{Kind: stage.KindShift, FrequencyHz: 1000}, {Kind: stage.KindFIR, Taps: []float32{1}, Decimate: 2}}}
	be, err := cpu.New(c, 256)
	if err != nil {
		t.Fatal(err)
	}
	ctl := New(Options{Backend: be, Chain: c, BlockSize: 256, Slots: 4, Watch: true})
	srv := httptest.NewServer(ctl.Handler(nil))
	defer srv.Close()
	x := make([]float32, 256*40)
	for i := range x {
		x[i] = float32(math.Cos(2 * math.Pi * 6000 * float64(i) / 48000))
	}
	src := &sliceSource{x: x}
	_, err = pipeline.Run(context.Background(), src, be, discard{}, pipeline.Config{BlockSize: 256, OutComplex: true, Slots: 4}, ctl.Instrument(pipeline.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		PeakHz float64 `json:"peak_hz"`
		RateHz float64 `json:"rate_hz"`
	}
	// The real 6 kHz cosine shifted by +1 kHz is at 7 and −5 kHz, equally.
	for point, want := range map[string]float64{"input": 6000, "stage-0": 7000, "output": 7000} {
		resp, err := http.Get(srv.URL + "/api/spectrum?point=" + point)
		if err != nil {
			t.Fatal(err)
		}
		json.NewDecoder(resp.Body).Decode(&spec)
		resp.Body.Close()
		if math.Abs(spec.PeakHz-want) > spec.RateHz/1024 && math.Abs(spec.PeakHz-(want-12000)) > spec.RateHz/1024 {
			t.Errorf("%s: peak %g Hz, want %g", point, spec.PeakHz, want)
		}
	}
	code, v := post(t, srv.URL+"/api/stages/0", `{"shift": {"frequency_hz": -2000}}`)
	if code != http.StatusOK || v["applied_at_sample"] != float64(len(x)) {
		t.Errorf("POST: %d %v, want applied at %d (the run has ended)", code, v, len(x))
	}
	if code, _ := post(t, srv.URL+"/api/stages/1", `{"fir": {"taps": [1], "decimate": 3}}`); code != http.StatusConflict {
		t.Errorf("structural: %d", code)
	}
	if code, _ := post(t, srv.URL+"/api/stages/0", `{"shift": {"frequency_hz": 30000}}`); code != http.StatusBadRequest {
		t.Errorf("above Nyquist: %d", code)
	}
	if f := *ctl.Status().Stages[0].FrequencyHz; f != -2000 {
		t.Errorf("status frequency %g", f)
	}
}

type sliceSource struct {
	x   []float32
	pos int
}

func (s *sliceSource) Read(_ context.Context, dst []float32) (int, error) {
	n := copy(dst, s.x[s.pos:])
	s.pos += n
	if n < len(dst) {
		return n, io.EOF
	}
	return n, nil
}

type discard struct{}

func (discard) Write([]float32) error { return nil }

func ExampleWelch() {
	const rate = 48000
	x := make([]float32, 4096)
	for i := range x {
		x[i] = float32(math.Sin(2 * math.Pi * 3000 * float64(i) / rate))
	}
	s, _ := Welch(x, false, rate, 1024)
	fmt.Println(s.Peak(), s.NFFT, s.Segments, len(s.FreqHz))
	// Output: 3000 1024 7 513
}

// TestStatusRingDepth: the ring's fill is counted against the depth the
// run chose (pipeline.Stats.RingSlots, which may be below the slots
// Options gave: a ring sized for views whose blocks were read), and
// against Options' slots before the first stats arrive.
func TestStatusRingDepth(t *testing.T) {
	chain := stage.FIR(1e6, false, []float32{1})
	be, err := cpu.New(chain, 1024)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		stats     *pipeline.Stats
		slots     int
		fill      float64
		fillBlock float64
	}{
		{"no stats yet", nil, 64, 0, 0},
		{"the depth chosen", &pipeline.Stats{SamplesIn: 3 * 1024, RingSlots: 4}, 4, 0.75, 3},
		{"capped at the depth", &pipeline.Stats{SamplesIn: 9 * 1024, RingSlots: 4}, 4, 1, 4},
		{"stats without a depth", &pipeline.Stats{SamplesIn: 3 * 1024}, 64, 3.0 / 64, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Options{Backend: be, Chain: chain, BlockSize: 1024, Slots: 64})
			if tt.stats != nil {
				c.Update(*tt.stats)
			}
			r := c.Status().Ring
			if r.Slots != tt.slots || r.Fill != tt.fill || r.FillBlocks != tt.fillBlock {
				t.Errorf("ring %+v, want %d slots, fill %g (%g blocks)", r, tt.slots, tt.fill, tt.fillBlock)
			}
		})
	}
}
