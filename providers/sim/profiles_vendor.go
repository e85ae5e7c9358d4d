package sim

import (
	"fmt"
	"strings"
)

// Profiles of vendors whose BMCs list more than one member per component,
// written from the facts of their captures in ../shared/redfish-mockups
// (idrac: dell/R750; xcc: lenovo/SR670V2; hgx:
// supermicro/SYS-821GE-TNHR), and of a BMC that wants Basic credentials
// on its session login (sushy: the OpenStack sushy-tools emulator's
// behaviour; no capture).

// Profile names of the vendor profiles.
const (
	// ProfileIDRAC is a Dell iDRAC9 (PowerEdge R750): inventory Ids
	// Installed-/Current-/Previous-/Available-<ComponentID>-<Version>__<FQDD>.
	ProfileIDRAC = "idrac"
	// ProfileXCC is a Lenovo XClarity Controller (ThinkSystem SR670 V2):
	// <build>-<version> versions, BMC-Primary/BMC-Backup, -Pending
	// placeholders.
	ProfileXCC = "xcc"
	// ProfileHGX is a Supermicro HGX H100 8-GPU server (SYS-821GE-TNHR):
	// Backup/Golden/Staging copies, 8 GPUs of one SoftwareId, SimpleUpdate
	// with several Targets.
	ProfileHGX = "hgx"
	// ProfileSushy is a BMC like OpenStack's sushy-tools emulator: its
	// session login wants HTTP Basic credentials too (401 without).
	ProfileSushy = "sushy"
)

// dellOem is the Oem.Dell object of a Dell inventory member: its
// ComponentID and whether it runs (Installed) or only can (a rollback,
// Current twin or uploaded image: AvailableForInstallation).
func dellOem(componentID, name string) func(kind int, version string) map[string]any {
	return func(kind int, version string) map[string]any {
		status := "Installed"
		if kind >= 0 {
			status = "AvailableForInstallation"
		}
		return obj{"Dell": obj{
			"@odata.type": "#DellOem.v1_3_0.DellOemResources",
			"DellSoftwareInventory": obj{
				"@odata.type": "#DellSoftwareInventory.v1_1_1.DellSoftwareInventory",
				"ComponentID": componentID,
				"ElementName": name,
				"Status":      status,
			},
		}}
	}
}

// dellComponent is one Dell firmware component: its inventory Ids carry
// its ComponentID, its version and its FQDD (the stable id).
func dellComponent(key, componentID, fqdd, name, version string, act activation, twins ...twinKind) component {
	c := component{key: key, id: fqdd, name: name, version: version, activation: act, softwareID: componentID,
		memberID: dellID("Installed", componentID, fqdd), availableID: dellID("Available", componentID, fqdd), oem: dellOem(componentID, name)}
	for _, k := range twins {
		state := map[twinKind]string{twinCurrent: "Current", twinPrevious: "Previous"}[k]
		c.twins = append(c.twins, twin{kind: k, id: dellID(state, componentID, fqdd)})
	}
	return c
}

