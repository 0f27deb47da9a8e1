;; Recurses exponentially (fib 60) without a single loop: a deadline check on loops alone
;; never runs, so the host checks at function entries too.
;; Build: wat2wasm recurse.wat -o recurse.wasm (the tests do this; wabt is in the Makefile's TOOLS)
(module
  (memory (export "memory") 1)
  (data (i32.const 1024) "[{\"name\":\"recurse\",\"version\":\"1.0.0\",\"abi_version\":1,\"description\":\"WAT test module\",\"range\":{\"min\":0,\"max\":1},\"threshold\":0.5}]")
  (func $fib (param i64) (result i64)
    (if (result i64) (i64.lt_u (local.get 0) (i64.const 2))
      (then (local.get 0))
      (else (i64.add (call $fib (i64.sub (local.get 0) (i64.const 1)))
                     (call $fib (i64.sub (local.get 0) (i64.const 2)))))))
  (func (export "scorekit_v1_alloc") (param i32) (result i32) (i32.const 8192))
  (func (export "scorekit_v1_info") (result i64) (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 128)))
  (func (export "scorekit_v1_configure") (param i32 i32 i32) (result i64) (i64.const 0))
  (func (export "scorekit_v1_score") (param i32 i32 i32 i32) (result i64)
    (drop (call $fib (i64.const 60)))
    (i64.const 0))
)
