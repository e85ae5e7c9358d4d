package plugin

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/rackform/rackform/providers"
	pb "github.com/rackform/rackform/providers/plugin/proto/providerv1"
)

// GRPCServer serves a providers.Provider as the gRPC Provider service. It is
// a thin shim: provider failures travel as diagnostics; the only gRPC errors
// it returns are those of the stream itself.
type GRPCServer struct {
	pb.UnimplementedProviderServer
	Impl providers.Provider
	// Logger receives the stack of a provider panic; nil discards it.
	Logger hclog.Logger
}

var _ pb.ProviderServer = (*GRPCServer)(nil)

// recoverPanic turns a panic in the provider's call into an error
// diagnostic, so one bad call does not take the plugin process (and every
// other call in flight) down. It must be deferred directly.
func (s *GRPCServer) recoverPanic(op, server string, diags *providers.Diagnostics) {
	r := recover()
	if r == nil {
		return
	}
	if s.Logger != nil {
		s.Logger.Error("provider panicked", "call", op, "server", server, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	}
	*diags = append(*diags, providers.Diagnostic{
		Severity: providers.Error,
		Summary:  "Provider panicked",
		Detail:   fmt.Sprintf("The provider panicked in %s: %v. This is a bug in the provider; its log has the stack.", op, r),
		Server:   server,
	})
}

// Describe implements pb.ProviderServer.
func (s *GRPCServer) Describe(ctx context.Context, _ *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	var d *providers.Description
	var diags providers.Diagnostics
	func() {
		defer s.recoverPanic("Describe", "", &diags)
		d, diags = s.Impl.Describe(ctx)
	}()
	return &pb.DescribeResponse{Description: descriptionToProto(d), Diagnostics: diagsToProto(diags)}, nil
}

// Configure implements pb.ProviderServer.
func (s *GRPCServer) Configure(ctx context.Context, req *pb.ConfigureRequest) (*pb.ConfigureResponse, error) {
	var diags providers.Diagnostics
	func() {
		defer s.recoverPanic("Configure", "", &diags)
		diags = s.Impl.Configure(ctx, &providers.ConfigureRequest{Config: req.GetConfig()})
	}()
	return &pb.ConfigureResponse{Diagnostics: diagsToProto(diags)}, nil
}

// errStreamClosed is returned to a provider that calls its callback after
// its Observe or Apply returned.
var errStreamClosed = errors.New("plugin: callback used after the call returned")

// stream serialises a provider's callbacks onto one gRPC server stream:
// providers call fn from many goroutines, and a gRPC stream allows one
// sender at a time. Send blocks while the client is not reading (HTTP/2 flow
// control), which is how a slow host slows a provider down instead of the
// plugin buffering a whole fleet.
type stream[T any] struct {
	mu     sync.Mutex
	send   func(*T) error
	err    error
	closed bool
}

func (s *stream[T]) Send(m *T) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errStreamClosed
	}
	if s.err != nil {
		return s.err
	}
	s.err = s.send(m)
	return s.err
}

// finish sends the terminal message unless the stream already broke.
func (s *stream[T]) finish(m *T) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.err != nil {
		return s.err
	}
	return s.send(m)
}

// Observe implements pb.ProviderServer.
func (s *GRPCServer) Observe(req *pb.ObserveRequest, srv pb.Provider_ObserveServer) error {
	out := &stream[pb.ObserveResponse]{send: srv.Send}
	r := &providers.ObserveRequest{Concurrency: int(req.GetConcurrency()), Targets: targetsFromProto(req.GetTargets())}
	var diags providers.Diagnostics
	func() {
		defer s.recoverPanic("Observe", "", &diags)
		diags = s.Impl.Observe(srv.Context(), r, func(o *providers.Observation) error {
			if o == nil {
				return errors.New("plugin: nil observation")
			}
			return out.Send(&pb.ObserveResponse{Event: &pb.ObserveResponse_Observation{Observation: observationToProto(o)}})
		})
	}()
	return out.finish(&pb.ObserveResponse{Event: &pb.ObserveResponse_Done{Done: &pb.ObserveDone{}}, Diagnostics: diagsToProto(diags)})
}

// Apply implements pb.ProviderServer.
func (s *GRPCServer) Apply(req *pb.ApplyRequest, srv pb.Provider_ApplyServer) error {
	out := &stream[pb.ApplyResponse]{send: srv.Send}
	step, err := stepFromProto(req.GetStep())
	if err != nil {
		return out.finish(&pb.ApplyResponse{Event: &pb.ApplyResponse_Done{Done: &pb.ApplyDone{}},
			Diagnostics: diagsToProto(providers.Diagnostics{{Severity: providers.Error, Summary: "Invalid step", Detail: err.Error(), Server: req.GetTarget().GetName()}})})
	}
	r := &providers.ApplyRequest{Target: targetFromProto(req.GetTarget()), Step: step, Last: req.GetLast()}
	var res *providers.ApplyResult
	var diags providers.Diagnostics
	func() {
		defer s.recoverPanic("Apply", r.Target.Name, &diags)
		res, diags = s.Impl.Apply(srv.Context(), r, func(p *providers.Progress) error {
			if p == nil {
				return errors.New("plugin: nil progress")
			}
			return out.Send(&pb.ApplyResponse{Event: &pb.ApplyResponse_Progress{Progress: progressToProto(p)}})
		})
	}()
	return out.finish(&pb.ApplyResponse{
		Event:       &pb.ApplyResponse_Done{Done: &pb.ApplyDone{Result: applyResultToProto(res)}},
		Diagnostics: diagsToProto(diags),
	})
}

// Task implements pb.ProviderServer.
func (s *GRPCServer) Task(ctx context.Context, req *pb.TaskRequest) (*pb.TaskResponse, error) {
	r := &providers.TaskRequest{Target: targetFromProto(req.GetTarget()), TaskURI: req.GetTaskUri()}
	var st *providers.TaskStatus
	var diags providers.Diagnostics
	func() {
		defer s.recoverPanic("Task", r.Target.Name, &diags)
		st, diags = s.Impl.Task(ctx, r)
	}()
	return &pb.TaskResponse{Status: taskStatusToProto(st), Diagnostics: diagsToProto(diags)}, nil
}

// Stop implements pb.ProviderServer.
func (s *GRPCServer) Stop(ctx context.Context, _ *pb.StopRequest) (*pb.StopResponse, error) {
	var diags providers.Diagnostics
	func() {
		defer s.recoverPanic("Stop", "", &diags)
		diags = s.Impl.Stop(ctx)
	}()
	return &pb.StopResponse{Diagnostics: diagsToProto(diags)}, nil
}
