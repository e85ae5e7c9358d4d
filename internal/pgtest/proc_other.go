//go:build !unix

package pgtest

import "os"

func processAlive(int) bool { return true }

func statOwner(os.FileInfo) (int, bool) { return 0, false }
