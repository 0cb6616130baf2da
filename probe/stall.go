package probe

import "time"

// DefaultStallOver is Config.StallOver's default: a block that took a
// millisecond stood in a stall of the host, not in the path's own time
// (tens of µs at most on every path measured).
const DefaultStallOver = time.Millisecond

// stallWatch calls Config.OnStall once, at the first measured block that
// took StallOver or more, or that came after dropped blocks. It runs on
// the consumer goroutine: a comparison a block until it fires.
type stallWatch struct {
	over   int64
	warmup uint64
	fn     func(seq uint64, latency time.Duration, dropped uint64)
	next   uint64 // the sequence number expected next
	fired  bool
}

// newStallWatch returns cfg's watch, nil when it has no OnStall.
func newStallWatch(cfg Config) *stallWatch {
	if cfg.OnStall == nil {
		return nil
	}
	over := cfg.StallOver
	if over <= 0 {
		over = DefaultStallOver
	}
	return &stallWatch{over: int64(over), warmup: uint64(cfg.Warmup), fn: cfg.OnStall}
}

// seen takes block seq, which took ns from its timestamp to the host.
func (w *stallWatch) seen(seq uint64, ns int64) {
	if w == nil || w.fired {
		return
	}
	var dropped uint64 // measured blocks only, as the soak counts its gaps
	if from := max(w.next, w.warmup); seq > from {
		dropped = seq - from
	}
	w.next = seq + 1
	if seq < w.warmup || (ns < w.over && dropped == 0) {
		return
	}
	w.fired = true
	w.fn(seq, time.Duration(ns), dropped)
}
