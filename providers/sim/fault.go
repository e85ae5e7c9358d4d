package sim

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"
)

// FaultKind names a misbehaviour a BMC can be given.
type FaultKind string

// The fault kinds. Request faults (latency, timeout, error, busy, malformed)
// hit requests; the others change how the BMC behaves.
const (
	FaultNone FaultKind = ""
	// FaultLatency adds Fault.Latency to every response.
	FaultLatency FaultKind = "latency"
	// FaultTimeout accepts the request and never answers, until the client
	// gives up, Fault.Latency (default 2 minutes) passes, or the fleet closes.
	FaultTimeout FaultKind = "timeout"
	// FaultError answers 500 Internal Server Error with a Redfish error body.
	FaultError FaultKind = "error"
	// FaultBusy answers 503 Service Unavailable with Retry-After
	// (Fault.Latency rounded to seconds, default 1).
	FaultBusy FaultKind = "busy"
	// FaultMalformed answers 200 with a body that is not JSON.
	FaultMalformed FaultKind = "malformed"
	// FaultSessionLimit caps the BMC's sessions at Fault.Limit (0: none can
	// be created); creating one more answers 503 with a Base message.
	FaultSessionLimit FaultKind = "session-limit"
	// FaultTaskFail makes every update task end in Exception.
	FaultTaskFail FaultKind = "task-fail"
	// FaultTaskHang makes every update task stay Running forever.
	FaultTaskHang FaultKind = "task-hang"
	// FaultNoReturn makes the server stay Off with Health Critical after its
	// next host reset.
	FaultNoReturn FaultKind = "no-return"
	// FaultIgnoreGraceful makes GracefulShutdown/GracefulRestart do nothing
	// (an OS that ignores ACPI), so only ForceOff stops the server.
	FaultIgnoreGraceful FaultKind = "ignore-graceful"

	// The remediation triggers of rack resiliency, as a BMC shows them.
	// They hold until cleared; clearing them returns the health to what
	// the BMC started with (OK unless its spec says otherwise).

	// FaultProvisioning: provisioning does not finish: every host boot
	// ends with the host Off and Health Critical while the fault holds
	// (no-return that lasts until cleared). After it is cleared, the
	// health is back and the next boot comes up.
	FaultProvisioning FaultKind = "provisioning"
	// FaultReadOnlyFS: a running node stuck with a read-only root
	// filesystem: the host stays On and reports Health Critical.
	FaultReadOnlyFS FaultKind = "read-only-fs"
	// FaultUnknownState: the node's state is Unknown: the host stays On
	// and reports no Health at all.
	FaultUnknownState FaultKind = "unknown-state"

	// FaultUpdateOffline: the UpdateService takes no update. It reports
	// Status.State Fault.State (default UnavailableOffline, as a GPU
	// tray's does; Disabled also reports ServiceEnabled false), and
	// refuses SimpleUpdate and pushes with 503 ServiceDisabled.
	FaultUpdateOffline FaultKind = "update-offline"
)

// FaultKinds lists every kind, for flag help and validation.
func FaultKinds() []FaultKind {
	return []FaultKind{FaultLatency, FaultTimeout, FaultError, FaultBusy, FaultMalformed, FaultSessionLimit, FaultTaskFail, FaultTaskHang, FaultNoReturn, FaultIgnoreGraceful,
		FaultProvisioning, FaultReadOnlyFS, FaultUnknownState, FaultDown, FaultHostDown, FaultSlow, FaultBMCRestartDuringUpdate, FaultUpdateOffline}
}

func (k FaultKind) request() bool {
	switch k {
	case FaultTimeout, FaultError, FaultBusy, FaultMalformed:
		return true
	}
	return false
}

