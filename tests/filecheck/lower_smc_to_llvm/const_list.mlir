// RUN: %sirenc-opt -p lower-smc-to-llvm %s | filecheck %s
// An smc.const_list is its words in the program's one private constant array of list words
// (@siren_resume.lists, the literals' words one after another) and one
// sirenrt_list_from_words(ctx, words, elements, words per element, site) call, at the
// literal's site (-1 for a literal the compiler made without a location). A literal of lists
// (the nested form: its length, then its elements, a list as its length and elements) is its
// element type a character a word, then those words, and one
// sirenrt_list_from_nested_words(ctx, words, number of words, site) call.

builtin.module {
  "smc.particle"() <{sym_name = "main", model = #smc.model<"PLPfbPLfLLf", false, "no", "", 0 : i64, []>}> ({
    %pairs = "smc.const_list"() <{words = array<i64: 4609434218613702656, 1, -4611686018427387904, 0>}> : () -> !smc.list<"Pfb"> loc("m.si":3:9)
    %floats = "smc.const_list"() <{words = array<i64: 4607182418800017408>}> : () -> !smc.list<"f">
    %lists = "smc.const_list"() <{words = array<i64: 2, 1, 4607182418800017408, 0>}> : () -> !smc.list<"Lf"> loc("m.si":4:9)
    "smc.finish"(%pairs, %floats, %lists) : (!smc.list<"Pfb">, !smc.list<"f">, !smc.list<"Lf">) -> ()
  }) : () -> ()
}

// CHECK:      llvm.func @sirenrt_list_from_words(!llvm.ptr, !llvm.ptr, i64, i32, i32) -> i64
// CHECK-NEXT: llvm.func @sirenrt_list_from_nested_words(!llvm.ptr, !llvm.ptr, i64, i32) -> i64
// CHECK-NEXT: llvm.mlir.global private constant @siren_resume.lists(dense<[4609434218613702656, 1, -4611686018427387904, 0, 4607182418800017408, 2, 76, 102, 2, 1, 4607182418800017408, 0]> : tensor<12xi64>) {addr_space = 0 : i32} : !llvm.array<12 x i64>
// CHECK-NEXT: llvm.func @siren_resume(%[[CTX:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) -> i32
// CHECK-SAME:   #sirenrt.layout<32 : i64, 8 : i64, [], [loc("m.si":3:9), loc("m.si":4:9)], []>
// CHECK:        %[[W0:.*]] = llvm.mlir.addressof @siren_resume.lists : !llvm.ptr
// CHECK-NEXT:   %[[N0:.*]] = llvm.mlir.constant(2) : i64
// CHECK-NEXT:   %[[K0:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT:   %[[SITE:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %{{.*}} = llvm.call @sirenrt_list_from_words(%[[CTX]], %[[W0]], %[[N0]], %[[K0]], %[[SITE]]) : (!llvm.ptr, !llvm.ptr, i64, i32, i32) -> i64
// CHECK-NEXT:   %[[POOL:.*]] = llvm.mlir.addressof @siren_resume.lists : !llvm.ptr
// CHECK-NEXT:   %[[W1:.*]] = llvm.getelementptr inbounds %[[POOL]][32] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT:   %[[N1:.*]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT:   %[[K1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   %[[NOSITE:.*]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT:   %{{.*}} = llvm.call @sirenrt_list_from_words(%[[CTX]], %[[W1]], %[[N1]], %[[K1]], %[[NOSITE]]) : (!llvm.ptr, !llvm.ptr, i64, i32, i32) -> i64
// CHECK-NEXT:   %[[POOL2:.*]] = llvm.mlir.addressof @siren_resume.lists : !llvm.ptr
// CHECK-NEXT:   %[[W2:.*]] = llvm.getelementptr inbounds %[[POOL2]][40] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT:   %[[N2:.*]] = llvm.mlir.constant(7) : i64
// CHECK-NEXT:   %[[SITE2:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   %{{.*}} = llvm.call @sirenrt_list_from_nested_words(%[[CTX]], %[[W2]], %[[N2]], %[[SITE2]]) : (!llvm.ptr, !llvm.ptr, i64, i32) -> i64
