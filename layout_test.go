package rackform

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/rackform/rackform"

// TestImportRules enforces docs/architecture.md: imports point one way. Each rule
// names packages (a trailing "/..." includes sub-packages; several are
// separated by spaces) and the imports
// that none of their transitive dependencies may contain.
func TestImportRules(t *testing.T) {
	rules := []struct {
		pkgs      string
		forbidden []string
		why       string
	}{
		{"providers/...", []string{"config!", "config/", "planner", "executor", "cmd"}, "providers speak only the wire contract (and compare versions with config/version)"},
		{"executor/...", []string{"config!", "config/", "planner!", "providers/plugin", "providers/redfish", "providers/sim", "github.com/hashicorp/go-plugin", "cmd"}, "the executor needs only the plan and the provider contract"},
		{"executor executor/state executor/postgres executor/history executor/backendtest executor/rollout", []string{"internal/vclock"}, "a virtual clock comes in through Options.Clock; only tests and their kit (executortest, whose fake clock is the virtual clock's timers) import internal/vclock"},
		{"planner/...", []string{"executor", "providers/plugin", "providers/redfish", "providers/sim", "github.com/hashicorp/go-plugin", "github.com/stmcginnis/gofish", "cmd"}, "the planner gets provider factories injected"},
		{"planner/plan", []string{"config!", "config/", "planner!"}, "plans are pure data (they compare versions with config/version, the leaf every layer shares)"},
		{"config/...", []string{"planner", "executor", "providers/plugin", "providers/redfish", "providers/sim", "cmd"}, "config is source structure only"},
		{"providers/sim/...", []string{"providers/redfish", "github.com/stmcginnis/gofish"}, "the simulator is an independent implementation of Redfish"},
		{"providers", []string{"github.com/hashicorp/go-plugin", "google.golang.org/grpc"}, "the contract is plain data"},
		{"config/version", []string{"config!", "config/", "planner", "executor", "providers", "cmd"}, "version comparison is a leaf every layer may share"},
		{"rehearsal/...", []string{"config!", "config/", "planner!", "providers/plugin", "providers/redfish", "providers/sim", "github.com/hashicorp/go-plugin", "github.com/stmcginnis/gofish", "cmd"}, "a rehearsal runs the plan's own executor against its own simulated fleet: it needs the plan, the executor and the provider contract, never the configuration, the planner or a real provider"},
		{"rehearsal/schedule", []string{"executor", "rehearsal!", "providers/plugin", "providers/redfish", "providers/sim", "config!", "config/", "planner!", "internal", "cmd"}, "the schedule is pure data, for any view to draw: it imports only the plan, whose durations and intervals it writes (and what the plan imports)"},
		{"executor/rollout", []string{"executor!", "executor/state", "executor/postgres", "executor/history", "executor/executortest", "executor/backendtest", "rehearsal", "providers/plugin", "providers/redfish", "providers/sim", "config!", "config/", "planner!", "internal", "cmd"}, "the rollout rules are decisions over the plan's data and the clock, shared by the executor and rehearsal: they import only the plan (and what it imports)"},
	}
	for _, r := range rules {
		t.Run(r.pkgs, func(t *testing.T) {
			args := []string{"list", "-deps", "-test=false", "-f", "{{.ImportPath}}"}
			for _, p := range strings.Fields(r.pkgs) {
				args = append(args, "./"+p)
			}
			out, err := exec.Command("go", args...).CombinedOutput()
			if err != nil {
				if strings.Contains(string(out), "matched no packages") || strings.Contains(string(out), "no Go files") {
					t.Skipf("no packages yet for %s", r.pkgs)
				}
				t.Fatalf("go list: %v\n%s", err, out)
			}
			for _, dep := range strings.Fields(string(out)) {
				for _, f := range r.forbidden {
					if forbids(f, dep) {
						t.Errorf("%s depends on %s: forbidden (%s)", r.pkgs, dep, r.why)
					}
				}
			}
		})
	}
}

// forbids reports whether dep is matched by rule f: a path of this module
// (with its sub-packages, or exactly when f ends in "!"; only its
// sub-packages, except config/version, when f ends in "/") or an external
// module path prefix. config/version is the one package below config that
// every layer may import: the scheme-aware version comparison.
func forbids(f, dep string) bool {
	if strings.HasSuffix(f, "/") {
		f = module + "/" + f
		return strings.HasPrefix(dep, f) && dep != module+"/config/version"
	}
	exact := strings.HasSuffix(f, "!")
	f = strings.TrimSuffix(f, "!")
	if !strings.Contains(f, ".") { // a path inside this module
		f = module + "/" + f
	}
	if exact {
		return dep == f
	}
	return dep == f || strings.HasPrefix(dep, f+"/")
}

func TestForbids(t *testing.T) {
	cases := []struct {
		rule, dep string
		want      bool
	}{
		{"planner", module + "/planner", true},
		{"planner", module + "/planner/plan", true},
		{"planner!", module + "/planner/plan", false},
		{"planner!", module + "/planner", true},
		{"config", module + "/configx", false},
		{"github.com/hashicorp/go-plugin", "github.com/hashicorp/go-plugin/internal/grpcmux", true},
		{"config/", module + "/config/version", false},
		{"config/", module + "/config/other", true},
		{"config/", module + "/config", false},
		{"config!", module + "/config", true},
	}
	for _, c := range cases {
		if got := forbids(c.rule, c.dep); got != c.want {
			t.Errorf("forbids(%q, %q) = %v, want %v", c.rule, c.dep, got, c.want)
		}
	}
}

