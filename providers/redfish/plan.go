package redfish

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/rackform/rackform/providers"
)

// Choosing how an image reaches a BMC, at Observe, from what the BMC
// advertises; apply then does exactly what the plan says.
//
// Automatic preference (no override):
//  1. simple_update — UpdateService.SimpleUpdate, the BMC pulls ImageURI,
//     when the action exists, the image is a URL, and the URL's scheme is a
//     TransferProtocol the BMC allows (ActionInfo AllowableValues, or the
//     action's own annotation; no list means any);
//  2. multipart_push — MultipartHttpPushUri (Redfish 2019.4+);
//  3. http_push — HttpPushUri;
//  4. otherwise a Problem naming what the BMC offers.
//
// The image is for every active member the rule selects (Members): only
// members that do not run, or one that is not updateable, is a Problem.
// TransferProtocol is filled when the BMC requires or lists it; Targets
// are the members (the System or Manager for versions read there) when the
// BMC takes Targets and allows each of them, with how many one request may
// name (TargetsPerRequest, from the ActionInfo). A required parameter
// rackform cannot give is a Problem. The apply time is sent only where the
// BMC lists it for the method (chooseApplyTime).

// planUpdate answers one update intent: how the image reaches every
// active member the rule selects.
func planUpdate(in providers.UpdateIntent, st *state, us *updateInfo, usErr error) providers.UpdatePlan {
	plan := providers.UpdatePlan{Component: in.Component}
	var (
		members []*invItem
		others  []providers.Component
	)
	for i := range st.items {
		switch it := &st.items[i]; {
		case !in.Match.Selects(it.Component):
		case it.IsActive():
			members = append(members, it)
		default:
			others = append(others, it.Component)
		}
	}
	if len(members) == 0 {
		if len(others) > 0 {
			plan.Problem = fmt.Sprintf("no member that runs matches %s, only %s", matchText(in.Match), providers.MembersText(others))
			return plan
		}
		var ids []string
		for _, x := range st.items {
			ids = append(ids, x.ID)
		}
		plan.Problem = fmt.Sprintf("no component on this BMC matches %s (it reports %s)", matchText(in.Match), strings.Join(ids, ", "))
		return plan
	}
	uris := make([]string, len(members))
	for i, it := range members {
		if !it.Updateable {
			plan.Problem = fmt.Sprintf("%s is not updateable on this BMC (Updateable is false)", componentText(it.Component))
			return plan
		}
		uris[i] = it.URI
	}
	if us == nil {
		why := "the BMC offers no UpdateService"
		if usErr != nil {
			why = "the BMC's UpdateService could not be read: " + describe(usErr)
		}
		plan.Problem = why
		return plan
	}
	if us.Offline != "" {
		// Rule 47: no image is sent to a service that says it takes none.
		plan.Problem = us.Offline + ", so it takes no image in this run"
		return plan
	}
	// A version read from the System or Manager is updated by naming that
	// resource, whether or not the BMC describes Targets.
	fallback := len(members) == 1 && (members[0].Source == providers.SourceSystem || members[0].Source == providers.SourceManager)

	// option is how one method would carry the image; why, when set, is
	// why it cannot.
	type option struct {
		why        string
		proto      string
		targets    []string
		perRequest int
	}
	simple := func() option {
		if us.SimpleUpdateTarget == "" {
			return option{why: "the BMC has no UpdateService.SimpleUpdate"}
		}
		u, err := url.Parse(in.ImageURI)
		if err != nil || u.Host == "" || u.Scheme == "file" {
			return option{why: "SimpleUpdate needs an image URL the BMC can fetch, not a local path"}
		}
		var o option
		scheme := strings.ToUpper(u.Scheme)
		if p, ok := us.param("TransferProtocol"); ok {
			if len(p.AllowableValues) > 0 && !slices.ContainsFunc(p.AllowableValues, func(v string) bool { return strings.EqualFold(v, scheme) }) {
				return option{why: fmt.Sprintf("SimpleUpdate allows TransferProtocol %s, not the image URL's %s", strings.Join(p.AllowableValues, ", "), scheme)}
			}
			if p.Required || len(p.AllowableValues) > 0 {
				o.proto = scheme
			}
		}
		p, described := us.param("Targets")
		refused := ""
		for _, u := range uris {
			if len(p.AllowableValues) > 0 && !slices.Contains(p.AllowableValues, u) {
				refused = u
				break
			}
		}
		switch {
		case described && refused != "":
			if p.Required || fallback {
				return option{why: fmt.Sprintf("SimpleUpdate's Targets do not allow %s", refused)}
			}
			// Targets optional and a member not listed: send none (the
			// image says what it is for).
		case described, fallback:
			o.targets = uris
			o.perRequest = targetsPerRequest(p)
		}
		for _, p := range us.Params {
			if p.Required && !slices.Contains([]string{"ImageURI", "TransferProtocol", "Targets"}, p.Name) {
				return option{why: fmt.Sprintf("SimpleUpdate requires the parameter %s, which rackform cannot give", p.Name)}
			}
		}
		return o
	}
	multipart := func() option {
		if us.MultipartHTTPPushURI == "" {
			return option{why: "the BMC has no MultipartHttpPushUri"}
		}
		return option{targets: uris}
	}
	push := func() option {
		if us.HTTPPushURI == "" {
			return option{why: "the BMC has no HttpPushUri"}
		}
		return option{}
	}
	options := map[string]func() option{providers.MethodSimpleUpdate: simple, providers.MethodMultipartPush: multipart, providers.MethodHTTPPush: push}
	var order []string
	switch m := in.Method; m {
	case "", MethodAuto:
		order = []string{providers.MethodSimpleUpdate, providers.MethodMultipartPush, providers.MethodHTTPPush}
	case MethodPush:
		order = []string{providers.MethodMultipartPush, providers.MethodHTTPPush}
	default:
		if options[m] == nil {
			plan.Problem = fmt.Sprintf("update method %q is not one the redfish provider knows (simple_update, multipart_push, http_push)", m)
			return plan
		}
		order = []string{m}
	}
	var whys []string
	for _, m := range order {
		o := options[m]()
		if o.why == "" {
			plan.Method, plan.TransferProtocol, plan.Targets, plan.TargetsPerRequest = m, o.proto, o.targets, o.perRequest
			for _, it := range members {
				plan.Members = append(plan.Members, it.ID)
			}
			plan.ApplyTime, plan.ApplyTimeFrom = chooseApplyTime(in.ApplyTime, m, us)
			return plan
		}
		whys = append(whys, o.why)
	}
	if in.Method != "" && in.Method != MethodAuto {
		plan.Problem = fmt.Sprintf("update method %s does not fit this BMC: %s; it offers %s", in.Method, strings.Join(whys, "; "), offered(us))
	} else {
		plan.Problem = "no update method fits this BMC: " + strings.Join(whys, "; ")
	}
	return plan
}

