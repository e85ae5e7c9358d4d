package plugin

import (
	"fmt"
	"strconv"
	"unique"

	"github.com/rackform/rackform/config/version"

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
	out := &pb.Target{Name: t.Name, Endpoint: t.Endpoint, System: t.System, Auth: t.Auth, Device: t.Device}
	if t.Credentials != nil {
		out.Credentials = &pb.Credentials{Username: t.Credentials.Username, Password: t.Credentials.Password}
	}
	for _, u := range t.Updates {
		out.Updates = append(out.Updates, &pb.UpdateIntent{
			Component: u.Component, Match: matchToProto(u.Match), ImageUri: u.ImageURI, ApplyTime: u.ApplyTime, Method: u.Method,
		})
	}
	return out
}

func targetFromProto(t *pb.Target) providers.Target {
	return new(targetReader).target(t)
}

// targetsFromProto converts the targets of one request. What servers have
// in common is converted once and shared: a fleet's servers of one role
// carry the same updates and credentials, and their copies, held while the
// provider observes, were the part of a plugin's heap that grows with the
// fleet (22 MB of its sampled heap at 20,000 servers, 1.1 KB a server; at
// 100,000 the plugin's heap sat at its memory limit and the collector took
// 29% of its CPU, 18% since). The provider reads targets and never changes
// them.
func targetsFromProto(ts []*pb.Target) []providers.Target {
	r := &targetReader{creds: map[providers.Credentials]*providers.Credentials{}, updates: map[string][]providers.UpdateIntent{}}
	out := make([]providers.Target, len(ts))
	for i, t := range ts {
		out[i] = r.target(t)
	}
	return out
}

// targetReader converts targets, sharing equal credentials and update
// lists among them when its maps are set.
type targetReader struct {
	creds   map[providers.Credentials]*providers.Credentials
	updates map[string][]providers.UpdateIntent
	key     []byte
}

