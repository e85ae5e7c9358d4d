package rehearsal

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"

	"github.com/rackform/rackform/internal/regularfile"
	"github.com/rackform/rackform/planner/plan"
)

// Scenario is a fault scenario as written (docs/rehearsal.md): faults of
// named servers, racks or clusters, and random faults by step kind. Parse
// it, then Resolve it against the servers of a plan.
type Scenario struct {
	// Name is the file name it was read from.
	Name        string
	Description string
	faults      []*faultBlock
	random      *randomBlock
	files       map[string]*hcl.File
}

// Fault kinds a scenario names (fault "KIND" { … }).
const (
	// FaultNeverReady: every boot of the server ends with the host off and
	// health Critical: it never comes back (wait_ready times out, then
	// remediation, then it fails).
	FaultNeverReady = "never_ready"
	// FaultUpdateFails: its update tasks end in Exception (only those of
	// component, when set).
	FaultUpdateFails = "update_fails"
	// FaultSlow: its steps of the kinds in steps (default: update) take
	// factor times their estimate.
	FaultSlow = "slow"
	// FaultBMCBusy: its BMC answers 503 Service Unavailable from at, for
	// for (default: for good).
	FaultBMCBusy = "bmc_busy"
	// FaultBMCDown: its BMC stops answering at at, for for (default: for
	// good).
	FaultBMCDown = "bmc_down"
	// FaultHostDown: the host goes down (off, health Critical) at at, for
	// for (default: for good): a control-plane member lost mid-run.
	FaultHostDown = "host_down"
	// FaultReadOnlyFS: a read-only root filesystem: on, health Critical,
	// from at, or from its first boot of the rehearsal when at is not set,
	// for for (default: for good).
	FaultReadOnlyFS = "read_only_filesystem"
	// FaultUnknownState: on, but no health at all, likewise.
	FaultUnknownState = "unknown_state"
)

// FaultKinds lists the kinds in the order the documentation gives them.
func FaultKinds() []string {
	return []string{FaultNeverReady, FaultUpdateFails, FaultSlow, FaultBMCBusy, FaultBMCDown, FaultHostDown, FaultReadOnlyFS, FaultUnknownState}
}

// StepKinds are the kinds a random block and slow's steps name.
func StepKinds() []string {
	return []string{"drain", "shutdown", "update", "reimage", "reset", "power_on", "wait_ready", "uncordon"}
}

type scenarioFile struct {
	Description string         `hcl:"description,optional"`
	Faults      []*faultBlock  `hcl:"fault,block"`
	Random      []*randomBlock `hcl:"random,block"`
}

type faultBlock struct {
	Kind      string         `hcl:"kind,label"`
	Servers   hcl.Expression `hcl:"servers,optional"`
	Racks     hcl.Expression `hcl:"racks,optional"`
	Clusters  hcl.Expression `hcl:"clusters,optional"`
	Roles     *[]string      `hcl:"roles,optional"`
	Component *string        `hcl:"component,optional"`
	Factor    *float64       `hcl:"factor,optional"`
	Steps     *[]string      `hcl:"steps,optional"`
	At        *string        `hcl:"at,optional"`
	For       *string        `hcl:"for,optional"`

	KindRange hcl.Range `hcl:"kind,label_range"`
	DefRange  hcl.Range `hcl:",def_range"`
	// Attrs are its attributes' ranges, for messages.
	Attrs map[string]hcl.Range
}

type randomBlock struct {
	Fail     *map[string]float64 `hcl:"fail,optional"`
	Slow     *map[string]float64 `hcl:"slow,optional"`
	Factor   *float64            `hcl:"factor,optional"`
	DefRange hcl.Range           `hcl:",def_range"`
	Body     hcl.Body            `hcl:",body"`
}

// ScenarioLimit bounds a scenario file: real ones are a few KB, and
// parsing HCL takes a hundred times a file's size in memory or more.
var ScenarioLimit = regularfile.Limit{Bytes: 1 << 20, What: "a scenario"}

