package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

// forecastsOf forecasts md at each of the delays the view asks for, with
// the engine's notes for a window whose censoring leaves lower bounds.
func forecastsOf(md engine.MethodDistribution, specs []string) engine.ForecastReport {
	rep := engine.ForecastReport{Method: md.Method, Notes: []string{engine.NoteLowerBounds}}
	for _, spec := range specs {
		rep.Rows = append(rep.Rows, forecastOne(md, spec))
	}
	return rep
}

// fixedTuning answers the tuning view's two reads with md, as the engine in
// process would.
type fixedTuning struct {
	Backend
	md engine.MethodDistribution
}

func (f fixedTuning) Distribution(context.Context, string) (engine.MethodDistribution, error) {
	return f.md, nil
}

func (f fixedTuning) Forecast(_ context.Context, _ string, delays []string) (engine.ForecastReport, error) {
	return forecastsOf(f.md, delays), nil
}

// tuningAdmin serves the same over HTTP, as an attached instance's admin
// API does (the engine's own wire encoding).
func tuningAdmin(t *testing.T, md engine.MethodDistribution) Backend {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var v any = md
		if r.URL.Path == "/v1/hedge/forecast" {
			v = forecastsOf(md, strings.Split(r.URL.Query().Get("delays"), ","))
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}))
	t.Cleanup(srv.Close)
	remote, err := NewRemote(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remote.Close)
	return remote
}

// A figure censoring leaves a lower bound reads "≥133ms" in the table and
// in the question enter asks (it said "p99.9 133ms"), attached too (the
// admin API's forecast did not say which figures were lower bounds, so an
// attached console showed them as exact); and the note that figures are
// lower bounds is the table's own, said only when a shown figure is one.
func TestTuningView_LowerBoundsStayLowerBounds(t *testing.T) {
	md := tuningDistribution()
	for name, be := range map[string]Backend{"in-process": fixedTuning{md: md}, "attached": tuningAdmin(t, md)} {
		t.Run(name, func(t *testing.T) {
			m := tuningModel(healthySnapshot(), md, 120, 36)
			m.opts.Backend = be
			m.tuning = tuningView{method: md.Method}
			m.onTuning(tuningFetchCmd(be, md.Method)().(tuningMsg))
			v := m.View()
			if m.tuning.err != nil || !strings.Contains(v, "≥133ms") {
				t.Fatalf("no lower bound in the table (err %v):\n%s", m.tuning.err, v)
			}
			if !strings.Contains(v, "≥ marks a lower bound (p99, p99.9)") || strings.Contains(v, engine.NoteLowerBounds) {
				t.Errorf("the lower-bound note:\n%s", v)
			}
			// The first row that is not the current one, with a ≥ p99.9.
			i := 1
			for ; i < len(m.tuning.rows) && !m.tuning.rows[i].f.Open[3]; i++ {
			}
			m.tuning.cursor = i
			m = pressKeys(m, "enter")
			q := m.confirm.question
			if m.overlay != overlayConfirm || !strings.Contains(q, "p99.9 ≥"+msText(m.tuning.rows[i].f.P999)) || !strings.Contains(q, "a lower bound") {
				t.Fatalf("the question drops the ≥: %q", q)
			}
		})
	}
}

// No figure the table shows is a lower bound (censoring ended the data
// before p50 and p95 only, which it does not show, or none): no note says
// "those figures are lower bounds".
func TestTuningView_NoLowerBoundNoteWithoutAShownLowerBound(t *testing.T) {
	m := tuningModel(healthySnapshot(), tuningDistribution(), 120, 36)
	m.tuning.notes = []string{engine.NoteLowerBounds}
	for i := range m.tuning.rows {
		m.tuning.rows[i].f.Open = [4]bool{true, true, false, false}
	}
	if v := m.View(); strings.Contains(v, "lower bound") || strings.Contains(v, "≥") {
		t.Errorf("a lower-bound note or mark with no shown figure a lower bound:\n%s", v)
	}
	m.tuning.rows[2].f.Open[3] = true
	if v := m.View(); !strings.Contains(v, "≥ marks a lower bound (p99.9)") {
		t.Errorf("one ≥ p99.9, no note naming it:\n%s", v)
	}
}

// A figure resting on too few answers past it (the forecast's Thin: the
// low end of its interval) is a lower bound of another kind than one
// censoring ends the data before; the legend and enter's question said
// only the latter ("censoring ends the data before it") while the
// engine's note said the former.
func TestTuningView_LowerBoundLegendSaysTooFewAnswers(t *testing.T) {
	md := tuningDistribution()
	m := tuningModel(healthySnapshot(), md, 120, 36)
	i := slices.IndexFunc(m.tuning.rows, func(r tuningRow) bool { return r.f.Thin[2] })
	if i < 0 {
		t.Fatal("the fixture has no p99 resting on too few answers")
	}
	const why = "censoring leaves too few answers past it"
	if v := strings.Join(strings.Fields(m.View()), " "); !strings.Contains(v, "≥ marks a lower bound (p99, p99.9): "+why) {
		t.Errorf("the legend does not say why:\n%s", m.View())
	}
	m.tuning.cursor = i
	m = pressKeys(m, "enter")
	if q := m.confirm.question; m.overlay != overlayConfirm || !strings.Contains(q, "(≥: a lower bound: "+why+")") {
		t.Errorf("the question: %q", q)
	}
}
