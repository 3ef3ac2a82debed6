package sql

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/quiverdb/quiver/qerr"
)

// tokKind is the class of a token.
type tokKind int

const (
	tokIdent       tokKind = iota // bare word: keyword or identifier
	tokQuotedIdent                // "x" or `x`
	tokString                     // 'x'
	tokNumber                     // 12, 1.5, 1e3
	tokPunct                      // operators and punctuation
)

// token is one lexical token of SQL text. Off and End are byte offsets into
// the text; Line and Col are 1-based positions of Off within that text.
type token struct {
	Kind      tokKind
	Text      string // the source text, quotes included
	Off, End  int
	Line, Col int
}

// upper is the token's text upper-cased (keywords compare with it).
func (t token) upper() string { return strings.ToUpper(t.Text) }

// is reports whether t is the bare word kw (case-insensitive).
func (t token) is(kw string) bool { return t.Kind == tokIdent && strings.EqualFold(t.Text, kw) }

// punct reports whether t is the punctuation p.
func (t token) punct(p string) bool { return t.Kind == tokPunct && t.Text == p }

// value returns an identifier's or string's value without quotes.
func (t token) value() string {
	switch t.Kind {
	case tokString:
		if t.Text[0] == 'E' || t.Text[0] == 'e' {
			v, _ := unescapeE(t.Text[2 : len(t.Text)-1])
			return v
		}
		return strings.ReplaceAll(t.Text[1:len(t.Text)-1], "''", "'")
	case tokQuotedIdent:
		q := t.Text[:1]
		return strings.ReplaceAll(t.Text[1:len(t.Text)-1], q+q, q)
	}
	return t.Text
}

