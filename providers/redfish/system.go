package redfish

import (
	"context"
	"errors"
	"net/http"
	"path"
	"strings"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"

	"github.com/rackform/rackform/providers"
)

// rawSystem is the part of a ComputerSystem that gofish keeps private
// (action targets, allowable values, links); read from its RawData.
type rawSystem struct {
	Actions struct {
		Reset struct {
			Target     string   `json:"target"`
			ResetTypes []string `json:"ResetType@Redfish.AllowableValues"`
		} `json:"#ComputerSystem.Reset"`
	}
	Boot struct {
		Override string `json:"BootSourceOverrideTarget"`
		Enabled  string `json:"BootSourceOverrideEnabled"`
	}
	VirtualMedia odataLink
	Links        struct {
		ManagedBy []odataLink
	}
	Bios odataLink
}

type odataLink struct {
	ID string `json:"@odata.id"`
}

func (b *gofishBMC) System(ctx context.Context, sel string) (*systemInfo, error) {
	ctx = selfChecked(ctx) // read through getJSON only
	var sys *systemDoc
	err := b.do(ctx, func(c *gofish.APIClient) error {
		b.mu.Lock()
		uri := b.systemURIs[sel]
		b.mu.Unlock()
		if uri != "" {
			var s systemDoc
			err := getJSON(ctx, c, uri, &s)
			if err == nil || statusOf(err) != http.StatusNotFound {
				sys = &s
				return err
			}
		}
		coll := serviceLink(c, "systems", "/redfish/v1/Systems")
		systems, err := readMembers[systemDoc](ctx, c, coll, nil)
		if err != nil {
			return collErr(err)
		}
		if len(systems) == 0 {
			return &requestError{method: http.MethodGet, uri: coll, err: errNoSystem}
		}
		// The collection just read lists every system: SystemIDs need not
		// read it again.
		ids := make([]string, 0, len(systems))
		for _, s := range systems {
			if s.ODataID != "" {
				ids = append(ids, path.Base(strings.TrimSuffix(s.ODataID, "/")))
			}
		}
		b.mu.Lock()
		if b.systemIDs == nil {
			b.systemIDs = ids
		}
		b.mu.Unlock()
		sys, err = pickSystem(systems, sel)
		if err != nil {
			return err
		}
		b.mu.Lock()
		b.systemURIs[sel] = sys.ODataID
		b.mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return systemFrom(sys), nil
}

// errNoSystem is a service that lists no ComputerSystem.
var errNoSystem = errors.New("the BMC lists no computer system")

// pickSystem chooses the system sel names (its Id, or its UUID in any
// case), or the only one when sel is "". Anything else is unresolved.
func pickSystem(systems []systemDoc, sel string) (*systemDoc, error) {
	if sel == "" && len(systems) == 1 {
		return &systems[0], nil
	}
	if sel != "" {
		for i, s := range systems {
			if s.ID == sel || (s.UUID != "" && strings.EqualFold(s.UUID, sel)) {
				return &systems[i], nil
			}
		}
	}
	e := &systemUnresolvedError{want: sel}
	for _, s := range systems {
		e.systems = append(e.systems, providers.SystemRef{ID: s.ID, UUID: s.UUID, Name: s.Name})
	}
	return nil, e
}

func systemFrom(sys *systemDoc) *systemInfo {
	info := &systemInfo{
		URI:                 relPath(sys.ODataID),
		ID:                  sys.ID,
		Name:                sys.Name,
		BiosVersion:         strings.TrimSpace(sys.BiosVersion),
		ResetTarget:         sys.Actions.Reset.Target,
		ResetTypes:          sys.Actions.Reset.ResetTypes,
		BootOverride:        sys.Boot.Override,
		BootOverrideEnabled: sys.Boot.Enabled,
		VirtualMedia:        sys.VirtualMedia.ID,
		Bios:                relPath(sys.Bios.ID),
	}
	for _, m := range sys.Links.ManagedBy {
		if m.ID != "" {
			info.ManagedBy = append(info.ManagedBy, relPath(m.ID))
		}
	}
	sys.fill(info)
	return info
}

func (b *gofishBMC) SystemIDs(ctx context.Context) ([]string, error) {
	ctx = selfChecked(ctx) // read through getJSON only
	b.mu.Lock()
	ids := b.systemIDs
	b.mu.Unlock()
	if ids != nil {
		return ids, nil
	}
	err := b.do(ctx, func(c *gofish.APIClient) error {
		// Redfish fixes where the Systems collection is.
		uri := "/redfish/v1/Systems"
		var coll struct{ Members []odataLink }
		if err := getJSON(ctx, c, uri, &coll); err != nil {
			return err
		}
		ids = []string{}
		for _, m := range coll.Members {
			if m.ID != "" {
				ids = append(ids, path.Base(strings.TrimSuffix(m.ID, "/")))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.systemIDs = ids
	b.mu.Unlock()
	return ids, nil
}

func (b *gofishBMC) Manager(ctx context.Context, sys *systemInfo) (*managerInfo, error) {
	ctx = selfChecked(ctx) // read through getJSON only
	var m *managerDoc
	err := b.do(ctx, func(c *gofish.APIClient) error {
		b.mu.Lock()
		uri := b.managerURI
		b.mu.Unlock()
		if uri == "" && sys != nil && len(sys.ManagedBy) > 0 {
			uri = sys.ManagedBy[0]
		}
		if uri != "" {
			var got managerDoc
			err := getJSON(ctx, c, uri, &got)
			if err == nil {
				m = &got
			} else if statusOf(err) != http.StatusNotFound {
				return err
			}
		}
		if m == nil {
			managers, err := readMembers[managerDoc](ctx, c, serviceLink(c, "managers", "/redfish/v1/Managers"), nil)
			if err != nil {
				return collErr(err)
			}
			// The BMC itself, not an enclosure or a management controller of a part.
			for i, x := range managers {
				if m == nil || (x.ManagerType == string(schemas.BMCManagerType) && m.ManagerType != string(schemas.BMCManagerType)) {
					m = &managers[i]
				}
			}
		}
		if m == nil {
			return nil
		}
		b.mu.Lock()
		b.managerURI = relPath(m.ODataID)
		b.mu.Unlock()
		return nil
	})
	if err != nil || m == nil {
		return nil, err
	}
	return &managerInfo{URI: relPath(m.ODataID), ID: m.ID, Model: strings.TrimSpace(m.Model), FirmwareVersion: strings.TrimSpace(m.FirmwareVersion),
		Images: m.Links.links("Manager"), Chassis: relPath(m.Links.ManagerInChassis.ID), Health: m.Status.Health}, nil
}

// Bios reads the system's Bios resource for the links that name its
// firmware images (Bios v1.1+); none when the system links no Bios.
func (b *gofishBMC) Bios(ctx context.Context, sys *systemInfo) (imageLinks, error) {
	if sys.Bios == "" {
		return imageLinks{}, nil
	}
	ctx = selfChecked(ctx) // read through getJSON only
	var doc struct{ Links imageLinksDoc }
	err := b.do(ctx, func(c *gofish.APIClient) error { return getJSON(ctx, c, sys.Bios, &doc) })
	return doc.Links.links("Bios"), err
}
