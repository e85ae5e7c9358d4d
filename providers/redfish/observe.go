package redfish

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"

	"github.com/stmcginnis/gofish/schemas"

	"github.com/rackform/rackform/providers"
)

// Observe implements providers.Provider: at most Concurrency servers at once
// (each BMC additionally limited to per_bmc_limit requests in flight by the
// transport); fn is called from one goroutine at a time.
func (p *Provider) Observe(ctx context.Context, req *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
	p.mu.Lock()
	conc, configured := p.cfg.Concurrency, p.tr != nil
	p.mu.Unlock()
	if !configured {
		return providers.Errorf("", "Provider not configured", "Configure must succeed before Observe.")
	}
	if req.Concurrency > 0 {
		conc = req.Concurrency
	}
	conc = min(conc, len(req.Targets))
	ctx, done := p.call(ctx)
	defer done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var (
		fnMu  sync.Mutex
		fnErr error
		wg    sync.WaitGroup
	)
	jobs := make(chan providers.Target)
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range jobs {
				obs := p.observeOne(ctx, t)
				fnMu.Lock()
				if fnErr == nil && ctx.Err() == nil {
					if err := fn(obs); err != nil {
						fnErr = err
						cancel()
					}
				}
				fnMu.Unlock()
			}
		}()
	}
feed:
	for _, t := range req.Targets {
		select {
		case jobs <- t:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if fnErr != nil {
		return providers.Errorf("", "Observe stopped", "The caller refused a result: "+fnErr.Error())
	}
	if err := ctx.Err(); err != nil {
		return providers.Errorf("", "Observe interrupted", err.Error())
	}
	return nil
}

// observeOne reads one server. Any failure makes it unreachable for this
// observation, with a diagnostic naming it and the cause.
func (p *Provider) observeOne(ctx context.Context, t providers.Target) *providers.Observation {
	obs := &providers.Observation{Server: t.Name}
	b, _, err := p.bmcFor(t)
	if err != nil {
		obs.Diagnostics = p.fail(t, "Cannot observe server", err)
		return obs
	}
	sys, err := b.System(ctx)
	if err != nil {
		obs.Diagnostics = p.fail(t, "Cannot observe server", err)
		return obs
	}
	comps, err := b.Inventory(ctx)
	if err != nil {
		obs.Diagnostics = p.fail(t, "Cannot read the server's inventory", err)
		return obs
	}
	obs.Reachable = true
	obs.PowerState = sys.PowerState
	obs.Health = sys.Health
	obs.Components = comps
	obs.Fingerprint = fingerprint(sys.PowerState, sys.Health, comps)
	return obs
}

// fail turns err into an error diagnostic about t: the server's name, the
// BMC endpoint and the cause, with any password scrubbed.
func (p *Provider) fail(t providers.Target, summary string, err error) providers.Diagnostics {
	detail := describe(err)
	if e, cerr := cleanEndpoint(t.Endpoint); cerr == nil {
		detail = "BMC " + e + ": " + detail
	}
	detail = p.scrub(detail)
	if t.Credentials != nil && len(t.Credentials.Password) >= 3 {
		detail = strings.ReplaceAll(detail, t.Credentials.Password, "***")
	}
	return providers.Errorf(t.Name, summary, detail)
}

// describe says what went wrong in words an operator can act on.
func describe(err error) string {
	var (
		ate  *attemptTimeoutError
		uerr x509.UnknownAuthorityError
		herr x509.HostnameError
		cerr *tls.CertificateVerificationError
		serr *json.SyntaxError
		terr *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &ate):
		return "timed out: " + ate.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out: " + err.Error()
	case errors.As(err, &uerr), errors.As(err, &cerr):
		return "TLS certificate not trusted (set ca_bundle to the CA that signs BMC certificates, or insecure = true): " + err.Error()
	case errors.As(err, &herr):
		return "TLS certificate does not match the BMC address: " + err.Error()
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused: " + err.Error()
	case errors.As(err, &serr), errors.As(err, &terr):
		return "malformed JSON from the BMC: " + err.Error()
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "malformed JSON from the BMC (the document ends early): " + err.Error()
	}
	var re *schemas.Error
	if errors.As(err, &re) && re.HTTPReturnedStatusCode != 0 {
		// gofish's text is the whole error body; say status, id and message.
		short := fmt.Sprintf("HTTP %d", re.HTTPReturnedStatusCode)
		if re.Code != "" {
			short += " " + re.Code
		}
		if re.Message != "" {
			short += ": " + truncate(re.Message, 200)
		}
		for _, x := range re.ExtendedInfos {
			if x.MessageID != "" && x.MessageID != re.Code {
				short += " (" + x.MessageID + ")"
				break
			}
		}
		msg := err.Error()
		if i := strings.Index(msg, re.Error()); i >= 0 {
			return msg[:i] + short
		}
		return short
	}
	var nerr net.Error
	if errors.As(err, &nerr) && nerr.Timeout() {
		return "timed out: " + err.Error()
	}
	return truncate(err.Error(), 600)
}
