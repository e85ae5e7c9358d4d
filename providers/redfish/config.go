package redfish

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/rackform/rackform/internal/regularfile"
	"github.com/rackform/rackform/providers"
)

// Update methods accepted by the update_method attribute and Step.Method.
const (
	MethodAuto         = "auto"
	MethodSimpleUpdate = "simple_update"
	MethodPush         = "push"
)

// config is the provider block, decoded and defaulted.
type config struct {
	Username string
	Password string
	// CABundle is PEM text (read from the file when the attribute was a path).
	CABundle []byte
	Insecure bool
	// AllowHTTP is the opt-in to plain http:// BMC addresses; the
	// configuration refuses them without it.
	AllowHTTP bool
	// Timeout bounds one HTTP request attempt.
	Timeout      time.Duration
	Concurrency  int
	PerBMCLimit  int
	MaxAttempts  int
	BaseDelay    time.Duration
	MaxDelay     time.Duration
	PollInterval time.Duration
	UpdateMethod string
}

func defaultConfig() config {
	return config{
		Timeout:      30 * time.Second,
		Concurrency:  autoConcurrency(fileLimit(), availableMemory()),
		PerBMCLimit:  4,
		MaxAttempts:  5,
		BaseDelay:    500 * time.Millisecond,
		MaxDelay:     30 * time.Second,
		PollInterval: 5 * time.Second,
		UpdateMethod: MethodAuto,
	}
}

// Budget of one server observed at once: a connection (a file descriptor)
// and the memory of its TLS connection, requests and decoded documents
// (about 100 KiB measured with a 24-member expanded inventory).
const (
	fdsPerObservation    = 2 // its connection, and room for a retry's
	reservedFDs          = 256
	memoryPerObservation = 128 << 10
	// observationMemory bounds the memory of the observations in flight,
	// so a plan of any fleet stays within a few hundred MB: past a few
	// thousand servers at once the machine's CPU (TLS, JSON), not the
	// BMCs' latency, sets the pace, and more at once only queue for it
	// (and time out against BMCs that are fine). At 100,000 servers
	// (make bench-scale, 200 ms a request, 8 requests a server) 1,536 at
	// once left a tenth of the machine idle, each server waiting out its
	// BMC's latency; 2,560 (with the plugin's memory limit raised to
	// match) kept it busy and took plan from 1.23-1.33x the floor to
	// 1.09-1.31x (median of three rounds 1.16x) for ~150 MB more in the
	// plugin; 3,072 only collected garbage more often. At 10,000 servers
	// the number at once matters less: 1,536 and 2,048 were alike, and
	// 2,560 measured 1.15x and 1.21x against 1,536's 1.23x, its plugin
	// reaching 450 MB instead of 311 MB.
	observationMemory = 320 << 20
	minConcurrency    = 64
)

// autoConcurrency is the default concurrency: as many servers at once as
// the open-file limit and the memory budget allow (observationMemory, or a
// quarter of the available memory when less; each observation holds one
// connection), never below minConcurrency. A BMC waiting on the network
// costs no CPU, so a small constant would only leave the machine idle.
func autoConcurrency(files int, mem int64) int {
	n := 1 << 20
	if files > 0 {
		n = min(n, (files-reservedFDs)/fdsPerObservation)
	}
	budget := int64(observationMemory)
	if mem > 0 {
		budget = min(budget, mem/4)
	}
	n = min(n, int(budget/memoryPerObservation))
	return max(n, minConcurrency)
}

// schema is what Describe reports; parseConfig accepts exactly these names.
var schema = []providers.Attribute{
	{Name: "username", Type: "string", Description: "BMC user name; a server's own credentials override it."},
	{Name: "password", Type: "string", Sensitive: true, Description: "BMC password. Never logged."},
	{Name: "ca_bundle", Type: "string", Description: "PEM file path or PEM text of the CAs that sign BMC certificates (default: system roots)."},
	{Name: "insecure", Type: "bool", Description: "Skip TLS certificate verification. Off by default; say so explicitly to turn it on."},
	{Name: "allow_http", Type: "bool", Description: "Accept plain http:// BMC addresses, over which the BMC password crosses the network in clear text. Off by default."},
	{Name: "timeout", Type: "string", Description: "Bound on one HTTP request attempt, a Go duration (default 30s)."},
	{Name: "concurrency", Type: "number", Description: "Servers observed at once (default: as many as the open-file limit and a memory budget of 320 MiB allow, 2,560 where files are plenty, at least 64)."},
	{Name: "per_bmc_limit", Type: "number", Description: "Requests in flight to one BMC at once (default 4; all on one connection per BMC)."},
	{Name: "retry_max_attempts", Type: "number", Description: "Attempts per request on 503/busy or connection errors (default 5)."},
	{Name: "retry_base_delay", Type: "string", Description: "First backoff delay, doubled per attempt with jitter (default 500ms)."},
	{Name: "retry_max_delay", Type: "string", Description: "Largest backoff delay, also the cap on a BMC's Retry-After (default 30s)."},
	{Name: "poll_interval", Type: "string", Description: "Wait between polls of a task or of a server coming back (default 5s)."},
	{Name: "update_method", Type: "string", Description: `"auto" (SimpleUpdate when offered, else push), "simple_update" or "push".`},
}

