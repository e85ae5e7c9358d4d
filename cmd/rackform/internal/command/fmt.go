package command

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/aymanbagabas/go-udiff"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/internal/regularfile"
)

// stdinName is the filename diagnostics use for source read from stdin.
const stdinName = "<stdin>"

// fmtCommand rewrites configuration files in canonical style, with
// Terraform's fmt semantics and flags.
type fmtCommand struct {
	*Meta
	list, write, diff, check, recursive, noColor bool
}

func (c *fmtCommand) Synopsis() string { return "Rewrite configuration files in canonical style" }
func (c *fmtCommand) Usage() string    { return "rackform fmt [options] [PATH ... | -]" }

func (c *fmtCommand) Description() string {
	return `Rewrites *.rf.hcl files in the canonical layout (hclwrite's, as terraform fmt
does). PATH is a directory (default: the current one) or a file; a file named
explicitly is formatted whatever its suffix, so variable files can be too.
With - the source is read from stdin and the result written to stdout.
Names of changed files are listed on stdout.

A file with a syntax error is reported like validate reports it and is never
rewritten.

Exit status: 0 on success, 1 on a syntax or I/O error, 2 on bad arguments,
3 with -check when some file needs formatting.`
}

func (c *fmtCommand) Flags() *flag.FlagSet {
	fs := flag.NewFlagSet("fmt", flag.ContinueOnError)
	fs.BoolVar(&c.list, "list", true, "List files whose formatting changed.")
	fs.BoolVar(&c.write, "write", true, "Write the result to the source file instead of stdout.")
	fs.BoolVar(&c.diff, "diff", false, "Print a unified diff of the changes.")
	fs.BoolVar(&c.check, "check", false, "Change nothing; exit 3 when some file needs formatting (implies -write=false, -list=true).")
	fs.BoolVar(&c.recursive, "recursive", false, "Also format files in subdirectories (those whose names start with a dot are skipped).")
	fs.BoolVar(&c.noColor, "no-color", false, "Never colour the output (also: the NO_COLOR environment variable).")
	return fs
}

func (c *fmtCommand) Run(_ context.Context, args []string) int {
	paths, code, ok := c.parseFlags(c, args)
	if !ok {
		return code
	}
	if c.check {
		c.list, c.write = true, false
	}
	stdin := len(paths) == 1 && paths[0] == "-"
	if !stdin && slices.Contains(paths, "-") {
		return c.usageFor("fmt", "- (stdin) cannot be combined with other paths")
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}

	var (
		diags   hcl.Diagnostics
		files   = map[string]*hcl.File{}
		changed bool
	)
	if stdin {
		// Like terraform fmt -: the result goes to stdout, nothing is listed.
		c.list, c.write = false, false
		src, err := io.ReadAll(io.LimitReader(c.Stdin, config.SourceLimit.Bytes+1))
		if err == nil && int64(len(src)) > config.SourceLimit.Bytes {
			err = &regularfile.TooLargeError{Path: stdinName, Size: int64(len(src)), Limit: config.SourceLimit}
		}
		if err == nil {
			err = config.CheckSource(stdinName, src)
		}
		if err != nil {
			return c.fail("reading stdin: %s", err)
		}
		changed, diags = c.format(stdinName, src, 0, files)
	} else {
		for _, p := range paths {
			ch, ds := c.formatPath(p, files)
			changed = changed || ch
			diags = append(diags, ds...)
		}
	}

	if len(diags) > 0 {
		c.showDiagnostics(diags, files, c.Color && !c.noColor)
	}
	switch {
	case diags.HasErrors():
		return ExitError
	case c.check && changed:
		return ExitPaused // documented as "fmt -check: files need formatting"
	default:
		return ExitOK
	}
}

// formatPath formats the file at path, or the configuration files of the
// directory at path (and below it with -recursive).
func (c *fmtCommand) formatPath(path string, files map[string]*hcl.File) (changed bool, diags hcl.Diagnostics) {
	info, err := os.Stat(path)
	if err != nil {
		return false, hcl.Diagnostics{ioDiagnostic("No file or directory to format", path, err)}
	}
	if !info.IsDir() {
		return c.formatFile(path, info.Mode().Perm(), files)
	}

	var targets []string
	walkErr := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			diags = append(diags, ioDiagnostic("Cannot read directory", p, err))
			return nil
		}
		if d.IsDir() {
			if p == path {
				return nil
			}
			// Hidden directories hold VCS and state (.git, .rackform), never configuration.
			if !c.recursive || strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), config.FileSuffix) && !strings.HasPrefix(d.Name(), ".") {
			targets = append(targets, p)
		}
		return nil
	})
	if walkErr != nil {
		diags = append(diags, ioDiagnostic("Cannot read directory", path, walkErr))
	}
	sort.Strings(targets) // WalkDir's order already is lexical; keep it explicit for the listing.
	for _, t := range targets {
		info, err := os.Stat(t)
		if err != nil {
			diags = append(diags, ioDiagnostic("Cannot read file", t, err))
			continue
		}
		ch, ds := c.formatFile(t, info.Mode().Perm(), files)
		changed = changed || ch
		diags = append(diags, ds...)
	}
	return changed, diags
}

func (c *fmtCommand) formatFile(path string, perm fs.FileMode, files map[string]*hcl.File) (bool, hcl.Diagnostics) {
	if strings.HasSuffix(path, ".json") {
		return false, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Cannot format JSON",
			Detail:   fmt.Sprintf("%s is in JSON syntax; rackform fmt formats only native HCL syntax.", path),
		}}
	}
	// A regular file only, bounded and shallow enough for the parser.
	src, err := config.ReadSource(path)
	if err != nil {
		return false, hcl.Diagnostics{ioDiagnostic("Cannot read file", path, err)}
	}
	return c.format(path, src, perm, files)
}

// format formats src (from the file name) and does with the result what the
// flags say: list, write, diff, or print it. A source with syntax errors is
// left alone and its diagnostics returned.
func (c *fmtCommand) format(name string, src []byte, perm fs.FileMode, files map[string]*hcl.File) (bool, hcl.Diagnostics) {
	// hclwrite formats whatever tokens it is given, even broken ones, so
	// parse first: a file that does not parse must never be rewritten.
	file, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	files[name] = file
	if diags.HasErrors() {
		return false, diags
	}
	out := hclwrite.Format(src)
	changed := !bytes.Equal(src, out)
	if changed {
		if c.list {
			fmt.Fprintln(c.Stdout, name)
		}
		if c.write {
			if err := os.WriteFile(name, out, perm); err != nil {
				return changed, append(diags, ioDiagnostic("Cannot write file", name, err))
			}
		}
		if c.diff {
			fmt.Fprint(c.Stdout, udiff.Unified("old/"+name, "new/"+name, string(src), string(out)))
		}
	}
	if !c.list && !c.write && !c.diff {
		c.Stdout.Write(out)
	}
	return changed, diags
}

// ioDiagnostic reports a file-system failure as a sourceless diagnostic, so
// fmt's output has one shape whatever went wrong.
func ioDiagnostic(summary, path string, err error) *hcl.Diagnostic {
	detail := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		detail = fmt.Sprintf("%s: %s.", path, pe.Err)
	}
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail}
}
