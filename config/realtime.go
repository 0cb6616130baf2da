package config

import (
	"fmt"
	"slices"
)

// MaxCPU bounds realtime.cpus: CPU numbers must be below it (the kernel's
// default affinity mask size, CPU_SETSIZE).
const MaxCPU = 1024

// Realtime holds the capture side's real-time settings (the realtime:
// section). All are off by default; they matter for live sources (iio,
// paced synthetic) whose reads must not be late:
//
//	realtime:
//	  lock_thread: true   # capture loop keeps one OS thread
//	  cpus: [2]           # pin that thread to CPU 2 (Linux; implies lock_thread)
//	  mlock: true         # lock the ring in RAM (Linux; needs RLIMIT_MEMLOCK)
//
// Whether the CPUs exist and may be used by this process (taskset, cgroup
// cpuset, systemd CPUAffinity=) is checked when the run starts, and mlock's
// limit when the ring is locked.
type Realtime struct {
	// LockThread runs the capture loop (the goroutine that reads the
	// source) on one dedicated OS thread for the whole run.
	LockThread bool `yaml:"lock_thread"`
	// CPUs pins the capture thread to these CPU numbers (Linux only), each
	// in 0..MaxCPU-1 and given once. Implies lock_thread; writing
	// lock_thread: false next to it is an error. Pick a core that is not
	// busy with interrupts or the filter (e.g. isolcpus=).
	CPUs []int `yaml:"cpus"`
	// Mlock locks the ring's memory into RAM for the run (Linux only), so
	// no slot is paged out. The ring (block_size*ring_slots*4 bytes, *2 for
	// complex, plus headers) must fit under RLIMIT_MEMLOCK: raise it with
	// ulimit -l or LimitMEMLOCK= in a systemd unit.
	Mlock bool `yaml:"mlock"`
	// BusyPoll makes the filter side poll the ring for the next block
	// rather than sleep until the capture side wakes it: about 1.5 µs
	// rather than 70 µs from a block's arrival to its filtering, for a
	// core kept busy while blocks flow (pipeline.Realtime.BusyPoll).
	BusyPoll bool `yaml:"busy_poll"`
}

// validateRealtime checks the realtime section independently of the
// machine; Validate calls it.
func (c *Config) validateRealtime(add addFunc) {
	r := &c.Realtime
	if len(r.CPUs) == 0 && c.idx.has("realtime.cpus") {
		add("realtime.cpus", "must not be empty (omit the key to leave the capture thread unpinned)")
	}
	for i, cpu := range r.CPUs {
		p := fmt.Sprintf("realtime.cpus[%d]", i)
		switch {
		case cpu < 0:
			add(p, "must be a CPU number >= 0, got %d", cpu)
		case cpu >= MaxCPU:
			add(p, "must be below %d, got %d", MaxCPU, cpu)
		case slices.Contains(r.CPUs[:i], cpu):
			add(p, "CPU %d is given twice", cpu)
		}
	}
	if len(r.CPUs) > 0 && !r.LockThread && c.idx.has("realtime.lock_thread") {
		add("realtime.lock_thread", "must not be false when cpus is set: pinning needs the capture thread locked (omit lock_thread or set it true)")
	}
}
