package redfish

import (
	"context"
	"io"
	"time"

	"github.com/rackform/rackform/providers"
)

// bmc is everything the provider asks of one BMC's Redfish service. It is
// the only seam to gofish (implemented in gofish.go), kept this narrow
// because gofish's API still moves: a gofish upgrade touches one file.
//
// Implementations create their session lazily on first use (or use Basic
// auth where the BMC has no session service or refuses the session but
// takes Basic), re-create it when the BMC forgets it (401 after a BMC
// reset), and are safe for concurrent use.
type bmc interface {
	// System reads the computer system sel names (Id or UUID; "" for the
	// only one). A BMC with several systems and no or a wrong sel answers
	// *systemUnresolvedError listing them.
	System(ctx context.Context, sel string) (*systemInfo, error)
	// SystemIDs lists the Ids (URI last segments) of every system the BMC
	// serves, read once.
	SystemIDs(ctx context.Context) ([]string, error)
	// Manager reads the BMC's manager (the system's ManagedBy, else the
	// BMC-type manager); nil without error when the service lists none.
	Manager(ctx context.Context, sys *systemInfo) (*managerInfo, error)
	// Device reads a device's Manager (an error naming the Managers
	// collection when it lists none) and its Chassis, and returns a
	// systemInfo standing for the device with the Manager (device.go).
	Device(ctx context.Context) (*systemInfo, *managerInfo, error)
	// Bios reads the system's Bios resource for the links naming its
	// firmware images; empty when the system links none.
	Bios(ctx context.Context, sys *systemInfo) (imageLinks, error)
	// Inventory reads FirmwareInventory and SoftwareInventory, expanded in
	// one request each where the service supports $expand, with each
	// member's @odata.id and RelatedItem links. A collection that cannot
	// be read is an *inventoryError.
	Inventory(ctx context.Context) ([]invItem, error)
	// UpdateService reads how the BMC accepts images.
	UpdateService(ctx context.Context) (*updateInfo, error)
	// Post sends a JSON action body (a map, so fields gofish lacks, such as
	// @Redfish.OperationApplyTime, can be sent) and returns the task
	// monitor when the BMC answered 202.
	Post(ctx context.Context, uri string, body any) (*accepted, error)
	// Patch sends a JSON PATCH.
	Patch(ctx context.Context, uri string, body any) error
	// Upload POSTs a streamed body of exactly size bytes. filename, when
	// set, names a raw image in a Content-Disposition header.
	Upload(ctx context.Context, uri, contentType, filename string, body io.Reader, size int64) (*accepted, error)
	// VirtualMedia finds a CD/DVD virtual media slot.
	VirtualMedia(ctx context.Context, system *systemInfo) (*mediaInfo, error)
	// Get reads uri raw: the status and at most a bounded body (task monitors
	// answer 200, 202, 204 or 404, and their bodies are parsed by
	// parseTaskBody, not gofish).
	Get(ctx context.Context, uri string) (status int, body []byte, retryAfter string, err error)
	// Tasks lists the TaskService's tasks (newest last, as BMCs list them),
	// each read once; nil when the BMC has no task service.
	Tasks(ctx context.Context) ([]taskInfo, error)
	// Close deletes the session, if one was made (none with Basic auth).
	Close(ctx context.Context) error
	// Auth is how the BMC is authenticated (providers.AuthSession or
	// AuthBasic), "" before the first login.
	Auth() string
	// Serial reports whether the BMC answers one request at a time
	// (HTTP/1.x on its connection, where reads made at once only queue
	// behind each other), as far as connected says it is known: a BMC not
	// connected yet, or whose connection failed, is not known. It makes
	// no request.
	Serial() (serial, connected bool)
}

