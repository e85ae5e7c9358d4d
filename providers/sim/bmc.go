package sim

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Power states as Redfish spells them.
const (
	powerOn          = "On"
	powerOff         = "Off"
	powerPoweringOn  = "PoweringOn"
	powerPoweringOff = "PoweringOff"
)

// maxTasks bounds the tasks a BMC remembers (real BMCs purge old ones too).
const maxTasks = 32

// Stats are one BMC's counters since the fleet started.
type Stats struct {
	Requests        int64 `json:"requests"`
	Errors          int64 `json:"errors"`         // responses with status >= 400
	MaxConcurrent   int   `json:"max_concurrent"` // most requests in flight at once
	SessionsOpen    int   `json:"sessions_open"`
	SessionsCreated int   `json:"sessions_created"`
	SessionsDeleted int   `json:"sessions_deleted"`
	SessionsRefused int   `json:"sessions_refused"` // refused at the session limit
	// Updates counts accepted update requests (SimpleUpdate or push), each
	// of which created a task.
	Updates int `json:"updates"`
	// PushBytes counts image bytes received by HttpPushUri/multipart push.
	PushBytes int64 `json:"push_bytes"`
	// Flashes counts completed flashes by component key.
	Flashes        map[string]int    `json:"flashes,omitempty"`
	TasksCompleted int               `json:"tasks_completed"`
	TasksFailed    int               `json:"tasks_failed"`
	Resets         int               `json:"resets"`     // accepted ComputerSystem.Reset actions
	Boots          int               `json:"boots"`      // host boots started
	BMCResets      int               `json:"bmc_resets"` // manager resets, requested or after a BMC flash
	Reimages       int               `json:"reimages"`   // runtime installs from virtual media
	FaultsInjected int               `json:"faults_injected"`
	PowerState     string            `json:"power_state"`
	Health         string            `json:"health"`
	Versions       map[string]string `json:"versions"`
}

type event struct {
	at time.Time
	fn func(at time.Time)
}

type session struct {
	id, token string
	lastUsed  time.Time
}

type pending struct {
	comp    int
	version string
}

type task struct {
	id         string
	comp       int // -1 when the image named no component
	version    string
	image      string
	start, end time.Time
	state      string // final state, or "" while it runs
	message    string
	hang       bool
	payload    taskPayload
}

// taskPayload is the request that created a task, as Task.Payload shows it.
type taskPayload struct {
	targetURI string
	jsonBody  string
}

// bmc is one simulated BMC and its server: compact state only; documents
// are rendered from the shared profile on each request.
type bmc struct {
	fleet *Fleet
	prof  *profile
	spec  BMCSpec
	ln    *bmcListener
	addr  string
	url   string

	mu       sync.Mutex
	events   []event // sorted by at
	power    string
	powerGen int
	health   string
	boot     struct{ target, enabled string }
	media    struct{ image string }
	versions []string // by prof.components index
	pending  []pending
	bmcDown  time.Time // unreachable until then
	sessions []*session
	nextSess int
	tasks    []*task
	nextTask int
	reqNo    uint64
	inflight int
	stats    Stats
	faults   []Fault
}

func newBMC(f *Fleet, s BMCSpec, p *profile) (*bmc, error) {
	b := &bmc{fleet: f, prof: p, spec: s, health: "OK", power: powerOff}
	if s.PowerOn {
		b.power = powerOn
	}
	switch s.Health {
	case "", "OK":
	case "Warning", "Critical":
		b.health = s.Health
	default:
		return nil, fmt.Errorf("BMC %s: health %q: want OK, Warning or Critical", s.Name, s.Health)
	}
	b.boot.target, b.boot.enabled = "None", "Disabled"
	b.versions = make([]string, len(p.components))
	for i, c := range p.components {
		b.versions[i] = c.version
	}
	for k, v := range s.Firmware {
		i, ok := p.component(k)
		if !ok {
			return nil, fmt.Errorf("BMC %s: unknown component %q (want BMC, BIOS, NIC, CPLD or Runtime)", s.Name, k)
		}
		b.versions[i] = v
	}
	b.spec.Firmware = nil // the versions slice holds them; keep per-BMC memory small
	return b, nil
}

// at schedules fn at time t. b.mu is held.
func (b *bmc) at(t time.Time, fn func(at time.Time)) {
	i := sort.Search(len(b.events), func(i int) bool { return b.events[i].at.After(t) })
	b.events = append(b.events, event{})
	copy(b.events[i+1:], b.events[i:])
	b.events[i] = event{at: t, fn: fn}
}

// advance runs every event due by now, in time order. Events see their own
// time, so chained events stay on the simulated timeline however late the
// request that triggers them arrives. b.mu is held.
func (b *bmc) advance(now time.Time) {
	for len(b.events) > 0 && !b.events[0].at.After(now) {
		ev := b.events[0]
		b.events = b.events[1:]
		ev.fn(ev.at)
	}
	if len(b.events) == 0 {
		b.events = nil
	}
}

