package config

import (
	"slices"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/rackform/rackform/config/version"
)

// SourceFile is one file as read, kept byte for byte so the planner can
// snapshot the exact source into the plan file.
type SourceFile struct {
	// Name is, in Config.Files, the path used in diagnostics (as given to
	// Load, joined); in Config.DataFiles, the path as written in file() or
	// templatefile(), cleaned, slash-separated and relative to Config.Dir.
	Name  string
	Bytes []byte
}

// Variable is a declared input variable and its resolved value.
type Variable struct {
	Name        string
	Description string
	Type        cty.Type
	Default     cty.Value // cty.NilVal when there is no default
	Sensitive   bool
	Nullable    bool
	// Value is the resolved value, unmarked; never render it when Sensitive.
	Value cty.Value
	// Source says where Value came from: "default", "env", "var-file FILE", "-var".
	Source    string
	DeclRange hcl.Range
}

// Provider is a provider block. Its schema belongs to the plugin, so the
// attributes are kept as evaluated values.
type Provider struct {
	Name string
	// Attrs is an object of every attribute, unmarked. The names of
	// attributes whose values are sensitive (derived from env() or a
	// sensitive variable) are in SensitiveAttrs; those values must be
	// passed to the plugin but never rendered or stored in a plan.
	Attrs          cty.Value
	SensitiveAttrs []string
	DeclRange      hcl.Range
	// PasswordFrom says where the password attribute's value comes from,
	// for messages about it (a BMC refused an empty password): `variable
	// "bmc_password" (set by RACKFORM_VAR_bmc_password)`, `env("X")`; ""
	// for anything else.
	PasswordFrom string

	// passwordExpr is the password attribute's expression, nil without
	// one: a password that is not sensitive is reported at it, in words
	// that say where its value comes from.
	passwordExpr hcl.Expression
}

// IsSensitive reports whether attribute name holds a sensitive value.
func (p *Provider) IsSensitive(name string) bool { return slices.Contains(p.SensitiveAttrs, name) }

// Release is a named, versioned bundle of component targets.
type Release struct {
	Name    string
	Version version.Version
	Scheme  version.Scheme
	// Pattern is the version_pattern of the pattern scheme, else "".
	Pattern        string
	AllowDowngrade bool
	// UpgradeFrom lists the versions this release is expected to be
	// applied on top of; each is checked against the minor-skip rule.
	UpgradeFrom []version.Version
	// upgradeFromRanges are the ranges of the UpgradeFrom elements.
	upgradeFromRanges []hcl.Range
	Components        []*Component
	DeclRange         hcl.Range
	// VersionRange is the range of the version attribute value.
	VersionRange hcl.Range

	// Minor is the minor line a catalog entry belongs to ("4.6"): its
	// minor attribute, else its version's major.minor. "" for a release
	// block outside a catalog.
	Minor string
	// Sites are where a catalog entry is available (mirrors and approvals
	// roll out by site or region); empty means everywhere.
	Sites []string
	// InCatalog marks a release that is a catalog entry.
	InCatalog bool
}

// AvailableAt reports whether the release is available at site: a
// release without sites is available everywhere, a cluster without a site
// sees only releases available everywhere.
func (r *Release) AvailableAt(site string) bool {
	return len(r.Sites) == 0 || slices.Contains(r.Sites, site)
}

// Runtime returns the release's runtime component, or nil.
func (r *Release) Runtime() *Component {
	for _, c := range r.Components {
		if c.Kind == KindRuntime {
			return c
		}
	}
	return nil
}

// Component kinds.
const (
	KindFirmware = "firmware"
	KindRuntime  = "runtime"
)

// Update methods of a component (method) and of a server (update_method).
const (
	// MethodAuto lets the provider choose from what each BMC advertises;
	// the default for firmware.
	MethodAuto = "auto"
	// MethodSimpleUpdate is Redfish SimpleUpdate: the BMC pulls the image.
	MethodSimpleUpdate = "simple_update"
	// MethodHTTPPush POSTs the image to the UpdateService's HttpPushUri.
	MethodHTTPPush = "http_push"
	// MethodMultipartPush POSTs it to MultipartHttpPushUri.
	MethodMultipartPush = "multipart_push"
	// MethodPush is either push method, whichever the BMC offers (the
	// provider picks).
	MethodPush = "push"
	// MethodReimage installs a runtime image through virtual media; the
	// default for the runtime.
	MethodReimage = "reimage"
)

