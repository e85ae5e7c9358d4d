package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Stats are one BMC's counters since the fleet started.
type Stats struct {
	Requests int64 `json:"requests"`
	// Connections counts the connections accepted (TLS handshakes with TLS).
	Connections     int64 `json:"connections"`
	Errors          int64 `json:"errors"`         // responses with status >= 400
	MaxConcurrent   int   `json:"max_concurrent"` // most requests in flight at once
	SessionsOpen    int   `json:"sessions_open"`
	SessionsCreated int   `json:"sessions_created"`
	SessionsDeleted int   `json:"sessions_deleted"`
	SessionsRefused int   `json:"sessions_refused"` // refused at the session limit
	// Updates counts accepted update requests (SimpleUpdate or push), each
	// of which created a task.
	Updates int `json:"updates"`
	// UpdatesLost counts update tasks lost to a BMC restart before they
	// ended (bmc-restart-during-update): each is also one of Updates.
	UpdatesLost int `json:"updates_lost"`
	// PushBytes counts image bytes received by HttpPushUri/multipart push.
	PushBytes int64 `json:"push_bytes"`
	// Flashes counts completed flashes by component key.
	Flashes map[string]int `json:"flashes,omitempty"`
	// MemberFlashes counts completed flashes by inventory member, named
	// by its stable Id (Dell's FQDD, not its version-bearing Id): 8 GPUs
	// of one key are 8 entries.
	MemberFlashes  map[string]int    `json:"member_flashes,omitempty"`
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
	// Systems is each system's state on a BMC with several (crayex), by
	// system Id; PowerState and Health above are then the first system's.
	Systems map[string]SystemStats `json:"systems,omitempty"`
}

// SystemStats is one system's state on a BMC with several.
type SystemStats struct {
	PowerState   string `json:"power_state"`
	Health       string `json:"health"`
	Boots        int    `json:"boots"`
	UUID         string `json:"uuid"`
	SerialNumber string `json:"serial_number"`
}

// bmc is one simulated BMC and its server(s): compact state only;
// documents are rendered from the shared profile on each request
// (render.go), and requests are served in server.go and update.go. Each
// part of its state is a type of its own, all guarded by mu: its
// timeline (timeline.go), firmware inventory (inventory.go, members.go),
// hosts' power (power.go), sessions (session.go), tasks (task.go) and
// faults (fault.go, fault_timed.go).
type bmc struct {
	fleet *Fleet
	prof  *profile
	// devHealth is a device's health (a profile with noSystems has no
	// host to hold it).
	devHealth string
	spec      BMCSpec
	ln        *bmcListener
	addr      string
	url       string

	uuid, serial string // the manager's and the enclosure's
	hosts        []*host

	mu       sync.Mutex
	clock    timeline  // what is scheduled, and the jitter of operations
	inv      inventory // the firmware: versions, staged, uploaded
	power    hostPower // the hosts' boots, shutdowns and resets
	bmcDown  time.Time // unreachable until then (restart.go)
	sessions sessionStore
	tasks    taskList
	faults   faultSet
	reqNo    uint64
	inflight int
	stats    Stats // the counters the parts above do not keep
}

