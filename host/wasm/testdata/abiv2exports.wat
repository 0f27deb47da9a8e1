;; Exports ABI v2 names instead of v1.
;; Build: wat2wasm abiv2exports.wat -o abiv2exports.wasm (the tests do this; wabt is in the Makefile's TOOLS)
(module
  (memory (export "memory") 1)
  (data (i32.const 1024) "[{\"name\":\"abiv2exports\",\"version\":\"1.0.0\",\"abi_version\":1,\"description\":\"WAT test module\",\"range\":{\"min\":0,\"max\":1},\"threshold\":0.5}]")
  (data (i32.const 4096) "{\"status\":\"scored\",\"score\":1,\"reason\":\"wat says yes\"}")

  (func (export "scorekit_v2_score") (param i32 i32 i32 i32) (result i64) (i64.const 0))
)
