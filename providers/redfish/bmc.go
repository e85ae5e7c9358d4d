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
// Implementations create their session lazily on first use, re-create it
// when the BMC forgets it (401 after a BMC reset), and are safe for
// concurrent use.
type bmc interface {
	// System reads the (first) computer system.
	System(ctx context.Context) (*systemInfo, error)
	// Inventory reads FirmwareInventory and SoftwareInventory, expanded in
	// one request each where the service supports $expand.
	Inventory(ctx context.Context) ([]providers.Component, error)
	// InventoryURIs is Inventory with each member's @odata.id (what an
	// update's Targets names), in the same order.
	InventoryURIs(ctx context.Context) ([]providers.Component, []string, error)
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
	// Close deletes the session, if one was made.
	Close(ctx context.Context) error
}

// systemInfo is the part of a ComputerSystem the provider uses.
type systemInfo struct {
	URI         string
	PowerState  string
	Health      string
	ResetTarget string
	// ResetTypes are the allowed ResetType values, empty when the BMC does not say.
	ResetTypes []string
	// BootTargets are the allowed BootSourceOverrideTarget values, when listed.
	BootTargets []string
	// BootOverride and BootOverrideEnabled are the current one-time or
	// continuous boot override ("Cd", "Once"), "" when not reported.
	BootOverride, BootOverrideEnabled string
	// VirtualMedia is the system's VirtualMedia collection, if any; managers
	// are searched otherwise.
	VirtualMedia string
}

// updateInfo is the part of the UpdateService the provider uses.
type updateInfo struct {
	// URI is the UpdateService itself (PATCHed for HttpPushUri's apply time).
	URI                  string
	SimpleUpdateTarget   string
	MultipartHTTPPushURI string
	HTTPPushURI          string
	// TransferProtocols are SimpleUpdate's allowed TransferProtocol values.
	TransferProtocols []string
	// SimpleUpdateTargets says SimpleUpdate takes Targets: its ActionInfo
	// lists the parameter (or the action lists allowable Targets).
	SimpleUpdateTargets bool
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
	// TargetURI and JSONBody are from Task.Payload (Redfish Task v1_3_0+);
	// JSONBody is the request body's JSON text ("" when absent).
	TargetURI string
	JSONBody  string
}

// accepted is what a mutating request returned: a task monitor when the BMC
// answered 202, and the status code in any case.
type accepted struct {
	Status     int
	TaskURI    string
	RetryAfter string
	// Body is the 202 body (a Task representation when the BMC sent one).
	Body []byte
}