// LoadScenario reads and parses a scenario file: a regular file (not a
// FIFO, which would block, nor a device such as /dev/zero, which would be
// read forever) of at most ScenarioLimit, nested no deeper than
// regularfile.MaxDepth, all checked before it is parsed.
func LoadScenario(path string) (*Scenario, hcl.Diagnostics) {
	src, err := regularfile.Read(path, ScenarioLimit)
	if err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read the scenario", Detail: fmt.Sprintf("The scenario file %s cannot be read: %v.", path, err)}}
	}
	return ParseScenario(src, path)
}

// ParseScenario parses a scenario's HCL: its syntax, the fault kinds and
// which attributes each takes, durations and probabilities. Names of
// servers, racks, clusters and components are checked by Resolve, against
// a plan. A scenario nested deeper than regularfile.MaxDepth is refused
// before it is parsed: HCL's parser would overflow the stack.
func ParseScenario(src []byte, filename string) (*Scenario, hcl.Diagnostics) {
	if err := regularfile.CheckDepth(filename, src, regularfile.HCL, regularfile.MaxDepth); err != nil {
		return &Scenario{Name: filename}, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Scenario nested too deeply", Detail: err.Error() + "."}}
	}
	p := hclparse.NewParser()
	f, diags := p.ParseHCL(src, filename)
	s := &Scenario{Name: filename, files: p.Files()}
	if diags.HasErrors() {
		return s, diags
	}
	var raw scenarioFile
	diags = append(diags, gohcl.DecodeBody(f.Body, nil, &raw)...)
	s.Description, s.faults = raw.Description, raw.Faults
	if len(raw.Random) > 1 {
		diags = append(diags, errorAt(&raw.Random[1].DefRange, "Duplicate random block", "A scenario has at most one random block; put every step kind's probability in it."))
	}
	if len(raw.Random) > 0 {
		s.random = raw.Random[0]
		diags = append(diags, s.random.check()...)
	}
	// Attribute ranges for the messages below.
	content, _, _ := f.Body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "fault", LabelNames: []string{"kind"}}}})
	for i, b := range content.Blocks {
		if i >= len(s.faults) {
			break
		}
		attrs, _ := b.Body.JustAttributes()
		s.faults[i].Attrs = map[string]hcl.Range{}
		for name, a := range attrs {
			s.faults[i].Attrs[name] = a.Range
		}
	}
	for _, fb := range s.faults {
		diags = append(diags, fb.check()...)
	}
	return s, diags
}

// Files are the parsed files, for rendering diagnostics with snippets.
func (s *Scenario) Files() map[string]*hcl.File {
	if s == nil {
		return nil
	}
	return s.files
}

// roles a fault's roles may name.
var roles = []string{"control_plane", "control_plane_spare", "management", "compute"}

// which attributes each kind takes, besides the selectors.
var kindAttrs = map[string][]string{
	FaultNeverReady:   {},
	FaultUpdateFails:  {"component"},
	FaultSlow:         {"factor", "steps", "component"},
	FaultBMCBusy:      {"at", "for"},
	FaultBMCDown:      {"at", "for"},
	FaultHostDown:     {"at", "for"},
	FaultReadOnlyFS:   {"at", "for"},
	FaultUnknownState: {"at", "for"},
}

func (fb *faultBlock) rng(attr string) *hcl.Range {
	if r, ok := fb.Attrs[attr]; ok {
		return &r
	}
	return &fb.DefRange
}

