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
// TransferProtocol is filled when the BMC requires or lists it; Targets is
// the inventory member (the System or Manager for versions read there)
// when the BMC takes Targets and allows that value. A required parameter
// rackform cannot give is a Problem.

// planUpdate answers one update intent.
func planUpdate(in providers.UpdateIntent, st *state, us *updateInfo, usErr error) providers.UpdatePlan {
	plan := providers.UpdatePlan{Component: in.Component}
	var it *invItem
	for i := range st.items {
		if in.Match.Selects(st.items[i].Component) {
			it = &st.items[i]
			break
		}
	}
	if it == nil {
		var ids []string
		for _, x := range st.items {
			ids = append(ids, x.ID)
		}
		plan.Problem = fmt.Sprintf("no component on this BMC matches %s (it reports %s)", matchText(in.Match), strings.Join(ids, ", "))
		return plan
	}
	if !it.Updateable {
		plan.Problem = fmt.Sprintf("%s is not updateable on this BMC (Updateable is false)", componentText(it.Component))
		return plan
	}
	if us == nil {
		why := "the BMC offers no UpdateService"
		if usErr != nil {
			why = "the BMC's UpdateService could not be read: " + describe(usErr)
		}
		plan.Problem = why
		return plan
	}
	target := it.URI
	fallback := it.Source == providers.SourceSystem || it.Source == providers.SourceManager

	type option struct {
		method, why string
		ok          bool
		proto       string
		targets     []string
	}
	simple := func() option {
		o := option{method: providers.MethodSimpleUpdate}
		if us.SimpleUpdateTarget == "" {
			o.why = "the BMC has no UpdateService.SimpleUpdate"
			return o
		}
		u, err := url.Parse(in.ImageURI)
		if err != nil || u.Host == "" || u.Scheme == "file" {
			o.why = "SimpleUpdate needs an image URL the BMC can fetch, not a local path"
			return o
		}
		scheme := strings.ToUpper(u.Scheme)
		if p, ok := us.param("TransferProtocol"); ok {
			if len(p.AllowableValues) > 0 && !slices.ContainsFunc(p.AllowableValues, func(v string) bool { return strings.EqualFold(v, scheme) }) {
				o.why = fmt.Sprintf("SimpleUpdate allows TransferProtocol %s, not the image URL's %s", strings.Join(p.AllowableValues, ", "), scheme)
				return o
			}
			if p.Required || len(p.AllowableValues) > 0 {
				o.proto = scheme
			}
		}
		p, described := us.param("Targets")
		switch {
		case described && len(p.AllowableValues) > 0 && !slices.Contains(p.AllowableValues, target):
			if p.Required || fallback {
				o.why = fmt.Sprintf("SimpleUpdate's Targets do not allow %s", target)
				return o
			}
			// Targets optional and this member not listed: send none.
		case described, fallback:
			// A version read from the System or Manager is updated by
			// naming that resource, whether or not the BMC describes Targets.
			o.targets = []string{target}
		}
		for _, p := range us.Params {
			if p.Required && !slices.Contains([]string{"ImageURI", "TransferProtocol", "Targets"}, p.Name) {
				o.why = fmt.Sprintf("SimpleUpdate requires the parameter %s, which rackform cannot give", p.Name)
				return o
			}
		}
		o.ok = true
		return o
	}
	multipart := func() option {
		o := option{method: providers.MethodMultipartPush}
		if us.MultipartHTTPPushURI == "" {
			o.why = "the BMC has no MultipartHttpPushUri"
			return o
		}
		o.ok, o.targets = true, []string{target}
		return o
	}
	push := func() option {
		o := option{method: providers.MethodHTTPPush}
		if us.HTTPPushURI == "" {
			o.why = "the BMC has no HttpPushUri"
			return o
		}
		o.ok = true
		return o
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
		if o.ok {
			plan.Method, plan.TransferProtocol, plan.Targets = o.method, o.proto, o.targets
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
