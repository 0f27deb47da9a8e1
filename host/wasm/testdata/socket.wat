;; Imports a WASI socket function, which the sandbox refuses.
;; Build: wat2wasm socket.wat -o socket.wasm (the tests do this; wabt is in the Makefile's TOOLS)
(module
  (import "wasi_snapshot_preview1" "sock_accept" (func $accept (param i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 1024) "[{\"name\":\"socket\",\"version\":\"1.0.0\",\"abi_version\":1,\"description\":\"WAT test module\",\"range\":{\"min\":0,\"max\":1},\"threshold\":0.5}]")
  (data (i32.const 4096) "{\"status\":\"scored\",\"score\":1,\"reason\":\"wat says yes\"}")
  (func (export "scorekit_v1_alloc") (param i32) (result i32) (i32.const 8192))
  (func (export "scorekit_v1_info") (result i64) (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 127)))
  (func (export "scorekit_v1_configure") (param i32 i32 i32) (result i64) (i64.const 0))
  (func (export "scorekit_v1_score") (param i32 i32 i32 i32) (result i64)
    (i64.or (i64.shl (i64.const 4096) (i64.const 32)) (i64.const 53)))
)