func (fb *faultBlock) check() hcl.Diagnostics {
	var diags hcl.Diagnostics
	takes, ok := kindAttrs[fb.Kind]
	if !ok {
		return hcl.Diagnostics{errorAt(&fb.KindRange, "Unknown fault kind", "There is no fault %q; a fault is one of %s.", fb.Kind, strings.Join(FaultKinds(), ", "))}
	}
	set := map[string]bool{"component": fb.Component != nil, "factor": fb.Factor != nil, "steps": fb.Steps != nil, "at": fb.At != nil, "for": fb.For != nil}
	for _, name := range []string{"component", "factor", "steps", "at", "for"} {
		if set[name] && !slices.Contains(takes, name) {
			diags = append(diags, errorAt(fb.rng(name), "Attribute not used by this fault", "A %s fault has no %s.%s", fb.Kind, name, takesText(fb.Kind, takes)))
		}
	}
	if !exprSet(fb.Servers) && !exprSet(fb.Racks) && !exprSet(fb.Clusters) {
		diags = append(diags, errorAt(&fb.DefRange, "Fault without servers", "Say which servers the %s fault hits: servers (addresses such as \"east/e01/e01-s3\"), racks (\"east/e01\") or clusters (\"east\"), narrowed by roles if need be.", fb.Kind))
	}
	if fb.Roles != nil {
		for _, r := range *fb.Roles {
			if !slices.Contains(roles, r) {
				diags = append(diags, errorAt(fb.rng("roles"), "Unknown role", "roles names %q; a role is one of %s.", r, strings.Join(roles, ", ")))
			}
		}
	}
	if fb.Kind == FaultSlow {
		if fb.Factor == nil {
			diags = append(diags, errorAt(&fb.DefRange, "Missing factor", "A slow fault needs factor: how many times its estimate each step takes (e.g. 3)."))
		} else if *fb.Factor <= 0 || *fb.Factor > 1000 {
			diags = append(diags, errorAt(fb.rng("factor"), "Invalid factor", "factor is %v; it must be above 0 and at most 1000.", *fb.Factor))
		}
		if fb.Steps != nil {
			for _, k := range *fb.Steps {
				if !slices.Contains(StepKinds(), k) {
					diags = append(diags, errorAt(fb.rng("steps"), "Unknown step kind", "steps names %q; a step kind is one of %s.", k, strings.Join(StepKinds(), ", ")))
				}
			}
		}
	}
	if fb.For != nil {
		if d, err := time.ParseDuration(*fb.For); err != nil || d <= 0 {
			diags = append(diags, errorAt(fb.rng("for"), "Invalid duration", "for is %q; it must be a positive Go duration such as \"20m\" or \"2h30m\".", *fb.For))
		}
	}
	if fb.At != nil {
		if _, _, err := parseAt(*fb.At); err != nil {
			diags = append(diags, errorAt(fb.rng("at"), "Invalid time", "at is %q; %s.", *fb.At, err))
		}
	}
	return diags
}

func takesText(kind string, takes []string) string {
	if len(takes) == 0 {
		return " It takes only servers, racks, clusters and roles."
	}
	return fmt.Sprintf(" It takes servers, racks, clusters and roles, and %s.", strings.Join(takes, ", "))
}

// parseAt reads at: an offset from the rehearsal's start ("2h30m") or an
// RFC 3339 time.
func parseAt(s string) (time.Duration, time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return 0, time.Time{}, fmt.Errorf("an offset from the start cannot be negative")
		}
		return d, time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return 0, t, nil
	}
	return 0, time.Time{}, fmt.Errorf("it must be an offset from the rehearsal's start (a Go duration such as \"2h30m\") or an RFC 3339 time (\"2026-07-06T23:00:00Z\")")
}

func exprSet(e hcl.Expression) bool {
	if e == nil {
		return false
	}
	// An optional attribute that is absent decodes to a null expression.
	v, diags := e.Value(nil)
	return diags.HasErrors() || !v.IsNull()
}

func (rb *randomBlock) check() hcl.Diagnostics {
	var diags hcl.Diagnostics
	attrs, _ := rb.Body.JustAttributes()
	rangeOf := func(name string) *hcl.Range {
		if a, ok := attrs[name]; ok {
			return &a.Range
		}
		return &rb.DefRange
	}
	for _, m := range []struct {
		name string
		v    *map[string]float64
	}{{"fail", rb.Fail}, {"slow", rb.Slow}} {
		if m.v == nil {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(*m.v)) {
			p := (*m.v)[k]
			if !slices.Contains(StepKinds(), k) {
				diags = append(diags, errorAt(rangeOf(m.name), "Unknown step kind", "%s names %q; a step kind is one of %s.", m.name, k, strings.Join(StepKinds(), ", ")))
			} else if p < 0 || p > 1 {
				diags = append(diags, errorAt(rangeOf(m.name), "Invalid probability", "%s.%s is %v; a probability is between 0 and 1.", m.name, k, p))
			}
		}
	}
	switch {
	case rb.Slow != nil && rb.Factor == nil:
		diags = append(diags, errorAt(&rb.DefRange, "Missing factor", "The random block's slow needs factor: how many times its estimate a slow step takes (e.g. 3)."))
	case rb.Factor != nil && (*rb.Factor <= 0 || *rb.Factor > 1000):
		diags = append(diags, errorAt(rangeOf("factor"), "Invalid factor", "factor is %v; it must be above 0 and at most 1000.", *rb.Factor))
	}
	return diags
}

