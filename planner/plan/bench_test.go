package plan

import (
	"crypto/ed25519"
	"fmt"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers"
)

// fleetPlan is a plan of n servers of the nexus-lab shape (what `rackform
// plan examples/nexus-lab` writes against `rackform sim -config`): 40
// servers a rack, each reporting members inventory members (at least 6:
// BIOS, BMC, NIC and Runtime, which the release matches, AC-RoT0, CPLD and
// more, which it does not), with its own identity, fingerprint and BMC,
// and the same eight steps (drain, shutdown, three updates, reimage,
// wait_ready, uncordon).
func fleetPlan(n, members int) *Plan {
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	p := samplePlan()
	p.FormatVersion = FormatVersion
	p.CreatedAt, p.NotAfter = at, at.Add(72*time.Hour)
	rel := []struct{ id, from, to, kind, scheme, apply string }{
		{"BIOS", "2.17.3", "2.19.1", "firmware", "dotted", "OnReset"},
		{"BMC", "7.08.12", "7.10.30", "firmware", "dotted", "Immediate"},
		{"NIC", "22.28.1", "22.31.6", "firmware", "dotted", "OnReset"},
		{"Runtime", "4.5.2", "4.6.1", "runtime", "semver", ""},
	}
	var comps []providers.Component
	var changes []Change
	steps := []Step{
		{Index: 1, Kind: StepDrain, Timeout: Duration(20 * time.Minute), Estimate: Duration(5 * time.Minute)},
		{Index: 2, Kind: StepShutdown, Timeout: Duration(10 * time.Minute), Estimate: Duration(3 * time.Minute)},
	}
	var expect []providers.Expectation
	for _, r := range rel {
		comps = append(comps, providers.Component{ID: r.id, Name: "Contoso " + r.id + " Firmware", SoftwareID: r.id, Version: r.from, Updateable: r.kind == "firmware"})
		lower := map[string]string{"BIOS": "bios", "BMC": "bmc", "NIC": "nic", "Runtime": "runtime"}[r.id]
		changes = append(changes, Change{Component: lower, Kind: r.kind, From: r.from, To: r.to, Reboot: r.id != "BMC"})
		st := Step{Index: len(steps) + 1, Kind: StepUpdate, Component: lower, Match: &providers.Match{SoftwareID: r.id}, Target: version.Target{Version: r.to, Scheme: version.Scheme(r.scheme)},
			Image: "https://127.0.0.1:8080/images/" + lower + "-" + r.to + ".bin", ApplyTime: r.apply, Method: providers.MethodSimpleUpdate,
			TransferProtocol: "HTTPS", Targets: []string{"/redfish/v1/UpdateService/FirmwareInventory/" + r.id}, Estimate: Duration(10 * time.Minute)}
		if r.kind == "runtime" {
			st.Kind, st.Method, st.TransferProtocol, st.Targets, st.Image, st.Estimate = StepReimage, "reimage", "", nil, "https://127.0.0.1:8080/images/runtime-4.6.1.iso", Duration(30*time.Minute)
		}
		steps = append(steps, st)
		expect = append(expect, providers.Expectation{Component: lower, Match: providers.Match{SoftwareID: r.id}, Target: version.Target{Version: r.to, Scheme: version.Scheme(r.scheme)}})
	}
	steps = append(steps,
		Step{Index: 7, Kind: StepWaitReady, Timeout: Duration(time.Hour), Expect: expect, Estimate: Duration(10 * time.Minute)},
		Step{Index: 8, Kind: StepUncordon, Timeout: Duration(5 * time.Minute), Estimate: Duration(time.Minute)})
	all := append(append([]providers.Component(nil), comps...), otherMembers(members)...)
	digest := OthersOf(all, comps)

	p.Servers = make([]Server, n)
	var scopes []Scope
	for i := range p.Servers {
		rack, slot := i/40+1, i%40+1
		name := fmt.Sprintf("r%03d-s%02d", rack, slot)
		addr := fmt.Sprintf("lab/r%03d/%s", rack, name)
		p.Servers[i] = Server{
			Address: addr, Name: name, Cluster: "lab", Rack: fmt.Sprintf("r%03d", rack), Role: "compute", NodeName: "lab-" + name,
			BMC: fmt.Sprintf("https://127.%d.%d.%d:8443", 1+i/65536, i/256%256, i%256), Provider: "redfish",
			Observed:    Observed{Reachable: true, PowerState: "On", Health: "OK", Components: comps, Others: digest, System: "437XR1138R2"},
			Outcome:     providers.OutcomeObserved,
			Identity:    providers.Identity{UUID: fmt.Sprintf("5a0a91f6-3fad-8521-a13d-%012x", i), SerialNumber: fmt.Sprintf("437XR%05d", i), Manufacturer: "Contoso", Model: "3500"},
			Fingerprint: fmt.Sprintf("sha256:%064x", i*7919+1),
			Action:      ActionUpgrade, Changes: changes, Steps: steps, Reboots: 1, Estimate: Duration(79 * time.Minute),
		}
		if slot == 1 {
			scopes = append(scopes, Scope{ID: fmt.Sprintf("cluster.lab.compute.rack.r%03d", rack), Kind: "rack", Name: fmt.Sprintf("r%03d", rack), Rack: fmt.Sprintf("r%03d", rack),
				Threshold: Threshold{Type: "percent", Value: 90}, MaxUnavailable: 4, OnBreach: "pause"})
		}
		sc := &scopes[len(scopes)-1]
		sc.Servers = append(sc.Servers, addr)
		sc.Eligible++
		sc.Required++
	}
	p.Run.Stages[0].Groups[0].Clusters[0].Phases[0].Scopes = scopes
	p.Summary = Summary{Upgrade: n, Racks: len(scopes), Estimate: Duration(79 * time.Minute)}
	return p
}

