package sim

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

//go:embed testdata/profiles
var profileFS embed.FS

// Profile names accepted in BMCSpec.Profile.
const (
	ProfileDMTF    = "dmtf"
	ProfileILO5    = "ilo5"
	ProfileAMI     = "ami"
	ProfileOpenBMC = "openbmc"
	// ProfileBasic is an older, Supermicro-like BMC: no FirmwareInventory,
	// no SessionService (Basic auth only), versions only in
	// ComputerSystem.BiosVersion and Manager.FirmwareVersion.
	ProfileBasic = "basic"
	// ProfileCrayEX is a multi-system BMC modelled on an HPE Cray EX235a
	// node card: one BMC, 2 to 4 Systems (Node0, Node1, ...).
	ProfileCrayEX = "crayex"
)

// Profiles lists the single-system profiles with a FirmwareInventory, in a
// stable order ("mixed" fleets cycle through it). AllProfiles adds the
// profiles shaped unlike these (basic, crayex).
func Profiles() []string {
	return []string{ProfileDMTF, ProfileILO5, ProfileAMI, ProfileOpenBMC}
}

// AllProfiles lists every profile: Profiles, then basic and crayex.
func AllProfiles() []string {
	return append(Profiles(), ProfileBasic, ProfileCrayEX)
}

// Component keys: the names BMCSpec.Firmware and Fleet.Versions use. On a
// BMC with several systems a per-system component's key is prefixed with
// its system's Id ("Node1.BIOS"); BMCSpec.Firmware's plain "BIOS" then sets
// every system's.
const (
	ComponentBMC     = "BMC"
	ComponentBIOS    = "BIOS"
	ComponentNIC     = "NIC"
	ComponentCPLD    = "CPLD"
	ComponentRuntime = "Runtime"
)

// activation says what makes a flashed version current.
type activation int

const (
	activateNow  activation = iota // at once (NIC, CPLD with Immediate)
	activateBMC                    // the BMC restarts itself
	activateHost                   // the next host reset
)

// updateable is what an inventory member says about Updateable.
type updateable int

const (
	updYes  updateable = iota // "Updateable": true
	updNo                     // "Updateable": false: it cannot be flashed
	updOmit                   // no Updateable property (many real BMCs)
)

type component struct {
	key        string
	id         string // inventory member Id
	name       string
	software   bool // SoftwareInventory rather than FirmwareInventory
	activation activation
	version    string // default initial version
	upd        updateable
	perSystem  bool // one per system (BIOS, Runtime); else the BMC's own
	// sys is, on a BMC, the index of the system a per-system component
	// belongs to, -1 for a shared one (set by newBMC).
	sys int
}

// canUpdate reports whether a member may be flashed: Updateable true or
// omitted (Redfish's default is true).
func (c component) canUpdate() bool { return c.upd != updNo && !c.software }

// actionParam is a SimpleUpdate parameter the BMC checks.
type actionParam struct {
	required  bool
	allowable []string // nil: any value
}

// profile is one hardware shape, parsed once and shared by every BMC that
// uses it: per-BMC memory holds only state, never documents.
type profile struct {
	name string
	docs map[string]map[string]any // static resources by URI (no trailing slash)

	systemPath, managerPath, chassisPath string // the first system's path
	systemIDs                            string // fmt pattern of further system Ids ("Node%d"); "" for one system
	vmediaUnderSystem                    bool   // VirtualMedia under the system (dmtf, crayex) or the manager
	vmediaID                             string
	vmediaColl, vmediaPath               string // the first system's
	simpleUpdatePath                     string // "" when the profile has no SimpleUpdate
	actionInfo                           bool   // SimpleUpdate has a SimpleUpdateActionInfo
	transferProtocol                     actionParam
	strictTransfer                       *actionParam // the capture's, with BMCSpec.StrictTransferProtocol
	targetsAllowable                     bool         // the ActionInfo lists Targets with AllowableValues
	targetsRequired                      bool         // Targets is required (basic)
	targetsSystemManager                 bool         // Targets name the System (BIOS) or Manager (BMC), not inventory
	pushPath, multipartPath              string       // "" when absent
	expand                               bool
	monitorVanishes                      bool                  // finished task monitors answer 404 (iLO)
	noInventory                          bool                  // no FirmwareInventory/SoftwareInventory (basic)
	noSessions                           bool                  // no SessionService: Basic auth only (basic)
	acceptNoContent                      bool                  // updates answer 204 + Location to a Completed task (basic)
	forgetTasks                          bool                  // finished tasks 404 after FlashTime, and on a BMC restart (basic)
	relatedItems                         bool                  // inventory members link their System or Manager
	managerVersion                       func(v string) string // Manager.FirmwareVersion from the BMC version; nil: omitted
	taskMonitor                          func(id string) string
	components                           []component
	inventoryTemplate                    map[string]any
	metadata                             []byte
	serialPrefix                         string
	manufacturer, model                  string // the system's, or a stand-in where the capture has none
}