func (p *profile) idrac() shape {
	p.vmediaUnderSystem, p.vmediaID = true, "1"
	p.transferProtocol = actionParam{allowable: []string{"HTTP", "NFS", "CIFS", "TFTP", "HTTPS"}}
	// iDRAC's HttpPushUri is the FirmwareInventory collection: a pushed
	// image is staged there as Available-..., and a SimpleUpdate whose
	// ImageURI names that member installs it. MultipartUpload installs at
	// once, with a task. Kept as Dell has it: the collection's Allow says
	// POST, which the Service Validator reports (the schema's
	// SoftwareInventoryCollection takes no POST).
	p.pushPath = "/redfish/v1/UpdateService/FirmwareInventory"
	p.multipartPath = "/redfish/v1/UpdateService/MultipartUpload"
	p.uploadStages, p.activeImages, p.biosResource = true, true, true
	p.serialPrefix = "F54P"
	bios := dellComponent(ComponentBIOS, "159", "BIOS.Setup.1-1", "BIOS", "1.8.2", activateHost, twinCurrent, twinPrevious)
	bios.perSystem, bios.previous = true, "1.2.4"
	idrac := dellComponent(ComponentBMC, "25227", "iDRAC.Embedded.1-1", "Integrated Dell Remote Access Controller", "6.00.30.00", activateBMC, twinPrevious)
	idrac.previous = "4.40.29.00"
	p.components = []component{
		idrac,
		bios,
		dellComponent(ComponentNIC, "108255", "NIC.Embedded.1-1-1", "Broadcom Gigabit Ethernet BCM5720 - B0:7B:25:D6:51:80", "21.80.9", activateNow, twinCurrent),
		dellComponent(ComponentCPLD, "27763", "CPLD.Embedded.1", "System CPLD", "1.0.5", activateNow),
		dellComponent("LC", "28897", "USC.Embedded.1:LC.Embedded.1", "Lifecycle Controller", "6.00.30.00", activateNow),
		dellComponent("Backplane", "107649", "RAID.Backplane.Firmware.1", "BP15G+ 0:1", "3.48", activateNow, twinCurrent),
	}
	return shape{
		system: "System.Embedded.1", manager: "iDRAC.Embedded.1", chassis: "System.Embedded.1",
		schemas:      schemas{redfish: "1.13.1", root: "v1_10_0", system: "v1_16_0", manager: "v1_12_0", chassis: "v1_16_0", update: "v1_9_0", inventory: "v1_4_0", tasks: "v1_2_0", sessions: "v1_1_8", actionInfo: "v1_1_2"},
		manufacturer: "Dell Inc.", model: "PowerEdge R750",
		root: obj{"Vendor": "Dell", "Product": "Integrated Dell Remote Access Controller",
			"ProtocolFeaturesSupported": queryFeatures(expandOneLevel(true, true), true, true)},
		systemDoc: obj{"BiosVersion": "", "Boot": obj{"BootSourceOverrideMode": "UEFI"},
			"Links": obj{"Chassis@odata.count": 1, "ManagedBy@odata.count": 1}},
		managerDoc: obj{"Model": "15G Monolithic", "PowerState": "On", "Actions": listsResetTypes,
			"Links": obj{"ManagerForChassis": []any{ref("/redfish/v1/Chassis/System.Embedded.1")}, "ManagerForChassis@odata.count": 1, "ManagerForServers@odata.count": 1,
				"ManagerInChassis": ref("/redfish/v1/Chassis/System.Embedded.1"), "SoftwareImages@odata.count": 0}},
		chassisDoc: obj{"Manufacturer": "Dell Inc.", "Model": "PowerEdge R750", "PowerState": "On",
			"Links": obj{"ComputerSystems@odata.count": 1, "ManagedBy@odata.count": 1}},
		update:    obj{"Description": "Represents the properties for the Update Service", "Status": enabledOK()},
		inventory: obj{"Description": "Represents Firmware Inventory", "Status": enabledOK()},
		tasks:     obj{"Description": "Represents the properties for the Task Service", "Status": enabledOK()},
		sessions:  obj{"Description": "Session Service", "SessionTimeout": 1800},
	}
}

// lenovoSplit reads an XCC version "<build>-<version>" ("42S-2.83").
func lenovoSplit(v string) (build, version string) {
	build, version, ok := strings.Cut(v, "-")
	if !ok {
		return "", v
	}
	return build, version
}

