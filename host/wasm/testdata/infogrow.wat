;; Grows its memory a page at a time in info until the limit refuses, then traps.
;; Build: wat2wasm infogrow.wat -o infogrow.wasm (the tests do this; wabt is in the Makefile's TOOLS)
(module
  (memory (export "memory") 1)
  (func (export "scorekit_v1_alloc") (param i32) (result i32) (i32.const 8192))
  (func (export "scorekit_v1_configure") (param i32 i32 i32) (result i64) (i64.const 0))
  (func (export "scorekit_v1_score") (param i32 i32 i32 i32) (result i64) (i64.const 0))
  (func (export "scorekit_v1_info") (result i64)
    (block $full (loop $grow (br_if $full (i32.eq (memory.grow (i32.const 1)) (i32.const -1))) (br $grow)))
    (unreachable))
)
