package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rackform/rackform/providers"
	pb "github.com/rackform/rackform/providers/plugin/proto/providerv1"
)

// GRPCClient is the host's providers.Provider backed by a plugin's gRPC
// service. Transport failures (the plugin crashed, a stream broke) become
// error diagnostics naming the provider and, where known, the server.
type GRPCClient struct {
	// Name is the provider's name, used in messages.
	Name   string
	client pb.ProviderClient
	// exited reports whether the plugin process is gone; nil when unknown
	// (in-process tests).
	exited func() bool
}

var _ providers.Provider = (*GRPCClient)(nil)

// transportDiags describes a failed RPC. The cause is the gRPC status; the
// caller's own cancellation is reported as such, not as a plugin failure.
func (c *GRPCClient) transportDiags(ctx context.Context, op, server string, err error) providers.Diagnostics {
	st := status.Convert(err)
	if ctx.Err() != nil || st.Code() == codes.Canceled {
		return providers.Errorf(server, "Cancelled", fmt.Sprintf("%s on provider %q was cancelled: %v.", op, c.Name, context.Cause(ctx)))
	}
	detail := fmt.Sprintf("%s on provider %q failed: %s (%s).", op, c.Name, st.Message(), st.Code())
	if c.processExited() {
		// The plugin is gone: a fault of the provider, not of the server.
		detail += " The plugin process has exited; its last log lines say why."
		return providers.Unavailable(server, detail)
	}
	if st.Code() == codes.Unavailable {
		// The connection to the plugin broke: the call's fate is unknown.
		return providers.Unavailable(server, detail)
	}
	return providers.Errorf(server, fmt.Sprintf("Provider %q failed", c.Name), detail)
}

func (c *GRPCClient) brokenStream(op, server string) providers.Diagnostics {
	detail := fmt.Sprintf("The %s stream of provider %q ended before the provider finished.", op, c.Name)
	if c.processExited() {
		detail += " The plugin process has exited; its last log lines say why."
		return providers.Unavailable(server, detail)
	}
	return providers.Errorf(server, fmt.Sprintf("Provider %q failed", c.Name), detail)
}