// ComponentMethods are the values of a component's method.
var ComponentMethods = []string{MethodAuto, MethodSimpleUpdate, MethodHTTPPush, MethodMultipartPush, MethodPush, MethodReimage}

// ServerMethods are the values of a server's update_method: a component
// method for delivering firmware images, not reimage.
var ServerMethods = []string{MethodAuto, MethodSimpleUpdate, MethodHTTPPush, MethodMultipartPush, MethodPush}

// Apply times, as Redfish spells them (@Redfish.OperationApplyTime).
const (
	ApplyImmediate                  = "Immediate"
	ApplyOnReset                    = "OnReset"
	ApplyAtMaintenanceWindowStart   = "AtMaintenanceWindowStart"
	ApplyInMaintenanceWindowOnReset = "InMaintenanceWindowOnReset"
)

// Component is a target for one updatable thing on a server.
type Component struct {
	// Name is the block label ("bios").
	Name    string
	Match   Match
	Version version.Version
	Scheme  version.Scheme
	// Pattern is the version_pattern of the pattern scheme, else "".
	Pattern string
	Image   string
	// SHA256 is the image's SHA-256 digest (64 lowercase hex digits), or
	// "" when the configuration gives none.
	SHA256    string
	ApplyTime string
	Reboot    bool
	// Method is a Method* constant: how the image reaches the BMC.
	Method         string
	Kind           string
	AllowDowngrade bool
	// AllowChange lets an opaque component (scheme "opaque"), whose
	// versions are only equal or different, move to its target: a change,
	// neither an upgrade nor a downgrade. Without it a differing opaque
	// version is a plan error.
	AllowChange bool
	// Devices are the device kinds the component is for (its devices
	// attribute); none: it is for servers (Component.For).
	Devices []string
	// Release is the release this component belongs to.
	Release   *Release
	DeclRange hcl.Range
}

// Match identifies a component in a BMC's FirmwareInventory; exactly one
// of SoftwareID, ID and Name is set. Name is a glob (path.Match syntax).
// The rule means every active member it selects (eight GPUs of one
// SoftwareId are eight members).
type Match struct {
	SoftwareID string
	ID         string
	Name       string
	// Count, when not 0, is how many active members the rule must select
	// on every server: another number is a plan error naming the server.
	Count int
}

// Catalog lists the release versions known to exist and, for channels,
// the releases the organisation publishes with where each is available.
type Catalog struct {
	// Releases are the versions known to exist: the releases attribute
	// and every entry's version (the minor-skip rule reads them).
	Releases []version.Version
	// Entries are the published releases: release blocks inside the
	// catalog block, then those of its source file, in that order.
	Entries []*Release
	// Source is the source attribute as written ("catalog.json",
	// "file:///srv/catalog.json", "https://…"), "" when none; CAFile the
	// ca_file for an https source. The source's bytes are recorded as a
	// data file (Config.DataFiles) under SourceName, so a plan carries
	// them and apply never reads the source again.
	Source     string
	SourceName string
	CAFile     string
	DeclRange  hcl.Range
}

// Entry returns the catalog entry with version v (scheme-aware), or nil.
func (c *Catalog) Entry(v version.Version) *Release {
	if c == nil {
		return nil
	}
	for _, e := range c.Entries {
		if version.Equal(e.Version, v) {
			return e
		}
	}
	return nil
}

// Threshold is a success threshold of a scope.
type Threshold struct {
	// Type is "count" or "percent".
	Type  string
	Value int
	// Range is the range of the value (or the block when defaulted).
	Range hcl.Range
}

// Required returns how many successes out of n eligible servers the
// threshold needs (rule 9): ⌈v·n/100⌉ for percent, v for count.
func (t Threshold) Required(n int) int {
	if t.Type == "percent" {
		return (t.Value*n + 99) / 100
	}
	return t.Value
}

// Quantity is a count or a percentage, as in max_unavailable or
// failure_budget ("2" or "25%").
type Quantity struct {
	Value   int
	Percent bool
	// Unset is true when the attribute was absent (meaning "the default").
	Unset bool
	Range hcl.Range
}

// Resolve returns the quantity for a scope of n servers: a percentage is
// ⌊p·n/100⌋ (at least minimum).
func (q Quantity) Resolve(n, minimum int) int {
	v := q.Value
	if q.Percent {
		v = q.Value * n / 100
	}
	return max(v, minimum)
}

