// RUN: %sirenc-opt -p lower-siren-to-smc --split-input-file %s | filecheck %s
// A list literal of constants (floats, bools, tuples of them) is one smc.const_list
// of its words, element after element (a double's bits, a bool 0/1), at the literal's
// location; its conses, constants and nil are gone. A literal is a chain of siren.cons
// at one location ending in siren.nil: a non-constant element, a cons written elsewhere
// (`0. :: [1., 2.]`) and a cell something else also uses keep their smc.cons over the
// folded constant rest.

// [1., 2.]
builtin.module {
  func.func @main() -> !siren.list<f64> {
    %a = "siren.const"() <{value = 1.000000e+00 : f64}> : () -> f64
    %b = "siren.const"() <{value = 2.000000e+00 : f64}> : () -> f64
    %nil = "siren.nil"() : () -> !siren.list<f64>
    %t = "siren.cons"(%b, %nil) : (f64, !siren.list<f64>) -> !siren.list<f64> loc("m.si":1:1)
    %l = "siren.cons"(%a, %t) : (f64, !siren.list<f64>) -> !siren.list<f64> loc("m.si":1:1)
    func.return %l : !siren.list<f64>
  }
}
// CHECK:      "smc.particle"()
// CHECK-NEXT:   %l = "smc.const_list"() <{words = array<i64: 4607182418800017408, 4611686018427387904>}> : () -> !smc.list<"f">
// CHECK-NEXT:   "smc.finish"(%l) : (!smc.list<"f">) -> ()

// -----
// CHECK: -----

// [(1.5, true), (-2., false)]: two words an element, in the order of the pair.
builtin.module {
  func.func @main() -> !siren.list<!siren.pair<f64, i1>> {
    %x = "siren.const"() <{value = 1.500000e+00 : f64}> : () -> f64
    %p = "siren.const"() <{value = true}> : () -> i1
    %e = "siren.pair"(%x, %p) : (f64, i1) -> !siren.pair<f64, i1>
    %y = "siren.const"() <{value = -2.000000e+00 : f64}> : () -> f64
    %q = "siren.const"() <{value = false}> : () -> i1
    %f = "siren.pair"(%y, %q) : (f64, i1) -> !siren.pair<f64, i1>
    %nil = "siren.nil"() : () -> !siren.list<!siren.pair<f64, i1>>
    %t = "siren.cons"(%f, %nil) : (!siren.pair<f64, i1>, !siren.list<!siren.pair<f64, i1>>) -> !siren.list<!siren.pair<f64, i1>>
    %l = "siren.cons"(%e, %t) : (!siren.pair<f64, i1>, !siren.list<!siren.pair<f64, i1>>) -> !siren.list<!siren.pair<f64, i1>>
    func.return %l : !siren.list<!siren.pair<f64, i1>>
  }
}
// CHECK:      "smc.particle"()
// CHECK-NEXT:   %l = "smc.const_list"() <{words = array<i64: 4609434218613702656, 1, -4611686018427387904, 0>}> : () -> !smc.list<"Pfb">
// CHECK-NEXT:   "smc.finish"(%l) : (!smc.list<"Pfb">) -> ()

// -----
// CHECK: -----

// [-x, 1., 2.]: the non-constant head stays a cons, over the constant rest; the
// constant 1. that -x also reads stays.
builtin.module {
  func.func @main() -> !siren.list<f64> {
    %a = "siren.const"() <{value = 1.000000e+00 : f64}> : () -> f64
    %x = "siren.neg"(%a) : (f64) -> f64
    %b = "siren.const"() <{value = 2.000000e+00 : f64}> : () -> f64
    %nil = "siren.nil"() : () -> !siren.list<f64>
    %t2 = "siren.cons"(%b, %nil) : (f64, !siren.list<f64>) -> !siren.list<f64> loc("m.si":1:1)
    %t1 = "siren.cons"(%a, %t2) : (f64, !siren.list<f64>) -> !siren.list<f64> loc("m.si":1:1)
    %l = "siren.cons"(%x, %t1) : (f64, !siren.list<f64>) -> !siren.list<f64> loc("m.si":1:1)
    func.return %l : !siren.list<f64>
  }
}
// CHECK:      "smc.particle"()
// CHECK-NEXT:   %a = arith.constant 1.000000e+00 : f64
// CHECK-NEXT:   %x = arith.negf %a : f64
// CHECK-NEXT:   %t1 = "smc.const_list"() <{words = array<i64: 4607182418800017408, 4611686018427387904>}> : () -> !smc.list<"f">
// CHECK-NEXT:   %[[L:.*]] = "smc.cons"(%x, %t1) : (f64, !smc.list<"f">) -> !smc.list<"f">
// CHECK-NEXT:   "smc.finish"(%[[L]]) : (!smc.list<"f">) -> ()

