package themes

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

//go:embed *.toml
var files embed.FS

// Role is the meaning a colour carries on screen.
type Role string

// The roles every theme sets.
const (
	Text          Role = "text"
	Faint         Role = "faint"
	Accent        Role = "accent"
	OK            Role = "ok"
	Warn          Role = "warn"
	Error         Role = "error"
	Border        Role = "border"
	BorderFocus   Role = "border_focus"
	SelectedFg    Role = "selected_fg"
	SelectedBg    Role = "selected_bg"
	HeaderFg      Role = "header_fg"
	HeaderBg      Role = "header_bg"
	BreakerClosed Role = "breaker_closed"
	BreakerHalf   Role = "breaker_half"
	BreakerOpen   Role = "breaker_open"
	Drained       Role = "drained"
	Fault         Role = "fault"
	BannerFg      Role = "banner_fg"
	BannerBg      Role = "banner_bg"
	Spark         Role = "spark"
	SparkFail     Role = "spark_fail"
)

// Roles lists every role, in the order the files list them.
var Roles = []Role{Text, Faint, Accent, OK, Warn, Error, Border, BorderFocus, SelectedFg, SelectedBg,
	HeaderFg, HeaderBg, BreakerClosed, BreakerHalf, BreakerOpen, Drained, Fault, BannerFg, BannerBg, Spark, SparkFail}

// DefaultName is the theme used when none is chosen or the chosen one is
// unusable.
const DefaultName = "dark"

// Theme is a validated theme: every role has a colour.
type Theme struct {
	Name        string
	Description string
	Colors      map[Role]string // "#rrggbb" or an ANSI 256-colour number
}

// Color is the colour of a role.
func (t Theme) Color(r Role) string { return t.Colors[r] }

type themeFile struct {
	Name        string            `toml:"name"`
	Description string            `toml:"description"`
	Roles       map[string]string `toml:"roles"`
}

var colorRe = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// Parse reads and validates a theme file: known keys only, every role set,
// every colour well-formed. Errors name the file and the role.
func Parse(source string, data []byte) (Theme, error) {
	var f themeFile
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		var strict *toml.StrictMissingError
		if errors.As(err, &strict) {
			var keys []string
			for _, e := range strict.Errors {
				keys = append(keys, strings.Join(e.Key(), "."))
			}
			return Theme{}, fmt.Errorf("theme %s: unknown keys: %s", source, strings.Join(keys, ", "))
		}
		return Theme{}, fmt.Errorf("theme %s: %v", source, err)
	}
	var errs []string
	if strings.TrimSpace(f.Name) == "" {
		errs = append(errs, "name: required")
	}
	t := Theme{Name: f.Name, Description: f.Description, Colors: map[Role]string{}}
	for _, r := range Roles {
		c, ok := f.Roles[string(r)]
		switch {
		case !ok:
			errs = append(errs, fmt.Sprintf("roles.%s: required", r))
		case !validColor(c):
			errs = append(errs, fmt.Sprintf("roles.%s: %q is not \"#rrggbb\" or an ANSI colour number 0-255", r, c))
		default:
			t.Colors[r] = c
		}
	}
	for k := range f.Roles {
		if !slices.Contains(Roles, Role(k)) {
			errs = append(errs, fmt.Sprintf("roles.%s: no such role", k))
		}
	}
	if len(errs) > 0 {
		slices.Sort(errs)
		return Theme{}, fmt.Errorf("theme %s:\n  %s", source, strings.Join(errs, "\n  "))
	}
	return t, nil
}

func validColor(c string) bool {
	if colorRe.MatchString(c) {
		return true
	}
	n, err := strconv.Atoi(c)
	return err == nil && n >= 0 && n <= 255
}

// Names lists the embedded themes.
func Names() []string {
	entries, _ := files.ReadDir(".")
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".toml"))
	}
	slices.Sort(out)
	return out
}

// Load returns the embedded theme of that name, or reads a theme file when
// nameOrPath ends in ".toml".
func Load(nameOrPath string) (Theme, error) {
	if strings.HasSuffix(nameOrPath, ".toml") {
		data, err := os.ReadFile(nameOrPath)
		if err != nil {
			return Theme{}, fmt.Errorf("theme %s: %v", nameOrPath, err)
		}
		return Parse(nameOrPath, data)
	}
	data, err := files.ReadFile(nameOrPath + ".toml")
	if err != nil {
		return Theme{}, fmt.Errorf("no theme named %q (embedded: %s; or give a path to a .toml file)", nameOrPath, strings.Join(Names(), ", "))
	}
	return Parse(nameOrPath+".toml", data)
}

// Default is the embedded default theme; it is validated by the tests, so
// it cannot fail here.
func Default() Theme {
	t, err := Load(DefaultName)
	if err != nil {
		panic(err)
	}
	return t
}

// LoadOrDefault is Load with the fallback the console uses: a theme that
// is missing or invalid gives the default and the reason, for a warning.
func LoadOrDefault(nameOrPath string) (Theme, error) {
	t, err := Load(nameOrPath)
	if err != nil {
		return Default(), err
	}
	return t, nil
}
