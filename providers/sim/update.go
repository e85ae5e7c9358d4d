package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// updateParams are an update's parameters, as decoded from a request and
// as its Task's Payload shows them again (in the order of their names).
type updateParams struct {
	ApplyTime        string   `json:"@Redfish.OperationApplyTime,omitempty"`
	ImageURI         string   `json:",omitempty"`
	Targets          []string `json:",omitempty"`
	TransferProtocol string   `json:",omitempty"`
}

// check refuses an apply time the simulator does not implement and, on a
// BMC that flashes one component per update, several Targets.
func (p *updateParams) check(w http.ResponseWriter, multi bool) bool {
	switch p.ApplyTime {
	case "", "Immediate", "OnReset":
	default:
		writeError(w, http.StatusBadRequest, "Base.1.8.PropertyValueNotInList", "The value \""+p.ApplyTime+"\" for the property @Redfish.OperationApplyTime is not in the list of acceptable values (Immediate, OnReset).")
		return false
	}
	if len(p.Targets) > 1 && !multi {
		writeError(w, http.StatusBadRequest, "Base.1.8.PropertyValueFormatError", "Targets lists more than one item: this BMC updates one component at a time.")
		return false
	}
	return true
}

func (p *updateParams) targets() []string {
	out := make([]string, len(p.Targets))
	for i, t := range p.Targets {
		out[i] = cleanPath(t)
	}
	return out
}

// simpleUpdate handles UpdateService.SimpleUpdate: the image is never
// fetched; its name says what it is (see the package documentation). The
// parameters are checked as the ActionInfo says (required, allowable
// values), each refusal a 400 whose ExtendedInfo names the parameter.
func (b *bmc) simpleUpdate(w http.ResponseWriter, r *http.Request) {
	var req updateParams
	if !decodeBody(w, r, &req) {
		return
	}
	if req.ImageURI == "" {
		writeParamError(w, http.StatusBadRequest, "Base.1.8.ActionParameterMissing", "The action SimpleUpdate requires the parameter ImageURI to be present in the request body.", "ImageURI")
		return
	}
	transfer, targets, _ := b.simpleUpdateParams()
	switch {
	case req.TransferProtocol == "" && transfer.required:
		writeParamError(w, http.StatusBadRequest, "Base.1.8.ActionParameterMissing", "The action SimpleUpdate requires the parameter TransferProtocol to be present in the request body (one of "+strings.Join(transfer.allowable, ", ")+").", "TransferProtocol")
		return
	case req.TransferProtocol != "" && transfer.allowable != nil && !slices.ContainsFunc(transfer.allowable, func(x string) bool { return strings.EqualFold(x, req.TransferProtocol) }):
		writeParamError(w, http.StatusBadRequest, "Base.1.8.ActionParameterValueNotInList", "The value \""+req.TransferProtocol+"\" for the parameter TransferProtocol is not in the list of acceptable values ("+strings.Join(transfer.allowable, ", ")+").", "TransferProtocol", req.TransferProtocol)
		return
	}
	if !req.check(w, b.prof.multiTarget) {
		return
	}
	if b.prof.refuseManagerTargets && slices.Contains(req.targets(), b.prof.managerPath) {
		writeError(w, http.StatusBadRequest, "Base.1.0.GeneralError", "Manager is not currently a supported Target.")
		return
	}
	if targets.required && len(req.Targets) == 0 && b.prof.name != ProfileILO5 {
		msg := "The action SimpleUpdate requires the parameter Targets to be present in the request body."
		if b.prof.targetsSystemManager {
			msg = "The action SimpleUpdate requires the parameter Targets: the System (" + b.hosts[0].path + ") for BIOS or the Manager (" + b.prof.managerPath + ") for BMC firmware."
		}
		writeParamError(w, http.StatusBadRequest, "Base.1.8.ActionParameterMissing", msg, "Targets")
		return
	}
	if targets.allowable != nil {
		for _, t := range req.Targets {
			if !slices.Contains(targets.allowable, cleanPath(t)) {
				writeParamError(w, http.StatusBadRequest, "Base.1.8.ActionParameterValueNotInList", "The value \""+t+"\" for the parameter Targets is not in the list of acceptable values (the updateable items: "+strings.Join(targets.allowable, ", ")+").", "Targets", t)
				return
			}
		}
	}
	if len(req.Targets) == 0 && len(b.hosts) > 1 {
		// Without Targets a per-system image would have to pick a system.
		if comp, _, ok := parseImage(req.ImageURI); ok && comp != "" {
			var on []string
			for _, c := range b.inv.comps {
				if c.sys >= 0 && strings.EqualFold(strings.TrimPrefix(c.key, b.hosts[c.sys].id+"."), comp) {
					on = append(on, inventoryPath(c))
				}
			}
			if len(on) > 1 {
				writeParamError(w, http.StatusBadRequest, "Base.1.8.ActionParameterMissing", "The image "+req.ImageURI+" applies to every system of this BMC ("+strings.Join(on, ", ")+"): name one in the parameter Targets.", "Targets")
				return
			}
		}
	}
	image := req.ImageURI
	b.mu.Lock()
	staged, isStaged := b.inv.memberAt(req.ImageURI)
	if isStaged && staged.image != nil {
		// An image uploaded before (Dell Available-): install it.
		image = fmt.Sprintf("%s-%s.bin", b.inv.comps[staged.comp].key, staged.image.version)
		b.inv.install(staged.image)
	}
	b.mu.Unlock()
	b.accept(w, image, req.targets(), req.ApplyTime, taskPayload{targetURI: r.URL.Path, jsonBody: req.jsonBody()})
}

