;; A table bomb: its table has no maximum, and each call grows it 200 times by a million
;; entries, ignoring the answer. Nothing in its linear memory grows, so only a bound on
;; tables keeps the host's memory under the instance's limits.
;; Build: wat2wasm tablebomb.wat -o tablebomb.wasm (the tests do this; wabt is in the Makefile's TOOLS)
(module
  (memory (export "memory") 1)
  (table $t 0 funcref)
  (data (i32.const 1024) "[{\"name\":\"tablebomb\",\"version\":\"1.0.0\",\"abi_version\":1,\"description\":\"WAT test module\",\"range\":{\"min\":0,\"max\":1},\"threshold\":0.5}]")
  (data (i32.const 4096) "{\"status\":\"scored\",\"score\":1,\"reason\":\"wat says yes\"}")
  (func (export "scorekit_v1_alloc") (param i32) (result i32) (i32.const 8192))
  (func (export "scorekit_v1_info") (result i64) (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 130)))
  (func (export "scorekit_v1_configure") (param i32 i32 i32) (result i64) (i64.const 0))
  (func (export "scorekit_v1_score") (param i32 i32 i32 i32) (result i64)
    (local $i i32)
    (loop $grow
      (drop (table.grow $t (ref.null func) (i32.const 1000000)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $grow (i32.lt_u (local.get $i) (i32.const 200))))
    (i64.or (i64.shl (i64.const 4096) (i64.const 32)) (i64.const 53)))
)
