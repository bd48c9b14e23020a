// RUN: %sirenc-opt %s --verify-diagnostics --split-input-file | filecheck %s
// One case per error the siren dialect's verifiers (sirenc/ir/siren/) raise,
// in the order of the ops there; each case must fail with its own message.

func.func @const_width() {
  %c = "siren.const"() <{value = 1.000000e+00 : f32}> : () -> f64
  func.return
}
// CHECK: Operation does not verify: siren.const value 1.000000e+00 : f32 with result type f64 is not a Siren literal (f64, i1, unit or string)

// -----
// CHECK: -----

func.func @const_int_width() {
  %c = "siren.const"() <{value = 1 : i64}> : () -> i64
  func.return
}
// CHECK: Operation does not verify: siren.const value 1 : i64 with result type i64 is not a Siren literal (f64, i1, unit or string)

// -----
// CHECK: -----

func.func @const_kind() {
  %c = "siren.const"() <{value}> : () -> f64
  func.return
}
// CHECK: Operation does not verify: siren.const value unit with result type f64 is not a Siren literal (f64, i1, unit or string)

// -----
// CHECK: -----

func.func @add_result(%a: f64) {
  %r = "siren.add"(%a, %a) : (f64, f64) -> i1
  func.return
}
// CHECK: Operation does not verify: result of siren.add must be f64, got i1

// -----
// CHECK: -----

func.func @lt_result(%a: f64) {
  %r = "siren.lt"(%a, %a) : (f64, f64) -> f64
  func.return
}
// CHECK: Operation does not verify: result of siren.lt must be i1, got f64

// -----
// CHECK: -----

func.func @eq_operands(%a: f64, %b: i1) {
  %r = "siren.eq"(%a, %b) : (f64, i1) -> i1
  func.return
}
// CHECK: Operation does not verify: siren.eq compares values of one type

// -----
// CHECK: -----

func.func @eq_result(%a: f64) {
  %r = "siren.eq"(%a, %a) : (f64, f64) -> i32
  func.return
}
// CHECK: Operation does not verify: result of siren.eq must be i1, got i32

// -----
// CHECK: -----

func.func @pair_result(%a: f64, %b: i1) {
  %p = "siren.pair"(%a, %b) : (f64, i1) -> !siren.pair<i1, f64>
  func.return
}
// CHECK: Operation does not verify: siren.pair result type must match its operands

// -----
// CHECK: -----

func.func @fst_result(%p: !siren.pair<f64, i1>) {
  %a = "siren.fst"(%p) : (!siren.pair<f64, i1>) -> i1
  func.return
}
// CHECK: Operation does not verify: siren.fst result type does not match !siren.pair<f64, i1>

// -----
// CHECK: -----

func.func @snd_result(%p: !siren.pair<f64, i1>) {
  %b = "siren.snd"(%p) : (!siren.pair<f64, i1>) -> f64
  func.return
}
// CHECK: Operation does not verify: siren.snd result type does not match !siren.pair<f64, i1>

// -----
// CHECK: -----

func.func @cons_types(%b: i1, %l: !siren.list<f64>) {
  %r = "siren.cons"(%b, %l) : (i1, !siren.list<f64>) -> !siren.list<f64>
  func.return
}
// CHECK: Operation does not verify: siren.cons: head, tail and result types disagree

// -----
// CHECK: -----

func.func @hd_result(%l: !siren.list<f64>) {
  %x = "siren.hd"(%l) : (!siren.list<f64>) -> !siren.list<f64>
  func.return
}
// CHECK: Operation does not verify: siren.hd result type must be f64

// -----
// CHECK: -----

func.func @len_result(%l: !siren.list<i1>) {
  %n = "siren.len"(%l) : (!siren.list<i1>) -> i1
  func.return
}
// CHECK: Operation does not verify: siren.len result type must be f64

// -----
// CHECK: -----

func.func @if_cond(%c: i32, %a: f64) {
  %r = "siren.if"(%c) ({
    "siren.yield"(%a) : (f64) -> ()
  }, {
    "siren.yield"(%a) : (f64) -> ()
  }) : (i32) -> f64
  func.return
}
// CHECK: Operation does not verify: condition of siren.if must be i1, got i32

// -----
// CHECK: -----

