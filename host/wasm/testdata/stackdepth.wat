;; Three scorers that recurse as deep as their config is long (in bytes): "direct" through a
;; function that calls itself, "mutual" through two functions that call each other,
;; "indirect" through call_indirect. A call's stack is its depth times the charge of the
;; recursing function (host/wasm/stack.go), so the tests find the deepest config that fits
;; a limit and the shallowest that does not.
;; Build: wat2wasm stackdepth.wat -o stackdepth.wasm (the tests do this; wabt is in the Makefile's TOOLS)
(module
  (type $rec (func (param i32) (result i32)))
  (memory (export "memory") 1)
  (table 1 funcref)
  (elem (i32.const 0) $viaTable)
  (data (i32.const 1024) "[{\"name\":\"direct\",\"version\":\"1.0.0\",\"abi_version\":1,\"description\":\"WAT test module\",\"range\":{\"min\":0,\"max\":1},\"threshold\":0.5},{\"name\":\"mutual\",\"version\":\"1.0.0\",\"abi_version\":1,\"description\":\"WAT test module\",\"range\":{\"min\":0,\"max\":1},\"threshold\":0.5},{\"name\":\"indirect\",\"version\":\"1.0.0\",\"abi_version\":1,\"description\":\"WAT test module\",\"range\":{\"min\":0,\"max\":1},\"threshold\":0.5}]")
  (data (i32.const 4096) "{\"status\":\"scored\",\"score\":1,\"reason\":\"deep enough\"}")
  ;; depth n: n+1 frames of $direct
  (func $direct (param i32) (result i32)
    (if (result i32) (i32.eqz (local.get 0))
      (then (i32.const 0))
      (else (call $direct (i32.sub (local.get 0) (i32.const 1))))))
  ;; depth n: n+1 frames, $ping and $pong in turn
  (func $ping (param i32) (result i32)
    (if (result i32) (i32.eqz (local.get 0))
      (then (i32.const 0))
      (else (call $pong (i32.sub (local.get 0) (i32.const 1))))))
  (func $pong (param i32) (result i32)
    (if (result i32) (i32.eqz (local.get 0))
      (then (i32.const 0))
      (else (call $ping (i32.sub (local.get 0) (i32.const 1))))))
  ;; depth n: n+1 frames of $viaTable
  (func $viaTable (param i32) (result i32)
    (if (result i32) (i32.eqz (local.get 0))
      (then (i32.const 0))
      (else (call_indirect (type $rec) (i32.sub (local.get 0) (i32.const 1)) (i32.const 0)))))
  (func (export "scorekit_v1_alloc") (param i32) (result i32) (i32.const 8192))
  (func (export "scorekit_v1_info") (result i64) (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 381)))
  ;; the depth of scorer i is kept at 4*i
  (func (export "scorekit_v1_configure") (param i32 i32 i32) (result i64)
    (i32.store (i32.shl (local.get 0) (i32.const 2)) (local.get 2))
    (i64.const 0))
  (func (export "scorekit_v1_score") (param i32 i32 i32 i32) (result i64)
    (local $depth i32)
    (local.set $depth (i32.load (i32.shl (local.get 0) (i32.const 2))))
    (drop (if (result i32) (i32.eqz (local.get 0))
      (then (call $direct (local.get $depth)))
      (else (if (result i32) (i32.eq (local.get 0) (i32.const 1))
        (then (call $ping (local.get $depth)))
        (else (call $viaTable (local.get $depth)))))))
    (i64.or (i64.shl (i64.const 4096) (i64.const 32)) (i64.const 52)))
)
