package httpapi

import (
	"fmt"
	"html/template"
	"math"
	"net/url"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/insights"
)

// insightsPage is /dashboard/insights: the report's lists, a chart of the
// daily volume, and links choosing the window and the callers.
type insightsPage struct {
	consolePage
	Report    insights.Report
	Windows   []choice // 7, 30, 90 days (those the retention allows)
	Callers   []choice // all, public, authenticated
	Chart     volumeChart
	Recording bool
	Retention int
}

// choice is a link of a selector; Current marks the one shown.
type choice struct {
	Text, URL string
	Current   bool
}

// consoleInsights serves GET /dashboard/insights.
func (s *console) consoleInsights(ctx *fasthttp.RequestCtx) {
	q, err := s.tally.insightsQuery(ctx)
	if err != nil {
		_, msg := errorStatus(err)
		s.consoleMessage(ctx, "Insights", &flash{Error: true, Text: msg, status: fasthttp.StatusBadRequest, cause: err})
		return
	}
	r := s.tally.report(q)
	p := insightsPage{
		consolePage: s.consolePage(ctx, "Insights", nil, link{Text: "Insights"}),
		Report:      r, Recording: s.insights != nil, Retention: s.tally.retentionDays(),
		Chart: newVolumeChart(r),
	}
	link := func(days int, callers insights.Callers) string {
		v := url.Values{"days": {strconv.Itoa(days)}}
		if callers != insights.All {
			v.Set("callers", callers.String())
		}
		return "/dashboard/insights?" + v.Encode()
	}
	for _, d := range []int{7, 30, 90} {
		if d <= p.Retention {
			p.Windows = append(p.Windows, choice{fmt.Sprintf("%d days", d), link(d, q.Callers), d == r.Days})
		}
	}
	for _, c := range []insights.Callers{insights.All, insights.Public, insights.Authenticated} {
		p.Callers = append(p.Callers, choice{[...]string{"Everyone", "Public", "With credentials"}[c], link(r.Days, c), c == q.Callers})
	}
	s.consoleShow(ctx, "console_insights.html", nil, p)
}

// volumeChart is the daily searches and questions as an SVG bar chart,
// drawn on the server: a pair of bars per day, a y axis of round numbers,
// a date under every few days.
type volumeChart struct {
	Width, Height int
	Left, Bottom  int // plot area: x from Left, y up to Bottom
	Right, Top    int
	Bars          []bar
	YTicks        []tick
	XTicks        []tick
	Title, Desc   string
}

type bar struct {
	X, Y, W, H float64
	Class      string // searches or asks
	Label      string // the bar's <title>
}

type tick struct {
	Pos   float64
	Label string
}

// Chart geometry, in the SVG's user units.
const (
	chartWidth, chartHeight = 880, 260
	chartLeft, chartRight   = 52, 856
	chartTop, chartBottom   = 12, 226
)

func newVolumeChart(r insights.Report) volumeChart {
	c := volumeChart{Width: chartWidth, Height: chartHeight, Left: chartLeft, Right: chartRight, Top: chartTop, Bottom: chartBottom}
	most, busiest := 0, -1
	for i, d := range r.Daily {
		most = max(most, d.Searches, d.Asks)
		if t := d.Searches + d.Asks; t > 0 && (busiest < 0 || t > r.Daily[busiest].Searches+r.Daily[busiest].Asks) {
			busiest = i
		}
	}
	top, step := niceScale(most)
	c.Title = fmt.Sprintf("Searches and questions per day, the last %d days", r.Days)
	c.Desc = fmt.Sprintf("%s and %s from %s to %s.", searches(r.Searches), count(r.Asks, "question"),
		r.From.Format(dateFormat), r.To.Format(dateFormat))
	if busiest >= 0 {
		d := r.Daily[busiest]
		c.Desc += fmt.Sprintf(" The busiest day was %s, with %s and %s.", d.Date.Format(dateFormat), searches(d.Searches), count(d.Asks, "question"))
	}
	height := float64(chartBottom - chartTop)
	y := func(n int) float64 { return chartBottom - height*float64(n)/float64(top) }
	for v := 0; v <= top; v += step {
		c.YTicks = append(c.YTicks, tick{r1(y(v)), thousands(v)})
	}
	slot := float64(chartRight-chartLeft) / float64(max(len(r.Daily), 1))
	w := math.Max(1, math.Min(14, slot*0.4))
	every := max(1, (len(r.Daily)+7)/8) // at most 8 dates under the axis
	for i, d := range r.Daily {
		x := chartLeft + slot*float64(i) + slot/2
		date := d.Date.Format(dateFormat)
		for _, b := range []struct {
			n     int
			class string
			x     float64
			what  string
		}{{d.Searches, "searches", x - w, searches(d.Searches)}, {d.Asks, "asks", x, count(d.Asks, "question")}} {
			if b.n > 0 {
				c.Bars = append(c.Bars, bar{X: r1(b.x), Y: r1(y(b.n)), W: r1(w), H: r1(chartBottom - y(b.n)), Class: b.class,
					Label: date + ": " + b.what})
			}
		}
		if (len(r.Daily)-1-i)%every == 0 { // the last day always has its date
			c.XTicks = append(c.XTicks, tick{r1(x), d.Date.Format("Jan 2")})
		}
	}
	return c
}

// niceScale returns the top of a y axis showing up to most, and its step:
// a round number (1, 2 or 5 times a power of ten) in about four steps.
func niceScale(most int) (top, step int) {
	if most <= 4 {
		return 4, 1
	}
	raw := float64(most) / 4
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*pow >= raw {
			step = int(m * pow)
			break
		}
	}
	return step * ((most + step - 1) / step), step
}

// insightFuncs are the insights page's template functions.
func insightFuncs() template.FuncMap {
	return template.FuncMap{
		"searchHref":  func(q string) string { return searchLink(q, url.Values{}, 0) },
		"insightList": newInsightList,
	}
}

// insightList is what the "insightrows" template shows: a list of
// entries, whether they are questions, the heading of their count,
// whether each links to the search page, and what to say when empty.
type insightList struct {
	Entries    []insights.Entry
	Ask        bool
	CountLabel string
	SearchIt   bool
	Empty      string
}

func newInsightList(entries []insights.Entry, ask bool, countLabel string, searchIt bool, empty string) insightList {
	return insightList{entries, ask, countLabel, searchIt, empty}
}

// r1 rounds a coordinate to a tenth of a unit.
func r1(x float64) float64 { return math.Round(x*10) / 10 }

// searches is "1 search", "2 searches".
func searches(n int) string {
	if n == 1 {
		return "1 search"
	}
	return thousands(n) + " searches"
}
