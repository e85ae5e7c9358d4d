package redfish

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/stmcginnis/gofish"
)

// rawUpdateService holds what gofish keeps private in UpdateService.
type rawUpdateService struct {
	Actions struct {
		SimpleUpdate struct {
			Target     string             `json:"target"`
			Protocols  []string           `json:"TransferProtocol@Redfish.AllowableValues"`
			ActionInfo string             `json:"@Redfish.ActionInfo"`
			Targets    json.RawMessage    `json:"Targets@Redfish.AllowableValues"`
			ApplyTimes applyTimeSupported `json:"@Redfish.OperationApplyTimeSupport"`
		} `json:"#UpdateService.SimpleUpdate"`
	}
	FirmwareInventory odataLink
	SoftwareInventory odataLink
	// MultipartApplyTimes is the annotation on MultipartHttpPushUri saying
	// which @Redfish.OperationApplyTime its UpdateParameters take.
	MultipartApplyTimes applyTimeSupported `json:"MultipartHttpPushUri@Redfish.OperationApplyTimeSupport"`
	HTTPPushURIOptions  struct {
		HTTPPushURIApplyTime struct {
			ApplyTime  string
			Allowables []string `json:"ApplyTime@Redfish.AllowableValues"`
		} `json:"HttpPushUriApplyTime"`
	} `json:"HttpPushUriOptions"`
}

// applyTimeSupported is a @Redfish.OperationApplyTimeSupport annotation.
type applyTimeSupported struct {
	SupportedValues []string
}

// updateService reads the UpdateService document. Concurrent reads on one
// BMC (an observation reads it for the update plan and for the inventory
// links at the same moment) share one request, and the inventory links
// are kept from the first read, so an observation that reads it for the
// update plan first does not read it again for them.
func (b *gofishBMC) updateService(ctx context.Context, c *gofish.APIClient) (*updateServiceDoc, error) {
	b.mu.Lock()
	call := b.usCall
	if call == nil {
		call = &usRead{done: make(chan struct{})}
		b.usCall = call
		b.mu.Unlock()
		call.doc, call.err = b.readUpdateService(ctx, c)
		b.mu.Lock()
		b.usCall = nil
		if call.err == nil && b.inventories == nil {
			b.inventories = inventoryLinks(call.doc)
		}
		b.mu.Unlock()
		close(call.done)
	} else {
		b.mu.Unlock()
		select {
		case <-call.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return call.doc, call.err
}

// usRead is one UpdateService read in flight.
type usRead struct {
	done chan struct{}
	doc  *updateServiceDoc
	err  error
}

func (b *gofishBMC) readUpdateService(ctx context.Context, c *gofish.APIClient) (*updateServiceDoc, error) {
	link := serviceLink(c, "updateService", "")
	if link == "" {
		return nil, errNoUpdateService
	}
	var us updateServiceDoc
	if err := getJSON(ctx, c, link, &us); err != nil {
		return nil, fmt.Errorf("reading UpdateService: %w", err)
	}
	if us.ODataID == "" {
		us.ODataID = link
	}
	return &us, nil
}

func (b *gofishBMC) UpdateService(ctx context.Context) (*updateInfo, error) {
	ctx = selfChecked(ctx) // read through getJSON only
	var info *updateInfo
	err := b.do(ctx, func(c *gofish.APIClient) error {
		us, err := b.updateService(ctx, c)
		if err != nil {
			return err
		}
		su := us.Actions.SimpleUpdate
		hp := us.HTTPPushURIOptions.HTTPPushURIApplyTime
		info = &updateInfo{
			URI:                  us.ODataID,
			SimpleUpdateTarget:   su.Target,
			MultipartHTTPPushURI: us.MultipartHTTPPushURI,
			HTTPPushURI:          us.HTTPPushURI,
			SimpleUpdateTargets:  len(su.Targets) > 0,
			SimpleUpdateApplyTimes: applyTimes{Values: su.ApplyTimes.SupportedValues,
				From: "SimpleUpdate's @Redfish.OperationApplyTimeSupport"},
			MultipartApplyTimes: applyTimes{Values: us.MultipartApplyTimes.SupportedValues,
				From: "MultipartHttpPushUri's @Redfish.OperationApplyTimeSupport"},
			HTTPPushApplyTimes: applyTimes{Values: hp.Allowables, Current: hp.ApplyTime,
				From: "HttpPushUriApplyTime's allowable values"},
			Offline: offline(us),
		}
		var allowTargets []string
		if json.Unmarshal(su.Targets, &allowTargets) == nil && len(allowTargets) > 0 {
			info.Params = append(info.Params, actionParam{Name: "Targets", AllowableValues: allowTargets})
		}
		if len(su.Protocols) > 0 {
			info.Params = append(info.Params, actionParam{Name: "TransferProtocol", AllowableValues: su.Protocols})
		}
		if ai := su.ActionInfo; ai != "" && info.SimpleUpdateTarget != "" {
			// An unreadable ActionInfo only means its parameters are unknown.
			var doc struct{ Parameters []actionParam }
			if err := getJSON(ctx, c, ai, &doc); err == nil {
				for _, p := range doc.Parameters {
					if p.Name == "Targets" {
						info.SimpleUpdateTargets = true
					}
					if p.Name == "@Redfish.OperationApplyTime" && len(p.AllowableValues) > 0 {
						info.SimpleUpdateApplyTimes = applyTimes{Values: p.AllowableValues, From: "SimpleUpdate's ActionInfo"}
					}
					info.setParam(p)
				}
			} else if statusOf(err) == http.StatusUnauthorized {
				return err
			}
		}
		return nil
	})
	return info, err
}

// offlineStates are the Status.State values of an UpdateService that
// takes no update now: switched off, offline, not there, held for a test
// or restricted. Any other state (Enabled, Degraded, Starting, Updating,
// Deferring…) or none is taken as serving: a plan is refused only for
// what the BMC says.
var offlineStates = map[string]bool{
	"Disabled": true, "StandbyOffline": true, "StandbySpare": true, "UnavailableOffline": true,
	"Absent": true, "InTest": true, "Quiesced": true,
}

// offline says why the UpdateService takes no update now, or "" when it
// does (rule 47): ServiceEnabled false, or an offline Status.State.
func offline(us *updateServiceDoc) string {
	uri := relPath(us.ODataID)
	switch st := us.Status.State; {
	case us.ServiceEnabled != nil && !*us.ServiceEnabled:
		msg := "the BMC's UpdateService (" + uri + ") is disabled (ServiceEnabled is false"
		if st != "" {
			msg += ", Status.State " + st
		}
		return msg + ")"
	case offlineStates[st]:
		return "the BMC's UpdateService (" + uri + ") is not enabled (Status.State " + st + ")"
	}
	return ""
}
