package providers

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/rackform/rackform/config/version"
)

// Selects reports whether m selects component c: by SoftwareID, else by
// inventory ID, else by a path.Match glob over Name, whatever c's state.
// The planner, the executor and providers all decide "which component is
// this" here, so they cannot disagree.
func (m Match) Selects(c Component) bool {
	switch {
	case m.SoftwareID != "":
		return c.SoftwareID == m.SoftwareID
	case m.ID != "":
		return c.ID == m.ID
	case m.NamePattern != "":
		ok, _ := path.Match(m.NamePattern, c.Name)
		return ok
	}
	return false
}

// Find returns the first component of cs that m selects, in any state.
func (m Match) Find(cs []Component) (Component, bool) {
	for _, c := range cs {
		if m.Selects(c) {
			return c, true
		}
	}
	return Component{}, false
}

// Members returns every component of cs that m selects, in cs's order and
// in any state.
func (m Match) Members(cs []Component) []Component {
	var out []Component
	for _, c := range cs {
		if m.Selects(c) {
			out = append(out, c)
		}
	}
	return out
}

// Active returns the active components of cs that m selects: what the
// rule means, in plan and apply alike.
func (m Match) Active(cs []Component) []Component {
	var out []Component
	for _, c := range cs {
		if c.IsActive() && m.Selects(c) {
			out = append(out, c)
		}
	}
	return out
}

// Counted reports whether active, the active members m selects, are as
// many as the rule requires: m.Count of them when Count is set, else any
// number. The planner's diff and AtTarget decide the count here alike.
func (m Match) Counted(active []Component) bool {
	return m.Count == 0 || len(active) == m.Count
}

// AtTarget reports whether the component m selects in cs is at target t:
// every active member it selects reports t's version (t.Matches), and
// there are m.Count of them when Count is set. When not, why says what is
// missing in words ("HGX_FW_GPU_SXM_3 at 96.00.61.00.01", "7 members,
// the rule expects 8", "no active member (BMC-Backup is standby)"). A
// member whose version t's scheme cannot read is an error naming it.
func (m Match) AtTarget(t version.Target, cs []Component) (at bool, why string, err error) {
	active := m.Active(cs)
	if len(active) == 0 {
		why = "no active member reported"
		if others := m.Members(cs); len(others) > 0 {
			why += " (" + MembersText(others) + ")"
		}
		return false, why, nil
	}
	if !m.Counted(active) {
		return false, fmt.Sprintf("%d active %s reported, the rule expects %d (%s)", len(active), plural(len(active), "member", "members"), m.Count, MembersText(active)), nil
	}
	var behind []string
	for _, c := range active {
		ok, merr := t.Matches(c.Version)
		if merr != nil {
			return false, "", fmt.Errorf("member %s reports %q, which cannot be compared with %s: %w", c.ID, c.Version, t.Version, merr)
		}
		if !ok {
			behind = append(behind, fmt.Sprintf("%s at %s", c.ID, orNone(c.Version)))
		}
	}
	if len(behind) > 0 {
		return false, strings.Join(behind, ", "), nil
	}
	return true, "", nil
}

// AtTargetOf is AtTarget over the members ids names (an update step's:
// those it was for), while each of them is still reported as active;
// otherwise, and when ids is empty, over every active member m selects (a
// Dell Id carries its version, so it changes with the update). m.Count
// is checked against every active member either way.
func (m Match) AtTargetOf(t version.Target, cs []Component, ids []string) (at bool, why string, err error) {
	if len(ids) == 0 {
		return m.AtTarget(t, cs)
	}
	active := m.Active(cs)
	if !m.Counted(active) {
		return m.AtTarget(t, cs)
	}
	byID := make(map[string]Component, len(active))
	for _, c := range active {
		byID[c.ID] = c
	}
	named := make([]Component, 0, len(ids))
	for _, id := range ids {
		c, ok := byID[id]
		if !ok {
			return m.AtTarget(t, cs)
		}
		named = append(named, c)
	}
	sub := m
	sub.Count = 0
	return sub.AtTarget(t, named)
}

// MemberText names one member for people: its id, version and, when it
// is not active, its state ("Previous-159-1.2.4__BIOS.Setup.1-1 1.2.4
// previous").
func MemberText(c Component) string {
	s := c.ID + " " + orNone(c.Version)
	if !c.IsActive() {
		s += " " + c.State
	}
	return s
}

// MembersText names members for people, comma-separated.
func MembersText(cs []Component) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = MemberText(c)
	}
	return strings.Join(parts, ", ")
}

