package sim

import "strings"

// HPE's BMCs, written from the facts of their captures in
// ../shared/redfish-mockups: ilo5 from csm/DL325 (shapes) and
// csm/XL675d_A40 (version strings, a non-updateable redundant ROM); crayex
// from csm/EX235a (the Cray nC BMC of an EX235a node card).

func (p *profile) ilo5() shape {
	p.vmediaID = "2"
	p.pushPath = "/cgi-bin/uploadFile"
	p.multipartPath = "/cgi-bin/uploadFile"
	p.monitorVanishes = true
	p.serialPrefix = "MXQ"
	p.runtimeID = "1"
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
	}
	p.additions = map[string]map[string]string{
		"UpdateService": {
			"MultipartHttpPushUri": "iLO 5 takes multipart uploads at its HttpPushUri (/cgi-bin/uploadFile); the simulator also advertises it as MultipartHttpPushUri, declaring UpdateService v1_6_0 (the captures declare v1_1_1, which has no such property)",
			"@odata.type":          "v1_6_0 instead of the captures' v1_1_1: the first version that defines MultipartHttpPushUri",
		},
	}
	return shape{
		system: "1", manager: "1", chassis: "1",
		schemas:      schemas{redfish: "1.6.0", root: "v1_5_1", system: "v1_10_0", manager: "v1_5_1", chassis: "v1_10_2", update: "v1_6_0", inventory: "v1_2_0", tasks: "v1_1_1", sessions: "v1_0_0", actionInfo: "v1_1_2"},
		manufacturer: "HPE", model: "ProLiant DL325 Gen10 Plus",
		root: obj{"Name": "HPE RESTful Root Service", "UUID": "", "Vendor": "HPE", "Product": "ProLiant DL325 Gen10 Plus",
			"ProtocolFeaturesSupported": queryFeatures(expandOneLevel(false, false), false, false)},
		systemDoc: obj{"Name": "Computer System", "BiosVersion": "", "Boot": obj{"BootSourceOverrideMode": "UEFI"}},
		managerDoc: obj{"Model": "iLO 5", "Actions": listsResetTypes,
			"Links": obj{"ManagerForChassis": []any{ref("/redfish/v1/Chassis/1")}, "ManagerInChassis": ref("/redfish/v1/Chassis/1")}},
		chassisDoc: obj{"Manufacturer": "HPE", "Model": "ProLiant DL325 Gen10 Plus", "PowerState": "On"},
		update:     obj{"Description": "iLO Update Service"},
		// iLO tags every resource with an ETag and an @odata.context; the
		// simulator renders both for inventory members.
		inventory: obj{"@odata.context": "", "@odata.etag": "", "Status": enabledOK()},
		tasks:     obj{"Description": "iLO Task Service", "CompletedTaskOverWritePolicy": "Manual", "LifeCycleEventOnTaskStateChange": true},
		sessions:  obj{"Description": "Session Service"},
	}
}

// crayController writes what the Cray controllers share: crayex's nC and
// slingshot's sC, whose captures serve the same service root, Manager,
// update, task and session services, and the SimpleUpdate at the short
// target. TransferProtocol is required.
func (p *profile) crayController() shape {
	p.simpleUpdatePath = shortSimpleUpdate
	p.actionInfo, p.targetsAllowable = true, true
	p.transferProtocol = actionParam{required: true, allowable: []string{"HTTP", "HTTPS"}}
	p.managerVersion = nil // the captures' Manager has no FirmwareVersion
	return shape{
		manager: "BMC", chassis: "Enclosure",
		schemas:      schemas{redfish: "1.2.0", root: "v1_2_0", manager: "v1_3_2", chassis: "v1_5_1", update: "v1_2_0", inventory: "v1_1_0", tasks: "v1_1_0", sessions: "v1_1_3", actionInfo: "v1_0_1"},
		manufacturer: "HPE",
		root:         obj{"Description": "The service root for all Redfish requests on this host"},
		managerDoc: obj{"ManagerType": "EnclosureManager", "Description": "Shasta Manager",
			"Actions": listsResetTypes,
			"Links":   obj{"ManagerInChassis": ref("/redfish/v1/Chassis/Enclosure")}},
		chassisDoc: obj{"ChassisType": "Enclosure", "Manufacturer": "HPE"},
		update:     obj{"Description": "Redfish Update Service", "Status": enabledOK()},
		inventory:  obj{"Status": enabledOK()},
		tasks:      obj{"Description": "Task Service", "LifeCycleEventOnTaskStateChange": true},
		sessions:   obj{"Description": "Session Service"},
	}
}

