// Package eval owns vectorized evaluation of physical expressions over Arrow
// record batches: comparison, arithmetic (exact decimals), boolean logic with
// SQL's three-valued semantics, casts, CASE, LIKE, IN lists and the built-in
// scalar functions. Kernels switch on type once per column, never per row.
//
// eval imports physical, functions, Arrow and exec/filemap (whose file
// dictionary codes let comparisons with constants skip the strings).
package eval
