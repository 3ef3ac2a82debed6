package logical

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestTimestampTZFolding: constants fold into and out of TIMESTAMPTZ in the
// target's (or the source's) zone, and a TIMESTAMPTZ constant prints as
// text that reads back as the same instant.
func TestTimestampTZFolding(t *testing.T) {
	ny := TimestampTZ("America/New_York")
	fold := func(l *Literal, to arrow.DataType) *Literal {
		t.Helper()
		f, ok := foldLiteral(l, to)
		if !ok {
			t.Fatalf("%s does not fold to %s", l, to)
		}
		return f
	}
	a := fold(Lit("2024-07-01 12:00:00"), ny) // EDT: 16:00 UTC
	if got := a.String(); got != "TIMESTAMPTZ '2024-07-01 16:00:00+00'" {
		t.Errorf("text in New York: %s", got)
	}
	if !arrow.TypeEqual(a.Type, ny) {
		t.Errorf("type %s, want %s", a.Type, ny)
	}
	if got := fold(a, Timestamp).String(); got != "TIMESTAMP '2024-07-01 12:00:00'" {
		t.Errorf("back to TIMESTAMP: %s", got)
	}
	if got := fold(a, TimestampUTC).String(); got != a.String() {
		t.Errorf("to UTC: %s, want the same instant %s", got, a)
	}
	if got := fold(&Literal{Type: Date, Value: arrow.Date32(19905)}, ny).String(); got != "TIMESTAMPTZ '2024-07-01 04:00:00+00'" {
		t.Errorf("DATE '2024-07-01' in New York: %s", got)
	}
	if got := fold(a, Date).String(); got != "DATE '2024-07-01'" {
		t.Errorf("to DATE: %s", got)
	}
	if _, ok := foldLiteral(Lit("2024-07-01 12:00 Nowhere/Land"), ny); ok {
		t.Error("an unknown zone name folded")
	}
	if got, _ := SuperType(Timestamp, ny); !arrow.TypeEqual(got, ny) {
		t.Errorf("SuperType(timestamp, timestamptz) = %v", got)
	}
	if got, _ := SuperType(Date, ny); !arrow.TypeEqual(got, ny) {
		t.Errorf("SuperType(date, timestamptz) = %v", got)
	}
}
