package redfish

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/rackform/rackform/providers"
)

// Images for push updates come from a local file path (or file:// URL) or
// an http(s) URL that the provider downloads while it uploads: either way
// the image streams through, never held in memory, and its size must be
// known in advance (file size, or the download's Content-Length) because
// BMCs want an explicit Content-Length, not a chunked upload.

// image is an opened image stream of a known size.
type image struct {
	name string
	size int64
	body io.ReadCloser
	// file is set for a local image, or the verified copy of a download
	// (temp names that copy, removed on Close).
	file *os.File
	temp string
}

// Close releases the image (and removes a verified copy).
func (img *image) Close() {
	img.body.Close()
	if img.temp != "" {
		os.Remove(img.temp)
	}
}

func (s *stepRun) openImage(ctx context.Context) (*image, error) {
	src := s.step.ImageURI
	u, err := url.Parse(src)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
		if err != nil {
			return nil, err
		}
		tr := &http.Transport{TLSClientConfig: s.cfg.tlsConfig(), ResponseHeaderTimeout: s.cfg.Timeout}
		resp, err := (&http.Client{Transport: tr, Timeout: 0}).Do(req)
		if err != nil {
			return nil, fmt.Errorf("downloading the image %s: %w", redactURL(src), err)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("downloading the image %s: %s", redactURL(src), resp.Status)
		}
		if resp.ContentLength < 0 {
			resp.Body.Close()
			return nil, fmt.Errorf("the image server sent %s without a Content-Length; a push needs the size in advance", redactURL(src))
		}
		return &image{name: path.Base(u.Path), size: resp.ContentLength, body: resp.Body}, nil
	}
	p := src
	if err == nil && u.Scheme == "file" {
		p = u.Path
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("opening the image: %w", err)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("the image %s is not a regular file", p)
	}
	return &image{name: filepath.Base(p), size: st.Size(), body: f, file: f}, nil
}

// multipartBody frames an image as Redfish's multipart push wants it: an
// UpdateParameters JSON part and an UpdateFile part. The framing is
// rendered up front so the exact Content-Length is known; the image bytes
// stream between head and tail.
func multipartBody(params map[string]any, img *image) (contentType string, body io.Reader, size int64, err error) {
	var head bytes.Buffer
	w := multipart.NewWriter(&head)
	pw, err := w.CreatePart(textproto.MIMEHeader{"Content-Disposition": {`form-data; name="UpdateParameters"`}, "Content-Type": {"application/json"}})
	if err != nil {
		return "", nil, 0, err
	}
	if err := json.NewEncoder(pw).Encode(params); err != nil {
		return "", nil, 0, err
	}
	file := textproto.MIMEHeader{"Content-Disposition": {fmt.Sprintf(`form-data; name="UpdateFile"; filename=%q`, img.name)}, "Content-Type": {"application/octet-stream"}}
	if _, err := w.CreatePart(file); err != nil {
		return "", nil, 0, err
	}
	headLen := head.Len()
	if err := w.Close(); err != nil {
		return "", nil, 0, err
	}
	all := head.Bytes()
	headPart, tail := all[:headLen], all[headLen:]
	body = io.MultiReader(bytes.NewReader(headPart), &exactReader{r: img.body, left: img.size}, bytes.NewReader(tail))
	return w.FormDataContentType(), body, int64(len(headPart)) + img.size + int64(len(tail)), nil
}

// exactReader fails when the image turns out shorter than announced, which
// would otherwise leave the BMC waiting for bytes that never come.
type exactReader struct {
	r    io.Reader
	left int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if err == io.EOF && e.left > 0 {
		return n, io.ErrUnexpectedEOF
	}
	if err == io.EOF {
		err = nil
	}
	return n, err
}