// Target is a server a scenario may name: its address
// (cluster/rack/name), and the components its plan updates (for checking
// a fault's component; nil: not checked).
type Target struct {
	Address, Name, Cluster, Rack string
	// Role is its role (control_plane, management, compute…): a fault's
	// roles narrow what its selectors hit.
	Role string
	// BMC is its BMC's URL: servers on one BMC share its faults (busy,
	// down).
	BMC        string
	Components []string
}

// Fault is one resolved fault of one server.
type Fault struct {
	Server string
	Kind   string
	// Component limits update_fails and slow to one component ("": all).
	Component string
	// Factor and Steps are slow's.
	Factor float64
	Steps  []string
	// At is when it starts (zero: from the start; for read_only_filesystem
	// and unknown_state, from the server's first boot); For how long it
	// lasts (0: for good).
	At  time.Time
	For time.Duration
	// Range is where the scenario declares it.
	Range hcl.Range
}

// Random is the scenario's random faults: by step kind, the probability
// that a step fails (Fail) or takes Factor times its estimate (Slow).
type Random struct {
	Fail, Slow map[string]float64
	Factor     float64
}

// Faults is a scenario resolved against one plan's servers.
type Faults struct {
	// List holds every fault, by server in the targets' order, then in
	// the scenario's order.
	List   []Fault
	Random Random
	// Name is the scenario's file name ("" for none).
	Name string
}

// Resolve checks a scenario's names against the servers of a plan and
// resolves every fault to the servers it hits, at times from start.
func (s *Scenario) Resolve(targets []Target, start time.Time) (*Faults, hcl.Diagnostics) {
	out := &Faults{Name: s.Name}
	var diags hcl.Diagnostics
	byAddr := map[string]int{}
	byName := map[string][]int{}
	racks := map[string][]int{}
	clusters := map[string][]int{}
	comps := map[string]bool{}
	checkComps := false
	for i, t := range targets {
		byAddr[t.Address] = i
		byName[t.Name] = append(byName[t.Name], i)
		racks[t.Cluster+"/"+t.Rack] = append(racks[t.Cluster+"/"+t.Rack], i)
		clusters[t.Cluster] = append(clusters[t.Cluster], i)
		for _, c := range t.Components {
			comps[c], checkComps = true, true
		}
	}
	per := make([][]Fault, len(targets))
	total := 0
	for _, fb := range s.faults {
		if _, ok := kindAttrs[fb.Kind]; !ok {
			continue // reported by ParseScenario
		}
		hit := map[int]bool{}
		pick := func(expr hcl.Expression, what string, find func(string) []int) {
			names, d := stringList(expr, what)
			diags = append(diags, d...)
			for _, n := range names {
				idx := find(n.value)
				if len(idx) == 0 {
					diags = append(diags, errorAt(n.rng.Ptr(), "Unknown "+what, "%s", notFound(what, n.value)))
				}
				for _, i := range idx {
					hit[i] = true
				}
			}
		}
		pick(fb.Servers, "server", func(n string) []int {
			if i, ok := byAddr[n]; ok {
				return []int{i}
			}
			if l := byName[n]; len(l) == 1 {
				return l
			}
			return nil
		})
		pick(fb.Racks, "rack", func(n string) []int { return racks[n] })
		pick(fb.Clusters, "cluster", func(n string) []int { return clusters[n] })
		if fb.Roles != nil {
			for i := range hit {
				if !slices.Contains(*fb.Roles, targets[i].Role) {
					delete(hit, i)
				}
			}
		}
		if total += len(hit); total > MaxFaults {
			diags = append(diags, errorAt(&fb.DefRange, "Too many faults", "With this fault the scenario gives the plan's servers more than %d faults, the most a rehearsal takes (each costs memory and time at every step of its server); say each fault once, for the servers, racks or clusters it hits.", MaxFaults))
			return &Faults{Name: s.Name}, diags
		}
		f := Fault{Kind: fb.Kind, Range: fb.DefRange, Factor: 1}
		if fb.Component != nil {
			f.Component = *fb.Component
			if checkComps && !comps[f.Component] {
				diags = append(diags, errorAt(fb.rng("component"), "Unknown component", "The plan updates no component %q on any server; it updates %s.", f.Component, strings.Join(slices.Sorted(maps.Keys(comps)), ", ")))
			}
		}
		if fb.Factor != nil {
			f.Factor = *fb.Factor
		}
		if fb.Kind == FaultSlow {
			f.Steps = []string{"update"}
			if fb.Steps != nil {
				f.Steps = *fb.Steps
			}
		}
		if fb.At != nil {
			if off, at, err := parseAt(*fb.At); err == nil {
				if at.IsZero() {
					at = start.Add(off)
				}
				f.At = at
			}
		}
		if fb.For != nil {
			f.For, _ = time.ParseDuration(*fb.For)
		}
		if !f.At.IsZero() && f.At.Before(start) {
			f.At = start
		}
		if (fb.Kind == FaultBMCBusy || fb.Kind == FaultBMCDown || fb.Kind == FaultHostDown) && f.At.IsZero() {
			f.At = start
		}
		for i := range targets {
			if hit[i] {
				g := f
				g.Server = targets[i].Address
				per[i] = append(per[i], g)
			}
		}
	}
	for _, l := range per {
		out.List = append(out.List, l...)
	}
	if s.random != nil {
		if s.random.Fail != nil {
			out.Random.Fail = *s.random.Fail
		}
		if s.random.Slow != nil {
			out.Random.Slow = *s.random.Slow
		}
		if s.random.Factor != nil {
			out.Random.Factor = *s.random.Factor
		}
	}
	return out, diags
}

