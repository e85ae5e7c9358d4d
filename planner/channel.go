package planner

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/internal/words"
	"github.com/rackform/rackform/planner/plan"
)

// Channels (the Fleet auto-upgrade profiles): a rollout that names a
// channel instead of a release gets each cluster's release from the
// catalog. The channel picks the minor line (rapid: the newest minor;
// stable: the one before it; firmware: the minor the cluster runs), the
// image selection picks the patch (latest: the newest of the line at the
// cluster's site; consistent: the newest of the line at every site of the
// run's clusters on that line, fixed when the run is planned). A cluster
// whose release is not available at its site is planned pending: apply
// leaves it until a continue finds the release there.
//
// Resolution runs twice: before observing (the BMCs are asked how they
// would take the selected images) and after, when each cluster's runtime
// version is known (the firmware channel's minor, the no-minor-skip rule
// and multi-hop). Clusters whose release changed are observed again.

// choice is how a cluster's release was chosen.
type choice struct {
	release *config.Release
	// why explains the choice in words, for the plan text.
	why string
	// pending says why the release is not available at the cluster's
	// site; "" when it is.
	pending string
	hop     bool
	// blocked: the choice broke a version rule (reported): the cluster's
	// servers are not diffed.
	blocked bool
}

// channelResolver chooses each cluster's release: by the rollout's
// channel from the catalog, or the cluster's own release checked against
// the catalog's sites.
type channelResolver struct {
	cfg     *config.Config
	rollout *config.Rollout
	report  *reporter
	// choices are the clusters' releases chosen by a channel, or checked
	// against the catalog's sites.
	choices map[*config.Cluster]*choice
}

// releaseOf is the release cluster c is planned to: the channel's choice,
// else its release attribute.
func (cr *channelResolver) releaseOf(c *config.Cluster) *config.Release {
	if ch := cr.choices[c]; ch != nil {
		return ch.release
	}
	return c.Release
}

// minorLine is one minor line of the catalog, newest release first.
type minorLine struct {
	minor    string
	releases []*config.Release
}

// catalogLines groups the catalog's entries by minor line, oldest line
// first, each line newest release first.
func catalogLines(cat *config.Catalog) []minorLine {
	by := map[string][]*config.Release{}
	var order []string
	for _, e := range cat.Entries {
		if e.Version.IsZero() || preview(e) {
			continue // channels take generally available releases only
		}
		if _, ok := by[e.Minor]; !ok {
			order = append(order, e.Minor)
		}
		by[e.Minor] = append(by[e.Minor], e)
	}
	newer := func(a, b *config.Release) int {
		c, err := version.Compare(a.Version, b.Version)
		if err != nil {
			return strings.Compare(a.Version.String(), b.Version.String())
		}
		return c
	}
	var lines []minorLine
	for _, m := range order {
		rs := by[m]
		slices.SortStableFunc(rs, func(a, b *config.Release) int { return newer(b, a) })
		lines = append(lines, minorLine{m, rs})
	}
	slices.SortStableFunc(lines, func(a, b minorLine) int { return newer(a.releases[0], b.releases[0]) })
	return lines
}

// preview reports whether a catalog release is a pre-release (a semantic
// version with a pre-release part, "4.7.0-rc.1"): channels never pick one.
func preview(r *config.Release) bool {
	if r.Version.Scheme() != version.Semver {
		return false
	}
	v, _, _ := strings.Cut(r.Version.String(), "+")
	return strings.Contains(v, "-")
}

func lineOf(lines []minorLine, minor string) *minorLine {
	for i := range lines {
		if lines[i].minor == minor {
			return &lines[i]
		}
	}
	return nil
}

