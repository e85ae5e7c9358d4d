package config

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/agext/levenshtein"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// Block kinds that can be referenced as KIND.NAME, plus var and local.
const (
	kindVar               = "var"
	kindLocal             = "local"
	kindProvider          = "provider"
	kindRelease           = "release"
	kindCatalog           = "catalog"
	kindStrategy          = "strategy"
	kindMaintenanceWindow = "maintenance_window"
	kindCluster           = "cluster"
	kindRollout           = "rollout"
)

// referenceable are the traversal roots that name declarations; other
// roots (each, count, dynamic iterators) are scoped and left to HCL.
var referenceable = map[string]bool{
	kindVar: true, kindLocal: true, kindProvider: true, kindRelease: true,
	kindStrategy: true, kindMaintenanceWindow: true, kindCluster: true,
}

var rootSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "variable", LabelNames: []string{"name"}},
	{Type: "locals"},
	{Type: kindProvider, LabelNames: []string{"name"}},
	{Type: kindRelease, LabelNames: []string{"name"}},
	{Type: kindCatalog},
	{Type: kindStrategy, LabelNames: []string{"name"}},
	{Type: kindMaintenanceWindow, LabelNames: []string{"name"}},
	{Type: kindCluster, LabelNames: []string{"name"}},
	{Type: kindRollout, LabelNames: []string{"name"}},
	{Type: "rackform"},
}}

// decl is one node of the dependency graph: a local, or a block that can
// be referenced or references others.
type decl struct {
	kind, name string
	block      *hcl.Block     // nil for locals
	expr       hcl.Expression // locals only
	rng        hcl.Range      // declaration range
	deps       []*decl
	index      int // declaration order, for deterministic sorting
}

func (d *decl) addr() string {
	if d.kind == kindCatalog {
		return "catalog"
	}
	return d.kind + "." + d.name
}

// loadState is the state of one Load call.
type loadState struct {
	l *Loader
	// varsObj is the variables as one object, made once they are all known.
	varsObj cty.Value
	// filters are the indexes answering inventory filters (filter.go).
	filters filterIndexes
	cfg     *Config
	getenv  func(string) string
	fns     map[string]function.Function
	// fn is what the functions see and record (functions.go), secrets
	// the sensitive values to scrub (secrets.go), origins where servers
	// came from (origin.go): each shared with the parts that need it.
	fn      *functionEnv
	secrets *secretSet
	origins *origins
	// stageRacks are the ranges of each strategy stage's racks elements,
	// for diagnostics. (A side table keeps the model's structs
	// comparable.)
	stageRacks map[*StrategyStage][]hcl.Range

	vars   map[string]cty.Value // marked when sensitive
	locals map[string]cty.Value
	// objects are the values of referenceable blocks: kind → name → value.
	objects map[string]map[string]cty.Value

	decls map[string]*decl
	order []*decl

	// expander expands racks and servers (cluster.go).
	expander *expander
	// partial are the clusters some of whose racks or servers are missing
	// for a for_each or count that could not be evaluated
	// (expander.unexpanded): rules about their whole would only echo the
	// error.
	partial map[*Cluster]bool

	providers map[string]*Provider
	// defaultProvider are clusters without a provider attribute; they get
	// the only provider, or the one named "redfish", after evaluation.
	defaultProvider []*Cluster
	releases        map[string]*Release
	// noRelease are the clusters without a release attribute.
	noRelease []*Cluster
	// anyChannel: some rollout block sets channel.
	anyChannel bool
	// badChannel are rollouts whose channel was invalid (reported).
	badChannel []*Rollout
	strategies map[string]*Strategy
	windows    map[string]*MaintenanceWindow
	clusters   map[string]*Cluster
}