// tokenize splits text into tokens, skipping whitespace and comments
// (-- to end of line, /* ... */). Errors locate unterminated quotes and
// comments at their opening, in text's own 1-based coordinates.
func tokenize(text string) ([]token, error) {
	var toks []token
	line, col := 1, 1
	i := 0
	// advance moves i to j, updating line and col.
	advance := func(j int) {
		for ; i < j; i++ {
			if text[i] == '\n' {
				line++
				col = 1
			} else {
				col++
			}
		}
	}
	for i < len(text) {
		c := text[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			advance(i + 1)
			continue
		case c == '-' && i+1 < len(text) && text[i+1] == '-':
			j := strings.IndexByte(text[i:], '\n')
			if j < 0 {
				j = len(text) - i
			}
			advance(i + j)
			continue
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			j := strings.Index(text[i+2:], "*/")
			if j < 0 {
				return nil, qerr.At(line, col, "unterminated /* comment")
			}
			advance(i + 2 + j + 2)
			continue
		}
		start, sl, sc := i, line, col
		var kind tokKind
		end := i + 1
		switch {
		case c == '\'' || c == '"' || c == '`':
			kind = tokString
			if c != '\'' {
				kind = tokQuotedIdent
			}
			j := i + 1
			for {
				k := strings.IndexByte(text[j:], c)
				if k < 0 {
					what := "string"
					if kind == tokQuotedIdent {
						what = "quoted identifier"
					}
					return nil, qerr.At(sl, sc, "unterminated %s", what)
				}
				j += k + 1
				if j < len(text) && text[j] == c { // doubled quote
					j++
					continue
				}
				break
			}
			end = j
		case isDigit(c) || (c == '.' && i+1 < len(text) && isDigit(text[i+1])):
			kind = tokNumber
			j := i
			for j < len(text) && isDigit(text[j]) {
				j++
			}
			if j < len(text) && text[j] == '.' {
				j++
				for j < len(text) && isDigit(text[j]) {
					j++
				}
			}
			if j < len(text) && (text[j] == 'e' || text[j] == 'E') {
				k := j + 1
				if k < len(text) && (text[k] == '+' || text[k] == '-') {
					k++
				}
				if k < len(text) && isDigit(text[k]) {
					for k < len(text) && isDigit(text[k]) {
						k++
					}
					j = k
				}
			}
			end = j
		case (c == 'E' || c == 'e') && i+1 < len(text) && text[i+1] == '\'':
			// E'...': a string with backslash escapes (\' is a quote).
			kind = tokString
			j := i + 2
			for {
				if j >= len(text) {
					return nil, qerr.At(sl, sc, "unterminated string")
				}
				if text[j] == '\\' {
					j += 2
					continue
				}
				if text[j] == '\'' {
					if j+1 < len(text) && text[j+1] == '\'' {
						j += 2
						continue
					}
					break
				}
				j++
			}
			end = min(j+1, len(text))
			if _, err := unescapeE(text[i+2 : j]); err != nil {
				return nil, qerr.At(sl, sc, "%v", err)
			}
		case isIdentStart(c):
			kind = tokIdent
			j := i + 1
			for j < len(text) && isIdentPart(text[j]) {
				j++
			}
			end = j
		default:
			kind = tokPunct
			if i+1 < len(text) {
				switch text[i : i+2] {
				case "<=", ">=", "<>", "!=", "||", "::", ":=", "&&":
					end = i + 2
				}
			}
		}
		toks = append(toks, token{Kind: kind, Text: text[start:end], Off: start, End: end, Line: sl, Col: sc})
		advance(end)
	}
	return toks, nil
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || c >= 0x80 || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isIdentPart(c byte) bool  { return isIdentStart(c) || isDigit(c) || c == '$' }

// Source is one statement's text and where it starts in the script (1-based line and column).
type Source struct {
	Text      string
	Line, Col int
}

// Split splits a script into statements at top-level ';' (not inside quotes,
// comments or parentheses); empty statements are dropped. Each statement's
// text starts at its first token (leading comments are dropped) and ends at
// its last token.
func Split(script string) ([]Source, error) {
	toks, err := tokenize(script)
	if err != nil {
		return nil, err
	}
	var out []Source
	depth := 0
	first := -1
	flush := func(last int) {
		if first >= 0 && last >= first {
			t := toks[first]
			out = append(out, Source{Text: script[t.Off:toks[last].End], Line: t.Line, Col: t.Col})
		}
		first = -1
	}
	for i, t := range toks {
		switch {
		case t.punct("("):
			depth++
		case t.punct(")"):
			if depth > 0 {
				depth--
			}
		case t.punct(";") && depth == 0:
			flush(i - 1)
			continue
		}
		if first < 0 {
			first = i
		}
	}
	flush(len(toks) - 1)
	return out, nil
}

// position maps a byte offset in a statement's text to a script position.
func (s Source) position(off int) (line, col int) {
	if off > len(s.Text) {
		off = len(s.Text)
	}
	before := s.Text[:off]
	nl := strings.Count(before, "\n")
	if nl == 0 {
		return s.Line, s.Col + off
	}
	return s.Line + nl, off - strings.LastIndexByte(before, '\n')
}

// unescapeE decodes the body of an E'...' string: \n, \t, \r, \b, \f,
// \xHH, \uXXXX, \UXXXXXXXX, octal \ooo, and \c for any other c; ”
// is a quote.
func unescapeE(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\'' && i+1 < len(s) && s[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'x', 'u', 'U':
			width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			j := i + 1
			for j < len(s) && j < i+1+width && isHex(s[j]) {
				j++
			}
			if j == i+1 || (e != 'x' && j != i+1+width) {
				return "", fmt.Errorf("invalid escape \\%c in E'' string", e)
			}
			v, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if e == 'x' {
				b.WriteByte(byte(v))
			} else {
				if !utf8.ValidRune(rune(v)) {
					return "", fmt.Errorf("invalid Unicode escape \\%s in E'' string", s[i:j])
				}
				b.WriteRune(rune(v))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j, v := i, 0
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				v = v*8 + int(s[j]-'0')
				j++
			}
			b.WriteByte(byte(v))
			i = j - 1
		default:
			b.WriteByte(e)
		}
	}
	if !utf8.ValidString(b.String()) {
		return "", fmt.Errorf("E'' string is not valid UTF-8")
	}
	return b.String(), nil
}

func isHex(c byte) bool { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }
