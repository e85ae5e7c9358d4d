//go:build unix

package command

import (
	"os"
	"syscall"
	"unsafe"
)

// terminalColumns asks the terminal f writes to for its width; 0 when it
// does not say.
func terminalColumns(f *os.File) int {
	var ws struct{ Row, Col, X, Y uint16 }
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws))); errno != 0 {
		return 0
	}
	return int(ws.Col)
}
