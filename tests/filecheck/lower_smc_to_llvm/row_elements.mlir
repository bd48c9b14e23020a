// RUN: %sirenc-opt -p lower-smc-to-llvm --split-input-file %s | filecheck %s
// The elements of a streamed row that the step reads, List.hd(List.tl^k(row)), are read in
// place along with the row (lower-smc-to-llvm's step 0, sirenc/passes/to_llvm/row_elements.py) when the
// row goes only to smc.head and smc.tail ops that follow one another: here elements 0 and 2,
// through tails that two reads share. The row must have 3 values (the deepest op, the head
// of List.tl^2, reads element 2) for any of them to be read in place; else, or for a row that
// was streamed in, the tails and heads run as before, at their own sites, in an scf.if's
// else branch, and fail as before on a row that is too short.

builtin.module {
  "smc.particle"() <{sym_name = "main", model = #smc.model<"f", true, "", "/data.csv", 2 : i64, []>}> ({
    %zero = arith.constant 0 : i64
    %acc0 = arith.constant 0.000000e+00 : f64
    %r:3 = scf.while (%i = %zero, %acc = %acc0) : (i64, f64) -> (i64, !smc.list<"f">, f64) {
      "smc.frame_store"(%acc) <{slot = 1 : i64}> : (f64) -> ()
      "smc.frame_store"(%i) <{slot = 0 : i64}> : (i64) -> ()
      %il = "smc.frame_load"() <{slot = 0 : i64}> : () -> i64
      %more, %row = "smc.next_row"(%il) <{point = 1 : i32}> : (i64) -> (i1, !smc.list<"f">)
      %il2 = "smc.frame_load"() <{slot = 0 : i64}> : () -> i64
      %accl = "smc.frame_load"() <{slot = 1 : i64}> : () -> f64
      scf.condition(%more) %il2, %row, %accl : i64, !smc.list<"f">, f64
    } do {
    ^bb0(%j: i64, %rw: !smc.list<"f">, %a: f64):
      %h0 = "smc.head"(%rw) : (!smc.list<"f">) -> f64 loc("m.si":1:1)
      %t1 = "smc.tail"(%rw) : (!smc.list<"f">) -> !smc.list<"f"> loc("m.si":2:1)
      %t2 = "smc.tail"(%t1) : (!smc.list<"f">) -> !smc.list<"f"> loc("m.si":3:1)
      %h2 = "smc.head"(%t2) : (!smc.list<"f">) -> f64 loc("m.si":4:1)
      %s0 = arith.addf %a, %h0 : f64
      %s = arith.addf %s0, %h2 : f64
      %one = arith.constant 1 : i64
      %k = arith.addi %j, %one : i64
      scf.yield %k, %s : i64, f64
    }
    "smc.finish"(%r#2) : (f64) -> ()
  }) : () -> ()
}

// The body branches on whether the elements were read: then they are the heads' values.
// CHECK:      llvm.func @siren_resume(%[[CTX:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[ROWS:.*]]: !llvm.ptr) -> i32
// CHECK:      ^{{bb[0-9]+}}(%{{.*}}: i64, %[[RW:.*]]: i64, %[[A:.*]]: f64, %[[READ:.*]]: i1, %[[V0:.*]]: f64, %[[V2:.*]]: f64):
// CHECK-NEXT:   llvm.cond_br %[[READ]], ^[[FAST:bb[0-9]+]], ^[[SLOW:bb[0-9]+]]

// In place: a row of at least 3 values, whose values row_start[r] and row_start[r] + 2 are read.
// CHECK:        %{{.*}} = llvm.getelementptr inbounds %[[ROWS]][8]
// CHECK-NEXT:   %[[RS:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:   %{{.*}} = llvm.getelementptr inbounds %[[RS]]
// CHECK-NEXT:   %[[START:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK:        %[[END:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK:        %[[TWO:.*]] = llvm.mlir.constant(2) : i64
// CHECK-NEXT:   %[[LAST:.*]] = llvm.add %[[START]], %[[TWO]] : i64
// CHECK-NEXT:   %[[LONG:.*]] = llvm.icmp "slt" %[[LAST]], %[[END]] : i64
// CHECK:        llvm.cond_br %[[LONG]], ^[[LOAD:bb[0-9]+]], ^[[DONE:bb[0-9]+]](%{{.*}}, %{{.*}}, %{{.*}} : i1, f64, f64)
// CHECK:      ^[[LOAD]]:
// CHECK-NEXT:   %[[VP:.*]] = llvm.getelementptr inbounds %[[ROWS]][0]
// CHECK-NEXT:   %[[VALS:.*]] = llvm.load %[[VP]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:   %[[AT0:.*]] = llvm.getelementptr inbounds %[[VALS]][%[[START]]]
// CHECK-NEXT:   %[[W0:.*]] = llvm.load %[[AT0]] : !llvm.ptr -> i64
// CHECK-NEXT:   %[[X0:.*]] = llvm.bitcast %[[W0]] : i64 to f64
// CHECK-NEXT:   %[[TWO2:.*]] = llvm.mlir.constant(2) : i64
// CHECK-NEXT:   %[[AT2I:.*]] = llvm.add %[[START]], %[[TWO2]] : i64
// CHECK-NEXT:   %[[AT2:.*]] = llvm.getelementptr inbounds %[[VALS]][%[[AT2I]]]
// CHECK-NEXT:   %[[W2:.*]] = llvm.load %[[AT2]] : !llvm.ptr -> i64
// CHECK-NEXT:   %[[X2:.*]] = llvm.bitcast %[[W2]] : i64 to f64
// CHECK-NEXT:   %[[YES:.*]] = llvm.mlir.constant(true) : i1
// CHECK-NEXT:   llvm.br ^[[DONE]](%[[YES]], %[[X0]], %[[X2]] : i1, f64, f64)

