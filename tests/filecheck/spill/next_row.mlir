// RUN: %sirenc-opt -p spill-across-suspends --split-input-file %s | filecheck %s
// RUN: %sirenc-opt -p spill-across-suspends --split-input-file %s | %sirenc-opt -p spill-across-suspends --split-input-file | filecheck %s
// smc.next_row runs again after re-entry, so its own index is live across it:
// afterwards that index is defined right before it by an smc.frame_load (or a
// recreated arith.constant), where lower-smc-to-llvm starts the resume block.

// A streamed fold: the row index %i and the accumulator %acc live across the
// row request (point 1), the next index %j and the new accumulator %s across
// the resampling (point 2). The row %rw dies before it: no root. %j and %s take
// slots 0 and 1 again: %i and %acc are read for the last time before they are
// stored, so the frame has two slots, not four. The loop-carried %i and %acc
// are stored where they are passed: their first values before the loop, %k
// before the back edge; %s, kept in %acc's slot, is not stored again there.
builtin.module {
  "smc.particle"() <{sym_name = "model", model = #smc.model<"f", true, "", "/data.csv", 0 : i64, []>}> ({
    %zero = arith.constant 0 : i64
    %acc0 = arith.constant 0.000000e+00 : f64
    %r:3 = scf.while (%i = %zero, %acc = %acc0) : (i64, f64) -> (i64, !smc.list<"f">, f64) {
      %more, %row = "smc.next_row"(%i) : (i64) -> (i1, !smc.list<"f">)
      scf.condition(%more) %i, %row, %acc : i64, !smc.list<"f">, f64
    } do {
    ^bb0(%j: i64, %rw: !smc.list<"f">, %a: f64):
      %y = "smc.head"(%rw) : (!smc.list<"f">) -> f64
      %s = arith.addf %a, %y : f64
      "smc.resample"() : () -> ()
      %one = arith.constant 1 : i64
      %k = arith.addi %j, %one : i64
      scf.yield %k, %s : i64, f64
    }
    "smc.finish"(%r#2) : (f64) -> ()
  }) : () -> ()
}

// CHECK:      model = #smc.model<"f", true, "", "/data.csv", 2 : i64, []>
// CHECK:      %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[ACC0:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: "smc.frame_store"(%[[ZERO]]) <{slot = 0 : i64}> : (i64) -> ()
// CHECK-NEXT: "smc.frame_store"(%[[ACC0]]) <{slot = 1 : i64}> : (f64) -> ()
// CHECK-NEXT: scf.while (%{{.*}} = %[[ZERO]], %{{.*}} = %[[ACC0]]) : (i64, f64) -> (i64, !smc.list<"f">, f64) {
// CHECK-NEXT:   %[[IL:.*]] = "smc.frame_load"() <{slot = 0 : i64}> : () -> i64
// CHECK-NEXT:   %[[MORE:.*]], %[[ROW:.*]] = "smc.next_row"(%[[IL]]) <{point = 1 : i32}> : (i64) -> (i1, !smc.list<"f">)
// CHECK-NEXT:   %[[IL2:.*]] = "smc.frame_load"() <{slot = 0 : i64}> : () -> i64
// CHECK-NEXT:   %[[ACCL:.*]] = "smc.frame_load"() <{slot = 1 : i64}> : () -> f64
// CHECK-NEXT:   scf.condition(%[[MORE]]) %[[IL2]], %[[ROW]], %[[ACCL]] : i64, !smc.list<"f">, f64
// CHECK-NEXT: } do {
// CHECK-NEXT: ^{{.*}}(%[[J:.*]]: i64, %[[RW:.*]]: !smc.list<"f">, %[[A:.*]]: f64):
// CHECK-NEXT:   "smc.frame_store"(%[[J]]) <{slot = 0 : i64}> : (i64) -> ()
// CHECK-NEXT:   %[[Y:.*]] = "smc.head"(%[[RW]])
// CHECK-NEXT:   %[[S:.*]] = arith.addf %[[A]], %[[Y]] : f64
// CHECK-NEXT:   "smc.frame_store"(%[[S]]) <{slot = 1 : i64}> : (f64) -> ()
// CHECK-NEXT:   "smc.resample"() <{point = 2 : i32}> : () -> ()
// CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT:   %[[JL:.*]] = "smc.frame_load"() <{slot = 0 : i64}> : () -> i64
// CHECK-NEXT:   %[[K:.*]] = arith.addi %[[JL]], %[[ONE]] : i64
// CHECK-NEXT:   %[[SL:.*]] = "smc.frame_load"() <{slot = 1 : i64}> : () -> f64
// CHECK-NEXT:   "smc.frame_store"(%[[K]]) <{slot = 0 : i64}> : (i64) -> ()
// CHECK-NEXT:   scf.yield %[[K]], %[[SL]] : i64, f64

