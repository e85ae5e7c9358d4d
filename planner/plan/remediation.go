package plan

// RemediationTriggers are how long each condition of rack resiliency's
// automated remediation may last before remediation starts (reboot once,
// then reimage once, then the server is marked unhealthy):
//   - Provisioning: the server does not finish provisioning — come back
//     on, healthy and at target after its boot — within this time (the
//     seed: 6 h). The step's own timeout (verify_timeout) bounds it too.
//   - ReadOnlyFilesystem: a running node stuck with a read-only root
//     filesystem, which its BMC shows as health Critical while on (10 min).
//   - UnknownState: a control-plane or management node whose state is
//     Unknown — its BMC gives no health, or cannot be read (30 min).
type RemediationTriggers struct {
	Provisioning       Duration `json:"provisioning"`
	ReadOnlyFilesystem Duration `json:"read_only_filesystem"`
	UnknownState       Duration `json:"unknown_state"`
}