func newBMC(f *Fleet, s BMCSpec, p *profile) (*bmc, error) {
	b := &bmc{fleet: f, prof: p, spec: s, clock: timeline{fleet: f, name: s.Name}, faults: faultSet{fleet: f, name: s.Name}}
	b.sessions = sessionStore{fleet: f, faults: &b.faults}
	health := "OK"
	switch s.Health {
	case "", "OK":
	case "Warning", "Critical":
		health = s.Health
	default:
		return nil, fmt.Errorf("BMC %s: health %q: want OK, Warning or Critical", s.Name, s.Health)
	}
	systems := s.Systems
	switch {
	case p.noSystems && len(systems) > 0:
		return nil, fmt.Errorf("BMC %s: profile %s is a device and serves no system, not %d", s.Name, p.name, len(systems))
	case p.noSystems:
		// A device: no host, and its health is the chassis'.
		b.devHealth = health
	case p.systemIDs == "" && len(systems) > 1:
		return nil, fmt.Errorf("BMC %s: profile %s serves one system, not %d (use profile %s for several)", s.Name, p.name, len(systems), ProfileCrayEX)
	case p.systemIDs != "" && len(systems) == 0:
		systems = []SystemSpec{{}, {}}
	case p.systemIDs != "" && (len(systems) < 2 || len(systems) > 4):
		return nil, fmt.Errorf("BMC %s: profile %s serves 2 to 4 systems, not %d", s.Name, p.name, len(systems))
	case len(systems) == 0:
		systems = []SystemSpec{{}}
	}
	seen := map[string]bool{}
	for i, ss := range systems {
		h := &host{idx: i, power: powerOff, health: health, name: ss.Name}
		if s.PowerOn {
			h.power = powerOn
		}
		h.boot.target, h.boot.enabled = "None", "Disabled"
		h.id = p.systemPath[strings.LastIndex(p.systemPath, "/")+1:]
		if p.systemIDs != "" {
			h.id = fmt.Sprintf(p.systemIDs, i)
		}
		if ss.ID != "" {
			if p.systemIDs == "" && ss.ID != h.id {
				return nil, fmt.Errorf("BMC %s: profile %s's system is %s, not %s", s.Name, p.name, h.id, ss.ID)
			}
			h.id = ss.ID
		}
		if seen[h.id] || strings.ContainsAny(h.id, "/?#") {
			return nil, fmt.Errorf("BMC %s: system Id %q is a duplicate or not a path segment", s.Name, h.id)
		}
		seen[h.id] = true
		if h.name == "" {
			h.name = s.Name
			if len(systems) > 1 {
				h.name = s.Name + "-" + h.id
			}
		}
		h.path = "/redfish/v1/Systems/" + h.id
		h.uuid = ss.UUID
		if h.uuid == "" {
			h.uuid = deterministicUUID(s.Name, "system", h.id)
		}
		h.serial = serialNumber(p.serialPrefix, s.Name, "system", h.id)
		if p.vmediaUnderSystem || i == 0 { // else one manager's media serves the first system
			h.vmediaColl, h.vmediaPath = p.vmedia(h.path)
		}
		b.hosts = append(b.hosts, h)
	}
	b.uuid = deterministicUUID(s.Name, "manager")
	b.serial = serialNumber(p.serialPrefix, s.Name, "chassis")
	b.inv = inventory{prof: p, hosts: b.hosts, softwareIDs: s.SoftwareIDs}
	b.tasks = taskList{fleet: f, prof: p, inv: &b.inv}
	b.power = hostPower{fleet: f, hosts: b.hosts, clock: &b.clock, faults: &b.faults, inv: &b.inv, specHealth: s.Health}
	for _, c := range p.components {
		if !c.perSystem {
			b.inv.comps = append(b.inv.comps, c)
			continue
		}
		for _, h := range b.hosts {
			ci := c
			ci.sys = h.idx
			if len(b.hosts) > 1 {
				ci.key, ci.id, ci.name = h.id+"."+c.key, h.id+"."+c.id, h.id+"."+c.name
			}
			b.inv.comps = append(b.inv.comps, ci)
		}
	}
	if !p.noInventory {
		for i := len(b.inv.comps); i < f.opts.InventoryMembers; i++ {
			id := fmt.Sprintf("Extra%02d", i+1)
			b.inv.comps = append(b.inv.comps, component{key: id, id: id, name: "Adapter " + id + " Firmware", version: "1.0." + strconv.Itoa(i), upd: updNo, sys: -1})
		}
	}
	b.inv.versions = make([]string, len(b.inv.comps))
	b.inv.previous = make([]string, len(b.inv.comps))
	for i, c := range b.inv.comps {
		b.inv.versions[i], b.inv.previous[i] = c.version, c.previous
	}
	if err := b.inv.setAbsent(s.Absent); err != nil {
		return nil, fmt.Errorf("BMC %s: %w", s.Name, err)
	}
	for _, k := range sortedKeys(s.Firmware) {
		v := s.Firmware[k]
		if v == "" {
			return nil, fmt.Errorf("BMC %s: component %s: empty version", s.Name, k)
		}
		found := false
		for i, c := range b.inv.comps {
			if strings.EqualFold(c.key, k) || (c.sys >= 0 && len(b.hosts) > 1 && strings.EqualFold(c.key, b.hosts[c.sys].id+"."+k)) {
				b.inv.versions[i] = v
				found = true
			}
		}
		if !found && !knownKey(k) {
			var keys []string
			for _, c := range b.inv.comps {
				keys = append(keys, c.key)
			}
			return nil, fmt.Errorf("BMC %s: unknown component %q (profile %s has %s)", s.Name, k, p.name, strings.Join(keys, ", "))
		}
		// A known key the profile lacks (NIC on basic) is ignored, so one
		// -firmware flag suits a mixed fleet.
	}
	b.spec.Firmware = nil // the versions slice holds them; keep per-BMC memory small
	return b, nil
}

