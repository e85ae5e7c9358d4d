package config

import (
	"errors"
	"fmt"

	"github.com/rackform/rackform/internal/regularfile"
)

// readRegular reads a configuration, variables or data file from the
// disk, refusing anything but a regular file (internal/regularfile): a
// FIFO would block the load and a device such as /dev/zero would be read
// forever, and neither can be recorded in a plan's snapshot.
func readRegular(path string) ([]byte, error) {
	b, err := regularfile.Read(path)
	var nr *regularfile.NotRegularError
	if errors.As(err, &nr) {
		return nil, fmt.Errorf("%w; rackform reads configuration, variables and data only from regular files", err)
	}
	return b, err
}
