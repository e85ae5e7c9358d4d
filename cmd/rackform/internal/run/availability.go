package run

import (
	"fmt"
	"strings"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
)

// AvailableNow is continue's availability check for the clusters the plan
// holds pending (their release was not at their site when planned): it
// reads the plan's catalog source afresh and names, by cluster ID, those
// whose release is now listed at their site with the very components the
// plan recorded (what to install never changes after review: a release
// whose images changed needs a new plan). A path source is relative to
// the configuration directory the plan was made in (plan.Config.Dir).
// notes say, one line each, why a pending cluster stays pending.
func AvailableNow(p *plan.Plan) (available map[string]string, notes []string) {
	pending := p.PendingClusters()
	if len(pending) == 0 {
		return nil, nil
	}
	cat := p.Catalog
	if cat == nil || cat.Source == "" {
		for _, c := range pending {
			notes = append(notes, fmt.Sprintf("%s stays pending: its catalog is declared in the configuration, which the plan fixes; plan again once release %s is available at %s", c.ID, c.Release.Version, siteOf(c.Release)))
		}
		return nil, notes
	}
	dir := p.Config.Dir
	if dir == "" {
		dir = "."
	}
	// ReadCatalog resolves a relative source and ca_file against dir.
	entries, diags := config.ReadCatalog(cat.Source, cat.CAFile, dir)
	if diags.HasErrors() {
		for _, c := range pending {
			notes = append(notes, fmt.Sprintf("%s stays pending: %s", c.ID, strings.TrimSuffix(diags[0].Detail, ".")))
		}
		return nil, notes
	}
	available = map[string]string{}
	for _, c := range pending {
		want := cat.Entry(c.Release.Version)
		var got *config.Release
		for _, e := range entries {
			if e.Version.String() == c.Release.Version {
				got = e
			}
		}
		differs := ""
		if want != nil && got != nil {
			differs = sameComponentsWhy(want, got)
		}
		switch {
		case got == nil:
			notes = append(notes, fmt.Sprintf("%s stays pending: the catalog %s no longer lists release %s; plan again", c.ID, cat.Source, c.Release.Version))
		case differs != "":
			notes = append(notes, fmt.Sprintf("%s stays pending: release %s in the catalog %s now differs from what was planned (%s); plan again", c.ID, c.Release.Version, cat.Source, differs))
		case !got.AvailableAt(c.Release.Site):
			notes = append(notes, fmt.Sprintf("%s stays pending: the catalog %s still lists release %s at %s only, not at %s", c.ID, cat.Source, c.Release.Version, strings.Join(got.Sites, ", "), siteOf(c.Release)))
		default:
			available[c.ID] = fmt.Sprintf("release %s is now available at %s (catalog %s read again by continue)", c.Release.Version, siteOf(c.Release), cat.Source)
		}
	}
	return available, notes
}

func siteOf(r *plan.ReleaseChoice) string {
	if r.Site == "" {
		return "a cluster without a site"
	}
	return "site " + r.Site
}

// sameComponentsWhy says how a release read again differs from the
// components the plan recorded (names, versions, images and digests), ""
// when it does not.
func sameComponentsWhy(want *plan.CatalogEntry, got *config.Release) string {
	if len(want.Components) != len(got.Components) {
		return fmt.Sprintf("%d components instead of %d", len(got.Components), len(want.Components))
	}
	for i, w := range want.Components {
		g := got.Components[i]
		if w.Name != g.Name || w.Version != g.Version.String() || w.Image != g.Image || w.SHA256 != g.SHA256 {
			return fmt.Sprintf("component %q", w.Name)
		}
	}
	return ""
}
