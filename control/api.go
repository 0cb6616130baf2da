package control

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sigproc/sigproc/config"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/stage"
)

//go:embed web
var webFS embed.FS

// bodyTimeout is how long a POST's body may take to arrive once its
// headers have.
const bodyTimeout = 5 * time.Second

// Status is GET /api/status.
type Status struct {
	Backend         string        `json:"backend"`
	Transport       string        `json:"transport,omitempty"`
	UptimeS         float64       `json:"uptime_s"`
	SamplesIn       uint64        `json:"samples_in"`
	SamplesFiltered uint64        `json:"samples_filtered"`
	SamplesOut      uint64        `json:"samples_out"`
	Drops           Drops         `json:"drops"`
	Ring            Ring          `json:"ring"`
	Latency         Latency       `json:"latency_us"`
	InputRate       float64       `json:"input_rate"`
	OutputRate      float64       `json:"output_rate"`
	Complex         bool          `json:"complex"`
	Stages          []StageStatus `json:"stages"`
	// Retunable says whether the backend takes retunes; RetuneNote says
	// why not when it does not.
	Retunable  bool           `json:"retunable"`
	RetuneNote string         `json:"retune_note,omitempty"`
	Retunes    uint64         `json:"retunes"`
	LastRetune []RetuneResult `json:"last_retune,omitempty"`
	// Points are the spectrum points available (input, stage-N, output).
	Points []string `json:"points"`
}

// Drops are the losses so far: blocks and samples dropped at capture
// (ring full), at the filter (counted when the run ends), and sequence
// gaps.
type Drops struct {
	CaptureBlocks  uint64 `json:"capture_blocks"`
	CaptureSamples uint64 `json:"capture_samples"`
	FilterBlocks   uint64 `json:"filter_blocks"`
	FilterSamples  uint64 `json:"filter_samples"`
	Gaps           uint64 `json:"gaps"`
}

// Ring is the ring's fill: blocks captured and not yet filtered.
type Ring struct {
	FillBlocks float64 `json:"fill_blocks"`
	Slots      int     `json:"slots"`
	Fill       float64 `json:"fill"` // FillBlocks / Slots
}

// Latency is the block latency (capture to the filtered block seen by the
// host) over the most recent blocks, in µs.
type Latency struct {
	P50    float64 `json:"p50"`
	P99    float64 `json:"p99"`
	Blocks int     `json:"blocks"`
}

// StageStatus is one stage as it runs now, in the config's terms.
type StageStatus struct {
	Index       int       `json:"index"`
	Kind        string    `json:"kind"`
	RateIn      float64   `json:"rate_in"`
	RateOut     float64   `json:"rate_out"`
	FrequencyHz *float64  `json:"frequency_hz,omitempty"`
	Taps        []float32 `json:"taps,omitempty"`
	NumTaps     int       `json:"num_taps,omitempty"`
	Decimate    int       `json:"decimate,omitempty"`
	Channels    int       `json:"channels,omitempty"` // a channelizer's M
	Keep        []int     `json:"keep,omitempty"`     // the channels a selection keeps
	Up          int       `json:"up,omitempty"`
	Down        int       `json:"down,omitempty"`
	Method      string    `json:"method,omitempty"`
}

// RetuneResult is the answer to POST /api/stages/N.
type RetuneResult struct {
	// AppliedAtSample is K: the index, in the stage's input stream, of the
	// first sample processed with the new parameters.
	AppliedAtSample int64 `json:"applied_at_sample"`
	// ChainInputSample is the same boundary in the chain's input (the
	// samples the backend took from the ring).
	ChainInputSample int64       `json:"chain_input_sample"`
	Stage            StageStatus `json:"stage"`
}

func stageStatuses(c stage.Chain) []StageStatus {
	var out []StageStatus
	rate := c.SampleRate
	for i, s := range c.Stages {
		st := StageStatus{Index: i, Kind: string(s.Kind), RateIn: rate, RateOut: s.Rate(rate)}
		ps := s.Def().Params() // the parameters of its kind, and no others
		if ps&stage.ParamFrequency != 0 {
			f := s.FrequencyHz
			st.FrequencyHz = &f
		}
		if ps&stage.ParamTaps != 0 {
			st.Taps, st.NumTaps = s.Taps, len(s.Taps)
		}
		if ps&stage.ParamDecimate != 0 {
			st.Decimate = s.Decimate
		}
		if ps&stage.ParamBank != 0 {
			st.Channels = s.Bank
		}
		if ps&stage.ParamKeep != 0 {
			st.Keep = s.Keep
		}
		if ps&stage.ParamFactors != 0 {
			st.Up, st.Down = s.Up, s.Down
		}
		if ps&stage.ParamMethod != 0 {
			st.Method = methodOf(s)
		}
		out = append(out, st)
		rate = st.RateOut
	}
	return out
}

