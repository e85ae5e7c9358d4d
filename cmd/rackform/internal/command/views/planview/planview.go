// Package planview renders plans for people (text, markdown) and machines
// (a JSON-lines stream) from one walk over the plan file's data, so the
// renderings cannot disagree about order, numbers or wording.
package planview

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// Entry is one server in run order with where it sits in the run tree.
// Every rendering is a fold over the entries.
type Entry struct {
	Stage   *plan.Stage
	Group   *plan.Group
	Cluster *plan.Cluster
	Phase   *plan.Phase
	Scope   *plan.Scope
	Server  *plan.Server
}

// Clusters lists every cluster of p in run order, placed in the run tree
// (an Entry with no phase, scope or server).
func Clusters(p *plan.Plan) []Entry {
	var out []Entry
	for si := range p.Run.Stages {
		st := &p.Run.Stages[si]
		for gi := range st.Groups {
			g := &st.Groups[gi]
			for ci := range g.Clusters {
				out = append(out, Entry{Stage: st, Group: g, Cluster: &g.Clusters[ci]})
			}
		}
	}
	return out
}

// Scopes lists every rack, batch or serial scope of p in run order,
// placed in the run tree (an Entry with no server).
func Scopes(p *plan.Plan) []Entry {
	var out []Entry
	for _, e := range Clusters(p) {
		for e.Phase, e.Scope = range e.Cluster.Scopes() {
			out = append(out, e)
		}
	}
	return out
}

// Entries lists every server of p in run order: stages, groups, clusters,
// phases, scopes, then the scope's start order. A server in no scope (a
// plan from another tool, say) comes last with nil tree fields, so
// nothing is ever left out of a rendering.
func Entries(p *plan.Plan) []Entry {
	byAddr := make(map[string]*plan.Server, len(p.Servers))
	for i := range p.Servers {
		byAddr[p.Servers[i].Address] = &p.Servers[i]
	}
	seen := make(map[string]bool, len(p.Servers))
	var out []Entry
	for _, e := range Scopes(p) {
		for _, a := range e.Scope.Servers {
			srv := byAddr[a]
			if srv == nil || seen[a] {
				continue
			}
			seen[a] = true
			e.Server = srv
			out = append(out, e)
		}
	}
	for i := range p.Servers {
		if !seen[p.Servers[i].Address] {
			out = append(out, Entry{Server: &p.Servers[i]})
		}
	}
	return out
}

// Duration formats an estimate for people: "12h", "4h36m", "45m", "30s".
func Duration(d plan.Duration) string {
	t := time.Duration(d).Round(time.Second)
	if t == 0 {
		return "0m"
	}
	h := t / time.Hour
	m := (t % time.Hour) / time.Minute
	s := (t % time.Minute) / time.Second
	var b strings.Builder
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	if s > 0 && h == 0 {
		fmt.Fprintf(&b, "%ds", s)
	}
	return b.String()
}

// SummaryLine is the plan's headline: "N servers to upgrade in R racks,
// M skipped, ~T", after what was not seen or is held back, which comes
// first because it hides the most: "7 of 40 servers not observed: 5
// unreachable, 2 credentials refused; 1 held back; ...".
func SummaryLine(p *plan.Plan) string {
	s := p.Summary
	var head []string
	if n := len(UpgradedCritical(p)); n > 0 {
		head = append(head, fmt.Sprintf("%s upgraded although Critical", views.Plural(n, "server")))
	}
	if l := NotObservedLine(p); l != "" {
		head = append(head, l)
	}
	if s.HeldBack > 0 {
		head = append(head, MembersText(HeldBack(p))+" held back")
	}
	upgrade := views.Plural(s.Upgrade, "server")
	if d := DevicesToUpgrade(p); d > 0 {
		// Devices are counted with the servers in the plan file's summary.
		upgrade = views.Plural(s.Upgrade-d, "server") + " and " + views.Plural(d, "device")
	}
	line := fmt.Sprintf("%s to upgrade in %s, %d skipped, ~%s",
		upgrade, views.Plural(s.Racks, "rack"), s.Skip, Duration(s.Estimate))
	if s.SharedUpdates > 0 {
		line += fmt.Sprintf(" (%s of shared BMC components, each once)", views.Plural(s.SharedUpdates, "update"))
	}
	if len(head) > 0 {
		return strings.Join(head, "; ") + "; " + line
	}
	return line
}

