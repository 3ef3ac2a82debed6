//go:build linux

package repl_test

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

// openPTY opens a pseudo-terminal pair: the master side the test drives,
// and the tty side the shell runs on, cols columns wide.
func openPTY(cols int) (master, tty *os.File, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	var unlock int32
	if err := ioctl(m, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("unlockpt: %w", err)
	}
	var n uint32
	if err := ioctl(m, syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("ptsname: %w", err)
	}
	t, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	ws := struct{ Row, Col, X, Y uint16 }{Row: 50, Col: uint16(cols)}
	if err := ioctl(t, syscall.TIOCSWINSZ, unsafe.Pointer(&ws)); err != nil {
		m.Close()
		t.Close()
		return nil, nil, fmt.Errorf("set window size: %w", err)
	}
	return m, t, nil
}

func ioctl(f *os.File, req uintptr, arg unsafe.Pointer) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	err = sc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(arg))
	})
	if err != nil {
		return err
	}
	if errno != 0 {
		return errno
	}
	return nil
}

// childAttr makes the child a session leader with the tty (its fd 0) as its
// controlling terminal, so Ctrl-C typed on the master is a real SIGINT.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
}

// isRaw reports whether the tty behind master is in raw mode (the shell is
// reading a line): on Linux the master reports the tty's termios.
func isRaw(master *os.File) bool {
	var tio syscall.Termios
	if err := ioctl(master, syscall.TCGETS, unsafe.Pointer(&tio)); err != nil {
		return false
	}
	return tio.Lflag&syscall.ICANON == 0
}
