;; Its start function (the start section, which runs at instantiation) recurses without
;; end: loading it fails limit_exceeded at limits.stack_kib, as a call would.
;; Build: wat2wasm stackstart.wat -o stackstart.wasm (the tests do this; wabt is in the Makefile's TOOLS)
(module
  (memory (export "memory") 1)
  (data (i32.const 1024) "[{\"name\":\"stackstart\",\"version\":\"1.0.0\",\"abi_version\":1,\"description\":\"WAT test module\",\"range\":{\"min\":0,\"max\":1},\"threshold\":0.5}]")
  (func $down (param i32) (result i32)
    (call $down (i32.add (local.get 0) (i32.const 1))))
  (func $start (drop (call $down (i32.const 0))))
  (start $start)
  (func (export "scorekit_v1_alloc") (param i32) (result i32) (i32.const 8192))
  (func (export "scorekit_v1_info") (result i64) (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 131)))
  (func (export "scorekit_v1_configure") (param i32 i32 i32) (result i64) (i64.const 0))
  (func (export "scorekit_v1_score") (param i32 i32 i32 i32) (result i64) (i64.const 0))
)
