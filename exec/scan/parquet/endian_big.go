//go:build !(386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm)

package parquet

// littleEndian is false on big-endian hosts: the direct Parquet decoder
// is off there and every file goes through arrow-go's record reader.
const littleEndian = false
