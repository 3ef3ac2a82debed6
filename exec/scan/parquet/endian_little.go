//go:build 386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm

package parquet

// littleEndian says this host stores integers least significant byte
// first, as Parquet does.
const littleEndian = true