// jsonBody renders the parameters a client sent, as a Task's
// Payload.JsonBody shows the request (a string holding JSON).
func (p *updateParams) jsonBody() string {
	b, _ := json.Marshal(p)
	return string(b)
}

// push handles HttpPushUri (the body is the image) and MultipartHttpPushUri
// (UpdateParameters + UpdateFile parts). The body is streamed and counted,
// never held in memory.
func (b *bmc) push(w http.ResponseWriter, r *http.Request) {
	var params updateParams
	var image string
	var n int64
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "multipart/form-data" {
		mr, err := r.MultipartReader()
		if err != nil {
			writeError(w, http.StatusBadRequest, "Base.1.8.MalformedJSON", "The multipart body could not be read: "+err.Error())
			return
		}
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				writeError(w, http.StatusBadRequest, "Base.1.8.GeneralError", "The multipart body could not be read: "+err.Error())
				return
			}
			switch {
			case part.FormName() == "UpdateParameters" || part.FormName() == "parameters":
				if err := json.NewDecoder(io.LimitReader(part, 1<<20)).Decode(&params); err != nil {
					writeError(w, http.StatusBadRequest, "Base.1.8.MalformedJSON", "UpdateParameters is not valid JSON.")
					return
				}
			case part.FileName() != "" || part.FormName() == "UpdateFile":
				if image == "" {
					image = part.FileName()
				}
				c, err := io.Copy(io.Discard, part)
				n += c
				if err != nil {
					return // the client went away mid-upload
				}
			default:
				_, _ = io.Copy(io.Discard, io.LimitReader(part, 1<<20))
			}
			part.Close()
		}
		if image == "" {
			writeError(w, http.StatusBadRequest, "Base.1.8.ActionParameterMissing", "The multipart body has no UpdateFile part.")
			return
		}
	} else {
		image = r.Header.Get("X-Image-Name")
		if image == "" {
			image = r.URL.Query().Get("image")
		}
		if _, p, err := mime.ParseMediaType(r.Header.Get("Content-Disposition")); err == nil && image == "" {
			image = p["filename"]
		}
		c, err := io.Copy(io.Discard, r.Body)
		n += c
		if err != nil {
			return
		}
		if image == "" {
			image = "unnamed.bin"
		}
	}
	if !params.check(w, b.prof.multiTarget) {
		return
	}
	method := MethodHTTPPush
	if mt == "multipart/form-data" {
		method = MethodMultipartPush
	}
	if b.refused(method) {
		writeError(w, http.StatusBadRequest, "Base.1.8.ActionNotSupported", "This BMC does not accept updates by "+strings.ReplaceAll(method, "_", " ")+" (it is disabled); use another update method.")
		return
	}
	if mt == "multipart/form-data" {
		for _, target := range params.Targets {
			b.mu.Lock()
			i, ok := b.inv.targetComponent(target)
			ok = ok && b.inv.comps[i].canUpdate() && !b.inv.absent[i]
			b.mu.Unlock()
			if !ok {
				writeParamError(w, http.StatusBadRequest, "Base.1.8.PropertyValueNotInList", "The value \""+target+"\" for the property Targets is not an updateable item of this BMC.", "Targets", target)
				return
			}
		}
	}
	if b.spec.RequireTargets && mt == "multipart/form-data" && len(params.Targets) == 0 {
		writeParamError(w, http.StatusBadRequest, "Base.1.8.PropertyMissing", "The property Targets is a required property and must be included in the UpdateParameters.", "Targets")
		return
	}
	b.mu.Lock()
	b.stats.PushBytes += n
	if b.prof.uploadStages && mt != "multipart/form-data" {
		// Dell: the pushed image is staged as an Available- member, and a
		// SimpleUpdate naming it installs it.
		uri, err := b.inv.upload(image)
		b.mu.Unlock()
		if err != nil {
			writeParamError(w, http.StatusBadRequest, "Base.1.8.ActionParameterValueFormatError", "The pushed image cannot be staged: "+err.Error(), "UpdateFile", image)
			return
		}
		w.Header().Set("Location", uri)
		w.WriteHeader(http.StatusCreated)
		return
	}
	b.mu.Unlock()
	// The body of a push is no JSON: bmcweb shows "null" (its parse of the
	// body failed); the others show the UpdateParameters part.
	body := "null"
	if mt == "multipart/form-data" && b.prof.name != ProfileOpenBMC {
		body = params.jsonBody()
	}
	b.accept(w, image, params.targets(), params.ApplyTime, taskPayload{targetURI: r.URL.Path, jsonBody: body})
}

