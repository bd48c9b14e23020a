// RUN: %sirenc-opt -p lower-siren-to-smc %s | filecheck %s
// Lists are handles typed by their element: a list of pairs is !smc.list<"Pfb">,
// and its head is two scalars; the literal [(3., true)] of constants is one
// smc.const_list of its words (lists_const.mlir). A map is a loop that conses onto a reversed
// accumulator, then reverses it. A branch yields the scalars of its value.
// Equality of lists walks both. Categorical takes its probabilities as a list.

builtin.module {
  func.func @main() -> !siren.pair<f64, i1> {
    %lo = "siren.const"() <{value = 0.000000e+00 : f64}> : () -> f64
    %hi = "siren.const"() <{value = 3.000000e+00 : f64}> : () -> f64
    %c = "siren.const"() <{value = true}> : () -> i1
    %pr = "siren.pair"(%hi, %c) : (f64, i1) -> !siren.pair<f64, i1>
    %nil = "siren.nil"() : () -> !siren.list<!siren.pair<f64, i1>>
    %l = "siren.cons"(%pr, %nil) : (!siren.pair<f64, i1>, !siren.list<!siren.pair<f64, i1>>) -> !siren.list<!siren.pair<f64, i1>>
    %r = "siren.range"(%lo, %hi) : (f64, f64) -> !siren.list<f64>
    %n = "siren.len"(%l) : (!siren.list<!siren.pair<f64, i1>>) -> f64
    %firsts = "siren.map"(%l) ({
    ^bb0(%e: !siren.pair<f64, i1>):
      %f = "siren.fst"(%e) : (!siren.pair<f64, i1>) -> f64
      "siren.yield"(%f) : (f64) -> ()
    }) : (!siren.list<!siren.pair<f64, i1>>) -> !siren.list<f64>
    %same = "siren.eq"(%firsts, %r) : (!siren.list<f64>, !siren.list<f64>) -> i1
    %d = "siren.dist"(%lo, %hi, %firsts) <{family = "categorical"}> : (f64, f64, !siren.list<f64>) -> !siren.dist<"categorical">
    %k = "siren.assume"(%d) <{var = "k"}> : (!siren.dist<"categorical">) -> f64
    %out = "siren.if"(%c) ({
      %h = "siren.hd"(%l) : (!siren.list<!siren.pair<f64, i1>>) -> !siren.pair<f64, i1>
      "siren.yield"(%h) : (!siren.pair<f64, i1>) -> ()
    }, {
      %p = "siren.pair"(%k, %same) : (f64, i1) -> !siren.pair<f64, i1>
      "siren.yield"(%p) : (!siren.pair<f64, i1>) -> ()
    }) : (i1) -> !siren.pair<f64, i1>
    func.return %out : !siren.pair<f64, i1>
  }
}

// CHECK:      "smc.particle"() <{sym_name = "main", model = #smc.model<"Pfb", false, "the main expression does not fold over File.read data at its top level", "", 0 : i64, []>}> ({
// CHECK-NOT:    siren.
// CHECK:        %[[C:.*]] = arith.constant true
// CHECK-NEXT:   %[[L:.*]] = "smc.const_list"() <{words = array<i64: 4613937818241073152, 1>}> : () -> !smc.list<"Pfb">
// CHECK:        %[[R:.*]] = "smc.range"(%{{.*}}, %{{.*}}) : (f64, f64) -> !smc.list<"f">
// CHECK-NEXT:   %{{.*}} = "smc.length"(%[[L]]) : (!smc.list<"Pfb">) -> f64
// CHECK-NEXT:   %[[NIL:.*]] = "smc.nil"() : () -> !smc.list<"f">
// CHECK-NEXT:   %{{.*}}, %[[REV:.*]] = scf.while (%{{.*}} = %[[L]], %{{.*}} = %[[NIL]]) : (!smc.list<"Pfb">, !smc.list<"f">) -> (!smc.list<"Pfb">, !smc.list<"f">) {
// CHECK:          "smc.is_nil"
// CHECK:        } do {
// CHECK:          %[[F:.*]], %{{.*}} = "smc.head"(%[[CUR:.*]]) : (!smc.list<"Pfb">) -> (f64, i1)
// CHECK-NEXT:     %[[TL:.*]] = "smc.tail"(%[[CUR]]) : (!smc.list<"Pfb">) -> !smc.list<"Pfb">
// CHECK-NEXT:     %[[CELL:.*]] = "smc.cons"(%[[F]], %{{.*}}) : (f64, !smc.list<"f">) -> !smc.list<"f">
// CHECK-NEXT:     scf.yield %[[TL]], %[[CELL]] : !smc.list<"Pfb">, !smc.list<"f">
// CHECK:        %[[FIRSTS:.*]] = "smc.reverse"(%[[REV]]) : (!smc.list<"f">) -> !smc.list<"f">
// CHECK:        scf.while
// CHECK:          "smc.head"(%{{.*}}) : (!smc.list<"f">) -> f64
// CHECK:          arith.cmpf oeq
// CHECK:        %[[K:.*]] = "smc.sample"(%{{.*}}, %{{.*}}, %[[FIRSTS]]) <{family = "categorical"}> : (f64, f64, !smc.list<"f">) -> f64
// CHECK:        %[[A:.*]], %[[B:.*]] = scf.if %[[C]] -> (f64, i1) {
// CHECK-NEXT:     %[[H1:.*]], %[[H2:.*]] = "smc.head"(%[[L]]) : (!smc.list<"Pfb">) -> (f64, i1)
// CHECK-NEXT:     scf.yield %[[H1]], %[[H2]] : f64, i1
// CHECK-NEXT:   } else {
// CHECK-NEXT:     scf.yield %[[K]], %{{.*}} : f64, i1
// CHECK-NEXT:   }
// CHECK-NEXT:   "smc.finish"(%[[A]], %[[B]]) : (f64, i1) -> ()
