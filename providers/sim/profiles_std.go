package sim

// The profiles of the standards body's example server, of an AMI MegaRAC,
// of OpenBMC and of an older BMC without a firmware inventory, written
// from the facts of their captures in ../shared/redfish-mockups (dmtf:
// dmtf/public-rackmount1; ami: csm/Gigabyte; openbmc: csm/OpenBMC-stock;
// basic: none, written for this project).

// obj is a JSON object of a profile's documents.
type obj = map[string]any

// standardSimpleUpdate is the SimpleUpdate action's URI where a BMC puts
// it as the schema does.
const standardSimpleUpdate = "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"

// shortSimpleUpdate is the SimpleUpdate target of AMI's and Cray's BMCs,
// not the standard one: kept as the vendors have it (the Service
// Validator reports it as an Action URI error).
const shortSimpleUpdate = "/redfish/v1/UpdateService/Actions/SimpleUpdate"

// runtimeComponent is the runtime OS image every server profile carries
// after its firmware (the release's runtime, on the host), under the
// inventory id id (the profile's runtimeID).
func runtimeComponent(id string) component {
	return component{key: ComponentRuntime, id: id, name: "Runtime OS image", software: true, activation: activateHost, version: "1.0.0", perSystem: true}
}

// expandOneLevel is what a BMC that expands one level of links says in
// ProtocolFeaturesSupported; the simulator expands Members one level.
func expandOneLevel(all, links bool) obj {
	return obj{"ExpandAll": all, "Levels": true, "Links": links, "MaxLevels": 1, "NoLinks": true}
}

// queryFeatures is ProtocolFeaturesSupported as the simulator serves it:
// $expand as given (nil: not offered), only supported, and none of
// excerpt, $filter, $select or deep operations (a capture that offers them
// is answered false: the simulator implements none). excerpt and deep say
// whether the capture names ExcerptQuery and DeepOperations at all.
func queryFeatures(expand obj, excerpt, deep bool) obj {
	f := obj{"FilterQuery": false, "OnlyMemberQuery": true, "SelectQuery": false}
	if excerpt {
		f["ExcerptQuery"] = false // the capture names it
	}
	if deep {
		f["DeepOperations"] = obj{"DeepPATCH": false, "DeepPOST": false}
	}
	if expand != nil {
		f["ExpandQuery"] = expand
	}
	return f
}

// enabledOK is the Status of a resource that is there and healthy.
func enabledOK() obj { return obj{"State": "Enabled", "Health": "OK"} }

// listsResetTypes is the Manager.Reset action of a capture that lists its
// reset types (render.go serves managerResetTypes there).
var listsResetTypes = obj{"#Manager.Reset": obj{"ResetType@Redfish.AllowableValues": managerResetTypes}}

// credentialParams are the SimpleUpdate parameters of a capture that takes
// the image server's credentials.
var credentialParams = []any{obj{"Name": "Username", "Required": false, "DataType": "String"}, obj{"Name": "Password", "Required": false, "DataType": "String"}}

// plainBMC and plainBIOS are the BMC's and the host's firmware where the
// inventory calls them BMC and BIOS.
func plainBMC(version string) component {
	return component{key: ComponentBMC, id: "BMC", name: "BMC", activation: activateBMC, version: version}
}

func plainBIOS(version string) component {
	return component{key: ComponentBIOS, id: "BIOS", name: "BIOS", activation: activateHost, version: version, perSystem: true}
}

