package sim

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Options configure a whole fleet.
type Options struct {
	// Speed scales simulated time: 1 is real time, 6000 makes a 10-minute
	// flash take 100 ms. Zero means 1.
	Speed float64
	// Username and Password are the credentials every BMC accepts, by Basic
	// auth or by creating a session.
	Username, Password string
	// TLS serves HTTPS with certificates signed by a CA generated at start
	// (CACertPEM); otherwise plain HTTP.
	TLS bool
	// Latency is added to every response of every BMC (real time, not
	// scaled), like a slow BMC or network. Faults can add more.
	Latency time.Duration
	// Log, when set, receives one line per request: BMC, method, path,
	// status. Credentials never reach it.
	Log io.Writer
	// Now is the clock; nil means time.Now. Simulated time advances with it.
	Now func() time.Time
	// Durations of simulated operations before scaling; zero values take
	// the defaults of DefaultTimings.
	Timings Timings
	// SessionLimit is how many sessions one BMC holds at once (default 16,
	// like many BMCs); the session-limit fault lowers it.
	SessionLimit int
	// InventoryMembers, when larger than a profile's own inventory, pads
	// every BMC's FirmwareInventory with read-only members ("Extra01",
	// ...) up to that many, like a server with many drives and adapters
	// (fleet benchmarks).
	InventoryMembers int
	// NoExpand makes every BMC ignore $expand and not advertise it, like
	// the many BMCs without it (fleet benchmarks).
	NoExpand bool
	// OnRequest, when set, is called with each request's BMC name before
	// it is served (fleet benchmarks record what a client asked for).
	OnRequest func(bmc string, r *http.Request)
}

// Timings are the simulated durations of BMC operations, divided by Speed
// when they run; SessionTimeout alone is clock time (clients hold sessions
// in real time), not scaled.
type Timings struct {
	Boot, Shutdown, Flash, BMCReset, Install, SessionTimeout time.Duration
	// Jitter spreads the operations' durations the way real servers vary:
	// each boot, shutdown, flash, BMC reset and install lasts its timing
	// times a factor drawn uniformly from [1-Jitter, 1+Jitter]. 0 (the
	// default) keeps every operation at its timing; at most 0.9.
	// SessionTimeout is not jittered.
	Jitter float64
	// JitterSeed makes the draws repeatable: the factor of a BMC's n-th
	// operation of a kind depends only on the seed, the BMC's name, the
	// kind and n, never on how requests interleave.
	JitterSeed uint64
}

// DefaultTimings returns plausible durations of a real server: boot 2m,
// graceful shutdown 30s, flash 10m, BMC reset 3m, runtime install 5m,
// session timeout 30m.
func DefaultTimings() Timings {
	return Timings{
		Boot:           2 * time.Minute,
		Shutdown:       30 * time.Second,
		Flash:          10 * time.Minute,
		BMCReset:       3 * time.Minute,
		Install:        5 * time.Minute,
		SessionTimeout: 30 * time.Minute,
	}
}

// BMCSpec describes one simulated BMC and its server.
type BMCSpec struct {
	// Name names the server in stats, logs and errors.
	Name string
	// Addr is host:port to listen on; the host must be a loopback address.
	// Port 0 picks a free port (BMCs reports the URL).
	Addr string
	// Profile is one of AllProfiles(); empty means dmtf.
	Profile string
	// Firmware sets initial versions by component key (BMC, BIOS, NIC, CPLD,
	// Runtime); missing keys take the profile's defaults. Versions may be
	// any string a BMC reports ("P79 v1.46", "nc.1.6.17-0-gabcdef"). On a
	// BMC with several systems "BIOS" sets every system's and "Node1.BIOS"
	// one system's. A known key the profile lacks (NIC on basic) is
	// ignored; any other unknown key is an error.
	Firmware map[string]string
	// Systems are the BMC's ComputerSystems: at most one on single-system
	// profiles (to set its UUID or name), 2 to 4 on crayex (default two,
	// Node0 and Node1). Each gets a distinct UUID and serial number derived
	// from Name and the system's Id unless given.
	Systems []SystemSpec
	// SoftwareIDs replaces the SoftwareId an inventory member reports, by
	// component key (default: the key), e.g. {"Runtime": "runtime-os"}.
	SoftwareIDs map[string]string
	// StrictTransferProtocol makes ami's SimpleUpdate take TransferProtocol
	// exactly as the Gigabyte capture's ActionInfo says: required, HTTP or
	// FTP (no HTTPS). Off by default, where ami also takes HTTPS or none.
	// crayex and basic are always strict (required on crayex, as captured).
	StrictTransferProtocol bool
	// Refuse lists update methods the BMC advertises but refuses with 400
	// (as BMCs whose default method is disabled or licence-gated do):
	// "simple_update", "http_push", "multipart_push".
	Refuse []string
	// PowerOn starts the server powered on.
	PowerOn bool
	// Health is the initial Status.Health: OK (default), Warning, Critical.
	Health string
	// Absent lists inventory members (by Id, e.g. "HGX_FW_GPU_SXM_3") that
	// are not fitted: Status.State Absent, never updated.
	Absent []string
	// RequireTargets makes the BMC refuse an update that does not name its
	// inventory member in Targets (as some vendors' BMCs do): a multipart
	// push's UpdateParameters, and SimpleUpdate where the profile has a
	// SimpleUpdate ActionInfo (dmtf, ami), which then lists Targets as
	// required. ilo5's SimpleUpdate has no ActionInfo and is not affected.
	RequireTargets bool
}

