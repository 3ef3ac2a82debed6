package functions

// windows are the window-only functions; the SQL front end lowers a call
// with OVER (...) to a logical.WindowExpr, whose type rule is logical's.
var windows = []*Func{
	win("row_number", fixed(bigint), "the row's number in its partition, from 1", sig()),
	win("rank", fixed(bigint), "the row's rank in its partition: 1 + the rows before its peers", sig()),
	win("dense_rank", fixed(bigint), "the row's rank in its partition counting peer groups: 1 + the peer groups before it", sig()),
	win("percent_rank", fixed(double), "(rank - 1) / (partition rows - 1), 0 for a one-row partition", sig()),
	win("cume_dist", fixed(double), "the fraction of the partition's rows up to the row's last peer", sig()),
	win("ntile", fixed(bigint), "the bucket from 1 to n of an even split of the partition, the first buckets one row larger", sig(Int)),
	win("lag", argType(0), "the value offset rows (1) before the row in its partition, else the default (NULL)", opt(2, AnyArg, Int, AnyArg)),
	win("lead", argType(0), "the value offset rows (1) after the row in its partition, else the default (NULL)", opt(2, AnyArg, Int, AnyArg)),
	win("first_value", argType(0), "the value at the frame's first row", sig(AnyArg)),
	win("last_value", argType(0), "the value at the frame's last row", sig(AnyArg)),
	win("nth_value", argType(0), "the value at the frame's nth row (from 1), NULL when the frame is shorter", sig(AnyArg, Int)),
}

func win(name string, ret Ret, doc string, s Sig) *Func {
	return &Func{Name: name, Kind: Window, Sigs: []Sig{s}, Ret: ret, Doc: doc, NullOnValid: true, Lowered: true}
}

func init() { register(windows...) }
