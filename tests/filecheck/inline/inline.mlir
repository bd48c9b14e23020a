// RUN: %sirenc-opt -p inline-functions %s | filecheck %s
// RUN: %xdsl-opt -p inline-functions %s | filecheck %s
// inline-functions from textual IR, also through the plain xdsl-opt (which
// finds sirenc's passes and dialects through the xdsl.universe entry point).
// Calls inside siren.fold and siren.if regions are inlined where they stand,
// a callee that calls another is inlined all the way, each inlined copy of a
// draw stays a draw of its own, and only @main is left.

builtin.module {
  func.func private @noise(%m: f64) -> f64 {
    %v = "siren.const"() <{value = 1.000000e+00 : f64}> : () -> f64
    %d = "siren.dist"(%m, %v) <{family = "gaussian"}> : (f64, f64) -> !siren.dist<"gaussian">
    %x = "siren.assume"(%d) <{var = "x"}> : (!siren.dist<"gaussian">) -> f64
    func.return %x : f64
  }
  func.func private @step(%e: f64, %acc: f64) -> f64 {
    %s = "siren.add"(%e, %acc) : (f64, f64) -> f64
    %n = func.call @noise(%s) : (f64) -> f64
    func.return %n : f64
  }
  func.func @main(%l: !siren.list<f64>, %b: i1) -> f64 {
    %zero = "siren.const"() <{value = 0.000000e+00 : f64}> : () -> f64
    %r = "siren.fold"(%l, %zero) ({
    ^bb0(%e: f64, %acc: f64):
      %next = func.call @step(%e, %acc) : (f64, f64) -> f64
      "siren.yield"(%next) : (f64) -> ()
    }) : (!siren.list<f64>, f64) -> f64
    %y = "siren.if"(%b) ({
      %n = func.call @noise(%r) : (f64) -> f64
      "siren.yield"(%n) : (f64) -> ()
    }, {
      "siren.yield"(%r) : (f64) -> ()
    }) : (i1) -> f64
    func.return %y : f64
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @main(%l: !siren.list<f64>, %b: i1) -> f64 {
// CHECK-NEXT:     %zero = "siren.const"() <{value = 0.000000e+00 : f64}> : () -> f64
// CHECK-NEXT:     %r = "siren.fold"(%l, %zero) ({
// CHECK-NEXT:     ^bb0(%e: f64, %acc: f64):
// CHECK-NEXT:       %[[S:[a-z0-9_]+]] = "siren.add"(%e, %acc) : (f64, f64) -> f64
// CHECK-NEXT:       %[[V1:[a-z0-9_]+]] = "siren.const"() <{value = 1.000000e+00 : f64}> : () -> f64
// CHECK-NEXT:       %[[D1:[a-z0-9_]+]] = "siren.dist"(%[[S]], %[[V1]]) <{family = "gaussian"}>
// CHECK-NEXT:       %[[X1:[a-z0-9_]+]] = "siren.assume"(%[[D1]]) <{var = "x"}>
// CHECK-NEXT:       "siren.yield"(%[[X1]]) : (f64) -> ()
// CHECK-NEXT:     }) : (!siren.list<f64>, f64) -> f64
// CHECK-NEXT:     %y = "siren.if"(%b) ({
// CHECK-NEXT:       %[[V2:[a-z0-9_]+]] = "siren.const"() <{value = 1.000000e+00 : f64}> : () -> f64
// CHECK-NEXT:       %[[D2:[a-z0-9_]+]] = "siren.dist"(%r, %[[V2]]) <{family = "gaussian"}>
// CHECK-NEXT:       %[[X2:[a-z0-9_]+]] = "siren.assume"(%[[D2]]) <{var = "x"}>
// CHECK-NEXT:       "siren.yield"(%[[X2]]) : (f64) -> ()
// CHECK-NEXT:     }, {
// CHECK-NEXT:       "siren.yield"(%r) : (f64) -> ()
// CHECK-NEXT:     }) : (i1) -> f64
// CHECK-NEXT:     func.return %y : f64
// CHECK-NEXT:   }
// CHECK-NEXT: }
