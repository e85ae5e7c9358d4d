package redfish

import (
	"io"

	"github.com/hashicorp/go-hclog"
)

// testLogger logs everything, at trace level, to w: tests grep it for secrets.
func testLogger(w io.Writer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Output: w, Level: hclog.Trace})
}

type nopCloser struct{ io.Reader }

func (nopCloser) Close() error { return nil }

// drain reads r to the end, counting bytes.
func drain(r io.Reader) (int64, error) { return io.Copy(io.Discard, r) }
