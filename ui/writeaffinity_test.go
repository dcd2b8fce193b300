package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// The endpoint that took the latest write says so, with the time its
// affinity has left, as the least urgent badge (W when narrow); the others
// do not.
func TestView_WriteAffinityIsABadgeOfItsEndpoint(t *testing.T) {
	s := healthySnapshot()
	s.WriteAffinity = &engine.WriteAffinity{Endpoint: "infura", Until: t0.Add(25 * time.Second), Hashes: 2}
	for _, c := range []struct {
		w, h int
		want string
	}{
		{160, 48, "● closed    WRITES 25s"},
		{120, 36, "● closed    WRITES 25s"},
		{80, 24, "● closed    W "},
	} {
		got := fixedModel(s, themes.Default(), c.w, c.h).View()
		// The badges follow the state, whether the provider column shows or not.
		if !strings.Contains(lineWith(got, "infura "), c.want) {
			t.Errorf("%d×%d lacks %q:\n%s", c.w, c.h, c.want, got)
		}
		if strings.Contains(got, "WRITES") && c.w == 80 || strings.Count(got, "WRITES") > 1 {
			t.Errorf("%d×%d: the badge is on the wrong endpoints or too long:\n%s", c.w, c.h, got)
		}
	}
}

// Writes are never held to a shadow: made one while its window runs, the
// endpoint that took the latest write shows no WRITES badge (the audit saw
// "SHADOW WRITES 28s" while every write and pending read went elsewhere).
func TestView_AShadowShowsNoWritesBadge(t *testing.T) {
	s := healthySnapshot()
	s.WriteAffinity = &engine.WriteAffinity{Endpoint: "infura", Until: t0.Add(25 * time.Second), Hashes: 2}
	for i := range s.Endpoints {
		if s.Endpoints[i].Name == "infura" {
			s.Endpoints[i].Role, s.Endpoints[i].Share = engine.RoleShadow, 1
		}
	}
	for _, c := range []struct{ w, h int }{{120, 36}, {80, 24}} {
		row := lineWith(fixedModel(s, themes.Default(), c.w, c.h).View(), "infura ")
		if !strings.Contains(row, "SH") || strings.Contains(row, "WRITES") || strings.Contains(row, " W ") {
			t.Errorf("%d×%d: infura's row %q", c.w, c.h, row)
		}
	}
}
