package plugin

import (
	"github.com/rackform/rackform/providers"
	pb "github.com/rackform/rackform/providers/plugin/proto/providerv1"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// The functions below map the contract's plain Go types to the wire and
// back. Each pair must round-trip: convert_test.go checks it field by field,
// so a field added to providers without a wire counterpart fails a test.

func diagsToProto(ds providers.Diagnostics) []*pb.Diagnostic {
	if len(ds) == 0 {
		return nil
	}
	out := make([]*pb.Diagnostic, len(ds))
	for i, d := range ds {
		sev := pb.Severity_SEVERITY_ERROR
		if d.Severity == providers.Warning {
			sev = pb.Severity_SEVERITY_WARNING
		}
		out[i] = &pb.Diagnostic{Severity: sev, Summary: d.Summary, Detail: d.Detail, Server: d.Server}
	}
	return out
}

func diagsFromProto(ds []*pb.Diagnostic) providers.Diagnostics {
	if len(ds) == 0 {
		return nil
	}
	out := make(providers.Diagnostics, len(ds))
	for i, d := range ds {
		// An unknown or missing severity is treated as an error: a newer
		// plugin's new severity must not make a failure look harmless.
		sev := providers.Error
		if d.GetSeverity() == pb.Severity_SEVERITY_WARNING {
			sev = providers.Warning
		}
		out[i] = providers.Diagnostic{Severity: sev, Summary: d.GetSummary(), Detail: d.GetDetail(), Server: d.GetServer()}
	}
	return out
}

func descriptionToProto(d *providers.Description) *pb.Description {
	if d == nil {
		return nil
	}
	out := &pb.Description{
		Name:            d.Name,
		Version:         d.Version,
		ProtocolVersion: int32(d.ProtocolVersion),
		Capabilities:    d.Capabilities,
	}
	for _, a := range d.Schema {
		out.Schema = append(out.Schema, &pb.Attribute{
			Name: a.Name, Type: a.Type, Required: a.Required, Sensitive: a.Sensitive, Description: a.Description,
		})
	}
	return out
}

func descriptionFromProto(d *pb.Description) *providers.Description {
	if d == nil {
		return nil
	}
	out := &providers.Description{
		Name:            d.GetName(),
		Version:         d.GetVersion(),
		ProtocolVersion: int(d.GetProtocolVersion()),
		Capabilities:    d.GetCapabilities(),
	}
	for _, a := range d.GetSchema() {
		out.Schema = append(out.Schema, providers.Attribute{
			Name: a.GetName(), Type: a.GetType(), Required: a.GetRequired(), Sensitive: a.GetSensitive(), Description: a.GetDescription(),
		})
	}
	return out
}

func targetToProto(t providers.Target) *pb.Target {
	out := &pb.Target{Name: t.Name, Endpoint: t.Endpoint}
	if t.Credentials != nil {
		out.Credentials = &pb.Credentials{Username: t.Credentials.Username, Password: t.Credentials.Password}
	}
	return out
}

func targetFromProto(t *pb.Target) providers.Target {
	out := providers.Target{Name: t.GetName(), Endpoint: t.GetEndpoint()}
	if c := t.GetCredentials(); c != nil {
		out.Credentials = &providers.Credentials{Username: c.GetUsername(), Password: c.GetPassword()}
	}
	return out
}

func observationToProto(o *providers.Observation) *pb.Observation {
	if o == nil {
		return nil
	}
	out := &pb.Observation{
		Server:      o.Server,
		Reachable:   o.Reachable,
		PowerState:  o.PowerState,
		Health:      o.Health,
		Fingerprint: o.Fingerprint,
		Diagnostics: diagsToProto(o.Diagnostics),
	}
	for _, c := range o.Components {
		out.Components = append(out.Components, &pb.Component{
			Id: c.ID, Name: c.Name, SoftwareId: c.SoftwareID, Version: c.Version, Updateable: c.Updateable,
		})
	}
	return out
}

func observationFromProto(o *pb.Observation) *providers.Observation {
	if o == nil {
		return nil
	}
	out := &providers.Observation{
		Server:      o.GetServer(),
		Reachable:   o.GetReachable(),
		PowerState:  o.GetPowerState(),
		Health:      o.GetHealth(),
		Fingerprint: o.GetFingerprint(),
		Diagnostics: diagsFromProto(o.GetDiagnostics()),
	}
	for _, c := range o.GetComponents() {
		out.Components = append(out.Components, providers.Component{
			ID: c.GetId(), Name: c.GetName(), SoftwareID: c.GetSoftwareId(), Version: c.GetVersion(), Updateable: c.GetUpdateable(),
		})
	}
	return out
}

func matchToProto(m providers.Match) *pb.Match {
	return &pb.Match{SoftwareId: m.SoftwareID, Id: m.ID, NamePattern: m.NamePattern}
}

func matchFromProto(m *pb.Match) providers.Match {
	return providers.Match{SoftwareID: m.GetSoftwareId(), ID: m.GetId(), NamePattern: m.GetNamePattern()}
}

func stepToProto(s providers.Step) *pb.Step {
	out := &pb.Step{
		Kind:      string(s.Kind),
		Component: s.Component,
		Match:     matchToProto(s.Match),
		Version:   s.Version,
		ImageUri:  s.ImageURI,
		ApplyTime: s.ApplyTime,
		Method:    s.Method,
		ResetType: s.ResetType,
	}
	if s.Timeout != 0 {
		out.Timeout = durationpb.New(s.Timeout)
	}
	if !s.ResumeSince.IsZero() {
		out.ResumeSince = timestamppb.New(s.ResumeSince)
	}
	for _, e := range s.Expect {
		out.Expect = append(out.Expect, &pb.Expectation{Component: e.Component, Match: matchToProto(e.Match), Version: e.Version})
	}
	return out
}

func stepFromProto(s *pb.Step) providers.Step {
	out := providers.Step{
		Kind:      providers.StepKind(s.GetKind()),
		Component: s.GetComponent(),
		Match:     matchFromProto(s.GetMatch()),
		Version:   s.GetVersion(),
		ImageURI:  s.GetImageUri(),
		ApplyTime: s.GetApplyTime(),
		Method:    s.GetMethod(),
		ResetType: s.GetResetType(),
	}
	if t := s.GetTimeout(); t != nil {
		out.Timeout = t.AsDuration()
	}
	if t := s.GetResumeSince(); t != nil {
		out.ResumeSince = t.AsTime()
	}
	for _, e := range s.GetExpect() {
		out.Expect = append(out.Expect, providers.Expectation{Component: e.GetComponent(), Match: matchFromProto(e.GetMatch()), Version: e.GetVersion()})
	}
	return out
}

func progressToProto(p *providers.Progress) *pb.Progress {
	return &pb.Progress{Message: p.Message, Percent: int32(p.Percent), TaskUri: p.TaskURI}
}

func progressFromProto(p *pb.Progress) *providers.Progress {
	return &providers.Progress{Message: p.GetMessage(), Percent: int(p.GetPercent()), TaskURI: p.GetTaskUri()}
}

func applyResultToProto(r *providers.ApplyResult) *pb.ApplyResult {
	if r == nil {
		return nil
	}
	return &pb.ApplyResult{TaskUri: r.TaskURI, Message: r.Message, Observation: observationToProto(r.Observation)}
}

func applyResultFromProto(r *pb.ApplyResult) *providers.ApplyResult {
	if r == nil {
		return nil
	}
	return &providers.ApplyResult{TaskURI: r.GetTaskUri(), Message: r.GetMessage(), Observation: observationFromProto(r.GetObservation())}
}

func taskStatusToProto(s *providers.TaskStatus) *pb.TaskStatus {
	if s == nil {
		return nil
	}
	return &pb.TaskStatus{Uri: s.URI, State: s.State, Percent: int32(s.Percent), Messages: s.Messages}
}

func taskStatusFromProto(s *pb.TaskStatus) *providers.TaskStatus {
	if s == nil {
		return nil
	}
	return &providers.TaskStatus{URI: s.GetUri(), State: s.GetState(), Percent: int(s.GetPercent()), Messages: s.GetMessages()}
}