func (p *profile) crayex() shape {
	s := p.crayController()
	p.systemIDs = "Node%d"
	p.vmediaUnderSystem, p.vmediaID = true, "CD1"
	p.relatedItems = true
	p.serialPrefix = "GE2110"
	p.components = []component{
		plainBMC("nc.1.6.16-21-prod-master.arm.2022-01-25T16:23:33+00:00.28331ff"),
		plainBIOS("ex235a.bios-1.3.6"),
		{key: ComponentCPLD, id: "FPGA0", name: "nFPGA", version: "4.05", upd: updNo},
		{key: "Bootloader", id: "Bootloader", name: "Bootloader", version: "1.11-tlnc", upd: updNo},
	}
	p.additions = map[string]map[string]string{
		"ComputerSystem": {
			"VirtualMedia":                   "the runtime reimage needs a virtual CD per node; the capture shows none, so the simulator declares ComputerSystem v1_13_0, the first with VirtualMedia",
			"@odata.type":                    "v1_13_0 instead of the capture's v1_5_0: the first version that defines VirtualMedia",
			"Links":                          "each node links its chassis and manager, which the capture's System leaves out",
			"Links/Chassis":                  "likewise",
			"Links/ManagedBy":                "likewise",
			"Boot/BootSourceOverrideTarget":  "the boot override of the runtime reimage (the capture's Boot has only BootOrder)",
			"Boot/BootSourceOverrideEnabled": "likewise",
		},
		"Chassis": {
			"Links":                 "the enclosure links its nodes and its manager",
			"Links/ComputerSystems": "likewise",
			"Links/ManagedBy":       "likewise",
		},
		"SoftwareInventory": {
			"RelatedItem":             "each node's BIOS member names its node, so a client tells Node0's from Node1's by more than the Id",
			"RelatedItem@odata.count": "likewise",
		},
	}
	s.system, s.schemas.system, s.model = "Node0", "v1_13_0", "HPE CRAY EX235a"
	s.systemDoc = obj{"BiosVersion": ""}
	s.chassisDoc = merge(s.chassisDoc, obj{"Model": "BardPeakNC", "Description": "BardPeakNC"})
	s.inventory["RelatedItem@odata.count"] = 1
	s.tasks["CompletedTaskOverWritePolicy"] = "Manual"
	s.sessions["SessionTimeout"] = 1800
	return s
}

// slingshot is a device, not a server: the controller of an HPE Slingshot
// switch blade, written from csm/Slingshot_Switch_Blade (the Cray sC
// controller, kin of crayex's nC). It serves a Manager (EnclosureManager,
// no FirmwareVersion), the blade's Chassis (Enclosure) and an
// UpdateService whose SimpleUpdate takes Targets from an ActionInfo, and
// no Systems collection at all: there is no host to power or boot. Its
// inventory is the running controller image (BMC, SoftwareId sc:*:*:*),
// a Recovery image of another version (standby: members.go reads the
// word), Bootloader and the FPGA (not updateable) and the Debian
// Packages. Flashing BMC restarts the controller.
func (p *profile) slingshot() shape {
	s := p.crayController()
	p.noSystems = true
	p.vmediaUnderSystem = true // no virtual media at all: nothing boots
	p.serialPrefix = "HB1922"
	bmc := plainBMC("sc.1.7.2-118-slingshot-release.arm64.2022-04-11T09:19:12+00:00.735ee40")
	bmc.softwareID = "sc:*:*:*"
	p.components = []component{
		bmc,
		{key: "Recovery", id: "Recovery", name: "Recovery", activation: activateNow,
			version: "rec.1.2.cronomatic-dev.arm64.2020-02-27T21:41:10+00:00.f0f4281a"},
		{key: "Bootloader", id: "Bootloader", name: "Bootloader", version: "1.4-sc-ros", upd: updNo},
		{key: ComponentCPLD, id: "FPGA0", name: "sFPGA-CDO", version: "1.05", upd: updNo},
		{key: "Packages", id: "Packages", name: "Packages", activation: activateNow, version: "na"},
	}
	s.model = "HPE_Slingshot_1_Switch_Blade"
	s.chassisDoc = merge(s.chassisDoc, obj{"Model": s.model, "Description": s.model, "PartNumber": "102000002.A", "PowerState": "On", "Status": enabledOK()})
	s.tasks["CompletedTaskOverWritePolicy"] = "Oldest"
	s.sessions["SessionTimeout"] = 30
	return s
}
