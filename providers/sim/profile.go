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
)

// Profiles lists the hardware profiles in a stable order ("mixed" fleets
// cycle through it).
func Profiles() []string {
	return []string{ProfileDMTF, ProfileILO5, ProfileAMI, ProfileOpenBMC}
}

// Component keys: the names BMCSpec.Firmware and Fleet.Versions use.
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

type component struct {
	key        string
	id         string // inventory member Id
	name       string
	software   bool // SoftwareInventory rather than FirmwareInventory
	activation activation
	version    string // default initial version
}

// profile is one hardware shape, parsed once and shared by every BMC that
// uses it: per-BMC memory holds only state, never documents.
type profile struct {
	name string
	docs map[string]map[string]any // static resources by URI (no trailing slash)

	systemPath, managerPath, chassisPath string
	vmediaColl, vmediaPath               string
	simpleUpdatePath                     string // "" when the profile has no SimpleUpdate
	pushPath, multipartPath              string // "" when absent
	expand                               bool
	monitorVanishes                      bool // finished task monitors answer 404 (iLO)
	taskMonitor                          func(id string) string
	components                           []component
	inventoryTemplate                    map[string]any
	metadata                             []byte
}

func (p *profile) component(key string) (int, bool) {
	for i, c := range p.components {
		if strings.EqualFold(c.key, key) {
			return i, true
		}
	}
	return 0, false
}

func (p *profile) inventoryPath(c component) string {
	if c.software {
		return "/redfish/v1/UpdateService/SoftwareInventory/" + c.id
	}
	return "/redfish/v1/UpdateService/FirmwareInventory/" + c.id
}

func loadProfiles() (map[string]*profile, error) {
	meta, err := profileFS.ReadFile("testdata/profiles/metadata.xml")
	if err != nil {
		return nil, err
	}
	out := map[string]*profile{}
	for _, name := range Profiles() {
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

// configure sets what differs between profiles beyond the documents: where
// things live, which update methods exist, and the inventory.
func (p *profile) configure() error {
	p.systemPath = p.firstMember("/redfish/v1/Systems")
	p.managerPath = p.firstMember("/redfish/v1/Managers")
	p.chassisPath = p.firstMember("/redfish/v1/Chassis")
	if p.systemPath == "" || p.managerPath == "" || p.chassisPath == "" {
		return fmt.Errorf("profile %s: Systems, Managers and Chassis need a member", p.name)
	}
	if eq, ok := p.docs["/redfish/v1"]["ProtocolFeaturesSupported"].(map[string]any)["ExpandQuery"].(map[string]any); ok {
		p.expand, _ = eq["Levels"].(bool)
	}
	p.taskMonitor = func(id string) string { return "/redfish/v1/TaskService/TaskMonitors/" + id }
	switch p.name {
	case ProfileDMTF:
		p.vmediaColl = p.systemPath + "/VirtualMedia"
		p.vmediaPath = p.vmediaColl + "/CD1"
		p.simpleUpdatePath = "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"
		p.pushPath = "/FWUpdate"
		p.multipartPath = "/redfish/v1/UpdateService/upload"
		p.components = []component{
			{ComponentBMC, "BMC", "Contoso BMC Firmware", false, activateBMC, "1.45.455b66-rev4"},
			{ComponentBIOS, "BIOS", "Contoso BIOS Firmware", false, activateHost, "P79 v1.45"},
			{ComponentNIC, "NIC", "Contoso NIC Firmware", false, activateNow, "1.0.0"},
			{ComponentCPLD, "CPLD", "Contoso CPLD Firmware", false, activateNow, "1.0"},
			{ComponentRuntime, "Runtime", "Runtime OS image", true, activateHost, "1.0.0"},
		}
		p.inventoryTemplate = p.docs["/redfish/v1/UpdateService/FirmwareInventory/BMC"]
	case ProfileILO5:
		p.vmediaColl = p.managerPath + "/VirtualMedia"
		p.vmediaPath = p.vmediaColl + "/2"
		p.simpleUpdatePath = "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"
		p.pushPath = "/cgi-bin/uploadFile"
		p.multipartPath = "/cgi-bin/uploadFile"
		p.monitorVanishes = true
		p.taskMonitor = func(id string) string { return "/redfish/v1/TaskService/Tasks/" + id + "/Monitor" }
		p.components = []component{
			{ComponentBMC, "1", "iLO 5", false, activateBMC, "2.46"},
			{ComponentBIOS, "2", "System ROM", false, activateHost, "2.52"},
			{ComponentCPLD, "4", "System Programmable Logic Device", false, activateNow, "0x0D"},
			{ComponentNIC, "10", "Marvell FastLinQ 41000 Series - 2P 25GbE SFP28 QL41232HLCU-HC MD2 Adapter - NIC", false, activateNow, "08.50.78"},
			{ComponentRuntime, "1", "Runtime OS image", true, activateHost, "1.0.0"},
		}
		p.inventoryTemplate = p.docs["/redfish/v1/UpdateService/FirmwareInventory/1"]
	case ProfileAMI:
		p.vmediaColl = p.managerPath + "/VirtualMedia"
		p.vmediaPath = p.vmediaColl + "/CD1"
		p.simpleUpdatePath = "/redfish/v1/UpdateService/Actions/SimpleUpdate"
		p.components = []component{
			{ComponentBMC, "BMC", "BMC", false, activateBMC, "12.61.17"},
			{ComponentBIOS, "BIOS", "BIOS", false, activateHost, "C27"},
			{ComponentCPLD, "MB_CPLD1", "MB_CPLD1", false, activateNow, "10.00.03"},
			{ComponentNIC, "NIC", "NIC", false, activateNow, "1.0.0"},
			{ComponentRuntime, "Runtime", "Runtime OS image", true, activateHost, "1.0.0"},
		}
		p.inventoryTemplate = p.docs["/redfish/v1/UpdateService/FirmwareInventory/BIOS"]
	case ProfileOpenBMC:
		p.vmediaColl = p.managerPath + "/VirtualMedia"
		p.vmediaPath = p.vmediaColl + "/1"
		p.pushPath = "/redfish/v1/UpdateService/update"
		p.multipartPath = "/redfish/v1/UpdateService/update"
		p.taskMonitor = func(id string) string { return "/redfish/v1/TaskService/Tasks/" + id + "/Monitor" }
		p.components = []component{
			{ComponentBMC, "5d0869c4", "Software Inventory", false, activateBMC, "2.15.0"},
			{ComponentBIOS, "bios_active", "Software Inventory", false, activateHost, "1.0.0"},
			{ComponentCPLD, "cpld_active", "Software Inventory", false, activateNow, "1.0"},
			{ComponentNIC, "nic_active", "Software Inventory", false, activateNow, "1.0.0"},
			{ComponentRuntime, "runtime_active", "Runtime OS image", true, activateHost, "1.0.0"},
		}
		p.inventoryTemplate = p.docs["/redfish/v1/UpdateService/FirmwareInventory/5d0869c4"]
	default:
		return fmt.Errorf("unknown profile %q", p.name)
	}
	if p.inventoryTemplate == nil {
		return fmt.Errorf("profile %s: no inventory template", p.name)
	}
	// Inventory members, task and session resources are rendered from state.
	for k := range p.docs {
		if strings.HasPrefix(k, "/redfish/v1/UpdateService/FirmwareInventory/") {
			delete(p.docs, k)
		}
	}
	return nil
}