// maxMethods is the most methods a type may have (docs/architecture.md):
// past it, a type owns more than one part, and the part a change needs is
// hard to find.
const maxMethods = 40

// TestTypeSize holds the packages split into small types (issue 31: the
// executor's runner and scheduler, rehearsal's critical path, the
// configuration loader, the planner, the simulator's BMC) to maxMethods
// methods a type, counted over non-test files.
func TestTypeSize(t *testing.T) {
	for _, root := range []string{"executor", "rehearsal", "planner", "config", "providers/sim"} {
		err := filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			for typ, n := range methodCounts(t, dir) {
				if n > maxMethods {
					t.Errorf("%s: type %s has %d methods, more than %d: split it into types that own one part each", dir, typ, n, maxMethods)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// methodCounts counts the methods declared on each type of the package
// in dir, in its non-test files.
func methodCounts(t *testing.T, dir string) map[string]int {
	fset := token.NewFileSet()
	notTest := func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }
	pkgs, err := parser.ParseDir(fset, dir, notTest, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Recv == nil || len(fd.Recv.List) == 0 {
					continue
				}
				typ := fd.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				switch x := typ.(type) {
				case *ast.IndexExpr:
					typ = x.X
				case *ast.IndexListExpr:
					typ = x.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					counts[id.Name]++
				}
			}
		}
	}
	return counts
}

func TestMethodCounts(t *testing.T) {
	dir := t.TempDir()
	src := "package p\n\ntype a struct{}\ntype g[T any] struct{}\n\nfunc (a) x() {}\nfunc (*a) y() {}\nfunc (g[T]) z() {}\nfunc f() {}\n"
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\n\nfunc (a) w() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := methodCounts(t, dir)
	if got["a"] != 2 || got["g"] != 1 || len(got) != 2 {
		t.Errorf("methodCounts = %v, want a: 2, g: 1", got)
	}
}

// TestNoCommandLinesBelowTheCLI holds the rule that the executor and the
// rehearsal say what moves a run on as data (executor.NextAction, named in
// messages by NextAction.Ref) and never as a command line of the CLI: the
// command, its options and its wording are the views' (package views,
// applyview.Resume). No string literal of their non-test files may name a
// rackform command (comments may).
func TestNoCommandLinesBelowTheCLI(t *testing.T) {
	commands := cliCommands(t)
	for _, root := range []string{"executor", "rehearsal"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatalf("%s: %v", fset.Position(lit.Pos()), err)
				}
				if cmd, ok := namesCommand(s, commands); ok {
					t.Errorf("%s: %q names the command rackform %s: say what is next as an executor.NextAction (in a message, its Ref) and let the CLI write the command", fset.Position(lit.Pos()), s, cmd)
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// namesCommand reports whether s writes a command line of rackform: "rackform"
// followed by one of commands, by a formatting verb, or ending s (the command
// concatenated after it).
func namesCommand(s string, commands []string) (string, bool) {
	for rest := s; ; {
		i := strings.Index(rest, "rackform ")
		if i < 0 {
			return "", false
		}
		rest = rest[i+len("rackform "):]
		if rest == "" || rest[0] == '%' {
			return "…", true
		}
		word, _, _ := strings.Cut(rest, " ")
		word = strings.TrimRight(word, ".,;:)")
		if slices.Contains(commands, word) {
			return word, true
		}
	}
}

// cliCommands are the names of rackform's commands (the first word of each
// in cmd/rackform/internal/command/commands.go).
func cliCommands(t *testing.T) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join("cmd", "rackform", "internal", "command", "commands.go"), nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if kv, ok := n.(*ast.KeyValueExpr); ok {
			if lit, ok := kv.Key.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				name, _ := strconv.Unquote(lit.Value)
				word, _, _ := strings.Cut(name, " ")
				out = append(out, word)
			}
		}
		return true
	})
	for _, want := range []string{"apply", "continue", "approve", "skip", "plan", "force-unlock"} {
		if !slices.Contains(out, want) {
			t.Fatalf("commands.go lists %v, not %s: the test no longer reads the commands", out, want)
		}
	}
	return out
}

// The check catches the command lines the executor once wrote, and not
// the words "rackform" in its other messages.
func TestNamesCommand(t *testing.T) {
	commands := []string{"apply", "continue", "approve", "skip", "plan", "force-unlock", "stop"}
	for s, want := range map[string]bool{
		"waiting for approval: rackform approve ":                                   true,
		"; skip it or plan again, then rackform continue":                           true,
		"(rackform skip %s); then rackform continue":                                true,
		"rackform plan -target ":                                                    true,
		"rackform ":                                                                 true,
		"rackform %s":                                                               true,
		"if that apply is gone, run: rackform force-unlock %s":                      true,
		"the run itself cannot be skipped; use rackform stop":                       true,
		"journal record version %d is not supported (this rackform reads up to %d)": false,
		"newer than this rackform understands (version %d): a newer rackform migrated it; use that version (or newer) of rackform for this database": false,
		"run: {{continue}}": false,
	} {
		if _, got := namesCommand(s, commands); got != want {
			t.Errorf("namesCommand(%q) = %v, want %v", s, got, want)
		}
	}
}