// The additions every profile shares: what the simulator serves whatever
// the capture (TestProfilesHoldToTheirCaptures accepts them everywhere).
var commonAdditions = map[string]map[string]string{
	"ServiceRoot": {
		"AccountService": "the three standard roles DSP0266 requires are served on every profile",
		"Links":          "Links.Sessions is required by the ServiceRoot schema",
	},
	"ComputerSystem": {
		"Actions/#ComputerSystem.Reset/@Redfish.ActionInfo":               "every action whose parameters the simulator checks has an ActionInfo",
		"Actions/#ComputerSystem.Reset/ResetType@Redfish.AllowableValues": "the reset types the simulator implements",
		"Boot/BootSourceOverrideTarget@Redfish.AllowableValues":           "the boot targets the simulator accepts",
		"Boot/BootSourceOverrideEnabled@Redfish.AllowableValues":          "the override modes the simulator accepts",
		"HostName":     "the server's name, so a person can tell simulated BMCs apart",
		"UUID":         "each simulated system's own identity, which apply checks",
		"SerialNumber": "each simulated system's own identity, which apply checks",
		"Status":       "the health the simulator's faults change",
	},
	"Manager": {
		"Actions/#Manager.Reset/@Redfish.ActionInfo": "every action whose parameters the simulator checks has an ActionInfo",
		"UUID":   "each simulated BMC's own identity",
		"Status": "the manager's health",
	},
	"Chassis": {
		"SerialNumber": "each simulated server's own identity",
	},
	"SoftwareInventory": {
		"SoftwareId":  "the component key (BIOS, BMC, ...) unless BMCSpec.SoftwareIDs says otherwise, so one configuration's match rule suits every profile",
		"Description": "names the component key",
		"Status":      "each member's state",
	},
	"UpdateService": {
		"SoftwareInventory": "the runtime image the simulator reimages through VirtualMedia",
		"Actions/#UpdateService.SimpleUpdate/@Redfish.OperationApplyTimeSupport":       "the apply times the simulator implements (Immediate, OnReset)",
		"Actions/#UpdateService.SimpleUpdate/TransferProtocol@Redfish.AllowableValues": "the transfer protocols this BMC's ActionInfo allows, repeated on the action",
	},
}

func (p *profile) dmtf() shape {
	p.vmediaUnderSystem, p.vmediaID = true, "CD1"
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
	}
	p.additions = map[string]map[string]string{
		"UpdateService": {
			"MultipartHttpPushUri": "the multipart push of UpdateService v1_6_0 and later, which the standard's example server does not show but its schema version defines",
		},
		"FirmwareInventory": {
			"NIC":     "a NIC to update, so a fleet of this profile has every component kind (BMC, BIOS, NIC, CPLD)",
			"CPLD":    "a CPLD to update, likewise",
			"AC-RoT0": "the capture's root of trust, named in its Chassis; the simulator lists it as a non-updateable member",
		},
	}
	return shape{
		system: "437XR1138R2", manager: "BMC", chassis: "1U",
		schemas:      schemas{redfish: "1.15.0", root: "v1_20_0", system: "v1_27_0", manager: "v1_24_0", chassis: "v1_28_0", update: "v1_17_0", inventory: "v1_13_0", tasks: "v1_3_0", sessions: "v1_2_0", actionInfo: "v1_5_0"},
		manufacturer: "Contoso", model: "3500",
		root:      obj{"UUID": "", "ProtocolFeaturesSupported": queryFeatures(expandOneLevel(true, true), true, false)},
		systemDoc: obj{"BiosVersion": "", "Boot": obj{"BootSourceOverrideMode": "UEFI"}},
		managerDoc: obj{"Model": "Joo Janta 200", "PowerState": "On", "Actions": listsResetTypes,
			"Links": obj{"ManagerForChassis": []any{ref("/redfish/v1/Chassis/1U")}, "ManagerInChassis": ref("/redfish/v1/Chassis/1U")}},
		chassisDoc: obj{"Manufacturer": "Contoso", "Model": "3500RX", "PowerState": "On"},
		update:     obj{"Status": enabledOK()},
		inventory:  obj{"Manufacturer": "Contoso"},
		tasks:      obj{"CompletedTaskOverWritePolicy": "Manual", "LifeCycleEventOnTaskStateChange": true},
		sessions:   obj{"Status": enabledOK(), "SessionTimeout": 1800},
		actionInfo: credentialParams,
	}
}