// SystemSpec is one ComputerSystem of a BMC.
type SystemSpec struct {
	// ID is the system's Id ("Node1"); on single-system profiles it must
	// be the profile's own, or empty.
	ID string
	// UUID overrides the derived UUID (a configuration may name a system
	// by UUID).
	UUID string
	// Name is the server's name (HostName); default the BMC's name, plus
	// the system's Id when there are several.
	Name string
}

// Update methods BMCSpec.Refuse names.
const (
	MethodSimpleUpdate  = "simple_update"
	MethodHTTPPush      = "http_push"
	MethodMultipartPush = "multipart_push"
)

// BMCInfo is where a BMC listens.
type BMCInfo struct {
	Name    string `json:"name"`
	URL     string `json:"url"`
	Profile string `json:"profile"`
	// Systems are the system Ids of a BMC with several (crayex).
	Systems []string `json:"systems,omitempty"`
}

// Fleet is a set of simulated BMCs.
type Fleet struct {
	opts      Options
	timings   Timings
	profiles  map[string]*profile
	bmcs      []*bmc
	byName    map[string]*bmc
	addrIndex map[string]*bmc // by listening address, set by Start
	certs     *certAuthority
	srv       *http.Server
	done      chan struct{}
	wg        sync.WaitGroup

	closeOnce sync.Once
	closeErr  error

	mu      sync.Mutex
	rate    FaultRate
	started bool
	closed  bool
}

