package config

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/config/version"
)

// The catalog block: the releases the organisation publishes, each with
// its components, the minor line it belongs to and the sites where it is
// available. Entries come from release blocks inside the block and from a
// catalog file (source), written in HCL's JSON syntax:
//
//	{"release": {"4.6.3": {"minor": "4.6", "sites": ["east"],
//	  "component": {"runtime": {"kind": "runtime", "version": "4.6.3",
//	    "image": "https://…", "sha256": "…", "match": {"software_id": "os"}}}}}}
//
// The file is read once, by plan, and recorded in the plan as a data file:
// apply loads the configuration from the plan and reads the file from
// there, never from its source.

var catalogSchema = &hcl.BodySchema{
	Attributes: optional("releases", "scheme", "version_pattern", "source", "ca_file"),
	Blocks:     []hcl.BlockHeaderSchema{{Type: kindRelease, LabelNames: []string{"name"}}},
}

// catalogReleaseSchema is a release block inside a catalog: version may
// be left out (the label is the version), minor and sites are its own.
var catalogReleaseSchema = &hcl.BodySchema{
	Attributes: optional("version", "scheme", "version_pattern", "allow_downgrade", "upgrade_from", "minor", "sites"),
	Blocks:     []hcl.BlockHeaderSchema{{Type: "component", LabelNames: []string{"name"}}},
}

// catalogFileSchema is the top level of a catalog file.
var catalogFileSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{{Type: kindRelease, LabelNames: []string{"name"}}},
}

// catalogFetchTimeout bounds reading an https catalog source.
const catalogFetchTimeout = 30 * time.Second

func (s *loadState) decodeCatalog(b *hcl.Block, ctx *hcl.EvalContext) hcl.Diagnostics {
	content, diags := b.Body.Content(catalogSchema)
	a := s.attrs(content.Attributes, ctx, &diags)
	c := &Catalog{DeclRange: b.DefRange}
	f, _ := a.format(version.Format{Scheme: version.Semver}, b.DefRange)
	c.Releases, _ = a.versionList("releases", f, b.DefRange)
	if content.Attributes["releases"] == nil && content.Attributes["source"] == nil && len(content.Blocks) == 0 {
		a.errorf(b.DefRange, "Empty catalog", "A catalog lists releases: set releases = [VERSION, …], declare release blocks inside it, or read them from a file with source = \"catalog.json\".")
	}
	seen := map[string]*Release{}
	add := func(r *Release) {
		if first := seen[r.Version.String()]; first != nil && !r.Version.IsZero() {
			diags = append(diags, errorAt(r.DeclRange, "Duplicate catalog release",
				"The catalog already has release %s at %s; each version is published once.", r.Version, posString(first.DeclRange)))
			return
		}
		seen[r.Version.String()] = r
		c.Entries = append(c.Entries, r)
		if !r.Version.IsZero() {
			c.Releases = append(c.Releases, r.Version)
		}
	}
	for _, rb := range content.Blocks {
		r, d := s.decodeCatalogRelease(rb, ctx)
		diags = append(diags, d...)
		add(r)
	}
	c.CAFile, _ = a.str("ca_file")
	if src, ok := a.str("source"); ok {
		c.Source = src
		rng := a.rng("source", b.DefRange)
		name, body, err := s.readCatalogSource(src, c.CAFile)
		if err != nil {
			a.errorf(rng, "Cannot read the catalog", "Reading the catalog source %q: %v.", src, err)
		} else {
			c.SourceName = name
			rs, d := s.catalogFile(name, body, ctx)
			diags = append(diags, d...)
			for _, r := range rs {
				add(r)
			}
		}
	} else if c.CAFile != "" {
		a.errorf(a.rng("ca_file", b.DefRange), "ca_file without an https source", "ca_file is the CA bundle that verifies an https:// catalog source; this catalog has no source.")
	}
	s.cfg.Catalog = c
	return diags
}

func (s *loadState) decodeCatalogRelease(b *hcl.Block, ctx *hcl.EvalContext) (*Release, hcl.Diagnostics) {
	return s.decodeReleaseBlock(b, ctx, catalogReleaseSchema, func(a *attrs, r *Release) {
		r.InCatalog = true
		r.Minor = r.Version.MinorString()
		if m, ok := a.str("minor"); ok {
			if !r.Version.IsZero() && m != r.Version.MinorString() {
				a.errorf(a.rng("minor", b.DefRange), "Release outside its minor line",
					"Catalog release %q has version %s, whose minor line is %s, not %s.", r.Name, r.Version, r.Version.MinorString(), m)
			}
			r.Minor = m
		}
		if sites, ok := a.strList("sites"); ok {
			r.Sites = sites
			if len(sites) == 0 {
				a.errorf(a.rng("sites", b.DefRange), "Release available nowhere",
					"Catalog release %q lists no site; leave sites out for a release available everywhere.", r.Name)
			}
		}
	})
}

