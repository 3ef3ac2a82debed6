package catalog

import "testing"

func TestDisjointRanges(t *testing.T) {
	k := func(lo, hi int64) KeyRange { return KeyRange{Lo: lo, Hi: hi, Known: true} }
	cases := []struct {
		name   string
		ranges []KeyRange
		want   bool
	}{
		{"apart, out of order", []KeyRange{k(20, 30), k(1, 10)}, true},
		{"touching value", []KeyRange{k(1, 10), k(10, 20)}, false},
		{"nested", []KeyRange{k(1, 100), k(40, 50)}, false},
		{"empty partition", []KeyRange{k(1, 10), EmptyRange, k(11, 12)}, true},
		{"unknown", []KeyRange{k(1, 10), {}}, false},
		{"union of empty", []KeyRange{EmptyRange.Union(k(3, 4)), k(5, 5)}, true},
		{"apart, but NULLs", []KeyRange{k(1, 10), {Lo: 20, Hi: 30, Bounded: true}}, false},
	}
	for _, c := range cases {
		if got := Disjoint(c.ranges); got != c.want {
			t.Errorf("%s: Disjoint(%v) = %v, want %v", c.name, c.ranges, got, c.want)
		}
	}
	if r := k(1, 2).Union(KeyRange{}); r.Known || r.Bounded {
		t.Errorf("union with an unknown range is known: %v", r)
	}
	// Bounds with NULLs: the union stays bounded, never known.
	nulls := KeyRange{Lo: -4, Hi: 0, Bounded: true}
	if r := EmptyRange.Union(k(1, 2)).Union(nulls); r.Known || !r.Bounded || r.Lo != -4 || r.Hi != 2 {
		t.Errorf("union with a range with NULLs: %+v", r)
	}
	if r := nulls.Union(KeyRange{}); r.Known || r.Bounded {
		t.Errorf("union of a range with NULLs and an unknown one: %+v", r)
	}
}
