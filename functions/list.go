package functions

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/qerr"
)

var (
	text    = arrow.BinaryTypes.String
	bigint  = arrow.PrimitiveTypes.Int64
	double  = arrow.PrimitiveTypes.Float64
	boolean = arrow.FixedWidthTypes.Boolean
	date    = arrow.FixedWidthTypes.Date32
	// timestamp has no time zone (microseconds), as logical.Timestamp.
	timestamp = &arrow.TimestampType{Unit: arrow.Microsecond}
	interval  = arrow.FixedWidthTypes.MonthDayNanoInterval
	// timestamptz is TIMESTAMPTZ in UTC; SQL gives it the session's zone.
	timestamptz = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
)

// truncType is date_trunc's result: a date stays a date, a timestamp a timestamp.
var truncType = Ret{Desc: "type of argument 2", Rule: func(args []arrow.DataType) (arrow.DataType, error) {
	switch args[1].ID() {
	case arrow.DATE32, arrow.TIMESTAMP, arrow.NULL:
		return args[1], nil
	}
	return nil, qerr.Planf("function date_trunc needs a date or timestamp, not %s", args[1])
}}

// zoneConvType is timezone's result: a TIMESTAMPTZ becomes a TIMESTAMP, a
// TIMESTAMP or date a TIMESTAMPTZ (of the type of argument 3 if given, which
// SQL adds to give it the session's zone).
var zoneConvType = Ret{Desc: "timestamp for a timestamptz, else timestamptz", Rule: func(args []arrow.DataType) (arrow.DataType, error) {
	switch t := args[1].(type) {
	case *arrow.TimestampType:
		if t.TimeZone != "" {
			return timestamp, nil
		}
	case *arrow.NullType, *arrow.Date32Type:
	default:
		return nil, qerr.Planf("function timezone needs a timestamp or timestamptz, not %s", args[1])
	}
	if len(args) > 2 {
		if t, ok := args[2].(*arrow.TimestampType); ok && t.TimeZone != "" {
			return t, nil
		}
	}
	return timestamptz, nil
}}

func sig(args ...Arg) Sig { return Sig{Args: args} }

// opt is a signature whose last k arguments may be left out.
func opt(k int, args ...Arg) Sig { return Sig{Args: args, Optional: k} }

// variadic is a signature whose last argument repeats.
func variadic(args ...Arg) Sig { return Sig{Args: args, Variadic: true} }

func scalar(name string, ret Ret, doc string, sigs ...Sig) *Func {
	return &Func{Name: name, Kind: Scalar, Sigs: sigs, Ret: ret, Doc: doc}
}

func (f *Func) alias(names ...string) *Func { f.Aliases = append(f.Aliases, names...); return f }
func (f *Func) lowered() *Func              { f.Lowered = true; return f }
func (f *Func) mayBeNull() *Func            { f.NullOnValid = true; return f }

func fixed(t arrow.DataType) Ret { return Ret{Fixed: t} }

// argType is the rule "the type of argument i".
func argType(i int) Ret { return Ret{Arg: i} }

// integralType is the result of ceil, floor and trunc: integers and floats
// keep their type, DECIMAL(p, s) becomes DECIMAL(p-s+1, 0) (the carry of
// ceil(9.5) = 10 needs the extra digit).
var integralType = Ret{Desc: "type of argument 1 (a decimal's scale 0)", Rule: func(args []arrow.DataType) (arrow.DataType, error) {
	if d, ok := args[0].(*arrow.Decimal128Type); ok {
		return &arrow.Decimal128Type{Precision: min(38, max(1, d.Precision-d.Scale+1)), Scale: 0}, nil
	}
	return args[0], nil
}}

