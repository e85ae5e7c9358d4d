package main

import (
	"net"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdWaitPort waits until something accepts TCP connections on each
// loopback ADDR (at most 20 s): a script starts `rackform sim` in the
// background and must not plan before the BMCs listen.
func cmdWaitPort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: waitport HOST:PORT...")
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, addr := range args {
		for {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				ts.Fatalf("waitport: %s does not accept connections: %v", addr, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
