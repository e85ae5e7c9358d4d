package command

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/posener/complete"
)

// Shell completion is answered by hashicorp/cli (posener/complete: bash and
// zsh call rackform with COMP_LINE set): commands, each command's flags
// (from its flag set, as its help is) and their values where they are
// files, directories or one of a few words. Installing it is done here
// rather than by posener/complete's installer, which finds the home
// directory in the password database and so ignores $HOME: a user (or a
// test) that points HOME elsewhere would have the real ~/.bashrc edited.

// flagValues are the values of flags that take one of a few words, by
// "COMMAND -FLAG".
var flagValues = map[string][]string{
	"show -format":         {"text", "markdown", "html", "json"},
	"status -format":       {"text", "json", "html"},
	"plan -on-unreachable": {"skip", "block"},
}

// flagPredictors completes r's flags: "-name" with what its value is (a
// file, a directory, one of flagValues' words, anything; nothing for a
// boolean).
func flagPredictors(r runner) complete.Flags {
	fs := r.Flags()
	out := complete.Flags{}
	fs.VisitAll(func(f *flag.Flag) {
		name, _ := flag.UnquoteUsage(f)
		var p complete.Predictor
		switch {
		case flagValues[fs.Name()+" -"+f.Name] != nil:
			p = complete.PredictSet(flagValues[fs.Name()+" -"+f.Name]...)
		case name == "":
			p = complete.PredictNothing
		case name == "FILE":
			p = complete.PredictFiles("*")
		case name == "DIR":
			p = complete.PredictDirs("*")
		default:
			p = complete.PredictAnything
		}
		out["-"+f.Name] = p
	})
	return out
}

// argsPredictor completes r's arguments: a configuration directory or
// file, or a plan file; nothing for the others.
func argsPredictor(r runner) complete.Predictor {
	switch r.Flags().Name() {
	case "validate", "plan", "fmt", "providers lock":
		return complete.PredictOr(complete.PredictDirs("*"), complete.PredictFiles("*.rf.hcl"))
	case "show", "apply":
		return complete.PredictFiles("*")
	}
	return complete.PredictNothing
}

// completionRC is a shell start-up file and the lines completion adds to it.
type completionRC struct {
	file  string // relative to the home directory
	lines []string
}

func completionRCs(bin string) []completionRC {
	complete := "complete -o nospace -C " + shellQuote(bin) + " rackform"
	return []completionRC{
		{".bashrc", []string{complete}},
		{".zshrc", []string{"autoload -U +X bashcompinit && bashcompinit", complete}},
	}
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`;&|<>()*?[]#~!{}") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// installCompletion adds completion to each of ~/.bashrc and ~/.zshrc that
// exists (install) or removes it (uninstall), and says what it did.
func (m *Meta) installCompletion(install bool) int {
	home := m.Getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return m.fail("shell completion: no home directory: %v", err)
		}
	}
	bin, err := os.Executable()
	if err != nil {
		return m.fail("shell completion: cannot tell where rackform is: %v", err)
	}
	found := false
	for _, rc := range completionRCs(bin) {
		path := filepath.Join(home, rc.file)
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return m.fail("shell completion: %v", err)
		}
		found = true
		text := string(b)
		has := strings.Contains(text, rc.lines[len(rc.lines)-1]+"\n")
		switch {
		case install && has:
			fmt.Fprintf(m.Stdout, "Shell completion is already in %s\n", path)
			continue
		case install:
			if text != "" && !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			text += strings.Join(rc.lines, "\n") + "\n"
		case !has:
			fmt.Fprintf(m.Stdout, "Shell completion is not in %s\n", path)
			continue
		default:
			for i := len(rc.lines) - 1; i >= 0; i-- {
				// The complete line always goes; bashcompinit only when
				// it was ours (right before it).
				l := rc.lines[i] + "\n"
				if i == len(rc.lines)-1 || strings.HasSuffix(text, l) {
					text = strings.Replace(text, l, "", 1)
				}
			}
		}
		info, err := os.Stat(path)
		if err != nil {
			return m.fail("shell completion: %v", err)
		}
		if err := os.WriteFile(path, []byte(text), info.Mode().Perm()); err != nil {
			return m.fail("shell completion: %v", err)
		}
		if install {
			fmt.Fprintf(m.Stdout, "Shell completion added to %s (open a new shell to use it)\n", path)
		} else {
			fmt.Fprintf(m.Stdout, "Shell completion removed from %s\n", path)
		}
	}
	if !found {
		return m.fail("shell completion: neither %s nor %s exists; create the one your shell reads and run this again",
			filepath.Join(home, ".bashrc"), filepath.Join(home, ".zshrc"))
	}
	return ExitOK
}
