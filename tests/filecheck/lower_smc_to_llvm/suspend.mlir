// RUN: %sirenc-opt -p lower-smc-to-llvm %s | filecheck %s
// The particle becomes @siren_resume(ctx, frame, log_weight, rows). Its entry block
// dispatches on the pc saved in the frame's first word: 0 starts the program,
// k resumes after suspension point k. smc.resample saves its point and returns
// AT_RESAMPLE (1); smc.finish stores the result's words from byte 8 and returns
// FINISHED (0). Frame slot s is the word at 8 + 8 * s, shared with the result's
// words (a finished particle keeps no slot live): the result "PfLf" has two words
// and the program two slots, so the frame is 24 bytes; here the list's slot (byte
// 16) is also where the result's list goes.
// A runtime function is declared once, before its first caller. #sirenrt.layout
// carries the frame's size, the result's offset, the sites (one per location,
// in the order met) and the roots by byte offset.

builtin.module {
  "smc.particle"() <{sym_name = "main", model = #smc.model<"PfLf", false, "no stream", "", 2 : i64, [[1 : i32, 1 : i64, "Lf"]]>}> ({
    %c = arith.constant 2.000000e+00 : f64
    %x = "smc.sample"(%c) <{family = "exponential"}> : (f64) -> f64 loc("m.si":2:9)
    "smc.frame_store"(%x) <{slot = 0 : i64}> : (f64) -> ()
    %nil = "smc.nil"() : () -> !smc.list<"f">
    %l = "smc.cons"(%x, %nil) : (f64, !smc.list<"f">) -> !smc.list<"f">
    "smc.frame_store"(%l) <{slot = 1 : i64}> : (!smc.list<"f">) -> ()
    "smc.resample"() <{point = 1 : i32}> : () -> ()
    %x1 = "smc.frame_load"() <{slot = 0 : i64}> : () -> f64
    %y = "smc.sample"(%x1) <{family = "exponential"}> : (f64) -> f64 loc("m.si":3:9)
    %l1 = "smc.frame_load"() <{slot = 1 : i64}> : () -> !smc.list<"f">
    "smc.finish"(%y, %l1) : (f64, !smc.list<"f">) -> ()
  }) : () -> ()
}

// CHECK:      llvm.func @sirenrt_sample_exponential(!llvm.ptr, f64, i32) -> f64
// CHECK-NEXT: llvm.func @sirenrt_list_cons_word(!llvm.ptr, i64, i64, !llvm.ptr, i32) -> i64
// CHECK-NEXT: llvm.mlir.global private constant @siren_resume.lists(dense<102> : tensor<1xi64>)
// CHECK-NEXT: llvm.func @siren_resume(%[[CTX:.*]]: !llvm.ptr, %[[FRAME:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) -> i32
// CHECK-SAME:   smc.model = #smc.model<"PfLf", false, "no stream", "", 2 : i64, {{\[\[}}1 : i32, 1 : i64, "Lf"]]>
// CHECK-SAME:   sirenrt.layout = #sirenrt.layout<24 : i64, 8 : i64, [], [loc("m.si":2:9), loc("m.si":3:9)], {{\[\[}}1 : i32, 16 : i64, "Lf"]]>
// CHECK-NEXT:   %[[PC:.*]] = llvm.load %[[FRAME]] : !llvm.ptr -> i32
// CHECK-NEXT:   %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   %[[AT1:.*]] = llvm.icmp "eq" %[[PC]], %[[ONE]] : i32
// CHECK-NEXT:   llvm.cond_br %[[AT1]], ^[[RESUME1:bb[0-9]+]], ^[[NOT1:bb[0-9]+]]

// The start: a draw, a list cell, both stored in their slots, then the suspension.
// CHECK-NEXT: ^[[START:bb[0-9]+]]:
// CHECK-NEXT:   %[[C:.*]] = llvm.mlir.constant(2.000000e+00 : f64) : f64
// CHECK-NEXT:   %[[SITE0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %[[X:.*]] = llvm.call @sirenrt_sample_exponential(%[[CTX]], %[[C]], %[[SITE0]]) : (!llvm.ptr, f64, i32) -> f64
// CHECK-NEXT:   %[[S0:.*]] = llvm.getelementptr inbounds %[[FRAME]][8] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT:   llvm.store %[[X]], %[[S0]] : f64, !llvm.ptr
// CHECK-NEXT:   %[[NIL:.*]] = llvm.mlir.constant(-1) : i64
// CHECK-NEXT:   %[[F:.*]] = llvm.mlir.addressof @siren_resume.lists : !llvm.ptr
// CHECK-NEXT:   %[[XW:.*]] = llvm.bitcast %[[X]] : f64 to i64
// CHECK-NEXT:   %[[NOSITE1:.*]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT:   %[[L:.*]] = llvm.call @sirenrt_list_cons_word(%[[CTX]], %[[NIL]], %[[XW]], %[[F]], %[[NOSITE1]]) : (!llvm.ptr, i64, i64, !llvm.ptr, i32) -> i64
// CHECK-NEXT:   %[[S1:.*]] = llvm.getelementptr inbounds %[[FRAME]][16] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT:   llvm.store %[[L]], %[[S1]] : i64, !llvm.ptr
// CHECK-NEXT:   %[[P1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   llvm.store %[[P1]], %[[FRAME]] : i32, !llvm.ptr
// CHECK-NEXT:   %[[AT_RESAMPLE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   llvm.return %[[AT_RESAMPLE]] : i32

// Resumed after point 1: the slots are reloaded, the result's words stored from byte 8.
// CHECK-NEXT: ^[[RESUME1]]:
// CHECK-NEXT:   %[[XP:.*]] = llvm.getelementptr inbounds %[[FRAME]][8] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT:   %[[X1:.*]] = llvm.load %[[XP]] : !llvm.ptr -> f64
// CHECK-NEXT:   %[[SITE1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   %[[Y:.*]] = llvm.call @sirenrt_sample_exponential(%[[CTX]], %[[X1]], %[[SITE1]]) : (!llvm.ptr, f64, i32) -> f64
// CHECK-NEXT:   %[[LP:.*]] = llvm.getelementptr inbounds %[[FRAME]][16] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT:   %[[L1:.*]] = llvm.load %[[LP]] : !llvm.ptr -> i64
// CHECK-NEXT:   %[[YW:.*]] = llvm.bitcast %[[Y]] : f64 to i64
// CHECK-NEXT:   %[[R0:.*]] = llvm.getelementptr inbounds %[[FRAME]][8] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT:   llvm.store %[[YW]], %[[R0]] : i64, !llvm.ptr
// CHECK-NEXT:   %[[R1:.*]] = llvm.getelementptr inbounds %[[FRAME]][16] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT:   llvm.store %[[L1]], %[[R1]] : i64, !llvm.ptr
// CHECK-NEXT:   %[[FINISHED:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   llvm.return %[[FINISHED]] : i32

// No other point: start.
// CHECK-NEXT: ^[[NOT1]]:
// CHECK-NEXT:   llvm.br ^[[START]]
// CHECK-NEXT: }
