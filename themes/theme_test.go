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