// parseConfig decodes the provider block. Every bad attribute gets its own
// diagnostic naming it; values never appear in a message, since any of them
// might be a secret put in the wrong place.
func parseConfig(raw json.RawMessage) (config, providers.Diagnostics) {
	cfg := defaultConfig()
	var diags providers.Diagnostics
	if len(bytes.TrimSpace(raw)) == 0 {
		return cfg, nil
	}
	var attrs map[string]json.RawMessage
	if err := json.Unmarshal(raw, &attrs); err != nil {
		return cfg, providers.Errorf("", "Invalid provider configuration", "The configuration is not a JSON object.")
	}
	known := map[string]bool{}
	for _, a := range schema {
		known[a.Name] = true
	}
	bad := func(name, want string) {
		diags = append(diags, providers.Diagnostic{
			Severity: providers.Error,
			Summary:  "Invalid attribute " + name,
			Detail:   fmt.Sprintf("The attribute %q must be %s.", name, want),
		})
	}
	// Where each attribute of a plain type goes.
	strs := map[string]*string{"username": &cfg.Username, "password": &cfg.Password}
	flags := map[string]*bool{"insecure": &cfg.Insecure, "allow_http": &cfg.AllowHTTP}
	durations := map[string]*time.Duration{"timeout": &cfg.Timeout, "retry_base_delay": &cfg.BaseDelay, "retry_max_delay": &cfg.MaxDelay, "poll_interval": &cfg.PollInterval}
	counts := map[string]*int{"concurrency": &cfg.Concurrency, "per_bmc_limit": &cfg.PerBMCLimit, "retry_max_attempts": &cfg.MaxAttempts}
	for name, v := range attrs {
		if !known[name] {
			diags = append(diags, providers.Diagnostic{Severity: providers.Error, Summary: "Unsupported attribute " + name,
				Detail: fmt.Sprintf("The redfish provider has no attribute %q.", name)})
			continue
		}
		if string(v) == "null" {
			continue
		}
		switch {
		case strs[name] != nil:
			if json.Unmarshal(v, strs[name]) != nil {
				bad(name, "a string")
			}
		case flags[name] != nil:
			if json.Unmarshal(v, flags[name]) != nil {
				bad(name, "a bool")
			}
		case durations[name] != nil:
			if d, ok := parseDuration(v); ok {
				*durations[name] = d
			} else {
				bad(name, `a positive duration such as "30s" (or a number of seconds)`)
			}
		case counts[name] != nil:
			var n float64
			if json.Unmarshal(v, &n) != nil || n < 1 || n != float64(int(n)) || n > 1e6 {
				bad(name, "a whole number of at least 1")
			} else {
				*counts[name] = int(n)
			}
		case name == "ca_bundle", name == "update_method":
			var s string
			if json.Unmarshal(v, &s) != nil {
				bad(name, "a string")
				continue
			}
			if name == "update_method" {
				switch s {
				case MethodAuto, MethodSimpleUpdate, MethodPush:
					cfg.UpdateMethod = s
				default:
					bad(name, `one of "auto", "simple_update" or "push"`)
				}
				continue
			}
			pem, err := loadCABundle(s)
			if err != nil {
				diags = append(diags, providers.Diagnostic{Severity: providers.Error, Summary: "Invalid attribute ca_bundle", Detail: err.Error()})
				continue
			}
			cfg.CABundle = pem
		}
	}
	if cfg.MaxDelay < cfg.BaseDelay {
		diags = append(diags, providers.Diagnostic{Severity: providers.Error, Summary: "Invalid attribute retry_max_delay",
			Detail: "retry_max_delay must not be smaller than retry_base_delay."})
	}
	if cfg.Insecure && len(cfg.CABundle) > 0 {
		diags = append(diags, providers.Diagnostic{Severity: providers.Warning, Summary: "Attribute ca_bundle is ignored",
			Detail: "insecure = true turns TLS verification off, so the CA bundle is not used."})
	}
	return cfg, diags
}

func parseDuration(v json.RawMessage) (time.Duration, bool) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		d, err := time.ParseDuration(s)
		return d, err == nil && d > 0
	}
	var n float64
	if json.Unmarshal(v, &n) == nil && n > 0 && n < 1e7 {
		return time.Duration(n * float64(time.Second)), true
	}
	return 0, false
}

// loadCABundle accepts PEM text or the path of a PEM file, and checks that it
// holds at least one certificate, so a typo fails at configure time rather
// than as a TLS error on every server.
func loadCABundle(s string) ([]byte, error) {
	pem := []byte(s)
	if !strings.Contains(s, "-----BEGIN") {
		b, err := regularfile.Read(s, regularfile.CABundle)
		if err != nil {
			return nil, fmt.Errorf("reading the CA bundle file: %w", err)
		}
		pem = b
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("the CA bundle holds no PEM certificate")
	}
	return pem, nil
}

// tlsConfig verifies BMC certificates unless insecure is set explicitly.
func (c config) tlsConfig() *tls.Config {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.Insecure {
		tc.InsecureSkipVerify = true //nolint:gosec // explicit, documented operator choice
		return tc
	}
	if len(c.CABundle) > 0 {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(c.CABundle)
		tc.RootCAs = pool
	}
	return tc
}