// Fault is one injected misbehaviour of one BMC.
type Fault struct {
	Kind FaultKind `json:"kind"`
	// Latency is the delay for latency, the hold time for timeout, and the
	// Retry-After for busy (real time).
	Latency time.Duration `json:"latency,omitempty"`
	// Count limits the fault to its next Count uses, after which it clears
	// itself: requests for request faults and latency, tasks for task-fail,
	// task-hang and bmc-restart-during-update, boots for no-return,
	// graceful requests for ignore-graceful, session creations for
	// session-limit. 0 means for good. Request faults hit every path, the
	// open service root included.
	Count int `json:"count,omitempty"`
	// Limit is the session limit for session-limit.
	Limit int `json:"limit,omitempty"`
	// Took says, for bmc-restart-during-update, that the flash was done
	// before the BMC restarted (the component shows its new version);
	// false: it was not (the old version stays).
	Took bool `json:"took,omitempty"`
	// State is the UpdateService's Status.State for update-offline (""
	// is UnavailableOffline).
	State string `json:"state,omitempty"`
	// DropsStaged says, for bmc-restart-during-update, that the restart
	// also discards the images staged for the next host reset.
	DropsStaged bool `json:"drops_staged,omitempty"`
	// The rest is for faults of a scenario (fault_timed.go): when the
	// fault holds, what it is limited to, how slow.
	Timed
}

func (ft Fault) validate() error {
	switch {
	case ft.Kind == FaultNone:
		return nil
	case !slices.Contains(FaultKinds(), ft.Kind):
		return fmt.Errorf("unknown fault kind %q", ft.Kind)
	case ft.Count < 0 || ft.Limit < 0 || ft.Latency < 0 || ft.Factor < 0:
		return fmt.Errorf("fault %s: negative argument", ft.Kind)
	}
	return nil
}

// ParseFault parses KIND[:ARG], the -fault flag's form: ARG is a duration for
// latency, timeout and busy (e.g. latency:50ms), the session count for
// session-limit, a request count for error and malformed (error:3 fails
// the next three requests), and for bmc-restart-during-update whether the
// flash took and how many updates it hits (took, lost:1; restart.go).
func ParseFault(s string) (Fault, error) {
	kind, arg, hasArg := strings.Cut(s, ":")
	ft := Fault{Kind: FaultKind(kind)}
	if err := ft.validate(); err != nil || ft.Kind == FaultNone {
		return Fault{}, fmt.Errorf("unknown fault kind %q (want one of %s)", kind, kindList())
	}
	if ft.Kind == FaultBMCRestartDuringUpdate {
		return parseRestartArg(ft, arg, hasArg) // restart.go
	}
	if ft.Kind == FaultUpdateOffline {
		if hasArg && !slices.Contains(offlineStates, arg) {
			return Fault{}, fmt.Errorf("fault %s: state %q is not one of %s", kind, arg, strings.Join(offlineStates, ", "))
		}
		ft.State = arg
		return ft, nil
	}
	if !hasArg {
		if ft.Kind == FaultSlow {
			return Fault{}, fmt.Errorf("fault %s takes a factor (slow:3: three times as long)", kind)
		}
		return ft, nil
	}
	switch ft.Kind {
	case FaultLatency, FaultTimeout, FaultBusy:
		d, err := time.ParseDuration(arg)
		if err != nil || d < 0 {
			return Fault{}, fmt.Errorf("fault %s: argument %q is not a duration", kind, arg)
		}
		ft.Latency = d
	case FaultSlow:
		f, err := strconv.ParseFloat(arg, 64)
		if err != nil || f <= 0 {
			return Fault{}, fmt.Errorf("fault %s: argument %q is not a factor above 0", kind, arg)
		}
		ft.Factor = f
	case FaultSessionLimit, FaultError, FaultMalformed:
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 {
			return Fault{}, fmt.Errorf("fault %s: argument %q is not a count", kind, arg)
		}
		if ft.Kind == FaultSessionLimit {
			ft.Limit = n
		} else {
			ft.Count = n
		}
	default:
		return Fault{}, fmt.Errorf("fault %s takes no argument", kind)
	}
	return ft, nil
}

func kindList() string {
	var names []string
	for _, k := range FaultKinds() {
		names = append(names, string(k))
	}
	return strings.Join(names, ", ")
}

// FaultRate injects faults by probability, deterministically from Seed:
// for request faults (timeout, error, busy, malformed) each request of each
// BMC fails with probability P, decided by a hash of (seed, kind, BMC name,
// the BMC's request number); for the other kinds a fraction P of the BMCs
// (chosen by a hash of seed, kind and name) has the fault for good. The same
// seed and request order give the same faults.
type FaultRate struct {
	Seed  uint64                `json:"seed"`
	Rates map[FaultKind]float64 `json:"rates"`
	// Fault carries the arguments (latency, limit) of rate-injected faults.
	Args map[FaultKind]Fault `json:"args,omitempty"`
}