func init() {
	register(
		// Strings.
		scalar("upper", fixed(text), "the text in upper case", sig(Text)).alias("ucase"),
		scalar("lower", fixed(text), "the text in lower case", sig(Text)).alias("lcase"),
		scalar("trim", fixed(text), "the text without leading and trailing spaces", sig(Text)),
		scalar("btrim", fixed(text), "the text without leading and trailing characters (spaces, or those of argument 2)", opt(1, Text, Text)),
		scalar("ltrim", fixed(text), "the text without leading characters (spaces, or those of argument 2)", opt(1, Text, Text)),
		scalar("rtrim", fixed(text), "the text without trailing characters (spaces, or those of argument 2)", opt(1, Text, Text)),
		scalar("length", fixed(bigint), "the number of characters", sig(Text)).alias("char_length", "character_length", "len"),
		scalar("concat", fixed(text), "the arguments as text, joined (NULLs skipped)", variadic(Display)),
		scalar("concat_ws", fixed(text), "arguments 2.. as text, joined by argument 1 (NULLs skipped)", variadic(Text, Display)),
		scalar("substring", fixed(text), "characters from a 1-based position, optionally this many", opt(1, Text, Int, Int)).alias("substr", "mid"),
		scalar("replace", fixed(text), "the text with every occurrence of argument 2 replaced by argument 3", sig(Text, Text, Text)),
		scalar("lpad", fixed(text), "the text padded on the left to a length (with spaces, or argument 3)", opt(1, Text, Int, Text)),
		scalar("rpad", fixed(text), "the text padded on the right to a length (with spaces, or argument 3)", opt(1, Text, Int, Text)),
		scalar("strpos", fixed(bigint), "the 1-based character position of argument 2 in argument 1, 0 if absent (also POSITION(sub IN s))", sig(Text, Text)).alias("instr"),
		scalar("split_part", fixed(text), "field n (1-based; negative counts from the end) of the text split at a delimiter", sig(Text, Text, Int)),
		scalar("left", fixed(text), "the first n characters (all but the last -n for negative n)", sig(Text, Int)),
		scalar("right", fixed(text), "the last n characters (all but the first -n for negative n)", sig(Text, Int)),
		scalar("reverse", fixed(text), "the characters in reverse order", sig(Text)),
		scalar("repeat", fixed(text), "the text repeated n times", sig(Text, Int)),
		scalar("starts_with", fixed(boolean), "whether the text starts with argument 2", sig(Text, Text)).alias("prefix"),
		scalar("ends_with", fixed(boolean), "whether the text ends with argument 2", sig(Text, Text)).alias("suffix"),
		scalar("initcap", fixed(text), "each word's first letter upper case, the rest lower case", sig(Text)),
		scalar("translate", fixed(text), "each character of argument 2 replaced by the one at its position in argument 3 (removed if none)", sig(Text, Text, Text)),
		scalar("ascii", fixed(bigint), "the code point of the first character (0 for empty text)", sig(Text)),
		scalar("chr", fixed(text), "the character with this code point", sig(Int)),
		scalar("md5", fixed(text), "the MD5 digest of the text's bytes, as hex", sig(Text)),
		scalar("sha256", fixed(text), "the SHA-256 digest of the text's bytes, as hex", sig(Text)),
		scalar("regexp_like", fixed(boolean), "whether the text matches the regular expression (flags: i, c, s, m)", opt(1, Text, Text, Text)).alias("regexp_matches"),
		scalar("regexp_replace", fixed(text), "the text with the first match (every match with flag g) replaced; \\1 names a group", opt(1, Text, Text, Text, Text)),
		scalar("regexp_match", fixed(text), "the first match's group n (the whole match for 0, the first group by default when there is one), NULL without a match", opt(1, Text, Text, Int)).mayBeNull(),
		scalar("regexp_extract", fixed(text), "the first match's group n (0: the whole match, the default), empty text without a match", opt(1, Text, Text, Int)),

		// Numbers.
		scalar("abs", argType(0), "the absolute value", sig(Number)),
		scalar("round", argType(0), "rounded half away from zero to d digits after the point (0 by default)", opt(1, Number, Int)),
		scalar("ceil", integralType, "the smallest integral value not below x", sig(Number)).alias("ceiling"),
		scalar("floor", integralType, "the largest integral value not above x", sig(Number)),
		scalar("trunc", integralType, "x truncated toward zero", sig(Number)),
		scalar("power", fixed(double), "x raised to the power y", sig(Float, Float)).alias("pow"),
		scalar("sqrt", fixed(double), "the square root", sig(Float)),
		scalar("cbrt", fixed(double), "the cube root", sig(Float)),
		scalar("exp", fixed(double), "e raised to the power x", sig(Float)),
		scalar("ln", fixed(double), "the natural logarithm", sig(Float)),
		scalar("log", fixed(double), "the base-10 logarithm of x, or log(b, x) the base-b logarithm", sig(Float), sig(Float, Float)),
		scalar("log10", fixed(double), "the base-10 logarithm", sig(Float)),
		scalar("log2", fixed(double), "the base-2 logarithm", sig(Float)),
		scalar("sign", fixed(bigint), "-1, 0 or 1 by the sign of x", sig(Float)),
		scalar("mod", argType(0), "the remainder of x / y (the % operator)", sig(Number, Number)).lowered(),
		scalar("pi", fixed(double), "π", sig()),
		&Func{Name: "random", Kind: Scalar, Sigs: []Sig{sig()}, Ret: fixed(double), Volatile: true, Doc: "a uniformly random number in [0, 1), each row its own"},
		scalar("greatest", argType(0), "the largest non-NULL argument", variadic(Same)),
		scalar("least", argType(0), "the smallest non-NULL argument", variadic(Same)),
		scalar("degrees", fixed(double), "radians to degrees", sig(Float)),
		scalar("radians", fixed(double), "degrees to radians", sig(Float)),
		scalar("sin", fixed(double), "the sine", sig(Float)),
		scalar("cos", fixed(double), "the cosine", sig(Float)),
		scalar("tan", fixed(double), "the tangent", sig(Float)),
		scalar("cot", fixed(double), "the cotangent", sig(Float)),
		scalar("asin", fixed(double), "the arcsine", sig(Float)),
		scalar("acos", fixed(double), "the arccosine", sig(Float)),
		scalar("atan", fixed(double), "the arctangent", sig(Float)),
		scalar("atan2", fixed(double), "the arctangent of y/x, in the quadrant of (x, y)", sig(Float, Float)),

		// Conditionals.
		scalar("coalesce", argType(0), "the first non-NULL argument", variadic(Same)),
		scalar("ifnull", argType(0), "the first argument unless it is NULL, else the second", sig(Same, Same)).alias("nvl"),
		scalar("nullif", argType(0), "NULL where the two arguments are equal, else the first", sig(Same, Same)).mayBeNull(),
		scalar("if", argType(1), "argument 2 where the condition holds, else argument 3", sig(Bool, Same, Same)).lowered(),
		scalar("try_cast", argType(1), "the value cast to a type, NULL where it does not convert (TRY_CAST(x AS type))", sig(AnyArg, AnyArg)).mayBeNull(),

		// Dates and times.
		scalar("date_part", fixed(bigint), "a field of a date, timestamp, time or interval: year, month, day, quarter, week, dow, isodow, doy, isoyear, decade, century, millennium, epoch, hour, minute, second, millisecond, microsecond; of a timestamptz also timezone, timezone_hour, timezone_minute (EXTRACT)", sig(Text, Temporal)).alias("datepart"),
		scalar("date_trunc", truncType, "the date or timestamp truncated to the start of its millennium, century, decade, year, quarter, month, week, day, hour, minute, second, millisecond or microsecond", sig(Text, Temporal)).alias("datetrunc"),
		scalar("timezone", zoneConvType, "timezone(zone, x), x AT TIME ZONE zone: a TIMESTAMPTZ as the TIMESTAMP zone's clock shows it, or the TIMESTAMPTZ at which zone's clock shows a TIMESTAMP (zone: an IANA name, UTC or an offset such as +02:00)", opt(1, Text, Temporal, Temporal)),
		scalar("make_date", fixed(date), "the date of a year, month and day", sig(Int, Int, Int)),
		scalar("make_timestamp", fixed(timestamp), "the timestamp of a year, month, day, hour, minute and (fractional) second", sig(Int, Int, Int, Int, Int, Float)),
		scalar("year", fixed(bigint), "the year of a date or timestamp", sig(Temporal)).lowered(),
		scalar("month", fixed(bigint), "the month of a date or timestamp (1-12)", sig(Temporal)).lowered(),
		scalar("day", fixed(bigint), "the day of the month of a date or timestamp", sig(Temporal)).alias("dayofmonth").lowered(),
		scalar("quarter", fixed(bigint), "the quarter of a date or timestamp (1-4)", sig(Temporal)).lowered(),
		scalar("hour", fixed(bigint), "the hour of a timestamp or time (0-23)", sig(Temporal)).lowered(),
		scalar("minute", fixed(bigint), "the minute of a timestamp or time (0-59)", sig(Temporal)).lowered(),
		scalar("second", fixed(bigint), "the whole seconds of a timestamp or time (0-59)", sig(Temporal)).lowered(),
		scalar("week", fixed(bigint), "the ISO week of a date or timestamp (1-53)", sig(Temporal)).alias("weekofyear").lowered(),
		scalar("dayofweek", fixed(bigint), "the day of the week of a date or timestamp (Sunday 0 - Saturday 6)", sig(Temporal)).lowered(),
		scalar("dayofyear", fixed(bigint), "the day of the year of a date or timestamp (1-366)", sig(Temporal)).lowered(),
		scalar("epoch", fixed(double), "the seconds since 1970-01-01 00:00:00 of a timestamp (with the fraction), or the length of an interval in seconds", sig(Temporal)),
		scalar("epoch_ms", fixed(bigint), "the milliseconds since 1970-01-01 00:00:00 of a timestamp", sig(Timestamp)),
		scalar("current_date", fixed(date), "today's date in the session's time zone, the same for the whole statement", sig()).alias("today").lowered(),
		scalar("now", fixed(timestamptz), "the current instant (a TIMESTAMPTZ, in the session's time zone; localtimestamp is its TIMESTAMP there), the same for the whole statement", sig()).alias("current_timestamp", "localtimestamp").lowered(),
		scalar("to_timestamp", fixed(timestamp), "the timestamp of seconds since 1970-01-01 00:00:00, or of a text read with a PostgreSQL pattern (YYYY-MM-DD HH24:MI:SS)", sig(Float), sig(Text, Text)),
		scalar("strptime", fixed(timestamp), "the timestamp of a text read with a strftime format (%Y-%m-%d %H:%M:%S)", sig(Text, Text)),
		scalar("to_char", fixed(text), "the timestamp as text by a PostgreSQL pattern (YYYY-MM-DD HH24:MI:SS.US, Mon, Day, ...)", sig(Timestamp, Text)),
		scalar("strftime", fixed(text), "the timestamp as text by a strftime format (%Y-%m-%d %H:%M:%S, %b, %A, %j, ...)", sig(Timestamp, Text)),
		scalar("age", fixed(interval), "argument 1 - argument 2 in years, months, days and time, each field borrowing from the next (PostgreSQL)", sig(Timestamp, Timestamp)),
		scalar("make_interval", fixed(interval), "the interval of years, months, weeks, days, hours, minutes and (fractional) seconds, as PostgreSQL's; trailing ones may be left out", opt(6, Int, Int, Int, Int, Int, Int, Float)),
		scalar("date_diff", fixed(bigint), "the number of unit boundaries (year, quarter, month, week, day, hour, minute, second, millisecond, microsecond) crossed from argument 2 to argument 3", sig(Text, Timestamp, Timestamp)).alias("datediff"),
	)
	register(aggregates...)
}