// targetsPerRequest is how many Targets one SimpleUpdate may name, as its
// ActionInfo describes the parameter: one where it is a single string,
// ArraySizeMaximum where it bounds the array, else any number (0).
func targetsPerRequest(p actionParam) int {
	switch {
	case p.DataType == "String":
		return 1
	case p.ArraySizeMaximum > 0:
		return p.ArraySizeMaximum
	}
	return 0
}

// chooseApplyTime decides the apply time an update sends: the one asked
// when the BMC lists it for the method, otherwise none (the BMC then
// applies the image as it does by default, and the plan's reset applies
// what waits for one). from says which, in words.
func chooseApplyTime(asked, method string, us *updateInfo) (applyTime, from string) {
	if asked == "" {
		return "", ""
	}
	var at applyTimes
	switch method {
	case providers.MethodSimpleUpdate:
		at = us.SimpleUpdateApplyTimes
	case providers.MethodMultipartPush:
		at = us.MultipartApplyTimes
	case providers.MethodHTTPPush:
		at = us.HTTPPushApplyTimes
	}
	switch {
	case slices.Contains(at.Values, asked):
		return asked, "listed in " + at.From
	case at.Current == asked:
		return "", "not sent: the BMC's HttpPushUriApplyTime is already " + asked
	case len(at.Values) > 0:
		return "", fmt.Sprintf("not sent: %s lists %s, not %s; the BMC applies the image as it does by default", at.From, strings.Join(at.Values, ", "), asked)
	}
	return "", "not sent: the BMC lists no apply times for " + method + "; it applies the image as it does by default"
}

// offered lists the update methods a BMC advertises.
func offered(us *updateInfo) string {
	var out []string
	if us.SimpleUpdateTarget != "" {
		what := providers.MethodSimpleUpdate
		if p, ok := us.param("TransferProtocol"); ok && len(p.AllowableValues) > 0 {
			what += " (" + strings.Join(p.AllowableValues, ", ") + ")"
		}
		out = append(out, what)
	}
	if us.MultipartHTTPPushURI != "" {
		out = append(out, providers.MethodMultipartPush)
	}
	if us.HTTPPushURI != "" {
		out = append(out, providers.MethodHTTPPush)
	}
	if len(out) == 0 {
		return "no update method"
	}
	return strings.Join(out, ", ")
}

func matchText(m providers.Match) string {
	switch {
	case m.SoftwareID != "":
		return "software id " + m.SoftwareID
	case m.ID != "":
		return "id " + m.ID
	}
	return "name " + m.NamePattern
}

func componentText(c providers.Component) string {
	if c.Name != "" && c.Name != c.ID {
		return fmt.Sprintf("%s (%s)", c.ID, c.Name)
	}
	return c.ID
}
