package settings

import (
	"flag"
	"fmt"
	"strconv"
	"time"
)

// FlagVar defines on fs the scheduler flag of s (s.Flag), which sets s's
// default for every session of that scheduler. It is parsed by s's parser,
// so a flag takes exactly what SET takes ("4GiB", "10m"); p starts at s's
// default. p must be an *int64 for an Int or Bytes setting and a
// *time.Duration for a Duration; anything else is a programming error and
// panics when the flags are defined.
func (s *Setting) FlagVar(fs *flag.FlagSet, p any) {
	if s.Flag == "" {
		panic(fmt.Sprintf("settings: %s has no scheduler flag", s.Name))
	}
	fv := &flagValue{s: s, p: p}
	switch p.(type) {
	case *int64:
		if s.Kind != Int && s.Kind != Bytes {
			panic(fmt.Sprintf("settings: flag -%s of %s (%v) given an *int64", s.Flag, s.Name, s.Kind))
		}
	case *time.Duration:
		if s.Kind != Duration {
			panic(fmt.Sprintf("settings: flag -%s of %s (%v) given a *time.Duration", s.Flag, s.Name, s.Kind))
		}
	default:
		panic(fmt.Sprintf("settings: flag -%s of %s given a %T", s.Flag, s.Name, p))
	}
	if err := fv.Set(s.Default); err != nil {
		panic(fmt.Sprintf("settings: default of %s: %v", s.Name, err))
	}
	// flag shows the first back-quoted word of the usage as the value's name.
	what := "a `DURATION` such as 10m"
	if s.Kind != Duration {
		what = "a `SIZE` such as 4GiB, 512MB (powers of 1024) or bytes"
		if s.Kind == Int {
			what = fmt.Sprintf("an `INTEGER` from %d to %d", s.Min, s.Max)
		}
	}
	fs.Var(fv, s.Flag, s.Description+"; "+what+"; a session's setting "+s.Name+" overrides it")
}

type flagValue struct {
	s *Setting
	p any
}

func (f *flagValue) Set(text string) error {
	c, err := f.s.Parse(text)
	if err != nil {
		return err
	}
	switch p := f.p.(type) {
	case *int64:
		*p, _ = strconv.ParseInt(c, 10, 64)
	case *time.Duration:
		*p, _ = time.ParseDuration(c)
	}
	return nil
}

func (f *flagValue) String() string {
	// flag calls String on a zero flagValue to learn the default.
	if f == nil || f.s == nil {
		return ""
	}
	switch p := f.p.(type) {
	case *int64:
		return f.s.Display(strconv.FormatInt(*p, 10))
	case *time.Duration:
		return p.String()
	}
	return ""
}
