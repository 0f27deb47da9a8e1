package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/scorekit/scorekit/internal/service/web"
)

// The review page in a real browser, from the keyboard: the name typed into the focused
// field, Enter on the focused Pass button, then a note and Fail; each label is stored.
// A form on another site that posts to the review, even with a valid token, is refused;
// another tenant's run is a 404.
func TestReviewInBrowser(t *testing.T) {
	ctx := chromium(t)
	in := seed(t, filepath.Join(t.TempDir(), "scorekit.db"), 0, web.Options{})
	bg := context.Background()

	// step runs the steps and returns the status and address of the page they load.
	type loaded struct {
		Status int64
		URL    string
	}
	step := func(name string, steps ...chromedp.Action[chromedp.Void]) loaded {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		resp, err := chromedp.RunResponse(sctx, steps...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return loaded{resp.Status, resp.URL}
	}
	attr := func(css, name string) string {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		v, err := chromedp.Run(sctx, chromedp.AttributeValue(chromedp.CSS(css), name))
		if err != nil || !v.Exists {
			t.Fatalf("%s[%s]: %v", css, name, err)
		}
		return v.Value
	}

	step("sign in page", chromedp.Navigate(in.srv.URL+"/login"))
	// Signed in once the signed-in page shows: a navigation still in flight when the next
	// step starts destroys the page's script context under it.
	step("sign in", chromedp.SendKeys(chromedp.ID("key"), in.keyA), chromedp.Click(chromedp.ID("signin")), chromedp.WaitVisible(chromedp.CSS("form.logout")))

	// The name first: its field has the focus, Enter starts the review.
	step("review", chromedp.Navigate(in.srv.URL+"/review/prescreen"))
	// Typing starts once the page has put the focus there (autofocus), as a person would
	// see it: keys sent before that are lost, which made this step flaky under load.
	focused := func(id string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void]("document.activeElement !== null && document.activeElement.id === '" + id + "'")
	}
	step("type the name", chromedp.WaitReady(chromedp.ID("labeller")), focused("labeller"), chromedp.KeyEvent("ana"), chromedp.KeyEvent("\r"))
	first := attr("article.review", "data-run")

	// Pass has the focus: Enter labels the run pass.
	resp := step("pass from the keyboard", chromedp.WaitReady(chromedp.ID("pass")), focused("pass"), chromedp.KeyEvent("\r"))
	if resp.Status != http.StatusOK || !strings.Contains(resp.URL, "saved="+url.QueryEscape(first)) {
		t.Fatalf("after Enter: %d %s", resp.Status, resp.URL)
	}
	ls, err := in.env.Service.RunLabels(bg, in.a, first, "prescreen")
	if err != nil || len(ls) != 1 || ls[0].Labeller != "ana" || ls[0].Passed == nil || !*ls[0].Passed {
		t.Fatalf("the label given with Enter: %+v, %v", ls, err)
	}

	// The next run, with a note, failed.
	second := attr("article.review", "data-run")
	if second == first {
		t.Fatalf("the labelled run %s is shown again", first)
	}
	step("note and fail", chromedp.SendKeys(chromedp.ID("note"), "answers another email"), chromedp.Click(chromedp.ID("fail")))
	ls, err = in.env.Service.RunLabels(bg, in.a, second, "prescreen")
	if err != nil || len(ls) != 1 || *ls[0].Passed || ls[0].Note != "answers another email" {
		t.Fatalf("the label given with Fail: %+v, %v", ls, err)
	}

	// A page on another site (localhost is not 127.0.0.1's site) holding a form that
	// posts to the review, with the session's own token: the browser's Sec-Fetch-Site
	// and Origin give it away.
	third := attr("article.review", "data-run")
	token := attr(`input[name="csrf"]`, "value")
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/review/prescreen/runs/%s">
<input type="hidden" name="csrf" value="%s"><input type="hidden" name="labeller" value="ana">
<button id="go" name="verdict" value="fail">Win a prize</button></form>`, in.srv.URL, url.PathEscape(third), token)
	}))
	t.Cleanup(evil.Close)
	evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)
	step("the other site", chromedp.Navigate(evilURL))
	resp = step("its form", chromedp.Click(chromedp.ID("go")))
	if resp.Status != http.StatusForbidden {
		t.Errorf("the cross-site post answered %d; want 403", resp.Status)
	}
	if ls, _ := in.env.Service.RunLabels(bg, in.a, third, ""); len(ls) != 0 {
		t.Fatalf("the cross-site post stored a label: %+v", ls)
	}

	// Tenant b's run, opened by a's session.
	resp = step("b's run", chromedp.Navigate(in.srv.URL+"/review/prescreen?labeller=ana&run=b-run"))
	if resp.Status != http.StatusNotFound {
		t.Errorf("a's session opened b's run for review: %d; want 404", resp.Status)
	}

	// The agreement page counts the two labels.
	step("agreement", chromedp.Navigate(in.srv.URL+"/agreement"))
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if n, err := chromedp.Run(sctx, chromedp.Text(chromedp.CSS(`tr[data-scorer="prescreen"] td.labels`))); err != nil || n != "2" {
		t.Fatalf("the agreement page counts %q labels of prescreen (%v); want 2", n, err)
	}
}
