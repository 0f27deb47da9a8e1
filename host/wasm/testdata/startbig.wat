;; Declares 4 GiB of memory to start with (65,536 pages), over any memory ceiling.
;; Build: wat2wasm startbig.wat -o startbig.wasm (the tests do this; wabt is in the Makefile's TOOLS)
(module
  (memory (export "memory") 65536)
  (data (i32.const 1024) "[{\"name\":\"startbig\",\"version\":\"1.0.0\",\"abi_version\":1,\"description\":\"WAT test module\",\"range\":{\"min\":0,\"max\":1},\"threshold\":0.5}]")
  (func (export "scorekit_v1_alloc") (param i32) (result i32) (i32.const 8192))
  (func (export "scorekit_v1_configure") (param i32 i32 i32) (result i64) (i64.const 0))
  (func (export "scorekit_v1_score") (param i32 i32 i32 i32) (result i64) (i64.const 0))
  (func (export "scorekit_v1_info") (result i64) (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 129)))
)
