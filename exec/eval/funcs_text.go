package eval

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// maxStringBytes bounds one value built by repeat and the pads, so that a
// large count is a clear error rather than an exhausted allocator.
const maxStringBytes = 1 << 28

// moreKernels are the library's kernels beside the core ones in funcs.go.
var moreKernels = mergeKernels(textKernels, mathKernels, dateKernels, timeKernels, zoneKernels)

type kernelMap = map[string]func(*physical.ScalarFunc) (node, error)

func mergeKernels(ms ...kernelMap) kernelMap {
	out := kernelMap{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// strBody builds a rowFunc with a text result over arguments of types.
func strBody(body func(a []rowArg, i int, dst []byte) ([]byte, bool, error), types ...arrow.DataType) func(*physical.ScalarFunc) (node, error) {
	return func(f *physical.ScalarFunc) (node, error) {
		r, err := newRowFunc(f, tUtf8, types...)
		if err != nil {
			return nil, err
		}
		r.str = body
		return r.finish(f)
	}
}

func i64Body(out arrow.DataType, body func(a []rowArg, i int) (int64, bool, error), types ...arrow.DataType) func(*physical.ScalarFunc) (node, error) {
	return func(f *physical.ScalarFunc) (node, error) {
		r, err := newRowFunc(f, out, types...)
		if err != nil {
			return nil, err
		}
		r.i64 = body
		return r.finish(f)
	}
}

func boolBody(body func(a []rowArg, i int) (bool, bool, error), types ...arrow.DataType) func(*physical.ScalarFunc) (node, error) {
	return func(f *physical.ScalarFunc) (node, error) {
		r, err := newRowFunc(f, boolType, types...)
		if err != nil {
			return nil, err
		}
		r.b = body
		return r.finish(f)
	}
}

var textKernels = kernelMap{
	"replace": strBody(func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
		s, from, to := a[0].str(i), a[1].str(i), a[2].str(i)
		if len(from) == 0 {
			return append(dst, s...), true, nil
		}
		for {
			k := bytes.Index(s, from)
			if k < 0 {
				return append(dst, s...), true, nil
			}
			dst = append(append(dst, s[:k]...), to...)
			s = s[k+len(from):]
		}
	}, tUtf8),
	"lpad": compilePad(true),
	"rpad": compilePad(false),
	"strpos": i64Body(tInt64, func(a []rowArg, i int) (int64, bool, error) {
		s, sub := a[0].str(i), a[1].str(i)
		k := bytes.Index(s, sub)
		if k < 0 {
			return 0, true, nil
		}
		return int64(utf8.RuneCount(s[:k])) + 1, true, nil
	}, tUtf8),
	"split_part": strBody(func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
		s, delim, n := a[0].str(i), a[1].str(i), a[2].int(i)
		if n == 0 {
			return nil, false, qerr.Execf("split_part: field position must not be zero")
		}
		if len(delim) == 0 {
			if n == 1 || n == -1 {
				return append(dst, s...), true, nil
			}
			return dst, true, nil
		}
		if n > 0 {
			for ; n > 1; n-- {
				k := bytes.Index(s, delim)
				if k < 0 {
					return dst, true, nil
				}
				s = s[k+len(delim):]
			}
			if k := bytes.Index(s, delim); k >= 0 {
				s = s[:k]
			}
			return append(dst, s...), true, nil
		}
		for ; n < -1; n++ {
			k := bytes.LastIndex(s, delim)
			if k < 0 {
				return dst, true, nil
			}
			s = s[:k]
		}
		if k := bytes.LastIndex(s, delim); k >= 0 {
			s = s[k+len(delim):]
		}
		return append(dst, s...), true, nil
	}, tUtf8, tUtf8, tInt64),
	"left": strBody(func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
		s, n := a[0].str(i), a[1].int(i)
		if n < 0 {
			n = max(0, int64(utf8.RuneCount(s))+n)
		}
		return append(dst, runeSlice(s, 0, n)...), true, nil
	}, tUtf8, tInt64),
	"right": strBody(func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
		s, n := a[0].str(i), a[1].int(i)
		c := int64(utf8.RuneCount(s))
		from := c - n // n > c: everything
		if n < 0 {
			from = c // n ≤ -c: nothing (and -n may not be representable)
			if n > -c {
				from = -n
			}
		}
		return append(dst, runeSlice(s, max(0, from), c)...), true, nil
	}, tUtf8, tInt64),
	"reverse": strBody(func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
		s := a[0].str(i)
		for len(s) > 0 {
			r, w := utf8.DecodeLastRune(s)
			if w == 1 && r == utf8.RuneError {
				dst = append(dst, s[len(s)-1])
			} else {
				dst = append(dst, s[len(s)-w:]...)
			}
			s = s[:len(s)-w]
		}
		return dst, true, nil
	}, tUtf8),
	"repeat": strBody(func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
		s, n := a[0].str(i), a[1].int(i)
		if n <= 0 || len(s) == 0 {
			return dst, true, nil
		}
		if n > maxStringBytes/int64(len(s)) {
			return nil, false, qerr.Execf("repeat: the result would be longer than %d bytes", maxStringBytes)
		}
		for ; n > 0; n-- {
			dst = append(dst, s...)
		}
		return dst, true, nil
	}, tUtf8, tInt64),
	"starts_with": boolBody(func(a []rowArg, i int) (bool, bool, error) {
		return bytes.HasPrefix(a[0].str(i), a[1].str(i)), true, nil
	}, tUtf8),
	"ends_with": boolBody(func(a []rowArg, i int) (bool, bool, error) {
		return bytes.HasSuffix(a[0].str(i), a[1].str(i)), true, nil
	}, tUtf8),
	"initcap": strBody(func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
		s := a[0].str(i)
		inWord := false
		for len(s) > 0 {
			r, w := utf8.DecodeRune(s)
			s = s[w:]
			alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
			switch {
			case !alnum:
			case inWord:
				r = unicode.ToLower(r)
			default:
				r = unicode.ToUpper(r)
			}
			inWord = alnum
			dst = utf8.AppendRune(dst, r)
		}
		return dst, true, nil
	}, tUtf8),
	"translate": strBody(func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
		s, from, to := a[0].str(i), a[1].str(i), a[2].str(i)
		for len(s) > 0 {
			r, w := utf8.DecodeRune(s)
			s = s[w:]
			k := runeIndex(from, r)
			if k < 0 {
				dst = utf8.AppendRune(dst, r)
				continue
			}
			if rep, ok := runeAt(to, k); ok {
				dst = utf8.AppendRune(dst, rep)
			}
		}
		return dst, true, nil
	}, tUtf8),
	"ascii": i64Body(tInt64, func(a []rowArg, i int) (int64, bool, error) {
		s := a[0].str(i)
		if len(s) == 0 {
			return 0, true, nil
		}
		r, _ := utf8.DecodeRune(s)
		return int64(r), true, nil
	}, tUtf8),
	"chr": strBody(func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
		c := a[0].int(i)
		if c == 0 {
			return nil, false, qerr.Execf("chr: the NUL character (0) is not allowed in text")
		}
		if c < 0 || c > utf8.MaxRune || !utf8.ValidRune(rune(c)) {
			return nil, false, qerr.Execf("chr: %d is not a valid Unicode code point", c)
		}
		return utf8.AppendRune(dst, rune(c)), true, nil
	}, tInt64),
	"md5": strBody(func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
		sum := md5.Sum(a[0].str(i))
		return hex.AppendEncode(dst, sum[:]), true, nil
	}, tUtf8),
	"sha256": strBody(func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
		sum := sha256.Sum256(a[0].str(i))
		return hex.AppendEncode(dst, sum[:]), true, nil
	}, tUtf8),
	"concat_ws":      compileConcatWS,
	"regexp_like":    compileRegexp,
	"regexp_replace": compileRegexp,
	"regexp_match":   compileRegexp,
	"regexp_extract": compileRegexp,
}

