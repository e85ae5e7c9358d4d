package plan

// Quorum is a control plane's quorum at plan time. The executor re-checks
// it before taking each member down; these fields let a reviewer see what
// the plan decided and let apply honour an explicit override.
type Quorum struct {
	// Members are the control-plane members (the spare excluded).
	Members []string `json:"members"`
	// Required is how many members must stay healthy: ⌊n/2⌋+1.
	Required int `json:"required"`
	// Healthy is how many members were healthy at plan time.
	Healthy int `json:"healthy"`
	// Down lists the members that were not healthy, with why.
	Down []QuorumMember `json:"down,omitempty"`
	// Override is set when the configuration allows losing quorum
	// (allow_quorum_loss = true): apply then does not pause for quorum.
	Override bool `json:"override,omitempty"`
	// Takeover is the spare taking a down member's place, when planned.
	Takeover *Takeover `json:"takeover,omitempty"`
}

// QuorumMember is a member that was not healthy at plan time.
type QuorumMember struct {
	Server string `json:"server"`
	Why    string `json:"why"`
}

// Takeover is the spare replacing a member (rack resiliency): once the
// spare is upgraded, the takeover step brings it in as a member, and the
// member it replaces becomes the spare.
type Takeover struct {
	// Spare is the spare control-plane server that becomes a member.
	Spare string `json:"spare"`
	// Replaces is the member it replaces, which becomes the spare; ""
	// when none is down at plan time: the takeover is armed, and apply
	// brings the spare in for the first member that fails.
	Replaces string `json:"replaces,omitempty"`
	// Hook is the argv run to bring the spare in; empty: recorded only.
	Hook []string `json:"hook,omitempty"`
}