// Hook is a command run around a server's upgrade (drain, uncordon).
type Hook struct {
	Command   []string
	Timeout   time.Duration
	DeclRange hcl.Range
}

// Remediation is how often a server of one role may be rebooted or
// reimaged when it does not come back healthy (rule 30).
type Remediation struct {
	Reboots  int
	Reimages int
}

// ScopeSettings are the threshold settings of a rack, batch or stage.
type ScopeSettings struct {
	Threshold     Threshold
	FailureBudget Quantity
	// OnBreach is "pause" or "fail".
	OnBreach string
}

// ControlPlaneSettings configure the control-plane phase. Servers always go
// one at a time, spare first (rule 4); that is not configurable.
type ControlPlaneSettings struct {
	OnBreach      string
	VerifyTimeout time.Duration
	Remediation   Remediation
	// AllowQuorumLoss lets a plan take the control plane's healthy members
	// below quorum (an explicit override the plan shows prominently).
	AllowQuorumLoss bool
	// SpareTakeover lets the upgraded spare take the place of a member that
	// is down or fails, through the provider/hook takeover step.
	SpareTakeover bool
	// TakeoverHook is the argv run to bring the spare in (the platform's
	// own action, e.g. a BMM replace); empty: the takeover is recorded only.
	TakeoverHook []string
}

// ManagementSettings configure the management phase (rule 5).
type ManagementSettings struct {
	ScopeSettings
	// Groups is the number of rack-alternating groups (default 2).
	Groups int
	// Batches is the number of batches per group (default 2).
	Batches       int
	VerifyTimeout time.Duration
	Remediation   Remediation
}

// ComputeSettings configure the compute phase (rules 6, 7, 16, 17).
type ComputeSettings struct {
	ScopeSettings
	// Order is "alphanumeric" (byte-wise) or "natural".
	Order          string
	MaxUnavailable Quantity
	WaitAfterRack  time.Duration
	PauseAfterRack bool
	// CanaryRack, when set, is upgraded first, then the others in Order.
	CanaryRack    string
	VerifyTimeout time.Duration
	Remediation   Remediation
}

// StrategyStage is a generic stage of a custom strategy: the servers it
// selects are upgraded in batches of BatchSize. When a strategy declares
// stages, they run in declared order instead of the default phases.
type StrategyStage struct {
	Name string
	// Roles, Racks and Labels select servers; an empty selector selects all.
	Roles  []string
	Racks  []string
	Labels map[string]string
	ScopeSettings
	BatchSize  Quantity
	WaitAfter  time.Duration
	PauseAfter bool
	DeclRange  hcl.Range
}

// Selects reports whether the stage's selectors (roles, racks, labels)
// match sv; an empty selector matches every server.
func (stg *StrategyStage) Selects(sv *Server) bool {
	if len(stg.Roles) > 0 && !slices.Contains(stg.Roles, sv.Role) {
		return false
	}
	if len(stg.Racks) > 0 && !slices.Contains(stg.Racks, sv.Rack.Name) {
		return false
	}
	for k, v := range stg.Labels {
		if sv.Labels[k] != v {
			return false
		}
	}
	return true
}

// StageMembers places servers in st's stages: each goes to the first
// stage whose selectors match it, in servers' order; rest are those no
// stage selects. Devices go in a phase of their own, in no stage.
// Validation and the planner both place servers with it.
func (st *Strategy) StageMembers(servers []*Server) (stages [][]*Server, rest []*Server) {
	stages = make([][]*Server, len(st.Stages))
next:
	for _, sv := range servers {
		if sv.IsDevice() {
			continue
		}
		for i, stg := range st.Stages {
			if stg.Selects(sv) {
				stages[i] = append(stages[i], sv)
				continue next
			}
		}
		rest = append(rest, sv)
	}
	return stages, rest
}

// Batches cuts servers, a stage's servers but its control-plane ones
// (which go one at a time), into batches of batch_size in order, the last
// batch holding the rest.
func (stg *StrategyStage) Batches(servers []*Server) [][]*Server {
	size := stg.BatchSize.Resolve(len(servers), 1)
	var out [][]*Server
	for len(servers) > 0 {
		k := min(size, len(servers))
		out = append(out, servers[:k])
		servers = servers[k:]
	}
	return out
}