// -----
// CHECK: -----

// 0. :: [1.]: the cons written at another place keeps its own op (and site).
builtin.module {
  func.func @main() -> !siren.list<f64> {
    %z = "siren.const"() <{value = 0.000000e+00 : f64}> : () -> f64
    %a = "siren.const"() <{value = 1.000000e+00 : f64}> : () -> f64
    %nil = "siren.nil"() : () -> !siren.list<f64>
    %t = "siren.cons"(%a, %nil) : (f64, !siren.list<f64>) -> !siren.list<f64> loc("m.si":1:6)
    %l = "siren.cons"(%z, %t) : (f64, !siren.list<f64>) -> !siren.list<f64> loc("m.si":1:1)
    func.return %l : !siren.list<f64>
  }
}
// CHECK:      "smc.particle"()
// CHECK-NEXT:   %z = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:   %t = "smc.const_list"() <{words = array<i64: 4607182418800017408>}> : () -> !smc.list<"f">
// CHECK-NEXT:   %[[L:.*]] = "smc.cons"(%z, %t) : (f64, !smc.list<"f">) -> !smc.list<"f">
// CHECK-NEXT:   "smc.finish"(%[[L]]) : (!smc.list<"f">) -> ()

// -----
// CHECK: -----

// A cell the program also uses by itself ends the chain above it: [2.] folds, and
// 1. is consed onto it.
builtin.module {
  func.func @main() -> !siren.pair<!siren.list<f64>, !siren.list<f64>> {
    %a = "siren.const"() <{value = 1.000000e+00 : f64}> : () -> f64
    %b = "siren.const"() <{value = 2.000000e+00 : f64}> : () -> f64
    %nil = "siren.nil"() : () -> !siren.list<f64>
    %t = "siren.cons"(%b, %nil) : (f64, !siren.list<f64>) -> !siren.list<f64>
    %l = "siren.cons"(%a, %t) : (f64, !siren.list<f64>) -> !siren.list<f64>
    %both = "siren.pair"(%l, %t) : (!siren.list<f64>, !siren.list<f64>) -> !siren.pair<!siren.list<f64>, !siren.list<f64>>
    func.return %both : !siren.pair<!siren.list<f64>, !siren.list<f64>>
  }
}
// CHECK:      "smc.particle"()
// CHECK-NEXT:   %a = arith.constant 1.000000e+00 : f64
// CHECK-NEXT:   %t = "smc.const_list"() <{words = array<i64: 4611686018427387904>}> : () -> !smc.list<"f">
// CHECK-NEXT:   %[[L:.*]] = "smc.cons"(%a, %t) : (f64, !smc.list<"f">) -> !smc.list<"f">
// CHECK-NEXT:   "smc.finish"(%[[L]], %t) : (!smc.list<"f">, !smc.list<"f">) -> ()

// -----
// CHECK: -----

// The empty list stays smc.nil.
builtin.module {
  func.func @main() -> !siren.list<f64> {
    %nil = "siren.nil"() : () -> !siren.list<f64>
    func.return %nil : !siren.list<f64>
  }
}
// CHECK:      "smc.particle"()
// CHECK-NEXT:   %[[NIL:.*]] = "smc.nil"() : () -> !smc.list<"f">
// CHECK-NEXT:   "smc.finish"(%[[NIL]]) : (!smc.list<"f">) -> ()
