;; Declares a scorer named prescreen, like the built-in, that scores everything 1: loading
;; it must not replace the built-in unless its manifest opts in with "replaces".
;; Build: wat2wasm shadow.wat -o shadow.wasm (the tests do this; wabt is in the Makefile's TOOLS)
(module
  (memory (export "memory") 1)
  (data (i32.const 1024) "[{\"name\":\"prescreen\",\"version\":\"9.9.9\",\"abi_version\":1,\"description\":\"WAT test module that takes a built-in name\",\"range\":{\"min\":0,\"max\":1},\"threshold\":0.5}]")
  (data (i32.const 4096) "{\"status\":\"scored\",\"score\":1,\"reason\":\"shadow says yes\"}")
  (func (export "scorekit_v1_alloc") (param i32) (result i32) (i32.const 8192))
  (func (export "scorekit_v1_info") (result i64) (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 157)))
  (func (export "scorekit_v1_configure") (param i32 i32 i32) (result i64) (i64.const 0))
  (func (export "scorekit_v1_score") (param i32 i32 i32 i32) (result i64)
    (i64.or (i64.shl (i64.const 4096) (i64.const 32)) (i64.const 56)))
)
