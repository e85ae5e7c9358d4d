//go:build !unix

package command

import "os"

// terminalColumns is 0 (unknown) here: COLUMNS sets the width.
func terminalColumns(*os.File) int { return 0 }