// accept creates the task and answers 202 with the task monitor.
func (b *bmc) accept(w http.ResponseWriter, image string, targets []string, applyTime string, payload taskPayload) {
	now := b.lock()
	t := b.startTask(now, image, targets, applyTime, payload)
	doc := b.tasks.doc(t, now)
	b.mu.Unlock()
	monitor := b.prof.taskMonitor(t.id)
	w.Header().Set("Location", monitor)
	if b.prof.acceptNoContent {
		// An older BMC: 204 No Content with a Location to a task that is
		// already Completed (and forgotten later).
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Retry-After", retryAfter(t.end.Sub(now)))
	if b.prof.monitorVanishes {
		// iLO-style: no task in the body, so clients must follow Location
		// to the monitor (which vanishes once the task ends).
		w.WriteHeader(http.StatusAccepted)
		return
	}
	writeJSON(w, http.StatusAccepted, doc)
}

// startTask creates an update task at now for image (with optional
// targets: inventory members, or on basic the System or Manager; several
// where the profile takes several) and apply time. b.mu is held.
func (b *bmc) startTask(now time.Time, image string, targets []string, applyTime string, payload taskPayload) *task {
	b.tasks.next++
	t := &task{id: strconv.Itoa(b.tasks.next), comp: -1, image: image, start: now, end: b.clock.after(now, b.clock.jittered(jitterFlash, b.fleet.timings.Flash)), payload: payload}
	if b.prof.acceptNoContent {
		t.end = now
	}
	comp, version, ok := parseImage(image)
	var idx []int
	for _, target := range targets {
		i, found := b.inv.targetComponent(target)
		if !found {
			t.message = fmt.Sprintf("Target %s is not an updateable inventory item.", target)
			idx = nil
			break
		}
		idx = append(idx, i)
	}
	if len(targets) == 0 && comp != "" {
		var matches []int
		for i, c := range b.inv.comps {
			base := b.inv.baseKey(c)
			if (strings.EqualFold(base, comp) || strings.EqualFold(c.key, comp)) && !b.inv.absent[i] {
				matches = append(matches, i) // an absent member takes no image
			}
		}
		// Several members of one key (8 GPUs) take one image together
		// where the profile says so; elsewhere the image must name one.
		if len(matches) == 1 || (len(matches) > 1 && b.prof.multiTarget) {
			idx = matches
		}
	}
	for _, i := range idx {
		if !b.inv.comps[i].canUpdate() || b.inv.absent[i] {
			idx = nil
			break
		}
	}
	if len(idx) > 0 && ok {
		t.comp, t.more, t.version = idx[0], idx[1:], version
	} else if t.message == "" {
		t.message = fmt.Sprintf("The image %s does not apply to any updateable component of this server (want <component>-<version>.bin, component one of BMC, BIOS, NIC, CPLD, GPU).", image)
	}
	b.stats.Updates++
	key := ""
	if t.comp >= 0 {
		key = b.inv.comps[t.comp].key
		t.end = now.Add(b.faults.slowed(t.end.Sub(now), "update", key))
	}
	fail := t.comp < 0
	if _, ok := b.faults.forComponent(FaultTaskFail, key); ok {
		fail = true
		b.stats.FaultsInjected++
		if t.message == "" {
			t.message = "The " + key + " image failed verification (injected fault)."
		}
	} else if _, ok := b.faults.take(FaultTaskFail, 0); ok {
		fail = true
		b.stats.FaultsInjected++
		if t.message == "" {
			t.message = "The firmware image failed verification (injected fault)."
		}
	}
	if _, ok := b.faults.take(FaultTaskHang, 0); ok {
		t.hang = true
		b.stats.FaultsInjected++
	}
	b.tasks.add(t)
	if t.hang {
		return t
	}
	if !fail && b.restartDuringUpdate(t, now, applyTime) {
		return t // the BMC restarts before the task ends (restart.go)
	}
	finish := func(at time.Time) {
		if fail {
			t.state = "Exception"
			b.stats.TasksFailed++
			return
		}
		t.state = "Completed"
		b.stats.TasksCompleted++
		if b.flash(t, applyTime) {
			if t.end.Equal(t.start) {
				// Accepted and completed in one request (basic): the BMC
				// answers, then goes away a moment later.
				at = at.Add(10 * time.Millisecond)
			}
			b.bmcReset(at)
		}
	}
	if t.end.Equal(now) {
		finish(now)
		return t
	}
	b.clock.at(t.end, finish)
	return t
}

// flash writes task t's image to its components: each shows its version
// at once, at the next host reset, or (a BMC's own firmware) when the BMC
// restarts; restart reports the last. b.mu is held.
func (b *bmc) flash(t *task, applyTime string) (restart bool) {
	for _, i := range append([]int{t.comp}, t.more...) {
		c := b.inv.comps[i]
		if b.stats.Flashes == nil {
			b.stats.Flashes, b.stats.MemberFlashes = map[string]int{}, map[string]int{}
		}
		b.stats.Flashes[c.key]++
		b.stats.MemberFlashes[c.id]++
		p := pending{comp: i, version: t.version}
		switch {
		case applyTime == "OnReset":
			p.onReset = true
			b.inv.pending = append(b.inv.pending, p)
		case c.activation == activateNow:
			b.inv.setVersion(i, t.version)
		case c.activation == activateBMC:
			b.inv.pending = append(b.inv.pending, p)
			restart = true
		default:
			b.inv.pending = append(b.inv.pending, p)
		}
	}
	return restart
}
