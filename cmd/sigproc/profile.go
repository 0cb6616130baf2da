package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"runtime/trace"
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