func loadProfiles() (map[string]*profile, error) {
	meta, err := profileFS.ReadFile("testdata/profiles/metadata.xml")
	if err != nil {
		return nil, err
	}
	out := map[string]*profile{}
	for _, name := range AllProfiles() {
		p := &profile{name: name, docs: map[string]map[string]any{}, metadata: meta}
		root := "testdata/profiles/" + name
		err := fs.WalkDir(profileFS, root, func(file string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || path.Base(file) != "index.json" {
				return err
			}
			raw, err := profileFS.ReadFile(file)
			if err != nil {
				return err
			}
			var doc map[string]any
			if err := json.Unmarshal(raw, &doc); err != nil {
				return fmt.Errorf("profile %s: %s: %w", name, file, err)
			}
			rel := strings.TrimSuffix(strings.TrimPrefix(path.Dir(file), root), "/")
			p.docs[strings.TrimSuffix("/redfish/v1"+rel, "/")] = doc
			return nil
		})
		if err != nil {
			return nil, err
		}
		if err := p.configure(); err != nil {
			return nil, err
		}
		out[name] = p
	}
	return out, nil
}

func (p *profile) firstMember(coll string) string {
	doc := p.docs[coll]
	if m, ok := doc["Members"].([]any); ok && len(m) > 0 {
		if id, ok := m[0].(map[string]any)["@odata.id"].(string); ok {
			return strings.TrimSuffix(id, "/")
		}
	}
	return ""
}

func identity(v string) string { return v }

