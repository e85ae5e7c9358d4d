//go:build linux

package plugin

import (
	"os/exec"
	"syscall"
)

// dieWithHost makes the kernel SIGKILL the plugin when the host dies
// (PR_SET_PDEATHSIG), however it dies: a SIGKILLed host runs no cleanup,
// and a plugin left behind would hold its BMC sessions. The signal is tied
// to the thread that starts the plugin; the Go runtime never ends an
// unlocked thread, so in practice that is the host process.
func dieWithHost(cmd *exec.Cmd) {
	if !pdeathsig {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