func (b *bmc) after(t time.Time, d time.Duration) time.Time { return t.Add(b.fleet.scale(d)) }

func (b *bmc) down(now time.Time) bool { return now.Before(b.bmcDown) }

// hostBoot starts booting the host at t: pending versions apply and a
// reimage installs when the boot finishes.
func (b *bmc) hostBoot(t time.Time) {
	b.powerGen++
	gen := b.powerGen
	b.power = powerPoweringOn
	b.stats.Boots++
	d := b.fleet.timings.Boot
	reimage := ""
	if b.boot.target == "Cd" && b.boot.enabled != "Disabled" && b.media.image != "" {
		if comp, v, ok := parseImage(b.media.image); ok && comp == ComponentRuntime {
			reimage = v
			d += b.fleet.timings.Install
		}
	}
	if b.boot.enabled == "Once" {
		b.boot.target, b.boot.enabled = "None", "Disabled"
	}
	b.at(b.after(t, d), func(time.Time) {
		if b.powerGen != gen {
			return
		}
		if _, ok := b.faultFor(FaultNoReturn, 0); ok {
			b.power, b.health = powerOff, "Critical"
			return
		}
		b.power = powerOn
		keep := b.pending[:0]
		for _, p := range b.pending {
			b.versions[p.comp] = p.version
		}
		b.pending = keep[:0]
		if reimage != "" {
			i, _ := b.prof.component(ComponentRuntime)
			b.versions[i] = reimage
			b.stats.Reimages++
		}
	})
}

// shutdown powers the host off gracefully from t, then runs then (if set).
func (b *bmc) shutdown(t time.Time, then func(at time.Time)) {
	b.powerGen++
	gen := b.powerGen
	b.power = powerPoweringOff
	b.at(b.after(t, b.fleet.timings.Shutdown), func(at time.Time) {
		if b.powerGen != gen {
			return
		}
		b.power = powerOff
		if then != nil {
			then(at)
		}
	})
}

// resetTypes are the ComputerSystem.Reset types every profile accepts.
var resetTypes = []string{"On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart", "Nmi", "ForceOn", "PushPowerButton", "PowerCycle"}

// reset performs a ComputerSystem.Reset at now. b.mu is held.
func (b *bmc) reset(now time.Time, kind string) error {
	ignoreGraceful := func() bool {
		_, ok := b.faultFor(FaultIgnoreGraceful, 0)
		return ok
	}
	switch kind {
	case "On", "ForceOn":
		if b.power == powerOff || b.power == powerPoweringOff {
			b.hostBoot(now)
		}
	case "ForceOff":
		b.powerGen++
		b.power = powerOff
	case "GracefulShutdown":
		if b.power == powerOn && !ignoreGraceful() {
			b.shutdown(now, nil)
		}
	case "GracefulRestart":
		switch {
		case b.power == powerOff:
			b.hostBoot(now)
		case b.power == powerOn && !ignoreGraceful():
			b.shutdown(now, b.hostBoot)
		}
	case "ForceRestart", "PowerCycle":
		b.hostBoot(now)
	case "PushPowerButton":
		if b.power == powerOff {
			b.hostBoot(now)
		} else if b.power == powerOn && !ignoreGraceful() {
			b.shutdown(now, nil)
		}
	case "Nmi":
	default:
		return fmt.Errorf("ResetType %q is not one of %v", kind, resetTypes)
	}
	b.stats.Resets++
	return nil
}

// bmcReset makes the BMC unreachable from t for BMCResetTime; sessions are
// lost, and pending BMC versions apply when it is back.
func (b *bmc) bmcReset(t time.Time) {
	b.stats.BMCResets++
	b.bmcDown = b.after(t, b.fleet.timings.BMCReset)
	b.sessions = nil
	b.stats.SessionsOpen = 0
	b.at(b.bmcDown, func(time.Time) {
		keep := b.pending[:0]
		for _, p := range b.pending {
			if b.prof.components[p.comp].activation == activateBMC {
				b.versions[p.comp] = p.version
			} else {
				keep = append(keep, p)
			}
		}
		b.pending = keep
	})
}