func newLoadState(l *Loader, cfg *Config) *loadState {
	s := &loadState{
		l: l, cfg: cfg, getenv: l.opts.Getenv,
		secrets:    &secretSet{values: map[string]bool{}},
		origins:    &origins{generated: map[*Server]instance{}},
		partial:    map[*Cluster]bool{},
		stageRacks: map[*StrategyStage][]hcl.Range{},
		vars:       map[string]cty.Value{},
		locals:     map[string]cty.Value{},
		objects:    map[string]map[string]cty.Value{},
		decls:      map[string]*decl{},
		providers:  map[string]*Provider{},
		releases:   map[string]*Release{},
		strategies: map[string]*Strategy{},
		windows:    map[string]*MaintenanceWindow{},
		clusters:   map[string]*Cluster{},
	}
	s.fn = &functionEnv{
		fsys: l.opts.FS, fsLabel: l.opts.FSName, baseDir: cfg.Dir, getenv: l.opts.Getenv,
		secrets: s.secrets, origins: s.origins, sensitiveReads: &cfg.SensitiveDataReads,
		envRefs:   map[string]bool{},
		fileTexts: map[string]string{},
		dataFiles: map[string][]byte{},
	}
	s.fns = s.fn.functions()
	s.expander = &expander{maxInstances: l.maxInstances, filters: &s.filters, origins: s.origins}
	cfg.DefaultStrategy = NewDefaultStrategy()
	return s
}

func (s *loadState) load(files []*hcl.File) hcl.Diagnostics {
	var diags hcl.Diagnostics
	var varBlocks, blocks, settings []*hcl.Block
	var localsAttrs []*hcl.Attribute
	for _, f := range files {
		content, d := f.Body.Content(rootSchema)
		diags = append(diags, d...)
		for _, b := range content.Blocks {
			switch b.Type {
			case "variable":
				varBlocks = append(varBlocks, b)
			case "rackform":
				settings = append(settings, b)
			case "locals":
				attrs, d := b.Body.JustAttributes()
				diags = append(diags, d...)
				localsAttrs = append(localsAttrs, sortedAttrs(attrs)...)
			default:
				blocks = append(blocks, b)
			}
		}
	}

	// A cluster may leave out release only when a rollout follows a
	// channel; without any, the missing release is reported where the
	// cluster is decoded (checkChannels otherwise).
	for _, b := range blocks {
		if b.Type == kindRollout {
			if c, _, _ := b.Body.PartialContent(&hcl.BodySchema{Attributes: optional("channel")}); c != nil && c.Attributes["channel"] != nil {
				s.anyChannel = true
			}
		}
	}

	be, d := decodeSettings(settings)
	diags = append(diags, d...)
	s.cfg.Backend = be

	// Variable errors do not stop loading: a failed variable evaluates as
	// unknown, and whatever uses it is skipped quietly, so the user still
	// sees every other error.
	diags = append(diags, s.loadVariables(varBlocks)...)
	var refDiags hcl.Diagnostics

	// Declarations, with duplicates reported against the first one.
	for _, a := range localsAttrs {
		refDiags = append(refDiags, s.declare(&decl{kind: kindLocal, name: a.Name, expr: a.Expr, rng: a.Range})...)
	}
	for _, b := range blocks {
		d := &decl{kind: b.Type, block: b, rng: b.DefRange}
		if len(b.Labels) > 0 {
			d.name = b.Labels[0]
			if !validObjectName(d.name) {
				refDiags = append(refDiags, errorAt(b.LabelRanges[0], "Invalid name", "%q is not a valid %s name: a name starts with a letter or digit and contains only letters, digits, '-', '_', '.' and ':'.", d.name, b.Type))
			}
		}
		refDiags = append(refDiags, s.declare(d)...)
	}

	// Dependencies: every KIND.NAME traversal in the declaration.
	for _, d := range s.order {
		for _, tr := range declTraversals(d) {
			root := tr.RootName()
			if !referenceable[root] {
				continue
			}
			name, ok := traversalName(tr)
			if !ok {
				refDiags = append(refDiags, errorAt(tr.SourceRange(), "Invalid reference", "A reference to a %s must be followed by its name, as in %s.NAME.", root, root))
				continue
			}
			if root == kindVar {
				if _, ok := s.vars[name]; !ok {
					refDiags = append(refDiags, s.undeclared(tr, root, name))
				}
				continue
			}
			target := s.decls[root+"."+name]
			if target == nil {
				refDiags = append(refDiags, s.undeclared(tr, root, name))
				continue
			}
			d.deps = append(d.deps, target)
		}
	}
	diags = append(diags, refDiags...)

	sorted, d := topoSort(s.order)
	diags = append(diags, d...)
	if d.HasErrors() {
		// Evaluating around a cycle would only produce confusing echoes.
		return diags
	}
	// Evaluate even after reference errors, so the user sees every other
	// problem too; HCL's own complaints about the broken references
	// ("Unsupported attribute") repeat what was reported, so they are
	// dropped.
	var broken []hcl.Range
	for _, rd := range refDiags {
		if rd.Subject != nil {
			broken = append(broken, *rd.Subject)
		}
	}
	for _, n := range sorted {
		for _, ed := range s.evaluate(n) {
			if ed.Subject != nil && overlapsAny(*ed.Subject, broken) {
				continue
			}
			diags = append(diags, ed)
		}
	}
	s.assignDefaultProviders()
	s.collect()
	for name, set := range s.fn.envRefs {
		s.cfg.EnvReferences = append(s.cfg.EnvReferences, name)
		if !set {
			s.cfg.MissingEnv = append(s.cfg.MissingEnv, name)
		}
	}
	sort.Strings(s.cfg.EnvReferences)
	sort.Strings(s.cfg.MissingEnv)
	if s.expander.tooMany {
		// The model is truncated; checking it would bury the one error
		// that matters under consequences of the truncation.
		return diags
	}
	v := &validator{
		cfg: s.cfg, origins: s.origins, partial: s.partial, stageRacks: s.stageRacks,
		noRelease: s.noRelease, badChannel: s.badChannel,
	}
	diags = append(diags, v.validate()...)
	return diags
}

