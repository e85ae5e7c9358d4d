package redfish

import (
	"io"

	"github.com/hashicorp/go-hclog"
)

// testLogger logs everything, at trace level, to w: tests grep it for secrets.
func testLogger(w io.Writer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Output: w, Level: hclog.Trace})
}