func (p *profile) xcc() shape {
	p.vmediaID = "EXT1"
	p.actionInfo, p.targetsAllowable = true, true
	// The capture's ActionInfo allows only the backup bank as a Target:
	// every other member is updated by an image without Targets.
	p.targetsOnly = []string{"BMC-Backup"}
	p.transferProtocol = actionParam{allowable: []string{"TFTP", "SFTP", "HTTPS", "HTTP"}}
	p.pushPath, p.multipartPath = "/fwupdate", "/mfwupdate" // outside /redfish/v1, as captured
	p.noApplyTime, p.activeImages, p.biosResource = true, true, true
	p.serialPrefix = "J30"
	// XCC's Manager says "TGBT42S 2.83" and the System "U8E122J" where the
	// inventory says "42S-2.83" and "22J-1.51".
	p.managerVersion = func(v string) string {
		build, ver := lenovoSplit(v)
		return "TGBT" + build + " " + ver
	}
	p.biosVersion = func(v string) string {
		build, _ := lenovoSplit(v)
		return "U8E1" + build
	}
	bmcStar, none := "BMC-*-10", ""
	p.components = []component{
		{key: ComponentBMC, id: "BMC-Primary", name: "Firmware:BMC", softwareID: "BMC-TGBT-10", version: "42S-2.83", activation: activateBMC,
			twins: []twin{{kind: twinPending, id: fixedID("BMC-Primary-Pending"), placeholder: "-*", softwareID: &bmcStar, state: "Disabled"}}},
		{key: "BMCBackup", id: "BMC-Backup", name: "Firmware:BMC", softwareID: "BMC-TGBT-10", version: "42S-2.83", activation: activateNow, state: "StandbySpare", imageOf: ComponentBMC},
		{key: ComponentBIOS, id: "UEFI", name: "Firmware:UEFI", softwareID: "UEFI-U8E1-6", version: "22J-1.51", activation: activateHost, perSystem: true,
			twins: []twin{{kind: twinPending, id: fixedID("UEFI-Pending"), placeholder: nil, softwareID: &none, state: "Disabled"}}},
		{key: "LXPM", id: "LXPM", name: "Firmware:LXPM", softwareID: "LXPM-XWL1-4", version: "18E-3.21", activation: activateNow},
		{key: ComponentNIC, id: "Slot_15.Bundle", name: "Firmware:DEVICE-NetworkAdapter", softwareID: "DEVICE-15B30128-10", version: "24.41.1000", activation: activateNow},
		{key: "PSU", id: "PSU1", name: "POWER-PSU1", softwareID: "POWER-DETA7200-10", version: "7.52", activation: activateNow},
	}
	return shape{
		system: "1", manager: "1", chassis: "1",
		schemas:      schemas{redfish: "1.15.0", root: "v1_13_0", system: "v1_17_0", manager: "v1_14_0", chassis: "v1_19_0", update: "v1_11_0", inventory: "v1_5_0", tasks: "v1_2_0", sessions: "v1_1_8", actionInfo: "v1_1_2"},
		manufacturer: "Lenovo", model: "ThinkSystem SR670 V2",
		root: obj{"UUID": "", "Vendor": "Lenovo",
			"ProtocolFeaturesSupported": queryFeatures(expandOneLevel(true, true), true, true)},
		systemDoc: obj{"BiosVersion": "", "Boot": obj{"BootSourceOverrideMode": "UEFI"}},
		managerDoc: obj{"Model": "Lenovo XClarity Controller", "PowerState": "On", "Actions": listsResetTypes,
			"Links": obj{"ManagerForChassis": []any{ref("/redfish/v1/Chassis/1")}, "ManagerForChassis@odata.count": 1, "ManagerForServers@odata.count": 1, "SoftwareImages@odata.count": 0}},
		chassisDoc: obj{"Manufacturer": "Lenovo", "Model": "7Z23CTO1WW", "PowerState": "On"},
		update: obj{"Description": "Service for updating firmware and includes inventory of firmware", "Status": enabledOK(),
			"HttpPushUriOptions": obj{"HttpPushUriApplyTime": obj{"ApplyTime": "Immediate"}}, "MaxImageSizeBytes": 250000000},
		inventory:  obj{"Description": "", "Status": enabledOK()},
		tasks:      obj{"Description": "Task Service", "CompletedTaskOverWritePolicy": "Oldest", "Status": enabledOK()},
		sessions:   obj{"Description": "Session Service", "SessionTimeout": 1800},
		actionInfo: credentialParams,
	}
}