// NotObservedLine is "7 of 40 servers not observed: 5 unreachable, 2
// credentials refused", or "" when every server was observed. A cause
// this rackform has no words for (a newer plugin's) is still counted.
func NotObservedLine(p *plan.Plan) string {
	s := p.Summary
	if s.NotObserved == 0 {
		return ""
	}
	// Devices are counted against the devices, servers against the
	// servers; a plan of servers only reads as it always did.
	total, noun := s.Upgrade+s.Skip, "servers"
	devices, unseen := 0, 0
	for i := range p.Servers {
		if sv := &p.Servers[i]; sv.IsDevice() {
			devices++
			if sv.Action == plan.ActionSkip && plan.NotObserved(sv.Reason) {
				unseen++
			}
		}
	}
	switch {
	case devices == 0:
	case unseen == 0:
		total -= devices
	case unseen == s.NotObserved:
		total, noun = devices, "devices"
	default:
		noun = "servers and devices"
	}
	return fmt.Sprintf("%d of %d %s not observed: %s", s.NotObserved, total, noun, plan.CauseCounts(p.NotObservedBy()))
}

// MembersText counts servers for people, devices apart: "3 servers", "1
// device", "2 servers and 1 device".
func MembersText(list []*plan.Server) string {
	devices := 0
	for _, s := range list {
		if s.IsDevice() {
			devices++
		}
	}
	return Members(len(list)-devices, devices)
}

// Members is MembersText of so many servers and devices.
func Members(servers, devices int) string {
	switch {
	case devices == 0:
		return views.Plural(servers, "server")
	case servers == 0:
		return views.Plural(devices, "device")
	}
	return views.Plural(servers, "server") + " and " + views.Plural(devices, "device")
}

// Unobserved groups the servers not observed by cause, in report order:
// cause text and addresses.
func Unobserved(p *plan.Plan) [][2]string {
	by := map[string][]string{}
	for _, s := range NotObservedServers(p) {
		by[s.Reason] = append(by[s.Reason], s.Address)
	}
	var out [][2]string
	for _, c := range plan.CausesInOrder(by) {
		out = append(out, [2]string{fmt.Sprintf("%d %s", len(by[c]), plan.CauseWords(c)), strings.Join(by[c], ", ")})
	}
	return out
}

// Where lists the servers (and devices) of p that is is true of, in plan
// order.
func Where(p *plan.Plan, is func(*plan.Server) bool) []*plan.Server {
	var out []*plan.Server
	for i := range p.Servers {
		if is(&p.Servers[i]) {
			out = append(out, &p.Servers[i])
		}
	}
	return out
}

// HeldBack lists the servers (and devices) held back, in plan order.
func HeldBack(p *plan.Plan) []*plan.Server {
	return Where(p, func(s *plan.Server) bool { return s.Reason == plan.ReasonHeldBack })
}

// NotObservedServers lists the servers (and devices) plan could not
// observe, in plan order.
func NotObservedServers(p *plan.Plan) []*plan.Server {
	return Where(p, func(s *plan.Server) bool { return s.Action == plan.ActionSkip && plan.NotObserved(s.Reason) })
}

// Addresses lists the servers' addresses: "a, b, c".
func Addresses(list []*plan.Server) string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.Address
	}
	return strings.Join(out, ", ")
}

