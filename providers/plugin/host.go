package plugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/rackform/rackform/providers"
)

// Spec says how to start one provider plugin.
type Spec struct {
	// Name is the provider's name ("redfish", "acme"), used in messages.
	Name string
	// Path is the executable; Args are its arguments (without argv[0]).
	Path string
	Args []string
	// Argv0 is the program name the process sees; "" means Path. A binary
	// that dispatches on its name (a test binary run as "rackform" by
	// testscript) needs it to be re-executed as itself.
	Argv0 string
	// Env is added to the host's environment for the plugin, overriding it.
	Env []string
	// SHA256 is the expected hex SHA-256 of Path. When set, a binary that
	// hashes differently is refused before it is executed.
	SHA256 string
}

// BuiltinSpec starts a provider compiled into the running rackform binary,
// by re-executing it as `rackform provider NAME`: one binary is enough.
func BuiltinSpec(name string) (Spec, error) {
	exe, err := os.Executable()
	if err != nil {
		return Spec{}, fmt.Errorf("locating the rackform binary for provider %q: %w", name, err)
	}
	return Spec{Name: name, Path: exe, Args: []string{"provider", name}, Argv0: os.Args[0]}, nil
}

// Client is a running provider plugin. It implements providers.Provider;
// Close ends the plugin process.
type Client struct {
	*GRPCClient
	pc     *goplugin.Client
	logger hclog.Logger
	// sockets is the directory of the plugin's gRPC socket, removed by
	// Close.
	sockets string
}

var _ providers.Provider = (*Client)(nil)

// defaultStartTimeout bounds the handshake when ctx has no deadline.
const defaultStartTimeout = time.Minute

// Start verifies (when spec.SHA256 is set) and starts a provider plugin,
// completing the go-plugin handshake with AutoMTLS. ctx concerns the start
// only: its deadline bounds the handshake (default one minute), and a
// cancellation during the handshake is acted on once it ends (go-plugin
// cannot be interrupted mid-start). The plugin then runs until Close. Its
// stderr log lines are re-logged through logger at their own level.
func Start(ctx context.Context, spec Spec, logger hclog.Logger) (*Client, error) {
	if spec.SHA256 != "" {
		if err := verifyFile(spec.Name, spec.Path, spec.SHA256, ""); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("starting provider %q: %w", spec.Name, err)
	}
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	timeout := defaultStartTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	cmd := exec.Command(spec.Path, spec.Args...)
	if spec.Argv0 != "" {
		cmd.Args[0] = spec.Argv0
	}
	// The environment is built here (SkipHostEnv below) so that Spec.Env
	// and the log level override the host's values instead of being
	// overridden by them.
	cmd.Env = append(os.Environ(), spec.Env...)
	dieWithHost(cmd)
	if lvl := logger.GetLevel(); lvl != hclog.NoLevel && lvl != hclog.Off {
		cmd.Env = append(cmd.Env, EnvLogLevel+"="+lvl.String())
	}
	// The plugin's gRPC socket goes in a directory of its own, removed
	// with the plugin: a plugin that is killed cannot remove its socket,
	// and the sockets of killed plugins would pile up in the temporary
	// directory. Those of hosts killed with their plugins are swept when
	// the next one is made (newSocketDir).
	sockets, err := newSocketDir()
	if err != nil {
		return nil, fmt.Errorf("starting provider %q: %w", spec.Name, err)
	}
	cmd.Env = append(cmd.Env, goplugin.EnvUnixSocketDir+"="+sockets)
	tail := &tailBuffer{max: 4 << 10}
	pc := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  Handshake(),
		Plugins:          goplugin.PluginSet{PluginName: &ProviderPlugin{Name: spec.Name}},
		Cmd:              cmd,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		AutoMTLS:         true,
		SkipHostEnv:      true,
		StartTimeout:     timeout,
		Logger:           logger.Named("provider." + spec.Name),
		Stderr:           tail,
		GRPCDialOptions: []grpc.DialOption{
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessage), grpc.MaxCallSendMsgSize(maxMessage)),
		},
	})
	c, err := dispense(pc, spec.Name)
	if err != nil {
		pc.Kill()
		os.RemoveAll(sockets)
		return nil, startError(spec, err, tail.String())
	}
	if err := ctx.Err(); err != nil {
		pc.Kill()
		os.RemoveAll(sockets)
		return nil, fmt.Errorf("starting provider %q: %w", spec.Name, err)
	}
	c.exited = pc.Exited
	return &Client{GRPCClient: c, pc: pc, logger: logger, sockets: sockets}, nil
}

func dispense(pc *goplugin.Client, name string) (*GRPCClient, error) {
	rpc, err := pc.Client()
	if err != nil {
		return nil, err
	}
	raw, err := rpc.Dispense(PluginName)
	if err != nil {
		return nil, err
	}
	c, ok := raw.(*GRPCClient)
	if !ok {
		return nil, fmt.Errorf("plugin served %T, not a provider", raw)
	}
	c.Name = name
	return c, nil
}

// startError explains a failed start in the operator's terms. go-plugin's
// errors are plain strings, so the two common cases are recognised by text.
func startError(spec Spec, err error, stderr string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "starting provider %q (%s): ", spec.Name, spec.Path)
	msg := err.Error()
	switch {
	case strings.Contains(msg, "incompatible API version"):
		fmt.Fprintf(&b, "the plugin speaks another protocol major than this rackform (%d): %s; install a build of the provider for protocol %d",
			providers.ProtocolVersion, msg, providers.ProtocolVersion)
	case strings.Contains(msg, "exited before we could connect"), strings.Contains(msg, "Unrecognized remote plugin message"):
		fmt.Fprintf(&b, "the plugin handshake failed (%s): is this a rackform provider plugin for protocol %d?", msg, providers.ProtocolVersion)
	default:
		b.WriteString(msg)
	}
	if s := strings.TrimSpace(stderr); s != "" {
		fmt.Fprintf(&b, "\nplugin stderr (last lines):\n%s", s)
	}
	return errors.New(b.String())
}

// closeStopTimeout bounds the Stop that Close sends before ending the
// process: long enough for a provider to delete its BMC sessions, short
// enough that a wedged plugin cannot hold rackform's exit.
const closeStopTimeout = 30 * time.Second

// Close asks the provider to Stop (so it deletes its BMC sessions: real BMCs
// hold few, and a leaked one lingers until it times out), then ends the
// plugin process, gracefully if it answers and killed if not. Close takes
// no context on purpose: it is cleanup, which must still run after the
// caller's context was cancelled by an interrupt.
func (c *Client) Close() {
	if !c.pc.Exited() {
		ctx, cancel := context.WithTimeout(context.Background(), closeStopTimeout)
		if d := c.GRPCClient.Stop(ctx); d.HasErrors() {
			c.logger.Warn("provider did not stop cleanly", "provider", c.Name, "error", d.Err())
		}
		cancel()
	}
	c.pc.Kill()
	os.RemoveAll(c.sockets)
}

// Exited reports whether the plugin process has ended.
func (c *Client) Exited() bool { return c.pc.Exited() }

// tailBuffer keeps the last max bytes written to it: enough of the plugin's
// stderr to explain a failed start without holding its whole log.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
