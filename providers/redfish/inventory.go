package redfish

import (
	"context"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/stmcginnis/gofish"
)

func (b *gofishBMC) Inventory(ctx context.Context) ([]invItem, error) {
	ctx = selfChecked(ctx) // read through getJSON only
	var out []invItem
	err := b.do(ctx, func(c *gofish.APIClient) error {
		out = out[:0]
		b.mu.Lock()
		links := b.inventories
		b.mu.Unlock()
		if links == nil {
			us, err := b.updateService(ctx, c)
			if err != nil {
				return err
			}
			links = inventoryLinks(us)
		}
		var missing error
		// Ids are unique within one collection, not across both: an iLO
		// numbers its FirmwareInventory and its SoftwareInventory (OS
		// packages) 1, 2, 3... A later collection's member whose Id an
		// earlier one already holds is named by its collection too
		// ("SoftwareInventory/1"), so id = "1" selects the firmware only.
		taken := map[string]bool{}
		docs := invDocs.Get().(*[]invDoc)
		defer invDocs.Put(docs)
		for _, l := range links {
			items, err := readMembers(ctx, c, l, *docs)
			if cap(items) > cap(*docs) && cap(items) <= maxPooledMembers {
				*docs = items[:0]
			}
			if err != nil && statusOf(collErr(err)) == http.StatusNotFound {
				// One inventory missing (FirmwareInventory on unlicensed
				// BMCs): the other still counts.
				missing = &inventoryError{uri: l, err: collErr(err)}
				continue
			}
			if err != nil {
				return &inventoryError{uri: l, err: collErr(err)}
			}
			// Grown once per collection, to what it adds.
			out = slices.Grow(out, len(items))
			start := len(out)
			for i := range items {
				item := memberOf(&items[i])
				if taken[item.ID] {
					item.ID = path.Base(strings.TrimSuffix(l, "/")) + "/" + item.ID
				}
				out = append(out, item)
			}
			for _, it := range out[start:] {
				taken[it.ID] = true
			}
		}
		if len(out) == 0 && missing != nil {
			return missing
		}
		return nil
	})
	return out, err
}

// invDocs holds the arrays inventory pages are decoded into: every server
// reads one or two, and a fresh array grown member by member was a tenth
// of what a plan allocates per server. The members are copied out
// (memberOf) before the array goes back.
var invDocs = sync.Pool{New: func() any { return new([]invDoc) }}

// maxPooledMembers bounds the arrays kept in invDocs.
const maxPooledMembers = 256

// inventoryLinks are the UpdateService's FirmwareInventory and
// SoftwareInventory links, the ones it has.
func inventoryLinks(us *updateServiceDoc) []string {
	links := []string{}
	for _, l := range []string{us.FirmwareInventory.ID, us.SoftwareInventory.ID} {
		if l != "" {
			links = append(links, l)
		}
	}
	return links
}
