// RUN: %sirenc-opt -p lower-smc-to-llvm %s | filecheck %s
// An smc.const_list is its words in the program's one private constant array of list words
// (@siren_resume.lists, the literals' words one after another) and one
// sirenrt_list_from_words(ctx, words, elements, words per element, site) call, at the
// literal's site (-1 for a literal the compiler made without a location).

builtin.module {
  "smc.particle"() <{sym_name = "main", model = #smc.model<"PLPfbLf", false, "no", "", 0 : i64, []>}> ({
    %pairs = "smc.const_list"() <{words = array<i64: 4609434218613702656, 1, -4611686018427387904, 0>}> : () -> !smc.list<"Pfb"> loc("m.si":3:9)
    %floats = "smc.const_list"() <{words = array<i64: 4607182418800017408>}> : () -> !smc.list<"f">
    "smc.finish"(%pairs, %floats) : (!smc.list<"Pfb">, !smc.list<"f">) -> ()
  }) : () -> ()
}

// CHECK:      llvm.func @sirenrt_list_from_words(!llvm.ptr, !llvm.ptr, i64, i32, i32) -> i64
// CHECK-NEXT: llvm.mlir.global private constant @siren_resume.lists(dense<[4609434218613702656, 1, -4611686018427387904, 0, 4607182418800017408]> : tensor<5xi64>) {addr_space = 0 : i32} : !llvm.array<5 x i64>
// CHECK-NEXT: llvm.func @siren_resume(%[[CTX:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) -> i32
// CHECK-SAME:   #sirenrt.layout<24 : i64, 8 : i64, [], [loc("m.si":3:9)], []>
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
