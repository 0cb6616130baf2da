//go:build !linux

package pipeline

import (
	"fmt"
	"runtime"
)

const mlockSupported = false

func checkCPUs([]int) error {
	return fmt.Errorf("pipeline: realtime CPU pinning is not supported on %s", runtime.GOOS)
}

func setAffinity([]int) error {
	return fmt.Errorf("pipeline: realtime CPU pinning is not supported on %s", runtime.GOOS)
}

func mlock([]byte) (func() error, error) {
	return nil, fmt.Errorf("pipeline: realtime mlock is not supported on %s", runtime.GOOS)
}
