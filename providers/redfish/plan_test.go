package redfish

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rackform/rackform/providers"
)

// TestUpdatePlanHonoursBMC: what the BMC says it can do decides the plan
// at Observe: a method override is used where the BMC offers it and is a
// problem naming what it offers where not; Updateable false is a problem;
// Targets come from SimpleUpdate's AllowableValues; a local image cannot
// be pulled, so it is pushed.
func TestUpdatePlanHonoursBMC(t *testing.T) {
	cases := []struct {
		name, dir, system string
		in                providers.UpdateIntent
		want              providers.UpdatePlan
		problem           string
	}{
		{name: "override http_push offered", dir: "dmtf/public-rackmount1",
			in:   providers.UpdateIntent{Match: providers.Match{ID: "BMC"}, ImageURI: "https://i.example/bmc.bin", Method: providers.MethodHTTPPush},
			want: providers.UpdatePlan{Method: providers.MethodHTTPPush}},
		{name: "override multipart_push not offered", dir: "dmtf/public-rackmount1",
			in:      providers.UpdateIntent{Match: providers.Match{ID: "BMC"}, ImageURI: "https://i.example/bmc.bin", Method: providers.MethodMultipartPush},
			problem: "update method multipart_push does not fit this BMC: the BMC has no MultipartHttpPushUri; it offers simple_update (FTP, SFTP, HTTP, HTTPS, SCP, TFTP), http_push"},
		{name: "local image is pushed", dir: "dmtf/public-rackmount1",
			in:   providers.UpdateIntent{Match: providers.Match{ID: "BIOS"}, ImageURI: "/srv/images/bios.bin"},
			want: providers.UpdatePlan{Method: providers.MethodHTTPPush}},
		{name: "not updateable", dir: "csm/XL675d_A40",
			in:      providers.UpdateIntent{Match: providers.Match{NamePattern: "NVIDIA A40"}, ImageURI: "https://i.example/gpu.bin"},
			problem: "15 (NVIDIA A40) is not updateable on this BMC"},
		// HPE's backup ROM is a standby copy: never the image's member.
		{name: "only a standby copy", dir: "csm/XL675d_A40",
			in:      providers.UpdateIntent{Match: providers.Match{NamePattern: "Redundant System ROM"}, ImageURI: "https://i.example/rom.bin"},
			problem: "no member that runs matches name Redundant System ROM, only 10 A47 v2.40 (02/23/2021) standby"},
		{name: "no method for a local image on a pull-only BMC", dir: "csm/Gigabyte",
			in:      providers.UpdateIntent{Match: providers.Match{ID: "BIOS"}, ImageURI: "/srv/images/bios.bin"},
			problem: "no update method fits this BMC: SimpleUpdate needs an image URL the BMC can fetch"},
		{name: "a non-updateable FPGA of the EX card", dir: "csm/EX235a", system: "Node0",
			in:      providers.UpdateIntent{Match: providers.Match{ID: "FPGA0"}, ImageURI: "https://i.example/fpga.bin"},
			problem: "FPGA0 (nFPGA) is not updateable on this BMC"},
		{name: "a member the BMC lists in Targets", dir: "csm/EX235a", system: "Node0",
			in:   providers.UpdateIntent{Match: providers.Match{ID: "Node0.AccVBIOS"}, ImageURI: "http://i.example/vbios.bin"},
			want: providers.UpdatePlan{Method: providers.MethodSimpleUpdate, TransferProtocol: "HTTP", Targets: []string{"/redfish/v1/UpdateService/FirmwareInventory/Node0.AccVBIOS"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newMockupServer(t, c.dir)
			p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m)})
			c.in.Component = "x"
			got := planFor(t, p, providers.Target{Name: "s", Endpoint: m.URL, System: c.system}, c.in)
			checkPlan(t, got, c.want, c.problem)
		})
	}
}

