package control

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// spectrumTTL is how long a spectrum is served again before it is
// computed anew from newer samples (the page asks every 300 ms or so).
const spectrumTTL = 100 * time.Millisecond

// Read limits: the API's reads (status, spectra, responses) beyond
// readRate a second, after a burst of readBurst, are answered 429. The
// page makes about ten a second.
const (
	readRate  = 100
	readBurst = 100
)

// renderKey names one cached answer: a spectrum (point, nfft, the
// point's canonical name, channel) or a response (stage).
type renderKey struct {
	kind, name string
	a, b, c    int
}

// maxChannelAnswers bounds the cached spectra of channels other than 0:
// a point may have 4096 channels, each answer with their power strip.
const maxChannelAnswers = 64

// rendered is one cached answer of an expensive read, kept encoded.
type rendered struct {
	mu      sync.Mutex // held while computing: one computation per answer at a time
	valid   bool
	version uint64 // what it was computed from: samples seen, or the chain's version
	at      time.Time
	code    int
	body    []byte
}

// entry returns the cache entry of k, made on first use. Keys are
// validated before (a point and a power of two, or a stage), so the cache
// is bounded; the answers for channels other than 0 are dropped, all of
// them, when there are more than maxChannelAnswers.
func (c *Control) entry(k renderKey) *rendered {
	c.cacheMu.Lock()
	defer c.cacheMu.Unlock()
	e := c.cache[k]
	if e == nil {
		if k.c != 0 {
			c.channelAnswers++
			if c.channelAnswers > maxChannelAnswers {
				for key := range c.cache {
					if key.c != 0 {
						delete(c.cache, key)
					}
				}
				c.channelAnswers = 1
			}
		}
		e = &rendered{}
		c.cache[k] = e
	}
	return e
}

// serveCached answers from k's cache while it is current: computed from
// version, or, with ttl > 0, less than ttl ago. Otherwise compute runs,
// one expensive computation in the whole server at a time (c.work), so
// that API reads never take more than one core from the run; waiting
// requests for the same answer then get that computation's.
func (c *Control) serveCached(w http.ResponseWriter, r *http.Request, k renderKey, version uint64, ttl time.Duration, compute func() (int, any)) {
	e := c.entry(k)
	e.mu.Lock()
	if !e.valid || e.version != version && (ttl == 0 || time.Since(e.at) >= ttl) {
		if !c.acquire(r.Context()) {
			e.mu.Unlock()
			return // the client left
		}
		code, v := compute()
		c.release()
		body, err := json.Marshal(v)
		if err != nil {
			code, body = http.StatusInternalServerError, []byte(`{"error": `+strconv.Quote("encode: "+err.Error())+`}`)
		}
		e.valid, e.version, e.at, e.code, e.body = true, version, time.Now(), code, append(body, '\n')
	}
	code, body := e.code, e.body
	e.mu.Unlock()
	writeRaw(w, code, body)
}

// acquire takes the server's one slot for expensive work (a spectrum, a
// response, a design and retune), or gives up when ctx ends.
func (c *Control) acquire(ctx context.Context) bool {
	select {
	case c.work <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (c *Control) release() { <-c.work }

func writeRaw(w http.ResponseWriter, code int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}