// roll returns a number in [0,1) from the seed and parts.
func roll(seed uint64, parts ...string) float64 {
	h := fnv.New64a()
	var b [8]byte
	for i := range b {
		b[i] = byte(seed >> (8 * i))
	}
	h.Write(b[:])
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	// fnv's low bits mix poorly for short inputs; a finaliser spreads them.
	x := h.Sum64()
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return float64(x>>11) / (1 << 53)
}

// baseHealth is the health the BMC started with.
func (hp *hostPower) baseHealth() string {
	if hp.specHealth == "" {
		return "OK"
	}
	return hp.specHealth
}

// syncConditions sets the health the condition faults show, on every
// system behind the BMC: Critical
// for a read-only root filesystem, none for an Unknown state; with
// neither, and no boot fault (provisioning, no-return) holding, the
// health is what the BMC started with, so a cleared fault leaves the
// server healthy again.
func (hp *hostPower) syncConditions() {
	if hp.hostDownSync() {
		return
	}
	for _, h := range hp.hosts {
		switch {
		case hp.faults.has(FaultReadOnlyFS):
			h.health = "Critical"
		case hp.faults.has(FaultUnknownState):
			h.health = ""
		case hp.faults.has(FaultProvisioning) || hp.faults.has(FaultNoReturn) || hp.fleet.faultRate().Rates[FaultNoReturn] > 0:
			// As the last boot left it.
		default:
			h.health = hp.baseHealth()
		}
	}
}

// faultSet is the faults of one BMC: those set on it (SetFault, a
// scenario's) and the fleet's rate it draws others from. Its BMC's mu is
// held for every method.
type faultSet struct {
	fleet *Fleet
	name  string // the BMC's, seeding the rate's draws
	list  []Fault
}

// set injects ft, replacing any fault of the same kind and the same Timed
// (a scenario's spells and components are kept apart); a Fault with Kind
// FaultNone clears them all.
func (fs *faultSet) set(ft Fault) {
	if ft.Kind == FaultNone {
		fs.list = nil
		return
	}
	same := func(o Fault) bool { return o.Kind == ft.Kind && o.Timed == ft.Timed }
	fs.list = append(slices.DeleteFunc(slices.Clone(fs.list), same), ft)
}

// take returns the fault of kind k that applies to the BMC now (set on the
// BMC, or drawn from the fleet's rate), consuming one use of a counted
// fault. reqNo identifies the request for request faults.
func (fs *faultSet) take(k FaultKind, reqNo uint64) (Fault, bool) {
	if k == FaultNoReturn {
		// Asked when a host boot ends: provisioning that does not finish
		// fails the boot like no-return, for as long as it holds.
		if fs.has(FaultProvisioning) {
			return Fault{Kind: FaultProvisioning}, true
		}
	}
	// One limited to a component is forComponent's.
	if ft, ok := fs.use(k, func(ft Fault) bool { return ft.Component == "" }); ok {
		return ft, true
	}
	r := fs.fleet.faultRate()
	p := r.Rates[k]
	if p <= 0 {
		return Fault{}, false
	}
	var x float64
	if k.request() {
		x = roll(r.Seed, string(k), fs.name, strconv.FormatUint(reqNo, 10))
	} else {
		x = roll(r.Seed, string(k), fs.name)
	}
	if x >= p {
		return Fault{}, false
	}
	ft := r.Args[k]
	ft.Kind = k
	ft.Count = 0
	return ft, true
}

// has reports whether kind k is set on the BMC, without using it.
func (fs *faultSet) has(k FaultKind) bool {
	return slices.ContainsFunc(fs.list, func(ft Fault) bool { return ft.Kind == k && fs.holds(ft) })
}

// updateOffline is the Status.State the UpdateService reports under
// update-offline (set on the BMC or drawn from the fleet's rate), or ""
// when it takes updates.
func (fs *faultSet) updateOffline() string {
	ft, ok := fs.take(FaultUpdateOffline, 0)
	switch {
	case !ok:
		return ""
	case ft.State == "":
		return "UnavailableOffline"
	}
	return ft.State
}

// offlineStates are the states update-offline can report: Redfish's for
// a resource that is off or not there.
var offlineStates = []string{"UnavailableOffline", "StandbyOffline", "Disabled", "Absent"}
