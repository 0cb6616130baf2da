package capture

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fdPCM is a PCM device node opened non-blocking, so that Read can poll
// with a timeout and notice a cancelled context.
type fdPCM struct {
	fd  int
	pfd [1]unix.PollFd // reused: poll allocates nothing
}

// openPCM opens a PCM device node.
func openPCM(path string) (pcmDev, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	p := &fdPCM{fd: fd}
	p.pfd[0] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
	return p, nil
}

func (p *fdPCM) ioctl(req uintptr, arg unsafe.Pointer) syscall.Errno {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(p.fd), req, uintptr(arg))
	return e
}

func (p *fdPCM) poll(timeoutMS int) error {
	_, err := unix.Poll(p.pfd[:], timeoutMS)
	return err
}

func (p *fdPCM) close() error { return unix.Close(p.fd) }