func (r *targetReader) target(t *pb.Target) providers.Target {
	out := providers.Target{Name: t.GetName(), Endpoint: t.GetEndpoint(), System: intern(t.GetSystem()), Auth: intern(t.GetAuth()), Device: intern(t.GetDevice())}
	if c := t.GetCredentials(); c != nil {
		creds := providers.Credentials{Username: c.GetUsername(), Password: c.GetPassword()}
		if out.Credentials = r.creds[creds]; out.Credentials == nil {
			out.Credentials = &creds
			if r.creds != nil {
				r.creds[creds] = out.Credentials
			}
		}
	}
	us := t.GetUpdates()
	if len(us) == 0 {
		return out
	}
	if r.updates != nil {
		r.key = r.key[:0]
		for _, u := range us {
			m := u.GetMatch()
			for _, s := range []string{u.GetComponent(), m.GetSoftwareId(), m.GetId(), m.GetNamePattern(), u.GetImageUri(), u.GetApplyTime(), u.GetMethod()} {
				r.key = append(strconv.AppendInt(r.key, int64(len(s)), 10), ':')
				r.key = append(r.key, s...)
			}
			r.key = append(strconv.AppendInt(r.key, int64(m.GetCount()), 10), ';')
		}
		if shared, ok := r.updates[string(r.key)]; ok {
			out.Updates = shared
			return out
		}
	}
	out.Updates = make([]providers.UpdateIntent, len(us))
	for i, u := range us {
		m := matchFromProto(u.GetMatch())
		m.SoftwareID, m.ID, m.NamePattern = intern(m.SoftwareID), intern(m.ID), intern(m.NamePattern)
		out.Updates[i] = providers.UpdateIntent{
			Component: intern(u.GetComponent()), Match: m, ImageURI: intern(u.GetImageUri()), ApplyTime: intern(u.GetApplyTime()), Method: intern(u.GetMethod()),
		}
	}
	if r.updates != nil {
		r.updates[string(r.key)] = out.Updates
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
		Outcome:     o.Outcome,
		System:      o.System,
		Auth:        o.Auth,
	}
	if len(o.Components) > 0 {
		// One array for every component of the server, not one
		// allocation each: a plan sends a few dozen per server.
		cs := make([]pb.Component, len(o.Components))
		out.Components = make([]*pb.Component, len(o.Components))
		for i, c := range o.Components {
			pc := &cs[i]
			pc.Id, pc.Name, pc.SoftwareId, pc.Version, pc.Updateable = c.ID, c.Name, c.SoftwareID, c.Version, c.Updateable
			pc.Source, pc.Shared, pc.State, pc.StateSign = c.Source, c.Shared, c.State, c.StateSign
			out.Components[i] = pc
		}
	}
	for _, s := range o.Systems {
		out.Systems = append(out.Systems, &pb.SystemRef{Id: s.ID, Uuid: s.UUID, Name: s.Name})
	}
	if !o.Identity.IsZero() {
		out.Identity = &pb.Identity{Uuid: o.Identity.UUID, SerialNumber: o.Identity.SerialNumber,
			Manufacturer: o.Identity.Manufacturer, Model: o.Identity.Model}
	}
	for _, u := range o.Updates {
		out.Updates = append(out.Updates, &pb.UpdatePlan{Component: u.Component, Method: u.Method,
			TransferProtocol: u.TransferProtocol, Targets: u.Targets, Problem: u.Problem,
			Members: u.Members, TargetsPerRequest: int32(u.TargetsPerRequest), ApplyTime: u.ApplyTime, ApplyTimeFrom: u.ApplyTimeFrom})
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
		PowerState:  intern(o.GetPowerState()),
		Health:      intern(o.GetHealth()),
		Fingerprint: o.GetFingerprint(),
		Diagnostics: diagsFromProto(o.GetDiagnostics()),
		Outcome:     intern(o.GetOutcome()),
		System:      intern(o.GetSystem()),
		Auth:        intern(o.GetAuth()),
	}
	if cs := o.GetComponents(); len(cs) > 0 {
		out.Components = make([]providers.Component, len(cs))
		for i, c := range cs {
			out.Components[i] = providers.Component{
				ID: intern(c.GetId()), Name: intern(c.GetName()), SoftwareID: intern(c.GetSoftwareId()), Version: intern(c.GetVersion()),
				Updateable: c.GetUpdateable(), Source: intern(c.GetSource()), Shared: c.GetShared(),
				State: intern(c.GetState()), StateSign: intern(c.GetStateSign()),
			}
		}
	}
	for _, s := range o.GetSystems() {
		out.Systems = append(out.Systems, providers.SystemRef{ID: s.GetId(), UUID: s.GetUuid(), Name: s.GetName()})
	}
	if id := o.GetIdentity(); id != nil {
		out.Identity = providers.Identity{UUID: id.GetUuid(), SerialNumber: id.GetSerialNumber(),
			Manufacturer: intern(id.GetManufacturer()), Model: intern(id.GetModel())}
	}
	for _, u := range o.GetUpdates() {
		out.Updates = append(out.Updates, providers.UpdatePlan{Component: intern(u.GetComponent()), Method: intern(u.GetMethod()),
			TransferProtocol: intern(u.GetTransferProtocol()), Targets: internAll(u.GetTargets()), Problem: u.GetProblem(),
			Members: internAll(u.GetMembers()), TargetsPerRequest: int(u.GetTargetsPerRequest()), ApplyTime: intern(u.GetApplyTime()), ApplyTimeFrom: u.GetApplyTimeFrom()})
	}
	return out
}

// intern returns the one shared copy of a short string: a fleet's
// observations repeat the same component ids, names and versions on every
// server, and the host holds them all until the plan is written.
func intern(s string) string {
	if s == "" || len(s) > 128 {
		return s
	}
	return unique.Make(s).Value()
}

// internAll interns each of ss in place (the update's member and target
// URIs, the same on every server of a model, kept in the plan's steps).
func internAll(ss []string) []string {
	for i := range ss {
		ss[i] = intern(ss[i])
	}
	return ss
}

