// RUN: %sirenc-opt -p lower-smc-to-llvm %s | filecheck %s
// Lists are int64 handles, -1 the empty list. A cell holds the element's
// scalars as 64-bit words: a float bitcast, a bool zero-extended (and
// truncated back), a list its handle. Data files get ids: the streamed data
// file of a streamable model is file 0, then each smc.read_file path in order
// of first appearance. Ops at the same location share a site.

builtin.module {
  "smc.particle"() <{sym_name = "main", model = #smc.model<"f", true, "", "/data/rows.csv", 0 : i64, []>}> ({
    %x = arith.constant 1.500000e+00 : f64
    %b = arith.constant true
    %nil = "smc.nil"() : () -> !smc.list<"Pfb">
    %cell = "smc.cons"(%x, %b, %nil) : (f64, i1, !smc.list<"Pfb">) -> !smc.list<"Pfb">
    %h:2 = "smc.head"(%cell) : (!smc.list<"Pfb">) -> (f64, i1) loc("m.si":5:3)
    %t = "smc.tail"(%cell) : (!smc.list<"Pfb">) -> !smc.list<"Pfb"> loc("m.si":5:3)
    %empty = "smc.is_nil"(%t) : (!smc.list<"Pfb">) -> i1
    %n = "smc.length"(%cell) : (!smc.list<"Pfb">) -> f64
    %r = "smc.reverse"(%cell) : (!smc.list<"Pfb">) -> !smc.list<"Pfb">
    %range = "smc.range"(%x, %n) : (f64, f64) -> !smc.list<"f"> loc("m.si":6:3)
    %other = "smc.read_file"() <{path = "/data/other.csv"}> : () -> !smc.list<"Lf"> loc("m.si":7:3)
    %same = "smc.read_file"() <{path = "/data/rows.csv"}> : () -> !smc.list<"Lf"> loc("m.si":8:3)
    %again = "smc.read_file"() <{path = "/data/other.csv"}> : () -> !smc.list<"Lf"> loc("m.si":9:3)
    %rows = "smc.cons"(%range, %same) : (!smc.list<"f">, !smc.list<"Lf">) -> !smc.list<"Lf"> loc("m.si":10:3)
    "smc.finish"(%h#0) : (f64) -> ()
  }) : () -> ()
}

// CHECK:      llvm.func @sirenrt_list_cons_typed(!llvm.ptr, i64, i32, !llvm.ptr, i32) -> i64
// CHECK-NEXT: llvm.func @sirenrt_list_set(!llvm.ptr, i64, i32, i64)
// CHECK-NEXT: llvm.func @sirenrt_list_head_word(!llvm.ptr, i64, i32, i32) -> i64
// CHECK-NEXT: llvm.func @sirenrt_list_tl(!llvm.ptr, i64, i32) -> i64
// CHECK-NEXT: llvm.func @sirenrt_list_len(!llvm.ptr, i64) -> f64
// CHECK-NEXT: llvm.func @sirenrt_list_rev_typed(!llvm.ptr, i64, i32, !llvm.ptr, i32) -> i64
// CHECK-NEXT: llvm.func @sirenrt_list_range(!llvm.ptr, f64, f64, i32) -> i64
// CHECK-NEXT: llvm.func @sirenrt_file(!llvm.ptr, i32, i32) -> i64
// CHECK-NEXT: llvm.func @sirenrt_list_cons_word(!llvm.ptr, i64, i64, !llvm.ptr, i32) -> i64
// The conses' element types in the pool, each once and NUL-terminated: "Pfb", "Lf".
// CHECK-NEXT: llvm.mlir.global private constant @siren_resume.lists(dense<[6448720, 26188]> : tensor<2xi64>)
// CHECK-NEXT: llvm.func @siren_resume(%[[CTX:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) -> i32
// CHECK-SAME:   #sirenrt.layout<16 : i64, 8 : i64, ["/data/rows.csv", "/data/other.csv"], [loc("m.si":5:3), loc("m.si":6:3), loc("m.si":7:3), loc("m.si":8:3), loc("m.si":9:3), loc("m.si":10:3)], []>
// CHECK:        %[[X:.*]] = llvm.mlir.constant(1.500000e+00 : f64) : f64
// CHECK-NEXT:   %[[B:.*]] = llvm.mlir.constant(true) : i1

