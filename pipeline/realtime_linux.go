//go:build linux

package pipeline

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

const mlockSupported = true

// checkCPUs rejects CPUs outside the process's affinity mask (the CPUs that
// exist, are online and that taskset, a cgroup cpuset or systemd's
// CPUAffinity= allow), read from the calling thread. On an unrestricted
// machine that is 0..runtime.NumCPU()-1.
func checkCPUs(cpus []int) error {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return fmt.Errorf("pipeline: read CPU affinity: %w", err)
	}
	var allowed []int
	for c := 0; c < maxCPU; c++ {
		if set.IsSet(c) {
			allowed = append(allowed, c)
		}
	}
	for _, cpu := range cpus {
		if !set.IsSet(cpu) {
			return fmt.Errorf("pipeline: realtime CPU %d is not available to this process (allowed: %s)", cpu, formatCPUs(allowed))
		}
	}
	return nil
}

// setAffinity pins the calling thread (pid 0 = this thread) to cpus.
func setAffinity(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("pipeline: pin capture thread to CPUs %s: %w", formatCPUs(cpus), err)
	}
	return nil
}

// mlock locks mem and returns its unlock function.
func mlock(mem []byte) (func() error, error) {
	if err := unix.Mlock(mem); err != nil {
		return nil, mlockError(len(mem), err)
	}
	return func() error {
		if err := unix.Munlock(mem); err != nil {
			return fmt.Errorf("pipeline: munlock %d-byte ring: %w", len(mem), err)
		}
		return nil
	}, nil
}

// mlockError explains a failed mlock: nearly always the locked-memory limit,
// which is 64 KiB or 8 MiB by default and must be raised by the admin.
func mlockError(size int, err error) error {
	if !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.ENOMEM) && !errors.Is(err, unix.EAGAIN) {
		return fmt.Errorf("pipeline: mlock %d-byte ring: %w", size, err)
	}
	limit := "unknown"
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_MEMLOCK, &rl) == nil {
		limit = fmt.Sprintf("%d bytes", rl.Cur)
		if rl.Cur == unix.RLIM_INFINITY {
			limit = "unlimited"
		}
	}
	return fmt.Errorf("%w: mlock %d bytes: %w (RLIMIT_MEMLOCK is %s): raise it with `ulimit -l` "+
		"(e.g. `ulimit -l unlimited` as root), LimitMEMLOCK= in the systemd unit, or memlock in "+
		"/etc/security/limits.conf, or grant CAP_IPC_LOCK; or turn mlock off",
		ErrMemlockLimit, size, err, limit)
}
