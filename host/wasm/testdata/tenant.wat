;; A tenant's scorer with 1 MiB of memory (16 pages) that always scores 1. The pool tests
;; give each tenant its own copy (a custom section makes each digest different).
;; Build: wat2wasm tenant.wat -o tenant.wasm (the tests do this; wabt is in the Makefile's TOOLS)
(module
  (memory (export "memory") 16)
  (data (i32.const 1024) "[{\"name\":\"ok\",\"version\":\"1.0.0\",\"abi_version\":1,\"description\":\"WAT test module\",\"range\":{\"min\":0,\"max\":1},\"threshold\":0.5}]")
  (data (i32.const 4096) "{\"status\":\"scored\",\"score\":1,\"reason\":\"wat says yes\"}")
  (func (export "scorekit_v1_alloc") (param i32) (result i32) (i32.const 8192))
  (func (export "scorekit_v1_info") (result i64) (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 123)))
  (func (export "scorekit_v1_configure") (param i32 i32 i32) (result i64) (i64.const 0))
  (func (export "scorekit_v1_score") (param i32 i32 i32 i32) (result i64)
    (i64.or (i64.shl (i64.const 4096) (i64.const 32)) (i64.const 53)))
)
