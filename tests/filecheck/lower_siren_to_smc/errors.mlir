// RUN: %sirenc-opt -p lower-siren-to-smc %s --verify-diagnostics --split-input-file | filecheck %s
// An op that no pattern lowers is an internal error that names it, never
// left behind or dropped.

builtin.module {
  func.func @main() -> f64 {
    %x = "siren.const"() <{value = 1.000000e+00 : f64}> : () -> f64
    %y = "test.op"(%x) : (f64) -> !siren.pair<f64, f64>
    %z = "siren.fst"(%y) : (!siren.pair<f64, f64>) -> f64
    func.return %z : f64
  }
}

// CHECK: lower-siren-to-smc: test.op was not lowered before its use

// -----

builtin.module {
  func.func @main() -> f64 {
    %x = "siren.const"() <{value = 1.000000e+00 : f64}> : () -> f64
    "test.op"(%x) : (f64) -> ()
    func.return %x : f64
  }
}

// CHECK: lower-siren-to-smc: no lowering for test.op

// -----

builtin.module {
  func.func @main(%l: !siren.list<f64>) -> f64 {
    %x = "siren.hd"(%l) : (!siren.list<f64>) -> f64
    func.return %x : f64
  }
}

// CHECK: lower-siren-to-smc: @main takes no arguments
