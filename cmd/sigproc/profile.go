package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"time"
)

// profiles are the Go CPU profile and execution trace a run writes when
// asked (--cpu-profile, --trace): where its time goes, and on which
// goroutine and core, when a run is slower than its cores should make it.
type profiles struct {
	cpu, trace *os.File
}

// startProfiles creates the files cpuPath and tracePath ("" for none) and
// starts writing them. A file that exists is replaced only with
// overwrite; inputs are the files the run reads, which a profile never
// replaces, and the sink's path is checked beside them.
func startProfiles(cpuPath, tracePath string, overwrite bool, inputs []string, sinkPath string) (*profiles, error) {
	if err := checkOutputs(inputs, outputFlag{"sink.path", sinkPath}, outputFlag{"--cpu-profile", cpuPath}, outputFlag{"--trace", tracePath}); err != nil {
		return nil, err
	}
	p := &profiles{}
	var err error
	if p.cpu, err = createOutput("--cpu-profile", cpuPath, overwrite); err != nil {
		return nil, err
	}
	if p.trace, err = createOutput("--trace", tracePath, overwrite); err != nil {
		return nil, errors.Join(err, p.close())
	}
	if p.cpu != nil {
		if err := pprof.StartCPUProfile(p.cpu); err != nil {
			return nil, errors.Join(fmt.Errorf("--cpu-profile: %w", err), p.close())
		}
	}
	if p.trace != nil {
		if err := trace.Start(p.trace); err != nil {
			if p.cpu != nil {
				pprof.StopCPUProfile()
			}
			return nil, errors.Join(fmt.Errorf("--trace: %w", err), p.close())
		}
	}
	return p, nil
}

// createOutput creates path, the output file flag names ("" gives nil),
// refusing one that exists unless overwrite.
func createOutput(flag, path string, overwrite bool) (*os.File, error) {
	if path == "" {
		return nil, nil
	}
	mode := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if overwrite {
		mode = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, mode, 0o644)
	if errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("%s %s: the file exists; give --overwrite to replace it, or another path", flag, path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return f, nil
}

// stop ends the profiles and closes their files.
func (p *profiles) stop() error {
	if p.cpu != nil {
		pprof.StopCPUProfile()
	}
	if p.trace != nil {
		trace.Stop()
	}
	return p.close()
}

func (p *profiles) close() error {
	var err error
	for _, f := range []*os.File{p.cpu, p.trace} {
		if f == nil {
			continue
		}
		if e := f.Close(); e != nil {
			err = errors.Join(err, fmt.Errorf("close %s: %w", f.Name(), e))
		}
	}
	return err
}

// stallTrace keeps the last stallTraceAge of a Go execution trace in
// memory (less where stallTraceBytes does not hold that much) (runtime/trace's flight recorder) and writes it to a file at the
// first stall the probe reports (probe.Config.OnStall), stallTraceAfter
// later so that the window holds the stall's end too: a soak's rare
// millisecond stalls, which a whole-run --trace is far too large to keep
// (3 s of a chain soak at 50 000 blocks a second took over 16 MiB).
type stallTrace struct {
	fr    *trace.FlightRecorder
	f     *os.File
	once  bool
	done  chan error // the write's outcome, once started
	wrote string     // what was written, for the report
}

const (
	stallTraceAge = 2 * time.Second
	// A hint the recorder may exceed by a generation of trace: well under
	// the 16 MiB a device call returns per file.
	stallTraceBytes = 8 << 20
	stallTraceAfter = 100 * time.Millisecond
)

// startStallTrace creates path (refused if it exists, unless overwrite)
// and starts the flight recorder.
func startStallTrace(path string, overwrite bool) (*stallTrace, error) {
	f, err := createOutput("--trace-stall", path, overwrite)
	if err != nil {
		return nil, err
	}
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: stallTraceAge, MaxBytes: stallTraceBytes})
	if err := fr.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("--trace-stall: %w", err), f.Close())
	}
	return &stallTrace{fr: fr, f: f, done: make(chan error, 1)}, nil
}

// stalled is probe.Config.OnStall: the first call starts the write,
// stallTraceAfter later, on a goroutine of its own; later ones are
// ignored. It returns at once (it runs on the probe's consumer).
func (s *stallTrace) stalled(seq uint64, latency time.Duration, dropped uint64) {
	if s.once {
		return
	}
	s.once = true
	s.wrote = fmt.Sprintf("block %d: %v from its timestamp, %d blocks dropped before it", seq, latency.Round(time.Microsecond), dropped)
	go func() {
		time.Sleep(stallTraceAfter)
		_, err := s.fr.WriteTo(s.f)
		s.done <- err
	}()
}

// stop waits for a write under way, stops the recorder and closes the
// file; it says what the file holds, or that no stall came.
func (s *stallTrace) stop() (string, error) {
	var err error
	if s.once {
		err = <-s.done
	}
	s.fr.Stop()
	if e := s.f.Close(); e != nil {
		err = errors.Join(err, fmt.Errorf("close %s: %w", s.f.Name(), e))
	}
	if err != nil {
		return "", fmt.Errorf("--trace-stall: %w", err)
	}
	if !s.once {
		return fmt.Sprintf("trace-stall: no stall, %s is empty", s.f.Name()), nil
	}
	return fmt.Sprintf("trace-stall: %s holds up to %v before and %v after %s (go run ./bench/traceuse -gaps 20 %s)",
		s.f.Name(), stallTraceAge, stallTraceAfter, s.wrote, s.f.Name()), nil
}
