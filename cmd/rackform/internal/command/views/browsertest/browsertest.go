// Package browsertest opens the HTML views in a real headless Chromium
// for the views' tests.
package browsertest

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rackform/rackform/internal/testenv"
)

// Open starts headless Chromium at width×height, with nothing fetchable
// (the pages must render offline), and navigates to the local file page
// until #grid is visible. A machine without Chromium skips the test with
// a line saying what to install (testenv). The context ends with the test.
func Open(t *testing.T, page string, width, height int) context.Context {
	t.Helper()
	exe := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Flag("headless", true), chromedp.Flag("disable-gpu", true), chromedp.WindowSize(width, height),
		chromedp.ProxyServer("127.0.0.1:9"))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(cancelCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancelTimeout)
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page), chromedp.WaitVisible("#grid")); err != nil {
		t.Fatalf("headless chromium: %v", err)
	}
	return ctx
}

// chromium finds Debian's chromium (or another Chromium).
func chromium(t *testing.T) string {
	t.Helper()
	return testenv.Binary(t, testenv.Chromium, "chromium", "chromium-browser", "google-chrome")
}
