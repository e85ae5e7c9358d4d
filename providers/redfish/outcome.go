package redfish

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/stmcginnis/gofish/schemas"

	"github.com/rackform/rackform/providers"
)

// credentialsError is a BMC refusing the credentials at login: the
// session request, and Basic auth when it was tried (basic).
type credentialsError struct {
	user string
	err  error
	// basic is why one read with Basic credentials failed too; planned
	// says Basic was not tried because plan found the BMC takes sessions.
	basic   error
	planned bool
}

func (e *credentialsError) Error() string {
	msg := fmt.Sprintf("creating a session: the BMC refused the credentials of user %q (%s)", e.user, describe(e.err))
	switch {
	case e.basic != nil:
		msg += ", and refused them with Basic authentication too (" + describe(e.basic) + ")"
	case e.planned:
		msg += "; plan found this BMC taking sessions, so Basic authentication was not tried"
	}
	return msg
}

func (e *credentialsError) Unwrap() error { return e.err }

// systemUnresolvedError is a BMC serving several systems where the target
// names none, or one it does not serve.
type systemUnresolvedError struct {
	want    string
	systems []providers.SystemRef
}

func (e *systemUnresolvedError) Error() string {
	var list []string
	for _, s := range e.systems {
		item := s.ID
		var more []string
		if s.UUID != "" {
			more = append(more, "UUID "+s.UUID)
		}
		if s.Name != "" && s.Name != s.ID {
			more = append(more, "name "+s.Name)
		}
		if len(more) > 0 {
			item += " (" + strings.Join(more, ", ") + ")"
		}
		list = append(list, item)
	}
	if e.want == "" {
		return fmt.Sprintf("the BMC serves %d systems and the server names none (set system to the Id or UUID of one): %s", len(e.systems), strings.Join(list, "; "))
	}
	return fmt.Sprintf("the BMC serves no system %q (by Id or UUID); it serves: %s", e.want, strings.Join(list, "; "))
}

// inventoryError is an inventory collection that could not be read.
type inventoryError struct {
	uri string
	err error
}

func (e *inventoryError) Error() string {
	var ie *itemsError
	if errors.As(e.err, &ie) && ie.link == e.uri {
		return ie.Error()
	}
	return "reading " + e.uri + ": " + describe(e.err)
}
func (e *inventoryError) Unwrap() error { return e.err }

// itemsError is one failure of a collection read, in words (gofish's
// CollectionError prints the raw bodies).
type itemsError struct {
	link string
	more int
	err  error
}

func (e *itemsError) Error() string {
	msg := "reading " + e.link + ": " + describe(e.err)
	if e.more > 0 {
		msg += fmt.Sprintf(" (and %d more)", e.more)
	}
	return msg
}

func (e *itemsError) Unwrap() error { return e.err }

// collErr turns gofish's CollectionError into an itemsError.
func collErr(err error) error {
	var ce *schemas.CollectionError
	if !errors.As(err, &ce) || len(ce.Failures) == 0 {
		return err
	}
	links := make([]string, 0, len(ce.Failures))
	for l := range ce.Failures {
		links = append(links, l)
	}
	sort.Strings(links)
	return &itemsError{link: links[0], more: len(links) - 1, err: ce.Failures[links[0]]}
}

// requestError is a request the BMC answered, but not with what was asked:
// an HTTP error status, or a body that is not JSON. It reads as the error
// it wraps (whose messages already name the resource); it is kept in the
// chain so that the outcome can say which request the BMC answered so.
type requestError struct {
	method, uri string
	err         error
}

func (e *requestError) Error() string { return e.err.Error() }
func (e *requestError) Unwrap() error { return e.err }

// answered wraps err, the failure of method on uri, as a requestError when
// the BMC answered it (an HTTP status, or a body that is not JSON); any
// other error (nothing answered) is returned as is.
func answered(method, uri string, err error) error {
	if err == nil || statusOf(err) == 0 && !notJSON(err) {
		return err
	}
	return &requestError{method: method, uri: uri, err: err}
}

// notJSON reports whether err is a body that did not decode as JSON.
func notJSON(err error) bool {
	var (
		serr  *json.SyntaxError
		terr  *json.UnmarshalTypeError
		serr1 *jsonv1.SyntaxError // decodeGet's decoder
		terr1 *jsonv1.UnmarshalTypeError
	)
	return errors.As(err, &serr) || errors.As(err, &terr) || errors.As(err, &serr1) || errors.As(err, &terr1)
}

