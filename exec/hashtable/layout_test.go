package hashtable

// What the tests ask of a table's layout.

// isHashed reports whether t is in the hashed integer layout.
func (t *Table) isHashed() bool {
	_, ok := t.layout.(*hashedInts)
	return ok
}

// directPages is the direct layout's allocated pages (0 in another layout).
func (t *Table) directPages() int {
	if d, ok := t.layout.(*directInts); ok {
		return d.used
	}
	return 0
}

// directWindow is the direct layout's first key and its pages' count.
func (t *Table) directWindow() (lo int64, pages int) {
	if d, ok := t.layout.(*directInts); ok {
		return d.lo, len(d.pages)
	}
	return 0, 0
}

// packedLayout is t's packed layout, or nil.
func (t *Table) packedLayout() *packedInts {
	pk, _ := t.layout.(*packedInts)
	return pk
}

// records is the generic layout's records, or nil.
func (t *Table) records() *keyRecords {
	if g, ok := t.layout.(*generic); ok {
		return g.rec
	}
	return nil
}

// isIntKey reports whether t's ids live in an integer layout (direct,
// hashed, or packed over one of them).
func (t *Table) isIntKey() bool {
	_, g := t.layout.(*generic)
	return !g
}

// genericSlots is the generic layout's slot count (0 in another layout).
func (t *Table) genericSlots() int {
	if g, ok := t.layout.(*generic); ok {
		return len(g.slots)
	}
	return 0
}