// -----

// A constant index is recreated right before the request; an index computed
// right before it is stored and reloaded. Running the pass again (second RUN)
// changes nothing: an index the op before the request defines is not live across it.
builtin.module {
  "smc.particle"() <{sym_name = "model", model = #smc.model<"f", true, "", "/data.csv", 0 : i64, []>}> ({
    %c = arith.constant 0 : i64
    %h = arith.constant 5.000000e-01 : f64
    %more, %row = "smc.next_row"(%c) : (i64) -> (i1, !smc.list<"f">)
    %one = arith.constant 1 : i64
    %n = arith.addi %c, %one : i64
    %more2, %row2 = "smc.next_row"(%n) : (i64) -> (i1, !smc.list<"f">)
    "smc.finish"(%h) : (f64) -> ()
  }) : () -> ()
}

// CHECK:      model = #smc.model<"f", true, "", "/data.csv", 1 : i64, []>
// CHECK:      %[[C0:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[H:.*]] = arith.constant 5.000000e-01 : f64
// CHECK-NEXT: %[[C1:.*]] = arith.constant 0 : i64
// CHECK-NEXT: "smc.next_row"(%[[C1]]) <{point = 1 : i32}>
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT: %[[C2:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[N:.*]] = arith.addi %[[C2]], %[[ONE]] : i64
// CHECK-NEXT: "smc.frame_store"(%[[N]]) <{slot = 0 : i64}> : (i64) -> ()
// CHECK-NEXT: %[[NL:.*]] = "smc.frame_load"() <{slot = 0 : i64}> : () -> i64
// CHECK-NEXT: "smc.next_row"(%[[NL]]) <{point = 2 : i32}>
// CHECK-NEXT: %[[H2:.*]] = arith.constant 5.000000e-01 : f64
// CHECK-NEXT: "smc.finish"(%[[H2]]) : (f64) -> ()

// -----

// Loop-carried values that trade places: each next value was reloaded from the
// slot of the carried value it becomes (the slot assignment prefers it), so the
// back edge stores nothing; only the first values are stored, before the loop.
builtin.module {
  "smc.particle"() <{sym_name = "model", model = #smc.model<"f", true, "", "/data.csv", 0 : i64, []>}> ({
    %zero = arith.constant 0 : i64
    %x0 = arith.constant 1.000000e+00 : f64
    %x1 = arith.constant 2.000000e+00 : f64
    %r:3 = scf.while (%i = %zero, %a = %x0, %b = %x1) : (i64, f64, f64) -> (i64, f64, f64) {
      %more, %row = "smc.next_row"(%i) : (i64) -> (i1, !smc.list<"f">)
      scf.condition(%more) %i, %a, %b : i64, f64, f64
    } do {
    ^bb0(%j: i64, %p: f64, %q: f64):
      %one = arith.constant 1 : i64
      %k = arith.addi %j, %one : i64
      "smc.resample"() : () -> ()
      scf.yield %k, %q, %p : i64, f64, f64
    }
    "smc.finish"(%r#1) : (f64) -> ()
  }) : () -> ()
}

// CHECK:      model = #smc.model<"f", true, "", "/data.csv", 3 : i64, []>
// CHECK:      "smc.frame_store"(%{{.*}}) <{slot = [[I:[0-9]+]] : i64}> : (i64) -> ()
// CHECK-NEXT: "smc.frame_store"(%{{.*}}) <{slot = [[A:[0-9]+]] : i64}> : (f64) -> ()
// CHECK-NEXT: "smc.frame_store"(%{{.*}}) <{slot = [[B:[0-9]+]] : i64}> : (f64) -> ()
// CHECK-NEXT: scf.while
// CHECK:      ^{{.*}}(%[[J:.*]]: i64, %[[P:.*]]: f64, %[[Q:.*]]: f64):
// CHECK-NEXT:   "smc.frame_store"(%[[Q]]) <{slot = [[A]] : i64}> : (f64) -> ()
// CHECK-NEXT:   "smc.frame_store"(%[[P]]) <{slot = [[B]] : i64}> : (f64) -> ()
// CHECK:        "smc.frame_store"(%{{.*}}) <{slot = [[I]] : i64}> : (i64) -> ()
// CHECK-NEXT:   "smc.resample"() <{point = 2 : i32}> : () -> ()
// CHECK-NEXT:   %[[PL:.*]] = "smc.frame_load"() <{slot = [[B]] : i64}> : () -> f64
// CHECK-NEXT:   %[[QL:.*]] = "smc.frame_load"() <{slot = [[A]] : i64}> : () -> f64
// CHECK-NEXT:   %[[KL:.*]] = "smc.frame_load"() <{slot = [[I]] : i64}> : () -> i64
// CHECK-NEXT:   scf.yield %[[KL]], %[[QL]], %[[PL]] : i64, f64, f64