// TestPlanUpdateActionInfoRules: ActionInfo's Required and AllowableValues
// decide the plan: a required Targets that cannot name the member, or a
// required parameter rackform cannot give, is a problem; an optional
// Targets not listing the member is left out; a listed TransferProtocol is
// filled; a version read from the System is updated naming the System.
func TestPlanUpdateActionInfoRules(t *testing.T) {
	member := invItem{Component: providers.Component{ID: "BIOS", Version: "1", Updateable: true}, URI: "/redfish/v1/UpdateService/FirmwareInventory/BIOS"}
	fallback := invItem{Component: providers.Component{ID: "BIOS", Version: "1", Updateable: true, Source: providers.SourceSystem}, URI: "/redfish/v1/Systems/1"}
	in := providers.UpdateIntent{Component: "bios", Match: providers.Match{ID: "BIOS"}, ImageURI: "https://i.example/b.bin"}
	su := func(params ...actionParam) *updateInfo {
		return &updateInfo{SimpleUpdateTarget: "/redfish/v1/UpdateService/Actions/SimpleUpdate", Params: params}
	}
	cases := []struct {
		name    string
		item    invItem
		us      *updateInfo
		want    providers.UpdatePlan
		problem string
	}{
		{"required Targets not listing the member", member, su(actionParam{Name: "Targets", Required: true, AllowableValues: []string{"/x"}}), providers.UpdatePlan{},
			"SimpleUpdate's Targets do not allow /redfish/v1/UpdateService/FirmwareInventory/BIOS"},
		{"optional Targets not listing the member", member, su(actionParam{Name: "Targets", AllowableValues: []string{"/x"}}),
			providers.UpdatePlan{Method: "simple_update"}, ""},
		{"Targets described without a list", member, su(actionParam{Name: "Targets"}),
			providers.UpdatePlan{Method: "simple_update", Targets: []string{member.URI}}, ""},
		{"required parameter rackform cannot give", member, su(actionParam{Name: "UpdateComponent", Required: true}), providers.UpdatePlan{},
			"requires the parameter UpdateComponent"},
		{"required TransferProtocol without a list", member, su(actionParam{Name: "TransferProtocol", Required: true}),
			providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS"}, ""},
		{"nothing described: nothing sent", member, su(), providers.UpdatePlan{Method: "simple_update"}, ""},
		{"fallback names the System", fallback, su(), providers.UpdatePlan{Method: "simple_update", Targets: []string{"/redfish/v1/Systems/1"}}, ""},
		{"fallback pushed names the System", fallback, &updateInfo{MultipartHTTPPushURI: "/push"},
			providers.UpdatePlan{Method: "multipart_push", Targets: []string{"/redfish/v1/Systems/1"}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := planUpdate(in, &state{items: []invItem{c.item}}, c.us, nil)
			checkPlan(t, got, c.want, c.problem)
		})
	}
}

// TestPlanUpdateEveryMember: a rule's image is for every active member it
// selects: all of them are the plan's Members and, where the BMC takes
// Targets, its Targets, with as many per request as the ActionInfo's
// Targets allows (a single string: one; ArraySizeMaximum); the standby
// copy is never among them; one member the BMC does not list in an
// optional Targets sends none.
func TestPlanUpdateEveryMember(t *testing.T) {
	gpu := func(i int, state string) invItem {
		id := fmt.Sprintf("HGX_FW_GPU_SXM_%d", i)
		return invItem{Component: providers.Component{ID: id, SoftwareID: "0x0020", Version: "96.00.61.00.01", Updateable: true, State: state},
			URI: "/redfish/v1/UpdateService/FirmwareInventory/" + id}
	}
	items := []invItem{gpu(1, providers.StateActive), gpu(2, providers.StateActive), gpu(3, providers.StateActive), gpu(9, providers.StateStandby)}
	in := providers.UpdateIntent{Component: "gpu", Match: providers.Match{SoftwareID: "0x0020"}, ImageURI: "https://i.example/gpu.bin"}
	all := []string{items[0].URI, items[1].URI, items[2].URI}
	su := func(targets actionParam) *updateInfo {
		return &updateInfo{SimpleUpdateTarget: "/su", Params: []actionParam{targets}}
	}
	cases := []struct {
		name       string
		us         *updateInfo
		targets    []string
		perRequest int
	}{
		{"a list", su(actionParam{Name: "Targets", DataType: "StringArray", AllowableValues: append([]string{"/redfish/v1/Managers/1"}, all...)}), all, 0},
		{"at most two", su(actionParam{Name: "Targets", DataType: "StringArray", ArraySizeMaximum: 2}), all, 2},
		{"a single string", su(actionParam{Name: "Targets", DataType: "String"}), all, 1},
		{"one member not listed", su(actionParam{Name: "Targets", AllowableValues: all[:2]}), nil, 0},
		{"no Targets", &updateInfo{SimpleUpdateTarget: "/su"}, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := planUpdate(in, &state{items: items}, c.us, nil)
			if got.Problem != "" || strings.Join(got.Members, " ") != "HGX_FW_GPU_SXM_1 HGX_FW_GPU_SXM_2 HGX_FW_GPU_SXM_3" ||
				strings.Join(got.Targets, " ") != strings.Join(c.targets, " ") || got.TargetsPerRequest != c.perRequest {
				t.Errorf("plan %+v; want the three active GPUs, targets %v, %d per request", got, c.targets, c.perRequest)
			}
		})
	}
}