// ChangeText is one change for people: "bios 2.70 → 2.80", with how many
// members move when the rule selects several ("gpu 96.00.61.00.01 →
// 96.00.89.00.01 (8 members)", "(6 of 8 members)"), marked when it is a
// downgrade, or a change between versions that are neither older nor
// newer (the opaque scheme).
func ChangeText(c plan.Change) string {
	s := fmt.Sprintf("%s %s → %s", c.Component, c.From, c.To)
	switch {
	case c.Moving > 0 && c.Moving < c.Members:
		s += fmt.Sprintf(" (%d of %d members)", c.Moving, c.Members)
	case c.Members > 1:
		s += fmt.Sprintf(" (%d members)", c.Members)
	}
	switch {
	case c.Downgrade:
		s += " (downgrade)"
	case c.Unordered:
		s += " (change, not an upgrade)"
	}
	switch {
	case c.FlashedBy != "":
		s += " (shared by the BMC, flashed once by " + c.FlashedBy + ")"
	case c.Shared:
		s += " (shared by the BMC, flashed once here)"
	}
	return s
}

// Reasons for people, by plan reason code.
var reasons = map[string]string{
	plan.ReasonAtTarget:    "already at target",
	plan.ReasonUnreachable: "not observed: unreachable",
	plan.ReasonUnhealthy:   "unhealthy",
	plan.ReasonExcluded:    "excluded",
	plan.ReasonOutOfScope:  "out of scope",

	plan.ReasonCredentialsRefused:   "not observed: credentials refused",
	plan.ReasonInventoryUnavailable: "not observed: inventory unavailable",
	plan.ReasonSystemUnresolved:     "not observed: system unresolved",
	plan.ReasonUnusableAnswer:       "not observed: answered without what the plan needs",
	plan.ReasonHeldBack:             "held back",
	plan.ReasonSharedElsewhere:      "only shared components, flashed by another server on its BMC",
}

// ReasonText is a skip reason for people.
func ReasonText(r string) string {
	if t, ok := reasons[r]; ok {
		return t
	}
	return strings.ReplaceAll(r, "_", " ")
}

// PhaseTitle names a phase for people.
func PhaseTitle(ph *plan.Phase) string {
	switch ph.Kind {
	case plan.PhaseControlPlane:
		return "Control plane"
	case plan.PhaseManagement:
		return "Management"
	case plan.PhaseCompute:
		return "Compute"
	case plan.PhaseDevices:
		return "Devices"
	}
	if ph.Name != "" {
		return "Stage " + ph.Name
	}
	return string(ph.Kind)
}

// ScopeTitle names a scope: "rack r01", "group A batch 1", "control plane".
func ScopeTitle(sc *plan.Scope) string {
	if sc.Kind == "rack" {
		return "rack " + sc.Name
	}
	return sc.Name
}

// ScopeRule states a scope's resolved numbers in one phrase.
func ScopeRule(sc *plan.Scope) string {
	var parts []string
	if sc.Eligible == 0 {
		parts = append(parts, "nothing to upgrade (skipped)")
	} else {
		parts = append(parts, fmt.Sprintf("%d of %d must succeed (threshold %s)", sc.Required, sc.Eligible, thresholdText(sc.Threshold)))
		parts = append(parts, fmt.Sprintf("%d may fail", sc.Budget))
		if sc.MaxUnavailable == 1 {
			parts = append(parts, "one at a time")
		} else {
			parts = append(parts, fmt.Sprintf("%d at a time", sc.MaxUnavailable))
		}
		parts = append(parts, "on breach "+sc.OnBreach)
	}
	if sc.WaitAfter > 0 {
		parts = append(parts, "then wait "+Duration(sc.WaitAfter))
	}
	if sc.PauseAfter {
		parts = append(parts, "then pause until `rackform continue`")
	}
	return strings.Join(parts, ", ")
}

