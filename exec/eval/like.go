package eval

import (
	"bytes"
	"context"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
)

// likeNode is [NOT] LIKE / ILIKE. A constant pattern is compiled once.
type likeNode struct {
	str     operand
	pat     operand
	m       *matcher // the compiled constant pattern, nil when the pattern varies
	negated bool
	fold    bool // ILIKE
}

// matcher is a compiled LIKE pattern. Without '_' it is a list of literal
// segments separated by '%' and matched with anchored prefix/suffix checks
// and substring search (this covers exact, prefix%, %suffix, %infix% and
// %a%b% sequences); with '_' it falls back to a wildcard matcher over tokens.
type matcher struct {
	segs        [][]byte // literal runs between '%'
	anchorStart bool     // pattern does not start with '%'
	anchorEnd   bool     // pattern does not end with '%'
	general     bool     // pattern has '_': use toks
	toks        []tok
}

type tokKind uint8

const (
	tokLit tokKind = iota
	tokOne
	tokAny
)

type tok struct {
	kind tokKind
	lit  []byte
}

// compilePattern parses a LIKE pattern with '%', '_' and backslash escapes.
func compilePattern(p string, fold bool) *matcher {
	if fold {
		p = strings.ToLower(p)
	}
	var toks []tok
	var lit []byte
	flush := func() {
		if len(lit) > 0 {
			toks = append(toks, tok{kind: tokLit, lit: lit})
			lit = nil
		}
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			i++
			lit = append(lit, p[i])
		case c == '%':
			flush()
			if len(toks) == 0 || toks[len(toks)-1].kind != tokAny {
				toks = append(toks, tok{kind: tokAny})
			}
		case c == '_':
			flush()
			toks = append(toks, tok{kind: tokOne})
		default:
			lit = append(lit, c)
		}
	}
	flush()
	m := &matcher{toks: toks}
	for _, t := range toks {
		if t.kind == tokOne {
			m.general = true
			return m
		}
	}
	m.anchorStart = len(toks) == 0 || toks[0].kind != tokAny
	m.anchorEnd = len(toks) == 0 || toks[len(toks)-1].kind != tokAny
	for _, t := range toks {
		if t.kind == tokLit {
			m.segs = append(m.segs, t.lit)
		}
	}
	return m
}

// match reports whether s matches the pattern.
func (m *matcher) match(s []byte) bool {
	if m.general {
		return matchToks(m.toks, s)
	}
	segs := m.segs
	if len(segs) == 0 {
		// "" matches only ""; "%" matches everything
		return !m.anchorStart || len(s) == 0
	}
	if m.anchorStart && m.anchorEnd && len(segs) == 1 {
		return bytes.Equal(s, segs[0])
	}
	if m.anchorStart {
		if !bytes.HasPrefix(s, segs[0]) {
			return false
		}
		s = s[len(segs[0]):]
		segs = segs[1:]
	}
	if m.anchorEnd {
		last := segs[len(segs)-1]
		if !bytes.HasSuffix(s, last) {
			return false
		}
		s = s[:len(s)-len(last)]
		segs = segs[:len(segs)-1]
	}
	for _, g := range segs {
		i := bytes.Index(s, g)
		if i < 0 {
			return false
		}
		s = s[i+len(g):]
	}
	return true
}

// matchToks is a greedy wildcard match with backtracking to the last '%'
// ('_' consumes one UTF-8 character).
func matchToks(toks []tok, s []byte) bool {
	ti, si := 0, 0
	star, starS := -1, 0
	for {
		if ti < len(toks) {
			t := toks[ti]
			switch t.kind {
			case tokAny:
				star, starS = ti, si
				ti++
				continue
			case tokOne:
				if si < len(s) {
					_, w := utf8.DecodeRune(s[si:])
					si += w
					ti++
					continue
				}
			case tokLit:
				if bytes.HasPrefix(s[si:], t.lit) {
					si += len(t.lit)
					ti++
					continue
				}
			}
		} else if si == len(s) {
			return true
		}
		if star < 0 || starS >= len(s) {
			return false
		}
		_, w := utf8.DecodeRune(s[starS:])
		starS += w
		ti, si = star+1, starS
	}
}

func compileLike(e *physical.Like) (node, error) {
	str, err := compileOperand(e.Expr, stringTarget(e.Expr.DataType()))
	if err != nil {
		return nil, err
	}
	pat, err := compileOperand(e.Pattern, stringTarget(e.Pattern.DataType()))
	if err != nil {
		return nil, err
	}
	l := &likeNode{str: str, pat: pat, negated: e.Negated, fold: e.CaseInsensitive}
	if pat.lit != nil && !pat.lit.null {
		l.m = compilePattern(pat.lit.s, l.fold)
	}
	return l, nil
}

func stringTarget(t arrow.DataType) arrow.DataType {
	if t.ID() == arrow.NULL {
		return nil
	}
	return arrow.BinaryTypes.String
}

func (l *likeNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	n := in.n
	if l.str.isNullConst() || l.pat.isNullConst() {
		if err := drain(ctx, mem, in, &l.str, &l.pat); err != nil {
			return nil, err
		}
		return array.MakeArrayOfNull(mem, boolType, n), nil
	}
	sa, err := l.str.eval(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer sa.Release()
	var pa arrow.Array
	if l.m == nil {
		if pa, err = l.pat.eval(ctx, mem, in); err != nil {
			return nil, err
		}
		defer pa.Release()
	}
	if anyAllNull(sa, pa) {
		return array.MakeArrayOfNull(mem, boolType, n), nil
	}
	out := newBitmap(mem, n, false)
	defer out.Release()
	bm := out.Bytes()
	strs := sa.(*array.String)
	offs, data := strParts(strs)
	var scratch []byte
	m := l.m
	var pats *array.String
	if pa != nil {
		pats = pa.(*array.String)
	}
	lastPat := ""
	for i := 0; i < n; i++ {
		s := data[offs[i]:offs[i+1]]
		if l.fold {
			scratch = appendLower(scratch[:0], s)
			s = scratch
		}
		if pats != nil {
			if p := pats.Value(i); m == nil || p != lastPat {
				m, lastPat = compilePattern(p, l.fold), p
			}
		}
		setBit(bm, i, m.match(s) != l.negated)
	}
	valid := andValidity(mem, n, sa, pa)
	if valid != nil {
		defer valid.Release()
	}
	return makeArray(boolType, n, valid, out), nil
}

// appendLower lower-cases s into dst (ASCII in place, other runes through unicode).
func appendLower(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, w := utf8.DecodeRune(s[i:])
		dst = utf8.AppendRune(dst, toLowerRune(r))
		i += w
	}
	return dst
}
