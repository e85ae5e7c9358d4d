package config

import (
	"github.com/hashicorp/hcl/v2"
)

var rolloutSchema = &hcl.BodySchema{
	Attributes: optional("scope", "channel", "image_selection", "allow_multi_hop"),
	Blocks:     []hcl.BlockHeaderSchema{{Type: "stage", LabelNames: []string{"name"}}},
}

var rolloutStageSchema = &hcl.BodySchema{
	Attributes: optional("after_stage_wait"),
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "approval", LabelNames: []string{"name"}},
		{Type: "group", LabelNames: []string{"name"}},
	},
}

var approvalSchema = &hcl.BodySchema{Attributes: optional("when", "description")}

var groupSchema = &hcl.BodySchema{Attributes: required("clusters")}

func (s *loadState) decodeRollout(b *hcl.Block, ctx *hcl.EvalContext) hcl.Diagnostics {
	content, diags := b.Body.Content(rolloutSchema)
	a := s.attrs(content.Attributes, ctx, &diags)
	ro := &Rollout{Name: b.Labels[0], DeclRange: b.DefRange}
	ro.Channel = a.oneOf("channel", "", ChannelStable, ChannelRapid, ChannelFirmware)
	ro.ChannelRange = a.rng("channel", b.DefRange)
	if ro.Channel == "" && content.Attributes["channel"] != nil {
		s.badChannel = append(s.badChannel, ro) // reported; its clusters need no release
	}
	defScope := ScopeFull
	if ro.Channel == ChannelFirmware {
		defScope = ScopeFirmwareOnly
	}
	ro.Scope = a.oneOf("scope", defScope, ScopeFull, ScopeControlPlaneOnly, ScopeFirmwareOnly)
	if ro.Channel == ChannelFirmware && ro.Scope != ScopeFirmwareOnly {
		a.errorf(a.rng("scope", b.DefRange), "Firmware channel moves firmware only",
			"Rollout %q follows the firmware channel, which updates firmware only (scope = %q); it cannot have scope = %q. Use channel = %q or %q to move the runtime.", ro.Name, ScopeFirmwareOnly, ro.Scope, ChannelStable, ChannelRapid)
	}
	ro.ImageSelection = a.oneOf("image_selection", SelectLatest, SelectLatest, SelectConsistent)
	if ro.Channel == "" {
		ro.ImageSelection = ""
	}
	ro.AllowMultiHop = a.boolean("allow_multi_hop", false)
	for _, name := range []string{"image_selection", "allow_multi_hop"} {
		if content.Attributes[name] != nil && content.Attributes["channel"] == nil {
			a.errorf(a.rng(name, b.DefRange), name+" without a channel",
				"%s says how rollout %q selects releases from a channel; it has no channel. Set channel = %q, %q or %q, or remove %s.", name, ro.Name, ChannelStable, ChannelRapid, ChannelFirmware, name)
		}
	}
	owner := "Rollout " + quote(ro.Name)
	stages := map[string]hcl.Range{}
	// Names of gates and groups are addresses for approve/skip, so they
	// are unique across the rollout, not just the stage.
	gates := map[string]hcl.Range{}
	groups := map[string]hcl.Range{}
	for _, sb := range content.Blocks {
		st := &Stage{Name: sb.Labels[0], DeclRange: sb.DefRange}
		if !claim(stages, "stage", st.Name, owner, sb.DefRange, &diags) {
			continue
		}
		sc, sa := s.content(sb.Body, rolloutStageSchema, ctx, &diags)
		st.AfterStageWait = sa.duration("after_stage_wait", 0)
		for _, blk := range sc.Blocks {
			switch blk.Type {
			case "approval":
				ap := &Approval{Name: blk.Labels[0], DeclRange: blk.DefRange}
				if !claim(gates, "approval", ap.Name, owner, blk.DefRange, &diags) {
					continue
				}
				_, aa := s.content(blk.Body, approvalSchema, ctx, &diags)
				ap.When = aa.oneOf("when", "before", "before", "after")
				ap.Description, _ = aa.str("description")
				st.Approvals = append(st.Approvals, ap)
			case "group":
				g := &Group{Name: blk.Labels[0], DeclRange: blk.DefRange}
				if !claim(groups, "group", g.Name, owner, blk.DefRange, &diags) {
					continue
				}
				_, ga := s.content(blk.Body, groupSchema, ctx, &diags)
				names, ranges, _ := ga.refList("clusters", kindCluster)
				for i, n := range names {
					c := s.clusters[n]
					requireDecoded(c == nil, ranges[i], kindCluster, n, &diags)
					if c != nil {
						g.Clusters = append(g.Clusters, c)
					}
				}
				st.Groups = append(st.Groups, g)
			}
		}
		if len(st.Groups) == 0 {
			diags = append(diags, errorAt(sb.DefRange, "Empty stage", "Stage %q of rollout %q has no group; add a group with clusters = [cluster.NAME].", st.Name, ro.Name))
		}
		ro.Stages = append(ro.Stages, st)
	}
	s.cfg.Rollouts = append(s.cfg.Rollouts, ro)
	return diags
}
