package themes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEmbedded_AllValidAndNamedAfterTheirFile(t *testing.T) {
	names := Names()
	if strings.Join(names, ",") != "contrast,dark,light" {
		t.Fatalf("embedded themes %v, want contrast, dark, light", names)
	}
	for _, n := range names {
		th, err := Load(n)
		if err != nil {
			t.Fatal(err)
		}
		if th.Name != n || len(th.Colors) != len(Roles) {
			t.Errorf("%s: name %q, %d colours", n, th.Name, len(th.Colors))
		}
	}
}

func TestParse_RejectsNamingTheRole(t *testing.T) {
	good, _ := files.ReadFile("dark.toml")
	cases := map[string]string{
		"missing role": strings.Replace(string(good), "spark_fail     = \"#ff5f5f\"\n", "", 1),
		"bad colour":   strings.Replace(string(good), `warn           = "#ffaf00"`, `warn = "orange"`, 1),
		"unknown role": string(good) + "\nsparkle = \"#000000\"\n",
		"unknown key":  "colour = 1\n" + string(good),
	}
	want := map[string]string{"missing role": "roles.spark_fail: required", "bad colour": "roles.warn:",
		"unknown role": "roles.sparkle: no such role", "unknown key": "colour"}
	for name, data := range cases {
		_, err := Parse("x.toml", []byte(data))
		if err == nil || !strings.Contains(err.Error(), want[name]) {
			t.Errorf("%s: %v, want an error naming %q", name, err, want[name])
		}
	}
}

func TestLoadOrDefault_FallsBackWithTheReason(t *testing.T) {
	th, err := LoadOrDefault("neon")
	if err == nil || th.Name != DefaultName || !strings.Contains(err.Error(), "contrast, dark, light") {
		t.Fatalf("unknown theme: %v, %q", err, th.Name)
	}
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("name = \"bad\"\n[roles]\ntext = \"#000000\"\n"), 0o644)
	th, err = LoadOrDefault(bad)
	if err == nil || th.Name != DefaultName || !strings.Contains(err.Error(), "roles.accent: required") {
		t.Fatalf("invalid file: %v, %q", err, th.Name)
	}
	good := filepath.Join(t.TempDir(), "mine.toml")
	data, _ := files.ReadFile("light.toml")
	os.WriteFile(good, []byte(strings.Replace(string(data), `name = "light"`, `name = "mine"`, 1)), 0o644)
	if th, err := LoadOrDefault(good); err != nil || th.Name != "mine" {
		t.Fatalf("a theme file: %v, %q", err, th.Name)
	}
}

// WCAG 2's contrast, checked against known pairs; Readable moves a colour
// that does not reach the minimum just far enough, keeping its hue.
func TestContrast_AndReadable(t *testing.T) {
	near := func(got, want float64) bool { return got > want-0.05 && got < want+0.05 }
	for _, c := range []struct {
		a, b string
		want float64
	}{{"#000000", "#ffffff", 21}, {"#ffffff", "#ffffff", 1}, {"#f0e442", "#ffffff", 1.32}, {"#e69f00", "#ffffff", 2.25}, {"#767676", "#ffffff", 4.54}, {"196", "#000000", 5.25}} {
		if got := Contrast(c.a, c.b); !near(got, c.want) {
			t.Errorf("Contrast(%s, %s) = %.2f, want %.2f", c.a, c.b, got, c.want)
		}
	}
	for _, c := range []struct {
		n       string
		r, g, b uint8
	}{{"196", 255, 0, 0}, {"16", 0, 0, 0}, {"231", 255, 255, 255}, {"232", 8, 8, 8}, {"7", 192, 192, 192}, {"9", 255, 0, 0}, {"#0a0B0c", 10, 11, 12}} {
		if r, g, b, ok := RGB(c.n); !ok || r != c.r || g != c.g || b != c.b {
			t.Errorf("RGB(%s) = %d,%d,%d %v", c.n, r, g, b, ok)
		}
	}
	got := Readable("#f0e442", "#ffffff", MinContrast)
	r, g, b, _ := RGB(got)
	if Contrast(got, "#ffffff") < MinContrast || Contrast(got, "#ffffff") > 6 || !(r > b && g > b) {
		t.Errorf("yellow on white: %s (%.2f:1), want a dark yellow just past %.1f:1", got, Contrast(got, "#ffffff"), MinContrast)
	}
	if got := Readable("#707070", "#262626", MinContrast); Contrast(got, "#262626") < MinContrast || got == "#ffffff" {
		t.Errorf("grey on dark grey: %s", got)
	}
	if got := Readable("#ffaf00", "#262626", MinContrast); got != "#ffaf00" {
		t.Errorf("a colour that reads already changed: %s", got)
	}
	// Each embedded theme's header text reads on its bar as it is.
	for _, n := range Names() {
		th, _ := Load(n)
		if c := Contrast(th.Color(HeaderFg), th.Color(HeaderBg)); c < MinContrast {
			t.Errorf("%s: header_fg on header_bg %.2f:1", n, c)
		}
	}
}