func (p *profile) ami() shape {
	p.vmediaID = "CD1"
	p.simpleUpdatePath = shortSimpleUpdate
	p.actionInfo = true
	// The Gigabyte capture's ActionInfo: TransferProtocol is required,
	// HTTP or FTP. That is BMCSpec.StrictTransferProtocol; by default the
	// profile also takes HTTPS and no TransferProtocol at all.
	p.transferProtocol = actionParam{allowable: []string{"HTTP", "HTTPS", "FTP"}}
	p.strictTransfer = &actionParam{required: true, allowable: []string{"HTTP", "FTP"}}
	p.serialPrefix = "GJG9NF"
	p.components = []component{
		plainBMC("12.84.13"),
		plainBIOS("C27"),
		{key: ComponentCPLD, id: "MB_CPLD1", name: "MB_CPLD1", activation: activateNow, version: "ff"},
		{key: "BPB_CPLD", id: "BPB_CPLD1", name: "BPB_CPLD1", version: "0a", upd: updNo},
		{key: ComponentNIC, id: "NIC", name: "NIC", activation: activateNow, version: "1.0.0"},
	}
	p.additions = map[string]map[string]string{
		"FirmwareInventory": {
			"BPB_CPLD1": "the backplane CPLD the capture's ActionInfo names (UpdateComponent BPB_CPLD), as a non-updateable member",
			"NIC":       "a NIC to update, so a fleet of this profile has every component kind",
		},
	}
	return shape{
		system: "Self", manager: "Self", chassis: "Self",
		schemas:      schemas{redfish: "1.7.0", root: "v1_5_1", system: "v1_7_0", manager: "v1_5_2", chassis: "v1_9_1", update: "v1_5_0", inventory: "v1_2_1", tasks: "v1_1_3", sessions: "v1_1_5", actionInfo: "v1_1_1"},
		manufacturer: "GIGABYTE", model: "H262-Z63-00",
		root:       obj{"UUID": "", "Vendor": "AMI", "Product": "AMI Redfish Server", "ProtocolFeaturesSupported": queryFeatures(expandOneLevel(true, true), true, false)},
		systemDoc:  obj{"BiosVersion": "", "Boot": obj{"BootSourceOverrideMode": "UEFI"}},
		managerDoc: obj{"Model": "410810600", "Links": obj{"ManagerForChassis": []any{ref("/redfish/v1/Chassis/Self")}, "ManagerInChassis": ref("/redfish/v1/Chassis/Self")}},
		chassisDoc: obj{"Manufacturer": "GIGABYTE", "Model": "H262-Z63-00",
			"Links": obj{"ComputerSystems@odata.count": 1, "ManagedBy@odata.count": 1}},
		update:    obj{"Status": enabledOK()},
		inventory: obj{},
		tasks:     obj{"CompletedTaskOverWritePolicy": "Oldest", "LifeCycleEventOnTaskStateChange": true},
		sessions:  obj{"SessionTimeout": 1800},
		// The capture's own parameters: credentials for the image server,
		// and AMI's UpdateComponent (which part of the image to flash) and
		// ResetBMC, which the simulator accepts and ignores.
		actionInfo: []any{
			obj{"Name": "User", "Required": false, "DataType": "String"},
			obj{"Name": "Password", "Required": false, "DataType": "String"},
			obj{"Name": "UpdateComponent", "Required": false, "DataType": "String", "AllowableValues": []any{"BMC", "BIOS", "MB_CPLD", "BPB_CPLD"}},
			obj{"Name": "ResetBMC", "Required": false, "DataType": "Boolean"},
		},
	}
}

