// RUN: %sirenc-opt -p lower-smc-to-llvm %s | filecheck %s
// The symbolic ops (-m ssi) call the runtime's sirenrt_sym_* / sirenrt_sym_*
// functions, context first, site last where there is one: a constant's word is
// the bitcast double (a bool first 0.0 / 1.0); smc.assume passes the family id,
// three parameter words (unused ones 0; categorical's probabilities a list
// handle), the variable's index and the annotation; a sampled value's bits come
// back as a double. The particle's smc.vars become the function's sirenrt.vars.
// add, sub, mul, eq, lt and neg of two non-NaN doubles (constants; a node
// reference is a NaN pattern) are folded inline, as the runtime would; division,
// ite and everything else is a call.

builtin.module {
  "smc.particle"() <{sym_name = "main", model = #smc.model<"PSf", false, "no stream", "", 0 : i64, []>}> ({
    %mu = arith.constant 1.000000e+00 : f64
    %t = arith.constant true
    %m = "smc.sym_const"(%mu) : (f64) -> !smc.sym
    %b = "smc.sym_const"(%t) : (i1) -> !smc.sym
    %x = "smc.assume"(%m, %m) <{family = "gaussian", var = 0 : i32, annotation = 0 : i32}> : (!smc.sym, !smc.sym) -> !smc.sym loc("m.si":1:10)
    %s = "smc.assume"(%b) <{family = "bernoulli", var = 1 : i32, annotation = 1 : i32}> : (!smc.sym) -> f64 loc("m.si":2:10)
    %probs = "smc.nil"() : () -> !smc.list<"f">
    %k = "smc.assume"(%m, %m, %probs) <{family = "categorical", var = -1 : i32, annotation = 2 : i32}> : (!smc.sym, !smc.sym, !smc.list<"f">) -> !smc.sym loc("m.si":3:10)
    %a = "smc.sym_binop"(%x, %m) <{kind = "sub"}> : (!smc.sym, !smc.sym) -> !smc.sym
    %n = "smc.sym_neg"(%a) : (!smc.sym) -> !smc.sym
    %c = "smc.sym_binop"(%n, %k) <{kind = "lt"}> : (!smc.sym, !smc.sym) -> !smc.sym
    %i = "smc.sym_ite"(%c, %n, %b) : (!smc.sym, !smc.sym, !smc.sym) -> !smc.sym
    %v = "smc.sym_value"(%i) : (!smc.sym) -> f64 loc("m.si":4:10)
    "smc.sym_observe"(%x, %m, %v) <{family = "gaussian"}> : (!smc.sym, !smc.sym, f64) -> () loc("m.si":5:12)
    "smc.finish"(%i, %s) : (!smc.sym, f64) -> ()
  }) {smc.vars = ["x", "s"]} : () -> ()
}

// CHECK:      llvm.func @sirenrt_sym_assume(!llvm.ptr, i32, i64, i64, i64, i32, i32, i32) -> i64
// CHECK-NEXT: llvm.func @sirenrt_sym_sub(!llvm.ptr, i64, i64) -> i64
// CHECK-NEXT: llvm.func @sirenrt_sym_neg(!llvm.ptr, i64) -> i64
// CHECK-NEXT: llvm.func @sirenrt_sym_lt(!llvm.ptr, i64, i64) -> i64
// CHECK-NEXT: llvm.func @sirenrt_sym_ite(!llvm.ptr, i64, i64, i64) -> i64
// CHECK-NEXT: llvm.func @sirenrt_sym_value(!llvm.ptr, i64, i32) -> f64
// CHECK-NEXT: llvm.func @sirenrt_sym_observe(!llvm.ptr, i32, i64, i64, i64, f64, i32)
// CHECK:      llvm.func @siren_resume(%ctx: !llvm.ptr, %frame: !llvm.ptr, %log_weight: !llvm.ptr, %rows: !llvm.ptr) -> i32
// CHECK-SAME:   sirenrt.vars = ["x", "s"]
// CHECK:        %[[M:.*]] = llvm.bitcast %{{.*}} : f64 to i64
// CHECK:        %[[BF:.*]] = llvm.select %{{.*}}, %{{.*}}, %{{.*}} : i1, f64
// CHECK-NEXT:   %[[B:.*]] = llvm.bitcast %[[BF]] : f64 to i64
// CHECK:        %[[P2:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:   %[[FAM:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %[[VAR:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %[[ANN:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %[[SITE:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %[[X:.*]] = llvm.call @sirenrt_sym_assume(%ctx, %[[FAM]], %[[M]], %[[M]], %[[P2]], %[[VAR]], %[[ANN]], %[[SITE]])
// CHECK:        %[[SW:.*]] = llvm.call @sirenrt_sym_assume(%ctx, %{{.*}}, %[[B]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NEXT:   llvm.bitcast %[[SW]] : i64 to f64
// CHECK:        %[[NIL:.*]] = llvm.mlir.constant(-1) : i64
// CHECK-NEXT:   %[[CAT:.*]] = llvm.mlir.constant(10 : i32) : i32
// CHECK-NEXT:   %[[ANON:.*]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT:   %[[SYMB:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK:        llvm.call @sirenrt_sym_assume(%ctx, %[[CAT]], %[[M]], %[[M]], %[[NIL]], %[[ANON]], %[[SYMB]], %{{.*}})
// CHECK:        %[[XF:.*]] = llvm.bitcast %[[X]] : i64 to f64
// CHECK-NEXT:   %[[MF:.*]] = llvm.bitcast %[[M]] : i64 to f64
// CHECK-NEXT:   %[[ORD:.*]] = llvm.fcmp "ord" %[[XF]], %[[MF]] : f64
// CHECK-NEXT:   llvm.cond_br %[[ORD]], ^[[FOLD:.*]], ^[[CALL:.*]]
// CHECK-NEXT: ^[[FOLD]]:
// CHECK-NEXT:   llvm.fsub %[[XF]], %[[MF]] : f64
// CHECK:      ^[[CALL]]:
// CHECK-NEXT:   llvm.call @sirenrt_sym_sub(%ctx, %[[X]], %[[M]])
// CHECK:        llvm.call @sirenrt_sym_neg(%ctx,
// CHECK:        llvm.call @sirenrt_sym_lt(%ctx,
// CHECK:        llvm.call @sirenrt_sym_ite(%ctx,
// CHECK:        llvm.call @sirenrt_sym_value(%ctx, %{{.*}}, %{{.*}}) : (!llvm.ptr, i64, i32) -> f64
// CHECK:        llvm.call @sirenrt_sym_observe(%ctx, %{{.*}}, %[[X]], %[[M]], %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, i32, i64, i64, i64, f64, i32) -> ()