// Status returns the run's status now.
func (c *Control) Status() Status {
	var st Status
	slots := c.o.Slots
	if p := c.stats.Load(); p != nil {
		s := *p
		if s.RingSlots > 0 {
			slots = s.RingSlots // the depth Run chose
		}
		st.SamplesIn, st.SamplesFiltered, st.SamplesOut = s.SamplesIn, s.SamplesFiltered, s.SamplesWritten
		st.Drops = Drops{s.DroppedBlocks, s.DroppedSamples, s.DroppedFilterBlocks, s.DroppedFilterSamples, s.Gaps}
		if c.o.BlockSize > 0 && s.SamplesIn >= s.DroppedSamples+s.SamplesFiltered {
			// Read but neither dropped nor filtered: in the ring (or being
			// read or filtered).
			fill := float64(s.SamplesIn-s.DroppedSamples-s.SamplesFiltered) / float64(c.o.BlockSize)
			st.Ring.FillBlocks = math.Min(fill, float64(slots))
		}
	}
	st.Ring.Slots = slots
	if slots > 0 {
		st.Ring.Fill = st.Ring.FillBlocks / float64(slots)
	}
	st.Backend, st.Transport = backendParts(c.o.Backend.Name())
	st.UptimeS = time.Since(c.start).Seconds()
	st.Latency.P50, st.Latency.P99, st.Latency.Blocks = c.lat.percentiles()
	ch := c.Chain()
	st.InputRate, st.OutputRate, st.Complex = ch.SampleRate, ch.OutRate(), ch.Complex
	st.Stages = stageStatuses(ch)
	st.Retunable = c.retuner != nil
	if st.Retunable {
		// Ask the backend with a no-op: a backend that refuses every
		// retune (cuda, for now) says so here.
		if len(ch.Stages) > 0 {
			if _, err := stage.CheckRetune(ch, 0, ch.Stages[0]); err == nil {
				if note := c.refusal(); note != "" {
					st.Retunable, st.RetuneNote = false, note
				}
			}
		}
	} else {
		st.RetuneNote = "the " + c.o.Backend.Name() + " backend cannot retune"
	}
	c.mu.Lock()
	st.Retunes = c.retunes
	for _, r := range c.last {
		st.LastRetune = append(st.LastRetune, c.result(r))
	}
	c.mu.Unlock()
	st.Points = c.points()
	return st
}

// refusal is the backend's standing refusal of retunes, if any.
func (c *Control) refusal() string {
	if r, ok := c.retuner.(interface{ RetuneRefusal() error }); ok {
		if err := r.RetuneRefusal(); err != nil {
			return err.Error()
		}
	}
	return ""
}

func (c *Control) result(r stage.Retune) RetuneResult {
	ch := c.Chain()
	st := stageStatuses(ch.With(r.Index, r.Stage))[r.Index]
	return RetuneResult{AppliedAtSample: r.At, ChainInputSample: r.ChainAt, Stage: st}
}

// points lists the spectrum points that have a source of samples.
func (c *Control) points() []string {
	var p []string
	if c.watched {
		p = append(p, "input")
		for i := range c.o.Chain.Stages {
			p = append(p, "stage-"+strconv.Itoa(i))
		}
	}
	return append(p, "output")
}

// Handler serves the page, the API and, when metrics is not nil, /metrics,
// behind the guards of guard.go: a Host that is not an IP literal,
// localhost or an allowed name gets 421; writes need the server's own
// origin (when the request names one), the token (when there is one) and
// a JSON body; reads beyond readRate a second get 429.
func (c *Control) Handler(metrics http.Handler) http.Handler {
	mux := http.NewServeMux()
	sub, _ := fs.Sub(webFS, "web")
	files := http.FileServerFS(sub)
	mux.Handle("/", c.page(files))
	mux.HandleFunc("/api/status", c.limited(func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, c.Status()) }))
	mux.HandleFunc("/api/spectrum", c.limited(c.spectrum))
	mux.HandleFunc("/api/response", c.limited(c.response))
	mux.HandleFunc("/api/stages/{n}", c.write(c.postStage))
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		fail(w, http.StatusNotFound, "no such API endpoint %s %s (see /api/status, /api/spectrum, /api/response, POST /api/stages/N)", r.Method, r.URL.Path)
	})
	if metrics != nil {
		mux.Handle("/metrics", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if allow(w, r, http.MethodGet) {
				metrics.ServeHTTP(w, r)
			}
		}))
	}
	return c.guard(mux)
}

