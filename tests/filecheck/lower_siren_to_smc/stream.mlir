// RUN: %sirenc-opt -p 'lower-siren-to-smc{base_dir="/data"}' %s | filecheck %s
// The top-level fold over File.read data (through List.map) is streamed: the
// read and the map disappear, each iteration asks smc.next_row for row i and
// runs the map's body on it. The data file's absolute path is in the model.
// A pair is its scalars: the pair accumulator is two loop values. Draws and
// observations keep their family; a bool is observed as 0/1.

builtin.module {
  func.func @main() -> !siren.pair<f64, f64> {
    %path = "siren.const"() <{value = "walk.csv"}> : () -> !siren.string
    %rows = "siren.file_read"(%path) : (!siren.string) -> !siren.list<!siren.list<f64>>
    %ys = "siren.map"(%rows) ({
    ^bb0(%row: !siren.list<f64>):
      %y = "siren.hd"(%row) : (!siren.list<f64>) -> f64
      "siren.yield"(%y) : (f64) -> ()
    }) : (!siren.list<!siren.list<f64>>) -> !siren.list<f64>
    %zero = "siren.const"() <{value = 0.000000e+00 : f64}> : () -> f64
    %init = "siren.pair"(%zero, %zero) : (f64, f64) -> !siren.pair<f64, f64>
    %out = "siren.fold"(%ys, %init) ({
    ^bb0(%y: f64, %acc: !siren.pair<f64, f64>):
      %x = "siren.fst"(%acc) : (!siren.pair<f64, f64>) -> f64
      %one = "siren.const"() <{value = 1.000000e+00 : f64}> : () -> f64
      %d = "siren.dist"(%x, %one) <{family = "gaussian"}> : (f64, f64) -> !siren.dist<"gaussian">
      %x1 = "siren.assume"(%d) <{var = "x1"}> : (!siren.dist<"gaussian">) -> f64
      %p = "siren.const"() <{value = 3.000000e-01 : f64}> : () -> f64
      %coin = "siren.dist"(%p) <{family = "bernoulli"}> : (f64) -> !siren.dist<"bernoulli">
      %b = "siren.assume"(%coin) <{var = "b"}> : (!siren.dist<"bernoulli">) -> i1
      %u = "siren.observe"(%coin, %b) : (!siren.dist<"bernoulli">, i1) -> !siren.unit
      %r = "siren.resample"() : () -> !siren.unit
      %next = "siren.pair"(%x1, %y) : (f64, f64) -> !siren.pair<f64, f64>
      "siren.yield"(%next) : (!siren.pair<f64, f64>) -> ()
    }) : (!siren.list<f64>, !siren.pair<f64, f64>) -> !siren.pair<f64, f64>
    func.return %out : !siren.pair<f64, f64>
  }
}

// CHECK:      "smc.particle"() <{sym_name = "main", model = #smc.model<"Pff", true, "", "/data/walk.csv", 0 : i64, []>}> ({
// CHECK-NOT:    siren.
// CHECK:        %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:        %[[I0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:   %{{.*}}, %{{.*}}, %[[X:.*]], %[[Y:.*]] = scf.while (%[[I:.*]] = %[[I0]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]]) : (i64, f64, f64) -> (i64, !smc.list<"f">, f64, f64) {
// CHECK-NEXT:     %[[MORE:.*]], %[[ROW:.*]] = "smc.next_row"(%[[I]]) : (i64) -> (i1, !smc.list<"f">)
// CHECK-NEXT:     scf.condition(%[[MORE]]) %[[I]], %[[ROW]], %{{.*}}, %{{.*}} : i64, !smc.list<"f">, f64, f64
// CHECK-NEXT:   } do {
// CHECK-NEXT:   ^{{.*}}(%[[J:.*]]: i64, %[[R:.*]]: !smc.list<"f">, %[[ACC0:.*]]: f64, %{{.*}}: f64):
// CHECK-NEXT:     %[[HEAD:.*]] = "smc.head"(%[[R]]) : (!smc.list<"f">) -> f64
// CHECK-NEXT:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT:     %[[X1:.*]] = "smc.sample"(%[[ACC0]], %[[ONE]]) <{family = "gaussian"}> : (f64, f64) -> f64
// CHECK-NEXT:     %[[P:.*]] = arith.constant 3.000000e-01 : f64
// CHECK-NEXT:     %[[DRAW:.*]] = "smc.sample"(%[[P]]) <{family = "bernoulli"}> : (f64) -> f64
// CHECK-NEXT:     %[[F0:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:     %[[B:.*]] = arith.cmpf une, %[[DRAW]], %[[F0]] : f64
// CHECK-NEXT:     %[[T:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT:     %[[F:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:     %[[BF:.*]] = arith.select %[[B]], %[[T]], %[[F]] : f64
// CHECK-NEXT:     "smc.observe"(%[[P]], %[[BF]]) <{family = "bernoulli"}> : (f64, f64) -> ()
// CHECK-NEXT:     "smc.resample"() : () -> ()
// CHECK-NEXT:     %[[STEP:.*]] = arith.constant 1 : i64
// CHECK-NEXT:     %[[J1:.*]] = arith.addi %[[J]], %[[STEP]] : i64
// CHECK-NEXT:     scf.yield %[[J1]], %[[X1]], %[[HEAD]] : i64, f64, f64
// CHECK-NEXT:   }
// CHECK-NEXT:   "smc.finish"(%[[X]], %[[Y]]) : (f64, f64) -> ()
// CHECK-NEXT: }) : () -> ()