func runeIndex(s []byte, r rune) int {
	for k := 0; len(s) > 0; k++ {
		c, w := utf8.DecodeRune(s)
		if c == r {
			return k
		}
		s = s[w:]
	}
	return -1
}

func runeAt(s []byte, k int) (rune, bool) {
	for ; len(s) > 0; k-- {
		c, w := utf8.DecodeRune(s)
		if k == 0 {
			return c, true
		}
		s = s[w:]
	}
	return 0, false
}

// compileTrim is btrim, ltrim and rtrim: of spaces with one argument, of
// the characters of the second otherwise.
func compileTrim(f *physical.ScalarFunc) (node, error) {
	if len(f.Args) == 1 {
		return compileStrMap(f)
	}
	left, right := f.Name != "rtrim", f.Name != "ltrim"
	return strBody(func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
		s, set := a[0].str(i), a[1].str(i)
		if left {
			for len(s) > 0 {
				r, w := utf8.DecodeRune(s)
				if runeIndex(set, r) < 0 {
					break
				}
				s = s[w:]
			}
		}
		if right {
			for len(s) > 0 {
				r, w := utf8.DecodeLastRune(s)
				if runeIndex(set, r) < 0 {
					break
				}
				s = s[:len(s)-w]
			}
		}
		return append(dst, s...), true, nil
	}, tUtf8)(f)
}