// resolveReleases chooses every rollout cluster's release. current holds
// each cluster's runtime version when known (after observing).
func (cr *channelResolver) resolveReleases(current map[*config.Cluster]version.Version) {
	cr.choices = map[*config.Cluster]*choice{}
	cat := cr.cfg.Catalog
	if cr.rollout.Channel == "" {
		cr.checkAvailability()
		return
	}
	if cat == nil || len(cat.Entries) == 0 {
		return // config reported it
	}
	lines := catalogLines(cat)
	if len(lines) == 0 {
		cr.report.errorf(rangePtr(cr.rollout.ChannelRange), "No release for the channel",
			"The catalog publishes no generally available release (pre-releases are never picked by a channel).")
		return
	}
	newest := lines[len(lines)-1]
	type want struct {
		c    *config.Cluster
		line *minorLine
		why  string
		hop  bool
	}
	var wants []want
	for _, c := range cr.rollout.Clusters() {
		var line *minorLine
		var why string
		switch cr.rollout.Channel {
		case config.ChannelRapid:
			line = &newest
			why = fmt.Sprintf("rapid: newest minor %s, latest patch %s", newest.minor, newest.releases[0].Version)
		case config.ChannelStable:
			if len(lines) < 2 {
				cr.report.errorf(rangePtr(cr.rollout.ChannelRange), "No stable minor",
					"The stable channel is the latest patch of the minor before the newest, but the catalog publishes one minor line (%s) only.", newest.minor)
				return
			}
			line = &lines[len(lines)-2]
			why = fmt.Sprintf("stable: newest minor %s, so minor %s, latest patch %s", newest.minor, line.minor, line.releases[0].Version)
		case config.ChannelFirmware:
			cur, ok := current[c]
			if ok {
				line = lineOf(lines, cur.MinorString())
			}
			switch {
			case !ok:
				line = &newest
				why = fmt.Sprintf("firmware: runtime version not known yet, minor %s, latest patch %s, firmware only", newest.minor, newest.releases[0].Version)
			case line == nil:
				cr.report.errorf(rangePtr(c.DeclRange), "Minor not in the catalog",
					"Cluster %q runs %s, but the catalog publishes no release of minor %s, so the firmware channel has nothing for it.", c.Name, cur, cur.MinorString())
				cr.choices[c] = &choice{release: newest.releases[0], blocked: true}
				continue
			default:
				why = fmt.Sprintf("firmware: cluster runs %s, minor %s, latest patch %s, firmware only", cur, line.minor, line.releases[0].Version)
			}
		}
		hop := false
		if cur, ok := current[c]; ok && cr.rollout.Channel != config.ChannelFirmware {
			top := line.releases[0].Version
			order, err := version.Compare(cur, top)
			switch {
			case err != nil:
			case order > 0:
				cr.report.errorf(rangePtr(cr.rollout.ChannelRange), "Cluster ahead of its channel",
					"Cluster %q runs %s, newer than %s, which the %s channel offers; a channel never downgrades. Put the cluster in a rollout that follows a newer channel.", c.Name, cur, top, cr.rollout.Channel)
				cr.choices[c] = &choice{release: line.releases[0], blocked: true}
				continue
			default:
				if skipped := version.SkippedMinors(cur, top, cat.Releases); len(skipped) > 0 {
					mid := lineOf(lines, skipped[0])
					if !cr.rollout.AllowMultiHop || mid == nil {
						name := skipped[0]
						if mid != nil {
							name = mid.releases[0].Version.String()
						}
						cr.report.errorf(rangePtr(cr.rollout.ChannelRange), "Minor version skipped",
							"Cluster %q runs %s, more than one minor behind the %s channel (%s): a run moves the runtime at most one minor version, and a channel never skips one. Upgrade it to release %s first, or set allow_multi_hop = true on rollout %q to plan that hop now.",
							c.Name, cur, cr.rollout.Channel, top, name, cr.rollout.Name)
						cr.choices[c] = &choice{release: line.releases[0], blocked: true}
						continue
					}
					why += fmt.Sprintf("; cluster runs %s, %d minors behind: this run hops to minor %s (allow_multi_hop), latest patch %s; the next plan moves it on",
						cur, len(skipped)+1, mid.minor, mid.releases[0].Version)
					line, hop = mid, true
				}
			}
		}
		wants = append(wants, want{c, line, why, hop})
	}

	// Selection within each cluster's line.
	for _, w := range wants {
		ch := &choice{hop: w.hop}
		site := w.c.Site
		switch cr.rollout.ImageSelection {
		case config.SelectConsistent:
			// Every site of the run's clusters on this line that has any of
			// its releases; a site with none waits (pending) for the pick.
			var sites []string
			for _, o := range wants {
				if o.line.minor == w.line.minor && !slices.Contains(sites, o.c.Site) && anyAt(o.line, o.c.Site) {
					sites = append(sites, o.c.Site)
				}
			}
			sort.Strings(sites)
			pick, all := consistentPick(w.line, sites)
			ch.release = pick
			switch {
			case all && len(sites) > 0:
				ch.why = fmt.Sprintf("%s; %s %s → consistent picks %s", w.why, siteList(sites), commonPhrase(w.line, pick, sites), pick.Version)
			default:
				ch.why = fmt.Sprintf("%s; no release of minor %s is at every site (%s) → consistent picks %s, at the most of them", w.why, w.line.minor, strings.Join(sites, ", "), pick.Version)
			}
		default:
			ch.release = w.line.releases[0]
			for _, r := range w.line.releases {
				if r.AvailableAt(site) {
					ch.release = r
					break
				}
			}
			switch {
			case !ch.release.AvailableAt(site):
				ch.why = fmt.Sprintf("%s; %s has no release of minor %s yet → latest waits for %s", w.why, siteName(site), w.line.minor, ch.release.Version)
			case ch.release == w.line.releases[0]:
				ch.why = fmt.Sprintf("%s; %s has it → latest picks %s", w.why, siteName(site), ch.release.Version)
			default:
				ch.why = fmt.Sprintf("%s; %s has %s at newest → latest picks %s", w.why, siteName(site), ch.release.Version, ch.release.Version)
			}
		}
		if !ch.release.AvailableAt(site) {
			ch.pending = fmt.Sprintf("release %s is not yet available at %s (published at %s)", ch.release.Version, siteName(site), strings.Join(ch.release.Sites, ", "))
			ch.why += "; pending: " + ch.pending
		}
		cr.choices[w.c] = ch
	}
}

