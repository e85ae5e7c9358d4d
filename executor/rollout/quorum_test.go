package rollout

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rackform/rackform/planner/plan"
)

func TestMembers(t *testing.T) {
	servers := []*plan.Server{
		{Address: "c/a", Cluster: "c", Role: "control_plane"},
		{Address: "c/b", Cluster: "c", Role: "control_plane"},
		{Address: "c/s", Cluster: "c", Role: "control_plane_spare"},
		{Address: "c/w", Cluster: "c", Role: "compute"},
		{Address: "d/a", Cluster: "d", Role: "control_plane"},
	}
	names := func(ss []*plan.Server) (out []string) {
		for _, s := range ss {
			out = append(out, s.Address)
		}
		return out
	}
	if d := cmp.Diff([]string{"c/a", "c/b"}, names(Members(servers, "c", nil))); d != "" {
		t.Errorf("members (-want +got):\n%s", d)
	}
	took := &plan.Takeover{Spare: "c/s", Replaces: "c/a"}
	if d := cmp.Diff([]string{"c/b", "c/s"}, names(Members(servers, "c", took))); d != "" {
		t.Errorf("members after the spare took the place of c/a (-want +got):\n%s", d)
	}
	if Guarded(servers[0], nil, nil, 2) || !Guarded(servers[0], nil, nil, 3) || Guarded(servers[0], &plan.Quorum{Override: true}, nil, 3) || Guarded(servers[2], nil, nil, 3) {
		t.Error("guarded: a member of three or more, unless the plan allows losing quorum; never the spare")
	}
}

func TestCheckQuorum(t *testing.T) {
	peers := []Peer{{"c/b", ""}, {"c/c", "unreachable"}, {"c/d", ""}, {"c/e", "health Critical"}}
	cases := []struct {
		name  string
		peers []Peer
		armed bool
		want  QuorumCheck
	}{
		{"keeps: 2 of 3 healthy once it is down", []Peer{peers[0], peers[2]}, false, QuorumCheck{Keeps: true, Members: 3, Healthy: 2, Need: 2}},
		{"holds: 1 of 3", peers[:2], true, QuorumCheck{Members: 3, Healthy: 1, Need: 2, Down: []Peer{peers[1]}, Replace: "c/c"}},
		{"holds", peers, false, QuorumCheck{Members: 5, Healthy: 2, Need: 3, Down: []Peer{peers[1], peers[3]}}},
		{"the armed spare replaces the first down", peers, true, QuorumCheck{Members: 5, Healthy: 2, Need: 3, Down: []Peer{peers[1], peers[3]}, Replace: "c/c"}},
	}
	for _, c := range cases {
		members := len(c.peers) + 1
		if got := CheckQuorum(members, c.peers, c.armed); !cmp.Equal(got, c.want) {
			t.Errorf("%s: %s", c.name, cmp.Diff(c.want, got))
		}
	}
}