func overlapsAny(r hcl.Range, rs []hcl.Range) bool {
	return slices.ContainsFunc(rs, func(o hcl.Range) bool {
		return r.Filename == o.Filename && r.Start.Byte < o.End.Byte && o.Start.Byte < r.End.Byte
	})
}

func (s *loadState) declare(d *decl) hcl.Diagnostics {
	key := d.addr()
	if first, ok := s.decls[key]; ok {
		what := "A " + kindNoun(d.kind) + " named " + quote(d.name)
		switch d.kind {
		case kindLocal:
			what = "A local value named " + quote(d.name)
		case kindCatalog:
			return hcl.Diagnostics{errorAt(d.rng, "Duplicate catalog block", "Only one catalog block is allowed; the first is at %s.", posString(first.rng))}
		}
		return hcl.Diagnostics{errorAt(d.rng, "Duplicate "+kindNoun(d.kind)+" name", "%s was already declared at %s. Names must be unique within their kind.", what, posString(first.rng))}
	}
	d.index = len(s.order)
	s.decls[key] = d
	s.order = append(s.order, d)
	return nil
}

func kindNoun(kind string) string {
	switch kind {
	case kindLocal:
		return "local value"
	case kindMaintenanceWindow:
		return "maintenance window"
	}
	return kind
}

// undeclared reports a reference to nothing, suggesting a close name.
func (s *loadState) undeclared(tr hcl.Traversal, kind, name string) *hcl.Diagnostic {
	var candidates []string
	if kind == kindVar {
		for n := range s.vars {
			candidates = append(candidates, n)
		}
	} else {
		for _, d := range s.order {
			if d.kind == kind {
				candidates = append(candidates, d.name)
			}
		}
	}
	detail := fmt.Sprintf("There is no %s named %q in the configuration.", kindNoun(kind), name)
	if kind == kindVar {
		detail = fmt.Sprintf("There is no variable named %q: declare it with a variable block.", name)
	}
	if sugg := didYouMean(name, candidates); sugg != "" {
		detail += fmt.Sprintf(" Did you mean %s?", refSyntax(kind, sugg))
	}
	summary := "Reference to undeclared " + kindNoun(kind)
	if kind == kindVar {
		summary = "Reference to undeclared input variable"
	}
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: tr.SourceRange().Ptr()}
}

// refSyntax spells a reference: kind.name, or kind["name"] when name is
// not an identifier.
func refSyntax(kind, name string) string {
	if hclsyntax.ValidIdentifier(name) {
		return kind + "." + name
	}
	return fmt.Sprintf("%s[%q]", kind, name)
}