// Else the ops as they were, in order, each at its own site (0 to 3).
// CHECK:      ^[[FAST]]:
// CHECK-NEXT:   llvm.br ^[[MERGE:bb[0-9]+]](%[[V0]], %[[V2]] : f64, f64)
// CHECK-NEXT: ^[[SLOW]]:
// CHECK-NEXT:   %[[SITE0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK:      ^[[MERGE]](%[[Y0:.*]]: f64, %[[Y2:.*]]: f64):
// CHECK-NEXT:   %[[S0:.*]] = llvm.fadd %[[A]], %[[Y0]] : f64
// CHECK-NEXT:   %{{.*}} = llvm.fadd %[[S0]], %[[Y2]] : f64
// CHECK:        llvm.call @sirenrt_list_head_word(%[[CTX]], %[[RW]], %{{.*}}, %[[SITE0]])
// CHECK:        %[[SITE1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   %[[T1:.*]] = llvm.call @sirenrt_list_tl(%[[CTX]], %[[RW]], %[[SITE1]])
// CHECK-NEXT:   %[[SITE2:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT:   %[[T2:.*]] = llvm.call @sirenrt_list_tl(%[[CTX]], %[[T1]], %[[SITE2]])
// CHECK-NEXT:   %[[SITE3:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK:        llvm.call @sirenrt_list_head_word(%[[CTX]], %[[T2]], %{{.*}}, %[[SITE3]])

// -----

// A draw between the tail and the head: moving the tail past it could change which op fails
// first, so the row is not read in place (the smc.next_row stays as it was).
builtin.module {
  "smc.particle"() <{sym_name = "main", model = #smc.model<"f", true, "", "/data.csv", 2 : i64, []>}> ({
    %zero = arith.constant 0 : i64
    %acc0 = arith.constant 0.000000e+00 : f64
    %r:3 = scf.while (%i = %zero, %acc = %acc0) : (i64, f64) -> (i64, !smc.list<"f">, f64) {
      "smc.frame_store"(%acc) <{slot = 1 : i64}> : (f64) -> ()
      "smc.frame_store"(%i) <{slot = 0 : i64}> : (i64) -> ()
      %il = "smc.frame_load"() <{slot = 0 : i64}> : () -> i64
      %more, %row = "smc.next_row"(%il) <{point = 1 : i32}> : (i64) -> (i1, !smc.list<"f">)
      %il2 = "smc.frame_load"() <{slot = 0 : i64}> : () -> i64
      %accl = "smc.frame_load"() <{slot = 1 : i64}> : () -> f64
      scf.condition(%more) %il2, %row, %accl : i64, !smc.list<"f">, f64
    } do {
    ^bb0(%j: i64, %rw: !smc.list<"f">, %a: f64):
      %t1 = "smc.tail"(%rw) : (!smc.list<"f">) -> !smc.list<"f">
      %v = arith.constant 1.000000e+00 : f64
      %x = "smc.sample"(%a, %v) <{family = "gaussian"}> : (f64, f64) -> f64
      %h1 = "smc.head"(%t1) : (!smc.list<"f">) -> f64
      %s = arith.addf %x, %h1 : f64
      %one = arith.constant 1 : i64
      %k = arith.addi %j, %one : i64
      scf.yield %k, %s : i64, f64
    }
    "smc.finish"(%r#2) : (f64) -> ()
  }) : () -> ()
}

// CHECK:      llvm.func @siren_resume(%[[CTX:[a-z_]+]]: !llvm.ptr,
// CHECK:      ^{{bb[0-9]+}}(%{{.*}}: i64, %[[RW:.*]]: i64, %{{.*}}: f64):
// CHECK-NEXT:   %{{.*}} = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %{{.*}} = llvm.call @sirenrt_list_tl(%[[CTX]], %[[RW]], %{{.*}})
// CHECK:      ^{{bb[0-9]+}}(%{{.*}}: i64):
// CHECK-NEXT:   %{{.*}} = llvm.mlir.constant(-3) : i64