// Strategy is how one cluster is upgraded.
type Strategy struct {
	Name string
	// Implicit is true for the built-in default used by clusters without a
	// strategy attribute.
	Implicit        bool
	DrainTimeout    time.Duration
	ShutdownTimeout time.Duration
	VerifyTimeout   time.Duration
	// OnUnreachable is what plan does with a server it cannot observe or
	// that reports unhealthy: OnUnreachableSkip plans it as skipped (with a
	// warning), OnUnreachableBlock fails the plan. Never dropped silently.
	OnUnreachable string
	Drain         *Hook
	Uncordon      *Hook
	ControlPlane  ControlPlaneSettings
	Management    ManagementSettings
	Compute       ComputeSettings
	Stages        []*StrategyStage
	DeclRange     hcl.Range

	// ExceedSeedLimits opts out of the seed's bounds on drain (20m) and
	// VM shutdown (10m); the plan then warns.
	ExceedSeedLimits bool
	// Triggers are the remediation triggers' durations (rack resiliency).
	Triggers RemediationTriggers
	// Devices is where the cluster's devices go: DevicesBeforeServers or
	// DevicesAfterServers, a phase of their own, rack by rack with the
	// compute phase's order, thresholds, waits and pauses.
	Devices string
}

// Server roles.
const (
	RoleControlPlane      = "control_plane"
	RoleControlPlaneSpare = "control_plane_spare"
	RoleManagement        = "management"
	RoleCompute           = "compute"
)

// Roles lists every valid role.
var Roles = []string{RoleControlPlane, RoleControlPlaneSpare, RoleManagement, RoleCompute}

// IsControlPlane reports whether sv is a control-plane server, a spare
// included: those go one at a time (rule 4).
func (sv *Server) IsControlPlane() bool {
	return sv.Role == RoleControlPlane || sv.Role == RoleControlPlaneSpare
}

// Cluster is a cluster with its racks in declared order.
type Cluster struct {
	Name              string
	Strategy          *Strategy
	Release           *Release
	MaintenanceWindow *MaintenanceWindow
	Provider          *Provider
	Labels            map[string]string
	// Site is where the cluster is (a site or region name), which decides
	// the catalog releases available to it; "" when not set.
	Site      string
	Racks     []*Rack
	DeclRange hcl.Range
}

// Servers returns the cluster's servers in declared order.
func (c *Cluster) Servers() []*Server {
	var out []*Server
	for _, r := range c.Racks {
		out = append(out, r.Servers...)
	}
	return out
}

// ControlPlane returns the cluster's control_plane servers and its
// control_plane_spare servers, in declared order.
func (c *Cluster) ControlPlane() (members, spares []*Server) {
	for _, sv := range c.Servers() {
		switch sv.Role {
		case RoleControlPlane:
			members = append(members, sv)
		case RoleControlPlaneSpare:
			spares = append(spares, sv)
		}
	}
	return members, spares
}

// Rack returns the rack named name, or nil.
func (c *Cluster) Rack(name string) *Rack {
	return find(c.Racks, name, func(r *Rack) string { return r.Name })
}

// Rack is a rack with its servers in declared order.
type Rack struct {
	Name              string
	Cluster           *Cluster
	Labels            map[string]string
	MaintenanceWindow *MaintenanceWindow
	Servers           []*Server
	// DeclRange is the rack block (for generated racks, the block that
	// generated it).
	DeclRange hcl.Range
}

// Server is one machine with one BMC.
type Server struct {
	Name    string
	Cluster *Cluster
	Rack    *Rack
	// BMC is the validated BMC URL ("https://127.1.1.1:8443").
	BMC      string
	Role     string
	NodeName string
	Labels   map[string]string
	// MaintenanceWindow is the server's own window, else its rack's, else
	// its cluster's; nil when none applies.
	MaintenanceWindow *MaintenanceWindow
	// Credentials are the server's own; nil means the provider's.
	Credentials *Credentials
	// System names the ComputerSystem this server is behind a BMC that
	// serves several (Id or UUID); "" when the BMC serves one.
	System string
	// UpdateMethod overrides the components' method for this server's
	// firmware (a ServerMethods value); "" keeps each component's.
	UpdateMethod string
	// UpgradeWhenCritical, when set, lets plan upgrade the server although
	// its BMC reports health Critical (firmware is often the fix for the
	// fault), for the reason it gives; nil holds such a server back.
	UpgradeWhenCritical *CriticalOverride
	// Kind is the device kind (DeviceKinds) of a rack member declared with
	// a device block, whose Role is RoleDevice; "" for a server.
	Kind      string
	DeclRange hcl.Range
	// BMCRange and RoleRange point at the attribute values, for planner
	// diagnostics about this server.
	BMCRange  hcl.Range
	RoleRange hcl.Range
}

