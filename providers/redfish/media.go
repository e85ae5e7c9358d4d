package redfish

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"
)

// rawMedia holds what gofish keeps private in VirtualMedia.
type rawMedia struct {
	Actions struct {
		Insert struct {
			Target string `json:"target"`
		} `json:"#VirtualMedia.InsertMedia"`
		Eject struct {
			Target string `json:"target"`
		} `json:"#VirtualMedia.EjectMedia"`
	}
}

type rawManager struct {
	VirtualMedia odataLink
}

func (b *gofishBMC) VirtualMedia(ctx context.Context, sys *systemInfo) (*mediaInfo, error) {
	var found *mediaInfo
	err := b.do(ctx, func(c *gofish.APIClient) error {
		links := []string{}
		if sys.VirtualMedia != "" {
			links = append(links, sys.VirtualMedia)
		} else {
			// Older BMCs (iLO 5, AMI) hang virtual media off the manager.
			managers, err := c.Service.Managers()
			if err != nil {
				return collErr(err)
			}
			for _, m := range managers {
				var rm rawManager
				_ = json.Unmarshal(m.RawData, &rm)
				if rm.VirtualMedia.ID != "" {
					links = append(links, rm.VirtualMedia.ID)
				}
			}
		}
		for _, l := range links {
			media, err := schemas.GetCollectionObjects[schemas.VirtualMedia](c, l)
			if err != nil {
				return collErr(err)
			}
			// Prefer a slot that says it takes CDs; AMI lists no MediaTypes,
			// so a slot named like a CD drive is the next best.
			var pick *schemas.VirtualMedia
			for _, m := range media {
				if slices.Contains(m.MediaTypes, schemas.CDVirtualMediaType) || slices.Contains(m.MediaTypes, schemas.DVDVirtualMediaType) {
					pick = m
					break
				}
			}
			for _, m := range media {
				if pick == nil && len(m.MediaTypes) == 0 && (strings.Contains(strings.ToUpper(m.ID), "CD") || strings.Contains(strings.ToUpper(m.Name), "CD")) {
					pick = m
				}
			}
			if pick != nil {
				var rm rawMedia
				_ = json.Unmarshal(pick.RawData, &rm)
				found = &mediaInfo{URI: pick.ODataID, InsertTarget: rm.Actions.Insert.Target, EjectTarget: rm.Actions.Eject.Target,
					Inserted: pick.Inserted != nil && *pick.Inserted, Image: pick.Image}
				return nil
			}
		}
		return errors.New("the BMC offers no CD/DVD virtual media")
	})
	return found, err
}
