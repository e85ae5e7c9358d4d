package plan

import (
	"crypto/ed25519"
	"fmt"
	"runtime"
	"testing"
	"time"

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
		st := Step{Index: len(steps) + 1, Kind: StepUpdate, Component: lower, Match: &providers.Match{SoftwareID: r.id}, Version: r.to,
			Image: "https://127.0.0.1:8080/images/" + lower + "-" + r.to + ".bin", ApplyTime: r.apply, Method: providers.MethodSimpleUpdate,
			TransferProtocol: "HTTPS", Targets: []string{"/redfish/v1/UpdateService/FirmwareInventory/" + r.id}, Scheme: r.scheme, Estimate: Duration(10 * time.Minute)}
		if r.kind == "runtime" {
			st.Kind, st.Method, st.TransferProtocol, st.Targets, st.Image, st.Estimate = StepReimage, "reimage", "", nil, "https://127.0.0.1:8080/images/runtime-4.6.1.iso", Duration(30*time.Minute)
		}
		steps = append(steps, st)
		expect = append(expect, providers.Expectation{Component: lower, Match: providers.Match{SoftwareID: r.id}, Version: r.to, Scheme: r.scheme})
	}
	steps = append(steps,
		Step{Index: 7, Kind: StepWaitReady, Timeout: Duration(time.Hour), Expect: expect, Estimate: Duration(10 * time.Minute)},
		Step{Index: 8, Kind: StepUncordon, Timeout: Duration(5 * time.Minute), Estimate: Duration(time.Minute)})
	var others []providers.Component
	others = append(others, providers.Component{ID: "AC-RoT0", Name: "AC-RoT0 firmware", SoftwareID: "RoT", Version: "1.11"},
		providers.Component{ID: "CPLD", Name: "Contoso CPLD Firmware", SoftwareID: "CPLD", Version: "1.0", Updateable: true})
	for i := len(rel) + len(others); i < members; i++ {
		others = append(others, providers.Component{ID: fmt.Sprintf("Member%02d", i), Name: fmt.Sprintf("Contoso device %d firmware", i), SoftwareID: fmt.Sprintf("Dev%02d", i), Version: "3.1.4", Updateable: true})
	}
	all := append(append([]providers.Component(nil), comps...), others...)
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
	file, err := EncodeSigned(fleetPlan(10000, 6), testKey(1))
	if err != nil {
		b.Fatal(err)
	}
	trusted := []ed25519.PublicKey{pub(testKey(1))}
	// The heap one decoded plan keeps, measured once outside the timing.
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept, err := Decode(file)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	retained := float64(after.HeapAlloc-before.HeapAlloc) / (1 << 20)
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
	b.ReportMetric(float64(len(file))/10000, "file-B/server")
}

// BenchmarkEncodeSigned10k writes a signed 10,000-server plan of the
// nexus-lab shape as plan does.
func BenchmarkEncodeSigned10k(b *testing.B) {
	p := fleetPlan(10000, 6)
	var file []byte
	for b.Loop() {
		var err error
		if file, err = EncodeSigned(p, testKey(1)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(file))/10000, "file-B/server")
}