// outcomeOf names what a failed read means for the observation. A BMC
// that sent any HTTP answer is not unreachable: refused credentials
// (401/403) are credentials_refused, every other answer that is not what
// the plan needs is unusable_answer; only a request nothing answered
// (refused or reset connection, DNS, TLS, timeout) is unreachable.
func outcomeOf(err error) string {
	var (
		ce *credentialsError
		se *systemUnresolvedError
		re *requestError
	)
	switch status := statusOf(err); {
	case errors.As(err, &ce), status == http.StatusUnauthorized, status == http.StatusForbidden:
		// A status: the session or Basic credentials were refused on a
		// read (after one fresh login).
		return providers.OutcomeCredentialsRefused
	case errors.As(err, &se):
		return providers.OutcomeSystemUnresolved
	case status != 0, errors.Is(err, errNoSystem), errors.Is(err, errNoManager), errors.As(err, &re), notJSON(err):
		return providers.OutcomeUnusableAnswer
	}
	return providers.OutcomeUnreachable
}

// unusableError says what a BMC that answered lacks: which request, what
// it answered, and the BMC's own words.
type unusableError struct{ err error }

func (e *unusableError) Unwrap() error { return e.err }

func (e *unusableError) Error() string {
	var re *requestError
	if !errors.As(e.err, &re) {
		return "the BMC answered, but not with what the plan needs: " + describe(e.err)
	}
	status := statusOf(re.err)
	msg := "the BMC answered, but " + lacks(re, status) + ": " + re.method + " " + re.uri
	switch {
	case errors.Is(re.err, errNoSystem), errors.Is(re.err, errNoManager):
		msg += " lists no members"
	case status != 0:
		msg += fmt.Sprintf(" returned %d %s", status, http.StatusText(status))
	default:
		msg += " returned a body that is not JSON (" + describe(re.err) + ")"
	}
	var se *schemas.Error
	if errors.As(re.err, &se) {
		words := redfishMessage(se)
		for _, x := range se.ExtendedInfos {
			if x.MessageID != "" {
				words = strings.TrimSuffix(x.MessageID+": "+words, ": ")
				break
			}
		}
		if words != "" {
			msg += " (" + words + ")"
		}
	}
	return msg
}

// lacks says what the BMC does not give, from the request it answered:
// "has no ComputerSystem" for a 404 on the Systems collection, "did not
// give its firmware inventory" for a 500 on it.
func lacks(re *requestError, status int) string {
	missing := status == http.StatusNotFound || status == http.StatusGone || status == http.StatusMethodNotAllowed ||
		status == http.StatusNotImplemented || errors.Is(re.err, errNoSystem) || errors.Is(re.err, errNoManager)
	if re.method == http.MethodPost {
		if missing {
			return "has no session service"
		}
		return "did not create a session"
	}
	var what string
	switch u := strings.TrimSuffix(re.uri, "/"); {
	case u == "/redfish/v1" || u == "/redfish":
		what = "Redfish service root"
	case strings.Contains(u, "/Systems"):
		what = "ComputerSystem"
	case strings.Contains(u, "/FirmwareInventory"), strings.Contains(u, "/SoftwareInventory"):
		what = "firmware inventory"
	case strings.Contains(u, "/Managers"):
		what = "Manager"
	case strings.Contains(u, "/UpdateService"):
		what = "UpdateService"
	}
	switch {
	case what == "" && missing:
		return "does not serve a resource the plan reads"
	case what == "":
		return "did not give a resource the plan reads"
	case missing:
		return "has no " + what
	}
	return "did not give its " + what
}

// redfishMessage is the readable part of a Redfish error: the
// @Message.ExtendedInfo messages, else error.message. A body that is not a
// Redfish error (HTML, other JSON) gives "": it is never quoted raw.
func redfishMessage(re *schemas.Error) string {
	var parts []string
	for _, x := range re.ExtendedInfos {
		if m := oneLine(x.Message); m != "" && !looksRaw(m) && !slices.Contains(parts, m) {
			parts = append(parts, m)
		}
	}
	if len(parts) == 0 {
		if m := oneLine(re.Message); m != "" && !looksRaw(m) {
			parts = append(parts, m)
		}
	}
	return truncate(strings.Join(parts, "; "), 300)
}

// looksRaw tells a whole response body (JSON, HTML) from a message.
func looksRaw(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[") || strings.HasPrefix(s, "<")
}

// oneLine collapses whitespace, so a diagnostic stays one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// messageArgs are the MessageArgs of a Redfish error's extended info, with
// the property paths it names.
func messageArgs(re *schemas.Error) []string {
	var out []string
	for _, x := range re.ExtendedInfos {
		out = append(out, x.MessageArgs...)
		for _, p := range x.RelatedProperties {
			out = append(out, strings.TrimPrefix(p, "#/"))
		}
	}
	return out
}