// processExited reports whether the plugin process is gone. A broken
// connection is usually seen a moment before the process is reaped, so it
// waits briefly: this runs only on the error path, where saying "the plugin
// exited" rather than "the connection failed" is worth a few milliseconds.
func (c *GRPCClient) processExited() bool {
	if c.exited == nil {
		return false
	}
	for range 25 {
		if c.exited() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// Describe implements providers.Provider.
func (c *GRPCClient) Describe(ctx context.Context) (*providers.Description, providers.Diagnostics) {
	resp, err := c.client.Describe(ctx, &pb.DescribeRequest{})
	if err != nil {
		return nil, c.transportDiags(ctx, "Describe", "", err)
	}
	return descriptionFromProto(resp.GetDescription()), diagsFromProto(resp.GetDiagnostics())
}

// Configure implements providers.Provider. The config may hold secrets: it
// is sent as opaque bytes and never formatted.
func (c *GRPCClient) Configure(ctx context.Context, req *providers.ConfigureRequest) providers.Diagnostics {
	resp, err := c.client.Configure(ctx, &pb.ConfigureRequest{Config: req.Config})
	if err != nil {
		return c.transportDiags(ctx, "Configure", "", err)
	}
	return diagsFromProto(resp.GetDiagnostics())
}

// Observe implements providers.Provider. fn is called from this goroutine
// only, one observation at a time, as they arrive; while fn runs, nothing
// more is read, so a slow caller slows the provider instead of memory
// filling up. If the transport fails, every target not yet observed is
// still reported once, unreachable, so no server is silently dropped.
func (c *GRPCClient) Observe(ctx context.Context, req *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	in := &pb.ObserveRequest{Concurrency: int32(req.Concurrency)}
	for _, t := range req.Targets {
		in.Targets = append(in.Targets, targetToProto(t))
	}
	seen := make(map[string]bool, len(req.Targets))
	var diags providers.Diagnostics
	fail := func(d providers.Diagnostics) providers.Diagnostics {
		diags = append(diags, d...)
		if ctx.Err() != nil {
			return diags
		}
		for _, t := range req.Targets {
			if seen[t.Name] {
				continue
			}
			seen[t.Name] = true
			detail := fmt.Sprintf("Provider %q failed before it reported this server.", c.Name)
			od := providers.Errorf(t.Name, "Not observed", detail)
			if d.Unavailable() {
				od = providers.Unavailable(t.Name, detail)
			}
			o := &providers.Observation{Server: t.Name, Diagnostics: od}
			if err := fn(o); err != nil {
				return append(diags, callbackDiags("Observe", c.Name, "", err)...)
			}
		}
		return diags
	}

	srv, err := c.client.Observe(ctx, in)
	if err != nil {
		return fail(c.transportDiags(ctx, "Observe", "", err))
	}
	for {
		resp, err := srv.Recv()
		if errors.Is(err, io.EOF) {
			return fail(c.brokenStream("Observe", ""))
		}
		if err != nil {
			return fail(c.transportDiags(ctx, "Observe", "", err))
		}
		diags = append(diags, diagsFromProto(resp.GetDiagnostics())...)
		switch ev := resp.GetEvent().(type) {
		case *pb.ObserveResponse_Observation:
			o := observationFromProto(ev.Observation)
			seen[o.Server] = true
			if err := fn(o); err != nil {
				return append(diags, callbackDiags("Observe", c.Name, "", err)...)
			}
		case *pb.ObserveResponse_Done:
			return diags
		}
	}
}

// callbackDiags reports that the caller's callback stopped a call.
func callbackDiags(op, provider, server string, err error) providers.Diagnostics {
	return providers.Errorf(server, op+" stopped", fmt.Sprintf("%s on provider %q stopped: %v.", op, provider, err))
}

// Apply implements providers.Provider. Progress is passed to fn as it
// arrives, so a TaskURI reaches the caller (and its journal) before the
// provider starts waiting on the task.
func (c *GRPCClient) Apply(ctx context.Context, req *providers.ApplyRequest, fn func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	server := req.Target.Name
	srv, err := c.client.Apply(ctx, &pb.ApplyRequest{Target: targetToProto(req.Target), Step: stepToProto(req.Step), Last: req.Last})
	if err != nil {
		return nil, c.transportDiags(ctx, "Apply", server, err)
	}
	var diags providers.Diagnostics
	for {
		resp, err := srv.Recv()
		if errors.Is(err, io.EOF) {
			return nil, append(diags, c.brokenStream("Apply", server)...)
		}
		if err != nil {
			return nil, append(diags, c.transportDiags(ctx, "Apply", server, err)...)
		}
		diags = append(diags, diagsFromProto(resp.GetDiagnostics())...)
		switch ev := resp.GetEvent().(type) {
		case *pb.ApplyResponse_Progress:
			if err := fn(progressFromProto(ev.Progress)); err != nil {
				return nil, append(diags, callbackDiags("Apply", c.Name, server, err)...)
			}
		case *pb.ApplyResponse_Done:
			return applyResultFromProto(ev.Done.GetResult()), diags
		}
	}
}

// Task implements providers.Provider.
func (c *GRPCClient) Task(ctx context.Context, req *providers.TaskRequest) (*providers.TaskStatus, providers.Diagnostics) {
	resp, err := c.client.Task(ctx, &pb.TaskRequest{Target: targetToProto(req.Target), TaskUri: req.TaskURI})
	if err != nil {
		return nil, c.transportDiags(ctx, "Task", req.Target.Name, err)
	}
	return taskStatusFromProto(resp.GetStatus()), diagsFromProto(resp.GetDiagnostics())
}

// Stop implements providers.Provider.
func (c *GRPCClient) Stop(ctx context.Context) providers.Diagnostics {
	resp, err := c.client.Stop(ctx, &pb.StopRequest{})
	if err != nil {
		return c.transportDiags(ctx, "Stop", "", err)
	}
	return diagsFromProto(resp.GetDiagnostics())
}
