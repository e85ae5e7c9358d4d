package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/internal/regularfile"
)

// The largest files the loader reads. Parsing HCL takes about 350 times a
// file's size in memory, so a configuration or variables file is bounded
// well above any real one (a 100,000-server fleet written out server by
// server is about 8 MB) and below what would exhaust the machine; data
// files (inventories, templates, certificates) are not parsed as HCL and
// a plan records them, so they are bounded by what a plan holds.
var (
	SourceLimit = regularfile.Limit{Bytes: 16 << 20, What: "a configuration or variables file"}
	dataLimit   = regularfile.Limit{Bytes: 64 << 20, What: "a file the configuration reads"}
)

// readRegular reads a data file from the disk (file(), templatefile(), a
// catalog's ca_file), refusing anything but a regular file
// (internal/regularfile): a FIFO would block the load and a device such
// as /dev/zero would be read forever, and neither can be recorded in a
// plan's snapshot. A file over dataLimit is refused before it is read.
func readRegular(path string) ([]byte, error) {
	return read(path, dataLimit)
}

func read(path string, limit regularfile.Limit) ([]byte, error) {
	b, err := regularfile.Read(path, limit)
	var nr *regularfile.NotRegularError
	if errors.As(err, &nr) {
		return nil, fmt.Errorf("%w; rackform reads configuration, variables and data only from regular files", err)
	}
	return b, err
}

// ReadSource reads a configuration or variables file from the disk as
// readRegular does, bounded by SourceLimit, and refuses one nested deeper
// than HCL's parser can take (regularfile.MaxDepth) before it is parsed.
func ReadSource(path string) ([]byte, error) {
	b, err := read(path, SourceLimit)
	if err != nil {
		return nil, err
	}
	if err := CheckSource(path, b); err != nil {
		return nil, err
	}
	return b, nil
}

// CheckSource refuses a configuration or variables file, src read from
// name (HCL, or JSON by its .json suffix), nested deeper than HCL's
// parser can take (regularfile.MaxDepth), before it is parsed.
func CheckSource(name string, src []byte) error {
	syntax := regularfile.HCL
	if strings.HasSuffix(name, ".json") {
		syntax = regularfile.JSON
	}
	return regularfile.CheckDepth(name, src, syntax, regularfile.MaxDepth)
}

// checkTemplate refuses a template (templatefile()) nested deeper than
// HCL's template parser can take.
func checkTemplate(name, text string) error {
	return regularfile.CheckDepth(name, []byte(text), regularfile.Template, regularfile.MaxDepth)
}

// checkInput refuses a -var or environment value, to be parsed as an HCL
// expression, nested deeper than the parser can take (a 120 KB argument
// overflowed its stack). The message never shows the value.
func checkInput(name string, in inputValue) hcl.Diagnostics {
	err := regularfile.CheckDepth(inputFilename(name), []byte(in.raw), regularfile.HCL, regularfile.MaxDepth)
	if err == nil {
		return nil
	}
	return hcl.Diagnostics{plainError("Invalid value for input variable", "The value for variable %q (from %s) nests brackets, braces, parentheses or strings more than %d levels deep; rackform refuses it rather than parse it.", name, in.source, regularfile.MaxDepth)}
}

// checkJSON refuses JSON read from anywhere (a catalog, fetched or read)
// nested deeper than HCL's JSON parser can take, before it is parsed.
func checkJSON(name string, body []byte) hcl.Diagnostics {
	if err := regularfile.CheckDepth(name, body, regularfile.JSON, regularfile.MaxDepth); err != nil {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Unusable catalog", Detail: err.Error() + "."}}
	}
	return nil
}
