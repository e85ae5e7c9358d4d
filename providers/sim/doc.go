// Package sim is a simulated fleet of Redfish BMCs: real HTTP(S) servers on
// loopback, one address:port per BMC, with state that changes over scaled
// time. It is an independent implementation of Redfish (it shares nothing with
// providers/redfish and never imports gofish), so tests against it test the
// provider rather than mirror it.
//
// # Profiles
//
// Each BMC has a hardware profile: documents this project writes
// (profiles_*.go) from the facts of a real BMC's service tree (member Ids,
// version formats, Updateable, actions and their ActionInfo, task
// behaviour, URIs), never copies of it. The captures stay in
// ../shared/redfish-mockups, where TestProfilesHoldToTheirCaptures reads
// them to hold each profile against its real BMC: what a profile serves
// beyond its capture is listed in the profile with the reason. Default
// versions are the strings those real BMCs report:
//
//	dmtf     DMTF public-rackmount1: Systems/437XR1138R2, Managers/BMC, Chassis/1U,
//	         SimpleUpdate (+ ActionInfo) and HttpPushUri /FWUpdate, VirtualMedia
//	         under the system (Systems/437XR1138R2/VirtualMedia/CD1), $expand;
//	         the task itself answers 202 while it runs (as iDRAC does, and as
//	         sushy expects), the monitor TaskMonitors/{id} stays (200 + Task).
//	         BIOS "P79 v1.45", BMC "1.45.455b66-rev4", AC-RoT0 "1.11"
//	         (Updateable false here). TransferProtocol optional, one of FTP,
//	         SFTP, HTTP, HTTPS, SCP, TFTP; Targets optional, restricted to the
//	         updateable members. Inventory members link their System/Manager
//	         (RelatedItem).
//	ilo5     HPE ProLiant DL325 / iLO 5 (versions as on the XL675d capture):
//	         numeric ids (Systems/1, Managers/1), SimpleUpdate (no ActionInfo;
//	         TransferProtocol@Redfish.AllowableValues HTTP, HTTPS) and
//	         HttpPushUri /cgi-bin/uploadFile (multipart), VirtualMedia
//	         Managers/1/VirtualMedia/2, $expand=.($levels=1); the 202 answer to
//	         an update has no body (follow Location), and the monitor
//	         Tasks/{id}/Monitor vanishes (404) once the task finished. iLO 5
//	         "2.46 May 11 2021" in the inventory but "iLO 5 v2.46" as
//	         Manager.FirmwareVersion; System ROM "A43 v2.52 (10/29/2021)";
//	         Redundant System ROM "A43 v2.40 (02/23/2021)" and Embedded Video
//	         Controller (Updateable false); TPM Firmware "73.64" without
//	         Updateable (as every member of the DL325 capture).
//	ami      Gigabyte / AMI MegaRAC: Systems/Self, Managers/Self, SimpleUpdate at
//	         the non-standard /redfish/v1/UpdateService/Actions/SimpleUpdate,
//	         VirtualMedia Managers/Self/VirtualMedia/CD1, $expand, monitor
//	         TaskService/TaskMonitors/{id}. BIOS "C27", BMC "12.84.13",
//	         MB_CPLD1 "ff", BPB_CPLD1 (Updateable false). The capture's
//	         ActionInfo requires TransferProtocol, HTTP or FTP: that is
//	         BMCSpec.StrictTransferProtocol; by default it is optional and
//	         HTTPS is allowed too (see below).
//	openbmc  OpenBMC bmcweb: Systems/system, Managers/bmc, push only
//	         (MultipartHttpPushUri and HttpPushUri /redfish/v1/UpdateService/update,
//	         no SimpleUpdate), hash-like inventory ids, no $expand,
//	         VirtualMedia Managers/bmc/VirtualMedia/1, monitor Tasks/{id}/Monitor.
//	         BMC "2.15.0-dev-686-g100c36de90", a backup image a3f1d5b2
//	         (Updateable false); no BiosVersion on the System (the capture has
//	         none).
//	basic    An older, Supermicro-like BMC (written for this project; no
//	         capture): Systems/1, Managers/1, Chassis/1, no
//	         FirmwareInventory or SoftwareInventory (404), a disabled
//	         SessionService (Basic auth only; a session login is 405, an
//	         X-Auth-Token alone is 401). BIOS "3.4"
//	         only as ComputerSystem.BiosVersion, BMC "1.71.11" only as
//	         Manager.FirmwareVersion. SimpleUpdate requires Targets naming the
//	         System (BIOS) or the Manager (BMC) and answers 204 No Content with
//	         a Location to a task that is already Completed; a finished task is
//	         forgotten (404) FlashTime later and when the BMC restarts.
//	crayex   HPE Cray EX235a node card (Cray nC BMC): one BMC (Managers/BMC,
//	         Chassis/Enclosure) with 2 to 4 Systems (Node0, Node1, ...;
//	         BMCSpec.Systems), each with its own UUID, serial, power state,
//	         boot override, VirtualMedia (Systems/NodeN/VirtualMedia/CD1) and
//	         BIOS member NodeN.BIOS "ex235a.bios-1.3.6" (RelatedItem: its
//	         System); the BMC member "nc.1.6.16-21-prod-master.arm.2022-01-25T16:23:33+00:00.28331ff"
//	         and the non-updateable FPGA0 "4.05" and Bootloader "1.11-tlnc"
//	         belong to the BMC/chassis. SimpleUpdate at
//	         /redfish/v1/UpdateService/Actions/SimpleUpdate: TransferProtocol
//	         required (HTTP, HTTPS), Targets restricted to the updateable
//	         members; an image for a per-system component without Targets is
//	         refused (which node?). Resetting one system never resets another;
//	         flashing the BMC restarts the manager for all (the hosts keep
//	         running). The Manager has no FirmwareVersion (as captured).
//
//	slingshot HPE Slingshot switch blade controller (csm/Slingshot_Switch_Blade;
//	         a device, not a server: DeviceProfiles, never in AllProfiles):
//	         Managers/BMC (EnclosureManager, no FirmwareVersion, in
//	         Chassis/Enclosure) and no Systems collection at all (404).
//	         Inventory: BMC "sc.1.7.2-118-slingshot-release…" (SoftwareId
//	         sc:*:*:*), Recovery "rec.1.2.cronomatic-dev…" (updateable, a
//	         standby copy by its name), Bootloader "1.4-sc-ros" and FPGA0
//	         "1.05" (not updateable), Packages "na". SimpleUpdate at
//	         /redfish/v1/UpdateService/Actions/SimpleUpdate with an
//	         ActionInfo: TransferProtocol required (HTTP, HTTPS), Targets
//	         among the updateable members. Flashing BMC restarts the
//	         controller; there is no host to power or boot.
//
//	idrac    Dell iDRAC9 on a PowerEdge R750 (dell/R750): inventory Ids
//	         Installed-/Current-/Previous-<ComponentID>-<Version>__<FQDD>
//	         sharing SoftwareId and Name (iDRAC "6.00.30.00" with Previous
//	         "4.40.29.00", BIOS "1.8.2" with Previous "1.2.4"); after an
//	         update the Installed Id changes with the version and the image
//	         it replaces becomes Previous-; Oem.Dell.DellSoftwareInventory
//	         .Status Installed or AvailableForInstallation;
//	         Links.ActiveSoftwareImage on the Manager and the System's Bios.
//	         SimpleUpdate without ActionInfo; HttpPushUri is the
//	         FirmwareInventory collection: a pushed image is staged as an
//	         Available- member (201 + Location) that a SimpleUpdate naming
//	         it installs; MultipartUpload installs at once.
//	xcc      Lenovo XClarity Controller on a ThinkSystem SR670 V2
//	         (lenovo/SR670V2): versions <build>-<version> ("42S-2.83",
//	         UEFI "22J-1.51"; Manager "TGBT42S 2.83", BiosVersion
//	         "U8E122J"); BMC-Primary and BMC-Backup (StandbySpare) with one
//	         SoftwareId and Name; Disabled placeholders BMC-Primary-Pending
//	         ("-*") and UEFI-Pending (null) that show a staged version until
//	         it activates. SimpleUpdate Targets may only name BMC-Backup (as
//	         the capture's ActionInfo says); no OperationApplyTimeSupport;
//	         push URIs /fwupdate and /mfwupdate.
//	hgx      Supermicro SYS-821GE-TNHR with an HGX H100 8-GPU board
//	         (supermicro/SYS-821GE-TNHR): BIOS "BIOS Date: 08/04/2023 Ver
//	         1.4" (BiosVersion "1.4"), Backup_/Golden_/Staging_ copies of
//	         BMC and BIOS, HGX members with SoftwareIds (HGX_FW_BMC_0 0x0010,
//	         HGX_FW_GPU_SXM_1..8 0x0020 "96.00.61.00.01", NVSwitches
//	         0x0070), non-updateable host-side GPU1..8. SimpleUpdate's
//	         ActionInfo lists the Manager, the System and each member as
//	         Targets; one update may name several (each is flashed), and a
//	         GPU image without Targets flashes every GPU fitted.
//	         BMCSpec.Absent makes members absent (Status.State Absent, never
//	         flashed). Multipart push, no HttpPushUri.
//	sushy    A BMC like OpenStack's sushy-tools emulator (no capture; what
//	         the real one served, profiles_sushy.go): its session login
//	         wants HTTP Basic credentials as well, else 401; Basic auth
//	         works on every resource; no inventory (linked, 404): versions
//	         in BiosVersion and Manager.FirmwareVersion; SimpleUpdate
//	         wants the System in Targets (a Manager is refused) and
//	         answers 204 with a Location to a Completed task.
//
// Profiles lists the first four (what "mixed" cycles through, and what
// providers' conformance tests run against); AllProfiles adds basic,
// crayex and the vendor profiles. Stats.MemberFlashes counts flashes by
// inventory member (the admin API's member_flashes), so a test can check
// that each of 8 GPUs was flashed exactly once.
//
// Every update answers 202 Accepted with Location (the task monitor) and
// Retry-After (basic: 204); every profile except ilo5 puts the Task in the
// body. Tasks go New → Starting → Running (PercentComplete) → Completed or
// Exception, and a monitor answers 202 with the Task while it runs. Every
// task is listed in TaskService/Tasks (the last 32) with StartTime and a
// Name carrying the image's file name ("Update bios-2.80.bin"); except on
// ami (whose tasks in the mockup show no Payload) it has a Payload:
// TargetUri, HttpOperation and JsonBody, a string holding the request's
// JSON (SimpleUpdate: the ImageURI; multipart push: the UpdateParameters;
// openbmc's push: "null", as bmcweb cannot parse a multipart body as JSON).
//
// # What a BMC enforces
//
// SimpleUpdate checks its parameters as its ActionInfo (or, on ilo5, the
// TransferProtocol@Redfish.AllowableValues annotation) says: ImageURI is
// required; a TransferProtocol not allowed, or missing where required, and
// a Targets entry that is not allowed (not an updateable member, or on
// basic not the System or Manager) are refused with 400, whose
// @Message.ExtendedInfo names the parameter (RelatedProperties "#/Targets",
// MessageArgs). A multipart push whose Targets names a non-updateable or
// unknown member is refused likewise. BMCSpec.Refuse makes a BMC advertise a
// method but refuse it with 400 Base.1.8.ActionNotSupported (a BMC whose
// default method is disabled). A BMC that restarts (after its own
// firmware is flashed, or Manager.Reset) forgets every session: an old
// X-Auth-Token answers 401.
//
// Every BMC and system has a distinct UUID and SerialNumber derived from the
// BMC's name (and the system's Id), stable across reruns; Manufacturer and
// Model are the profile's. No @odata.id in any profile leads to a 404.
//
// # Protocol
//
// Every BMC follows DSP0266's protocol rules whatever its profile: an
// OData-Version other than 4.0 is refused with 412; an unsupported $ query
// parameter with 501, a value given to only or excerpt with 400; only is
// answered; every GET, HEAD and 405 says in Allow which methods the URI
// takes; a GET names its schema in a Link rel=describedby header; posting
// to Sessions/Members logs in; the AccountService serves the fleet's user
// and the standard roles (Administrator, Operator, ReadOnly); $metadata
// references the DMTF schema file of every namespace served.
//
// # Images
//
// The simulator never downloads anything. An image names its component and
// version in its file name: the last path element of ImageURI (SimpleUpdate),
// of the UpdateFile part's file name (multipart push), or of the X-Image-Name
// header or `?image=` query (plain HttpPushUri), is
//
//	<component>-<version>[.<ext>]...   e.g. http://127.0.0.1:9/images/bios-2.80.bin
//
// where component is a key above (case-insensitive) and the known extensions
// .bin .img .iso .fwpkg .pldm .hpm .rom .signed .tar .gz .tgz .zip .exe
// (Dell update packages) are
// stripped. A version that cannot be a file name rides in the query:
//
//	.../bios.bin?version=A43%20v2.60%20(01%2F01%2F2023)
//
// When Targets names an inventory member (on basic: the System or the
// Manager), that member is the component and the image name only carries
// the version. The dmtf and crayex SimpleUpdate ActionInfo list Targets;
// BMCSpec.RequireTargets makes a BMC
// refuse an update without it (multipart push, and SimpleUpdate on dmtf and
// ami, whose ActionInfo then lists it as required). An image that names
// no component fails its task (Exception), as a real BMC rejects an image for
// another device.
//
// # Activation
//
// A flash takes FlashTime (scaled). With apply time Immediate (the default)
// the new BMC version appears after the BMC restarts itself (BMCResetTime,
// unreachable meanwhile); NIC and CPLD versions appear at once; BIOS is
// pending until the next host reset. With OnReset every component is pending
// until the next host reset (BMC also on a manager reset). A host reset is a
// ComputerSystem.Reset that boots the host (On from Off, ForceRestart,
// GracefulRestart, PowerCycle); pending versions appear when the host is On
// again, after BootTime.
//
// # Reimage
//
// InsertMedia with an image named runtime-<version>.iso, a boot override to
// Cd (Once or Continuous) and a host reset: after BootTime+InstallTime the
// Runtime component reports <version>. A Once override is consumed by that
// boot.
//
// # Time
//
// Options.Speed scales every simulated duration: at 6000 a 10-minute flash
// takes 100 ms. Timings.Jitter spreads each boot, shutdown, flash, BMC
// reset and install uniformly around its timing, repeatably for a
// Timings.JitterSeed, so that durations learned from one apply can be
// checked against another. State is evaluated lazily from timestamps when a request
// arrives, so an idle fleet costs no CPU and nothing keeps running after
// Close.
package sim