// smc.nil, smc.cons of a (float, bool) element.
// CHECK-NEXT:   %[[NIL:.*]] = llvm.mlir.constant(-1) : i64
// CHECK-NEXT:   %[[PFB:.*]] = llvm.mlir.addressof @siren_resume.lists : !llvm.ptr
// CHECK-NEXT:   %[[WORDS:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT:   %[[NOSITE1:.*]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT:   %[[CELL:.*]] = llvm.call @sirenrt_list_cons_typed(%[[CTX]], %[[NIL]], %[[WORDS]], %[[PFB]], %[[NOSITE1]]) : (!llvm.ptr, i64, i32, !llvm.ptr, i32) -> i64
// CHECK-NEXT:   %[[I0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %[[XW:.*]] = llvm.bitcast %[[X]] : f64 to i64
// CHECK-NEXT:   llvm.call @sirenrt_list_set(%[[CTX]], %[[CELL]], %[[I0]], %[[XW]]) : (!llvm.ptr, i64, i32, i64) -> ()
// CHECK-NEXT:   %[[I1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   %[[BW:.*]] = llvm.zext %[[B]] : i1 to i64
// CHECK-NEXT:   llvm.call @sirenrt_list_set(%[[CTX]], %[[CELL]], %[[I1]], %[[BW]]) : (!llvm.ptr, i64, i32, i64) -> ()

// smc.head: one sirenrt_list_head_word per word, at one site; smc.tail at the same location shares it.
// CHECK-NEXT:   %[[SITE0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %[[J0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %[[W0:.*]] = llvm.call @sirenrt_list_head_word(%[[CTX]], %[[CELL]], %[[J0]], %[[SITE0]]) : (!llvm.ptr, i64, i32, i32) -> i64
// CHECK-NEXT:   %[[H0:.*]] = llvm.bitcast %[[W0]] : i64 to f64
// CHECK-NEXT:   %[[J1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   %[[W1:.*]] = llvm.call @sirenrt_list_head_word(%[[CTX]], %[[CELL]], %[[J1]], %[[SITE0]]) : (!llvm.ptr, i64, i32, i32) -> i64
// CHECK-NEXT:   %{{.*}} = llvm.trunc %[[W1]] : i64 to i1
// CHECK-NEXT:   %[[SITE0B:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %[[T:.*]] = llvm.call @sirenrt_list_tl(%[[CTX]], %[[CELL]], %[[SITE0B]]) : (!llvm.ptr, i64, i32) -> i64

// smc.is_nil, smc.length, smc.reverse (of two-word elements, told their type as a cons is), smc.range.
// CHECK-NEXT:   %[[NIL2:.*]] = llvm.mlir.constant(-1) : i64
// CHECK-NEXT:   %{{.*}} = llvm.icmp "eq" %[[T]], %[[NIL2]] : i64
// CHECK-NEXT:   %[[N:.*]] = llvm.call @sirenrt_list_len(%[[CTX]], %[[CELL]]) : (!llvm.ptr, i64) -> f64
// CHECK-NEXT:   %[[WORDS2:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT:   %[[PFB2:.*]] = llvm.mlir.addressof @siren_resume.lists : !llvm.ptr
// CHECK-NEXT:   %[[NOSITE2:.*]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT:   %{{.*}} = llvm.call @sirenrt_list_rev_typed(%[[CTX]], %[[CELL]], %[[WORDS2]], %[[PFB2]], %[[NOSITE2]]) : (!llvm.ptr, i64, i32, !llvm.ptr, i32) -> i64
// CHECK-NEXT:   %[[SITE1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   %[[RANGE:.*]] = llvm.call @sirenrt_list_range(%[[CTX]], %[[X]], %[[N]], %[[SITE1]]) : (!llvm.ptr, f64, f64, i32) -> i64

// smc.read_file: another file is file 1, the streamed data file is file 0.
// CHECK-NEXT:   %[[F1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   %[[SITE2:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT:   %{{.*}} = llvm.call @sirenrt_file(%[[CTX]], %[[F1]], %[[SITE2]]) : (!llvm.ptr, i32, i32) -> i64
// CHECK-NEXT:   %[[F0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %[[SITE3:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK-NEXT:   %[[SAME:.*]] = llvm.call @sirenrt_file(%[[CTX]], %[[F0]], %[[SITE3]]) : (!llvm.ptr, i32, i32) -> i64
// CHECK-NEXT:   %[[F1B:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   %[[SITE4:.*]] = llvm.mlir.constant(4 : i32) : i32
// CHECK-NEXT:   %{{.*}} = llvm.call @sirenrt_file(%[[CTX]], %[[F1B]], %[[SITE4]]) : (!llvm.ptr, i32, i32) -> i64

// A list element is its handle, as it is; a one-word element is consed and set in one call.  A cons
// with a location passes its site (a list past the memory limit is reported there); one without
// (above), -1.
// CHECK-NEXT:   %[[POOL:.*]] = llvm.mlir.addressof @siren_resume.lists : !llvm.ptr
// CHECK-NEXT:   %[[LF:.*]] = llvm.getelementptr inbounds %[[POOL]][8] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT:   %[[SITE5:.*]] = llvm.mlir.constant(5 : i32) : i32
// CHECK-NEXT:   %[[ROWS:.*]] = llvm.call @sirenrt_list_cons_word(%[[CTX]], %[[SAME]], %[[RANGE]], %[[LF]], %[[SITE5]]) : (!llvm.ptr, i64, i64, !llvm.ptr, i32) -> i64
// CHECK-NEXT:   %[[HW:.*]] = llvm.bitcast %[[H0]] : f64 to i64
