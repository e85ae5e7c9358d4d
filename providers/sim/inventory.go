package sim

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
)

// inventory is one BMC's firmware and software: its components (the
// profile's, per-system ones once per host), the version each runs, the
// one before, the versions staged for the next activation, the images
// uploaded but not installed, and which members are not fitted. It lists
// them as inventory members (members.go) and resolves an update's targets
// to them. Its BMC's mu is held for every method.
type inventory struct {
	prof        *profile
	hosts       []*host           // the BMC's, for per-system components
	softwareIDs map[string]string // BMCSpec.SoftwareIDs
	comps       []component
	versions    []string // by comps index
	previous    []string // by comps index: the version before the last update, "" for none
	absent      []bool   // by comps index: the member is not fitted (BMCSpec.Absent)
	// available are images uploaded but not installed (Dell Available-).
	available []availableImage
	pending   []pending
}

type pending struct {
	comp    int
	version string
	onReset bool // asked for OnReset: any host reset applies a shared one
}

// component finds a component by key (case-insensitive).
func (inv *inventory) component(key string) (int, bool) {
	for i, c := range inv.comps {
		if strings.EqualFold(c.key, key) {
			return i, true
		}
	}
	return 0, false
}

// hostComponent finds the component of base key on host h: its own
// per-system one, else the shared one.
func (inv *inventory) hostComponent(h *host, key string) (int, bool) {
	for i, c := range inv.comps {
		base := inv.baseKey(c)
		if strings.EqualFold(base, key) && (c.sys == h.idx || c.sys < 0) {
			return i, true
		}
	}
	return 0, false
}

// baseKey is a component's key without the "Node1." of a per-system
// component on a BMC with several systems: the key the release names.
func (inv *inventory) baseKey(c component) string {
	if c.sys >= 0 && len(inv.hosts) > 1 {
		return strings.TrimPrefix(c.key, inv.hosts[c.sys].id+".")
	}
	return c.key
}

func (inv *inventory) version(key string) string {
	i, _ := inv.component(key)
	return inv.versions[i]
}

func (inv *inventory) versionMap() map[string]string {
	out := make(map[string]string, len(inv.versions))
	for i, c := range inv.comps {
		out[c.key] = inv.versions[i]
	}
	return out
}

// setVersion makes v component i's running version; the one it replaces
// becomes its previous (rollback) version..
func (inv *inventory) setVersion(i int, v string) {
	if inv.versions[i] != v {
		inv.previous[i] = inv.versions[i]
	}
	inv.versions[i] = v
}

// setAbsent checks BMCSpec.Absent against the profile's members and marks them.
func (inv *inventory) setAbsent(ids []string) error {
	inv.absent = make([]bool, len(inv.comps))
	for _, id := range ids {
		found := false
		for i, c := range inv.comps {
			if strings.EqualFold(c.id, id) {
				inv.absent[i], found = true, true
			}
		}
		if !found {
			return fmt.Errorf("absent member %q: profile %s has no such inventory member", id, inv.prof.name)
		}
	}
	return nil
}

// targetComponent resolves a Targets entry to a component: an updateable
// member's active member, or (basic, hgx) the System for its BIOS and the
// Manager for the BMC.
func (inv *inventory) targetComponent(target string) (int, bool) {
	target = cleanPath(target)
	if inv.prof.targetsSystemManager || inv.prof.systemManagerTargets {
		if target == inv.prof.managerPath {
			return inv.component(ComponentBMC)
		}
		for _, h := range inv.hosts {
			if target == h.path {
				return inv.hostComponent(h, ComponentBIOS)
			}
		}
		if inv.prof.targetsSystemManager {
			return 0, false
		}
	}
	for i := range inv.comps {
		if inv.memberPath(i) == target {
			return i, true
		}
	}
	return 0, false
}

