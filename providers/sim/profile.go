package sim

import (
	"fmt"
	"slices"
)

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
	// ProfileSlingshot is a device, not a server: the controller of an
	// HPE Slingshot switch blade (a Manager, a Chassis and an
	// UpdateService, no ComputerSystem).
	ProfileSlingshot = "slingshot"
)

// DeviceProfiles lists the profiles of rack members that are not servers
// (a config device block): BMCs that serve no ComputerSystem. They are not
// among AllProfiles, whose every BMC serves a system.
func DeviceProfiles() []string { return []string{ProfileSlingshot} }

// IsDeviceProfile reports whether name is one of DeviceProfiles.
func IsDeviceProfile(name string) bool { return slices.Contains(DeviceProfiles(), name) }

// Profiles lists the single-system profiles with a FirmwareInventory, in a
// stable order ("mixed" fleets cycle through it). AllProfiles adds the
// profiles shaped unlike these (basic, crayex).
func Profiles() []string {
	return []string{ProfileDMTF, ProfileILO5, ProfileAMI, ProfileOpenBMC}
}

// AllProfiles lists every profile: Profiles, then basic and crayex, then
// the vendor profiles (idrac, xcc, hgx, sushy).
func AllProfiles() []string {
	return append(Profiles(), ProfileBasic, ProfileCrayEX, ProfileIDRAC, ProfileXCC, ProfileHGX, ProfileSushy)
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
	ComponentGPU     = "GPU"
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
	// softwareID is the SoftwareId the member reports ("" for the key).
	softwareID string
	// memberID makes the active member's Id from its version (Dell);
	// nil for the fixed id.
	memberID func(version string) string
	// availableID is the Id of an image of this component uploaded but not
	// installed (Dell Available-); nil where uploads install at once.
	availableID func(version string) string
	// previous is the initial rollback version (Dell Previous-), "" for none.
	previous string
	// state is the active member's Status.State ("" for Enabled).
	state string
	// twins are the further members the component shows.
	twins []twin
	// imageOf names the component (BMC, BIOS) whose other image this
	// member is (a backup, golden or staging copy): listed among its
	// SoftwareImages.
	imageOf string
	// oem is the member's Oem object for a member kind (-1 for the active
	// member, else a twinKind) and version; nil for none.
	oem func(kind int, version string) map[string]any
}

// canUpdate reports whether a member may be flashed: Updateable true or
// omitted (Redfish's default is true).
func (c component) canUpdate() bool { return c.upd != updNo && !c.software }

// actionParam is a SimpleUpdate parameter the BMC checks.
type actionParam struct {
	required  bool
	allowable []string // nil: any value
}

// profile is one hardware shape, written once and shared by every BMC that
// uses it: per-BMC memory holds only state, never documents.
type profile struct {
	name string
	docs map[string]map[string]any // static resources by URI (no trailing slash)

	systemPath, managerPath, chassisPath string // the first system's path
	systemIDs                            string // fmt pattern of further system Ids ("Node%d"); "" for one system
	vmediaUnderSystem                    bool   // VirtualMedia under the system (dmtf, crayex) or the manager
	vmediaID                             string
	vmediaColl, vmediaPath               string // the first system's
	simpleUpdatePath                     string // the schema's (standardSimpleUpdate) unless the profile says; "" for none
	actionInfo                           bool   // SimpleUpdate has a SimpleUpdateActionInfo
	transferProtocol                     actionParam
	strictTransfer                       *actionParam // the capture's, with BMCSpec.StrictTransferProtocol
	targetsAllowable                     bool         // the ActionInfo lists Targets with AllowableValues
	targetsRequired                      bool         // Targets is required (basic)
	targetsSystemManager                 bool         // Targets name the System (BIOS) or Manager (BMC), not inventory
	pushPath, multipartPath              string       // "" when absent
	// multiTarget: SimpleUpdate and push take several Targets, and an
	// image for a key of several members flashes them all (hgx).
	multiTarget bool
	// systemManagerTargets: Targets may also name the System (its BIOS)
	// and the Manager (the BMC) beside inventory members (hgx).
	systemManagerTargets bool
	// targetsOnly limits the Targets the ActionInfo allows to these member
	// ids (xcc: BMC-Backup); nil for every updateable member.
	targetsOnly []string
	// uploadStages: a plain push to pushPath stages the image as an
	// Available- member instead of installing it (Dell).
	uploadStages bool
	// noApplyTime: SimpleUpdate advertises no OperationApplyTimeSupport.
	noApplyTime bool
	// activeImages: the Manager's Links name its ActiveSoftwareImage and
	// SoftwareImages, following the members as they change (Dell, Lenovo,
	// Supermicro).
	activeImages bool
	// biosResource: each System links and serves a Bios resource whose
	// Links name the BIOS member it runs.
	biosResource bool
	// basicOnLogin: the session login wants HTTP Basic credentials as well
	// (sushy-tools' emulator), else 401.
	basicOnLogin bool
	// inventoryLinks: UpdateService links FirmwareInventory and
	// SoftwareInventory though noInventory makes both 404 (sushy).
	inventoryLinks bool
	// deadPushURI is an HttpPushUri advertised where nothing is served:
	// a push there answers 404 (sushy: the FirmwareInventory URI).
	deadPushURI string
	// refuseManagerTargets: SimpleUpdate refuses a Manager in Targets
	// (sushy: "Manager is not currently a supported Target.").
	refuseManagerTargets bool
	// biosVersion is ComputerSystem.BiosVersion from the BIOS member's
	// version; nil: the same string.
	biosVersion       func(v string) string
	expand            bool
	monitorVanishes   bool                  // finished task monitors answer 404 (iLO)
	noInventory       bool                  // no FirmwareInventory/SoftwareInventory (basic)
	noSessions        bool                  // no SessionService: Basic auth only (basic)
	acceptNoContent   bool                  // updates answer 204 + Location to a Completed task (basic)
	forgetTasks       bool                  // finished tasks 404 after FlashTime, and on a BMC restart (basic)
	relatedItems      bool                  // inventory members link their System or Manager
	managerVersion    func(v string) string // Manager.FirmwareVersion from the BMC version; nil: omitted
	taskMonitor       func(id string) string
	components        []component
	runtimeID         string // the runtime image's inventory Id ("Runtime" unless the profile says)
	inventoryTemplate map[string]any
	metadata          []byte
	// additions are the properties this profile serves that its capture
	// lacks, each with the reason (the capture comparison test reads them),
	// by resource kind and property path ("UpdateService":
	// "MultipartHttpPushUri").
	additions           map[string]map[string]string
	serialPrefix        string
	manufacturer, model string // the system's, or a stand-in where the capture has none
	// noSystems: the BMC serves no ComputerSystem, no Systems collection
	// and no host (a device: slingshot); its chassis is what it is.
	noSystems bool
}

