//go:build !linux

package capture

import "runtime"

// openPCM fails: ALSA exists only on Linux.
func openPCM(path string) (pcmDev, error) {
	return nil, inputErr(ErrUnsupported, "capture: alsa: %s: ALSA capture needs Linux (this is %s)", path, runtime.GOOS)
}