// TestChooseApplyTime: the apply time asked is sent only where the BMC
// lists it for the method chosen; otherwise none is sent and the plan
// says why (the Lenovo, Supermicro, AMI and iLO captures list none).
func TestChooseApplyTime(t *testing.T) {
	us := &updateInfo{
		SimpleUpdateApplyTimes: applyTimes{Values: []string{"Immediate", "OnReset", "OnStartUpdateRequest"}, From: "SimpleUpdate's @Redfish.OperationApplyTimeSupport"},
		HTTPPushApplyTimes:     applyTimes{Current: "OnReset", From: "HttpPushUriApplyTime's allowable values"},
		MultipartApplyTimes:    applyTimes{Values: []string{"Immediate", "OnStartUpdateRequest"}, From: "MultipartHttpPushUri's @Redfish.OperationApplyTimeSupport"},
	}
	cases := []struct {
		asked, method, want, from string
	}{
		{"OnReset", providers.MethodSimpleUpdate, "OnReset", "listed in SimpleUpdate's @Redfish.OperationApplyTimeSupport"},
		{"AtMaintenanceWindowStart", providers.MethodSimpleUpdate, "", "not sent: SimpleUpdate's @Redfish.OperationApplyTimeSupport lists Immediate, OnReset, OnStartUpdateRequest, not AtMaintenanceWindowStart"},
		{"OnReset", providers.MethodMultipartPush, "", "not sent: MultipartHttpPushUri's @Redfish.OperationApplyTimeSupport lists Immediate, OnStartUpdateRequest, not OnReset"},
		{"OnReset", providers.MethodHTTPPush, "", "not sent: the BMC's HttpPushUriApplyTime is already OnReset"},
		{"Immediate", providers.MethodHTTPPush, "", "not sent: the BMC lists no apply times for http_push"},
		{"OnReset", providers.MethodSimpleUpdate + "-none", "", "not sent: the BMC lists no apply times"},
		{"", providers.MethodSimpleUpdate, "", ""},
	}
	for _, c := range cases {
		got, from := chooseApplyTime(c.asked, c.method, us)
		if got != c.want || !strings.HasPrefix(from, c.from) || (c.from == "" && from != "") {
			t.Errorf("chooseApplyTime(%q, %s) = %q, %q; want %q, %q…", c.asked, c.method, got, from, c.want, c.from)
		}
	}
}

// checkPlan compares a plan with want, or, when problem is set, checks it
// is a problem saying so.
func checkPlan(t *testing.T, got, want providers.UpdatePlan, problem string) {
	t.Helper()
	if problem != "" {
		if got.Method != "" || !strings.Contains(got.Problem, problem) {
			t.Errorf("plan %+v, want a problem saying %q", got, problem)
		}
		return
	}
	if got.Method != want.Method || got.TransferProtocol != want.TransferProtocol || strings.Join(got.Targets, ",") != strings.Join(want.Targets, ",") || got.Problem != "" {
		t.Errorf("plan %+v, want %+v", got, want)
	}
}
