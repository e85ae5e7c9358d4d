package config

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// readRegular reads a configuration, variables or data file from the
// disk, refusing anything but a regular file: a FIFO would block the load
// (a plain open waits for a writer) and a device such as /dev/zero would
// be read forever, and neither can be recorded in a plan's snapshot. The
// open does not block, so the refusal is immediate.
func readRegular(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file; rackform reads configuration, variables and data only from regular files", path, fileKind(fi.Mode()))
	}
	return io.ReadAll(f)
}

func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return "a special file"
}
