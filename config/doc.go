// Package config loads a rackform configuration (a directory of *.rf.hcl
// files) into a typed model, with hcl.Diagnostics carrying source ranges.
// It is source structure only: no I/O against BMCs, no planning.
//
// The language is documented in examples/README.md. Loading follows HCL's
// guide (go_patterns.rst): the top level is decoded with a BodySchema;
// variables are resolved first (default < RACKFORM_VAR_name < -var-file <
// -var); every local and block is then a node whose dependencies are the
// KIND.NAME traversals its expressions use (Expr.Variables); the nodes are
// sorted topologically (a cycle is an error naming it) and each is
// evaluated with a fresh hcl.EvalContext holding what came before.
// Referenceable blocks evaluate to objects carrying their kind and name,
// which is how reference attributes (release = release.r46) resolve to
// pointers in the model. Semantic checks that need the whole model run
// last, and every problem is reported at once.
//
// The model: Config holds the blocks in declared order with lookups by
// name. Cluster → Rack → Server keep declared order; each Server points at
// its Rack and Cluster, each Cluster at its Strategy, Release,
// MaintenanceWindow and Provider. Every object keeps its DeclRange so later
// stages (the planner) can report problems against the source.
//
// Secrets: env() and sensitive variables produce values carrying a cty
// mark. Marked values are accepted only in credentials blocks and provider
// attributes; the model keeps them as Secret (which redacts itself) or
// lists the attribute in Provider.SensitiveAttrs. Diagnostics are scrubbed
// of every sensitive value and lose their EvalContext when it holds one.
package config