// push uploads the image with method: multipart_push or http_push as
// planned, with the multipart UpdateParameters' Targets the plan gives,
// or push for the older rule: multipart to MultipartHttpPushUri when
// offered, naming the members the step's Match finds, otherwise the raw
// image to HttpPushUri. HttpPushUri's apply time is a property of the
// UpdateService, so it is PATCHed first when the step sets one.
func (s *stepRun) push(ctx context.Context, us *updateInfo, method string) (*accepted, error) {
	targets := s.step.Targets
	switch {
	case method == providers.MethodMultipartPush && us.MultipartHTTPPushURI == "":
		return nil, errors.New("the plan says multipart_push, but the BMC no longer offers MultipartHttpPushUri")
	case method == providers.MethodHTTPPush && us.HTTPPushURI == "":
		return nil, errors.New("the plan says http_push, but the BMC no longer offers HttpPushUri")
	case method != MethodPush:
	case us.MultipartHTTPPushURI != "":
		method, targets = providers.MethodMultipartPush, s.targets(ctx)
	case us.HTTPPushURI != "":
		method = providers.MethodHTTPPush
	default:
		return nil, errors.New("the BMC offers neither MultipartHttpPushUri nor HttpPushUri")
	}
	img, err := s.openImage(ctx)
	if err != nil {
		return nil, err
	}
	defer img.Close()
	if s.step.SHA256 != "" {
		// Verify before the BMC gets a byte: the image is read once to
		// hash it (a downloaded image from a local verified copy).
		if err := img.verify(s.step.SHA256); err != nil {
			return nil, err
		}
	}
	start := s.p.clock.Now()
	if method == providers.MethodMultipartPush {
		// UpdateParameters.Targets is part of the multipart push schema.
		params := map[string]any{"Targets": []string{}}
		if targets != nil {
			params["Targets"] = targets
		}
		if s.step.ApplyTime != "" {
			params["@Redfish.OperationApplyTime"] = s.step.ApplyTime
		}
		ct, body, size, err := multipartBody(params, img)
		if err != nil {
			return nil, err
		}
		if err := s.report(fmt.Sprintf("multipart push of %s (%d bytes)", img.name, img.size), -1); err != nil {
			return nil, err
		}
		acc, err := s.b.Upload(ctx, us.MultipartHTTPPushURI, ct, "", body, size)
		if err != nil {
			// Named: a BMC's 404 need not say what was not found.
			return nil, updateRefused("multipart push to MultipartHttpPushUri "+us.MultipartHTTPPushURI, params, err)
		}
		s.p.log.Debug("pushed image", "server", s.t.Name, "bytes", size, "took", time.Since(start))
		return acc, nil
	}
	if s.step.ApplyTime != "" && us.URI != "" {
		patch := map[string]any{"HttpPushUriOptions": map[string]any{"HttpPushUriApplyTime": map[string]any{"ApplyTime": s.step.ApplyTime}}}
		if err := s.b.Patch(ctx, us.URI, patch); err != nil {
			return nil, fmt.Errorf("setting HttpPushUriApplyTime: %w", err)
		}
	}
	if err := s.report(fmt.Sprintf("push of %s (%d bytes)", img.name, img.size), -1); err != nil {
		return nil, err
	}
	acc, err := s.b.Upload(ctx, us.HTTPPushURI, "application/octet-stream", img.name, &exactReader{r: img.body, left: img.size}, img.size)
	if err != nil {
		return nil, updateRefused("push to HttpPushUri "+us.HTTPPushURI, nil, err)
	}
	return acc, nil
}

// verify reads the whole image once, checks its SHA-256 against want, and
// rewinds it for sending. A downloaded image is first copied to a private
// temporary file, so what is sent is what was verified.
func (img *image) verify(want string) error {
	want = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(want, "sha256:")))
	if img.file == nil {
		f, err := os.CreateTemp("", "rackform-image-*")
		if err != nil {
			return fmt.Errorf("keeping a verified copy of the image: %w", err)
		}
		n, err := io.Copy(f, img.body)
		img.body.Close()
		if err == nil && n != img.size {
			err = fmt.Errorf("got %d of %d bytes", n, img.size)
		}
		img.body, img.file, img.temp = f, f, f.Name()
		if err != nil {
			return fmt.Errorf("downloading the image %s: %w", img.name, err)
		}
	}
	if _, err := img.file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	h := sha256.New()
	if _, err := io.Copy(h, img.file); err != nil {
		return fmt.Errorf("reading the image to verify it: %w", err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("the image %s has SHA-256 %s, not the %s the configuration gives: refused, the BMC was not touched", img.name, got, want)
	}
	_, err := img.file.Seek(0, io.SeekStart)
	return err
}

// verifyPull downloads ImageURI, as the BMC is about to, and checks its
// SHA-256 before SimpleUpdate is sent.
func (s *stepRun) verifyPull(ctx context.Context) error {
	if err := s.report("verifying the SHA-256 of "+redactURL(s.step.ImageURI), -1); err != nil {
		return err
	}
	img, err := s.openImage(ctx)
	if err != nil {
		return err
	}
	defer img.Close()
	want := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(s.step.SHA256, "sha256:")))
	h := sha256.New()
	if _, err := io.Copy(h, &exactReader{r: img.body, left: img.size}); err != nil {
		return fmt.Errorf("downloading the image %s to verify it: %w", redactURL(s.step.ImageURI), err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("the image %s serves SHA-256 %s, not the %s the configuration gives: refused, the BMC was not asked to update", redactURL(s.step.ImageURI), got, want)
	}
	return nil
}