// New checks the specs and builds the fleet; Start serves it.
func New(opts Options, specs []BMCSpec) (*Fleet, error) {
	if opts.Speed <= 0 {
		opts.Speed = 1
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.SessionLimit <= 0 {
		opts.SessionLimit = 16
	}
	t := opts.Timings
	d := DefaultTimings()
	for _, p := range []struct{ v, def *time.Duration }{{&t.Boot, &d.Boot}, {&t.Shutdown, &d.Shutdown}, {&t.Flash, &d.Flash}, {&t.BMCReset, &d.BMCReset}, {&t.Install, &d.Install}, {&t.SessionTimeout, &d.SessionTimeout}} {
		if *p.v == 0 {
			*p.v = *p.def
		}
	}
	if t.Jitter < 0 || t.Jitter > 0.9 || math.IsNaN(t.Jitter) {
		return nil, fmt.Errorf("timing jitter %v: want a fraction from 0 to 0.9", t.Jitter)
	}
	profiles, err := loadProfiles()
	if err != nil {
		return nil, err
	}
	f := &Fleet{opts: opts, timings: t, profiles: profiles, byName: make(map[string]*bmc, len(specs)), done: make(chan struct{})}
	addrs := map[string]string{}
	for _, s := range specs {
		if s.Name == "" {
			return nil, fmt.Errorf("BMC at %s: empty name", s.Addr)
		}
		if _, dup := f.byName[s.Name]; dup {
			return nil, fmt.Errorf("BMC %s: duplicate name", s.Name)
		}
		host, port, err := net.SplitHostPort(s.Addr)
		if err != nil {
			return nil, fmt.Errorf("BMC %s: address %q: %w", s.Name, s.Addr, err)
		}
		if ip := net.ParseIP(host); (ip == nil || !ip.IsLoopback()) && host != "localhost" {
			return nil, fmt.Errorf("BMC %s: address %s is not loopback: the simulator listens on loopback only", s.Name, s.Addr)
		}
		if port != "0" {
			if other, dup := addrs[s.Addr]; dup {
				return nil, fmt.Errorf("BMC %s: address %s already used by %s", s.Name, s.Addr, other)
			}
			addrs[s.Addr] = s.Name
		}
		pname := s.Profile
		if pname == "" {
			pname = ProfileDMTF
		}
		p, ok := profiles[pname]
		if !ok {
			return nil, fmt.Errorf("BMC %s: unknown profile %q (want one of %v)", s.Name, s.Profile, append(AllProfiles(), DeviceProfiles()...))
		}
		for _, m := range s.Refuse {
			if m != MethodSimpleUpdate && m != MethodHTTPPush && m != MethodMultipartPush {
				return nil, fmt.Errorf("BMC %s: refuse %q: want %s, %s or %s", s.Name, m, MethodSimpleUpdate, MethodHTTPPush, MethodMultipartPush)
			}
		}
		b, err := newBMC(f, s, p)
		if err != nil {
			return nil, err
		}
		f.bmcs = append(f.bmcs, b)
		f.byName[s.Name] = b
	}
	return f, nil
}

// Start binds every listener and serves until Close or until ctx ends. The
// error names the BMC and address that failed; on error nothing stays bound.
func (f *Fleet) Start(ctx context.Context) error {
	f.mu.Lock()
	if f.started || f.closed {
		f.mu.Unlock()
		return errors.New("sim: fleet already started")
	}
	f.started = true
	f.mu.Unlock()
	raiseFileLimit(len(f.bmcs))
	if f.opts.TLS {
		ca, err := newCertAuthority(time.Now()) // clients check validity against the real clock
		if err != nil {
			return err
		}
		f.certs = ca
	}
	// One http.Server serves every listener: the BMC is found from the
	// connection's local address, so per-BMC cost is a listener, an accept
	// goroutine and the compact state.
	f.srv = &http.Server{
		Handler:           http.HandlerFunc(f.serveHTTP),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       90 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, c.LocalAddr().String())
		},
		ErrorLog: log.New(io.Discard, "", 0),
	}
	if f.certs != nil {
		f.srv.TLSConfig = &tls.Config{GetCertificate: f.certs.certificate, MinVersion: tls.VersionTLS12}
	}
	lc := net.ListenConfig{}
	for i, b := range f.bmcs {
		ln, err := lc.Listen(ctx, "tcp", b.spec.Addr)
		if err != nil {
			for _, o := range f.bmcs[:i] {
				o.ln.Close()
			}
			return fmt.Errorf("BMC %s: listen on %s: %w", b.spec.Name, b.spec.Addr, err)
		}
		b.ln = &bmcListener{Listener: ln, b: b}
		b.addr = ln.Addr().String()
		scheme := "http"
		if f.certs != nil {
			scheme = "https"
		}
		b.url = scheme + "://" + b.addr
	}
	if f.certs != nil {
		// Every BMC's certificate is made now, not on its first
		// connection: a client's first handshakes would otherwise wait on
		// the simulator signing certificates one at a time.
		for _, b := range f.bmcs {
			if host, _, err := net.SplitHostPort(b.addr); err == nil {
				if _, err := f.certs.leafFor(host); err != nil {
					for _, o := range f.bmcs {
						o.ln.Close()
					}
					return fmt.Errorf("BMC %s: %w", b.spec.Name, err)
				}
			}
		}
	}
	f.mu.Lock()
	f.addrIndex = make(map[string]*bmc, len(f.bmcs))
	for _, b := range f.bmcs {
		f.addrIndex[b.addr] = b
	}
	f.mu.Unlock()
	for _, b := range f.bmcs {
		f.wg.Add(1)
		go func(b *bmc) {
			defer f.wg.Done()
			var ln net.Listener = b.ln
			if f.certs != nil {
				ln = tls.NewListener(ln, f.srv.TLSConfig)
			}
			_ = f.srv.Serve(ln) // returns when Close closes the listener
		}(b)
	}
	// Not in wg: Close waits for wg, and this goroutine may be the caller.
	go func() {
		select {
		case <-ctx.Done():
			f.Close()
		case <-f.done:
		}
	}()
	return nil
}

type connKey struct{}

// Close stops every listener, ends open connections (including requests
// held by a timeout fault) and waits for the fleet's goroutines. Every call
// returns once the fleet has stopped.
func (f *Fleet) Close() error {
	f.closeOnce.Do(func() {
		f.mu.Lock()
		f.closed = true
		close(f.done)
		f.mu.Unlock()
		stopped := make(chan error, 1)
		go func() {
			var err error
			if f.srv != nil {
				err = f.srv.Close()
			}
			f.wg.Wait()
			stopped <- err
		}()
		// Bounded: a fleet that cannot stop must fail its caller (a test),
		// not hang it until the test binary's timeout hides where.
		t := time.NewTimer(closeTimeout)
		defer t.Stop()
		select {
		case f.closeErr = <-stopped:
		case <-t.C:
			f.closeErr = fmt.Errorf("sim: the fleet did not stop within %s of Close (a listener or handler is still running)", closeTimeout)
		}
	})
	return f.closeErr
}

