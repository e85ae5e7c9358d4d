package redfish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"
)

// gofishBMC implements the bmc interface on gofish, one concept per file:
// session.go (connecting, login, Basic auth, logout), system.go (the
// System and the Manager), inventory.go (FirmwareInventory and
// SoftwareInventory), updateservice.go, tasklist.go (the TaskService's
// tasks), media.go (virtual media), and here the raw requests: actions,
// uploads and task monitors.

// maxBodyBytes bounds what is read of a raw body (task monitors, errors).
const maxBodyBytes = 1 << 20

func (b *gofishBMC) Post(ctx context.Context, uri string, body any) (*accepted, error) {
	var acc *accepted
	err := b.do(ctx, func(c *gofish.APIClient) error {
		resp, err := c.Post(relPath(uri), body)
		if err != nil {
			return err
		}
		acc = acceptedFrom(resp)
		return nil
	})
	return acc, err
}

func (b *gofishBMC) Patch(ctx context.Context, uri string, body any) error {
	return b.do(ctx, func(c *gofish.APIClient) error {
		resp, err := c.Patch(relPath(uri), body)
		if err != nil {
			return err
		}
		return schemas.CleanupHTTPResponse(resp)
	})
}

// noSeek passes a streamed body to gofish, whose raw request API asks for an
// io.ReadSeeker but only ever reads it. It is not replayable, so the
// transport never retries an upload.
type noSeek struct{ io.Reader }

func (noSeek) Seek(int64, int) (int64, error) { return 0, errors.New("upload body is a stream") }

func (b *gofishBMC) Upload(ctx context.Context, uri, contentType, filename string, body io.Reader, size int64) (*accepted, error) {
	c, _, err := b.conn(withoutAttemptTimeout(ctx))
	if err != nil {
		return nil, err
	}
	// No 401 retry here: the body is a one-shot stream.
	headers := map[string]string{"Content-Length": fmt.Sprint(size)}
	if filename != "" {
		headers["Content-Disposition"] = mime.FormatMediaType("attachment", map[string]string{"filename": filename})
	}
	resp, err := c.RunRawRequestWithHeaders(http.MethodPost, relPath(uri), noSeek{body}, contentType, headers)
	if err != nil {
		return nil, err
	}
	return acceptedFrom(resp), nil
}

func acceptedFrom(resp *http.Response) *accepted {
	defer schemas.DeferredCleanupHTTPResponse(resp)
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes))
	acc := &accepted{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After")}
	if resp.StatusCode == http.StatusAccepted {
		acc.TaskURI = relPath(resp.Header.Get("Location"))
	}
	if acc.TaskURI == "" {
		// Some BMCs answer 200/202 with a Task body and no Location.
		acc.TaskURI = taskURIFromBody(body)
	}
	return acc
}

func (b *gofishBMC) Get(ctx context.Context, uri string) (int, []byte, string, error) {
	var (
		status     int
		body       []byte
		retryAfter string
	)
	err := b.do(ctx, func(c *gofish.APIClient) error {
		resp, err := c.Get(relPath(uri))
		if err != nil {
			var re *schemas.Error
			if errors.As(err, &re) && re.HTTPReturnedStatusCode != http.StatusUnauthorized && re.HTTPReturnedStatusCode != 0 {
				status, body = re.HTTPReturnedStatusCode, nil
				return nil
			}
			return err
		}
		defer schemas.DeferredCleanupHTTPResponse(resp)
		status, retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
		body, err = io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes))
		return err
	})
	return status, body, retryAfter, err
}

// statusOf is the HTTP status of a gofish error, or 0.
func statusOf(err error) int {
	var re *schemas.Error
	if errors.As(err, &re) {
		return re.HTTPReturnedStatusCode
	}
	return 0
}

// relPath turns an absolute URI a BMC returned (Location headers often are)
// into the path gofish expects; gofish prefixes the endpoint itself.
func relPath(uri string) string {
	if strings.HasPrefix(uri, "/") && !strings.HasPrefix(uri, "//") {
		return uri // already a path (most links): no parse
	}
	if u, err := url.Parse(uri); err == nil && u.IsAbs() {
		return u.RequestURI()
	}
	return uri
}

var _ bmc = (*gofishBMC)(nil)