func agg(name string, desc, doc string, a Arg) *Func {
	return &Func{Name: name, Kind: Aggregate, Sigs: []Sig{sig(a)}, Ret: Ret{Desc: desc}, Doc: doc}
}

// aggregates are the aggregate functions; logical.AggregateType holds their
// result types, which depend on decimal precision and scale.
var aggregates = []*Func{
	{Name: "count", Kind: Aggregate, Sigs: []Sig{sig(), sig(AnyArg)}, Ret: fixed(bigint), Doc: "the number of rows (count(*)) or of non-NULL values"},
	agg("sum", "bigint, decimal(38, s) or double", "the sum of the non-NULL values", Number),
	agg("avg", "double", "the mean of the non-NULL values", Number).alias("mean"),
	agg("min", "type of argument 1", "the smallest value", AnyArg),
	agg("max", "type of argument 1", "the largest value", AnyArg),
	agg("var_samp", "double", "the sample variance", Number).alias("variance"),
	agg("var_pop", "double", "the population variance", Number),
	agg("stddev_samp", "double", "the sample standard deviation", Number).alias("stddev"),
	agg("stddev_pop", "double", "the population standard deviation", Number),
	agg("bool_and", "boolean", "true when every non-NULL value is true", Bool).alias("every"),
	agg("bool_or", "boolean", "true when some non-NULL value is true", Bool),
	agg("bit_and", "type of argument 1", "the bitwise AND of the non-NULL values", Int),
	agg("bit_or", "type of argument 1", "the bitwise OR of the non-NULL values", Int),
	agg("bit_xor", "type of argument 1", "the bitwise XOR of the non-NULL values", Int),
	agg("any_value", "type of argument 1", "some non-NULL value of the group", AnyArg).alias("arbitrary"),
	{Name: "covar_pop", Kind: Aggregate, Sigs: []Sig{sig(Float, Float)}, Ret: fixed(double), Doc: "the population covariance of the (y, x) pairs where both are non-NULL"},
	{Name: "covar_samp", Kind: Aggregate, Sigs: []Sig{sig(Float, Float)}, Ret: fixed(double), Doc: "the sample covariance of the (y, x) pairs where both are non-NULL"},
	{Name: "corr", Kind: Aggregate, Sigs: []Sig{sig(Float, Float)}, Ret: fixed(double), Doc: "the correlation coefficient of the (y, x) pairs where both are non-NULL (NULL when either is constant)"},
	agg("median", "double", "the middle value, interpolated (percentile_cont(0.5))", Float),
	{Name: "percentile_cont", Aliases: []string{"quantile_cont", "approx_percentile_cont"}, Kind: Aggregate, Sigs: []Sig{sig(Float, Float)}, Ret: fixed(double),
		Doc: "percentile_cont(f) WITHIN GROUP (ORDER BY x), or percentile_cont(x, f): the value at fraction f of the ordered values, interpolated (computed exactly)"},
	{Name: "percentile_disc", Aliases: []string{"quantile_disc"}, Kind: Aggregate, Sigs: []Sig{sig(Float, Float)}, Ret: fixed(double),
		Doc: "percentile_disc(f) WITHIN GROUP (ORDER BY x), or percentile_disc(x, f): the first ordered value at or past fraction f"},
	{Name: "string_agg", Kind: Aggregate, Sigs: []Sig{sig(Display, Text)}, Ret: fixed(text),
		Doc: "the non-NULL values as text, joined by the separator, in the order of string_agg(x, sep ORDER BY ...) (else in no set order)"},
	agg("array_agg", "list of the type of argument 1", "the values, NULLs included, as a list, in the order of array_agg(x ORDER BY ...) (else in no set order)", AnyArg),
	agg("approx_distinct", "bigint", "the number of distinct non-NULL values (computed exactly)", AnyArg).alias("approx_count_distinct"),
}

// ErrWrongKind is returned when an aggregate is called where a scalar
// function is expected or the other way round.
func ErrWrongKind(f *Func, where string) error {
	return qerr.Planf("%s is an %s function and cannot be used %s", f.Name, f.Kind, where)
}
