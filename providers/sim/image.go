package sim

import (
	"net/url"
	"path"
	"strings"
)

var imageExts = []string{".bin", ".img", ".iso", ".fwpkg", ".pldm", ".hpm", ".rom", ".signed", ".tar", ".gz", ".tgz", ".zip", ".exe"}

var componentKeys = []string{ComponentBMC, ComponentBIOS, ComponentNIC, ComponentCPLD, ComponentGPU, ComponentRuntime}

// parseImage reads the component key and version from an image URI or file
// name: the last path element is <component>-<version>[.<ext>]... (see the
// package documentation). component is "" when the name names none of the
// keys; version is then everything before the extensions after the first
// dash, if any.
//
// A vendor version whose text cannot be a file name ("A43 v2.60
// (01/01/2023)") rides in the query: .../bios.bin?version=A43%20v2.60%20(01%2F01%2F2023)
// names component bios (the name before any dash) at that version.
func parseImage(image string) (comp, version string, ok bool) {
	name := image
	var queryVersion string
	if u, err := url.Parse(image); err == nil && u.Path != "" {
		name = u.Path
		queryVersion = u.Query().Get("version")
	}
	name = path.Base(strings.ReplaceAll(name, "\\", "/"))
	for trimmed := true; trimmed; {
		trimmed = false
		for _, ext := range imageExts {
			if len(name) > len(ext) && strings.EqualFold(name[len(name)-len(ext):], ext) {
				name, trimmed = name[:len(name)-len(ext)], true
			}
		}
	}
	prefix, v, found := strings.Cut(name, "-")
	if queryVersion != "" {
		v, found = queryVersion, true
	}
	if !found || v == "" {
		return "", "", false
	}
	for _, k := range componentKeys {
		if strings.EqualFold(prefix, k) {
			return k, v, true
		}
	}
	return "", v, true
}
