package temporal

import (
	"strings"
	"sync"
	"time"

	// The IANA database is built in, so zone names resolve on a machine
	// without /usr/share/zoneinfo.
	_ "time/tzdata"
)

// zones caches LoadZone's answers by name: kernels look a zone up once per
// batch, and time.LoadLocation reads and parses the database each time.
var zones sync.Map // string → *time.Location

// LoadZone resolves a time zone name: an IANA name (America/New_York,
// Europe/Berlin), UTC (also Z, GMT), or a fixed offset east of UTC
// (+02:00, -05, +0530). ok is false for anything else.
func LoadZone(name string) (*time.Location, bool) {
	name = trimSpace(name)
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location), true
	}
	var loc *time.Location
	switch {
	case name == "":
		return nil, false
	case strings.EqualFold(name, "utc") || strings.EqualFold(name, "z") || strings.EqualFold(name, "gmt") || strings.EqualFold(name, "zulu"):
		loc = time.UTC
	case name[0] == '+' || name[0] == '-':
		off, ok := parseOffset(name)
		if !ok {
			return nil, false
		}
		loc = time.FixedZone(name, int(off/MicrosPerSecond))
	default:
		// time.LoadLocation also opens a file for a name with a path in it
		// when ZONEINFO is set; only database names are wanted.
		if strings.Contains(name, "..") || strings.HasPrefix(name, "/") || strings.EqualFold(name, "local") {
			return nil, false
		}
		l, err := time.LoadLocation(name)
		if err != nil {
			return nil, false
		}
		loc = l
	}
	zones.Store(name, loc)
	return loc, true
}

// ZoneOffset is the UTC offset of loc at the instant us (microseconds since
// the epoch, UTC), in microseconds east of UTC.
func ZoneOffset(us int64, loc *time.Location) int64 {
	if loc == time.UTC {
		return 0
	}
	_, off := time.Unix(FloorDiv(us, MicrosPerSecond), 0).In(loc).Zone()
	return int64(off) * MicrosPerSecond
}

// ToLocal is the wall-clock time in loc of the instant us.
func ToLocal(us int64, loc *time.Location) int64 { return us + ZoneOffset(us, loc) }

// FromLocal is the instant at which the wall clock in loc reads local. A
// local time skipped by a spring-forward transition is read with the offset
// before it (02:30 on a day clocks go from 02:00 to 03:00 is 03:30 of the
// new offset), one repeated by a fall-back transition with the offset after
// it (the later instant): PostgreSQL's rules.
func FromLocal(local int64, loc *time.Location) int64 {
	if loc == time.UTC {
		return local
	}
	// The offsets a day either side bound any one transition near local.
	before := ZoneOffset(local-MicrosPerDay, loc)
	after := ZoneOffset(local+MicrosPerDay, loc)
	okBefore := ZoneOffset(local-before, loc) == before
	okAfter := ZoneOffset(local-after, loc) == after
	switch {
	case okBefore && okAfter:
		return local - min(before, after)
	case okAfter:
		return local - after
	}
	return local - before
}

// ParseTimestampTZ reads a timestamp as ParseTimestamp does, followed by
// an optional zone: a UTC offset, Z or UTC, or a zone name after a space
// ('2024-03-10 12:00 America/New_York'). Without one, the time is read in
// loc. It returns the instant, microseconds since the epoch, UTC.
func ParseTimestampTZ(s string, loc *time.Location) (int64, bool) {
	local, zone, ok := splitTimestamp(s)
	if !ok {
		return 0, false
	}
	if zone == "" {
		return FromLocal(local, loc), true
	}
	if off, ok := parseOffset(zone); ok {
		return local - off, true
	}
	z, ok := LoadZone(zone)
	if !ok {
		return 0, false
	}
	return FromLocal(local, z), true
}

// AppendTimestampTZ renders the instant us as its wall-clock time in loc
// followed by the offset, as PostgreSQL prints a timestamptz: +00, -05,
// +05:30 (minutes, and seconds, only when not zero).
func AppendTimestampTZ(dst []byte, us int64, loc *time.Location) []byte {
	off := ZoneOffset(us, loc)
	dst = AppendTimestamp(dst, us+off)
	return AppendOffset(dst, off)
}

// AppendOffset renders an offset east of UTC as +HH[:MM[:SS]].
func AppendOffset(dst []byte, off int64) []byte {
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	sec := off / MicrosPerSecond
	dst = append(dst, sign)
	dst = append2(dst, int(sec/3600))
	if sec%3600 != 0 {
		dst = append(dst, ':')
		dst = append2(dst, int(sec/60%60))
		if sec%60 != 0 {
			dst = append(dst, ':')
			dst = append2(dst, int(sec%60))
		}
	}
	return dst
}

// FormatTimestampTZ is AppendTimestampTZ as a string.
func FormatTimestampTZ(us int64, loc *time.Location) string {
	return string(AppendTimestampTZ(nil, us, loc))
}

// AddToTimestampTZ returns the instant us + sign*iv with the months and the
// days counted on loc's calendar (a day is 23 or 25 hours across a DST
// change, as in PostgreSQL) and the time as elapsed time.
func AddToTimestampTZ(us int64, iv Interval, sign int, loc *time.Location) int64 {
	if iv.Months != 0 {
		us = FromLocal(AddMonthsToTimestamp(ToLocal(us, loc), sign*int(iv.Months)), loc)
	}
	if iv.Days != 0 {
		us = FromLocal(ToLocal(us, loc)+int64(sign)*int64(iv.Days)*MicrosPerDay, loc)
	}
	return us + int64(sign)*(iv.Nanoseconds/NanosPerMicro)
}