func loadProfiles() (map[string]*profile, error) {
	out := map[string]*profile{}
	for _, name := range append(AllProfiles(), DeviceProfiles()...) {
		p := &profile{name: name, docs: map[string]map[string]any{}}
		if err := p.configure(); err != nil {
			return nil, err
		}
		out[name] = p
	}
	return out, nil
}

// profileShapes write each profile (profiles_*.go), by name.
var profileShapes = map[string]func(*profile) shape{
	ProfileDMTF:      (*profile).dmtf,
	ProfileILO5:      (*profile).ilo5,
	ProfileAMI:       (*profile).ami,
	ProfileOpenBMC:   (*profile).openbmc,
	ProfileBasic:     (*profile).basic,
	ProfileCrayEX:    (*profile).crayex,
	ProfileIDRAC:     (*profile).idrac,
	ProfileXCC:       (*profile).xcc,
	ProfileHGX:       (*profile).hgx,
	ProfileSushy:     (*profile).sushy,
	ProfileSlingshot: (*profile).slingshot,
}

// configure writes the profile: where things live, which update methods
// exist, the inventory and the documents (profiles_*.go). Versions are the
// strings the real BMCs report (see the package documentation).
func (p *profile) configure() error {
	p.taskMonitor = func(id string) string { return "/redfish/v1/TaskService/TaskMonitors/" + id }
	p.managerVersion = func(v string) string { return v }
	p.transferProtocol = actionParam{allowable: []string{"HTTP", "HTTPS"}}
	p.simpleUpdatePath = standardSimpleUpdate
	p.runtimeID = "Runtime"
	shapeOf, ok := profileShapes[p.name]
	if !ok {
		return fmt.Errorf("unknown profile %q", p.name)
	}
	s := shapeOf(p)
	if !p.noSystems {
		p.components = append(p.components, runtimeComponent(p.runtimeID))
	}
	if err := p.write(s); err != nil {
		return fmt.Errorf("profile %s: %w", p.name, err)
	}
	for i := range p.components {
		p.components[i].sys = -1
	}
	p.manufacturer, p.model = s.manufacturer, s.model
	p.vmediaColl, p.vmediaPath = p.vmedia(p.systemPath)
	p.expand, _ = at(p.docs["/redfish/v1"], "ProtocolFeaturesSupported", "ExpandQuery", "Levels").(bool)
	p.metadata = metadataDocument(p)
	return nil
}

// vmedia is where the system at systemPath finds its virtual media: the
// collection, under the system or the manager, and the one medium in it.
func (p *profile) vmedia(systemPath string) (coll, path string) {
	coll = p.managerPath + "/VirtualMedia"
	if p.vmediaUnderSystem {
		coll = systemPath + "/VirtualMedia"
	}
	return coll, coll + "/" + p.vmediaID
}

func inventoryPath(c component) string { return inventoryPrefix(c) + c.id }