// ServerDetail is what happens to a server, after its address.
func ServerDetail(s *plan.Server) string {
	kind := ""
	if s.IsDevice() {
		kind = KindText(s) + ": "
	}
	if s.Action != plan.ActionUpgrade {
		out := kind + "skip: " + ReasonText(s.Reason)
		if len(s.Problems) > 0 {
			out += " (" + strings.Join(s.Problems, "; ") + ")"
		}
		return out
	}
	changes := make([]string, len(s.Changes))
	for i, c := range s.Changes {
		changes[i] = ChangeText(c)
	}
	if s.IsDevice() {
		// A device has no host: nothing reboots, nothing is drained.
		return fmt.Sprintf("%s%s (no host steps, ~%s)", kind, strings.Join(changes, ", "), Duration(s.Estimate))
	}
	return fmt.Sprintf("%s (%s, ~%s)", strings.Join(changes, ", "), views.Plural(s.Reboots, "reboot"), Duration(s.Estimate))
}

// KindText names a device's kind for people ("switch tray"), "" for a
// server.
func KindText(s *plan.Server) string { return strings.ReplaceAll(s.Kind, "_", " ") }

// DevicesToUpgrade counts the devices (rack members that are not
// servers) the plan upgrades.
func DevicesToUpgrade(p *plan.Plan) int {
	return len(Where(p, func(s *plan.Server) bool { return s.IsDevice() && s.Action == plan.ActionUpgrade }))
}

// windowText describes a cluster's window for people.
func windowText(c *plan.Cluster) string {
	switch c.WindowPriority {
	case "open":
		return "window open now"
	case "opening":
		return "window opens within 4h"
	case "closed":
		return "window closed"
	}
	return "no window"
}

// Delivery says how one update step reaches its BMC, as plan recorded it:
// "simple_update HTTPS, targets /redfish/v1/Systems/1, sha256 ab12…", or
// "" for a plan that recorded nothing (before format 1.3).
func Delivery(st plan.Step) string {
	var parts []string
	if st.Method != "" && st.Method != "auto" && st.Method != "reimage" {
		m := st.Method
		if st.TransferProtocol != "" {
			m += " " + st.TransferProtocol
		}
		parts = append(parts, m)
	}
	if len(st.Targets) > 0 {
		parts = append(parts, "targets "+targetsText(st.Targets))
	}
	if at := ApplyTimeText(st); at != "" {
		parts = append(parts, at)
	}
	if st.SHA256 != "" {
		parts = append(parts, "sha256 "+st.SHA256)
	}
	if st.Shared && len(st.After) > 0 {
		verb := "is"
		if len(st.After) > 1 {
			verb = "are"
		}
		parts = append(parts, "once "+strings.Join(st.After, ", ")+" "+verb+" shut down (shared by the BMC)")
	}
	return strings.Join(parts, ", ")
}

// targetsText lists Targets, several in one collection written once:
// "/redfish/v1/UpdateService/FirmwareInventory/{HGX_FW_GPU_SXM_1,
// HGX_FW_GPU_SXM_2}".
func targetsText(targets []string) string {
	dir := path.Dir(targets[0])
	for _, t := range targets[1:] {
		if path.Dir(t) != dir {
			return strings.Join(targets, ", ")
		}
	}
	if len(targets) == 1 || dir == "." || dir == "/" {
		return strings.Join(targets, ", ")
	}
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = path.Base(t)
	}
	return dir + "/{" + strings.Join(names, ", ") + "}"
}

// ApplyTimeText says which apply time an update sends, as plan chose it
// from what the BMC lists: "apply time OnReset", or "no apply time (the
// BMC lists no apply times for simple_update; …)"; "" for plans before
// format 1.5, which sent the component's without asking.
func ApplyTimeText(st plan.Step) string {
	switch {
	case st.ApplyTimeFrom == "":
		return ""
	case st.ApplyTime != "":
		return "apply time " + st.ApplyTime
	}
	return "no apply time (" + strings.TrimPrefix(st.ApplyTimeFrom, "not sent: ") + ")"
}