// page serves the page's files with headers that keep it to this server
// (no fetches or scripts from anywhere else, no framing), and takes the
// token from the URL the log printed.
func (c *Control) page(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			fail(w, http.StatusMethodNotAllowed, "%s %s: the page is read-only (POST /api/stages/N retunes)", r.Method, r.URL.Path)
			return
		}
		if c.login(w, r) {
			return
		}
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "same-origin")
		h.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, code int, format string, args ...any) {
	writeJSON(w, code, map[string]string{"error": fmt.Sprintf(format, args...)})
}

// point parses input, output or stage-N into a scope index.
func (c *Control) point(name string) (int, error) {
	switch {
	case name == "output" || name == "":
		return len(c.scopes) - 1, nil
	case name == "input":
		return 0, nil
	case strings.HasPrefix(name, "stage-"):
		n, err := strconv.Atoi(strings.TrimPrefix(name, "stage-"))
		if err != nil || n < 0 || n >= len(c.scopes)-1 {
			return 0, fmt.Errorf("no stage %q: the chain has stages 0..%d", strings.TrimPrefix(name, "stage-"), len(c.scopes)-2)
		}
		return n + 1, nil
	}
	return 0, fmt.Errorf("unknown point %q (want input, output or stage-N)", name)
}

func (c *Control) spectrum(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name := q.Get("point")
	i, err := c.point(name)
	if err != nil {
		fail(w, http.StatusBadRequest, "point: %v", err)
		return
	}
	if !c.watched && i != len(c.scopes)-1 {
		fail(w, http.StatusNotFound, "point %s: the %s backend shows only the output", name, c.o.Backend.Name())
		return
	}
	nfft := 1024
	if v := q.Get("nfft"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < minNFFT || n > 8192 || n&(n-1) != 0 {
			fail(w, http.StatusBadRequest, "nfft: want a power of two in %d..8192, got %q", minNFFT, v)
			return
		}
		nfft = n
	}
	// The name as given, made canonical ("" is output, stage-01 is
	// stage-1), so that the cache holds one answer per point, nfft and
	// channel (entry bounds the channels').
	switch {
	case name == "":
		name = "output"
	case strings.HasPrefix(name, "stage-"):
		name = "stage-" + strconv.Itoa(i-1)
	}
	sc := c.scopes[i]
	ch := 0
	if v := q.Get("channel"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n >= sc.chans {
			if sc.chans == 1 {
				fail(w, http.StatusBadRequest, "channel: want 0 (point %s has one channel), got %q", name, v)
				return
			}
			fail(w, http.StatusBadRequest, "channel: want 0..%d (point %s has %d channels), got %q", sc.chans-1, name, sc.chans, v)
			return
		}
		ch = n
	}
	c.serveCached(w, r, renderKey{kind: "spectrum", name: name, a: i, b: nfft, c: ch}, sc.total.Load(), spectrumTTL, func() (int, any) {
		frames := sc.snapshot()
		spec, err := Welch(channelOf(frames, sc.chans, sc.ch/sc.chans, ch), sc.complex, sc.rate, nfft)
		if errors.Is(err, errFewSamples) {
			return http.StatusConflict, map[string]string{"error": fmt.Sprintf("point %s: not enough samples yet", name)}
		}
		out := spectrumAnswer{Point: name, RateHz: sc.rate, Complex: sc.complex, PeakHz: spec.Peak(), Channels: sc.chans, Channel: ch, Spectrum: spec}
		if sc.chans > 1 {
			out.ChannelPowerDB = channelPower(frames, sc.chans, sc.ch/sc.chans)
		}
		return http.StatusOK, out
	})
}

// spectrumAnswer is GET /api/spectrum's answer.
type spectrumAnswer struct {
	Point   string  `json:"point"`
	RateHz  float64 `json:"rate_hz"`
	Complex bool    `json:"complex"`
	PeakHz  float64 `json:"peak_hz"`
	// Channels is the point's channels per frame; Channel the one the
	// spectrum is of.
	Channels int `json:"channels"`
	Channel  int `json:"channel"`
	// ChannelPowerDB is each channel's mean power (dB of |x|², −300 for
	// none) over the samples held, for a point of several channels: a
	// channelizer's output as a strip.
	ChannelPowerDB []float64 `json:"channel_power_db,omitempty"`
	Spectrum
}