// startTask creates an update task at now for image (with an optional
// inventory target) and apply time. b.mu is held.
func (b *bmc) startTask(now time.Time, image, target, applyTime string, payload taskPayload) *task {
	b.nextTask++
	t := &task{id: strconv.Itoa(b.nextTask), comp: -1, image: image, start: now, end: b.after(now, b.fleet.timings.Flash), payload: payload}
	comp, version, ok := parseImage(image)
	if target != "" {
		comp = ""
		for _, c := range b.prof.components {
			if b.prof.inventoryPath(c) == target {
				comp = c.key
			}
		}
		if comp == "" {
			t.message = fmt.Sprintf("Target %s is not an updateable inventory item.", target)
		}
	}
	if i, found := b.prof.component(comp); found && ok && !b.prof.components[i].software {
		t.comp, t.version = i, version
	} else if t.message == "" {
		t.message = fmt.Sprintf("The image %s does not apply to any component of this server (want <component>-<version>.bin, component one of BMC, BIOS, NIC, CPLD).", image)
	}
	b.stats.Updates++
	fail := t.comp < 0
	if _, ok := b.faultFor(FaultTaskFail, 0); ok {
		fail = true
		b.stats.FaultsInjected++
		if t.message == "" {
			t.message = "The firmware image failed verification (injected fault)."
		}
	}
	if _, ok := b.faultFor(FaultTaskHang, 0); ok {
		t.hang = true
		b.stats.FaultsInjected++
	}
	b.tasks = append(b.tasks, t)
	if len(b.tasks) > maxTasks {
		b.tasks = b.tasks[len(b.tasks)-maxTasks:]
	}
	if t.hang {
		return t
	}
	b.at(t.end, func(at time.Time) {
		if fail {
			t.state = "Exception"
			b.stats.TasksFailed++
			return
		}
		t.state = "Completed"
		b.stats.TasksCompleted++
		key := b.prof.components[t.comp].key
		if b.stats.Flashes == nil {
			b.stats.Flashes = map[string]int{}
		}
		b.stats.Flashes[key]++
		p := pending{t.comp, t.version}
		switch {
		case applyTime == "OnReset":
			b.pending = append(b.pending, p)
		case b.prof.components[t.comp].activation == activateNow:
			b.versions[t.comp] = t.version
		case b.prof.components[t.comp].activation == activateBMC:
			b.pending = append(b.pending, p)
			b.bmcReset(at)
		default:
			b.pending = append(b.pending, p)
		}
	})
	return t
}

// taskState is the task's state, percent and message at now.
func (t *task) status(now time.Time) (state string, percent int) {
	if t.state != "" {
		return t.state, 100
	}
	total := t.end.Sub(t.start)
	f := 0.0
	if total > 0 {
		f = float64(now.Sub(t.start)) / float64(total)
	}
	switch {
	case f < 0.03:
		return "New", 0
	case f < 0.08:
		return "Starting", 0
	case t.hang:
		return "Running", min(int(f*100), 42)
	default:
		return "Running", min(int(f*100), 99)
	}
}

func (b *bmc) task(id string) *task {
	for _, t := range b.tasks {
		if t.id == id {
			return t
		}
	}
	return nil
}

// newSession opens a session at now, or returns nil at the limit.
func (b *bmc) newSession(now time.Time) *session {
	timeout := b.fleet.timings.SessionTimeout
	live := b.sessions[:0]
	for _, s := range b.sessions {
		if now.Sub(s.lastUsed) < timeout {
			live = append(live, s)
		}
	}
	b.sessions = live
	limit := b.fleet.opts.SessionLimit
	if ft, ok := b.faultFor(FaultSessionLimit, 0); ok {
		limit = ft.Limit
	}
	if len(b.sessions) >= limit {
		b.stats.SessionsRefused++
		return nil
	}
	b.nextSess++
	var tok [16]byte
	_, _ = rand.Read(tok[:])
	s := &session{id: strconv.Itoa(b.nextSess), token: hex.EncodeToString(tok[:]), lastUsed: now}
	b.sessions = append(b.sessions, s)
	b.stats.SessionsCreated++
	return s
}

func (b *bmc) sessionByToken(tok string) *session {
	for _, s := range b.sessions {
		if s.token == tok {
			return s
		}
	}
	return nil
}

func (b *bmc) deleteSession(id string) bool {
	for i, s := range b.sessions {
		if s.id == id {
			b.sessions = append(b.sessions[:i:i], b.sessions[i+1:]...)
			b.stats.SessionsDeleted++
			return true
		}
	}
	return false
}

func (b *bmc) versionsNow() map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(b.fleet.opts.Now())
	return b.versionMap()
}

func (b *bmc) versionMap() map[string]string {
	out := make(map[string]string, len(b.versions))
	for i, c := range b.prof.components {
		out[c.key] = b.versions[i]
	}
	return out
}

func (b *bmc) snapshot() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(b.fleet.opts.Now())
	s := b.stats
	s.SessionsOpen = len(b.sessions)
	if s.Flashes != nil {
		s.Flashes = make(map[string]int, len(b.stats.Flashes))
		for k, v := range b.stats.Flashes {
			s.Flashes[k] = v
		}
	}
	s.PowerState, s.Health = b.power, b.health
	s.Versions = b.versionMap()
	return s
}

// bmcListener drops connections while the BMC is resetting, as a rebooting
// BMC refuses them.
type bmcListener struct {
	net.Listener
	b *bmc
}

func (l *bmcListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.b.mu.Lock()
		now := l.b.fleet.opts.Now()
		l.b.advance(now)
		down := l.b.down(now)
		l.b.mu.Unlock()
		if !down {
			return c, nil
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // a reset, like a port with nothing behind it
		}
		c.Close()
	}
}