// MembersLine lists the inventory members a changing component's rule
// selects on s, as plan read them: the ones that run with their versions,
// then the copies beside them that are not compared ("bios:
// Installed-159-1.8.2__BIOS.Setup.1-1 1.8.2; not compared:
// Previous-159-1.2.4__BIOS.Setup.1-1 1.2.4 previous"). "" when the rule
// selects one member that runs (nothing to add) or the plan recorded no
// states (before format 1.5).
func MembersLine(s *plan.Server, st plan.Step) string {
	if st.Match == nil {
		return ""
	}
	all := st.Match.Members(s.Observed.Components)
	var active, others []providers.Component
	states := false
	for _, c := range all {
		states = states || c.State != ""
		if c.IsActive() {
			active = append(active, c)
		} else {
			others = append(others, c)
		}
	}
	if !states || (len(active) <= 1 && len(others) == 0) {
		return ""
	}
	line := st.Component + ": " + providers.MembersText(active)
	if len(active) > 1 {
		line = fmt.Sprintf("%s: %d members, %s", st.Component, len(active), providers.MembersText(active))
	}
	if len(others) > 0 {
		line += "; not compared: " + providers.MembersText(others)
	}
	return line
}

// versionSource names where the BMC reported the version a step changes
// when that is not its firmware inventory (a BMC without one): the System's
// BiosVersion or the Manager's FirmwareVersion; "" otherwise.
func versionSource(s *plan.Server, st plan.Step) string {
	if st.Match == nil {
		return ""
	}
	c, ok := st.Match.Find(s.Observed.Components)
	if !ok {
		return ""
	}
	switch c.Source {
	case providers.SourceSystem:
		return "ComputerSystem.BiosVersion"
	case providers.SourceManager:
		return "Manager.FirmwareVersion"
	}
	return ""
}

// IdentityText names who a server is, as plan recorded it, or "".
func IdentityText(s *plan.Server) string {
	id := s.Identity
	var parts []string
	if id.Manufacturer != "" || id.Model != "" {
		parts = append(parts, strings.TrimSpace(id.Manufacturer+" "+id.Model))
	}
	if id.SerialNumber != "" {
		parts = append(parts, "serial "+id.SerialNumber)
	}
	if id.UUID != "" {
		parts = append(parts, "uuid "+id.UUID)
	}
	if s.Observed.System != "" {
		parts = append(parts, "system "+s.Observed.System)
	}
	return strings.Join(parts, ", ")
}

// ServerLines are the details under a server's line: who it is, how each
// image reaches its BMC, and its notes. Plans before format 1.3 record
// none of these, so their rendering is unchanged.
func ServerLines(s *plan.Server) []string {
	var out []string
	if s.UpgradeWhenCritical != nil && s.Action == plan.ActionUpgrade {
		out = append(out, "upgraded although its BMC reports health Critical: "+s.UpgradeWhenCritical.Reason)
	}
	if id := IdentityText(s); id != "" && s.Action == plan.ActionUpgrade {
		out = append(out, "identity: "+id)
	}
	if s.Auth == providers.AuthBasic && s.Action == plan.ActionUpgrade {
		out = append(out, "auth: Basic (the BMC refused a session or has none, and took Basic authentication)")
	}
	read := map[string]bool{}
	for _, st := range s.Steps {
		if !st.IsFlash() || read[st.Component] {
			continue
		}
		read[st.Component] = true
		if l := MembersLine(s, st); l != "" {
			out = append(out, "members of "+l)
		}
	}
	for _, st := range s.Steps {
		if !st.IsFlash() {
			continue
		}
		d := Delivery(st)
		if from := versionSource(s, st); from != "" {
			if d != "" {
				d += ", "
			}
			d += "version read from " + from
		}
		if d != "" {
			out = append(out, string(st.Kind)+" "+st.Component+": "+d)
		}
	}
	for _, n := range s.Notes {
		out = append(out, "note: "+n)
	}
	return out
}