// compilePad is lpad and rpad: to n characters, cutting the text when it is
// longer, filling with the fill text (a space by default) repeated.
func compilePad(left bool) func(*physical.ScalarFunc) (node, error) {
	return func(f *physical.ScalarFunc) (node, error) {
		space := []byte{' '}
		hasFill := len(f.Args) == 3
		return strBody(func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
			s, n := a[0].str(i), a[1].int(i)
			fill := space
			if hasFill {
				fill = a[2].str(i)
			}
			if n <= 0 {
				return dst, true, nil
			}
			if n > maxStringBytes/4 {
				return nil, false, qerr.Execf("%s: length %d is too large", f.Name, n)
			}
			c := int64(utf8.RuneCount(s))
			if c >= n || len(fill) == 0 {
				return append(dst, runeSlice(s, 0, n)...), true, nil
			}
			if !left {
				dst = append(dst, s...)
			}
			fc := int64(utf8.RuneCount(fill))
			for need := n - c; need > 0; need -= fc {
				dst = append(dst, runeSlice(fill, 0, need)...)
			}
			if left {
				dst = append(dst, s...)
			}
			return dst, true, nil
		}, tUtf8, tInt64, tUtf8)(f)
	}
}

// compileConcatWS joins arguments 2.. with argument 1, skipping NULLs; a
// NULL separator gives NULL.
func compileConcatWS(f *physical.ScalarFunc) (node, error) {
	r, err := newRowFunc(f, tUtf8, tUtf8)
	if err != nil {
		return nil, err
	}
	r.keepNull = true
	r.str = func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
		if a[0].null(i) {
			return nil, false, nil
		}
		sep, first := a[0].str(i), true
		for k := 1; k < len(a); k++ {
			if a[k].null(i) {
				continue
			}
			if !first {
				dst = append(dst, sep...)
			}
			first = false
			dst = append(dst, a[k].str(i)...)
		}
		return dst, true, nil
	}
	return r.finish(f)
}

// reCache holds the regular expression of the last pattern (and flags) a
// kernel saw: a constant pattern compiles once, a column's pattern again
// only when it changes from row to row.
type reCache struct {
	pat, flags string
	re         *regexp.Regexp
	global     bool
	fn         string
}

func (c *reCache) get(pat, flags []byte) (*regexp.Regexp, error) {
	if c.re != nil && string(pat) == c.pat && string(flags) == c.flags {
		return c.re, nil
	}
	prefix, global := "", false
	for _, fl := range string(flags) {
		switch fl {
		case 'i':
			prefix += "i"
		case 's':
			prefix += "s"
		case 'm', 'n':
			prefix += "m"
		case 'c':
		case 'g':
			if c.fn != "regexp_replace" {
				return nil, qerr.Execf("%s: flag g is only for regexp_replace", c.fn)
			}
			global = true
		default:
			return nil, qerr.Execf("%s: unknown flag %q (i, c, s, m, g)", c.fn, fl)
		}
	}
	src := string(pat)
	if prefix != "" {
		src = "(?" + prefix + ")" + src
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, qerr.Execf("%s: invalid regular expression %q: %v", c.fn, string(pat), err)
	}
	c.pat, c.flags, c.re, c.global = string(pat), string(flags), re, global
	return re, nil
}

// replTemplate turns a PostgreSQL replacement (\1..\9 name groups, \& the
// match, \\ a backslash) into Go's template syntax ($ escaped).
func replTemplate(s []byte) []byte {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '$':
			b = append(b, '$', '$')
		case c == '\\' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			b = append(b, '$', '{', s[i+1], '}')
			i++
		case c == '\\' && i+1 < len(s) && s[i+1] == '&':
			b = append(b, "${0}"...)
			i++
		case c == '\\' && i+1 < len(s) && s[i+1] == '\\':
			b = append(b, '\\')
			i++
		default:
			b = append(b, c)
		}
	}
	return b
}