// checkAvailability: without a channel, a cluster's release is still
// checked against the catalog's sites when the catalog publishes it.
func (cr *channelResolver) checkAvailability() {
	for _, c := range cr.rollout.Clusters() {
		if c.Release == nil {
			continue
		}
		e := cr.cfg.Catalog.Entry(c.Release.Version)
		if e == nil || e.AvailableAt(c.Site) {
			continue
		}
		ch := &choice{release: c.Release}
		ch.pending = fmt.Sprintf("release %s is not yet available at %s (published at %s)", e.Version, siteName(c.Site), strings.Join(e.Sites, ", "))
		ch.why = fmt.Sprintf("release %s (named by the cluster); pending: %s", c.Release.Version, ch.pending)
		cr.choices[c] = ch
	}
}

// anyAt reports whether the line has a release at site.
func anyAt(l *minorLine, site string) bool {
	for _, r := range l.releases {
		if r.AvailableAt(site) {
			return true
		}
	}
	return false
}

// consistentPick is the newest release of the line available at every
// site (all = true); when none is, the newest available at the most.
func consistentPick(l *minorLine, sites []string) (*config.Release, bool) {
	best, bestN := l.releases[0], -1
	for _, r := range l.releases {
		n := 0
		for _, s := range sites {
			if r.AvailableAt(s) {
				n++
			}
		}
		if n == len(sites) {
			return r, true
		}
		if n > bestN {
			best, bestN = r, n
		}
	}
	return best, false
}

// commonPhrase says what the sites have: "have 4.6.3" when it is the
// newest, else "have 4.6.2 in common" or, for one site, "has 4.6.2 only".
func commonPhrase(l *minorLine, pick *config.Release, sites []string) string {
	if pick == l.releases[0] {
		return words.Plural(len(sites), "has ", "have ") + pick.Version.String()
	}
	if len(sites) == 1 {
		return "has " + pick.Version.String() + " at newest"
	}
	// Name the sites that lack anything newer, as in "site east has 4.6.2 only".
	var short []string
	for _, s := range sites {
		newer := false
		for _, r := range l.releases {
			if r == pick {
				break
			}
			if r.AvailableAt(s) {
				newer = true
			}
		}
		if !newer {
			short = append(short, s)
		}
	}
	return fmt.Sprintf("have %s in common (%s %s only)", pick.Version, siteList(short), words.Plural(len(short), "has ", "have ")+pick.Version.String())
}

func siteName(s string) string {
	if s == "" {
		return "a cluster without a site"
	}
	return "site " + s
}

