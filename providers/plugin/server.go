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

// guard runs the provider's call fn, turning a panic in it into an error
// diagnostic, so one bad call does not take the plugin process (and every
// other call in flight) down.
func guard[T any](s *GRPCServer, op, server string, fn func() (T, providers.Diagnostics)) (res T, diags providers.Diagnostics) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if s.Logger != nil {
			s.Logger.Error("provider panicked", "call", op, "server", server, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
		diags = append(diags, providers.Errorf(server, "Provider panicked",
			fmt.Sprintf("The provider panicked in %s: %v. This is a bug in the provider; its log has the stack.", op, r))...)
	}()
	return fn()
}

// Describe implements pb.ProviderServer.
func (s *GRPCServer) Describe(ctx context.Context, _ *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	d, diags := guard(s, "Describe", "", func() (*providers.Description, providers.Diagnostics) { return s.Impl.Describe(ctx) })
	return &pb.DescribeResponse{Description: descriptionToProto(d), Diagnostics: diagsToProto(diags)}, nil
}

// Configure implements pb.ProviderServer.
func (s *GRPCServer) Configure(ctx context.Context, req *pb.ConfigureRequest) (*pb.ConfigureResponse, error) {
	_, diags := guard(s, "Configure", "", func() (any, providers.Diagnostics) {
		return nil, s.Impl.Configure(ctx, &providers.ConfigureRequest{Config: req.GetConfig()})
	})
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
	_, diags := guard(s, "Observe", "", func() (any, providers.Diagnostics) {
		return nil, s.Impl.Observe(srv.Context(), r, func(o *providers.Observation) error {
			if o == nil {
				return errors.New("plugin: nil observation")
			}
			return out.Send(&pb.ObserveResponse{Event: &pb.ObserveResponse_Observation{Observation: observationToProto(o)}})
		})
	})
	return out.finish(&pb.ObserveResponse{Event: &pb.ObserveResponse_Done{Done: &pb.ObserveDone{}}, Diagnostics: diagsToProto(diags)})
}

// Apply implements pb.ProviderServer.
func (s *GRPCServer) Apply(req *pb.ApplyRequest, srv pb.Provider_ApplyServer) error {
	out := &stream[pb.ApplyResponse]{send: srv.Send}
	step, err := stepFromProto(req.GetStep())
	if err != nil {
		return out.finish(&pb.ApplyResponse{Event: &pb.ApplyResponse_Done{Done: &pb.ApplyDone{}},
			Diagnostics: diagsToProto(providers.Errorf(req.GetTarget().GetName(), "Invalid step", err.Error()))})
	}
	r := &providers.ApplyRequest{Target: targetFromProto(req.GetTarget()), Step: step, Last: req.GetLast()}
	res, diags := guard(s, "Apply", r.Target.Name, func() (*providers.ApplyResult, providers.Diagnostics) {
		return s.Impl.Apply(srv.Context(), r, func(p *providers.Progress) error {
			if p == nil {
				return errors.New("plugin: nil progress")
			}
			return out.Send(&pb.ApplyResponse{Event: &pb.ApplyResponse_Progress{Progress: progressToProto(p)}})
		})
	})
	return out.finish(&pb.ApplyResponse{
		Event:       &pb.ApplyResponse_Done{Done: &pb.ApplyDone{Result: applyResultToProto(res)}},
		Diagnostics: diagsToProto(diags),
	})
}

// Task implements pb.ProviderServer.
func (s *GRPCServer) Task(ctx context.Context, req *pb.TaskRequest) (*pb.TaskResponse, error) {
	r := &providers.TaskRequest{Target: targetFromProto(req.GetTarget()), TaskURI: req.GetTaskUri()}
	st, diags := guard(s, "Task", r.Target.Name, func() (*providers.TaskStatus, providers.Diagnostics) { return s.Impl.Task(ctx, r) })
	return &pb.TaskResponse{Status: taskStatusToProto(st), Diagnostics: diagsToProto(diags)}, nil
}

// Stop implements pb.ProviderServer.
func (s *GRPCServer) Stop(ctx context.Context, _ *pb.StopRequest) (*pb.StopResponse, error) {
	_, diags := guard(s, "Stop", "", func() (any, providers.Diagnostics) { return nil, s.Impl.Stop(ctx) })
	return &pb.StopResponse{Diagnostics: diagsToProto(diags)}, nil
}
