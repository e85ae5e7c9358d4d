package redfish

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/rackform/rackform/providers"
)

// The inventory member model: which FirmwareInventory members are the
// firmware that runs, and which are copies beside it. A real BMC lists
// both, often under one SoftwareId and Name, so a rule that compared every
// member it selects would read a rollback image as the running one (and
// flash a server already at target) or hold a server back for a
// placeholder's missing version.
//
// A member's state is read from, in order:
//
//  1. Redfish Status.State: Absent and UnavailableOffline are absent,
//     StandbySpare and StandbyOffline standby, Disabled absent (pending
//     when the member also says pending: Lenovo's -Pending placeholders).
//  2. The version: "Not Present" (Supermicro's empty Backup_ slots) is
//     absent; none at all, or Lenovo's "-*", is a placeholder: pending
//     when the member says pending, else absent.
//  3. Dell's Ids, <State>-<ComponentID>-<Version>__<FQDD>: Installed- is
//     active, Previous- the rollback image, Current- and Available- images
//     on the BMC (Oem.Dell.DellSoftwareInventory.Status
//     AvailableForInstallation); without such an Id, that Oem status.
//  4. Words in the Id, Name or Description: Pending, Staging or Staged
//     (Supermicro's Staging_, Lenovo's -Pending) is pending; Previous or
//     Rollback previous; Backup, Golden, Redundant or Recovery standby
//     (Supermicro's Backup_ and Golden_ copies, Lenovo's -Backup, HPE's
//     "Redundant System ROM" described SystemRomBackup, a Cray recovery
//     image).
//
// Everything else is active. Then the BMC's own word, where it is read:
// Links.ActiveSoftwareImage on the Manager and on the Bios resource names
// the member that runs (active), and a member of their SoftwareImages that
// is not it is standby. The Manager and Bios are read for this only when
// the members' own signs leave two active members related to them
// (RelatedItem) that share a SoftwareId or a Name.

// memberOf turns one inventory member document into an item, with its
// state from its own signs (steps 1 to 4 above).
func memberOf(it *invDoc) invItem {
	// Versions are trimmed (iLO pads some); an empty id falls back to the
	// name, so a component is never anonymous. A member that omits
	// Updateable is updateable: many real BMCs omit it.
	id, name := strings.TrimSpace(it.ID), strings.TrimSpace(it.Name)
	item := invItem{Component: providers.Component{ID: cmp.Or(id, name), Name: name, SoftwareID: strings.TrimSpace(it.SoftwareID),
		Version: strings.TrimSpace(it.Version), Updateable: it.Updateable == nil || *it.Updateable}, URI: relPath(it.ODataID)}
	item.State, item.StateSign = ownState(it.ID, it.Name, it.Description, item.Version, it.Status.State, it.Oem.Dell.DellSoftwareInventory.Status)
	for _, r := range it.RelatedItem {
		if r.ID != "" {
			item.Related = append(item.Related, relPath(r.ID))
		}
	}
	return item
}

// dellID is Dell's inventory Id: the member's state, its ComponentID and
// version, "__" and the device's FQDD.
var dellID = regexp.MustCompile(`^(Installed|Previous|Current|Available)-[0-9]+-.*__`)

// ownState decides a member's state from what it says of itself.
func ownState(id, name, description, version, status, dellStatus string) (state, sign string) {
	words := signWords(id, name, description)
	pending := words.has("pending") || words.has("staging") || words.has("staged")
	switch status {
	case "Absent", "UnavailableOffline":
		return providers.StateAbsent, "Status.State " + status
	case "StandbySpare", "StandbyOffline":
		return providers.StateStandby, "Status.State " + status
	case "Disabled":
		if pending {
			return providers.StatePending, "Status.State Disabled, named pending"
		}
		return providers.StateAbsent, "Status.State Disabled"
	}
	switch {
	case strings.EqualFold(version, "Not Present"):
		return providers.StateAbsent, "version Not Present"
	case version == "" || version == "-*":
		what := "no version"
		if version != "" {
			what = "version " + version
		}
		if pending {
			return providers.StatePending, what + ", named pending"
		}
		return providers.StateAbsent, what
	}
	if m := dellID.FindStringSubmatch(id); m != nil {
		switch m[1] {
		case "Installed":
			return providers.StateActive, "Id prefix Installed-"
		case "Previous":
			return providers.StatePrevious, "Id prefix Previous-"
		default:
			return providers.StateAvailable, "Id prefix " + m[1] + "-"
		}
	}
	switch dellStatus {
	case "Installed":
		return providers.StateActive, "Oem.Dell status Installed"
	case "AvailableForInstallation":
		return providers.StateAvailable, "Oem.Dell status AvailableForInstallation"
	}
	switch {
	case pending:
		return providers.StatePending, "named " + firstWord(words, "pending", "staging", "staged")
	case words.has("previous") || words.has("rollback"):
		return providers.StatePrevious, "named " + firstWord(words, "previous", "rollback")
	case words.has("backup") || words.has("golden") || words.has("redundant") || words.has("recovery"):
		return providers.StateStandby, "named " + firstWord(words, "backup", "golden", "redundant", "recovery")
	}
	return providers.StateActive, ""
}

