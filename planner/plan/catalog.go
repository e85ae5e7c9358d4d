package plan

// ReleaseChoice records which release a cluster is planned to and why,
// when a channel or the catalog decided it (format 1.4, optional).
type ReleaseChoice struct {
	// Release and Version name the chosen release.
	Release string `json:"release"`
	Version string `json:"version"`
	// Channel ("stable", "rapid", "firmware") and Selection ("latest",
	// "consistent") are the rollout's, "" when the cluster named its
	// release itself.
	Channel   string `json:"channel,omitempty"`
	Selection string `json:"selection,omitempty"`
	// Site is the cluster's site.
	Site string `json:"site,omitempty"`
	// Why explains the choice in words ("rapid: newest minor 4.6, latest
	// patch 4.6.3; site east has 4.6.2 only → consistent picks 4.6.2").
	Why string `json:"why"`
	// Pending says why the release was not available at the cluster's
	// site when planned; apply does not start the cluster (pending) until
	// a continue finds the release available there. "" when available.
	Pending string `json:"pending,omitempty"`
	// Hop marks an intermediate minor (allow_multi_hop): the cluster was
	// more than one minor behind its channel.
	Hop bool `json:"hop,omitempty"`
}

// Catalog records the catalog entries a plan uses, by value, and where
// the catalog came from (for continue's availability re-check); apply
// never reads the catalog to decide what to do (format 1.4, optional).
type Catalog struct {
	// Source is the catalog's source as written in the configuration
	// ("catalog.json", "file:///…", "https://…"), "" for a catalog
	// declared in HCL only; SourceName is the data file holding its bytes
	// in the configuration snapshot; CAFile the ca_file of an https source.
	Source     string         `json:"source,omitempty"`
	SourceName string         `json:"source_name,omitempty"`
	CAFile     string         `json:"ca_file,omitempty"`
	Entries    []CatalogEntry `json:"entries"`
}

// CatalogEntry is one published release as the plan used it.
type CatalogEntry struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Minor   string `json:"minor"`
	// Sites are where it was available when planned; empty: everywhere.
	Sites      []string           `json:"sites,omitempty"`
	Components []CatalogComponent `json:"components"`
}

// CatalogComponent is one component of a catalog entry.
type CatalogComponent struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
	Image   string `json:"image,omitempty"`
	SHA256  string `json:"sha256,omitempty"`
}

// Entry returns the entry with version v, or nil.
func (c *Catalog) Entry(v string) *CatalogEntry {
	if c == nil {
		return nil
	}
	for i := range c.Entries {
		if c.Entries[i].Version == v {
			return &c.Entries[i]
		}
	}
	return nil
}

// PendingClusters are the clusters planned pending, in run order.
func (p *Plan) PendingClusters() []*Cluster {
	var out []*Cluster
	for c := range p.Run.Clusters() {
		if c.Release != nil && c.Release.Pending != "" {
			out = append(out, c)
		}
	}
	return out
}