func orNone(v string) string {
	if v == "" {
		return "(no version)"
	}
	return v
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// A rule means every active member it selects, and one image is sent to
// the members of a rule that must change: so the members an image can be
// sent to (active and updateable) must be one kind of device. Three signs
// say that they are not, checked in this order:
//
//   - their Names are of different families: a Name family is the Name
//     with MAC addresses left out, split into words of letters and
//     digits, keeping the words without a digit, in lower case. "GPU0
//     Firmware" and "GPU7 Firmware" are one family ("firmware"), as are
//     Dell's two LOM ports "Broadcom Gigabit Ethernet BCM5720 -
//     70:B5:E8:F0:52:DC" and "…:DD"; "ConnectX-8" and "BlueField-3" are
//     two ("connectx", "bluefield"). A member without a Name has no
//     family and is not compared.
//   - their versions are of different lineages under the component's
//     scheme (version.Lineage: another vendor family, another constant
//     suffix): different firmware, never older or newer. A version the
//     scheme cannot read is not compared here (plan reports it).
//   - their versions have the shape of NVIDIA networking firmware,
//     DEVICE.RELEASE.BUILD of two, two and four digits ("40.45.3048"),
//     with different first fields: that field names the device (28
//     ConnectX-7, 32 BlueField-3, 40 ConnectX-8) and no update changes it.
//
// Members that share a SoftwareId but differ by these signs are real: a
// GB300 tray lists its ConnectX-8 NICs and its BlueField-3 under
// SoftwareId 0x0001, a Dell R750 its ConnectX-6, a Mellanox adapter and
// three SSDs under SoftwareId 0.

// Devices is the kinds of device among members (the active members one
// rule selects) that an image can be sent to, when there are several:
// the members grouped by the first sign that tells them apart, and why
// in words. It returns nil when they are one kind.
func Devices(members []Component, f version.Format) (kinds [][]Component, why string) {
	var sendable []Component
	for _, c := range members {
		if c.IsActive() && c.Updateable {
			sendable = append(sendable, c)
		}
	}
	signs := []struct {
		key func(Component) string
		why string
	}{
		{func(c Component) string { return NameFamily(c.Name) }, "their names are of different families"},
		{func(c Component) string { return versionLineage(f, c.Version) }, "their versions are of different families"},
		{func(c Component) string { return networkDevice(c.Version) }, "their versions name different NVIDIA network devices (the first field of DEVICE.RELEASE.BUILD)"},
	}
	for _, s := range signs {
		if kinds := groupBy(sendable, s.key); len(kinds) > 1 {
			return kinds, s.why
		}
	}
	return nil, ""
}

// DevicesText names the kinds Devices returned for people: each kind's
// members, after its first member's Name when the kinds' Names differ
// (`"ConnectX-8 Firmware" (NIC_0 40.45.3048, NIC_1 40.45.3048) and
// "BlueField-3 Firmware" (DPU_0 32.44.1036)`; `(NIC_0 40.45.3048) and
// (DPU_0 32.44.1036)` when both are "Software Inventory").
func DevicesText(kinds [][]Component) string {
	labelled := false
	for _, k := range kinds[1:] {
		labelled = labelled || k[0].Name != kinds[0][0].Name
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = "(" + MembersText(k) + ")"
		if labelled {
			label := k[0].Name
			if label == "" {
				label = "no name"
			}
			parts[i] = strconv.Quote(label) + " " + parts[i]
		}
	}
	if len(parts) <= 2 {
		return strings.Join(parts, " and ")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// groupBy groups cs by key in first-seen order; members whose key is ""
// (the sign says nothing about them) join no group.
func groupBy(cs []Component, key func(Component) string) [][]Component {
	var order []string
	groups := map[string][]Component{}
	for _, c := range cs {
		k := key(c)
		if k == "" {
			continue
		}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], c)
	}
	out := make([][]Component, len(order))
	for i, k := range order {
		out[i] = groups[k]
	}
	return out
}

// macAddress is a MAC address in a Name (Dell names each port by it).
var macAddress = regexp.MustCompile(`[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){5}`)

// NameFamily is the family of an inventory Name: its words without a
// digit, in lower case, MAC addresses left out ("GPU3 System Slot1" →
// "system"; "ConnectX-8" → "connectx"); "" for a Name without one.
func NameFamily(name string) string {
	name = macAddress.ReplaceAllString(name, " ")
	var words []string
	for _, w := range strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if strings.IndexFunc(w, unicode.IsDigit) < 0 {
			words = append(words, strings.ToLower(w))
		}
	}
	return strings.Join(words, " ")
}

// versionLineage is the lineage of reported under f, with a mark so that
// versions without one form a group too; "" when f cannot read it.
func versionLineage(f version.Format, reported string) string {
	if f.Scheme == "" || reported == "" {
		return ""
	}
	v, err := f.Parse(reported)
	if err != nil {
		return ""
	}
	return "lineage:" + v.Lineage()
}

// nvidiaNetwork is the shape of NVIDIA networking firmware versions.
var nvidiaNetwork = regexp.MustCompile(`^([0-9]{2})\.[0-9]{2}\.[0-9]{4}$`)

// networkDevice is the device field of an NVIDIA networking firmware
// version ("40" of "40.45.3048"), "" for any other version.
func networkDevice(v string) string {
	if m := nvidiaNetwork.FindStringSubmatch(v); m != nil {
		return m[1]
	}
	return ""
}