func matchToProto(m providers.Match) *pb.Match {
	return &pb.Match{SoftwareId: m.SoftwareID, Id: m.ID, NamePattern: m.NamePattern, Count: int32(m.Count)}
}

func matchFromProto(m *pb.Match) providers.Match {
	return providers.Match{SoftwareID: m.GetSoftwareId(), ID: m.GetId(), NamePattern: m.GetNamePattern(), Count: int(m.GetCount())}
}

func stepToProto(s providers.Step) *pb.Step {
	out := &pb.Step{
		Kind:      string(s.Kind),
		Component: s.Component,
		Match:     matchToProto(s.Match),
		Version:   s.Target.Version,
		ImageUri:  s.ImageURI,
		ApplyTime: s.ApplyTime,
		Method:    s.Method,
		ResetType: s.ResetType,

		TransferProtocol: s.TransferProtocol,
		Targets:          s.Targets,
		Sha256:           s.SHA256,
		Scheme:           string(s.Target.Scheme),
		Pattern:          s.Target.Pattern,
		AcceptCritical:   s.AcceptCritical,
	}
	if s.Timeout != 0 {
		out.Timeout = durationpb.New(s.Timeout)
	}
	if !s.ResumeSince.IsZero() {
		out.ResumeSince = timestamppb.New(s.ResumeSince)
	}
	for _, e := range s.Expect {
		out.Expect = append(out.Expect, &pb.Expectation{Component: e.Component, Match: matchToProto(e.Match), Version: e.Target.Version,
			Scheme: string(e.Target.Scheme), Pattern: e.Target.Pattern})
	}
	return out
}

// stepFromProto reads a step off the wire, its targets with
// version.ParseTarget: a scheme or pattern that cannot be used is an
// error naming the component.
func stepFromProto(s *pb.Step) (providers.Step, error) {
	tgt, err := version.ParseTarget(s.GetVersion(), version.Scheme(s.GetScheme()), s.GetPattern())
	if err != nil {
		return providers.Step{}, fmt.Errorf("the target of step %s %s: %w", s.GetKind(), s.GetComponent(), err)
	}
	out := providers.Step{
		Kind:      providers.StepKind(s.GetKind()),
		Component: s.GetComponent(),
		Match:     matchFromProto(s.GetMatch()),
		Target:    tgt,
		ImageURI:  s.GetImageUri(),
		ApplyTime: s.GetApplyTime(),
		Method:    s.GetMethod(),
		ResetType: s.GetResetType(),

		TransferProtocol: s.GetTransferProtocol(),
		Targets:          s.GetTargets(),
		SHA256:           s.GetSha256(),
		AcceptCritical:   s.GetAcceptCritical(),
	}
	if t := s.GetTimeout(); t != nil {
		out.Timeout = t.AsDuration()
	}
	if t := s.GetResumeSince(); t != nil {
		out.ResumeSince = t.AsTime()
	}
	for _, e := range s.GetExpect() {
		t, err := version.ParseTarget(e.GetVersion(), version.Scheme(e.GetScheme()), e.GetPattern())
		if err != nil {
			return providers.Step{}, fmt.Errorf("the expected version of %s: %w", e.GetComponent(), err)
		}
		out.Expect = append(out.Expect, providers.Expectation{Component: e.GetComponent(), Match: matchFromProto(e.GetMatch()), Target: t})
	}
	return out, nil
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
	return &pb.ApplyResult{TaskUri: r.TaskURI, TaskState: r.TaskState, Message: r.Message, Observation: observationToProto(r.Observation)}
}

func applyResultFromProto(r *pb.ApplyResult) *providers.ApplyResult {
	if r == nil {
		return nil
	}
	return &providers.ApplyResult{TaskURI: r.GetTaskUri(), TaskState: r.GetTaskState(), Message: r.GetMessage(), Observation: observationFromProto(r.GetObservation())}
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