// compileRegexp is the regexp family, over Go's RE2 syntax (as DuckDB's).
// A constant pattern (and flags) compiles once here and is shared (a
// Regexp is safe for concurrent use); each eval call has its own cache for
// patterns that come from columns. Go's regexp returns match positions in a
// fresh slice per call, so the functions other than regexp_like allocate
// per matching row.
func compileRegexp(f *physical.ScalarFunc) (node, error) {
	name := f.Name
	types := map[string][]arrow.DataType{
		"regexp_like":    {tUtf8},
		"regexp_replace": {tUtf8},
		"regexp_match":   {tUtf8, tUtf8, tInt64},
		"regexp_extract": {tUtf8, tUtf8, tInt64},
	}[name]
	r, err := newRowFunc(f, tUtf8, types...)
	if err != nil {
		return nil, err
	}
	flagArg := map[string]int{"regexp_like": 2, "regexp_replace": 3}[name]
	base := reCache{fn: name}
	constant, flags := true, ""
	if pat := r.args[1]; pat.lit == nil || pat.lit.null {
		constant = false
	}
	if flagArg > 0 && len(r.args) > flagArg {
		if fl := r.args[flagArg]; fl.lit == nil || fl.lit.null {
			constant = false
		} else {
			flags = fl.lit.s
		}
	}
	if constant {
		if _, err := base.get([]byte(r.args[1].lit.s), []byte(flags)); err != nil {
			return nil, err
		}
	}
	flagsOf := func(a []rowArg, i int) []byte {
		if flagArg > 0 && len(a) > flagArg {
			return a[flagArg].str(i)
		}
		return nil
	}
	switch name {
	case "regexp_like":
		r.out = boolType
		r.makeB = func() func(a []rowArg, i int) (bool, bool, error) {
			cache := base
			return func(a []rowArg, i int) (bool, bool, error) {
				re, err := cache.get(a[1].str(i), flagsOf(a, i))
				if err != nil {
					return false, false, err
				}
				return re.Match(a[0].str(i)), true, nil
			}
		}
	case "regexp_replace":
		r.makeStr = func() func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
			cache := base
			var tmplSrc, tmpl []byte
			return func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
				re, err := cache.get(a[1].str(i), flagsOf(a, i))
				if err != nil {
					return nil, false, err
				}
				if rs := a[2].str(i); tmpl == nil || !bytes.Equal(rs, tmplSrc) {
					tmplSrc, tmpl = append(tmplSrc[:0], rs...), replTemplate(rs)
				}
				return regexpReplace(re, cache.global, a[0].str(i), tmpl, dst), true, nil
			}
		}
	default: // regexp_match, regexp_extract
		extract := name == "regexp_extract"
		r.makeStr = func() func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
			cache := base
			return func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
				re, err := cache.get(a[1].str(i), nil)
				if err != nil {
					return nil, false, err
				}
				g := int64(0)
				if !extract && re.NumSubexp() > 0 {
					g = 1
				}
				if len(a) > 2 {
					g = a[2].int(i)
				}
				if g < 0 || g > int64(re.NumSubexp()) {
					return nil, false, qerr.Execf("%s: group %d does not exist (the pattern has %d)", name, g, re.NumSubexp())
				}
				s := a[0].str(i)
				m := re.FindSubmatchIndex(s)
				if m == nil || m[2*g] < 0 {
					return dst, extract, nil
				}
				return append(dst, s[m[2*g]:m[2*g+1]]...), true, nil
			}
		}
	}
	return r.finish(f)
}

// regexpReplace appends s with the first match of re (every match when
// global) replaced by the expanded template.
func regexpReplace(re *regexp.Regexp, global bool, s, tmpl, dst []byte) []byte {
	for {
		m := re.FindSubmatchIndex(s)
		if m == nil {
			return append(dst, s...)
		}
		dst = append(dst, s[:m[0]]...)
		dst = re.Expand(dst, tmpl, s, m)
		if !global {
			return append(dst, s[m[1]:]...)
		}
		if m[1] == m[0] { // an empty match: step over one character
			if m[1] >= len(s) {
				return dst
			}
			_, w := utf8.DecodeRune(s[m[1]:])
			dst = append(dst, s[m[1]:m[1]+w]...)
			s = s[m[1]+w:]
			continue
		}
		s = s[m[1]:]
	}
}
