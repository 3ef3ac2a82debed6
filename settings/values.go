package settings

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quiverdb/quiver/qerr"
)

// Values are the settings given explicitly, by canonical name, each with
// its canonical value. A setting absent from Values takes its default
// where it is applied. Values are immutable: With returns a new one, so a
// failed SET changes nothing and a snapshot may be shared. The zero Values
// is empty and ready to use.
type Values struct {
	m map[string]string
}

// With returns v with the setting name (or an alias) set to text, checked
// and made canonical. An unknown name or a bad value is a planning error
// naming both; v itself never changes.
func (v Values) With(name, text string) (Values, error) {
	s, err := Find(name)
	if err != nil {
		return v, err
	}
	c, err := s.Parse(text)
	if err != nil {
		return v, qerr.Planf("setting %s: %w", s.Name, err)
	}
	m := make(map[string]string, len(v.m)+1)
	maps.Copy(m, v.m)
	m[s.Name] = c
	return Values{m: m}, nil
}

// Decode checks settings received from elsewhere (the wire, a map built by
// hand) and returns them as Values. where names the receiver in errors
// ("scheduler"): a bad or unknown setting is a planning error naming
// where, the setting and the value.
func Decode(where string, wire map[string]string) (Values, error) {
	var v Values
	// Check in name order so that the error is the same every time.
	names := make([]string, 0, len(wire))
	for k := range wire {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		s, ok := Lookup(k)
		if !ok {
			return Values{}, qerr.Planf("%s: unknown setting %q; settings are: %s", where, k, strings.Join(Names(), ", "))
		}
		c, err := s.Parse(wire[k])
		if err != nil {
			return Values{}, qerr.Planf("%s: setting %s: %w", where, s.Name, err)
		}
		if v.m == nil {
			v.m = make(map[string]string, len(wire))
		}
		v.m[s.Name] = c
	}
	return v, nil
}

// Wire returns the settings as the map sent to the scheduler and the
// executors: only those given explicitly, so that the receiver's defaults
// apply to the rest. The map is the caller's.
func (v Values) Wire() map[string]string {
	m := make(map[string]string, len(v.m))
	maps.Copy(m, v.m)
	return m
}

// Merge returns v with every setting of over put over it.
func (v Values) Merge(over Values) Values {
	if len(over.m) == 0 {
		return v
	}
	m := make(map[string]string, len(v.m)+len(over.m))
	maps.Copy(m, v.m)
	maps.Copy(m, over.m)
	return Values{m: m}
}

// Lookup returns the canonical value of s and whether it was given.
func (v Values) Lookup(s *Setting) (string, bool) {
	c, ok := v.m[s.Name]
	return c, ok
}

// Len is the number of settings given.
func (v Values) Len() int { return len(v.m) }

// text is s's value, given or default.
func (v Values) text(s *Setting) (string, bool) {
	if c, ok := v.m[s.Name]; ok {
		return c, true
	}
	return s.Default, false
}

// Int returns the value of an Int or Bytes setting and whether it was
// given; if not, its default (0 when the default is computed by whoever
// applies it, who checks the bool).
func (v Values) Int(s *Setting) (int64, bool) {
	c, given := v.text(s)
	// Canonical values and the registry's defaults always parse (tested).
	n, _ := strconv.ParseInt(c, 10, 64)
	return n, given
}

// Duration returns the value of a Duration setting and whether it was given.
func (v Values) Duration(s *Setting) (time.Duration, bool) {
	c, given := v.text(s)
	d, _ := time.ParseDuration(c)
	return d, given
}

// Text returns the canonical value of s, given or default.
func (v Values) Text(s *Setting) string {
	c, _ := v.text(s)
	return c
}
