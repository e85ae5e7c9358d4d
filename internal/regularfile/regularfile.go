// Package regularfile reads the files a user names (a plan, a key, a
// configuration, variables, data or scenario file): only a regular file,
// at once and without blocking, up to a size bound, and checks that its
// nesting is shallow enough for the parser before it is parsed. It also
// writes the files rackform keeps (the state directory's, the run
// registry's, a plugin lock file) whole or not at all.
package regularfile

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// NotRegularError is a path that names a FIFO, a device, a socket or a
// directory: a FIFO without a writer would block a plain open, /dev/zero
// would be read forever, and neither can be recorded in a plan.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, Kind(e.Mode))
}

// Open opens path for reading and refuses anything but a regular file with
// a *NotRegularError. The open does not block.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Limit is how large a kind of file may be.
type Limit struct {
	Bytes int64
	// What names the kind of file, for messages: "a scenario".
	What string
}

// CABundle bounds a file of CA certificates (PEM): a system's whole bundle
// is a few hundred KB.
var CABundle = Limit{Bytes: 16 << 20, What: "a CA bundle"}

// TooLargeError is a file over its Limit.
type TooLargeError struct {
	Path string
	// Size is the file's size; when it grew while it was read, or it was
	// read from a stream, what was read of it (the limit and a byte).
	Size  int64
	Limit Limit
}

func (e *TooLargeError) Error() string {
	if e.Size <= e.Limit.Bytes+1 {
		// Read from a stream: all that is known is that it is larger.
		return fmt.Sprintf("%s is larger than the %s %s may be", e.Path, Size(e.Limit.Bytes), e.Limit.What)
	}
	return fmt.Sprintf("%s is %s, over the %s %s may be", e.Path, Size(e.Size), Size(e.Limit.Bytes), e.Limit.What)
}

// Read reads the regular file at path (see Open) of at most limit.Bytes:
// a larger one is refused with a *TooLargeError, by its size before it is
// read, and nothing past the bound is read of one that grows meanwhile.
func Read(path string, limit Limit) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > limit.Bytes {
		return nil, &TooLargeError{Path: path, Size: fi.Size(), Limit: limit}
	}
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()) + bytes.MinRead)
	n, err := buf.ReadFrom(io.LimitReader(f, limit.Bytes+1))
	if err != nil {
		return nil, err
	}
	if n > limit.Bytes {
		return nil, &TooLargeError{Path: path, Size: n, Limit: limit}
	}
	return buf.Bytes(), nil
}

// Size writes a number of bytes as people read it: 16 MiB, 268 MB, 3.1 GB.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0 && n < 1<<20:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.0f MB", float64(n)/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.0f KB", float64(n)/1e3)
	case n == 1:
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// Kind names what a file mode is, for messages: "a named pipe (FIFO)".
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	}
	return "a special file"
}
