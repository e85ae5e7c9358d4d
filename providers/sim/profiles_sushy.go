package sim

// sushy is a BMC like OpenStack's sushy-tools emulator (sushy-emulator,
// the one Ironic's CI runs), written from what it served when rackform was
// run against it (fake and libvirt test drivers, an htpasswd auth file):
//   - every request but the service root wants HTTP Basic credentials, the
//     session login included (401 with WWW-Authenticate: Basic without
//     them; the real one then answers 404: it has no SessionService);
//   - no firmware inventory: UpdateService links FirmwareInventory and
//     SoftwareInventory, and both answer 404; the versions are
//     ComputerSystem.BiosVersion ("1.0.0") and Manager.FirmwareVersion
//     ("1.00");
//   - SimpleUpdate wants Targets, the System only: a Manager target is
//     refused (400 "Manager is not currently a supported Target."); no
//     ActionInfo, no apply times;
//   - an accepted update answers 204 No Content with a Location to a
//     Task that is already Completed: nothing to follow;
//   - HttpPushUri is the FirmwareInventory URI (as on a Dell iDRAC), where
//     a push answers 404.
//
// The real emulator never fetches the image and bumps the BIOS version's
// second field (1.0.0 → 1.1.0) whatever the image says; here, as in every
// profile, the image's name says the version it installs.
func (p *profile) sushy() shape {
	p.withoutInventory("1.00", "1.0.0")
	p.vmediaID = "Cd"
	// The Protocol Validator reports the refused login (401): it is what
	// this profile is for.
	p.basicOnLogin = true
	p.inventoryLinks, p.refuseManagerTargets, p.noApplyTime = true, true, true
	p.deadPushURI = "/redfish/v1/UpdateService/FirmwareInventory"
	p.serialPrefix = "VBMC"
	return shape{
		system: "3d1c5f1e-8e0f-4f3c-9a4c-2f6a1f2b7c10", manager: "58893887-8974-2487-2389-841168418919", chassis: "15693887-7984-9484-3272-842188918912",
		schemas:      schemas{redfish: "1.5.0", root: "v1_5_0", system: "v1_13_0", manager: "v1_3_1", chassis: "v1_5_0", update: "v1_2_0", inventory: "v1_2_0", tasks: "v1_1_0", sessions: "v1_1_0", actionInfo: "v1_1_2"},
		manufacturer: "Sushy Emulator", model: "Virtual Machine",
		root:       obj{"Name": "Root Service", "UUID": ""},
		systemDoc:  obj{"BiosVersion": "", "Boot": obj{"BootSourceOverrideMode": "UEFI"}},
		managerDoc: obj{"Model": "Joo Janta 200"},
		update:     obj{},
		tasks:      obj{},
		sessions:   obj{"SessionTimeout": 1800},
	}
}