// signNames are the words a member's Id, Name and Description are read
// for (steps 4 above, and isBIOSMember's names).
var signNames = [...]string{"pending", "staging", "staged", "previous", "rollback", "backup", "golden", "redundant", "recovery", "bios", "uefi"}

// signs is the set of signNames that texts hold as whole words.
type signs uint16

func (s signs) has(word string) bool {
	for i, n := range signNames {
		if n == word {
			return s&(1<<i) != 0
		}
	}
	return false
}

// signWords finds signNames among the words of a member's Id, Name and
// Description, in any case; words are split at anything not a letter or
// digit and where a lower-case letter meets an upper-case one
// ("SystemRomBackup": system, rom, backup), so "VBIOS" or "Backplane"
// never read as "BIOS" or "backup". It allocates nothing: it runs for
// every member of every server.
func signWords(texts ...string) signs {
	var out signs
	for _, t := range texts {
		start, prev := -1, rune(0)
		for i, r := range t {
			switch {
			case !unicode.IsLetter(r) && !unicode.IsDigit(r):
				out |= signOf(t, start, i)
				start = -1
			case unicode.IsUpper(r) && unicode.IsLower(prev):
				out |= signOf(t, start, i)
				start = i
			case start < 0:
				start = i
			}
			prev = r
		}
		out |= signOf(t, start, len(t))
	}
	return out
}

// signOf is the sign the word t[start:end] is, if any (none when start < 0).
func signOf(t string, start, end int) signs {
	if start < 0 {
		return 0
	}
	w := t[start:end]
	for i, n := range signNames {
		// Equal byte lengths with an ASCII name: EqualFold is ASCII case folding here.
		if len(w) == len(n) && strings.EqualFold(w, n) {
			return 1 << i
		}
	}
	return 0
}

func firstWord(words signs, candidates ...string) string {
	for _, c := range candidates {
		if words.has(c) {
			return c
		}
	}
	return ""
}

// imageLinks are a resource's Links.ActiveSoftwareImage and
// Links.SoftwareImages (Manager, Bios).
type imageLinks struct {
	Active string
	Images []string
	// From names the resource for the sign ("Manager", "Bios").
	From string
}

// applyImageLinks marks the member l names active, and the other members
// of its SoftwareImages standby: the BMC's own word on which image runs.
func applyImageLinks(items []invItem, l imageLinks) {
	if l.Active == "" {
		return
	}
	for i := range items {
		it := &items[i]
		switch {
		case it.URI == l.Active:
			it.State, it.StateSign = providers.StateActive, l.From+".Links.ActiveSoftwareImage"
		case it.IsActive() && slices.Contains(l.Images, it.URI):
			it.State, it.StateSign = providers.StateStandby, l.From+".Links.SoftwareImages, not its ActiveSoftwareImage"
		}
	}
}

// ambiguous reports whether two active members that related says belong
// to one resource (the Manager, the Bios) share a SoftwareId or a Name:
// the members alone do not say which of them runs.
func ambiguous(items []invItem, related func(invItem) bool) bool {
	seen := map[string]bool{}
	for _, it := range items {
		if !it.IsActive() || !related(it) {
			continue
		}
		for _, k := range []string{"id\x00" + it.SoftwareID, "name\x00" + it.Name} {
			if k == "id\x00" || k == "name\x00" {
				continue
			}
			if seen[k] {
				return true
			}
			seen[k] = true
		}
	}
	return false
}

// relatedTo returns whether a member's RelatedItem links to uri or below.
func relatedTo(uri string) func(invItem) bool {
	return func(it invItem) bool {
		for _, r := range it.Related {
			if uri != "" && (r == uri || strings.HasPrefix(r, uri+"/")) {
				return true
			}
		}
		return false
	}
}

// relatedToManager returns whether a member's RelatedItem links to a Manager.
func relatedToManager(it invItem) bool {
	for _, r := range it.Related {
		if strings.HasPrefix(r, "/redfish/v1/Managers/") {
			return true
		}
	}
	return false
}

// isBIOSMember reports whether an active member is the system's BIOS (or
// UEFI) firmware: related to the system's Bios resource, or named so
// ("BIOS", "UEFI", HPE's "System ROM"), or reporting the System's
// BiosVersion.
func isBIOSMember(it invItem, sys *systemInfo) bool {
	if !it.IsActive() {
		return false
	}
	if sys.Bios != "" && relatedTo(sys.Bios)(it) {
		return true
	}
	w := signWords(it.ID, it.Name)
	return w.has("bios") || w.has("uefi") || strings.EqualFold(it.Name, "System ROM") || (sys.BiosVersion != "" && it.Version == sys.BiosVersion)
}