// channelOf returns channel k's values of frames of chans channels, v
// values (1 or 2) a sample.
func channelOf(frames []float32, chans, v, k int) []float32 {
	if chans == 1 {
		return frames
	}
	n := len(frames) / (chans * v)
	out := make([]float32, 0, n*v)
	for f := range n {
		out = append(out, frames[(f*chans+k)*v:(f*chans+k+1)*v]...)
	}
	return out
}

// channelPower is each channel's mean |x|² in dB over frames of chans
// channels, v values a sample (NaN and Inf samples left out), −300 where
// there is none.
func channelPower(frames []float32, chans, v int) []float64 {
	sum, cnt := make([]float64, chans), make([]int, chans)
	for i := 0; i+v <= len(frames); i += v {
		var p float64
		for _, x := range frames[i : i+v] {
			p += float64(x) * float64(x)
		}
		if k := (i / v) % chans; !math.IsNaN(p) && !math.IsInf(p, 0) {
			sum[k] += p
			cnt[k]++
		}
	}
	db := make([]float64, chans)
	for k := range db {
		db[k] = -300
		if cnt[k] > 0 && sum[k] > 0 {
			db[k] = max(-300, 10*math.Log10(sum[k]/float64(cnt[k])))
		}
	}
	return db
}

// response is |H(f)| of a fir or resample stage's current taps, in dB,
// from 0 to half that stage's input rate (the upsampled rate for a
// resampler).
func (c *Control) response(w http.ResponseWriter, r *http.Request) {
	version := c.version.Load() // before the chain: a retune in between only recomputes
	ch := c.Chain()
	n, err := strconv.Atoi(r.URL.Query().Get("stage"))
	if err != nil || n < 0 || n >= len(ch.Stages) {
		fail(w, http.StatusBadRequest, "stage: want 0..%d, got %q", len(ch.Stages)-1, r.URL.Query().Get("stage"))
		return
	}
	s := ch.Stages[n]
	if s.Def().Params()&stage.ParamTaps == 0 {
		fail(w, http.StatusNotFound, "stage %d is a %s: it has no taps", n, s.Kind)
		return
	}
	rate, _ := s.Def().Design(s, stageStatuses(ch)[n].RateIn)
	c.serveCached(w, r, renderKey{kind: "response", a: n}, version, 0, func() (int, any) {
		const points = 512
		mag := filter.FrequencyResponse(s.Taps, points)
		out := Spectrum{FreqHz: make([]float64, points), DB: make([]float64, points)}
		for k, m := range mag {
			out.FreqHz[k] = rate / 2 * float64(k) / float64(points-1)
			out.DB[k] = db(m * m)
		}
		return http.StatusOK, struct {
			Stage  int     `json:"stage"`
			RateHz float64 `json:"rate_hz"`
			Spectrum
		}{n, rate, out}
	})
}

func (c *Control) postStage(w http.ResponseWriter, r *http.Request) {
	ch := c.Chain()
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil {
		fail(w, http.StatusNotFound, "stage %q: want a stage number 0..%d", r.PathValue("n"), len(ch.Stages)-1)
		return
	}
	if n < 0 || n >= len(ch.Stages) {
		fail(w, http.StatusConflict, "stage %d does not exist (the chain is %s); adding stages needs a restart", n, ch)
		return
	}
	if r.ContentLength > config.MaxStageBodySize {
		fail(w, http.StatusRequestEntityTooLarge, "body larger than %d bytes", config.MaxStageBodySize)
		return
	}
	// At most maxBodies decoded at once, each streamed (its memory is the
	// taps), and read within bodyTimeout.
	select {
	case c.bodies <- struct{}{}:
	case <-r.Context().Done():
		return
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyTimeout))
	doc, err := config.DecodeStage(http.MaxBytesReader(w, r.Body, config.MaxStageBodySize), "body")
	<-c.bodies
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		fail(w, http.StatusRequestEntityTooLarge, "body larger than %d bytes", mbe.Limit)
		return
	case err != nil:
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	head := ch
	head.Stages = ch.Stages[:n]
	rate, chans := head.OutRate(), head.OutChannels()
	// Checking (a design may be up to stage.MaxTaps long) and retuning
	// take the one slot for expensive work.
	if !c.acquire(r.Context()) {
		return
	}
	defer c.release()
	s, err := doc.Resolve(rate, chans, ch.Stages[n])
	if err != nil {
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	done, err := c.Retune(stage.Retune{Index: n, Stage: s})
	if err != nil {
		code := retuneClass(err)
		if errors.Is(err, ErrNoRetune) {
			code = http.StatusConflict
		}
		fail(w, code, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, c.result(done[0]))
}
