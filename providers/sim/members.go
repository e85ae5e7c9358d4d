package sim

import (
	"fmt"
)

// Inventory members are not all running firmware. Beside a component's
// active member, vendors list others for it (docs/rollout-rules.md rule 38): Dell's Current-
// (the running image again) and Previous- (the rollback image), and its
// Available- images uploaded but not installed; Lenovo's -Pending
// placeholders (what the next activation installs). A member may also be
// absent (a GPU not fitted). The members are computed from each BMC's
// state on every request.

// twinKind is the kind of an extra member a component shows.
type twinKind int

const (
	twinCurrent  twinKind = iota // the running image, listed again (Dell Current-)
	twinPrevious                 // the image before the last update (Dell Previous-)
	twinPending                  // the image staged for the next activation (Lenovo -Pending)
)

// twin is an extra member of a component.
type twin struct {
	kind twinKind
	// id is the member's Id from the version it shows ("" for a pending
	// placeholder with nothing staged).
	id func(version string) string
	// placeholder is the Version of a pending member while nothing is
	// staged: a string ("-*") or nil (JSON null).
	placeholder any
	// softwareID is the pending placeholder's SoftwareId ("BMC-*-10", "").
	softwareID *string
	// state is Status.State ("" for Enabled; "Disabled" for a placeholder).
	state string
}

// member is one inventory member as a BMC lists it now.
type member struct {
	comp    int
	twin    int // index in the component's twins; -1 for its active member
	id      string
	version any
	image   *availableImage // an uploaded image (Dell Available-), else nil
}

// availableImage is an image pushed to a BMC that installs uploads
// separately (Dell's HttpPushUri): listed as an Available- member until a
// SimpleUpdate names it.
type availableImage struct {
	comp    int
	version string
	id      string
}

// memberID is the Id of component i's active member: fixed, or (Dell)
// made from the version it runs.
func (inv *inventory) memberID(i int) string {
	c := inv.comps[i]
	if c.memberID != nil {
		return c.memberID(inv.versions[i])
	}
	return c.id
}

// memberPath is the URI of component i's active member.
func (inv *inventory) memberPath(i int) string {
	return inventoryPrefix(inv.comps[i]) + inv.memberID(i)
}

func inventoryPrefix(c component) string {
	if c.software {
		return "/redfish/v1/UpdateService/SoftwareInventory/"
	}
	return "/redfish/v1/UpdateService/FirmwareInventory/"
}

// members lists every inventory member now..
func (inv *inventory) members() []member {
	var out []member
	for i, c := range inv.comps {
		out = append(out, member{comp: i, twin: -1, id: inv.memberID(i), version: inv.versions[i]})
		for j, tw := range c.twins {
			switch tw.kind {
			case twinCurrent:
				out = append(out, member{comp: i, twin: j, id: tw.id(inv.versions[i]), version: inv.versions[i]})
			case twinPrevious:
				if prev := inv.previous[i]; prev != "" {
					out = append(out, member{comp: i, twin: j, id: tw.id(prev), version: prev})
				}
			case twinPending:
				m := member{comp: i, twin: j, id: tw.id(""), version: tw.placeholder}
				for _, p := range inv.pending {
					if p.comp == i {
						m.version = p.version
					}
				}
				out = append(out, m)
			}
		}
	}
	for k := range inv.available {
		a := &inv.available[k]
		out = append(out, member{comp: a.comp, twin: -1, id: a.id, version: a.version, image: a})
	}
	return out
}

func (m member) path(inv *inventory) string { return inventoryPrefix(inv.comps[m.comp]) + m.id }

// renderMember is an inventory member's document..
func (inv *inventory) renderMember(m member) map[string]any {
	c := inv.comps[m.comp]
	doc := inv.renderInventory(m.comp)
	doc = with(doc, m.path(inv), "@odata.id")
	doc = with(doc, m.id, "Id")
	doc = with(doc, m.version, "Version")
	state := c.state
	if inv.absent[m.comp] {
		state = "Absent"
	}
	kind := -1
	if m.twin >= 0 {
		tw := c.twins[m.twin]
		kind = int(tw.kind)
		if tw.state != "" {
			state = tw.state
		}
		if tw.kind == twinPending && tw.softwareID != nil && m.version == tw.placeholder {
			doc = with(doc, *tw.softwareID, "SoftwareId")
		}
	}
	if m.image != nil {
		kind = int(twinPending)
	}
	if state != "" {
		doc = with(doc, map[string]any{"State": state, "Health": "OK"}, "Status")
	}
	if c.oem != nil {
		v, _ := m.version.(string)
		doc = with(doc, c.oem(kind, v), "Oem")
	}
	return doc
}

// memberAt resolves an inventory URI to the component whose active member
// (or uploaded image) it is..
func (inv *inventory) memberAt(uri string) (member, bool) {
	uri = cleanPath(uri)
	for _, m := range inv.members() {
		if m.path(inv) == uri {
			return m, true
		}
	}
	return member{}, false
}

// upload keeps a pushed image as an Available- member (Dell) and returns
// its URI..
func (inv *inventory) upload(image string) (string, error) {
	comp, version, ok := parseImage(image)
	if !ok || comp == "" {
		return "", fmt.Errorf("the image %s names no component of this server (want <component>-<version>.bin)", image)
	}
	i, found := inv.component(comp)
	if !found || inv.comps[i].availableID == nil {
		return "", fmt.Errorf("the image %s is for %s, which this server cannot stage", image, comp)
	}
	id := inv.comps[i].availableID(version)
	for _, a := range inv.available {
		if a.id == id {
			return inventoryPrefix(inv.comps[i]) + id, nil
		}
	}
	inv.available = append(inv.available, availableImage{comp: i, version: version, id: id})
	return inventoryPrefix(inv.comps[i]) + id, nil
}

// install takes an Available- image out of the list, once its update
// task exists..
func (inv *inventory) install(a *availableImage) {
	for k := range inv.available {
		if &inv.available[k] == a {
			inv.available = append(inv.available[:k:k], inv.available[k+1:]...)
			return
		}
	}
}

// dellID is a Dell inventory Id: <state>-<ComponentID>-<version>__<FQDD>.
func dellID(state, componentID, fqdd string) func(string) string {
	return func(v string) string { return state + "-" + componentID + "-" + v + "__" + fqdd }
}

// fixedID is a member Id that does not change with the version.
func fixedID(id string) func(string) string { return func(string) string { return id } }