func knownKey(k string) bool {
	return slices.ContainsFunc(componentKeys, func(c string) bool { return strings.EqualFold(c, k) })
}

// lock takes b.mu and brings the BMC's timeline to now, which it
// returns: whatever was due by then has happened.
func (b *bmc) lock() time.Time {
	b.mu.Lock()
	now := b.fleet.opts.Now()
	b.clock.advance(now)
	return now
}

func (b *bmc) versionsNow() map[string]string {
	b.lock()
	defer b.mu.Unlock()
	return b.inv.versionMap()
}

func (b *bmc) snapshot() Stats {
	b.lock()
	defer b.mu.Unlock()
	s := b.stats
	s.SessionsOpen = len(b.sessions.list)
	s.Boots, s.Resets, s.Reimages = b.power.boots, b.power.resets, b.power.reimages
	s.SessionsCreated, s.SessionsDeleted, s.SessionsRefused = b.sessions.created, b.sessions.deleted, b.sessions.refused
	s.Flashes, s.MemberFlashes = maps.Clone(b.stats.Flashes), maps.Clone(b.stats.MemberFlashes)
	if len(b.hosts) == 0 {
		s.PowerState, s.Health = powerOn, b.devHealth // a device: always on
	} else {
		s.PowerState, s.Health = b.hosts[0].power, b.hosts[0].health
	}
	if len(b.hosts) > 1 {
		s.Systems = make(map[string]SystemStats, len(b.hosts))
		for _, h := range b.hosts {
			s.Systems[h.id] = SystemStats{PowerState: h.power, Health: h.health, Boots: h.boots, UUID: h.uuid, SerialNumber: h.serial}
		}
	}
	s.Versions = b.inv.versionMap()
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
		now := l.b.lock()
		down := l.b.down(now)
		if !down {
			l.b.stats.Connections++
		}
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

// deterministicUUID is a stable UUID (RFC 9562 version 8) from the BMC's
// name and a role: reruns of a fleet give the same identities, and no two
// BMCs or systems share one.
func deterministicUUID(parts ...string) string {
	sum := sha256.Sum256([]byte("rackform-sim\x00" + strings.Join(parts, "\x00")))
	u := sum[:16]
	u[6] = u[6]&0x0f | 0x80
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// serialNumber is a stable serial number in the profile's style (a vendor
// prefix, then upper-case letters and digits) from the BMC's name and role.
func serialNumber(prefix string, parts ...string) string {
	sum := sha256.Sum256([]byte("rackform-sim-serial\x00" + strings.Join(parts, "\x00")))
	const alphabet = "0123456789ABCDEFGHJKLMNPQRSTUVWXYZ"
	n := max(10-len(prefix), 4)
	out := []byte(prefix)
	for i := 0; i < n; i++ {
		out = append(out, alphabet[int(sum[i])%len(alphabet)])
	}
	return string(out)
}