// targetsAllowed lists the Targets values the SimpleUpdate ActionInfo
// allows: updateable inventory members (or only those the profile names),
// or on basic the Systems and the Manager (hgx: both).
func (inv *inventory) targetsAllowed() []string {
	var out []string
	if inv.prof.targetsSystemManager || inv.prof.systemManagerTargets {
		out = append(out, inv.prof.managerPath)
		for _, h := range inv.hosts {
			out = append(out, h.path)
		}
		if inv.prof.targetsSystemManager {
			return append(out[1:], out[0]) // Systems, then the Manager
		}
	}
	for i, c := range inv.comps {
		if c.canUpdate() && (inv.prof.targetsOnly == nil || slices.Contains(inv.prof.targetsOnly, c.id)) {
			out = append(out, inv.memberPath(i))
		}
	}
	return out
}

// dropStaged discards the images staged for the next host reset; a BMC's
// own firmware, which its restart activates, stays..
func (inv *inventory) dropStaged() {
	inv.pending = slices.DeleteFunc(inv.pending, func(p pending) bool { return inv.comps[p.comp].activation != activateBMC })
}

// activate makes current the pending images that are due (by the image
// and its component), in the order they were staged; the rest stay.
func (inv *inventory) activate(due func(p pending, c component) bool) {
	inv.pending = slices.DeleteFunc(inv.pending, func(p pending) bool {
		if due(p, inv.comps[p.comp]) {
			inv.setVersion(p.comp, p.version)
			return true
		}
		return false
	})
}

func (inv *inventory) renderInventory(i int) map[string]any {
	c := inv.comps[i]
	doc := inv.prof.inventoryTemplate
	p := inv.memberPath(i)
	doc = with(doc, p, "@odata.id")
	doc = with(doc, c.id, "Id")
	doc = with(doc, c.name, "Name")
	doc = with(doc, inv.versions[i], "Version")
	base := inv.baseKey(c)
	sw := base
	if c.softwareID != "" {
		sw = c.softwareID
	}
	if o := inv.softwareIDs[base]; o != "" {
		sw = o
	}
	doc = with(doc, sw, "SoftwareId")
	switch c.upd {
	case updOmit:
		doc = without(doc, "Updateable")
	default:
		doc = with(doc, c.canUpdate(), "Updateable")
	}
	doc = with(doc, c.key+" firmware", "Description")
	doc = with(doc, map[string]any{"State": "Enabled", "Health": "OK"}, "Status")
	if inv.prof.relatedItems {
		switch {
		case c.sys >= 0:
			doc = with(doc, []any{ref(inv.hosts[c.sys].path)}, "RelatedItem")
		case c.key == ComponentBMC:
			doc = with(doc, []any{ref(inv.prof.managerPath)}, "RelatedItem")
		default:
			doc = with(doc, []any{ref(inv.prof.chassisPath)}, "RelatedItem")
		}
		if _, ok := doc["RelatedItem@odata.count"]; ok {
			doc = with(doc, 1, "RelatedItem@odata.count")
		}
	} else {
		doc = without(doc, "RelatedItem")
	}
	if _, ok := doc["@odata.context"]; ok {
		doc = with(doc, "/redfish/v1/$metadata#SoftwareInventory.SoftwareInventory", "@odata.context")
	}
	if _, ok := doc["@odata.etag"]; ok {
		h := fnv.New32a()
		h.Write([]byte(inv.versions[i]))
		doc = with(doc, fmt.Sprintf(`W/"%08X"`, h.Sum32()), "@odata.etag")
	}
	return doc
}

// softwareImages lists the members that are images of component key: its
// active member, its rollback (Dell Previous-) and the copies that name it
// (Lenovo BMC-Backup, Supermicro Golden_/Staging_/Backup_)..
func (inv *inventory) softwareImages(key string) []string {
	var out []string
	for _, m := range inv.members() {
		c := inv.comps[m.comp]
		if m.image != nil || (c.key != key && c.imageOf != key) {
			continue
		}
		if m.twin >= 0 && c.twins[m.twin].kind != twinPrevious {
			continue
		}
		out = append(out, m.path(inv))
	}
	return out
}