func (p *profile) openbmc() shape {
	p.vmediaID = "1"
	p.simpleUpdatePath = "" // the capture's UpdateService has no Actions
	p.pushPath = "/redfish/v1/UpdateService/update"
	p.multipartPath = "/redfish/v1/UpdateService/update"
	p.relatedItems = true
	p.serialPrefix = "OBMC"
	p.runtimeID = "runtime_active"
	p.taskMonitor = func(id string) string { return "/redfish/v1/TaskService/Tasks/" + id + "/Monitor" }
	p.components = []component{
		{key: ComponentBMC, id: "5d0869c4", name: "Software Inventory", activation: activateBMC, version: "2.15.0-dev-686-g100c36de90"},
		{key: ComponentBIOS, id: "bios_active", name: "Software Inventory", activation: activateHost, version: "1.0.0", perSystem: true},
		{key: ComponentCPLD, id: "cpld_active", name: "Software Inventory", activation: activateNow, version: "1.0"},
		{key: ComponentNIC, id: "nic_active", name: "Software Inventory", activation: activateNow, version: "1.0.0"},
		{key: "BMCBackup", id: "a3f1d5b2", name: "Software Inventory", version: "2.14.0-dev-312-g2f4e6c1d07", upd: updNo},
	}
	p.additions = map[string]map[string]string{
		"ComputerSystem": {
			"Manufacturer": "the stock OpenBMC capture's System has none; the simulator names every system's maker",
			"Model":        "likewise",
		},
		"Manager": {"VirtualMedia": "the stock OpenBMC capture has no VirtualMedia; the simulator serves a bmcweb-like one (Managers/bmc/VirtualMedia/1) for the runtime reimage"},
		"FirmwareInventory": {
			"bios_active": "the host firmware, which a real OpenBMC lists beside its own image (the stock capture has only the BMC's)",
			"cpld_active": "a CPLD to update, likewise",
			"nic_active":  "a NIC to update, likewise",
			"a3f1d5b2":    "the BMC's backup image, as bmcweb lists it: non-updateable",
		},
	}
	const fw = "/redfish/v1/UpdateService/FirmwareInventory/"
	return shape{
		system: "system", manager: "bmc", chassis: "chassis",
		schemas:      schemas{redfish: "1.17.0", root: "v1_15_0", system: "v1_16_0", manager: "v1_14_0", chassis: "v1_22_0", update: "v1_11_1", inventory: "v1_1_0", tasks: "v1_1_4", sessions: "v1_0_2", actionInfo: "v1_1_2"},
		manufacturer: "OpenBMC", model: "OpenBmc",
		root: obj{"UUID": "", "ProtocolFeaturesSupported": queryFeatures(obj{"ExpandAll": false, "Levels": false, "Links": false, "NoLinks": false}, true, true),
			"Links": obj{"ManagerProvidingService": ref("/redfish/v1/Managers/bmc")}},
		systemDoc: obj{"Boot": obj{"BootSourceOverrideMode": "UEFI"}},
		managerDoc: obj{"Model": "OpenBmc", "PowerState": "On",
			"Links": obj{"ActiveSoftwareImage": ref(fw + "5d0869c4"), "SoftwareImages": []any{ref(fw + "5d0869c4"), ref(fw + "a3f1d5b2")}, "SoftwareImages@odata.count": 2,
				"ManagerForChassis": []any{ref("/redfish/v1/Chassis/chassis")}, "ManagerForChassis@odata.count": 1, "ManagerForServers@odata.count": 1,
				"ManagerInChassis": ref("/redfish/v1/Chassis/chassis")}},
		update:    obj{"HttpPushUriOptions": obj{"HttpPushUriApplyTime": obj{"ApplyTime": "OnReset"}}, "MaxImageSizeBytes": 419430400},
		inventory: obj{"RelatedItem@odata.count": 1},
		tasks:     obj{"CompletedTaskOverWritePolicy": "Oldest", "LifeCycleEventOnTaskStateChange": true},
		sessions:  obj{"SessionTimeout": 1800},
	}
}

// withoutInventory writes what a BMC without a firmware inventory does
// (basic, sushy): its versions are ComputerSystem.BiosVersion and
// Manager.FirmwareVersion, SimpleUpdate requires Targets, the System (for
// BIOS) or the Manager (for BMC), and an accepted update answers 204 with
// a Location to a Task that is already Completed.
func (p *profile) withoutInventory(bmcVersion, biosVersion string) {
	p.noInventory, p.acceptNoContent = true, true
	p.targetsSystemManager, p.targetsAllowable, p.targetsRequired = true, true, true
	p.taskMonitor = func(id string) string { return "/redfish/v1/TaskService/Tasks/" + id }
	p.components = []component{plainBMC(bmcVersion), plainBIOS(biosVersion)}
}

func (p *profile) basic() shape {
	p.withoutInventory("1.71.11", "3.4")
	p.vmediaID = "CD1"
	p.actionInfo, p.noSessions, p.forgetTasks = true, true, true
	p.serialPrefix = "S"
	return shape{
		system: "1", manager: "1", chassis: "1",
		schemas:      schemas{redfish: "1.0.1", root: "v1_1_0", system: "v1_3_0", manager: "v1_3_0", chassis: "v1_5_0", update: "v1_2_0", inventory: "v1_2_0", tasks: "v1_1_0", sessions: "v1_1_0", actionInfo: "v1_1_0"},
		manufacturer: "Supermicro", model: "SYS-6019P-WTR",
		root:       obj{"UUID": ""},
		systemDoc:  obj{"BiosVersion": "", "Boot": obj{"BootSourceOverrideMode": "UEFI"}},
		managerDoc: obj{"Model": "ASPEED"},
		chassisDoc: obj{"Manufacturer": "Supermicro", "Model": "X11DPU"},
		update:     obj{"Status": enabledOK()},
		tasks:      obj{"CompletedTaskOverWritePolicy": "Oldest"},
		// An older BMC's session service is there but disabled: it takes
		// HTTP Basic authentication only. The Protocol Validator reports
		// the refused logins (405): they are what this profile is for.
		sessions: obj{"ServiceEnabled": false},
	}
}
