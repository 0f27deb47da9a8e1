;; Answers info with 16 MiB of its memory: a reply over any result limit the host sets.
;; Build: wat2wasm infohuge.wat -o infohuge.wasm (the tests do this; wabt is in the Makefile's TOOLS)
(module
  (memory (export "memory") 257)
  (func (export "scorekit_v1_alloc") (param i32) (result i32) (i32.const 8192))
  (func (export "scorekit_v1_configure") (param i32 i32 i32) (result i64) (i64.const 0))
  (func (export "scorekit_v1_score") (param i32 i32 i32 i32) (result i64) (i64.const 0))
  (func (export "scorekit_v1_info") (result i64) (i64.const 0x1000000))
)