// readCatalogSource returns the name the source's bytes are recorded
// under and the bytes: a path or file:// URL is read like file() (relative
// to the configuration directory, recorded as a data file); an https://
// URL is fetched, verified with caFile when given, and recorded under the
// URL itself. With LoadOptions.FS (apply loading a plan's snapshot) every
// source is read from FS: nothing is fetched again.
func (s *loadState) readCatalogSource(src, caFile string) (string, []byte, error) {
	switch {
	case strings.HasPrefix(src, "https://"):
		if b, ok := s.fn.dataFiles[src]; ok {
			return src, b, nil
		}
		if s.fn.fsys != nil {
			b, err := fs.ReadFile(s.fn.fsys, src)
			if err != nil {
				return "", nil, fmt.Errorf("%s is not in %s", src, s.fn.fsName())
			}
			s.fn.dataFiles[src] = b
			return src, b, nil
		}
		b, err := s.fetchCatalog(src, caFile)
		if err != nil {
			return "", nil, err
		}
		s.fn.dataFiles[src] = b
		return src, b, nil
	case strings.HasPrefix(src, "file://"):
		u, err := url.Parse(src)
		if err != nil {
			return "", nil, err
		}
		if u.Host != "" && u.Host != "localhost" {
			return "", nil, fmt.Errorf("a file:// URL names a local file (file:///path), not one on host %q", u.Host)
		}
		src = u.Path
	case strings.Contains(src, "://"):
		return "", nil, fmt.Errorf("only a path, a file:// URL or an https:// URL can be read")
	}
	text, err := s.fn.readFile(src, false)
	if err != nil {
		return "", nil, err
	}
	return dataName(src), []byte(text), nil
}

// fetchCatalog GETs an https catalog, verifying the server with caFile
// (PEM, relative to the configuration directory) when given, else the
// system roots.
func (s *loadState) fetchCatalog(src, caFile string) ([]byte, error) {
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		full := caFile
		if !filepath.IsAbs(full) {
			full = filepath.Join(s.fn.baseDir, caFile)
		}
		pem, err := readRegular(full)
		if err != nil {
			return nil, fmt.Errorf("reading ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ca_file %s holds no PEM certificate", caFile)
		}
		tlsConf.RootCAs = pool
	}
	client := &http.Client{Timeout: catalogFetchTimeout, Transport: &http.Transport{TLSClientConfig: tlsConf}}
	resp, err := client.Get(src)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the server answered %s", resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 64<<20))
}

// checkChannels: a cluster without a release attribute must be in a
// channel rollout (which selects its release), and a channel rollout needs
// a catalog with release entries to select from.
func (v *validator) checkChannels() hcl.Diagnostics {
	var diags hcl.Diagnostics
	inChannel := map[*Cluster]bool{}
	for _, ro := range v.cfg.Rollouts {
		if ro.Channel == "" && !slices.Contains(v.badChannel, ro) {
			continue
		}
		if ro.Channel != "" && (v.cfg.Catalog == nil || len(v.cfg.Catalog.Entries) == 0 && v.cfg.Catalog.Source == "") {
			diags = append(diags, errorAt(ro.ChannelRange, "Channel without a catalog",
				"Rollout %q follows the %s channel, which selects releases from the catalog, but no catalog publishes any: declare a catalog block with release blocks or a source file.", ro.Name, ro.Channel))
		}
		for _, c := range ro.Clusters() {
			inChannel[c] = true
		}
	}
	for _, c := range v.noRelease {
		if !inChannel[c] {
			diags = append(diags, errorAt(c.DeclRange, "Missing release",
				"Cluster %q needs a target: set release = release.NAME, or put it in a rollout that follows a channel (channel = %q, %q or %q).", c.Name, ChannelStable, ChannelRapid, ChannelFirmware))
		}
	}
	return diags
}

// catalogFile decodes a catalog file's releases.
func (s *loadState) catalogFile(name string, body []byte, ctx *hcl.EvalContext) ([]*Release, hcl.Diagnostics) {
	if diags := checkJSON(name, body); diags.HasErrors() {
		return nil, diags
	}
	file, diags := s.l.parser.ParseJSON(body, name)
	if file == nil || diags.HasErrors() {
		return nil, diags
	}
	fc, d := file.Body.Content(catalogFileSchema)
	diags = append(diags, d...)
	var out []*Release
	for _, rb := range fc.Blocks {
		r, d := s.decodeCatalogRelease(rb, ctx)
		diags = append(diags, d...)
		out = append(out, r)
	}
	return out, diags
}

// ReadCatalog reads a catalog source afresh, outside any configuration:
// a path (relative to dir), a file:// URL or an https:// URL verified
// with caFile. Continue uses it to check again whether a pending
// cluster's release is available at its site; what to install stays what
// the plan recorded.
func ReadCatalog(src, caFile, dir string) ([]*Release, hcl.Diagnostics) {
	l := NewLoader(LoadOptions{})
	s := newLoadState(l, &Config{Path: dir, Dir: dir})
	name, body, err := s.readCatalogSource(src, caFile)
	if err != nil {
		return nil, hcl.Diagnostics{plainError("Cannot read the catalog", "Reading the catalog source %q: %v.", src, err)}
	}
	return s.catalogFile(name, body, &hcl.EvalContext{})
}

// SimReleaseLabel is the cluster label naming the catalog release a
// simulated cluster runs (rackform sim -config, test fakes) when a channel
// chooses its target.
const SimReleaseLabel = "sim_release"

// SimStartRelease is the catalog release a simulated cluster without a
// release attribute runs: the one its sim_release label names, else the
// catalog's oldest; nil without catalog entries.
func SimStartRelease(cfg *Config, c *Cluster) *Release {
	if cfg.Catalog == nil || len(cfg.Catalog.Entries) == 0 {
		return nil
	}
	var oldest *Release
	for _, e := range cfg.Catalog.Entries {
		if e.Version.String() == c.Labels[SimReleaseLabel] || e.Name == c.Labels[SimReleaseLabel] {
			return e
		}
		if e.Version.IsZero() {
			continue
		}
		if oldest == nil {
			oldest = e
		} else if o, err := version.Compare(e.Version, oldest.Version); err == nil && o < 0 {
			oldest = e
		}
	}
	return oldest
}
