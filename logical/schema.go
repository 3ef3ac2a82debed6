package logical

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/qerr"
)

// Field is one column of a logical schema. Qualifier is the relation the
// column comes from (a table name or alias); it may be empty.
type Field struct {
	Qualifier string
	Name      string
	Type      arrow.DataType
	Nullable  bool
}

// QualifiedName is "qualifier.name", or "name" without a qualifier.
func (f Field) QualifiedName() string {
	if f.Qualifier == "" {
		return f.Name
	}
	return f.Qualifier + "." + f.Name
}

// Schema is the ordered list of a plan's output columns. It is immutable once built.
type Schema struct {
	Fields []Field
}

// NewSchema returns a schema of fields.
func NewSchema(fields ...Field) *Schema { return &Schema{Fields: fields} }

// Len is the number of columns.
func (s *Schema) Len() int { return len(s.Fields) }

// Field returns the i-th column.
func (s *Schema) Field(i int) Field { return s.Fields[i] }

// IndexOf finds a column by (qualifier, name); an empty qualifier matches any.
// Names compare case-insensitively. It errors if the column is missing or ambiguous,
// listing the valid names.
func (s *Schema) IndexOf(qualifier, name string) (int, error) {
	found, n := s.lookup(qualifier, name)
	if n > 1 {
		return -1, qerr.Planf("column reference %q is ambiguous", qualify(qualifier, name))
	}
	if found < 0 {
		names := make([]string, len(s.Fields))
		for i, f := range s.Fields {
			names[i] = f.QualifiedName()
		}
		return -1, qerr.Planf("column %q not found; valid columns: %s", qualify(qualifier, name), strings.Join(names, ", "))
	}
	return found, nil
}

// Has reports whether the column resolves unambiguously in s. The
// optimizer asks it often, about columns that mostly are not there: it
// builds no error.
func (s *Schema) Has(qualifier, name string) bool {
	_, n := s.lookup(qualifier, name)
	return n == 1
}

// lookup returns the last field matching the reference and how many do
// (stopping at two).
func (s *Schema) lookup(qualifier, name string) (found, n int) {
	found = -1
	for i, f := range s.Fields {
		if f.Name != name && !strings.EqualFold(f.Name, name) {
			continue
		}
		if qualifier != "" && f.Qualifier != qualifier && !strings.EqualFold(f.Qualifier, qualifier) {
			continue
		}
		if n++; n > 1 {
			return found, n
		}
		found = i
	}
	return found, n
}

func qualify(q, n string) string {
	if q == "" {
		return n
	}
	return q + "." + n
}

// Arrow returns the Arrow schema with unqualified field names.
func (s *Schema) Arrow() *arrow.Schema {
	fs := make([]arrow.Field, len(s.Fields))
	for i, f := range s.Fields {
		fs[i] = arrow.Field{Name: f.Name, Type: f.Type, Nullable: f.Nullable}
	}
	return arrow.NewSchema(fs, nil)
}

// Join concatenates two schemas (left columns first).
func (s *Schema) Join(o *Schema) *Schema {
	fs := make([]Field, 0, len(s.Fields)+len(o.Fields))
	fs = append(fs, s.Fields...)
	fs = append(fs, o.Fields...)
	return &Schema{Fields: fs}
}

// WithQualifier returns s with every field's qualifier replaced.
func (s *Schema) WithQualifier(q string) *Schema {
	fs := make([]Field, len(s.Fields))
	for i, f := range s.Fields {
		f.Qualifier = q
		fs[i] = f
	}
	return &Schema{Fields: fs}
}

// WithNullable returns s with every field nullable (the outer side of an outer join).
func (s *Schema) WithNullable() *Schema {
	fs := make([]Field, len(s.Fields))
	for i, f := range s.Fields {
		f.Nullable = true
		fs[i] = f
	}
	return &Schema{Fields: fs}
}

// Equal reports whether two schemas have the same names, qualifiers and types.
// Nullability is ignored: rules may prove a column non-null.
func (s *Schema) Equal(o *Schema) bool {
	if len(s.Fields) != len(o.Fields) {
		return false
	}
	for i := range s.Fields {
		a, b := s.Fields[i], o.Fields[i]
		if a.Name != b.Name || a.Qualifier != b.Qualifier || !arrow.TypeEqual(a.Type, b.Type) {
			return false
		}
	}
	return true
}

// FromArrow builds a schema from an Arrow schema, qualifying every field.
func FromArrow(qualifier string, as *arrow.Schema) *Schema {
	fs := make([]Field, as.NumFields())
	for i, f := range as.Fields() {
		fs[i] = Field{Qualifier: qualifier, Name: f.Name, Type: f.Type, Nullable: f.Nullable}
	}
	return &Schema{Fields: fs}
}

func (s *Schema) String() string {
	parts := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		n := ""
		if f.Nullable {
			n = ";N"
		}
		parts[i] = fmt.Sprintf("%s:%s%s", f.QualifiedName(), TypeString(f.Type), n)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