// systemInfo is the part of a ComputerSystem the provider uses.
type systemInfo struct {
	URI string
	// ID, Name and UUID name the system; SerialNumber, Manufacturer and
	// Model with UUID are its identity.
	ID, Name, UUID                    string
	SerialNumber, Manufacturer, Model string
	// BiosVersion is the fallback BIOS version.
	BiosVersion string
	// ManagedBy are the system's managers' URIs.
	ManagedBy   []string
	PowerState  string
	Health      string
	ResetTarget string
	// ResetTypes are the allowed ResetType values, empty when the BMC does not say.
	ResetTypes []string
	// BootOverride and BootOverrideEnabled are the current one-time or
	// continuous boot override ("Cd", "Once"), "" when not reported.
	BootOverride, BootOverrideEnabled string
	// VirtualMedia is the system's VirtualMedia collection, if any; managers
	// are searched otherwise.
	VirtualMedia string
	// Bios is the system's Bios resource, if it links one.
	Bios string
}

// managerInfo is the part of a Manager the provider uses.
type managerInfo struct {
	URI, ID, Model  string
	FirmwareVersion string
	// Chassis is its Links.ManagerInChassis, Health its Status.Health.
	Chassis, Health string
	// Images are its Links.ActiveSoftwareImage and SoftwareImages.
	Images imageLinks
}

// invItem is one inventory member, its State from its own signs until
// the Manager's or Bios' links say otherwise (members.go).
type invItem struct {
	providers.Component
	// URI is the member's @odata.id; Related its RelatedItem links.
	URI     string
	Related []string
}

// actionParam is one ActionInfo parameter.
type actionParam struct {
	Name            string
	Required        bool
	AllowableValues []string
	// DataType is "String", "StringArray", ...; ArraySizeMaximum bounds
	// an array's length (ActionInfo v1.3), 0 when unbounded.
	DataType         string
	ArraySizeMaximum int
}

// updateInfo is the part of the UpdateService the provider uses.
type updateInfo struct {
	// URI is the UpdateService itself (PATCHed for HttpPushUri's apply time).
	URI                  string
	SimpleUpdateTarget   string
	MultipartHTTPPushURI string
	HTTPPushURI          string
	// SimpleUpdateTargets says SimpleUpdate takes Targets: its ActionInfo
	// lists the parameter (or the action lists allowable Targets).
	SimpleUpdateTargets bool
	// Params are the parameters SimpleUpdate's @Redfish.ActionInfo lists
	// (with the action's own @Redfish.AllowableValues annotations).
	Params []actionParam
	// The apply times each method takes, as the BMC lists them.
	SimpleUpdateApplyTimes, MultipartApplyTimes, HTTPPushApplyTimes applyTimes
	// Offline says why the service takes no update now (ServiceEnabled
	// false, or a Status.State such as UnavailableOffline), in words; ""
	// when it is enabled or does not say.
	Offline string
}

// applyTimes are the apply times an update method takes, as the BMC lists
// them (none: it does not say), and where it says so.
type applyTimes struct {
	Values []string
	// Current is the apply time already set (HttpPushUriApplyTime).
	Current string
	From    string
}

// param is the SimpleUpdate parameter name, if the BMC describes it.
func (u *updateInfo) param(name string) (actionParam, bool) {
	for _, p := range u.Params {
		if p.Name == name {
			return p, true
		}
	}
	return actionParam{}, false
}

// setParam records p, the ActionInfo's word replacing the annotation's.
func (u *updateInfo) setParam(p actionParam) {
	for i := range u.Params {
		if u.Params[i].Name == p.Name {
			if len(p.AllowableValues) == 0 {
				p.AllowableValues = u.Params[i].AllowableValues
			}
			u.Params[i] = p
			return
		}
	}
	u.Params = append(u.Params, p)
}

// mediaInfo is one virtual media slot.
type mediaInfo struct {
	URI          string
	InsertTarget string
	EjectTarget  string
	Inserted     bool
	Image        string
}

// taskInfo is one task as the TaskService lists it: enough to recognise
// the update a lost 202 started.
type taskInfo struct {
	URI   string
	Name  string
	State string // normalised: providers.Task*
	// Start is the task's StartTime; zero when the BMC does not say.
	Start time.Time
	// JSONBody is Task.Payload's (Redfish Task v1_3_0+): the request
	// body's JSON text ("" when absent).
	JSONBody string
}

// accepted is what a mutating request returned: a task monitor when the BMC
// answered 202, and the status code in any case.
type accepted struct {
	Status     int
	TaskURI    string
	RetryAfter string
}