func (p *profile) hgx() shape {
	p.vmediaID = "CD1"
	p.actionInfo, p.targetsAllowable, p.systemManagerTargets, p.multiTarget = true, true, true, true
	p.transferProtocol = actionParam{allowable: []string{"HTTP", "HTTPS", "FTP"}}
	p.multipartPath = "/redfish/v1/UpdateService/upload"
	p.noApplyTime, p.activeImages, p.biosResource = true, true, true
	p.serialPrefix = "S6"
	// The System says "1.4" where the inventory says
	// "BIOS Date: 08/04/2023 Ver 1.4".
	p.biosVersion = func(v string) string {
		if _, after, ok := strings.Cut(v, "Ver "); ok {
			return after
		}
		return v
	}
	copyOf := func(key, id, name, version, of string) component {
		return component{key: key, id: id, name: name, version: version, imageOf: of}
	}
	p.components = []component{
		plainBMC("11.01.01"),
		copyOf("BMCBackup", "Backup_BMC", "BMC Backup", "Not Present", ComponentBMC),
		copyOf("BMCGolden", "Golden_BMC", "BMC Golden", "01.00.26", ComponentBMC),
		copyOf("BMCStaging", "Staging_BMC", "BMC Staging", "11.01.01", ComponentBMC),
		plainBIOS("BIOS Date: 08/04/2023 Ver 1.4"),
		copyOf("BIOSGolden", "Golden_BIOS", "BIOS Golden", "BIOS Date: 05/04/2023 Ver 1.3", ComponentBIOS),
		copyOf("BIOSStaging", "Staging_BIOS", "BIOS Staging", "BIOS Date: 08/04/2023 Ver 1.4", ComponentBIOS),
		{key: ComponentCPLD, id: "CPLD_Motherboard", name: "CPLD Motherboard", version: "F5.11.CB", activation: activateNow},
		{key: "HGX", id: "HGX_FW_BMC_0", name: "Software Inventory", softwareID: "0x0010", version: "HGX-22.10-1-rc34", activation: activateNow},
		{key: ComponentNIC, id: "NIC10", name: "NIC10 System Slot12 MBF2M516C-CECOT", version: "24.38.1402", activation: activateNow},
	}
	for i := 1; i <= 8; i++ {
		p.components = append(p.components,
			component{key: ComponentGPU, id: fmt.Sprintf("HGX_FW_GPU_SXM_%d", i), name: "Software Inventory", softwareID: "0x0020", version: "96.00.61.00.01", activation: activateHost},
			component{key: "HostGPU", id: fmt.Sprintf("GPU%d", i), name: fmt.Sprintf("GPU%d System Slot1", i), version: "96.00.61.00.01", upd: updNo})
	}
	for i := 0; i < 4; i++ {
		p.components = append(p.components, component{key: "NVSwitch", id: fmt.Sprintf("HGX_FW_NVSwitch_%d", i), name: "Software Inventory", softwareID: "0x0070", version: "96.10.35.00.01", activation: activateHost})
	}
	// The capture's ActionInfo lists the System, the Manager and these
	// members (BMC, BIOS, the CPLDs and every HGX_FW_ member) as Targets;
	// not the copies (Golden, Staging, Backup), the NICs or the host-side
	// GPUs.
	p.targetsOnly = []string{"BMC", "BIOS", "CPLD_Motherboard", "HGX_FW_BMC_0"}
	for _, c := range p.components {
		if strings.HasPrefix(c.id, "HGX_FW_") {
			p.targetsOnly = append(p.targetsOnly, c.id)
		}
	}
	return shape{
		system: "1", manager: "1", chassis: "1",
		schemas:      schemas{redfish: "1.11.0", root: "v1_9_0", system: "v1_14_0", manager: "v1_11_0", chassis: "v1_14_0", update: "v1_8_4", inventory: "v1_3_0", tasks: "v1_1_5", sessions: "v1_1_7", actionInfo: "v1_1_2"},
		manufacturer: "Supermicro", model: "SYS-821GE-TNHR",
		root:      obj{"UUID": "", "ProtocolFeaturesSupported": queryFeatures(expandOneLevel(true, true), true, true)},
		systemDoc: obj{"BiosVersion": "", "Boot": obj{"BootSourceOverrideMode": "UEFI"}},
		managerDoc: obj{"Model": "ASPEED", "Actions": listsResetTypes,
			"Links": obj{"ManagerForChassis": []any{ref("/redfish/v1/Chassis/1")}, "ManagerInChassis": ref("/redfish/v1/Chassis/1")}},
		chassisDoc: obj{"Manufacturer": "Supermicro", "Model": "X13DEG-OAD", "PowerState": "On",
			"Links": obj{"ManagersInChassis": []any{ref("/redfish/v1/Managers/1")}}},
		update:     obj{"Description": "Service for updating firmware", "Status": enabledOK()},
		inventory:  obj{"Status": enabledOK()},
		tasks:      obj{"CompletedTaskOverWritePolicy": "Oldest", "LifeCycleEventOnTaskStateChange": true, "Status": enabledOK()},
		sessions:   obj{"Description": "Session Service", "SessionTimeout": 1800, "Status": enabledOK()},
		actionInfo: credentialParams,
	}
}
