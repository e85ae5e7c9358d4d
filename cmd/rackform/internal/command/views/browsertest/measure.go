package browsertest

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// TextContrast is one rendered element with text of its own, its colour
// and the background it is drawn on, from the computed styles.
type TextContrast struct {
	Text       string  `json:"text"`
	Selector   string  `json:"selector"`
	Color      string  `json:"color"`
	Background string  `json:"background"`
	Ratio      float64 `json:"ratio"`
}

// contrastJS measures every element that has a text node of its own (not
// hidden): its computed colour, and the background it is drawn on, the
// first ancestor-or-self background that is not transparent, composited
// over what is below it when translucent (and white at the root), then the
// WCAG 2 contrast ratio of the two.
const contrastJS = `(() => {
  const parse = s => { const m = s.match(/rgba?\(([^)]+)\)/); if (!m) return [0,0,0,0];
    const p = m[1].split(/[ ,\/]+/).filter(x => x).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  const over = (top, below) => { const a = top[3]; return [0,1,2].map(i => top[i]*a + below[i]*(1-a)).concat([1]); };
  const bg = el => { const layers = []; for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor); if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; } }
    let out = [255,255,255,1]; for (let i = layers.length - 1; i >= 0; i--) out = over(layers[i], out); return out; };
  const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v/12.92 : Math.pow((v+0.055)/1.055, 2.4); };
    return 0.2126*f(c[0]) + 0.7152*f(c[1]) + 0.0722*f(c[2]); };
  const name = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : '');
  const out = [];
  for (const el of document.body.querySelectorAll('*')) {
    const own = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
    if (!own) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility === 'hidden' || cs.display === 'none' || el.getClientRects().length === 0) continue;
    const b = bg(el), fgRaw = parse(cs.color), fg = over(fgRaw, b);
    const l1 = lum(fg), l2 = lum(b);
    out.push({text: own.slice(0, 60), selector: name(el), color: cs.color,
      background: 'rgb(' + b.slice(0,3).map(Math.round).join(', ') + ')',
      ratio: (Math.max(l1,l2) + 0.05) / (Math.min(l1,l2) + 0.05)});
  }
  return out;
})()`

// TextContrasts measures the contrast of every text element on the page
// open in ctx.
func TextContrasts(t *testing.T, ctx context.Context) []TextContrast {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]TextContrast](contrastJS))
	if err != nil {
		t.Fatalf("measuring contrast: %v", err)
	}
	if len(got) == 0 {
		t.Fatal("no text on the page")
	}
	return got
}

// Box is an element's rendered box and whether its content is clipped.
type Box struct {
	Text   string  `json:"text"`
	Left   float64 `json:"left"`
	Top    float64 `json:"top"`
	Right  float64 `json:"right"`
	Bottom float64 `json:"bottom"`
	// Clipped: the content is wider or taller than the box shows, or
	// the box reaches past the page's edge.
	Clipped bool `json:"clipped"`
}

// boxesJS returns the boxes of the elements selector matches that have
// text.
const boxesJS = `((sel) => {
  const width = document.documentElement.clientWidth;
  return [...document.querySelectorAll(sel)].filter(e => e.textContent.trim() !== '').map(e => {
    const r = e.getBoundingClientRect();
    return {text: e.textContent.trim().slice(0, 80), left: r.left + scrollX, top: r.top + scrollY, right: r.right + scrollX, bottom: r.bottom + scrollY,
      clipped: e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1 || r.left < -0.5 || r.right > width + 0.5};
  });
})`

// Boxes returns the rendered boxes of the text elements selector matches
// on the page open in ctx.
func Boxes(t *testing.T, ctx context.Context, selector string) []Box {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]Box](fmt.Sprintf("%s(%q)", boxesJS, selector)))
	if err != nil {
		t.Fatalf("measuring %s: %v", selector, err)
	}
	return got
}

// Overlap reports whether a and b share any area.
func Overlap(a, b Box) bool {
	return a.Left < b.Right && b.Left < a.Right && a.Top < b.Bottom && b.Top < a.Bottom
}

// Resize sets the page's viewport to width×height, so it lays itself out
// at that width.
func Resize(t *testing.T, ctx context.Context, width, height int) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height))); err != nil {
		t.Fatalf("resizing to %dx%d: %v", width, height, err)
	}
}
