package redfish

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"

	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"
)

// The documents an observation reads on every server (Systems, inventory,
// UpdateService, Manager) are decoded here into just the fields the
// provider uses, once: gofish's typed resources decode every property of
// the schema, keep a copy of the raw body and are decoded again for the
// fields it keeps private, which at fleet scale is most of a plan's CPU.
// Everything else still goes through gofish.
//
// They are decoded by encoding/json/v2's engine (stable in Go 1.27; here
// through its module mirror, github.com/go-json-experiment/json) with
// encoding/json's v1 semantics: twice as fast and a third fewer
// allocations on a 24-member inventory than encoding/json (a tenth of
// the plugin's CPU at 10,000 servers), same results.

// selfCheckedKey marks a request whose body the caller decodes and checks
// itself, so the transport does not scan it for malformed JSON first (a
// second full pass over every body).
const selfCheckedKey ctxKey = 2

// getJSON reads uri (any 2xx) and decodes its body into v (a pointer). A
// body that is not JSON (cut short, garbled) is read again through the
// transport's check, which retries it with backoff as any malformed answer.
// A document of another shape than v decodes as far as it fits: the fields
// of the wrong type stay empty.
func getJSON(ctx context.Context, c *gofish.APIClient, uri string, v any) error {
	first := c
	if !isSelfChecked(ctx) {
		first = c.WithContext(selfChecked(ctx))
	}
	malformed, err := decodeGet(first, uri, v)
	if !malformed || ctx.Err() != nil {
		return answered(http.MethodGet, uri, err)
	}
	reflect.ValueOf(v).Elem().SetZero()
	_, err = decodeGet(c.WithContext(context.WithValue(ctx, selfCheckedKey, false)), uri, v)
	return answered(http.MethodGet, uri, err)
}

// selfChecked marks ctx's GETs as decoded and checked by getJSON. The
// methods that read only through getJSON mark their context once, so
// their client (bound to it) need not be copied for each request.
func selfChecked(ctx context.Context) context.Context {
	return context.WithValue(ctx, selfCheckedKey, true)
}

func isSelfChecked(ctx context.Context) bool {
	on, _ := ctx.Value(selfCheckedKey).(bool)
	return on
}