func siteList(sites []string) string {
	if len(sites) == 1 {
		return siteName(sites[0])
	}
	return "sites " + strings.Join(sites, ", ")
}

// currentRuntime is each channel cluster's runtime version as observed:
// the oldest version its servers report for the chosen release's runtime
// component (the cluster is as old as its oldest member).
func (p *planning) currentRuntime() map[*config.Cluster]version.Version {
	out := map[*config.Cluster]version.Version{}
	for _, s := range p.inScope {
		rel := p.channel.releaseOf(s.Cluster)
		if rel == nil {
			continue
		}
		rt := rel.Runtime()
		o := p.observed[address(s)]
		if rt == nil || o == nil {
			continue
		}
		for _, comp := range o.Components {
			if !providerMatch(rt.Match).Selects(comp) {
				continue
			}
			v, err := rt.Version.Format().Parse(comp.Version)
			if err != nil {
				continue
			}
			if cur, ok := out[s.Cluster]; !ok {
				out[s.Cluster] = v
			} else if c, err := version.Compare(v, cur); err == nil && c < 0 {
				out[s.Cluster] = v
			}
		}
	}
	return out
}

// resolveAfterObserve re-resolves a channel rollout with the observed
// runtime versions and observes again the servers of clusters whose
// release changed, so the BMCs answer for the images they will get.
func (p *planning) resolveAfterObserve(ctx context.Context) {
	if p.rollout.Channel == "" {
		return
	}
	before := map[*config.Cluster]*config.Release{}
	for c, ch := range p.channel.choices {
		before[c] = ch.release
	}
	p.channel.resolveReleases(p.currentRuntime())
	var again []*config.Server
	for _, s := range p.inScope {
		if ch := p.channel.choices[s.Cluster]; ch != nil && before[s.Cluster] != ch.release {
			again = append(again, s)
		}
	}
	if len(again) > 0 {
		p.observeServers(ctx, again)
	}
}

// planChoice is the plan's record of a cluster's choice, nil when neither
// a channel nor the catalog decided anything.
func (p *planning) planChoice(c *config.Cluster) *plan.ReleaseChoice {
	ch := p.channel.choices[c]
	if ch == nil || ch.release == nil {
		return nil
	}
	rc := &plan.ReleaseChoice{
		Release: ch.release.Name, Version: ch.release.Version.String(),
		Channel: p.rollout.Channel, Selection: p.rollout.ImageSelection, Site: c.Site,
		Why: ch.why, Pending: ch.pending, Hop: ch.hop,
	}
	if rc.Pending != "" && !p.upgrades(c) {
		// Nothing to install: waiting for the release would hold the run
		// for nothing.
		rc.Pending = ""
		rc.Why += " (its servers are already at it: nothing waits)"
	}
	return rc
}

// upgrades reports whether any planned server of c is upgraded.
func (p *planning) upgrades(c *config.Cluster) bool {
	for _, s := range p.inScope {
		if ps := p.servers[address(s)]; s.Cluster == c && ps != nil && ps.Action == plan.ActionUpgrade {
			return true
		}
	}
	return false
}

// planCatalog records the catalog entries the plan uses (the chosen
// releases), by value: apply never reads the catalog for what to do.
func (cr *channelResolver) planCatalog() *plan.Catalog {
	cat := cr.cfg.Catalog
	if cat == nil || len(cr.choices) == 0 {
		return nil
	}
	out := &plan.Catalog{Source: cat.Source, SourceName: cat.SourceName, CAFile: cat.CAFile}
	seen := map[*config.Release]bool{}
	for _, c := range cr.rollout.Clusters() {
		ch := cr.choices[c]
		if ch == nil || ch.release == nil || seen[ch.release] {
			continue
		}
		seen[ch.release] = true
		r := ch.release
		e := plan.CatalogEntry{Name: r.Name, Version: r.Version.String(), Minor: r.Minor, Sites: r.Sites}
		if e.Minor == "" {
			e.Minor = r.Version.MinorString()
		}
		for _, comp := range r.Components {
			e.Components = append(e.Components, plan.CatalogComponent{Name: comp.Name, Kind: comp.Kind, Version: comp.Version.String(), Image: comp.Image, SHA256: comp.SHA256})
		}
		out.Entries = append(out.Entries, e)
	}
	return out
}
