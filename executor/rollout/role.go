package rollout

import "strings"

// IsControlPlane reports whether a role is a control plane's (its kinds
// included: "control_plane", "control_plane_spare").
func IsControlPlane(role string) bool { return strings.HasPrefix(role, "control_plane") }
