package sim

import (
	"flag"
	"io"
	"math"
	"strings"
	"testing"
	"time"
)

func TestScenario_FlagsBuildTheUpstreams(t *testing.T) {
	s := TailScenario()
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	s.RegisterFlags(fs)
	args := []string{"--endpoints", "4", "--median", "20ms", "--capacity", "150", "--correlated", "0.5", "--seed", "7"}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	epoch := NewEpoch(time.Now())
	cfgs := s.Configs(epoch)
	if len(cfgs) != 4 {
		t.Fatalf("%d configs", len(cfgs))
	}
	for i, c := range cfgs {
		want := Latency{Median: 20 * time.Millisecond, Sigma: 0.3, TailProb: 0.02, TailMin: 500 * time.Millisecond, TailMax: time.Second, Correlated: 0.5}
		if c.Latency != want || c.Capacity != 150 || c.Seed != 7001+int64(i) || c.IncidentSeed != 7 || c.Epoch != epoch || c.Validate() != nil {
			t.Fatalf("config %d: %+v", i, c)
		}
	}
	for _, want := range []string{"4 endpoints", "median 20ms", "2% tails of 500ms–1s", "correlated 0.5 (shared 200ms windows, 1% of the time)", "capacity 150", "seed 7"} {
		if !strings.Contains(s.String(), want) {
			t.Errorf("%q lacks %q", s.String(), want)
		}
	}
	if !strings.Contains(TailScenario().String(), "independent, no capacity limit, seed 1") {
		t.Errorf("default scenario: %s", TailScenario().String())
	}
}

func TestScenario_ApplyOverridesOnlyTheFlagsGiven(t *testing.T) {
	c, _ := Preset("heavy-tail")
	s := Scenario{Latency: Latency{Median: time.Millisecond, Correlated: 0.3}, Capacity: 10, Seed: 4}
	s.Apply(&c, 2, map[string]bool{"correlated": true, "seed": true})
	if c.Latency.Median != 50*time.Millisecond || c.Latency.Correlated != 0.3 || c.Capacity != 0 || c.Seed != 4003 || c.IncidentSeed != 4 {
		t.Fatalf("applied: %+v", c)
	}
}

func TestScenario_ValidateNamesTheFlag(t *testing.T) {
	for want, s := range map[string]Scenario{
		"--endpoints": {Endpoints: 0},
		"--capacity":  {Endpoints: 1, Capacity: -1},
		"correlated":  {Endpoints: 1, Latency: Latency{Correlated: 0.5}},
		"incident":    {Endpoints: 1, Latency: Latency{TailProb: 0.1, Incident: -time.Second}},
	} {
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want it to name %s", s, err, want)
		}
	}
}

// Each flag's own range is checked with the flag named; ValidateFlags
// checks only the flags given (presets set the others), and refuses a
// given --incident 0s, which left out means DefaultIncident.
func TestScenario_ValidateFlagsChecksTheGivenOnes(t *testing.T) {
	nan := math.NaN()
	for want, s := range map[string]Scenario{
		"--tail":     {Endpoints: 1, Latency: Latency{TailProb: nan}},
		"--sigma":    {Endpoints: 1, Latency: Latency{Sigma: -1}},
		"--median":   {Endpoints: 1, Latency: Latency{Median: -time.Millisecond}},
		"--tail-max": {Endpoints: 1, Latency: Latency{TailProb: 0.1, TailMin: time.Second, TailMax: time.Millisecond}},
		"--capacity": {Endpoints: 1, Capacity: nan},
	} {
		if err := s.Validate(); err == nil || !strings.HasPrefix(err.Error(), want+": ") {
			t.Errorf("Validate %+v: %v, want it to name %s", s, err, want)
		}
	}
	bad := Scenario{Endpoints: 0, Latency: Latency{TailProb: 2, Correlated: 0.5}}
	if err := bad.ValidateFlags(map[string]bool{"correlated": true}); err != nil {
		t.Errorf("ValidateFlags checked flags not given: %v", err)
	}
	if err := bad.ValidateFlags(map[string]bool{"tail": true}); err == nil || !strings.HasPrefix(err.Error(), "--tail: want [0, 1]") {
		t.Errorf("ValidateFlags(--tail 2): %v", err)
	}
	s := TailScenario()
	s.Latency.Correlated = 0.5
	if err := s.Validate(); err != nil {
		t.Errorf("--correlated without --incident: %v", err)
	}
	if err := s.ValidateFlags(map[string]bool{"correlated": true, "incident": true}); err == nil || !strings.Contains(err.Error(), "--incident") {
		t.Errorf("--incident 0s given: %v, want it refused", err)
	}
}

// A given flag that changes none of the sims is refused, naming the one it
// goes with; one that changes any of them is not.
func TestInertFlag_RefusesAFlagThatChangesNoSim(t *testing.T) {
	none := Latency{Median: time.Millisecond}
	tail := Latency{Median: time.Millisecond, TailProb: 0.1, TailMin: time.Millisecond, TailMax: time.Second}
	shared := tail
	shared.Correlated = 0.5
	for _, tc := range []struct {
		flag string
		ls   []Latency
		want string // "": accepted
	}{
		{"tail-min", []Latency{none}, "--tail-min goes with --tail above 0"},
		{"tail-max", []Latency{none, none}, "--tail-max goes with --tail above 0"},
		{"tail-min", []Latency{none, tail}, ""},
		{"incident", []Latency{tail}, "--incident goes with --correlated above 0"},
		{"incident", []Latency{tail, shared}, ""},
		{"median", []Latency{none}, ""},
	} {
		err := InertFlag(map[string]bool{tc.flag: true}, tc.ls...)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)) {
			t.Errorf("--%s over %d sims: %v, want %q", tc.flag, len(tc.ls), err, tc.want)
		}
	}
}

func TestParseURL_ScenarioParameters(t *testing.T) {
	c, err := ParseURL("sim://steady?tail=0.02&tail_min=500ms&tail_max=1s&correlated=0.5&incident=300ms&incident_seed=9&capacity=80")
	if err != nil {
		t.Fatal(err)
	}
	if c.Latency.Correlated != 0.5 || c.Latency.Incident != 300*time.Millisecond || c.IncidentSeed != 9 || c.Capacity != 80 {
		t.Fatalf("config %+v", c)
	}
	for _, bad := range []string{"sim://steady?correlated=0.5", "sim://steady?tail=0.1&correlated=2", "sim://fast?capacity=-3", "sim://fast?incident=soon"} {
		if _, err := ParseURL(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
