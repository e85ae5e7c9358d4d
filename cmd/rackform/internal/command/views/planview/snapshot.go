package planview

import (
	"fmt"
	"strings"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/planner/plan"
)

// SnapshotLine says what configuration the plan carries: the directory, its
// files, and the data files it read (an inventory CSV changes what is
// upgraded as much as HCL does, so reviewers see its name and hash).
func SnapshotLine(s plan.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", s.Dir, views.Plural(len(s.Files), "file"))
	if len(s.DataFiles) > 0 {
		names := make([]string, len(s.DataFiles))
		for i, f := range s.DataFiles {
			sum := f.SHA256
			if len(sum) > 12 {
				sum = sum[:12]
			}
			names[i] = fmt.Sprintf("%s (sha256 %s)", f.Name, sum)
		}
		fmt.Fprintf(&b, " and read %s", strings.Join(names, ", "))
	}
	return b.String()
}