// didYouMean returns the candidate closest to name, if close enough to be
// a likely typo.
func didYouMean(name string, candidates []string) string {
	sort.Strings(candidates)
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := levenshtein.Distance(name, c, nil); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// traversalName returns NAME of KIND.NAME.
func traversalName(tr hcl.Traversal) (string, bool) {
	if len(tr) < 2 {
		return "", false
	}
	switch step := tr[1].(type) {
	case hcl.TraverseAttr:
		return step.Name, true
	case hcl.TraverseIndex:
		if step.Key.Type() == cty.String && step.Key.IsKnown() && !step.Key.IsNull() {
			return step.Key.AsString(), true
		}
	}
	return "", false
}

// declTraversals returns every variable traversal in a declaration,
// including nested blocks.
func declTraversals(d *decl) []hcl.Traversal {
	if d.expr != nil {
		return d.expr.Variables()
	}
	var out []hcl.Traversal
	var walk func(b *hclsyntax.Body)
	walk = func(b *hclsyntax.Body) {
		for _, a := range sortedSyntaxAttrs(b.Attributes) {
			out = append(out, a.Expr.Variables()...)
		}
		for _, blk := range b.Blocks {
			walk(blk.Body)
		}
	}
	if body, ok := d.block.Body.(*hclsyntax.Body); ok {
		walk(body)
	}
	return out
}

func sortedSyntaxAttrs(attrs hclsyntax.Attributes) []*hclsyntax.Attribute {
	return slices.SortedFunc(maps.Values(attrs), func(a, b *hclsyntax.Attribute) int { return a.SrcRange.Start.Byte - b.SrcRange.Start.Byte })
}

// sortedAttrs returns attributes in source order (hcl.Attributes is a map).
func sortedAttrs(attrs hcl.Attributes) []*hcl.Attribute {
	return slices.SortedFunc(maps.Values(attrs), func(a, b *hcl.Attribute) int {
		return cmp.Or(strings.Compare(a.Range.Filename, b.Range.Filename), a.Range.Start.Byte-b.Range.Start.Byte)
	})
}

// topoSort orders declarations so each comes after what it references,
// keeping declaration order where there is a choice. A cycle is an error
// naming every declaration on it.
func topoSort(nodes []*decl) ([]*decl, hcl.Diagnostics) {
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[*decl]int{}
	var out []*decl
	var stack []*decl
	var diags hcl.Diagnostics
	reported := map[string]bool{}
	var visit func(n *decl)
	visit = func(n *decl) {
		switch state[n] {
		case done:
			return
		case visiting:
			i := len(stack) - 1
			for i >= 0 && stack[i] != n {
				i--
			}
			cycle := append(append([]*decl(nil), stack[i:]...), n)
			names := make([]string, len(cycle))
			for j, c := range cycle {
				names[j] = c.addr()
			}
			// Report each cycle once, whichever node found it.
			members := append([]string(nil), names[:len(names)-1]...)
			sort.Strings(members)
			key := strings.Join(members, ",")
			if !reported[key] {
				reported[key] = true
				diags = append(diags, errorAt(cycle[0].rng, "Reference cycle", "These declarations refer to each other, so none can be evaluated first: %s.", strings.Join(names, " → ")))
			}
			return
		}
		state[n] = visiting
		stack = append(stack, n)
		deps := append([]*decl(nil), n.deps...)
		sort.SliceStable(deps, func(i, j int) bool { return deps[i].index < deps[j].index })
		for _, d := range deps {
			visit(d)
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		out = append(out, n)
	}
	for _, n := range nodes {
		visit(n)
	}
	return out, diags
}

// evalContext returns a fresh context holding every value evaluated so far.
func (s *loadState) evalContext() *hcl.EvalContext {
	vars := map[string]cty.Value{
		kindVar:   cty.ObjectVal(s.vars),
		kindLocal: cty.ObjectVal(s.locals),
	}
	for _, k := range []string{kindProvider, kindRelease, kindStrategy, kindMaintenanceWindow, kindCluster} {
		vars[k] = cty.ObjectVal(s.objects[k])
	}
	return &hcl.EvalContext{Variables: vars, Functions: s.fns}
}

func (s *loadState) setObject(kind, name string, attrs map[string]cty.Value) {
	if s.objects[kind] == nil {
		s.objects[kind] = map[string]cty.Value{}
	}
	attrs["kind"] = cty.StringVal(kind)
	attrs["name"] = cty.StringVal(name)
	s.objects[kind][name] = cty.ObjectVal(attrs)
}

// evalContextFor is d's context: the variables and only the locals and
// objects d references (its deps), so a declaration costs what it uses,
// not the size of the configuration. A body whose references cannot be
// listed (not native syntax) gets the full context.
func (s *loadState) evalContextFor(d *decl) *hcl.EvalContext {
	if d.block != nil {
		if _, ok := d.block.Body.(*hclsyntax.Body); !ok {
			return s.evalContext()
		}
	}
	if s.varsObj == cty.NilVal {
		s.varsObj = cty.ObjectVal(s.vars)
	}
	picked := map[string]map[string]cty.Value{}
	for _, dep := range d.deps {
		src := s.objects[dep.kind]
		if dep.kind == kindLocal {
			src = s.locals
		}
		v, ok := src[dep.name]
		if !ok {
			continue
		}
		if picked[dep.kind] == nil {
			picked[dep.kind] = map[string]cty.Value{}
		}
		picked[dep.kind][dep.name] = v
	}
	vars := map[string]cty.Value{kindVar: s.varsObj}
	for _, k := range []string{kindLocal, kindProvider, kindRelease, kindStrategy, kindMaintenanceWindow, kindCluster} {
		vars[k] = cty.ObjectVal(picked[k])
	}
	return &hcl.EvalContext{Variables: vars, Functions: s.fns}
}

// blockDecoders decode each kind of top-level block.
var blockDecoders = map[string]func(*loadState, *hcl.Block, *hcl.EvalContext) hcl.Diagnostics{
	kindProvider:          (*loadState).decodeProvider,
	kindRelease:           (*loadState).decodeRelease,
	kindCatalog:           (*loadState).decodeCatalog,
	kindStrategy:          (*loadState).decodeStrategy,
	kindMaintenanceWindow: (*loadState).decodeWindow,
	kindCluster:           (*loadState).decodeCluster,
	kindRollout:           (*loadState).decodeRollout,
}

func (s *loadState) evaluate(d *decl) hcl.Diagnostics {
	ctx := s.evalContextFor(d)
	if d.kind == kindLocal {
		v, diags := s.filters.value(d.expr, ctx)
		if diags.HasErrors() {
			v = cty.DynamicVal
		}
		s.locals[d.name] = v
		return diags
	}
	if decode, ok := blockDecoders[d.kind]; ok {
		return decode(s, d.block, ctx)
	}
	return nil
}

// assignDefaultProviders gives clusters without a provider attribute the
// configuration's only provider, or else the one named "redfish".
func (s *loadState) assignDefaultProviders() {
	for _, c := range s.defaultProvider {
		if len(s.providers) == 1 {
			for _, p := range s.providers {
				c.Provider = p
			}
		} else {
			c.Provider = s.providers["redfish"]
		}
	}
}

// collectDataFiles fills Config.DataFiles, sorted by name.
func (s *loadState) collectDataFiles() {
	s.cfg.DataFiles = nil
	for _, name := range slices.Sorted(maps.Keys(s.fn.dataFiles)) {
		s.cfg.DataFiles = append(s.cfg.DataFiles, SourceFile{Name: name, Bytes: s.fn.dataFiles[name]})
	}
}

// collect fills the Config's slices in declaration order.
func (s *loadState) collect() {
	for _, d := range s.order {
		switch d.kind {
		case kindProvider:
			appendDecoded(&s.cfg.Providers, s.providers[d.name])
		case kindRelease:
			appendDecoded(&s.cfg.Releases, s.releases[d.name])
		case kindStrategy:
			appendDecoded(&s.cfg.Strategies, s.strategies[d.name])
		case kindMaintenanceWindow:
			appendDecoded(&s.cfg.MaintenanceWindows, s.windows[d.name])
		case kindCluster:
			appendDecoded(&s.cfg.Clusters, s.clusters[d.name])
		}
	}
}

// appendDecoded appends v to list unless it failed to decode (nil).
func appendDecoded[T any](list *[]*T, v *T) {
	if v != nil {
		*list = append(*list, v)
	}
}

func posString(r hcl.Range) string {
	return fmt.Sprintf("%s:%d", r.Filename, r.Start.Line)
}

func quote(s string) string { return fmt.Sprintf("%q", s) }