// closeTimeout bounds Close, in real time whatever the fleet's Speed.
const closeTimeout = 20 * time.Second

// Done is closed when the fleet is closed.
func (f *Fleet) Done() <-chan struct{} { return f.done }

// BMCs lists the fleet's BMCs in spec order. URLs are set once started.
func (f *Fleet) BMCs() []BMCInfo {
	out := make([]BMCInfo, len(f.bmcs))
	for i, b := range f.bmcs {
		out[i] = BMCInfo{Name: b.spec.Name, URL: b.url, Profile: b.prof.name}
		if len(b.hosts) > 1 {
			for _, h := range b.hosts {
				out[i].Systems = append(out[i].Systems, h.id)
			}
		}
	}
	return out
}

// CACertPEM is the CA that signs every BMC's certificate (nil without TLS or
// before Start).
func (f *Fleet) CACertPEM() []byte {
	if f.certs == nil {
		return nil
	}
	return f.certs.caPEM
}

// Stats returns one BMC's counters (zero for an unknown name).
func (f *Fleet) Stats(name string) Stats {
	b, ok := f.byName[name]
	if !ok {
		return Stats{}
	}
	return b.snapshot()
}

// AllStats returns every BMC's counters by name.
func (f *Fleet) AllStats() map[string]Stats {
	out := make(map[string]Stats, len(f.bmcs))
	for _, b := range f.bmcs {
		out[b.spec.Name] = b.snapshot()
	}
	return out
}

// Versions returns the versions a BMC currently reports, by component key.
func (f *Fleet) Versions(name string) map[string]string {
	b, ok := f.byName[name]
	if !ok {
		return nil
	}
	return b.versionsNow()
}

// PowerState returns the server's current power state (On, Off, PoweringOn,
// PoweringOff) and health; on a BMC with several systems, the first's.
func (f *Fleet) PowerState(name string) (power, health string) {
	return f.SystemPowerState(name, "")
}

// SystemPowerState is PowerState of one system of a BMC, by Id ("" for the
// first).
func (f *Fleet) SystemPowerState(name, system string) (power, health string) {
	b, ok := f.byName[name]
	if !ok {
		return "", ""
	}
	b.lock()
	defer b.mu.Unlock()
	for _, h := range b.hosts {
		if system == "" || h.id == system {
			return h.power, h.health
		}
	}
	return "", ""
}

// Identity is what a BMC reports about who it is.
type Identity struct {
	System       string `json:"system"` // the system's Id
	UUID         string `json:"uuid"`
	SerialNumber string `json:"serial_number"`
	Manufacturer string `json:"manufacturer"`
	Model        string `json:"model"`
}

// Identities returns each system's identity of the named BMC.
func (f *Fleet) Identities(name string) []Identity {
	b, ok := f.byName[name]
	if !ok {
		return nil
	}
	var out []Identity
	for _, h := range b.hosts {
		out = append(out, Identity{System: h.id, UUID: h.uuid, SerialNumber: h.serial, Manufacturer: b.prof.manufacturer, Model: b.prof.model})
	}
	return out
}

// SetFault injects ft into the named BMC, replacing any fault of the same
// kind (and the same Timed: a scenario's spells and components are kept
// apart). A Fault with Kind FaultNone clears every fault of that BMC.
func (f *Fleet) SetFault(name string, ft Fault) error {
	b, ok := f.byName[name]
	if !ok {
		return fmt.Errorf("sim: no BMC named %q", name)
	}
	if err := ft.validate(); err != nil {
		return fmt.Errorf("BMC %s: %w", name, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.faults.set(ft)
	return nil
}

// SetFaultRate sets fleet-wide faults by probability (see FaultRate).
func (f *Fleet) SetFaultRate(r FaultRate) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rate = r
}

func (f *Fleet) faultRate() FaultRate {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rate
}

// scale converts a simulated duration to real time.
func (f *Fleet) scale(d time.Duration) time.Duration {
	return time.Duration(float64(d) / f.opts.Speed)
}

// retryAfter is the Retry-After value (whole real seconds, 0..10) for a wait
// of d real time.
func retryAfter(d time.Duration) string {
	s := int(d / time.Second)
	return strconv.Itoa(min(max(s, 0), 10))
}

// sortedKeys returns m's keys sorted.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
