package rollout

import "github.com/rackform/rackform/planner/plan"

// IsMember reports whether s is a member of its control plane: a
// control_plane server (the spare is not) — after a takeover t the spare
// is, and the server it replaced is not (rules 31, 33).
func IsMember(s *plan.Server, t *plan.Takeover) bool {
	if t != nil {
		switch s.Address {
		case t.Spare:
			return true
		case t.Replaces:
			return false
		}
	}
	return s.Role == "control_plane"
}

// Members lists the control-plane members of a cluster in plan order,
// after the spare takeover t when the run made one.
// servers are the candidates, in plan order: the plan's servers, or
// only the cluster's when the caller keeps them apart (a check per member
// of a fleet's every control plane must not read the whole fleet).
func Members(servers []*plan.Server, cluster string, t *plan.Takeover) []*plan.Server {
	var out []*plan.Server
	for _, s := range servers {
		if s.Cluster == cluster && IsMember(s, t) {
			out = append(out, s)
		}
	}
	return out
}

// Guarded reports whether taking s down is subject to the quorum guard
// (rule 32): a member of a control plane of three or more, whose plan
// does not allow losing quorum.
func Guarded(s *plan.Server, q *plan.Quorum, t *plan.Takeover, members int) bool {
	if !IsMember(s, t) || (q != nil && q.Override) {
		return false
	}
	return members >= 3
}

// Peer is another member as observed before a member goes down: Why is
// "" when it is healthy, else why not.
type Peer struct {
	Server, Why string
}

// QuorumCheck is the guard's decision before a member goes down (rule 32).
type QuorumCheck struct {
	// Keeps: taking the member down keeps quorum; it goes on.
	Keeps bool
	// Members, Healthy (of its peers) and Need (⌊n/2⌋+1).
	Members, Healthy, Need int
	// Down are the peers that are not healthy, in the order observed.
	Down []Peer
	// Replace: a spare takeover is armed, so the member is held until the
	// spare takes the place of this peer, the first one down (rule 33).
	Replace string
}

// CheckQuorum decides whether a member of a control plane of members may
// go down, given its peers as observed; armed: a spare takeover is armed
// and has not happened.
func CheckQuorum(members int, peers []Peer, armed bool) QuorumCheck {
	c := QuorumCheck{Members: members, Need: members/2 + 1}
	for _, p := range peers {
		if p.Why == "" {
			c.Healthy++
		} else {
			c.Down = append(c.Down, p)
		}
	}
	switch {
	case c.Healthy >= c.Need:
		c.Keeps = true
	case armed && len(c.Down) > 0:
		c.Replace = c.Down[0].Server
	}
	return c
}