// A region must end in a terminator before siren.if's own verifier runs; any
// terminator that may stand there (llvm.unreachable) reaches the yield check.
func.func @if_no_yield(%c: i1) {
  %r = "siren.if"(%c) ({
    "llvm.unreachable"() : () -> ()
  }, {
    "llvm.unreachable"() : () -> ()
  }) : (i1) -> f64
  func.return
}
// CHECK: Operation does not verify: region must end with siren.yield

// -----
// CHECK: -----

func.func @if_branch_type(%c: i1, %a: f64) {
  %r = "siren.if"(%c) ({
    "siren.yield"(%a) : (f64) -> ()
  }, {
    "siren.yield"(%c) : (i1) -> ()
  }) : (i1) -> f64
  func.return
}
// CHECK: Operation does not verify: siren.if branches must yield the result type

// -----
// CHECK: -----

func.func @fold_args(%l: !siren.list<f64>, %init: i1) {
  %r = "siren.fold"(%l, %init) ({
  ^bb0(%acc: i1, %x: f64):
    "siren.yield"(%acc) : (i1) -> ()
  }) : (!siren.list<f64>, i1) -> i1
  func.return
}
// CHECK: Operation does not verify: siren.fold body must take (f64, i1), takes (i1, f64)

// -----
// CHECK: -----

func.func @fold_yield(%l: !siren.list<f64>, %init: i1) {
  %r = "siren.fold"(%l, %init) ({
  ^bb0(%x: f64, %acc: i1):
    "siren.yield"(%x) : (f64) -> ()
  }) : (!siren.list<f64>, i1) -> i1
  func.return
}
// CHECK: Operation does not verify: siren.fold body must yield the accumulator type

// -----
// CHECK: -----

func.func @map_args(%l: !siren.list<f64>) {
  %r = "siren.map"(%l) ({
  ^bb0(%x: i1):
    "siren.yield"(%x) : (i1) -> ()
  }) : (!siren.list<f64>) -> !siren.list<i1>
  func.return
}
// CHECK: Operation does not verify: siren.map body must take one list element

// -----
// CHECK: -----

func.func @map_yield(%l: !siren.list<f64>) {
  %r = "siren.map"(%l) ({
  ^bb0(%x: f64):
    "siren.yield"(%x) : (f64) -> ()
  }) : (!siren.list<f64>) -> !siren.list<i1>
  func.return
}
// CHECK: Operation does not verify: siren.map body must yield the result element type

// -----
// CHECK: -----

func.func @dist_family(%a: f64) {
  %d = "siren.dist"(%a) <{family = "no_such_family"}> : (f64) -> !siren.dist<"no_such_family">
  func.return
}
// CHECK: Operation does not verify: unknown distribution family 'no_such_family'

// -----
// CHECK: -----

func.func @dist_arity(%a: f64) {
  %d = "siren.dist"(%a) <{family = "gaussian"}> : (f64) -> !siren.dist<"gaussian">
  func.return
}
// CHECK: Operation does not verify: gaussian takes 2 parameters

// -----
// CHECK: -----

func.func @dist_result(%a: f64) {
  %d = "siren.dist"(%a, %a) <{family = "gaussian"}> : (f64, f64) -> !siren.dist<"beta">
  func.return
}
// CHECK: Operation does not verify: siren.dist result type must name its family

// -----
// CHECK: -----

func.func @assume_annotation(%a: f64) {
  %d = "siren.dist"(%a, %a) <{family = "gaussian"}> : (f64, f64) -> !siren.dist<"gaussian">
  %x = "siren.assume"(%d) <{var = "x", annotation = "exact"}> : (!siren.dist<"gaussian">) -> f64
  func.return
}
// CHECK: Operation does not verify: annotation must be 'sample' or 'symbolic'

// -----
// CHECK: -----

func.func @assume_draw_type(%p: f64) {
  %d = "siren.dist"(%p) <{family = "bernoulli"}> : (f64) -> !siren.dist<"bernoulli">
  %x = "siren.assume"(%d) <{var = "x"}> : (!siren.dist<"bernoulli">) -> f64
  func.return
}
// CHECK: Operation does not verify: a draw from !siren.dist<"bernoulli"> has type i1

// -----
// CHECK: -----

// siren.yield's HasParent trait: it ends only siren.if, siren.fold and siren.map regions.
func.func @yield_parent(%a: f64) {
  "siren.yield"(%a) : (f64) -> ()
}
// CHECK: Operation does not verify: 'siren.yield' expects parent op to be one of 'siren.if', 'siren.fold', 'siren.map'
