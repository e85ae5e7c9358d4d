package config

import (
	"fmt"
	"sort"
	"strings"
)

// RackLess returns how racks sort under a compute order (rule 6):
// OrderAlphanumeric is plain byte-wise order ("rack10" before "rack2"),
// OrderNatural compares runs of digits by value ("rack2" before "rack10").
// Validation and the planner both order racks with it.
func RackLess(order string) func(a, b string) bool {
	if order == OrderNatural {
		return naturalLess
	}
	return func(a, b string) bool { return a < b }
}

// naturalLess compares runs of digits by value and everything else
// byte-wise ("rack2" < "rack10"); equal values with more leading zeros
// sort later.
func naturalLess(a, b string) bool {
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	digits := func(s string) (string, string) {
		i := 0
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		return s[:i], s[i:]
	}
	for a != "" && b != "" {
		if isDigit(a[0]) && isDigit(b[0]) {
			na, ra := digits(a)
			nb, rb := digits(b)
			ta, tb := strings.TrimLeft(na, "0"), strings.TrimLeft(nb, "0")
			if len(ta) != len(tb) {
				return len(ta) < len(tb)
			}
			if ta != tb {
				return ta < tb
			}
			if na != nb {
				return len(na) < len(nb)
			}
			a, b = ra, rb
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

// RacksInOrder groups servers by rack, declared order inside a rack, and
// orders the racks under a compute order (RackLess), the rack named first
// (the canary; "" for none) before all others (rule 6).
func RacksInOrder(servers []*Server, order, first string) [][]*Server {
	idx := map[string]int{}
	var racks [][]*Server
	for _, sv := range servers {
		i, ok := idx[sv.Rack.Name]
		if !ok {
			i = len(racks)
			idx[sv.Rack.Name] = i
			racks = append(racks, nil)
		}
		racks[i] = append(racks[i], sv)
	}
	less := RackLess(order)
	sort.SliceStable(racks, func(i, j int) bool {
		a, b := racks[i][0].Rack.Name, racks[j][0].Rack.Name
		if (a == first) != (b == first) {
			return a == first
		}
		return less(a, b)
	})
	return racks
}

// ManagementBatches cuts the management servers mgmt of cluster c into
// its strategy's management groups, each cut into batches (rule 5):
// servers grouped by rack, racks in the compute order alternating between
// the groups (1st, 3rd, … rack → A; 2nd, 4th, … → B), each group cut
// into at most Batches consecutive batches ⌈remaining/batches left⌉ long,
// empty batches dropped. The planner makes these scopes and validation
// checks thresholds against them.
func (c *Cluster) ManagementBatches(mgmt []*Server) [][][]*Server {
	ms := c.Strategy.Management
	groups := make([][]*Server, max(ms.Groups, 1))
	for i, r := range RacksInOrder(mgmt, c.Strategy.Compute.Order, "") {
		groups[i%len(groups)] = append(groups[i%len(groups)], r...)
	}
	out := make([][][]*Server, len(groups))
	for g, list := range groups {
		n := max(ms.Batches, 1)
		for i := 0; i < n && len(list) > 0; i++ {
			size := (len(list) + (n - i) - 1) / (n - i)
			out[g] = append(out[g], list[:size])
			list = list[size:]
		}
	}
	return out
}

// GroupLetter names management group i (from 0) for people: A to Z, then
// its number.
func GroupLetter(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return fmt.Sprint(i + 1)
}
