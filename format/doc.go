// Package format owns how result batches are shown to people and programs:
// aligned tables, CSV/TSV (RFC 4180), JSON and NDJSON, and the text form of
// every value (decimals at their scale, floats in shortest round-trip form,
// dates as YYYY-MM-DD, NULL as the format's null).
//
// format imports Arrow only.
package format
