// Package sim is a simulated fleet of Redfish BMCs: real HTTP(S) servers on
// loopback, one address:port per BMC, with state that changes over scaled
// time. It is an independent implementation of Redfish (it shares nothing with
// providers/redfish and never imports gofish), so tests against it test the
// provider rather than mirror it.
//
// # Profiles
//
// Each BMC has a hardware profile whose resource shapes are copied from real
// service trees (testdata/profiles, with their licences):
//
//	dmtf     DMTF public-rackmount1: Systems/437XR1138R2, Managers/BMC, Chassis/1U,
//	         SimpleUpdate (+ ActionInfo) and HttpPushUri /FWUpdate, VirtualMedia
//	         under the system (Systems/437XR1138R2/VirtualMedia/CD1), $expand;
//	         the task itself answers 202 while it runs (as iDRAC does, and as
//	         sushy expects), the monitor TaskMonitors/{id} stays (200 + Task).
//	ilo5     HPE ProLiant DL325 / iLO 5: numeric ids (Systems/1, Managers/1),
//	         SimpleUpdate and HttpPushUri /cgi-bin/uploadFile (multipart),
//	         VirtualMedia Managers/1/VirtualMedia/2, $expand=.($levels=1); the
//	         202 answer to an update has no body (follow Location), and the
//	         monitor Tasks/{id}/Monitor vanishes (404) once the task finished.
//	ami      Gigabyte / AMI MegaRAC: Systems/Self, Managers/Self, SimpleUpdate at
//	         the non-standard /redfish/v1/UpdateService/Actions/SimpleUpdate,
//	         VirtualMedia Managers/Self/VirtualMedia/CD1, $expand, monitor
//	         TaskService/TaskMonitors/{id}.
//	openbmc  OpenBMC bmcweb: Systems/system, Managers/bmc, push only
//	         (MultipartHttpPushUri and HttpPushUri /redfish/v1/UpdateService/update,
//	         no SimpleUpdate), hash-like inventory ids, no $expand,
//	         VirtualMedia Managers/bmc/VirtualMedia/1, monitor Tasks/{id}/Monitor.
//
// Every update answers 202 Accepted with Location (the task monitor) and
// Retry-After; every profile except ilo5 puts the Task in the body. Tasks go
// New → Starting → Running (PercentComplete) → Completed or Exception, and a
// monitor answers 202 with the Task while it runs. Every task is listed in
// TaskService/Tasks (the last 32) with StartTime and a Name carrying the
// image's file name ("Update bios-2.80.bin"); except on ami (whose tasks
// in the mockup show no Payload) it has a Payload: TargetUri, HttpOperation
// and JsonBody, a string holding the request's JSON (SimpleUpdate: the
// ImageURI; multipart push: the UpdateParameters; openbmc's push: "null",
// as bmcweb cannot parse a multipart body as JSON).
//
// # Components
//
// Every profile has the components BMC, BIOS, NIC, CPLD (firmware, in
// UpdateService/FirmwareInventory) and Runtime (the OS image, in
// UpdateService/SoftwareInventory, Updateable=false: it changes only by a
// VirtualMedia reimage). BMCSpec.Firmware and Fleet.Versions use these keys.
// Inventory ids and names follow the profile (ilo5: BMC is FirmwareInventory/1
// "iLO 5", BIOS is FirmwareInventory/2 "System ROM"); every member carries
// SoftwareId equal to the key, so a match rule can rely on it.
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
// .bin .img .iso .fwpkg .pldm .hpm .rom .signed .tar .gz .tgz .zip are
// stripped. When Targets names an inventory member, that member is the
// component and the image name only carries the version. The dmtf
// SimpleUpdate ActionInfo lists Targets; BMCSpec.RequireTargets makes a BMC
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
// takes 100 ms. State is evaluated lazily from timestamps when a request
// arrives, so an idle fleet costs no CPU and nothing keeps running after
// Close.
package sim
