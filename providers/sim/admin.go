package sim

import (
	"encoding/json"
	"net/http"
	"strings"
)

// FaultRequest is the body of POST /faults on the admin API: either one
// BMC's fault (Name + Fault in ParseFault's KIND[:ARG] form, or Clear) or
// fleet-wide rates (Rates by kind, Seed, and per-kind arguments in Args as
// KIND[:ARG]).
type FaultRequest struct {
	Name  string                `json:"name,omitempty"`
	Fault string                `json:"fault,omitempty"`
	Clear bool                  `json:"clear,omitempty"`
	Rates map[FaultKind]float64 `json:"rates,omitempty"`
	Seed  uint64                `json:"seed,omitempty"`
	Args  []string              `json:"args,omitempty"`
}

// AdminHandler serves the simulator's own control API, so tests in other
// processes can read its counters and inject faults:
//
//	GET  /bmcs          [{"name","url","profile"}...]
//	GET  /stats         {"bmcs": {name: Stats}}; Stats.member_flashes counts
//	                    completed flashes by inventory member (8 GPUs: 8 entries)
//	GET  /stats/{name}  Stats (404 for an unknown name)
//	POST /faults        FaultRequest → 204; e.g. {"name": "s1", "fault":
//	                    "bmc-restart-during-update:lost:1"}: the BMC restarts
//	                    halfway through its next update (task 404, version
//	                    unchanged; took: changed; a last :drops-staged also
//	                    discards the images staged for the next host reset);
//	                    Stats.updates_lost counts such updates, Stats.updates
//	                    every one sent
//
// It has no authentication: serve it on loopback only.
func (f *Fleet) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /bmcs", func(w http.ResponseWriter, r *http.Request) {
		writePlainJSON(w, http.StatusOK, f.BMCs())
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		writePlainJSON(w, http.StatusOK, map[string]any{"bmcs": f.AllStats()})
	})
	mux.HandleFunc("GET /stats/{name}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		if _, ok := f.byName[name]; !ok {
			http.Error(w, "no BMC named "+name, http.StatusNotFound)
			return
		}
		writePlainJSON(w, http.StatusOK, f.Stats(name))
	})
	mux.HandleFunc("POST /faults", func(w http.ResponseWriter, r *http.Request) {
		var req FaultRequest
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
			http.Error(w, "body: "+err.Error(), http.StatusBadRequest)
			return
		}
		if err := f.applyFaultRequest(req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}

func (f *Fleet) applyFaultRequest(req FaultRequest) error {
	if req.Rates != nil {
		r := FaultRate{Seed: req.Seed, Rates: req.Rates, Args: map[FaultKind]Fault{}}
		for _, a := range req.Args {
			ft, err := ParseFault(a)
			if err != nil {
				return err
			}
			r.Args[ft.Kind] = ft
		}
		for k := range req.Rates {
			if err := (Fault{Kind: k}).validate(); err != nil || k == FaultNone {
				return &faultKindError{string(k)}
			}
		}
		f.SetFaultRate(r)
	}
	if req.Name == "" {
		return nil
	}
	if req.Clear {
		return f.SetFault(req.Name, Fault{})
	}
	ft, err := ParseFault(req.Fault)
	if err != nil {
		return err
	}
	return f.SetFault(req.Name, ft)
}

type faultKindError struct{ kind string }

func (e *faultKindError) Error() string {
	return "unknown fault kind " + strings.TrimSpace(e.kind) + " (want one of " + kindList() + ")"
}

func writePlainJSON(w http.ResponseWriter, status int, v any) {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(raw, '\n'))
}