// fleetPlan13 is fleetPlan as format 1.3 wrote it: indented, every
// server's inventory in full, each step written out for each server.
func fleetPlan13(n, members int) *Plan {
	p := fleetPlan(n, members)
	p.FormatVersion = "1.3"
	for i := range p.Servers {
		o := &p.Servers[i].Observed
		o.Components = append(append([]providers.Component(nil), o.Components...), otherMembers(members)...)
		o.Others = nil
	}
	return p
}

// otherMembers are the members of fleetPlan's inventory that its release
// does not match: AC-RoT0, CPLD and as many more as make members.
func otherMembers(members int) []providers.Component {
	others := []providers.Component{{ID: "AC-RoT0", Name: "AC-RoT0 firmware", SoftwareID: "RoT", Version: "1.11"},
		{ID: "CPLD", Name: "Contoso CPLD Firmware", SoftwareID: "CPLD", Version: "1.0", Updateable: true}}
	for i := 6; i < members; i++ {
		others = append(others, providers.Component{ID: fmt.Sprintf("Member%02d", i), Name: fmt.Sprintf("Contoso device %d firmware", i), SoftwareID: fmt.Sprintf("Dev%02d", i), Version: "3.1.4", Updateable: true})
	}
	return others
}

// The compact file (format 1.4) stays under 1.5 KB per server for the
// nexus-lab shape, with 6 inventory members or 24 (the fleet benchmark's),
// and reads back the same plan.
func TestCompactPlanSizePerServer(t *testing.T) {
	for _, members := range []int{6, 24} {
		p := fleetPlan(1000, members)
		b, err := EncodeSigned(p, testKey(1))
		if err != nil {
			t.Fatal(err)
		}
		per := len(b) / len(p.Servers)
		t.Logf("%d members: %d bytes, %d per server", members, len(b), per)
		if per > 1500 {
			t.Errorf("%d members: %d bytes per server, want at most 1,500", members, per)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Servers) != 1000 || len(got.Servers[999].Steps) != 8 || got.Servers[999].Observed.Others.Count != members-4 {
			t.Errorf("%d members: decoded %d servers, the last with %d steps and %+v", members, len(got.Servers), len(got.Servers[999].Steps), got.Servers[999].Observed.Others)
		}
	}
}

// BenchmarkDecodeVerify10k reads a signed 10,000-server plan of the
// nexus-lab shape as apply does: Decode (JSON, format, checksum, tables)
// and VerifySignature. retained-MB is the heap the decoded plan keeps;
// B/op bounds the peak the read adds.
func BenchmarkDecodeVerify10k(b *testing.B) {
	b.Run("format=1.4", func(b *testing.B) { benchDecodeVerify(b, fleetPlan(10000, 6)) })
	// What the same plan cost as format 1.3, for comparison.
	b.Run("format=1.3", func(b *testing.B) { benchDecodeVerify(b, fleetPlan13(10000, 6)) })
}

func benchDecodeVerify(b *testing.B, p *Plan) {
	file, err := EncodeSigned(p, testKey(1))
	if err != nil {
		b.Fatal(err)
	}
	trusted := []ed25519.PublicKey{pub(testKey(1))}
	// The heap one read keeps (the decoded plan) and the most it uses
	// while reading, measured once outside the timing.
	var kept *Plan
	peak, retained := heapUse(func() {
		if kept, err = Decode(file); err == nil {
			err = VerifySignature(file, kept, trusted)
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	runtime.KeepAlive(kept)
	runtime.KeepAlive(file)
	kept = nil
	b.SetBytes(int64(len(file)))
	for b.Loop() {
		p, err := Decode(file)
		if err != nil {
			b.Fatal(err)
		}
		if err := VerifySignature(file, p, trusted); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(retained, "retained-MB")
	b.ReportMetric(peak, "peak-heap-MB")
	b.ReportMetric(float64(len(file))/10000, "file-B/server")
}

// BenchmarkEncodeSigned10k writes a signed 10,000-server plan of the
// nexus-lab shape as plan does.
func BenchmarkEncodeSigned10k(b *testing.B) {
	b.Run("format=1.4", func(b *testing.B) { benchEncodeSigned(b, fleetPlan(10000, 6)) })
	b.Run("format=1.3", func(b *testing.B) { benchEncodeSigned(b, fleetPlan13(10000, 6)) })
}

func benchEncodeSigned(b *testing.B, p *Plan) {
	var file []byte
	var err error
	peak, _ := heapUse(func() { file, err = EncodeSigned(p, testKey(1)) })
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if file, err = EncodeSigned(p, testKey(1)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(peak, "peak-heap-MB")
	b.ReportMetric(float64(len(file))/10000, "file-B/server")
}

// heapUse runs fn and returns, in MB above the live heap before it, the
// most the heap held while fn ran (sampled every 200 µs, and once when fn
// has returned) and what is live after a collection once fn has returned.
// The caller keeps alive what it wants counted as retained.
func heapUse(fn func()) (peak, retained float64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	var ms runtime.MemStats
	// Twice: what sync.Pools (encoding/json's buffers) hold is freed by
	// the second collection only.
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	done := make(chan struct{})
	most := make(chan uint64)
	go func() {
		var m uint64
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			m = max(m, read())
			select {
			case <-done:
				most <- max(m, read())
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(done)
	m := <-most
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	mb := func(v uint64) float64 {
		if v < base {
			return 0
		}
		return float64(v-base) / (1 << 20)
	}
	return mb(m), mb(ms.HeapAlloc)
}