// CriticalOverride is a server's upgrade_when_critical: the reviewed
// reason for upgrading it although its BMC reports health Critical.
type CriticalOverride struct {
	// Reason is the attribute's text (never empty): why, and the ticket.
	Reason string
	// Range is the attribute's value, for the plan's messages.
	Range hcl.Range
}

// Credentials are a BMC login. Values derived from env() or a sensitive
// variable are Secret; fmt and JSON never print them.
type Credentials struct {
	Username Secret
	Password Secret
	// PasswordFrom says where Password comes from, for messages (see
	// Provider.PasswordFrom).
	PasswordFrom string
}

// Secret holds a credential value; String, GoString and MarshalJSON redact
// it when it is sensitive so it cannot leak through logs or plan files.
type Secret struct {
	value     string
	sensitive bool
}

// NewSecret returns a Secret holding v.
func NewSecret(v string, sensitive bool) Secret { return Secret{value: v, sensitive: sensitive} }

// Reveal returns the value, for handing to a provider.
func (s Secret) Reveal() string { return s.value }

// Sensitive reports whether the value came from a sensitive source.
func (s Secret) Sensitive() bool { return s.sensitive }

// String redacts a sensitive value.
func (s Secret) String() string {
	if s.sensitive {
		return "(sensitive value)"
	}
	return s.value
}

// GoString redacts like String, so %#v cannot leak either.
func (s Secret) GoString() string { return s.String() }

// MarshalJSON redacts like String.
func (s Secret) MarshalJSON() ([]byte, error) {
	return []byte(quote(s.String())), nil
}

// Upgrade scopes of a rollout.
const (
	ScopeFull             = "full"
	ScopeControlPlaneOnly = "control_plane_only"
	ScopeFirmwareOnly     = "firmware_only"
)

// Rollout is a Fleet-style update run over clusters.
type Rollout struct {
	Name string
	// Implicit is true for the rollout made when none is declared.
	Implicit  bool
	Scope     string
	Stages    []*Stage
	DeclRange hcl.Range

	// Channel, when set, selects each cluster's release from the catalog
	// instead of its release attribute: ChannelStable, ChannelRapid or
	// ChannelFirmware. ImageSelection is SelectLatest or SelectConsistent.
	Channel        string
	ImageSelection string
	// AllowMultiHop lets a cluster more than one minor behind its channel
	// be planned to the intermediate minor's newest release (one minor
	// per run) instead of failing the plan.
	AllowMultiHop bool
	ChannelRange  hcl.Range
}

// Clusters are the rollout's clusters in declared order, stage by stage,
// group by group (a cluster in two groups, an error, twice).
func (ro *Rollout) Clusters() []*Cluster {
	var out []*Cluster
	for _, st := range ro.Stages {
		for _, g := range st.Groups {
			out = append(out, g.Clusters...)
		}
	}
	return out
}

// Channels of a rollout (the Fleet auto-upgrade channels).
const (
	// ChannelStable is the latest patch of minor N-1, N the newest minor.
	ChannelStable = "stable"
	// ChannelRapid is the latest patch of the newest minor.
	ChannelRapid = "rapid"
	// ChannelFirmware moves firmware only: the latest patch of the minor
	// each cluster runs, firmware components only (scope firmware_only).
	ChannelFirmware = "firmware"
)

// Image selections of a channel rollout.
const (
	// SelectLatest: the newest candidate available at each cluster's site.
	SelectLatest = "latest"
	// SelectConsistent: the newest candidate available at every site of
	// the run's clusters, fixed when the run is planned.
	SelectConsistent = "consistent"
)

// Stage is a rollout stage; its groups run in parallel.
type Stage struct {
	Name           string
	AfterStageWait time.Duration
	Approvals      []*Approval
	Groups         []*Group
	DeclRange      hcl.Range
}

// Approval is a gate before or after a stage.
type Approval struct {
	Name        string
	When        string // "before" or "after"
	Description string
	DeclRange   hcl.Range
}

// Group is a set of clusters upgraded one after another.
type Group struct {
	Name      string
	Clusters  []*Cluster
	DeclRange hcl.Range
}
