package command

import "os"

// resizeSignals: a Windows console sends no signal when it is resized.
var resizeSignals []os.Signal