// configure sets what differs between profiles beyond the documents: where
// things live, which update methods exist, and the inventory. Versions are
// the captures' own strings (see the package documentation).
func (p *profile) configure() error {
	p.systemPath = p.firstMember("/redfish/v1/Systems")
	p.managerPath = p.firstMember("/redfish/v1/Managers")
	p.chassisPath = p.firstMember("/redfish/v1/Chassis")
	if p.systemPath == "" || p.managerPath == "" || p.chassisPath == "" {
		return fmt.Errorf("profile %s: Systems, Managers and Chassis need a member", p.name)
	}
	p.expand, _ = at(p.docs["/redfish/v1"], "ProtocolFeaturesSupported", "ExpandQuery", "Levels").(bool)
	p.taskMonitor = func(id string) string { return "/redfish/v1/TaskService/TaskMonitors/" + id }
	p.managerVersion = identity
	p.transferProtocol = actionParam{allowable: []string{"HTTP", "HTTPS"}}
	type c = component
	switch p.name {
	case ProfileDMTF:
		p.vmediaUnderSystem, p.vmediaID = true, "CD1"
		p.simpleUpdatePath = "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"
		p.actionInfo, p.targetsAllowable, p.relatedItems = true, true, true
		p.transferProtocol = actionParam{allowable: []string{"FTP", "SFTP", "HTTP", "HTTPS", "SCP", "TFTP"}}
		p.pushPath = "/FWUpdate"
		p.multipartPath = "/redfish/v1/UpdateService/upload"
		p.serialPrefix = "437XR"
		p.components = []component{
			{key: ComponentBMC, id: "BMC", name: "Contoso BMC Firmware", activation: activateBMC, version: "1.45.455b66-rev4"},
			{key: ComponentBIOS, id: "BIOS", name: "Contoso BIOS Firmware", activation: activateHost, version: "P79 v1.45", perSystem: true},
			{key: ComponentNIC, id: "NIC", name: "Contoso NIC Firmware", activation: activateNow, version: "1.0.0"},
			{key: ComponentCPLD, id: "CPLD", name: "Contoso CPLD Firmware", activation: activateNow, version: "1.0"},
			{key: "RoT", id: "AC-RoT0", name: "AC-RoT0 firmware", version: "1.11", upd: updNo},
			{key: ComponentRuntime, id: "Runtime", name: "Runtime OS image", software: true, activation: activateHost, version: "1.0.0", perSystem: true},
		}
		p.inventoryTemplate = p.docs["/redfish/v1/UpdateService/FirmwareInventory/BMC"]
	case ProfileILO5:
		p.vmediaID = "2"
		p.simpleUpdatePath = "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"
		p.pushPath = "/cgi-bin/uploadFile"
		p.multipartPath = "/cgi-bin/uploadFile"
		p.monitorVanishes = true
		p.serialPrefix = "MXQ"
		// iLO's Manager says "iLO 5 v2.46" where its inventory says
		// "2.46 May 11 2021".
		p.managerVersion = func(v string) string {
			first, _, _ := strings.Cut(v, " ")
			return "iLO 5 v" + first
		}
		p.taskMonitor = func(id string) string { return "/redfish/v1/TaskService/Tasks/" + id + "/Monitor" }
		p.components = []component{
			{key: ComponentBMC, id: "1", name: "iLO 5", activation: activateBMC, version: "2.46 May 11 2021"},
			{key: ComponentBIOS, id: "2", name: "System ROM", activation: activateHost, version: "A43 v2.52 (10/29/2021)", perSystem: true},
			{key: ComponentCPLD, id: "4", name: "System Programmable Logic Device", activation: activateNow, version: "0x0D"},
			{key: "RedundantROM", id: "6", name: "Redundant System ROM", version: "A43 v2.40 (02/23/2021)", upd: updNo},
			{key: "TPM", id: "9", name: "TPM Firmware", version: "73.64", upd: updOmit},
			{key: ComponentNIC, id: "10", name: "Marvell FastLinQ 41000 Series - 2P 25GbE SFP28 QL41232HLCU-HC MD2 Adapter - NIC", activation: activateNow, version: "08.50.78"},
			{key: "Video", id: "12", name: "Embedded Video Controller", version: "2.5", upd: updNo},
			{key: ComponentRuntime, id: "1", name: "Runtime OS image", software: true, activation: activateHost, version: "1.0.0", perSystem: true},
		}
		p.inventoryTemplate = p.docs["/redfish/v1/UpdateService/FirmwareInventory/1"]
	case ProfileAMI:
		p.vmediaID = "CD1"
		p.simpleUpdatePath = "/redfish/v1/UpdateService/Actions/SimpleUpdate"
		p.actionInfo = true
		// The Gigabyte capture's ActionInfo: TransferProtocol is required,
		// HTTP or FTP. That is BMCSpec.StrictTransferProtocol; by default
		// the profile also takes HTTPS and no TransferProtocol at all.
		p.transferProtocol = actionParam{allowable: []string{"HTTP", "HTTPS", "FTP"}}
		p.strictTransfer = &actionParam{required: true, allowable: []string{"HTTP", "FTP"}}
		p.serialPrefix = "GJG9NF"
		p.components = []component{
			{key: ComponentBMC, id: "BMC", name: "BMC", activation: activateBMC, version: "12.84.13"},
			{key: ComponentBIOS, id: "BIOS", name: "BIOS", activation: activateHost, version: "C27", perSystem: true},
			{key: ComponentCPLD, id: "MB_CPLD1", name: "MB_CPLD1", activation: activateNow, version: "ff"},
			{key: "BPB_CPLD", id: "BPB_CPLD1", name: "BPB_CPLD1", version: "0a", upd: updNo},
			{key: ComponentNIC, id: "NIC", name: "NIC", activation: activateNow, version: "1.0.0"},
			{key: ComponentRuntime, id: "Runtime", name: "Runtime OS image", software: true, activation: activateHost, version: "1.0.0", perSystem: true},
		}
		p.inventoryTemplate = p.docs["/redfish/v1/UpdateService/FirmwareInventory/BIOS"]
	case ProfileOpenBMC:
		p.vmediaID = "1"
		p.pushPath = "/redfish/v1/UpdateService/update"
		p.multipartPath = "/redfish/v1/UpdateService/update"
		p.relatedItems = true
		p.serialPrefix = "OBMC"
		p.taskMonitor = func(id string) string { return "/redfish/v1/TaskService/Tasks/" + id + "/Monitor" }
		p.components = []component{
			{key: ComponentBMC, id: "5d0869c4", name: "Software Inventory", activation: activateBMC, version: "2.15.0-dev-686-g100c36de90"},
			{key: ComponentBIOS, id: "bios_active", name: "Software Inventory", activation: activateHost, version: "1.0.0", perSystem: true},
			{key: ComponentCPLD, id: "cpld_active", name: "Software Inventory", activation: activateNow, version: "1.0"},
			{key: ComponentNIC, id: "nic_active", name: "Software Inventory", activation: activateNow, version: "1.0.0"},
			{key: "BMCBackup", id: "a3f1d5b2", name: "Software Inventory", version: "2.14.0-dev-312-g2f4e6c1d07", upd: updNo},
			{key: ComponentRuntime, id: "runtime_active", name: "Runtime OS image", software: true, activation: activateHost, version: "1.0.0", perSystem: true},
		}
		p.inventoryTemplate = p.docs["/redfish/v1/UpdateService/FirmwareInventory/5d0869c4"]
	case ProfileBasic:
		p.vmediaID = "CD1"
		p.simpleUpdatePath = "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"
		p.actionInfo, p.targetsAllowable, p.targetsRequired, p.targetsSystemManager = true, true, true, true
		p.noInventory, p.noSessions, p.acceptNoContent, p.forgetTasks = true, true, true, true
		p.serialPrefix = "S"
		p.taskMonitor = func(id string) string { return "/redfish/v1/TaskService/Tasks/" + id }
		p.components = []component{
			{key: ComponentBMC, id: "BMC", name: "BMC", activation: activateBMC, version: "1.71.11"},
			{key: ComponentBIOS, id: "BIOS", name: "BIOS", activation: activateHost, version: "3.4", perSystem: true},
			{key: ComponentRuntime, id: "Runtime", name: "Runtime OS image", software: true, activation: activateHost, version: "1.0.0", perSystem: true},
		}
		p.inventoryTemplate = map[string]any{"@odata.type": "#SoftwareInventory.v1_2_0.SoftwareInventory"}
	case ProfileCrayEX:
		p.systemIDs = "Node%d"
		p.vmediaUnderSystem, p.vmediaID = true, "CD1"
		p.simpleUpdatePath = "/redfish/v1/UpdateService/Actions/SimpleUpdate"
		p.actionInfo, p.targetsAllowable, p.relatedItems = true, true, true
		p.transferProtocol = actionParam{required: true, allowable: []string{"HTTP", "HTTPS"}}
		p.managerVersion = nil // the capture's Manager has no FirmwareVersion
		p.serialPrefix = "GE2110"
		p.components = []component{
			{key: ComponentBMC, id: "BMC", name: "BMC", activation: activateBMC, version: "nc.1.6.16-21-prod-master.arm.2022-01-25T16:23:33+00:00.28331ff"},
			{key: ComponentBIOS, id: "BIOS", name: "BIOS", activation: activateHost, version: "ex235a.bios-1.3.6", perSystem: true},
			{key: ComponentCPLD, id: "FPGA0", name: "nFPGA", version: "4.05", upd: updNo},
			{key: "Bootloader", id: "Bootloader", name: "Bootloader", version: "1.11-tlnc", upd: updNo},
			{key: ComponentRuntime, id: "Runtime", name: "Runtime OS image", software: true, activation: activateHost, version: "1.0.0", perSystem: true},
		}
		p.inventoryTemplate = p.docs["/redfish/v1/UpdateService/FirmwareInventory/Node0.BIOS"]
	default:
		return fmt.Errorf("unknown profile %q", p.name)
	}
	if p.inventoryTemplate == nil {
		return fmt.Errorf("profile %s: no inventory template", p.name)
	}
	for i := range p.components {
		p.components[i].sys = -1
	}
	sys := p.docs[p.systemPath]
	p.manufacturer, p.model = asString(sys["Manufacturer"]), asString(sys["Model"])
	if p.manufacturer == "" {
		// The stock OpenBMC capture's System has none; the Manager's Model
		// is "OpenBmc".
		p.manufacturer, p.model = "OpenBMC", asString(p.docs[p.managerPath]["Model"])
	}
	p.vmediaColl = p.managerPath + "/VirtualMedia"
	if p.vmediaUnderSystem {
		p.vmediaColl = p.systemPath + "/VirtualMedia"
	}
	p.vmediaPath = p.vmediaColl + "/" + p.vmediaID
	// Inventory members, task and session resources are rendered from state.
	for k := range p.docs {
		if strings.HasPrefix(k, "/redfish/v1/UpdateService/FirmwareInventory/") {
			delete(p.docs, k)
		}
	}
	return nil
}

func inventoryPath(c component) string {
	if c.software {
		return "/redfish/v1/UpdateService/SoftwareInventory/" + c.id
	}
	return "/redfish/v1/UpdateService/FirmwareInventory/" + c.id
}
