package httpapi

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// TestBrowserInsights renders /dashboard/insights in headless Chromium
// after a few searches and questions: the chart is drawn (an SVG image
// with its title, a bar per count, dated axis), the lists show what was
// asked, and the window links lead to their pages.
func TestBrowserInsights(t *testing.T) {
	ctx := browser(t)
	ts := startInsights(t, false)
	shots := screenshotDir(t)
	for _, q := range []string{"webhook+signature", "webhook+signature", "retry+backoff", "zqxj+vbnm"} {
		ts.get(t, "/api/search?q="+q)
	}
	ts.do(t, "POST", "/api/ask", askBody("What is the boiling point of mercury in kelvin?"), jsonCT...)
	ts.do(t, "POST", "/api/ask", askBody("Why did my job run twice after the DST change?"), jsonCT...)

	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte(testUser+":"+testPass))
	var title, label, unanswered, current string
	var bars, xLabels int
	var chartWidth float64
	err := chromedp.Run(ctx,
		network.Enable(),
		network.SetExtraHTTPHeaders(network.Headers{"Authorization": auth}),
		chromedp.Navigate(ts.url+"/dashboard"),
		chromedp.Click(`a[href="/dashboard/insights"]`, chromedp.ByQuery),
		chromedp.WaitVisible("svg.chart", chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById("chart-title").textContent`, &title),
		chromedp.Evaluate(`document.querySelector("svg.chart").getAttribute("aria-labelledby")`, &label),
		chromedp.Evaluate(`document.querySelectorAll("svg.chart rect").length`, &bars),
		chromedp.Evaluate(`document.querySelectorAll("svg.chart .x-axis text").length`, &xLabels),
		chromedp.Evaluate(`document.querySelector("svg.chart").getBoundingClientRect().width`, &chartWidth),
		chromedp.Text(`section[aria-labelledby="h-unanswered"] tbody`, &unanswered, chromedp.ByQuery),
		screenshot(shots, "console-insights"),
		chromedp.Click(`a[href="/dashboard/insights?days=7"]`, chromedp.ByQuery),
		chromedp.WaitVisible("svg.chart", chromedp.ByQuery),
		chromedp.Text(`nav[aria-label="Time window"] [aria-current="page"]`, &current, chromedp.ByQuery),
		screenshot(shots, "console-insights-7"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if title != "Searches and questions per day, the last 30 days" || label != "chart-title chart-desc" {
		t.Errorf("chart title %q, labelled by %q", title, label)
	}
	if bars != 2 || xLabels < 2 || chartWidth < 400 {
		t.Errorf("%d bars, %d dates, %.0f px wide", bars, xLabels, chartWidth)
	}
	if !strings.Contains(unanswered, "what is the boiling point of mercury in kelvin?") || strings.Contains(unanswered, "dst") {
		t.Errorf("unanswered questions: %q", unanswered)
	}
	if current != "7 days" {
		t.Errorf("the window shown is %q", current)
	}
}