// MaxFaults bounds the faults a scenario resolves to (a fault block
// counts once per server it hits): a million is far beyond any scenario
// worth rehearsing, and what a rehearsal holds in about 200 MB.
const MaxFaults = 1_000_000

func notFound(what, name string) string {
	switch what {
	case "server":
		return fmt.Sprintf("The plan has no server %q. Name servers by address, cluster/rack/name (\"east/e01/e01-s3\"), or by a name no other server has.", name)
	case "rack":
		return fmt.Sprintf("The plan has no rack %q. Name racks as cluster/rack (\"east/e01\").", name)
	}
	return fmt.Sprintf("The plan has no cluster %q.", name)
}

type named struct {
	value string
	rng   hcl.Range
}

// stringList evaluates a list of strings, keeping each element's range.
func stringList(expr hcl.Expression, what string) ([]named, hcl.Diagnostics) {
	if !exprSet(expr) {
		return nil, nil
	}
	elems, diags := hcl.ExprList(expr)
	if diags.HasErrors() {
		return nil, hcl.Diagnostics{errorAt(expr.Range().Ptr(), "Invalid "+what+"s", "%ss must be a list of strings, e.g. [\"a\", \"b\"].", what)}
	}
	var out []named
	for _, e := range elems {
		v, d := e.Value(nil)
		if d.HasErrors() || v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
			diags = append(diags, errorAt(e.Range().Ptr(), "Invalid "+what, "Each of %ss is a string.", what))
			continue
		}
		out = append(out, named{v.AsString(), e.Range()})
	}
	return out, diags
}

// PlanTargets are the servers of a plan a scenario may name, with the
// components each one's steps update or reimage.
func PlanTargets(p *plan.Plan) []Target {
	out := make([]Target, 0, len(p.Servers))
	for _, s := range p.Servers {
		t := Target{Address: s.Address, Name: s.Name, Cluster: s.Cluster, Rack: s.Rack, Role: s.Role, BMC: s.BMC, Components: []string{}}
		for _, st := range s.Steps {
			if st.Component != "" && !slices.Contains(t.Components, st.Component) {
				t.Components = append(t.Components, st.Component)
			}
		}
		out = append(out, t)
	}
	return out
}

// errorAt is an error in the scenario file at subject.
func errorAt(subject *hcl.Range, summary, format string, args ...any) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: subject}
}
