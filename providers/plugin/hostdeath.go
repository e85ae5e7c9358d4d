package plugin

import (
	"context"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rackform/rackform/providers"
)

// pdeathsig enables dieWithHost (tests turn it off to exercise watchHost
// alone).
var pdeathsig = true

// hostWatchInterval is how often a plugin checks that its host still runs.
const hostWatchInterval = 500 * time.Millisecond

// watchHost returns once the process's parent is no longer ppid: the host
// died and the plugin was re-parented (to init or a subreaper). It checks
// getppid at every tick; it returns false if tick is closed first.
func watchHost(ppid int, tick <-chan time.Time, getppid func() int) bool {
	for range tick {
		if getppid() != ppid {
			return true
		}
	}
	return false
}

// exitWithHost runs in a plugin process: when the host goes away (a
// SIGKILLed host cannot end its plugins), it stops the provider (releasing
// BMC sessions, bounded) and exits.
func exitWithHost(p providers.Provider, logger hclog.Logger) {
	ppid := os.Getppid()
	if ppid <= 1 {
		return // already orphaned at start: nothing to watch
	}
	t := time.NewTicker(hostWatchInterval)
	go func() {
		defer t.Stop()
		if !watchHost(ppid, t.C, os.Getppid) {
			return
		}
		logger.Error("the rackform process that started this plugin is gone; exiting", "host_pid", ppid)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p.Stop(ctx)
		os.Exit(1)
	}()
}
