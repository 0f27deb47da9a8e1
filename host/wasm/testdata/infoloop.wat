;; Spins forever in info: vetting must stop it at the info's deadline.
;; Build: wat2wasm infoloop.wat -o infoloop.wasm (the tests do this; wabt is in the Makefile's TOOLS)
(module
  (memory (export "memory") 1)
  (func (export "scorekit_v1_alloc") (param i32) (result i32) (i32.const 8192))
  (func (export "scorekit_v1_configure") (param i32 i32 i32) (result i64) (i64.const 0))
  (func (export "scorekit_v1_score") (param i32 i32 i32 i32) (result i64) (i64.const 0))
  (func (export "scorekit_v1_info") (result i64) (loop $l (br $l)) (i64.const 0))
)