// decodeGet reads uri into v; malformed says the body was not JSON (cut
// short, garbled), as opposed to the request failing. The body is read
// into a pooled buffer: thousands of servers observed at once would
// otherwise each grow a decoder's buffer to the size of their inventory.
func decodeGet(c *gofish.APIClient, uri string, v any) (malformed bool, err error) {
	resp, err := c.Get(relPath(uri))
	if err != nil {
		return false, err
	}
	defer schemas.DeferredCleanupHTTPResponse(resp)
	buf := bodyPool.Get().(*bytes.Buffer)
	defer putBody(buf)
	buf.Reset()
	if n := resp.ContentLength; n > 0 && n < maxBodyBytes {
		// One allocation of the body's size (when the pooled buffer is
		// smaller), not a buffer doubled up to it; ReadFrom wants MinRead
		// bytes free before each read, the last one (EOF) included.
		buf.Grow(int(n) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(io.LimitReader(resp.Body, maxBodyBytes)); err != nil {
		return true, err // cut off by the connection: as bad as garbled
	}
	err = jsonv1.Unmarshal(buf.Bytes(), v)
	var te *jsonv1.UnmarshalTypeError
	if err == nil || errors.As(err, &te) {
		return false, nil
	}
	return true, err
}

var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putBody returns buf to the pool unless an unusually large body grew it.
func putBody(buf *bytes.Buffer) {
	if buf.Cap() <= 256<<10 {
		bodyPool.Put(buf)
	}
}

// entityDoc is what every collection member carries.
type entityDoc struct {
	ODataID string `json:"@odata.id"`
	ID      string `json:"Id"`
	Name    string
	// ExtendedInfo on a member in place of its properties is an error.
	ExtendedInfo []schemas.Message `json:"@Message.ExtendedInfo"`
}

func (e *entityDoc) entity() *entityDoc { return e }

// collectionDoc is one page of a collection.
type collectionDoc[T any] struct {
	Members  []T
	NextLink string `json:"Members@odata.nextLink"`
}

// readMembers reads the collection at uri: in one request with $expand
// where the service offers it (conn sets the client's default collection
// query), falling back to the plain collection when the expanded request
// fails, then every member the page only links, at once (the transport
// limits requests per BMC), then the next pages. The members come in the
// service's order; failures are a *schemas.CollectionError by link, as
// gofish's collections report them. The first page is decoded into buf's
// capacity (zeroed first; nil for a new array), so a caller that reads a
// collection on every server can reuse one array instead of growing a
// new one each time. The members returned share buf.
func readMembers[T any, PT interface {
	*T
	entity() *entityDoc
}](ctx context.Context, c *gofish.APIClient, uri string, buf []T) ([]T, error) {
	first := func() collectionDoc[T] {
		clear(buf[:cap(buf)]) // decoding merges into what an element holds
		return collectionDoc[T]{Members: buf[:0]}
	}
	page := first()
	query := schemas.BuildQuery(c, uri, true)
	err := getJSON(ctx, c, query, &page)
	if err != nil && query != uri {
		page = first()
		err = getJSON(ctx, c, uri, &page)
	}
	fails := schemas.NewCollectionError()
	if err != nil {
		fails.Failures[uri] = err
		return nil, fails
	}
	var out []T
	for {
		var (
			wg sync.WaitGroup
			mu sync.Mutex
		)
		keep := make([]bool, len(page.Members))
		for i := range page.Members {
			e := PT(&page.Members[i]).entity()
			switch {
			case e.ID != "":
				keep[i] = true
				if len(e.ExtendedInfo) > 0 {
					se := &schemas.Error{}
					for _, m := range e.ExtendedInfo {
						se.ExtendedInfos = append(se.ExtendedInfos, schemas.ErrExtendedInfo(m))
					}
					fails.Failures[e.ODataID] = se
					keep[i] = false
				}
			case e.ODataID != "":
				wg.Add(1)
				go func() {
					defer wg.Done()
					link := e.ODataID
					var m T
					if err := getJSON(ctx, c, link, &m); err != nil {
						mu.Lock()
						fails.Failures[link] = err
						mu.Unlock()
						return
					}
					page.Members[i] = m
					keep[i] = true
				}()
			}
		}
		wg.Wait()
		if out == nil {
			// The first page's members, kept in place.
			out = page.Members[:0]
		}
		for i, m := range page.Members {
			if keep[i] {
				out = append(out, m)
			}
		}
		if page.NextLink == "" {
			break
		}
		next := page.NextLink
		page = collectionDoc[T]{}
		if err := getJSON(ctx, c, next, &page); err != nil {
			fails.Failures[next] = err
			break
		}
	}
	if fails.Empty() {
		return out, nil
	}
	return out, fails
}

// serviceLink is the service root's link to name ("systems",
// "updateService", "managers"), which gofish keeps private; def (the
// standard URI) when it cannot be read.
func serviceLink(c *gofish.APIClient, name, def string) string {
	if c.Service != nil {
		if f := reflect.ValueOf(c.Service).Elem().FieldByName(name); f.IsValid() && f.Kind() == reflect.String && f.String() != "" {
			return f.String()
		}
	}
	return def
}

// systemDoc is the part of a ComputerSystem the provider uses.
type systemDoc struct {
	entityDoc
	identityDoc
	BiosVersion string
	rawSystem
}

// identityDoc is what a ComputerSystem and a Chassis both say of
// themselves: identity, power and health.
type identityDoc struct {
	UUID, SerialNumber, Manufacturer, Model, PowerState string
	Status                                              struct{ Health, HealthRollup string }
}

// fill sets info's identity, power state and health (the rollup where
// given) from d, keeping info's power and health where d says none.
func (d *identityDoc) fill(info *systemInfo) {
	info.UUID = d.UUID
	info.SerialNumber, info.Manufacturer, info.Model = strings.TrimSpace(d.SerialNumber), strings.TrimSpace(d.Manufacturer), strings.TrimSpace(d.Model)
	info.PowerState = cmp.Or(d.PowerState, info.PowerState)
	info.Health = cmp.Or(d.Status.HealthRollup, d.Status.Health, info.Health)
}

// managerDoc is the part of a Manager the provider uses.
type managerDoc struct {
	entityDoc
	Model, FirmwareVersion, ManagerType string
	Links                               managerLinksDoc
	Status                              struct{ State, Health string }
}

// managerLinksDoc is a Manager's Links: its images and the chassis it is
// in (read for a device, which has no ComputerSystem).
type managerLinksDoc struct {
	imageLinksDoc
	ManagerInChassis odataLink
}

// chassisDoc is the part of a Chassis the provider uses: a device's
// identity, power and health.
type chassisDoc struct {
	entityDoc
	identityDoc
}

// imageLinksDoc is the Links of a Manager or a Bios resource that name its
// firmware images.
type imageLinksDoc struct {
	ActiveSoftwareImage odataLink
	SoftwareImages      []odataLink
}

func (l imageLinksDoc) links(from string) imageLinks {
	out := imageLinks{Active: relPath(l.ActiveSoftwareImage.ID), From: from}
	for _, x := range l.SoftwareImages {
		if x.ID != "" {
			out.Images = append(out.Images, relPath(x.ID))
		}
	}
	return out
}

// invDoc is the part of a SoftwareInventory member the provider uses.
type invDoc struct {
	entityDoc
	SoftwareID  string `json:"SoftwareId"`
	Version     string
	Description string
	Updateable  *bool
	RelatedItem []odataLink
	Status      struct{ State string }
	Oem         struct {
		Dell struct {
			DellSoftwareInventory struct{ Status string }
		}
	}
}

// updateServiceDoc is the part of the UpdateService the provider uses.
type updateServiceDoc struct {
	entityDoc
	MultipartHTTPPushURI string `json:"MultipartHttpPushUri"`
	HTTPPushURI          string `json:"HttpPushUri"`
	// ServiceEnabled and Status.State say whether the service takes
	// updates now (nil and "": it does not say, taken as enabled).
	ServiceEnabled *bool
	Status         struct{ State string }
	rawUpdateService
}
