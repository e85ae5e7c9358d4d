// Package plugin carries the provider contract (package providers) over
// gRPC through hashicorp/go-plugin: the handshake, the client and server
// shims, starting plugin processes, and finding and pinning plugin binaries.
package plugin

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/rackform/rackform/internal/profiling"
	"github.com/rackform/rackform/providers"
	pb "github.com/rackform/rackform/providers/plugin/proto/providerv1"
)

// The handshake cookie only keeps a plugin binary from being run by hand and
// from talking to a host of another program; it is not a security measure
// (that is the SHA-256 pin and AutoMTLS).
const (
	MagicCookieKey   = "RACKFORM_PLUGIN_MAGIC_COOKIE"
	MagicCookieValue = "b7d3a7a4e1c94c0e9b1f5b8e0f6a2c51-rackform-provider"
)

// PluginName is the one plugin a provider binary serves.
const PluginName = "provider"

// Handshake is the go-plugin handshake every rackform provider plugin uses.
// Its ProtocolVersion is the protocol major: a plugin built for another
// major is refused at start.
func Handshake() goplugin.HandshakeConfig {
	return goplugin.HandshakeConfig{
		ProtocolVersion:  providers.ProtocolVersion,
		MagicCookieKey:   MagicCookieKey,
		MagicCookieValue: MagicCookieValue,
	}
}

// PluginMap is the plugin set served by a provider binary implementing p;
// logger receives the stack of a provider panic.
func PluginMap(p providers.Provider, logger hclog.Logger) goplugin.PluginSet {
	return goplugin.PluginSet{PluginName: &ProviderPlugin{Impl: p, Logger: logger}}
}

// ProviderPlugin is the go-plugin GRPCPlugin for a provider. On the plugin
// side Impl is the provider; on the host side Name is the provider's name,
// used in the diagnostics the client writes when the transport fails.
type ProviderPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	Impl   providers.Provider
	Logger hclog.Logger
	Name   string
}

var _ goplugin.GRPCPlugin = (*ProviderPlugin)(nil)

// GRPCServer registers the provider's gRPC service.
func (p *ProviderPlugin) GRPCServer(_ *goplugin.GRPCBroker, s *grpc.Server) error {
	if p.Impl == nil {
		return fmt.Errorf("plugin: no provider to serve")
	}
	pb.RegisterProviderServer(s, &GRPCServer{Impl: p.Impl, Logger: p.Logger})
	return nil
}

// GRPCClient returns the host's view of the provider: a providers.Provider.
func (p *ProviderPlugin) GRPCClient(_ context.Context, _ *goplugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &GRPCClient{Name: p.Name, client: pb.NewProviderClient(c)}, nil
}

// maxMessage bounds one gRPC message. gRPC's default of 4 MiB is too small
// for an ObserveRequest naming a large fleet (100,000 targets with
// credentials are about 10 MiB); observations themselves stream one server
// per message.
const maxMessage = 256 << 20

// Serve runs p as a plugin and returns when the host ends it. It is all a
// plugin's main needs to call. logger must write JSON to the process's real
// stderr (NewLogger does): the host parses those lines and re-logs them at
// their level, and stdout belongs to the go-plugin handshake. The plugin
// exits when its host dies, even by SIGKILL: Start has the kernel kill it
// (Linux), and Serve watches for the parent going away.
//
// For profiling a plugin in place (fleet benchmarks), EnvCPUProfile names a
// file that gets the process's CPU profile, and EnvHeapProfile a file that
// gets a heap profile every few seconds (the last one taken while the heap
// was at its largest is kept).
func Serve(p providers.Provider, logger hclog.Logger) {
	if stop := profiling.Start(os.Getenv(EnvCPUProfile), os.Getenv(EnvHeapProfile), logger); stop != nil {
		// Written when the host stops the provider: the host may end this
		// process right after.
		p = &profiled{Provider: p, stop: stop}
		defer stop()
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	exitWithHost(p, logger)
	goplugin.Serve(ServeConfig(p, logger))
}

// ServeConfig is the go-plugin configuration Serve uses, for plugins that
// need to adjust it (tests that fake another protocol major).
func ServeConfig(p providers.Provider, logger hclog.Logger) *goplugin.ServeConfig {
	return &goplugin.ServeConfig{
		HandshakeConfig: Handshake(),
		Plugins:         PluginMap(p, logger),
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return goplugin.DefaultGRPCServer(append(opts, grpc.MaxRecvMsgSize(maxMessage), grpc.MaxSendMsgSize(maxMessage)))
		},
		Logger: logger,
	}
}

// memoryLimit is the plugin process's soft memory limit (the GOMEMLIMIT
// environment variable replaces it): the Go runtime collects garbage more
// often as the heap nears it, instead of letting it grow to twice what is
// live. A provider observing thousands of servers at once allocates fast
// (TLS records, JSON documents) and holds little; without it the plugin's
// resident memory is mostly garbage waiting for the next collection. It
// is not a cap: a provider that needs more gets more. Measured at 10,000
// servers (make bench-fleet N=10000 ROUNDS=3): 384 MiB let the plugin
// reach 375 MB; 256 MiB held it at 275 MB but collected so often that it
// cost a sixth more CPU (and at 1,000 servers without $expand, half
// more); 320 MiB held it near 330 MB for a few percent. The provider's
// default concurrency went from 1,536 to 2,560 servers at once (see
// observationMemory in providers/redfish), and the limit with it, from
// 320 to 480 MiB: at 100,000 servers (make bench-scale) 3,072 at once
// under 320 MiB collected so often that the plugin spent 1.75 ms of CPU
// a server, 1.28 ms under 512 MiB; 2,560 under 480 MiB spent 1.16-1.32
// ms, as 1,536 under 320 MiB had (1.15-1.19 ms).
const memoryLimit = 480 << 20

// gcPercent is the plugin's GOGC (the GOGC environment variable replaces
// it): the heap may grow to three times what is live before a collection,
// up to memoryLimit, which then decides. A collection's cost is mostly
// fixed by what is in flight (the goroutine stacks and connections of the
// servers being observed), not by the garbage, so fewer of them is less
// CPU. Measured at 20,000 servers (make bench-scale, CPU profile of the
// plugin): the collector's share went from 21% at 100 to 15% at 200, the
// plugin's peak RSS from 269 MB to 321 MB (it sits at memoryLimit from
// about 20,000 servers on either way).
const gcPercent = 200

// EnvLogLevel carries the host logger's level to the plugin, so the plugin
// does not format lines the host would drop.
const EnvLogLevel = "RACKFORM_PLUGIN_LOG_LEVEL"

// NewLogger is the logger a plugin process should use: JSON lines on stderr,
// which the host turns back into log entries of the same level, at the level
// the host asked for in EnvLogLevel (default info).
// w must be the process's real stderr, captured before Serve starts (Serve
// redirects os.Stderr to the host's stdio stream).
func NewLogger(name string, w io.Writer, getenv func(string) string) hclog.Logger {
	level := hclog.LevelFromString(getenv(EnvLogLevel))
	if level == hclog.NoLevel {
		level = hclog.Info
	}
	return hclog.New(&hclog.LoggerOptions{
		Name:       name,
		Level:      level,
		Output:     w,
		JSONFormat: true,
	})
}

// IsPluginProcess reports whether the process was started by a rackform host
// as a plugin, so that a plugin entry point run by hand can say what it is.
func IsPluginProcess(getenv func(string) string) bool {
	return getenv(MagicCookieKey) == MagicCookieValue
}
